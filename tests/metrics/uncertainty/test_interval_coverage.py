"""Coverage of the BCa intervals of DiSCA and drift on simulated benchmarks with a known truth.

Both simulations are built so that the truth is analytic and the statistic a
smooth function of the class counts: scores on a fixed grid of 11 values
(both ends always observed, so the drift's normalising range is fixed), and
confidences at five levels (a and b fixed by design, one fluctuation whose
size carries DiSCA's sampling error).  Over 200 seeds the 95% intervals must
cover the truth in 93-97% of them (the binomial standard error is 1.5 points;
seeds are fixed, so the test is deterministic), and every interval given must
contain its estimate.  ``benchmarks/coverage_intervals_diagnostics.py --bca``
runs the long version.

BCa reads quantiles far in the tails (levels such as 0.5% once z0 and the
acceleration move them), which 200 replicates place too far in: over 1,000
simulations the drift's intervals cover 92.6% with B = 200 and 95.0% with
B = 1000 (300 simulations), DiSCA's 94.1% (B = 200) and 95.6% (B = 1000).  The
drift is tested at B = 1000, DiSCA at B = 200.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.metrics.diagnostics.cohorts import drift_rows
from beyondauc.metrics.uncertainty.bootstrap import honest_interval, jackknife_acceleration, strata_of
from beyondauc.metrics.uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    interval_frame,
    jackknife_replicates,
)

SEEDS = range(200)
GRID = np.linspace(0.0, 1.0, 11)


def _pmf(centre, width):
    w = np.exp(-0.5 * ((GRID - centre) / width) ** 2) + 0.02  # every grid value has mass: the range is fixed
    return w / w.sum()


#: (negatives, positives) score distributions of the validation and test cohorts
COHORTS = {"val": (_pmf(0.3, 0.2), _pmf(0.7, 0.2)), "test": (_pmf(0.5, 0.25), _pmf(0.8, 0.2))}


def true_drift():
    """The drift of the two populations: sens/spec step functions at the grid values, as sens_spec_drift sums."""
    (vn, vp), (tn, tp) = COHORTS["val"], COHORTS["test"]
    sens = [1 - np.concatenate([[0], np.cumsum(p)[:-1]]) for p in (vp, tp)]  # P(s+ >= x_k)
    spec = [np.concatenate([[0], np.cumsum(n)[:-1]]) for n in (vn, tn)]  # P(s- < x_k)
    gap = (sens[0] - sens[1]) ** 2 + (spec[0] - spec[1]) ** 2
    return float(np.dot(np.diff(GRID), gap[1:]) / (GRID[-1] - GRID[0]))


def draw_cohorts(rng, n=150):
    out = []
    for neg, pos in COHORTS.values():
        y = np.r_[np.zeros(n, int), np.ones(n, int)]
        s = np.r_[rng.choice(GRID, n, p=neg), rng.choice(GRID, n, p=pos)]
        out += [y, s]
    return out


LEVELS = np.array([0.95, 0.85, 0.75, 0.65, 0.55])  # confidence levels, on DiSCA's 0.01 grid
P_RIGHT = np.array([0.75, 0.98, 0.65, 0.55, 0.5])  # share of right answers at each level


def true_disca():
    """DiSCA of the population: a = b = 0.95 (the first level already falls below 0.9), one fluctuation.

    Going down the levels the accuracy is 0.75, then (0.75 + 0.98) / 2 = 0.865 (a rise of 0.115 across
    a confidence gap of 0.1), then falls; DiSCA = 1/3 / 0.95 + 1/3 / 0.95 - 1/3 * 0.115 / 0.1.
    """
    acc = np.cumsum(P_RIGHT) / np.arange(1, 6)
    return (2 / 3) / LEVELS[0] - (1 / 3) * (acc[1] - acc[0]) / (LEVELS[0] - LEVELS[1])


def draw_answers(rng, n=300):
    level = rng.integers(0, 5, n)
    return LEVELS[level], rng.uniform(size=n) < P_RIGHT[level]


def _coverage(draw, interval, truth):
    hits, given = 0, 0
    for seed in SEEDS:
        est, low, high = interval(draw(np.random.default_rng(seed)), seed)
        if np.isfinite(low):
            given += 1
            assert low <= est <= high, (seed, est, low, high)  # every interval given contains its estimate
            hits += low <= truth <= high
    return hits / len(SEEDS), given


def test_truths_are_what_a_very_large_sample_gives():
    rng = np.random.default_rng(0)
    yv, sv, yt, st = draw_cohorts(rng, 200_000)
    assert ba.sens_spec_drift(yv, sv, yt, st).score == pytest.approx(true_drift(), abs=2e-3)
    conf, ok = draw_answers(rng, 400_000)
    assert ba.disca(conf, ok).score == pytest.approx(true_disca(), abs=0.01)


def drift_interval(cohorts, seed, n_bootstrap=1000):
    """The drift row of :func:`beyondauc.diagnostics_intervals`, computed as it does but for the drift alone.

    The same design (one grid of V and T, strata cohort x class), engine, kernel and interval; the
    other five diagnostics (W, bias robustness) are what make the public function 3x slower here.
    """
    yv, sv, yt, st = cohorts
    y, s = np.r_[yv, yt], np.r_[sv, st]
    cohort = np.r_[np.zeros(len(yv), int), np.ones(len(yt), int)]
    x, inv = np.unique(s, return_inverse=True)
    sample = GridSample(strata_of(cohort, y), inv, y, len(x), groups=cohort, n_groups=2)
    plan = ReplicatePlan(n_bootstrap, seed)

    def statistic(pos, neg):
        return {"drift": drift_rows(x, pos, neg)}

    reps = pd.DataFrame(bootstrap_replicates(sample, statistic, plan))
    jack = pd.DataFrame(jackknife_replicates(sample, statistic, plan))
    return interval_frame({"drift": ba.sens_spec_drift(*cohorts).score}, reps, 0.95, jackknife=jack).loc["drift"]


def test_drift_interval_is_the_public_functions():
    cohorts = draw_cohorts(np.random.default_rng(7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        public = ba.diagnostics_intervals(*cohorts, n_bootstrap=200, random_state=7).loc["drift"]
    pd.testing.assert_series_equal(drift_interval(cohorts, 7, 200), public)


def test_bca_intervals_of_drift_cover_the_truth():
    def interval(cohorts, seed):
        t = drift_interval(cohorts, seed)
        assert t["interval_method"] == "BCa"
        return t["estimate"], t["low"], t["high"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coverage, given = _coverage(draw_cohorts, interval, true_drift())
    assert 0.93 <= coverage <= 0.97, coverage
    assert given >= 195


def test_bca_intervals_of_disca_cover_the_truth():
    def interval(answers, seed):
        t = ba.selective_intervals(*answers, n_bootstrap=200, random_state=seed).loc["disca"]
        assert t["interval_method"] == "BCa"
        return t["estimate"], t["low"], t["high"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coverage, given = _coverage(draw_answers, interval, true_disca())
    assert 0.93 <= coverage <= 0.97, coverage
    assert given >= 195


def test_bca_equals_scipy_with_one_group_per_example():
    """With one example per jackknife group, the interval is scipy's BCa on scipy's own replicates."""
    from scipy import stats

    from beyondauc.metrics.uncertainty.bootstrap import jackknife_groups

    x = np.random.default_rng(1).exponential(size=40)
    res = stats.bootstrap((x,), np.var, method="BCa", n_resamples=999, random_state=2)
    assert sorted(jackknife_groups(np.zeros(40, int), 40, random_state=0).tolist()) == list(range(40))
    loo = np.array([np.var(np.delete(x, i)) for i in range(40)])
    low, high, method, note = honest_interval(
        res.bootstrap_distribution, np.var(x), 0.95, acceleration=jackknife_acceleration(loo)
    )
    assert (method, note) == ("BCa", "")
    np.testing.assert_allclose([low, high], [res.confidence_interval.low, res.confidence_interval.high], rtol=1e-10)


def test_no_interval_rather_than_one_that_excludes_its_estimate():
    reps = np.linspace(1.0, 2.0, 200)
    assert honest_interval(reps, 0.5, 0.95, acceleration=0.0)[3] == "every bootstrap replicate lies above the estimate"
    low, high, _, note = honest_interval(reps, 1.01, 0.95, acceleration=0.0)  # 1% of replicates below it
    assert np.isnan(low) and np.isnan(high) and "only 1.0% of the bootstrap replicates lie below" in note
    low, high, _, note = honest_interval(reps, 1.1, 0.95, acceleration=0.0)  # 10% below: an interval around it
    assert low <= 1.1 <= high and note == ""
    low, high, method, note = honest_interval(reps, 1.01, 0.95)  # the percentile interval misses it: NaN too
    assert method == "percentile" and np.isnan(low) and note


def test_jackknife_rows_are_the_statistic_without_each_group():
    """Row g of the jackknife is the point function on the data with group g's examples deleted (stratified)."""
    from beyondauc.metrics.uncertainty.bootstrap import jackknife_groups

    yv, sv, yt, st = draw_cohorts(np.random.default_rng(3), 40)
    y, s = np.r_[yv, yt], np.r_[sv, st]
    cohort = np.r_[np.zeros(len(yv), int), np.ones(len(yt), int)]
    x, inv = np.unique(s, return_inverse=True)
    strata = strata_of(cohort, y)
    jack = jackknife_replicates(
        GridSample(strata, inv, y, len(x), groups=cohort, n_groups=2),
        lambda pos, neg: drift_rows(x, pos, neg),
        ReplicatePlan(1, random_state=5),
    )
    member = jackknife_groups(strata, 20, random_state=5)
    for g in range(20):
        keep = member != g
        v, t = keep & (cohort == 0), keep & (cohort == 1)
        assert np.bincount(strata[~keep], minlength=4).tolist() == [2, 2, 2, 2]  # 1/20 of each stratum of 40
        assert jack[g] == pytest.approx(ba.sens_spec_drift(y[v], s[v], y[t], s[t]).score, rel=1e-12)
