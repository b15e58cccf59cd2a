"""From bootstrap replicates to intervals: percentile, BCa, and intervals that contain their estimate.

The replicates come from :mod:`beyondauc.metrics.uncertainty.bootstrap` (drawn
as counts) through the replicate engine
(:mod:`beyondauc.metrics.uncertainty.replicates`); here they become intervals.
A percentile interval leaves undefined (NaN) replicates out.  BCa corrects
for a bootstrap that is biased or skewed: its acceleration comes from a
jackknife (:func:`jackknife_acceleration`).  :func:`honest_interval` gives
NaN and says why where no interval can contain its estimate.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "bca_interval",
    "honest_interval",
    "jackknife_acceleration",
    "nanquantile_slices",
    "percentile_interval",
]


def nanquantile_slices(a, q, axis=0):
    """``np.nanquantile(a, q, axis=axis)`` (its default "linear" method), for all slices at once.

    numpy computes a quantile that ignores NaN one 1-d slice at a time
    (``apply_along_axis``), a Python loop over the slices; here every slice
    is sorted at once (NaN last), and the two order statistics around the
    virtual index ``q * (n - 1)`` of each slice (``n`` its non-NaN values)
    are interpolated as numpy's ``_lerp`` does, so the results are the same
    to the last bit (tested).  An all-NaN slice gives NaN.
    """
    s = np.sort(np.moveaxis(np.asarray(a, dtype=float), axis, -1), axis=-1)
    if s.shape[-1] == 0:
        return np.full(s.shape[:-1], np.nan)
    n = np.count_nonzero(~np.isnan(s), axis=-1)
    virtual = q * (n - 1).astype(float)
    lo = np.floor(virtual)
    t = virtual - lo
    lo = np.clip(lo.astype(np.intp), 0, s.shape[-1] - 1)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    a_lo = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    b_hi = np.take_along_axis(s, hi[..., None], axis=-1)[..., 0]
    diff = b_hi - a_lo
    out = np.asarray(a_lo + diff * t)
    np.subtract(b_hi, diff * (1 - t), out=out, where=t >= 0.5)
    out[n == 0] = np.nan
    return out[()] if out.ndim == 0 else out


def percentile_interval(replicates: ArrayLike, confidence_level: float, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval (low, high) of replicates along ``axis``, ignoring NaN replicates.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.bootstrap import percentile_interval
    >>> low, high = percentile_interval([0.6, 0.7, 0.8, float("nan")], 0.5)
    >>> float(low), float(high)
    (0.65, 0.75)
    """
    alpha = (1.0 - confidence_level) / 2.0
    with np.errstate(invalid="ignore"):
        return nanquantile_slices(replicates, alpha, axis=axis), nanquantile_slices(replicates, 1.0 - alpha, axis=axis)


def bca_interval(
    replicates: np.ndarray, estimate: float, acceleration: float, confidence_level: float
) -> tuple[float, float] | None:
    """BCa interval (Efron 1987) from replicates, or None where it is not defined.

    The bias correction z0 counts the replicates below the estimate (ties
    count one half, for a discrete statistic such as the AUC); the
    ``acceleration`` comes from the statistic's jackknife (for the AUC:
    :func:`beyondauc.metrics.uncertainty.intervals.auc_ci`).  None when every replicate
    lies on one side of the estimate, or the acceleration or the adjusted
    levels are not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import bca_interval
    >>> reps = np.linspace(0.5, 0.9, 101)
    >>> [round(v, 3) for v in bca_interval(reps, 0.7, 0.0, 0.9)]
    [0.52, 0.88]
    >>> bca_interval(reps, 1.0, 0.0, 0.9) is None
    True
    """
    from scipy.stats import norm

    below = np.mean(replicates < estimate) + 0.5 * np.mean(replicates == estimate)
    if not 0 < below < 1:
        return None
    z0 = norm.ppf(below)
    if not np.isfinite(acceleration):
        return None
    z = norm.ppf([0.5 - confidence_level / 2, 0.5 + confidence_level / 2])
    levels = norm.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    if not np.all(np.isfinite(levels)):
        return None
    low, high = np.quantile(replicates, levels)
    return float(low), float(high)


# -- BCa for the statistics the bootstrap biases -------------------------------------------

_ROUNDING = 1e-12  # relative: replicates this close to the estimate are ties with it


def jackknife_acceleration(jackknife: ArrayLike) -> float:
    """BCa acceleration from delete-a-group jackknife values, pooled over independent samples.

    ``jackknife`` is (G,) -- the statistic with each group left out -- or
    (D, G) for a mean over D independently resampled datasets (row d: dataset
    d's jackknife; its influence on the mean is its own, scaled by 1/D, which
    cancels).  With ``U = mean_g(theta_(g)) - theta_(g)`` per row,
    ``a = sum U^3 / (6 (sum U^2)^1.5)`` over every defined value (Efron &
    Tibshirani 1993, eq. 14.15; a group's U sums the influence values of its
    members, whose cubes and squares add up as the members' do, so the ratio
    estimates the same skewness as the leave-one-out jackknife).  NaN
    values (a left-out group that makes the statistic undefined) are left
    out; NaN when no spread remains.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.bootstrap import jackknife_acceleration
    >>> round(jackknife_acceleration([1.0, 1.0, 1.0, 0.0]), 4)  # one group pulls the statistic down
    0.0962
    """
    jk = np.atleast_2d(np.asarray(jackknife, dtype=float))
    defined = np.isfinite(jk)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(defined, jk, 0.0).sum(axis=1, keepdims=True) / defined.sum(axis=1, keepdims=True)
    u = (mean - jk)[defined & np.isfinite(mean)]
    ss = float(np.sum(u**2))
    if not ss > 0:
        return np.nan
    return float(np.sum(u**3) / (6.0 * ss**1.5))


def honest_interval(
    replicates: ArrayLike, estimate: float, confidence_level: float, *, acceleration: float | None = None
) -> tuple[float, float, str, str]:
    """(low, high, method, note): a bootstrap interval that contains its estimate, or NaN and why.

    With ``acceleration`` (a float, NaN read as 0: the bias-corrected
    percentile interval) the interval is BCa (Efron 1987): the bias
    correction z0 = Phi^-1(share of replicates below the estimate, ties one
    half); otherwise the percentile interval.  NaN replicates are left out.
    Where the interval would not contain the estimate -- every replicate on
    one side of it (z0 infinite), or so few on one side that BCa's adjusted
    levels pass the estimate (|z0| about Phi^-1(1 - alpha/2) or more), or a
    percentile interval that misses it -- no interval is given: (NaN, NaN)
    with ``note`` saying why.  The bootstrap distribution is then not
    centred enough on the estimate to describe its sampling error, and any
    interval drawn from it would either exclude the estimate or claim a
    coverage it does not have.

    Returns
    -------
    low, high : float
    method : {"BCa", "percentile"}
    note : str
        '' when the interval is given (or the estimate itself is undefined).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import honest_interval
    >>> reps = np.linspace(0.5, 0.9, 101)
    >>> low, high, method, note = honest_interval(reps, 0.7, 0.9, acceleration=0.0)
    >>> round(low, 3), round(high, 3), method, note
    (0.52, 0.88, 'BCa', '')
    >>> honest_interval(reps + 0.3, 0.7, 0.9, acceleration=0.0)[3]
    'every bootstrap replicate lies above the estimate'
    """
    from scipy.special import ndtr, ndtri

    method = "percentile" if acceleration is None else "BCa"
    reps = np.asarray(replicates, dtype=float)
    reps = reps[~np.isnan(reps)]
    if np.isnan(estimate):
        return np.nan, np.nan, method, ""
    if not len(reps):
        return np.nan, np.nan, method, "every bootstrap replicate is undefined"
    # a replicate within rounding of the estimate is a tie (a refitted replicate of the same data can
    # differ from the point estimate in the last bits)
    tie = np.abs(reps - estimate) <= _ROUNDING * max(1.0, abs(estimate))
    below = np.mean((reps < estimate) & ~tie) + 0.5 * np.mean(tie)
    if acceleration is None:
        ends = percentile_interval(reps, confidence_level)
    else:
        if below in (0.0, 1.0):
            side = "above" if below == 0 else "below"
            return np.nan, np.nan, method, f"every bootstrap replicate lies {side} the estimate"
        a = 0.0 if not np.isfinite(acceleration) else float(acceleration)
        z0 = ndtri(below)
        z = ndtri(np.array([0.5 - confidence_level / 2, 0.5 + confidence_level / 2]))
        denominator = 1.0 - a * (z0 + z)
        if not np.all(denominator > 0):
            return np.nan, np.nan, method, f"BCa is undefined (acceleration {a:.3g} too large)"
        ends = np.quantile(reps, ndtr(z0 + (z0 + z) / denominator))
    low, high = float(ends[0]), float(ends[1])
    slack = _ROUNDING * max(1.0, abs(estimate))
    low = min(low, estimate) if low - slack <= estimate else low  # an end within rounding of the estimate
    high = max(high, estimate) if estimate <= high + slack else high
    if not low <= estimate <= high:
        few = "below" if below < 0.5 else "above"
        return (
            np.nan,
            np.nan,
            method,
            (
                f"only {min(below, 1 - below):.1%} of the bootstrap replicates lie {few} "
                f"the estimate: too few for a {confidence_level:.0%} interval around it"
            ),
        )
    return float(low), float(high), method, ""
