"""The grid bootstrap's fast path for the fits calibrated on every dataset but the one they evaluate (xdomain).

With integer counts (no class weights) a fit on "all but dataset k" is the total
minus dataset k, exactly, whatever the order of the sums.  So the per-value counts
are kept as the total (R, m) on the model's grid plus each dataset's counts on its
own grid (R, n_local), never as (R, D, m); decisions are taken only at the
evaluated dataset's values; the logistic fits' first Newton step is a matrix
product (it starts at the same point in every replicate); and the stump's best
split is found by bounding blocks of candidate splits (the Gini gain is convex in
the cumulative counts), then evaluating exactly, with scikit-learn's arithmetic,
only the blocks that can hold the maximum.  The stump splits the float64 grid
itself (the scale-free stump of :mod:`beyondauc.metrics.core.fitting`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..core.fitting import EPSILON
from ..core.isotonic import fit_predict_isotonic
from ..core.logistic import (
    NewtonStop,
    conditioned_grid,
    conditioned_params,
    logistic_params,
    newton_direction,
    raw_params,
)
from .replicate_fits import LOGISTIC_STEPS, confusion_scores

__all__ = [
    "XGrid",
    "taylor_sums",
    "xdomain_cal_rows",
    "xdomain_logistic_params",
    "xdomain_ok",
    "xdomain_scores",
]

_STUMP_BLOCK = 32  # candidate splits per block of the stump's branch and bound
_ISO_CELLS = 262_144  # grid cells per call of the isotonic fitter


def xdomain_ok(fits, sizes, D, class_weight):
    if class_weight is not None or D < 2 or (sizes == 0).any():
        return []  # no fit on the fast path (one dataset: no other to calibrate on)
    everything = set(range(D))
    return [
        k
        for k, f in enumerate(fits)
        if tuple(f.evl) == (f.dataset,) and set(f.cal) == everything - {f.dataset} and len(f.cal) == D - 1
    ]


class XGrid:
    """Static layout of one model's grids for the fast path."""

    def __init__(self, x, inv, local_col, first_col, n_local, D):
        self.x, self.m = x, len(x)
        self.n_local = n_local
        g = np.empty(n_local, dtype=np.int64)
        g[local_col] = inv
        self.g = g
        starts = np.append(first_col, n_local)
        self.starts = first_col.astype(np.int64)
        self.bounds = starts  # dataset k's local columns: bounds[k]:bounds[k + 1]
        self.code = np.repeat(np.arange(D), np.diff(starts))  # dataset of each local column
        # stump: padded local cumulative counts (a 0 before each dataset) and, per dataset
        # and grid value, the padded index of dataset k's cumulative count there
        self.pad = np.arange(n_local) + self.code + 1
        self.pad_off = self.starts + np.arange(D)
        idx = np.empty((D, self.m), dtype=np.int64)
        pos = np.arange(self.m)
        for k in range(D):
            gk = g[starts[k] : starts[k + 1]]
            idx[k] = self.pad_off[k] + np.searchsorted(gk, pos, side="right")
        self.idx = idx
        self.pad_end = self.pad_off + np.diff(starts)
        self.x_loc = x[g]

    def total(self, L):
        """Per-value totals over all datasets of local counts ``L`` (R, n_local) on the grid, (R, m).

        One flat ``bincount`` (integer counts: exact whatever the order of the additions).
        """
        R = len(L)
        flat = (np.arange(R, dtype=np.int64)[:, None] * self.m + self.g[None, :]).ravel()
        return np.bincount(flat, weights=L.ravel(), minlength=R * self.m).reshape(R, self.m)

    def seg_sum(self, A):
        return np.add.reduceat(A, self.starts, axis=1)  # (R, D)


def _confusion_local(pred_loc, Pl, Nl, xg):
    tp = xg.seg_sum(np.where(pred_loc, Pl, 0.0))
    fp = xg.seg_sum(np.where(pred_loc, Nl, 0.0))
    npos, nneg = xg.seg_sum(Pl), xg.seg_sum(Nl)
    return tp, fp, npos - tp, nneg - fp


def _single_rows(tpos, tneg):
    single = np.full(tpos.shape, -1, dtype=np.int8)
    single[(tpos > 0) & ~(tneg > 0)] = 1
    single[~(tpos > 0)] = 0
    return single


def _override_local(pred_loc, single_rd, code):
    s = single_rd[:, code]  # (R, n_local)
    return np.where(s >= 0, s == 1, pred_loc)


def _stump_gain_ub(a, b, P, N):
    """Upper bound helper: g(a, b) = (a^2+b^2)/(a+b) + ((P-a)^2+(N-b)^2)/(P+N-a-b), 0/0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        nl, nr = a + b, (P - a) + (N - b)
        t1 = np.where(nl > 0, (a * a + b * b) / nl, 0.0)
        t2 = np.where(nr > 0, ((P - a) ** 2 + (N - b) ** 2) / nr, 0.0)
    return t1 + t2


@dataclass(frozen=True)
class _StumpCounts:
    """The cumulative calibration counts the D stumps of every replicate read (fit k: all datasets but k).

    ``CTp``/``CTn`` (R, m): cumulative totals on the grid; ``LP``/``LN``
    (R, n_local + D): each dataset's own cumulative counts, padded (a 0 before each
    dataset); ``TPk``/``TNk`` (R, D): each fit's class totals.
    """

    xg: XGrid
    CTp: np.ndarray
    CTn: np.ndarray
    LP: np.ndarray
    LN: np.ndarray
    TPk: np.ndarray
    TNk: np.ndarray

    def at(self, r, k, j):
        """Cumulative calibration counts (positives, negatives) of fits (r, k) at grid positions j < m."""
        ix = self.xg.idx[k, j]  # padded local index of dataset k's own cumulative count
        return self.CTp[r, j] - self.LP[r, ix], self.CTn[r, j] - self.LN[r, ix]


def _stump_counts(xg, Pl, Nl, totals):
    """Cumulative counts of the D stumps from the local counts (and the totals ``totals`` on the grid, if computed)."""
    R, D = len(Pl), len(xg.starts)
    Tp, Tn = (xg.total(Pl), xg.total(Nl)) if totals is None else totals
    CTp, CTn = np.cumsum(Tp, axis=1), np.cumsum(Tn, axis=1)
    cl_p, cl_n = np.cumsum(Pl, axis=1), np.cumsum(Nl, axis=1)
    LP = np.zeros((R, xg.n_local + D))
    LN = np.zeros((R, xg.n_local + D))
    base_p = np.concatenate([np.zeros((R, 1)), cl_p], axis=1)[:, xg.starts]  # before each dataset
    base_n = np.concatenate([np.zeros((R, 1)), cl_n], axis=1)[:, xg.starts]
    LP[:, xg.pad] = cl_p - base_p[:, xg.code]
    LN[:, xg.pad] = cl_n - base_n[:, xg.code]
    TPk = CTp[:, -1][:, None] - LP[:, xg.pad_end]  # (R, D) calibration totals
    TNk = CTn[:, -1][:, None] - LN[:, xg.pad_end]
    return _StumpCounts(xg, CTp, CTn, LP, LN, TPk, TNk)


def _stump_block_bounds(c):
    """Upper bounds (R * D, n_blocks) of scikit-learn's proxy over each block of candidate splits, and margins (R * D,).

    The Gini gain is convex in the cumulative counts, so a block's four corners bound it.
    """
    R, D = c.TPk.shape
    m, bs = c.xg.m, _STUMP_BLOCK
    nb = (m + bs - 1) // bs
    s_pos = np.arange(nb) * bs
    e_pos = np.minimum(s_pos + bs, m) - 1
    jb = np.broadcast_to(np.concatenate([s_pos, e_pos])[None, None, :], (R, D, 2 * nb))
    cp, cn = c.at(np.arange(R)[:, None, None], np.arange(D)[None, :, None], np.minimum(jb, m - 1))
    P3, N3 = c.TPk[..., None], c.TNk[..., None]
    alo, ahi, blo, bhi = cp[..., :nb], cp[..., nb:], cn[..., :nb], cn[..., nb:]
    ub = np.maximum(
        np.maximum(_stump_gain_ub(alo, blo, P3, N3), _stump_gain_ub(alo, bhi, P3, N3)),
        np.maximum(_stump_gain_ub(ahi, blo, P3, N3), _stump_gain_ub(ahi, bhi, P3, N3)),
    )
    total = c.TPk + c.TNk
    ub = ub - total[..., None]  # bound on scikit-learn's proxy (gain minus the total)
    margin = 1e-9 * (total + 1.0)
    return ub.reshape(R * D, nb), margin.reshape(R * D)


def _stump_proxy(c, rows, blocks):
    """scikit-learn's proxy at every candidate of the given (fit row, block) pairs: (n, block), -inf if invalid.

    Also returns the candidates' grid positions and cumulative counts (positives, negatives).
    """
    m, bs = c.xg.m, _STUMP_BLOCK
    r, k = np.divmod(rows, c.TPk.shape[1])
    j = blocks[:, None] * bs + np.arange(bs)[None, :]
    inside = j < m
    jj = np.minimum(j, m - 1)
    cpos, cneg = c.at(r[:, None], k[:, None], jj)
    tpos, tneg = c.TPk[r, k][:, None], c.TNk[r, k][:, None]
    tot = tpos + tneg
    n_left = cpos + cneg
    n_right = tot - n_left
    rp, rn = tpos - cpos, tneg - cneg
    with np.errstate(divide="ignore", invalid="ignore"):
        gini_l = 1.0 - (cneg * cneg + cpos * cpos) / (n_left * n_left)
        gini_r = 1.0 - (rn * rn + rp * rp) / (n_right * n_right)
        proxy = -n_right * gini_r - n_left * gini_l
    valid = inside & (n_left > 0) & (n_right > 0)
    return np.where(valid, proxy, -np.inf), j, cpos, cneg


def _stump_best_split(c, ub, margin):
    """Each fit's first best split (R * D,): grid position, cumulative counts there, and whether one is valid.

    The exact proxy in each fit's block of highest bound is a lower bound on its maximum;
    only the blocks whose bound reaches it are then evaluated exactly.
    """
    RD, nb = ub.shape
    top = np.argmax(ub, axis=1)
    pr1, _, _, _ = _stump_proxy(c, np.arange(RD), top)
    lb = pr1.max(axis=1)
    sel = (ub + margin[:, None] >= lb[:, None]) | (np.arange(nb)[None, :] == top[:, None])
    rows, blocks = np.nonzero(sel)
    pr, j, cpos, cneg = _stump_proxy(c, rows, blocks)
    bmax = pr.max(axis=1)
    barg = np.argmax(pr, axis=1)
    row_start = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    rmax = np.maximum.reduceat(bmax, row_start)
    hit = bmax == np.repeat(rmax, np.diff(np.append(row_start, len(rows))))
    # first hit per row: pairs are sorted by row then block
    first_hit = np.full(RD, -1, dtype=np.int64)
    h = np.flatnonzero(hit)
    hr = rows[h]
    firsts = h[np.concatenate([[True], hr[1:] != hr[:-1]])]
    first_hit[rows[firsts]] = firsts
    best_at = (first_hit, barg[first_hit])
    return j[best_at], cpos[best_at], cneg[best_at], rmax > -np.inf


def _stump_next_value(c, best, splits, nl_best):
    """Per fit (R * D,), the next grid position after its best split that has calibration weight."""
    m, bs = c.xg.m, _STUMP_BLOCK
    rr1, k1 = np.divmod(np.arange(len(best)), c.TPk.shape[1])
    nxt = np.full(len(best), m - 1, dtype=np.int64)
    todo = np.flatnonzero(splits)
    start = best[todo] + 1
    while todo.size:  # a block of positions at a time, for the fits not yet found
        jw = start[:, None] + np.arange(bs)[None, :]
        jc = np.minimum(jw, m - 1)
        cp, cn = c.at(rr1[todo][:, None], k1[todo][:, None], jc)
        nl = cp + cn
        found = (nl > nl_best[todo][:, None]) & (jw < m)
        got = found.any(axis=1)
        nxt[todo[got]] = jw[got, np.argmax(found[got], axis=1)]
        todo, start = todo[~got], start[~got] + bs
        keep = start < m
        todo, start = todo[keep], start[keep]
    return nxt


def _stump_leaves(c, best, cpb, cnb, has):
    """Thresholds (NaN: no split) and leaf classes (R, D) of the D stumps, as scikit-learn sets them."""
    R, D = c.TPk.shape
    tpos, tneg = c.TPk.reshape(R * D), c.TNk.reshape(R * D)
    tot = tpos + tneg
    root_impurity = 1.0 - (tneg * tneg + tpos * tpos) / np.where(tot > 0, tot * tot, 1.0)
    splits = has & (root_impurity > EPSILON)
    nxt = _stump_next_value(c, best, splits, cpb + cnb)
    xs = c.xg.x
    xj, xk = xs[best], xs[nxt]
    thr = xj / 2.0 + xk / 2.0
    thr = np.where((thr == xk) | np.isinf(thr), xj, thr)
    rp, rn = tpos - cpb, tneg - cnb
    left_c = np.where(splits, cpb > cnb, tpos > tneg)
    right_c = np.where(splits, rp > rn, tpos > tneg)
    thr = np.where(splits, thr, np.nan).reshape(R, D)
    return thr, left_c.reshape(R, D), right_c.reshape(R, D)


def _xdomain_stump(xg, Pl, Nl, totals=None):
    """Decisions of the D stumps (fit k: all datasets but k) at the local columns, (R, n_local).

    ``totals``: the totals (positives, negatives) on the grid, if already computed.
    """
    c = _stump_counts(xg, Pl, Nl, totals)
    ub, margin = _stump_block_bounds(c)
    best, cpb, cnb, has = _stump_best_split(c, ub, margin)
    thr, left_c, right_c = _stump_leaves(c, best, cpb, cnb, has)
    code = xg.code
    go_left = ~(xg.x_loc[None, :] > thr[:, code])
    pred = np.where(go_left, left_c[:, code], right_c[:, code])
    return _override_local(pred, _single_rows(c.TPk, c.TNk), code)


# Moments of the logistic fits' Taylor expansion: (order c of the derivative of expit, power e
# of the standardised score), for c = 0..4 and e = 0..c+1 -- what the gradient to fourth
# order and the Hessian to second order in the step need.
_TAYLOR = 4
_MOMENT_COLUMNS = 2048  # grid values per block of the moments' matrix products (temporaries in cache)


def _expit_derivatives(beta0, xs):
    """expit and its first four derivatives at ``beta0[:, 0] + beta0[:, 1] * xs``: (5, K, len(xs))."""
    p = expit(beta0[:, :1] + beta0[:, 1:] * xs[None, :])
    w = p - p * p
    return np.stack((p, w, w * (1.0 - 2.0 * p), w * (1.0 - 6.0 * w), w * (1.0 - 2.0 * p) * (1.0 - 12.0 * w)))


def taylor_sums(counts, xs, beta0, code=None):
    """``sum_j counts[r, j] * xs_j**e * expit^(c)(beta0[k, 0] + beta0[k, 1] * xs_j)``: (R, 5, K, 6).

    Every (c, e) with e <= c + 1 (the others are 0), for every replicate r and fit k;
    with ``code`` (columns,), column j is left out of fit ``code[j]``'s sums (its own
    dataset).  The derivatives are computed a block of columns at a time (never
    (K, columns) whole), and each power of ``xs`` multiplies the counts: one matrix
    product per power and block, O(R K columns) multiply-adds in all.
    """
    R, n = counts.shape
    K = len(beta0)
    out = np.zeros((R, _TAYLOR + 1, K, _TAYLOR + 2))
    for j0 in range(0, n, _MOMENT_COLUMNS):  # a loop over blocks of columns
        j1 = min(n, j0 + _MOMENT_COLUMNS)
        xb = xs[j0:j1]
        der = _expit_derivatives(beta0, xb)  # (5, K, block)
        if code is not None:
            der[:, code[j0:j1], np.arange(j1 - j0)] = 0.0
        ce = counts[:, j0:j1]
        for e in range(_TAYLOR + 2):
            if e:
                ce = ce * xb
            c0 = max(0, e - 1)
            out[:, c0:, :, e] += (ce @ der[c0:].reshape(-1, j1 - j0).T).reshape(R, -1, K)
    return out


def _xdomain_moments(xg, Pl, Nl, beta0, xs):
    """The sums every fit's first two Newton steps read, over its counts (every dataset's but its own).

    Returns the moments ``{(c, e): (R, D)}`` of :func:`taylor_sums` at each fit's
    ``beta0``, the positives' sums of 1 and xs (R, D, 2), the plain sums of 1, xs
    and xs**2 (R, D, 3) (the fit's standardisation) and the class totals (R, D) each.
    All are sums over the local columns (each dataset's own values), each left out of
    its own dataset's fit: O(R D n_local) multiply-adds, no counts on the model's grid.
    """
    R, D = len(Pl), len(xg.starts)
    xs_local = xs[xg.g]
    Ln = Pl + Nl
    mom = taylor_sums(Ln, xs_local, beta0, xg.code)
    lin = np.stack([np.ones_like(xs_local), xs_local, xs_local * xs_local], axis=1)  # (n_local, 3)
    pos = np.broadcast_to((Pl @ lin[:, :2])[:, None, :], (R, D, 2)).copy()
    plain = np.broadcast_to((Ln @ lin)[:, None, :], (R, D, 3)).copy()
    for k in range(D):  # a fit's sums are all datasets' minus its own
        a, b = xg.bounds[k], xg.bounds[k + 1]
        pos[:, k] -= Pl[:, a:b] @ lin[a:b, :2]
        plain[:, k] -= Ln[:, a:b] @ lin[a:b]
    tpos = Pl.sum(axis=1)[:, None] - xg.seg_sum(Pl)  # integer counts: exact
    tneg = Nl.sum(axis=1)[:, None] - xg.seg_sum(Nl)
    M = {(c, e): mom[:, c, :, e] for c in range(_TAYLOR + 1) for e in range(c + 2)}
    return M, pos, plain, tpos, tneg


def _xdomain_penalty(plain, active):
    """Each fit's penalty (R, D) on its own standardised score (:func:`~beyondauc.metrics.core.logistic.scaler_penalty`)
    from its plain sums, and the fits whose variance is too small to trust a one-pass sum (the general solver's)."""
    N = plain[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = plain[..., 1] / N
        var = plain[..., 2] / N - mean * mean
    doubtful = active & ~(var > 1e-3 * (mean * mean + np.abs(var)))
    return np.where(active & ~doubtful, var, 1.0), doubtful


def xdomain_logistic_params(xg, Pl, Nl, cal_rows, init, std):
    """(intercept, coef) of the D logistic fits of every replicate, (R, D) each, and the fits' class totals.

    Two Newton steps from each cell's point-estimate fit beta0, as :func:`~beyondauc.metrics.calibration.replicate_fits.fit_rows`.
    Both come from moments of the counts at beta0, which is the same in every
    replicate, so they are matrix products of the counts (each dataset's values left
    out of its own fit, :func:`_xdomain_moments`): the first step is exact; the second evaluates the gradient at beta1 by its
    Taylor expansion around beta0 to fourth order and the Hessian to second order in
    the first step d.  It differs from the exact second step by O(|d|^5), below that
    step's own distance from the optimum, O(|d|^4) (Newton converges quadratically).
    A fit whose first step is long (|d| > 1, damped), or whose calibration scores are
    (nearly) constant, runs the general solver on its dense calibration row.
    """
    R, D = len(Pl), len(xg.starts)
    i0, c0 = init
    xs, mu, sd, e = conditioned_grid(xg.x, None, std)
    beta0 = conditioned_params(i0, c0, mu, sd, e)  # (D, 2)
    M, pos, plain, tpos, tneg = _xdomain_moments(xg, Pl, Nl, beta0, xs)
    active = (tpos + tneg) > 0
    lam, doubtful = _xdomain_penalty(plain, active)

    b1 = np.broadcast_to(beta0[None, :, 1], (R, D))
    # first step: gradient and Hessian at beta0
    d0, d1 = newton_direction(M[0, 0] - pos[..., 0], M[0, 1] - pos[..., 1] + lam * b1, M[1, 0], M[1, 1], M[1, 2] + lam)
    d0, d1 = np.where(active, d0, 0.0), np.where(active, d1, 0.0)
    dmax = np.maximum(np.abs(d0), np.abs(d1))
    check = active & ((dmax > 1.0) | doubtful)  # a damped step: the general solver
    second = active & ~check & ~(dmax < 1e-9)
    d0, d1 = np.where(check, 0.0, d0), np.where(check, 0.0, d1)  # (their Taylor terms are not used)
    # second step: sum_j n_j x_j^e expit^(c)(z_j + d0 + d1 x_j) expanded in the step:
    # sum_c' (d0 + d1 x)^c' / c'! expit^(c + c')(z), the binomial terms being moments
    pw0, pw1 = [np.ones_like(d0)], [np.ones_like(d1)]
    for _ in range(_TAYLOR):
        pw0.append(pw0[-1] * d0)
        pw1.append(pw1[-1] * d1)

    def at_beta1(c, e, order):
        out = M[c, e].copy()
        for q in range(1, order + 1):
            for i in range(q + 1):
                out += (math.comb(q, i) / math.factorial(q)) * pw0[q - i] * pw1[i] * M[c + q, e + i]
        return out

    g0 = at_beta1(0, 0, _TAYLOR) - pos[..., 0]
    g1 = at_beta1(0, 1, _TAYLOR) - pos[..., 1] + lam * (b1 + d1)
    hess = [at_beta1(1, e, _TAYLOR - 2) for e in range(3)]  # Hessian at beta1
    e0, e1 = newton_direction(g0, g1, hess[0], hess[1], hess[2] + lam)
    beta_a = beta0[None, :, 0] + d0 + np.where(second, e0, 0.0)
    beta_b = b1 + d1 + np.where(second, e1, 0.0)
    beta_a, beta_b = np.where(check, beta0[None, :, 0], beta_a), np.where(check, b1, beta_b)
    intercept, coef = raw_params(beta_a, beta_b, mu, sd, e)
    rows1 = np.flatnonzero(check.ravel())
    if rows1.size:
        cp, cn = cal_rows(rows1)
        kq = rows1 % D
        a, b = logistic_params(
            xg.x, cp, cn, init=(i0[kq], c0[kq]), standardize=std, stop=NewtonStop(max_iter=LOGISTIC_STEPS)
        )
        intercept.ravel()[rows1], coef.ravel()[rows1] = a, b
    return intercept, coef, tpos, tneg


def _xdomain_logistic(xg, Pl, Nl, cal_rows, init, std):
    """Decisions of the D logistic fits at the local columns, (R, n_local).

    ``cal_rows(rows)``: the dense calibration rows (positives, negatives) of the given fits.
    """
    intercept, coef, tpos, tneg = xdomain_logistic_params(xg, Pl, Nl, cal_rows, init, std)
    pred = np.empty(Pl.shape, dtype=bool)
    for k in range(len(xg.starts)):  # a loop over datasets: each local column at its own dataset's fit
        a, b = xg.bounds[k], xg.bounds[k + 1]
        pred[:, a:b] = xg.x_loc[None, a:b] * coef[:, k : k + 1] + intercept[:, k : k + 1] > 0
    return _override_local(pred, _single_rows(tpos, tneg), xg.code)


def xdomain_scores(xg, Pl, Nl, methods, init_ds, std):
    """Yield (method index, scores (R, D, len(SCORES))) of the fast fits, by evaluated dataset."""
    totals = cal = None
    if "stump" in methods or "isotonic" in methods:
        totals = xg.total(Pl), xg.total(Nl)
    if "isotonic" in methods:
        cal = xdomain_cal_rows(xg, Pl, Nl, *totals)

    def cal_rows(rows):  # the logistic fits that need the general solver (rare): only their rows
        if cal is not None:
            return cal[0][rows], cal[1][rows]
        return xdomain_cal_rows(xg, Pl, Nl, *(totals or (xg.total(Pl), xg.total(Nl))), rows=rows)

    for j, meth in enumerate(methods):
        if meth == "stump":
            pred = _xdomain_stump(xg, Pl, Nl, totals)
        elif meth == "isotonic":
            pred = _xdomain_isotonic(xg, cal)
        else:
            pred = _xdomain_logistic(xg, Pl, Nl, cal_rows, init_ds, std)
        yield j, confusion_scores(_confusion_local(pred, Pl, Nl, xg))


def xdomain_cal_rows(xg, Pl, Nl, Tp, Tn, rows=None):
    """Dense calibration rows (R * D, m): the total minus each dataset; or only ``rows`` (of R * D)."""
    R, D, m = len(Pl), len(xg.starts), xg.m
    if rows is not None:
        r, k = np.divmod(rows, D)
        out = []
        for T, L in ((Tp, Pl), (Tn, Nl)):
            c = T[r].copy()
            for kk in np.unique(k):  # a loop over datasets
                sel = np.flatnonzero(k == kk)
                a, b = xg.bounds[kk], xg.bounds[kk + 1]
                c[sel[:, None], xg.g[a:b][None, :]] -= L[r[sel], a:b]
            out.append(c)
        return out
    flat = xg.code * m + xg.g
    out = []
    for T, L in ((Tp, Pl), (Tn, Nl)):
        c = np.repeat(T[:, None, :], D, axis=1).reshape(R, D * m)
        c[:, flat] -= L
        out.append(c.reshape(R * D, m))
    return out


def _xdomain_isotonic(xg, cal_rows):
    """Decisions of the D isotonic fits at the local columns, (R, n_local)."""
    cp, cn = cal_rows
    RD, m = cp.shape
    D = len(xg.starts)
    R = RD // D
    per = max(1, _ISO_CELLS // max(m, 1))
    flat = xg.code * m + xg.g
    out = np.empty((R, xg.n_local), dtype=bool)
    # rows of whole replicates per call, so the gather below is one fancy index
    per_r = max(1, per // D)
    for r0 in range(0, R, per_r):
        r1 = min(R, r0 + per_r)
        pred = fit_predict_isotonic(xg.x, cp[r0 * D : r1 * D], cn[r0 * D : r1 * D], integer=True)
        out[r0:r1] = pred.reshape(r1 - r0, D * m)[:, flat]
    return out
