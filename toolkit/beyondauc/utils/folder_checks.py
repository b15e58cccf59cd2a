"""What an output folder checks beyond itself: the folders around it, the free space, a failed write (private).

Used by :class:`beyondauc.utils.output.OutputFolder`:

* **One lock for the folder tree.** An output inside a folder that another
  run is writing (its ``.beyondauc.lock`` is held) is refused, and so is an
  output inside a beyondauc output whose manifest lists files in it: the
  ``evaluation/`` folder of a report belongs to the report, and only a report
  run writes it (``beyondauc evaluate --out REPORT/evaluation`` is refused,
  during the report's run and after it). Each run checks the folders above
  its own after it has taken its own lock, and a report run refuses a folder
  holding anything not its own, so two runs never both write one tree. The
  folders this process holds the lock of (:data:`HELD`) are its own run's:
  the report's run saves its evaluation inside its own folder.
* **Space.** Before anything is computed, a file system with less free space
  than the new output is estimated to take (at least the previous output's
  size, since the new one is written beside it) is refused in one line.
* **A failed write** (a full disk, a read-only file system, no permission)
  is said in one line naming the file and what the folder keeps
  (:class:`WriteFailedError`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

__all__: list[str] = []

#: The lock file of an output folder.
LOCK_NAME = ".beyondauc.lock"
#: Errors of writing that leave the previous output in place and are said in one line (with the path).
WRITE_ERRORS = frozenset(
    getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG", "EIO", "EROFS", "EACCES", "EPERM") if hasattr(errno, n)
)
#: Bytes kept free beyond the estimate.
SPACE_MARGIN = 1 << 20
#: The folders (real paths) this process holds the lock of: an output inside one is part of the same run.
HELD: set[str] = set()


class NoSpaceError(OSError):
    """The file system lacks the space the new output needs (said before anything is written)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.errno = errno.ENOSPC  # (set after: with a strerror the message would read "[Errno 28] ...")


class WriteFailedError(OSError):
    """Writing ``path`` failed (a full disk, no permission): one line saying what is kept."""

    def __init__(self, code: int, path: str | os.PathLike, kept: str) -> None:
        super().__init__(f"could not write {str(path)!r} ({os.strerror(code).lower()}); {kept}")
        self.errno, self.path = code, str(path)  # (a filename would change how the message reads)


class OutputKind(Protocol):
    """What the checks read of an output kind (:class:`~beyondauc.utils.output.Kind`): its name and manifest."""

    name: str
    manifest: str


def check_tree(path: Path, out: Path, name: str, kinds: Iterable[OutputKind]) -> None:
    """Refuse the output folder ``path`` (real path; ``out`` as given, ``name`` for messages) inside another's.

    ``kinds`` are the :class:`~beyondauc.utils.output.Kind` of the outputs
    whose manifests are looked at. Stops at a folder of :data:`HELD`.
    """
    kinds = tuple(kinds)
    given = Path(os.path.normpath(out)).parts
    for folder in path.parents:
        if str(folder) in HELD:
            return
        rel = path.relative_to(folder).as_posix()
        depth = len(rel.split("/"))
        shown = str(Path(*given[:-depth])) if len(given) > depth else str(folder)  # as the user wrote it
        lock = folder / LOCK_NAME
        if os.path.lexists(lock):
            check_unlocked(lock, f"{name} is inside {shown!r}, which another beyondauc run")
        for kind in kinds:
            owned = [f for f in _listed(folder, kind) if f == rel or f.startswith(rel + "/")]
            if owned:
                raise FileExistsError(
                    f"{name} belongs to the beyondauc {kind.name} in {shown!r} (its {kind.manifest} lists "
                    f"{owned[0]!r}), whose run writes it; nothing was written: run that {kind.name} again, or give "
                    "a folder outside it"
                )


def _listed(folder, kind):
    """The files the manifest of ``kind`` in ``folder`` lists (none when there is no such manifest)."""
    manifest = folder / kind.manifest
    if not os.path.lexists(manifest):
        return []
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return (kind.files(data) or []) if isinstance(data, dict) else []


def check_unlocked(lock: Path, who: str) -> None:
    """Raise BlockingIOError when the lock file ``lock`` is held (``who`` ... "(pid N) is writing")."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return  # gone meanwhile, or unreadable: the run that held it finished
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise BlockingIOError(
                f"{who} (pid {pid}) is writing; wait for it to finish (nothing was written)"
            ) from None
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def check_space(path: Path, owned: Iterable[str], space: int, name: str, kind: str) -> None:
    """Raise :class:`NoSpaceError` when ``path``'s file system has less free than the new output needs.

    It needs ``space`` bytes (an estimate), and at least as much as the
    previous output (the files ``owned``), plus :data:`SPACE_MARGIN`.
    """
    previous = 0
    for rel in owned:
        with contextlib.suppress(OSError):
            previous += os.lstat(path / rel).st_size
    need = max(int(space), previous)
    free = shutil.disk_usage(path).free
    if need and free < need + SPACE_MARGIN:
        beside = " (it is written beside the previous one before replacing it)" if previous else ""
        raise NoSpaceError(
            f"{name} has {_mb(free)} free and the new {kind} needs about {_mb(need + SPACE_MARGIN)}"
            f"{beside}; nothing was written: free some space or give a folder on another disk"
        )


def _mb(n):
    return f"{n / 2**20:.1f} MB"
