"""Batched calibrators on the score grid of :mod:`beyondauc.metrics.core.kernel`: what they share.

Each calibrator has its module (:mod:`~beyondauc.metrics.core.logistic`,
:mod:`~beyondauc.metrics.core.isotonic`, :mod:`~beyondauc.metrics.core.stump`); this one holds the
class weights and the single-class rule they all apply.

Every function takes the ascending distinct scores ``x`` (n_values,) and the
calibration counts ``pos``/``neg`` of F independent fits, shape
(F, n_values) -- a fit uses only the grid values where it has weight -- and
returns, for each fit, the decision (predict positive) at *every* grid value,
shape (F, n_values).  Evaluating a fit on any examples whose scores lie on the
grid is then one masked sum (:func:`beyondauc.metrics.core.kernel.confusion`).

The fits are scale-free: a positive affine map ``a * s + b`` of the scores
changes no decision (up to rounding at the threshold itself).  They reproduce
scikit-learn's estimators fitted on the same rows:

* ``logistic``: ``make_pipeline(StandardScaler(), LogisticRegression())``
  (the score standardised on each fit's own calibration rows, then L2 with
  C=1 on the standardised coefficient, unpenalized intercept); solved to full
  precision by a vectorised damped Newton method on the two parameters, which
  reaches the optimum lbfgs approximates.  The scores are first divided by a
  power of two near their largest magnitude (exact), so nothing overflows at
  1e300 or underflows at 1e-300.
* ``isotonic``: ``IsotonicRegression(out_of_bounds="clip")`` -- same
  pooling (:func:`scipy.optimize.isotonic_regression`), same knots and the
  same linear interpolation formula as its ``predict``.  Rank-based.
* ``stump``: a depth-1 Gini tree, ``DecisionTreeClassifier(max_depth=1)``'s
  search (first best split, majority leaves with ties to the negative class)
  on the float64 scores: a split between any two distinct calibration values,
  mid-point thresholds.  Only the order of the scores matters, so it is
  scikit-learn's tree on the standardised score wherever that has no two
  values within float32 rounding.  With ``reference="opitz2024"`` it is
  scikit-learn's tree on the raw scores (float32 features, splits only between
  values ``a < b`` with ``b > a + 1e-7`` evaluated in float32, as its splitter
  does), which depends on the scale: shifted by 1e9, or multiplied by 1e50
  (beyond float32's range), every score is one value to it.

A fit whose calibration data has a single class predicts that class.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

EPSILON = np.finfo(np.float64).eps


def class_weighted(pos, neg, class_weight):
    """Apply ``class_weight`` ("balanced" or None) to per-fit counts.

    Balanced weights are scikit-learn's ``n / (2 * n_class)`` computed on each
    fit's own calibration data.
    """
    if class_weight is None:
        return pos, neg
    n_pos = pos.sum(axis=1, keepdims=True)
    n_neg = neg.sum(axis=1, keepdims=True)
    n = n_pos + n_neg
    with np.errstate(divide="ignore", invalid="ignore"):
        w_pos = np.where(n_pos > 0, n / (2.0 * n_pos), 1.0)
        w_neg = np.where(n_neg > 0, n / (2.0 * n_neg), 1.0)
    return pos * w_pos, neg * w_neg


def single_class(pos, neg):
    """(F,) int: 1/0 where a fit saw only positives/negatives, -1 otherwise."""
    has_pos = pos.sum(axis=1) > 0
    has_neg = neg.sum(axis=1) > 0
    out = np.full(pos.shape[0], -1, dtype=np.int8)
    out[has_pos & ~has_neg] = 1
    out[~has_pos & has_neg] = 0
    out[~has_pos & ~has_neg] = 0
    return out


def override_single(pred, single):
    for cls in (0, 1):
        rows = single == cls
        if rows.any():
            pred[rows] = bool(cls)
    return pred
