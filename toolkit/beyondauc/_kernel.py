"""The private sort-and-threshold kernel every curve and calibrator reuses.

Scores are sorted once and collapsed onto their distinct values (the *grid*);
each grid value carries the (weighted) number of positives and negatives that
have it.  Everything downstream is a cumulative sum, a ``searchsorted`` or an
elementwise operation on that grid, so the cost is O(n log n) for the sort and
O(n) after it, with no Python loop over examples or thresholds.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []


def _grid_counts(y, s, *, sample_weight=None):
    """Collapse scores onto their distinct values.

    Parameters
    ----------
    y : ndarray of {0, 1}
    s : ndarray of float, same length
    sample_weight : ndarray, optional

    Returns
    -------
    values : ndarray, shape (n_distinct,)
        Distinct scores, ascending.
    inverse : ndarray of intp, shape (n,)
        Index of each example's score in ``values``.
    pos, neg : ndarray of float, shape (n_distinct,)
        (Weighted) number of positives and negatives at each distinct score.
    """
    values, inverse = np.unique(s, return_inverse=True)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    pos = np.bincount(inverse, weights=y * w, minlength=len(values))
    neg = np.bincount(inverse, weights=(1.0 - y) * w, minlength=len(values))
    return values, inverse.ravel(), pos, neg


def _stacked_counts(inverse, y, groups, n_values, n_groups, *, presorted=False):
    """Counts of positives/negatives per (group, grid value), as (n_groups, n_values).

    ``groups`` gives each example's row in the output (-1 to leave it out;
    with ``presorted=True`` there are none).
    """
    if presorted:
        flat = groups.astype(np.int64) * n_values + inverse
        yk = y.astype(np.float64)
    else:
        keep = groups >= 0
        flat = groups[keep].astype(np.int64) * n_values + inverse[keep]
        yk = y[keep].astype(np.float64)
    size = n_groups * n_values
    pos = np.bincount(flat, weights=yk, minlength=size).reshape(n_groups, n_values)
    tot = np.bincount(flat, minlength=size).reshape(n_groups, n_values).astype(np.float64)
    return pos, tot - pos


def _auc_from_counts(pos, neg):
    """ROC AUC (ties count one half) from grid counts, along the last axis.

    Returns NaN where a row has only one class.
    """
    pos = np.asarray(pos, dtype=np.float64)
    neg = np.asarray(neg, dtype=np.float64)
    n_pos = pos.sum(axis=-1)
    n_neg = neg.sum(axis=-1)
    neg_below = np.cumsum(neg, axis=-1) - neg
    num = (pos * (neg_below + 0.5 * neg)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = num / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


def _confusion(pred, pos, neg):
    """Confusion counts of grid predictions against grid counts.

    ``pred`` (bool, ``(..., n_values)``) is the decision at each grid value;
    ``pos``/``neg`` the examples to evaluate there.  Returns tp, fp, fn, tn.
    """
    tp = np.where(pred, pos, 0.0).sum(axis=-1)
    fp = np.where(pred, neg, 0.0).sum(axis=-1)
    fn = pos.sum(axis=-1) - tp
    tn = neg.sum(axis=-1) - fp
    return tp, fp, fn, tn


def _scores_from_confusion(tp, fp, fn, tn):
    """Accuracy, Cohen's kappa, balanced accuracy, MCC and F1 from counts.

    Accuracy and kappa use exactly scikit-learn's arithmetic, so the numbers
    are bit-identical to ``accuracy_score`` / ``cohen_kappa_score``.
    Undefined values (one class only) are NaN.
    """
    tp, fp, fn, tn = (np.asarray(a, dtype=np.float64) for a in (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    true_pos, true_neg = tp + fn, tn + fp
    pred_pos, pred_neg = tp + fp, tn + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = (tp + tn) / n
        # sklearn: expected = outer(pred counts, true counts) / n; k = off-diagonal ratio
        expected_off = pred_neg * true_pos / n + pred_pos * true_neg / n
        kappa = 1.0 - (fp + fn) / expected_off
        kappa = np.where(expected_off > 0, kappa, np.nan)
        tpr = tp / true_pos
        tnr = tn / true_neg
        balanced = np.where((true_pos > 0) & (true_neg > 0), (tpr + tnr) / 2, np.nan)
        denom = np.sqrt(pred_pos * pred_neg * true_pos * true_neg)
        # a constant prediction on two-class data has MCC 0 (scikit-learn's convention)
        mcc = np.where(denom > 0, (tp * tn - fp * fn) / denom, np.where((true_pos > 0) & (true_neg > 0), 0.0, np.nan))
        f1_den = 2 * tp + fp + fn
        f1 = np.where(f1_den > 0, 2 * tp / f1_den, np.nan)
    return {
        "accuracy": accuracy,
        "kappa": kappa,
        "balanced_accuracy": balanced,
        "mcc": mcc,
        "f1": f1,
    }
