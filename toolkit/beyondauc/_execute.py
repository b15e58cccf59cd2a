"""Execution of the report notebooks with papermill.

Private: :mod:`beyondauc.report` decides what runs where; this module runs one
notebook and reports how it went.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import shutil
import time
from pathlib import Path

_INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


# Quiet kernels without an input history: many run at once and none is interactive.
_KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL", "--HistoryManager.enabled=False")


def _error_of(exc):
    ename = getattr(exc, "ename", None)
    if ename:
        evalue = str(getattr(exc, "evalue", "")).strip().splitlines()
        return f"{ename}: {evalue[0]}" if evalue else ename
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _timing(nb):
    """(seconds, kernel_seconds) from papermill's metadata of an executed notebook."""
    meta = nb.metadata.get("papermill", {})
    try:
        start = _dt.datetime.fromisoformat(meta["start_time"])
        end = _dt.datetime.fromisoformat(meta["end_time"])
        first = next(_dt.datetime.fromisoformat(c.metadata["papermill"]["start_time"]) for c in nb.cells
                     if c.metadata.get("papermill", {}).get("start_time"))
    except (KeyError, TypeError, ValueError, StopIteration):
        return math.nan, math.nan
    return (end - start).total_seconds(), (first - start).total_seconds()


def _execute(src, dst, parameters, kernel_name, timeout):
    """Run one notebook with papermill into ``dst``; return (status, error, seconds, kernel_seconds)."""
    import nbformat
    import papermill

    t0 = time.perf_counter()
    status, error = "ok", None
    try:
        papermill.execute_notebook(
            str(src), str(dst), parameters=parameters, kernel_name=kernel_name, progress_bar=False,
            log_output=False, execution_timeout=timeout, extra_arguments=list(_KERNEL_ARGUMENTS),
        )
    except Exception as exc:  # noqa: BLE001 - a failing notebook fails its model's report, not the run
        status, error = "failed", _error_of(exc)
    seconds = time.perf_counter() - t0
    kernel_seconds = math.nan
    if Path(dst).exists():
        with contextlib.suppress(Exception):
            _, kernel_seconds = _timing(nbformat.read(str(dst), as_version=4))
    else:  # papermill died before writing: keep the input so the report still links a notebook
        shutil.copyfile(src, dst)
    return status, error, seconds, kernel_seconds

