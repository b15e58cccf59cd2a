"""Bootstrap bands on the ROC and coverage-accuracy Displays."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from sklearn.metrics import roc_curve

import beyondauc as ba
from beyondauc.metrics.diagnostics.curves import roc_tpr_rows
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, grid_weights
from beyondauc.plots import CoverageAccuracyDisplay, ThresholdROCDisplay


def _tpr_at(fpr, tpr, f):
    """Reference: the top of a vertical rise at f, else linear interpolation (sklearn's ROC points)."""
    out = []
    for v in f:
        i = np.flatnonzero(fpr <= v)[-1]
        j = i + 1
        if j < len(fpr) and fpr[j] > fpr[i]:
            out.append(tpr[i] + (v - fpr[i]) * (tpr[j] - tpr[i]) / (fpr[j] - fpr[i]))
        else:
            out.append(tpr[i])
    return np.array(out)


@pytest.mark.parametrize("ties", [False, True])
def test_roc_band_rows_equal_sklearn_roc_per_replicate(ties):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 80)
    s = rng.normal(y, 1.0)
    if ties:
        s = np.round(s, 1)
    x, inv = np.unique(s, return_inverse=True)
    counts = bootstrap_counts(y, 4, random_state=2)
    pos, neg = grid_weights(counts, inv, y, len(x))
    grid = np.linspace(0, 1, 41)
    got = roc_tpr_rows(x, pos[:, 0], neg[:, 0], grid)
    for r in range(4):
        fpr, tpr, _ = roc_curve(np.repeat(y, counts[r]), np.repeat(s, counts[r]), drop_intermediate=False)
        np.testing.assert_allclose(got[r], _tpr_at(fpr, tpr, grid), atol=1e-12)


def test_roc_display_draws_bands_only_when_computed():
    rng = np.random.default_rng(1)
    yv, yt = rng.integers(0, 2, 120), rng.integers(0, 2, 90)
    sv, st = rng.normal(yv, 1.0), rng.normal(yt, 1.0)
    fig, ax = plt.subplots()
    plain = ThresholdROCDisplay.from_predictions(yv, sv, yt, st, ax=ax)
    assert plain.bands is None and not any(isinstance(c, PolyCollection) for c in ax.collections)
    fig2, ax2 = plt.subplots()
    disp = ThresholdROCDisplay.from_predictions(yv, sv, yt, st, n_bootstrap=200, random_state=3, ax=ax2)
    assert sum(isinstance(c, PolyCollection) for c in ax2.collections) == 2
    grid, low, high = disp.bands[0]
    assert (low <= high).all() and low[0] >= 0 and high[-1] == 1.0
    fpr, tpr, _ = disp.curves[0][:3]
    inside = (_tpr_at(fpr, tpr, grid) >= low - 1e-12) & (_tpr_at(fpr, tpr, grid) <= high + 1e-12)
    assert inside.mean() > 0.9
    again = ThresholdROCDisplay.from_predictions(yv, sv, yt, st, n_bootstrap=200, random_state=3, ax=ax2)
    np.testing.assert_array_equal(again.bands[1][1], disp.bands[1][1])
    plt.close("all")


def test_coverage_accuracy_band_from_benchmark_equals_a_refit_loop():
    from beyondauc.metrics.selective.benchmark_confidence import ConfidenceSource
    from beyondauc.metrics.selective.benchmark_intervals import (
        BAND_COVERAGES,
        DiscaReading,
        benchmark_bootstrap,
        selective_design,
    )

    bench = ba.load_demo()
    opts = dict(
        source=ConfidenceSource(protocol="xdomain", method="logistic", class_weight=None, random_state=1),
        reading=DiscaReading(tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01),
        n_bootstrap=3,
    )
    _, acc, _ = benchmark_bootstrap(bench, "svm", "wine", **opts)
    s, y, role, strata = selective_design(bench, "svm", "wine", ood_dataset=None, protocol="xdomain", random_state=1)
    counts = bootstrap_counts(strata, 3, random_state=1)
    for r in range(3):
        rows = np.repeat(np.arange(len(y)), counts[r])
        cal, ev = rows[role[rows] == 0], rows[role[rows] == 1]
        m = ba.ScoreCalibrator("logistic").fit(s[cal], y[cal])
        p = m.predict_proba(s[ev])
        conf, ok = np.maximum(p, 1 - p), m.predict(s[ev]) == y[ev]
        want = [ba.accuracy_at_coverage(conf, ok, coverage=c) for c in BAND_COVERAGES]
        np.testing.assert_allclose(acc[r], want, atol=1e-12)


def test_coverage_accuracy_display_band():
    fig, ax = plt.subplots()
    disp = CoverageAccuracyDisplay.from_benchmark(ba.load_demo(), "svm", "breast_cancer", n_bootstrap=60, ax=ax)
    cov, low, high = disp.band
    assert (low <= high).all() and ((low >= 0) & (high <= 1)).all()
    assert any(isinstance(c, PolyCollection) for c in ax.collections)
    fig2, ax2 = plt.subplots()
    plain = CoverageAccuracyDisplay.from_benchmark(ba.load_demo(), "svm", "breast_cancer", ax=ax2)
    assert plain.band is None and not any(isinstance(c, PolyCollection) for c in ax2.collections)
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1, 150)
    arr = CoverageAccuracyDisplay.from_predictions(conf, rng.uniform(size=150) < conf, n_bootstrap=80)
    assert arr.band[1][-1] <= arr.curve.accuracy[-1] <= arr.band[2][-1]
    plt.close("all")
