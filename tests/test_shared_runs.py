"""The runs shared by test files (``shared_runs``): made once whatever the callers, a failure given to every one.

The callers here are threads, each opening the lock file on its own as separate processes do: ``flock``
locks belong to an open file, so two opens of it exclude each other as two xdist workers' do.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from helpers.shared_runs import shared_run

#: Appends a line to the counter file (argv[1]), writes a file into the output folder (argv[2]) after a pause
#: long enough for the other callers to arrive, prints, and exits with argv[3].
COMMAND = (
    "import pathlib, sys, time\n"
    "with open(sys.argv[1], 'a') as f: f.write('ran\\n')\n"
    "time.sleep(0.5)\n"
    "out = pathlib.Path(sys.argv[2]); out.mkdir(); (out / 'result.txt').write_text('made')\n"
    "print('to stdout'); print('to stderr', file=sys.stderr)\n"
    "sys.exit(int(sys.argv[3]))\n"
)


class Factory:
    """What ``shared_run`` asks of pytest's ``tmp_path_factory``: the base temporary folder."""

    def __init__(self, base):
        self.base = base

    def getbasetemp(self):
        return self.base


def run_together(tmp_path, code, callers=3):
    counter = tmp_path / "counter.txt"
    argv = [sys.executable, "-c", COMMAND, str(counter), "{out}", str(code)]
    with ThreadPoolExecutor(callers) as pool:
        runs = list(pool.map(lambda _: shared_run(Factory(tmp_path), "probe", argv), range(callers)))
    return runs, counter.read_text().splitlines()


def test_a_run_is_made_once_and_every_caller_reads_it(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    runs, counter = run_together(tmp_path, 0)
    assert counter == ["ran"]
    assert sum(r.made_here for r in runs) == 1
    for r in runs:
        assert (r.returncode, r.stdout, r.stderr) == (0, "to stdout\n", "to stderr\n")
        assert r.out == tmp_path / "shared-run-probe" / "out" and (r.out / "result.txt").read_text() == "made"
        r.check_ok()
        r.check_unchanged()
    again, counter = run_together(tmp_path, 0, callers=1)  # a later caller of the same session: read, not run
    assert counter == ["ran"] and not again[0].made_here
    said = [line.split()[-2] for line in (tmp_path / "shared-run-probe" / "callers.log").read_text().splitlines()]
    assert sorted(said) == ["made", "read", "read", "read"]


def test_a_failed_run_fails_every_caller_and_is_not_run_again(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    runs, counter = run_together(tmp_path, 3)
    assert counter == ["ran"]
    for r in runs:
        assert r.returncode == 3
        with pytest.raises(AssertionError, match=r"(?s)exited 3:\nto stderr"):
            r.check_ok()


def test_an_xdist_worker_shares_the_sessions_root(tmp_path, monkeypatch):
    """A worker's base folder is ``<session root>/popen-gwN``: its runs go one level up, beside the others'."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    worker = tmp_path / "popen-gw1"
    worker.mkdir()
    argv = [sys.executable, "-c", COMMAND, str(tmp_path / "counter.txt"), "{out}", "0"]
    run = shared_run(Factory(worker), "probe", argv)
    assert run.out == tmp_path / "shared-run-probe" / "out" and run.made_here


def test_a_test_that_changes_the_shared_output_is_caught(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    (run,), _ = run_together(tmp_path, 0, callers=1)
    (run.out / "result.txt").write_text("changed by a test")
    (run.out / "new.html").write_text("added by a test")
    with pytest.raises(AssertionError, match=r"copy it first\): \['new.html', 'result.txt'\]"):
        run.check_unchanged()
