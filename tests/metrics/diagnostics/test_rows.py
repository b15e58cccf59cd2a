"""The diagnostics' batched replicate kernels: shared cumulative sums, shared buffers, an integer-key merge.

Each kernel is checked to the bit against an independent construction on
small count matrices with many ties and empty rows: the merge against a
stable argsort (int64 keys merged, int32 keys quicksorted), the
integer-key Wasserstein merge against the general argsort merge and, on
random counts with ties and empty rows, against the quantile functions at
the midpoints of the 1 / (na nb) grid and against its own int64 path, bias robustness and drift against their direct formulas
(``_auc_from_counts``, cumulative sums minus the counts), and the
bootstrap statistic with a workspace reused across chunks against fresh
calls.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beyondauc.metrics.core.kernel import (
    auc_from_counts,
    merge_counts,
    wasserstein_counts,
    wasserstein_merged,
)
from beyondauc.metrics.core.logistic import unit_scale
from beyondauc.metrics.diagnostics import resampling as db
from beyondauc.metrics.diagnostics.rows import (
    bias_rows,
    bias_units,
    drift_rows,
    lead_cumsum,
    wasserstein_rows,
    workspace,
)


def _counts(seed, R=40, m=15, high=3):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.choice(np.arange(-30, 30) * 0.37, m, replace=False))
    pos = rng.integers(0, high, (R, 2, m)).astype(float)
    neg = rng.integers(0, high, (R, 2, m)).astype(float)
    pos[0, 1] = 0.0  # a cohort without positives
    neg[1, :, : m // 2] = 0.0  # a gap at the low end
    pos[2] = neg[2] = 0.0
    pos[2, :, 3] = neg[2, :, 3] = 1.0  # one value only: empty range
    return x, pos, neg


def test_merge_counts_is_the_stable_merge_with_a_first():
    rng = np.random.default_rng(0)
    ka = np.cumsum(rng.integers(0, 3, (60, 30)), axis=1) * 3  # sorted rows, many ties within and across
    kb = np.cumsum(rng.integers(0, 4, (60, 30)), axis=1) * 2
    key, fb, ib = (
        np.concatenate([2 * ka, 2 * kb + 1], axis=1),
        np.empty((60, 60), np.int64),
        np.empty((60, 60), np.int64),
    )
    merge_counts(key, fb, ib)
    both = np.concatenate([ka, kb], axis=1)
    perm = np.argsort(both, axis=1, kind="stable")  # a's columns first among equals
    from_b = (perm >= 30).astype(np.int64)
    assert (key == np.take_along_axis(both, perm, axis=1)).all()
    assert (fb == from_b).all()
    assert (ib == np.cumsum(from_b, axis=1) - from_b).all()


def test_integer_cumulative_sums_of_counts_equal_the_float_ones():
    rng = np.random.default_rng(5)
    for shape, high in (((7, 2, 31), 4), ((5, 40), 2**40)):  # bootstrap counts, and sums far past 2**32
        w = rng.integers(0, high, shape).astype(float)
        w[0] = 0.0
        scratch = rng.integers(-(2**62), 2**62, w.size + 3)  # garbage left by another kernel
        got = lead_cumsum(w, scratch=scratch)
        ref = np.concatenate([np.zeros(shape[:-1] + (1,)), np.cumsum(w, axis=-1)], axis=-1)
        assert got.dtype == np.float64 and np.array_equal(got, ref)
        assert np.array_equal(lead_cumsum(w, np.full(ref.shape, np.nan), scratch=scratch), ref)


def test_int32_keys_merge_as_the_int64_keys():
    rng = np.random.default_rng(1)
    ka = np.cumsum(rng.integers(0, 3, (40, 25)), axis=1) * 5
    kb = np.cumsum(rng.integers(0, 4, (40, 25)), axis=1) * 3
    keys = np.concatenate([2 * ka, 2 * kb + 1], axis=1)
    out = {}
    for kind in (np.int64, np.int32):
        key, fb, ib = keys.astype(kind), np.empty((40, 50), kind), np.empty((40, 50), np.int64)
        merge_counts(key, fb, ib)
        out[kind] = key, fb, ib
    for a, b in zip(out[np.int64], out[np.int32]):
        assert (a == b).all()
    assert (out[np.int32][2][:, -1] + out[np.int32][1][:, -1] == 25).all()  # every b's place counted


def _midpoint_w(x, wa, wb, p):
    """W_p of two count-weighted samples from their quantile functions at the midpoints of the 1 / (na nb) grid."""
    a, b = np.repeat(x, wa.astype(int)), np.repeat(x, wb.astype(int))
    if not len(a) or not len(b):
        return np.nan
    u = (np.arange(len(a) * len(b)) + 0.5) / (len(a) * len(b))
    return float(np.mean(np.abs(a[(u * len(a)).astype(int)] - b[(u * len(b)).astype(int)]) ** p) ** (1 / p))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 9), st.sampled_from([2, 3, 1.5]))
def test_property_wasserstein_counts_equal_brute_force_on_both_key_widths(seed, R, s, p):
    rng = np.random.default_rng(seed)
    x, _ = unit_scale(np.sort(rng.choice(np.arange(-12, 12) * 0.5, s, replace=False)))
    wa = rng.integers(0, 3, (R, s)).astype(float)  # zeros: tied breakpoints within and across the runs
    wb = rng.integers(0, 3, (R, s)).astype(float)
    wb[rng.random(R) < 0.2] = 0.0  # empty classes: NaN
    ca, cb = np.cumsum(wa, axis=1), np.cumsum(wb, axis=1)
    na, nb = ca[:, -1], cb[:, -1]

    def work():
        return [np.empty(R * 2 * s, dtype=np.int64) for _ in range(5)]

    got = wasserstein_counts(x, ca, cb, p, work())  # denominators below 2**30: int32 keys
    ref = wasserstein_merged(x, ca * nb[:, None], cb * na[:, None], (na * nb)[:, None], p)
    assert np.array_equal(got, ref, equal_nan=True)
    brute = [_midpoint_w(x, wa[r], wb[r], p) for r in range(R)]
    np.testing.assert_allclose(got, brute, rtol=1e-12, atol=1e-12)
    big = float(2**16)  # the same distributions with every count times 2**16: denominators past 2**30, int64 keys
    assert not R or (na * nb * big * big).max() >= 2.0**30 or (na * nb).max() == 0
    wide = wasserstein_counts(x, ca * big, cb * big, p, work())
    assert np.array_equal(wide, got, equal_nan=True)


@pytest.mark.parametrize("p", [2, 3, 1.5])
def test_integer_key_wasserstein_equals_the_argsort_merge_to_the_bit(p):
    rng = np.random.default_rng(int(p * 10))
    R, s = 50, 17
    x, _ = unit_scale(np.sort(rng.normal(size=s)) * 3)
    wa = rng.integers(0, 3, (R, s)).astype(float)
    wb = rng.integers(0, 3, (R, s)).astype(float)
    wb[0] = 0.0  # an empty class: NaN
    wa[1, 5:] = 0.0
    ca, cb = np.cumsum(wa, axis=1), np.cumsum(wb, axis=1)
    na, nb = ca[:, -1], cb[:, -1]
    got = wasserstein_counts(x, ca, cb, p, [np.empty(R * 2 * s, dtype=np.int64) for _ in range(5)])
    ref = wasserstein_merged(x, ca * nb[:, None], cb * na[:, None], (na * nb)[:, None], p)
    assert np.isnan(got[0]) and np.isnan(ref[0])
    assert np.array_equal(got, ref, equal_nan=True)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_wasserstein_rows_integer_and_general_paths_agree_to_the_bit(p):
    x, pos, neg = _counts(p)
    fast = wasserstein_rows(x, pos, neg, p)  # whole numbers: found and merged as integer keys
    general = wasserstein_rows(x, pos, neg, p, counts=False)
    assert np.array_equal(fast[0], general[0], equal_nan=True)
    assert np.array_equal(fast[1], general[1], equal_nan=True)
    assert np.isnan(fast[1][0, 1, 1])  # T+ is empty in row 0


def test_bias_rows_equal_the_direct_formula_to_the_bit():
    x, pos, neg = _counts(7)
    sigma_max = 5.0
    xc, lo = bias_units(x, sigma_max)
    for k in (0, 1):
        p, q = pos[:, k], neg[:, k]
        cn = np.concatenate([np.zeros((len(q), 1)), np.cumsum(q, axis=1)], axis=1)
        cq = np.concatenate([np.zeros((len(q), 1)), np.cumsum(q * xc, axis=1)], axis=1)
        inner = cn[:, lo] + (cn[:, :-1] - cn[:, lo]) * xc - (cq[:, :-1] - cq[:, lo])
        auc = auc_from_counts(p, q)
        with np.errstate(invalid="ignore", divide="ignore"):
            score = (p * inner).sum(axis=1) / (p.sum(axis=1) * q.sum(axis=1)) / auc
        score = np.where(np.isfinite(score) & (auc > 0), score, np.nan)
        got_score, got_auc = bias_rows(x, p, q, sigma_max)
        assert np.array_equal(got_auc, auc, equal_nan=True)
        assert np.array_equal(got_score, score, equal_nan=True)
        shared = bias_rows(x, p, q, sigma_max, cn=lead_cumsum(q), units=(xc, lo), work=workspace(len(p), len(x)))
        assert np.array_equal(shared[0], score, equal_nan=True)
    assert np.isnan(bias_rows(x, pos[:, 1], neg[:, 1], sigma_max)[1][0])  # no positives: no AUC


def test_drift_rows_equal_the_direct_formula_to_the_bit():
    x, pos, neg = _counts(11)
    n_pos, n_neg = pos.sum(axis=2, keepdims=True), neg.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = (n_pos - (np.cumsum(pos, axis=2) - pos)) / n_pos
        spec = (np.cumsum(neg, axis=2) - neg) / n_neg
    gap = (sens[:, 0] - sens[:, 1]) ** 2 + (spec[:, 0] - spec[:, 1]) ** 2
    present = (pos + neg).sum(axis=1) > 0
    ref = np.empty(len(pos))
    for r in range(len(pos)):  # each row's own score range
        cols = np.flatnonzero(present[r])
        lo, hi = x[cols[0]], x[cols[-1]]
        with np.errstate(invalid="ignore", divide="ignore"):
            ref[r] = (gap[r, 1:] * np.diff(x)).sum() / (hi - lo)
        if n_pos[r].min() == 0 or n_neg[r].min() == 0 or hi == lo:
            ref[r] = np.nan
    got = drift_rows(x, pos, neg)
    assert np.array_equal(got, ref, equal_nan=True)
    assert np.isnan(got[0]) and np.isnan(got[2]) and np.isfinite(got[3:]).all()
    shared = drift_rows(x, pos, neg, cp=lead_cumsum(pos), cn=lead_cumsum(neg), work=workspace(len(pos), len(x)))
    assert np.array_equal(shared, ref, equal_nan=True)


def test_the_bootstrap_statistic_reuses_its_workspace_without_carrying_anything_over():
    rng = np.random.default_rng(3)
    yv, yt = rng.integers(0, 2, 300), rng.integers(0, 2, 200)
    sv, st = np.round(rng.normal(yv, 1.0), 1), rng.normal(yt, 1.0) + 0.4  # ties in V
    sample, stat = db.diagnostics_design(yv, sv, yt, st, db.DiagnosticsBootstrap(1, 4.0, 2, random_state=0))
    m = sample.n_values
    pos = rng.integers(1, 3, (9, 2, m)).astype(float)  # every value in every row: W's support is the grid
    neg = rng.integers(1, 3, (9, 2, m)).astype(float)
    x = np.unique(np.concatenate([sv, st]))
    first = stat(pos, neg)  # the workspace is made for 9 rows
    again = stat(pos[5:], neg[5:])  # 4 rows in the same (larger, used) buffers
    for k, v in first.items():
        fresh = db.diagnostics_statistic(x, pos[5:], neg[5:], 4.0, 2, units=bias_units(x, 4.0))[k]
        assert np.array_equal(again[k], fresh, equal_nan=True), k
        assert np.array_equal(v[5:], fresh, equal_nan=True), k  # rows do not depend on their chunk
