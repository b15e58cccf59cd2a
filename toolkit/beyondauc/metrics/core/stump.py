"""The stump calibrator on the score grid, for many fits at once.

A depth-1 Gini tree, ``DecisionTreeClassifier(max_depth=1)``'s search (first
best split, majority leaves with ties to the negative class) on the float64
scores; with ``reference="opitz2024"``, scikit-learn's tree on the raw scores
in float32.  See :mod:`beyondauc.metrics.core.fitting` for the details and for
what every calibrator shares.
"""

from __future__ import annotations

import numpy as np

from .fitting import EPSILON, override_single, single_class
from .kernel import stump_best

__all__: list[str] = []

# sklearn.tree._partitioner.FEATURE_THRESHOLD: a float32 constant, added to
# float32 feature values in float32 arithmetic (see :func:`_splittable`)
_FEATURE_THRESHOLD = np.float32(1e-7)


def _float32_grid(x, pos, neg):
    """Merge grid values that collapse in float32 (scikit-learn's trees see float32 features).

    Beyond float32's range (|s| > 3.4e38) a score is +-inf to the tree, all one value
    (scikit-learn itself refuses such input).
    """
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    new = np.concatenate([[True], x32[1:] != x32[:-1]])
    if new.all():
        return x32.astype(np.float64), pos, neg, None
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    return (
        x32[starts].astype(np.float64),
        np.add.reduceat(pos, starts, axis=1),
        np.add.reduceat(neg, starts, axis=1),
        group,
    )


def stump_grid(x, pos, neg, *, reference=None):
    """The grid a stump splits, its counts, and each grid value's place on it (None: the grid itself).

    The scores themselves (scale-free: only their order matters); under
    ``reference="opitz2024"`` rounded to float32 as scikit-learn's trees
    round them (:func:`_float32_grid`).
    """
    if reference == "opitz2024":
        return _float32_grid(x, pos, neg)
    return np.asarray(x, dtype=np.float64), pos, neg, None


def _splittable(lo, hi):
    """Whether a tree may split between float32 values ``lo < hi`` (float64 arrays).

    scikit-learn's splitter skips a position while
    ``feature_values[p] <= feature_values[p - 1] + FEATURE_THRESHOLD``, all
    float32: the sum is rounded to float32, so near 1 (float32 spacing
    ``2**-23`` ~ 1.19e-7) two adjacent float32 values count as tied although
    they are more than 1e-7 apart.  The same test decides a constant feature.
    """
    lo32 = np.asarray(lo).astype(np.float32)
    hi32 = np.asarray(hi).astype(np.float32)
    return hi32 > lo32 + _FEATURE_THRESHOLD  # float32 + float32 -> float32, as in C


def _close_splits(x, pos, neg):
    """(F, m) bool: present grid values a float32 tree may split after (next present value > 1e-7 above, in float32)."""
    F, m = pos.shape
    present = (pos + neg) > 0
    idx = np.where(present, np.arange(m)[None, :], m)
    nxt_incl = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
    nxt = np.concatenate([nxt_incl[:, 1:], np.full((F, 1), m)], axis=1)
    x_ext = np.concatenate([x, [np.inf]])
    return present & _splittable(x[None, :], x_ext[nxt])


def stump_params(x, pos, neg, *, reference=None):
    """Fit depth-1 Gini trees; return (threshold, left_class, right_class), each (F,).

    ``threshold`` is NaN where the tree does not split (its root predicts
    ``left_class``).  ``x`` ascending: the grid of :func:`stump_grid` (float32
    values, as float64, under ``reference="opitz2024"``, where splits need
    values more than 1e-7 apart in float32 as scikit-learn's splitter does).

    Besides the cumulative counts, the search holds one block of grid values at a time
    (:func:`~beyondauc.metrics.core.kernel.stump_best`): two copies of the counts, however long the grid.
    """
    F = pos.shape[0]
    cpos = np.cumsum(pos, axis=1)
    cneg = np.cumsum(neg, axis=1)
    tpos, tneg = cpos[:, -1], cneg[:, -1]
    total = tpos + tneg
    close = None
    if reference == "opitz2024" and (~_splittable(x[:-1], x[1:])).any():
        close = _close_splits(x, pos, neg)  # splits only between present values more than 1e-7 apart
    best, k = stump_best(cpos, cneg, tpos, tneg, total, close)
    rows = np.arange(F)
    root_impurity = 1.0 - (tneg * tneg + tpos * tpos) / np.where(total > 0, total * total, 1.0)
    cp_best, cn_best = cpos[rows, best], cneg[rows, best]
    nl_best = cp_best + cn_best
    valid = (nl_best > 0) & ((total - nl_best) > 0)
    if close is not None:
        valid &= close[rows, best]
    splits = valid & (root_impurity > EPSILON)
    xj, xk = x[best], x[k]
    with np.errstate(invalid="ignore"):  # -inf / 2 + inf / 2 where a row does not split (masked below)
        thr = xj / 2.0 + xk / 2.0
    thr = np.where((thr == xk) | np.isinf(thr), xj, thr)
    left_c = np.where(splits, cp_best > cn_best, tpos > tneg).astype(np.int8)
    right_c = np.where(splits, (tpos - cp_best) > (tneg - cn_best), tpos > tneg).astype(np.int8)
    thr = np.where(splits, thr, np.nan)
    return thr, left_c, right_c


def stump_decision(x, threshold, left_c, right_c):
    """Decisions of fitted stumps at scores ``x`` (float32 values under opitz2024), (F, n)."""
    go_left = ~(x[None, :] > threshold[:, None])  # NaN threshold: always left
    return np.where(go_left, left_c[:, None], right_c[:, None]).astype(bool)


def fit_predict_stump(x, pos, neg, *, reference=None):
    """Stump decisions at every grid value for F fits (scikit-learn's float32 tree under ``reference``)."""
    single = single_class(pos, neg)
    xg, pg, ng, group = stump_grid(x, pos, neg, reference=reference)
    thr, lc, rc = stump_params(xg, pg, ng, reference=reference)
    pred = stump_decision(xg, thr, lc, rc)
    if group is not None:
        pred = pred[:, group]
    return override_single(pred, single)
