"""The calibrator kernels on a long grid hold a bounded number of copies of it.

At 10^6 examples per dataset a model's grid has millions of distinct scores,
and a calibration fit's temporaries, not the data, set the evaluation's peak
memory.  Each kernel's peak (traced allocations) is bounded in arrays of the
grid's size, and its block-by-block result is checked against an independent
reference: scikit-learn's tree, the interpolation written out over the whole
array, the same fit in one block.
"""

import tracemalloc

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from beyondauc.metrics.core import isotonic, kernel, logistic, stump

M = 400_000  # grid values: 3.2 MB per float64 array


def peak_arrays(func):
    """(result, peak traced bytes during ``func()`` in arrays of M float64)."""
    tracemalloc.start()
    try:
        out = func()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak / (8 * M)


@pytest.fixture(scope="module")
def long_grid():
    rng = np.random.default_rng(0)
    x = np.sort(rng.normal(size=M))
    return x, rng.poisson(0.5, (1, M)).astype(float), rng.poisson(0.5, (1, M)).astype(float)


def test_stump_search_holds_the_cumulative_counts_and_one_block(long_grid, monkeypatch):
    x, pos, neg = long_grid
    got, arrays = peak_arrays(lambda: stump.stump_params(x, pos, neg))
    assert arrays < 3.5  # the whole-row search held about 10 arrays of the grid
    monkeypatch.setattr(kernel, "_STUMP_BLOCK", 10 * M)  # one block: the whole row at once
    for a, b in zip(got, stump.stump_params(x, pos, neg)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", range(6))
def test_stump_in_blocks_of_one_value_is_scikit_learns_tree(seed, monkeypatch):
    """Blocks of one grid value each: the first maximum over blocks is scikit-learn's first best split."""
    monkeypatch.setattr(kernel, "_STUMP_BLOCK", 1)
    rng = np.random.default_rng(seed)
    x = np.unique(rng.integers(0, 40, 25)) / 8.0  # exact in float32, as the tree sees them
    pos = rng.integers(0, 3, (1, len(x))).astype(float)
    neg = rng.integers(0, 3, (1, len(x))).astype(float)
    if seed % 2:  # a periodic pattern: the Gini proxy ties at several splits
        pos[0], neg[0] = np.arange(len(x)) % 2, 1 - np.arange(len(x)) % 2
    thr, left, right = stump.stump_params(x, pos, neg)
    samples = np.repeat(np.concatenate([x, x]), np.concatenate([pos[0], neg[0]]).astype(int))
    labels = np.repeat([1] * len(x) + [0] * len(x), np.concatenate([pos[0], neg[0]]).astype(int))
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(samples[:, None], labels)
    if tree.tree_.node_count == 1:
        assert np.isnan(thr[0])
        return
    assert thr[0] == tree.tree_.threshold[0]
    assert (left[0], right[0]) == tuple(tree.predict([[x.min()], [x.max()]]))


def test_isotonic_transform_holds_its_output_and_one_block():
    rng = np.random.default_rng(1)
    kx, ky = np.sort(rng.normal(size=500)), np.sort(rng.random(500))
    x_new = rng.normal(size=M) * 1.5  # some beyond the knots: clipped
    got, arrays = peak_arrays(lambda: isotonic.isotonic_transform(x_new, kx, ky))
    assert arrays < 3.0  # its output and one block; the whole-array formula held about 6 arrays of the values
    t = np.clip(x_new, kx[0], kx[-1])  # scikit-learn's formula over the whole array
    idx = np.clip(np.searchsorted(kx, t), 1, len(kx) - 1)
    ref = (ky[idx] - ky[idx - 1]) / (kx[idx] - kx[idx - 1]) * (t - kx[idx - 1]) + ky[idx - 1]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_allclose(got, np.interp(x_new, kx, ky), rtol=0, atol=1e-12)


def test_logistic_fit_holds_its_basis_without_copies(long_grid):
    x, pos, neg = long_grid
    (b0, b1), arrays = peak_arrays(lambda: logistic.logistic_params(x, pos, neg))
    assert arrays < 5.5  # the basis and its transposed copy built from temporaries: about 7 arrays
    # the optimum: the penalised log-loss's gradient vanishes (the coefficient's penalty on the standardised score)
    w = pos[0] + neg[0]
    mu = (w @ x) / w.sum()
    sd = np.sqrt(w @ (x - mu) ** 2 / w.sum())
    p = 1.0 / (1.0 + np.exp(-(b0[0] + b1[0] * x)))
    r = w * p - pos[0]
    assert abs(r.sum()) < 1e-6 * w.sum()
    assert abs(r @ ((x - mu) / sd) + b1[0] * sd) < 1e-6 * w.sum()
