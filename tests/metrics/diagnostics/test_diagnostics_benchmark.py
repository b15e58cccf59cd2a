"""Bootstrap intervals of the diagnostics: the vectorised replicates against a loop over replicates."""

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.metrics.diagnostics.resampling import DiagnosticsBootstrap, diagnostics_replicates
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, strata_of


def _cohorts(seed, n_val=70, n_test=50, ties=False):
    rng = np.random.default_rng(seed)
    yv = rng.integers(0, 2, n_val)
    yt = rng.integers(0, 2, n_test)
    sv = rng.normal(yv * 1.0, 1.0)
    st = rng.normal(yt * 0.7 + 0.3, 1.2)
    if ties:
        sv, st = np.round(sv, 1), np.round(st, 1)
    return yv, sv, yt, st


@pytest.mark.parametrize("seed,ties", [(0, False), (1, True), (2, True)])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_replicates_equal_point_functions_on_repeated_rows(seed, ties, p):
    yv, sv, yt, st = _cohorts(seed, ties=ties)
    sigma_max = float(np.ptp(np.concatenate([sv, st])))
    B = 5
    reps = diagnostics_replicates(yv, sv, yt, st, DiagnosticsBootstrap(B, sigma_max, p, random_state=seed))
    cohort = np.r_[np.zeros(len(yv), int), np.ones(len(yt), int)]
    counts = bootstrap_counts(strata_of(cohort, np.r_[yv, yt]), B, random_state=seed)
    cv, ct = counts[:, : len(yv)], counts[:, len(yv) :]
    for r in range(B):  # the straightforward way: repeat rows, call the point estimate
        a, b = np.repeat(yv, cv[r]), np.repeat(sv, cv[r])
        c, d = np.repeat(yt, ct[r]), np.repeat(st, ct[r])
        want = {
            "bias_robustness_val": ba.bias_robustness(a, b, sigma_max=sigma_max).score,
            "bias_robustness_test": ba.bias_robustness(c, d, sigma_max=sigma_max).score,
            "auc_val": ba.bias_robustness(a, b, sigma_max=sigma_max).auc,
            "auc_test": ba.bias_robustness(c, d, sigma_max=sigma_max).auc,
            "drift": ba.sens_spec_drift(a, b, c, d).score,
            "wasserstein": ba.wasserstein_matrix(a, b, c, d, p=p).score,
        }
        got = reps.iloc[r]
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=1e-12, abs=1e-12), (k, r)


def test_wasserstein_matrix_rows_equal_scipy_for_p1():
    from scipy.stats import wasserstein_distance

    from beyondauc.metrics.diagnostics.cohorts import wasserstein_rows
    from beyondauc.metrics.uncertainty.bootstrap import grid_weights

    yv, sv, yt, st = _cohorts(4, ties=True)
    y, s = np.r_[yv, yt], np.r_[sv, st]
    cohort = np.r_[np.zeros(len(yv), int), np.ones(len(yt), int)]
    x, inv = np.unique(s, return_inverse=True)
    counts = bootstrap_counts(strata_of(cohort, y), 3, random_state=0)
    pos, neg = grid_weights(counts, inv, y, len(x), groups=cohort, n_groups=2)
    _, mat = wasserstein_rows(x, pos, neg, 1)
    for r in range(3):
        want = wasserstein_distance(x, x, neg[r, 0], pos[r, 0])
        assert mat[r, 0, 0] == pytest.approx(want, rel=1e-12)


def test_cohort_diagnostics_intervals_reproducible_and_contain_estimate():
    bench = ba.load_demo()
    kw = dict(n_repeats=2, n_bootstrap=300, random_state=4)
    a = ba.cohort_diagnostics(bench, "svm", "breast_cancer", **kw).to_dict()
    assert a == ba.cohort_diagnostics(bench, "svm", "breast_cancer", **kw).to_dict()
    for name in ("auc_val", "auc_test", "bias_robustness_val", "bias_robustness_test", "drift", "wasserstein"):
        key = {"bias_robustness_val": "bias_robustness_val"}.get(name, name)
        assert a[f"{name}_low"] <= a[key] + 1e-12 <= a[f"{name}_high"] + 2e-12, name
    assert "noise_robustness_val_low" not in a
    assert "drift_low" not in ba.cohort_diagnostics(bench, "svm", "breast_cancer", n_repeats=2).to_dict()


def test_diagnostics_table_interval_columns():
    t = ba.diagnostics_table(ba.load_demo(), models=["logreg", "svm"], datasets=["wine"], n_repeats=2, n_bootstrap=50)
    assert {"drift_low", "drift_high", "wasserstein_low", "bias_robustness_test_high"} <= set(t.columns)
    assert (t["drift_low"] <= t["drift_high"]).all()


def test_diagnostics_intervals_single_class_is_nan_with_warning():
    yv, sv, yt, st = _cohorts(0)
    with pytest.warns(ba.UndefinedMetricWarning):
        ci = ba.diagnostics_intervals(yv, sv, np.ones_like(yt), st, n_bootstrap=20)
    assert np.isnan(ci.loc["drift", "low"]) and np.isnan(ci.loc["wasserstein", "high"])
    assert np.isfinite(ci.loc["auc_val", "low"])


def test_diagnostics_intervals_estimates_and_level():
    yv, sv, yt, st = _cohorts(5, n_val=200, n_test=200)
    ci = ba.diagnostics_intervals(yv, sv, yt, st, n_bootstrap=400, random_state=1, p=1)
    assert ci.loc["drift", "estimate"] == ba.sens_spec_drift(yv, sv, yt, st).score
    assert ci.loc["wasserstein", "estimate"] == ba.wasserstein_matrix(yv, sv, yt, st, p=1).score
    wide = ba.diagnostics_intervals(yv, sv, yt, st, n_bootstrap=400, random_state=1, p=1, confidence_level=0.99)
    assert (wide["high"] - wide["low"] >= ci["high"] - ci["low"] - 1e-12).all()
    pd.testing.assert_frame_equal(ci, ba.diagnostics_intervals(yv, sv, yt, st, n_bootstrap=400, random_state=1, p=1))
    with pytest.raises(ValueError, match="n_bootstrap"):
        ba.diagnostics_intervals(yv, sv, yt, st, n_bootstrap=-1)


def test_each_dataset_draws_its_own_replicates_and_every_model_the_same():
    """Per-dataset bootstraps draw random_state's child stream for the dataset's place: two datasets with the same rows
    in the same order get different resamples (so a mean over datasets averages independent ones),
    while every model reads the same resample of a dataset (paired)."""
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed

    rng = np.random.default_rng(0)
    n = 80
    y = (rng.random(n) < 0.5).astype(int)
    s = rng.normal(size=n) + y
    frame = pd.DataFrame(
        {
            "dataset": np.repeat(["a", "b"], n),
            "label": np.tile(y, 2),
            "split": np.tile(np.where(np.arange(n) < n // 2, "val", "test"), 2),
            "m1": np.tile(s, 2),
            "m2": np.tile(2 * s + 1, 2),
        }
    )  # m2: a monotone copy of m1
    bench = ba.load_benchmark(frame)
    kw = dict(n_bootstrap=25, random_state=4, n_repeats=2)
    reps = {(m, d): ba.cohort_diagnostics(bench, m, d, **kw).replicates for m in ("m1", "m2") for d in "ab"}
    # the same rows, different streams
    assert not np.allclose(reps[("m1", "a")]["auc_test"], reps[("m1", "b")]["auc_test"])
    # paired: a monotone copy has the same AUCs in every replicate of a dataset
    for d in "ab":
        np.testing.assert_allclose(reps[("m1", d)]["auc_test"], reps[("m2", d)]["auc_test"], rtol=0, atol=1e-12)
    # and the stream is the array-level bootstrap's with the dataset's seed
    yv, sv, yt, st = ba.cohorts(bench, "m1", "b")
    direct = diagnostics_replicates(
        yv, sv, yt, st, DiagnosticsBootstrap(25, float(np.ptp(np.r_[sv, st])), 2, random_state=dataset_seed(4, 1))
    )  # b: the second dataset
    np.testing.assert_allclose(direct["drift"], reps[("m1", "b")]["drift"], rtol=0, atol=0)
    sel = {d: ba.selective_answering(bench, "m1", d, n_bootstrap=25, random_state=4).replicates["aurc"] for d in "ab"}
    assert not np.allclose(sel["a"], sel["b"])
    # names do not enter: the same datasets renamed give the same replicates
    renamed = ba.load_benchmark(frame.assign(dataset=frame["dataset"].map({"a": "<z> a", "b": "$b$"})))
    np.testing.assert_array_equal(
        ba.cohort_diagnostics(renamed, "m1", "$b$", **kw).replicates["drift"], reps[("m1", "b")]["drift"]
    )
    np.testing.assert_array_equal(
        ba.selective_answering(renamed, "m1", "$b$", n_bootstrap=25, random_state=4).replicates["aurc"], sel["b"]
    )
