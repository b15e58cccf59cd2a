"""Curves drawn from one cohort's labels and scores: the ROC, its bootstrap band and the class histograms.

The evaluation stores them and the Displays draw them; both call these functions, so a
figure and the saved table can never disagree.  :func:`roc_tpr_rows` is the batched twin
of :func:`roc_points` that :func:`roc_band` runs on every bootstrap replicate.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...utils.validation import check_int, check_random_state
from ..calibration.ranking import CLIP_QUANTILES, check_clip_quantiles, histogram_range
from ..core.kernel import merged_values, rates, sorted_by_class
from ..uncertainty.bootstrap import check_bootstrap, percentile_interval
from ..uncertainty.replicates import GridSample, ReplicatePlan, bootstrap_replicates
from .cohorts import check_cohort

__all__ = ["ROC_BAND_FPR", "class_histogram", "histogram_edges", "roc_band", "roc_points"]

#: The false positive rates at which :func:`roc_band` reads the true positive rate.
ROC_BAND_FPR = np.linspace(0.0, 1.0, 101)


def roc_points(y: ArrayLike, s: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC of one cohort: ``(fpr, tpr, thresholds)``, thresholds descending.

    The first point is (0, 0) at threshold +inf; one point per unique score
    (predict positive when score >= threshold).

    Examples
    --------
    >>> from beyondauc.metrics import roc_points
    >>> fpr, tpr, thr = roc_points([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    pos, neg = sorted_by_class(np.asarray(y), np.asarray(s, dtype=float))
    thr = merged_values(pos, neg)[::-1]
    sens, spec = rates(thr, pos, neg)
    return np.r_[0.0, 1.0 - spec], np.r_[0.0, sens], np.r_[np.inf, thr]


def roc_tpr_rows(x: np.ndarray, pos: np.ndarray, neg: np.ndarray, fpr_grid: ArrayLike) -> np.ndarray:
    """TPR of each row's ROC polyline at fixed false positive rates, (R, k): :func:`roc_points` batched.

    ``pos``/``neg`` (R, m): class counts per grid value ``x`` (ascending).
    The ROC runs over descending thresholds; at an FPR where the curve rises
    vertically the top of the rise is taken, elsewhere it is interpolated
    linearly (as the curve is drawn).  NaN where a row lacks a class.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.curves import roc_tpr_rows
    >>> pos, neg = np.array([[0.0, 1, 1]]), np.array([[1.0, 1, 0]])
    >>> roc_tpr_rows(np.array([0.1, 0.4, 0.8]), pos, neg, [0.0, 0.25, 1.0]).tolist()
    [[0.5, 0.75, 1.0]]
    """
    R, m = pos.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.concatenate([np.zeros((R, 1)), np.cumsum(pos[:, ::-1], axis=1)], axis=1) / pos.sum(axis=1)[:, None]
        fpr = np.concatenate([np.zeros((R, 1)), np.cumsum(neg[:, ::-1], axis=1)], axis=1) / neg.sum(axis=1)[:, None]
    f = np.asarray(fpr_grid, dtype=np.float64)
    off = 2.0 * np.arange(R)[:, None]
    j = np.searchsorted((fpr + off).ravel(), (f[None, :] + off).ravel(), side="right").reshape(R, -1)
    j = j - (np.arange(R) * (m + 1))[:, None]
    i = np.clip(j - 1, 0, m)
    jj = np.clip(j, 0, m)
    r_ = np.arange(R)[:, None]
    f0, f1, t0, t1 = fpr[r_, i], fpr[r_, jj], tpr[r_, i], tpr[r_, jj]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(f1 > f0, t0 + (f[None, :] - f0) * (t1 - t0) / (f1 - f0), t0)
    return out


def roc_band(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    random_state: int | None = 0,
    pos_label: object = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pointwise bootstrap band of the ROC: the TPR's percentile interval at fixed FPRs.

    The examples are resampled within each class (``n_bootstrap`` seeded
    replicates, each keeping the class sizes); each replicate's ROC is read
    at the false positive rates :data:`ROC_BAND_FPR` (0, 0.01, ..., 1) as
    :func:`roc_points` draws it, all replicates at once (:func:`roc_tpr_rows`).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels ({0, 1}, {-1, 1}, booleans, or any two values with ``pos_label``).
    y_score : array-like of shape (n,)
        Scores of any scale (higher: more likely positive).
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    random_state : int or None, default=0
    pos_label : scalar, default=None

    Returns
    -------
    fpr, tpr_low, tpr_high : ndarray of shape (101,)
        The false positive rates and the band's bounds there (NaN where no
        replicate has both classes).

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.curves import roc_band
    >>> fpr, low, high = roc_band([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.35, 0.4, 0.8, 0.9], n_bootstrap=200)
    >>> len(fpr), bool((low <= high).all()), float(high[-1])
    (101, True, 1.0)
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    seed = check_random_state(random_state)
    y, s = check_cohort(y_true, y_score, pos_label=pos_label)
    x, inv = np.unique(s, return_inverse=True)
    tpr = bootstrap_replicates(
        GridSample(y, inv.ravel(), y, len(x)),
        lambda pos, neg: roc_tpr_rows(x, pos, neg, ROC_BAND_FPR),
        ReplicatePlan(n_bootstrap, seed),
    )
    low, high = percentile_interval(tpr, confidence_level)
    return ROC_BAND_FPR.copy(), low, high


def histogram_edges(
    values: ArrayLike, *, bins: int = 30, clip_quantiles: tuple[float, float] | None = CLIP_QUANTILES
) -> np.ndarray:
    """Equal-width bin edges over ``values``, robust to a few extreme values.

    The edges span :func:`~beyondauc.metrics.calibration.ranking.histogram_range`: the
    values' [min, max], except that a side whose extreme value lies more than
    twice the distance between the ``clip_quantiles`` quantiles beyond its
    quantile ends at that quantile plus 5% of the distance (values beyond
    belong in the end bins).  ``None``: [min, max].

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.curves import histogram_edges
    >>> histogram_edges([0.0, 0.5, 1.0], bins=4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    bins = check_int(bins, "bins", minimum=1)
    return np.linspace(*histogram_range(values, check_clip_quantiles(clip_quantiles)), bins + 1)


def class_histogram(y: ArrayLike, s: ArrayLike, edges: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Histogram of each class's scores on ``edges``; scores outside go to the end bins.

    Returns ``(edges, negative counts, positive counts, number of scores beyond the edges)``.

    Examples
    --------
    >>> from beyondauc.metrics import class_histogram
    >>> _, neg, pos, beyond = class_histogram([0, 0, 1, 1], [0.1, 0.4, 0.6, 2.0], [0.0, 0.5, 1.0])
    >>> neg.tolist(), pos.tolist(), beyond
    ([2, 0], [0, 2], 1)
    """
    y = np.asarray(y)
    s = np.asarray(s, dtype=float)
    lo, hi = edges[0], edges[-1]
    clipped = int(((s < lo) | (s > hi)).sum())
    s = np.clip(s, lo, hi)
    return edges, np.histogram(s[y == 0], edges)[0], np.histogram(s[y == 1], edges)[0], clipped
