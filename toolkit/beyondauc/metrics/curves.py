"""Curves drawn from one cohort's labels and scores: the ROC and the class histograms.

The evaluation stores them and the Displays draw them; both call these functions, so a
figure and the saved table can never disagree.
"""

from __future__ import annotations

import numpy as np

from .kernel import _merged_values, _rates, _sorted_by_class

__all__ = ["class_histogram", "roc_points"]


def roc_points(y, s):
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
    pos, neg = _sorted_by_class(np.asarray(y), np.asarray(s, dtype=float))
    thr = _merged_values(pos, neg)[::-1]
    sens, spec = _rates(thr, pos, neg)
    return np.r_[0.0, 1.0 - spec], np.r_[0.0, sens], np.r_[np.inf, thr]


def class_histogram(y, s, edges):
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
