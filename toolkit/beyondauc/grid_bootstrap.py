"""Bootstrap of the expected-accuracy grid, and the stability of its rankings.

:func:`bootstrap_grid` resamples the benchmark ``n_bootstrap`` times --
stratified by dataset and class, paired (every model reads the same
replicate) -- and recomputes every cell of
:func:`~beyondauc.expected_accuracy_grid` on each replicate, *refitting* the
calibrator on the replicate of its calibration data: the threshold's own
sampling error is part of what a deployed model meets.

A replicate is a vector of counts per example (:mod:`beyondauc._bootstrap`);
on a model's score grid it becomes per-value positive/negative counts (one
sparse product), and the replicates' fits are batched exactly like the point
grid's fits: replicates are more rows of the (fits x grid values) count
matrices handed to the vectorised calibrators of :mod:`beyondauc._fitting`.

Fits calibrated on every dataset but the one they evaluate (``xdomain``), without
class weights, take a faster path with the same decisions: counts are integers,
so such a fit's counts are exactly the model's total minus one dataset, kept as
the total plus each dataset's counts on its own values; decisions are taken only
at the evaluated dataset's values; the stump's best split is found by branch and
bound over blocks of candidate splits (the Gini gain is convex in the cumulative
counts, so a block's corners bound it) and evaluated with scikit-learn's
arithmetic only in the blocks that can hold the maximum; and the logistic fits'
first Newton step, which starts at the same point in every replicate, is a
matrix product of the counts.

``indata`` (repeated 80/20 splits of one dataset): a replicate resamples the
dataset (stratified by class), then applies the *same* split positions to the
original rows, so all copies of a drawn example fall on the same side of a
split (no copy is calibrated on and evaluated at once) and the evaluation side
has about 20% of the replicate's weight.  To keep the bootstrap cheap, a
replicate uses the first ``min(n_repeats, 10)`` of the point estimate's
splits; averaging fewer splits adds a little split noise to each replicate,
so these intervals err on the wide side.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit
from threadpoolctl import threadpool_limits

from ._bootstrap import BLOCK, bootstrap_counts, check_bootstrap, grid_weights, percentile_interval, strata_of
from ._fitting import _EPSILON, class_weighted, fit_predict_isotonic, logistic_params, newton_direction
from ._kernel import _grid_counts, _scores_from_confusion, _stacked_counts
from ._pool import pool_context, process_pool
from ._validation import check_option
from .calibration import (
    METHODS,
    PROTOCOLS,
    SCORES,
    _check_grid_args,
    _check_n_jobs,
    _Context,
    _plan,
    _run_fits,
    _splits,
    expected_accuracy_grid,
)

__all__ = ["GridBootstrap", "bootstrap_grid"]

MEAN = "mean"
VALUES = ("auc", *SCORES)  # the replicate array's last axis
BOOTSTRAP_REPEATS = 10  # indata splits per replicate (at most n_repeats)
LOGISTIC_STEPS = 2  # Newton steps of a replicate's logistic fit from its cell's point fit
_CELLS = 4_000_000  # (fits x grid values) cells per batch of replicates: bounds memory
_TASK_REPLICATES = 2 * BLOCK  # replicates of one model per task (a multiple of BLOCK: each block drawn once)
_COUNTS_CACHE_BYTES = 512 * 2**20  # keep a process's drawn counts while they fit in this


# -- the engine ---------------------------------------------------------------------

@dataclass(frozen=True)
class _BootContext:
    base: _Context
    strata: np.ndarray
    n_bootstrap: int
    boot_seed: object


def _standardize(x, pos, neg):
    w = pos.sum(axis=0) + neg.sum(axis=0) if pos.ndim > 1 else pos + neg
    W = w.sum() or 1.0
    mu = float(w @ x) / W
    return mu, float(np.sqrt(w @ (x - mu) ** 2 / W)) or 1.0


def _cell_scores(conf):
    """(..., ) confusion tuple -> (..., len(SCORES)) array of scores."""
    sc = _scores_from_confusion(*conf)
    return np.stack([sc[k] for k in SCORES], axis=-1)


def _fit_rows(x, cp, cn, ep, en, methods, class_weight, init, standardize):
    """Scores (len(methods), rows, len(SCORES)) of every method fitted on every row.

    Logistic fits take two Newton steps from their cell's point-estimate fit
    (``init``): a replicate moves the optimum by O(n^-1/2), so the first step
    leaves an error of O(1/n) and the second of O(1/n^2).  Measured against
    fits run to convergence: up to 1e-4 on the standardised parameters with a
    thousand calibration rows per dataset, 2e-5 on the TRUE-sized benchmark
    (where no decision of 14 million differed), about 1e-2 with a hundred
    rows -- so on small data a replicate's threshold carries a little
    optimisation error besides its sampling error.
    """
    conf = _run_fits(x, cp, cn, ep, en, methods, class_weight, init=init, standardize=standardize,
                     max_iter=LOGISTIC_STEPS)
    return np.stack([_cell_scores(conf[m]) for m in methods])


def _combine(G, A, total=None):
    """Rows ``G @ A[r]`` for every replicate r: (R * F, m).

    A loop over the (few) fits: each row is the sum of its datasets, or the
    total minus the datasets it leaves out, whichever is shorter.
    """
    R, D, m = A.shape
    if G.shape == (D, D) and (G == np.eye(D)).all():  # each fit one dataset, in order: a view
        return A.reshape(R * D, m), total
    if G.shape == (D, D) and (G == 1 - np.eye(D)).all():  # each fit all but its dataset (xdomain)
        total = A.sum(axis=1) if total is None else total
        return np.subtract(total[:, None, :], A).reshape(R * D, m), total
    out = np.empty((R, len(G), m))
    for k, g in enumerate(G.astype(bool)):
        inc, exc = np.flatnonzero(g), np.flatnonzero(~g)
        if len(exc) + 1 < len(inc):
            if total is None:
                total = A.sum(axis=1)
            np.subtract(total, A[:, exc].sum(axis=1) if len(exc) > 1 else A[:, exc[0]], out=out[:, k])
        elif len(inc) == 0:
            out[:, k] = 0.0
        elif len(inc) == 1:
            out[:, k] = A[:, inc[0]]
        else:
            np.sum(A[:, inc], axis=1, out=out[:, k])
    return out.reshape(R * len(G), m), total


def _local_grids(s, codes, D):
    """Each dataset's own score grid, laid end to end: (column of each example, segment starts)."""
    order = np.lexsort((s, codes))
    ss, cc = s[order], codes[order]
    new = np.ones(len(s), dtype=bool)
    new[1:] = (ss[1:] != ss[:-1]) | (cc[1:] != cc[:-1])
    col = np.empty(len(s), dtype=np.int64)
    col[order] = np.cumsum(new) - 1
    first_col = np.full(D, -1, dtype=np.int64)
    present = np.unique(cc)
    first_col[present] = col[order][np.searchsorted(cc, present)]
    return col, first_col, int(new.sum())


def _segment_auc(P, N, first_col, D):
    """AUC (ties one half) of each dataset's segment of per-value counts (R, total) -> (R, D)."""
    R = len(P)
    out = np.full((R, D), np.nan)
    ok = first_col >= 0
    starts = first_col[ok]
    cneg = np.cumsum(N, axis=1)
    base = np.concatenate([np.zeros((R, 1)), cneg], axis=1)[:, starts]  # negatives before each segment
    lengths = np.diff(np.concatenate([starts, [P.shape[1]]]))
    below = cneg - N - np.repeat(base, lengths, axis=1)
    num = np.add.reduceat(P * (below + 0.5 * N), starts, axis=1)
    n_pos, n_neg = np.add.reduceat(P, starts, axis=1), np.add.reduceat(N, starts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[:, ok] = np.where((n_pos > 0) & (n_neg > 0), num / (n_pos * n_neg), np.nan)
    return out


def _indicator(rows, cols, y, n_rows, n_cols):
    """Sparse 0/1 matrices (positives, negatives) mapping examples to columns."""
    import scipy.sparse as sp
    y = np.asarray(y).astype(bool)
    out = []
    for mask in (y, ~y):
        out.append(sp.csr_matrix((np.ones(mask.sum()), (rows[mask], cols[mask])), shape=(n_rows, n_cols)))
    return out


class _ModelBoot:
    """One model's bootstrap: its grids and point-estimate fits, set up once, then run on blocks of replicates."""

    def __init__(self, bctx, s):
        ctx = bctx.base
        self.bctx = bctx
        y, codes, methods, class_weight = ctx.y, ctx.codes, ctx.methods, ctx.class_weight
        D = len(ctx.datasets)
        sizes = np.diff(ctx.offsets)
        x, inv, _, _ = _grid_counts(y, s)
        m = len(x)
        pos_ds, neg_ds = _stacked_counts(inv, y, codes, m, D)
        std = _standardize(x, pos_ds, neg_ds)
        local_col, first_col, n_local = _local_grids(s, codes, D)
        # trees see float32 scores: the stump runs on the float32 grid (same decisions, fewer values)
        x32 = x.astype(np.float32)
        new32 = np.concatenate([[True], x32[1:] != x32[:-1]])
        inv32, xs32 = (np.cumsum(new32) - 1)[inv], x32[new32].astype(np.float64)
        grids = [(x, inv, [mm for mm in methods if mm != "stump"])]
        if "stump" in methods:
            grids.append((xs32, inv32, ["stump"]))

        fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
        F = len(fits)
        G_cal, G_ev = np.zeros((F, D)), np.zeros((F, D))
        for k, f in enumerate(fits):
            G_cal[k, list(f.cal)] = 1.0
            G_ev[k, list(f.evl)] = 1.0
        empty = np.array([sizes[list(f.cal)].sum() == 0 or sizes[list(f.evl)].sum() == 0 for f in fits], dtype=bool)
        fast = _xdomain_ok(fits, sizes, D, class_weight) if F else []
        slow = [k for k in range(F) if k not in set(fast)]
        xg = _XGrid(x, inv, xs32, inv32, np.flatnonzero(new32), local_col, first_col, n_local, D) if fast else None
        fast_ds = np.array([fits[k].dataset for k in fast], dtype=np.int64)
        init = None
        if F and "logistic" in methods:  # warm start: each cell's point-estimate fit
            wp, wn = class_weighted(G_cal @ pos_ds, G_cal @ neg_ds, class_weight)
            init = logistic_params(x, wp, wn, standardize=std)
        init_ds = None
        if fast and init is not None:  # the fast fits' point-estimate fits, by evaluated dataset
            init_ds = (np.empty(D), np.empty(D))
            init_ds[0][fast_ds], init_ds[1][fast_ds] = init[0][fast], init[1][fast]

        # indata (and indomain's fallback): per dataset, the split positions and grids
        indata = sorted({i for p in ctx.protocols for i in ctx.plans[p][1]})
        ind = {}
        for i in indata:
            lo, hi = int(ctx.offsets[i]), int(ctx.offsets[i + 1])
            tests = _splits(hi - lo, ctx.n_repeats, ctx.seed)
            if tests is None:
                ind[i] = None
                continue
            tests = tests[:min(ctx.n_repeats, BOOTSTRAP_REPEATS)]
            R, n_test = tests.shape
            yd = y[lo:hi]
            xd, invd, fp, fn = _grid_counts(yd, s[lo:hi])
            md = len(xd)
            flat = tests.ravel()
            ev_ind = _indicator(flat, np.repeat(np.arange(R), n_test) * md + invd[flat], yd[flat], hi - lo, R * md)
            full_ind = _indicator(np.arange(hi - lo), invd, yd, hi - lo, md)
            std_d = _standardize(xd, fp, fn)
            init_d = None
            if "logistic" in methods:
                wp, wn = class_weighted(fp[None], fn[None], class_weight)
                init_d = logistic_params(xd, wp, wn, standardize=std_d)
            ind[i] = dict(lo=lo, hi=hi, xd=xd, R=R, md=md, ev=ev_ind, full=full_ind, std=std_d, init=init_d,
                          n_test=n_test)
        self.__dict__.update(
            y=y, codes=codes, methods=methods, class_weight=class_weight, D=D, m=m, std=std, local_col=local_col,
            first_col=first_col, n_local=n_local, grids=grids, fits=fits, F=F, G_cal=G_cal, G_ev=G_ev, empty=empty,
            fast=fast, slow=slow, xg=xg, fast_ds=fast_ds, init=init, init_ds=init_ds, indata=indata, ind=ind)

    def run(self, W):
        """Replicate values of every cell for the replicates of counts ``W`` (B, n).

        Returns ``{(protocol, method, dataset): (B, len(VALUES))}``.
        """
        y, codes, methods, class_weight = self.y, self.codes, self.methods, self.class_weight
        D, m, F, std, init = self.D, self.m, self.F, self.std, self.init
        fast, slow, fast_ds, xg = self.fast, self.slow, self.fast_ds, self.xg
        B, M, S = len(W), len(methods), len(SCORES)
        auc_out = np.empty((B, D))
        fit_out = np.empty((M, B, F, S))
        ind_out = {i: np.empty((M, B, S)) for i, d in self.ind.items() if d is not None}
        per = max(1, _CELLS // max(1, (F + 1) * m))
        for c0 in range(0, B, per):
            Wc = W[c0:c0 + per]
            Rc = len(Wc)
            r = slice(c0, c0 + Rc)
            Pl, Nl = grid_weights(Wc, self.local_col, y, self.n_local)
            auc_out[r] = _segment_auc(Pl[:, 0], Nl[:, 0], self.first_col, D)
            if fast:
                for j, sc in _xdomain_scores(xg, Pl[:, 0], Nl[:, 0], methods, self.init_ds, std):
                    fit_out[j, r][:, fast] = sc[:, fast_ds]
            if not slow:
                continue
            Gc, Ge = self.G_cal[slow], self.G_ev[slow]
            Fs = len(slow)
            for xgr, invg, meths in self.grids:
                if not meths:
                    continue
                P, N = grid_weights(Wc, invg, y, len(xgr), groups=codes, n_groups=D)  # (Rc, D, m)
                (cp, tp), (cn, tn) = _combine(Gc, P), _combine(Gc, N)
                ep, en = _combine(Ge, P, tp)[0], _combine(Ge, N, tn)[0]
                del P, N
                rows_init = None if init is None else (np.tile(init[0][slow], Rc), np.tile(init[1][slow], Rc))
                sc = _fit_rows(xgr, cp, cn, ep, en, meths, class_weight, rows_init, std)
                for j, meth in enumerate(meths):
                    fit_out[methods.index(meth), r][:, slow] = sc[j].reshape(Rc, Fs, S)
        for i, out in ind_out.items():
            d = self.ind[i]
            R, md = d["R"], d["md"]
            per_d = max(1, _CELLS // max(1, R * md))
            for c0 in range(0, B, per_d):
                Wd = W[c0:c0 + per_d, d["lo"]:d["hi"]].astype(np.float64)
                Rc = len(Wd)
                r = slice(c0, c0 + Rc)
                ep = np.asarray((d["ev"][0].T @ Wd.T).T).reshape(Rc, R, md)
                en = np.asarray((d["ev"][1].T @ Wd.T).T).reshape(Rc, R, md)
                fpos = np.asarray((d["full"][0].T @ Wd.T).T)[:, None, :]
                fneg = np.asarray((d["full"][1].T @ Wd.T).T)[:, None, :]
                cp, cn = (fpos - ep).reshape(Rc * R, md), (fneg - en).reshape(Rc * R, md)
                ep, en = ep.reshape(Rc * R, md), en.reshape(Rc * R, md)
                rows_init = None if d["init"] is None else (np.repeat(d["init"][0], Rc * R),
                                                            np.repeat(d["init"][1], Rc * R))
                sc = _fit_rows(d["xd"], cp, cn, ep, en, methods, class_weight, rows_init, d["std"])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # a score undefined in every repeat
                    out[:, r] = np.nanmean(sc.reshape(M, Rc, R, S), axis=2)

        cells = {}
        for k, f in enumerate(self.fits):
            for j, meth in enumerate(methods):
                if self.empty[k]:
                    v = np.full((B, len(VALUES)), np.nan)
                    v[:, 0] = auc_out[:, f.dataset]
                else:
                    v = np.concatenate([auc_out[:, [f.dataset]], fit_out[j, :, k]], axis=1)
                cells[(f.protocol, meth, f.dataset)] = v
        for p in self.bctx.base.protocols:
            for i in self.bctx.base.plans[p][1]:
                for j, meth in enumerate(methods):
                    v = np.full((B, len(VALUES)), np.nan)
                    v[:, 0] = auc_out[:, i]
                    if i in ind_out:
                        v[:, 1:] = ind_out[i][j]
                    cells[(p, meth, i)] = v
        return cells



# -- the fast path: fits calibrated on all datasets but the one they evaluate (xdomain) ----------
#
# With integer counts (no class weights) a fit on "all but dataset k" is the total
# minus dataset k, exactly, whatever the order of the sums.  So the per-value counts
# are kept as the total (R, m) on the model's grid plus each dataset's counts on its
# own grid (R, n_local), never as (R, D, m); decisions are taken only at the
# evaluated dataset's values; the logistic fits' first Newton step is a matrix
# product (it starts at the same point in every replicate); and the stump's best
# split is found by bounding blocks of candidate splits (the Gini gain is convex in
# the cumulative counts), then evaluating exactly, with scikit-learn's arithmetic,
# only the blocks that can hold the maximum.

_STUMP_BLOCK = 32  # candidate splits per block of the stump's branch and bound
_ISO_CELLS = 262_144  # grid cells per call of the isotonic fitter


def _xdomain_ok(fits, sizes, D, class_weight):
    if class_weight is not None or D < 2 or (sizes == 0).any():
        return False
    everything = set(range(D))
    return [k for k, f in enumerate(fits)
            if tuple(f.evl) == (f.dataset,) and set(f.cal) == everything - {f.dataset} and len(f.cal) == D - 1]


class _XGrid:
    """Static layout of one model's grids for the fast path."""

    def __init__(self, x, inv, xs32, inv32, runs32, local_col, first_col, n_local, D):
        self.x, self.xs32, self.m, self.m32 = x, xs32, len(x), len(xs32)
        self.runs32 = runs32  # where each run of the float64 grid that float32 merges starts
        self.n_local = n_local
        g = np.empty(n_local, dtype=np.int64)
        g[local_col] = inv
        g32 = np.empty(n_local, dtype=np.int64)
        g32[local_col] = inv32
        self.g, self.g32 = g, g32
        starts = np.append(first_col, n_local)
        self.starts = first_col.astype(np.int64)
        self.bounds = starts  # dataset k's local columns: bounds[k]:bounds[k + 1]
        self.code = np.repeat(np.arange(D), np.diff(starts))  # dataset of each local column
        # total on a grid = reduceat of the local columns sorted by their grid value
        self.sum64 = self._summer(g)
        self.sum32 = self._summer(g32)
        # stump: padded local cumulative counts (a 0 before each dataset) and, per dataset
        # and float32 grid value, the padded index of dataset k's cumulative count there
        self.pad = np.arange(n_local) + self.code + 1
        self.pad_off = self.starts + np.arange(D)
        idx = np.empty((D, self.m32), dtype=np.int64)
        pos = np.arange(self.m32)
        for k in range(D):
            gk = g32[starts[k]:starts[k + 1]]
            idx[k] = self.pad_off[k] + np.searchsorted(gk, pos, side="right")
        self.idx = idx
        self.pad_end = self.pad_off + np.diff(starts)
        x32 = xs32.astype(np.float32)
        self.close_any = bool((~(x32[1:] > x32[:-1] + np.float32(1e-7))).any()) if self.m32 > 1 else False
        if self.close_any:
            thr = x32 + np.float32(1e-7)
            self.u1 = np.minimum(np.searchsorted(x32, thr, side="right"), self.m32) - 1
        self.x_loc = x[g]
        self.x32_loc = xs32[g32]
        self.logit = None

    @staticmethod
    def _summer(g):
        order = np.argsort(g, kind="stable")
        gs = g[order]
        st = np.flatnonzero(np.concatenate([[True], gs[1:] != gs[:-1]]))
        return order, st, gs[st]

    def total(self, L, which):
        """Per-value totals over all datasets of local counts ``L`` (R, n_local), on the float64 or float32 grid."""
        order, st, cols = self.sum64 if which == 64 else self.sum32
        out = np.zeros((len(L), self.m if which == 64 else self.m32))
        out[:, cols] = np.add.reduceat(L[:, order], st, axis=1)
        return out

    def to32(self, T):
        """Totals on the float64 grid summed onto the float32 grid (integer counts: exactly :meth:`total`)."""
        return np.add.reduceat(T, self.runs32, axis=1)

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


def _xdomain_stump(xg, Pl, Nl, T64=None):
    """Decisions of the D stumps (fit k: all datasets but k) at the local columns, (R, n_local).

    ``T64``: the totals (positives, negatives) on the float64 grid, if already computed.
    """
    R, D, m = len(Pl), len(xg.starts), xg.m32
    Tp, Tn = (xg.total(Pl, 32), xg.total(Nl, 32)) if T64 is None else (xg.to32(T64[0]), xg.to32(T64[1]))
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
    total = TPk + TNk
    rr = np.arange(R)[:, None]
    kk = np.arange(D)[None, :]

    def cums(j):
        """Cumulative cal counts (pos, neg) at positions j (R, D, w) for every fit."""
        jj = np.minimum(j, m - 1)
        ix = xg.idx[kk[..., None], jj]  # (R?, D, w) padded local index
        cp = CTp[rr[..., None], jj] - LP[rr[..., None], ix]
        cn = CTn[rr[..., None], jj] - LN[rr[..., None], ix]
        return cp, cn

    bs = _STUMP_BLOCK
    nb = (m + bs - 1) // bs
    s_pos = np.arange(nb) * bs
    e_pos = np.minimum(s_pos + bs, m) - 1
    jb = np.broadcast_to(np.concatenate([s_pos, e_pos])[None, None, :], (R, D, 2 * nb))
    cp, cn = cums(jb)
    P3, N3 = TPk[..., None], TNk[..., None]
    alo, ahi, blo, bhi = cp[..., :nb], cp[..., nb:], cn[..., :nb], cn[..., nb:]
    ub = np.maximum(np.maximum(_stump_gain_ub(alo, blo, P3, N3), _stump_gain_ub(alo, bhi, P3, N3)),
                    np.maximum(_stump_gain_ub(ahi, blo, P3, N3), _stump_gain_ub(ahi, bhi, P3, N3)))
    ub = ub - total[..., None]  # bound on scikit-learn's proxy (gain minus the total)
    margin = 1e-9 * (total + 1.0)

    def exact(rows, blocks):
        """scikit-learn's proxy at every candidate of the given (row, block) pairs: (n, bs)."""
        r, k = np.divmod(rows, D)
        j = blocks[:, None] * bs + np.arange(bs)[None, :]
        inside = j < m
        jj = np.minimum(j, m - 1)
        ix = xg.idx[k[:, None], jj]
        cpos = CTp[r[:, None], jj] - LP[r[:, None], ix]
        cneg = CTn[r[:, None], jj] - LN[r[:, None], ix]
        tpos, tneg = TPk[r, k][:, None], TNk[r, k][:, None]
        tot = tpos + tneg
        n_left = cpos + cneg
        n_right = tot - n_left
        rp, rn = tpos - cpos, tneg - cneg
        with np.errstate(divide="ignore", invalid="ignore"):
            gini_l = 1.0 - (cneg * cneg + cpos * cpos) / (n_left * n_left)
            gini_r = 1.0 - (rn * rn + rp * rp) / (n_right * n_right)
            proxy = -n_right * gini_r - n_left * gini_l
        valid = inside & (n_left > 0) & (n_right > 0)
        if xg.close_any:
            jm = np.maximum(jj - 1, 0)
            ixm = xg.idx[k[:, None], jm]
            nl_prev = np.where(jj > 0, (CTp[r[:, None], jm] - LP[r[:, None], ixm])
                               + (CTn[r[:, None], jm] - LN[r[:, None], ixm]), 0.0)
            ju = xg.u1[jj]
            ixu = xg.idx[k[:, None], ju]
            nl_u = (CTp[r[:, None], ju] - LP[r[:, None], ixu]) + (CTn[r[:, None], ju] - LN[r[:, None], ixu])
            valid &= (n_left > nl_prev) & (nl_u == n_left)
        return np.where(valid, proxy, -np.inf), j, cpos, cneg

    RD = R * D
    ub2 = ub.reshape(RD, nb)
    top = np.argmax(ub2, axis=1)
    pr1, _, _, _ = exact(np.arange(RD), top)
    lb = pr1.max(axis=1)
    sel = (ub2 + margin.reshape(RD)[:, None] >= lb[:, None]) | (np.arange(nb)[None, :] == top[:, None])
    rows, blocks = np.nonzero(sel)
    pr, j, cpos, cneg = exact(rows, blocks)
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
    has = rmax > -np.inf
    best = j[first_hit, barg[first_hit]]  # (RD,)
    cpb, cnb = cpos[first_hit, barg[first_hit]], cneg[first_hit, barg[first_hit]]
    tpos, tneg = TPk.reshape(RD), TNk.reshape(RD)
    tot = tpos + tneg
    root_impurity = 1.0 - (tneg * tneg + tpos * tpos) / np.where(tot > 0, tot * tot, 1.0)
    splits = has & (root_impurity > _EPSILON)
    nl_best = cpb + cnb
    # next grid value with calibration weight after the best split
    rr1, k1 = np.divmod(np.arange(RD), D)
    nxt = np.full(RD, m - 1, dtype=np.int64)
    todo = np.flatnonzero(splits)
    start = best[todo] + 1
    while todo.size:
        jw = start[:, None] + np.arange(bs)[None, :]
        jc = np.minimum(jw, m - 1)
        r_, k_ = rr1[todo][:, None], k1[todo][:, None]
        ix = xg.idx[k_, jc]
        nl = (CTp[r_, jc] - LP[r_, ix]) + (CTn[r_, jc] - LN[r_, ix])
        found = (nl > nl_best[todo][:, None]) & (jw < m)
        got = found.any(axis=1)
        nxt[todo[got]] = jw[got, np.argmax(found[got], axis=1)]
        todo, start = todo[~got], start[~got] + bs
        keep = start < m
        todo, start = todo[keep], start[keep]
    xs = xg.xs32
    xj, xk = xs[best], xs[nxt]
    thr = xj / 2.0 + xk / 2.0
    thr = np.where((thr == xk) | np.isinf(thr), xj, thr)
    rp, rn = tpos - cpb, tneg - cnb
    left_c = np.where(splits, cpb > cnb, tpos > tneg)
    right_c = np.where(splits, rp > rn, tpos > tneg)
    thr = np.where(splits, thr, np.nan).reshape(R, D)
    left_c, right_c = left_c.reshape(R, D), right_c.reshape(R, D)
    code = xg.code
    go_left = ~(xg.x32_loc[None, :] > thr[:, code])
    pred = np.where(go_left, left_c[:, code], right_c[:, code])
    return _override_local(pred, _single_rows(TPk, TNk), code)


# Moments of the logistic fits' Taylor expansion: (order c of the derivative of expit, power e
# of the standardised score), for c = 0..4 and e = 0..c+1 -- what the gradient to fourth
# order and the Hessian to second order in the step need.
_TAYLOR = 4
_MOMENTS = [(c, e) for c in range(_TAYLOR + 1) for e in range(c + 2)]
_MOMENT = {ce: i for i, ce in enumerate(_MOMENTS)}


def _logistic_taylor_maps(xg, beta0, mu, sd):
    """Per fit k, the grid's expit derivatives at its point fit times score powers: (m, D * 20), (n_local, 20)."""
    xs = (xg.x - mu) / sd
    z = beta0[:, :1] + beta0[:, 1:] * xs[None, :]  # (D, m)
    p = expit(z)
    w = p - p * p
    # expit and its first four derivatives
    deriv = (p, w, w * (1.0 - 2.0 * p), w * (1.0 - 6.0 * w), w * (1.0 - 2.0 * p) * (1.0 - 12.0 * w))
    powers = xs[None, :] ** np.arange(_TAYLOR + 2)[:, None]
    Mt = np.stack([deriv[c] * powers[e] for c, e in _MOMENTS], axis=-1)  # (D, m, 20)
    m_total = np.ascontiguousarray(Mt.transpose(1, 0, 2).reshape(len(xs), -1))
    m_local = np.ascontiguousarray(Mt[xg.code, xg.g])  # each local column at its own dataset's fit
    lin_local = np.ascontiguousarray(powers[:2, xg.g].T)  # (n_local, 2)
    return m_total, m_local, np.ascontiguousarray(powers[:2].T), lin_local


def _xdomain_logistic_params(xg, Pl, Nl, Tp, Tn, cal_rows, init, std):
    """(intercept, coef) of the D logistic fits of every replicate, (R, D) each, and the fits' class totals.

    Two Newton steps from each cell's point-estimate fit beta0, as :func:`_fit_rows`.
    Both come from moments of the counts at beta0, which is the same in every
    replicate, so they are matrix products of the counts (total minus each dataset's
    own): the first step is exact; the second evaluates the gradient at beta1 by its
    Taylor expansion around beta0 to fourth order and the Hessian to second order in
    the first step d.  It differs from the exact second step by O(|d|^5), below that
    step's own distance from the optimum, O(|d|^4) (Newton converges quadratically).
    A fit whose first step is long (|d| > 1, damped) runs the general solver on its
    dense calibration row.
    """
    R, D = len(Pl), len(xg.starts)
    mu, sd = float(std[0]), float(std[1]) or 1.0
    lam = 1.0 / sd**2
    i0, c0 = init
    beta0 = np.stack([i0 + c0 * mu, c0 * sd], axis=1)  # (D, 2)
    if xg.logit is None:  # once per model
        xg.logit = _logistic_taylor_maps(xg, beta0, mu, sd)
    m_total, m_local, lin, lin_local = xg.logit
    n = Tp + Tn
    Ln = Pl + Nl
    mom = (n @ m_total).reshape(R, D, len(_MOMENTS))
    pos = np.broadcast_to((Tp @ lin)[:, None, :], (R, D, 2)).copy()
    for k in range(D):  # a fit's counts are the total minus its own dataset's
        a, b = xg.bounds[k], xg.bounds[k + 1]
        mom[:, k] -= Ln[:, a:b] @ m_local[a:b]
        pos[:, k] -= Pl[:, a:b] @ lin_local[a:b]
    tpos = Tp.sum(axis=1)[:, None] - xg.seg_sum(Pl)
    tneg = Tn.sum(axis=1)[:, None] - xg.seg_sum(Nl)
    M = {ce: mom[..., i] for ce, i in _MOMENT.items()}

    b1 = np.broadcast_to(beta0[None, :, 1], (R, D))
    active = (tpos + tneg) > 0
    # first step: gradient and Hessian at beta0
    d0, d1 = newton_direction(M[0, 0] - pos[..., 0], M[0, 1] - pos[..., 1] + lam * b1, M[1, 0], M[1, 1], M[1, 2] + lam)
    d0, d1 = np.where(active, d0, 0.0), np.where(active, d1, 0.0)
    dmax = np.maximum(np.abs(d0), np.abs(d1))
    check = active & (dmax > 1.0)  # a damped step: the general solver
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
    intercept = beta_a - beta_b * mu / sd
    coef = beta_b / sd
    rows1 = np.flatnonzero(check.ravel())
    if rows1.size:
        cp, cn = cal_rows(rows1)
        kq = rows1 % D
        a, b = logistic_params(xg.x, cp, cn, init=(i0[kq], c0[kq]), standardize=std,
                               max_iter=LOGISTIC_STEPS)
        intercept.ravel()[rows1], coef.ravel()[rows1] = a, b
    return intercept, coef, tpos, tneg


def _xdomain_logistic(xg, Pl, Nl, Tp, Tn, cal_rows, init, std):
    """Decisions of the D logistic fits at the local columns, (R, n_local).

    ``cal_rows(rows)``: the dense calibration rows (positives, negatives) of the given fits.
    """
    intercept, coef, tpos, tneg = _xdomain_logistic_params(xg, Pl, Nl, Tp, Tn, cal_rows, init, std)
    code = xg.code
    pred = xg.x_loc[None, :] * coef[:, code] + intercept[:, code] > 0
    return _override_local(pred, _single_rows(tpos, tneg), code)


def _xdomain_scores(xg, Pl, Nl, methods, init_ds, std):
    """Yield (method index, scores (R, D, len(SCORES))) of the fast fits, by evaluated dataset."""
    T64 = cal = None
    if "logistic" in methods or "isotonic" in methods:
        T64 = xg.total(Pl, 64), xg.total(Nl, 64)
    if "isotonic" in methods:
        cal = _xdomain_cal_rows(xg, Pl, Nl, *T64)

    def cal_rows(rows):  # the logistic fits that need the general solver (rare): only their rows
        return (cal[0][rows], cal[1][rows]) if cal is not None else _xdomain_cal_rows(xg, Pl, Nl, *T64, rows=rows)

    for j, meth in enumerate(methods):
        if meth == "stump":
            pred = _xdomain_stump(xg, Pl, Nl, T64)
        elif meth == "isotonic":
            pred = _xdomain_isotonic(xg, cal)
        else:
            pred = _xdomain_logistic(xg, Pl, Nl, *T64, cal_rows, init_ds, std)
        yield j, _cell_scores(_confusion_local(pred, Pl, Nl, xg))


def _xdomain_cal_rows(xg, Pl, Nl, Tp, Tn, rows=None):
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
        pred = fit_predict_isotonic(xg.x, cp[r0 * D:r1 * D], cn[r0 * D:r1 * D], integer=True)
        out[r0:r1] = pred.reshape(r1 - r0, D * m)[:, flat]
    return out


class _Runner:
    """Runs tasks (model, first replicate, end) of one bootstrap, in this process or a worker.

    Tasks come model by model, so the last model's set-up is kept; the counts of
    each range of replicates are drawn once per process and kept while all of
    them fit in ``_COUNTS_CACHE_BYTES`` (else drawn again per task: the same
    counts, :func:`~beyondauc._bootstrap.bootstrap_counts` is seeded per block).
    """

    def __init__(self, bctx, scores):
        self.bctx, self.scores = bctx, scores
        self._boot = (None, None)
        self._counts = {}
        self._keep = bctx.n_bootstrap * len(bctx.strata) * 4 <= _COUNTS_CACHE_BYTES

    def counts(self, b0, b1):
        W = self._counts.get((b0, b1))
        if W is None:
            W = bootstrap_counts(self.bctx.strata, self.bctx.n_bootstrap, random_state=self.bctx.boot_seed,
                                 start=b0, stop=b1)
            if self._keep:
                self._counts[(b0, b1)] = W
        return W

    def __call__(self, task):
        j, b0, b1 = task
        if self._boot[0] != j:
            self._boot = (j, None)  # free the previous model's set-up first
            self._boot = (j, _ModelBoot(self.bctx, self.scores[:, j]))
        return self._boot[1].run(self.counts(b0, b1))


def _init_worker(bctx, scores):
    global _WORKER
    _WORKER = _Runner(bctx, scores)
    threadpool_limits(limits=1, user_api="blas")


def _worker(task):
    return _WORKER(task)


def _map_tasks(bctx, scores, n_jobs):
    """Yield ``(model index, b0, b1, cells)`` for every model and range of replicates.

    A task is one model on ``_TASK_REPLICATES`` replicates, so the work spreads
    evenly over ``n_jobs`` processes whatever the number of models; the values
    do not depend on the split (replicate b is seeded by its block).
    """
    B, n_models = bctx.n_bootstrap, scores.shape[1]
    tasks = [(j, b0, min(B, b0 + _TASK_REPLICATES)) for j in range(n_models) for b0 in range(0, B, _TASK_REPLICATES)]
    if n_jobs == 1 or len(tasks) == 1:
        run = _Runner(bctx, scores)
        for t in tasks:
            yield (*t, run(t))
        return
    mp = pool_context()
    with process_pool(min(n_jobs, len(tasks)), mp, initializer=_init_worker, initargs=(bctx, scores)) as ex:
        futures = [ex.submit(_worker, t) for t in tasks]
        for t, f in zip(tasks, futures):
            yield (*t, f.result())


# -- ranks ----------------------------------------------------------------------------

def _ranks(values):
    """Ranks along the last axis: 1 = highest, ties share the best rank, NaN stays NaN."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    better = (v[..., None, :] > v[..., :, None]) & ok[..., None, :]
    r = 1.0 + better.sum(axis=-1)
    return np.where(ok, r, np.nan)


def _kendall_b(a, b):
    """Kendall's tau-b between a and b along the last axis (NaN pairs left out)."""
    ok = np.isfinite(a) & np.isfinite(b)
    sa = np.sign(a[..., :, None] - a[..., None, :])
    sb = np.sign(b[..., :, None] - b[..., None, :])
    both = ok[..., :, None] & ok[..., None, :]
    sa, sb = np.where(both, sa, 0.0), np.where(both, sb, 0.0)
    num = (sa * sb).sum(axis=(-1, -2))
    den = np.sqrt((sa * sa).sum(axis=(-1, -2)) * (sb * sb).sum(axis=(-1, -2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _nanmean(a, axis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(a, axis=axis)


# -- the result -----------------------------------------------------------------------

@dataclass(frozen=True)
class GridBootstrap:
    """Bootstrap replicates of an expected-accuracy grid (see :func:`bootstrap_grid`).

    Attributes
    ----------
    grid : DataFrame
        The point-estimate grid of :func:`~beyondauc.expected_accuracy_grid`
        with ``<value>_low`` / ``<value>_high`` after each of ``auc``,
        ``accuracy``, ``kappa``, ``balanced_accuracy``, ``mcc``, ``f1``
        (percentile intervals).
    replicates : ndarray, shape (n_bootstrap, len(grid), 6)
        Every replicate's value of every grid row; last axis ``VALUES``
        (``auc`` then the scores).
    n_bootstrap, confidence_level, random_state
        As given.
    """

    grid: pd.DataFrame = field(repr=False)
    replicates: np.ndarray = field(repr=False)
    n_bootstrap: int
    confidence_level: float
    random_state: object
    values: tuple = VALUES

    def __repr__(self):
        p = list(pd.unique(self.grid["protocol"]))
        meth = list(pd.unique(self.grid["method"]))
        return (f"GridBootstrap(n_bootstrap={self.n_bootstrap}, confidence_level={self.confidence_level}, "
                f"protocols={p}, methods={meth}, cells={len(self.grid)})")

    def _repr_html_(self):
        import html

        return f"<p><code>{html.escape(repr(self))}</code></p>" + self.grid.head(10).to_html(index=False)

    # -- selection helpers
    def _select(self, protocol, method, value):
        check_option(value, "score", VALUES)
        g = self.grid
        sel = (g["protocol"] == protocol).to_numpy() & (g["method"] == method).to_numpy()
        if not sel.any():
            raise ValueError(
                f"`protocol`/`method` ({protocol!r}, {method!r}) is not in this bootstrap; it has "
                f"{sorted(set(zip(g['protocol'], g['method'])))}"
            )
        sub = g[sel]
        datasets = list(pd.unique(sub["dataset"]))
        models = list(pd.unique(sub["model"]))
        di = sub["dataset"].map({d: i for i, d in enumerate(datasets)}).to_numpy()
        mi = sub["model"].map({mm: i for i, mm in enumerate(models)}).to_numpy()
        j = VALUES.index(value)
        point = np.full((len(datasets), len(models)), np.nan)
        point[di, mi] = sub[value].to_numpy()
        reps = np.full((self.n_bootstrap, len(datasets), len(models)), np.nan)
        reps[:, di, mi] = self.replicates[:, np.flatnonzero(sel), j]
        # the mean over datasets as one more "dataset" (NaN datasets skipped, as rank_table does)
        point = np.concatenate([point, _nanmean(point, 0)[None]], axis=0)
        reps = np.concatenate([reps, _nanmean(reps, 1)[:, None]], axis=1)
        return datasets + [MEAN], models, point, reps

    def intervals(self, *, confidence_level=None):
        """Every value of every cell and of the mean over datasets, with its interval.

        Returns
        -------
        DataFrame
            ``protocol``, ``method``, ``dataset`` (datasets then ``"mean"``),
            ``model``, ``score`` (``auc`` or a score), ``estimate``, ``low``,
            ``high``, ``standard_error`` (the replicates' standard deviation).
        """
        level = self.confidence_level if confidence_level is None else check_bootstrap(1, confidence_level)[1]
        parts = []
        for p, meth in self.grid[["protocol", "method"]].drop_duplicates().itertuples(index=False):
            for v in VALUES:
                datasets, models, point, reps = self._select(p, meth, v)
                low, high = percentile_interval(reps, level, axis=0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    se = np.nanstd(reps, axis=0, ddof=1)
                parts.append(pd.DataFrame({
                    "protocol": p, "method": meth, "dataset": np.repeat(datasets, len(models)),
                    "model": np.tile(models, len(datasets)), "score": v, "estimate": point.ravel(),
                    "low": low.ravel(), "high": high.ravel(), "standard_error": se.ravel(),
                }))
        return pd.concat(parts, ignore_index=True)

    def rank_stability(self, protocol, method, *, score="accuracy"):
        """Bootstrap distribution of each model's AUC rank and ``score`` rank.

        Per dataset and for the mean over datasets: the point ranks (rank 1 =
        best, ties share the best rank), their percentile intervals, and
        ``p_change``: the share of replicates whose rank change ``auc_rank -
        rank`` has the sign reported (for a reported change of 0: the share
        where it is 0).  ``significant`` is ``p_change >= 0.95``.

        Returns
        -------
        DataFrame
            ``dataset``, ``model``, ``auc_rank``, ``auc_rank_low``,
            ``auc_rank_high``, ``rank``, ``rank_low``, ``rank_high``,
            ``change``, ``change_low``, ``change_high``, ``p_change``,
            ``significant``.
        """
        check_option(score, "score", SCORES)
        datasets, models, auc_p, auc_r = self._select(protocol, method, "auc")
        _, _, sc_p, sc_r = self._select(protocol, method, score)
        ra_p, rs_p = _ranks(auc_p), _ranks(sc_p)
        ra_r, rs_r = _ranks(auc_r), _ranks(sc_r)
        ch_p, ch_r = ra_p - rs_p, ra_r - rs_r
        lvl = self.confidence_level
        ra_lo, ra_hi = percentile_interval(ra_r, lvl)
        rs_lo, rs_hi = percentile_interval(rs_r, lvl)
        ch_lo, ch_hi = percentile_interval(ch_r, lvl)
        valid = np.isfinite(ch_r)
        same_sign = np.where(ch_p > 0, ch_r > 0, np.where(ch_p < 0, ch_r < 0, ch_r == 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            p = (same_sign & valid).sum(axis=0) / valid.sum(axis=0)
        p = np.where(np.isfinite(ch_p), p, np.nan)
        n = len(models)
        out = pd.DataFrame({
            "dataset": np.repeat(datasets, n), "model": np.tile(models, len(datasets)),
            "auc_rank": ra_p.ravel(), "auc_rank_low": ra_lo.ravel(), "auc_rank_high": ra_hi.ravel(),
            "rank": rs_p.ravel(), "rank_low": rs_lo.ravel(), "rank_high": rs_hi.ravel(),
            "change": ch_p.ravel(), "change_low": ch_lo.ravel(), "change_high": ch_hi.ravel(),
            "p_change": p.ravel(),
        })
        out["significant"] = out["p_change"] >= 0.95
        return out

    def pairwise(self, protocol, method, *, score="accuracy"):
        """For each ordered pair of models, how often the first beats the second by ``score``.

        Returns
        -------
        DataFrame
            ``dataset`` (datasets then ``"mean"``), ``model``, ``other``,
            ``difference`` (point estimate of model - other), ``low``, ``high``
            (percentile interval of the difference), ``p_better`` (share of
            replicates where model > other), ``p_tie``.
        """
        datasets, models, point, reps = self._select(protocol, method, score)
        n = len(models)
        a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        keep = a != b
        a, b = a[keep], b[keep]
        diff_p = point[:, a] - point[:, b]  # (D+1, pairs)
        diff_r = reps[:, :, a] - reps[:, :, b]
        low, high = percentile_interval(diff_r, self.confidence_level)
        valid = np.isfinite(diff_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_better = (diff_r > 0).sum(axis=0) / valid.sum(axis=0)
            p_tie = (diff_r == 0).sum(axis=0) / valid.sum(axis=0)
        k = len(a)
        names = np.asarray(models, dtype=object)
        return pd.DataFrame({
            "dataset": np.repeat(datasets, k), "model": np.tile(names[a], len(datasets)),
            "other": np.tile(names[b], len(datasets)), "difference": diff_p.ravel(), "low": low.ravel(),
            "high": high.ravel(), "p_better": p_better.ravel(), "p_tie": p_tie.ravel(),
        })

    def kendall(self, protocol, method, *, score="accuracy"):
        """Kendall's tau-b between the AUC and ``score`` rankings, with a percentile interval.

        Returns
        -------
        DataFrame
            ``dataset`` (datasets then ``"mean"``), ``tau``, ``tau_low``,
            ``tau_high``, ``p_tau_below_1`` (share of replicates where the
            rankings disagree on some pair), ``n_models``.
        """
        check_option(score, "score", SCORES)
        datasets, models, auc_p, auc_r = self._select(protocol, method, "auc")
        _, _, sc_p, sc_r = self._select(protocol, method, score)
        tau_p = _kendall_b(auc_p, sc_p)
        tau_r = _kendall_b(auc_r, sc_r)
        low, high = percentile_interval(tau_r, self.confidence_level)
        valid = np.isfinite(tau_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            below = ((tau_r < 1) & valid).sum(axis=0) / valid.sum(axis=0)
        return pd.DataFrame({
            "dataset": datasets, "tau": tau_p, "tau_low": low, "tau_high": high, "p_tau_below_1": below,
            "n_models": (np.isfinite(auc_p) & np.isfinite(sc_p)).sum(axis=1),
        })


def _with_intervals(grid, replicates, confidence_level):
    out = grid.copy()
    low, high = percentile_interval(replicates, confidence_level, axis=0)  # (rows, values)
    cols = list(grid.columns)
    for j, v in enumerate(VALUES):
        out[f"{v}_low"], out[f"{v}_high"] = low[:, j], high[:, j]
        i = cols.index(v) + 1
        cols[i:i] = [f"{v}_low", f"{v}_high"]
    return out[cols]


def bootstrap_grid(
    bench, *, protocols=PROTOCOLS, methods=METHODS, n_bootstrap=1000, confidence_level=0.95, class_weight=None,
    n_repeats=100, random_state=0, n_jobs=1,
):
    """Stratified, paired bootstrap of the expected-accuracy grid, refitting every calibrator.

    Each replicate resamples every dataset with replacement, separately for
    its positives and negatives (so sizes and class balance are kept), and
    every model is evaluated on the same replicate.  Each cell of
    :func:`~beyondauc.expected_accuracy_grid` is recomputed on the replicate:
    the AUC on the resampled dataset, and each score after *refitting* the
    calibrator on the replicate of its calibration data and evaluating on the
    replicate of its evaluation data.  ``indata``: see the module notes
    (the same split positions applied to the resampled dataset, the first
    ``min(n_repeats, 10)`` splits per replicate).

    Parameters
    ----------
    bench : Benchmark
    protocols, methods, class_weight, n_repeats, n_jobs
        As in :func:`~beyondauc.expected_accuracy_grid`.
    n_bootstrap : int, default=1000
        Number of replicates (>= 1).
    confidence_level : float, default=0.95
        Of the percentile intervals.
    random_state : int, default=0
        Seeds the ``indata`` splits and the replicates: replicate ``b`` is the
        same whatever ``n_bootstrap`` beyond it, the chunking or ``n_jobs``.

    Returns
    -------
    GridBootstrap
        ``.grid`` (point estimates with ``<value>_low`` / ``<value>_high``),
        ``.replicates``, and ``.intervals()``, ``.rank_stability()``,
        ``.pairwise()``, ``.kendall()`` computed from the same replicates.

    Notes
    -----
    Percentile intervals only: BCa needs an acceleration from a jackknife
    over examples (one refit per left-out example and cell) and a smooth
    statistic, while a refitted threshold makes accuracy a step function of
    the resampling weights, so BCa is not well defined here.

    Examples
    --------
    >>> from beyondauc import load_demo, bootstrap_grid
    >>> bench = load_demo().subset(datasets=["breast_cancer", "wine"])
    >>> bs = bootstrap_grid(bench, protocols=["xdomain"], methods=["logistic"], n_bootstrap=20)
    >>> bool((bs.grid["accuracy_low"] <= bs.grid["accuracy_high"]).all())
    True
    >>> list(bs.rank_stability("xdomain", "logistic").columns[-2:])
    ['p_change', 'significant']
    """
    if isinstance(protocols, str):
        protocols = [protocols]
    if isinstance(methods, str):
        methods = [methods]
    protocols, methods = list(dict.fromkeys(protocols)), list(dict.fromkeys(methods))
    seed = _check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state)
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    n_jobs = _check_n_jobs(n_jobs)
    grid = expected_accuracy_grid(bench, protocols=protocols, methods=methods, class_weight=class_weight,
                                  n_repeats=n_repeats, random_state=seed, n_jobs=n_jobs)
    ctx = _Context(
        y=bench.labels(), codes=bench.dataset_codes(), offsets=bench._offsets, datasets=bench.datasets,
        domains=dict(bench.domains), protocols=tuple(protocols), methods=tuple(methods),
        plans={p: _plan(bench, p) for p in protocols}, class_weight=class_weight, n_repeats=n_repeats, seed=seed,
    )
    bctx = _BootContext(base=ctx, strata=strata_of(ctx.codes, ctx.y), n_bootstrap=n_bootstrap, boot_seed=seed)
    row_of = {key: i for i, key in enumerate(zip(
        grid["protocol"], grid["method"], grid["dataset"].map({d: i for i, d in enumerate(bench.datasets)}),
        grid["model"]))}
    reps = np.full((n_bootstrap, len(grid), len(VALUES)), np.nan)
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        scores = np.stack([bench.scores(model) for model in bench.models], axis=1)
        for j, b0, b1, cells in _map_tasks(bctx, scores, n_jobs):
            for (p, meth, i), v in cells.items():
                reps[b0:b1, row_of[(p, meth, i, bench.models[j])]] = v
    return GridBootstrap(grid=_with_intervals(grid, reps, confidence_level), replicates=reps,
                         n_bootstrap=n_bootstrap, confidence_level=confidence_level, random_state=random_state)
