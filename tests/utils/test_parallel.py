"""The computation pools' results: values and errors arrive as before, and a worker killed while it sends a
large result never leaves the run waiting for the rest of it (the run could not end: the interpreter's exit waits
for the pool's reading thread)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

from beyondauc.utils.parallel import RemoteTraceback, pool_context, process_pool


def _table(n):
    return np.arange(n, dtype=float)


def _fails(message):
    raise ValueError(message)


def test_values_and_errors_come_back_and_leave_no_file():
    before = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("beyondauc-result-")}
    with process_pool(2, pool_context()) as ex:
        big, small, failing = ex.submit(_table, 3_000_000), ex.submit(_table, 3), ex.submit(_fails, "bad 'x'")
        np.testing.assert_array_equal(big.result(), np.arange(3_000_000, dtype=float))
        np.testing.assert_array_equal(small.result(), [0.0, 1.0, 2.0])
        with pytest.raises(ValueError, match="bad 'x'") as caught:
            failing.result()
    assert isinstance(caught.value.__cause__, RemoteTraceback)
    assert "_fails" in str(caught.value.__cause__)  # the worker's traceback, as the standard pool gives it
    after = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("beyondauc-result-")}
    assert after <= before


SCRIPT = textwrap.dedent("""
    import os, sys, tempfile, time
    from concurrent.futures import wait
    from beyondauc.utils.parallel import pool_context, process_pool

    def big(marker):
        open(marker, "w").close()
        return b"x" * 300_000_000  # sent in many writes: the worker is killed while it sends it

    if __name__ == "__main__":
        marker = sys.argv[1]
        for delay in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8):
            with process_pool(1, pool_context()) as ex:
                future = ex.submit(big, marker)
                while not os.path.exists(marker):
                    time.sleep(0.001)
                time.sleep(delay)
                ex.kill()
            os.unlink(marker)
            # the pool's thread sets it (an error, or the result) once it has seen the worker die
            assert wait([future], timeout=60).done == {future}
        left = [p for p in os.listdir(tempfile.gettempdir()) if p.startswith(f"beyondauc-result-{os.getpid()}-")]
        print("left", left)
""")


def test_a_worker_killed_while_it_sends_a_large_result_does_not_hang_the_run(tmp_path):
    script = tmp_path / "kill_while_sending.py"
    script.write_text(SCRIPT)
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "started")], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "left []"


def test_a_result_removed_before_it_was_read_is_that_tasks_error_and_prints_nothing(tmp_path, capsys):
    """The pool killed (its result files removed) while a finished task's name was on its way: the callback that
    reads it must set the task's error, never raise (the pool's thread would print it, and the future stay
    pending)."""
    from concurrent.futures import Future

    from beyondauc.utils.parallel import take_result

    inner, outer = Future(), Future()
    inner.set_result(str(tmp_path / "beyondauc-result-gone.pickle"))  # named, never written (or removed)
    take_result(outer, inner)
    assert outer.done() and isinstance(outer.exception(), RuntimeError)
    assert "could not be read" in str(outer.exception())
    cancelled, waiting = Future(), Future()
    cancelled.cancel()
    take_result(waiting, cancelled)
    assert waiting.cancelled()
    from concurrent.futures import wait

    assert wait([waiting], timeout=1).done == {waiting}  # a waiter sees it done, as the pool's own
    assert capsys.readouterr() == ("", "")
