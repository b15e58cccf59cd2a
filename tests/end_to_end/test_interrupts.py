"""SIGINT, SIGTERM and SIGHUP at seeded moments of a real ``beyondauc report demo --jobs 2`` run, and the folder tree.

Each interrupted run must exit ``128 + signal`` with one line on stderr, leave the previous report byte for byte
(SHA-256 of every file), leave no staging folder, no lock and no process (its processes carry a marker in their
environment: workers, Jupyter kernels, the resource tracker), and print no traceback and no warning. One
previous report, made once for the module, is copied for each test.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

CLI = [sys.executable, "-m", "beyondauc.cli"]
#: A small report: two models, two datasets, 20 bootstrap replicates (about 10 s on two cores).
ARGS = ("--models", "svm,knn", "--datasets", "wine,diabetes", "-p", "n_bootstrap=20", "--jobs", "2", "--quiet")
MARKER = "BEYONDAUC_TEST_INTERRUPT"
GRACE = 3.0  # seconds the run's processes have to end after it exits
#: Seconds after the run has entered its folder (its staging folder exists) at which the signal is sent:
#: seeded, spread over the evaluation (computed again: --recompute) and the notebooks.
DELAYS = np.random.default_rng(39).uniform(0.0, 6.0, size=6).round(2)
#: (signal, sent to the process group as a terminal does, or to the run only as `kill` or Kubernetes does)
CASES = [
    ("SIGINT", True),
    ("SIGTERM", False),
    ("SIGHUP", True),
    ("SIGINT", False),
    ("SIGTERM", True),
    ("SIGHUP", False),
]


def digest(folder):
    """SHA-256 of every file under ``folder`` (hidden ones too), by relative path."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(Path(folder).rglob("*"))
        if p.is_file()
    }


def marked(tag):
    """The live processes whose environment carries ``tag`` (zombies have ended)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(MARKER) == tag and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def survivors(tag):
    """The run's processes still alive after up to ``GRACE`` seconds."""
    deadline = time.monotonic() + GRACE
    while (alive := marked(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [(p.pid, " ".join(p.cmdline())[:120]) for p in alive if p.is_running()]


def start(args, tag):
    return subprocess.Popen(
        [*CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, MARKER: tag},
    )


def entered(out, proc):
    """Wait until the run holds ``out`` (its staging folder exists)."""
    while not (out.is_dir() and any(p.name.startswith(".beyondauc-staging-") for p in out.iterdir())):
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.01)


def stop(proc, signum, group):
    """Send ``signum``; return (stdout, stderr, seconds until the run exited)."""
    t0 = time.monotonic()
    (os.killpg if group else os.kill)(proc.pid, signum)
    out, err = proc.communicate(timeout=120)
    return out, err, time.monotonic() - t0


def clean_up(proc, tag):
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for p in marked(tag):
        p.kill()


@pytest.fixture(scope="module")
def previous(tmp_path_factory):
    out = tmp_path_factory.mktemp("interrupts") / "previous"
    run = subprocess.run(
        [*CLI, "report", "demo", "--out", str(out), *ARGS], capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, run.stderr
    return out


@pytest.fixture
def report(previous, tmp_path):
    """A copy of the previous report, and its digest."""
    out = tmp_path / "report"
    shutil.copytree(previous, out)
    return out, digest(out)


def assert_clean(out, before, tag, err):
    assert "Traceback" not in err and "Warning" not in err and "warning" not in err, err
    assert digest(out) == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".beyondauc")) == [".beyondauc-report.json"]
    assert survivors(tag) == []


@pytest.mark.parametrize(
    ("name", "group", "delay"),
    [(*case, d) for case, d in zip(CASES, DELAYS)],
    ids=[f"{n}-{'group' if g else 'run'}-{d}s" for (n, g), d in zip(CASES, DELAYS)],
)
def test_a_signal_stops_the_run_and_keeps_the_previous_report(report, name, group, delay):
    out, before = report
    signum = getattr(signal, name)
    tag = uuid.uuid4().hex
    proc = start(["report", "demo", "--out", str(out), *ARGS, "--recompute"], tag)
    try:
        entered(out, proc)
        time.sleep(delay)
        assert proc.poll() is None, f"the run ended before the signal at {delay} s:\n{proc.communicate()[1]}"
        _, err, seconds = stop(proc, signum, group)
        print(f"{name} to the {'group' if group else 'run'} at {delay} s: exited in {seconds:.2f} s")
        assert proc.returncode == 128 + signum, err
        assert err.splitlines() == [
            f"beyondauc: interrupted ({name}); the previous report in {str(out)!r} is unchanged"
        ], err
        assert seconds < 30, "the run did not stop promptly"  # a hang guard; the times are printed above
        assert_clean(out, before, tag, err)
    finally:
        clean_up(proc, tag)


def test_an_evaluation_inside_a_report_belongs_to_it(report):
    """After the report: `evaluate --out REPORT/evaluation` is refused, the report unchanged."""
    out, before = report
    run = subprocess.run(
        [
            *CLI,
            "evaluate",
            "demo",
            "--out",
            str(out / "evaluation"),
            "-p",
            "tolerance=0.8",
            "--datasets",
            "wine,diabetes",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        f"beyondauc: error: --out {str(out / 'evaluation')!r} belongs to the beyondauc report in {str(out)!r} (its "
        ".beyondauc-report.json lists 'evaluation/auc_intervals.parquet'), whose run writes it; nothing was written: "
        "run that report again, or give a folder outside it"
    ]
    assert digest(out) == before


def test_an_evaluation_inside_a_folder_a_report_is_writing_is_refused(tmp_path):
    """During a first report into a new folder (no manifest yet) the lock covers the folder tree; the report,
    stopped by SIGTERM, leaves nothing (the folder it made is removed)."""
    out = tmp_path / "nest"
    tag = uuid.uuid4().hex
    proc = start(["report", "demo", "--out", str(out), *ARGS], tag)
    try:
        entered(out, proc)
        run = subprocess.run(
            [*CLI, "evaluate", "demo", "--out", str(out / "evaluation"), "-p", "tolerance=0.8", "--quiet"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 2, run.stderr
        assert run.stderr.splitlines() == [
            f"beyondauc: error: --out {str(out / 'evaluation')!r} is inside {str(out)!r}, which another beyondauc "
            f"run (pid {proc.pid}) is writing; wait for it to finish (nothing was written)"
        ]
        assert proc.poll() is None
        _, err, _ = stop(proc, signal.SIGTERM, False)
        assert proc.returncode == 143, err
        assert err.splitlines() == [f"beyondauc: interrupted (SIGTERM); nothing was written to {str(out)!r}"]
        assert not out.exists()
        assert survivors(tag) == []
    finally:
        clean_up(proc, tag)


def test_a_report_refuses_a_folder_holding_an_evaluation_being_written(tmp_path, capsys):
    """The other order: an evaluation being written into nest/evaluation keeps a report out of nest."""
    from beyondauc.cli import main
    from beyondauc.evaluation import evaluation_folder

    out = tmp_path / "nest"
    with evaluation_folder(out / "evaluation"):
        code = main(["report", "demo", "--out", str(out), "--quiet"])
        assert sorted(os.listdir(out)) == ["evaluation"]
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"beyondauc: error: --out {str(out)!r} is not empty and is not a beyondauc report (no .beyondauc-report.json); "
        "nothing was written: give a new or empty folder"
    ]


# -- the mechanisms ---------------------------------------------------------------------------------------------


def test_a_signal_in_a_deferred_section_waits_for_its_end():
    from beyondauc.utils.interrupts import Interrupted, deferred, signals_stop_the_run

    done = []
    with pytest.raises(Interrupted) as caught, signals_stop_the_run():
        with deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler runs here, and waits
            done.append("the section ended")
    assert done == ["the section ended"]
    assert caught.value.exit_status == 143
    assert caught.value.message() == "interrupted (SIGTERM); nothing was written"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored


def test_pool_workers_ignore_sigint_and_end_quietly_on_sigterm(capfd):
    """A worker of the pools takes SIGINT as nothing and SIGTERM by its default action (no traceback)."""
    import multiprocessing

    from beyondauc.utils.parallel import process_pool

    with process_pool(1, multiprocessing.get_context("spawn")) as pool:
        pid = pool.submit(os.getpid).result()
        os.kill(pid, signal.SIGINT)
        time.sleep(0.3)
        assert pool.submit(os.getpid).result() == pid  # alive, the same worker
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(Exception):  # noqa: B017 - the pool is broken: its worker ended
            pool.submit(os.getpid).result()
    assert "Traceback" not in capfd.readouterr().err


def test_a_jupyter_kernel_whose_port_is_taken_is_started_again_on_new_ports(tmp_path, capfd, monkeypatch):
    """Another process binds a port between its choice and the Jupyter kernel's bind: the kernel dies, unseen,
    and a new one starts on new ports (no ZMQError traceback on the terminal)."""
    import socket

    from beyondauc.report import execute

    real = execute.jupyter_kernel_manager_class()
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    made = []

    def manager(**kwargs):
        if made:
            km = real(**kwargs)
        else:  # the first Jupyter kernel gets the taken port for its shell channel
            km = real(cache_ports=False, **kwargs)
            km.shell_port = port
        made.append(km)
        return km

    monkeypatch.setattr(execute, "jupyter_kernel_manager_class", lambda: manager)
    jupyter_kernel = execute.JupyterKernel("python3")
    try:
        jupyter_kernel.prepare(tmp_path)
        assert jupyter_kernel.started == 2
        assert made[0].shell_port == port and made[1].shell_port != port
    finally:
        jupyter_kernel.shutdown()
        taken.close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ZMQError" not in err, err


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_while_the_command_starts_is_one_line(tmp_path, signame):
    """The console script's launcher quiets signals before the package loads (about a second): one line, no
    traceback, exit 128 + signal, nothing written -- whether the signal lands in the launcher or, on a fast
    machine, already in the command's own policy."""
    script = Path(sys.executable).with_name("beyondauc")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(script), "report", "demo", "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)  # the interpreter is up, the package is still loading
    proc.send_signal(getattr(signal, signame))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, signame), err
    assert len(err.splitlines()) == 1 and f"interrupted ({signame})" in err, err
    assert "Traceback" not in err and "Warning" not in err
    assert not out.exists() or not any(out.iterdir())


def test_a_signal_that_a_compiled_module_turned_into_another_exception_still_stops_the_run():
    """pybind11 modules (matplotlib's) imported while a signal arrives raise ImportError("initialization failed")."""
    from beyondauc.utils.interrupts import Interrupted, signals_stop_the_run

    with pytest.raises(Interrupted) as info, signals_stop_the_run():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except Interrupted:
            raise ImportError("initialization failed") from None
    assert info.value.signum == signal.SIGINT and isinstance(info.value.__cause__, ImportError)
    assert info.value.exit_status == 130
