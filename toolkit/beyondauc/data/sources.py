"""The sources a benchmark is read from: one registry, :data:`SOURCES`, a reader per kind of source.

A source (a DataFrame, an LLM harness's logs, a TRUE folder, a folder of tables, a table file) is offered
to the readers in order; the first that recognises it reads it into :class:`Rows`: one table, each row
annotated with where it came from. What happens next is the same for every source
(:func:`beyondauc.data.load.load_benchmark`): the form is recognised from the columns, then the checks
run once. Adding a kind of source means one reader module and one line in :data:`SOURCES`; a new table
file format joins :data:`~beyondauc.data.table_formats.TABLE_FORMATS`, a new harness's logs
:data:`~beyondauc.data.logs.READERS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from .forms import FORMS, recognise_form
from .logs import check_log_options, find_logs, read_found_logs
from .readers import (
    Origin,
    annotate,
    check_misspelled_columns,
    is_true_dir,
    read_tables_dir,
    read_true_dir,
    table_files,
    true_dataset_name,
)
from .table_formats import read_table
from .text_files import check_duplicate_columns

__all__ = ["SOURCES", "Rows", "SourceReader", "SourceRequest", "read_source"]

#: A source as the readers see it: a DataFrame, or a path that exists.
Source: TypeAlias = pd.DataFrame | Path


@dataclass(frozen=True)
class SourceRequest:
    """What a reader may need besides the source: the models asked for, the columns it left out (filled in,
    for the notice), the log readers' options, the source as given (a path's text), and what the reader's
    ``recognise`` found."""

    models: list[str] | None = None
    ignored: dict[str, str] = field(default_factory=dict)
    log_options: Mapping[str, Any] | None = None
    shown: str = ""  # the source as the user gave it, for messages and the Benchmark's source
    found: object = None  # what the reader's recognise found (the log files), so it is not looked for twice


@dataclass(frozen=True)
class Rows:
    """A source read: its rows, where they came from, and the model columns where the reader knows them
    (a TRUE folder); otherwise the columns' form says them."""

    frame: pd.DataFrame
    origin: Origin
    model_columns: list[str] | None = None


@dataclass(frozen=True)
class SourceReader:
    """One kind of source: its name, whether it is this kind, and how it is read.

    ``recognise`` returns something true for its kind (e.g. the log files it found), handed to ``read`` as
    ``request.found``."""

    name: str
    recognise: Callable[[Source], object]
    read: Callable[[Source, SourceRequest], Rows]


def _is_frame(source: Source) -> bool:
    return isinstance(source, pd.DataFrame)


def read_frame(source: Source, request: SourceRequest) -> Rows:
    """A copy of the DataFrame; no 'dataset' column: one dataset named "data"."""
    assert isinstance(source, pd.DataFrame)
    check_duplicate_columns(list(source.columns), "DataFrame")
    check_misspelled_columns(source.columns, "DataFrame")
    frame = source.copy()
    one_dataset = "dataset" not in frame.columns
    if one_dataset:
        frame.insert(0, "dataset", "data")
    return Rows(frame, Origin("DataFrame", "<DataFrame>", one_dataset))


def _found_logs(source: Source) -> list:
    return find_logs(source) if isinstance(source, Path) else []


def read_harness_logs(source: Source, request: SourceRequest) -> Rows:
    """An LLM harness's logs (a log file, or a folder of runs), in the long answers form."""
    assert isinstance(source, Path)
    assert isinstance(request.found, list)  # the (reader, file) pairs recognise found
    frame = read_found_logs(source, request.found, options=request.log_options)
    where = f"{'directory' if source.is_dir() else 'file'} {request.shown!r}"
    return Rows(frame, Origin(where, request.shown, False))


def _is_true_folder(source: Source) -> bool:
    return isinstance(source, Path) and source.is_dir() and is_true_dir(table_files(source))


def read_true_folder(source: Source, request: SourceRequest) -> Rows:
    """A TRUE folder: one CSV per dataset, named after it, one column per model."""
    assert isinstance(source, Path)
    frame, _, model_cols = read_true_dir(source, request.models, request.ignored)
    return Rows(frame, Origin(f"directory {request.shown!r}", request.shown, False), model_cols)


def _is_folder(source: Source) -> bool:
    return isinstance(source, Path) and source.is_dir()


def read_tables_folder(source: Source, request: SourceRequest) -> Rows:
    """The rows of every table file of a folder, concatenated; the files must share a form (a file without
    a ``dataset`` column is the dataset of its stem)."""
    assert isinstance(source, Path)
    origin = Origin(f"directory {request.shown!r}", request.shown, False)
    parts = read_tables_dir(source)
    forms = [(recognise_form(p.columns, f"file {p['_file'].iloc[0]!r}"), p["_file"].iloc[0]) for p in parts]
    other = next(((f, name) for f, name in forms if f.name != forms[0][0].name), None)
    if other is not None:
        raise ValueError(
            f"{origin.where}: file {forms[0][1]!r} is in the {forms[0][0].name} form and file "
            f"{other[1]!r} in the {other[0].name} form; a directory's files are read as one table, so "
            f"they share one form ({FORMS})"
        )
    return Rows(pd.concat(parts, ignore_index=True, sort=False), origin)


def read_table_file(source: Source, request: SourceRequest) -> Rows:
    """The rows of one table file, each annotated with its line; no 'dataset' column: one dataset named
    after the file's stem."""
    assert isinstance(source, Path)
    where = f"file {request.shown!r}"
    frame, line_offset = read_table(source)
    if len(frame) == 0:
        raise ValueError(f"{where} has no rows")
    check_misspelled_columns(frame.columns, where)
    one_dataset = "dataset" not in frame.columns
    frame = annotate(frame, request.shown, line_offset, dataset=true_dataset_name(source) if one_dataset else None)
    return Rows(frame, Origin(where, request.shown, one_dataset))


#: The registered kinds of source, tried in this order: the first that recognises a source reads it.
SOURCES: tuple[SourceReader, ...] = (
    SourceReader("DataFrame", _is_frame, read_frame),
    SourceReader("LLM harness logs", _found_logs, read_harness_logs),
    SourceReader("TRUE folder", _is_true_folder, read_true_folder),
    SourceReader("folder of tables", _is_folder, read_tables_folder),
    SourceReader("table file", lambda source: isinstance(source, Path), read_table_file),
)


def read_source(source: pd.DataFrame | str | os.PathLike, request: SourceRequest | None = None) -> Rows:
    """The rows of ``source``, read by the first reader of :data:`SOURCES` that recognises it.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.data.sources import read_source
    >>> rows = read_source(pd.DataFrame({"label": [0, 1], "m": [0.2, 0.9]}))
    >>> rows.origin.where, list(rows.frame.columns)
    ('DataFrame', ['dataset', 'label', 'm'])
    """
    request = request if request is not None else SourceRequest()
    if not isinstance(source, pd.DataFrame):
        if not Path(source).exists():
            raise ValueError(f"`source` {str(source)!r} does not exist")
        check_log_options(request.log_options)
        request = replace(request, shown=str(source))
        source = Path(source)
    for reader in SOURCES:
        found = reader.recognise(source)
        if found:
            return reader.read(source, replace(request, found=found))
    raise AssertionError("the last reader recognises every path")
