"""The ``__main__`` of a worker that a pool of :mod:`beyondauc.utils.parallel` starts by ``spawn``.

``multiprocessing`` runs the parent's main script in a spawned worker before it unpickles
anything else; while a pool starts its workers, that script is this file (``script_hidden``).
It runs before the worker imports the package (a second or more of a busy machine's CPU)
and asks Linux for SIGKILL when the parent ends, so that a worker whose run is killed
during that import ends at once; a worker whose run was killed before it asked (the pool
names its process in ``BEYONDAUC_SPAWN_PARENT``) ends before the import. ``die_with_parent`` asks again after the import and
ends the worker if the parent was gone before this ran. Standard library only, and
nothing elsewhere than on Linux, nor when imported as a module (as ``--doctest-modules`` does):
only in a spawned worker, where ``multiprocessing`` runs it as ``__mp_main__``.

The worker starts with SIGINT, SIGTERM and SIGHUP blocked (the pool blocks them while it starts
its workers); here, after asking for the parent-death signal (first: the sooner
it is asked, the smaller the window in which a killed run leaves it alive) and before the slow
import, it ignores SIGINT (a Ctrl-C reaches the whole process
group; the run stops its workers itself) and takes SIGTERM and SIGHUP by their default action
(the worker ends, without a traceback), then unblocks them, as ``worker_signals`` does later.
"""

import sys

if __name__ == "__mp_main__" and sys.platform.startswith("linux"):
    import ctypes
    import signal

    try:
        _prctl = ctypes.CDLL(None, use_errno=True).prctl
        _prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
        _prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG (as beyondauc.utils.parallel asks)
    except (OSError, AttributeError):
        pass
    else:  # the run ended before the signal was asked for: nobody would send it; end before the slow import
        import os

        _parent = os.environ.get("BEYONDAUC_SPAWN_PARENT", "")
        if _parent.isdigit() and os.getppid() != int(_parent):
            os._exit(1)

if __name__ == "__mp_main__":
    import signal as _signal

    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    _others = [getattr(_signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(_signal, n)]
    for _signum in _others:
        _signal.signal(_signum, _signal.SIG_DFL)
    if hasattr(_signal, "pthread_sigmask"):
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [_signal.SIGINT, *_others])
