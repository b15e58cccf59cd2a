"""The isotonic calibrator on the score grid, for many fits at once.

``IsotonicRegression(out_of_bounds="clip")`` of scikit-learn: the same pooling
(:func:`scipy.optimize.isotonic_regression`), the same knots and the same
linear interpolation formula as its ``predict``.  Rank-based.  See
:mod:`beyondauc.metrics.core.fitting` for what every calibrator shares.
"""

from __future__ import annotations

import numpy as np

from .fitting import EPSILON, override_single, single_class
from .kernel import run_means

__all__: list[str] = []

_TRANSFORM_BLOCK = 1 << 16  # values per block of an isotonic transform


def _trim(xk, yk):
    """Drop interior points of constant runs (scikit-learn keeps the ends)."""
    if len(yk) <= 2:
        return xk, yk
    keep = np.ones(len(yk), dtype=bool)
    keep[1:-1] = (yk[1:-1] != yk[:-2]) | (yk[1:-1] != yk[2:])
    return xk[keep], yk[keep]


def isotonic_knots(x, pos, neg, *, trim=True):
    """Knots (X_thresholds_, y_thresholds_) of one isotonic fit on grid counts.

    Trimming (as scikit-learn does) drops interior points of constant runs;
    it never changes an interpolated value, since the slope is 0 inside a run
    and the run ends, which bound the sloped segments, are kept.
    """
    from scipy.optimize import isotonic_regression

    n = pos + neg
    present = n > 0
    y_fit = np.asarray(isotonic_regression(pos[present] / n[present], weights=n[present]).x, dtype=np.float64)
    return _trim(x[present], y_fit) if trim else (x[present], y_fit)


def isotonic_transform(x_new, knots_x, knots_y):
    """Clip then interpolate linearly, exactly as ``IsotonicRegression.predict``.

    Elementwise, by blocks of values: its temporaries are a block's, however many values it transforms.
    """
    if len(knots_x) == 1:
        return np.full(len(x_new), knots_y[0])
    out = np.empty(len(x_new))
    for start in range(0, len(x_new), _TRANSFORM_BLOCK):  # a loop over blocks of values
        t = np.clip(x_new[start : start + _TRANSFORM_BLOCK], knots_x[0], knots_x[-1])
        idx = np.clip(np.searchsorted(knots_x, t), 1, len(knots_x) - 1)
        lo, hi = idx - 1, idx
        slope = (knots_y[hi] - knots_y[lo]) / (knots_x[hi] - knots_x[lo])
        out[start : start + len(t)] = slope * (t - knots_x[lo]) + knots_y[lo]
    return out


def within_range(pos, neg):
    """(F, n) bool: grid values inside each fit's calibration range [min, max].

    ``IsotonicRegression(out_of_bounds="nan")`` predicts NaN outside it (so
    ``predict(x) > 0.5`` is False there).
    """
    present = (pos + neg) > 0
    m = present.shape[1]
    first = np.argmax(present, axis=1)
    last = m - 1 - np.argmax(present[:, ::-1], axis=1)
    idx = np.arange(m)[None, :]
    return (idx >= first[:, None]) & (idx <= last[:, None])


def _isotonic_row(x, pos, neg):
    """Decisions ``predict(x) > 0.5`` of one isotonic fit on the whole grid.

    The fit is increasing, so grid values left of the knots whose fitted value
    is near 0.5 are negative and those right of the first knot above 0.5 are
    positive; only the grid values in between (the crossing) are evaluated
    with scikit-learn's interpolation formula, so rounding matches it exactly.
    """
    kx, ky = isotonic_knots(x, pos, neg, trim=False)
    pred = np.zeros(len(x), dtype=bool)
    hi_k = int(np.searchsorted(ky, 0.5 + 1e-9, side="right"))  # first knot clearly above 0.5
    lo_k = int(np.searchsorted(ky, 0.5 - 1e-9, side="left"))  # first knot near or above 0.5
    if hi_k < len(kx):
        pred[np.searchsorted(x, kx[hi_k], side="right") :] = True
    if lo_k == 0:
        start = 0
    else:
        start = int(np.searchsorted(x, kx[lo_k - 1], side="left"))
    stop = len(x) if hi_k >= len(kx) else int(np.searchsorted(x, kx[hi_k], side="right"))
    if stop > start:
        pred[start:stop] = isotonic_transform(x[start:stop], kx, ky) > 0.5
    return pred


def _suffix_sums(pos, neg):
    """What both isotonic paths start from: (single class, weights, presence, suffix sums).

    ``suffix[:, j]`` (F, m + 1) is the sum of ``pos - neg`` over grid values j
    and above (0 at the end): the level set {fit > 0.5} maximises it.
    """
    F, m = pos.shape
    n = pos + neg
    suffix = np.zeros((F, m + 1))
    np.cumsum((pos - neg)[:, ::-1], axis=1, out=suffix[:, m - 1 :: -1] if m else suffix[:, :0])
    return single_class(pos, neg), n, n > 0, suffix


def _crossing_means(x, ps, nn, pr, k, p_, idx):
    """(fit(k), fit(p), slope between them) of rows whose fit crosses 0.5 between knots p < k.

    ``k`` starts a PAVA block and ``p`` ends one, so fit(k) = min_t mean(k..t)
    and fit(p) = max_s mean(s..p), over weighted grid values (``pr``).
    """
    mean_sp, mean_kt = run_means(ps, nn, pr, p_, k, idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        y_k, y_p = mean_kt.min(axis=1), mean_sp.max(axis=1)
        slope = (y_k - y_p) / (x[k] - x[p_])
    return y_k, y_p, slope


def _unsure(inside, val, y_p, y_k):
    """Rows where rounding could decide an interpolated decision, or the fit is odd: solve them exactly.

    ``val`` is overwritten (by its distance to 0.5).
    """
    np.abs(np.subtract(val, 0.5, out=val), out=val)
    return (inside & ~(val > 1e-9)).any(axis=1) | ~(y_p <= 0.5) | ~(y_k > 0.5)


def fit_predict_isotonic(x, pos, neg, *, integer=False):
    """Isotonic decisions ``predict(x) > 0.5`` for F fits.

    The level set {fit > 0.5} of an isotonic regression is the upper set of
    grid values that maximises the sum of ``pos - n / 2`` over it (its
    smallest maximiser; the largest gives {fit >= 0.5}), so most fits need
    only reversed cumulative sums; grid values strictly inside the segment
    where the fit crosses 0.5 are interpolated from the two block means
    around it.  A fit is solved with PAVA (:func:`_isotonic_row`), with
    scikit-learn's exact interpolation, where rounding could decide: a block
    fitted (nearly) exactly at 0.5, or an interpolated value within 1e-9 of 0.5.

    ``integer=True`` declares the counts integers (the bootstrap's unweighted
    fits): the same decisions by :func:`_isotonic_integer`, which runs PAVA only
    on the exact level sets around 0.5 (falls back here where its precondition
    on the total weight fails).
    """
    if integer and _integer_ok(pos + neg, pos.shape[1]):
        return _isotonic_integer(x, pos, neg)
    F, m = pos.shape
    single, n, present, suffix = _suffix_sums(pos, neg)
    # a grid value without weight has the suffix of the next one (it adds 0), so the
    # maximum and the last value near it over the candidates (weighted values and the
    # end) are those over every index
    best = suffix.max(axis=1)
    # near-ties (weighted counts carry rounding) count as ties: such fits take the PAVA path
    tol = 1e-9 * n.sum(axis=1)
    near = suffix >= (best - tol)[:, None]
    del n, suffix  # freed before the crossing's arrays are made
    k_strict = m - np.argmax(near[:, ::-1], axis=1)  # first grid index with fit > 0.5 (m: none)
    near[:, :m] &= present
    k_weak = np.argmax(near, axis=1)  # first grid index with fit >= 0.5
    del near
    first = np.argmax(present, axis=1)
    idx = np.arange(m)[None, :]
    before = present & (idx < k_strict[:, None])
    prev = np.where(before.any(axis=1), m - 1 - np.argmax(before[:, ::-1], axis=1), -1)
    crossing_gap = (k_strict < m) & (k_strict != first) & (k_strict - prev > 1)
    exact = (k_weak != k_strict) & (single < 0)
    pred = (idx >= k_strict[:, None]) | (k_strict == first)[:, None]
    gap_rows = np.flatnonzero(crossing_gap & ~exact & (single < 0))
    if gap_rows.size:
        # grid values strictly between the last knot fitted <= 0.5 (p) and the
        # first fitted > 0.5 (k) are interpolated.  k starts a PAVA block and p
        # ends one, so fit(k) = min_t mean(k..t) and fit(p) = max_s mean(s..p).
        G = gap_rows
        k, p_ = k_strict[G], prev[G]
        every = len(G) == F  # all rows: the counts themselves, not copies
        ps, pr = (pos, present) if every else (pos[G], present[G])
        y_k, y_p, slope = _crossing_means(x, ps, ps + (neg if every else neg[G]), pr, k, p_, idx)
        with np.errstate(invalid="ignore"):  # slope * (x - x[p]) + y_p, in place
            val = np.subtract(x[None, :], x[p_][:, None])
            val *= slope[:, None]
            val += y_p[:, None]
        inside = (idx > p_[:, None]) & (idx < k[:, None])
        pred[G] |= inside & (val > 0.5)
        exact[G[_unsure(inside, val, y_p, y_k)]] = True  # solved exactly below
    for f in np.flatnonzero(exact):
        pred[f] = _isotonic_row(x, pos[f], neg[f])
    return override_single(pred, single)


# -- isotonic on integer counts (the bootstrap's xdomain fits) --------------------------
#
# With integer counts every suffix sum of ``pos - neg`` is an exact integer, so the
# level sets {fit > 0.5} and {fit >= 0.5} are exact, and every exact fitted value is a
# ratio a / b of integers with b <= W (a fit's total weight): two distinct values are
# at least 1 / W**2 apart, a value other than 0.5 at least 1 / (2 W) from it.  PAVA in
# floating point keeps each block mean within about 3 * n * eps of its exact value
# (one rounding per pooling, at most n poolings), so while 3 * n * eps * W**2 is small
# it decides every comparison of unequal exact means as exact arithmetic does: its
# blocks refine the exact level sets, and a boundary between two exact level sets is a
# block boundary of the floating-point run.  PAVA never pools across a block boundary
# of its own final result and works left to right, so the run on the points between
# two such boundaries performs exactly the operations of the full run on them: the
# same block means, bit for bit (:func:`_isotonic_segment`).

_ISO_EXACT_BOUND = 0.1  # 3 * n * eps * W**2 below this: the argument above holds, 10x to spare


def isotonic_segment(x, pos, neg, s0, e0):
    """Decisions of one fit on the whole grid from PAVA on the grid slice [s0, e0].

    ``s0`` must start, and ``e0`` end, exact level sets of the fit; the slice must
    hold the knots from the last one fitted below 0.5 to the first one fitted above
    it (those the interpolation around 0.5 reads).  Grid values left of the slice
    are below 0.5 -- or, left of the first knot, clipped to it; right of it above
    0.5 -- or, right of the last knot, clipped to it.
    """
    seg = _isotonic_row(x[s0 : e0 + 1], pos[s0 : e0 + 1], neg[s0 : e0 + 1])
    present = (pos + neg) > 0
    out = np.empty(len(x), dtype=bool)
    out[s0 : e0 + 1] = seg
    out[:s0] = seg[0] if not present[:s0].any() else False
    out[e0 + 1 :] = seg[-1] if not present[e0 + 1 :].any() else True
    return out


def _isotonic_integer(x, pos, neg):
    """:func:`fit_predict_isotonic` for integer counts: the same decisions, fewer passes.

    Maxima of the suffix sums are exact (integers), so the first and last maximiser
    are two ``argmax``; presence is looked at only where it decides; a fit with a block
    fitted at exactly 0.5 (or an interpolated value near it) runs PAVA only on the
    exact level sets around 0.5 (:func:`_isotonic_segment`).
    """
    F, m = pos.shape
    single, n, present, suffix = _suffix_sums(pos, neg)
    j0 = np.argmax(suffix, axis=1)  # first maximiser (the maximum is exact)
    k_strict = m - np.argmax(suffix[:, ::-1], axis=1)  # last: first grid index with fit > 0.5 (m: none)
    del suffix
    # the last maximiser is a weighted value or the end; the first weighted value at or after
    # the first maximiser starts {fit >= 0.5}
    k_weak = k_strict.copy()
    idx = np.arange(m)[None, :]
    cand = np.flatnonzero(j0 < k_strict)
    if cand.size:
        pc = present[cand] & (idx >= j0[cand, None]) & (idx < k_strict[cand, None])
        got = pc.any(axis=1)
        k_weak[cand[got]] = np.argmax(pc[got], axis=1)
    first = np.argmax(present, axis=1)
    rows = np.arange(F)
    inner = (k_strict < m) & (k_strict != first)
    crossing_gap = inner.copy()
    crossing_gap[inner] = ~present[rows[inner], k_strict[inner] - 1]
    exact = (k_weak != k_strict) & (single < 0)
    pred = (idx >= k_strict[:, None]) | (k_strict == first)[:, None]
    gap_rows = np.flatnonzero(crossing_gap & ~exact & (single < 0))
    if gap_rows.size:
        G = gap_rows
        pr = present[G]
        k = k_strict[G]
        before = pr & (idx < k[:, None])
        p_ = m - 1 - np.argmax(before[:, ::-1], axis=1)
        y_k, y_p, slope = _crossing_means(x, pos[G], n[G], pr, k, p_, idx)
        # only the grid values strictly between p and k: a window of columns per row
        w = int((k - p_).max()) - 1
        cols = p_[:, None] + 1 + np.arange(max(w, 0))[None, :]
        inside = cols < k[:, None]
        cols = np.minimum(cols, m - 1)
        with np.errstate(invalid="ignore"):
            val = slope[:, None] * (x[cols] - x[p_][:, None]) + y_p[:, None]
        up = inside & (val > 0.5)
        rr, cc = np.nonzero(up)
        pred[G[rr], cols[rr, cc]] = True
        exact[G[_unsure(inside, val, y_p, y_k)]] = True
    E = np.flatnonzero(exact)
    if E.size:
        s0, e0 = _exact_level_sets(pos[E], n[E], present[E], k_weak[E], k_strict[E])
        for f, a, b in zip(E, s0, e0):
            pred[f] = isotonic_segment(x, pos[f], neg[f], a, b)
    return override_single(pred, single)


def _exact_level_sets(ps, nn, pr, kw, ks):
    """Start of the exact level set ending before ``kw`` and end of the one starting at ``ks``.

    For a level set ending at p, its value is max_s mean(s..p) and its start the
    smallest maximiser; for one starting at k, min_t mean(k..t) and the largest
    minimiser (ties within 1 / (4 W**2): distinct exact means are 1 / W**2 apart,
    the computed ones within one rounding).  Without a weighted value before ``kw``
    the start is the first weighted value; with ``ks`` at the end, the last one.
    """
    m = ps.shape[1]
    idx = np.arange(m)[None, :]
    tol = 0.25 / np.maximum(nn.sum(axis=1), 1.0) ** 2
    first = np.argmax(pr, axis=1)
    last = m - 1 - np.argmax(pr[:, ::-1], axis=1)
    before = pr & (idx < kw[:, None])
    has_p = before.any(axis=1)
    p_ = m - 1 - np.argmax(before[:, ::-1], axis=1)
    mean_sp, mean_kt = run_means(ps, nn, pr, p_, np.minimum(ks, m - 1), idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        top = mean_sp.max(axis=1)
        s0 = np.argmax(mean_sp >= (top - tol)[:, None], axis=1)
        s0 = np.where(has_p, s0, first)
        low = mean_kt.min(axis=1)
        e0 = m - 1 - np.argmax((mean_kt <= (low + tol)[:, None])[:, ::-1], axis=1)
        e0 = np.where(ks < m, e0, last)
    return s0, e0


def _integer_ok(n, m):
    """Whether :func:`_isotonic_integer`'s exactness argument holds for these fits."""
    W = float(n.sum(axis=1).max()) if n.size else 0.0
    return W < 2.0**50 and 3.0 * m * EPSILON * W * W < _ISO_EXACT_BOUND
