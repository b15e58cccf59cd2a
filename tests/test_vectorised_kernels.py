"""Vectorised helpers against the numpy/scikit-learn functions they replace: same numbers."""
from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from beyondauc._bootstrap import _nanquantile, percentile_interval

_values = st.one_of(st.floats(-5, 5, allow_nan=False), st.just(np.nan), st.sampled_from([0.0, 0.5, 1.0]))


@settings(max_examples=300, deadline=None)
@given(a=arrays(np.float64, array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), elements=_values),
       q=st.one_of(st.sampled_from([0.0, 0.025, 0.5, 0.975, 1.0]), st.floats(0, 1)), data=st.data())
def test_nanquantile_equals_numpy_to_the_bit(a, q, data):
    """NaN left out, ties, all-NaN slices (NaN), any axis: np.nanquantile's numbers exactly."""
    axis = data.draw(st.integers(0, a.ndim - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on an all-NaN slice
        expected = np.nanquantile(a, q, axis=axis)
    got = _nanquantile(a, q, axis=axis)
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
