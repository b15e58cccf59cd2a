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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..data.benchmark import Benchmark
from ..data.open import open_benchmark
from ..metrics.calibration.grid import PROTOCOLS, check_n_jobs
from ..metrics.calibration.grid_bootstrap import nanmean_quiet
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
    histogram_range,
    kendall_tau,
    rank_changes,
    rank_table,
    score_histograms,
    score_variance,
)
from ..metrics.calibration.reliability import CalibrationErrors
from ..metrics.core.views import sort_like
from ..metrics.diagnostics.benchmark import cohort_diagnostics
from ..metrics.diagnostics.curves import class_histogram, roc_points
from ..metrics.selective.benchmark import selective_answering
from ..metrics.selective.scores import disca_resolution_sensitivity
from ..metrics.uncertainty.bootstrap import honest_interval, jackknife_acceleration
from ..metrics.uncertainty.intervals import auc_intervals, friedman_test
from ..utils.validation import UndefinedMetricWarning, WarningLog, warnings_once
from .abstention import risk_control_evaluation
from .comparison import comparison_table
from .container import Evaluation, load_evaluation, package_versions
from .fingerprint import data_fingerprint, frame_sha256  # noqa: F401 - public here too
from .given import REPEATED_NOTE, given_tables
from .parameters import LOG_PARAMETERS, check_against_benchmark
from .parts import _concat
from .ranks import add_ranks
from .settings import EvaluationParameters, one_dataset_defaults, resolve_auto
from .stages import SAID_WHEN_READ, StageTimer, Tasks, bootstrap_task, grid_task, model_parts, model_views, one_model
from .summary import findings_table, verdicts_table

__all__ = ["evaluate", "open_evaluation"]
_MAX_POINTS = 2000  # curves with more points are thinned to what a figure resolves
_THIN_STEP = 1e-3  # ... keeping a point whenever a coordinate moves by one step of this size


# ---------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# the data
# ---------------------------------------------------------------------------

def _open(data, p):
    """(the benchmark analysed, the same models on every dataset of the data): the data is read once."""
    full = open_benchmark(data, models=p.models, pos_label=p.pos_label, domains=p.domains,
                          nan_policy=p.nan_policy, log_options={k: p[k] for k in LOG_PARAMETERS})
    if full.graded:  # graded answers: right/wrong at the threshold wherever a yes/no answer is needed
        full = full.with_correct_threshold(p.correct_threshold)
    return open_benchmark(full, datasets=p.datasets), full


# ---------------------------------------------------------------------------
# curves
# ---------------------------------------------------------------------------

def thin(*columns):
    """Indices of the points to keep so a curve keeps its shape at figure resolution.

    Curves of at most ``_MAX_POINTS`` points are kept whole.  Longer ones keep
    the first and last point and every point where one of ``columns``
    (values in [0, 1], e.g. rates) enters a new step of ``_THIN_STEP``, plus
    the point before it, so every step of a step function keeps both its
    corners; no figure can tell the difference at 1000 pixels.
    """
    n = len(columns[0])
    if n <= _MAX_POINTS:
        return np.arange(n)
    keep = np.zeros(n, dtype=bool)
    keep[[0, -1]] = True
    for c in columns:
        q = np.floor(np.nan_to_num(np.asarray(c, dtype=float)) / _THIN_STEP)
        change = np.flatnonzero(q[1:] != q[:-1]) + 1
        keep[change] = True
        keep[change - 1] = True
    return np.flatnonzero(keep)


def _roc_points(y, s):
    """ROC points of one cohort, thinned to what a figure resolves."""
    fpr, tpr, thr = roc_points(y, s)
    k = thin(fpr, tpr)
    return fpr[k], tpr[k], thr[k]


def _diagnostic_curves(d, bins):
    """The tidy rows every figure of one CohortDiagnostics needs, as parts for :func:`_concat`."""
    key = dict(model=d.model, dataset=d.dataset)
    roc, hist, rob = [], [], []
    both = np.concatenate([d.s_val, d.s_test])
    edges = np.linspace(*histogram_range(both), bins + 1)  # the dashboard's bins, robust to outliers
    for cohort, y, s, bias, noise in (("val", d.y_val, d.s_val, d.bias_val, d.noise_val),
                                      ("test", d.y_test, d.s_test, d.bias_test, d.noise_test)):
        fpr, tpr, thr = _roc_points(y, s)
        roc.append((len(fpr), {**key, "cohort": cohort, "fpr": fpr, "tpr": tpr, "threshold": thr}))
        _, neg, pos, clipped = class_histogram(y, s, edges)
        hist.append((bins, {**key, "cohort": cohort, "bin": np.arange(bins), "left": edges[:-1], "right": edges[1:],
                            "negative": neg, "positive": pos, "clipped": clipped}))
        for kind, r in (("bias", bias), ("noise", noise)):
            rob.append(_keyed(r.to_frame(), **key, cohort=cohort, kind=kind))
    dr = d.drift
    k = thin(dr.sensitivity_val, dr.specificity_val, dr.sensitivity_test, dr.specificity_test)
    drift = _keyed(thinned(dr, k).to_frame(), **key)
    wass = []
    for w in (d.wasserstein_p1, d.wasserstein_p2):
        n, cols = _keyed(w.to_rows(), **key)
        wass.append((n, {"model": cols["model"], "dataset": cols["dataset"], "p": cols["p"],
                         "chosen": w.p == d.wasserstein.p, **{c: cols[c] for c in ("row", "column", "distance",
                                                                                   "score", "note")}}))
    return roc, hist, rob, drift, wass


def thinned(curve, rows):
    """``curve`` (a dataclass of per-point arrays) with only the points ``rows``: a table of it is made thinned,
    never whole and then thinned."""
    arrays = {f.name: getattr(curve, f.name) for f in dataclasses.fields(curve)
              if isinstance(getattr(curve, f.name), np.ndarray) and getattr(curve, f.name).ndim == 1}
    n = max((len(a) for a in arrays.values()), default=0)
    if len(rows) == n:
        return curve
    return dataclasses.replace(curve, **{name: a[rows] for name, a in arrays.items() if len(a) == n})


def _keyed(frame, **key):
    """``frame``'s rows after the key columns, as the tables store them: a part for :func:`_concat`."""
    return len(frame), {**key, **{c: col.to_numpy() for c, col in frame.items()}}


def _selective_rows(r):
    """Tidy rows of one SelectiveAnswering: curves, tolerance tables, fluctuations (parts for :func:`_concat`)."""
    key = dict(model=r.model, dataset=r.dataset)
    curves, tol, fl = [], [], []
    parts = [("in", r.disca)] + ([("ood", r.disca_ood)] if r.disca_ood is not None else [])
    for where, d in parts:
        curves.append(_keyed(d.curve.to_frame(), **key, where=where, curve="grid"))
        tol.append(_keyed(d.b_table, **key, where=where))
        fl.append(_keyed(d.fluctuations, **key, where=where))
    e = r.curve
    k = thin(e.coverage, e.accuracy)
    curves.append(_keyed(thinned(e, k).to_frame(), **key, where="in", curve="exact"))
    return curves, tol, fl


def _replicates_of(results, name):
    """``{"replicates": (D, B), "jackknife": (D, G), "estimate": (D,)}`` of ``name`` over D results (None without any).

    ``results`` are one model's :class:`~beyondauc.CohortDiagnostics` or
    :class:`~beyondauc.SelectiveAnswering`, one per dataset; each carries the
    replicates its own interval was read from, and the jackknife of its BCa
    acceleration.
    """
    done = [r for r in results if r.replicates is not None and r.jackknife is not None]
    if not done:
        return None
    return {"replicates": np.stack([r.replicates[name].to_numpy(dtype=float) for r in done]),
            "jackknife": np.stack([r.jackknife[name].to_numpy(dtype=float) for r in done]),
            "estimate": np.array([r.to_dict()[name] for r in done], dtype=float)}


def _mean_interval(replicates, confidence_level):
    """(low, high): the BCa interval of the mean over datasets, from per-dataset replicates and jackknives.

    Parameters
    ----------
    replicates : dict or None
        :func:`_replicates_of`: ``replicates`` (row d: dataset d's bootstrap
        replicates, those its own interval comes from), ``jackknife`` (row d:
        dataset d's delete-a-group jackknife) and ``estimate`` (dataset d's
        value).
    confidence_level : float

    Returns
    -------
    low, high : float
        NaN without replicates, when every replicate of the mean is NaN, or
        when no BCa interval contains the mean (:func:`~beyondauc.metrics.uncertainty.bootstrap.honest_interval`).

    Notes
    -----
    Replicate b of the mean is the mean over datasets of every dataset's
    replicate b.  A dataset whose value is undefined (NaN) in replicate b is
    skipped in that replicate's mean, as the point mean (pandas) skips a
    dataset whose value is NaN and as the grid bootstrap's mean over
    datasets does; a replicate with no defined dataset is NaN and, as in
    every per-dataset interval, left out of the percentiles.  One vectorised
    mean over the dataset axis and one quantile over the replicates.

    The interval is BCa, as each dataset's: the bias correction compares the
    replicates of the mean with the mean of the datasets' values (datasets
    with an undefined value left out, as the point mean leaves them out); the
    acceleration pools the datasets' jackknives (the datasets are resampled
    independently, so the mean's influence values are each dataset's, scaled
    by one common factor that cancels).
    """
    if replicates is None or not replicates["replicates"].size:
        return np.nan, np.nan
    defined = ~np.isnan(replicates["estimate"])
    if not defined.any():
        return np.nan, np.nan
    low, high, _, _ = honest_interval(
        nanmean_quiet(replicates["replicates"][defined], 0), float(np.mean(replicates["estimate"][defined])),
        confidence_level, acceleration=jackknife_acceleration(replicates["jackknife"][defined]))
    return float(low), float(high)


def _leaderboard(grid_head, changes, selective, diagnostics, models, mean_intervals=None, replicates=None,
                 confidence_level=0.95):
    """One row per model from the evaluation's own tables (nothing recomputed).

    Parameters
    ----------
    grid_head : DataFrame
        The grid rows of the headline protocol and method.
    changes : DataFrame
        The ``rank_changes`` table.
    selective, diagnostics : DataFrame
        The ``selective`` and ``diagnostics`` tables (one row per model x dataset).
    models : sequence of str
    mean_intervals : DataFrame or None
        The ``mean_intervals`` table (None without a bootstrap).
    replicates : dict or None
        ``model -> {"disca": R, "drift": R}`` with ``R`` the (n_datasets,
        n_bootstrap) per-dataset bootstrap replicates (or None); None without
        a bootstrap.
    confidence_level : float
        Level of the DiSCA and drift intervals.

    Returns
    -------
    DataFrame
        Means over datasets; with a bootstrap, the intervals of the mean AUC,
        accuracy and kappa (the grid bootstrap: the same replicates for every
        dataset and model), the rank intervals, ``sign_share`` and ``p_value``, and the
        intervals of the mean DiSCA and drift (``disca_low``/``_high``,
        ``drift_low``/``_high``, see :func:`_mean_interval`).

    Notes
    -----
    The mean DiSCA and drift have no replicates of their own: every
    dataset's selective answering and cohort diagnostics are bootstrapped on
    their own rows (stratified by role or cohort, and class), with the
    same ``n_bootstrap``, so replicate b of the mean is the mean of the
    datasets' replicates b (:func:`_mean_interval`).  Each dataset's
    bootstrap draws from ``random_state``'s child stream for its place among
    the datasets, so the datasets' resamples are independent draws; but with cohorts or
    calibration data that span several datasets (``xdomain``-style
    protocols) a dataset's rows also enter the other datasets' numbers, a
    dependence the interval does not carry.

    The drift is a squared distance: resampling both cohorts adds noise to
    both curves and raises it, so its replicates sit above the point value,
    and the interval of the mean, narrowed by averaging but not re-centred,
    can lie wholly above the point mean (``docs/user_guide/uncertainty.md``: the demo).
    """
    mean = grid_head.groupby("model", sort=False)[["auc", "accuracy", "kappa"]].mean()
    ch = changes[(changes["score"] == "accuracy") & (changes["dataset"] == "mean")].set_index("model")
    with np.errstate(all="ignore"):
        ranked = selective[selective["rankable"].astype(bool)] if "rankable" in selective else selective
        disca = ranked.groupby("model", sort=False)["disca"].mean() if len(ranked) else pd.Series(dtype=float)
        drift = diagnostics.groupby("model", sort=False)["drift"].mean() if len(diagnostics) else \
            pd.Series(dtype=float)
    board = pd.DataFrame({"model": list(models)})
    for value in ("auc", "accuracy", "kappa"):
        board[value] = [mean[value].get(m, np.nan) for m in models]
        if mean_intervals is not None:
            iv = mean_intervals[mean_intervals["score"] == value].set_index("model")
            board[f"{value}_low"] = [iv["low"].get(m, np.nan) for m in models]
            board[f"{value}_high"] = [iv["high"].get(m, np.nan) for m in models]
    for src, dst in (("auc_rank", "auc_rank"), ("rank", "accuracy_rank"), ("change", "rank_change"),
                     ("auc_rank_low", "auc_rank_low"), ("auc_rank_high", "auc_rank_high"),
                     ("rank_low", "accuracy_rank_low"), ("rank_high", "accuracy_rank_high"),
                     ("change_low", "rank_change_low"), ("change_high", "rank_change_high"),
                     ("sign_share", "sign_share"), ("p_value", "p_value"), ("p_change", "p_change"),
                     ("significant", "significant")):
        if src in ch.columns:
            board[dst] = [ch[src].get(m, np.nan) for m in models]
    for value, point in (("disca", disca), ("drift", drift)):
        board[value] = [point.get(m, np.nan) for m in models]
        if replicates is not None:  # the interval of the mean, from the per-dataset replicates
            ivs = [_mean_interval(replicates.get(m, {}).get(value), confidence_level) for m in models]
            board[f"{value}_low"] = [low for low, _ in ivs]
            board[f"{value}_high"] = [high for _, high in ivs]
    for c in ("auc_rank", "accuracy_rank", "rank_change"):
        board[c] = pd.array(board[c], dtype="Int64")
    return board.sort_values(["accuracy_rank", "auc_rank"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class _DatasetJob:
    """What one task of the diagnostics stage does with a model's views (picklable: options only, no data)."""

    in_datasets: tuple
    options: dict
    sel_options: dict
    bins: int


def _cohort_task(views, model, arg):
    """One model x dataset: cohort diagnostics and their curves, and selective answering (a task).

    ``views`` is the model's (benchmark view, selective benchmark view): the
    task's only data.  Returns tidy rows and the replicates behind the
    per-dataset intervals, never the results themselves (their arrays stay in
    the worker).
    """
    job, dataset = arg
    bench, bench_sel = views
    log = WarningLog()  # said once per run by evaluate, with the models and datasets they came from
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = cohort_diagnostics(bench, model, dataset, **job.options)
        roc, hist, rob, drift, wass = _diagnostic_curves(d, job.bins)
    log.record(caught, model=model, dataset=dataset)
    out = {"diagnostics": d.to_dict(), "roc": roc, "cohort_histograms": hist, "robustness": rob,
           "drift_curves": [drift], "wasserstein": wass, "selective": [], "tolerance": [], "coverage_curves": [],
           "fluctuations": [], "resolution_sensitivity": [], "disca": None,
           "drift": _replicates_of([d], "drift")}
    if dataset in job.in_datasets:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = selective_answering(bench_sel, model, dataset, **job.sel_options)
            sens = disca_resolution_sensitivity(r.confidence, r.correct, tolerance=job.sel_options["tolerance"])
        log.record(caught, model=model, dataset=dataset)
        out["selective"].append(r.to_dict())
        out["resolution_sensitivity"].append(_keyed(sens, model=model, dataset=dataset))
        out["coverage_curves"], out["tolerance"], out["fluctuations"] = _selective_rows(r)
        out["disca"] = _replicates_of([r], "disca") if r.rankable else None  # as the mean: rankable ones only
    out["warnings"] = log.records
    return out


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
        raise TypeError(f"`dask` must be a scheduler address such as 'tcp://127.0.0.1:8786' or a "
                        f"distributed.Client, got {type(dask).__name__}")
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
    with warnings_once(explained=single, models=bench.models,
                       ignore=[(SAID_WHEN_READ, UndefinedMetricWarning)]) as log:
        for w in read:  # first, in order, with the block's own
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if left_out:
            hint = ONE_DATASET_HINT if len(bench.datasets) == 1 else DOMAIN_HINT
            warnings.warn(left_out_message(left_out, hint=hint), UserWarning, stacklevel=2)
        if bench.repeated and p.n_bootstrap:
            warnings.warn(REPEATED_NOTE, UserWarning, stacklevel=2)
        with Tasks.opened(n_jobs, dask, progress, log) as tasks:
            ev = _compute(p, bench, full, source, sha256, t_start, tasks=tasks, progress=progress, log=log,
                          left_out=left_out)
    ev.data["defaults_replaced"] = fallbacks
    # every warning kept in full: the reports show each where it applies (a CLI run prints one line about them)
    ev.data["notes"] = [{k: v for k, v in note.items() if k != "category"} for note in log.said]
    return ev


def _compute(p, bench, full, source, sha256, t_start, *, tasks, progress, log, left_out):
    """The body of :func:`evaluate`, once everything is validated, stage by stage; ``log`` takes the workers' warnings.

    ``tasks`` (:class:`_Tasks`) runs each stage's tasks here, in local processes or on Dask.
    """
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
        tables["risk_control"] = risk_control_evaluation(bench, p, left_out)
    with stages.timed("calibration of the given confidence"):
        given, given_reps = given_tables(bench, p)
        tables.update(given)
    add_ranks(tables)
    replicates = {m: x["replicates"] for m, x in zip(bench.models, parts)} if p.n_bootstrap else None
    tables["leaderboard"] = _leaderboard(head, tables["rank_changes"], tables["selective"], tables["diagnostics"],
                                         bench.models, tables.get("mean_intervals"), replicates,
                                         p.confidence_level)
    tables["comparison"] = comparison_table(bench, head, boot, tables, replicates, p, given=given_reps)
    tables["findings"] = findings_table(tables, p, bench.models)
    tables["verdicts"] = verdicts_table(tables["findings"], tables["leaderboard"])
    return _evaluation(tables, p, bench, source, sha256, stages.seconds, t_start, left_out)


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
    parts = tasks.run("calibration grid", grid_task, [(m, (tuple(protocols), kw)) for m in bench.models],
                      data=bench, view=one_model)
    grid = sort_like(pd.concat([g for g, _ in parts], ignore_index=True), bench)
    ce = CalibrationErrors(ece=sort_like(pd.concat([e.ece for _, e in parts], ignore_index=True), bench),
                           reliability=sort_like(pd.concat([e.reliability for _, e in parts], ignore_index=True),
                                                 bench), n_bins=parts[0][1].n_bins)
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
    kw = dict(protocols=[p.protocol], methods=[p.method], n_bootstrap=p.n_bootstrap,
              confidence_level=p.confidence_level, class_weight=p.class_weight, n_repeats=p.n_repeats,
              random_state=p.random_state, cells=p.cells)
    chunks = replicate_ranges(p.n_bootstrap, n_models=len(bench.models), workers=tasks.workers)
    done = tasks.run("bootstrap", bootstrap_task, [(m, (kw, c)) for m in bench.models for c in chunks], data=bench,
                     view=one_model)
    return join_grid_chunks(done, bench)


def _with_intervals(grid, boot):
    """The grid with the bootstrap's interval columns, each right after its value (the grid itself without one)."""
    if boot is None:
        return grid
    key = ["protocol", "method", "dataset", "model"]
    extra = [c for c in boot.grid.columns if c.endswith(("_low", "_high"))]
    grid = grid.merge(boot.grid[key + extra], on=key, how="left")
    order = list(grid.columns[:len(grid.columns) - len(extra)])
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
    tables["rank_table"] = pd.concat([rank_table(head, score=s).assign(score=s) for s in ("auc", "accuracy", "kappa")],
                                     ignore_index=True)
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
        friedman.append(pd.DataFrame({"value": value, "model": list(ranks.index), "average_rank": ranks.to_numpy(),
                                      "statistic": f.statistic, "pvalue": f.pvalue, "f_statistic": f.f_statistic,
                                      "f_pvalue": f.f_pvalue, "n_datasets": f.n_datasets,
                                      "critical_difference": f.critical_difference, "alpha": f.alpha}))
    return pd.concat(friedman, ignore_index=True) if friedman else pd.DataFrame({
        "value": pd.Series(dtype="str"), "model": pd.Series(dtype="str"),
        **{c: pd.Series(dtype=float) for c in ("average_rank", "statistic", "pvalue", "f_statistic", "f_pvalue")},
        "n_datasets": pd.Series(dtype="int64"), "critical_difference": pd.Series(dtype=float),
        "alpha": pd.Series(dtype=float)})


def _paper_tables(bench, grid, head, p):
    """The Opitz paper's Tables 3 to 5 and its score histograms."""
    return {
        "calibration_modes": pd.concat(
            [calibration_modes(grid, score=s).assign(score=s) for s in ("accuracy", "kappa")], ignore_index=True),
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
    options = dict(protocol=p.cohort_protocol, val_split=p.val_split, test_split=p.test_split,
                   sigma_max=p.sigma_max, n_points=p.n_points, n_repeats=p.noise_repeats,
                   noise_method=p.noise_method, p=p.p,
                   random_state=p.random_state, n_bootstrap=p.n_bootstrap,
                   confidence_level=p.confidence_level, n_permutations=p.n_permutations, cells=p.cells)
    sel_options = dict(ood_dataset=ood, protocol=p.selective_protocol, method=p.selective_method,
                       class_weight=p.class_weight, tolerance=p.tolerance, resolution=p.resolution,
                       computation_score=p.computation_score, random_state=p.random_state,
                       n_bootstrap=p.n_bootstrap, confidence_level=p.confidence_level, cells=p.cells)
    job = _DatasetJob(tuple(d for d in bench.datasets if d != ood), options, sel_options, p.bins)
    runs = [(m, (job, d)) for m in bench.models for d in bench.datasets]
    done = tasks.run("cohort diagnostics and selective answering", _cohort_task, runs, data=(bench, bench_sel),
                     view=model_views)
    n = len(bench.datasets)
    parts = [model_parts(done[i * n:(i + 1) * n]) for i in range(len(bench.models))]
    for x in parts:
        log.records.extend(x["warnings"])
    return parts


def _per_model_tables(parts):
    """The models' rows, one table each: diagnostics and their curves, selective answering and its tables."""
    tables = {"diagnostics": pd.concat([x["diagnostics"] for x in parts], ignore_index=True)}
    for name in ("roc", "cohort_histograms", "robustness", "drift_curves", "wasserstein"):
        tables[name] = _concat([y for x in parts for y in x[name]])
    tables["selective"] = pd.DataFrame([row for x in parts for row in x["selective"]])
    tables["tolerance"] = _concat([y for x in parts for y in x["tolerance"]])
    tables["coverage_curves"] = _concat([y for x in parts for y in x["coverage_curves"]])
    tables["resolution_sensitivity"] = _concat([y for x in parts for y in x["resolution_sensitivity"]])
    tables["fluctuations"] = _concat([y for x in parts for y in x["fluctuations"]],
                                     ["model", "dataset", "where", "i", "coverage_1", "coverage_2", "d1", "d2", "c1",
                                      "c2", "c"])
    return tables


def _evaluation(tables, p, bench, source, sha256, stages, t_start, left_out):
    """The Evaluation of the tables: parameters, data info, versions, creation time and seconds per stage.

    ``data["protocols_left_out"]`` maps each protocol the grid leaves out to why (empty: none).
    """
    stored = {k: list(v) if isinstance(v, tuple) else v for k, v in p.as_dict().items()}  # as its manifest stores them
    info = {"source": source, "sha256": sha256, "kind": bench.kind, "graded": bench.graded,
            "n_rows": int(len(bench)), "models": list(bench.models),
            **({"n_items": int(bench.item_counts().sum())} if bench.repeated else {}),
            "datasets": list(bench.datasets), "domains": {d: bench.domains.get(d) for d in bench.datasets},
            "protocols_left_out": dict(left_out)}
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    timing = {name: round(sec, 3) for name, sec in stages}
    timing["total"] = round(time.perf_counter() - t_start, 3)
    return Evaluation(tables=tables, parameters=stored, data=info, versions=package_versions(), created=created,
                      timing=timing)


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
