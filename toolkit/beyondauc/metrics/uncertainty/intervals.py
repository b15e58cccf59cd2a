"""Uncertainty of the AUC: intervals and the paired test.

* :func:`auc_ci` -- a confidence interval of one ROC AUC: DeLong's variance
  (fast, O(n log n)), its logit-transformed variant, or a stratified
  bootstrap (percentile or BCa);
* :func:`compare_auc` -- the paired DeLong test of two scores on the same
  examples;
* :func:`auc_intervals` -- DeLong intervals of every model on every dataset
  of a :class:`~beyondauc.Benchmark`, tidy.

The test of rankings across datasets (Friedman, Nemenyi) is in
:mod:`beyondauc.metrics.uncertainty.rank_tests`.

DeLong's structural components, with positives X_1..X_m, negatives
Y_1..Y_n and psi(x, y) = 1 if x > y, 1/2 if x = y, 0 otherwise, are
V10(X_i) = mean_j psi(X_i, Y_j) and V01(Y_j) = mean_i psi(X_i, Y_j); the AUC
is the mean of either, and Var(AUC) = S10 / m + S01 / n with S10, S01 their
sample variances (DeLong, DeLong & Clarke-Pearson 1988).  Both components
are read off the sort kernel's per-value class counts (V10 at a score is the
share of negatives below it plus half those tied with it), which is the
fast algorithm of Sun & Xu (2014): one sort, then cumulative sums.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import expit, logit

from ...data.benchmark import Benchmark
from ...utils.html import caption_table, repr_number
from ...utils.validation import (
    binarize_labels,
    check_number,
    check_option,
    check_random_state,
    check_scores,
    warn_undefined,
)
from ..core.kernel import auc_from_counts, grid_counts

# scipy.stats is imported inside the functions that use it: a report kernel only reads a saved
# evaluation and draws, and skips its import (see _pool.FITTING_MODULES).
from ..core.views import each_model_view
from .bootstrap import BLOCK, bca_interval, check_bootstrap, percentile_interval
from .clustered_delong import clustered_by_dataset
from .replicates import GridSample, ReplicatePlan, bootstrap_replicates

__all__ = [
    "AUCComparison",
    "AUCInterval",
    "auc_ci",
    "auc_intervals",
    "compare_auc",
]

AUC_METHODS = ("delong", "logit", "bootstrap", "bca")


# -- results -------------------------------------------------------------------


@dataclass(frozen=True)
class AUCInterval:
    """A confidence interval of a ROC AUC, from :func:`auc_ci`.

    Attributes
    ----------
    estimate : float
        The AUC (ties count one half).
    low, high : float
        Bounds of the interval, inside [0, 1].
    standard_error : float
        DeLong's standard error (``delong``, ``logit``), or the standard
        deviation of the bootstrap replicates (``bootstrap``, ``bca``).
    method : str
        ``"delong"``, ``"logit"``, ``"bootstrap"`` or ``"bca"``.
    confidence_level : float
    n_pos, n_neg : int
        Number of positives and negatives.
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    method: str
    confidence_level: float
    n_pos: int
    n_neg: int

    def __repr__(self):
        return (
            f"AUCInterval(estimate={repr_number(self.estimate)}, {self.confidence_level:.0%} CI=[{repr_number(self.low)}, "
            f"{repr_number(self.high)}], standard_error={repr_number(self.standard_error)}, method={self.method!r}, "
            f"n_pos={self.n_pos}, n_neg={self.n_neg})"
        )

    def _repr_html_(self):
        return caption_table(
            "AUC interval",
            [
                ("AUC", repr_number(self.estimate)),
                (f"{self.confidence_level:.0%} CI", f"[{repr_number(self.low)}, {repr_number(self.high)}]"),
                ("standard error", repr_number(self.standard_error)),
                ("method", self.method),
                ("positives / negatives", f"{self.n_pos} / {self.n_neg}"),
            ],
        )


@dataclass(frozen=True)
class AUCComparison:
    """The paired DeLong test of two AUCs on the same examples, from :func:`compare_auc`.

    Attributes
    ----------
    auc_a, auc_b : float
        The AUC of each score.
    difference : float
        ``auc_a - auc_b``.
    standard_error : float
        DeLong's standard error of the difference (it accounts for the
        correlation of the two scores on the same examples).
    statistic : float
        ``difference / standard_error``, standard normal under equal AUCs.
    pvalue : float
        Two-sided p-value.
    low, high : float
        Confidence interval of the difference, inside [-1, 1].
    confidence_level : float
    n_pos, n_neg : int
    """

    auc_a: float
    auc_b: float
    difference: float
    standard_error: float
    statistic: float
    pvalue: float
    low: float
    high: float
    confidence_level: float
    n_pos: int
    n_neg: int

    def __repr__(self):
        return (
            f"AUCComparison(auc_a={repr_number(self.auc_a)}, auc_b={repr_number(self.auc_b)}, "
            f"difference={repr_number(self.difference)}, {self.confidence_level:.0%} CI=[{repr_number(self.low)}, "
            f"{repr_number(self.high)}], statistic={repr_number(self.statistic)}, pvalue={repr_number(self.pvalue)})"
        )

    def _repr_html_(self):
        return caption_table(
            "Paired DeLong test",
            [
                ("AUC a", repr_number(self.auc_a)),
                ("AUC b", repr_number(self.auc_b)),
                ("difference a - b", repr_number(self.difference)),
                (
                    f"{self.confidence_level:.0%} CI of the difference",
                    f"[{repr_number(self.low)}, {repr_number(self.high)}]",
                ),
                ("standard error", repr_number(self.standard_error)),
                ("z", repr_number(self.statistic)),
                ("p-value (two-sided)", repr_number(self.pvalue)),
                ("positives / negatives", f"{self.n_pos} / {self.n_neg}"),
            ],
        )


# -- DeLong --------------------------------------------------------------------


def _components(pos, neg):
    """DeLong's structural components on the score grid, along the last axis.

    ``pos``/``neg`` are per-value class counts ``(..., n_values)``.  Returns
    ``auc, v10, v01, n_pos, n_neg``: ``v10[v]`` is V10 of a positive with the
    v-th score, ``v01[v]`` V01 of a negative with it.
    """
    n_pos = pos.sum(axis=-1)
    n_neg = neg.sum(axis=-1)
    neg_below = np.cumsum(neg, axis=-1) - neg
    pos_above = n_pos[..., None] - np.cumsum(pos, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        v10 = (neg_below + 0.5 * neg) / n_neg[..., None]
        v01 = (pos_above + 0.5 * pos) / n_pos[..., None]
        auc = (pos * v10).sum(axis=-1) / n_pos
    return auc, v10, v01, n_pos, n_neg


def _delong(pos, neg):
    """AUC and DeLong's variance from per-value class counts, along the last axis.

    NaN where a class is absent; the variance is NaN where a class has a
    single example (its sample variance is undefined).
    """
    auc, v10, v01, n_pos, n_neg = _components(pos, neg)
    a = auc[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        s10 = (pos * (v10 - a) ** 2).sum(axis=-1) / (n_pos - 1)
        s01 = (neg * (v01 - a) ** 2).sum(axis=-1) / (n_neg - 1)
        var = s10 / n_pos + s01 / n_neg
    ok = (n_pos > 1) & (n_neg > 1)
    return auc, np.where(ok, var, np.nan), n_pos, n_neg


def _delong_by_dataset(y, s, order, bounds):
    """:func:`_delong` of each dataset's rows (``order[bounds[d]:bounds[d + 1]]``) on its own grid of values.

    Memory follows one dataset's rows, not (datasets x the model's values
    over every dataset); the sums run over that dataset's values only.
    """
    out = np.full((4, len(bounds) - 1), np.nan)
    for d in range(len(bounds) - 1):  # a loop over datasets
        rows = order[bounds[d] : bounds[d + 1]]
        _, _, pos, neg = grid_counts(y[rows], s[rows])
        out[:, d] = [x[0] for x in _delong(pos[None], neg[None])]
    return out[0], out[1], out[2], out[3]


def _normal_interval(estimate, se, confidence_level, *, transform=False):
    """estimate -/+ z se clipped to [0, 1], or the same on the logit scale."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + confidence_level / 2)
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if transform:
            # delta method: se(logit A) = se / (A (1 - A)); A in {0, 1} has se 0, the interval is the point
            inner = (estimate > 0) & (estimate < 1)
            lg = logit(np.where(inner, estimate, 0.5))
            half = z * se / (estimate * (1 - estimate))
            low = np.where(inner, expit(lg - half), estimate)
            high = np.where(inner, expit(lg + half), estimate)
        else:
            low = np.clip(estimate - z * se, 0.0, 1.0)
            high = np.clip(estimate + z * se, 0.0, 1.0)
    return low, high


def _check_pair(y_true, y_score, pos_label, *, score_name="y_score"):
    y = binarize_labels(y_true, pos_label=pos_label)
    s = check_scores(y_score, score_name)
    if len(y) != len(s):
        raise ValueError(f"`y_true` and `{score_name}` must have the same length, got {len(y)} and {len(s)}")
    return y, s


# -- bootstrap -----------------------------------------------------------------


def bootstrap_aucs(y, inverse, n_values, n_bootstrap, random_state):
    """The AUC of each stratified (by class) bootstrap replicate, shape (n_bootstrap,).

    The replicate engine draws them in chunks of whole seed blocks; each
    replicate's AUC is the kernel's count formula, the point estimate's own,
    on all replicates of a chunk at once.
    """
    plan = ReplicatePlan(n_bootstrap, random_state, align=BLOCK)
    return bootstrap_replicates(GridSample(y, inverse, y, n_values), auc_from_counts, plan)


def acceleration(pos, neg):
    """BCa acceleration of the AUC from the stratified jackknife, in closed form (NaN: no spread).

    Davison & Hinkley 1997, sec. 3.7: leaving out a positive with component
    V10 gives the AUC (m A - V10) / (m - 1), so its empirical influence is
    V10 - A, and likewise V01 - A for a negative -- all of them in O(n log n)
    from the structural components, no refit.
    """
    auc, v10, v01, m, n = _components(pos, neg)
    l10, l01 = v10 - auc, v01 - auc  # (m - 1)(mean - leave-one-out AUC) = V10 - A, likewise V01 - A
    second = (pos * l10**2).sum() / m**2 + (neg * l01**2).sum() / n**2
    if not second > 0:
        return float("nan")
    third = (pos * l10**3).sum() / m**3 + (neg * l01**3).sum() / n**3
    return float(third / (6.0 * second**1.5))


# -- public functions ----------------------------------------------------------


def auc_ci(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    confidence_level: float = 0.95,
    method: str = "delong",
    pos_label: object = None,
    n_bootstrap: int = 2000,
    random_state: int | None = 0,
) -> AUCInterval:
    """Confidence interval of the ROC AUC.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels ({0, 1}, {-1, 1}, booleans, or any two values with
        ``pos_label``).
    y_score : array-like of shape (n,)
        Scores, higher = more likely positive.
    confidence_level : float, default=0.95
    method : {"delong", "logit", "bootstrap", "bca"}, default="delong"
        * ``"delong"``: AUC -/+ z SE with DeLong's standard error, clipped to
          [0, 1] -- what pROC and most peers report;
        * ``"logit"``: the same interval on the logit scale, mapped back
          (delta method, SE/(A(1 - A))): it stays inside (0, 1) and is
          asymmetric near 1, where the plain interval under-covers on small
          samples (the coverage table in ``docs/user_guide/uncertainty.md``);
        * ``"bootstrap"``: percentile interval of ``n_bootstrap`` replicates,
          stratified by class (each replicate keeps the class counts);
        * ``"bca"``: bias-corrected and accelerated interval of the same
          replicates, falling back (with a warning) to the percentile
          interval where it is not defined (all replicates on one side of
          the estimate, or no spread).
    pos_label : label, optional
        The positive class, needed unless labels are {0, 1}, {-1, 1} or bool.
    n_bootstrap : int, default=2000
        Replicates (bootstrap methods only).
    random_state : int or None, default=0
        Seed of the replicates (bootstrap methods only).

    Returns
    -------
    AUCInterval

    Notes
    -----
    DeLong's variance needs two examples of each class; with one, the
    estimate is given and the interval is NaN (with a warning).  With one
    class only, everything is NaN (with a warning).  The bootstrap's
    standard error is the standard deviation of its replicates.  The
    bootstrap draws blocks of 64 replicates of per-example counts; at
    n = 10^6 that is about 0.4 s per replicate and 1.3 GB at peak on a
    shared 2-core machine, so DeLong is the method for large n (0.65 s for
    the whole interval).

    Examples
    --------
    >>> from beyondauc import auc_ci
    >>> ci = auc_ci([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.35, 0.4, 0.8, 0.9])
    >>> round(ci.estimate, 4), round(ci.low, 3), round(ci.high, 3)
    (0.8889, 0.581, 1.0)
    >>> auc_ci([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.35, 0.4, 0.8, 0.9], method="bootstrap",
    ...        n_bootstrap=200).method
    'bootstrap'
    """
    confidence_level = check_number(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    check_option(method, "method", AUC_METHODS)
    bootstrap = method in ("bootstrap", "bca")
    if bootstrap:
        n_bootstrap, _ = check_bootstrap(n_bootstrap, confidence_level)
        if n_bootstrap < 1:
            raise ValueError(f"`n_bootstrap` must be an int >= 1 for method={method!r}, got {n_bootstrap}")
        random_state = check_random_state(random_state)
    y, s = _check_pair(y_true, y_score, pos_label)
    values, inverse, pos, neg = grid_counts(y, s)
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    nan = float("nan")

    def result(est, low, high, se, m=method):
        return AUCInterval(float(est), float(low), float(high), float(se), m, confidence_level, n_pos, n_neg)

    if n_pos == 0 or n_neg == 0:
        warn_undefined(f"the AUC is undefined: `y_true` has only {'negatives' if n_pos == 0 else 'positives'}")
        return result(nan, nan, nan, nan)
    if not bootstrap:
        auc, var, _, _ = _delong(pos, neg)
        if not np.isfinite(var):
            warn_undefined(
                f"DeLong's variance needs two examples of each class, got {n_pos} positive(s) and "
                f"{n_neg} negative(s); the interval is NaN"
            )
            return result(auc, nan, nan, nan)
        se = math.sqrt(var)
        low, high = _normal_interval(auc, se, confidence_level, transform=method == "logit")
        return result(auc, low, high, se)
    auc = float(auc_from_counts(pos, neg))
    reps = bootstrap_aucs(y, inverse, len(values), n_bootstrap, random_state)
    se = float(np.std(reps, ddof=1)) if n_bootstrap > 1 else nan
    if method == "bca":
        # the BCa interval (Efron 1987); its acceleration from the stratified jackknife, in closed form
        bca = bca_interval(reps, auc, acceleration(pos, neg), confidence_level)
        if bca is not None:
            return result(auc, *bca, se)
        warnings.warn(
            "the BCa interval is not defined for these replicates (all on one side of the estimate, "
            "or no spread); the percentile interval is returned",
            UserWarning,
            stacklevel=2,
        )
    low, high = percentile_interval(reps, confidence_level)
    return result(auc, low, high, se, "bootstrap")


def compare_auc(
    y_true: ArrayLike,
    score_a: ArrayLike,
    score_b: ArrayLike,
    *,
    pos_label: object = None,
    confidence_level: float = 0.95,
) -> AUCComparison:
    """The paired DeLong test: do two scores of the same examples have different AUCs?

    DeLong, DeLong & Clarke-Pearson (1988): the covariance of the two AUCs
    comes from the covariance of their structural components over the same
    positives and negatives, so the test accounts for the scores being
    correlated (it is far more powerful than comparing two separate
    intervals).

    Parameters
    ----------
    y_true : array-like of shape (n,)
    score_a, score_b : array-like of shape (n,)
        Two scores of the same examples.
    pos_label : label, optional
    confidence_level : float, default=0.95
        Level of the interval of the difference.

    Returns
    -------
    AUCComparison
        ``statistic`` = difference / SE; when the SE is 0 (e.g. identical
        rankings) a zero difference has statistic 0 and p-value 1, a nonzero
        one statistic -/+inf and p-value 0.

    Examples
    --------
    >>> from beyondauc import compare_auc
    >>> y = [0, 0, 0, 1, 0, 1, 1, 1]
    >>> res = compare_auc(y, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [0.2, 0.1, 0.6, 0.4, 0.3, 0.5, 0.8, 0.7])
    >>> round(res.auc_a, 4), round(res.auc_b, 4), round(res.pvalue, 3)
    (0.9375, 0.875, 0.712)
    """
    from scipy.stats import norm

    confidence_level = check_number(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    y, a = _check_pair(y_true, score_a, pos_label, score_name="score_a")
    _, b = _check_pair(y_true, score_b, pos_label, score_name="score_b")
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    nan = float("nan")
    if n_pos < 2 or n_neg < 2:
        warn_undefined(
            f"the paired DeLong test needs two examples of each class, got {n_pos} positive(s) and "
            f"{n_neg} negative(s); the test is NaN"
        )
        aucs = [float(auc_from_counts(*grid_counts(y, s)[2:])) if n_pos and n_neg else nan for s in (a, b)]
        return AUCComparison(
            aucs[0], aucs[1], aucs[0] - aucs[1], nan, nan, nan, nan, nan, confidence_level, n_pos, n_neg
        )
    is_pos = y == 1
    v10, v01, aucs = [], [], []
    for s in (a, b):  # two scores
        _, inverse, pos, neg = grid_counts(y, s)
        auc, g10, g01, _, _ = _components(pos, neg)
        aucs.append(float(auc))
        v10.append(g10[inverse[is_pos]])
        v01.append(g01[inverse[~is_pos]])
    d10 = v10[0] - v10[1]  # the difference's components: Var(d) = var(d10) / m + var(d01) / n
    d01 = v01[0] - v01[1]
    var = np.var(d10, ddof=1) / n_pos + np.var(d01, ddof=1) / n_neg
    se = math.sqrt(max(var, 0.0))
    diff = aucs[0] - aucs[1]
    if diff == 0:
        stat = 0.0
    else:
        with np.errstate(divide="ignore"):
            stat = float(np.float64(diff) / se)
    pvalue = float(2 * norm.sf(abs(stat)))
    z = norm.ppf(0.5 + confidence_level / 2)
    low, high = max(diff - z * se, -1.0), min(diff + z * se, 1.0)
    return AUCComparison(aucs[0], aucs[1], diff, se, stat, pvalue, low, high, confidence_level, n_pos, n_neg)


@each_model_view()
def auc_intervals(bench: Benchmark, *, confidence_level: float = 0.95, method: str = "delong") -> pd.DataFrame:
    """DeLong intervals of the AUC of every model on every dataset of a benchmark.

    When rows repeat items (an ``epoch`` or ``sample`` column beside ``id``),
    the variance is Obuchowski's clustered DeLong variance over the items
    (:mod:`~beyondauc.metrics.uncertainty.clustered_delong`), not DeLong's over the rows.

    Parameters
    ----------
    bench : Benchmark
    confidence_level : float, default=0.95
    method : {"delong", "logit"}, default="delong"
        See :func:`auc_ci`.

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``domain``, ``model``, ``auc``, ``auc_low``,
        ``auc_high``, ``auc_se``; a dataset with one class is NaN (warned
        once), one with a single example of a class has NaN bounds.

    Examples
    --------
    >>> from beyondauc import auc_intervals, load_demo
    >>> t = auc_intervals(load_demo())
    >>> list(t.columns)
    ['dataset', 'domain', 'model', 'auc', 'auc_low', 'auc_high', 'auc_se']
    >>> bool(((t["auc_low"] <= t["auc"]) & (t["auc"] <= t["auc_high"])).all())
    True
    """
    if not isinstance(bench, Benchmark):
        raise ValueError(f"`bench` must be a Benchmark (see load_benchmark), got {type(bench).__name__}")
    confidence_level = check_number(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    check_option(method, "method", ("delong", "logit"))
    y = bench.labels()
    codes = bench.dataset_codes()
    n_data = len(bench.datasets)
    frames = []
    warned = False
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_data + 1))
    for model in bench.models:  # a loop over models, and over datasets: each on its own grid
        auc, var, n_pos, n_neg = _delong_by_dataset(y, bench.scores(model), order, bounds)
        if bench.repeated:  # rows repeat items: Obuchowski's clustered variance, whole items
            var = clustered_by_dataset(y, bench.scores(model), bench.items(), order, bounds)
        if not warned and ((n_pos < 2) | (n_neg < 2)).any():
            bad = [d for d, p, q in zip(bench.datasets, n_pos, n_neg) if p < 2 or q < 2]
            warn_undefined(f"the AUC interval needs two examples of each class; NaN on dataset(s) {bad}")
            warned = True
        se = np.sqrt(var)
        low, high = _normal_interval(auc, se, confidence_level, transform=method == "logit")
        frames.append(
            pd.DataFrame(
                {
                    "dataset": list(bench.datasets),
                    "domain": [bench.domains.get(d) for d in bench.datasets],
                    "model": model,
                    "auc": auc,
                    "auc_low": low,
                    "auc_high": high,
                    "auc_se": se,
                }
            )
        )
    cols = ["dataset", "domain", "model", "auc", "auc_low", "auc_high", "auc_se"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
