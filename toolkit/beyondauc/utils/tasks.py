"""Independent tasks, run in this process, in local processes or on a Dask cluster (private).

A stage of a computation is a list of tasks ``func(part, key, arg)``: ``key``
names the part of the data a task reads (a model, say), ``part`` is that part
(``view(data, key)``), ``arg`` what the task does with it (a dataset, say).
:func:`run_tasks` returns the results in task order, whatever runs them, so a
stage's numbers do not depend on how it is split or where it runs:

- in this process (``n_jobs=1``, or a single task);
- in ``n_jobs`` local processes (:mod:`beyondauc.utils.parallel`): the pool's
  workers inherit ``data`` when they fork (never pickled into a task) and
  make each part themselves, once per key in a row;
- on a Dask cluster (``dask``: a ``distributed.Client`` or a scheduler's
  address): each part is made here, scattered once to the cluster, and the
  tasks of its key are submitted with it; results come back as data, so the
  workers need no file system shared with this process.

Memory per task is bounded by its part: a task never receives the whole
``data``.  A :class:`StageProgress` bar (tqdm, on stderr, one line updated in
place; only on a terminal) counts the stage's tasks as they end and
estimates the time left.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .parallel import pool_context, process_pool

__all__: list[str] = []


class StageProgress:
    """A bar counting one stage's tasks with the time left (tqdm on stderr), or nothing when not ``enabled``.

    Shown only where a line updated in place can be seen (stderr a terminal,
    or a Jupyter kernel): a log file gets no bar.

    Examples
    --------
    >>> bar = StageProgress("grid", 3, enabled=False)
    >>> bar.update(); bar.close(); bar.done
    1
    """

    def __init__(self, desc: str, total: int, *, enabled: bool) -> None:
        self.done = 0
        self._bar = None
        if enabled and total > 0 and _interactive():
            from tqdm import tqdm  # text, also in Jupyter (tqdm.auto's widget needs ipywidgets)

            self._bar = tqdm(
                total=total, desc=f"beyondauc {desc}", unit="task", file=sys.stderr, dynamic_ncols=True, leave=False
            )

    def update(self, n: int = 1) -> None:
        """Count ``n`` more tasks done."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        """Show the final count, then remove the bar (the caller prints the stage's line with its time)."""
        if self._bar is not None:
            self._bar.refresh()  # updates within tqdm's minimum interval are not drawn
            self._bar.close()


def _interactive():
    """Whether a bar updated in place can be seen: stderr is a terminal, or this is a Jupyter kernel."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty()) or _in_jupyter_kernel()


def _in_jupyter_kernel():
    """Whether this code runs in a Jupyter kernel's shell (ipykernel imported by a test or a tool is not enough)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def dask_client(dask: Any) -> contextlib.AbstractContextManager:
    """A context giving a ``distributed.Client`` for ``dask`` (a Client, kept open, or an address, closed after)."""
    if dask is None or not isinstance(dask, str):
        return contextlib.nullcontext(dask)
    try:
        from distributed import Client
    except ImportError as exc:
        raise ImportError("`dask` needs the optional extra: pip install 'beyondauc[dask]'") from exc
    return Client(dask)


def run_tasks(
    func: Callable[[Any, Any, Any], Any],
    tasks: Sequence[tuple[Any, Any]],
    *,
    data: Any,
    view: Callable[[Any, Any], Any],
    n_jobs: int = 1,
    dask: Any = None,
    progress: StageProgress | None = None,
) -> list:
    """``[func(view(data, key), key, arg) for key, arg in tasks]``, in this process, local processes or on Dask.

    ``func`` and ``view`` must be module-level functions (picklable by name)
    for processes and Dask; ``tasks`` should come key by key (a key's part
    is made once per run of consecutive tasks).  See the module docstring.

    Examples
    --------
    >>> run_tasks(lambda part, key, arg: part * arg, [("a", 1), ("a", 2), ("b", 3)],
    ...           data={"a": 10, "b": 100}, view=lambda d, k: d[k])
    [10, 20, 300]
    """
    tasks = list(tasks)
    progress = progress or StageProgress("", 0, enabled=False)
    if dask is not None:
        return _on_dask(func, tasks, data, view, dask, progress)
    if n_jobs == 1 or len(tasks) <= 1:
        out, cache = [], _PartCache(data, view)
        for key, arg in tasks:
            out.append(func(cache.part(key), key, arg))
            progress.update()
        return out
    return _in_processes(func, tasks, data, view, n_jobs, progress)


class _PartCache:
    """The part of the last key asked for (a worker runs tasks key by key)."""

    def __init__(self, data, view):
        self.data, self.view, self.key, self.value = data, view, object(), None

    def part(self, key):
        if key != self.key:
            self.key, self.value = key, None  # free the previous part first
            self.value = self.view(self.data, key)
        return self.value


_WORKER_PARTS: _PartCache | None = None


def _init_worker(data, view, n_jobs):
    """A local worker: its parts cache, and its share of the cores for BLAS/OpenMP (as joblib's workers get)."""
    global _WORKER_PARTS
    _WORKER_PARTS = _PartCache(data, view)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=max(1, (os.cpu_count() or 1) // n_jobs))  # no oversubscription of the cores


def _worker(func, key, arg):
    return func(_WORKER_PARTS.part(key), key, arg)


def _in_processes(func, tasks, data, view, n_jobs, progress):
    """The tasks in ``n_jobs`` local processes (forked where possible: ``data`` is inherited, not pickled)."""
    import concurrent.futures

    n_jobs = min(n_jobs, len(tasks))
    with process_pool(n_jobs, pool_context(), initializer=_init_worker, initargs=(data, view, n_jobs)) as ex:
        futures = [ex.submit(_worker, func, key, arg) for key, arg in tasks]
        for _ in concurrent.futures.as_completed(futures):
            progress.update()
        return [f.result() for f in futures]


def _on_dask(func, tasks, data, view, dask, progress):
    """The tasks on a Dask cluster: each key's part scattered once, the results gathered in task order."""
    from distributed import as_completed

    with dask_client(dask) as client:
        futures = []
        for key, group in _by_key(tasks):
            part = client.scatter(view(data, key), hash=False)
            futures += [client.submit(func, part, key, arg, pure=False, key=_task_key(func, key, arg)) for arg in group]
            del part  # the tasks hold the scattered part; it is released with them
        try:
            for _ in as_completed(futures):
                progress.update()
            return client.gather(futures)
        finally:
            client.cancel(futures)  # done: release them (and their parts); failed: stop the others


def _by_key(tasks) -> Iterator[tuple[Any, list]]:
    """``(key, [arg, ...])`` for each run of consecutive tasks of one key."""
    key: Any = object()
    group: list = []
    for k, arg in tasks:
        if group and k != key:
            yield key, group
            group = []
        key = k
        group.append(arg)
    if group:
        yield key, group


def _task_key(func, key, arg):
    """A readable, unique Dask key: the function's name (its task prefix) and a random suffix."""
    import uuid

    while isinstance(func, functools.partial):
        func = func.args[0] if func.args and callable(func.args[0]) else func.func
    return f"{getattr(func, '__name__', 'task').strip('_')}-{uuid.uuid4().hex}"
