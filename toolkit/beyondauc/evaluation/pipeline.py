"""One evaluation of a benchmark, computed once and read by every view.

:func:`evaluate` makes one pass over a benchmark and computes everything the
reports, the index and the CLI show: the calibration grid with every score,
ranks, rank changes and Kendall's tau, score variance and histograms, the
cohort diagnostics of every model x dataset with the curves their figures
need, selective answering (with an out-of-distribution dataset) and its
tolerance tables, and the leaderboard.  The result is an :class:`Evaluation`:
tidy DataFrames, the parameters, the data's SHA-256 and the package versions.
:meth:`Evaluation.save` writes it as a folder of Parquet tables with a JSON
manifest; :func:`load_evaluation` reads it back identically.

Views (notebooks, the report index, the CLI) read an Evaluation and never
recompute what it holds.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..data.benchmark import Benchmark
from ..data.open import open_benchmark
from ..metrics.calibration.grid import PROTOCOLS, check_n_jobs
from ..metrics.calibration.grid_chunks import join_grid_chunks, replicate_ranges
from ..metrics.calibration.protocols import (
    DOMAIN_HINT,
    ONE_DATASET_HINT,
    left_out_message,
    left_out_protocols,
    one_dataset_protocols,
)
from ..metrics.calibration.ranking import (
    best_of_methods,
    calibration_modes,
    kendall_tau,
    rank_changes,
    rank_table,
    score_histograms,
    score_variance,
)
from ..metrics.calibration.reliability import CalibrationErrors
from ..metrics.core.views import sort_like
from ..metrics.uncertainty.intervals import auc_intervals
from ..metrics.uncertainty.rank_tests import friedman_test
from ..utils.validation import UndefinedMetricWarning, warnings_once
from .abstention import risk_control_evaluation
from .benchmark_checks import check_against_benchmark
from .comparison import comparison_table
from .container import Evaluation, load_evaluation, package_versions
from .fingerprint import data_fingerprint, frame_sha256  # noqa: F401 - public here too
from .given import REPEATED_NOTE, given_tables
from .leaderboard import leaderboard_table
from .parameters import LOG_PARAMETERS
from .parts import concat_parts
from .per_dataset import DatasetJob, cohort_task
from .ranks import add_ranks
from .settings import EvaluationParameters, one_dataset_defaults, resolve_auto
from .stages import SAID_WHEN_READ, StageTimer, Tasks, bootstrap_task, grid_task, model_parts, model_views, one_model
from .summary import findings_table, verdicts_table

__all__ = ["evaluate", "open_evaluation"]


# ---------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# the data
# ---------------------------------------------------------------------------


def _open(data, p):
    """(the benchmark analysed, the same models on every dataset of the data): the data is read once."""
    full = open_benchmark(
        data,
        models=p.models,
        pos_label=p.pos_label,
        domains=p.domains,
        nan_policy=p.nan_policy,
        log_options={k: p[k] for k in LOG_PARAMETERS},
    )
    if full.graded:  # graded answers: right/wrong at the threshold wherever a yes/no answer is needed
        full = full.with_correct_threshold(p.correct_threshold)
    return open_benchmark(full, datasets=p.datasets), full


# ---------------------------------------------------------------------------
# curves
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------


def evaluate(
    data: str | os.PathLike | Benchmark | pd.DataFrame = "demo",
    *,
    n_jobs: int = -1,
    dask: Any = None,
    progress: bool = False,
    **parameters: Any,
) -> Evaluation:
    """Compute everything the reports show, once: an :class:`Evaluation`.

    Parameters
    ----------
    data : str, path, Benchmark or DataFrame, default="demo"
        ``"demo"`` for the embedded demo benchmark, else anything
        :func:`~beyondauc.load_benchmark` reads.
    n_jobs : int, default=-1
        Local processes that run the evaluation's tasks (-1: all cores; 1:
        all in this process).  The numbers do not depend on it.
    dask : str or distributed.Client, optional
        Run the tasks on this Dask cluster instead (a scheduler's address,
        ``tcp://host:8786``, or a client; needs ``distributed``).  Each
        model's data is sent to the cluster once and the results come back
        as data: the workers need no shared file system.  The numbers are
        the same as local ones.
    progress : bool, default=False
        On stderr: a bar per stage counting its tasks, with the time left,
        and one line per stage with its time.
    **parameters
        The analysis parameters, by the names the notebooks use (see
        ``EVALUATION_PARAMETERS`` for all of them and their defaults):
        ``models``, ``datasets``, ``pos_label``, ``domains``, ``nan_policy``, ``protocol``, ``method``
        (the headline expected accuracy), ``class_weight``, ``n_repeats``,
        ``random_state``, ``ood_dataset``, ``tolerance``,
        ``computation_score``, ``selective_protocol``, ``selective_method``,
        ``resolution``, ``cohort_protocol``, ``val_split``, ``test_split``,
        ``sigma_max``, ``n_points``, ``noise_repeats``, ``p``, ``bins``.
        Unknown names and bad values are errors before any work.

    Returns
    -------
    Evaluation

    Notes
    -----
    ``outdomain`` and ``indomain`` need the domain of every dataset.  Data
    without one for some dataset is evaluated all the same: the calibration
    grid leaves those two protocols out, with one warning, and
    ``Evaluation.data["protocols_left_out"]`` says why (the reports show it).
    Asked for by name (``protocol``, ``cohort_protocol`` or
    ``selective_protocol``), a domain protocol on such data is an error.

    The evaluation runs as independent tasks whose results are concatenated:
    one per model for the calibration grid (a calibration fit reads every
    dataset of its model), one per model x chunk of replicates for its
    bootstrap, one per model x dataset for the cohort diagnostics and
    selective answering.  A task receives only its model's rows.

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "knn", "mlp"], noise_repeats=2,
    ...                  n_bootstrap=20)
    >>> ev.parameters["protocol"], sorted(ev.table("leaderboard")["model"])
    ('xdomain', ['knn', 'mlp', 'svm'])
    >>> ev.table("leaderboard").columns.tolist()[-6:]  # each mean with its interval
    ['disca', 'disca_low', 'disca_high', 'drift', 'drift_low', 'drift_high']
    """
    t_start = time.perf_counter()
    p = EvaluationParameters.checked(parameters)
    n_jobs = check_n_jobs(n_jobs)
    if dask is not None and not isinstance(dask, str) and not hasattr(dask, "submit"):
        raise TypeError(
            f"`dask` must be a scheduler address such as 'tcp://127.0.0.1:8786' or a "
            f"distributed.Client, got {type(dask).__name__}"
        )
    source, sha256 = data_fingerprint(data)
    with warnings.catch_warnings(record=True) as read:  # said again below, with the run's other warnings
        warnings.simplefilter("always")
        bench, full = _open(data, p)
    p = resolve_auto(p, bench)
    p, fallbacks = one_dataset_defaults(p, parameters, bench)
    check_against_benchmark(p, bench, available=full)  # what would fail after the grid fails here, before it
    # the protocols the data cannot give (outdomain, indomain without domains; every cross-dataset one on one dataset)
    left_out = {**left_out_protocols(bench), **one_dataset_protocols(bench)}
    # each warning once, with the models and datasets it came from; a single class was said when the data was read
    single = [] if bench.kind == "answers" else [d for d in bench.datasets if len(np.unique(bench.labels(d))) < 2]
    with warnings_once(explained=single, models=bench.models, ignore=[(SAID_WHEN_READ, UndefinedMetricWarning)]) as log:
        for w in read:  # first, in order, with the block's own
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if left_out:
            hint = ONE_DATASET_HINT if len(bench.datasets) == 1 else DOMAIN_HINT
            warnings.warn(left_out_message(left_out, hint=hint), UserWarning, stacklevel=2)
        if bench.repeated and p.n_bootstrap:
            warnings.warn(REPEATED_NOTE, UserWarning, stacklevel=2)
        with Tasks.opened(n_jobs, dask, progress, log) as tasks:
            data_read = DataRead(bench=bench, full=full, source=source, sha256=sha256, left_out=left_out)
            ev = _compute(p, data_read, t_start, tasks=tasks, progress=progress, log=log)
    ev.data["defaults_replaced"] = fallbacks
    # every warning kept in full: the reports show each where it applies (a CLI run prints one line about them)
    ev.data["notes"] = [{k: v for k, v in note.items() if k != "category"} for note in log.said]
    return ev


@dataclasses.dataclass(frozen=True)
class DataRead:
    """The data an evaluation reads, checked: the benchmark evaluated, the whole data it came from (an
    out-of-distribution dataset may lie outside it), where it came from (source and SHA-256), and the
    protocols it cannot give, with why."""

    bench: Benchmark
    full: Benchmark
    source: str
    sha256: str
    left_out: dict[str, str]


def _compute(p, read, t_start, *, tasks, progress, log):
    """The body of :func:`evaluate`, once everything is validated, stage by stage; ``log`` takes the workers' warnings.

    ``read`` (:class:`DataRead`) is the data; ``tasks`` (:class:`~beyondauc.utils.tasks.Tasks`) runs each
    stage's tasks here, in local processes or on Dask.
    """
    bench, full, left_out = read.bench, read.full, read.left_out
    bench_sel = _selective_benchmark(bench, full, p.ood_dataset)
    stages = StageTimer(progress)
    tables = {"datasets": bench.summary()}
    with stages.timed("calibration grid and calibration error"):
        grid, ce = _calibration_grid(bench, p, tasks, [x for x in PROTOCOLS if x not in left_out])
        tables["calibration_error"], tables["reliability"] = ce.ece, ce.reliability
    with stages.timed("bootstrap of the headline setting"):
        boot = _bootstrap(bench, p, tasks)
        tables["grid"] = grid = _with_intervals(grid, boot)
        head = grid[(grid["protocol"] == p.protocol) & (grid["method"] == p.method)].reset_index(drop=True)
        tables.update(_ranking_tables(head, boot, p))
        tables["auc_intervals"] = auc_intervals(bench, confidence_level=p.confidence_level)
        tables["friedman"] = _friedman_table(head)
    with stages.timed("tables of the paper"):
        tables.update(_paper_tables(bench, grid, head, p))
    with stages.timed("cohort diagnostics and selective answering"):
        parts = _per_model(bench, bench_sel, p, tasks, log)
        tables.update(_per_model_tables(parts))
    with stages.timed("abstention with a guarantee"):
        tables["risk_control"], tables["risk_control_curves"] = risk_control_evaluation(bench, p, left_out)
    with stages.timed("calibration of the given confidence"):
        given, given_reps = given_tables(bench, p)
        tables.update(given)
    add_ranks(tables)
    replicates = {m: x["replicates"] for m, x in zip(bench.models, parts)} if p.n_bootstrap else None
    tables["leaderboard"] = leaderboard_table(
        head,
        tables["rank_changes"],
        tables["selective"],
        tables["diagnostics"],
        bench.models,
        tables.get("mean_intervals"),
        replicates,
        p.confidence_level,
    )
    tables["comparison"] = comparison_table(bench, head, boot, tables, replicates, p, given=given_reps)
    tables["findings"] = findings_table(tables, p, bench.models)
    tables["verdicts"] = verdicts_table(tables["findings"], tables["leaderboard"])
    return _evaluation(tables, p, bench, read.source, read.sha256, stages.seconds, t_start, left_out)


def _selective_benchmark(bench, full, ood):
    """The benchmark selective answering reads: ``bench``, with the out-of-distribution dataset if it lacks it."""
    if ood is None:
        return bench
    if ood not in full.datasets:
        raise ValueError(f"`ood_dataset` {ood!r} is not a dataset of {full.source}; it has {list(full.datasets)}")
    if ood not in bench.datasets:
        return full.subset(datasets=[*bench.datasets, ood])
    return bench


def _calibration_grid(bench, p, tasks, protocols):
    """(the expected-accuracy grid of every protocol x method, the calibration error tables), of ``protocols``.

    One task per model (a calibration fit reads every dataset of its model:
    the grid cannot be split by dataset); the tables are the models' rows
    concatenated in the order one call over the benchmark gives.
    """
    kw = dict(class_weight=p.class_weight, n_repeats=p.n_repeats, random_state=p.random_state)
    parts = tasks.run(
        "calibration grid", grid_task, [(m, (tuple(protocols), kw)) for m in bench.models], data=bench, view=one_model
    )
    grid = sort_like(pd.concat([g for g, _ in parts], ignore_index=True), bench)
    ce = CalibrationErrors(
        ece=sort_like(pd.concat([e.ece for _, e in parts], ignore_index=True), bench),
        reliability=sort_like(pd.concat([e.reliability for _, e in parts], ignore_index=True), bench),
        n_bins=parts[0][1].n_bins,
    )
    return grid, ce


def _bootstrap(bench, p, tasks):
    """The grid bootstrap of the headline protocol x method (None without ``n_bootstrap``).

    One task per model x chunk of replicates (:func:`replicate_ranges`: about
    two tasks per worker, however few the models); the chunks are joined as
    one bootstrap, the same whatever the split.  It carries the intervals,
    the rank stability and the pairwise wins.
    """
    if not p.n_bootstrap:
        return None
    kw = dict(
        protocols=[p.protocol],
        methods=[p.method],
        n_bootstrap=p.n_bootstrap,
        confidence_level=p.confidence_level,
        class_weight=p.class_weight,
        n_repeats=p.n_repeats,
        random_state=p.random_state,
        cells=p.cells,
    )
    chunks = replicate_ranges(p.n_bootstrap, n_models=len(bench.models), workers=tasks.workers)
    done = tasks.run(
        "bootstrap", bootstrap_task, [(m, (kw, c)) for m in bench.models for c in chunks], data=bench, view=one_model
    )
    return join_grid_chunks(done, bench)


def _with_intervals(grid, boot):
    """The grid with the bootstrap's interval columns, each right after its value (the grid itself without one)."""
    if boot is None:
        return grid
    key = ["protocol", "method", "dataset", "model"]
    extra = [c for c in boot.grid.columns if c.endswith(("_low", "_high"))]
    grid = grid.merge(boot.grid[key + extra], on=key, how="left")
    order = list(grid.columns[: len(grid.columns) - len(extra)])
    for c in extra:
        base = c.rsplit("_", 1)[0]
        order.insert(order.index(base) + 1 + (c.endswith("_high")), c)
    return grid[order]


def _ranking_tables(head, boot, p):
    """Rank changes, rank table and Kendall's tau of the headline rows (and, bootstrapped, pairwise wins and means)."""
    changes, kendall = [], []
    for s in ("accuracy", "kappa"):
        ch = rank_changes(head, score=s)
        tau = kendall_tau(head, score=s)
        if boot is not None:
            st = boot.rank_stability(p.protocol, p.method, score=s)
            ch = ch.merge(st.drop(columns=["auc_rank", "rank", "change"]), on=["dataset", "model"], how="left")
            kt = boot.kendall(p.protocol, p.method, score=s)[["dataset", "tau_low", "tau_high", "p_tau_below_1"]]
            tau = tau.merge(kt, on="dataset", how="left")
        changes.append(ch.assign(score=s))
        kendall.append(tau.assign(score=s))
    tables = {"rank_changes": pd.concat(changes, ignore_index=True)}
    tables["rank_table"] = pd.concat(
        [rank_table(head, score=s).assign(score=s) for s in ("auc", "accuracy", "kappa")], ignore_index=True
    )
    tables["kendall"] = pd.concat(kendall, ignore_index=True)
    if boot is not None:
        tables["pairwise"] = boot.pairwise(p.protocol, p.method, score="accuracy")
        tables["mean_intervals"] = boot.intervals().query("dataset == 'mean'").reset_index(drop=True)
    return tables


def _friedman_table(head):
    """The Friedman test of the AUC and the accuracy over datasets, one row per model (empty under 2 x 2)."""
    friedman = []
    for value in ("auc", "accuracy"):
        wide = head.pivot(index="dataset", columns="model", values=value).to_numpy(dtype=float)
        if wide.shape[1] < 2 or np.isfinite(wide).all(axis=1).sum() < 2:
            continue  # the test needs 2 models on 2 datasets: a report on one model has no Friedman test
        f = friedman_test(head, value=value)
        ranks = f.average_ranks
        friedman.append(
            pd.DataFrame(
                {
                    "value": value,
                    "model": list(ranks.index),
                    "average_rank": ranks.to_numpy(),
                    "statistic": f.statistic,
                    "pvalue": f.pvalue,
                    "f_statistic": f.f_statistic,
                    "f_pvalue": f.f_pvalue,
                    "n_datasets": f.n_datasets,
                    "critical_difference": f.critical_difference,
                    "alpha": f.alpha,
                }
            )
        )
    return (
        pd.concat(friedman, ignore_index=True)
        if friedman
        else pd.DataFrame(
            {
                "value": pd.Series(dtype="str"),
                "model": pd.Series(dtype="str"),
                **{
                    c: pd.Series(dtype=float)
                    for c in ("average_rank", "statistic", "pvalue", "f_statistic", "f_pvalue")
                },
                "n_datasets": pd.Series(dtype="int64"),
                "critical_difference": pd.Series(dtype=float),
                "alpha": pd.Series(dtype=float),
            }
        )
    )


def _paper_tables(bench, grid, head, p):
    """The Opitz paper's Tables 3 to 5 and its score histograms."""
    return {
        "calibration_modes": pd.concat(
            [calibration_modes(grid, score=s).assign(score=s) for s in ("accuracy", "kappa")], ignore_index=True
        ),
        "best_of_methods": best_of_methods(grid, score="kappa").assign(score="kappa"),
        "variance": score_variance(bench, head, score="accuracy"),
        "histograms": score_histograms(bench, bins=p.bins),
    }


def _per_model(bench, bench_sel, p, tasks, log):
    """Each model's cohort diagnostics and selective answering, in model order; their warnings go to ``log``.

    One task per model x dataset, reading that model's views only; the
    results do not depend on how the tasks are run.
    """
    ood = p.ood_dataset
    options = dict(
        protocol=p.cohort_protocol,
        val_split=p.val_split,
        test_split=p.test_split,
        sigma_max=p.sigma_max,
        n_points=p.n_points,
        n_repeats=p.noise_repeats,
        noise_method=p.noise_method,
        p=p.p,
        random_state=p.random_state,
        n_bootstrap=p.n_bootstrap,
        confidence_level=p.confidence_level,
        n_permutations=p.n_permutations,
        cells=p.cells,
    )
    sel_options = dict(
        ood_dataset=ood,
        protocol=p.selective_protocol,
        method=p.selective_method,
        class_weight=p.class_weight,
        tolerance=p.tolerance,
        resolution=p.resolution,
        computation_score=p.computation_score,
        random_state=p.random_state,
        n_bootstrap=p.n_bootstrap,
        confidence_level=p.confidence_level,
        cells=p.cells,
    )
    job = DatasetJob(tuple(d for d in bench.datasets if d != ood), options, sel_options, p.bins)
    runs = [(m, (job, d)) for m in bench.models for d in bench.datasets]
    done = tasks.run(
        "cohort diagnostics and selective answering", cohort_task, runs, data=(bench, bench_sel), view=model_views
    )
    n = len(bench.datasets)
    parts = [model_parts(done[i * n : (i + 1) * n]) for i in range(len(bench.models))]
    for x in parts:
        log.records.extend(x["warnings"])
    return parts


def _per_model_tables(parts):
    """The models' rows, one table each: diagnostics and their curves, selective answering and its tables."""
    tables = {"diagnostics": pd.concat([x["diagnostics"] for x in parts], ignore_index=True)}
    for name in ("roc", "cohort_histograms", "robustness", "drift_curves", "wasserstein"):
        tables[name] = concat_parts([y for x in parts for y in x[name]])
    tables["selective"] = pd.DataFrame([row for x in parts for row in x["selective"]])
    tables["tolerance"] = concat_parts([y for x in parts for y in x["tolerance"]])
    tables["coverage_curves"] = concat_parts([y for x in parts for y in x["coverage_curves"]])
    tables["resolution_sensitivity"] = concat_parts([y for x in parts for y in x["resolution_sensitivity"]])
    tables["fluctuations"] = concat_parts(
        [y for x in parts for y in x["fluctuations"]],
        ["model", "dataset", "where", "i", "coverage_1", "coverage_2", "d1", "d2", "c1", "c2", "c"],
    )
    return tables


def _evaluation(tables, p, bench, source, sha256, stages, t_start, left_out):
    """The Evaluation of the tables: parameters, data info, versions, creation time and seconds per stage.

    ``data["protocols_left_out"]`` maps each protocol the grid leaves out to why (empty: none).
    """
    stored = {k: list(v) if isinstance(v, tuple) else v for k, v in p.as_dict().items()}  # as its manifest stores them
    info = {
        "source": source,
        "sha256": sha256,
        "kind": bench.kind,
        "graded": bench.graded,
        "n_rows": int(len(bench)),
        "models": list(bench.models),
        **({"n_items": int(bench.item_counts().sum())} if bench.repeated else {}),
        "datasets": list(bench.datasets),
        "domains": {d: bench.domains.get(d) for d in bench.datasets},
        "protocols_left_out": dict(left_out),
    }
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    timing = {name: round(sec, 3) for name, sec in stages}
    timing["total"] = round(time.perf_counter() - t_start, 3)
    return Evaluation(
        tables=tables, parameters=stored, data=info, versions=package_versions(), created=created, timing=timing
    )


def open_evaluation(
    evaluation: Evaluation | str | os.PathLike | None = None,
    *,
    data: str | os.PathLike | Benchmark | pd.DataFrame = "demo",
    **parameters: Any,
) -> Evaluation:
    """The evaluation a notebook shows: read ``evaluation`` if given, else compute it.

    The notebooks' one code path: the report runner passes the folder of the
    evaluation it computed once (``parameters`` are then ignored: the
    evaluation carries its own); a user exploring in Jupyter leaves it None
    and the evaluation of ``data`` is computed with ``parameters``.

    Examples
    --------
    >>> from beyondauc import open_evaluation
    >>> ev = open_evaluation(None, data="demo", datasets=["wine", "diabetes"], noise_repeats=2, n_bootstrap=0)
    >>> ev.datasets
    ('wine', 'diabetes')
    """
    if evaluation is not None:
        if isinstance(evaluation, Evaluation):
            return evaluation
        return load_evaluation(evaluation)
    return evaluate(data, **parameters)
