"""Output folder safety: file names from the data, atomic writes, reports swapped in whole.

Private: :mod:`beyondauc.report` writes every report through :class:`ReportFolder`:

* A report folder of ours holds ``.beyondauc-report.json``, the manifest of
  every file we wrote. A folder that is neither empty nor ours is refused:
  nothing of the user's is ever deleted or overwritten.
* A new report is built in a staging folder beside ``out``
  (``.<name>.beyondauc-new-*``) and swapped in with one atomic rename
  (``renameat2(RENAME_EXCHANGE)`` on Linux, else two renames). Files the user
  put into the old report are then moved into the new one, and only the old
  report's own files are deleted.
* A lock file beside ``out`` (``.<name>.beyondauc.lock``, ``flock``, released
  when the process dies) makes a second run into the same folder fail at once.
* ``kill -9`` at any moment leaves ``out`` holding a complete report, the old or
  the new one; the next run finishes what the killed one left beside it
  (deletes its staging folder, moves user files back, restores ``out`` if a
  kill fell between the two renames of the fallback).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import unicodedata
import uuid
import warnings
from pathlib import Path

_MAX_NAME = 80


_HASHED = re.compile(r"-[0-9a-f]{8}$")


def safe_name(name):
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
    if slug == name and slug and not _HASHED.search(slug):  # a name shaped like our output is hashed too
        return slug
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}" if slug else f"model-{digest}"


def _atomic_write(path, data):
    """Write ``data`` (str or bytes) to ``path`` through a temp file and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for sharing
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise



#: The manifest that marks a report folder as ours and lists the files we wrote.
MANIFEST = ".beyondauc-report.json"
_FORMAT = "beyondauc-report"
_LOCK = ".{}.beyondauc.lock"
_NEW = ".{}.beyondauc-new-"
_OLD = ".{}.beyondauc-old-"
# what a report of the runner before the manifest existed holds (recognised by its index)
_LEGACY_TOP = ("index.html", "data.csv.gz", "overview/overview.html", "overview/overview.pdf",
               "overview/overview.ipynb")
_LEGACY_MODEL = ("report.html", "report.pdf", "auc_vs_accuracy.ipynb", "test_auroc.ipynb",
                 "selective_answering.ipynb")


class ReportFolder:
    """The output folder of one report run (see the module docstring).

    Use as a context manager: entering locks ``out``, finishes what a killed
    run left, refuses a foreign folder and creates :attr:`staging`, where the
    run writes everything. :meth:`commit` swaps the staging folder in; leaving
    without a commit deletes it and leaves ``out`` as it was.
    """

    def __init__(self, out):
        self.out = Path(out)
        self.path = Path(os.path.realpath(self.out))  # a symlinked `out`: its target is replaced, not the link
        self.parent = self.path.parent
        self.staging = None
        self.previous = None  # the report being replaced (a folder of ours), or None
        self._fd = None
        self._committed = False

    # -- the lock ---------------------------------------------------------------
    def _lock(self):
        import fcntl

        path = self.parent / _LOCK.format(self.path.name)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise BlockingIOError(f"`out` {str(self.out)!r} is in use by another beyondauc report run "
                                      f"(pid {pid}); wait for it to finish") from None
            try:  # the file may have been unlinked by a run that just finished: lock the current one
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
                self._fd, self._lock_path = fd, path
                return
            os.close(fd)

    def _unlock(self):
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._lock_path)
            os.close(self._fd)
            self._fd = None

    # -- entering -----------------------------------------------------------------
    def __enter__(self):
        if self.path.exists() and not self.path.is_dir():
            raise NotADirectoryError(f"`out` {str(self.out)!r} is a file, not a folder")
        self.parent.mkdir(parents=True, exist_ok=True)
        self._lock()
        try:
            self._recover()
            if self.path.is_dir():
                if _ours(self.path) is None:
                    raise FileExistsError(
                        f"`out` {str(self.out)!r} is not empty and holds no beyondauc report (no {MANIFEST}); "
                        "give a new or empty folder")
                self.previous = self.path
            self.staging = Path(tempfile.mkdtemp(prefix=_NEW.format(self.path.name), dir=self.parent))
            os.chmod(self.staging, 0o755)  # mkdtemp makes it private; a report is for sharing
            _write_manifest(self.staging, None)  # marks it as ours before anything else is in it
        except BaseException:
            self._unlock()
            raise
        return self

    def __exit__(self, *exc):
        try:
            if not self._committed and self.staging is not None and self.staging.exists():
                shutil.rmtree(self.staging, ignore_errors=True)
        finally:
            self._unlock()
        return False

    # -- committing ---------------------------------------------------------------
    def commit(self):
        """Swap the finished staging folder in as ``out``, keeping the user's files."""
        _write_manifest(self.staging, _files(self.staging))
        if not self.path.is_dir():
            os.rename(self.staging, self.path)
            self._committed = True
            return
        ours = _ours(self.path)
        if ours is None:  # a foreign file appeared during the run
            raise FileExistsError(f"`out` {str(self.out)!r} is no longer empty nor a beyondauc report; "
                                  "the new report was not written")
        clash = [rel for rel, taken in _moves(self.path, self.staging, ours) if taken]
        if clash:
            raise FileExistsError(f"`out` {str(self.out)!r} holds {clash[0]!r}, which beyondauc did not write "
                                  "and the new report would replace; move it away")
        old = self.parent / f"{_OLD.format(self.path.name)}{uuid.uuid4().hex[:8]}"
        if _exchange(self.staging, self.path):  # out is the new report at once; the old one is at staging
            self._committed = True
            os.rename(self.staging, old)
        else:
            os.rename(self.path, old)
            os.rename(self.staging, self.path)
            self._committed = True
        _salvage(old, self.path)

    # -- what a killed run left ---------------------------------------------------
    def _recover(self):
        name = self.path.name
        left = [p for p in self.parent.iterdir()
                if p.is_dir() and not p.is_symlink() and p.name.startswith((_NEW.format(name), _OLD.format(name)))]
        complete = []
        for folder in left:
            state = _manifest(folder)
            if state is None:
                continue  # not ours after all: never touched
            if state.get("files") is None:  # a staging folder being built: all of it is ours
                shutil.rmtree(folder, ignore_errors=True)
            else:
                complete.append(folder)
        if complete and not self.path.exists():  # killed between the two renames of the fallback
            complete.sort(key=lambda p: (p.name.startswith(_OLD.format(name)), p.stat().st_mtime))
            os.rename(complete.pop(), self.path)
        for folder in complete:
            _salvage(folder, self.path)


def _manifest(folder):
    """The parsed manifest of a folder of ours, else None."""
    try:
        data = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == _FORMAT else None


def _write_manifest(folder, files):
    from ..utils.version import __version__

    data = {"format": _FORMAT, "version": 1, "beyondauc": __version__,
            "files": None if files is None else sorted(f for f in files if f != MANIFEST)}
    _atomic_write(Path(folder) / MANIFEST, json.dumps(data, indent=1) + "\n")


def _files(folder):
    """Relative POSIX paths of every file (and symlink) under ``folder``."""
    out = []
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        out += [(rel / f).as_posix() for f in files]
        out += [(rel / d).as_posix() for d in dirs if os.path.islink(os.path.join(root, d))]
    return out


def _ours(folder):
    """The files of ours in ``folder`` (a set of relative paths), or None when it is not ours.

    An empty folder is ours with nothing in it; a report written before the
    manifest existed is recognised by its index and its layout.
    """
    folder = Path(folder)
    data = _manifest(folder)
    if data is not None:
        return {*(data.get("files") or ()), MANIFEST}
    entries = list(folder.iterdir())
    if not entries:
        return set()
    try:
        index = (folder / "index.html").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if 'data-beyondauc="' not in index:
        return None
    ours = set(_LEGACY_TOP)
    if (folder / "models").is_dir():
        ours |= {f"models/{m.name}/{f}" for m in (folder / "models").iterdir() for f in _LEGACY_MODEL}
    return ours


def _user_entries(folder, ours):
    """Top-most relative paths under ``folder`` holding nothing of ``ours``: the user's files and folders."""
    ours_dirs = {p for f in ours for p in Path(f).parents if str(p) != "."}
    ours_dirs = {p.as_posix() for p in ours_dirs}
    found = []

    def walk(rel):
        for entry in os.scandir(Path(folder) / rel if rel else folder):
            r = f"{rel}/{entry.name}" if rel else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and r in ours_dirs:
                walk(r)
            elif not (r in ours and not is_dir):
                found.append(r)

    walk("")
    return found


def _moves(old, new, ours):
    """``(rel, taken)`` for the user's entries of ``old`` to move into ``new``; ``taken`` when ``new`` has it.

    A folder of the user's that ``new`` has too is merged: its entries are moved one by one.
    """
    def plan(rel):
        src, dst = Path(old) / rel, Path(new) / rel
        if not os.path.lexists(dst):
            yield rel, False
        elif src.is_dir() and not src.is_symlink() and dst.is_dir() and not dst.is_symlink():
            for entry in os.scandir(src):
                yield from plan(f"{rel}/{entry.name}")
        else:
            yield rel, True

    for rel in _user_entries(old, ours):
        yield from plan(rel)


def _salvage(old, new):
    """Move the user's entries of report folder ``old`` into ``new``, delete old's own files and it."""
    old, new = Path(old), Path(new)
    ours = _ours(old) or set()
    kept = []
    for rel, taken in list(_moves(old, new, ours)):
        dst = new / rel
        try:
            if taken:
                raise FileExistsError(rel)
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.rename(old / rel, dst)
        except OSError:
            kept.append(rel)
    manifest_last = sorted(ours - {MANIFEST}) + [MANIFEST]  # the folder stays recognisable until the end
    for rel in manifest_last:
        path = old / rel
        if os.path.lexists(path) and not (path.is_dir() and not path.is_symlink()):
            with contextlib.suppress(OSError):
                os.unlink(path)
    for root, _, _ in sorted(os.walk(old), key=lambda t: -len(Path(t[0]).parts)):
        with contextlib.suppress(OSError):
            os.rmdir(root)
    if kept:
        warnings.warn(f"files the user put into the old report could not be moved into {str(new)!r} "
                      f"(a file of the same name is there); they are kept in {str(old)!r}: {kept[:3]}", stacklevel=2)


def _exchange(a, b):
    """Swap two paths atomically (Linux ``renameat2``); False when the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))
