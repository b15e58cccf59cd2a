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

os.environ.setdefault("MPLBACKEND", "Agg")
# One BLAS/OpenMP thread per process, here and in every process a test starts (report runs, kernels, workers):
# the suite runs a worker per core already, and the small arrays of the tests gain nothing from threads. Two
# OpenBLAS threads per worker on two cores spun for most of their CPU time (the scikit-learn reference fits of
# test_calibration.py took three times the CPU).
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
#: test_input_faults.py makes the session's shared demo run (tests/shared_runs.py, a minute) early, so that
#: the files that read it later (test_browser.py, test_verdicts.py) find it made instead of waiting for it.
LONG_FILES = (
    "test_no_survivors.py",
    "test_report.py",
    "test_input_faults.py",
    "test_hostile_names_report.py",
    "test_calibration.py",
    "test_docs.py",
    "test_dask_tasks.py",
    "test_script_guard.py",
    "test_answers_report.py",
    "test_notebooks.py",
    "test_report_evaluation.py",
    "test_output_safety.py",
    "test_pdf.py",
    "test_readme.py",
    "test_browser.py",
    "test_explore_browser.py",
    "test_hostile_names.py",
    "test_bad_models.py",
    "test_input_messages.py",
    "test_no_domains.py",
    "test_scale_free.py",
    "test_plots.py",
    "test_comparison_report.py",
    "test_verdicts.py",
    "test_comparison.py",
    "test_grid_bootstrap.py",
    "test_cli.py",
    "test_demo_data.py",
    "test_evaluate.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long files first, in ``LONG_FILES`` order; every other file after them, as collected."""
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)) if item.path.parent.name == "tests" else len(rank))


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test (or doctest) opened."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")
