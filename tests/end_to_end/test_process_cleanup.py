"""No process a report run starts outlives it: kill -9 of the run at chosen moments, a clean run, a soak
(kill -9, SIGTERM and SIGINT).

A run starts spawned pool workers (which start Jupyter kernels, in their own
sessions), the multiprocessing resource tracker and forked evaluation workers.
The test gives the run a marker in its environment, which every one of them
inherits, and finds them by walking ``/proc``, whatever their parent or session.
Only the main process is killed (not its process group): the others must end
by themselves, within 5 s.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import uuid
from pathlib import Path

import nbformat
import numpy as np
import pytest

from helpers.report import CLI_WITH_NOTEBOOKS, demo_frame, parse_html, tiny_notebooks

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").is_file(), reason="walks Linux's /proc")

REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
MARKER = "BEYONDAUC_TEST_RUN"
MODELS = ("logreg", "svm")
#: Evaluation parameters that make the evaluation take about two seconds.
CHEAP = (
    "-p",
    "protocol=indata",
    "-p",
    "n_repeats=2",
    "-p",
    "n_bootstrap=20",
    "-p",
    "noise_repeats=2",
    "-p",
    "n_points=5",
)
GRACE = 5.0  # seconds the processes of a killed run have to end (issue 26)


def run_processes(tag):
    """``{pid: (parent pid, command line)}`` of the live processes whose environment carries ``tag``."""
    want = f"{MARKER}={tag}".encode()
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if want not in Path(entry.path, "environ").read_bytes().split(b"\0"):
                continue
            stat = Path(entry.path, "stat").read_text()
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if state not in ("Z", "X"):  # a zombie has ended; it only waits to be reaped
            found[int(entry.name)] = (int(ppid), cmdline.strip())
    return found


class Run:
    """``beyondauc report`` as a subprocess in its own session, its processes marked, its stderr in a file."""

    def __init__(self, nbdir, args, folder):
        self.tag = uuid.uuid4().hex
        self.stderr_path = Path(folder) / f"stderr-{self.tag}.txt"
        with self.stderr_path.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", CLI_WITH_NOTEBOOKS, str(nbdir), *args],
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                env={**os.environ, MARKER: self.tag},
            )
        self.started = time.monotonic()

    def stderr(self):
        return self.stderr_path.read_text(errors="replace")

    def processes(self):
        return run_processes(self.tag)

    def kill(self):
        """SIGKILL the main process only; return its processes alive just before."""
        alive = self.processes()
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        return alive

    def survivors(self):
        """The run's processes still alive after up to ``GRACE`` seconds (polled, returned as soon as none is)."""
        deadline = time.monotonic() + GRACE
        while (alive := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return alive

    def clean_up(self):
        """Kill what a failed test left behind (the test's own processes, found by their marker)."""
        with_main = {self.proc.pid: None} if self.proc.poll() is None else {}
        for pid in {**with_main, **self.processes()}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=60)


@pytest.fixture
def runs():
    started = []
    yield started
    for run in started:
        run.clean_up()


def flagging_notebooks(folder, flags, sleep):
    """The tiny notebooks; each says it runs, by creating ``flags/running``, then sleeps ``sleep`` seconds."""
    tiny_notebooks(REPO_NOTEBOOKS, folder, sleep=sleep)
    for path in Path(folder).glob("*.ipynb"):
        nb = nbformat.read(str(path), as_version=4)
        cell = next(c for c in nb.cells if c.get("id") == "tiny-code")
        cell.source = f"import pathlib\npathlib.Path({str(flags)!r}, 'running').touch()\n{cell.source}"
        nbformat.write(nb, str(path))
    return folder


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    base = tmp_path_factory.mktemp("no_survivors")
    data = base / "scores.csv"
    demo_frame(dict(zip(MODELS, MODELS))).to_csv(data, index=False)
    flags = base / "flags"
    flags.mkdir()
    return {
        "data": data,
        "base": base,
        "flags": flags,
        "slow": flagging_notebooks(base / "slow", flags, 0.5),
        "tiny": tiny_notebooks(REPO_NOTEBOOKS, base / "tiny"),
    }


def report_args(bench, out):
    return ["report", str(bench["data"]), "--out", str(out), "--jobs", "2", *CHEAP]


def _described(processes):
    return "\n".join(
        f"  pid {pid} (parent {ppid}): {' '.join(cmd.split())[:160]}" for pid, (ppid, cmd) in sorted(processes.items())
    )


def _kinds(processes, main):
    """How many processes of each kind: the run, spawned workers, their kernels, the tracker, forked workers."""
    kinds = [
        "run"
        if pid == main
        else "kernel"
        if _is_kernel(cmd)
        else "spawned worker"
        if "spawn_main" in cmd
        else "resource tracker"
        if "resource_tracker" in cmd
        else "forked worker"
        for pid, (_, cmd) in processes.items()
    ]
    return {k: kinds.count(k) for k in sorted(set(kinds))}


def _is_kernel(cmd):
    return "ipykernel" in cmd


def _workers_starting(run, procs, bench):
    """The spawned report workers exist (importing; they start their kernels next)."""
    return sum("spawn_main" in cmd for _, cmd in procs.values()) >= 2


def _evaluation_pool(run, procs, bench):
    """A forked evaluation worker exists: a child with the run's own command line, once both report workers
    have started (they are spawned: a child of the run that has not run its own command yet may be one)."""
    main = procs.get(run.proc.pid)
    return (
        main is not None
        and _workers_starting(run, procs, bench)
        and any(ppid == run.proc.pid and cmd == main[1] for ppid, cmd in procs.values())
    )


def _kernel_starting(run, procs, bench):
    """A worker's kernel exists (it starts while the evaluation is computed)."""
    return any(_is_kernel(cmd) for _, cmd in procs.values())


def _notebook_running(run, procs, bench):
    """A notebook's cell is running in a kernel."""
    return (bench["flags"] / "running").exists()


MOMENTS = {
    "workers starting": _workers_starting,
    "evaluation pool": _evaluation_pool,
    "kernel starting": _kernel_starting,
    "notebook running": _notebook_running,
}


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_kill_9_of_the_run_leaves_no_process(bench, runs, tmp_path, moment):
    (bench["flags"] / "running").unlink(missing_ok=True)
    run = Run(bench["slow"], report_args(bench, tmp_path / "out"), tmp_path)
    runs.append(run)
    reached = MOMENTS[moment]
    while not reached(run, run.processes(), bench):
        assert run.proc.poll() is None, f"the run ended before the moment '{moment}':\n{run.stderr()}"
        time.sleep(0.01)
    alive = run.kill()
    assert len(alive) >= 4, _described(alive)  # the run, the tracker and two workers at least
    survivors = run.survivors()
    assert survivors == {}, (
        f"alive {GRACE} s after kill -9 at '{moment}':\n{_described(survivors)}\n"
        f"alive at the kill:\n{_described(alive)}"
    )


def test_a_finished_run_leaves_no_process(bench, runs, tmp_path):
    run = Run(bench["slow"], report_args(bench, tmp_path / "out"), tmp_path)
    runs.append(run)
    kernels_seen = False
    while run.proc.poll() is None:
        kernels_seen |= any(_is_kernel(cmd) for _, cmd in run.processes().values())
        time.sleep(0.05)
    assert run.proc.returncode == 0, run.stderr()
    assert kernels_seen
    assert run.survivors() == {}
    check_complete(tmp_path / "out")


#: A Dask cluster of two worker processes, until its stdin closes; prints the scheduler's address.
CLUSTER = """\
import sys
from distributed import LocalCluster
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()
"""


def test_kill_9_of_a_run_on_dask_stops_its_kernels_on_the_workers(bench, runs, tmp_path):
    """Dask cannot stop the running report of a client that is gone; its kernel is killed as the task is
    cancelled, and the notebooks left start no other (each notebook here sleeps 20 s)."""
    pytest.importorskip("distributed")
    flags = tmp_path / "flags"
    flags.mkdir()
    notebooks = flagging_notebooks(tmp_path / "notebooks", flags, 20.0)
    tag = uuid.uuid4().hex  # the cluster's processes, and the kernels its workers start
    cluster = subprocess.Popen(
        [sys.executable, "-c", CLUSTER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, MARKER: tag},
    )
    try:
        address = cluster.stdout.readline().strip()
        assert address, "the cluster did not start"
        run = Run(notebooks, [*report_args(bench, tmp_path / "out"), "--dask", address], tmp_path)
        runs.append(run)

        def kernels():
            return {pid: p for pid, p in run_processes(tag).items() if _is_kernel(p[1])}

        while not ((flags / "running").exists() and kernels()):
            assert run.proc.poll() is None, run.stderr()
            time.sleep(0.01)
        started = kernels()
        run.kill()
        assert run.survivors() == {}
        deadline = time.monotonic() + GRACE
        while (alive := kernels()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive == {}, f"kernels alive {GRACE} s later:\n{_described(alive)}\nat the kill:\n{_described(started)}"
    finally:
        cluster.stdin.close()
        try:
            cluster.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait(timeout=60)


def check_complete(out):
    """``out`` holds a complete report: the index lists every model and links its report and the overview,
    and every page it links exists."""
    root = parse_html((out / "index.html").read_text(encoding="utf-8"))
    names = [row.find("td", **{"class": "name"}).text for row in root.marked("model-row")]
    assert sorted(names) == sorted(MODELS)
    links = {
        urllib.parse.unquote(a.attrs["href"])
        for a in root.find_all("a")
        if not a.attrs.get("href", "#").startswith(("#", "http"))
    }
    pages = {f"models/{m}/report.html" for m in MODELS} | {"overview/overview.html"}
    assert pages <= links, sorted(links)
    assert all((out / link).is_file() for link in links), [link for link in links if not (out / link).is_file()]


USER_FILES = {"notes.txt": "my notes\n", "mydata/keep.csv": "a,b\n1,2\n"}


#: Killed runs of the soak (issue 26 asks for twenty): one at a seeded random moment in each twentieth of a run's duration.
SOAK_KILLS = 20


def test_soak_killed_runs_into_one_folder_then_a_clean_one(bench, runs, tmp_path):
    """Issue 26's soak: twenty runs, each killed (kill -9 of the main process) at a random moment of a run's duration.

    The moments are stratified, one in each twentieth of the duration: every phase of a run that lasts a
    twentieth of it is hit (twenty uniform moments missed a given tenth one time in eight)."""
    out = tmp_path / "out"
    args = [*report_args(bench, out), "--quiet"]
    first = Run(bench["tiny"], args, tmp_path)  # makes the report folder
    runs.append(first)
    assert first.proc.wait(timeout=600) == 0, first.stderr()
    assert first.survivors() == {}
    for name, text in USER_FILES.items():  # the user's files inside the report folder are kept
        (out / name).parent.mkdir(exist_ok=True)
        (out / name).write_text(text)
    second = Run(bench["tiny"], args, tmp_path)  # a re-run (it reuses the evaluation): what is killed below
    runs.append(second)
    assert second.proc.wait(timeout=600) == 0, second.stderr()
    duration = time.monotonic() - second.started
    assert second.survivors() == {}
    rng = np.random.default_rng(26)
    moments = rng.permutation((np.arange(SOAK_KILLS) + rng.uniform(size=SOAK_KILLS)) * duration / SOAK_KILLS)
    for i, delay in enumerate(moments):
        run = Run(bench["tiny"], args, tmp_path)
        runs.append(run)
        time.sleep(max(0.0, run.started + delay - time.monotonic()))
        alive = run.kill()
        print(f"run {i} killed at {delay:.2f} s of {duration:.2f} s; alive then: {_kinds(alive, run.proc.pid)}")
        survivors = run.survivors()
        assert survivors == {}, (
            f"run {i}, killed at {delay:.2f} s of {duration:.2f} s: alive {GRACE} s later:\n"
            f"{_described(survivors)}\nalive at the kill:\n{_described(alive)}"
        )
    stopped_by_signals(bench, runs, tmp_path, args, out, duration, rng)
    last = Run(bench["tiny"], args, tmp_path)
    runs.append(last)
    assert last.proc.wait(timeout=600) == 0, last.stderr()
    assert last.survivors() == {}
    assert {name: (out / name).read_text() for name in USER_FILES} == USER_FILES
    check_complete(out)


#: Runs of the soak stopped by a signal beside kill -9: SIGTERM (a scheduler's way; to the run only) and SIGINT
#: (a terminal's Ctrl-C; to the run's process group), each at a seeded moment once the run holds the folder.
SOAK_SIGNALS = ("SIGTERM", "SIGINT") * 3


def _entered(run, out):
    """Wait until the run holds ``out`` (its staging folder exists); False if it ended first."""
    while not any(p.name.startswith(".beyondauc-staging-") for p in out.iterdir()):
        if run.proc.poll() is not None:
            return False
        time.sleep(0.005)
    return True


def _report_files(out):
    """Every file of ``out`` but a run's staging folder and lock, with its bytes."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.relative_to(out).parts[0].startswith((".beyondauc-staging-", ".beyondauc.lock"))
    }


def stopped_by_signals(bench, runs, tmp_path, args, out, duration, rng):
    """Each run stopped by its signal: exit 128 + signal, one line, the folder as it was, nothing left."""
    for name, delay in zip(SOAK_SIGNALS, rng.uniform(0.0, 0.5 * duration, size=len(SOAK_SIGNALS))):
        signum = getattr(signal, name)
        run = Run(bench["tiny"], args, tmp_path)
        runs.append(run)
        assert _entered(run, out), run.stderr()
        before = _report_files(out)  # once the run has finished what a killed run left
        time.sleep(max(0.0, run.started + delay - time.monotonic()))
        alive = run.processes()
        (os.killpg if signum == signal.SIGINT else os.kill)(run.proc.pid, signum)
        run.proc.wait(timeout=60)
        print(f"{name} at {delay:.2f} s of {duration:.2f} s; alive then: {_kinds(alive, run.proc.pid)}")
        err = run.stderr()
        if run.proc.returncode == 0:  # it finished first: a complete new report
            check_complete(out)
            continue
        assert run.proc.returncode == 128 + signum, err
        assert err.splitlines() == [
            f"beyondauc: interrupted ({name}); the previous report in {str(out)!r} is unchanged"
        ], err
        assert _report_files(out) == before
        assert sorted(p.name for p in out.iterdir() if p.name.startswith(".beyondauc")) == [".beyondauc-report.json"]
        survivors = run.survivors()
        assert survivors == {}, f"{name} at {delay:.2f} s: alive {GRACE} s later:\n{_described(survivors)}"


# -- the mechanisms, one by one ------------------------------------------------------------------------------------

#: A process with one pool worker (forked), as where the parent-death signal is missing; prints the worker's pid.
WATCHED_POOL = """\
import multiprocessing, os, sys, time
from beyondauc.utils import parallel as _pool
_pool._prctl = lambda: None
with _pool.process_pool(1, multiprocessing.get_context("fork")) as pool:
    print(pool.submit(os.getpid).result(), flush=True)
    time.sleep(600)
"""


def test_where_the_death_signal_is_missing_a_worker_watches_its_parent(runs):
    from beyondauc.utils import parallel as _pool

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_pool, "_prctl", lambda: None)
        assert _pool.child_preexec() is None  # a kernel then relies on its own parent poller
    tag = uuid.uuid4().hex
    proc = subprocess.Popen(
        [sys.executable, "-c", WATCHED_POOL],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, MARKER: tag},
    )
    worker = int(proc.stdout.readline())
    assert worker in run_processes(tag)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    deadline = time.monotonic() + GRACE
    while (alive := run_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in alive:  # do not leave it behind if the test fails
        os.kill(pid, signal.SIGKILL)
    assert alive == {}


def test_a_worker_whose_parent_is_already_gone_exits():
    """The parent may die before the worker asks for the signal: the worker sees another parent and exits."""
    code = "from beyondauc.utils.parallel import die_with_parent\ndie_with_parent(1)\nprint('still alive')"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,  # its parent is pytest, not pid 1
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (1, "")
