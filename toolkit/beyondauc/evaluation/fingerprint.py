"""The data's fingerprint an evaluation stores: a SHA-256 of the file, or of the benchmark's columns.

A report reuses the previous run's evaluation only when the data's fingerprint
and the parameters are the same (see :func:`data_fingerprint`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.benchmark import Benchmark

__all__ = ["data_fingerprint", "frame_sha256"]


def _file_sha256(path):
    """SHA-256 of a file, or of a directory's files (relative names and bytes, sorted)."""
    h = hashlib.sha256()
    path = Path(path)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        if path.is_dir():
            h.update(f.relative_to(path).as_posix().encode("utf-8") + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def frame_sha256(frame, correct=None):
    """SHA-256 of a table's content: per column its name, dtype and values (and ``correct``, an answers benchmark's).

    Numeric columns are hashed as their bytes and text columns as their
    values joined by a unit separator, so hashing 10^6 rows takes a fraction
    of a second (writing them as CSV first took 23 s at 4 x 10^5 rows).  One
    column at a time, text in chunks of rows: a text column read as Python
    strings costs about 60 bytes a row, so the whole table never is.
    """
    h = hashlib.sha256()
    for c in frame.columns:
        _hash_column(h, str(c), frame[c])
    if correct is not None:
        _hash_column(h, "\0correct", np.asarray(correct))
    return h.hexdigest()


_HASH_ROWS = 1 << 16  # rows of a text column hashed at once


def _hash_column(h, name, values):
    """Add one column to ``h``: its name, the dtype and length of its array, then its bytes or its joined text."""
    if isinstance(values, pd.Series) and _text_dtype(values.dtype):  # reads back as Python objects: by chunks
        h.update(f"{name}\0{np.dtype(object).str}\0{len(values)}\0".encode())
        for start in range(0, len(values), _HASH_ROWS):  # the same bytes as one join of the whole column
            text = "\x1f".join(map(str, values.iloc[start : start + _HASH_ROWS].to_numpy()))
            h.update((("\x1f" if start else "") + text).encode("utf-8", "surrogatepass"))
        return
    values = values.to_numpy() if hasattr(values, "to_numpy") else values
    h.update(f"{name}\0{values.dtype.str}\0{len(values)}\0".encode())
    if values.dtype.kind in "biufcM":
        h.update(np.ascontiguousarray(values).tobytes())
    else:
        h.update("\x1f".join(map(str, values)).encode("utf-8", "surrogatepass"))


def _text_dtype(dtype):
    """Whether a column of ``dtype`` reads back (``to_numpy``) as an array of Python objects: text, object, or
    categories of those."""
    if isinstance(dtype, pd.CategoricalDtype):
        return _text_dtype(dtype.categories.dtype)
    return isinstance(dtype, pd.StringDtype) or dtype == np.dtype(object)


def data_fingerprint(data: str | os.PathLike | Benchmark | pd.DataFrame) -> tuple[str, str]:
    """(source shown to readers, SHA-256) of what :func:`evaluate` reads.

    A path (file or TRUE directory) is hashed byte for byte, ``"demo"`` is the
    embedded demo file, a Benchmark or DataFrame its CSV text.
    """
    from importlib import resources

    if isinstance(data, str) and data == "demo":
        ref = resources.files("beyondauc") / "datasets" / "demo.csv.gz"
        with resources.as_file(ref) as path:
            return "beyondauc demo benchmark", _file_sha256(path)
    if isinstance(data, str) and data == "demo:answers":  # the embedded answers demo (data.open.DEMO_ANSWERS)
        with resources.as_file(resources.files("beyondauc") / "datasets" / "answers.csv.gz") as path:
            return "beyondauc answers demo benchmark", _file_sha256(path)
    if isinstance(data, Benchmark):
        return str(data.source), frame_sha256(data.frame, data.correct)
    if isinstance(data, pd.DataFrame):
        return "DataFrame", frame_sha256(data)
    if isinstance(data, (str, os.PathLike)):
        path = Path(data).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"`data` {str(data)!r} does not exist (give 'demo', a file or a TRUE directory)")
        return str(data), _file_sha256(path)
    raise ValueError(f"`data` must be 'demo', a path, a Benchmark or a DataFrame, got {type(data).__name__}")
