"""The process pools of the computations (private).

Every pool forks where the platform can (the workers inherit the data and the
imported package instead of pickling and importing them again).  The
libraries that the computations import inside their functions (scikit-learn,
scipy.stats/optimize/sparse: a report kernel, which only draws, skips them)
are imported here first, so that the forked workers inherit them too instead
of each importing them again (about 1 s of CPU per worker and pool).
"""

from __future__ import annotations

import importlib
import multiprocessing

__all__: list[str] = []

#: Imported by the functions that fit, test or resample, not by ``import beyondauc``.
FITTING_MODULES = ("sklearn.linear_model", "sklearn.model_selection", "scipy.stats", "scipy.optimize",
                   "scipy.sparse")


def pool_context():
    """The multiprocessing context of a computation pool: ``fork`` where available, else the default."""
    for name in FITTING_MODULES:
        importlib.import_module(name)
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)
