"""The process pools of the computations (private).

Every pool forks where the platform can (the workers inherit the data and the
imported package instead of pickling and importing them again).  The
libraries that the computations import inside their functions (scikit-learn,
scipy.stats/optimize/sparse: a report's Jupyter kernel, which only draws, skips them)
are imported here first, so that the forked workers inherit them too instead
of each importing them again (about 1 s of CPU per worker and pool).

A script needs no ``if __name__ == "__main__":`` guard: a worker started by
``spawn`` (the report's workers; every pool where ``fork`` does not exist)
would import the calling script again, run its top level -- and so start the
run again -- before its first task; the pools here start their workers while
``__main__`` is a stand-in module without a file, so the workers never import
the script (they need nothing from it: every task is a function of the
package).  Where ``__main__`` has no file anyway (Jupyter, ``python -c``,
an interactive session) nothing is changed.

No process a run starts outlives it, even when the run is killed (kill -9):
every pool worker, and every Jupyter kernel a worker starts, asks the operating
system to kill it when its parent ends (Linux's parent-death signal; elsewhere a
worker watches its parent).  The resource tracker that multiprocessing starts then ends by
itself: it exits when the last process holding its pipe (the run and its
workers) is gone.

Every task's result reaches the run through a file, and the pool's pipe carries
only the file's name: a message that short is written to the pipe at once
(POSIX writes of up to ``PIPE_BUF`` bytes are atomic).  A larger result would be
written in several pieces, and a worker killed between two of them -- the run
stopping on a signal kills its workers -- would leave the pool's reading thread
waiting for the rest for ever; the interpreter's exit waits for that thread, so
the run would never end.  The files live in the temporary folder for the
moment between the worker's writing and the run's reading; only a run that is
itself killed with ``kill -9`` at that moment leaves one behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import itertools
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, InvalidStateError, ProcessPoolExecutor
from pathlib import Path

from .interrupts import deferred, signals_blocked, worker_signals

__all__: list[str] = []

#: Imported by the functions that fit, test or resample, not by ``import beyondauc``.
FITTING_MODULES = ("sklearn.linear_model", "sklearn.model_selection", "scipy.stats", "scipy.optimize", "scipy.sparse")


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
    worker_signals()  # the run stops its workers itself: no KeyboardInterrupt traceback from one
    if initializer is not None:
        initializer(*initargs)


#: Held while ``__main__`` is the stand-in, so two pools starting workers at once restore the real one.
_MAIN_LOCK = threading.Lock()


#: What a spawned worker runs as its ``__main__`` (:func:`script_hidden`): the parent-death signal, first.
SPAWN_MAIN = str(Path(__file__).resolve().with_name("_spawn_main.py"))
#: The environment variable that tells a spawned worker which process started it (``_spawn_main.py``).
_PARENT_VARIABLE = "BEYONDAUC_SPAWN_PARENT"


@contextlib.contextmanager
def script_hidden(start_method: str | None) -> Iterator[None]:
    """While workers start: ``__main__`` a stand-in, so a spawned worker does not import the script.

    ``multiprocessing`` tells a worker started by ``spawn`` or ``forkserver``
    to import the parent's main module (by its file or module name) before
    it unpickles its task, which in a script without a ``__main__`` guard
    runs the whole script again in the worker.  Forked workers copy the
    parent instead: they are left alone.

    The stand-in's file is ``_spawn_main.py``, which the worker runs instead
    (standard library only): it asks for the parent-death signal before the
    worker imports the package to unpickle its first task, which takes a
    second or more on a busy machine, so that a worker whose run is killed
    meanwhile ends at once rather than when that import is done
    (:func:`die_with_parent` then asks again and checks the parent).  A
    ``__main__`` without a file (Jupyter, ``python -c``) is never imported;
    it is hidden all the same, for that first step.
    """
    main = sys.modules.get("__main__")
    if start_method == "fork" or main is None:
        yield
        return
    with _MAIN_LOCK:
        stand_in = types.ModuleType("__main__", "stand-in: the pool's workers need no script")
        stand_in.__file__ = SPAWN_MAIN
        sys.modules["__main__"] = stand_in
        before = os.environ.get(_PARENT_VARIABLE)
        if start_method == "spawn":  # a spawned worker's parent is this process (not so under forkserver)
            os.environ[_PARENT_VARIABLE] = str(os.getpid())
        try:
            yield
        finally:
            sys.modules["__main__"] = main
            if before is None:
                os.environ.pop(_PARENT_VARIABLE, None)
            else:
                os.environ[_PARENT_VARIABLE] = before


class _Started:
    """A multiprocessing context that remembers the processes it made (a pool's workers), to kill them."""

    def __init__(self, context: multiprocessing.context.BaseContext) -> None:
        self._context = context
        self.processes: list[multiprocessing.process.BaseProcess] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self._context, name)

    def Process(self, *args: object, **kwargs: object) -> multiprocessing.process.BaseProcess:  # noqa: N802
        process = self._context.Process(*args, **kwargs)  # type: ignore[attr-defined]  # every concrete context has it
        self.processes.append(process)
        return process


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker, set as that exception's ``__cause__``."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def _run_to_file(path: str, fn: Callable[..., object], args: tuple, kwargs: dict) -> str:
    """Run ``fn`` in a worker; write ``(succeeded, value or exception, traceback text)`` to ``path``; return it."""
    try:
        outcome: tuple[bool, object, str | None] = (True, fn(*args, **kwargs), None)
    except Exception as exc:  # an interrupt (not an Exception) stops the worker as before
        outcome = (False, exc, "".join(traceback.format_exception(exc)))
    partial = f"{path}.partial"
    try:
        with open(partial, "wb") as fh:
            pickle.dump(outcome, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # a result that cannot be pickled
        text = "".join(traceback.format_exception(exc))
        with open(partial, "wb") as fh:
            pickle.dump((False, RuntimeError(f"a worker's result could not be sent to the run: {exc!r}"), text), fh)
    os.replace(partial, path)
    return path


def _read_result(path: str) -> tuple[bool, object, str | None]:
    """``(succeeded, value or exception, traceback text)`` from a worker's result file, which is then removed.

    A file that is gone or unreadable -- the pool was killed, and removed it, while the
    result was on its way -- gives the error of that as the task's.
    """
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except Exception as exc:  # noqa: BLE001 - whatever it is, it is this task's error, not the pool's
        return False, RuntimeError(f"the result of a task could not be read: {exc!r}"), None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def take_result(outer: Future, inner: Future) -> None:
    """Set ``outer`` from the finished ``inner`` future, reading (and removing) the file it names.

    It runs as a callback of the pool's own thread, so it never raises: an
    exception there would be printed, and ``outer`` never set.
    """
    if inner.cancelled():
        if outer.cancel():
            outer.set_running_or_notify_cancel()  # as the pool does for its own: waiters see it done
        return
    error = inner.exception()
    succeeded, value, text = (False, error, None) if error is not None else _read_result(inner.result())
    if text is not None and isinstance(value, BaseException):
        value.__cause__ = RemoteTraceback(f'\n"""\n{text}"""')
    with contextlib.suppress(InvalidStateError):  # cancelled by its caller meanwhile
        if succeeded:
            outer.set_result(value)
        else:
            outer.set_exception(value if isinstance(value, BaseException) else RuntimeError(repr(value)))


class _Pool(ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` that starts its workers (all started by ``submit``) with the script hidden.

    Its workers start with SIGINT, SIGTERM and SIGHUP blocked until they have
    set how they take them (:func:`~beyondauc.utils.interrupts.worker_signals`);
    so does multiprocessing's resource tracker, which ignores SIGINT and SIGTERM
    itself and keeps SIGHUP blocked (a hangup of the terminal does not end it
    before the run, which would make it report the run's semaphores).
    Left by an exception that is not an ``Exception`` (an interrupt), it kills
    its workers instead of waiting for their tasks.  Every result comes through a
    file (see the module's docstring), so that killing a worker never leaves a
    message half written to the pool's pipe.
    """

    _pools = itertools.count()

    def __init__(self, max_workers: int, mp_context: multiprocessing.context.BaseContext, **kwargs: object) -> None:
        self._started = _Started(mp_context)
        with deferred(), signals_blocked():  # the resource tracker may start here: it must not die of SIGHUP
            super().__init__(max_workers=max_workers, mp_context=self._started, **kwargs)  # type: ignore[call-overload]  # a context by duck typing
        self._start_method = mp_context.get_start_method()
        self._prefix = os.path.join(tempfile.gettempdir(), f"beyondauc-result-{os.getpid()}-{next(self._pools)}-")
        self._tasks = itertools.count()

    def submit(self, fn: Callable[..., object], /, *args: object, **kwargs: object) -> Future:
        outer: Future = Future()
        path = f"{self._prefix}{next(self._tasks)}.pickle"
        with deferred(), script_hidden(self._start_method), signals_blocked():  # a worker starts whole
            inner = super().submit(_run_to_file, path, fn, args, kwargs)
        outer.add_done_callback(lambda done: done.cancelled() and inner.cancel())
        inner.add_done_callback(functools.partial(take_result, outer))
        return outer

    def _remove_results(self) -> None:
        """Remove the result files that no future read (the tasks of killed workers)."""
        folder, prefix = os.path.split(self._prefix)
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(prefix):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)

    def kill(self) -> None:
        """Stop now: cancel the tasks not started and kill the workers (their Jupyter kernels die with them)."""
        self.shutdown(wait=False, cancel_futures=True)
        for process in self._started.processes:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                process.kill()
        for process in self._started.processes:
            with contextlib.suppress(OSError, ValueError, AssertionError, AttributeError):
                process.join(timeout=1)
        self._remove_results()

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: types.TracebackType | None) -> bool:
        if exc_type is not None and not issubclass(exc_type, Exception):
            self.kill()
            return False
        try:
            return bool(super().__exit__(exc_type, exc, tb))
        except BaseException:  # interrupted while waiting for the workers to end
            self.kill()
            raise
        finally:
            self._remove_results()


def process_pool(
    max_workers: int,
    mp_context: multiprocessing.context.BaseContext,
    initializer: Callable[..., object] | None = None,
    initargs: Iterable[object] = (),
) -> ProcessPoolExecutor:
    """A ``ProcessPoolExecutor`` whose workers end when this process ends, however it ends (kill -9 too).

    Its workers never import the calling script (:func:`script_hidden`): a
    script needs no ``if __name__ == "__main__":`` guard, whatever the start method.
    """
    return _Pool(
        max_workers, mp_context, initializer=_start_worker, initargs=(os.getpid(), initializer, tuple(initargs))
    )
