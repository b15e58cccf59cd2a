"""The replicate engine, and each batched statistic against its point-estimate twin.

Every test runs the batched statistic through :func:`bootstrap_replicates` -- with memory
bounds so small that a few replicates make several chunks -- and compares each replicate
with the point-estimate function called on that replicate's resampled examples, built
explicitly (``np.repeat`` of the rows by their bootstrap counts), to 1e-12.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from beyondauc.metrics.core.fitting import class_weighted
from beyondauc.metrics.core.kernel import auc_from_counts, grid_counts
from beyondauc.metrics.diagnostics.cohorts import bias_rows, drift_rows, wasserstein_rows
from beyondauc.metrics.diagnostics.curves import roc_band, roc_points, roc_tpr_rows
from beyondauc.metrics.selective.curves import accuracy_at_coverages, exact_area_rows
from beyondauc.metrics.selective.scores import selective_rows
from beyondauc.metrics.uncertainty import replicates
from beyondauc.metrics.uncertainty.bootstrap import BLOCK, bootstrap_counts, grid_weights, jackknife_groups, strata_of
from beyondauc.metrics.uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    calibrated_rows,
    replicate_chunks,
)

B = 7  # replicates per test: several chunks, one partial
TOL = {"rel": 1e-12, "abs": 1e-12}


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Bound a chunk to ~300 cells, so the engine's chunking and stacking are part of every test."""
    monkeypatch.setattr(replicates, "CELLS", 300)


def _run(strata, inverse, y, n_values, statistic, seed, *, align=1, **grouped):
    """The engine's replicates, and the counts they were drawn from (the reference's resamples)."""
    sample = GridSample(strata, inverse, y, n_values, **grouped)
    got = bootstrap_replicates(sample, statistic, ReplicatePlan(B, seed, align=align))
    return got, bootstrap_counts(strata, B, random_state=seed)


def _cohort(seed, n=90, ties=False, shift=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.normal(y * 1.0 + shift, 1.0)
    return y, np.round(s, 1) if ties else s


def _cohorts(seed, ties):
    yv, sv = _cohort(seed, 70, ties)
    yt, st = _cohort(seed + 50, 50, ties, shift=0.3)
    y, s = np.r_[yv, yt], np.r_[sv, st]
    cohort = np.r_[np.zeros(len(yv), int), np.ones(len(yt), int)]
    x, inv = np.unique(s, return_inverse=True)
    return y, s, cohort, x, inv


def _split(counts, y, s, cohort):
    """The V and T cohorts of one replicate, resampled explicitly."""
    v, t = cohort == 0, cohort == 1
    return (
        np.repeat(y[v], counts[v]),
        np.repeat(s[v], counts[v]),
        np.repeat(y[t], counts[t]),
        np.repeat(s[t], counts[t]),
    )


# -- the engine ---------------------------------------------------------------------------


def test_chunks_are_bounded_and_cover_every_replicate():
    assert replicate_chunks(7, 100) == [(0, 3), (3, 6), (6, 7)]
    assert replicate_chunks(0, 100) == []
    assert replicate_chunks(200, 2, align=BLOCK) == [(0, 128), (128, 200)]
    assert replicate_chunks(200, 1000, align=BLOCK) == [(0, 64), (64, 128), (128, 192), (192, 200)]


@pytest.mark.parametrize("align", [1, BLOCK])
def test_engine_rows_are_the_bootstrap_counts_on_the_grid(align):
    y, s = _cohort(0, ties=True)
    x, inv = np.unique(s, return_inverse=True)
    strata = strata_of(y)
    got, counts = _run(strata, inv, y, len(x), lambda pos, neg: {"pos": pos, "neg": neg}, 3, align=align)
    pos, neg = grid_weights(counts, inv, y, len(x))
    np.testing.assert_array_equal(got["pos"], pos[:, 0])
    np.testing.assert_array_equal(got["neg"], neg[:, 0])


def test_engine_groups_give_one_row_per_group():
    y, _, cohort, x, inv = _cohorts(1, ties=True)
    strata = strata_of(cohort, y)
    got, counts = _run(strata, inv, y, len(x), lambda pos, neg: pos, 2, groups=cohort, n_groups=2)
    want, _ = grid_weights(counts, inv, y, len(x), groups=cohort, n_groups=2)
    assert got.shape == (B, 2, len(x))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cells", [None, 1])
def test_jackknife_rows_are_the_counts_with_each_group_left_out(monkeypatch, cells):
    """Each jackknife row is ``grid_weights`` of the per-example counts 1, and 0 in its group, chunks or not
    (``cells=1``: a chunk per group); examples of group -1 (left out of every row) count nowhere."""
    y, _, cohort, x, inv = _cohorts(3, ties=True)
    cohort = np.where(np.arange(len(cohort)) % 7 == 0, -1, cohort)
    strata = strata_of(cohort, y)
    if cells is not None:
        monkeypatch.setattr(replicates, "CELLS", cells)
    got = replicates.jackknife_replicates(
        GridSample(strata, inv, y, len(x), groups=cohort, n_groups=2),
        lambda pos, neg: {"pos": pos, "neg": neg},
        ReplicatePlan(B, random_state=4, n_jackknife=6),
    )
    member = jackknife_groups(strata, 6, random_state=4)
    pos, neg = grid_weights(
        (member[None, :] != np.arange(6)[:, None]).astype(np.int32), inv, y, len(x), groups=cohort, n_groups=2
    )
    np.testing.assert_array_equal(got["pos"], pos)
    np.testing.assert_array_equal(got["neg"], neg)


def test_engine_without_a_seed_draws_one_stream():
    y, s = _cohort(2)
    x, inv = np.unique(s, return_inverse=True)
    n_pos = bootstrap_replicates(
        GridSample(y, inv, y, len(x)), lambda pos, neg: pos.sum(axis=1), ReplicatePlan(B, random_state=None)
    )
    assert (n_pos == y.sum()).all()


def test_engine_needs_a_replicate():
    with pytest.raises(ValueError, match="n_bootstrap"):
        bootstrap_replicates(GridSample([0, 1], [0, 1], [0, 1], 2), lambda pos, neg: pos, ReplicatePlan(0, 0))


# -- AUC ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", [False, True])
def test_auc_from_counts_batched_equals_the_auc_of_each_resample(ties):
    y, s = _cohort(3, ties=ties)
    values, inv, _, _ = grid_counts(y, s)
    got, counts = _run(y, inv, y, len(values), auc_from_counts, 4, align=BLOCK)
    for r in range(B):  # the reference loops over replicates; the statistic does not
        a, b = np.repeat(y, counts[r]), np.repeat(s, counts[r])
        assert got[r] == pytest.approx(roc_auc_score(a, b), **TOL)
        assert got[r] == pytest.approx(float(auc_from_counts(*grid_counts(a, b)[2:])), **TOL)


# -- ROC band -----------------------------------------------------------------------------


def _tpr_at(fpr, tpr, f):
    """The TPR of the drawn ROC polyline at FPR f: the top of a vertical rise, else linear interpolation."""
    out = []
    for v in f:  # a reference loop over grid points
        i = np.flatnonzero(fpr <= v)[-1]
        j = i + 1
        out.append(
            tpr[i] + (v - fpr[i]) * (tpr[j] - tpr[i]) / (fpr[j] - fpr[i])
            if j < len(fpr) and fpr[j] > fpr[i]
            else tpr[i]
        )
    return np.array(out)


@pytest.mark.parametrize("ties", [False, True])
def test_roc_tpr_rows_equal_roc_points_of_each_resample(ties):
    y, s = _cohort(5, ties=ties)
    x, inv = np.unique(s, return_inverse=True)
    grid = np.linspace(0, 1, 41)
    got, counts = _run(y, inv, y, len(x), lambda pos, neg: roc_tpr_rows(x, pos, neg, grid), 6)
    for r in range(B):
        fpr, tpr, _ = roc_points(np.repeat(y, counts[r]), np.repeat(s, counts[r]))
        np.testing.assert_allclose(got[r], _tpr_at(fpr, tpr, grid), rtol=1e-12, atol=1e-12)


def test_roc_band_is_the_percentile_band_of_the_resamples():
    y, s = _cohort(6, ties=True)
    fpr_grid, low, high = roc_band(y, s, n_bootstrap=B, confidence_level=0.8, random_state=2)
    counts = bootstrap_counts(y, B, random_state=2)
    tprs = []
    for r in range(B):
        fpr, tpr, _ = roc_points(np.repeat(y, counts[r]), np.repeat(s, counts[r]))
        tprs.append(_tpr_at(fpr, tpr, fpr_grid))
    np.testing.assert_allclose(low, np.quantile(tprs, 0.1, axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(high, np.quantile(tprs, 0.9, axis=0), rtol=1e-12, atol=1e-12)


# -- selective answering ------------------------------------------------------------------


def _answers(seed, ties):
    rng = np.random.default_rng(seed)
    conf = np.round(rng.uniform(0.5, 1, 80), 2 if ties else 6)  # ties: many, on grid steps
    return conf, rng.uniform(size=80) < conf


@pytest.mark.parametrize("ties", [False, True])
def test_exact_area_rows_equal_the_curve_of_each_resample(ties):
    conf, ok = _answers(7, ties)
    values, inv, _, _ = grid_counts(ok, conf)
    got, counts = _run(
        np.zeros(len(ok), int), inv, ok, len(values), lambda n_ok, n_wrong: exact_area_rows(values, n_ok, n_wrong), 7
    )
    for r in range(B):
        cur = ba.coverage_accuracy_curve(np.repeat(conf, counts[r]), np.repeat(ok, counts[r]))
        assert got[r] == pytest.approx(cur.score, **TOL)


@pytest.mark.parametrize("ties", [False, True])
def test_accuracy_at_coverages_equal_accuracy_at_coverage_of_each_resample(ties):
    conf, ok = _answers(8, ties)
    values, inv, _, _ = grid_counts(ok, conf)
    levels = np.linspace(0.05, 1, 20)
    got, counts = _run(
        np.zeros(len(ok), int),
        inv,
        ok,
        len(values),
        lambda n_ok, n_wrong: accuracy_at_coverages(values, n_ok, n_wrong, levels),
        8,
    )
    for r in range(B):
        c, o = np.repeat(conf, counts[r]), np.repeat(ok, counts[r])
        want = [ba.accuracy_at_coverage(c, o, coverage=v) for v in levels]
        np.testing.assert_allclose(got[r], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("resolution,tolerance", [(0.01, 0.9), (0.05, 0.7)])
def test_selective_rows_equal_disca_and_aurc_of_each_resample(ties, resolution, tolerance):
    conf, ok = _answers(9, ties)
    values, inv, _, _ = grid_counts(ok, conf)
    weights = (0.2, 0.3, 0.5)
    got, counts = _run(
        np.zeros(len(ok), int),
        inv,
        ok,
        len(values),
        lambda n_ok, n_wrong: selective_rows(
            values, n_ok, n_wrong, resolution=resolution, tolerance=tolerance, weights=weights
        ),
        9,
    )
    for r in range(B):
        c, o = np.repeat(conf, counts[r]), np.repeat(ok, counts[r])
        d = ba.disca(c, o, tolerance=tolerance, weights=weights, resolution=resolution)
        want = {
            "accuracy": float(np.mean(o)),
            "area": 1.0 - ba.aurc(c, o),
            "aurc": ba.aurc(c, o),
            "disca": d.score,
            "a": d.a,
            "b": d.b,
            "n_fluctuations": d.n_fluctuations,
            "fluctuation_magnitude": d.fluctuation_magnitude,
            "penalty": d.penalty,
        }
        for k, v in want.items():
            assert got[k][r] == pytest.approx(v, **TOL), (k, r)


@pytest.mark.parametrize("method", ["logistic", "isotonic", "stump"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_calibrated_rows_equal_a_score_calibrator_fitted_on_each_resample(method, class_weight):
    rng = np.random.default_rng(4)
    y = (rng.uniform(size=120) < 0.4).astype(int)
    s = np.round(rng.normal(y * 1.2, 1.0), 1)  # ties on purpose
    x, inv, _, _ = grid_counts(y, s)

    def statistic(pos, neg):
        # the logistic's StandardScaler sees the unweighted rows, as in a pipeline
        proba, pred = calibrated_rows(method, x, *class_weighted(pos, neg, class_weight), counts=pos + neg)
        return {"proba": proba, "pred": pred}

    got, counts = _run(y, inv, y, len(x), statistic, 1)
    for r in range(B):
        cal = ba.ScoreCalibrator(method, class_weight=class_weight).fit(
            np.repeat(s, counts[r]), np.repeat(y, counts[r])
        )
        np.testing.assert_allclose(got["proba"][r], cal.predict_proba(x), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(got["pred"][r], cal.predict(x).astype(bool))


# -- diagnostics --------------------------------------------------------------------------


@pytest.mark.parametrize("ties", [False, True])
def test_bias_rows_equal_bias_robustness_of_each_resample(ties):
    y, s, cohort, x, inv = _cohorts(10, ties)
    sigma_max = float(np.ptp(s))

    def statistic(pos, neg):  # (R, cohort, score or AUC)
        return np.stack([np.stack(bias_rows(x, pos[:, k], neg[:, k], sigma_max), axis=1) for k in (0, 1)], axis=1)

    got, counts = _run(strata_of(cohort, y), inv, y, len(x), statistic, 10, groups=cohort, n_groups=2)
    for r in range(B):
        a, b, c, d = _split(counts[r], y, s, cohort)
        for k, (labels, scores) in enumerate(((a, b), (c, d))):
            want = ba.bias_robustness(labels, scores, sigma_max=sigma_max)
            assert got[r, k, 0] == pytest.approx(want.score, **TOL)
            assert got[r, k, 1] == pytest.approx(want.auc, **TOL)


@pytest.mark.parametrize("ties", [False, True])
def test_drift_rows_equal_sens_spec_drift_of_each_resample(ties):
    y, s, cohort, x, inv = _cohorts(11, ties)
    got, counts = _run(
        strata_of(cohort, y), inv, y, len(x), lambda pos, neg: drift_rows(x, pos, neg), 11, groups=cohort, n_groups=2
    )
    for r in range(B):
        assert got[r] == pytest.approx(ba.sens_spec_drift(*_split(counts[r], y, s, cohort)).score, **TOL)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_wasserstein_rows_equal_wasserstein_matrix_of_each_resample(ties, p):
    y, s, cohort, x, inv = _cohorts(12, ties)

    def statistic(pos, neg):
        w, mat = wasserstein_rows(x, pos, neg, p)
        return {"w": w, "matrix": mat}

    got, counts = _run(strata_of(cohort, y), inv, y, len(x), statistic, 12, groups=cohort, n_groups=2)
    for r in range(B):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = ba.wasserstein_matrix(*_split(counts[r], y, s, cohort), p=p)
        assert got["w"][r] == pytest.approx(want.score, **TOL)
        np.testing.assert_allclose(got["matrix"][r], want.matrix, rtol=1e-12, atol=1e-12)
