"""File names made from the data, and atomic writes: the two steps every writer of beyondauc takes.

:func:`safe_name` turns a model or dataset name into a file name that cannot leave its folder;
:func:`atomic_write` writes a file through a temporary file and a rename, so a reader never sees
half of it. The output folders built on them are in :mod:`beyondauc.utils.output`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path

__all__ = ["HASHED", "atomic_write", "safe_name"]

_MAX_NAME = 80


HASHED = re.compile(r"-[0-9a-f]{8}$")


def safe_name(name: str) -> str:
    """Return a file name for a model or dataset name that cannot leave its folder.

    Letters (any script), digits, ``-``, ``_`` and ``.`` are kept; every
    other run of characters becomes ``_``; leading dots are dropped. When the
    result differs from ``name`` (or ``name`` itself ends like such a suffix),
    8 hex digits of its SHA-1 are appended, so two names never share a file
    (``a/b``, ``a_b`` and ``a_b-3ec69c85`` stay apart).

    Examples
    --------
    >>> from beyondauc.report import safe_name
    >>> safe_name("svm")
    'svm'
    >>> safe_name("../x")
    'x-72e4d01d'
    >>> safe_name("modèle 1")
    'modèle_1-9f6f6f25'
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a str, got {type(name).__name__}")
    text = unicodedata.normalize("NFC", name)
    slug = re.sub(r"[^\w.-]+", "_", text, flags=re.UNICODE).lstrip("._")[:_MAX_NAME]
    while len(slug.encode("utf-8")) > 2 * _MAX_NAME:  # file names are limited in bytes, not letters
        slug = slug[:-1]
    slug = slug.rstrip(".")
    if slug == name and slug and not HASHED.search(slug):  # a name shaped like our output is hashed too
        return slug
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}" if slug else f"model-{digest}"


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (str or bytes) to ``path`` through a temp file and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for sharing
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk fails write(): name the file
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise
