"""One policy for SIGINT, SIGTERM and SIGHUP during a run of the command line (private).

``beyondauc report``, ``demo`` and ``evaluate`` run inside
:func:`signals_stop_the_run`: the first of these signals raises
:class:`Interrupted` in the main thread, wherever it is.  On its way out the
exception

* stops the local pool workers at once (:mod:`beyondauc.utils.parallel`
  kills them; their Jupyter kernels die with them through the parent-death
  signal) and closes a Dask client, which cancels its tasks;
* leaves the output folder (:mod:`beyondauc.utils.output`): this run's
  staging folder and lock are removed, the last complete output is kept as it
  was, and the folder notes on the exception what it kept;

and the command line prints one line and exits ``128 + signal`` (130, 143,
129).  A signal that comes while the folder commits (renames only, no
computation) waits until the commit is done (:func:`deferred`): the new output
is then complete, and the line says so.  Later signals are ignored while the
run stops, so that a second Ctrl-C does not cut its clean-up short.

The pool workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process
group; the run stops them) and end silently, without a traceback, on
SIGTERM and SIGHUP: :func:`worker_signals`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

__all__: list[str] = []

#: The signals that stop a run (SIGHUP where it exists).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """The run was stopped by ``signum``; the output folder it was writing says what it kept (:meth:`note`).

    A ``KeyboardInterrupt``, so that nothing that catches ``Exception`` stops it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)
        self.out: Path | None = None
        self.kind = "output"
        self.previous = False
        self.committed = False

    @property
    def exit_status(self) -> int:
        """``128 + signum``, as a shell reports a process ended by the signal."""
        return 128 + self.signum

    def note(self, out: Path, kind: str, *, previous: bool, committed: bool) -> None:
        """Record what the output folder ``out`` kept (the outermost folder notes last)."""
        self.out, self.kind, self.previous, self.committed = out, kind, previous, committed

    def message(self) -> str:
        """The one line the command line prints."""
        name = signal.Signals(self.signum).name
        if self.out is None:
            return f"interrupted ({name}); nothing was written"
        where = repr(str(self.out))
        if self.committed:
            return f"interrupted ({name}) as the new {self.kind} in {where} was complete; it is kept"
        if self.previous:
            return f"interrupted ({name}); the previous {self.kind} in {where} is unchanged"
        return f"interrupted ({name}); nothing was written to {where}"


class _State:
    installed = False
    received: int | None = None  # the signal that stops the run
    deferring = 0  # depth of deferred() sections
    pending: int | None = None  # a signal received in a deferred() section


def _handler(signum, frame):
    if _State.received is not None:  # already stopping: let the clean-up finish
        return
    if _State.deferring:
        _State.pending = signum
        return
    _State.received = signum
    raise Interrupted(signum)


def stopped_by(exc: BaseException | None) -> Interrupted | None:
    """The :class:`Interrupted` that ``exc`` is, or stands for; None if the run was not stopped by a signal.

    A signal's exception raised while a compiled module initialises (pybind11's, e.g.
    matplotlib's, imported late in the run) comes back as ``ImportError("initialization
    failed")``: once a signal has stopped the run, any exception is that signal.
    """
    if isinstance(exc, Interrupted):
        return exc
    if exc is not None and _State.installed and _State.received is not None:
        return Interrupted(_State.received)
    return None


@contextlib.contextmanager
def signals_stop_the_run() -> Iterator[None]:
    """Within it, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (main thread only; else nothing changes)."""
    if threading.current_thread() is not threading.main_thread() or _State.installed:
        yield
        return
    previous = {signum: signal.signal(signum, _handler) for signum in SIGNALS}
    _State.installed, _State.received, _State.pending = True, None, None
    try:
        yield
    except Exception as exc:  # a signal's exception that a compiled module turned into another
        stopped = stopped_by(exc)
        if stopped is None:
            raise
        raise stopped from exc
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _State.installed = False


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A section a signal does not cut: a signal received within it raises :class:`Interrupted` as it ends.

    Only the main thread counts (the handler runs there); elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _State.deferring += 1
    try:
        yield
    finally:
        _State.deferring -= 1
        if not _State.deferring and _State.pending is not None:
            signum, _State.pending = _State.pending, None
            _State.received = signum
            raise Interrupted(signum)


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Block :data:`SIGNALS` in this thread while processes are started: they inherit the blocked mask.

    A signal that comes meanwhile is delivered when the block ends; a worker
    unblocks them once it has set how it takes them (:func:`worker_signals`).
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def worker_signals() -> None:
    """In a pool worker: ignore SIGINT, end silently (the default action) on SIGTERM and SIGHUP; then unblock them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in SIGNALS:
        if signum != signal.SIGINT:
            signal.signal(signum, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
