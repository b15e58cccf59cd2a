"""The comparison of every model with a reference (the baseline, or the best other model by mean AUC).

Checked against independent references: ``compare_auc`` on the raw scores for
the DeLong rows, brute-force loops over replicates for the bootstrap
intervals and p-values, the evaluation's own tables for the estimates, and
invariances (a monotone transform of a model's scores resampled on the same
rows gives the same rank statistics replicate by replicate: the resample is
paired).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc import compare_auc
from beyondauc.evaluation.comparison import VALUE_NAMES, comparison_summary, index_cell, reading
from beyondauc.metrics import bootstrap_grid, cohort_diagnostics, selective_answering
from beyondauc.metrics.uncertainty.paired import (
    bootstrap_pvalue,
    delong_differences,
    holm_adjust,
    paired_differences,
    reference_models,
)

DATASETS = ["wine", "diabetes", "iris_versicolor"]
MODELS = ["logreg", "svm", "knn", "single_feature"]
B = 30


# -- the pure functions ------------------------------------------------------------


def test_bootstrap_pvalue_by_hand_and_by_loop():
    # 10 replicates, 3 <= 0 and 7 >= 0: p = 2 * (3 + 1) / 11
    r = np.array([-0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    assert bootstrap_pvalue(r) == pytest.approx(2 * 4 / 11)
    assert bootstrap_pvalue(np.full(9, 0.5)) == pytest.approx(0.2)  # the smallest p of 9 replicates
    assert bootstrap_pvalue(np.zeros(5)) == 1.0  # capped at 1
    assert np.isnan(bootstrap_pvalue(np.full(4, np.nan)))
    rng = np.random.default_rng(3)
    reps = rng.normal(0.1, 0.2, size=(57, 6))
    reps[rng.random(reps.shape) < 0.1] = np.nan
    got = bootstrap_pvalue(reps)
    for j in range(reps.shape[1]):  # brute force, one column and one replicate at a time
        le = ge = n = 0
        for x in reps[:, j]:
            if np.isnan(x):
                continue
            n += 1
            le += x <= 0
            ge += x >= 0
        assert got[j] == pytest.approx(min(1.0, 2 * (min(le, ge) + 1) / (n + 1)))


def _holm_by_procedure(p):
    """Holm's procedure run at every level: a test's adjusted p-value is the smallest alpha that rejects it."""
    finite = [x for x in p if np.isfinite(x)]
    m = len(finite)
    levels = sorted({min(1.0, k * x) for x in finite for k in range(1, m + 1)})
    out = []
    for x in p:
        if not np.isfinite(x):
            out.append(np.nan)
            continue
        for alpha in levels:  # step down: reject the j-th smallest while p_(j) <= alpha / (m - j + 1)
            rejected = set()
            for j, (i, q) in enumerate(sorted(enumerate(finite), key=lambda t: t[1])):
                if q * (m - j) > alpha:
                    break
                rejected.add(i)
            if any(finite[i] == x for i in rejected):
                out.append(alpha)
                break
        else:
            out.append(1.0)  # not rejected even at alpha = 1
    return np.array(out)


@pytest.mark.parametrize("seed", range(40))
def test_holm_equals_the_step_down_procedure_run_at_every_level(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    p = rng.choice([rng.uniform(0, 0.2), rng.uniform(0, 1)], size=n)
    p = np.where(rng.random(n) < 0.25, rng.choice([0.01, 0.05], size=n), p)  # ties
    p[rng.random(n) < 0.15] = np.nan
    np.testing.assert_allclose(holm_adjust(p), _holm_by_procedure(p), rtol=0, atol=1e-15)
    groups = rng.integers(0, 3, size=n)
    expected = np.full(n, np.nan)
    for g in np.unique(groups):
        expected[groups == g] = _holm_by_procedure(p[groups == g])
    np.testing.assert_allclose(holm_adjust(p, groups=groups), expected, rtol=0, atol=1e-15)


def test_holm_by_hand_and_bad_input():
    # Holm (1979): m = 4, sorted 0.01 0.02 0.03 0.04 -> 0.04 0.06 0.06 0.06
    assert holm_adjust([0.03, 0.01, 0.04, 0.02]).tolist() == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm_adjust([0.5, 0.9]).tolist() == [1.0, 1.0]
    assert holm_adjust([]).shape == (0,)
    with pytest.raises(ValueError, match="`pvalues` must lie in"):
        holm_adjust([1.5])
    with pytest.raises(ValueError, match="`groups` must have one label per p-value"):
        holm_adjust([0.1, 0.2], groups=[1])


def test_paired_differences_interval_equals_a_loop_over_replicates():
    rng = np.random.default_rng(0)
    a = rng.normal(0.8, 0.05, size=(40, 3))
    b = a - 0.05 + rng.normal(0, 0.02, size=(40, 3))
    b[5, 1] = np.nan
    t = paired_differences([0.8, 0.7, 0.6], [0.75, 0.65, 0.56], a, b, confidence_level=0.9)
    assert t["difference"].tolist() == pytest.approx([0.05, 0.05, 0.04])
    assert t["interval_note"].tolist() == ["", "", ""]
    for j in range(3):
        diffs = [a[i, j] - b[i, j] for i in range(40) if np.isfinite(a[i, j] - b[i, j])]
        assert t["low"][j] == pytest.approx(np.percentile(diffs, 5))
        assert t["high"][j] == pytest.approx(np.percentile(diffs, 95))
        assert t["n_replicates"][j] == len(diffs)
    # paired: the difference's spread is far below what unpaired replicates would give
    unpaired = paired_differences([0.8], [0.75], a[:, :1], b[::-1, :1], confidence_level=0.9)
    assert (t["high"][0] - t["low"][0]) < 0.5 * (unpaired["high"][0] - unpaired["low"][0])
    none = paired_differences([0.8], [0.7])
    assert none["difference"][0] == pytest.approx(0.1) and np.isnan(none["low"][0]) and np.isnan(none["pvalue"][0])
    with pytest.raises(ValueError, match="paired"):
        paired_differences([0.8], [0.7], a[:, :1], b[:10, :1])


def test_paired_differences_never_show_an_interval_that_excludes_the_difference():
    """A biased statistic's replicates may sit beside its estimate (DiSCA, drift): where the percentile interval
    of the replicates of the difference would not contain the difference, interval and p-value are NaN, and the
    note says why (the rule of every per-dataset interval)."""
    rng = np.random.default_rng(3)
    a = rng.normal(0.0, 0.01, size=(200, 3))
    b = np.zeros((200, 3))
    # replicates of the difference around 0; differences 0 (inside), 0.05 (above every replicate), and
    # one with only 1% of its 200 replicates below it: outside the 95% interval's 2.5% tail
    est = np.array([0.0, 0.05, np.quantile(a[:, 2], 0.99)])
    t = paired_differences(est, [0.0, 0.0, 0.0], a, b)
    q = np.percentile(a[:, 0], [2.5, 97.5])
    assert (t["low"][0], t["high"][0]) == pytest.approx(tuple(q)) and t["interval_note"][0] == ""
    assert t["pvalue"][0] > 0.05
    for j in (1, 2):
        assert np.isnan(t["low"][j]) and np.isnan(t["high"][j]) and np.isnan(t["pvalue"][j])
        assert "too few for a 95% interval" in t["interval_note"][j]
    assert t["interval_note"][1].startswith("only 0.0% of the bootstrap replicates lie above")
    shown = t.dropna(subset=["low"])
    assert ((shown["low"] <= shown["difference"]) & (shown["difference"] <= shown["high"])).all()


def test_delong_differences_equal_compare_auc_per_group_and_combine_the_mean():
    rng = np.random.default_rng(1)
    n = 300
    y = rng.integers(0, 2, n)
    a = y + rng.normal(0, 0.8, n)
    b = y + rng.normal(0, 1.2, n)
    g = np.repeat(["x", "y", "z"], 100)
    t = delong_differences(y, a, b, g, confidence_level=0.9)
    assert t["group"].tolist() == ["x", "y", "z", "mean"]
    for i, name in enumerate("xyz"):
        c = compare_auc(y[g == name], a[g == name], b[g == name], confidence_level=0.9)
        row = t.iloc[i]
        assert (
            row["estimate"],
            row["reference_estimate"],
            row["difference"],
            row["low"],
            row["high"],
            row["pvalue"],
        ) == pytest.approx((c.auc_a, c.auc_b, c.difference, c.low, c.high, c.pvalue))
    from scipy.stats import norm

    se = np.sqrt((t["standard_error"][:3] ** 2).sum()) / 3
    d = t["difference"][:3].mean()
    mean = t.iloc[3]
    assert mean["difference"] == pytest.approx(d)
    assert mean["low"] == pytest.approx(d - norm.ppf(0.95) * se)
    assert mean["pvalue"] == pytest.approx(2 * norm.sf(abs(d / se)))


def test_reference_models():
    assert reference_models(["a", "b", "c"], [0.7, 0.9, 0.8]) == {"a": "b", "b": "c", "c": "b"}
    assert reference_models(["a", "b", "c"], [0.9, 0.9, np.nan]) == {"a": "b", "b": "a", "c": "a"}  # ties: first
    assert reference_models(["a", "b"], [0.7, 0.9], baseline="a") == {"a": "b", "b": "a"}
    assert reference_models(["a"], [0.7]) == {}
    with pytest.raises(ValueError, match="`baseline` 'z' is not a model of the data; it has"):
        reference_models(["a", "b"], [0.7, 0.9], baseline="z")


def test_reading():
    assert reading(0.1, 0.01) == "better" and reading(-0.1, 0.01) == "worse"
    assert reading(0.1, 0.01, higher_is_better=False) == "worse"
    assert reading(0.1, 0.06) == "no detectable difference"
    assert reading(0.1, 0.06, alpha=0.1) == "better"
    assert reading(np.nan, 0.01) == "not tested"


# -- the resample is paired ---------------------------------------------------------


@pytest.fixture(scope="module")
def twin():
    """Two datasets of the demo with ``svm_t``, an increasing affine map of ``svm``'s scores.

    Ranks, and the stump thresholds between scores, are the same for both, on
    every dataset: a difference between them comes only from resampling
    different rows.
    """
    frame = ba.load_demo().subset(datasets=["wine", "diabetes"]).frame.copy()
    frame["svm_t"] = 4 * frame["svm"] + 1
    return ba.load_benchmark(frame)


def test_cohort_diagnostics_resample_the_same_rows_for_every_model(twin):
    # the AUCs depend only on the ranking: equal replicate by replicate only if the resampled rows are the same
    a = cohort_diagnostics(twin, "svm", "wine", n_bootstrap=B, n_repeats=2)
    b = cohort_diagnostics(twin, "svm_t", "wine", n_bootstrap=B, n_repeats=2)
    for name in ("auc_val", "auc_test"):
        assert np.array_equal(a.replicates[name], b.replicates[name])
        assert a.replicates[name].nunique() > 3  # the replicates do vary
    other = cohort_diagnostics(twin, "svm", "diabetes", n_bootstrap=B, n_repeats=2)
    assert not np.array_equal(a.replicates["auc_val"], other.replicates["auc_val"])


def test_selective_answering_resamples_the_same_rows_for_every_model(twin):
    # a stump calibrator depends only on the ranking too: the same replicates from the same resample
    a = selective_answering(twin, "svm", "diabetes", method="stump", n_bootstrap=B)
    b = selective_answering(twin, "svm_t", "diabetes", method="stump", n_bootstrap=B)
    for name in ("accuracy", "aurc", "disca"):
        assert np.allclose(a.replicates[name], b.replicates[name], equal_nan=True, rtol=0, atol=1e-12)
    assert a.replicates["accuracy"].nunique() > 3


def test_evaluation_of_a_model_against_its_twin_is_an_exact_tie(twin):
    ev = ba.evaluate(
        twin,
        models=["svm", "svm_t", "logreg"],
        baseline="svm",
        noise_repeats=2,
        n_bootstrap=B,
        selective_method="stump",
        method="stump",
    )
    t = ev.table("comparison")
    # the stump threshold and the AUC depend only on the ranking (DiSCA of stump confidences is not rankable)
    t = t[(t["model"] == "svm_t") & t["value"].isin(["auc", "accuracy", "kappa"])]
    assert len(t) == 3 * 3
    assert np.allclose(t["difference"], 0, atol=1e-12)
    boot = t[t["test"] == "paired bootstrap"]
    assert np.allclose(boot[["low", "high"]].to_numpy(float), 0, atol=1e-12)  # unpaired would be wide
    assert (boot["pvalue"] == 1).all()


# -- the evaluation's comparison table ----------------------------------------------


@pytest.fixture(scope="module")
def ev():
    return ba.evaluate("demo", datasets=DATASETS, models=MODELS, baseline="logreg", noise_repeats=2, n_bootstrap=B)


def test_delong_rows_equal_compare_auc_on_the_raw_scores(ev):
    bench = ba.load_demo().subset(datasets=DATASETS)
    t = ev.table("comparison")
    t = t[t["value"] == "auc"]
    assert set(t["reference"][t["model"] != "logreg"]) == {"logreg"}
    for model in ("svm", "knn", "single_feature"):
        for d in DATASETS:
            c = compare_auc(
                bench.labels(d),
                bench.scores(model, d),
                bench.scores("logreg", d),
                confidence_level=ev.parameters["confidence_level"],
            )
            row = t[(t["model"] == model) & (t["dataset"] == d)].iloc[0]
            assert (row["difference"], row["low"], row["high"], row["pvalue"]) == pytest.approx(
                (c.difference, c.low, c.high, c.pvalue), abs=1e-12
            )
            assert row["test"] == "paired DeLong"


def test_differences_are_the_differences_of_the_estimates_shown_elsewhere(ev):
    t = ev.table("comparison").set_index(["model", "value", "dataset"])
    p = ev.parameters
    grid = ev.table("grid")
    head = grid[(grid["protocol"] == p["protocol"]) & (grid["method"] == p["method"])].set_index(["model", "dataset"])
    sel = ev.table("selective").set_index(["model", "dataset"])
    diag = ev.table("diagnostics").set_index(["model", "dataset"])
    board = ev.table("leaderboard").set_index("model")
    sources = {
        "auc": head["auc"],
        "accuracy": head["accuracy"],
        "kappa": head["kappa"],
        "disca": sel["disca"],
        "drift": diag["drift"],
    }
    checked = 0
    for (model, value, dataset), row in t.iterrows():
        ref = row["reference"]
        if dataset == "mean":
            a, b = board.loc[model, value], board.loc[ref, value]
        else:
            a, b = sources[value][(model, dataset)], sources[value][(ref, dataset)]
        assert row["estimate"] == pytest.approx(a, nan_ok=True)
        assert row["reference_estimate"] == pytest.approx(b, nan_ok=True)
        assert row["difference"] == pytest.approx(a - b, nan_ok=True)
        checked += 1
    assert checked == len(t) > 4 * 5 * len(DATASETS)


def test_grid_differences_equal_a_loop_over_the_grid_bootstrap(ev):
    bench = ba.load_demo().subset(datasets=DATASETS, models=MODELS)
    p = ev.parameters
    boot = bootstrap_grid(
        bench,
        protocols=[p["protocol"]],
        methods=[p["method"]],
        n_bootstrap=B,
        confidence_level=p["confidence_level"],
        n_repeats=p["n_repeats"],
        random_state=p["random_state"],
    )
    g = boot.grid.reset_index(drop=True)
    t = ev.table("comparison")
    for value in ("accuracy", "kappa"):
        j = list(boot.values).index(value)
        for d in DATASETS:
            row_m = g.index[(g["model"] == "svm") & (g["dataset"] == d)][0]
            row_r = g.index[(g["model"] == "logreg") & (g["dataset"] == d)][0]
            diffs = [boot.replicates[b, row_m, j] - boot.replicates[b, row_r, j] for b in range(B)]
            diffs = [x for x in diffs if np.isfinite(x)]
            row = t[(t["model"] == "svm") & (t["value"] == value) & (t["dataset"] == d)].iloc[0]
            level = p["confidence_level"]
            assert row["low"] == pytest.approx(np.percentile(diffs, 50 * (1 - level)))
            assert row["high"] == pytest.approx(np.percentile(diffs, 100 - 50 * (1 - level)))
            le, ge = sum(x <= 0 for x in diffs), sum(x >= 0 for x in diffs)
            assert row["pvalue"] == pytest.approx(min(1, 2 * (min(le, ge) + 1) / (len(diffs) + 1)))


def test_pairwise_pvalues_are_a_loop_over_replicates_and_holm_within_each_dataset(ev):
    pw = ev.table("pairwise")
    assert len(pw) == (len(DATASETS) + 1) * len(MODELS) * (len(MODELS) - 1)
    for _d, g in pw.groupby("dataset", sort=False):
        tests = {}
        for r in g.itertuples():
            pair = frozenset((r.model, r.other))
            tests.setdefault(pair, r.pvalue)
            assert tests[pair] == r.pvalue  # (a, b) and (b, a) are one test
        raw = list(tests.values())
        m = len(raw)
        assert m == len(MODELS) * (len(MODELS) - 1) // 2
        for r in g.itertuples():  # Holm by its definition, pair by pair
            ordered = sorted(raw)
            i = ordered.index(r.pvalue)
            i += ordered.count(r.pvalue) - 1  # tied p-values share the largest running maximum
            expected = max(min(1.0, (m - j) * ordered[j]) for j in range(i + 1))
            assert r.pvalue_holm == pytest.approx(expected, abs=1e-15)
            assert r.pvalue_holm >= r.pvalue


def test_comparison_holm_families_are_one_model_and_value_over_the_datasets(ev):
    t = ev.table("comparison")
    assert len(t) and t["pvalue"].notna().any()
    for (_model, _value), g in t.groupby(["model", "value"]):
        mean = g[g["dataset"] == "mean"]
        assert mean["pvalue_holm"].equals(mean["pvalue"]) or mean["pvalue"].isna().all()  # a family of one
        per = g[g["dataset"] != "mean"]
        raw = [x for x in per["pvalue"] if np.isfinite(x)]
        m = len(raw)
        for x, adjusted in zip(per["pvalue"], per["pvalue_holm"]):
            if not np.isfinite(x):
                assert np.isnan(adjusted)
                continue
            ordered = sorted(raw)
            i = len(ordered) - 1 - ordered[::-1].index(x)  # tied p-values share the largest running maximum
            assert adjusted == pytest.approx(max(min(1.0, (m - j) * ordered[j]) for j in range(i + 1)), abs=1e-15)


def test_the_reading_comes_from_the_holm_adjusted_p_value(ev):
    summary = comparison_summary(ev, "svm").table
    t = ev.table("comparison").query("model == 'svm' and dataset != 'mean'")
    level = ev.parameters["confidence_level"]
    assert {"p-value", "Holm p"} <= set(summary.columns)
    assert (t["pvalue_holm"] > t["pvalue"]).any()  # the adjustment changes something here
    for r in t.itertuples():
        name, higher = VALUE_NAMES[r.value]
        row = summary[(summary["Dataset"] == r.dataset) & (summary["Value"] == name)]
        assert row["Reading"].tolist() == [
            reading(r.difference, r.pvalue_holm, higher_is_better=higher, alpha=1 - level)
        ]


def test_the_baseline_is_compared_with_the_best_other_model(ev):
    t = ev.table("comparison")
    mine = t[t["model"] == "logreg"]
    board = ev.table("leaderboard").set_index("model")
    best = board.drop(index="logreg")["auc"].idxmax()
    assert set(mine["reference"]) == {best} and set(mine["reference_kind"]) == {"best other"}
    assert set(t[t["model"] != "logreg"]["reference_kind"]) == {"baseline"}
    s = comparison_summary(ev, "logreg")
    assert s.sentence.startswith(f"logreg is the baseline; here it is compared with {best}")


def test_without_baseline_each_model_meets_the_best_other():
    ev = ba.evaluate(
        "demo", datasets=["wine", "diabetes"], models=["logreg", "svm", "knn"], noise_repeats=2, n_bootstrap=0
    )
    t = ev.table("comparison")
    auc = ev.table("leaderboard").set_index("model")["auc"]
    for model, ref in t.groupby("model")["reference"].first().items():
        assert ref == auc.drop(index=model).idxmax()
    boot = t[t["value"] != "auc"]
    assert boot["low"].isna().all() and (boot["note"] == "no interval: n_bootstrap = 0").all()
    assert t[t["value"] == "auc"]["low"].notna().all()  # DeLong needs no bootstrap
    assert "no baseline was given" in comparison_summary(ev, "svm").sentence


def test_summary_and_index_cell_read_the_table(ev):
    s = comparison_summary(ev, "svm")
    assert s.reference == "logreg" and s.reference_kind == "baseline"
    assert s.table["Dataset"].iloc[0] == "mean over datasets"
    assert set(s.table["Reading"]) <= {"better", "worse", "no detectable difference", "not tested"}
    assert len(s.table) == 5 * (len(DATASETS) + 1)
    row = ev.table("comparison").query("model == 'single_feature' and value == 'auc' and dataset == 'mean'").iloc[0]
    cell = index_cell(ev, "single_feature")
    assert cell.startswith("vs logreg; AUC ") and ("worse" if row["pvalue"] < 0.05 else "no detectable") in cell
    assert "<table" in s._repr_html_() and "| Dataset |" in s.to_markdown()


def test_bad_baseline_is_one_line_naming_the_parameter_and_the_models():
    with pytest.raises(ValueError, match=r"^`baseline` 'nope' is not a model of .*; it has \['logreg', 'svm'\]$"):
        ba.evaluate("demo", datasets=["wine"], models=["logreg", "svm"], baseline="nope")
    with pytest.raises(ValueError, match="`baseline` must be a str"):
        ba.evaluate("demo", baseline=3)


def test_answers_leave_delong_out_with_the_reason():
    ev = ba.evaluate("demo:answers", models=["logreg", "knn"], noise_repeats=2, n_bootstrap=10, baseline="logreg")
    t = ev.table("comparison")
    auc = t[t["value"] == "auc"]
    # DeLong needs shared labels: the paired bootstrap of the items answers ΔAUC instead, and says so
    assert (auc["test"] == "paired bootstrap").all() and auc["pvalue"].notna().all()
    assert auc["difference"].notna().all()
    plain = ba.evaluate("demo:answers", models=["logreg", "knn"], noise_repeats=2, n_bootstrap=0, baseline="logreg")
    auc = plain.table("comparison").query("value == 'auc'")
    assert auc["pvalue"].isna().all() and auc["note"].str.contains("DeLong test needs the same labels").all()
    assert auc["difference"].notna().all()
    for value in ("accuracy", "kappa", "disca", "drift"):  # every resample of an answers benchmark is paired
        rows = t[(t["value"] == value) & (t["model"] == "knn")]
        assert rows["low"].notna().all() and (rows["test"] == "paired bootstrap").all(), value


@pytest.fixture(scope="module")
def flipped():
    """The answers demo's logreg, and ``logreg_flip``: the same answers with the correctness of the first test
    answer of wine and of digits_noisy flipped."""
    from importlib import resources

    with resources.as_file(resources.files("beyondauc") / "datasets" / "answers.csv.gz") as path:
        long = pd.read_csv(path)
    long = long[long["model"] == "logreg"].drop(columns=["prediction", "label"])
    twin = long.assign(model="logreg_flip")
    rows = [twin.index[(twin["dataset"] == d) & (twin["split"] == "test")][0] for d in ("wine", "digits_noisy")]
    twin.loc[rows, "correct"] = 1 - twin.loc[rows, "correct"]
    return ba.load_benchmark(pd.concat([long, twin], ignore_index=True)), int(twin.loc[rows[0], "correct"])


def test_answers_resample_the_same_rows_for_every_model(flipped):
    bench, now_correct = flipped
    a = selective_answering(bench, "logreg", "wine", protocol="none", n_bootstrap=B)
    b = selective_answering(bench, "logreg_flip", "wine", protocol="none", n_bootstrap=B)
    n = len(a.correct)
    # the same resample: the accuracies differ only by the copies of the flipped answer drawn, all of one sign
    k = (b.replicates["accuracy"] - a.replicates["accuracy"]).to_numpy() * n * (1 if now_correct else -1)
    assert np.allclose(k, np.round(k), atol=1e-9) and (np.round(k) >= 0).all() and (np.round(k) > 0).any()
    # one flip among 195 wrong answers barely moves the test cohort's AUC and the drift on the same resample
    # (resampled within each model's own right and wrong answers, the correlations were 0.49 and 0.76)
    c = cohort_diagnostics(bench, "logreg", "digits_noisy", n_bootstrap=B, n_repeats=2)
    d = cohort_diagnostics(bench, "logreg_flip", "digits_noisy", n_bootstrap=B, n_repeats=2)
    for name in ("auc_test", "drift"):
        assert np.corrcoef(c.replicates[name], d.replicates[name])[0, 1] > 0.97, name


def test_a_p_value_below_alpha_never_reads_as_alpha():
    """A p-value of 0.0498 shown as "0.050" beside "better" reads as a contradiction (better needs p < 0.05):
    below 0.1 a p-value keeps three significant digits."""
    from beyondauc.evaluation.comparison import p_text as _p_text
    from beyondauc.evaluation.comparison import reading

    p = 10 / 201  # the bootstrap p-value of 4 replicates of 200 on the other side of 0
    assert _p_text(p) == "0.0498" and reading(0.1, p) == "better"
    assert [_p_text(v) for v in (0.597, 0.052, 2 / 201, 0.0004, float("nan"))] == [
        "0.597",
        "0.052",
        "0.00995",
        "< 0.001",
        "\u2013",
    ]


def test_a_missing_interval_is_explained_with_the_rows_it_concerns():
    """The report's sentence names the rows whose Δ interval is missing and why, each reason once."""
    import pandas as pd

    from beyondauc.evaluation.comparison import MEAN_ROW, reference_sentence

    why = "only 1.5% of the bootstrap replicates lie below the estimate: too few for a 95% interval around it"
    t = pd.DataFrame(
        {
            "value": ["auc", "disca", "drift", "drift"],
            "dataset": ["mean", "wine", "wine", "mean"],
            "note": ["", why, why, ""],
        }
    )
    table = pd.DataFrame(
        {
            "Dataset": [MEAN_ROW, "wine", "wine", MEAN_ROW],
            "Value": ["AUC", "DiSCA", "drift", "drift"],
            "Reading": ["better", "not tested", "not tested", "no detectable difference"],
        }
    )
    text = reference_sentence("svm", "logreg", "baseline", table, t, "logreg")
    assert text.startswith(
        "svm against the baseline logreg. Over the mean of the datasets: better by AUC; "
        "no detectable difference in drift."
    )
    assert text.endswith(f" Note (DiSCA on wine and drift on wine): {why}.") and text.count(why) == 1
    everywhere = t.assign(note="no interval: n_bootstrap = 0")
    assert reference_sentence("svm", "logreg", "baseline", table, everywhere, "logreg").endswith(
        " Note: no interval: n_bootstrap = 0."
    )


# -- Holm on every family of the demo's evaluation (the README's first command) ---------------------------------


@pytest.fixture(scope="module")
def demo(demo_run):
    """The evaluation ``beyondauc demo`` saves (the session's shared run, read only)."""
    return ba.load_evaluation(demo_run.out / "evaluation")


def test_holm_on_every_family_of_the_demo_equals_the_step_down_procedure(demo):
    """The comparison's families (one model and value over the datasets; its mean a family of one) and the pairwise
    families (the pairs of models on one dataset, a pair's two rows one test): each adjusted p-value is the smallest
    level at which Holm's step-down procedure, run level by level, rejects the test."""
    t = demo.table("comparison")
    n_models, n_values = t["model"].nunique(), t["value"].nunique()
    assert n_models == len(demo.data["models"]) and (t["pvalue_holm"] > t["pvalue"]).any()
    families = 0
    for (model, value), g in t.groupby(["model", "value"]):
        for part in (g[g["dataset"] != "mean"], g[g["dataset"] == "mean"]):
            want = _holm_by_procedure(part["pvalue"].to_numpy(float))
            got = part["pvalue_holm"].to_numpy(float)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"{model} {value}")
            families += 1
    assert families == 2 * n_models * n_values
    pw = demo.table("pairwise")
    for dataset, g in pw.groupby("dataset"):
        tests = {}
        for r in g.itertuples():
            tests.setdefault(frozenset((r.model, r.other)), r.pvalue)
        assert len(tests) == n_models * (n_models - 1) // 2, dataset
        adjusted = dict(zip(tests, _holm_by_procedure(np.array(list(tests.values()), dtype=float))))
        for r in g.itertuples():
            assert r.pvalue_holm == pytest.approx(adjusted[frozenset((r.model, r.other))], abs=1e-12, nan_ok=True)
        families += 1
    assert families == 2 * n_models * n_values + len(demo.data["datasets"]) + 1  # the pairwise mean too
