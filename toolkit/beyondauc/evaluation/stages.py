"""The machinery that runs :func:`~beyondauc.evaluate`'s stages as tasks (private).

A stage is a list of independent tasks (:func:`beyondauc.utils.tasks.run_tasks`):
one per model for the calibration grid, one per model x chunk of replicates
for its bootstrap, one per model x dataset for the cohort diagnostics and
selective answering.  A task reads only its model's part of the benchmark
(:func:`_one_model`, :func:`_model_views`) and returns tables; the results are concatenated in
the order one pass over the whole benchmark gives, so the numbers do not
depend on the split nor on where the tasks run.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
import warnings

import numpy as np
import pandas as pd

from ..metrics.calibration.grid_chunks import bootstrap_grid_chunk
from ..metrics.calibration.reliability import grid_and_calibration_errors
from ..utils.tasks import StageProgress, dask_client, run_tasks
from ..utils.validation import UndefinedMetricWarning, WarningLog

__all__: list[str] = []

#: Said once when the data was read (:func:`~beyondauc.evaluate` ignores it in the computations).
SAID_WHEN_READ = r"dataset .* has a single class"


class Tasks:
    """Runs the tasks of each stage (:func:`~beyondauc.utils.tasks.run_tasks`) with a bar per stage.

    ``n_jobs`` local processes, or the Dask client ``client``; the warnings
    the tasks raise, wherever they run, go to ``log`` with their model.
    """

    def __init__(self, n_jobs, client, progress, log):
        self.n_jobs, self.client, self.progress, self.log = n_jobs, client, progress, log

    @classmethod
    @contextlib.contextmanager
    def opened(cls, n_jobs, dask, progress, log):
        """The runner of one evaluation (its Dask client connected for it, when given an address)."""
        with dask_client(dask) as client:
            yield cls(n_jobs, client, progress, log)

    @property
    def workers(self):
        """How many tasks run at once: the local processes, or the Dask cluster's threads."""
        if self.client is None:
            return self.n_jobs
        return max(1, sum(self.client.nthreads().values()))

    def run(self, stage, func, tasks, *, data, view):
        """``func(view(data, key), key, arg)`` for each ``(key, arg)`` of ``tasks``, in order."""
        bar = StageProgress(stage, len(tasks), enabled=self.progress)
        try:
            done = run_tasks(
                functools.partial(_recorded, func),
                tasks,
                data=data,
                view=view,
                n_jobs=self.n_jobs,
                dask=self.client,
                progress=bar,
            )
        finally:
            bar.close()
        for _, records in done:
            self.log.records.extend(records)
        return [result for result, _ in done]


def _recorded(func, part, key, arg):
    """(``func(part, key, arg)``, the warnings it raised as records of model ``key``): warnings travel as data."""
    log = WarningLog()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", SAID_WHEN_READ, UndefinedMetricWarning)  # as evaluate ignores it
        result = func(part, key, arg)
    log.record(caught, model=key)
    return result, log.records


def model_parts(parts):
    """One model's rows from its datasets' task results, as the model's tables hold them (datasets in order)."""
    out = {
        k: [y for x in parts for y in x[k]]
        for k in (
            "roc",
            "cohort_histograms",
            "robustness",
            "drift_curves",
            "wasserstein",
            "selective",
            "tolerance",
            "coverage_curves",
            "fluctuations",
            "resolution_sensitivity",
            "warnings",
        )
    }
    out["diagnostics"] = pd.DataFrame([x["diagnostics"] for x in parts])  # as diagnostics_frame makes it

    def stacked(name):
        rows = [x[name] for x in parts if x[name] is not None]  # one dataset's replicates, jackknife and estimate each
        return {k: np.concatenate([r[k] for r in rows]) for k in rows[0]} if rows else None

    # the replicates behind the per-dataset intervals, for the intervals of the means
    out["replicates"] = {"disca": stacked("disca"), "drift": stacked("drift")}
    return out


def model_views(benches, model):
    """``model``'s view of each benchmark (a benchmark given twice is viewed once)."""
    bench, bench_sel = benches
    view = bench.model_view(model)
    return view, view if bench_sel is bench else bench_sel.model_view(model)


def one_model(bench, model):
    """The benchmark of ``model`` alone (what a task of the grid stages reads)."""
    return bench.subset(models=[model])


# ---------------------------------------------------------------------------
# tasks per model: the calibration grid; per model x chunk of replicates: its bootstrap
# ---------------------------------------------------------------------------


def grid_task(bench, model, options):
    """One model's expected-accuracy grid and calibration errors, from one set of fits (a task; ``bench`` holds that
    model alone)."""
    protocols, kw = options
    return grid_and_calibration_errors(bench, protocols=protocols, **kw)


def bootstrap_task(bench, model, arg):
    """Replicates ``start:stop`` of one model's grid bootstrap (a task; replicate b is seeded alike in every task)."""
    kw, (start, stop) = arg
    return bootstrap_grid_chunk(bench, start=start, stop=stop, **kw)


class StageTimer:
    """The seconds each stage of an evaluation took, each said on stderr as it ends when ``progress``."""

    def __init__(self, progress):
        self.progress = progress
        self.seconds = []  # (name, seconds), in order

    @contextlib.contextmanager
    def timed(self, name):
        """Time the block as the stage ``name`` (a block that raises is not recorded)."""
        t0 = time.perf_counter()
        yield
        self.seconds.append((name, time.perf_counter() - t0))
        if self.progress:
            print(f"beyondauc evaluate: {name} {self.seconds[-1][1]:.1f} s", file=sys.stderr, flush=True)
