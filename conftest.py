"""Shared pytest set-up for the tests and the doctests.

Figures are drawn off-screen and closed after every test, so no test sees
another's figures and memory stays flat.
"""

import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test (or doctest) opened."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")
