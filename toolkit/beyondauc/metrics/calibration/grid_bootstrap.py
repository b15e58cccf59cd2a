"""Bootstrap of the expected-accuracy grid, and the stability of its rankings.

:func:`bootstrap_grid` resamples the benchmark ``n_bootstrap`` times --
stratified by dataset and class, paired (every model reads the same
replicate) -- and recomputes every cell of
:func:`~beyondauc.expected_accuracy_grid` on each replicate, *refitting* the
calibrator on the replicate of its calibration data: the threshold's own
sampling error is part of what a deployed model meets.

A replicate is a vector of counts per example (:mod:`beyondauc.metrics.uncertainty.bootstrap`);
on a model's score grid it becomes per-value positive/negative counts (one
sparse product), and the replicates' fits (:mod:`beyondauc.metrics.calibration.grid_fits`) are
batched exactly like the point grid's fits: replicates are more rows of the (fits x
grid values) count matrices handed to the vectorised calibrators of
:mod:`beyondauc.metrics.core.fitting`.

Fits calibrated on every dataset but the one they evaluate (``xdomain``), without
class weights, take a faster path with the same decisions, which lives in
:mod:`beyondauc.metrics.calibration.grid_fits` (its notes on the fast path): counts are integers,
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
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ...utils.parallel import pool_context, process_pool
from ...utils.validation import check_option
from ..core.fitting import class_weighted
from ..core.kernel import grid_counts, stacked_counts
from ..core.logistic import logistic_params
from ..core.views import each_model_view, sort_like
from ..uncertainty.bootstrap import (
    BLOCK,
    CountGrid,
    bootstrap_counts,
    check_bootstrap,
    grid_count_chunks,
    grid_weights,
    percentile_interval,
    strata_of,
)
from ..uncertainty.cells import cell_scores, check_cells
from ..uncertainty.clusters import cluster_counts
from ..uncertainty.paired import bootstrap_pvalue, holm_adjust
from .grid import (
    METHODS,
    SCORES,
    Context,
    check_grid_args,
    check_n_jobs,
    point_grid,
    protocol_plan,
    splits,
)
from .grid_fits import (
    BootContext,
    XGrid,
    combine_rows,
    fit_rows,
    fit_standardization,
    indicator,
    local_grids,
    segment_auc,
    xdomain_ok,
    xdomain_scores,
)
from .protocols import grid_choices

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from ...data.benchmark import Benchmark

__all__ = ["GridBootstrap", "bootstrap_grid"]

MEAN = "mean"
VALUES = ("auc", *SCORES)  # the replicate array's last axis
BOOTSTRAP_REPEATS = 10  # indata splits per replicate (at most n_repeats)
_CELLS = 4_000_000  # (fits x grid values) cells per batch of replicates: bounds memory
_FAST_CELLS = 16_000_000  # (grid + local values) per batch of replicates on the fast path alone: bounds memory
_TASK_REPLICATES = 2 * BLOCK  # replicates of one model per task (a multiple of BLOCK: each block drawn once)
COUNTS_CACHE_BYTES = 512 * 2**20  # keep a process's drawn counts while they fit in this


# -- the engine ---------------------------------------------------------------------


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
        y, codes, methods, class_weight = ctx.y, ctx.codes, ctx.methods, ctx.class_weight
        D = len(ctx.datasets)
        sizes = np.diff(ctx.offsets)
        s = cell_scores(s, bctx.strata, y, cells=bctx.cells)  # the replicates' scores: at most `cells` per stratum
        x, inv, _, _ = grid_counts(y, s)
        m = len(x)
        pos_ds, neg_ds = stacked_counts(inv, y, codes, m, D)
        std = fit_standardization(x, pos_ds, neg_ds)
        local_col, first_col, n_local = local_grids(s, codes, D)
        grids = [(x, inv, list(methods))]  # every method splits or fits the scores themselves (scale-free)

        fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
        F = len(fits)
        G_cal, G_ev = np.zeros((F, D)), np.zeros((F, D))
        for k, f in enumerate(fits):
            G_cal[k, list(f.cal)] = 1.0
            G_ev[k, list(f.evl)] = 1.0
        empty = np.array([sizes[list(f.cal)].sum() == 0 or sizes[list(f.evl)].sum() == 0 for f in fits], dtype=bool)
        fast = xdomain_ok(fits, sizes, D, class_weight) if F else []
        slow = [k for k in range(F) if k not in set(fast)]
        xg = XGrid(x, inv, local_col, first_col, n_local, D) if fast else None
        fast_ds = np.array([fits[k].dataset for k in fast], dtype=np.int64)
        init = None
        if F and "logistic" in methods:  # warm start: each cell's point-estimate fit
            wp, wn = class_weighted(G_cal @ pos_ds, G_cal @ neg_ds, class_weight)
            init = logistic_params(x, wp, wn, standardize=std, counts=G_cal @ (pos_ds + neg_ds))
        init_ds = None
        if fast and init is not None:  # the fast fits' point-estimate fits, by evaluated dataset
            init_ds = (np.empty(D), np.empty(D))
            init_ds[0][fast_ds], init_ds[1][fast_ds] = init[0][fast], init[1][fast]

        # indata (and indomain's fallback): per dataset, the split positions and grids
        indata = sorted({i for p in ctx.protocols for i in ctx.plans[p][1]})
        ind = {}
        for i in indata:
            lo, hi = int(ctx.offsets[i]), int(ctx.offsets[i + 1])
            tests = splits(hi - lo, ctx.n_repeats, ctx.seed)
            if tests is None:
                ind[i] = None
                continue
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
            if "logistic" in methods:
                wp, wn = class_weighted(fp[None], fn[None], class_weight)
                init_d = logistic_params(xd, wp, wn, standardize=std_d, counts=(fp + fn)[None])
            ind[i] = dict(
                lo=lo, hi=hi, xd=xd, R=R, md=md, ev=ev_ind, full=full_ind, std=std_d, init=init_d, n_test=n_test
            )
        self.__dict__.update(
            y=y,
            codes=codes,
            methods=methods,
            class_weight=class_weight,
            D=D,
            m=m,
            std=std,
            local_col=local_col,
            first_col=first_col,
            n_local=n_local,
            grids=grids,
            fits=fits,
            F=F,
            G_cal=G_cal,
            G_ev=G_ev,
            empty=empty,
            fast=fast,
            slow=slow,
            xg=xg,
            fast_ds=fast_ds,
            init=init,
            init_ds=init_ds,
            indata=indata,
            ind=ind,
        )

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
            for (xgr, invg, meths), counts in zip(self.grids, grids):
                if not meths:
                    continue
                P, N = next(counts)  # (Rc, D, m)
                (cp, tp), (cn, tn) = combine_rows(Gc, P), combine_rows(Gc, N)
                ep, en = combine_rows(Ge, P, tp)[0], combine_rows(Ge, N, tn)[0]
                del P, N
                rows_init = None if init is None else (np.tile(init[0][slow], Rc), np.tile(init[1][slow], Rc))
                sc = fit_rows(xgr, cp, cn, ep, en, meths, class_weight, rows_init, std)
                for j, meth in enumerate(meths):
                    fit_out[methods.index(meth), r][:, slow] = sc[j].reshape(Rc, Fs, S)

    def _indata(self, W, d, out):
        """Fill ``out`` (methods, B, scores): one dataset's ``indata`` scores, its random splits read per example."""
        W_ex = W.examples()  # drawn once by :meth:`run`
        M, S = len(self.methods), len(SCORES)
        R, md = d["R"], d["md"]
        per_d = max(1, _CELLS // max(1, R * md))
        for c0 in range(0, len(W), per_d):
            Wd = W_ex[c0 : c0 + per_d, d["lo"] : d["hi"]].astype(np.float64)
            Rc = len(Wd)
            r = slice(c0, c0 + Rc)
            ep = np.asarray((d["ev"][0].T @ Wd.T).T).reshape(Rc, R, md)
            en = np.asarray((d["ev"][1].T @ Wd.T).T).reshape(Rc, R, md)
            fpos = np.asarray((d["full"][0].T @ Wd.T).T)[:, None, :]
            fneg = np.asarray((d["full"][1].T @ Wd.T).T)[:, None, :]
            cp, cn = (fpos - ep).reshape(Rc * R, md), (fneg - en).reshape(Rc * R, md)
            ep, en = ep.reshape(Rc * R, md), en.reshape(Rc * R, md)
            rows_init = (
                None if d["init"] is None else (np.repeat(d["init"][0], Rc * R), np.repeat(d["init"][1], Rc * R))
            )
            sc = fit_rows(d["xd"], cp, cn, ep, en, self.methods, self.class_weight, rows_init, d["std"])
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


class _Runner:
    """Runs tasks (model, first replicate, end) of one bootstrap, in this process or a worker.

    Tasks come model by model, so the last model's set-up is kept; each range of
    replicates (:class:`ReplicateCounts`: drawn on each model's grid, per-example
    counts only for ``indata``) is kept per process while all their counts would
    fit in ``_COUNTS_CACHE_BYTES`` (else made again per task: the same counts, the
    draws are seeded per block).
    """

    def __init__(self, bctx, scores):
        self.bctx, self.scores = bctx, scores
        self._boot = (None, None)
        self._counts = {}
        self._keep = bctx.n_bootstrap * len(bctx.strata) * 4 <= COUNTS_CACHE_BYTES

    def counts(self, b0, b1):
        W = self._counts.get((b0, b1))
        if W is None:
            W = ReplicateCounts(
                self.bctx.strata, self.bctx.n_bootstrap, self.bctx.boot_seed, b0, b1, clusters=self.bctx.clusters
            )
            if self._keep:
                self._counts[(b0, b1)] = W
        return W

    def __call__(self, task):
        j, b0, b1 = task
        if self._boot[0] != j:
            self._boot = (j, None)  # free the previous model's set-up first
            self._boot = (j, ModelBoot(self.bctx, self.scores[:, j]))
        return self._boot[1].run(self.counts(b0, b1))


def _init_worker(bctx, scores):
    global _WORKER
    _WORKER = _Runner(bctx, scores)
    threadpool_limits(limits=1, user_api="blas")


def _worker(task):
    return _WORKER(task)


def replicate_batches(start, stop):
    """``start:stop`` cut at the multiples of ``_TASK_REPLICATES`` (batches of whole blocks, one task's replicates)."""
    cuts = [start, *range((start // _TASK_REPLICATES + 1) * _TASK_REPLICATES, stop, _TASK_REPLICATES), stop]
    return list(pairwise(cuts))


def _map_tasks(bctx, scores, n_jobs):
    """Yield ``(model index, b0, b1, cells)`` for every model and range of replicates.

    A task is one model on ``_TASK_REPLICATES`` replicates, so the work spreads
    evenly over ``n_jobs`` processes whatever the number of models; the values
    do not depend on the split (replicate b is seeded by its block).
    """
    B, n_models = bctx.n_bootstrap, scores.shape[1]
    tasks = [(j, b0, b1) for j in range(n_models) for b0, b1 in replicate_batches(0, B)]
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


def ranks(values):
    """Ranks along the last axis: 1 = highest, ties share the best rank, NaN stays NaN."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    better = (v[..., None, :] > v[..., :, None]) & ok[..., None, :]
    r = 1.0 + better.sum(axis=-1)
    return np.where(ok, r, np.nan)


def kendall_b(a, b):
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


def nanmean_quiet(a, axis):
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

    def __repr__(self) -> str:
        p = list(pd.unique(self.grid["protocol"]))
        meth = list(pd.unique(self.grid["method"]))
        return (
            f"GridBootstrap(n_bootstrap={self.n_bootstrap}, confidence_level={self.confidence_level}, "
            f"protocols={p}, methods={meth}, cells={len(self.grid)})"
        )

    def _repr_html_(self) -> str:
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
        point = np.concatenate([point, nanmean_quiet(point, 0)[None]], axis=0)
        reps = np.concatenate([reps, nanmean_quiet(reps, 1)[:, None]], axis=1)
        return datasets + [MEAN], models, point, reps

    def intervals(self, *, confidence_level: float | None = None) -> pd.DataFrame:
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
                parts.append(
                    pd.DataFrame(
                        {
                            "protocol": p,
                            "method": meth,
                            "dataset": np.repeat(datasets, len(models)),
                            "model": np.tile(models, len(datasets)),
                            "score": v,
                            "estimate": point.ravel(),
                            "low": low.ravel(),
                            "high": high.ravel(),
                            "standard_error": se.ravel(),
                        }
                    )
                )
        return pd.concat(parts, ignore_index=True)

    def rank_stability(self, protocol: str, method: str, *, score: str = "accuracy") -> pd.DataFrame:
        """Bootstrap distribution of each model's AUC rank and ``score`` rank.

        Per dataset and for the mean over datasets: the point ranks (rank 1 =
        best, ties share the best rank), their percentile intervals,
        ``sign_share``: the share of replicates whose rank change ``auc_rank -
        rank`` has the sign reported (for a reported change of 0: the share
        where it is 0), a stability, not a p-value; ``p_value``: the
        bootstrap's two-sided p-value of the change, ``2 * min(P*(change <=
        0), P*(change >= 0))`` capped at 1 (the change's percentile interval
        at level ``1 - p_value`` just reaches 0).  ``significant``: a nonzero
        change with ``p_value <= 1 - confidence_level``.  ``p_change`` is
        ``sign_share`` under its former name, kept for compatibility.

        Returns
        -------
        DataFrame
            ``dataset``, ``model``, ``auc_rank``, ``auc_rank_low``,
            ``auc_rank_high``, ``rank``, ``rank_low``, ``rank_high``,
            ``change``, ``change_low``, ``change_high``, ``sign_share``,
            ``p_value``, ``p_change``, ``significant``.
        """
        check_option(score, "score", SCORES)
        datasets, models, auc_p, auc_r = self._select(protocol, method, "auc")
        _, _, sc_p, sc_r = self._select(protocol, method, score)
        ra_p, rs_p = ranks(auc_p), ranks(sc_p)
        ra_r, rs_r = ranks(auc_r), ranks(sc_r)
        ch_p, ch_r = ra_p - rs_p, ra_r - rs_r
        lvl = self.confidence_level
        ra_lo, ra_hi = percentile_interval(ra_r, lvl)
        rs_lo, rs_hi = percentile_interval(rs_r, lvl)
        ch_lo, ch_hi = percentile_interval(ch_r, lvl)
        valid = np.isfinite(ch_r)
        same_sign = np.where(ch_p > 0, ch_r > 0, np.where(ch_p < 0, ch_r < 0, ch_r == 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            n_valid = valid.sum(axis=0)
            p = (same_sign & valid).sum(axis=0) / n_valid
            tail = np.minimum((valid & (ch_r <= 0)).sum(axis=0), (valid & (ch_r >= 0)).sum(axis=0)) / n_valid
        p = np.where(np.isfinite(ch_p), p, np.nan)
        p_value = np.where(np.isfinite(ch_p), np.minimum(1.0, 2 * tail), np.nan)
        n = len(models)
        out = pd.DataFrame(
            {
                "dataset": np.repeat(datasets, n),
                "model": np.tile(models, len(datasets)),
                "auc_rank": ra_p.ravel(),
                "auc_rank_low": ra_lo.ravel(),
                "auc_rank_high": ra_hi.ravel(),
                "rank": rs_p.ravel(),
                "rank_low": rs_lo.ravel(),
                "rank_high": rs_hi.ravel(),
                "change": ch_p.ravel(),
                "change_low": ch_lo.ravel(),
                "change_high": ch_hi.ravel(),
                "sign_share": p.ravel(),
                "p_value": p_value.ravel(),
                "p_change": p.ravel(),
            }
        )
        out["significant"] = (out["change"] != 0) & (out["p_value"] <= 1 - lvl)
        return out

    def pairwise(self, protocol: str, method: str, *, score: str = "accuracy") -> pd.DataFrame:
        """For each ordered pair of models, how often the first beats the second by ``score``.

        Returns
        -------
        DataFrame
            ``dataset`` (datasets then ``"mean"``), ``model``, ``other``,
            ``difference`` (point estimate of model - other), ``low``, ``high``
            (percentile interval of the difference), ``p_better`` (share of
            replicates where model > other), ``p_tie``, ``pvalue`` (two-sided
            bootstrap p-value of "no difference",
            :func:`~beyondauc.metrics.uncertainty.paired.bootstrap_pvalue`) and
            ``pvalue_holm``: Holm-adjusted within the family of one dataset's
            (or the mean's) pairs of models, each unordered pair one test
            (:func:`~beyondauc.metrics.uncertainty.paired.holm_adjust`).
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
        pvalue = bootstrap_pvalue(diff_r)  # (D+1, pairs): the same for (a, b) and (b, a)
        once = a < b  # each unordered pair is one test of its dataset's family; both orders read its value
        family = np.broadcast_to(np.arange(len(datasets))[:, None], pvalue.shape)[:, once]
        matrix = np.empty((len(datasets), n, n))
        matrix[:, a[once], b[once]] = holm_adjust(pvalue[:, once].ravel(), groups=family.ravel()).reshape(family.shape)
        matrix[:, b[once], a[once]] = matrix[:, a[once], b[once]]
        holm = matrix[:, a, b]
        return pd.DataFrame(
            {
                "dataset": np.repeat(datasets, k),
                "model": np.tile(names[a], len(datasets)),
                "other": np.tile(names[b], len(datasets)),
                "difference": diff_p.ravel(),
                "low": low.ravel(),
                "high": high.ravel(),
                "p_better": p_better.ravel(),
                "p_tie": p_tie.ravel(),
                "pvalue": pvalue.ravel(),
                "pvalue_holm": holm.ravel(),
            }
        )

    def kendall(self, protocol: str, method: str, *, score: str = "accuracy") -> pd.DataFrame:
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
        tau_p = kendall_b(auc_p, sc_p)
        tau_r = kendall_b(auc_r, sc_r)
        low, high = percentile_interval(tau_r, self.confidence_level)
        valid = np.isfinite(tau_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            below = ((tau_r < 1) & valid).sum(axis=0) / valid.sum(axis=0)
        return pd.DataFrame(
            {
                "dataset": datasets,
                "tau": tau_p,
                "tau_low": low,
                "tau_high": high,
                "p_tau_below_1": below,
                "n_models": (np.isfinite(auc_p) & np.isfinite(sc_p)).sum(axis=1),
            }
        )


def with_intervals(grid, replicates, confidence_level):
    out = grid.copy()
    low, high = percentile_interval(replicates, confidence_level, axis=0)  # (rows, values)
    cols = list(grid.columns)
    for j, v in enumerate(VALUES):
        out[f"{v}_low"], out[f"{v}_high"] = low[:, j], high[:, j]
        i = cols.index(v) + 1
        cols[i:i] = [f"{v}_low", f"{v}_high"]
    return out[cols]


def combine_bootstraps(boots: Sequence[GridBootstrap], bench: Benchmark) -> GridBootstrap:
    """One :class:`GridBootstrap` of per-model bootstraps (the per-model views of an answers benchmark, or tasks).

    Their replicates are paired: each resamples the same examples (the
    strata of an answers benchmark are its datasets, the same for every
    model; a model's task seeds replicate b alike), so ranks and pairwise
    wins read them together.

    Parameters
    ----------
    boots : sequence of GridBootstrap
        One per model, with the same ``n_bootstrap``, confidence level and seed.
    bench : Benchmark
        The benchmark whose model and dataset order the rows follow.

    Returns
    -------
    GridBootstrap

    Examples
    --------
    >>> import beyondauc as ba
    >>> from beyondauc.metrics.calibration.grid_bootstrap import bootstrap_grid, combine_bootstraps
    >>> bench = ba.load_demo().subset(datasets=["wine", "diabetes"], models=["svm", "knn"])
    >>> boots = [bootstrap_grid(bench.subset(models=[m]), protocols="xdomain", methods="logistic", n_bootstrap=5)
    ...          for m in bench.models]
    >>> both = combine_bootstraps(boots, bench)
    >>> both.replicates.shape[:2], sorted(both.grid["model"].unique())
    ((5, 4), ['knn', 'svm'])
    """
    grid = pd.concat([b.grid for b in boots], ignore_index=True)
    grid = sort_like(grid.assign(_row=np.arange(len(grid))), bench)
    order = grid.pop("_row").to_numpy()
    reps = np.concatenate([b.replicates for b in boots], axis=1)[:, order]
    b = boots[0]
    return GridBootstrap(
        grid=grid,
        replicates=reps,
        n_bootstrap=b.n_bootstrap,
        confidence_level=b.confidence_level,
        random_state=b.random_state,
    )


@each_model_view(combine=combine_bootstraps)
def bootstrap_grid(
    bench: Benchmark,
    *,
    protocols: str | Sequence[str] | None = None,
    methods: str | Sequence[str] = METHODS,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    class_weight: str | None = None,
    n_repeats: int = 100,
    random_state: int | None = 0,
    n_jobs: int = 1,
    cells: int | None = None,
) -> GridBootstrap:
    """Stratified, paired bootstrap of the expected-accuracy grid, refitting every calibrator.

    Each replicate resamples every dataset with replacement, separately for
    its positives and negatives (so sizes and class balance are kept), and
    every model is evaluated on the same replicate.  Each cell of
    :func:`~beyondauc.expected_accuracy_grid` is recomputed on the replicate:
    the AUC on the resampled dataset, and each score after *refitting* the
    calibrator on the replicate of its calibration data and evaluating on the
    replicate of its evaluation data.  ``indata``: see the notes of
    :mod:`beyondauc.metrics.calibration.grid_bootstrap` (the same split positions applied to
    the resampled dataset, the first ``min(n_repeats, 10)`` splits per replicate).

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
    cells : int >= 2 or None, default=None
        The replicates run on at most this many cells of each model's scores
        per dataset and class (:func:`~beyondauc.metrics.uncertainty.cells.cell_scores`);
        None: on every distinct score.  The point estimates are exact either way.

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
    >>> list(bs.rank_stability("xdomain", "logistic").columns[-4:])
    ['sign_share', 'p_value', 'p_change', 'significant']
    """
    protocols, methods, seed, n_bootstrap, confidence_level = checked(
        bench, protocols, methods, class_weight, n_repeats, random_state, n_bootstrap, confidence_level
    )
    n_jobs = check_n_jobs(n_jobs)
    grid = point_grid(
        bench, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, n_jobs=n_jobs
    )
    bctx = boot_context(bench, protocols, methods, class_weight, n_repeats, seed, n_bootstrap, cells=check_cells(cells))
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        scores = np.stack([bench.scores(model) for model in bench.models], axis=1)
        reps = replicate_array(
            grid,
            n_bootstrap,
            (
                (bench.models[j], b0, b1, {(p, meth, bench.datasets[i]): v for (p, meth, i), v in cells.items()})
                for j, b0, b1, cells in _map_tasks(bctx, scores, n_jobs)
            ),
        )
    return GridBootstrap(
        grid=with_intervals(grid, reps, confidence_level),
        replicates=reps,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        random_state=random_state,
    )


def checked(bench, protocols, methods, class_weight, n_repeats, random_state, n_bootstrap, confidence_level):
    """The checked arguments of :func:`bootstrap_grid`: (protocols, methods, seed, n_bootstrap, confidence_level)."""
    protocols, methods = grid_choices(bench, protocols, methods)
    seed = check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state)
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    return protocols, methods, seed, n_bootstrap, confidence_level


def boot_context(bench, protocols, methods, class_weight, n_repeats, seed, n_bootstrap, *, cells=None):
    """The bootstrap's context of ``bench`` (its strata: dataset and class; an answers benchmark's: dataset)."""
    ctx = Context(
        y=bench.labels(),
        codes=bench.dataset_codes(),
        offsets=bench._offsets,
        datasets=bench.datasets,
        domains=dict(bench.domains),
        protocols=tuple(protocols),
        methods=tuple(methods),
        plans={p: protocol_plan(bench, p) for p in protocols},
        class_weight=class_weight,
        n_repeats=n_repeats,
        seed=seed,
    )
    # answers: the class is per model, so every model resamples the same examples within datasets (paired)
    strata = strata_of(ctx.codes) if bench.kind == "answers" else strata_of(ctx.codes, ctx.y)
    return BootContext(
        base=ctx,
        strata=strata,
        n_bootstrap=n_bootstrap,
        boot_seed=seed,
        cells=cells,
        clusters=bench.items() if bench.repeated else None,
    )


def replicate_array(grid, n_bootstrap, pieces):
    """The (n_bootstrap, grid rows, values) replicates of ``pieces`` ``(model, b0, b1, cells)`` (NaN where none).

    ``cells`` maps ``(protocol, method, dataset)`` to replicates ``b0:b1`` of that row of ``model``.
    """
    row_of = {key: i for i, key in enumerate(zip(grid["protocol"], grid["method"], grid["dataset"], grid["model"]))}
    reps = np.full((n_bootstrap, len(grid), len(VALUES)), np.nan)
    for model, b0, b1, cells in pieces:
        for (p, meth, d), v in cells.items():
            reps[b0:b1, row_of[(p, meth, d, model)]] = v
    return reps
