"""The replicate engine: every bootstrap interval of the package is drawn here.

A bootstrap replicate is a row of per-value class counts on a fixed score grid
(see :mod:`beyondauc.metrics.uncertainty.bootstrap`).  :func:`bootstrap_replicates` draws
the replicates in memory-bounded chunks (:func:`replicate_chunks`), turns each
chunk's draws into per-value positive and negative counts
(:func:`~beyondauc.metrics.uncertainty.bootstrap.grid_count_chunks`), and hands them to a
*batched statistic*: a function of count matrices with one row per replicate
that returns one value (or one row of values) per replicate.  The intervals
are then percentiles of the replicates (:func:`intervals_of`,
:func:`interval_table`, :func:`~beyondauc.metrics.uncertainty.bootstrap.percentile_interval`)
or BCa: for the AUC with its closed-form jackknife
(:func:`~beyondauc.metrics.uncertainty.bootstrap.bca_interval`), for the statistics the
bootstrap biases with a delete-a-group jackknife run through the same engine
(:func:`jackknife_replicates`, :func:`interval_frame`).

Each batched statistic sits beside its point-estimate twin, rewritten for
weights (cumulative sums along the rows, ``bincount`` on flat (row, bin)
indices, ``searchsorted`` on fixed grids or with a row offset), with a test
that the two agree on every replicate:

* the AUC: :func:`beyondauc.metrics.core.kernel.auc_from_counts`, both;
* the ROC band: :func:`~beyondauc.metrics.diagnostics.curves.roc_tpr_rows` beside
  :func:`~beyondauc.metrics.diagnostics.curves.roc_points`;
* selective answering: :func:`~beyondauc.metrics.selective.curves.accuracy_at_coverages`
  beside :func:`~beyondauc.metrics.selective.curves.accuracy_at_coverage`, and
  :func:`~beyondauc.metrics.selective.scores.selective_rows` beside
  :func:`~beyondauc.metrics.selective.scores.disca`;
* the diagnostics: ``drift_rows``, ``bias_rows`` and ``wasserstein_rows`` beside
  their twins in :mod:`beyondauc.metrics.diagnostics.cohorts`;
* the calibrators: :func:`calibrated_rows` (here) refits
  :class:`~beyondauc.ScoreCalibrator` on every replicate's calibration counts
  at once.

There is no Python loop over replicates, examples or thresholds: the only
loop is over chunks of replicates, which bound memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import expit

from ...utils.validation import check_int, warn_undefined
from ..core.fitting import single_class
from ..core.isotonic import fit_predict_isotonic
from ..core.logistic import logistic_decision, logistic_params
from ..core.stump import stump_decision, stump_grid, stump_params
from .bootstrap import (
    N_JACKKNIFE,
    CountGrid,
    grid_count_chunks,
    honest_interval,
    int_seed,
    jackknife_acceleration,
    jackknife_count_chunks,
    jackknife_groups,
    percentile_interval,
)
from .clusters import cluster_grid_count_chunks, cluster_jackknife_groups

__all__: list[str] = []

CELLS = 1 << 22  # replicate x example (or grid value) cells held at once

#: What a batched statistic returns for a chunk of R replicates: an array with R rows, or named arrays with R rows.
Replicates = np.ndarray | dict


def replicate_chunks(
    n_bootstrap: int, width: int, *, align: int = 1, cells: int | None = None
) -> list[tuple[int, int]]:
    """(start, stop) blocks of replicates so a block's (replicates x width) arrays stay bounded.

    Each block holds a multiple of ``align`` replicates (but at least
    ``align``).  The replicates themselves do not depend on the blocks
    (:func:`~beyondauc.metrics.uncertainty.bootstrap.bootstrap_counts` seeds fixed blocks
    of its own); a statistic that offsets rows by their place in the block
    (a row-offset ``searchsorted``) can differ in the last bit, so every
    caller keeps its blocks.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.replicates import replicate_chunks
    >>> replicate_chunks(5, 2**21)
    [(0, 2), (2, 4), (4, 5)]
    >>> replicate_chunks(100, 2**16, align=64)
    [(0, 64), (64, 100)]
    """
    cells = CELLS if cells is None else cells  # read when called, so the module's bound can be changed
    size = align * max(1, cells // (align * max(width, 1)))
    return [(i, min(i + size, n_bootstrap)) for i in range(0, n_bootstrap, size)]


def _fixed_seed(random_state: int | None) -> int:
    """One seed for every chunk: ``None`` draws fresh entropy once, so the chunks share one stream."""
    seed = int_seed(random_state)
    return cast(int, np.random.SeedSequence().entropy) if seed is None else seed


def _stack(parts: list[Replicates]) -> Replicates:
    """The chunks' results one after the other: an array, or a dict of arrays."""
    if isinstance(parts[0], dict):
        dicts = cast("list[dict[str, np.ndarray]]", parts)  # a statistic returns one kind for every chunk
        return {k: np.concatenate([p[k] for p in dicts]) for k in dicts[0]}
    return np.concatenate(cast("list[np.ndarray]", parts))


@dataclass(frozen=True)
class GridSample:
    """The examples a replicate reweights, as a batched statistic counts them.

    Every array has one entry per example.

    Parameters
    ----------
    strata : array-like of int, shape (n,)
        Stratum of each example; each is resampled to its own size
        (:func:`~beyondauc.metrics.uncertainty.bootstrap.bootstrap_counts`).
    inverse : array-like of int, shape (n,)
        Each example's index on the score grid (``np.unique(s, return_inverse=True)``).
    y : array-like of {0, 1}, shape (n,)
        The class each example counts in.
    n_values : int
        Size of the score grid.
    groups : array-like of int, shape (n,), optional
        Each example's group (e.g. cohort or role; -1 leaves it out).
    n_groups : int, default=1
    clusters : array-like of int, shape (n,), optional
        Each example's item (:func:`~beyondauc.metrics.uncertainty.clusters.clusters_of`):
        repeated samples of one item are resampled together (the cluster
        bootstrap of :mod:`beyondauc.metrics.uncertainty.clusters`).  None: every
        example is its own item.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.replicates import GridSample
    >>> y = np.array([0, 0, 1, 1, 1])
    >>> values, inverse = np.unique([0.1, 0.4, 0.35, 0.8, 0.8], return_inverse=True)
    >>> GridSample(y, inverse, y, len(values)).n_values
    4
    """

    strata: ArrayLike
    inverse: ArrayLike
    y: ArrayLike
    n_values: int
    groups: ArrayLike | None = None
    n_groups: int = 1
    clusters: ArrayLike | None = None


@dataclass(frozen=True)
class ReplicatePlan:
    """How the replicates are drawn: how many, from which seed, in which chunks.

    Parameters
    ----------
    n_bootstrap : int >= 1
        Bootstrap replicates (:func:`bootstrap_replicates`).
    random_state : int or None
        The seed of the replicates (``None``: fresh entropy, drawn once) and of
        the jackknife's groups.
    n_jackknife : int >= 2, default=20
        Groups of the delete-a-group jackknife (:func:`jackknife_replicates`).
    align : int, default=1
        Bootstrap replicates per chunk are a multiple of it (see :func:`replicate_chunks`).
    cells : int, default=None
        Bootstrap replicates x max(n, n_values) cells per chunk (None: :data:`CELLS`): less for a
        statistic whose temporaries are many times its input (the replicates do not
        depend on it; a statistic computed row by row does not either).
    chunk_width : int, default=None
        The width chunks are sized for (None: max(n, n_values)): a caller
        that lays the same grid out more compactly keeps its chunks, and with
        them the last bits of a statistic that depends on them.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.replicates import ReplicatePlan
    >>> ReplicatePlan(1000, 0).n_jackknife
    20
    """

    n_bootstrap: int
    random_state: int | None
    n_jackknife: int = N_JACKKNIFE
    align: int = 1
    cells: int | None = None
    chunk_width: int | None = None


def bootstrap_replicates(
    sample: GridSample, statistic: Callable[[np.ndarray, np.ndarray], Replicates], plan: ReplicatePlan
) -> Replicates:
    """A batched statistic on every replicate of a stratified bootstrap, chunk by chunk.

    Parameters
    ----------
    sample : GridSample
        The examples: their strata, grid indices, classes, groups and items.
    statistic : callable
        ``statistic(pos, neg)`` on the positive and negative counts per grid
        value of R replicates -- (R, n_values) each, or (R, n_groups,
        n_values) with ``sample.groups`` -- returning an array with R rows, or a
        dict of such arrays.
    plan : ReplicatePlan
        How many replicates, their seed and chunks.

    Returns
    -------
    ndarray or dict of ndarray
        The statistic's rows of every replicate, in order (``plan.n_bootstrap`` rows).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.replicates import GridSample, ReplicatePlan, bootstrap_replicates
    >>> y = np.array([0, 0, 1, 1, 1])
    >>> values, inverse = np.unique([0.1, 0.4, 0.35, 0.8, 0.8], return_inverse=True)
    >>> n_pos = bootstrap_replicates(GridSample(y, inverse, y, len(values)), lambda pos, neg: pos.sum(axis=1),
    ...                              ReplicatePlan(4, random_state=0))
    >>> n_pos.tolist()  # stratified by class: every replicate keeps three positives
    [3.0, 3.0, 3.0, 3.0]
    """
    n_bootstrap = check_int(plan.n_bootstrap, "n_bootstrap", minimum=1)
    strata = np.asarray(sample.strata)
    seed = _fixed_seed(plan.random_state)
    width = max(len(strata), sample.n_values) if plan.chunk_width is None else plan.chunk_width
    chunks = replicate_chunks(n_bootstrap, width, align=plan.align, cells=plan.cells)
    grid = CountGrid(sample.inverse, sample.y, sample.n_values, groups=sample.groups, n_groups=sample.n_groups)
    if sample.clusters is None:  # bounded memory, every row drawn once
        counted = grid_count_chunks(strata, grid, n_bootstrap, chunks, random_state=seed)
    else:
        counted = cluster_grid_count_chunks(sample.clusters, strata, grid, n_bootstrap, chunks, random_state=seed)
    return _stack([statistic(*_ungrouped(sample, pos, neg)) for pos, neg in counted])


def jackknife_replicates(
    sample: GridSample, statistic: Callable[[np.ndarray, np.ndarray], Replicates], plan: ReplicatePlan
) -> Replicates:
    """The batched statistic with each group of a stratified delete-a-group jackknife left out.

    The BCa acceleration's jackknife, run through the same machinery as the
    bootstrap: leaving group g out is one more row of per-example counts (1,
    and 0 for group g's examples, :func:`~beyondauc.metrics.uncertainty.bootstrap.jackknife_groups`),
    so ``statistic`` -- refits included -- sees it as one more replicate.
    ``plan.n_jackknife`` groups cost ``n_jackknife`` rows whatever the number of
    examples, where a leave-one-out jackknife would cost one row per example.
    Arguments as :func:`bootstrap_replicates`; of the plan it reads ``n_jackknife``,
    ``random_state`` (the groups' seed) and ``chunk_width`` (the few rows are chunked by
    :data:`CELLS`, whatever the bootstrap's ``align`` and ``cells``).

    Returns
    -------
    ndarray or dict of ndarray
        The statistic's rows, ``plan.n_jackknife`` of them.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.replicates import GridSample, ReplicatePlan, jackknife_replicates
    >>> y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> n = jackknife_replicates(GridSample(y, np.arange(8), y, 8), lambda pos, neg: pos.sum(axis=1) + neg.sum(axis=1),
    ...                          ReplicatePlan(1000, random_state=0, n_jackknife=4))
    >>> n.tolist()  # each group leaves out one example of each class
    [6.0, 6.0, 6.0, 6.0]
    """
    n_jackknife = check_int(plan.n_jackknife, "n_jackknife", minimum=2)
    strata, seed = sample.strata, plan.random_state
    member = (
        jackknife_groups(strata, n_jackknife, random_state=seed)
        if sample.clusters is None
        else cluster_jackknife_groups(sample.clusters, strata, n_jackknife, random_state=seed)
    )
    width = max(len(member), sample.n_values) if plan.chunk_width is None else plan.chunk_width
    chunks = replicate_chunks(n_jackknife, width)  # bounded memory
    counted = jackknife_count_chunks(
        member, sample.inverse, sample.y, sample.n_values, chunks, groups=sample.groups, n_groups=sample.n_groups
    )
    return _stack([statistic(*_ungrouped(sample, pos, neg)) for pos, neg in counted])


def _ungrouped(sample: GridSample, pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's counts as the statistic sees them: (R, n_values) without groups, (R, n_groups, n_values) with."""
    if sample.groups is None:
        return pos[:, 0], neg[:, 0]
    return pos, neg


# -- intervals from replicates ----------------------------------------------------------


def interval_frame(
    estimate: dict[str, float],
    replicates: pd.DataFrame,
    confidence_level: float,
    *,
    jackknife: pd.DataFrame | None = None,
    answered: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Intervals that contain their estimates: ``estimate, low, high, interval_method, interval_note`` by metric.

    A number with a column in ``jackknife`` (its delete-a-group jackknife
    values) gets a BCa interval, the others a percentile interval
    (:func:`~beyondauc.metrics.uncertainty.bootstrap.honest_interval`).  Where no interval
    contains the estimate it is NaN and ``interval_note`` says why (warned
    once per call, except for the numbers in ``answered``: those whose
    question another test answers, e.g. drift and W by their permutation
    null, keep the note without a warning); a number whose every replicate is NaN gets NaN and an
    UndefinedMetricWarning.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from beyondauc.metrics.uncertainty.replicates import interval_frame
    >>> reps = pd.DataFrame({"auc": np.linspace(0.6, 0.8, 101), "drift": np.linspace(0.05, 0.25, 101)})
    >>> t = interval_frame({"auc": 0.7, "drift": 0.04}, reps, 0.9, jackknife=pd.DataFrame({"drift": [0.04, 0.05]}))
    >>> t[["low", "high", "interval_method"]].round(3).values.tolist()
    [[0.61, 0.79, 'percentile'], [nan, nan, 'BCa']]
    >>> t.loc["drift", "interval_note"]
    'every bootstrap replicate lies above the estimate'
    """
    names = list(estimate)
    rows = []
    for name in names:  # a loop over the named numbers, each one vectorised
        v = replicates[name].to_numpy(dtype=np.float64)
        if np.isnan(v).all():
            warn_undefined(f"every bootstrap replicate of {name!r} is undefined; its interval is NaN")
        accel = None
        if jackknife is not None and name in jackknife:
            accel = jackknife_acceleration(jackknife[name].to_numpy(dtype=np.float64))
        rows.append((estimate[name], *honest_interval(v, estimate[name], confidence_level, acceleration=accel)))
    out = pd.DataFrame(
        rows,
        columns=["estimate", "low", "high", "interval_method", "interval_note"],
        index=pd.Index(names, name="metric"),
    )
    out.loc[np.isnan(out["estimate"].to_numpy(dtype=float)), "interval_note"] = ""
    missed = out[(out["interval_note"] != "") & ~out.index.isin(list(answered))]
    if len(missed):
        warn_undefined(
            "no bootstrap interval contains the estimate of "
            + "; ".join(f"{k} ({note})" for k, note in missed["interval_note"].items())
            + "; those intervals are NaN"
        )
    return out


def interval_summary(frame: pd.DataFrame) -> tuple[dict[str, tuple[float, float]], str, str]:
    """``name -> (low, high)``, the ``interval_method`` text and the ``interval_note`` text of an :func:`interval_frame`.

    The method text names each method with its numbers ("BCa: drift;
    percentile: auc_val, auc_test"), the note joins the reasons of the NaN
    intervals ('' when none).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.metrics.uncertainty.replicates import interval_frame, interval_summary
    >>> t = interval_frame({"auc": 0.7}, pd.DataFrame({"auc": [0.6, 0.7, 0.8]}), 0.5)
    >>> interval_summary(t)
    ({'auc': (0.65, 0.75)}, 'percentile: auc', '')
    """
    intervals = {k: (float(r["low"]), float(r["high"])) for k, r in frame.iterrows()}
    methods = frame.groupby("interval_method", sort=False).groups
    method = "; ".join(f"{m}: {', '.join(names)}" for m, names in sorted(methods.items()))
    note = "; ".join(f"{k}: {n}" for k, n in frame["interval_note"].items() if n)
    return intervals, method, note


def intervals_of(replicates: pd.DataFrame, confidence_level: float) -> dict[str, tuple[float, float]]:
    """``name -> (low, high)`` percentile intervals from a replicates frame (one column per number).

    NaN replicates (undefined in that resample) are left out; a number whose
    every replicate is NaN gets (NaN, NaN) and an UndefinedMetricWarning.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.metrics.uncertainty.replicates import intervals_of
    >>> intervals_of(pd.DataFrame({"auc": [0.6, 0.7, 0.8, float("nan")]}), 0.5)
    {'auc': (0.65, 0.75)}
    """
    out = {}
    for name in replicates.columns:  # a loop over the named numbers, each one vectorised
        v = replicates[name].to_numpy(dtype=np.float64)
        if np.isnan(v).all():
            warn_undefined(f"every bootstrap replicate of {name!r} is undefined; its interval is NaN")
            out[name] = (np.nan, np.nan)
            continue
        low, high = percentile_interval(v, confidence_level)
        out[name] = (float(low), float(high))
    return out


def interval_table(estimate: dict[str, float], replicates: pd.DataFrame, confidence_level: float) -> pd.DataFrame:
    """The ``estimate``, ``low``, ``high`` table of named numbers, indexed by ``metric`` in ``estimate``'s order.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.metrics.uncertainty.replicates import interval_table
    >>> interval_table({"auc": 0.7}, pd.DataFrame({"auc": [0.6, 0.7, 0.8]}), 0.5)
            estimate   low   high
    metric
    auc          0.7  0.65  0.75
    """
    ints = intervals_of(replicates[list(estimate)], confidence_level)
    names = list(estimate)
    return pd.DataFrame(
        {
            "estimate": [estimate[k] for k in names],
            "low": [ints[k][0] for k in names],
            "high": [ints[k][1] for k in names],
        },
        index=pd.Index(names, name="metric"),
    )


# -- calibrators, batched ---------------------------------------------------------------


def _isotonic_rows(x: np.ndarray, pos: np.ndarray, neg: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Isotonic fits ``IsotonicRegression(out_of_bounds="clip").predict`` at grid indices ``at``, (R, k).

    All rows are solved by one PAVA call on their concatenation, row r's
    ratios shifted by 2r: every ratio of row r + 1 then exceeds every ratio of
    row r, so no block pools across rows and each row's blocks are its own
    solution.  Block means are recomputed unshifted from the counts, knots
    trimmed as scikit-learn does, and the grid values ``at`` interpolated
    with :func:`beyondauc.metrics.core.isotonic.isotonic_transform`'s formula.
    """
    from scipy.optimize import isotonic_regression

    R, m = pos.shape
    n = pos + neg
    present = n > 0
    rows, cols = np.nonzero(present)  # row-major: rows ascending, grid ascending within a row
    w = n[rows, cols]
    p_ = pos[rows, cols]
    fit = isotonic_regression(p_ / w + 2.0 * rows, weights=w)
    starts = np.asarray(fit.blocks[:-1])
    mean = np.add.reduceat(p_, starts) / np.add.reduceat(w, starts)
    y = np.full((R, m + 1), np.nan)  # a NaN column at m stands for "no such knot"
    y[rows, cols] = np.repeat(mean, np.diff(fit.blocks))

    def take(a, idx):
        return np.take_along_axis(a, idx, axis=1)

    # trimming: drop interior points of constant runs (among each row's present values)
    idx = np.arange(m)
    last_present = np.maximum.accumulate(np.where(present, idx, -1), axis=1)  # last present <= j
    next_present = np.minimum.accumulate(np.where(present, idx, m)[:, ::-1], axis=1)[:, ::-1]  # first >= j
    prev_i = np.concatenate([np.full((R, 1), -1), last_present[:, :-1]], axis=1)
    next_i = np.concatenate([next_present[:, 1:], np.full((R, 1), m)], axis=1)
    yv = y[:, :m]
    interior = (prev_i >= 0) & (next_i < m)
    flat_run = (yv == take(y, np.where(prev_i >= 0, prev_i, m))) & (yv == take(y, next_i))
    keep = present & ~(interior & flat_run)
    first = np.argmax(keep, axis=1)
    last = m - 1 - np.argmax(keep[:, ::-1], axis=1)
    nxt = np.minimum.accumulate(np.where(keep, idx, m)[:, ::-1], axis=1)[:, ::-1]  # first knot >= j
    prv = np.maximum.accumulate(np.where(keep, idx, -1), axis=1)  # last knot <= j
    # knots around each wanted grid value, as isotonic_transform's searchsorted finds them
    at = np.asarray(at)
    j = np.broadcast_to(at, (R, len(at)))
    hi = np.where(j > last[:, None], last[:, None], nxt[:, at])  # clipped to the last knot
    lo = take(prv, np.maximum(hi - 1, 0))  # the last knot before hi
    lo = np.where(hi > 0, lo, -1)
    # searchsorted gives 0 at the first knot; it is clipped to 1: lo = first, hi = second knot
    at_first = hi == first[:, None]
    second = nxt[np.arange(R), np.minimum(first + 1, m - 1)]
    hi = np.where(at_first, second[:, None], hi)
    lo = np.where(at_first, first[:, None], lo)
    t = np.clip(x[at][None, :], x[first][:, None], x[last][:, None])
    hi_c, lo_c = np.clip(hi, 0, m - 1), np.clip(lo, 0, m - 1)
    y_hi, y_lo = take(yv, hi_c), take(yv, lo_c)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (y_hi - y_lo) / (x[hi_c] - x[lo_c])
        val = slope * (t - x[lo_c]) + y_lo
    one = keep.sum(axis=1) == 1
    if one.any():
        val[one] = yv[one, first[one]][:, None]
    return val


def calibrated_rows(
    method: str,
    x: np.ndarray,
    pos: np.ndarray,
    neg: np.ndarray,
    *,
    init: tuple | None = None,
    at: ArrayLike | None = None,
    counts: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Refit a calibrator on each row of grid counts; probability and decision at grid values.

    ``pos``/``neg`` (R, m) are the (class-weighted) calibration counts per grid
    value; ``counts`` (R, m) the unweighted ones the logistic's standardisation
    sees (default ``pos + neg``: give them with class weights).  Returns
    ``proba`` (R, k) float and ``pred`` (R, k) bool at the grid indices ``at``
    (default: all m), as :class:`~beyondauc.ScoreCalibrator` fitted on each
    row's examples would give (a row with a single class predicts that class
    with probability 0/1): scale-free fits, as the point estimate's.
    """
    single = single_class(pos, neg)
    at = np.arange(len(x)) if at is None else np.asarray(at)
    if method == "logistic":
        b0, b1 = logistic_params(x, pos, neg, init=init, counts=counts)
        xa = x[at]
        proba = expit(xa[None, :] * b1[:, None] + b0[:, None])
        pred = logistic_decision(xa, b0, b1)
    elif method == "isotonic":
        proba = np.zeros((pos.shape[0], len(at)))
        fit = single < 0
        if fit.any():
            proba[fit] = _isotonic_rows(x, pos[fit], neg[fit], at)
        # decisions from the batched fitter, which reproduces scikit-learn's rounding where a
        # block is fitted at exactly 0.5 (the probabilities above can differ from it by an ulp)
        pred = fit_predict_isotonic(x, pos, neg)[:, at]
    else:
        xt, pt, nt, group = stump_grid(x, pos, neg)
        thr, lc, rc = stump_params(xt, pt, nt)
        left = stump_decision(xt, thr, np.ones(len(thr), np.int8), np.zeros(len(thr), np.int8))
        lp, ln = np.where(left, pt, 0.0).sum(axis=1), np.where(left, nt, 0.0).sum(axis=1)
        rp, rn = pt.sum(axis=1) - lp, nt.sum(axis=1) - ln
        with np.errstate(invalid="ignore", divide="ignore"):
            leaf_l = np.where(lp + ln > 0, lp / (lp + ln), 0.0)
            leaf_r = np.where(rp + rn > 0, rp / (rp + rn), 0.0)
        cols = at if group is None else group[at]
        left = left[:, cols]
        proba = np.where(left, leaf_l[:, None], leaf_r[:, None])
        pred = stump_decision(xt[cols], thr, lc, rc)
    for cls in (0, 1):
        rows = single == cls
        if rows.any():
            proba[rows] = float(cls)
            pred[rows] = bool(cls)
    return proba, pred
