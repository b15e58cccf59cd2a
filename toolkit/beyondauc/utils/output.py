"""Output folder safety: file names from the data, atomic writes, output folders that are ours only.

Private. One mechanism, :class:`OutputFolder`, writes every output folder of
beyondauc: a report (:class:`ReportFolder`, used by :mod:`beyondauc.report`)
and an evaluation (:meth:`beyondauc.Evaluation.save`, ``beyondauc evaluate --out``).

* **Ours by the manifest only.** A folder is beyondauc's only when its manifest
  says so by its kind and schema version: ``.beyondauc-report.json`` for a
  report, ``manifest.json`` of kind ``beyondauc-evaluation`` for an evaluation
  (a report manifest of the previous version, without ``kind``, is recognised
  by its ``format`` and ``version``). A file name alone (``manifest.json``, an
  ``index.html`` copied from a report) never makes a folder ours. A run
  replaces or deletes only the files that manifest lists; every other file is
  kept. A folder that is neither new, empty nor ours, or a file of the user's
  at a path the run will write, is refused when the folder is entered, which
  the callers do before any computation (``planned`` paths).
* **A manifest is untrusted input** (a report folder may have been sent by
  anyone): each path it lists must be relative, without ``..``, and resolve,
  symlinks followed, inside the folder. A manifest that breaks this refuses
  the folder (:class:`UnsafeManifestError`) before anything is touched.
* **Everything stays inside ``out``**, so a writable ``out`` in a read-only
  parent works. The lock is ``out/.beyondauc.lock`` (``flock``, released when
  the process dies: a second run into the folder fails at once). The new
  output is built in ``out/.beyondauc-staging-<random>/``; its state file
  ``.beyondauc-staging.json`` says whether it is still being built.
* **Commit: one atomic write, then a roll forward.** Swapping the whole folder
  in with one rename would need the staging folder beside ``out``, that is a
  writable parent; so the commit point is instead the atomic rewrite of the
  state file, listing the files to move in and the old output's files to
  delete. Then each new file is renamed over its old version (deepest first,
  so a report's ``index.html`` comes last), the manifest is renamed in (from
  then on it lists the new files, all present), the old output's files the new
  one no longer has are deleted, and the staging folder is removed; nothing is
  left beside or inside ``out`` after a success.
* **One lock for the folder tree, the space, a failed write**: an output
  inside a folder another run is writing, or inside an output whose manifest
  lists files in it (a report's ``evaluation/``), is refused; so is a file
  system without the space the output needs; a write that fails says its file
  and what ``out`` keeps (:mod:`beyondauc.utils.folder_checks`).
* **Interrupted** (:mod:`beyondauc.utils.interrupts`): leaving on a signal
  removes the staging folder and the lock like any failure, and notes on the
  exception what ``out`` keeps; the commit and its renames are not cut by a
  signal.
* **kill -9 at any moment.** Before the commit point ``out`` is untouched and
  the next run deletes the staging folder. After it, the next run into the
  folder (report or evaluation) finishes the roll forward first. At every
  moment each file that ``out``'s manifest lists is present (old files are
  replaced by renames, deleted only once the new manifest is in), so ``out``
  always holds a complete output; only within the renames of the roll forward
  (no computation, no writing) can it hold some new files beside old ones,
  until the loop ends or the next run finishes it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path, PureWindowsPath

from .files import HASHED, atomic_write, safe_name  # noqa: F401 - public here too
from .folder_checks import HELD, LOCK_NAME, WRITE_ERRORS, NoSpaceError, WriteFailedError, check_space, check_tree
from .interrupts import Interrupted, deferred, stopped_by

#: The manifest that marks a report folder as ours and lists the files we wrote.
MANIFEST = ".beyondauc-report.json"
#: The manifest of an evaluation folder (:meth:`beyondauc.Evaluation.save`): it lists the tables' files.
EVALUATION_MANIFEST = "manifest.json"
_REPORT_KIND = "beyondauc-report"
_REPORT_SCHEMA = 1
_EVALUATION_KIND = "beyondauc-evaluation"
#: Version of the saved evaluation layout (manifest + Parquet tables); bumped on any incompatible change.
EVALUATION_SCHEMA_VERSION = 1
_LOCK = LOCK_NAME
_STAGING = ".beyondauc-staging-"
_STATE = ".beyondauc-staging.json"
_STATE_KIND = "beyondauc-staging"


class UnsafeManifestError(ValueError):
    """A manifest lists a path outside its folder: the folder is refused and nothing in it is touched."""


def _report_files(data):
    """The files a report manifest lists, or None when ``data`` is not one.

    This version writes ``kind`` and ``schema_version``; the previous one wrote
    ``format`` and ``version`` only (both are still written, for it).
    """
    if "kind" in data:
        if data["kind"] != _REPORT_KIND or data.get("schema_version") != _REPORT_SCHEMA:
            return None
    elif data.get("format") != _REPORT_KIND or data.get("version") != 1:
        return None
    files = data.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return files


def _evaluation_files(data):
    """The files an evaluation manifest lists (its tables'), or None when ``data`` is not one."""
    if data.get("kind") != _EVALUATION_KIND or data.get("schema_version") != EVALUATION_SCHEMA_VERSION:
        return None
    tables = data.get("tables")
    if not isinstance(tables, dict) or not all(
        isinstance(t, dict) and isinstance(t.get("file"), str) for t in tables.values()
    ):
        return None
    return [t["file"] for t in tables.values()]


@dataclasses.dataclass(frozen=True)
class Kind:
    """What an output folder holds: its name in messages, its manifest, and how to read what the manifest lists."""

    name: str
    tag: str  # the manifest's `kind`
    manifest: str
    #: parsed manifest -> the files it lists (relative paths), None when it is not this kind's
    files: Callable[[dict], list[str] | None]


REPORT = Kind("report", _REPORT_KIND, MANIFEST, _report_files)
EVALUATION = Kind("evaluation", _EVALUATION_KIND, EVALUATION_MANIFEST, _evaluation_files)


def outside(root: str, rel: object) -> str | None:
    """Why the manifest entry ``rel`` does not name a path inside the folder ``root``, or None when it does.

    ``root`` is a real path (symlinks resolved). The entry must be relative,
    without ``..`` or empty parts, and resolve, symlinks followed, inside ``root``.
    """
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        return "is not a file name"
    if rel.startswith(("/", "\\")) or os.path.isabs(rel) or PureWindowsPath(rel).drive:
        return "is an absolute path"
    parts = rel.replace("\\", "/").split("/")
    if ".." in parts:
        return "leads out of the folder through '..'"
    if "\\" in rel or any(part in ("", ".") for part in parts):
        return "is not a plain relative path"
    real = os.path.realpath(os.path.join(root, rel))
    if real == root or os.path.commonpath([root, real]) != root:
        return "resolves outside the folder through a symlink"
    return None


def _read_json(path):
    """The parsed JSON object in ``path``, else None (missing, unreadable, not an object)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class OutputFolder:
    """The output folder of one run, of a given :class:`Kind` (see the module docstring).

    Use as a context manager. Entering refuses a folder that is not ours (or
    whose manifest names a path outside it), or a file of the user's at one of
    the ``planned`` paths, before anything is written; then it creates ``out``
    if needed, locks it, finishes what a killed run left and creates
    :attr:`staging`, where the run writes everything, its manifest included.
    :meth:`commit` moves the staging folder's files in; leaving without a
    commit deletes it and leaves ``out`` as it was.

    Parameters
    ----------
    out : str or path
        The output folder; a symlink to a folder writes into its target.
    kind : Kind
        :data:`REPORT` or :data:`EVALUATION`.
    planned : iterable of str, optional
        Relative paths the run will (or may) write, checked on entering.
    label : str, default="`out`"
        How messages name the folder (the argument's name).
    space : int, default=0
        Bytes the new output is estimated to take; entering refuses a file
        system with less free (or less than the previous output's size).
    """

    def __init__(
        self, out: str | os.PathLike, kind: Kind, *, planned: Iterable[str] = (), label: str = "`out`", space: int = 0
    ) -> None:
        self.space = int(space)
        self.out = Path(out)
        self.path = Path(os.path.realpath(self.out))
        self.kind = kind
        self.planned = tuple(planned)
        self.label = label
        self.staging = None
        self.owned = set()  # the files of ours in `out`, from its manifest
        self._fd = None
        self._created = False
        self._committed = False

    def _name(self):
        return f"{self.label} {str(self.out)!r}"

    # -- ownership ------------------------------------------------------------------
    def _read_owned(self, *, strict):
        """The files of ours in ``out`` (relative paths, the manifest's own included); empty when new or empty.

        Raises FileExistsError for a folder that is not ours, UnsafeManifestError
        for a manifest naming a path outside. Not ``strict``: a folder a killed
        commit left without its manifest yet passes (the roll forward completes it).
        """
        kind, path = self.kind, self.path
        if not path.is_dir():
            return set()
        manifest = path / kind.manifest
        if os.path.lexists(manifest):
            data = _read_json(manifest)
            files = kind.files(data) if data is not None else None
            if files is None:
                raise FileExistsError(
                    f"{self._name()} holds a {kind.manifest} that is not a beyondauc {kind.name} manifest (no kind "
                    f"{kind.tag!r} of a known schema version), so the folder is not beyondauc's to replace; nothing "
                    "was written: give a new or empty folder"
                )
            self._check_listed([kind.manifest, *files], kind.manifest)
            return {kind.manifest, *files}
        if not self._entries() or (not strict and self._pending()):
            return set()
        raise FileExistsError(
            f"{self._name()} is not empty and is not a beyondauc {kind.name} (no {kind.manifest}); "
            "nothing was written: give a new or empty folder"
        )

    def _check_listed(self, files, where):
        root = str(self.path)
        for rel in files:
            reason = outside(root, rel)
            if reason:
                raise UnsafeManifestError(
                    f"{self._name()} is refused: its {where} lists {rel!r}, which {reason}; nothing was deleted. "
                    "A manifest may only name files inside its folder: give a new or empty folder"
                )

    def _entries(self):
        """What ``out`` holds but the lock and the staging folders: the folder is empty without them."""
        return [e for e in os.listdir(self.path) if e != _LOCK and not e.startswith(_STAGING)]

    def _stagings(self):
        found = []
        for entry in os.scandir(self.path):
            if entry.name.startswith(_STAGING) and entry.is_dir(follow_symlinks=False):
                found.append(Path(entry.path))
        return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))

    def _state(self, staging):
        """The validated state of a staging folder, else None (not ours: never touched)."""
        state = _read_json(staging / _STATE)
        if state is None or state.get("kind") != _STATE_KIND or not isinstance(state.get("complete"), bool):
            return None
        if not state["complete"]:
            return state
        manifest, files, remove = state.get("manifest"), state.get("files"), state.get("remove")
        if not (isinstance(manifest, str) and isinstance(files, list) and isinstance(remove, list)):
            return None
        self._check_listed([manifest, *files, *remove], f"{staging.name}/{_STATE}")
        return state

    def _pending(self):
        """Whether a killed run left a committed staging folder (its files not all moved in yet)."""
        return any((s := self._state(p)) is not None and s["complete"] for p in self._stagings())

    # -- conflicts ------------------------------------------------------------------
    def _conflict(self, rel):
        """The path in ``out`` that keeps the run from writing ``rel``, or None."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            path = self.path / folder
            if not os.path.lexists(path):
                return None
            if path.is_symlink() or not path.is_dir():  # written through: never; replaced by a folder: not ours
                return folder
        path = self.path / rel
        if os.path.lexists(path) and (rel not in self.owned or (path.is_dir() and not path.is_symlink())):
            return rel
        return None

    def check(self, paths: Iterable[str]) -> None:
        """Refuse (FileExistsError) when a file the run writes is at a path in ``out`` that is not ours."""
        for rel in sorted(paths):
            clash = self._conflict(rel)
            if clash is not None:
                raise FileExistsError(
                    f"{self._name()} holds {clash!r}, which beyondauc did not write and the new "
                    f"{self.kind.name} would replace; move it away (nothing was written)"
                )

    # -- the lock -------------------------------------------------------------------
    def _not_writable(self, exc, what="is not writable"):
        return PermissionError(
            f"{self._name()} {what} ({(exc.strerror or 'permission denied').lower()}); choose a folder you can write to"
        )

    def _lock(self):
        import fcntl

        path = self.path / _LOCK
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    raise self._not_writable(exc) from None
                raise
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise BlockingIOError(
                    f"{self._name()} is in use by another beyondauc {self.kind.name} run "
                    f"(pid {pid}); wait for it to finish"
                ) from None
            try:  # the file may have been unlinked by a run that just finished: lock the current one
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
                self._fd = fd
                HELD.add(str(self.path))
                return
            os.close(fd)

    def _unlock(self):
        if self._fd is not None:
            HELD.discard(str(self.path))
            with contextlib.suppress(OSError):
                os.unlink(self.path / _LOCK)
            os.close(self._fd)
            self._fd = None

    # -- entering and leaving -----------------------------------------------------------
    def __enter__(self) -> OutputFolder:
        if os.path.lexists(self.path) and not self.path.is_dir():
            raise NotADirectoryError(f"{self._name()} is a file, not a folder")
        self.owned = self._read_owned(strict=False)  # a folder not ours is refused before anything is written
        self.check(self.planned)
        self._check_tree()
        self._created = not self.path.exists()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise self._not_writable(exc, "cannot be created") from None
            raise
        try:
            self._lock()
            self._check_tree()  # again, under the lock: a run that entered an enclosing folder meanwhile is seen
            self._recover()
            self.owned = self._read_owned(strict=True)
            self.check(self.planned)
            self._check_space()
            self.staging = Path(tempfile.mkdtemp(prefix=_STAGING, dir=self.path))
            os.chmod(self.staging, 0o755)  # mkdtemp makes it private; an output is for sharing
            atomic_write(self.staging / _STATE, json.dumps({"kind": _STATE_KIND, "complete": False}) + "\n")
        except BaseException as exc:
            self._leave()
            self._said(exc)
            raise
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> bool:
        self._leave()
        stopped = stopped_by(exc)
        if stopped is not None and stopped is not exc:  # a signal's exception, turned into another on its way
            self._said(stopped)
            raise stopped from exc
        self._said(exc)
        return False

    def _said(self, exc):
        """Note on an interrupt what ``out`` keeps; say a failed write in one line, with its path (raised)."""
        if isinstance(exc, Interrupted):
            exc.note(self.out, self.kind.name, previous=bool(self.owned), committed=self._committed)
        elif isinstance(exc, OSError) and exc.errno in WRITE_ERRORS and not isinstance(exc, NoSpaceError):
            failed = exc.filename if exc.filename is not None else getattr(exc, "path", None)
            target = self._ours(failed) if failed is not None else self.out
            if target is not None:
                raise WriteFailedError(exc.errno, target, self._kept()) from None

    def _ours(self, filename):
        """Where ``filename`` (a path in the staging folder or in ``out``) goes in ``out``, or None if elsewhere."""
        real = os.path.realpath(filename)
        for root in filter(None, (self.staging, self.path)):
            root = os.path.realpath(root)
            if real == root or real.startswith(root + os.sep):
                return self.out / os.path.relpath(real, root)
        return None

    def _kept(self):
        """What ``out`` holds after a failed or stopped run, as said to the user."""
        if self._committed:
            return f"the new {self.kind.name} is in {self._name()}; the next run into it finishes moving it in"
        if self.owned:
            return f"the previous {self.kind.name} in {self._name()} is unchanged"
        return f"nothing was left in {self._name()}"

    # -- the folder tree and the space ----------------------------------------------------
    def _check_tree(self):
        """Refuse an output inside a folder another run is writing, or inside an output that lists it."""
        check_tree(self.path, self.out, self._name(), (REPORT, EVALUATION))

    def _check_space(self):
        """Refuse before any computation when the file system lacks the space the new output needs."""
        check_space(self.path, self.owned, self.space, self._name(), self.kind.name)

    def _leave(self):
        try:
            if not self._committed and self.staging is not None and self.staging.exists():
                shutil.rmtree(self.staging, ignore_errors=True)
        finally:
            self._unlock()
            if self._created and not self._committed:
                with contextlib.suppress(OSError):
                    self.path.rmdir()  # only when empty: a folder this run made for nothing

    # -- committing -------------------------------------------------------------------
    def commit(self) -> None:
        """Move the finished staging folder's files into ``out`` (see the module docstring).

        The staging folder must hold the kind's manifest, listing every other
        file in it. A file of the user's that appeared during the run at a path
        the output writes raises FileExistsError, ``out`` untouched.
        """
        staging, manifest = self.staging, self.kind.manifest
        files = sorted(_files(staging))
        data = _read_json(staging / manifest)
        listed = self.kind.files(data) if data is not None else None
        if listed is None or manifest not in files:
            raise RuntimeError(f"the new {self.kind.name} holds no valid {manifest}")
        unlisted = set(files) - set(listed) - {manifest}
        if unlisted:
            raise RuntimeError(f"the new {self.kind.name}'s {manifest} does not list {sorted(unlisted)[:3]}")
        self.owned = self._read_owned(strict=True)  # `out` may have changed during the run
        self.check(files)
        state = {
            "kind": _STATE_KIND,
            "complete": True,
            "manifest": manifest,
            "files": files,
            "remove": sorted(self.owned - set(files)),
        }
        with deferred():  # a signal waits for the renames (no computation): the new output is then complete
            atomic_write(staging / _STATE, json.dumps(state, indent=1) + "\n")  # the commit point
            self._committed = True
            self._roll_forward(staging, state)

    # -- the roll forward, and what a killed run left -------------------------------------
    def _roll_forward(self, staging, state):
        manifest = state["manifest"]
        files = sorted((f for f in state["files"] if f != manifest), key=lambda f: (-f.count("/"), f))
        for rel in [*files, manifest]:  # the manifest last: it then lists only files that are in place
            src = staging / rel
            if not os.path.lexists(src):  # moved before a kill
                continue
            self._make_parents(rel)
            os.replace(src, self.path / rel)
        for rel in state["remove"]:
            path = self.path / rel
            if os.path.lexists(path) and not (path.is_dir() and not path.is_symlink()):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            parent = Path(rel).parent
            while str(parent) != ".":  # the folders of ours it leaves empty (a model no longer in the run)
                try:
                    os.rmdir(self.path / parent)
                except OSError:
                    break
                parent = parent.parent
        shutil.rmtree(staging, ignore_errors=True)

    def _make_parents(self, rel):
        folder = self.path
        for part in Path(rel).parts[:-1]:
            folder = folder / part
            if folder.is_symlink() or (os.path.lexists(folder) and not folder.is_dir()):
                raise FileExistsError(
                    f"{self._name()} holds {folder.relative_to(self.path).as_posix()!r}, which "
                    f"beyondauc did not write and the new {self.kind.name} needs as its folder; "
                    "move it away and run again"
                )
            if not folder.exists():
                folder.mkdir()

    def _recover(self):
        """Finish what killed runs left in ``out``: delete a staging folder being built, finish a committed one."""
        for staging in self._stagings():
            state = self._state(staging)
            if state is None:
                with contextlib.suppress(OSError):
                    staging.rmdir()  # empty: killed before its state was written; else not ours, never touched
            elif not state["complete"]:
                shutil.rmtree(staging, ignore_errors=True)
            else:
                self._roll_forward(staging, state)


class ReportFolder(OutputFolder):
    """The output folder of one report run: an :class:`OutputFolder` of kind :data:`REPORT`.

    Its :meth:`commit` writes ``.beyondauc-report.json``, listing every file of
    the staging folder, first.
    """

    def __init__(self, out: str | os.PathLike, *, planned: Iterable[str] = (), space: int = 0) -> None:
        super().__init__(out, REPORT, planned=planned, space=space)

    def commit(self) -> None:
        _write_manifest(self.staging, _files(self.staging))
        super().commit()


def _write_manifest(folder, files):
    """Write the report manifest listing ``files`` (``format`` and ``version`` are for the previous version)."""
    from .version import __version__

    data = {
        "kind": _REPORT_KIND,
        "schema_version": _REPORT_SCHEMA,
        "format": _REPORT_KIND,
        "version": 1,
        "beyondauc": __version__,
        "files": sorted(f for f in files if f != MANIFEST),
    }
    atomic_write(Path(folder) / MANIFEST, json.dumps(data, indent=1) + "\n")


def _files(folder):
    """Relative POSIX paths of every file (and symlink) under ``folder``, but a staging folder's state file."""
    out = []
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        out += [(rel / f).as_posix() for f in files if not (rel == Path(".") and f == _STATE)]
        out += [(rel / d).as_posix() for d in dirs if os.path.islink(os.path.join(root, d))]
    return out
