"""Vectorised helpers against the numpy/scikit-learn functions they replace: same numbers."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from beyondauc.metrics.uncertainty.bootstrap import nanquantile_slices, percentile_interval

_values = st.one_of(st.floats(-5, 5, allow_nan=False), st.just(np.nan), st.sampled_from([0.0, 0.5, 1.0]))


@settings(max_examples=300, deadline=None)
@given(
    a=arrays(np.float64, array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), elements=_values),
    q=st.one_of(st.sampled_from([0.0, 0.025, 0.5, 0.975, 1.0]), st.floats(0, 1)),
    data=st.data(),
)
def test_nanquantile_equals_numpy_to_the_bit(a, q, data):
    """NaN left out, ties, all-NaN slices (NaN), any axis: np.nanquantile's numbers exactly."""
    axis = data.draw(st.integers(0, a.ndim - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on an all-NaN slice
        expected = np.nanquantile(a, q, axis=axis)
    got = nanquantile_slices(a, q, axis=axis)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


def test_percentile_interval_is_the_two_quantiles():
    rng = np.random.default_rng(0)
    reps = rng.normal(size=(400, 3, 5))
    reps[rng.random(reps.shape) < 0.1] = np.nan
    reps[:, 0, 0] = np.nan
    low, high = percentile_interval(reps, 0.9, axis=0)
    alpha = (1 - 0.9) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(low, np.nanquantile(reps, alpha, axis=0))
        np.testing.assert_array_equal(high, np.nanquantile(reps, 1 - alpha, axis=0))
    assert np.isnan(low[0, 0]) and np.isnan(high[0, 0])


# -- isotonic on integer counts: PAVA only on the exact level sets around 0.5 ----------


def _integer_counts(rng, F, m, lam, p_zero):
    pos = rng.poisson(lam * np.linspace(0.2, 1.5, m), size=(F, m)).astype(float)
    neg = rng.poisson(lam * np.linspace(1.5, 0.2, m), size=(F, m)).astype(float)
    zero = rng.random((F, m)) < p_zero
    pos[zero], neg[zero] = 0.0, 0.0
    return pos, neg


def test_isotonic_integer_path_equals_general_path():
    """Same decisions as the general path on many small integer fits (ties, zero weights, blocks at 0.5)."""
    import beyondauc.metrics.core.isotonic as isotonic

    calls = []
    segment = isotonic.isotonic_segment

    def counted(*a):
        calls.append(1)
        return segment(*a)

    rng = np.random.default_rng(0)
    try:
        isotonic.isotonic_segment = counted
        for trial in range(1500):
            scale = rng.choice([1.0, 1e-6, 1e3])
            x = np.unique(rng.normal(size=int(rng.integers(1, 40))) * scale) if trial % 3 else np.arange(30) * 0.1
            pos, neg = _integer_counts(
                rng, int(rng.integers(1, 8)), len(x), rng.choice([0.3, 1.0, 3.0]), rng.choice([0.0, 0.3, 0.7])
            )
            np.testing.assert_array_equal(
                isotonic.fit_predict_isotonic(x, pos, neg, integer=True), isotonic.fit_predict_isotonic(x, pos, neg)
            )
    finally:
        isotonic.isotonic_segment = segment
    assert len(calls) > 200  # the restricted PAVA was exercised


def test_restricted_pava_equals_full_pava_on_exact_level_sets():
    """PAVA on the points between two exact level-set boundaries gives the full run's values to the bit."""
    from scipy.optimize import isotonic_regression

    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(400):
        m = int(rng.integers(2, 60))
        n = rng.poisson(rng.choice([0.5, 2.0, 6.0]), size=m).astype(float) + 1.0
        pos = np.minimum(rng.binomial(n.astype(int), np.linspace(0.1, 0.9, m)), n).astype(float)
        y, w = pos / n, n
        full = isotonic_regression(y, weights=w).x
        # exact level sets: distinct exact block means differ by >= 1 / sum(n)**2, far above 1e-12
        bounds = [0] + [j for j in range(1, m) if abs(full[j] - full[j - 1]) > 1e-12] + [m]
        for a in range(len(bounds) - 1):
            for b in range(a + 1, len(bounds)):
                s, e = bounds[a], bounds[b]
                part = isotonic_regression(y[s:e], weights=w[s:e]).x
                assert np.array_equal(part, full[s:e]), (s, e)
                checked += 1
    assert checked > 1000


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 12), st.integers(1, 12), st.integers(1, 6), st.data())
def test_auc_rows_equals_the_pair_count_to_the_bit(rows, n_pos, n_neg, levels, data):
    """The AUC of every row (noise robustness) is, to the bit, the brute-force count over all pairs
    (ties one half); few score levels make many ties."""
    from beyondauc.metrics.core.kernel import auc_rows

    pos = data.draw(arrays(np.float64, (rows, n_pos), elements=st.integers(0, levels).map(float)))
    neg = data.draw(arrays(np.float64, (rows, n_neg), elements=st.integers(0, levels).map(float)))
    got = auc_rows(pos, neg)
    for i in range(rows):
        pairs = (pos[i][:, None] > neg[i][None, :]).sum() + 0.5 * (pos[i][:, None] == neg[i][None, :]).sum()
        assert got[i] == pairs / (n_pos * n_neg)


def test_auc_rows_of_noisy_scores_matches_sklearn():
    from sklearn.metrics import roc_auc_score

    from beyondauc.metrics.core.kernel import auc_rows

    rng = np.random.default_rng(0)
    pos = rng.normal(1.0, 1.0, (7, 40)) + rng.standard_normal((7, 40), dtype=np.float32)
    neg = rng.normal(0.0, 1.0, (7, 55)).round(1)
    got = auc_rows(pos, neg)
    want = [roc_auc_score(np.r_[np.ones(40), np.zeros(55)], np.r_[p, q]) for p, q in zip(pos, neg)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
