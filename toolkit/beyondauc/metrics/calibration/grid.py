"""AUC vs expected accuracy (Opitz, "Schroedinger's Threshold").

A benchmark ranks models by AUC, which needs no threshold.  In use, a model's
raw score must be turned into a decision with a threshold chosen on *other*
data.  :func:`expected_accuracy` calibrates every model on other datasets
under one of five protocols and one of three methods, and reports the
accuracy (and kappa, ...) it really reaches on each dataset.

This module makes the grid of every model (:func:`point_grid`): it checks the
arguments, spreads the models over processes and orders their rows into one
table.  Which rows each protocol calibrates on lives in
:mod:`~beyondauc.metrics.calibration.protocol_plans`, one model's cells in
:mod:`~beyondauc.metrics.calibration.grid_cells`, the fits of a block of cells
in :mod:`~beyondauc.metrics.calibration.fits`.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ...data.benchmark import Benchmark
from ...utils.parallel import pool_context, process_pool
from ...utils.validation import (
    UndefinedMetricWarning,
    check_int,
    check_option,
    check_random_state,
)
from ..core.kernel import auc_from_counts, grid_counts, stacked_counts
from ..core.views import each_model_view
from .calibrator import METHODS, REFERENCES
from .fits import as_columns, one_blas_thread, positions
from .grid_cells import model_cells
from .protocol_plans import PROTOCOLS, SCORES, Context, protocol_masks, protocol_plan, splits

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence


__all__ = [
    "PROTOCOLS",
    "METHODS",
    "SCORES",
    "Context",
    "auc_table",
    "point_grid",
    "protocol_masks",
    "protocol_plan",
    "splits",
]


_COLUMNS = [
    "protocol",
    "method",
    "dataset",
    "domain",
    "model",
    "auc",
    *SCORES,
    "n_calibration",
    "n_evaluation",
    "calibration",
]


def check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state, reference=None):
    if not isinstance(bench, Benchmark):
        raise ValueError(f"`bench` must be a Benchmark (see load_benchmark), got {type(bench).__name__}")
    for p in protocols:
        check_option(p, "protocol", PROTOCOLS)
    for m in methods:
        check_option(m, "method", METHODS)
    if not protocols:
        raise ValueError("`protocols` must name at least one protocol, got none")
    if not methods:
        raise ValueError("`methods` must name at least one method, got none")
    check_option(class_weight, "class_weight", (None, "balanced"))
    check_option(reference, "reference", REFERENCES)
    check_int(n_repeats, "n_repeats", minimum=1)
    return check_random_state(random_state)


def _init_worker(ctx):
    global _WORKER_CTX
    _WORKER_CTX = ctx
    threadpool_limits(limits=1, user_api="blas")  # one BLAS thread per worker: no oversubscription


def _worker_cells(model, s, func=None):
    return (func or model_cells)(_WORKER_CTX, model, s)


def map_models(ctx, bench, n_jobs, func=None):
    """Yield ``func(ctx, model, scores)`` (default :func:`~beyondauc.metrics.calibration.grid_cells.model_cells`) per model, in model order.

    In ``n_jobs`` processes if > 1; ``func`` must then be picklable (a
    module-level function or a ``functools.partial`` of one).
    """
    func = func or model_cells
    if n_jobs == 1 or len(bench.models) == 1:
        for model in bench.models:
            yield func(ctx, model, bench.scores(model))
        return
    mp = pool_context()
    workers = min(n_jobs, len(bench.models))
    with process_pool(workers, mp, initializer=_init_worker, initargs=(ctx,)) as ex:
        futures = [ex.submit(_worker_cells, m, bench.scores(m), func) for m in bench.models]
        for f in futures:
            yield f.result()


def check_n_jobs(n_jobs: int) -> int:
    if n_jobs == -1:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"`n_jobs` must be an int >= 1 or -1 (all cores), got {n_jobs!r}")
    return int(n_jobs)


def point_grid(
    bench: Benchmark,
    protocols: Sequence[str],
    methods: Sequence[str],
    *,
    class_weight: str | None,
    n_repeats: int,
    seed: int | None,
    n_jobs: int,
    reference: str | None = None,
) -> pd.DataFrame:
    """The grid of :func:`~beyondauc.expected_accuracy_grid` without intervals, arguments already checked."""
    warn_single_class(bench)
    ctx = grid_context(
        bench, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, reference=reference
    )
    rows = []
    # the grid's matrix products are small: BLAS threads cost more than they give
    with one_blas_thread():
        for cells in map_models(ctx, bench, n_jobs):
            rows.extend(cells)
    return grid_frame(rows, protocols, methods, bench)


def warn_single_class(bench):
    """The grid's warning for each dataset with a single class (said at the grid's caller)."""
    for d in bench.datasets:
        y = bench.labels(d)
        if y.min() == y.max():
            warnings.warn(
                f"dataset {d!r} has a single class: its AUC is NaN (kappa too where all decisions are that class)",
                UndefinedMetricWarning,
                stacklevel=3,
            )


def grid_context(bench, protocols, methods, *, class_weight, n_repeats, seed, reference):
    """The :class:`~beyondauc.metrics.calibration.protocol_plans.Context` of a benchmark's grid (arguments already checked)."""
    return Context(
        y=bench.labels(),
        codes=bench.dataset_codes(),
        offsets=bench.dataset_offsets(),
        datasets=bench.datasets,
        domains=dict(bench.domains),
        protocols=tuple(protocols),
        methods=tuple(methods),
        plans={p: protocol_plan(bench, p) for p in protocols},
        class_weight=class_weight,
        n_repeats=n_repeats,
        seed=seed,
        reference=reference,
    )


def grid_frame(rows, protocols, methods, bench):
    """The grid's DataFrame of the cells' rows, ordered by protocol, method, dataset, model (the rows sorted, then
    the frame made once from their columns)."""
    order = {
        "protocol": {p: i for i, p in enumerate(protocols)},
        "method": {m: i for i, m in enumerate(methods)},
        "dataset": {d: i for i, d in enumerate(bench.datasets)},
        "model": {m: i for i, m in enumerate(bench.models)},
    }
    key = np.lexsort([positions([r[c] for r in rows], order[c]) for c in ("model", "dataset", "method", "protocol")])
    return pd.DataFrame(as_columns([rows[j] for j in key.tolist()], _COLUMNS), columns=_COLUMNS)


@each_model_view()
def auc_table(bench: Benchmark) -> pd.DataFrame:
    """AUC of every model on every dataset, tidy: ``dataset``, ``domain``, ``model``, ``auc``.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark, auc_table
    >>> b = load_benchmark(pd.DataFrame({"label": [0, 0, 1, 1], "m": [0.1, 0.4, 0.35, 0.8]}))
    >>> auc_table(b)["auc"].tolist()
    [0.75]
    """
    rows = []
    y = bench.labels()
    codes = bench.dataset_codes()
    D = len(bench.datasets)
    for model in bench.models:
        x, inv, _, _ = grid_counts(y, bench.scores(model))
        pos, neg = stacked_counts(inv, y, codes, len(x), D)
        auc = auc_from_counts(pos, neg)
        rows += [
            dict(dataset=d, domain=bench.domains.get(d), model=model, auc=float(a)) for d, a in zip(bench.datasets, auc)
        ]
    return pd.DataFrame(rows, columns=["dataset", "domain", "model", "auc"])
