"""One report's job and its results: what a worker runs (its notebooks executed, the page rendered)
and what it returns, locally or on a Dask worker.

:func:`beyondauc.report.runner.run_report` makes the jobs and collects the results.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import io
import math
import os
import tempfile
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..utils.output import atomic_write
from .execute import INLINE_BACKEND, JupyterKernel, error_of, run_with_papermill, worker_jupyter_kernel
from .pdf import write_pdf_file
from .render import render_html

if TYPE_CHECKING:
    from ..evaluation.container import Evaluation


__all__ = [
    "ModelReport",
    "NotebookRun",
    "ReportJob",
    "ReportResult",
    "report_job",
    "shipment",
    "warm_worker",
    "worker_failed",
    "write_shipped",
]


@dataclasses.dataclass(frozen=True)
class NotebookRun:
    """One executed notebook of a report.

    Attributes
    ----------
    name : str
        Notebook stem (e.g. ``"test_auroc"``).
    path : str
        The executed notebook, relative to the report folder (kept also when
        it failed: papermill's error banner is in it).
    status : {"ok", "failed"}
    error : str or None
        ``"ExceptionName: message"`` of the cell that failed.
    seconds : float
        Wall time of the execution, the Jupyter kernel's start included.
    kernel_seconds : float
        Of that, the time until the Jupyter kernel ran its first cell
        (starting a Jupyter kernel included when one was started for it).
    new_kernel : bool
        Whether a Jupyter kernel was started for it; otherwise it ran in the
        Jupyter kernel of an earlier notebook, its namespace reset.
    """

    name: str
    path: str
    status: str
    error: str | None
    seconds: float
    kernel_seconds: float
    new_kernel: bool = False


@dataclasses.dataclass(frozen=True)
class ModelReport:
    """The report of one model (or of the benchmark overview, ``model=None``).

    Paths are relative to the report folder; ``html``/``pdf`` are None when
    they were not written.
    """

    model: str | None
    slug: str
    status: str
    error: str | None
    html: str | None
    pdf: str | None
    notebooks: tuple[NotebookRun, ...]
    seconds: float

    def _repr_html_(self) -> str:
        from ..utils.html import frame_html, result_html

        rows = [("status", self.status), ("html", self.html), ("pdf", self.pdf), ("seconds", round(self.seconds, 1))]
        if self.error:
            rows.insert(1, ("error", self.error))
        runs = pd.DataFrame(
            [
                {"notebook": nb.name, "status": nb.status, "seconds": round(nb.seconds, 1), "error": nb.error or ""}
                for nb in self.notebooks
            ]
        )
        title = "ModelReport: overview" if self.model is None else f"ModelReport: {self.model}"
        return result_html(title, rows, parts=[frame_html(runs, index=False)] if len(runs) else [])


@dataclasses.dataclass(frozen=True)
class ReportResult:
    """What :func:`run_report` wrote.

    Attributes
    ----------
    out_dir : pathlib.Path
    index : pathlib.Path
        The ``index.html`` leaderboard.
    reports : tuple of ModelReport
        One per model, in the benchmark's model order.
    overview : ModelReport
    leaderboard : pandas.DataFrame or None
        The evaluation's leaderboard (what ``index.html`` shows).
    seconds : float
        Wall time of the whole run.
    jobs : int
        Parallel workers used (local processes or Dask workers asked for).
    """

    out_dir: Path
    index: Path
    reports: tuple[ModelReport, ...]
    overview: ModelReport
    leaderboard: pd.DataFrame | None
    seconds: float
    jobs: int
    evaluation: Evaluation | None = None

    @property
    def failed(self) -> tuple[ModelReport, ...]:
        """The reports that failed, the overview included."""
        return tuple(r for r in (*self.reports, self.overview) if r.status != "ok")

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def notebook_runs(self) -> tuple[NotebookRun, ...]:
        """Every executed notebook of the run."""
        return tuple(nb for r in (*self.reports, self.overview) for nb in r.notebooks)

    def summary(self) -> str:
        """A few lines for a terminal: what was written and what failed."""
        runs = self.notebook_runs
        lines = [
            (
                f"{len(self.reports)} model reports and the overview, {len(runs)} notebooks in "
                f"{self.seconds:.1f} s with {self.jobs} worker(s): {self.index}"
            )
        ]
        for r in self.failed:
            who = "overview" if r.model is None else f"model {r.model!r}"
            lines.append(f"FAILED {who}: {r.error}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from ..utils.html import frame_html, result_html, styled

        reports = pd.DataFrame(
            [
                {
                    "model": "(overview)" if r.model is None else r.model,
                    "status": r.status,
                    "html": r.html or "",
                    "pdf": r.pdf or "",
                    "seconds": round(r.seconds, 1),
                    "error": r.error or "",
                }
                for r in (*self.reports, self.overview)
            ]
        )
        parts = [frame_html(reports, index=False, caption=f"reports (paths relative to {self.out_dir})")]
        if self.leaderboard is not None:
            board = styled(
                self.leaderboard,
                higher_is_better=["auc", "accuracy", "kappa", "disca"],
                lower_is_better=["auc_rank", "accuracy_rank", "drift"],
            ).hide(axis="index")
            parts.append('<div style="margin-top: 4px; color: #555">leaderboard (best per column in bold)</div>')
            parts.append(board.to_html())
        status = "all ok" if self.ok else f"{len(self.failed)} failed"
        return result_html(
            "ReportResult",
            [
                ("index", str(self.index)),
                ("reports", len(self.reports)),
                ("notebooks", len(self.notebook_runs)),
                ("seconds", round(self.seconds, 1)),
                ("jobs", self.jobs),
            ],
            subtitle=status,
            parts=parts,
        )


@dataclasses.dataclass(frozen=True)
class ReportJob:
    """One report to execute and render: a model's, or the overview (``model`` None).

    It is all a worker needs (it is pickled to a local worker or a Dask
    worker): where to write (``target``, the folder ``rel`` inside the report,
    the file ``stem``), the notebooks with the parameters each declares, the
    header of the page, and how to run them.
    """

    model: str | None
    target: str
    rel: str
    stem: str
    notebooks: tuple[tuple[str, dict[str, object]], ...]
    header: dict[str, object]
    kernel_name: str
    timeout: float | None
    include_code: bool
    pdf: bool
    reuse_jupyter_kernel: bool


def report_job(job: ReportJob, shipped=None):
    """Execute one report's notebooks and render it (runs in a worker).

    Locally (``shipped`` None) into its folder of the staging report.  On a
    Dask worker ``shipped`` is :func:`shipment`'s dict: the report runs in a
    temporary folder of the worker's own and returns ``(ModelReport, {file
    name: bytes})`` for the client to write (:func:`write_shipped`), so the
    workers need no file system shared with the client.
    """
    if shipped is not None:
        return _report_elsewhere(job, shipped)
    t0 = time.perf_counter()
    os.environ["MPLBACKEND"] = INLINE_BACKEND  # the Jupyter kernels draw inline images, whatever the caller set
    target = Path(job.target)
    target.mkdir()  # in the staging folder; fails if the run was abandoned and the folder removed
    reuse = job.reuse_jupyter_kernel
    jupyter_kernel = worker_jupyter_kernel(job.kernel_name) if reuse else JupyterKernel(job.kernel_name)
    try:
        runs, executed = [], []
        for src, parameters in job.notebooks:
            dst = target / Path(src).name
            *result, nb = run_with_papermill(src, dst, parameters, jupyter_kernel, job.timeout)
            run = NotebookRun(Path(src).stem, dst.name, *result)
            runs.append(run)
            executed.append((run, nb))
    finally:
        if not reuse:
            jupyter_kernel.shutdown()
    failed = [r for r in runs if r.status != "ok"]
    error = "; ".join(f"{r.name}: {r.error}" for r in failed) or None
    header = dict(job.header, failed=error)
    html_name = pdf_name = None
    try:
        html = render_html(executed, header, include_code=job.include_code)
        html_name = f"{job.stem}.html"
        atomic_write(target / html_name, html)
        if job.pdf:
            write_pdf_file(html, target / f"{job.stem}.pdf", target)
            pdf_name = f"{job.stem}.pdf"
    except Exception as exc:  # noqa: BLE001 - rendering failed: the executed notebooks are still kept
        error = "; ".join(filter(None, [error, f"rendering: {error_of(exc)}"]))
    rel = job.rel
    notebooks = tuple(
        NotebookRun(r.name, f"{rel}/{r.path}", r.status, r.error, r.seconds, r.kernel_seconds, r.new_kernel)
        for r in runs
    )
    return ModelReport(
        job.model,
        target.name,
        "failed" if error else "ok",
        error,
        f"{rel}/{html_name}" if html_name else None,
        f"{rel}/{pdf_name}" if pdf_name else None,
        notebooks,
        time.perf_counter() - t0,
    )


def _report_elsewhere(job, shipped):
    """:func:`report_job` in a temporary folder laid out like the report's: ``evaluation/`` and the model's folder."""
    with tempfile.TemporaryDirectory(prefix="beyondauc-report-", dir=_worker_directory()) as tmp:
        root = Path(tmp)
        with zipfile.ZipFile(io.BytesIO(shipped["evaluation"])) as z:
            z.extractall(root / "evaluation")  # names checked by the client that zipped it (plain table files)
        sources = root / ".notebooks"
        sources.mkdir()
        for name, text in shipped["notebooks"].items():
            (sources / name).write_bytes(text)
        target = root / job.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        local = dataclasses.replace(
            job,
            target=str(target),
            notebooks=tuple((str(sources / Path(src).name), params) for src, params in job.notebooks),
        )
        report = report_job(local)
        return report, {f.name: f.read_bytes() for f in target.iterdir() if f.is_file()}


def _worker_directory():
    """The Dask worker's own folder (its ``local_directory``), or None (the system's temporary folder)."""
    with contextlib.suppress(ImportError, ValueError):
        from distributed import get_worker

        return get_worker().local_directory
    return None


def shipment(evaluation_dir, report_jobs):
    """What every report job on Dask needs, as data: the saved evaluation zipped, and the notebooks' bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:  # Parquet is compressed already
        for f in sorted(Path(evaluation_dir).rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(evaluation_dir).as_posix())
    sources = {Path(src).name: Path(src).read_bytes() for job in report_jobs for src, _ in job.notebooks}
    return {"evaluation": buffer.getvalue(), "notebooks": sources}


def write_shipped(job, shipped):
    """Write a Dask worker's report files into the report's staging folder; return its ModelReport.

    Only the files the report may hold are written (its notebooks, its HTML
    and PDF), each through :func:`~beyondauc.utils.output.atomic_write`.
    """
    report, files = shipped
    allowed = {Path(src).name for src, _ in job.notebooks} | {f"{job.stem}.{e}" for e in ("html", "pdf")}
    target = Path(job.target)
    target.mkdir()
    for name, data in files.items():
        if name in allowed:
            atomic_write(target / name, data)
    return report


def warm_worker(kernel_name, cwd):
    """Start this worker's Jupyter kernel and import what the notebooks need (runs in a worker, during the
    evaluation).

    A failure is left for the notebooks to meet and report: their Jupyter kernel is started again if needed.
    """
    os.environ["MPLBACKEND"] = INLINE_BACKEND
    with contextlib.suppress(Exception):
        worker_jupyter_kernel(kernel_name).warm(cwd)


def worker_failed(job, exc):
    """The failed ModelReport of ``job`` whose worker raised ``exc`` or ended."""
    error = f"worker: {error_of(exc)}"
    if isinstance(exc, concurrent.futures.process.BrokenProcessPool):
        error += " (a worker process ended abruptly: killed, or out of memory)"
    return ModelReport(job.model, Path(job.target).name, "failed", error, None, None, (), math.nan)
