"""The grid bootstrap as tasks of replicate chunks: one model's data in, its replicates out.

:func:`~beyondauc.metrics.calibration.grid_bootstrap.bootstrap_grid` splits its work
into (model, range of replicates) tasks in its own process pool.  These
functions give the same split to a caller that runs tasks itself (the
evaluation's stages, locally or on a Dask cluster):

- :func:`replicate_ranges` chooses the ranges of replicates;
- :func:`bootstrap_grid_chunk` computes one range on a benchmark (its point
  grid too, for the range that starts at replicate 0);
- :func:`join_grid_chunks` assembles the chunks of every model into the
  :class:`~beyondauc.metrics.calibration.grid_bootstrap_result.GridBootstrap` that
  ``bootstrap_grid`` returns, with the same numbers: replicate b is seeded
  by its block (:func:`~beyondauc.metrics.uncertainty.bootstrap.bootstrap_counts`), so
  the values do not depend on the split.

A process keeps the set-up of the last benchmarks and models it bootstrapped
(their grids and point-estimate fits), so consecutive chunks of one model in
one worker set it up once.
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..core.views import sort_like
from ..uncertainty.bootstrap import BLOCK
from ..uncertainty.cells import check_cells
from .grid import METHODS, point_grid
from .grid_bootstrap import (
    COUNTS_CACHE_BYTES,
    boot_context,
    checked,
    replicate_array,
    replicate_batches,
    with_intervals,
)
from .grid_bootstrap_result import GridBootstrap
from .grid_replicates import ModelBoot, ReplicateCounts

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from ...data.benchmark import Benchmark

__all__ = ["GridChunk", "bootstrap_grid_chunk", "join_grid_chunks", "replicate_ranges"]

#: The fewest replicates of a chunk split for more workers: a chunk that starts inside a block of
#: ``BLOCK`` replicates passes the block's earlier draws (up to half the cost of drawing them), and every
#: worker sets up each model it bootstraps once (about 20 replicates' time at 10^5 rows per dataset).
MIN_CHUNK = BLOCK // 2
_KEPT = 2  # set-ups (benchmark, model) a process keeps


@dataclass(frozen=True)
class GridChunk:
    """Replicates ``start:stop`` of :func:`~beyondauc.bootstrap_grid` (see :func:`bootstrap_grid_chunk`).

    Attributes
    ----------
    start, stop : int
        The range of replicates.
    models : tuple of str
        The models of the benchmark it was computed on.
    cells : dict
        ``(protocol, method, dataset, model)`` -> (stop - start, 6) replicate
        values (``auc`` then the scores).
    grid : DataFrame or None
        The point-estimate grid, in the chunk that starts at replicate 0.
    n_bootstrap, confidence_level, random_state
        As given.
    """

    start: int
    stop: int
    models: tuple
    cells: dict = field(repr=False)
    grid: pd.DataFrame | None = field(repr=False)
    n_bootstrap: int
    confidence_level: float
    random_state: object


def replicate_ranges(n_bootstrap: int, *, n_models: int, workers: int) -> list[tuple[int, int]]:
    """The ranges of replicates of each model's tasks: about two tasks per worker, none under ``MIN_CHUNK``.

    One range (all replicates) for one worker or when the models alone give
    every worker two tasks; else equal ranges, so the tasks are at least
    twice the workers where the replicates allow.

    Examples
    --------
    >>> replicate_ranges(200, n_models=1, workers=2)
    [(0, 50), (50, 100), (100, 150), (150, 200)]
    >>> replicate_ranges(200, n_models=8, workers=2), replicate_ranges(40, n_models=1, workers=4)
    ([(0, 200)], [(0, 40)])
    """
    wanted = -(-2 * workers // max(n_models, 1)) if workers > 1 else 1
    n = max(1, min(wanted, n_bootstrap // MIN_CHUNK))
    bounds = [n_bootstrap * k // n for k in range(n + 1)]
    return list(itertools.pairwise(bounds))


def bootstrap_grid_chunk(
    bench: Benchmark,
    *,
    start: int,
    stop: int,
    protocols: str | Sequence[str] | None = None,
    methods: str | Sequence[str] = METHODS,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    class_weight: str | None = None,
    n_repeats: int = 100,
    random_state: int | None = 0,
    cells: int | None = None,
) -> GridChunk:
    """Replicates ``start:stop`` of ``bootstrap_grid(bench, ...)``, and its point grid when ``start`` is 0.

    The other parameters are those of :func:`~beyondauc.bootstrap_grid`.
    The replicates are drawn in batches of at most 128 (memory is bounded
    whatever the chunk).

    Returns
    -------
    GridChunk

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import load_demo, bootstrap_grid
    >>> bench = load_demo().subset(datasets=["wine", "diabetes"], models=["svm"])
    >>> kw = dict(protocols="xdomain", methods="logistic", n_bootstrap=20)
    >>> chunk = bootstrap_grid_chunk(bench, start=5, stop=12, **kw)
    >>> reps = bootstrap_grid(bench, **kw).replicates
    >>> bool(np.array_equal(chunk.cells[("xdomain", "logistic", "wine", "svm")], reps[5:12, 0]))
    True
    """
    protocols, methods, seed, n_bootstrap, confidence_level = checked(
        bench, protocols, methods, class_weight, n_repeats, random_state, n_bootstrap, confidence_level
    )
    _check_range(start, stop, n_bootstrap)
    args = (tuple(protocols), tuple(methods), class_weight, n_repeats, seed, n_bootstrap, check_cells(cells))
    return GridChunk(
        start=int(start),
        stop=int(stop),
        models=tuple(bench.models),
        cells=_chunk_cells(bench, args, start, stop),
        grid=_chunk_point_grid(bench, args) if start == 0 else None,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        random_state=random_state,
    )


def _check_range(start, stop, n_bootstrap):
    if not (
        isinstance(start, (int, np.integer))
        and isinstance(stop, (int, np.integer))
        and 0 <= start < stop <= n_bootstrap
    ):
        raise ValueError(
            f"`start`, `stop` must be ints with 0 <= start < stop <= n_bootstrap ({n_bootstrap}), "
            f"got {start!r}, {stop!r}"
        )


def _chunk_point_grid(bench, args):
    """The point grid of ``bench`` (``args``: as :func:`_setup` takes them); an answers benchmark's, each model's
    view (its labels are that model's correctness)."""
    protocols, methods, class_weight, n_repeats, seed = args[:5]
    parts = [bench] if bench.kind != "answers" else [bench.model_view(m) for m in bench.models]
    grids = [
        point_grid(x, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, n_jobs=1)
        for x in parts
    ]
    return sort_like(pd.concat(grids, ignore_index=True), bench)


def _chunk_cells(bench, args, start, stop):
    """``(protocol, method, dataset, model)`` -> replicates ``start:stop`` of that cell, every model of ``bench``."""
    n_bootstrap, seed = args[5], args[4]
    cells = {}
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        batches = replicate_batches(start, stop)
        counts = {}  # one model's batches of replicates (every model's, paired, when their counts fit in memory)
        for m in bench.models:  # each model set up once, then its batches in order
            bctx, boot = _setup(bench, m, args)
            keep = len(bench.models) > 1 and bctx.n_bootstrap * len(bctx.strata) * 4 <= COUNTS_CACHE_BYTES
            for b0, b1 in batches:
                W = counts.get((b0, b1))
                if W is None:
                    W = ReplicateCounts(bctx.strata, n_bootstrap, seed, b0, b1, clusters=bctx.clusters)
                    if keep:
                        counts[(b0, b1)] = W
                for (p, meth, i), values in boot.run(W).items():
                    cells.setdefault((p, meth, bench.datasets[i], m), []).append(values)
    return {k: np.concatenate(v) for k, v in cells.items()}


SETUPS: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def _setup(bench, model, args):
    """``(context, ModelBoot)`` of ``model`` in ``bench``, made once per process while ``bench`` lives.

    The last ``_KEPT`` set-ups are kept (a worker runs a model's chunks one
    after the other), each dropped when its benchmark is (a process holds no
    set-up of a finished evaluation); a Dask worker's threads may make one
    twice, never use a half-made one.
    """
    key = (id(bench), model, args)
    with _LOCK:
        hit = SETUPS.get(key)
        if hit is not None and hit[0]() is bench:
            SETUPS.move_to_end(key)
            return hit[1]
    part = bench.model_view(model) if bench.kind == "answers" else bench  # answers: the model's own labels
    bctx = boot_context(part, *args[:-1], cells=args[-1])
    made = (bctx, ModelBoot(bctx, part.scores(model)))
    with _LOCK:
        SETUPS[key] = (weakref.ref(bench, lambda _, key=key: SETUPS.pop(key, None)), made)
        SETUPS.move_to_end(key)
        while len(SETUPS) > _KEPT:
            SETUPS.popitem(last=False)
    return made


def join_grid_chunks(chunks: Sequence[GridChunk], bench: Benchmark) -> GridBootstrap:
    """The :class:`~beyondauc.metrics.calibration.grid_bootstrap_result.GridBootstrap` of the chunks of every model of ``bench``.

    Each model's chunks must cover its replicates once each (any split, any
    order); the result is the one ``bootstrap_grid`` gives.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import load_demo, bootstrap_grid
    >>> bench = load_demo().subset(datasets=["wine", "diabetes"], models=["svm", "knn"])
    >>> kw = dict(protocols="xdomain", methods="logistic", n_bootstrap=10)
    >>> chunks = [bootstrap_grid_chunk(bench.subset(models=[m]), start=a, stop=b, **kw)
    ...           for m in bench.models for a, b in [(0, 4), (4, 10)]]
    >>> bool(np.array_equal(join_grid_chunks(chunks, bench).replicates, bootstrap_grid(bench, **kw).replicates))
    True
    """
    if not chunks:
        raise ValueError("`chunks` is empty: give the chunks of every model of the benchmark")
    first = chunks[0]
    B = first.n_bootstrap
    covered: dict[Any, np.ndarray] = {}
    for c in chunks:
        if (c.n_bootstrap, c.confidence_level, c.random_state) != (B, first.confidence_level, first.random_state):
            raise ValueError(
                "`chunks` come from different bootstraps (n_bootstrap, confidence_level or random_state differ)"
            )
        for model in c.models:
            covered.setdefault(model, np.zeros(B, dtype=np.int64))[c.start : c.stop] += 1
    bad = sorted(m for m in bench.models if m not in covered or (covered[m] != 1).any())
    if bad:
        raise ValueError(f"the chunks of model(s) {bad} do not cover replicates 0 to {B} once each")
    grid = sort_like(pd.concat([c.grid for c in chunks if c.grid is not None], ignore_index=True), bench)
    pieces = (
        (m, c.start, c.stop, {k[:3]: v for k, v in c.cells.items() if k[3] == m}) for c in chunks for m in c.models
    )
    reps = replicate_array(grid, B, pieces)
    return GridBootstrap(
        grid=with_intervals(grid, reps, first.confidence_level),
        replicates=reps,
        n_bootstrap=B,
        confidence_level=first.confidence_level,
        random_state=first.random_state,
    )
