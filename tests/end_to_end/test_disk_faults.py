"""A full disk: refused before the work where the space can be estimated, else one line naming the file.

On a small tmpfs where the test can mount one (as root on Linux); elsewhere the write is patched to raise
ENOSPC, the rest of the path the same (the output folder's handling of the error, the command line's line).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from beyondauc.cli import main

EVALUATE = (
    "evaluate",
    "demo",
    "--models",
    "svm,knn",
    "--datasets",
    "wine,diabetes",
    "-p",
    "n_bootstrap=0",
    "--jobs",
    "1",
    "--quiet",
)


def digest(folder):
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(Path(folder).rglob("*"))
        if p.is_file()
    }


@contextlib.contextmanager
def small_disk(base, size):
    """A tmpfs of ``size`` mounted at ``base/disk``, or None where the test cannot mount one."""
    mount = Path(base) / f"disk-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("mount") is None:
        yield None
        return
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def full_parquet_writes(monkeypatch):
    """The fallback: every Parquet write fails as pyarrow fails on a full disk (errno 28, no file name)."""
    import pandas as pd

    def full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)


def test_a_full_disk_during_an_evaluation_says_the_file_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    with small_disk(tmp_path, "200k") as disk:
        if disk is None:
            disk = tmp_path / "disk"
            full_parquet_writes(monkeypatch)
        out = disk / "ev"
        assert main([*EVALUATE, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        lines = err.splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        assert lines[0].startswith(f"beyondauc: error: could not write '{out}/"), err
        assert lines[0].endswith(f".parquet' (no space left on device); nothing was left in --out {str(out)!r}"), err
        assert not out.exists()  # the folder the run made is removed with its staging folder and lock


def test_no_space_for_a_new_evaluation_beside_the_previous_is_refused_before_the_work(tmp_path, capsys):
    with small_disk(tmp_path, "1200k") as disk:
        if disk is None:
            pytest.skip("needs a small file system (tmpfs, as root)")  # the space check reads the real free space
        out = disk / "ev"
        assert main([*EVALUATE, "--out", str(out)]) == 0
        before = digest(out)
        capsys.readouterr()
        started = time.monotonic()
        assert main([*EVALUATE, "--out", str(out), "-p", "tolerance=0.8"]) == 2
        assert time.monotonic() - started < 5, "refused after computing"  # the evaluation takes longer
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1, err
        assert err.startswith(f"beyondauc: error: --out {str(out)!r} has "), err
        assert (
            "free and the new evaluation needs about" in err
            and "(it is written beside the previous one before replacing it); nothing was written" in err
        ), err
        assert digest(out) == before


REPORT = (
    "report",
    "demo",
    "--models",
    "svm,knn",
    "--datasets",
    "wine,diabetes",
    "-p",
    "n_bootstrap=20",
    "--jobs",
    "2",
    "--quiet",
)


def test_a_disk_that_fills_during_a_report_keeps_the_previous_report(tmp_path):
    """The space check passes; then the disk fills (another program writes a file) while the report runs."""
    with small_disk(tmp_path, "12m") as disk:
        if disk is None:
            pytest.skip("needs a small file system (tmpfs, as root); the evaluation's case covers the fallback")
        out = disk / "report"
        first = subprocess.run(
            [sys.executable, "-m", "beyondauc.cli", *REPORT, "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert first.returncode == 0, first.stderr
        before = digest(out)
        proc = subprocess.Popen(
            [sys.executable, "-m", "beyondauc.cli", *REPORT, "--out", str(out), "--recompute"],
            stderr=subprocess.PIPE,
            text=True,
        )
        while not glob.glob(str(out / ".beyondauc-staging-*")):
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.01)
        with open(disk / "filler", "wb") as fh:  # all but 20 kB
            fh.write(b"\0" * max(0, shutil.disk_usage(disk).free - 20_000))
        err = proc.communicate(timeout=900)[1]
        assert proc.returncode == 2, err
        lines = err.splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        assert lines[0].startswith(f"beyondauc: error: could not write '{out}/"), err
        assert lines[0].endswith(f"(no space left on device); the previous report in --out {str(out)!r} is unchanged")
        assert digest(out) == before
        assert sorted(p.name for p in out.iterdir() if p.name.startswith(".beyondauc")) == [".beyondauc-report.json"]
