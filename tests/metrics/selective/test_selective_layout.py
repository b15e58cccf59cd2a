"""The selective bootstrap's shortcuts give the numbers of the plain computation exactly.

One sort shared by the area, DiSCA and the accuracy band; confidences shared by every
replicate sorted once; each role's counts on its own grid values side by side instead of
a (role x whole grid) block.
"""

import numpy as np
import pytest

from beyondauc.metrics.selective.benchmark_intervals import BAND_COVERAGES, side_by_side
from beyondauc.metrics.selective.curves import accuracy_at_coverages, exact_area_rows
from beyondauc.metrics.selective.scores import selective_rows
from beyondauc.metrics.uncertainty.bootstrap import CountGrid, bootstrap_grid_counts, strata_of

OPTIONS = {"resolution": 0.01, "tolerance": 0.9, "weights": (1 / 3, 1 / 3, 1 / 3)}


def _rows(seed, R=9, m=60, ties=True):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, m)
    if ties:
        conf = np.round(conf, 2)  # tied confidences enter together
    n_ok = rng.poisson(2.0, (R, m)).astype(float)
    n_wrong = rng.poisson(0.7, (R, m)).astype(float)
    return conf, n_ok, n_wrong


@pytest.mark.parametrize("seed", range(6))
def test_band_from_the_shared_sort_is_accuracy_at_coverages(seed):
    conf, n_ok, n_wrong = _rows(seed)
    varied = conf[None, :] + np.random.default_rng(seed).choice([0.0, 0.01], size=n_ok.shape)  # per-row confidences
    for c in (conf, varied):
        rows = selective_rows(c, n_ok, n_wrong, **OPTIONS, coverages=BAND_COVERAGES)
        assert np.array_equal(rows["band"], accuracy_at_coverages(c, n_ok, n_wrong, BAND_COVERAGES), equal_nan=True)
        assert np.array_equal(rows["area"], exact_area_rows(c, n_ok, n_wrong))
    assert "band" not in selective_rows(conf, n_ok, n_wrong, **OPTIONS)


@pytest.mark.parametrize("ties", [True, False])
def test_confidences_shared_by_every_row_give_the_numbers_of_the_broadcast(ties):
    conf, n_ok, n_wrong = _rows(3, ties=ties)
    n_wrong[0] = 0.0  # a row without mistakes
    n_ok[1, ::2] = n_wrong[1, ::2] = 0.0  # a row with empty grid values
    once = selective_rows(conf, n_ok, n_wrong, **OPTIONS, coverages=BAND_COVERAGES)
    each = selective_rows(np.broadcast_to(conf, n_ok.shape).copy(), n_ok, n_wrong, **OPTIONS, coverages=BAND_COVERAGES)
    assert once.keys() == each.keys()
    for name in once:
        assert np.array_equal(once[name], each[name], equal_nan=True), name
    assert np.array_equal(exact_area_rows(conf, n_ok, n_wrong), exact_area_rows(np.tile(conf, (9, 1)), n_ok, n_wrong))


def test_roles_side_by_side_hold_the_counts_of_the_role_by_grid_layout():
    rng = np.random.default_rng(0)
    n, m = 900, 120
    inv, y, role = rng.integers(0, m, n), rng.integers(0, 2, n), rng.integers(0, 3, n)
    inv[role == 1] = inv[role == 1] // 3  # the evaluation rows use a part of the grid only
    cols = {0: np.arange(m), 1: np.unique(inv[role == 1]), 2: np.unique(inv[role == 2])}
    column, starts = side_by_side(inv, role, cols)
    assert starts.tolist() == [0, m, m + len(cols[1]), m + len(cols[1]) + len(cols[2])]
    strata = strata_of(role, y)
    pos, neg = bootstrap_grid_counts(strata, CountGrid(column, y, int(starts[-1])), 30, random_state=2)
    ref_pos, ref_neg = bootstrap_grid_counts(strata, CountGrid(inv, y, m, groups=role, n_groups=3), 30, random_state=2)
    for r, values in cols.items():
        block = slice(starts[r], starts[r + 1])
        assert np.array_equal(pos[:, 0, block], ref_pos[:, r, values])
        assert np.array_equal(neg[:, 0, block], ref_neg[:, r, values])
        outside = np.setdiff1d(np.arange(m), values)  # the values left out hold no counts of the role
        assert not ref_pos[:, r, outside].any() and not ref_neg[:, r, outside].any()
