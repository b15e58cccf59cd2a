"""Execution of the report notebooks with papermill, in Jupyter kernels that are reused.

Private: :mod:`beyondauc.report` decides what runs where; this module runs one
notebook and reports how it went.

Starting a Jupyter kernel and importing the package costs seconds per
notebook, so a :class:`_JupyterKernel` stays alive and papermill executes
notebook after notebook in it (``papermill.execute_notebook(..., km=...)``: nbclient
leaves a kernel manager it does not own running). Between notebooks the
namespace is reset (``%reset -f``, figures closed, execution count back to 1,
working directory set), so no notebook sees another's variables. A Jupyter
kernel that died, or that ran a notebook which failed (it may still be busy
after a timeout), is replaced.

"Kernel" alone, in this package, is a computational kernel
(:mod:`beyondauc.metrics.core.kernel`); the names here say "Jupyter kernel", but
``kernel_name`` (papermill's and Jupyter's word for the kernelspec) and the
public fields ``NotebookRun.kernel_seconds`` and ``NotebookRun.new_kernel``,
whose docstrings say it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import math
import multiprocessing.util
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..utils.parallel import child_preexec

INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


# Quiet Jupyter kernels without an input history: many run at once and none is interactive.
_JUPYTER_KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL", "--HistoryManager.enabled=False")


def error_of(exc):
    ename = getattr(exc, "ename", None)
    if ename:
        evalue = str(getattr(exc, "evalue", "")).strip().splitlines()
        return f"{ename}: {evalue[0]}" if evalue else ename
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _timing(nb):
    """(seconds, kernel_seconds) from papermill's metadata of an executed notebook (see :class:`~beyondauc.report.NotebookRun`)."""
    meta = nb.metadata.get("papermill", {})
    try:
        start = _dt.datetime.fromisoformat(meta["start_time"])
        end = _dt.datetime.fromisoformat(meta["end_time"])
        first = next(
            _dt.datetime.fromisoformat(c.metadata["papermill"]["start_time"])
            for c in nb.cells
            if c.metadata.get("papermill", {}).get("start_time")
        )
    except (KeyError, TypeError, ValueError, StopIteration):
        return math.nan, math.nan
    return (end - start).total_seconds(), (first - start).total_seconds()


# Run silently before each notebook. Figures are closed first (they belong to
# pyplot, not to the namespace), then the namespace is reset to what a new
# Jupyter kernel has -- what ``%reset -f`` does (``shell.reset(new_session=False)``),
# without its two full garbage collections (about 0.3 s per notebook once the
# package is loaded; the interpreter's own collector frees the cycles later);
# the execution count restarts so the cells are numbered from 1.
_RESET = """\
import sys as _beyondauc_sys
if "matplotlib.pyplot" in _beyondauc_sys.modules:
    _beyondauc_sys.modules["matplotlib.pyplot"].close("all")
_beyondauc_sys.modules["os"].chdir({cwd!r})
def _beyondauc_reset(shell, gc=__import__("gc")):
    collect, gc.collect = gc.collect, lambda *args, **kwargs: 0
    try:
        shell.reset(new_session=False)
    finally:
        gc.collect = collect
_beyondauc_reset(get_ipython())
get_ipython().execution_count = 1
"""
# Run silently once in a new Jupyter kernel of a report worker, while the evaluation is being computed.
_WARM = """\
get_ipython().run_line_magic("matplotlib", "inline")
import matplotlib.pyplot as _plt
import beyondauc, beyondauc.plots, beyondauc.report, beyondauc.report.notebook, pyarrow.parquet
_fig = _plt.figure(figsize=(1, 1))
_fig.text(0.5, 0.5, "warm")
_fig.canvas.draw()
_plt.close(_fig)
del _fig, _plt
__import__("gc").freeze()  # what the imports made lives as long as the Jupyter kernel: collections skip it
"""
_START_TIMEOUT = 120  # seconds for a Jupyter kernel to start on a loaded machine
_START_ATTEMPTS = 3  # Jupyter kernels started for one notebook before its failure is reported
_ALIVE_POLL = 1.0  # seconds between two looks at whether a Jupyter kernel that has not replied is still alive


class JupyterKernel:
    """A Jupyter kernel that runs one notebook after another (see the module docstring).

    ``kernel_name`` is the Jupyter kernelspec's name (papermill's word);
    ``started`` counts the Jupyter kernels it started (the first and every
    replacement).
    """

    def __init__(self, kernel_name: str) -> None:
        self.kernel_name = kernel_name
        self.km = self._client = None
        self.started = 0
        self.abandoned = False
        _watch_dask_task(self)

    def abandon(self) -> None:
        """The run this Jupyter kernel works for is gone: kill it now (from any thread) and start no other."""
        self.abandoned = True
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        if process is not None:
            with contextlib.suppress(OSError):
                process.kill()

    def _alive(self):
        from jupyter_core.utils import run_sync

        return self.km is not None and run_sync(self.km.is_alive)()

    def _start(self):
        from jupyter_core.utils import run_sync

        self.km = jupyter_kernel_manager_class()(kernel_name=self.kernel_name)
        # the Jupyter kernel dies with this process, even a killed one (its own parent poller checks only every second)
        preexec = child_preexec()
        launch = {"preexec_fn": preexec} if preexec is not None else {}
        # its stderr is not the user's terminal: a Jupyter kernel that cannot bind a port (taken by another
        # process between the choice and the bind) dies with a traceback there, and is started again (prepare)
        run_sync(self.km.start_kernel)(
            extra_arguments=list(_JUPYTER_KERNEL_ARGUMENTS), stderr=subprocess.DEVNULL, **launch
        )
        self.started += 1
        # a client on the shell channel only: it sends the resets and reads their replies
        self._client = self.km.blocking_client()
        self._client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)

    def shutdown(self) -> None:
        """Stop the Jupyter kernel now (it has nothing to save); a later notebook starts a new one."""
        from jupyter_core.utils import run_sync

        km, client, self.km, self._client = self.km, self._client, None, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.stop_channels()
        if km is not None:
            with contextlib.suppress(Exception):
                run_sync(km.shutdown_kernel)(now=True)

    def close_clients(self) -> None:
        """Close the channels nbclient opened to the Jupyter kernel (it leaves them open on a manager it does not
        own)."""
        if self.km is not None:
            self.km.close_clients()

    def _silent(self, code, timeout, what):
        msg_id = self._client.execute(code, silent=True, store_history=False)
        deadline = time.monotonic() + timeout
        while True:
            try:
                reply = self._client.get_shell_msg(timeout=min(_ALIVE_POLL, max(deadline - time.monotonic(), 0.001)))
            except queue.Empty:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"{what} took over {timeout:g} s") from None
                if not self._alive():  # e.g. it could not bind its ports: started again by prepare
                    raise RuntimeError(f"{what} failed: the Jupyter kernel died") from None
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        content = reply["content"]
        if content.get("status") != "ok":
            raise RuntimeError(f"{what} failed: {content.get('ename')}: {content.get('evalue')}")

    def _reset(self, cwd, timeout):
        self._silent(_RESET.format(cwd=str(cwd)), timeout, "resetting the Jupyter kernel")

    def warm(self, cwd: str | Path) -> None:
        """Start the Jupyter kernel and import what the notebooks import (and draw a text once, which loads the
        fonts), so that the first notebook does not pay for it; the namespace is reset before a notebook."""
        self.prepare(cwd)
        self._silent(_WARM, _START_TIMEOUT, "warming the Jupyter kernel")

    def prepare(self, cwd: str | Path) -> float:
        """A live Jupyter kernel with a fresh namespace working in ``cwd``; return the seconds spent starting one."""
        if self.abandoned:
            raise RuntimeError("the run this report was for is gone (its Dask task was cancelled)")
        t0 = time.perf_counter()
        started = self.started
        for attempt in range(_START_ATTEMPTS):
            try:
                if not self._alive():
                    self.shutdown()
                    self._start()  # new ports each time
                self._reset(cwd, _START_TIMEOUT)
                break
            except Exception:
                self.shutdown()
                if attempt == _START_ATTEMPTS - 1:
                    raise
        return time.perf_counter() - t0 if self.started > started else 0.0


_DASK_POLL = 0.25  # seconds between two looks at whether the Dask task that runs a Jupyter kernel is still wanted


def _watch_dask_task(jupyter_kernel):
    """On a Dask worker, abandon ``jupyter_kernel`` (kill it) as soon as the task it works for is cancelled.

    The client of a run that is killed is gone, but Dask cannot stop a running
    function: the worker would finish the report, notebook after notebook, in
    the Jupyter kernel.  The scheduler cancels the task at once, though, and a
    thread that watches its state kills the Jupyter kernel; the notebooks left
    then fail at once, without a new one.  Elsewhere (no Dask task runs this
    thread) nothing.
    """
    if "distributed" not in sys.modules:  # a Dask worker has imported it; a local pool worker has no Dask task
        return
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker, key = get_worker(), thread_state.key
    except (ImportError, ValueError, AttributeError):  # not in a task on a worker
        return

    def watch():
        while True:
            time.sleep(_DASK_POLL)
            task = worker.state.tasks.get(key)
            state = None if task is None else task.state
            if state in ("executing", "long-running", "resumed"):
                continue
            if state in (None, "cancelled", "released", "forgotten"):  # given up (or done and forgotten)
                jupyter_kernel.abandon()
            return

    threading.Thread(target=watch, name="beyondauc-dask-task-watch", daemon=True).start()


_FLUSH_WAIT = 0.01  # seconds a new client waits for more IOPub messages of the handshake


def _adapt_protocol(client, msg):
    """Speak the Jupyter kernel's major protocol version, as jupyter_client's own handshake does."""
    from jupyter_client import protocol_version_info

    adapt_version = int(msg["content"]["protocol_version"].split(".")[0])
    if adapt_version != protocol_version_info[0]:
        client.session.adapt_version = adapt_version


@functools.cache
def jupyter_kernel_manager_class():
    from queue import Empty

    import traitlets
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager

    class JupyterKernelClient(AsyncKernelClient):
        """A client that is ready as soon as the Jupyter kernel has answered on both channels.

        nbclient opens a new client for every notebook, and jupyter_client's
        ``wait_for_ready`` ends by waiting 0.2 s for IOPub to stay silent: 0.2 s
        per notebook, while the Jupyter kernel is already running and idle. Here the
        handshake is the same (a ``kernel_info`` reply on the shell channel, then
        a message on IOPub, which proves the subscription is live); the messages
        it leaves on IOPub are drained without that wait (nbclient reads only
        the messages of the requests it sends).
        """

        async def wait_for_ready(self, timeout=None):
            # public API only: ``wait_for_ready`` is what nbclient calls, and every call below is
            # a public method of jupyter_client's AsyncKernelClient
            deadline = time.monotonic() + (_START_TIMEOUT if timeout is None else timeout)
            while True:
                self.kernel_info()
                try:
                    msg = await self.shell_channel.get_msg(timeout=1)
                except Empty:
                    msg = None
                if msg is not None and msg["msg_type"] == "kernel_info_reply":
                    try:
                        await self.iopub_channel.get_msg(timeout=0.2)
                    except Empty:
                        pass
                    else:
                        _adapt_protocol(self, msg)
                        break
                if not await self.is_alive():
                    raise RuntimeError("Jupyter kernel died before replying to kernel_info")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Jupyter kernel didn't respond in {timeout} seconds")
            while True:
                try:
                    await self.iopub_channel.get_msg(timeout=_FLUSH_WAIT)
                except Empty:
                    break

    class JupyterKernelManager(AsyncKernelManager):
        """Remembers the clients it made, so their channels can be closed after each notebook."""

        @traitlets.default("client_factory")
        def _client_factory_default(self):
            return JupyterKernelClient

        def client(self, **kwargs):
            client = super().client(**kwargs)
            self.__dict__.setdefault("_beyondauc_clients", []).append(client)
            return client

        def close_clients(self):
            clients = self.__dict__.pop("_beyondauc_clients", [])
            for client in clients:
                with contextlib.suppress(Exception):
                    client.stop_channels()

    return JupyterKernelManager


_WORKER_JUPYTER_KERNEL = None


def worker_jupyter_kernel(kernel_name):
    """This process's Jupyter kernel, kept for the next notebook and stopped when the process ends."""
    global _WORKER_JUPYTER_KERNEL
    if _WORKER_JUPYTER_KERNEL is None or _WORKER_JUPYTER_KERNEL.kernel_name != kernel_name:
        if _WORKER_JUPYTER_KERNEL is not None:
            _WORKER_JUPYTER_KERNEL.shutdown()
        _WORKER_JUPYTER_KERNEL = JupyterKernel(kernel_name)
        # worker processes end through multiprocessing, which runs these finalizers (not atexit)
        multiprocessing.util.Finalize(_WORKER_JUPYTER_KERNEL, _WORKER_JUPYTER_KERNEL.shutdown, exitpriority=10)
    return _WORKER_JUPYTER_KERNEL


def run_with_papermill(src, dst, parameters, jupyter_kernel, timeout):
    """Run one notebook with papermill in ``jupyter_kernel`` into ``dst``.

    Returns ``(status, error, seconds, kernel_seconds, new_kernel, notebook)``
    (``notebook``: the executed notebook node as written to ``dst``); the
    notebook runs in ``dst``'s folder (relative paths in its parameters are
    relative to where the executed notebook is).  papermill writes ``dst``
    once, at the end (or with its error markers when a cell fails), not before
    and after every cell: each write serialises and validates the whole
    notebook, images included, which cost about a second per model.
    """
    import nbformat
    import papermill

    t0 = time.perf_counter()
    status, error, start_seconds, started, nb = "ok", None, math.nan, jupyter_kernel.started, None
    try:
        start_seconds = jupyter_kernel.prepare(Path(dst).parent.resolve())
        nb = papermill.execute_notebook(
            str(src),
            str(dst),
            parameters=parameters,
            kernel_name=jupyter_kernel.kernel_name,
            km=jupyter_kernel.km,
            progress_bar=False,
            log_output=False,
            execution_timeout=timeout,
            request_save_on_cell_execute=False,
        )
    except Exception as exc:  # noqa: BLE001 - a failing notebook fails its model's report, not the run
        status, error = "failed", error_of(exc)
        jupyter_kernel.shutdown()  # it may be dead, or still busy after a timeout: the next notebook gets a new one
    finally:
        jupyter_kernel.close_clients()
    seconds = time.perf_counter() - t0
    kernel_seconds = math.nan
    if nb is None and Path(dst).exists():
        with contextlib.suppress(Exception):
            nb = nbformat.read(str(dst), as_version=4)
    elif nb is None:  # papermill died before writing: keep the input so the report still links a notebook
        shutil.copyfile(src, dst)
        nb = nbformat.read(str(dst), as_version=4)
    if nb is not None:
        _, until_first_cell = _timing(nb)
        kernel_seconds = start_seconds + until_first_cell
    return status, error, seconds, kernel_seconds, jupyter_kernel.started > started, nb
