"""The process pools of the computations (private).

Every pool forks where the platform can (the workers inherit the data and the
imported package instead of pickling and importing them again).  The
libraries that the computations import inside their functions (scikit-learn,
scipy.stats/optimize/sparse: a report's Jupyter kernel, which only draws, skips them)
are imported here first, so that the forked workers inherit them too instead
of each importing them again (about 1 s of CPU per worker and pool).

No process a run starts outlives it, even when the run is killed (kill -9):
every pool worker, and every Jupyter kernel a worker starts, asks the operating
system to kill it when its parent ends (Linux's parent-death signal; elsewhere a
worker watches its parent).  The resource tracker that multiprocessing starts then ends by
itself: it exits when the last process holding its pipe (the run and its
workers) is gone.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

__all__: list[str] = []

#: Imported by the functions that fit, test or resample, not by ``import beyondauc``.
FITTING_MODULES = ("sklearn.linear_model", "sklearn.model_selection", "scipy.stats", "scipy.optimize",
                   "scipy.sparse")


def pool_context() -> multiprocessing.context.BaseContext:
    """The multiprocessing context of a computation pool: ``fork`` where available, else the default."""
    for name in FITTING_MODULES:
        importlib.import_module(name)
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_WATCH_SECONDS = 0.2  # how often a worker without the parent-death signal looks at its parent


@functools.cache
def _prctl():
    """libc's ``prctl``, or None where there is none (not Linux, or no C library to load)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # the C library this interpreter is linked with
    except (OSError, AttributeError):
        return None
    prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    prctl.restype = ctypes.c_int
    return prctl


def _ask_death_signal(parent):
    """Ask for SIGKILL when the parent ends; True if asked (Linux). A parent already gone ends this process."""
    prctl = _prctl()
    if prctl is None or prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # it ended before the signal was asked for: nobody would send it
        os._exit(1)
    return True


def die_with_parent(parent: int) -> None:
    """In a worker just started by process ``parent``: end it (SIGKILL) as soon as ``parent`` ends.

    On Linux the operating system sends the signal (``prctl(PR_SET_PDEATHSIG)``; it is sent
    when the *thread* that started this process ends, which for the pools here is
    the thread that submits to and waits on them).  Elsewhere a daemon thread
    watches the parent's pid and ends the process when it changes.
    """
    if _ask_death_signal(parent):
        return

    def watch():
        while os.getppid() == parent:
            time.sleep(_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="beyondauc-parent-watch", daemon=True).start()


def child_preexec() -> Callable[[], bool] | None:
    """A ``preexec_fn`` for a child process (a Jupyter kernel) that must die with this process, or None.

    Only where the parent-death signal exists (Linux); elsewhere the child must
    watch its parent itself (Jupyter kernels do, through ``JPY_PARENT_PID``).
    """
    if os.name != "posix" or _prctl() is None:
        return None
    return functools.partial(_ask_death_signal, os.getpid())


def _start_worker(parent, initializer, initargs):
    die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


def process_pool(max_workers: int, mp_context: multiprocessing.context.BaseContext,
                 initializer: Callable[..., object] | None = None, initargs: Iterable[object] = ()
                 ) -> ProcessPoolExecutor:
    """A ``ProcessPoolExecutor`` whose workers end when this process ends, however it ends (kill -9 too)."""
    return ProcessPoolExecutor(max_workers=max_workers, mp_context=mp_context, initializer=_start_worker,
                               initargs=(os.getpid(), initializer, tuple(initargs)))
