"""Bounded Monte Carlo: the scores the replicates run on, on at most ``cells`` cells per stratum.

Point estimates are exact on the user's values.  What is Monte Carlo anyway
(bootstrap replicates, the jackknife of BCa, ``indata``'s random splits) needs
no more resolution than its own sampling error, so it may run on coarser
scores: :func:`cell_scores` maps every example to a *cell* and gives it its
cell's representative score.  Every grid of the replicate engine (the
distinct values of the scores, :mod:`beyondauc.metrics.uncertainty.bootstrap`) then has
at most one value per cell, and its cost per replicate follows the cells, not
the examples.

The cells of a model are built per stratum (dataset and class, or cohort and
class): a stratum with at most ``cells`` distinct scores gives each of its
values a cell of its own; a larger one is cut into ``cells`` quantile cells
of equal counts.  The cuts of all strata are pooled (so the cells of every
stratum are at least as fine as its own cuts) and each cell's representative
is the mean of its examples' scores, kept inside the cell (a cell of one
distinct score keeps that score exactly).  So the order of the scores is
kept, ties stay ties, and a model whose strata have few distinct scores runs
exactly as with ``cells=None``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...utils.validation import check_int
from .bootstrap import strata_of

__all__ = ["cell_scores", "check_cells"]


def check_cells(cells: object, name: str = "cells") -> int | None:
    """``cells`` checked: None (per value) or an int >= 2, else a one-line ValueError naming ``name``.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.cells import check_cells
    >>> check_cells(None), check_cells(512)
    (None, 512)
    """
    if cells is None:
        return None
    return check_int(cells, name, minimum=2, hint=" or None (every distinct score its own cell)")


def _cuts(
    s_sorted: np.ndarray, start: np.ndarray, size: np.ndarray, n_distinct: np.ndarray, stratum: np.ndarray, cells: int
) -> np.ndarray:
    """The cut values of every stratum (sorted runs of ``s_sorted``): its distinct values, or ``cells`` quantiles."""
    n = len(s_sorted)
    rank = np.arange(n) - start[stratum]  # each position's rank inside its stratum
    bucket = np.where(n_distinct[stratum] <= cells, -1, (rank * cells) // size[stratum])
    last = np.ones(n, dtype=bool)  # the last position of each (stratum, bucket) run, or of each value's run
    last[:-1] = (stratum[1:] != stratum[:-1]) | np.where(
        bucket[:-1] < 0, s_sorted[1:] != s_sorted[:-1], bucket[1:] != bucket[:-1]
    )
    return np.unique(s_sorted[last])


def cell_scores(s: ArrayLike, *keys: ArrayLike, cells: int | None) -> np.ndarray:
    """The scores ``s`` with each replaced by its cell's representative (``cells=None``: ``s`` itself).

    Parameters
    ----------
    s : array of float, shape (n,)
        One model's scores.
    *keys : arrays, shape (n,)
        The strata (e.g. dataset code and label): the cells are built per
        distinct combination.
    cells : int or None
        At most this many cells per stratum: the distinct values when there
        are fewer, else quantile cells of equal counts.  None: every
        distinct value is its own cell (``s`` is returned as it is).

    Returns
    -------
    ndarray of float, shape (n,)
        Each example's cell representative: the mean of its cell's scores,
        inside the cell; exactly its score when its cell holds one value.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.cells import cell_scores
    >>> s = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    >>> cell_scores(s, np.zeros(8), cells=4).tolist()
    [0.15000000000000002, 0.15000000000000002, 0.35, 0.35, 0.55, 0.55, 0.75, 0.75]
    >>> bool((cell_scores(s, np.zeros(8), cells=8) == s).all())
    True
    """
    s = np.asarray(s)
    if cells is None or len(s) == 0:
        return s
    code = strata_of(*keys) if keys else np.zeros(len(s), dtype=np.int64)
    order = np.lexsort((s, code))
    ss, cs = s[order], code[order]
    size = np.bincount(cs)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    new = np.ones(len(ss), dtype=bool)
    new[1:] = (ss[1:] != ss[:-1]) | (cs[1:] != cs[:-1])
    n_distinct = np.bincount(cs, weights=new).astype(np.int64)
    cuts = _cuts(ss, start, np.maximum(size, 1), n_distinct, cs, cells)
    if len(cuts) == len(np.unique(ss)):  # every distinct value is a cut: each its own cell
        return s
    cell = np.searchsorted(cuts, s, side="left")  # cell k holds the scores in (cuts[k - 1], cuts[k]]
    g = np.sort(s)  # every cut is a score: no cell is empty
    stop = np.searchsorted(g, cuts, side="right")
    first = np.concatenate([[0], stop[:-1]])
    mean = np.add.reduceat(g, first) / (stop - first)
    low = g[first]
    rep = np.where(low == cuts, cuts, np.clip(mean, low, cuts))  # one value: itself; else the mean, inside
    return rep[cell]
