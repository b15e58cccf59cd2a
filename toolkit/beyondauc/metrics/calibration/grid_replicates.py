"""One model's bootstrap replicates of the AUC vs expected accuracy grid: the engine of :func:`~beyondauc.bootstrap_grid`.

A replicate is a vector of counts per example (:mod:`beyondauc.metrics.uncertainty.bootstrap`);
on a model's score grid it becomes per-value positive/negative counts (one
sparse product), and the replicates' fits (:mod:`beyondauc.metrics.calibration.replicate_fits`) are
batched exactly like the point grid's fits: replicates are more rows of the (fits x
grid values) count matrices handed to the vectorised calibrators of
:mod:`beyondauc.metrics.core.fitting`.

Fits calibrated on every dataset but the one they evaluate (``xdomain``), without
class weights, take a faster path with the same decisions, which lives in
:mod:`beyondauc.metrics.calibration.xdomain_fast_path` (its notes): counts are integers,
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

import warnings
from dataclasses import dataclass

import numpy as np

from ..core.fitting import class_weighted
from ..core.kernel import grid_counts, stacked_counts
from ..core.logistic import logistic_params
from ..uncertainty.bootstrap import CountGrid, bootstrap_counts, grid_count_chunks, grid_weights
from ..uncertainty.cells import cell_scores
from ..uncertainty.clusters import cluster_counts
from .fits import FitBlock, FitSettings
from .grid_cells import fit_matrices
from .protocol_plans import SCORES, Context, splits
from .replicate_fits import (
    combine_rows,
    fit_rows,
    fit_standardization,
    indicator,
    local_grids,
    segment_auc,
)
from .xdomain_fast_path import XGrid, xdomain_ok, xdomain_scores

__all__ = ["BOOTSTRAP_REPEATS", "VALUES", "BootContext", "ModelBoot", "ReplicateCounts", "SplitsSetup"]

VALUES = ("auc", *SCORES)  # the replicate array's last axis
BOOTSTRAP_REPEATS = 10  # indata splits per replicate (at most n_repeats)
_CELLS = 4_000_000  # (fits x grid values) cells per batch of replicates: bounds memory
_FAST_CELLS = 16_000_000  # (grid + local values) per batch of replicates on the fast path alone: bounds memory


@dataclass(frozen=True)
class BootContext:
    """What every model's bootstrap shares: the grid's :class:`~beyondauc.metrics.calibration.protocol_plans.Context`,
    the strata resampled, the number of replicates and their seed."""

    base: Context
    strata: np.ndarray
    n_bootstrap: int
    boot_seed: object
    cells: int | None = None  # the replicates' cells per dataset and class (None: every distinct score)
    clusters: np.ndarray | None = None  # each example's item when items repeat (cluster bootstrap), else None


@dataclass(frozen=True)
class SplitsSetup:
    """One dataset's ``indata`` set-up for the replicates: its rows ``lo:hi``, its grid ``xd`` (``md`` values),
    the evaluation side of each of its ``R`` splits and all its rows as sparse 0/1 (positives, negatives)
    matrices from examples to grid columns (``ev``: split r's columns at ``r * md``), and the logistic fits'
    conditioning ``std`` and warm start ``init`` (None without logistic)."""

    lo: int
    hi: int
    xd: np.ndarray
    R: int
    md: int
    ev: list
    full: list
    std: tuple
    init: tuple | None


class ReplicateCounts:
    """Replicates ``start:stop`` of a bootstrap, as per-example counts given, or drawn grid by grid when asked.

    A fit reads a replicate only as per-value counts on a grid: drawn
    (:func:`~beyondauc.metrics.uncertainty.bootstrap.grid_count_chunks`), they are those
    of the per-example counts (:func:`~beyondauc.metrics.uncertainty.bootstrap.grid_weights`
    of :func:`~beyondauc.metrics.uncertainty.bootstrap.bootstrap_counts`) exactly, without
    the (replicates x examples) counts: those are made only for a caller that
    reads examples (:meth:`examples`, the ``indata`` splits) or several grids
    (each grid is then counted from them, not drawn again), once.
    """

    def __init__(self, strata, n_bootstrap, random_state, start, stop, *, counts=None, clusters=None):
        self.strata, self.n_bootstrap, self.random_state = strata, n_bootstrap, random_state
        self.start, self.stop, self.W = start, stop, counts
        if clusters is not None:  # repeated samples: items drawn whole (the cluster bootstrap), counted per example
            self.W = cluster_counts(clusters, strata, n_bootstrap, random_state=random_state, start=start, stop=stop)

    @classmethod
    def of(cls, W):
        """The replicates of the per-example counts ``W`` (R, n)."""
        return cls(None, len(W), None, 0, len(W), counts=W)

    def __len__(self):
        return self.stop - self.start

    def examples(self):
        """The per-example counts (R, n), drawn once."""
        if self.W is None:
            self.W = bootstrap_counts(
                self.strata, self.n_bootstrap, random_state=self.random_state, start=self.start, stop=self.stop
            )
        return self.W

    def grids(self, per, inverse, y, n_values, *, groups=None, n_groups=1):
        """Yield the (positive, negative) per-value counts of each ``per`` replicates in turn."""
        if self.W is not None:
            for c0 in range(0, len(self), per):
                yield grid_weights(self.W[c0 : c0 + per], inverse, y, n_values, groups=groups, n_groups=n_groups)
            return
        chunks = [(c0, min(c0 + per, self.stop)) for c0 in range(self.start, self.stop, per)]
        grid = CountGrid(inverse, y, n_values, groups=groups, n_groups=n_groups)
        yield from grid_count_chunks(self.strata, grid, self.n_bootstrap, chunks, random_state=self.random_state)


class ModelBoot:
    """One model's bootstrap: its grids and point-estimate fits, set up once, then run on blocks of replicates."""

    def __init__(self, bctx, s):
        ctx = bctx.base
        self.bctx = bctx
        self.y, self.codes, self.methods, self.class_weight = ctx.y, ctx.codes, ctx.methods, ctx.class_weight
        self.D = len(ctx.datasets)
        s = cell_scores(s, bctx.strata, self.y, cells=bctx.cells)  # the replicates' scores: at most `cells` per stratum
        self._set_up_fits(s)
        # indata (and indomain's fallback): per dataset, the split positions and grids
        self.indata = sorted({i for p in ctx.protocols for i in ctx.plans[p][1]})
        self.ind = {i: self._set_up_indata(s, i) for i in self.indata}

    def _set_up_fits(self, s):
        """The model's grid and the fits on whole datasets: which take the fast path, and their warm starts."""
        ctx, y, codes, D = self.bctx.base, self.y, self.codes, self.D
        sizes = np.diff(ctx.offsets)
        x, inv, _, _ = grid_counts(y, s)
        self.m = len(x)
        pos_ds, neg_ds = stacked_counts(inv, y, codes, self.m, D)
        self.std = fit_standardization(x, pos_ds, neg_ds)
        self.local_col, self.first_col, self.n_local = local_grids(s, codes, D)
        self.grids = [(x, inv, list(self.methods))]  # every method splits or fits the scores themselves (scale-free)
        fits = self.fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
        self.F = len(fits)
        self.G_cal, self.G_ev = fit_matrices(fits, D)
        self.empty = np.array(
            [sizes[list(f.cal)].sum() == 0 or sizes[list(f.evl)].sum() == 0 for f in fits], dtype=bool
        )
        self.fast = xdomain_ok(fits, sizes, D, self.class_weight) if self.F else []
        self.slow = [k for k in range(self.F) if k not in set(self.fast)]
        self.xg = XGrid(x, inv, self.local_col, self.first_col, self.n_local, D) if self.fast else None
        self.fast_ds = np.array([fits[k].dataset for k in self.fast], dtype=np.int64)
        self.init, self.init_ds = self._warm_starts(x, pos_ds, neg_ds)

    def _warm_starts(self, x, pos_ds, neg_ds):
        """Each fit's point-estimate logistic fit (None without logistic), and the fast fits' by evaluated dataset."""
        init = init_ds = None
        if self.F and "logistic" in self.methods:  # warm start: each cell's point-estimate fit
            wp, wn = class_weighted(self.G_cal @ pos_ds, self.G_cal @ neg_ds, self.class_weight)
            init = logistic_params(x, wp, wn, standardize=self.std, counts=self.G_cal @ (pos_ds + neg_ds))
        if self.fast and init is not None:  # the fast fits' point-estimate fits, by evaluated dataset
            init_ds = (np.empty(self.D), np.empty(self.D))
            init_ds[0][self.fast_ds], init_ds[1][self.fast_ds] = init[0][self.fast], init[1][self.fast]
        return init, init_ds

    def _set_up_indata(self, s, i):
        """Dataset ``i``'s split positions, grid and point-estimate fit (None if it has fewer than 2 rows)."""
        ctx, y = self.bctx.base, self.y
        lo, hi = int(ctx.offsets[i]), int(ctx.offsets[i + 1])
        tests = splits(hi - lo, ctx.n_repeats, ctx.seed)
        if tests is None:
            return None
        tests = tests[: min(ctx.n_repeats, BOOTSTRAP_REPEATS)]
        R, n_test = tests.shape
        yd = y[lo:hi]
        xd, invd, fp, fn = grid_counts(yd, s[lo:hi])
        md = len(xd)
        flat = tests.ravel()
        ev_ind = indicator(flat, np.repeat(np.arange(R), n_test) * md + invd[flat], yd[flat], hi - lo, R * md)
        full_ind = indicator(np.arange(hi - lo), invd, yd, hi - lo, md)
        std_d = fit_standardization(xd, fp, fn)
        init_d = None
        if "logistic" in self.methods:
            wp, wn = class_weighted(fp[None], fn[None], self.class_weight)
            init_d = logistic_params(xd, wp, wn, standardize=std_d, counts=(fp + fn)[None])
        return SplitsSetup(lo=lo, hi=hi, xd=xd, R=R, md=md, ev=ev_ind, full=full_ind, std=std_d, init=init_d)

    def run(self, W):
        """Replicate values of every cell for the replicates ``W`` (:class:`ReplicateCounts`).

        Returns ``{(protocol, method, dataset): (B, len(VALUES))}``.
        """
        B, M, S = len(W), len(self.methods), len(SCORES)
        auc_out = np.empty((B, self.D))
        fit_out = np.empty((M, B, self.F, S))
        ind_out = {i: np.empty((M, B, S)) for i, d in self.ind.items() if d is not None}
        if self.slow or ind_out:  # more than the local grid reads the replicates: draw them once, as per-example counts
            W.examples()
        self._other_datasets(W, auc_out, fit_out)
        for i, out in ind_out.items():
            self._indata(W, self.ind[i], out)
        return self._cells(auc_out, fit_out, ind_out, B)

    def _other_datasets(self, W, auc_out, fit_out):
        """Fill the AUCs and the cross-dataset fits' scores of every replicate, chunk by chunk of replicates."""
        y, codes, methods, class_weight = self.y, self.codes, self.methods, self.class_weight
        D, m, F, std, init = self.D, self.m, self.F, self.std, self.init
        fast, slow, fast_ds, xg = self.fast, self.slow, self.fast_ds, self.xg
        S = len(SCORES)
        # slow fits hold (fits x grid) counts per replicate; the fast path only the grid and local columns
        per = max(1, _CELLS // max(1, (F + 1) * m) if slow else _FAST_CELLS // max(1, m + self.n_local))
        local = W.grids(per, self.local_col, y, self.n_local)
        grids = [
            W.grids(per, invg, y, len(xgr), groups=codes, n_groups=D) if slow and meths else None
            for xgr, invg, meths in self.grids
        ]
        for c0 in range(0, len(W), per):
            Pl, Nl = next(local)
            Rc = len(Pl)
            r = slice(c0, c0 + Rc)
            auc_out[r] = segment_auc(Pl[:, 0], Nl[:, 0], self.first_col, D)
            if fast:
                for j, sc in xdomain_scores(xg, Pl[:, 0], Nl[:, 0], methods, self.init_ds, std):
                    fit_out[j, r][:, fast] = sc[:, fast_ds]
            if not slow:
                continue
            Gc, Ge = self.G_cal[slow], self.G_ev[slow]
            Fs = len(slow)
            for (xgr, _, meths), counts in zip(self.grids, grids):
                if not meths:
                    continue
                P, N = next(counts)  # (Rc, D, m)
                (cp, tp), (cn, tn) = combine_rows(Gc, P), combine_rows(Gc, N)
                ep, en = combine_rows(Ge, P, tp)[0], combine_rows(Ge, N, tn)[0]
                del P, N
                rows_init = None if init is None else (np.tile(init[0][slow], Rc), np.tile(init[1][slow], Rc))
                sc = fit_rows(FitBlock(xgr, cp, cn, ep, en), FitSettings(tuple(meths), class_weight), rows_init, std)
                for j, meth in enumerate(meths):
                    fit_out[methods.index(meth), r][:, slow] = sc[j].reshape(Rc, Fs, S)

    def _indata(self, W, d, out):
        """Fill ``out`` (methods, B, scores): one dataset's ``indata`` scores, its random splits read per example."""
        W_ex = W.examples()  # drawn once by :meth:`run`
        M, S = len(self.methods), len(SCORES)
        R, md = d.R, d.md
        per_d = max(1, _CELLS // max(1, R * md))
        for c0 in range(0, len(W), per_d):
            Wd = W_ex[c0 : c0 + per_d, d.lo : d.hi].astype(np.float64)
            Rc = len(Wd)
            r = slice(c0, c0 + Rc)
            ep = np.asarray((d.ev[0].T @ Wd.T).T).reshape(Rc, R, md)
            en = np.asarray((d.ev[1].T @ Wd.T).T).reshape(Rc, R, md)
            fpos = np.asarray((d.full[0].T @ Wd.T).T)[:, None, :]
            fneg = np.asarray((d.full[1].T @ Wd.T).T)[:, None, :]
            cp, cn = (fpos - ep).reshape(Rc * R, md), (fneg - en).reshape(Rc * R, md)
            ep, en = ep.reshape(Rc * R, md), en.reshape(Rc * R, md)
            rows_init = None if d.init is None else (np.repeat(d.init[0], Rc * R), np.repeat(d.init[1], Rc * R))
            settings = FitSettings(tuple(self.methods), self.class_weight)
            sc = fit_rows(FitBlock(d.xd, cp, cn, ep, en), settings, rows_init, d.std)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a score undefined in every repeat
                out[:, r] = np.nanmean(sc.reshape(M, Rc, R, S), axis=2)

    def _cells(self, auc_out, fit_out, ind_out, B):
        """``{(protocol, method, dataset): (B, len(VALUES))}``: the AUC column, then the fit's scores."""
        cells = {}
        for k, f in enumerate(self.fits):
            for j, meth in enumerate(self.methods):
                if self.empty[k]:
                    v = np.full((B, len(VALUES)), np.nan)
                    v[:, 0] = auc_out[:, f.dataset]
                else:
                    v = np.concatenate([auc_out[:, [f.dataset]], fit_out[j, :, k]], axis=1)
                cells[(f.protocol, meth, f.dataset)] = v
        for p in self.bctx.base.protocols:
            for i in self.bctx.base.plans[p][1]:
                for j, meth in enumerate(self.methods):
                    v = np.full((B, len(VALUES)), np.nan)
                    v[:, 0] = auc_out[:, i]
                    if i in ind_out:
                        v[:, 1:] = ind_out[i][j]
                    cells[(p, meth, i)] = v
        return cells
