"""The diagnostics' batched replicate kernels: each statistic of two cohorts for many rows of counts at once.

A bootstrap replicate of two cohorts is a row of per-value counts of V-, V+,
T- and T+ on one score grid (:mod:`~beyondauc.metrics.uncertainty.replicates`).  Each
kernel reads the rows' cumulative sums, which a caller that runs several
kernels takes once (:func:`_lead_cumsum`), and what depends only on the grid
(:func:`_bias_units`) is computed once per bootstrap.  The temporaries live
in a few shared buffers (:func:`_workspace`).  Each kernel gives, row by
row, exactly its point-estimate twin's number on that row's resample.
"""

from __future__ import annotations

import numpy as np

from ..core.kernel import buffer_view, wasserstein_counts, wasserstein_merged
from ..core.logistic import unit_scale

__all__: list[str] = []


def sigma_units(sigma_max, lo, *scores):
    """``(s - lo) / sigma_max`` of each array: the scores in units of the largest shift or noise.

    Computed on the scores divided by a power of two near their largest
    magnitude (exact), so nothing overflows whatever their scale (1e300 or
    1e-300), and a shift of a whole ``sigma_max`` is exactly 1: a positive at
    the top of the range moved by ``sigma_max`` ties with a negative at the
    bottom at any scale, so the curves and scores do not change when the
    scores are multiplied by a positive number or shifted.
    """
    ends = np.array([lo, *(v for s in scores if len(s) for v in (s[0], s[-1]))], dtype=np.float64)
    _, e = unit_scale(ends)
    lo_n, sig_n = np.ldexp(lo, -e), np.ldexp(sigma_max, -e)
    return [(np.ldexp(s, -e) - lo_n) / sig_n for s in scores]


def bias_units(x: np.ndarray, sigma_max: float) -> tuple[np.ndarray, np.ndarray]:
    """The grid in units of ``sigma_max`` from its lowest value, and each value's first index above ``x - sigma_max``.

    What :func:`bias_rows` reads of the grid alone: the same for every
    replicate, so a bootstrap computes it once.
    """
    (xc,) = sigma_units(sigma_max, float(x[0]), x)
    return xc, np.searchsorted(xc, xc - 1.0, side="right")


def lead_cumsum(w: np.ndarray, out: np.ndarray | None = None, *, scratch: np.ndarray | None = None) -> np.ndarray:
    """Cumulative sums along the last axis after a leading 0, (..., m + 1): ``[..., j]`` sums the first j.

    ``scratch``: a flat int64 buffer of at least ``w.size``, given when ``w``
    holds whole numbers (counts): the sums are then taken in int64 and cast
    back, the same numbers (float64's sums of whole numbers are exact below
    2**53) in about a third of the time: a running float sum waits out each
    add's latency, an integer one barely does.
    """
    out = np.empty(w.shape[:-1] + (w.shape[-1] + 1,)) if out is None else out
    out[..., 0] = 0.0
    if scratch is None:
        np.cumsum(w, axis=-1, out=out[..., 1:])
    else:
        t = scratch[: w.size].reshape(w.shape)
        np.copyto(t, w, casting="unsafe")
        np.cumsum(t, axis=-1, out=t)
        np.copyto(out[..., 1:], t, casting="unsafe")
    return out


def workspace(R: int, m: int) -> list[np.ndarray]:
    """Seven flat 8-byte buffers for the batched kernels of up to R rows on a grid of m values.

    Every temporary of :func:`bias_rows`, :func:`drift_rows` and
    :func:`wasserstein_rows` is a view of one of the first five
    (:func:`~beyondauc.metrics.core.kernel.buffer_view`), the two counts' cumulative sums of the last two: a few
    large allocations shared by the kernels (and by the chunks of a
    bootstrap), not dozens of fresh arrays whose pages the system must map
    on each first touch.
    """
    return [np.empty(R * 2 * (m + 1), dtype=np.int64) for _ in range(7)]


def bias_rows(
    x: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    sigma_max: float,
    *,
    cn: np.ndarray | None = None,
    units: tuple[np.ndarray, np.ndarray] | None = None,
    work: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Bias robustness of each row at a fixed ``sigma_max``, and the AUC: two (R,) arrays.

    The batched twin of :func:`~beyondauc.metrics.diagnostics.cohorts.bias_robustness`, on counts (whole numbers:
    the AUC's sums are then exact, in any order).

    ``E[clip(s+ - s-, 0, sigma_max)]`` with weights: for positives at grid
    value j, negatives below ``x_j - sigma_max`` count ``sigma_max`` and those in
    between count ``x_j - s-``; the boundaries are fixed grid indices, so the
    sums are cumulative sums along each row.  In units of ``sigma_max``, as
    :func:`~beyondauc.metrics.diagnostics.cohorts.bias_robustness` (scale-free, overflow-free).  ``cn`` (the rows'
    :func:`_lead_cumsum` of ``neg``) and ``units`` (:func:`_bias_units`) are
    what a caller that has them passes, so they are computed once; ``work``
    (:func:`_workspace`) holds the temporaries.
    """
    xc, lo = bias_units(x, sigma_max) if units is None else units
    R, m = pos.shape
    cn = lead_cumsum(neg) if cn is None else cn
    w = workspace(R, m) if work is None else work
    cq, t, inner = buffer_view(w[0], (R, m + 1)), buffer_view(w[1], (R, m)), buffer_view(w[2], (R, m))
    cq[:, 0] = 0.0
    np.cumsum(np.multiply(neg, xc, out=t), axis=1, out=cq[:, 1:])
    # lo is in 0..m (m + 1 columns), so "wrap" changes no index: unbuffered like "clip", without its clamp
    t = np.subtract(cq[:, :m], np.take(cq, lo, axis=1, out=t, mode="wrap"), out=t)  # cq - cq_lo
    cn_lo = np.take(cn, lo, axis=1, out=buffer_view(w[0], (R, m)), mode="wrap")  # cq is read
    # cn_lo + (cn - cn_lo) * xc - (cq - cq_lo), in place
    inner = np.subtract(cn[:, :m], cn_lo, out=inner)
    inner *= xc
    inner += cn_lo
    inner -= t
    inner *= pos
    total = inner.sum(axis=1)
    n_pos, n_neg = pos.sum(axis=1), cn[:, m]
    # the AUC of the counts (ties one half): _auc_from_counts' sum, the negatives below read from cn
    below = np.multiply(neg, 0.5, out=t)
    below += cn[:, :m]
    below *= pos
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = np.where((n_pos > 0) & (n_neg > 0), below.sum(axis=1) / (n_pos * n_neg), np.nan)
        score = total / (n_pos * n_neg) / auc
    return np.where(np.isfinite(score) & (auc > 0), score, np.nan), auc


def drift_rows(
    x: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    *,
    cp: np.ndarray | None = None,
    cn: np.ndarray | None = None,
    work: list | None = None,
) -> np.ndarray:
    """Sensitivity/specificity drift of each row, (R,): :func:`~beyondauc.metrics.diagnostics.cohorts.sens_spec_drift` batched.

    ``pos``/``neg`` (R, 2, m): positive and negative counts of V (0) and T (1)
    per grid value ``x``.  The drift integrand is 0 outside each row's own
    score range, so one sum over the whole grid is exact; only the
    denominator is the row's range.  ``cp``/``cn``: their :func:`_lead_cumsum`
    when the caller has them; ``work``: a :func:`_workspace` for the temporaries.
    """
    R, m = len(pos), len(x)
    cp = lead_cumsum(pos) if cp is None else cp
    cn = lead_cumsum(neg) if cn is None else cn
    w = workspace(R, m) if work is None else work
    n_pos, n_neg = cp[:, :, m:], cn[:, :, m:]  # counts: the sums, exactly
    sens, spec, gap = buffer_view(w[0], (R, 2, m)), buffer_view(w[1], (R, 2, m)), buffer_view(w[2], (R, m))
    with np.errstate(invalid="ignore", divide="ignore"):
        # at grid value k: sens = P(s+ >= x_k), spec = P(s- < x_k)
        np.subtract(n_pos, cp[:, :, :m], out=sens)
        sens /= n_pos
        np.divide(cn[:, :, :m], n_neg, out=spec)
        np.subtract(sens[:, 0], sens[:, 1], out=gap)
        gap *= gap
        d = np.subtract(spec[:, 0], spec[:, 1], out=sens[:, 0])
        d *= d
        gap += d
    both = np.add(pos, neg, out=spec)
    present = np.add(both[:, 0], both[:, 1], out=sens[:, 0]) > 0
    lo = x[np.argmax(present, axis=1)]
    hi = x[m - 1 - np.argmax(present[:, ::-1], axis=1)]
    tail = np.multiply(gap[:, 1:], np.diff(x), out=gap[:, 1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        out = tail.sum(axis=1) / (hi - lo)
    undefined = (n_pos.min(axis=(1, 2)) == 0) | (n_neg.min(axis=(1, 2)) == 0) | (hi == lo)
    return np.where(undefined, np.nan, out)


def _wasserstein_pair(x: np.ndarray, a: tuple, b: tuple, p: float, work: list | None) -> np.ndarray:
    """p-Wasserstein distance between two weighted distributions (R, m) on grid x, (R,).

    ``a`` and ``b`` are each ``(w, c, s)``: the weights, their rows' cumulative sums and their column sums
    (a distribution in two pairs sums once); on the support the cumulative sums equal the sums
    of the support's columns exactly, since the columns left out add zeros.  ``work``: buffers
    for :func:`~beyondauc.metrics.core.kernel.wasserstein_counts` when the weights are whole numbers.
    """
    (wa, ca, sa), (wb, cb, sb) = a, b
    support = np.flatnonzero((sa + sb) > 0)  # values neither has add nothing
    cols = support if 0 < len(support) < len(x) else None
    x = x if cols is None else x[cols]
    if work is not None:  # whole numbers, p > 1: the support is gathered into the merge's buffers
        out = wasserstein_counts(x, ca, cb, p, work, cols=cols)
        if out is not None:
            return out
    if cols is not None:
        ca, cb = ca[:, cols], cb[:, cols]
        wa, wb = (None, None) if work is not None else (wa[:, cols], wb[:, cols])
    na, nb = (ca[:, -1], cb[:, -1]) if work is not None else (wa.sum(axis=1), wb.sum(axis=1))
    if p == 1:  # integral of |F_a - F_b|
        with np.errstate(invalid="ignore", divide="ignore"):
            fa = ca / na[:, None]
            fb = cb / nb[:, None]
        return (np.abs(fa - fb)[:, :-1] * np.diff(x)).sum(axis=1)
    # quantile functions: breakpoints Ca_j * nb and Cb_j * na over the denominator na * nb (integers
    # for count weights), merged per row; Q(u) is the value of the first breakpoint >= u.  In the merged
    # order a's breakpoints come before b's equal ones, and only the first of equal breakpoints has width
    return wasserstein_merged(x, ca * nb[:, None], cb * na[:, None], (na * nb)[:, None], p)


def wasserstein_rows(
    x: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    p: float,
    *,
    cp: np.ndarray | None = None,
    cn: np.ndarray | None = None,
    counts: bool | None = None,
    work: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """W = (V-V+ + T-T+) / (V-T- + V+T+) of each row, and the 2x2 matrices: (R,), (R, 2, 2).

    :func:`~beyondauc.metrics.diagnostics.cohorts.wasserstein_matrix` batched; ``pos``/``neg`` (R, 2, m) as in
    :func:`drift_rows`.
    The grid is divided by a power of two near its largest magnitude (exact) and the
    distances scaled back, as the point estimate's.  ``cp``/``cn``: the counts'
    :func:`_lead_cumsum` when the caller has them; ``counts``: whether the weights are whole
    numbers (None: checked); ``work``: a :func:`_workspace` for the merges.
    """
    x, e = unit_scale(x)
    if counts is None:
        counts = bool(np.array_equal(pos, np.trunc(pos)) and np.array_equal(neg, np.trunc(neg)))
    if counts and p != 1:  # buffers of the merges, shared by the four pairs
        work = workspace(len(pos), len(x)) if work is None else work
    else:
        work = None
    scratch = None if work is None else work[0]  # whole numbers: their sums in int64
    cp = lead_cumsum(pos, scratch=scratch) if cp is None else cp
    cn = lead_cumsum(neg, scratch=scratch) if cn is None else cn
    parts = {"vn": (neg, cn, 0), "vp": (pos, cp, 0), "tn": (neg, cn, 1), "tp": (pos, cp, 1)}
    w = {k: a[:, c] for k, (a, _, c) in parts.items()}
    cs = {k: s[:, c, 1:] for k, (_, s, c) in parts.items()}  # each distribution's cumulative sums, once
    cols = {k: a.sum(axis=0) for k, a in w.items()}

    def pair(a, b):
        return _wasserstein_pair(x, (w[a], cs[a], cols[a]), (w[b], cs[b], cols[b]), p, work)

    mat = np.stack(
        [
            np.stack([pair("vn", "vp"), pair("vn", "tn")], axis=1),
            np.stack([pair("tp", "vp"), pair("tp", "tn")], axis=1),
        ],
        axis=1,
    )
    num = mat[:, 0, 0] + mat[:, 1, 1]
    den = mat[:, 0, 1] + mat[:, 1, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(num > 0, np.inf, np.nan))
    return ratio, np.ldexp(mat, e)
