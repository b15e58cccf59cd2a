"""The table files a benchmark is read from: one registry, :data:`TABLE_FORMATS`, a reader per format.

A file's format is its name's ending (``.csv.gz``, ``.parquet``, ``.jsonl`` ...); :func:`read_table`
reads it with the format's reader into ``(frame, line)``: the rows as written, and what locates a row
in messages (the line of the first data row, or each row's line). Adding a table format means one
reader function and one line in :data:`TABLE_FORMATS`; the folder reader and the messages follow.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils.formatting import quoted_name
from .text_files import (
    GZIP_ERRORS,
    GZIP_MAGIC,
    READS,
    check_delimiter,
    check_duplicate_columns,
    csv_header,
    gzip_fault,
    parser_error,
    sniff,
    undecodable,
)

__all__ = ["TABLE_FORMATS", "TableFormat", "read_table", "table_format"]

#: Columns whose values are names: read as the text in the file ("None", "NA", "01" stay names).
NAME_COLUMNS = ("dataset", "domain")


@dataclass(frozen=True)
class TableFormat:
    """One table format: its name, the file name endings it is read from, and its reader.

    ``read(path)`` returns ``(frame, line)``: ``line`` is the line of the first data row (an int) or each
    row's line (an array), for messages. ``in_folders`` says whether a folder's files of this format are
    data (a ``.txt`` beside the tables is a note, not a table).
    """

    name: str
    suffixes: tuple[str, ...]
    read: Callable[[Path], tuple[pd.DataFrame, int | np.ndarray]]
    in_folders: bool = True


def read_parquet(path: Path) -> tuple[pd.DataFrame, int]:
    """A Parquet file's rows (its magic checked first: a gzipped or renamed file is named as such)."""
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic != b"PAR1":
        text = " (its bytes are gzip-compressed)" if magic[:2] == GZIP_MAGIC else ""
        raise ValueError(f"file {str(path)!r} is not a Parquet file{text}: it does not start with 'PAR1'. {READS}")
    try:
        frame = pd.read_parquet(path)
    except ImportError as exc:
        raise ValueError(f"reading {str(path)!r} needs pyarrow: pip install 'beyondauc[parquet]' ({exc})") from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"file {str(path)!r} cannot be read as Parquet: {first}") from None
    check_duplicate_columns(list(frame.columns), f"file {str(path)!r}")
    return frame, 0


def read_delimited(path: Path) -> tuple[pd.DataFrame, int]:
    """A CSV or TSV file's rows (gzipped or not), names read as written; the header is line 1."""
    sep = "\t" if path.name.lower().endswith((".tsv", ".tsv.gz")) else ","
    where = f"file {str(path)!r}"
    read = {"sep": sep, "compression": sniff(path), "encoding": "utf-8", "low_memory": False}
    try:
        header = csv_header(path, sep)
        check_delimiter(header, sep, where)
        if sep == ",":
            check_duplicate_columns(header, where)
        frame = pd.read_csv(path, **read)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{where} is empty") from None
    except UnicodeDecodeError:
        raise undecodable(path, where) from None
    except (pd.errors.ParserError, csv.Error) as exc:
        raise parser_error(path, sep, exc, where) from None
    except GZIP_ERRORS as exc:
        raise gzip_fault(path, exc, where) from None
    names = [c for c in NAME_COLUMNS if c in frame.columns and c in header]
    if names:  # again, as written: pandas' NA markers ("None", "NA", "nan") and numbers ("01") are names here
        text = pd.read_csv(path, usecols=names, dtype=str, keep_default_na=False, na_values=[""], **read)
        if len(text) == len(frame):
            for c in names:
                frame[c] = text[c].to_numpy(dtype=object)
    return frame, 2  # row numbers in messages are file line numbers (header = line 1)


def read_jsonl(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """(frame, each row's line) of a JSON Lines file: one JSON object per line, blank lines skipped."""
    where = f"file {str(path)!r}"
    gz = sniff(path) == "gzip"
    try:
        with (gzip.open if gz else open)(path, "rb") as fh:
            data = fh.read()
    except GZIP_ERRORS as exc:
        raise gzip_fault(path, exc, where) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise undecodable(path, where) from None
    lines = text.split("\n")  # not splitlines(): a JSON string may hold U+2028, which it would split on
    numbers = np.flatnonzero([bool(line.strip()) for line in lines]) + 1
    if not len(numbers):
        raise ValueError(f"{where} is empty")
    try:  # one parse of all lines: the values in order, each line one
        records = json.loads("[" + ",".join(lines[i - 1] for i in numbers) + "]")
    except json.JSONDecodeError:
        records = None
    if records is None or len(records) != len(numbers) or not all(isinstance(r, dict) for r in records):
        raise _jsonl_error(lines, numbers, where)
    frame = pd.DataFrame.from_records(records)
    return frame, numbers.astype(np.int64)


def _jsonl_error(lines, numbers, where):
    """The one-line error of the first line of a JSON Lines file that is not one JSON object."""
    for n in numbers:
        try:
            value = json.loads(lines[n - 1])
        except json.JSONDecodeError as exc:
            text = lines[n - 1].strip()
            several = " (one JSON object per line)" if exc.msg == "Extra data" else ""
            return ValueError(
                f"{where}, line {n}: not valid JSON{several}: {exc.msg} at column {exc.colno}: {quoted_name(text)}"
            )
        if not isinstance(value, dict):
            return ValueError(
                f"{where}, line {n}: a JSON Lines row must be an object "
                f'{{"column": value, ...}}, got {type(value).__name__} {quoted_name(lines[n - 1].strip())}'
            )
    return ValueError(f"{where} cannot be read as JSON Lines")


#: The registered table formats, by the endings of their files' names.
TABLE_FORMATS: tuple[TableFormat, ...] = (
    TableFormat("CSV", (".csv", ".csv.gz"), read_delimited),
    TableFormat("TSV", (".tsv", ".tsv.gz"), read_delimited),
    TableFormat("text (comma-separated)", (".txt", ".txt.gz"), read_delimited, in_folders=False),
    TableFormat("Parquet", (".parquet", ".pq"), read_parquet),
    TableFormat("JSON Lines", (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz"), read_jsonl),
)


def table_format(path: str | Path) -> TableFormat | None:
    """The format of the file ``path`` by its name's ending, or None.

    Examples
    --------
    >>> from beyondauc.data.table_formats import table_format
    >>> table_format("runs/scores.csv.gz").name, table_format("a.ndjson").name, table_format("notes.md")
    ('CSV', 'JSON Lines', None)
    """
    name = Path(path).name.lower()
    return next((f for f in TABLE_FORMATS if name.endswith(f.suffixes)), None)


def folder_suffixes() -> tuple[str, ...]:
    """The endings of the files of a folder that hold tables (every format's but notes')."""
    return tuple(s for f in TABLE_FORMATS if f.in_folders for s in f.suffixes)


def read_table(path: str | Path) -> tuple[pd.DataFrame, int | np.ndarray]:
    """The rows of the table file ``path`` and where they start, read by its format's reader."""
    path = Path(path)
    fmt = table_format(path)
    if fmt is None:
        json_hint = (
            "; a .json file is read as JSON Lines when named .jsonl (one object per line)"
            if path.name.lower().endswith((".json", ".json.gz"))
            else ""
        )
        raise ValueError(
            f"`source` {str(path)!r}: expected a directory, a .csv(.gz) or a .parquet file, or JSON Lines "
            f"(.jsonl, .jsonl.gz, .ndjson){json_hint}"
        )
    return fmt.read(path)
