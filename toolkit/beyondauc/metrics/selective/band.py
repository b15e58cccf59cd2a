"""Bootstrap bands and intervals of selective answering on arrays of answers (not a benchmark): the pointwise band
of the coverage-accuracy curve and the intervals of DiSCA, a, b, AURC and the area."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.validation import check_random_state
from ..core.kernel import grid_counts
from ..uncertainty.bootstrap import check_bootstrap
from ..uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    interval_frame,
    jackknife_replicates,
)
from .benchmark_intervals import BAND_COVERAGES, SELECTIVE_BCA, percentile_band
from .curves import accuracy_at_coverages, check_inputs, exact_curve
from .scores import disca, selective_rows

__all__ = ["coverage_accuracy_band", "selective_intervals"]


def coverage_accuracy_band(
    confidence: ArrayLike,
    correct: ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    random_state: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pointwise bootstrap band of the exact coverage-accuracy curve at fixed coverages.

    The examples are resampled with replacement (``n_bootstrap`` seeded
    replicates); each replicate's accuracy at the coverage levels
    :data:`BAND_COVERAGES` (0.02, 0.04, ..., 1) is :func:`accuracy_at_coverage`
    on that replicate, all replicates at once (:func:`accuracy_at_coverages`).
    The confidences are taken as given; :func:`selective_answering` with
    ``n_bootstrap`` refits the calibrator on every replicate instead.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Confidences of any scale (only their order matters).
    correct : array-like of bool, shape (n,)
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    random_state : int or None, default=0

    Returns
    -------
    coverage, accuracy_low, accuracy_high : ndarray of shape (50,)

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.selective.band import coverage_accuracy_band
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 200)
    >>> cov, low, high = coverage_accuracy_band(conf, rng.uniform(size=200) < conf, n_bootstrap=100)
    >>> len(cov), bool((low <= high).all())
    (50, True)
    """
    n_bootstrap, confidence_level = _check_n_bootstrap(n_bootstrap, confidence_level)
    seed = check_random_state(random_state)
    c, ok = check_inputs(confidence, correct, probability=False)
    values, inv, _, _ = grid_counts(ok, c)
    acc = bootstrap_replicates(
        GridSample(np.zeros(len(c), dtype=np.int64), inv, ok, len(values)),
        lambda n_ok, n_wrong: accuracy_at_coverages(values, n_ok, n_wrong, BAND_COVERAGES),
        ReplicatePlan(n_bootstrap, seed),
    )
    return percentile_band(acc, confidence_level)


def _check_n_bootstrap(n_bootstrap, confidence_level):
    """``check_bootstrap`` for an interval that needs replicates: ``n_bootstrap`` >= 1."""
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    return n_bootstrap, confidence_level


def selective_intervals(
    confidence: ArrayLike,
    correct: ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    random_state: int | None = 0,
    tolerance: float = 0.9,
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    resolution: float = 0.01,
) -> pd.DataFrame:
    """Bootstrap intervals of accuracy, area, AURC (percentile), DiSCA, a and b (BCa) for given answers.

    The examples are resampled with replacement (``n_bootstrap`` seeded
    replicates); the confidences are taken as given (no calibrator to refit:
    for that, use :func:`selective_answering` with ``n_bootstrap``).  A
    replicate is a reweighting of the counts at each distinct confidence, so
    all replicates' curves come from one pass of cumulative sums
    (:func:`~beyondauc.metrics.selective.scores.selective_rows`).

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Probabilities in [0, 1] (DiSCA reads the grid curve).
    correct : array-like of bool, shape (n,)
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    random_state : int or None, default=0
    tolerance, weights, resolution
        As in :func:`disca`.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``metric`` (accuracy, area, aurc, disca, a, b) with columns
        ``estimate`` (the point estimate), ``low``, ``high``,
        ``interval_method`` ("BCa" for DiSCA, a and b, whose acceleration
        comes from a delete-a-group jackknife with 20 groups; "percentile"
        for the others) and ``interval_note`` (why an interval is NaN: no
        interval contains its estimate; see the user guide, "Uncertainty").

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import selective_intervals
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 200)
    >>> ok = rng.uniform(size=200) < conf
    >>> ci = selective_intervals(conf, ok, n_bootstrap=200, random_state=1)
    >>> list(ci.columns), bool((ci["low"] <= ci["estimate"]).all() and (ci["estimate"] <= ci["high"]).all())
    (['estimate', 'low', 'high', 'interval_method', 'interval_note'], True)
    """
    n_bootstrap, confidence_level = _check_n_bootstrap(n_bootstrap, confidence_level)
    seed = check_random_state(random_state)
    d = disca(confidence, correct, tolerance=tolerance, weights=weights, resolution=resolution)
    c, ok = check_inputs(confidence, correct, probability=True)
    exact = exact_curve(c, ok, None)
    estimate = {
        "accuracy": float(exact.accuracy[-1]),
        "area": exact.score,
        "aurc": 1.0 - exact.score,
        "disca": d.score,
        "a": d.a,
        "b": d.b,
    }
    values, inv, _, _ = grid_counts(ok, c)
    sample = GridSample(np.zeros(len(c), dtype=np.int64), inv, ok, len(values))
    plan = ReplicatePlan(n_bootstrap, seed)

    def statistic(n_ok, n_wrong):
        return selective_rows(values, n_ok, n_wrong, resolution=d.resolution, tolerance=d.tolerance, weights=d.weights)

    reps = bootstrap_replicates(sample, statistic, plan)
    jack = jackknife_replicates(sample, statistic, plan)
    return interval_frame(
        estimate,
        pd.DataFrame(reps),
        confidence_level,
        jackknife=pd.DataFrame({k: jack[k] for k in SELECTIVE_BCA if k in jack}),
    )
