"""Rich display in Jupyter: every result's ``_repr_html_`` shows its key numbers and
escapes names; :func:`beyondauc.styled` marks the best value per column like the CLI."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.report import ModelReport, NotebookRun, ReportResult
from beyondauc.utils.html import fmt
from helpers.report import parse_html

HOSTILE = "<script>alert(1)</script>"
HOSTILE_DATASET = '<img src=x onerror="alert(2)">'


@pytest.fixture(scope="module")
def hostile_bench():
    demo = ba.load_demo().subset(models=["svm", "logreg"], datasets=["wine", "diabetes"])
    frame = demo.frame.rename(columns={"svm": HOSTILE})
    frame["dataset"] = frame["dataset"].replace({"wine": HOSTILE_DATASET})
    return ba.load_benchmark(frame)


def check_html(obj, numbers, names=()):
    """The HTML parses, has no script/handler, shows every number (as fmt prints it) and name."""
    text = obj._repr_html_()
    assert isinstance(text, str) and text.startswith("<div")
    root = parse_html(text)
    assert root.find_all("script") == [] and root.find_all("img") == []
    for el in root.iter():
        assert not [a for a in el.attrs if a.startswith("on")], el
    shown = root.text
    for value in numbers:
        assert fmt(value) in shown, (type(obj).__name__, value, fmt(value))
    for name in names:
        assert name in shown, name  # the name verbatim, as text
    return text


def test_cohort_diagnostics_and_its_parts(hostile_bench):
    d = ba.cohort_diagnostics(hostile_bench, HOSTILE, HOSTILE_DATASET, n_repeats=2)
    text = check_html(
        d,
        [
            d.auc_val,
            d.auc_test,
            d.bias_val.score,
            d.bias_test.score,
            d.noise_val.score,
            d.noise_test.score,
            d.drift.score,
            d.wasserstein.score,
            len(d.y_val),
        ],
        [HOSTILE, HOSTILE_DATASET],
    )
    assert "&lt;script&gt;" in text
    check_html(d.bias_test, [d.bias_test.score, d.bias_test.auc, d.bias_test.sigma_max])
    check_html(d.noise_val, [d.noise_val.score, d.noise_val.auc, d.noise_val.n_repeats])
    check_html(d.drift, [d.drift.score, len(d.drift.thresholds)])
    check_html(d.wasserstein, [d.wasserstein.score, *d.wasserstein.matrix.ravel()])
    frame = d.to_frame()
    assert list(frame.index) == ["validation", "test"]
    assert frame.loc["test", "auc"] == d.auc_test and frame.loc["validation", "noise robustness"] == d.noise_val.score


def test_wasserstein_note_is_shown():
    y = np.array([0, 0, 1, 1])
    s = np.array([0.0, 1.0, 2.0, 3.0])
    w = ba.wasserstein_matrix(y, s, y, s)  # the cohorts agree exactly: W = inf with a note
    assert w.note and w.score == np.inf
    check_html(w, [w.p, w.score], [w.note])


def test_selective_results(hostile_bench):
    r = ba.selective_answering(hostile_bench, HOSTILE, HOSTILE_DATASET, ood_dataset="diabetes", computation_score=0.5)
    check_html(
        r,
        [
            r.disca.score,
            r.disca.a,
            r.disca.b,
            r.disca.n_fluctuations,
            r.aurc,
            r.e_aurc,
            r.disca_ood.score,
            r.didma,
            r.nidma,
        ],
        [HOSTILE, HOSTILE_DATASET, "indata / logistic"],
    )
    check_html(
        r.disca,
        [r.disca.score, r.disca.a, r.disca.b, r.disca.n_fluctuations, r.disca.penalty, *r.disca.b_table["b"].head(3)],
    )
    check_html(r.curve, [r.curve.score, len(r.curve.coverage), r.curve.accuracy[-1]])
    conf, ok = r.confidence, r.correct
    d = ba.didma(conf, ok, computation_score=2.0)
    check_html(d, [d.score, d.disca.score, 2.0])
    n = ba.nidma(conf, ok, r.confidence_ood, r.correct_ood, computation_score=2.0)
    check_html(n, [n.score, n.didma.score, n.disca_ood.score])


@pytest.mark.parametrize("method", ba.METHODS)
def test_score_calibrator(method):
    rng = np.random.default_rng(0)
    y = np.tile([0, 1], 50)
    s = y + rng.normal(0, 0.8, 100)
    cal = ba.ScoreCalibrator(method, class_weight="balanced")
    text = check_html(cal, [], [method, "not fitted"])
    assert "threshold_" not in text and repr(cal) == f"ScoreCalibrator(method={method!r}, class_weight='balanced')"
    cal.fit(s, y)
    numbers = [cal.threshold_] + ([cal.coef_, cal.intercept_] if method == "logistic" else [])
    numbers += [len(cal.knots_x_)] if method == "isotonic" else []
    check_html(cal, numbers, [method, "balanced"])
    assert f"threshold_={cal.threshold_:.6g}" in repr(cal)


def test_score_calibrator_single_class_note():
    with pytest.warns(ba.UndefinedMetricWarning):
        cal = ba.ScoreCalibrator("logistic").fit([0.1, 0.2], [1, 1])
    check_html(cal, [], ["single class"])


def report_result(tmp_path, *, failed=False):
    nb = NotebookRun(
        "test_auroc",
        "test_auroc.ipynb",
        "failed" if failed else "ok",
        "ValueError: <b>bad</b>" if failed else None,
        12.34,
        1.5,
    )
    rep = ModelReport(
        HOSTILE, "x-1234", nb.status, nb.error, None if failed else "models/x/report.html", None, (nb,), 20.0
    )
    overview = ModelReport(None, "overview", "ok", None, "overview/overview.html", None, (), 5.0)
    board = pd.DataFrame(
        {
            "model": [HOSTILE, "knn"],
            "auc": [0.93, 0.95],
            "auc_rank": pd.array([2, 1], "Int64"),
            "accuracy": [0.88, 0.85],
            "accuracy_rank": pd.array([1, 2], "Int64"),
            "rank_change": pd.array([1, -1], "Int64"),
            "kappa": [0.7, 0.6],
            "disca": [0.5, np.nan],
            "drift": [0.01, 0.02],
        }
    )
    return ReportResult(tmp_path, tmp_path / "index.html", (rep,), overview, board, 33.3, 2)


@pytest.mark.parametrize("failed", [False, True])
def test_report_results(tmp_path, failed):
    res = report_result(tmp_path, failed=failed)
    text = check_html(res, [33.3, 2, 0.93, 0.88, 0.7], [HOSTILE, str(tmp_path / "index.html")])
    assert ("1 failed" in text) == failed and ("all ok" in text) == (not failed)
    root = parse_html(text)
    assert root.find_all("b") == []  # the error's markup is text
    if failed:
        assert "ValueError: <b>bad</b>" in root.text
    check_html(res.reports[0], [20.0, 12.3], [HOSTILE, "test_auroc"])
    check_html(res.overview, [5.0], ["overview"])
    # the leaderboard marks the best per column: knn's AUC, the HOSTILE model's accuracy
    assert best_cells(res.leaderboard, text.split("leaderboard")[-1]) >= {
        (1, "auc"),
        (0, "accuracy"),
        (1, "auc_rank"),
        (0, "drift"),
    }


# -- styled ------------------------------------------------------------------------------


def best_cells(frame, text):
    """(row, column name) of cells a Styler's HTML makes bold."""
    ids = set(re.findall(r"#T_\w+?_row(\d+)_col(\d+)[^{]*\{\s*font-weight: bold", text))
    for group in re.findall(r"((?:#T_\w+_row\d+_col\d+,?\s*)+)\{\s*font-weight: bold", text):
        ids |= set(re.findall(r"_row(\d+)_col(\d+)", group))
    return {(int(r), frame.columns[int(c)]) for r, c in ids}


def test_styled_marks_the_best_per_column_like_a_brute_force():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "model": [f"m{i}" for i in range(7)],
            "auc": rng.random(7).round(2),
            "drift": rng.random(7).round(1),
            "rank": pd.array(rng.integers(1, 4, 7), "Int64"),
            "other": rng.random(7),
        }
    )
    frame.loc[2, "auc"] = np.nan
    frame.loc[4, "auc"] = frame["auc"].max()  # a tie
    text = ba.styled(frame, higher_is_better=["auc"], lower_is_better=["drift", "rank"]).to_html()
    expected = set()
    for col, best in (("auc", frame["auc"].max()), ("drift", frame["drift"].min()), ("rank", frame["rank"].min())):
        expected |= {(i, col) for i, v in enumerate(frame[col]) if pd.notna(v) and v == best}
    assert best_cells(frame, text) == expected
    assert len([c for c in expected if c[1] == "auc"]) >= 2


def test_styled_true_means_every_other_numeric_column():
    frame = pd.DataFrame({"name": ["a", "b"], "x": [1.0, 2.0], "y": [5, 3], "z": [0.1, 0.2]})
    got = best_cells(frame, ba.styled(frame, higher_is_better=True, lower_is_better="y").to_html())
    assert got == {(1, "x"), (1, "y"), (1, "z")}
    got = best_cells(frame, ba.styled(frame, lower_is_better=True, higher_is_better=["z"]).to_html())
    assert got == {(0, "x"), (1, "y"), (1, "z")}
    assert best_cells(frame, ba.styled(frame).to_html()) == set()


def test_styled_formats_escapes_and_keeps_ranks_integer():
    frame = pd.DataFrame({HOSTILE: ["<i>m</i>", "n"], "auc": [0.91234, np.nan], "rank": pd.array([1, pd.NA], "Int64")})
    text = ba.styled(frame, higher_is_better="auc", lower_is_better="rank", precision=2).to_html()
    root = parse_html(text)
    assert root.find_all("script") == [] and root.find_all("i") == []
    assert HOSTILE in root.text and "<i>m</i>" in root.text
    cells = [td.text.strip() for td in root.find_all("td")]
    assert "0.91" in cells and "1" in cells and "1.00" not in cells and "–" in cells


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(higher_is_better="nope"), "higher_is_better"),
        (dict(lower_is_better=["model"]), "numeric"),
        (dict(higher_is_better="auc", lower_is_better="auc"), "both"),
        (dict(higher_is_better=True, lower_is_better=True), "both"),
        (dict(precision=-1), "precision"),
        (dict(precision=1.5), "precision"),
    ],
)
def test_styled_bad_input(kwargs, needle):
    frame = pd.DataFrame({"model": ["a"], "auc": [0.5]})
    with pytest.raises(ValueError, match=needle):
        ba.styled(frame, **kwargs)
    with pytest.raises(ValueError, match="frame"):
        ba.styled(frame.to_numpy())


def test_fmt():
    """One spelling of missing (None, NA and NaN alike) and a true minus sign, as the report index."""
    assert [fmt(v) for v in (None, pd.NA, True, 3, 2.0, 0.123456, np.nan, np.inf, -np.inf, -0.5, "x")] == [
        "–",
        "–",
        "yes",
        "3",
        "2",
        "0.1235",
        "–",
        "∞",
        "−∞",
        "−0.5",
        "x",
    ]
