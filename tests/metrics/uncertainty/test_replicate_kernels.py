"""The replicate kernels that follow the data: the same numbers from O(replicates x (n + grid)) work.

The stratified draws go straight to their grid columns (no replicate x example
counts), in bounded row blocks; per-value counts are added in place; the
Wasserstein quantile merge reads each breakpoint's merged place.  Each is
checked against an independent construction: the documented draw scheme
re-drawn by hand, a one-hot matrix product, per-row ``searchsorted`` and the
quantile functions evaluated at the midpoints of the 1 / (na * nb) grid.
"""

import numpy as np
import pytest

from beyondauc.metrics.core.kernel import merge_ranks
from beyondauc.metrics.diagnostics.cohorts import wasserstein_rows
from beyondauc.metrics.uncertainty import bootstrap
from beyondauc.metrics.uncertainty.bootstrap import (
    BLOCK,
    CountGrid,
    bootstrap_counts,
    bootstrap_grid_counts,
    grid_weights,
)


def _design(n, n_values, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    groups = rng.integers(-1, 3, n)  # -1: drawn with its stratum, counted nowhere
    strata = (groups + 1) * 2 + y
    inverse = rng.integers(0, n_values, n)
    return strata, y, groups, inverse


def _hand_drawn_counts(strata, n_bootstrap, seed):
    """The documented scheme: per block a child seed; each position draws uniformly in its stratum."""
    order = np.argsort(strata, kind="stable")
    s = strata[order]
    first = np.searchsorted(s, s, side="left")
    size = np.searchsorted(s, s, side="right") - first
    n_blocks = -(-n_bootstrap // BLOCK)
    children = np.random.SeedSequence(seed).spawn(n_blocks)
    rows = []
    for k in range(n_blocks):
        pick = first + np.random.default_rng(children[k]).integers(0, size, size=(BLOCK, len(strata)))
        rows += [np.bincount(order[p], minlength=len(strata)) for p in pick]
    return np.array(rows[:n_bootstrap])


def _one_hot_weights(counts, inverse, y, n_values, groups, n_groups):
    """Per-value counts as a matrix product with one-hot columns (an independent route)."""
    n = len(inverse)
    cols = np.zeros((n, 2, n_groups, n_values))
    keep = groups >= 0
    idx = np.flatnonzero(keep)
    cols[idx, 1 - y[idx], groups[idx], inverse[idx]] = 1.0
    out = counts.astype(float) @ cols.reshape(n, -1)
    out = out.reshape(len(counts), 2, n_groups, n_values)
    return out[:, 0], out[:, 1]


@pytest.mark.parametrize("n, n_bootstrap", [(37, 70), (300, 130), (1, 3)])
def test_grid_counts_are_the_hand_drawn_replicates_on_the_grid(n, n_bootstrap):
    strata, y, groups, inverse = _design(n, 9, seed=n)
    counts = _hand_drawn_counts(strata, n_bootstrap, seed=4)
    assert (bootstrap_counts(strata, n_bootstrap, random_state=4) == counts).all()
    ref = _one_hot_weights(counts, inverse, y, 9, groups, 3)
    for got in (
        grid_weights(counts, inverse, y, 9, groups=groups, n_groups=3),
        bootstrap_grid_counts(strata, CountGrid(inverse, y, 9, groups=groups, n_groups=3), n_bootstrap, random_state=4),
    ):
        assert got[0].shape == got[1].shape == (n_bootstrap, 3, 9)
        assert (got[0] == ref[0]).all() and (got[1] == ref[1]).all()


def test_grid_counts_do_not_depend_on_the_row_blocks_or_the_slice(monkeypatch):
    strata, y, groups, inverse = _design(500, 40, seed=1)
    grid = CountGrid(inverse, y, 40, groups=groups, n_groups=3)
    full = bootstrap_grid_counts(strata, grid, 200, random_state=7)
    monkeypatch.setattr(bootstrap, "_DRAW_CELLS", 700)  # one row (a piece of a block) at a time
    for start, stop in [(0, 200), (41, 82), (63, 65), (130, 200)]:
        part = bootstrap_grid_counts(strata, grid, 200, random_state=7, start=start, stop=stop)
        assert (part[0] == full[0][start:stop]).all() and (part[1] == full[1][start:stop]).all()
        assert (
            bootstrap_counts(strata, 200, random_state=7, start=start, stop=stop)
            == _hand_drawn_counts(strata, 200, seed=7)[start:stop]
        ).all()


def test_merge_ranks_are_the_per_row_searchsorted():
    rng = np.random.default_rng(0)
    ka = np.cumsum(rng.integers(0, 3, (50, 40)), axis=1).astype(float) * 3  # sorted rows, many ties
    kb = np.cumsum(rng.integers(0, 4, (50, 40)), axis=1).astype(float) * 2
    below, upto, from_a = merge_ranks(ka, kb)
    assert (from_a.sum(axis=1) == ka.shape[1]).all()
    for r in range(len(ka)):
        assert (below[r] == np.searchsorted(kb[r], ka[r], side="left")).all()
        assert (upto[r] == np.searchsorted(ka[r], kb[r], side="right")).all()


def _midpoint_wasserstein(x, wa, wb, p):
    """W_p of two count-weighted samples: the quantile functions at the midpoints of the 1 / (na nb) grid."""
    a, b = np.repeat(x, wa.astype(int)), np.repeat(x, wb.astype(int))
    na, nb = len(a), len(b)
    if not na or not nb:
        return np.nan
    u = (np.arange(na * nb) + 0.5) / (na * nb)  # every step of both quantile functions is a union of cells
    return float(np.mean(np.abs(a[(u * na).astype(int)] - b[(u * nb).astype(int)]) ** p) ** (1 / p))


@pytest.mark.parametrize("p", [1, 2, 3])
def test_wasserstein_rows_equal_the_quantile_functions_at_midpoints(p):
    rng = np.random.default_rng(p)
    x = np.sort(rng.choice(np.arange(-20, 20) * 0.25, 12, replace=False))
    pos = rng.integers(0, 3, (30, 2, 12)).astype(float)
    neg = rng.integers(0, 3, (30, 2, 12)).astype(float)
    neg[0, 1] = 0.0  # an empty class: NaN
    _, mat = wasserstein_rows(x, pos, neg, p)
    vn, vp, tn, tp = neg[:, 0], pos[:, 0], neg[:, 1], pos[:, 1]
    for r in range(len(pos)):
        ref = [
            [_midpoint_wasserstein(x, vn[r], vp[r], p), _midpoint_wasserstein(x, vn[r], tn[r], p)],
            [_midpoint_wasserstein(x, tp[r], vp[r], p), _midpoint_wasserstein(x, tp[r], tn[r], p)],
        ]
        np.testing.assert_allclose(mat[r], ref, rtol=1e-12, atol=1e-12)
    assert np.isnan(mat[0, 0, 1]) and np.isnan(mat[0, 1, 1])


def test_diagnostics_replicates_do_not_depend_on_the_chunks_beyond_rounding(monkeypatch):
    from beyondauc.metrics.diagnostics import resampling as db

    rng = np.random.default_rng(5)
    yv, yt = rng.integers(0, 2, 400), rng.integers(0, 2, 300)
    sv, st = rng.normal(yv, 1.0), np.round(rng.normal(yt, 1.0) + 0.3, 1)  # ties in T
    args = db.DiagnosticsBootstrap(n_bootstrap=130, sigma_max=5.0, p=2, random_state=3)
    one = db.diagnostics_replicates(yv, sv, yt, st, args)
    monkeypatch.setattr(db, "_DIAGNOSTICS_CELLS", 3000)  # a few replicates per chunk
    many = db.diagnostics_replicates(yv, sv, yt, st, args)
    exact = ["auc_val", "auc_test", "bias_robustness_val", "bias_robustness_test", "drift"]
    assert (one[exact].to_numpy() == many[exact].to_numpy()).all()
    # W reads each chunk's own support: the same terms, summed in a grouping that can differ in the last bit
    np.testing.assert_allclose(many["wasserstein"], one["wasserstein"], rtol=1e-13, atol=0)
