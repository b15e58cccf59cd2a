"""Parameterized notebooks and shareable per-model reports.

:func:`open_benchmark` and :func:`leaderboard` are what the notebooks and the
report index call; :func:`run_report` executes the notebooks with papermill per
model, in parallel, renders each model's report as one self-contained HTML file
(optionally a PDF) and writes an ``index.html`` leaderboard. Its body is the recipe: the run
checked into a plan (:mod:`beyondauc.report.plan`), the output folder entered, the evaluation
computed once, one :class:`~beyondauc.report.jobs.ReportJob` per page, the index written last.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime as _dt
import multiprocessing
import os
import posixpath
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..data.open import DEMO, open_benchmark
from ..evaluation.benchmark_checks import check_against_benchmark
from ..evaluation.parameters import EVALUATION_PARAMETERS, check_parameters
from ..evaluation.pipeline import data_fingerprint, evaluate, load_evaluation
from ..evaluation.settings import EvaluationParameters, one_dataset_defaults, resolve_auto
from ..metrics.calibration.protocols import ONE_DATASET_HINT, left_out_message
from ..utils.output import ReportFolder, atomic_write, safe_name
from ..utils.parallel import process_pool
from ..utils.validation import check_names
from .jobs import (
    ReportJob,
    ReportResult,
    report_job,
    shipment,
    warm_worker,
    worker_failed,
    write_shipped,
)
from .plan import (
    NOTEBOOKS,
    OVERVIEW,
    DataOptions,
    ReportOptions,
    ReportPlan,
    check_notebooks,
    check_report_parameters,
    estimated_size,
    folder_names,
    notebook_parameters,
    planned_files,
)
from .render import index_rows, render_index

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark


def leaderboard(bench: Benchmark | str | os.PathLike | pd.DataFrame, **parameters: Any) -> pd.DataFrame:
    """One row per model: AUC rank vs expected-accuracy rank with intervals, DiSCA and drift.

    The headline table of a report's ``index.html`` and of the overview
    notebook: the ``leaderboard`` table of :func:`~beyondauc.evaluate` (which
    computes everything once; ``parameters`` go to it).

    Returns
    -------
    pandas.DataFrame
        ``model, auc, auc_low, auc_high, accuracy, ..., auc_rank,
        accuracy_rank, rank_change, ..., p_change, significant, disca,
        drift``, sorted by accuracy rank. ``rank_change`` is AUC rank minus
        accuracy rank (positive: the model gains places once it must commit to
        a threshold).

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.report import leaderboard
    >>> board = leaderboard(load_demo(), datasets=["wine", "diabetes"], n_bootstrap=0, noise_repeats=2)
    >>> board.columns.tolist()[:4]
    ['model', 'auc', 'accuracy', 'kappa']
    """
    return evaluate(bench, **parameters).table("leaderboard")


def _package_dir(name):
    """``notebooks`` / ``templates`` shipped with the package (symlinks in a checkout)."""
    return Path(__file__).resolve().parent.parent / name


# ---------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------


def _notebooks_dir():
    return _package_dir("notebooks")


@contextlib.contextmanager
def _make_executor(jobs, dask):
    """(executor, workers, Dask client or None): local processes, or a Dask cluster's executor.

    Left by an interrupt (:mod:`beyondauc.utils.interrupts`) it waits for no
    task: the local workers are killed, the Dask client is closed (which
    cancels its tasks).
    """
    if dask is None:
        with process_pool(jobs, multiprocessing.get_context("spawn")) as executor:  # its workers end with this process
            yield executor, jobs, None
        return
    try:
        from distributed import Client
    except ImportError as exc:
        raise ImportError("`dask` needs the optional extra: pip install 'beyondauc[dask]'") from exc
    client = Client(dask)
    executor = client.get_executor()
    workers = sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values())
    finished = False
    try:
        yield executor, workers or 1, client
        finished = True
    except Exception:
        finished = True
        raise
    finally:
        executor.shutdown(wait=finished)
        client.close()


def _progress(total, enabled):
    if not enabled:
        return contextlib.nullcontext(None)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="beyondauc report", unit="report", file=sys.stderr, dynamic_ncols=True)


def run_report(
    data: str | os.PathLike | Benchmark | pd.DataFrame = DEMO,
    *,
    models: str | Sequence[str] | None = None,
    datasets: str | Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
    pdf: bool = False,
    jobs: int | None = None,
    dask: str | None = None,
    include_code: bool = False,
    pos_label: str | int | bool | None = None,
    domains: dict[str, str] | str | os.PathLike | None = None,
    nan_policy: str = "raise",
    baseline: str | None = None,
    parameters: dict[str, object] | None = None,
    progress: bool = True,
    log_options: dict[str, str | None] | None = None,
    notebooks_dir: str | os.PathLike | None = None,
    kernel_name: str = "python3",
    timeout: float | None = None,
    recompute: bool = False,
) -> ReportResult:
    """Compute the evaluation once, then execute the notebooks per model in parallel and write the reports.

    For every model, papermill runs ``auc_vs_accuracy``, ``test_auroc`` and
    ``selective_answering`` (the datasets are looped over inside), nbconvert renders the three as one self-contained HTML file
    (optionally also a PDF through WeasyPrint); ``overview`` runs once for the
    benchmark. ``index.html`` (jinja2, autoescaped) is the leaderboard linking
    every report and executed notebook. A notebook that fails fails only its
    model's report; its executed notebook keeps papermill's error banner.

    Every local worker process keeps one Jupyter kernel and runs notebook
    after notebook in it, the namespace reset in between (a Jupyter kernel
    that died or ran a failing notebook is replaced); on Dask each report
    starts its own.
    The workers never import the calling script, so a script needs no
    ``if __name__ == "__main__":`` guard around ``run_report``.

    Everything is validated before the first Jupyter kernel starts: a parameter no
    notebook declares, or a value out of range, raises ``ValueError``.

    Layout of ``out``::

        index.html, .beyondauc-report.json (the files written), data.csv.gz (a DataFrame's data)
        overview/overview.html, overview/overview.ipynb
        models/<safe model name>/report.html, report.pdf, <notebook>.ipynb

    ``out`` must be new, empty or a report of ours (it holds
    ``.beyondauc-report.json``, whose listed paths must all lie inside it);
    another folder, or a file of the user's at a path the report writes,
    raises ``FileExistsError`` before anything is computed, and a run into a
    folder another run is writing raises ``BlockingIOError``. The report is
    built inside ``out`` (a hidden staging folder) and moved in file by file
    from one atomic commit point: ``out`` always holds a complete report, and
    only the files the old report's manifest lists are replaced or deleted
    (files the user put into it stay). See :mod:`beyondauc.utils.output`.

    Parameters
    ----------
    data : str, path, Benchmark or DataFrame, default="demo"
        See :func:`open_benchmark`. A Benchmark or DataFrame is written to
        ``out/data.csv.gz`` for the notebooks to read.
    models, datasets : list of str or comma-separated str, optional
        Models to write reports on and datasets to analyse (all when None).
        The evaluation always covers every model of the data, so ranks,
        pairwise comparisons and verdicts are among all of them; the index
        lists the models whose reports were written.
    out : str or path, optional
        Output folder; default ``reports/<name of the data>``.
    pdf : bool, default=False
        Also write each report as PDF (needs WeasyPrint).
    jobs : int, optional
        Local worker processes; default: the number of cores.
    dask : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``) to run
        the evaluation's tasks and the reports on instead of local processes
        (needs ``distributed``).  The workers need no file system shared with
        this process: each report runs in a temporary folder of its worker,
        gets the evaluation and the notebooks as data and sends back its
        files, which are written here.
    include_code : bool, default=False
        Show code cells and the parameters in the HTML.
    pos_label : str, int or bool, optional
        Positive label for the notebooks' :func:`open_benchmark`.
    domains : mapping or path, optional
        Dataset -> domain over the data's own (a mapping, or a JSON or CSV
        file of one). Without a domain for every dataset the reports leave
        the ``outdomain`` and ``indomain`` protocols out and say so.
    nan_policy : {"raise", "drop"}, default="raise"
        NaN/inf scores: an error naming the row, or their rows dropped with a
        warning.
    baseline : str, optional
        A model every report compares with (ΔAUC by the paired DeLong test,
        Δ accuracy, kappa, DiSCA and drift by the paired bootstrap); None:
        each model is compared with the best other model by mean AUC.
    log_options : dict, optional
        How to read LLM harness logs: ``correct_metric``, ``scorer``,
        ``confidence_field`` (see :func:`~beyondauc.load_benchmark`).
    parameters : dict, optional
        More notebook parameters, e.g. ``{"protocol": "indata", "tolerance": 0.8}``;
        every name must be declared by a notebook, and each notebook gets the
        ones it declares.
    progress : bool, default=True
        Show a progress bar of reports done / total on stderr.
    notebooks_dir : str or path, optional
        Folder with the four notebooks; default: the package's.
    kernel_name : str, default="python3"
        The Jupyter kernel (kernelspec) the notebooks run in.
    timeout : float, optional
        Seconds a cell may run before it fails (None: no limit).
    recompute : bool, default=False
        Compute the evaluation even when the report folder holds one of the
        same data (SHA-256) and parameters, which is otherwise reused.

    Returns
    -------
    ReportResult

    Examples
    --------
    >>> import tempfile
    >>> from beyondauc.report import run_report
    >>> with tempfile.TemporaryDirectory() as tmp:  # doctest: +SKIP
    ...     result = run_report("demo", models="svm,knn", out=tmp, progress=False)
    ...     result.ok
    True
    """
    t0 = time.perf_counter()
    models = check_names(models, "models")
    datasets = check_names(datasets, "datasets")
    options = ReportOptions.checked(
        jobs=jobs,
        dask=dask,
        timeout=timeout,
        pdf=pdf,
        include_code=include_code,
        progress=progress,
        kernel_name=kernel_name,
        recompute=recompute,
    )
    logs = {k: v for k, v in (log_options or {}).items() if v is not None}
    reading = DataOptions(datasets, pos_label, domains, nan_policy, baseline, logs)
    plan = _plan(data, models, reading, parameters, notebooks_dir)
    out = _default_out(data, plan.bench) if out is None else out
    # entering refuses, before any computation, a folder not ours and a file of the user's the report would replace
    space = estimated_size(len(plan.bench.models), len(plan.bench.datasets), options.pdf)  # checked with the old's
    with ReportFolder(out, planned=planned_files(plan.slugs.values(), options.pdf), space=space) as output:
        result = _run(output, plan, options)
        output.commit()
    return dataclasses.replace(result, seconds=time.perf_counter() - t0)


def _plan(data, models, reading, parameters, notebooks_dir):
    """The :class:`ReportPlan` of a run: everything checked, the data read, before any Jupyter kernel starts."""
    folder = check_notebooks(notebooks_dir or _notebooks_dir())
    extra = check_report_parameters(parameters, folder)
    data_checks = {"pos_label": reading.pos_label, "domains": reading.domains, "nan_policy": reading.nan_policy}
    check_parameters({**data_checks, "baseline": reading.baseline, **reading.log_options})
    full = open_benchmark(data, **data_checks, log_options=reading.log_options)
    evaluated = open_benchmark(full, datasets=reading.datasets)  # every model: ranks and pairs are among all of them
    bench = open_benchmark(evaluated, models=models)  # the models whose reports are written
    given = EvaluationParameters.checked(
        {**{k: v for k, v in extra.items() if k in EVALUATION_PARAMETERS}, "baseline": reading.baseline}
    )
    check_against_benchmark(one_dataset_defaults(given, extra, evaluated)[0], evaluated, available=full.datasets)
    return ReportPlan(data, evaluated, bench, folder, folder_names(bench.models), extra, reading)


def _default_out(data, bench):
    """``reports/<name of the data>``: the output folder when none is given."""
    name = DEMO if isinstance(data, str) and data == DEMO else Path(str(bench.source)).stem.split(".")[0]
    return Path("reports") / safe_name(name or "benchmark")


def _evaluation_for(output, data, bench, parameters, *, recompute, progress, jobs, client=None):
    """The evaluation of the report: the previous run's when the data and parameters are the same, else new.

    Returns ``(evaluation, reused)``; the caller saves it into the staging folder.
    """
    checked = resolve_auto(EvaluationParameters.checked(parameters), bench)
    complete = one_dataset_defaults(checked, parameters, bench)[0].as_dict()
    _, sha256 = data_fingerprint(data)
    previous = Path(output.out) / "evaluation"
    if not recompute and (previous / "manifest.json").is_file():
        try:
            old = load_evaluation(previous)
        except (OSError, ValueError, KeyError):
            old = None
        if old is not None and old.same_inputs(sha256, complete):
            if progress:
                print(
                    "beyondauc report: reusing the evaluation of the previous run (same data, parameters and "
                    "package versions; --recompute to compute it again)",
                    file=sys.stderr,
                    flush=True,
                )
            return old, True
    if progress:
        print(
            f"beyondauc report: computing the evaluation of {len(bench.models)} models on {len(bench.datasets)} "
            f"datasets (once, for every report and the index)",
            file=sys.stderr,
            flush=True,
        )
    return evaluate(data, progress=progress, n_jobs=jobs, dask=client, **parameters), False


@dataclasses.dataclass(frozen=True)
class Workers:
    """Where the reports run: the executor, how many workers it has, and the Dask client (None: local processes)."""

    executor: concurrent.futures.Executor
    count: int
    client: object = None


def _run(output, plan, options):
    """Write the report into ``output.staging``; return the ReportResult (paths of the final folder)."""
    t0 = time.perf_counter()
    stage = output.staging
    (stage / "models").mkdir()
    workers = min(options.jobs, len(plan.bench.models) + 1)
    with _make_executor(workers, options.dask) as (executor, workers, client):
        if options.dask is None:  # the workers start their Jupyter kernels and import while the evaluation is computed
            for _ in range(workers):
                executor.submit(warm_worker, options.kernel_name, str(stage))
        evaluation, reused = _evaluation_for(
            output,
            plan.data,
            plan.evaluated,
            plan.evaluation_parameters(),
            recompute=options.recompute,
            progress=options.progress,
            jobs=options.jobs,
            client=client,
        )
        evaluation.save(stage / "evaluation")
        return _render_reports(output, evaluation, reused, plan, options, Workers(executor, workers, client), t0)


#: How a report tells its readers to give the domains (the reader may use either interface).
_REPORT_DOMAIN_HINT = (
    "to include them, add a 'domain' column to the data, or give the domains (--domains on the "
    "command line, domains= in Python)"
)


def notes(evaluation):
    """Sentences every report and the index show above the numbers: what the evaluation left out, and why."""
    left = evaluation.data.get("protocols_left_out") or {}
    if not left:
        return []
    one = len(evaluation.data.get("datasets", [])) == 1
    text = left_out_message(left, hint=ONE_DATASET_HINT if one else _REPORT_DOMAIN_HINT)
    out = [text[0].upper() + text[1:] + "."]
    for name, r in (evaluation.data.get("defaults_replaced") or {}).items():
        out.append(f"Default replaced: {name} = {r['used']!r} instead of {r['default']!r}, as {r['why']}.")
    return out


def _run_jobs(executor, report_jobs, shipped, progress):
    """Run every report job on ``executor``; return {target: ModelReport}. A job whose worker died fails alone."""
    results, futures = {}, {}
    for job in report_jobs:
        try:
            futures[executor.submit(report_job, job, *shipped)] = job
        except concurrent.futures.process.BrokenProcessPool as exc:  # a worker died before: no report can run
            results[job.target] = worker_failed(job, exc)
    with _progress(len(report_jobs), progress) as bar:
        for fut in concurrent.futures.as_completed(futures):
            job = futures[fut]
            try:
                done = fut.result()
                results[job.target] = write_shipped(job, done) if shipped else done
            except Exception as exc:  # noqa: BLE001 - a worker died: only this report fails
                results[job.target] = worker_failed(job, exc)
            if bar is not None:
                bar.update(1)
    return results


def _render_reports(output, evaluation, reused, plan, options, workers, t0):
    """Execute and render every model's report and the overview from ``evaluation``, then write the index."""
    stage = output.staging
    base_header = _base_header(evaluation)
    report_jobs = _report_jobs(evaluation, plan, options, stage, base_header, reuse=workers.client is None)
    # on Dask the reports run in the workers' own folders: the evaluation and notebooks go to them as data, once
    dask = workers.client
    shipped = () if dask is None else (dask.scatter(shipment(stage / "evaluation", report_jobs), broadcast=True),)
    results = _run_jobs(workers.executor, report_jobs, shipped, options.progress)
    reports = tuple(results[s.target] for s in report_jobs[:-1])
    overview = results[report_jobs[-1].target]
    board = evaluation.table("leaderboard")
    context = _index_context(evaluation, plan.bench, reports, overview, report_jobs, base_header, reused)
    atomic_write(stage / "index.html", render_index(context))  # last: the report is complete
    out_dir = Path(output.out)
    return ReportResult(
        out_dir, out_dir / "index.html", reports, overview, board, time.perf_counter() - t0, workers.count, evaluation
    )


def _base_header(evaluation):
    """What the header of every report page shows: the data, the versions, the date and the notes."""
    from ..utils.version import __version__

    return {
        "source": evaluation.data["source"],
        "sha256": evaluation.data["sha256"],
        "version": __version__,
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "evaluation_created": evaluation.created,
        "notes": notes(evaluation),
    }


def _notebook_parameters(plan, names, rel, params):
    """(path, the parameters it declares) of each notebook; the evaluation's path is relative to it."""
    params = {"evaluation": posixpath.relpath("evaluation", rel), **plan.notebook_options(), **params}
    folder = plan.notebooks_dir
    return tuple(
        (str(folder / f"{n}.ipynb"), {k: v for k, v in params.items() if k in notebook_parameters(folder, n)})
        for n in names
    )


def _report_jobs(evaluation, plan, options, stage, base_header, *, reuse):
    """One :class:`ReportJob` per model, then the overview's (last)."""
    shown = {k: v for k, v in evaluation.parameters.items() if v is not None and k != "models"}
    base = dict(
        kernel_name=options.kernel_name,
        timeout=options.timeout,
        include_code=options.include_code,
        pdf=bool(options.pdf),
        reuse_jupyter_kernel=reuse,
    )
    pages = [(model, f"models/{plan.slugs[model]}", "report", NOTEBOOKS) for model in plan.bench.models]
    pages.append((None, OVERVIEW, "overview", (OVERVIEW,)))
    return [
        ReportJob(
            model=model,
            target=str(stage / rel),
            rel=rel,
            stem=stem,
            notebooks=_notebook_parameters(plan, names, rel, {} if model is None else {"model": model}),
            header=dict(
                base_header,
                title="beyondauc report: benchmark overview" if model is None else f"beyondauc report: {model}",
                model=model,
                index=posixpath.relpath("index.html", rel),
                parameters=shown,
            ),
            **base,
        )
        for model, rel, stem, names in pages
    ]


def _index_context(evaluation, bench, reports, overview, report_jobs, base_header, reused):
    """What the index page's template (``index.html.j2``) reads: the run, the leaderboard rows, the overview."""
    from ..utils.version import __version__

    source, sha256, date = base_header["source"], base_header["sha256"], base_header["date"]
    n_failed = sum(r.status != "ok" for r in (*reports, overview))
    context = {
        "source": source,
        "sha256": sha256,
        "version": __version__,
        "date": date,
        "n_datasets": len(bench.datasets),
        "n_models": len(evaluation.data["models"]),
        "n_failed": n_failed,
        "n_jobs": len(report_jobs),
        "parameters": evaluation.parameters,
        "evaluation_created": evaluation.created,
        "n_items": evaluation.data.get("n_items"),
        "n_samples": evaluation.data.get("n_rows"),
        "reused": reused,
        "models": index_rows(evaluation, reports),
        "notes": base_header["notes"],
        "overview": {
            "html": overview.html,
            "status": overview.status,
            "error": overview.error,
            "notebooks": [{"name": nb.name, "path": nb.path} for nb in overview.notebooks],
        },
    }
    return context
