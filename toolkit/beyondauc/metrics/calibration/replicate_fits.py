"""The fits of the grid bootstrap's replicates: batched calibrator fits on reweighted counts.

Each replicate refits every calibrator of a cell on its reweighted calibration counts
(:func:`fit_rows`, the replicates being more rows of a block of fits);
:mod:`beyondauc.metrics.calibration.grid_replicates` drives these per model and block of
replicates, and takes the fits calibrated on every dataset but the one they evaluate
through :mod:`beyondauc.metrics.calibration.xdomain_fast_path` where it can.
"""

from __future__ import annotations

import numpy as np

from ..core.kernel import scores_from_confusion
from ..core.logistic import NewtonStop, grid_standardization
from .fits import FitBlock, FitSettings, run_fits
from .protocol_plans import SCORES

__all__ = [
    "LOGISTIC_STEPS",
    "combine_rows",
    "confusion_scores",
    "fit_rows",
    "fit_standardization",
    "indicator",
    "local_grids",
    "segment_auc",
]


LOGISTIC_STEPS = 2  # Newton steps of a replicate's logistic fit from its cell's point fit


def fit_standardization(x, pos, neg):
    """The logistic fits' fixed conditioning (centre, scale) of a grid, from all rows' weight (overflow-free)."""
    return grid_standardization(x, pos, neg)


def confusion_scores(conf):
    """(..., ) confusion tuple -> (..., len(SCORES)) array of scores."""
    sc = scores_from_confusion(*conf)
    return np.stack([sc[k] for k in SCORES], axis=-1)


def fit_rows(block: FitBlock, settings: FitSettings, init, standardize):
    """Scores (len(methods), rows, len(SCORES)) of every method of ``settings`` fitted on every row of ``block``.

    Logistic fits take two Newton steps from their cell's point-estimate fit
    (``init``): a replicate moves the optimum by O(n^-1/2), so the first step
    leaves an error of O(1/n) and the second of O(1/n^2).  Measured against
    fits run to convergence: up to 2.5e-4 on the conditioned parameters with a
    thousand calibration rows per dataset (no decision differing), about 1e-2
    with a hundred rows -- so on small data a replicate's threshold carries a
    little optimisation error besides its sampling error.  (With the earlier
    raw-score fit: 2e-5 on the TRUE-sized benchmark, where no decision of 14
    million differed.)
    """
    conf = run_fits(block, settings, init=init, standardize=standardize, stop=NewtonStop(max_iter=LOGISTIC_STEPS))
    return np.stack([confusion_scores(conf[m]) for m in settings.methods])


def combine_rows(G, A, total=None):
    """Rows ``G @ A[r]`` for every replicate r: (R * F, m).

    A loop over the (few) fits: each row is the sum of its datasets, or the
    total minus the datasets it leaves out, whichever is shorter.
    """
    R, D, m = A.shape
    if G.shape == (D, D) and (np.eye(D) == G).all():  # each fit one dataset, in order: a view
        return A.reshape(R * D, m), total
    if G.shape == (D, D) and (1 - np.eye(D) == G).all():  # each fit all but its dataset (xdomain)
        total = A.sum(axis=1) if total is None else total
        return np.subtract(total[:, None, :], A).reshape(R * D, m), total
    out = np.empty((R, len(G), m))
    for k, g in enumerate(G.astype(bool)):
        inc, exc = np.flatnonzero(g), np.flatnonzero(~g)
        if len(exc) + 1 < len(inc):
            if total is None:
                total = A.sum(axis=1)
            np.subtract(total, A[:, exc].sum(axis=1) if len(exc) > 1 else A[:, exc[0]], out=out[:, k])
        elif len(inc) == 0:
            out[:, k] = 0.0
        elif len(inc) == 1:
            out[:, k] = A[:, inc[0]]
        else:
            np.sum(A[:, inc], axis=1, out=out[:, k])
    return out.reshape(R * len(G), m), total


def local_grids(s, codes, D):
    """Each dataset's own score grid, laid end to end: (column of each example, segment starts)."""
    order = np.lexsort((s, codes))
    ss, cc = s[order], codes[order]
    new = np.ones(len(s), dtype=bool)
    new[1:] = (ss[1:] != ss[:-1]) | (cc[1:] != cc[:-1])
    col = np.empty(len(s), dtype=np.int64)
    col[order] = np.cumsum(new) - 1
    first_col = np.full(D, -1, dtype=np.int64)
    present = np.unique(cc)
    first_col[present] = col[order][np.searchsorted(cc, present)]
    return col, first_col, int(new.sum())


def segment_auc(P, N, first_col, D):
    """AUC (ties one half) of each dataset's segment of per-value counts (R, total) -> (R, D)."""
    R = len(P)
    out = np.full((R, D), np.nan)
    ok = first_col >= 0
    starts = first_col[ok]
    cneg = np.cumsum(N, axis=1)
    base = np.concatenate([np.zeros((R, 1)), cneg], axis=1)[:, starts]  # negatives before each segment
    n_pos, n_neg = np.add.reduceat(P, starts, axis=1), np.add.reduceat(N, starts, axis=1)
    # sum P (negatives below in the segment + N / 2) = sum P (cneg - N / 2) - base * n_pos: integer and
    # half-integer counts, every sum exact while a dataset's positives times all negatives stay below
    # 2**52 (4.5e15), so the same numbers as summing within each segment
    cneg -= 0.5 * N
    cneg *= P
    num = np.add.reduceat(cneg, starts, axis=1) - base * n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        out[:, ok] = np.where((n_pos > 0) & (n_neg > 0), num / (n_pos * n_neg), np.nan)
    return out


def indicator(rows, cols, y, n_rows, n_cols):
    """Sparse 0/1 matrices (positives, negatives) mapping examples to columns."""
    import scipy.sparse as sp

    y = np.asarray(y).astype(bool)
    out = []
    for mask in (y, ~y):
        out.append(sp.csr_matrix((np.ones(mask.sum()), (rows[mask], cols[mask])), shape=(n_rows, n_cols)))
    return out
