"""DeLong's variance of the AUC when rows are repeated samples of items: Obuchowski's clustered estimator.

DeLong's variance treats every row as an independent example.  When rows
repeat an item (the epochs of an LLM run), an item's samples are correlated
and that variance is too small.  Obuchowski (1997, "Nonparametric analysis of
clustered ROC curve data", *Biometrics* 53) sums the structural components
over each item (cluster) ``i`` instead: with ``V10_i`` the sum of the V10
components of the item's ``m_i`` positive rows, ``V01_i`` that of its ``n_i``
negative rows, ``M`` and ``N`` the numbers of positive and negative rows and
``I10``, ``I01``, ``I`` the numbers of items with a positive row, with a
negative row, and in all::

    S10 = I10 / ((I10 - 1) M) sum_i (V10_i - m_i A)^2
    S01 = I01 / ((I01 - 1) N) sum_i (V01_i - n_i A)^2
    S11 = I / (I - 1) sum_i (V10_i - m_i A) (V01_i - n_i A)
    var(A) = S10 / M + S01 / N + 2 S11 / (M N)

With one row per item it is DeLong's variance exactly.  For the difference
of two AUCs on the same rows (paired), the components are the differences of
the two models' components and ``A`` the difference of the AUCs.  Everything
is O(n log n): one sort per score for the components, sums per item by
``bincount``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.kernel import grid_counts

__all__ = [
    "clustered_auc_variance",
    "clustered_by_dataset",
    "clustered_components",
    "clustered_difference_variance",
    "obuchowski_variance",
]


def clustered_components(y: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray]:
    """(AUC, each row's structural component): V10 for a positive row, V01 for a negative one (ties one half).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.clustered_delong import clustered_components
    >>> auc, v = clustered_components(np.array([0, 1, 0, 1]), np.array([0.1, 0.4, 0.5, 0.8]))
    >>> auc, v.tolist()
    (0.75, [1.0, 0.5, 0.5, 1.0])
    """
    _, inverse, pos, neg = grid_counts(y, s)
    n_pos, n_neg = pos.sum(), neg.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        v10 = (np.cumsum(neg) - neg + 0.5 * neg) / n_neg  # share of negatives below, ties one half
        v01 = (n_pos - np.cumsum(pos) + 0.5 * pos) / n_pos  # share of positives above
        auc = float((pos * v10).sum() / n_pos)
    return auc, np.where(np.asarray(y) == 1, v10[inverse], v01[inverse])


def obuchowski_variance(components: ArrayLike, y: ArrayLike, clusters: ArrayLike, estimate: float) -> float:
    """Obuchowski's clustered variance of an AUC (or AUC difference) from its per-row components.

    ``components`` are the rows' V10 (positive rows) or V01 (negative rows),
    ``clusters`` each row's item (0 .. I - 1) and ``estimate`` the AUC (or
    the difference, for differences of components).  NaN where fewer than
    two items hold a positive or a negative row.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.clustered_delong import clustered_components, obuchowski_variance
    >>> y, s = np.array([0, 1, 0, 1, 1, 0]), np.array([0.1, 0.4, 0.35, 0.8, 0.7, 0.2])
    >>> auc, v = clustered_components(y, s)
    >>> one_per_item = obuchowski_variance(v, y, np.arange(6), auc)
    >>> delong = np.var(v[y == 1], ddof=1) / 3 + np.var(v[y == 0], ddof=1) / 3
    >>> bool(np.isclose(one_per_item, delong))
    True
    """
    v, y = np.asarray(components, dtype=np.float64), np.asarray(y)
    clusters = np.asarray(clusters, dtype=np.int64)
    n_items = int(clusters.max()) + 1 if len(clusters) else 0
    is_pos = (y == 1).astype(np.float64)
    m_i = np.bincount(clusters, weights=is_pos, minlength=n_items)
    n_i = np.bincount(clusters, weights=1.0 - is_pos, minlength=n_items)
    a_i = np.bincount(clusters, weights=v * is_pos, minlength=n_items) - m_i * estimate
    b_i = np.bincount(clusters, weights=v * (1.0 - is_pos), minlength=n_items) - n_i * estimate
    M, N = m_i.sum(), n_i.sum()
    i10, i01, i_all = int((m_i > 0).sum()), int((n_i > 0).sum()), int(((m_i + n_i) > 0).sum())
    if i10 < 2 or i01 < 2:
        return float("nan")
    s10 = i10 / ((i10 - 1) * M) * float((a_i**2).sum())
    s01 = i01 / ((i01 - 1) * N) * float((b_i**2).sum())
    s11 = i_all / (i_all - 1) * float((a_i * b_i).sum())
    return float(s10 / M + s01 / N + 2 * s11 / (M * N))


def clustered_auc_variance(y: ArrayLike, s: ArrayLike, clusters: ArrayLike) -> tuple[float, float]:
    """(AUC, Obuchowski's clustered variance) of scores ``s`` for 0/1 labels ``y``, rows grouped in ``clusters``.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.clustered_delong import clustered_auc_variance
    >>> auc, var = clustered_auc_variance([0, 1, 0, 1, 1, 0], [0.1, 0.4, 0.5, 0.8, 0.7, 0.2], [0, 0, 1, 1, 2, 2])
    >>> round(auc, 4), round(var, 4)
    (0.8889, 0.0123)
    """
    y, s = np.asarray(y), np.asarray(s, dtype=np.float64)
    auc, v = clustered_components(y, s)
    return auc, obuchowski_variance(v, y, clusters, auc)


def clustered_difference_variance(
    y: ArrayLike, a: ArrayLike, b: ArrayLike, clusters: ArrayLike
) -> tuple[float, float, float]:
    """(AUC of ``a``, AUC of ``b``, clustered variance of their difference) on the same rows (paired).

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.clustered_delong import clustered_difference_variance
    >>> y, c = [0, 1, 0, 1, 1, 0, 0, 1], [0, 0, 1, 1, 2, 2, 3, 3]
    >>> a, b, var = clustered_difference_variance(y, [.1, .4, .35, .8, .7, .2, .3, .9], [.2, .3, .1, .6, .8, .4, .5, .7],
    ...                                           c)
    >>> round(a - b, 4), round(var, 4)
    (0.125, 0.0104)
    """
    y = np.asarray(y)
    auc_a, va = clustered_components(y, np.asarray(a, dtype=np.float64))
    auc_b, vb = clustered_components(y, np.asarray(b, dtype=np.float64))
    return auc_a, auc_b, obuchowski_variance(va - vb, y, clusters, auc_a - auc_b)


def clustered_by_dataset(
    y: ArrayLike, s: ArrayLike, items: ArrayLike, order: ArrayLike, bounds: ArrayLike
) -> np.ndarray:
    """The clustered variance of the AUC of each dataset's rows ``order[bounds[d]:bounds[d + 1]]``.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.clustered_delong import clustered_by_dataset
    >>> y, s = np.array([0, 1, 0, 1, 1, 0] * 2), np.array([0.1, 0.4, 0.5, 0.8, 0.7, 0.2] * 2)
    >>> clustered_by_dataset(y, s, np.repeat(np.arange(6), 2), np.arange(12), np.array([0, 6, 12])).round(4).tolist()
    [0.0123, 0.0123]
    """
    y, s, items, order, edges = (np.asarray(v) for v in (y, s, items, order, bounds))
    out = np.full(len(edges) - 1, np.nan)
    for d in range(len(out)):  # a loop over datasets
        rows = order[edges[d] : edges[d + 1]]
        if len(rows):
            out[d] = clustered_auc_variance(y[rows], s[rows], np.unique(items[rows], return_inverse=True)[1])[1]
    return out
