"""Shared pytest set-up for the tests and the doctests.

Figures are drawn off-screen and closed after every test, so no test sees
another's figures and memory stays flat.  Hypothesis runs derandomized.

The suite runs in parallel (``-n auto --dist loadfile`` in pyproject.toml's addopts:
pytest-xdist, one worker per core, every test file whole in one worker so that a
module's real report is made once).  A run of one test file stays in one process, and
``-p no:xdist`` (or pytest without pytest-xdist) runs everything serially: the xdist
options of the addopts are then accepted and ignored.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
# One BLAS/OpenMP thread per process, here and in every process a test starts (report runs, kernels, workers):
# the suite runs a worker per core already, and the small arrays of the tests gain nothing from threads. Two
# OpenBLAS threads per worker on two cores spun for most of their CPU time (the scikit-learn reference fits of
# tests/metrics/calibration/test_grid.py took three times the CPU).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
if "numpy" in sys.modules:  # loaded before this file (a plugin): the environment came too late for it
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]))

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run and machine, so CI cannot
# fail on a draw nobody has seen; no per-example deadline on a shared machine.
settings.register_profile("beyondauc", derandomize=True, deadline=None)
settings.load_profile("beyondauc")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Without pytest-xdist (``-p no:xdist``, or not installed), accept the addopts' ``-n``/``--dist``."""
    if not pluginmanager.hasplugin("xdist"):
        group = parser.getgroup("xdist (not loaded: options ignored)")
        # pytest keeps lowercase short options to itself; xdist adds its -n with the same call
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None, help="ignored without xdist")
        group.addoption("--dist", dest="dist", default="no", help="ignored without xdist")
        group.addoption("--no-loadscope-reorder", action="store_true", help="ignored without xdist")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` on one test file (or one test): no workers, the file runs in this process."""
    files = {arg.split("::")[0] for arg in config.args}
    if len(files) == 1 and next(iter(files)).endswith(".py"):
        return 0
    return None  # xdist's own answer: the cores (or PYTEST_XDIST_AUTO_NUM_WORKERS)


#: The longest test files (real reports, notebooks, the docs build, property tests), the longest
#: first, as measured with ``--durations=0``. They go to the workers first, so that no long file
#: starts last and the workers end together. A new test file that runs a real report belongs here.
#: data/test_input_faults.py makes the session's shared demo run (tests/helpers/shared_runs.py, a minute) early, so
#: that the files that read it later (end_to_end/test_browser.py, evaluation/test_verdicts.py) find it made instead of
#: waiting for it. Paths are relative to tests/.
LONG_FILES = (
    "end_to_end/test_process_cleanup.py",
    "report/test_runner.py",
    "data/test_input_faults.py",
    "end_to_end/test_hostile_names_report.py",
    "metrics/calibration/test_grid.py",
    "end_to_end/test_docs.py",
    "evaluation/test_dask_tasks.py",
    "utils/test_script_guard.py",
    "report/test_answers_report.py",
    "end_to_end/test_notebooks.py",
    "report/test_report_evaluation.py",
    "utils/test_output.py",
    "report/test_pdf.py",
    "end_to_end/test_readme.py",
    "end_to_end/test_browser.py",
    "end_to_end/test_explore_browser.py",
    "end_to_end/test_hostile_names.py",
    "evaluation/test_bad_models.py",
    "data/test_input_messages.py",
    "evaluation/test_no_domains.py",
    "evaluation/test_scale_free.py",
    "plots/test_displays.py",
    "report/test_comparison_report.py",
    "evaluation/test_verdicts.py",
    "evaluation/test_comparison.py",
    "metrics/calibration/test_grid_bootstrap.py",
    "cli/test_calibrate.py",
    "data/test_demo.py",
    "evaluation/test_evaluate.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long files first, in ``LONG_FILES`` order; every other file after them, as collected."""
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    tests = Path(__file__).parent / "tests"
    items.sort(key=lambda item: rank.get(_under(item.path, tests), len(rank)))


def _under(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (``metrics/core/test_kernel.py``), or None outside it (a doctest)."""
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else None


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test (or doctest) opened."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")
