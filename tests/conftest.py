"""Fixtures of the test files: the runs shared by several files (see ``helpers.shared_runs``), the demo benchmark.

The set-up shared with the doctests (figures, threads, Hypothesis, the order of the long files) is
the repository's root ``conftest.py``.
"""

from __future__ import annotations

import pytest

from beyondauc import load_demo
from helpers.shared_runs import SharedRun, demo_argv, shared_run


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory):
    """``beyondauc demo --out DIR`` as the README's first command runs it, once per session (every worker).

    Its output is read-only for the tests: copy it before changing anything. At the end of the session the
    folder must hold exactly the files the run wrote, unchanged.
    """
    run: SharedRun = shared_run(tmp_path_factory, "demo", demo_argv())
    run.check_ok()
    run.check_unchanged()
    yield run
    run.check_unchanged()


@pytest.fixture(scope="module")
def demo():
    """The embedded demo benchmark, loaded once per test file."""
    return load_demo()
