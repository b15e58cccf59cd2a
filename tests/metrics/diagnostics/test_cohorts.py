"""Tests of :mod:`beyondauc.metrics.diagnostics.cohorts`: the test-set AUROC diagnostics of Roberts et al.

Every number is checked against a reference written here, from the definitions
of the diagnostics user guide, with no package internals:

* bias robustness: the sigma integral of pairwise AUCs, integrated exactly
  piece by piece (the AUC of ``s - sigma * [y = 1]`` only changes where sigma
  crosses a pairwise difference), and by a midpoint grid whose error bound
  ``1 / (2 m A)`` is derived below; plus the O(n^2) identity with
  ``E[clip(D, 0, sigma_max)]``;
* noise robustness with ``noise_method="monte_carlo"``: a Monte Carlo
  estimate with its own generator (the package's draws are internal, so only
  seeding, ordering and convergence can be compared); the exact default is
  tested against the brute-force pair sum in tests/metrics/diagnostics/test_noise_exact.py;
* drift: a Python loop over the merged distinct scores, and a dense grid;
* Wasserstein: ``scipy.stats.wasserstein_distance`` (p = 1) and the empirical
  quantile functions on exact rational breakpoints (any p).

AUCs are compared with the exact pair count (a ``Fraction``, so the float is
the correctly rounded value); ``roc_auc_score`` sums trapezoids and may be one
ulp off that, e.g. 0.44999999999999996 for 9 / 20.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import ShuffleSplit

import beyondauc
from beyondauc import (
    UndefinedMetricWarning,
    bias_robustness,
    cohort_diagnostics,
    cohorts,
    diagnostics_table,
    load_benchmark,
    load_demo,
    noise_robustness,
    sens_spec_drift,
    wasserstein_matrix,
)

KINDS = ("normal", "tied", "int", "offset", "skewed")
SEEDS = (0, 1, 2)


# -- generated cohorts ------------------------------------------------------------------


def make_cohort(kind, seed, n=None, shift=0.0):
    """Labels 0/1 (both classes present) and scores of one small cohort.

    normal: continuous; tied: rounded to one decimal; int: integers 0..4;
    offset: continuous around 1e3; skewed: about 20% positives, continuous.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 18)) if n is None else n
    rate = 0.2 if kind == "skewed" else 0.5
    y = (rng.random(n) < rate).astype(int)
    y[0], y[1] = 0, 1
    z = rng.normal(size=n) + 0.8 * y + shift
    if kind == "tied":
        s = np.round(z, 1)
    elif kind == "int":
        s = np.clip(np.round(z + 2), 0, 4)
    elif kind == "offset":
        s = 1e3 + z
    else:
        s = z
    return y, s.astype(float)


def make_pair(kind, seed):
    """A validation and a test cohort of the same kind, T shifted a little."""
    yv, sv = make_cohort(kind, seed)
    yt, st_ = make_cohort(kind, seed + 100, shift=0.4)
    return yv, sv, yt, st_


# -- references ---------------------------------------------------------------------------


def exact_auc(y, s):
    """AUC by counting pairs (ties one half), correctly rounded from the exact fraction."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    P, N = s[y == 1][:, None], s[y == 0][None, :]
    gt, eq = int((P > N).sum()), int((P == N).sum())
    return float(Fraction(2 * gt + eq, 2 * P.size * N.size))


def pair_differences(y, s):
    return (s[y == 1][:, None] - s[y == 0][None, :]).ravel()


def bias_by_pieces(y, s, sigma_max):
    """(1 / (A sigma_max)) * integral_0^sigma_max A(s - sigma [y=1]) dsigma, exactly.

    A(s_sigma) is constant between consecutive pairwise differences D > 0, so
    each piece is its width times roc_auc_score at its midpoint.
    """
    d = pair_differences(y, s)
    cuts = np.unique(np.concatenate([[0.0, sigma_max], d[(d > 0) & (d < sigma_max)]]))
    integral = 0.0
    for a, b in itertools.pairwise(cuts):
        integral += (b - a) * roc_auc_score(y, s - 0.5 * (a + b) * y)
    return integral / (roc_auc_score(y, s) * sigma_max)


def bias_by_grid(y, s, sigma_max, m):
    """The same integral by the midpoint rule on m cells, the AUC by pair counts of shifted scores.

    Each pair contributes a single step [sigma < D] to the integrand; the
    midpoint rule misplaces one step by at most h / 2, so the error of the
    mean over pairs is <= h / 2 and that of the score <= 1 / (2 m A).
    """
    sig = (np.arange(m) + 0.5) * (sigma_max / m)
    pos, neg = s[y == 1], s[y == 0]
    shifted = pos[None, :, None] - sig[:, None, None]
    curve = ((shifted > neg).sum(axis=(1, 2)) + 0.5 * (shifted == neg).sum(axis=(1, 2))) / (pos.size * neg.size)
    return curve.mean() / exact_auc(y, s)


def bias_by_clip(y, s, sigma_max):
    """E[clip(D, 0, sigma_max)] / (A sigma_max) over all pairs, O(n^2)."""
    return np.clip(pair_differences(y, s), 0.0, sigma_max).mean() / (exact_auc(y, s) * sigma_max)


def batch_auc(y, noisy):
    """Pair-count AUC of each row of ``noisy`` (rows x examples)."""
    P, N = noisy[:, y == 1][:, :, None], noisy[:, y == 0][:, None, :]
    return ((P > N).sum(axis=(1, 2)) + 0.5 * (P == N).sum(axis=(1, 2))) / (P.shape[1] * N.shape[2])


def noise_by_monte_carlo(y, s, sigma_max, n_points, n_repeats, seed):
    """Mean AUC of s + sigma * eps over n_repeats draws per sigma, trapezoid, / (A sigma_max)."""
    rng = np.random.default_rng(seed)
    sigmas = np.linspace(0.0, sigma_max, n_points)
    auc = exact_auc(y, s)
    means, stds = [auc], [0.0]
    for sig in sigmas[1:]:
        aucs = batch_auc(y, s[None, :] + sig * rng.standard_normal((n_repeats, len(s))))
        means.append(aucs.mean())
        stds.append(aucs.std())
    integral = sum((sigmas[k] - sigmas[k - 1]) * (means[k] + means[k - 1]) / 2 for k in range(1, n_points))
    return integral / (auc * sigma_max), np.array(means), np.array(stds)


def rates_at(y, s, tau):
    """Sensitivity P(s+ >= tau) and specificity P(s- < tau), by counting."""
    pos = [v for v, c in zip(s, y) if c == 1]
    neg = [v for v, c in zip(s, y) if c == 0]
    return sum(v >= tau for v in pos) / len(pos), sum(v < tau for v in neg) / len(neg)


def drift_by_loop(yv, sv, yt, st_):
    """D and the per-threshold curves by a loop over the merged distinct scores.

    On (u_{j-1}, u_j] no score lies strictly inside, so sens and spec there
    equal their value at u_j.
    """
    taus = sorted(set(sv.tolist()) | set(st_.tolist()))
    curves = {"sensitivity_val": [], "specificity_val": [], "sensitivity_test": [], "specificity_test": []}
    for tau in taus:
        se_v, sp_v = rates_at(yv, sv, tau)
        se_t, sp_t = rates_at(yt, st_, tau)
        for key, v in zip(curves, (se_v, sp_v, se_t, sp_t)):
            curves[key].append(v)
    total = 0.0
    for j in range(1, len(taus)):
        gap = (curves["sensitivity_val"][j] - curves["sensitivity_test"][j]) ** 2 + (
            curves["specificity_val"][j] - curves["specificity_test"][j]
        ) ** 2
        total += (taus[j] - taus[j - 1]) * gap
    return total / (taus[-1] - taus[0]), np.array(taus), {k: np.array(v) for k, v in curves.items()}


def drift_by_grid(yv, sv, yt, st_, m):
    """D by the midpoint rule on m cells of [lo, hi] (error <= 2 * jumps / m)."""
    lo, hi = min(sv.min(), st_.min()), max(sv.max(), st_.max())
    tau = lo + (np.arange(m) + 0.5) * ((hi - lo) / m)

    def rates(y, s):
        return (s[y == 1][None, :] >= tau[:, None]).mean(axis=1), (s[y == 0][None, :] < tau[:, None]).mean(axis=1)

    (a, b), (c, d) = rates(yv, sv), rates(yt, st_)
    return ((a - c) ** 2 + (b - d) ** 2).mean()


def wasserstein_by_quantiles(a, b, p):
    """p-Wasserstein of two samples from their quantile functions on exact rational breakpoints."""
    a, b = sorted(a), sorted(b)
    n, m = len(a), len(b)
    cuts = sorted({Fraction(i, n) for i in range(n + 1)} | {Fraction(j, m) for j in range(m + 1)})
    total = 0.0
    for lo, hi in itertools.pairwise(cuts):
        u = (lo + hi) / 2  # Q(u) = the ceil(u n)-th smallest value
        total += float(hi - lo) * abs(a[math.ceil(u * n) - 1] - b[math.ceil(u * m) - 1]) ** p
    return total ** (1.0 / p)


def wasserstein_by_grid(a, b, p, m=200_000):
    """The same on a fine midpoint grid of u, with numpy's inverted-CDF quantiles."""
    u = (np.arange(m) + 0.5) / m
    qa = np.quantile(a, u, method="inverted_cdf")
    qb = np.quantile(b, u, method="inverted_cdf")
    return np.mean(np.abs(qa - qb) ** p) ** (1.0 / p)


def class_samples(yv, sv, yt, st_):
    """V-, V+, T-, T+."""
    return sv[yv == 0], sv[yv == 1], st_[yt == 0], st_[yt == 1]


def quiet(func, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return func(*args, **kw)


# -- 1. bias robustness -------------------------------------------------------------------


@pytest.mark.parametrize("factor", [None, 0.3, 2.0])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", KINDS)
def test_bias_matches_integral_of_pairwise_aucs(kind, seed, factor):
    y, s = make_cohort(kind, seed)
    rng = s.max() - s.min()
    sigma_max = rng if factor is None else factor * rng
    r = bias_robustness(y, s, sigma_max=None if factor is None else sigma_max)
    assert r.sigma_max == sigma_max
    assert r.auc == exact_auc(y, s)
    assert np.isclose(r.score, bias_by_pieces(y, s, sigma_max), rtol=1e-10, atol=0)
    assert np.isclose(r.score, bias_by_clip(y, s, sigma_max), rtol=1e-12, atol=0)
    # refining the midpoint grid converges to it, within the bound 1 / (2 m A) at every m
    for m in (250, 1000, 4000):
        assert abs(bias_by_grid(y, s, sigma_max, m) - r.score) <= 1 / (2 * m * r.auc) + 1e-12, m
    assert abs(bias_by_grid(y, s, sigma_max, 4000) - r.score) < 1e-3


def test_bias_docstring_example_by_hand():
    # pairs (s+ - s-): 2-0, 2-1, 3-0, 3-1 = 2, 1, 3, 2; clip to [0, 3]: mean 2; / (1 * 3)
    r = bias_robustness([0, 0, 1, 1], [0.0, 1.0, 2.0, 3.0])
    assert (r.auc, r.sigma_max, r.score) == (1.0, 3.0, 2.0 / 3.0)


@pytest.mark.parametrize("n_points", [2, 5, 21])
@pytest.mark.parametrize("sigma_max", [None, 0.5, 4.0])
@pytest.mark.parametrize("kind", KINDS)
def test_bias_curve_is_the_auc_of_shifted_scores(kind, sigma_max, n_points):
    y, s = make_cohort(kind, 3)
    r = bias_robustness(y, s, sigma_max=sigma_max, n_points=n_points)
    expected_max = s.max() - s.min() if sigma_max is None else sigma_max
    assert r.sigma_max == expected_max
    np.testing.assert_array_equal(r.sigmas, np.linspace(0.0, expected_max, n_points))
    assert len(r.auc_curve) == n_points and r.auc_curve[0] == r.auc
    # against exact rational arithmetic: point k shifts the positives by k / (n_points - 1) * sigma_max
    # (by default the exact score range, of which sigma_max is the float)
    d = [Fraction(a) - Fraction(b) for a in s[y == 1] for b in s[y == 0]]
    n_pairs = len(d)
    span = Fraction(s.max()) - Fraction(s.min()) if sigma_max is None else Fraction(sigma_max)
    for k, a in enumerate(r.auc_curve):
        sig = Fraction(k, n_points - 1) * span
        gt, eq = sum(v > sig for v in d), sum(v == sig for v in d)
        exact = float(Fraction(2 * gt + eq, 2 * n_pairs))
        # a pair whose difference is (within rounding of) the shift may be decided by rounding: at most
        # those move the AUC; a shift of the whole score range ties the top positive with the bottom
        # negative exactly, and is decided exactly (so at any scale)
        near = sum(abs(v - sig) <= Fraction(1, 10**12) * Fraction(expected_max) for v in d)
        if near == 0 or (sigma_max is None and k == n_points - 1):
            assert a == exact, k
        else:
            assert abs(a - exact) <= near / n_pairs + 1e-15, k
    np.testing.assert_array_equal(r.relative_curve, r.auc_curve / r.auc)
    # shifting the positives down never raises the AUC
    assert np.all(np.diff(r.auc_curve) <= 0)


def test_bias_score_is_one_when_auc_never_drops():
    # positives sit above every negative by at least sigma_max: A(s_sigma) = 1 throughout
    y = np.array([0, 0, 0, 1, 1])
    s = np.array([0.0, 0.5, 1.0, 5.0, 6.0])
    assert bias_robustness(y, s, sigma_max=4.0).score == 1.0
    assert bias_robustness(y, s, sigma_max=4.5).score < 1.0


def test_bias_explicit_sigma_max_on_constant_scores_is_zero():
    # all pairs tied: A = 1/2 at sigma = 0 only, 0 for every sigma > 0
    r = bias_robustness([0, 1, 0, 1], [2.0] * 4, sigma_max=1.0)
    assert r.auc == 0.5 and r.score == 0.0
    np.testing.assert_array_equal(r.auc_curve[1:], 0.0)


# -- 2. noise robustness ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["normal", "tied", "int"])
def test_noise_same_seed_same_result_other_seed_close(kind):
    y, s = make_cohort(kind, 4)
    a = noise_robustness(y, s, noise_method="monte_carlo", n_repeats=30, random_state=5)
    b = noise_robustness(y, s, noise_method="monte_carlo", n_repeats=30, random_state=5)
    assert a.score == b.score
    np.testing.assert_array_equal(a.auc_curve, b.auc_curve)
    np.testing.assert_array_equal(a.auc_std, b.auc_std)
    c = noise_robustness(y, s, noise_method="monte_carlo", n_repeats=30, random_state=6)
    assert not np.array_equal(a.auc_curve, c.auc_curve)
    assert a.score != c.score and abs(a.score - c.score) < 0.05
    assert (a.n_repeats, a.random_state, c.random_state) == (30, 5, 6)


def test_noise_random_state_none_runs_unseeded():
    y, s = make_cohort("normal", 4)
    r = noise_robustness(y, s, noise_method="monte_carlo", n_repeats=3, random_state=None)
    assert r.random_state is None and 0 < r.score < 1.5


@pytest.mark.parametrize("sigma_max", [None, 1.0])
@pytest.mark.parametrize("kind", ["normal", "int", "skewed"])
def test_noise_converges_to_monte_carlo_reference(kind, sigma_max):
    y, s = make_cohort(kind, 5, n=12)
    sm = s.max() - s.min() if sigma_max is None else sigma_max
    truth, truth_curve, truth_std = noise_by_monte_carlo(y, s, sm, 11, 20_000, seed=123)
    r = noise_robustness(
        y, s, noise_method="monte_carlo", sigma_max=sigma_max, n_points=11, n_repeats=1000, random_state=0
    )
    assert r.sigma_max == sm
    np.testing.assert_array_equal(r.sigmas, np.linspace(0.0, sm, 11))
    assert abs(r.score - truth) < 0.01
    np.testing.assert_allclose(r.auc_curve, truth_curve, atol=0.02, rtol=0)
    np.testing.assert_allclose(r.auc_std, truth_std, atol=0.02, rtol=0.15)
    # far fewer repeats: still an estimate of the same number, only noisier
    assert (
        abs(
            noise_robustness(y, s, noise_method="monte_carlo", sigma_max=sigma_max, n_points=11, n_repeats=20).score
            - truth
        )
        < 0.05
    )


@pytest.mark.parametrize("n_repeats", [1, 7])
@pytest.mark.parametrize("kind", KINDS)
def test_noise_score_is_the_trapezoid_of_its_curve(kind, n_repeats):
    y, s = make_cohort(kind, 6)
    r = noise_robustness(y, s, noise_method="monte_carlo", n_points=9, n_repeats=n_repeats, random_state=2)
    assert r.auc == exact_auc(y, s)
    assert r.auc_curve[0] == r.auc and r.auc_std[0] == 0.0
    integral = sum((r.sigmas[k] - r.sigmas[k - 1]) * (r.auc_curve[k] + r.auc_curve[k - 1]) / 2 for k in range(1, 9))
    assert np.isclose(r.score, integral / (r.auc * r.sigma_max), rtol=1e-12, atol=0)
    np.testing.assert_allclose(r.relative_curve, r.auc_curve / r.auc, rtol=1e-15)
    assert np.all((r.auc_curve >= 0) & (r.auc_curve <= 1)) and np.all(r.auc_std >= 0)
    if n_repeats == 1:
        np.testing.assert_array_equal(r.auc_std, 0.0)
    # each mean over n_repeats AUCs of pairs is a multiple of 1 / (2 n+ n- n_repeats)
    grain = 2 * int(y.sum()) * int((1 - y).sum()) * n_repeats
    np.testing.assert_allclose(r.auc_curve * grain, np.round(r.auc_curve * grain), atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_noise_score_at_most_one_for_separated_data(seed):
    rng = np.random.default_rng(seed)
    y = np.resize([0, 1], 16)
    s = rng.normal(size=16) * 0.1 + 5 * y
    r = noise_robustness(y, s, n_repeats=10, random_state=seed)
    assert r.auc == 1.0 and 0 < r.score <= 1.0
    assert np.all(r.auc_curve <= 1.0)


# -- 3. sensitivity/specificity drift ------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", KINDS)
def test_drift_matches_threshold_loop_and_grid(kind, seed):
    yv, sv, yt, st_ = make_pair(kind, seed)
    d = sens_spec_drift(yv, sv, yt, st_)
    score, taus, curves = drift_by_loop(yv, sv, yt, st_)
    assert np.isclose(d.score, score, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(d.thresholds, taus)
    for key, ref in curves.items():
        np.testing.assert_allclose(getattr(d, key), ref, rtol=0, atol=1e-15, err_msg=key)
    m = 100_000
    assert abs(d.score - drift_by_grid(yv, sv, yt, st_, m)) <= 2 * (len(taus) - 1) / m
    np.testing.assert_allclose(d.sensitivity_drift, curves["sensitivity_test"] - curves["sensitivity_val"], atol=1e-15)
    np.testing.assert_allclose(d.specificity_drift, curves["specificity_test"] - curves["specificity_val"], atol=1e-15)
    np.testing.assert_allclose(d.distance, np.hypot(d.sensitivity_drift, d.specificity_drift), rtol=1e-15)
    assert 0 <= d.score <= 2


def test_drift_by_hand():
    # V: neg 0, pos 1; T: neg 1, pos 2.  On (0, 1] spec differs by 1; on (1, 2] sens differs by 1.
    d = sens_spec_drift([0, 1], [0.0, 1.0], [0, 1], [1.0, 2.0])
    assert d.thresholds.tolist() == [0.0, 1.0, 2.0] and d.score == 1.0
    assert d.sensitivity_val.tolist() == [1.0, 1.0, 0.0] and d.sensitivity_test.tolist() == [1.0, 1.0, 1.0]
    assert d.specificity_val.tolist() == [0.0, 1.0, 1.0] and d.specificity_test.tolist() == [0.0, 0.0, 1.0]
    # the largest possible value: sens and spec both differ by 1 over the whole range
    assert sens_spec_drift([0, 1], [5.0, 5.0], [0, 1], [-3.0, -3.0]).score == 2.0


@pytest.mark.parametrize("kind", KINDS)
def test_drift_depends_on_distributions_not_sample_sizes(kind):
    # unlike testAUC's mean over the validation ROC thresholds, D integrates over
    # the score axis: replicating examples (same distributions) changes nothing
    yv, sv, yt, st_ = make_pair(kind, 7)
    d = sens_spec_drift(yv, sv, yt, st_)
    d2 = sens_spec_drift(np.tile(yv, 2), np.tile(sv, 2), np.tile(yt, 3), np.tile(st_, 3))
    assert np.isclose(d.score, d2.score, rtol=1e-12, atol=1e-15)
    # and it is 0 exactly when the cohorts agree
    assert sens_spec_drift(yv, sv, np.tile(yv, 2), np.tile(sv, 2)).score == 0.0


# -- 4. Wasserstein ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", KINDS)
def test_wasserstein_p1_matches_scipy(kind, seed):
    yv, sv, yt, st_ = make_pair(kind, seed)
    w = wasserstein_matrix(yv, sv, yt, st_, p=1)
    vn, vp, tn, tp = class_samples(yv, sv, yt, st_)
    expected = np.array(
        [
            [wasserstein_distance(vn, vp), wasserstein_distance(vn, tn)],
            [wasserstein_distance(tp, vp), wasserstein_distance(tp, tn)],
        ]
    )
    np.testing.assert_allclose(w.matrix, expected, rtol=1e-12, atol=1e-12)
    assert w.p == 1 and w.note == ""


@pytest.mark.parametrize("p", [1, 1.5, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", KINDS)
def test_wasserstein_matches_quantile_functions(kind, seed, p):
    yv, sv, yt, st_ = make_pair(kind, seed)
    w = wasserstein_matrix(yv, sv, yt, st_, p=p)
    vn, vp, tn, tp = class_samples(yv, sv, yt, st_)
    pairs = [[(vn, vp), (vn, tn)], [(tp, vp), (tp, tn)]]
    for i in range(2):
        for j in range(2):
            a, b = pairs[i][j]
            assert np.isclose(w.matrix[i, j], wasserstein_by_quantiles(a, b, p), rtol=1e-12, atol=1e-12), (i, j)
    # layout and summary
    assert w.val_separation == w.matrix[0, 0] and w.negative_shift == w.matrix[0, 1]
    assert w.positive_shift == w.matrix[1, 0] and w.test_separation == w.matrix[1, 1]
    assert np.isclose(w.score, (w.matrix[0, 0] + w.matrix[1, 1]) / (w.matrix[0, 1] + w.matrix[1, 0]), rtol=1e-15)
    frame = w.to_frame()
    assert frame.index.tolist() == ["V-", "T+"] and frame.columns.tolist() == ["V+", "T-"]
    np.testing.assert_array_equal(frame.to_numpy(), w.matrix)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("kind", KINDS)
def test_wasserstein_agrees_with_numpy_quantiles_on_a_grid(kind, p):
    # numpy's inverted-CDF quantiles on a fine u grid: grid error only
    yv, sv, yt, st_ = make_pair(kind, 0)
    w = wasserstein_matrix(yv, sv, yt, st_, p=p)
    vn, vp, tn, tp = class_samples(yv, sv, yt, st_)
    expected = [
        [wasserstein_by_grid(vn, vp, p), wasserstein_by_grid(vn, tn, p)],
        [wasserstein_by_grid(tp, vp, p), wasserstein_by_grid(tp, tn, p)],
    ]
    np.testing.assert_allclose(w.matrix, expected, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("seed", SEEDS)
def test_wasserstein_p2_equal_sizes_is_rms_of_sorted_differences(seed):
    rng = np.random.default_rng(seed)
    yv = np.resize([0, 1], 12)
    yt = np.resize([0, 1], 12)
    sv, st_ = rng.normal(size=12) + yv, rng.normal(size=12) + 0.5 * yt
    w = wasserstein_matrix(yv, sv, yt, st_)  # p = 2 by default
    vn, vp, tn, tp = class_samples(yv, sv, yt, st_)

    def rms(a, b):
        return np.sqrt(np.mean((np.sort(a) - np.sort(b)) ** 2))

    expected = np.array([[rms(vn, vp), rms(vn, tn)], [rms(tp, vp), rms(tp, tn)]])
    np.testing.assert_allclose(w.matrix, expected, rtol=1e-12)
    assert w.p == 2


def test_wasserstein_docstring_example_by_hand():
    w = wasserstein_matrix([0, 1], [0.0, 1.0], [0, 1], [0.5, 1.5], p=1)
    assert w.matrix.tolist() == [[1.0, 0.5], [0.5, 1.0]] and w.score == 2.0


@pytest.mark.parametrize("replicate", [1, 2, 3])
def test_wasserstein_identical_cohorts_is_inf_with_note(replicate):
    yv, sv = make_cohort("tied", 8)
    yt, st_ = np.tile(yv, replicate), np.tile(sv, replicate)  # same distributions, maybe other sizes
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        w = wasserstein_matrix(yv, sv, yt, st_)
    assert w.matrix[0, 1] == 0.0 and w.matrix[1, 0] == 0.0 and w.matrix[0, 0] > 0
    assert w.score == np.inf and w.note != ""


def test_wasserstein_all_four_identical_is_nan_and_warns():
    y, s = [0, 1, 0, 1], [1.0, 1.0, 2.0, 2.0]  # V- = V+ = T- = T+ = {1, 2}
    with pytest.warns(UndefinedMetricWarning):
        w = wasserstein_matrix(y, s, y, s)
    assert np.isnan(w.score) and w.note != ""
    np.testing.assert_array_equal(w.matrix, 0.0)


# -- 5. invariances ------------------------------------------------------------------------


def run_all(yv, sv, yt, st_, **kw):
    """Scores of all four diagnostics (robustness on V)."""
    return {
        "bias": bias_robustness(yv, sv, **kw).score,
        "noise": noise_robustness(yv, sv, n_repeats=5, random_state=3, **kw).score,
        "drift": sens_spec_drift(yv, sv, yt, st_, **kw).score,
        "wasserstein": wasserstein_matrix(yv, sv, yt, st_, **kw).score,
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", KINDS)
def test_permuting_examples_changes_nothing(kind, seed):
    yv, sv, yt, st_ = make_pair(kind, seed)
    rng = np.random.default_rng(seed + 50)
    pv, pt = rng.permutation(len(yv)), rng.permutation(len(yt))
    assert run_all(yv, sv, yt, st_) == run_all(yv[pv], sv[pv], yt[pt], st_[pt])
    a = noise_robustness(yv, sv, n_repeats=5, random_state=3)
    b = noise_robustness(yv[pv], sv[pv], n_repeats=5, random_state=3)
    np.testing.assert_array_equal(a.auc_curve, b.auc_curve)
    np.testing.assert_array_equal(
        wasserstein_matrix(yv, sv, yt, st_).matrix, wasserstein_matrix(yv[pv], sv[pv], yt[pt], st_[pt]).matrix
    )


@pytest.mark.parametrize("k, c", [(2.5, -7.0), (1.0, 1e3), (0.01, 3.0), (40.0, -1e3)])
@pytest.mark.parametrize("kind", KINDS)
def test_positive_affine_map_changes_nothing(kind, k, c):
    yv, sv, yt, st_ = make_pair(kind, 9)
    before = run_all(yv, sv, yt, st_)
    after = run_all(yv, k * sv + c, yt, k * st_ + c)
    for name in before:
        assert np.isclose(after[name], before[name], rtol=1e-9, atol=0), name
    # every Wasserstein entry scales by k
    np.testing.assert_allclose(
        wasserstein_matrix(yv, k * sv + c, yt, k * st_ + c).matrix,
        k * wasserstein_matrix(yv, sv, yt, st_).matrix,
        rtol=1e-9,
        atol=1e-9 * k,
    )
    # bias robustness with an explicit sigma_max scales with it
    assert np.isclose(
        bias_robustness(yv, k * sv + c, sigma_max=0.7 * k).score,
        bias_robustness(yv, sv, sigma_max=0.7).score,
        rtol=1e-9,
    )


@pytest.mark.parametrize(
    "transform",
    [np.exp, lambda x: x**3, np.arctan, lambda x: -1.0 / (x + 10)],
    ids=["exp", "cube", "arctan", "neg_reciprocal"],
)
@pytest.mark.parametrize("kind", ["normal", "tied", "int", "skewed"])
def test_auc_and_rates_invariant_under_increasing_transform(kind, transform):
    yv, sv, yt, st_ = make_pair(kind, 10)
    tv, tt = transform(sv), transform(st_)
    assert len(np.unique(tv)) == len(np.unique(sv))  # strictly increasing on these values
    assert bias_robustness(yv, tv).auc == bias_robustness(yv, sv).auc == exact_auc(yv, sv)
    assert noise_robustness(yv, tv, n_repeats=2).auc == exact_auc(yv, sv)
    assert noise_robustness(yv, tv, n_repeats=2).auc_curve[0] == exact_auc(yv, sv)
    # sensitivity and specificity at corresponding thresholds are unchanged (D itself is not)
    a, b = sens_spec_drift(yv, sv, yt, st_), sens_spec_drift(yv, tv, yt, tt)
    for key in ("sensitivity_val", "specificity_val", "sensitivity_test", "specificity_test"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))


LABEL_FORMS = {
    "strings": (lambda y: np.where(y == 1, "yes", "no"), {"pos_label": "yes"}),
    "minus_one": (lambda y: 2 * y - 1, {}),
    "booleans": (lambda y: y.astype(bool), {}),
    "floats": (lambda y: y.astype(float), {}),
    "pos_label_zero": (lambda y: 1 - y, {"pos_label": 0}),
    "pos_label_minus_one": (lambda y: 1 - 2 * y, {"pos_label": -1}),
    "objects": (lambda y: np.array(["b" if v else "a" for v in y], dtype=object), {"pos_label": "b"}),
}


@pytest.mark.parametrize("form", list(LABEL_FORMS))
@pytest.mark.parametrize("kind", ["normal", "tied"])
def test_label_forms_give_same_numbers(kind, form):
    yv, sv, yt, st_ = make_pair(kind, 11)
    convert, kw = LABEL_FORMS[form]
    assert run_all(convert(yv), sv, convert(yt), st_, **kw) == run_all(yv, sv, yt, st_)
    # lists work too
    assert bias_robustness(list(convert(yv)), list(sv), **kw).score == bias_robustness(yv, sv).score


# -- 6. bad input --------------------------------------------------------------------------

ONE_COHORT = (bias_robustness, noise_robustness)
ONE = [pytest.param(f, id=f.__name__) for f in ONE_COHORT]
TWO = [pytest.param(f, id=f.__name__) for f in (sens_spec_drift, wasserstein_matrix)]
Y, S = np.array([0, 1, 0, 1, 1]), np.array([0.1, 0.7, 0.3, 0.9, 0.4])


@pytest.mark.parametrize("func", ONE)
def test_single_class_warns_and_is_nan(func):
    with pytest.warns(UndefinedMetricWarning, match="single class"):
        r = func([1, 1, 1], [0.1, 0.5, 0.9])
    assert np.isnan(r.score)


@pytest.mark.parametrize("which", ["val", "test"])
@pytest.mark.parametrize("func", TWO)
def test_two_cohorts_single_class_warns_and_is_nan(func, which):
    args = [Y, S, np.zeros(3, dtype=int), np.array([0.2, 0.4, 0.6])]
    if which == "val":
        args = args[2:] + args[:2]
    with pytest.warns(UndefinedMetricWarning, match="single class"):
        r = func(*args)
    assert np.isnan(r.score)


@pytest.mark.parametrize("func", ONE)
def test_zero_auc_nan_score_warns(func):
    # every positive below every negative (a loss, a distance): A = 0 and the
    # score divides by A; a NaN score must come with the warning like every
    # other undefined case
    with pytest.warns(UndefinedMetricWarning):
        r = func([1, 1, 0, 0], [0.0, 1.0, 2.0, 3.0])
    assert r.auc == 0.0 and np.isnan(r.score)
    # A > 0 but tiny stays finite
    assert np.isfinite(func([1, 1, 0, 0], [0.0, 2.5, 2.0, 3.0]).score)


@pytest.mark.parametrize("func", ONE)
def test_constant_scores_warn_and_are_nan(func):
    with pytest.warns(UndefinedMetricWarning, match="constant"):
        r = func([0, 1, 0, 1], [0.3] * 4)
    assert np.isnan(r.score) and np.isnan(r.sigma_max) and r.auc == 0.5


@pytest.mark.parametrize("func", TWO)
def test_two_cohorts_constant_scores_warn_and_are_nan(func):
    with pytest.warns(UndefinedMetricWarning):
        r = func([0, 1, 0, 1], [0.3] * 4, [1, 0], [0.3, 0.3])
    assert np.isnan(r.score)


@pytest.mark.parametrize("func", ONE)
def test_empty_cohort_one(func):
    with pytest.raises(ValueError, match="`y_score` is empty"):
        func([], [])


@pytest.mark.parametrize("which", ["s_val", "s_test"])
@pytest.mark.parametrize("func", TWO)
def test_empty_cohort_two(func, which):
    args = [Y, S, Y, S]
    if which == "s_val":
        args[:2] = [[], []]
    else:
        args[2:] = [[], []]
    with pytest.raises(ValueError, match=f"`{which}` is empty"):
        func(*args)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("func", ONE)
def test_nonfinite_scores_one(func, bad):
    s = S.copy()
    s[3] = bad
    with pytest.raises(ValueError, match=r"`y_score` must be finite.*position 3"):
        func(Y, s)


@pytest.mark.parametrize("which", ["s_val", "s_test"])
@pytest.mark.parametrize("func", TWO)
def test_nonfinite_scores_two(func, which):
    s = S.copy()
    s[2] = np.nan
    args = [Y, s, Y, S] if which == "s_val" else [Y, S, Y, s]
    with pytest.raises(ValueError, match=rf"`{which}` must be finite.*position 2"):
        func(*args)


@pytest.mark.parametrize("func", ONE)
def test_length_mismatch_one(func):
    with pytest.raises(ValueError, match=r"`y_true` and `y_score` must have the same length, got 5 and 4"):
        func(Y, S[:4])


@pytest.mark.parametrize("which", ["val", "test"])
@pytest.mark.parametrize("func", TWO)
def test_length_mismatch_two(func, which):
    args = [Y, S[:4], Y, S] if which == "val" else [Y, S, Y[:3], S]
    with pytest.raises(ValueError, match=f"`y_{which}` and `s_{which}` must have the same length"):
        func(*args)


@pytest.mark.parametrize("sigma_max", [0, 0.0, -1.0, np.nan, np.inf, True, "1"])
@pytest.mark.parametrize("func", ONE)
def test_bad_sigma_max(func, sigma_max):
    with pytest.raises(ValueError, match="`sigma_max`"):
        func(Y, S, sigma_max=sigma_max)


@pytest.mark.parametrize("n_points", [1, 0, -3, 2.5, True, "21"])
@pytest.mark.parametrize("func", ONE)
def test_bad_n_points(func, n_points):
    with pytest.raises(ValueError, match="`n_points`"):
        func(Y, S, n_points=n_points)


@pytest.mark.parametrize("n_repeats", [0, -1, 1.5, True])
def test_bad_n_repeats(n_repeats):
    with pytest.raises(ValueError, match="`n_repeats`"):
        noise_robustness(Y, S, n_repeats=n_repeats)


@pytest.mark.parametrize("random_state", [np.random.RandomState(0), np.random.default_rng(0), -1, 1.5, "0"])
def test_bad_random_state(random_state):
    with pytest.raises(ValueError, match="`random_state`"):
        noise_robustness(Y, S, random_state=random_state)


@pytest.mark.parametrize("p", [0.5, 0, -2, np.nan, np.inf, True, "2"])
def test_bad_p(p):
    with pytest.raises(ValueError, match="`p`"):
        wasserstein_matrix(Y, S, Y, S, p=p)


def test_string_labels_need_pos_label():
    yes_no = np.array(["no", "yes", "no", "yes", "yes"])
    with pytest.raises(ValueError, match="`y_true`.*pos_label"):
        bias_robustness(yes_no, S)
    with pytest.raises(ValueError, match="`y_true`.*pos_label"):
        noise_robustness(yes_no, S)
    with pytest.raises(ValueError, match="`y_val`.*pos_label"):
        sens_spec_drift(yes_no, S, Y, S)
    with pytest.raises(ValueError, match="`y_test`.*pos_label"):
        wasserstein_matrix(Y, S, yes_no, S)


@pytest.mark.parametrize("func", ONE + TWO)
def test_pos_label_not_among_labels(func):
    yes_no = np.array(["no", "yes", "no", "yes", "yes"])
    args = (yes_no, S) if func in ONE_COHORT else (yes_no, S, yes_no, S)
    with pytest.raises(ValueError, match=re.escape("`pos_label`='maybe' is not one of the labels")):
        func(*args, pos_label="maybe")


@pytest.mark.parametrize("func", ONE)
def test_more_than_two_classes(func):
    with pytest.raises(ValueError, match="`y_true` must be binary, got 3 classes"):
        func([0, 1, 2, 1, 0], S)


@pytest.mark.parametrize("func", ONE)
def test_two_dimensional_scores(func):
    with pytest.raises(ValueError, match=r"`y_score` must be 1-D"):
        func(Y, np.ones((5, 2)))


# -- 7. properties -------------------------------------------------------------------------

VALUES = st.one_of(
    st.integers(-3, 3).map(float),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False),
)


@st.composite
def cohort(draw, min_size=2, max_size=14):
    """Labels with both classes and finite scores (ties likely)."""
    n = draw(st.integers(min_size, max_size))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    y[0], y[1] = 0, 1
    s = np.array(draw(st.lists(VALUES, min_size=n, max_size=n)), dtype=float)
    return y, s


PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(cohort(), st.one_of(st.none(), st.floats(0.05, 3.0)))
def test_property_bias_equals_clip_formula(data, factor):
    y, s = data
    rng = s.max() - s.min()
    if rng == 0:
        return
    sigma_max = rng if factor is None else factor * rng
    if exact_auc(y, s) == 0:
        return  # 0 / 0, see test_zero_auc_nan_score_warns
    r = bias_robustness(y, s, sigma_max=None if factor is None else sigma_max)
    ref = bias_by_clip(y, s, sigma_max)
    # the package sums over sorted cumulative sums: rounding is relative to the
    # score magnitude (|s - min s|), not to the clipped differences
    scale = np.abs(s - s.min()).max() / (r.auc * sigma_max)
    assert abs(r.score - ref) <= 1e-12 * abs(ref) + 1e-13 * len(s) * scale
    assert -1e-12 <= r.score <= 1 + 1e-12


@PROPERTY
@given(cohort(), cohort())
def test_property_drift_bounded_and_zero_on_identical_cohorts(v, t):
    (yv, sv), (yt, st_) = v, t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        d = sens_spec_drift(yv, sv, yt, st_)
        same = sens_spec_drift(yv, sv, yv[::-1], sv[::-1])
    if len(d.thresholds) < 2:
        assert np.isnan(d.score)
        return
    assert 0 <= d.score <= 2
    assert np.all(d.distance <= np.sqrt(2) + 1e-15)
    assert np.isnan(same.score) if len(np.unique(sv)) < 2 else same.score == 0.0
    # swapping the cohorts changes nothing
    assert sens_spec_drift(yt, st_, yv, sv).score == d.score


@PROPERTY
@given(cohort(), cohort(), st.sampled_from([1, 2, 3]))
def test_property_wasserstein_symmetries(v, t, p):
    (yv, sv), (yt, st_) = v, t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        w = wasserstein_matrix(yv, sv, yt, st_, p=p)
        swapped = wasserstein_matrix(yt, st_, yv, sv, p=p)  # V <-> T
        flipped = wasserstein_matrix(1 - yv, sv, 1 - yt, st_, p=p)  # classes swapped
    m = w.matrix
    assert np.all(m >= 0)
    np.testing.assert_allclose(swapped.matrix, [[m[1, 1], m[0, 1]], [m[1, 0], m[0, 0]]], rtol=1e-12, atol=0)
    np.testing.assert_allclose(flipped.matrix, m.T, rtol=1e-12, atol=0)
    np.testing.assert_equal(np.array([swapped.score, flipped.score]), np.array([w.score, w.score]))
    # a metric: V- to V+ is at most V- to T- to T+ to V+
    scale = max(np.abs(sv).max(), np.abs(st_).max())
    assert m[0, 0] <= m[0, 1] + m[1, 1] + m[1, 0] + 1e-12 * scale
    if p == 1:
        _, vp, _, tp = class_samples(yv, sv, yt, st_)
        assert np.isclose(m[1, 0], wasserstein_distance(tp, vp), rtol=1e-9, atol=1e-12 * scale)


# -- 8. benchmark level ------------------------------------------------------------------------

DOMAINS = {"a": "x", "b": "x", "c": "y", "d": "z"}


def small_frame():
    """Four datasets (domains x, x, y, z) with a split column; m1 unique per row."""
    rng = np.random.default_rng(12)
    parts = []
    for d, n in [("a", 30), ("b", 25), ("c", 20), ("d", 11)]:
        y = np.resize([0, 1], n)
        rng.shuffle(y)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "split": np.where(np.arange(n) % 3 == 0, "test", "val"),
                    "m1": rng.normal(size=n) + y,
                    "m2": np.round(rng.normal(size=n) + 0.5 * y, 1),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def small_bench(split=True):
    df = small_frame()
    return load_benchmark(df if split else df.drop(columns="split"), domains=DOMAINS)


def rows_of(df, mask, model):
    return df.loc[mask, "label"].to_numpy(), df.loc[mask, model].to_numpy()


def assert_cohorts(got, expected):
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("model", ["m1", "m2"])
@pytest.mark.parametrize("dataset", ["a", "b", "c", "d"])
def test_cohorts_from_split_column(dataset, model):
    df = small_frame()
    bench = small_bench()
    got = cohorts(bench, model, dataset)
    in_d = df["dataset"] == dataset
    expected = (*rows_of(df, in_d & (df["split"] == "val"), model), *rows_of(df, in_d & (df["split"] == "test"), model))
    assert_cohorts(got, expected)
    assert_cohorts(cohorts(bench, model, dataset, protocol="split"), expected)
    # the roles can be swapped
    assert_cohorts(cohorts(bench, model, dataset, val_split="test", test_split="val"), expected[2:] + expected[:2])


@pytest.mark.parametrize("dataset", ["a", "c", "d"])
def test_cohorts_xdomain_outdata_outdomain_indomain(dataset):
    df = small_frame()
    bench = small_bench()
    in_d = df["dataset"] == dataset
    dom = df["dataset"].map(DOMAINS)
    cases = {
        "xdomain": (~in_d, in_d),
        "outdata": (in_d, ~in_d),
        "outdomain": (dom != DOMAINS[dataset], in_d),
    }
    if dataset == "a":  # the only dataset with a same-domain neighbour among these
        cases["indomain"] = ((dom == "x") & ~in_d, in_d)
    for protocol, (v, t) in cases.items():
        assert_cohorts(cohorts(bench, "m1", dataset, protocol=protocol), (*rows_of(df, v, "m1"), *rows_of(df, t, "m1")))
    # without a split column the default is xdomain
    plain = small_bench(split=False)
    assert_cohorts(cohorts(plain, "m1", dataset), (*rows_of(df, ~in_d, "m1"), *rows_of(df, in_d, "m1")))


@pytest.mark.parametrize("random_state", [0, 3])
@pytest.mark.parametrize("dataset", ["a", "b", "c", "d"])
def test_cohorts_indata_is_an_80_20_partition(dataset, random_state):
    df = small_frame()
    bench = small_bench()
    yv, sv, yt, st_ = cohorts(bench, "m1", dataset, protocol="indata", random_state=random_state)
    y, s = rows_of(df, df["dataset"] == dataset, "m1")
    n = len(s)
    assert len(st_) == math.ceil(0.2 * n) and len(sv) == n - len(st_)
    np.testing.assert_array_equal(np.sort(np.concatenate([sv, st_])), np.sort(s))  # m1 is unique per row
    label_of = dict(zip(s, y))
    assert [label_of[v] for v in sv] == yv.tolist() and [label_of[v] for v in st_] == yt.tolist()
    # the first split of ShuffleSplit(test_size=0.2) with this seed, as expected_accuracy uses
    _, test = next(ShuffleSplit(n_splits=1, test_size=0.2, random_state=random_state).split(np.zeros((n, 1))))
    assert set(st_) == set(s[test])
    again = cohorts(bench, "m1", dataset, protocol="indata", random_state=random_state)
    assert_cohorts(again, (yv, sv, yt, st_))


def test_cohorts_indata_other_seed_other_split():
    bench = small_bench()
    a = cohorts(bench, "m1", "a", protocol="indata", random_state=0)[3]
    b = cohorts(bench, "m1", "a", protocol="indata", random_state=1)[3]
    assert set(a) != set(b)


def test_cohorts_indomain_falls_back_to_indata():
    bench = small_bench()  # "c" is alone in domain y
    assert_cohorts(cohorts(bench, "m1", "c", protocol="indomain"), cohorts(bench, "m1", "c", protocol="indata"))


@pytest.mark.parametrize("name, value", [("val_split", "train"), ("test_split", "holdout")])
def test_cohorts_unknown_split_value(name, value):
    with pytest.raises(ValueError, match=f"`{name}`='{value}' names no rows of dataset 'a'"):
        cohorts(small_bench(), "m1", "a", **{name: value})


def test_cohorts_bad_arguments():
    bench = small_bench()
    with pytest.raises(ValueError, match="`protocol`"):
        cohorts(bench, "m1", "a", protocol="crossdomain")
    with pytest.raises(ValueError, match="`protocol`='split'"):
        cohorts(small_bench(split=False), "m1", "a", protocol="split")
    with pytest.raises(ValueError, match="`model`"):
        cohorts(bench, "m9", "a")
    with pytest.raises(ValueError, match="`dataset`"):
        cohorts(bench, "m1", "zz")
    with pytest.raises(ValueError, match="`random_state`"):
        cohorts(bench, "m1", "a", protocol="indata", random_state=np.random.RandomState(0))


def test_cohorts_on_demo():
    bench = load_demo()
    frame = bench.frame
    in_wine = frame["dataset"] == "wine"
    yv, sv, yt, st_ = cohorts(bench, "logreg", "wine")
    np.testing.assert_array_equal(sv, frame.loc[in_wine & (frame["split"] == "val"), "logreg"].to_numpy())
    np.testing.assert_array_equal(st_, frame.loc[in_wine & (frame["split"] == "test"), "logreg"].to_numpy())
    np.testing.assert_array_equal(yt, frame.loc[in_wine & (frame["split"] == "test"), "label"].to_numpy())
    assert (len(yv), len(yt)) == (59, 48) and yv.dtype == np.int8
    yv, sv, yt, st_ = cohorts(bench, "logreg", "wine", protocol="xdomain")
    assert len(yt) == 107 and len(yv) == len(frame) - 107
    np.testing.assert_array_equal(st_, frame.loc[in_wine, "logreg"].to_numpy())


KEYS = [
    "model",
    "dataset",
    "cohorts",
    "n_val",
    "n_test",
    "auc_val",
    "auc_test",
    "bias_robustness_val",
    "bias_robustness_test",
    "noise_robustness_val",
    "noise_robustness_test",
    "drift",
    "wasserstein",
    "wasserstein_p",
    "wasserstein_p1",
    "wasserstein_p2",
    "note",
]


@pytest.mark.parametrize("protocol", [None, "xdomain", "indata"])
def test_cohort_diagnostics_runs_the_four_with_a_common_sigma_max(protocol):
    bench = small_bench()
    d = cohort_diagnostics(bench, "m2", "a", protocol=protocol, n_repeats=3, n_points=7, p=1, random_state=2)
    yv, sv, yt, st_ = cohorts(bench, "m2", "a", protocol=protocol, random_state=2)
    assert d.cohorts == (protocol or "split") and (d.model, d.dataset) == ("m2", "a")
    assert exact_auc(yt, st_) > 0 and exact_auc(yv, sv) > 0  # every score defined
    assert_cohorts((d.y_val, d.s_val, d.y_test, d.s_test), (yv, sv, yt, st_))
    both = np.concatenate([sv, st_])
    sm = both.max() - both.min()
    assert d.bias_val.sigma_max == d.bias_test.sigma_max == d.noise_val.sigma_max == d.noise_test.sigma_max == sm
    assert d.bias_val.score == bias_robustness(yv, sv, sigma_max=sm, n_points=7).score
    assert d.bias_test.score == bias_robustness(yt, st_, sigma_max=sm, n_points=7).score
    assert d.noise_val.score == noise_robustness(yv, sv, sigma_max=sm, n_points=7, n_repeats=3, random_state=2).score
    assert d.noise_test.score == noise_robustness(yt, st_, sigma_max=sm, n_points=7, n_repeats=3, random_state=2).score
    assert d.drift.score == sens_spec_drift(yv, sv, yt, st_).score
    assert d.wasserstein.score == wasserstein_matrix(yv, sv, yt, st_, p=1).score and d.wasserstein.p == 1
    assert (d.auc_val, d.auc_test) == (exact_auc(yv, sv), exact_auc(yt, st_))
    out = d.to_dict()
    assert list(out) == KEYS
    assert (out["n_val"], out["n_test"]) == (len(yv), len(yt))
    assert out["drift"] == d.drift.score and out["wasserstein"] == d.wasserstein.score


def test_cohort_diagnostics_on_demo():
    d = cohort_diagnostics(load_demo(), "logreg", "wine", n_repeats=2)
    out = d.to_dict()
    assert sorted(out) == sorted(KEYS) and out["cohorts"] == "split"
    assert (out["n_val"], out["n_test"]) == (59, 48)
    assert all(np.isfinite(out[k]) for k in KEYS[5:-1]) and out["note"] == ""
    assert 0 <= out["drift"] <= 2 and out["wasserstein"] > 0


def test_diagnostics_table_one_row_per_model_and_dataset():
    bench = small_bench()
    table = diagnostics_table(bench, n_repeats=2, n_points=5)
    assert list(table.columns) == KEYS and len(table) == 2 * 4
    assert list(zip(table["model"], table["dataset"])) == [(m, d) for m in bench.models for d in bench.datasets]
    row = table.iloc[5]
    expected = cohort_diagnostics(bench, row["model"], row["dataset"], n_repeats=2, n_points=5).to_dict()
    assert row.to_dict() == expected
    sub = diagnostics_table(bench, models=["m2"], datasets=["d", "a"], protocol="outdata", n_repeats=2)
    assert list(zip(sub["model"], sub["dataset"], sub["cohorts"])) == [("m2", "d", "outdata"), ("m2", "a", "outdata")]
    assert (sub["n_val"] == [11, 30]).all() and (sub["n_test"] == [75, 56]).all()


def test_diagnostics_table_on_demo():
    bench = load_demo()
    table = diagnostics_table(bench, models=["logreg", "naive_bayes"], n_repeats=2, n_points=5)
    assert len(table) == 2 * len(bench.datasets)
    assert set(zip(table["model"], table["dataset"])) == {
        (m, d) for m in ("logreg", "naive_bayes") for d in bench.datasets
    }
    assert (table["cohorts"] == "split").all()
    assert (table["n_val"] + table["n_test"] == np.tile(bench.dataset_sizes(), 2)).all()
    assert table[KEYS[5:]].notna().all().all()


@pytest.mark.parametrize(
    "call",
    [
        lambda: bias_robustness([0, 1], [-1e308, 1e308]),
        lambda: noise_robustness([0, 1], [-1e308, 1e308]),
    ],
)
def test_score_range_overflow_is_an_error_naming_the_scores(call):
    with pytest.raises(ValueError, match="`y_score` spans more than float64"):
        call()


def test_cohort_ranges_overflowing_together_is_an_error():
    with pytest.raises(ValueError, match="`s_val` and `s_test` spans more than float64"):
        sens_spec_drift([0, 1], [0.0, 1e308], [0, 1], [-1e308, 0.0])


def test_protocol_without_calibration_data_is_a_clear_error():
    frame = pd.DataFrame(
        {
            "dataset": ["a"] * 4 + ["b"] * 4,
            "domain": ["x"] * 8,
            "label": [0, 1] * 4,
            "m": [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6],
        }
    )
    bench = load_benchmark(frame)
    with pytest.raises(ValueError, match="`protocol`='outdomain' leaves dataset 'a' no calibration data"):
        cohorts(bench, "m", "a", protocol="outdomain")


@pytest.mark.parametrize("models", [["svm"], ["svm", "knn"]])
@pytest.mark.parametrize("protocol", [None, "xdomain"])
def test_diagnostics_frame_equals_diagnostics_table(models, protocol):
    """The table of computed results is the table that computes them."""
    bench = beyondauc.load_demo().subset(datasets=["wine", "diabetes"])
    results = [
        beyondauc.cohort_diagnostics(bench, m, d, protocol=protocol, n_repeats=2)
        for m in models
        for d in bench.datasets
    ]
    expected = beyondauc.diagnostics_table(bench, models=models, protocol=protocol, n_repeats=2)
    pd.testing.assert_frame_equal(beyondauc.diagnostics_frame(results), expected)


@pytest.mark.parametrize("bad", [[{"model": "svm"}], [None], ["svm"]])
def test_diagnostics_frame_rejects_other_objects(bad):
    with pytest.raises(TypeError, match="`results` must hold CohortDiagnostics"):
        beyondauc.diagnostics_frame(bad)
