"""The ``beyondauc`` command's entry point: quiet signals from the first instruction on.

Importing :mod:`beyondauc` loads numpy, pandas, scikit-learn and matplotlib, about a second
before the command can install its signal policy (:mod:`beyondauc.utils.interrupts`).  A
Ctrl-C in that second would print a ``KeyboardInterrupt`` traceback from the middle of an
import.  This module, outside the package and importing only the standard library, runs
first: until the command takes over, SIGINT, SIGTERM and SIGHUP end the process with one
line and the exit status 128 + signal.  Nothing has been written by then: the command has
not started.
"""

from __future__ import annotations

import os
import signal
import sys

_SIGNALS = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


def _stopped_while_starting(signum: int, frame: object) -> None:
    sys.stderr.write(f"beyondauc: interrupted ({_SIGNALS.get(signum, signum)}) while starting; nothing was written\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def main() -> int:
    """Install the start-up handlers, then run :func:`beyondauc.cli.main` (which installs its own)."""
    for signum in _SIGNALS:
        signal.signal(signum, _stopped_while_starting)
    from beyondauc.cli import main as cli_main

    for signum in _SIGNALS:  # the command's own policy from here on (it installs it where it writes)
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
