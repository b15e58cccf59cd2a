"""Bootstrap of the AUC vs expected accuracy grid, and the stability of its rankings.

:func:`bootstrap_grid` resamples the benchmark ``n_bootstrap`` times --
stratified by dataset and class, paired (every model reads the same
replicate) -- and recomputes every cell of
:func:`~beyondauc.expected_accuracy_grid` on each replicate, *refitting* the
calibrator on the replicate of its calibration data: the threshold's own
sampling error is part of what a deployed model meets.

This module checks the arguments and spreads (model, range of replicates)
tasks over processes; one model's replicates are computed by
:mod:`beyondauc.metrics.calibration.grid_replicates` (its notes say how, and how
``indata`` is resampled), and the result is a
:class:`~beyondauc.metrics.calibration.grid_bootstrap_result.GridBootstrap`.
"""

from __future__ import annotations

import warnings
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ...utils.parallel import pool_context, process_pool
from ..core.views import each_model_view, sort_like
from ..uncertainty.bootstrap import BLOCK, check_bootstrap, percentile_interval, strata_of
from ..uncertainty.cells import check_cells
from .grid import METHODS, check_grid_args, check_n_jobs, grid_context, point_grid
from .grid_bootstrap_result import GridBootstrap
from .grid_replicates import VALUES, BootContext, ModelBoot, ReplicateCounts
from .protocols import grid_choices

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from ...data.benchmark import Benchmark

__all__ = ["GridBootstrap", "bootstrap_grid"]

_TASK_REPLICATES = 2 * BLOCK  # replicates of one model per task (a multiple of BLOCK: each block drawn once)
COUNTS_CACHE_BYTES = 512 * 2**20  # keep a process's drawn counts while they fit in this


# -- the tasks: (model, range of replicates) -------------------------------------------


class _Runner:
    """Runs tasks (model, first replicate, end) of one bootstrap, in this process or a worker.

    Tasks come model by model, so the last model's set-up is kept; each range of
    replicates (:class:`ReplicateCounts`: drawn on each model's grid, per-example
    counts only for ``indata``) is kept per process while all their counts would
    fit in ``COUNTS_CACHE_BYTES`` (else made again per task: the same counts, the
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


# -- the entry point ----------------------------------------------------------------


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
    :mod:`beyondauc.metrics.calibration.grid_replicates` (the same split positions applied to
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
    ctx = grid_context(
        bench, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, reference=None
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
