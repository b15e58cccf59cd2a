"""Shared pytest set-up for the tests and the doctests.

Figures are drawn off-screen and closed after every test, so no test sees
another's figures and memory stays flat.  Hypothesis runs derandomized.
"""

import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run and machine, so CI cannot
# fail on a draw nobody has seen; no per-example deadline on a shared machine.
settings.register_profile("beyondauc", derandomize=True, deadline=None)
settings.load_profile("beyondauc")


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test (or doctest) opened."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")
