"""Runs made once per test session and read by every test file that needs them, even under pytest-xdist.

A real ``beyondauc demo`` takes a minute of two cores; several test files only read such a report (its
pages, its evaluation, what it printed). :func:`shared_run` makes a run once per session: the first
caller, in whichever worker process, runs the command while holding an ``fcntl.flock`` lock, and saves
its exit code, stdout and stderr beside the output (``run.json``); every later caller, in any worker,
waits for that lock and reads them. ``callers.log`` beside them says which process made the run and which
read it. A run that failed is reported to every caller, never run again.

The output is shared: a test that reads it must never change it (copy it with ``shutil.copytree``
first). :meth:`SharedRun.check_unchanged` compares the folder with the listing taken right after the
run (paths, sizes and modification times), and the conftest checks it at the end of each worker's
session.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Where the shared runs live: one folder per run under the session's temporary root.
PREFIX = "shared-run-"


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temporary root, one for every worker process: an xdist worker's base folder's parent."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def cli() -> list[str]:
    """The ``beyondauc`` command as a user runs it: the console script of this environment."""
    script = Path(sys.executable).with_name("beyondauc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "beyondauc.cli"]


def listing(folder: Path) -> dict[str, list[int]]:
    """``{relative path: [size, mtime_ns]}`` of every file below ``folder``."""
    return {
        str(p.relative_to(folder)): [p.stat().st_size, p.stat().st_mtime_ns]
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class SharedRun:
    """One run of a command: its output folder, exit code, stdout and stderr, and whether this process made it."""

    name: str
    argv: list[str]
    out: Path
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    made_here: bool
    files: dict[str, list[int]]

    def check_ok(self) -> None:
        """Fail (every caller alike) with the end of stderr if the run did not exit 0."""
        assert self.returncode == 0, (
            f"the shared run {self.name!r} ({' '.join(self.argv)}) exited {self.returncode}:\n{self.stderr[-3000:]}"
        )

    def check_unchanged(self) -> None:
        """Fail if a test added, removed or rewrote a file of the shared output."""
        now = listing(self.out) if self.out.is_dir() else {}
        changed = sorted(p for p in self.files.keys() | now.keys() if self.files.get(p) != now.get(p))
        assert not changed, f"a test changed the shared run {self.name!r}'s output (copy it first): {changed[:10]}"


def _make(argv: list[str], out: Path, record: Path, timeout: float) -> None:
    """Run ``argv`` into ``out`` and write ``record`` (exit code, stdout, stderr, seconds, the files) last."""
    if out.exists():  # a caller killed in the middle of the run: start again from nothing
        shutil.rmtree(out)
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except (OSError, subprocess.SubprocessError) as exc:  # not started, or timed out: the same for every caller
        code, stdout, stderr = None, "", f"{type(exc).__name__}: {exc}"
    data = {
        "argv": argv,
        "returncode": code,
        "stdout": stdout,
        "stderr": stderr,
        "seconds": time.perf_counter() - start,
        "files": listing(out) if out.is_dir() else {},
        "made_by": os.environ.get("PYTEST_XDIST_WORKER", "the main process"),
        "pid": os.getpid(),
    }
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(record)


def shared_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, argv: list[str], *, timeout: float = 1800
) -> SharedRun:
    """Run ``argv`` once per test session (every xdist worker included) and return the run.

    ``argv`` holds ``"{out}"`` where the output folder goes. The first caller runs it under a file lock;
    the others wait for the lock and read the saved exit code, stdout and stderr, failed runs included.
    """
    folder = session_root(tmp_path_factory) / f"{PREFIX}{name}"
    folder.mkdir(parents=True, exist_ok=True)
    out, record = folder / "out", folder / "run.json"
    argv = [str(out) if a == "{out}" else a for a in argv]
    made_here = False
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if not record.exists():
            _make(argv, out, record, timeout)
            made_here = True
        data = json.loads(record.read_text(encoding="utf-8"))
        with open(folder / "callers.log", "a", encoding="utf-8") as log:  # who made it, who read it: to inspect
            log.write(
                f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} pid {os.getpid()} "
                f"{'made' if made_here else 'read'} it\n"
            )
    return SharedRun(
        name=name,
        argv=data["argv"],
        out=out,
        returncode=data["returncode"],
        stdout=data["stdout"],
        stderr=data["stderr"],
        seconds=data["seconds"],
        made_here=made_here,
        files=data["files"],
    )


def demo_argv() -> list[str]:
    """The README's first command, ``beyondauc demo``: every model, every dataset, the default parameters."""
    return [*cli(), "demo", "--out", "{out}"]
