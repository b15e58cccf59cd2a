"""The reader registry of the LLM harnesses' evaluation logs, recognised from the files themselves.

Each reader is a module with ``recognise(path) -> bool`` and ``read(path, *, options) -> DataFrame``
returning the long answers form (``dataset``, ``model``, ``id``, ``confidence``, ``correct``, and
``epoch`` where an item was sampled several times).  Adding a format is one module and one line of
:data:`READERS`.  A path is a log file, or a folder searched (sorted, hidden entries skipped) for the
files a reader recognises: a folder of runs, one model per log or run folder, the dataset the task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from ..table_formats import folder_suffixes
from . import helm, inspect_ai, lm_eval
from .common import LOG_OPTIONS

__all__ = [
    "LOG_OPTIONS",
    "READERS",
    "LogReader",
    "check_log_options",
    "find_logs",
    "llm_demo",
    "read_found_logs",
    "read_logs",
]


@dataclass(frozen=True)
class LogReader:
    """One log format: its name, how its files are recognised, how one is read."""

    name: str
    recognise: Callable[[Path], bool]
    read: Callable[..., pd.DataFrame]


#: The registered log formats, tried in this order on each file.
READERS: tuple[LogReader, ...] = (
    LogReader("lm-evaluation-harness", lm_eval.recognise, lm_eval.read),
    LogReader("Inspect AI", inspect_ai.recognise, inspect_ai.read),
    LogReader("HELM", helm.recognise, helm.read),
)

#: Folders never searched: the harnesses' caches and version control.
_SKIPPED = ("__pycache__", "node_modules")


def find_logs(path: str | Path) -> list[tuple[LogReader, Path]]:
    """(reader, file) of every log at ``path``: the file itself, or the files of a folder, sorted.

    Parameters
    ----------
    path : str or path
        A log file, or a folder searched for logs (hidden entries left out).

    Returns
    -------
    list of (LogReader, pathlib.Path)
        Each log file with the reader of :data:`READERS` that recognises it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "per_instance_stats.json").write_text("[]")
    >>> [(reader.name, file.name) for reader, file in find_logs(folder)]
    [('HELM', 'per_instance_stats.json')]
    """
    path = Path(path)
    files = [path] if path.is_file() else sorted(_files(path)) if path.is_dir() else []
    found = []
    for file in files:
        reader = next((r for r in READERS if r.recognise(file)), None)
        if reader is not None:
            found.append((reader, file))
    return found


def _files(folder: Path) -> list[Path]:
    """Every file under ``folder``, hidden ones and those of hidden or cache folders left out."""
    out = []
    for p in folder.rglob("*"):
        parts = p.relative_to(folder).parts
        if any(part.startswith(".") or part in _SKIPPED for part in parts):
            continue
        if p.is_file():
            out.append(p)
    return out


def _check_no_tables(path: Path, logs: list[tuple[LogReader, Path]]) -> None:
    """Refuse a directory holding both logs and table files (of :data:`~beyondauc.data.table_formats.TABLE_FORMATS`):
    which of them is the benchmark is not guessed."""
    if not path.is_dir():
        return
    found = {file for _, file in logs}
    table = next(
        (f for f in sorted(_files(path)) if f.name.lower().endswith(folder_suffixes()) and f not in found), None
    )
    if table is not None:
        reader, log = logs[0]
        raise ValueError(
            f"directory {str(path)!r} holds {reader.name} logs ({str(log.relative_to(path))!r}) and "
            f"table files ({str(table.relative_to(path))!r}); a directory is read as logs or as tables: "
            "give each its own"
        )


def check_log_options(options: Mapping[str, Any] | None) -> None:
    """Refuse, in one line, an option no log reader takes (whatever the source turns out to be)."""
    unknown = [k for k in (options or {}) if k not in LOG_OPTIONS]
    if unknown:
        raise ValueError(f"unknown log option(s) {unknown}; the log options are {list(LOG_OPTIONS)}")


def read_logs(path: str | Path, *, options: Mapping[str, Any] | None = None) -> pd.DataFrame | None:
    """The long answers form of every log at ``path``, or None when ``path`` holds no log a reader recognises.

    Parameters
    ----------
    path : str or path
        A log file, or a folder of runs (one model per log or run folder).
    options : mapping, optional
        The readers' options (``LOG_OPTIONS``): ``correct_metric``, ``scorer``,
        ``confidence_field``; unknown names are refused.

    Returns
    -------
    pandas.DataFrame or None
        The long answers form: ``dataset`` (the task), ``model``, ``id``,
        ``confidence``, ``correct`` (in [0, 1]), ``epoch`` where items were
        sampled several times; None when no reader recognises a file.

    Raises
    ------
    ValueError
        In one line naming the file (and its line, member or sample): a log
        without a derivable confidence, a malformed or hostile log, or a
        directory of logs and table files together.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (run / "run_spec.json").write_text(json.dumps({"name": "boolq:model=m", "adapter_spec": {"model": "m"}}))
    >>> stat = lambda name, v: {"name": {"name": name}, "count": 1, "mean": v}
    >>> rows = [{"instance_id": f"id{i}", "train_trial_index": 0,
    ...          "stats": [stat("exact_match", i % 2), stat("max_prob", 0.5 + i / 10)]} for i in range(3)]
    >>> _ = (run / "per_instance_stats.json").write_text(json.dumps(rows))
    >>> read_logs(run)[["dataset", "model", "id", "confidence", "correct"]]
      dataset model   id  confidence  correct
    0   boolq     m  id0         0.5      0.0
    1   boolq     m  id1         0.6      1.0
    2   boolq     m  id2         0.7      0.0
    >>> read_logs(run, options={"scorer": "match", "color": "red"})
    Traceback (most recent call last):
    ...
    ValueError: unknown log option(s) ['color']; the log options are ['correct_metric', 'scorer', 'confidence_field']
    """
    check_log_options(options)
    logs = find_logs(path)
    return read_found_logs(path, logs, options=options) if logs else None


def read_found_logs(
    path: str | Path, logs: list[tuple[LogReader, Path]], *, options: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """The long answers form of the logs :func:`find_logs` found at ``path`` (a folder holding table files
    beside them is refused), without searching ``path`` again."""
    _check_no_tables(Path(path), logs)
    frames = [reader.read(file, options=options) for reader, file in logs]
    return pd.concat(frames, ignore_index=True, sort=False)


def llm_demo() -> Path:
    """The folder of the embedded LLM demo: lm-evaluation-harness logs of three models on two tasks.

    ``scripts/make_llm_demo.py`` writes it (simulated models, the harness's file layout and fields);
    ``beyondauc demo --kind llm`` reports on it.

    Returns
    -------
    pathlib.Path
        The folder, one subfolder per model.

    Examples
    --------
    >>> sorted(p.name for p in llm_demo().iterdir() if p.is_dir())
    ['llama-mini', 'phi-tiny', 'qwen-small']
    """
    return Path(str(resources.files("beyondauc") / "datasets" / "llm"))
