"""The comparison Displays: the critical-difference diagram and the pairwise-difference matrix.

References are independent of the Displays: the groups of models joined by a bar are the maximal
cliques of "average ranks differ by less than the CD", found by enumerating every subset; the
marked cells of the matrix are those whose interval excludes 0, read from the table row by row;
the Friedman statistic is scipy's ``friedmanchisquare``.
"""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

import beyondauc as ba  # noqa: E402
from beyondauc.plots import CriticalDifferenceDisplay, PairwiseDifferenceDisplay  # noqa: E402

MODELS = ["svm", "knn", "naive_bayes", "single_feature"]
DATASETS = ["wine", "iris_versicolor", "breast_cancer", "diabetes"]


@pytest.fixture(scope="module")
def ev():
    return ba.evaluate("demo", models=MODELS, datasets=DATASETS, n_bootstrap=40, noise_repeats=2, n_repeats=3)


def _brute_force_groups(ranks, cd):
    """Maximal sets of 2 or more models whose average ranks all differ by less than ``cd`` (every subset)."""
    names = list(ranks.index)
    cliques = [
        set(c)
        for size in range(2, len(names) + 1)
        for c in itertools.combinations(names, size)
        if all(abs(ranks[a] - ranks[b]) < cd for a, b in itertools.combinations(c, 2))
    ]
    return sorted(sorted(c) for c in cliques if not any(c < other for other in cliques))


def _models_under(line, ranks):
    """The models whose average rank lies under a group bar (it runs 0.03 beyond its end models)."""
    x0, x1 = sorted(line.get_xdata())
    return sorted(m for m, r in ranks.items() if x0 + 0.03 - 1e-9 <= r <= x1 - 0.03 + 1e-9)


# -- critical-difference diagram ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_group_bars_are_the_maximal_cliques_of_a_brute_force_search(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 9))
    ranks = pd.Series(np.round(rng.uniform(1, k, k), 3), index=[f"m{i}" for i in range(k)], name="accuracy")
    cd = float(rng.uniform(0.4, 0.6 * k))
    disp = CriticalDifferenceDisplay(ranks, cd).plot()
    expected = _brute_force_groups(ranks, cd)
    assert sorted(sorted(g) for g in disp.groups_[0]) == expected
    assert sorted(_models_under(line, ranks) for line in disp.group_lines_[0]) == expected
    # the thick lines on the axes are exactly these bars
    assert len([ln for ln in disp.ax_.lines if ln.get_linewidth() == 3.5]) == len(expected)
    plt.close(disp.figure_)


def _tick_x(ax, label):
    return next(t.get_position()[0] for t in ax.texts if t.get_text() == label)


def test_cd_bar_spans_the_critical_difference_on_the_rank_axis(ev):
    disp = CriticalDifferenceDisplay.from_evaluation(ev)
    table = ev.table("friedman")
    ax = disp.ax_
    k = len(MODELS)
    unit = (_tick_x(ax, str(k)) - _tick_x(ax, "1")) / (k - 1)  # data units per rank, from the axis' tick labels
    for line, value in zip(disp.cd_lines_, ("auc", "accuracy")):
        cd = table.loc[table["value"] == value, "critical_difference"].iloc[0]
        x0, x1 = line.get_xdata()
        assert x0 == pytest.approx(_tick_x(ax, "1"))
        assert (x1 - x0) / unit == pytest.approx(cd)
        assert f"CD = {cd:.2f}" in [t.get_text() for t in ax.texts]
    plt.close(disp.figure_)


def test_from_evaluation_labels_every_model_once_per_row_at_its_average_rank(ev):
    disp = CriticalDifferenceDisplay.from_evaluation(ev)
    table = ev.table("friedman")
    texts = [t.get_text() for t in disp.ax_.texts]
    assert disp.labels == ["AUC", "accuracy"]
    expected = []  # one label per model and row
    for value, ranks in zip(("auc", "accuracy"), disp.average_ranks):
        rows = table[table["value"] == value]
        assert dict(ranks) == pytest.approx(dict(zip(rows["model"], rows["average_rank"])))
        expected += [f"{m} ({r:.2f})" for m, r in zip(rows["model"], rows["average_rank"])]
        # the p-value shown is the Friedman test's, checked against scipy on the headline grid
        wide = ev.headline().pivot(index="dataset", columns="model", values=value)
        _, p = stats.friedmanchisquare(*(wide[m].to_numpy() for m in wide.columns))
        assert rows["pvalue"].iloc[0] == pytest.approx(p)
        assert any(f"Friedman p = {p:.3g}" in t for t in texts)
    assert sorted(t for t in texts if t.endswith(")") and not t.startswith(("AUC", "accuracy"))) == sorted(expected)
    assert sorted(sorted(g) for g in disp.groups_[1]) == _brute_force_groups(
        disp.average_ranks[1], disp.critical_difference[1]
    )
    plt.close(disp.figure_)


def test_from_evaluation_of_one_model_says_there_is_no_friedman_test(ev):
    one = ba.Evaluation(**{**ev.__dict__, "tables": {**ev.tables, "friedman": ev.table("friedman").iloc[:0]}})
    with pytest.raises(ValueError, match="no Friedman test: it needs at least 2 models on 2 datasets"):
        CriticalDifferenceDisplay.from_evaluation(one)


# -- pairwise-difference matrix ----------------------------------------------------------------


def _pairwise_table(n, seed, *, width=0.05):
    rng = np.random.default_rng(seed)
    names = [f"model {i}" for i in range(n)]
    acc = rng.uniform(0.6, 0.9, n)
    rows = []
    for i, j in itertools.permutations(range(n), 2):
        d = acc[i] - acc[j]
        half = rng.uniform(0.2, 2.0) * width
        rows.append(("mean", names[i], names[j], d, d - half, d + half))
    return pd.DataFrame(rows, columns=["dataset", "model", "other", "difference", "low", "high"]), acc, names


def test_pairwise_matrix_cells_and_marks_match_the_table():
    table, acc, names = _pairwise_table(8, 0)
    disp = PairwiseDifferenceDisplay.from_table(table).plot()
    order = [names[i] for i in np.argsort(-acc, kind="stable")]
    assert disp.models == order  # best first
    ax = disp.ax_
    assert [t.get_text() for t in ax.get_xticklabels()] == order
    assert [t.get_text() for t in ax.get_yticklabels()] == order
    shown = np.asarray(disp.im_.get_array())
    assert np.isnan(np.ma.filled(shown, np.nan).diagonal()).all()
    for row in table.itertuples():  # each ordered pair: its value, and a mark exactly where 0 is outside
        i, j = order.index(row.model), order.index(row.other)
        assert shown[i, j] == pytest.approx(row.difference)
        text = disp.text_[i, j].get_text()
        assert text.startswith(f"{row.difference:+.3f}")
        assert text.endswith("*") == (row.low > 0 or row.high < 0)
    assert sum(t is not None for t in disp.text_.flat) == 8 * 7
    assert disp.colorbar_.ax.get_ylabel() == "accuracy difference"
    plt.close(disp.figure_)


def test_pairwise_matrix_of_many_models_marks_with_dots_not_numbers():
    table, acc, names = _pairwise_table(32, 1, width=0.01)
    disp = PairwiseDifferenceDisplay.from_table(table).plot()
    assert disp.text_ is None and len(disp.ax_.texts) == 0
    assert len(disp.ax_.get_xticklabels()) == 32
    dots = disp.ax_.collections[0].get_offsets()
    marked = {(disp.models[int(r)], disp.models[int(c)]) for c, r in np.asarray(dots)}
    expected = {(r.model, r.other) for r in table.itertuples() if r.low > 0 or r.high < 0}
    assert 0 < len(expected) < 32 * 31 and marked == expected
    plt.close(disp.figure_)


def test_pairwise_from_evaluation_reads_the_bootstrap_table(ev):
    disp = PairwiseDifferenceDisplay.from_evaluation(ev)
    pw = ev.table("pairwise")
    mean = pw[pw["dataset"] == "mean"]
    assert sorted(disp.models) == sorted(MODELS)
    for row in mean.itertuples():
        assert disp.difference.loc[row.model, row.other] == pytest.approx(row.difference)
        assert bool(disp.significant.loc[row.model, row.other]) == (row.low > 0 or row.high < 0)
    assert "95% interval excludes 0" in disp.ax_.get_title()
    plt.close(disp.figure_)
    one = PairwiseDifferenceDisplay.from_evaluation(ev, dataset="wine")
    assert one.difference.loc["svm", "knn"] == pytest.approx(
        pw.query("dataset == 'wine' and model == 'svm' and other == 'knn'")["difference"].iloc[0]
    )
    plt.close(one.figure_)


def test_pairwise_errors_name_what_is_wrong(ev):
    no_boot = ba.Evaluation(**{**ev.__dict__, "tables": {k: v for k, v in ev.tables.items() if k != "pairwise"}})
    with pytest.raises(ValueError, match="no pairwise differences.*n_bootstrap > 0"):
        PairwiseDifferenceDisplay.from_evaluation(no_boot)
    with pytest.raises(ValueError, match="`dataset` must be 'mean' or a dataset of the pairwise table, got 'nope'"):
        PairwiseDifferenceDisplay.from_evaluation(ev, dataset="nope")
    with pytest.raises(ValueError, match="missing \\['high', 'low'\\]"):
        PairwiseDifferenceDisplay.from_table(ev.table("pairwise").drop(columns=["low", "high"]))


def test_pairwise_names_are_drawn_literally():
    table, _, _ = _pairwise_table(3, 2)
    table = table.replace({"model 0": "$x^2$", "model 1": "a_b"})
    disp = PairwiseDifferenceDisplay.from_table(table).plot()
    labels = [t for t in disp.ax_.get_xticklabels() if t.get_text() == "$x^2$"]
    assert labels and labels[0].get_parse_math() is False
    disp.figure_.canvas.draw()
    plt.close(disp.figure_)
