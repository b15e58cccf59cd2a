"""Bootstrap replicates of the selective-answering and diagnostics numbers, all at once.

A replicate is a row of per-value counts on a fixed score grid (see
:mod:`beyondauc.metrics.bootstrap`), so every function here takes count matrices of
shape (R, n_values) -- one row per replicate -- and returns one number per
row.  The kernels are the exact point-estimate kernels of
:mod:`beyondauc.metrics.selective` and :mod:`beyondauc.metrics.diagnostics` rewritten for
weights: cumulative sums along the rows, ``bincount`` on flat (row, bin)
indices, ``searchsorted`` on fixed grids or with a row offset.  There is no
Python loop over replicates, examples or thresholds.

The calibrators of :mod:`beyondauc.metrics.fitting` are refitted on every
replicate's calibration counts in one batch (:func:`calibrated_rows`), which
returns each replicate's calibrated probability and decision at every grid
value -- what :meth:`beyondauc.ScoreCalibrator.predict_proba` and ``predict``
give after fitting on that replicate's rows.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .fitting import (
    _float32_grid,
    _single_class,
    fit_predict_isotonic,
    logistic_decision,
    logistic_params,
    stump_decision,
    stump_params,
)
from .bootstrap import percentile_interval
from .kernel import _auc_from_counts
from ..utils.validation import warn_undefined

__all__: list[str] = []

CELLS = 1 << 22  # replicate x example (or grid value) cells held at once


def replicate_chunks(n_bootstrap, width):
    """(start, stop) blocks of replicates so a block's (replicates x width) arrays stay bounded."""
    size = max(1, min(n_bootstrap, CELLS // max(width, 1)))
    return [(i, min(i + size, n_bootstrap)) for i in range(0, n_bootstrap, size)]


def intervals_of(replicates, confidence_level):
    """``name -> (low, high)`` percentile intervals from a replicates frame (one column per number).

    NaN replicates (undefined in that resample) are left out; a number whose
    every replicate is NaN gets (NaN, NaN) and an UndefinedMetricWarning.
    """
    out = {}
    for name in replicates.columns:
        v = replicates[name].to_numpy(dtype=np.float64)
        if np.isnan(v).all():
            warn_undefined(f"every bootstrap replicate of {name!r} is undefined; its interval is NaN")
            out[name] = (np.nan, np.nan)
            continue
        low, high = percentile_interval(v, confidence_level)
        out[name] = (float(low), float(high))
    return out

_FLOOR = 0.001  # selective.py's floor of a, b and the fluctuation gap
_GRID_SLACK = 1e-9  # selective.py's grid slack


# -- calibrators, batched ---------------------------------------------------------------

def _isotonic_rows(x, pos, neg, at):
    """Isotonic fits ``IsotonicRegression(out_of_bounds="clip").predict`` at grid indices ``at``, (R, k).

    All rows are solved by one PAVA call on their concatenation, row r's
    ratios shifted by 2r: every ratio of row r + 1 then exceeds every ratio of
    row r, so no block pools across rows and each row's blocks are its own
    solution.  Block means are recomputed unshifted from the counts, knots
    trimmed as scikit-learn does, and the grid values ``at`` interpolated
    with :func:`beyondauc.metrics.fitting.isotonic_transform`'s formula.
    """
    from scipy.optimize import isotonic_regression
    R, m = pos.shape
    n = pos + neg
    present = n > 0
    rows, cols = np.nonzero(present)  # row-major: rows ascending, grid ascending within a row
    w = n[rows, cols]
    p_ = pos[rows, cols]
    fit = isotonic_regression(p_ / w + 2.0 * rows, weights=w)
    starts = np.asarray(fit.blocks[:-1])
    mean = np.add.reduceat(p_, starts) / np.add.reduceat(w, starts)
    y = np.full((R, m + 1), np.nan)  # a NaN column at m stands for "no such knot"
    y[rows, cols] = np.repeat(mean, np.diff(fit.blocks))

    def take(a, idx):
        return np.take_along_axis(a, idx, axis=1)

    # trimming: drop interior points of constant runs (among each row's present values)
    idx = np.arange(m)
    last_present = np.maximum.accumulate(np.where(present, idx, -1), axis=1)  # last present <= j
    next_present = np.minimum.accumulate(np.where(present, idx, m)[:, ::-1], axis=1)[:, ::-1]  # first >= j
    prev_i = np.concatenate([np.full((R, 1), -1), last_present[:, :-1]], axis=1)
    next_i = np.concatenate([next_present[:, 1:], np.full((R, 1), m)], axis=1)
    yv = y[:, :m]
    interior = (prev_i >= 0) & (next_i < m)
    flat_run = (yv == take(y, np.where(prev_i >= 0, prev_i, m))) & (yv == take(y, next_i))
    keep = present & ~(interior & flat_run)
    first = np.argmax(keep, axis=1)
    last = m - 1 - np.argmax(keep[:, ::-1], axis=1)
    nxt = np.minimum.accumulate(np.where(keep, idx, m)[:, ::-1], axis=1)[:, ::-1]  # first knot >= j
    prv = np.maximum.accumulate(np.where(keep, idx, -1), axis=1)  # last knot <= j
    # knots around each wanted grid value, as isotonic_transform's searchsorted finds them
    at = np.asarray(at)
    j = np.broadcast_to(at, (R, len(at)))
    hi = np.where(j > last[:, None], last[:, None], nxt[:, at])  # clipped to the last knot
    lo = take(prv, np.maximum(hi - 1, 0))  # the last knot before hi
    lo = np.where(hi > 0, lo, -1)
    # searchsorted gives 0 at the first knot; it is clipped to 1: lo = first, hi = second knot
    at_first = hi == first[:, None]
    second = nxt[np.arange(R), np.minimum(first + 1, m - 1)]
    hi = np.where(at_first, second[:, None], hi)
    lo = np.where(at_first, first[:, None], lo)
    t = np.clip(x[at][None, :], x[first][:, None], x[last][:, None])
    hi_c, lo_c = np.clip(hi, 0, m - 1), np.clip(lo, 0, m - 1)
    y_hi, y_lo = take(yv, hi_c), take(yv, lo_c)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (y_hi - y_lo) / (x[hi_c] - x[lo_c])
        val = slope * (t - x[lo_c]) + y_lo
    one = keep.sum(axis=1) == 1
    if one.any():
        val[one] = yv[one, first[one]][:, None]
    return val


def calibrated_rows(method, x, pos, neg, *, init=None, at=None):
    """Refit a calibrator on each row of grid counts; probability and decision at grid values.

    ``pos``/``neg`` (R, m) are the (class-weighted) calibration counts per grid
    value.  Returns ``proba`` (R, k) float and ``pred`` (R, k) bool at the grid
    indices ``at`` (default: all m), as :class:`~beyondauc.ScoreCalibrator`
    fitted on each row's examples would give (a row with a single class
    predicts that class with probability 0/1).
    """
    single = _single_class(pos, neg)
    at = np.arange(len(x)) if at is None else np.asarray(at)
    if method == "logistic":
        b0, b1 = logistic_params(x, pos, neg, init=init)
        xa = x[at]
        proba = expit(xa[None, :] * b1[:, None] + b0[:, None])
        pred = logistic_decision(xa, b0, b1)
    elif method == "isotonic":
        proba = np.zeros((pos.shape[0], len(at)))
        fit = single < 0
        if fit.any():
            proba[fit] = _isotonic_rows(x, pos[fit], neg[fit], at)
        # decisions from the batched fitter, which reproduces scikit-learn's rounding where a
        # block is fitted at exactly 0.5 (the probabilities above can differ from it by an ulp)
        pred = fit_predict_isotonic(x, pos, neg)[:, at]
    else:
        x32, p32, n32, group = _float32_grid(x, pos, neg)
        thr, lc, rc = stump_params(x32, p32, n32)
        left = stump_decision(x32, thr, np.ones(len(thr), np.int8), np.zeros(len(thr), np.int8))
        lp, ln = np.where(left, p32, 0.0).sum(axis=1), np.where(left, n32, 0.0).sum(axis=1)
        rp, rn = p32.sum(axis=1) - lp, n32.sum(axis=1) - ln
        with np.errstate(invalid="ignore", divide="ignore"):
            leaf_l = np.where(lp + ln > 0, lp / (lp + ln), 0.0)
            leaf_r = np.where(rp + rn > 0, rp / (rp + rn), 0.0)
        cols = at if group is None else group[at]
        left = left[:, cols]
        proba = np.where(left, leaf_l[:, None], leaf_r[:, None])
        pred = stump_decision(x32[cols], thr, lc, rc)
    for cls in (0, 1):
        rows = single == cls
        if rows.any():
            proba[rows] = float(cls)
            pred[rows] = bool(cls)
    return proba, pred


# -- selective answering -------------------------------------------------------------

def exact_area_rows(conf, n_ok, n_wrong):
    """Area under the exact coverage-accuracy curve of each row, (R,).

    ``conf`` (R, m) or (m,): the confidence of each grid value; ``n_ok`` and
    ``n_wrong`` (R, m) the (weighted) correct and wrong answers there.  Tied
    confidences enter together: every example's accuracy term is that of the
    last point of its tie group.
    """
    w = n_ok + n_wrong
    R, m = w.shape
    conf = np.broadcast_to(conf, (R, m))
    order = np.argsort(-conf, axis=1, kind="stable")
    cs = np.take_along_axis(conf, order, axis=1)
    ws = np.take_along_axis(w, order, axis=1)
    answered = np.cumsum(ws, axis=1)
    right = np.cumsum(np.take_along_axis(n_ok, order, axis=1), axis=1)
    end = np.ones((R, m), dtype=bool)
    end[:, :-1] = cs[:, :-1] != cs[:, 1:]
    idx = np.arange(m)
    end_idx = np.minimum.accumulate(np.where(end, idx, m)[:, ::-1], axis=1)[:, ::-1]
    r_ = np.arange(R)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right[r_, end_idx] / answered[r_, end_idx]
    return np.where(ws > 0, ws * acc, 0.0).sum(axis=1) / answered[:, -1]


def selective_rows(conf, n_ok, n_wrong, *, resolution, tolerance, weights):
    """Area, AURC, accuracy, a, b, fluctuations, penalty and DiSCA of each row, as a dict of (R,).

    Exactly :func:`beyondauc.disca` and :func:`beyondauc.aurc` on the
    examples each row's counts describe.  The grid curve is a (rows x bins)
    count matrix from one flat ``bincount``; a point is a non-empty bin.
    """
    n_ok = np.asarray(n_ok, dtype=np.float64)
    n_wrong = np.asarray(n_wrong, dtype=np.float64)
    w = n_ok + n_wrong
    R, m = w.shape
    conf = np.broadcast_to(np.asarray(conf, dtype=np.float64), (R, m))
    area = exact_area_rows(conf, n_ok, n_wrong)
    present = w > 0
    cmax = np.where(present, conf, -np.inf).max(axis=1)
    with np.errstate(invalid="ignore"):
        step = np.ceil((cmax[:, None] - conf) / resolution - _GRID_SLACK)
    step = np.where(present, step, 0).astype(np.int64)
    nb = int(step.max()) + 1 if step.size else 1
    flat = (np.arange(R)[:, None] * nb + step).ravel()
    cnt = np.bincount(flat, weights=w.ravel(), minlength=R * nb).reshape(R, nb)
    ok = np.bincount(flat, weights=n_ok.ravel(), minlength=R * nb).reshape(R, nb)
    cmin = np.full(R * nb, np.inf)
    keep = present.ravel()
    np.minimum.at(cmin, flat[keep], conf.ravel()[keep])
    cmin = cmin.reshape(R, nb)
    answered, right = np.cumsum(cnt, axis=1), np.cumsum(ok, axis=1)
    point = cnt > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right / answered
    rows = np.arange(R)
    last = nb - 1 - np.argmax(point[:, ::-1], axis=1)

    def first_below(level):
        below = point & (acc < level)
        k = np.where(below.any(axis=1), np.argmax(below, axis=1), last)
        return np.maximum(cmin[rows, k], _FLOOR)

    a, b = first_below(1.0), first_below(tolerance)
    bins = np.arange(nb)
    prev = np.maximum.accumulate(np.where(point, bins, -1), axis=1)
    prev = np.concatenate([np.full((R, 1), -1), prev[:, :-1]], axis=1)
    has_prev = point & (prev >= 0)
    pk = np.maximum(prev, 0)
    d1, c1 = acc[rows[:, None], pk], cmin[rows[:, None], pk]
    with np.errstate(invalid="ignore"):
        rise = has_prev & (acc > d1)
    n_fl = rise.sum(axis=1)
    i = np.cumsum(rise, axis=1)
    x_w, y_w, z_w = weights
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(rise, (n_fl[:, None] - i + 1) * (acc - d1) / np.maximum(c1 - cmin, _FLOOR), 0.0)
        penalty = np.where(n_fl > 0, z_w * term.sum(axis=1) / (n_fl * (n_fl + 1) / 2.0), 0.0)
    magnitude = np.where(rise, acc - d1, 0.0).sum(axis=1)
    return {
        "accuracy": right[:, -1] / answered[:, -1],
        "area": area,
        "aurc": 1.0 - area,
        "disca": x_w / a + y_w / b - penalty,
        "a": a,
        "b": b,
        "n_fluctuations": n_fl.astype(np.float64),
        "fluctuation_magnitude": magnitude,
        "penalty": penalty,
    }


def accuracy_at_coverages(conf, n_ok, n_wrong, coverages):
    """Accuracy of each row's exact curve at fixed coverage levels, (R, k).

    As :func:`beyondauc.accuracy_at_coverage`: the accuracy of the first
    exact-curve point (tie groups enter together) whose coverage reaches the level.
    """
    w = n_ok + n_wrong
    R, m = w.shape
    conf = np.broadcast_to(conf, (R, m))
    order = np.argsort(-conf, axis=1, kind="stable")
    cs = np.take_along_axis(conf, order, axis=1)
    answered = np.cumsum(np.take_along_axis(w, order, axis=1), axis=1)
    right = np.cumsum(np.take_along_axis(n_ok, order, axis=1), axis=1)
    end = np.ones((R, m), dtype=bool)
    end[:, :-1] = cs[:, :-1] != cs[:, 1:]
    total = answered[:, -1:]
    # coverage at group ends (non-decreasing along the row); elsewhere carry the end's value
    idx = np.arange(m)
    end_idx = np.minimum.accumulate(np.where(end, idx, m)[:, ::-1], axis=1)[:, ::-1]
    r_ = np.arange(R)[:, None]
    cov = answered[r_, end_idx] / total
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right[r_, end_idx] / answered[r_, end_idx]
    levels = np.asarray(coverages, dtype=np.float64) - 1e-12
    # first position whose (group-end) coverage reaches the level: row-offset searchsorted
    flat = (cov + 2.0 * np.arange(R)[:, None]).ravel()
    q = (levels[None, :] + 2.0 * np.arange(R)[:, None]).ravel()
    pos = np.searchsorted(flat, q, side="left").reshape(R, -1) - (np.arange(R) * m)[:, None]
    pos = np.clip(pos, 0, m - 1)
    return acc[r_, pos]


# -- diagnostics ------------------------------------------------------------------------

def drift_rows(x, pos, neg):
    """Sensitivity/specificity drift of each row, (R,).

    ``pos``/``neg`` (R, 2, m): positive and negative counts of V (0) and T (1)
    per grid value ``x``.  The drift integrand is 0 outside each row's own
    score range, so one sum over the whole grid is exact; only the
    denominator is the row's range.
    """
    n_pos = pos.sum(axis=2, keepdims=True)
    n_neg = neg.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # at grid value k: sens = P(s+ >= x_k), spec = P(s- < x_k)
        sens = (n_pos - (np.cumsum(pos, axis=2) - pos)) / n_pos
        spec = (np.cumsum(neg, axis=2) - neg) / n_neg
        gap = (sens[:, 0] - sens[:, 1]) ** 2 + (spec[:, 0] - spec[:, 1]) ** 2
    present = (pos + neg).sum(axis=1) > 0
    m = len(x)
    lo = x[np.argmax(present, axis=1)]
    hi = x[m - 1 - np.argmax(present[:, ::-1], axis=1)]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (gap[:, 1:] * np.diff(x)).sum(axis=1) / (hi - lo)
    undefined = (n_pos.min(axis=(1, 2)) == 0) | (n_neg.min(axis=(1, 2)) == 0) | (hi == lo)
    return np.where(undefined, np.nan, out)


def bias_rows(x, pos, neg, sigma_max):
    """Bias robustness of each row at a fixed ``sigma_max``, and the AUC: two (R,) arrays.

    ``E[clip(s+ - s-, 0, sigma_max)]`` with weights: for positives at grid
    value j, negatives below ``x_j - sigma_max`` count ``sigma_max`` and those in
    between count ``x_j - s-``; the boundaries are fixed grid indices, so the
    sums are cumulative sums along each row.
    """
    xc = x - x[0]
    R, m = pos.shape
    lo = np.searchsorted(xc, xc - sigma_max, side="right")
    hi = np.arange(m)
    cn = np.concatenate([np.zeros((R, 1)), np.cumsum(neg, axis=1)], axis=1)
    cq = np.concatenate([np.zeros((R, 1)), np.cumsum(neg * xc, axis=1)], axis=1)
    inner = sigma_max * cn[:, lo] + (cn[:, hi] - cn[:, lo]) * xc - (cq[:, hi] - cq[:, lo])
    total = (pos * inner).sum(axis=1)
    n_pos, n_neg = pos.sum(axis=1), neg.sum(axis=1)
    auc = _auc_from_counts(pos, neg)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = total / (n_pos * n_neg) / (auc * sigma_max)
    return np.where(np.isfinite(score) & (auc > 0), score, np.nan), auc


def _wasserstein_pair(x, wa, wb, p):
    """p-Wasserstein distance between the weighted distributions wa and wb (R, m) on grid x, (R,)."""
    support = np.flatnonzero((wa.sum(axis=0) + wb.sum(axis=0)) > 0)  # values neither has add nothing
    if 0 < len(support) < len(x):
        x, wa, wb = x[support], wa[:, support], wb[:, support]
    na, nb = wa.sum(axis=1), wb.sum(axis=1)
    if p == 1:  # integral of |F_a - F_b|
        with np.errstate(invalid="ignore", divide="ignore"):
            fa = np.cumsum(wa, axis=1) / na[:, None]
            fb = np.cumsum(wb, axis=1) / nb[:, None]
        return (np.abs(fa - fb)[:, :-1] * np.diff(x)).sum(axis=1)
    # quantile functions: breakpoints Ca_j * nb and Cb_j * na over the denominator na * nb (integers
    # for count weights), merged per row; Q(u) is the value of the first breakpoint >= u
    R, m = wa.shape
    ka = np.cumsum(wa, axis=1) * nb[:, None]
    kb = np.cumsum(wb, axis=1) * na[:, None]
    both = np.concatenate([ka, kb], axis=1)
    # a stable sort of two sorted runs is a merge; a's breakpoints come before b's equal ones.  At
    # merged position t an element of a (index j) has t - j elements of b below it, i.e. the first
    # b breakpoint >= it is t - j (and symmetrically); only the first of equal breakpoints has width
    order = np.argsort(both, axis=1, kind="stable")
    k = np.take_along_axis(both, order, axis=1)
    from_a = order < m
    j = np.where(from_a, order, order - m)
    t = np.arange(2 * m)[None, :]
    ia = np.minimum(np.where(from_a, j, t - j), m - 1)
    ib = np.minimum(np.where(from_a, t - j, j), m - 1)
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty class: NaN
        width = np.diff(k, axis=1, prepend=0.0) / (na * nb)[:, None]
        gap = np.abs(x[ia] - x[ib])
        return (width * gap**p).sum(axis=1) ** (1.0 / p)


def wasserstein_rows(x, pos, neg, p):
    """W = (V-V+ + T-T+) / (V-T- + V+T+) of each row, and the 2x2 matrices: (R,), (R, 2, 2)."""
    vn, vp, tn, tp = neg[:, 0], pos[:, 0], neg[:, 1], pos[:, 1]
    mat = np.stack(
        [
            np.stack([_wasserstein_pair(x, vn, vp, p), _wasserstein_pair(x, vn, tn, p)], axis=1),
            np.stack([_wasserstein_pair(x, tp, vp, p), _wasserstein_pair(x, tp, tn, p)], axis=1),
        ],
        axis=1,
    )
    num = mat[:, 0, 0] + mat[:, 1, 1]
    den = mat[:, 0, 1] + mat[:, 1, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(num > 0, np.inf, np.nan))
    return w, mat


def roc_band(x, pos, neg, fpr_grid):
    """TPR of each row's ROC polyline at fixed false positive rates, (R, k).

    ``pos``/``neg`` (R, m): class counts per grid value ``x`` (ascending).
    The ROC runs over descending thresholds; at an FPR where the curve rises
    vertically the top of the rise is taken, elsewhere it is interpolated
    linearly (as the curve is drawn).  NaN where a row lacks a class.
    """
    R, m = pos.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.concatenate([np.zeros((R, 1)), np.cumsum(pos[:, ::-1], axis=1)], axis=1) / pos.sum(axis=1)[:, None]
        fpr = np.concatenate([np.zeros((R, 1)), np.cumsum(neg[:, ::-1], axis=1)], axis=1) / neg.sum(axis=1)[:, None]
    f = np.asarray(fpr_grid, dtype=np.float64)
    off = 2.0 * np.arange(R)[:, None]
    j = np.searchsorted((fpr + off).ravel(), (f[None, :] + off).ravel(), side="right").reshape(R, -1)
    j = j - (np.arange(R) * (m + 1))[:, None]
    i = np.clip(j - 1, 0, m)
    jj = np.clip(j, 0, m)
    r_ = np.arange(R)[:, None]
    f0, f1, t0, t1 = fpr[r_, i], fpr[r_, jj], tpr[r_, i], tpr[r_, jj]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(f1 > f0, t0 + (f[None, :] - f0) * (t1 - t0) / (f1 - f0), t0)
    return out
