"""The diagnostics' bootstrap: intervals of the AUCs, bias robustness, drift and W of two cohorts.

One score grid for V and T together; each replicate is its per-value counts
of V-, V+, T-, T+ (:func:`~beyondauc.metrics.uncertainty.bootstrap.grid_weights`),
drawn by the package's one replicate engine
(:func:`~beyondauc.metrics.uncertainty.replicates.bootstrap_replicates`), and every
number is a batched statistic over those rows (:func:`diagnostics_statistic`).

The item is the unit of every draw.  Without repeated samples every row is
an item and a replicate resamples V-, V+, T- and T+ to their own sizes.  With
them (``items``: each row's item, :func:`~beyondauc.metrics.diagnostics.items.cohort_items`)
whole items are drawn with replacement -- within cohort and class on scores,
whose class is the item's label, and within cohort alone on answers, whose
class is each sample's correctness -- every sample of a drawn item coming
along (the cluster bootstrap of :mod:`beyondauc.metrics.uncertainty.clusters`).
An answers replicate in which a cohort lacks a class has NaN for the numbers
that need both classes; like every engine of the package, the interval is
taken from the defined replicates (and a number none of whose replicates is
defined gets NaN and a warning).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.validation import check_random_state
from ..core.kernel import auc_from_counts, buffer_view
from ..uncertainty.bootstrap import check_bootstrap, strata_of
from ..uncertainty.cells import cell_scores
from ..uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    interval_frame,
    jackknife_replicates,
)
from .cohorts import (
    bias_robustness,
    check_p,
    check_range,
    check_sigma_max,
    sens_spec_drift,
    two_cohorts,
    wasserstein_matrix,
)
from .items import cohort_items, stratified_by_class
from .rows import bias_rows, bias_units, drift_rows, lead_cumsum, wasserstein_rows, workspace

__all__ = [
    "DIAGNOSTIC_BCA",
    "DIAGNOSTIC_INTERVALS",
    "DiagnosticsBootstrap",
    "cell_cohorts",
    "diagnostics_bootstrap",
    "diagnostics_design",
    "diagnostics_intervals",
    "diagnostics_replicates",
    "diagnostics_statistic",
]

# replicate x value cells per chunk: every number is computed row by row (chunks change nothing),
# and the four Wasserstein merges hold about ten (replicates, 2 x values) arrays each
_DIAGNOSTICS_CELLS = 1 << 19
DIAGNOSTIC_INTERVALS = ("auc_val", "auc_test", "bias_robustness_val", "bias_robustness_test", "drift", "wasserstein")

#: The numbers whose intervals are BCa: the bootstrap biases them (resampling noise raises the drift, lowers W).
DIAGNOSTIC_BCA = ("drift", "wasserstein")


@dataclass(frozen=True)
class DiagnosticsBootstrap:
    """The options of the diagnostics' bootstrap.

    Attributes
    ----------
    n_bootstrap : int >= 1
    sigma_max : float > 0 or None
        Bias robustness's range, kept at the point estimate's value in every
        replicate (None: bias robustness is NaN).
    p : float >= 1, default=2
        Wasserstein order.
    confidence_level : float in (0, 1), default=0.95
    random_state : int or None, default=0
    by_class : bool, default=True
        Stratify by cohort and class (scores); False: by cohort alone
        (answers, whose class is each model's own correctness), so every
        model resamples the same rows or items (paired).  Items holding
        samples of both classes are drawn by cohort alone either way.
    answered : tuple of str, default=()
        The numbers whose question a permutation null answers: a NaN
        interval of theirs keeps its note but is not warned about.
    """

    n_bootstrap: int
    sigma_max: float | None
    p: float = 2
    confidence_level: float = 0.95
    random_state: int | None = 0
    by_class: bool = True
    answered: tuple[str, ...] = ()


def cell_cohorts(yv, sv, yt, st, cells):
    """V's and T's scores on at most ``cells`` cells per class, both cohorts pooled (so a permutation of the
    cohorts within class leaves the cells as they are)."""
    if cells is None:
        return sv, st
    both = cell_scores(np.concatenate([sv, st]), np.concatenate([yv, yt]), cells=cells)
    return both[: len(sv)], both[len(sv) :]


def diagnostics_bootstrap(yv, sv, yt, st, estimate, options, *, items=None):
    """(interval frame, replicates, jackknife) of the AUCs, bias robustness, drift and W.

    ``options``: a :class:`DiagnosticsBootstrap`; ``items``: each row's item (V's rows then T's, 0 ..
    n_items - 1) when rows repeat items, else None.  The numbers of :data:`DIAGNOSTIC_BCA` get BCa
    intervals, their acceleration from a delete-a-group jackknife stratified as the bootstrap (items dealt
    out whole; the same statistic on 20 more rows of counts), the others percentile intervals.
    """
    sample, statistic = diagnostics_design(yv, sv, yt, st, options, items=items)
    plan = ReplicatePlan(options.n_bootstrap, options.random_state, cells=_DIAGNOSTICS_CELLS)
    reps = pd.DataFrame(bootstrap_replicates(sample, statistic, plan))
    jack = pd.DataFrame(jackknife_replicates(sample, statistic, plan))[list(DIAGNOSTIC_BCA)]
    frame = interval_frame(estimate, reps, options.confidence_level, jackknife=jack, answered=options.answered)
    return frame, reps, jack


def diagnostics_design(yv, sv, yt, st, options, *, items=None):
    """(sample, statistic) of the diagnostics' bootstrap and jackknife on one grid of V and T."""
    y = np.concatenate([yv, yt]).astype(np.int64)
    s = np.concatenate([sv, st])
    cohort = np.concatenate([np.zeros(len(yv), np.int64), np.ones(len(yt), np.int64)])
    x, inv = np.unique(s, return_inverse=True)
    sigma_max, p = options.sigma_max, options.p
    units = None if sigma_max is None else bias_units(x, sigma_max)  # the same for every replicate
    held = {}  # one workspace for the chunks, grown to the largest

    def statistic(pos, neg):
        if held.get("rows", 0) < len(pos):
            held.update(rows=len(pos), work=workspace(len(pos), len(x)))
        return diagnostics_statistic(x, pos, neg, sigma_max, p, units=units, work=held["work"])

    strata = strata_of(cohort, y) if stratified_by_class(options.by_class, items, y) else strata_of(cohort)
    return GridSample(strata, inv.ravel(), y, len(x), groups=cohort, n_groups=2, clusters=items), statistic


def diagnostics_replicates(yv, sv, yt, st, options, *, items=None):
    """Replicates (DataFrame, one row each) of the numbers of :data:`DIAGNOSTIC_INTERVALS`."""
    sample, statistic = diagnostics_design(yv, sv, yt, st, options, items=items)
    plan = ReplicatePlan(options.n_bootstrap, options.random_state, cells=_DIAGNOSTICS_CELLS)
    return pd.DataFrame(bootstrap_replicates(sample, statistic, plan))


def diagnostics_statistic(x, pos, neg, sigma_max, p, *, units=None, work=None):
    """The numbers of :data:`DIAGNOSTIC_INTERVALS` of each row of (R, 2, m) counts (V: 0, T: 1).

    Each class's cumulative sums are taken once (in int64: the rows are counts) and read by all four kernels;
    ``units``: :func:`~beyondauc.metrics.diagnostics.rows.bias_units` of the grid, and ``work``:
    a :func:`~beyondauc.metrics.diagnostics.rows.workspace` for at least R rows, when the caller has them.
    """
    R, _, m = pos.shape
    work = workspace(R, m) if work is None else work  # every kernel's temporaries, in turn
    cp = lead_cumsum(pos, buffer_view(work[5], (R, 2, m + 1)), scratch=work[0])
    cn = lead_cumsum(neg, buffer_view(work[6], (R, 2, m + 1)), scratch=work[0])
    rows = {}
    for k, name in enumerate(("val", "test")):  # the two cohorts
        if sigma_max is None:
            rows[f"auc_{name}"] = auc_from_counts(pos[:, k], neg[:, k])
            rows[f"bias_robustness_{name}"] = np.full(len(pos), np.nan)
        else:
            score, auc = bias_rows(x, pos[:, k], neg[:, k], sigma_max, cn=cn[:, k], units=units, work=work)
            rows[f"auc_{name}"], rows[f"bias_robustness_{name}"] = auc, score
    rows["drift"] = drift_rows(x, pos, neg, cp=cp, cn=cn, work=work)
    rows["wasserstein"] = wasserstein_rows(x, pos, neg, p, cp=cp, cn=cn, counts=True, work=work)[0]
    return {k: rows[k] for k in DIAGNOSTIC_INTERVALS}


def diagnostics_intervals(
    y_val: ArrayLike,
    s_val: ArrayLike,
    y_test: ArrayLike,
    s_test: ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    sigma_max: float | None = None,
    p: float = 2,
    random_state: int | None = 0,
    pos_label: object = None,
    items_val: ArrayLike | None = None,
    items_test: ArrayLike | None = None,
) -> pd.DataFrame:
    """Bootstrap intervals of the AUCs, bias robustness (percentile), drift and W (BCa) of two cohorts.

    The bootstrap is stratified by cohort and class: each replicate resamples
    V-, V+, T- and T+ to their own sizes.  With ``items_val`` and
    ``items_test`` (each row's item: repeated samples of one item, e.g. the
    epochs of an LLM run) it draws whole items instead, with replacement
    within cohort and class, every sample of a drawn item coming along; an
    item's samples must then share their class and cohort.  A replicate is a reweighting of the
    per-value counts on one score grid of V and T, so the exact kernels run
    for all replicates at once (weighted sensitivity/specificity step
    functions for the drift, sorted cumulative sums for bias robustness,
    weighted CDFs (p = 1) or quantile functions for W).  Bias robustness
    keeps ``sigma_max`` at the point estimate's value (default: the score
    range of V and T together, as :func:`cohort_diagnostics` uses) in every
    replicate, so the replicates measure the same integral.  Drift and W,
    which resampling biases, get BCa intervals (acceleration from a
    delete-a-group jackknife with 20 groups, stratified as the bootstrap); an
    interval that cannot contain its estimate is NaN, with the reason in
    ``interval_note`` (see the user guide, "Uncertainty").

    Parameters
    ----------
    y_val, s_val, y_test, s_test : array-like
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    sigma_max : float > 0, default=None
    p : float >= 1, default=2
        Wasserstein order.
    random_state : int or None, default=0
    pos_label : scalar, default=None
    items_val, items_test : array-like, default=None
        Each row's item (an id; the rows sharing one are its samples), for
        the cluster bootstrap; None: every row is an item.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``metric`` (auc_val, auc_test, bias_robustness_val,
        bias_robustness_test, drift, wasserstein) with columns ``estimate``,
        ``low``, ``high``, ``interval_method`` ("BCa" or "percentile") and
        ``interval_note``.  An undefined metric (e.g. a cohort with a
        single class) is NaN with a warning.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import diagnostics_intervals
    >>> rng = np.random.default_rng(0)
    >>> yv, yt = rng.integers(0, 2, 150), rng.integers(0, 2, 150)
    >>> sv, st = rng.normal(yv, 1.0), rng.normal(yt, 1.0) + 0.5
    >>> ci = diagnostics_intervals(yv, sv, yt, st, n_bootstrap=200)
    >>> bool((ci["low"] <= ci["estimate"]).all() and (ci["estimate"] <= ci["high"]).all())
    True
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    p = check_p(p)
    seed = check_random_state(random_state)
    sigma_max = check_sigma_max(sigma_max)
    yv, sv, yt, st = two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    if sigma_max is None:
        both = np.concatenate([sv, st])
        check_range(both, "s_val` with `s_test")
        rng = float(both.max() - both.min())
        sigma_max = rng if rng > 0 else None
    bv, bt = bias_robustness(yv, sv, sigma_max=sigma_max), bias_robustness(yt, st, sigma_max=sigma_max)
    estimate = {
        "auc_val": bv.auc,
        "auc_test": bt.auc,
        "bias_robustness_val": bv.score,
        "bias_robustness_test": bt.score,
        "drift": sens_spec_drift(yv, sv, yt, st).score,
        "wasserstein": wasserstein_matrix(yv, sv, yt, st, p=p).score,
    }
    items = cohort_items(items_val, items_test, np.concatenate([yv, yt]))
    options = DiagnosticsBootstrap(n_bootstrap, sigma_max, p, confidence_level, seed)
    return diagnostics_bootstrap(yv, sv, yt, st, estimate, options, items=items)[0]
