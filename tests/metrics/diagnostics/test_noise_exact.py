"""Exact noise robustness (the default ``noise_method="exact"``) against independent references.

* the closed form of the sigma-integral against numerical quadrature of
  ``Phi(D / (sigma sqrt 2))`` over sigma;
* the score and the curve against the brute-force sum over all pairs of a
  positive and a negative (``scipy.special.ndtr`` per pair, quadrature per
  distinct difference) to 1e-9 on small cohorts, with ties and at any scale;
* the FFT path against the direct sum within its stated bound on 10^4 + 10^4
  scores, including data built to reach the worst case;
* the exact value against the seeded Monte Carlo with many repeats (within
  the Monte Carlo error).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, special

import beyondauc
from beyondauc import noise_robustness
from beyondauc.metrics.diagnostics import noise_exact
from beyondauc.metrics.diagnostics.noise_exact import NEAR_TIE_ERROR, fft_error_bound, noise_integral, noise_pair_means


def quad_integral(d, sigma_max=1.0):
    """``(1 / sigma_max) integral_0^sigma_max Phi(d / (sigma sqrt 2)) dsigma`` by adaptive quadrature."""
    if d == 0:
        return 0.5
    f = lambda s: special.ndtr(d / (s * np.sqrt(2.0)))  # noqa: E731 -- at s -> 0 ndtr gives 0 or 1
    return integrate.quad(f, 0.0, sigma_max, limit=200, epsabs=1e-14, epsrel=1e-13)[0] / sigma_max


def brute_force(y, s, sigma_max, n_points):
    """(score, curve) from every pair: quadrature per distinct difference, ndtr per pair and sigma."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    d = (s[y == 1][:, None] - s[y == 0][None, :]).ravel()
    auc = np.mean((d > 0) + 0.5 * (d == 0))
    values, counts = np.unique(d, return_counts=True)
    integral = sum(c * quad_integral(v, sigma_max) for v, c in zip(values, counts)) / len(d)
    sigmas = np.linspace(0.0, sigma_max, n_points)[1:]
    curve = [auc] + [special.ndtr(d / (sig * np.sqrt(2.0))).mean() for sig in sigmas]
    return integral / auc, np.array(curve)


def cohort(kind, seed, n):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    y[:2] = 0, 1
    z = rng.normal(size=n) + y
    s = {"normal": z, "tied": np.round(z, 1), "int": np.clip(np.round(z + 2), 0, 4), "offset": 1e3 + 1e-3 * z}[kind]
    return y, s


# -- the closed form ----------------------------------------------------------------------


@pytest.mark.parametrize("d", [-3.0, -0.7, -1e-6, 1e-12, 1e-6, 0.01, 0.3, 1.0, 2.5, 12.0])
def test_closed_form_equals_quadrature(d):
    assert abs(noise_integral(np.array([d]))[0] - quad_integral(d)) < 1e-12


@pytest.mark.parametrize("sigma_max", [0.25, 1.0, 7.0])
@pytest.mark.parametrize("d", [0.05, 1.0, 4.0])
def test_two_examples_give_the_integral_over_sigma_max(d, sigma_max):
    """One pair, AUC 1: R_noise is the mean of Phi(d / (sigma sqrt 2)) over sigma in [0, sigma_max]."""
    r = noise_robustness([0, 1], [0.0, d], sigma_max=sigma_max)
    assert r.auc == 1.0 and r.method == "exact" and r.error_bound == 0.0
    assert abs(r.score - quad_integral(d, sigma_max)) < 1e-12


def test_ties_count_one_half_at_every_sigma():
    r = noise_robustness([0, 1, 0, 1], [1.0, 1.0, 0.0, 2.0], n_points=5)
    # pairs: (1, 1) tie, (1, 0) d = 1, (2, 1) d = 1, (2, 0) d = 2; the range is 2
    want = (0.5 + 2 * quad_integral(1.0, 2.0) + quad_integral(2.0, 2.0)) / 4
    assert abs(r.score * r.auc - want) < 1e-12
    assert r.auc_curve[0] == r.auc == 0.875


@given(st.floats(min_value=-50, max_value=50, allow_nan=False))
def test_integral_is_odd_around_one_half(d):
    f = noise_integral(np.array([d, -d]))
    assert abs(f[0] + f[1] - 1.0) < 1e-15 and 0.0 <= f[0] <= 1.0


# -- the direct sum: equal to the brute force -----------------------------------------------


@pytest.mark.parametrize("sigma_max", [None, 0.5, 3.0])
@pytest.mark.parametrize("kind", ["normal", "tied", "int", "offset"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_equals_brute_force_pair_sum(kind, seed, sigma_max):
    y, s = cohort(kind, seed, 30 + 7 * seed)
    sm = float(s.max() - s.min()) if sigma_max is None else sigma_max
    r = noise_robustness(y, s, sigma_max=sigma_max, n_points=9)
    score, curve = brute_force(y, s, sm, 9)
    assert r.error_bound == 0.0  # a small cohort: the direct sum
    assert abs(r.score - score) < 1e-9
    np.testing.assert_allclose(r.auc_curve, curve, rtol=0, atol=1e-12)
    assert np.isnan(r.auc_std).all() and r.sigma_max == sm


@pytest.mark.parametrize("factor", [1e300, 1e-300, 3.0, -1.0])
def test_scale_free(factor):
    """Multiplying the scores by k > 0 and shifting them changes nothing; k < 0 with flipped labels neither."""
    y, s = cohort("tied", 4, 40)
    r = noise_robustness(y, s)
    if factor < 0:
        other = noise_robustness(1 - y, factor * s)
    else:
        other = noise_robustness(y, factor * s + (0.0 if abs(factor) != 3.0 else 17.0))
    assert abs(other.score - r.score) < 1e-12 * r.score
    np.testing.assert_allclose(other.auc_curve, r.auc_curve, rtol=1e-12, atol=0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), st.integers(-5, 5)), min_size=2, max_size=25))
def test_any_small_cohort_equals_brute_force(rows):
    y = np.array([int(b) for b, _ in rows])
    s = np.array([float(v) for _, v in rows])
    if y.min() == y.max() or s.min() == s.max() or s[y == 1].max() < s[y == 0].min():
        return  # undefined: a single class, no range, or an AUC of 0 (tested with the diagnostics)
    r = noise_robustness(y, s, n_points=4)
    sm = float(s.max() - s.min())
    score, curve = brute_force(y, s, sm, 4)
    assert abs(r.score - score) < 1e-9
    np.testing.assert_allclose(r.auc_curve, curve, rtol=0, atol=1e-12)
    order = np.random.default_rng(len(rows)).permutation(len(y))  # the input order changes nothing
    assert noise_robustness(y[order], s[order], n_points=4).score == r.score


# -- the FFT: within its stated bound ---------------------------------------------------------


def _pair_means(pos, neg, shifts, *, direct, monkeypatch):
    monkeypatch.setattr(noise_exact, "DIRECT_PAIRS", 1 << 62 if direct else 0)
    return noise_pair_means(np.sort(pos), np.sort(neg), shifts)


@pytest.mark.parametrize("kind", ["rounded", "near_ties_above", "near_ties_below"])
def test_fft_within_its_bound_on_ten_thousand_per_class(kind, monkeypatch):
    """10^4 + 10^4 scores in units of sigma_max; the direct sum, over distinct values, is the reference."""
    rng = np.random.default_rng(7)
    shifts = np.linspace(0.0, 1.0, 21)[1:]
    if kind == "rounded":  # continuous-looking, about 900 distinct values per class
        pos, neg = np.round(rng.beta(3, 2, 10_000), 3), np.round(rng.beta(2, 3, 10_000), 3)
    else:  # every pair but the range's ends is a near tie where linear binning errs most (see NEAR_TIE_ERROR)
        h = 1.0 / (noise_exact.grid_size(1.0) - 1)
        p_at, n_at = (1000 + 1.2637, 1000.7313) if kind == "near_ties_above" else (999.734, 1000.266)
        pos, neg = np.full(10_000, p_at * h), np.full(10_000, n_at * h)
        pos[-1], neg[-1] = 1.0, 0.0  # the range is [0, 1]: the grid step is h
    exact, curve, h0, b0 = _pair_means(pos, neg, shifts, direct=True, monkeypatch=monkeypatch)
    approx, acurve, h, bound = _pair_means(pos, neg, shifts, direct=False, monkeypatch=monkeypatch)
    assert h0 == b0 == 0.0 and h > 0
    integral_bound, curve_bound = fft_error_bound(h, shifts)
    assert bound == integral_bound == NEAR_TIE_ERROR * h < 2e-6
    assert abs(approx - exact) <= bound
    assert np.all(np.abs(acurve - curve) <= curve_bound)
    if kind != "rounded":  # the bound is nearly reached: it is not loose
        assert abs(approx - exact) > 0.4 * bound


def test_fft_path_taken_by_large_cohorts():
    rng = np.random.default_rng(3)
    n = 1000
    y = np.r_[np.ones(n), np.zeros(n)].astype(int)
    s = np.r_[rng.normal(1, 1, n), rng.normal(0, 1, n)]
    r = noise_robustness(y, s)
    assert 0 < r.error_bound < 1e-5 / r.auc
    assert abs(r.score - noise_robustness(y, 1e-300 * s).score) < 1e-12


# -- against the Monte Carlo ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["normal", "int"])
def test_exact_is_what_the_monte_carlo_estimates(kind):
    y, s = cohort(kind, 11, 40)
    exact = noise_robustness(y, s, n_points=6)
    mc = noise_robustness(y, s, n_points=6, noise_method="monte_carlo", n_repeats=4000, random_state=1)
    se = mc.auc_std[1:] / np.sqrt(4000)
    assert np.all(np.abs(mc.auc_curve[1:] - exact.auc_curve[1:]) < 4.5 * se + 1e-12)
    # the Monte Carlo score is the trapezoid of its curve; the exact one integrates exactly
    trapezoid = np.trapezoid(exact.auc_curve, exact.sigmas) / (exact.auc * exact.sigma_max)
    assert abs(mc.score - trapezoid) < 4.5 * se.max()
    fine = noise_robustness(y, s, n_points=2001)
    assert fine.score == exact.score
    assert abs(np.trapezoid(fine.auc_curve, fine.sigmas) / (fine.auc * fine.sigma_max) - exact.score) < 1e-4


def test_noise_method_is_checked():
    with pytest.raises(ValueError, match="`noise_method` must be one of 'exact', 'monte_carlo', got 'mc'"):
        noise_robustness([0, 1], [0.0, 1.0], noise_method="mc")


def test_round_trip_and_benchmark_option():
    bench = beyondauc.load_demo()
    d = beyondauc.cohort_diagnostics(bench, "svm", "wine")
    m = beyondauc.cohort_diagnostics(bench, "svm", "wine", noise_method="monte_carlo", n_repeats=3)
    assert d.noise_test.method == "exact" and m.noise_test.method == "monte_carlo"
    assert d.noise_test.score == noise_robustness(d.y_test, d.s_test, sigma_max=d.noise_test.sigma_max).score
    assert (d.bias_test.score, d.drift.score) == (m.bias_test.score, m.drift.score)
    back = beyondauc.NoiseRobustness.from_frame(d.noise_val.to_frame())
    assert back.score == d.noise_val.score and np.isnan(back.auc_std).all()
