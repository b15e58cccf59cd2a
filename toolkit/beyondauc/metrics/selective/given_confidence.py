"""Calibration of the confidence as given, and the prediction rejection ratio.

When a model (an LLM, a judge) gives its own confidence, the first question
is whether that number is honest: of the answers given with confidence 0.8,
are 80% right?  :func:`brier_score` (with Murphy's decomposition),
:func:`negative_log_likelihood` and :func:`smooth_ece` judge the confidence
as it was given, without any recalibration (the binned ECE is
:func:`~beyondauc.expected_calibration_error`, with equal-width or
equal-mass bins).  :func:`reliability_band` gives the bins of a
reliability diagram with a Wilson band per bin.

:func:`prediction_rejection_ratio` asks the ranking question instead: does
rejecting the least confident answers remove the bad ones?  It is
LM-Polygraph's headline metric (PRR), oracle- and random-normalised.

Every function takes ``correct, confidence`` first.  ``correct`` is whether
each answer is right (booleans or 0/1) or a graded quality in [0, 1] (a
ROUGE or judge score); the loss is ``1 - correct``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import ndtri, xlogy  # not scipy.stats: it would load in every report kernel

from ...utils.html import result_html
from ...utils.validation import check_number, check_scores, warn_undefined
from ..calibration.reliability import reliability_bins

__all__ = [
    "BrierScore",
    "RejectionCurve",
    "brier_score",
    "check_given_confidence",
    "negative_log_likelihood",
    "prediction_rejection_ratio",
    "rejection_curve",
    "reliability_band",
    "smooth_ece",
]

NLL_EPS = 1e-15  # the probabilities c and 1 - c are floored at eps before the logarithm


# -- validation ---------------------------------------------------------------------------


def check_given_confidence(
    correct: ArrayLike,
    confidence: ArrayLike,
    *,
    probability: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """``(quality, confidence)`` as float arrays, checked; a one-line ValueError naming the parameter otherwise.

    Parameters
    ----------
    correct : array-like of shape (n,)
        Booleans, 0/1, or a graded quality in [0, 1].
    confidence : array-like of shape (n,)
        Finite numbers; in [0, 1] when ``probability``.
    probability : bool, default=True

    Returns
    -------
    quality, confidence : ndarray of float64

    Examples
    --------
    >>> from beyondauc.metrics.selective.given_confidence import check_given_confidence
    >>> check_given_confidence([True, False], [0.9, 0.2])[0].tolist()
    [1.0, 0.0]
    """
    conf = check_scores(confidence, "confidence")
    given = np.asarray(correct)
    if given.dtype.kind == "O":
        raise ValueError("`correct` must be booleans, 0/1 or a quality in [0, 1], got objects (e.g. strings)")
    quality = check_scores(given.astype(np.float64) if given.dtype.kind == "b" else given, "correct")
    if len(quality) != len(conf):
        raise ValueError(f"`correct` and `confidence` must have one length, got {len(quality)} and {len(conf)}")
    if len(conf) == 0:
        raise ValueError("`confidence` is empty: no answers to judge")
    _check_unit_values(quality, "correct", "booleans, 0/1 or a quality in [0, 1]")
    if probability:
        _check_unit_values(conf, "confidence", "a probability in [0, 1]")
    return quality, conf


def _check_unit_values(values, name, expected):
    bad = (values < 0) | (values > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must be {expected}, got {values[i]!r} at position {i}")


# -- Brier score and NLL ------------------------------------------------------------------


@dataclass(frozen=True)
class BrierScore:
    """The Brier score of a given confidence and Murphy's decomposition of it.

    ``score = reliability - resolution + uncertainty``, exactly (up to
    rounding), with the examples grouped by their distinct confidence value.

    Attributes
    ----------
    score : float
        ``mean((confidence - correct) ** 2)``; 0 is perfect.
    reliability : float
        ``sum_k n_k / n * (c_k - q_k) ** 2`` over the groups k of equal
        confidence ``c_k``, ``q_k`` the mean correctness of the group
        (lower is better: the miscalibration).
    resolution : float
        ``sum_k n_k / n * (q_k - q) ** 2``, ``q`` the overall mean
        correctness (higher is better: how much the groups differ).
    uncertainty : float
        ``mean((correct - q) ** 2)``, the variance of the correctness: the
        Brier score of always giving the mean ``q``.  For 0/1 correctness it
        is ``q (1 - q)``; for graded correctness it is smaller (the
        quality's own spread, which no confidence can explain away).
    n : int
        Number of examples.
    n_groups : int
        Number of distinct confidence values.
    """

    score: float
    reliability: float
    resolution: float
    uncertainty: float
    n: int
    n_groups: int

    def __repr__(self) -> str:
        return (
            f"BrierScore(score={self.score:.4g}, reliability={self.reliability:.4g}, "
            f"resolution={self.resolution:.4g}, uncertainty={self.uncertainty:.4g}, n={self.n})"
        )

    def _repr_html_(self) -> str:
        return result_html(
            "Brier score",
            [
                ("score", self.score),
                ("reliability", self.reliability),
                ("resolution", self.resolution),
                ("uncertainty", self.uncertainty),
                ("examples", self.n),
                ("distinct confidences", self.n_groups),
            ],
            note="score = reliability - resolution + uncertainty (groups: distinct confidence values)",
        )


def brier_score(correct: ArrayLike, confidence: ArrayLike) -> BrierScore:
    """The Brier score of the confidence as given, with Murphy's decomposition.

    Parameters
    ----------
    correct : array-like of shape (n,)
        Whether each answer is right (booleans or 0/1), or its graded
        quality in [0, 1].
    confidence : array-like of shape (n,)
        The confidence given with each answer, a probability in [0, 1].

    Returns
    -------
    BrierScore
        ``.score``, ``.reliability``, ``.resolution``, ``.uncertainty``.

    Notes
    -----
    Murphy's decomposition groups the examples by their *distinct
    confidence value* (no binning), which makes it exact.  With
    continuous confidences nearly every example is its own group: the
    reliability then is the score and the resolution the uncertainty.
    For a coarser view, round the confidences first (the score is then
    that of the rounded confidence).

    Examples
    --------
    >>> from beyondauc import brier_score
    >>> b = brier_score([1, 1, 0, 1], [0.9, 0.9, 0.9, 0.5])
    >>> round(b.score, 4), round(b.reliability - b.resolution + b.uncertainty, 4)
    (0.27, 0.27)
    >>> round(b.uncertainty, 4)  # 0.75 * 0.25
    0.1875
    """
    quality, conf = check_given_confidence(correct, confidence)
    values, group = np.unique(conf, return_inverse=True)
    n_k = np.bincount(group).astype(np.float64)
    q_k = np.bincount(group, weights=quality) / n_k
    n, q = len(conf), float(quality.mean())
    return BrierScore(
        score=float(np.mean((conf - quality) ** 2)),
        reliability=float(np.dot(n_k, (values - q_k) ** 2) / n),
        resolution=float(np.dot(n_k, (q_k - q) ** 2) / n),
        uncertainty=float(np.mean((quality - q) ** 2)),
        n=n,
        n_groups=len(values),
    )


def negative_log_likelihood(correct: ArrayLike, confidence: ArrayLike, *, eps: float = NLL_EPS) -> float:
    """Mean negative log-likelihood of the correctness under the confidence as given.

    ``-mean(q log c + (1 - q) log(1 - c))``, with ``c`` and ``1 - c`` each
    floored at ``eps`` inside the logarithms.  For graded correctness ``q`` it is the
    cross-entropy with the quality as target (its minimum, reached at
    ``c = q``, is the quality's entropy, not 0).

    Parameters
    ----------
    correct : array-like of shape (n,)
        Booleans, 0/1, or a graded quality in [0, 1].
    confidence : array-like of shape (n,)
        A probability in [0, 1].
    eps : float in (0, 0.5), default=1e-15
        A confidence of exactly 1 on a wrong answer (or 0 on a right one)
        would cost an infinite loss; floored, it costs ``-log(eps)``
        (34.54 for the default) instead.

    Returns
    -------
    float
        Natural logarithms (nats); 0 for a certain and right model.

    Examples
    --------
    >>> from beyondauc import negative_log_likelihood
    >>> round(negative_log_likelihood([1, 0], [0.8, 0.4]), 6)  # -(log 0.8 + log 0.6) / 2
    0.366985
    >>> round(negative_log_likelihood([0], [1.0]), 2)  # clipped: -log(1e-15)
    34.54
    """
    quality, conf = check_given_confidence(correct, confidence)
    eps = check_number(eps, "eps", low=0, high=0.5, low_open=True, high_open=True)
    return float(-np.mean(xlogy(quality, np.maximum(conf, eps)) + xlogy(1 - quality, np.maximum(1 - conf, eps))))


# -- smooth ECE ---------------------------------------------------------------------------


def smooth_ece(correct: ArrayLike, confidence: ArrayLike) -> float:
    """Smooth expected calibration error (Błasiok & Nakkiran 2024).

    The residuals ``correct - confidence`` are smoothed with a Gaussian
    kernel (reflected at 0 and 1) of bandwidth ``sigma``; the smooth ECE is
    the mean absolute smoothed residual, at the bandwidth where it equals
    ``sigma`` (the fixed point the authors prove exists and is unique).
    No bins to choose, and it is continuous in the confidences.  Computed
    by the authors' package ``relplot`` (``relplot.smECE``).

    Parameters
    ----------
    correct : array-like of shape (n,)
        Booleans, 0/1, or a graded quality in [0, 1] (smoothed alike).
    confidence : array-like of shape (n,)
        A probability in [0, 1].

    Returns
    -------
    float
        In [0, 1]; 0 for a calibrated confidence.  NaN, with an
        :class:`~beyondauc.utils.validation.UndefinedMetricWarning`, for a
        single answer (no bandwidth to choose).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> confidence = rng.uniform(size=2000)
    >>> bool(smooth_ece(rng.uniform(size=2000) < confidence, confidence) < 0.03)  # calibrated
    True
    >>> bool(smooth_ece(rng.uniform(size=2000) < confidence ** 3, confidence) > 0.1)  # overconfident
    True
    """
    quality, conf = check_given_confidence(correct, confidence)
    if len(conf) < 2:
        warn_undefined("smooth ECE is undefined for a single answer; returning NaN")
        return float("nan")
    import relplot  # imported here: it pulls in its plotting helpers

    return float(relplot.smECE(conf, quality))


# -- reliability diagram with a band ------------------------------------------------------


def reliability_band(
    correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 15, strategy: str = "uniform", level: float = 0.95
) -> pd.DataFrame:
    """The bins of the reliability diagram of a given confidence, each with a Wilson band.

    Bins as :func:`~beyondauc.reliability_bins` (``strategy="uniform"``:
    equal width; ``"quantile"``: equal mass).  The band of a bin is the
    Wilson score interval of its mean correctness ``m`` over its ``n_b``
    answers at ``level``.  For 0/1 correctness it is the usual binomial
    interval; for graded correctness, whose variance within a bin is at
    most ``m (1 - m)``, the same interval is conservative.

    Parameters
    ----------
    correct, confidence : array-like of shape (n,)
        As in :func:`brier_score`.
    n_bins : int, default=15
    strategy : {"uniform", "quantile"}, default="uniform"
    level : float in (0, 1), default=0.95

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``bin``, ``mean_confidence``,
        ``accuracy`` (the mean correctness), ``count``, ``low``, ``high``.

    Examples
    --------
    >>> from beyondauc import reliability_band
    >>> band = reliability_band([1, 1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.3, 0.2, 0.1], n_bins=2)
    >>> band[["bin", "accuracy", "count"]].values.tolist()
    [[0.0, 0.3333333333333333, 3.0], [1.0, 0.6666666666666666, 3.0]]
    >>> bool((band["low"] <= band["accuracy"]).all() and (band["accuracy"] <= band["high"]).all())
    True
    """
    quality, conf = check_given_confidence(correct, confidence)
    level = check_number(level, "level", low=0, high=1, low_open=True, high_open=True)
    bins, mean_conf, accuracy, count = reliability_bins(quality, conf, n_bins=n_bins, strategy=strategy)
    z = ndtri(0.5 + level / 2)
    n = count.astype(np.float64)
    centre = (accuracy + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n))
    return pd.DataFrame(
        {
            "bin": bins,
            "mean_confidence": mean_conf,
            "accuracy": accuracy,
            "count": count,
            "low": np.clip(centre - half, 0, 1),
            "high": np.clip(centre + half, 0, 1),
        }
    )


# -- prediction rejection ratio -----------------------------------------------------------


@dataclass(frozen=True)
class RejectionCurve:
    """Mean loss of the kept answers as the least confident are rejected, with the oracle and random curves.

    Point j (j = 0 .. n - 1) rejects the ``j`` least confident answers and
    keeps ``n - j``; the loss is ``1 - correct``.

    Attributes
    ----------
    rejection : ndarray
        ``j / n``.
    model : ndarray
        Mean loss of the ``n - j`` most confident answers; tied confidences
        averaged over every order of the ties (the expected loss of a
        random tie break).
    oracle : ndarray
        The same, rejecting by the true loss (the largest losses first).
    random : ndarray
        The mean loss of all answers, at every j (the expectation of a
        random rejection order).
    constant_loss : bool
        Whether every answer has the same loss (PRR is then undefined).
    """

    rejection: np.ndarray = field(repr=False)
    model: np.ndarray = field(repr=False)
    oracle: np.ndarray = field(repr=False)
    random: np.ndarray = field(repr=False)
    constant_loss: bool = False

    def __repr__(self) -> str:
        return f"RejectionCurve(n={len(self.rejection)}, prr={self.prr():.4g})"

    def prr(self, max_rejection: float = 1.0) -> float:
        """PRR over the rejection rates below ``max_rejection`` (see :func:`prediction_rejection_ratio`)."""
        max_rejection = check_number(max_rejection, "max_rejection", low=0, high=1, low_open=True)
        k = int(max_rejection * len(self.rejection))  # LM-Polygraph's count of rejection steps
        if k < 2 or self.constant_loss:
            warn_undefined(
                "PRR is undefined when every kept loss is the same, or with fewer than two rejection "
                "steps (the oracle does no better than random); returning NaN"
            )
            return float("nan")
        model, oracle, random = (float(np.mean(a[:k])) for a in (self.model, self.oracle, self.random))
        return (random - model) / (random - oracle)


def rejection_curve(correct: ArrayLike, confidence: ArrayLike) -> RejectionCurve:
    """The rejection curves of the loss ``1 - correct``: the model's, the oracle's and random.

    Parameters
    ----------
    correct : array-like of shape (n,)
        Booleans, 0/1, or a graded quality in [0, 1].
    confidence : array-like of shape (n,)
        Any finite scale (only the order matters); higher is more confident.

    Returns
    -------
    RejectionCurve

    Examples
    --------
    >>> from beyondauc import rejection_curve
    >>> rc = rejection_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
    >>> rc.model.tolist(), rc.oracle.tolist()
    ([0.5, 0.3333333333333333, 0.5, 0.0], [0.5, 0.3333333333333333, 0.0, 0.0])
    """
    quality, conf = check_given_confidence(correct, confidence, probability=False)
    n = len(conf)
    order = np.argsort(-conf, kind="stable")
    c, loss = conf[order], 1.0 - quality[order]
    run = np.cumsum(np.r_[True, c[1:] != c[:-1]]) - 1  # the run of tied confidences of each position
    tied_mean = np.bincount(run, weights=loss) / np.bincount(run)
    kept = np.arange(n, 0, -1, dtype=np.float64)  # n - j for j = 0 .. n - 1
    model = np.cumsum(tied_mean[run])[::-1] / kept
    oracle = np.cumsum(np.sort(loss))[::-1] / kept
    return RejectionCurve(
        rejection=np.arange(n) / n,
        model=model,
        oracle=oracle,
        random=np.full(n, loss.mean()),
        constant_loss=bool(loss.min() == loss.max()),
    )


def prediction_rejection_ratio(correct: ArrayLike, confidence: ArrayLike, *, max_rejection: float = 1.0) -> float:
    """Prediction rejection ratio (PRR), LM-Polygraph's convention.

    Reject the least confident answers one by one: the mean loss
    (``1 - correct``) of the kept answers traces the model's rejection
    curve; rejecting by the true loss traces the oracle's, and rejecting at
    random keeps the mean loss.  With ``A`` the mean of a curve over the
    rejection rates ``0, 1/n, ..., (k - 1)/n``, ``k = int(max_rejection * n)``::

        PRR = (A_random - A_model) / (A_random - A_oracle)

    1 is the oracle's ranking, 0 a random one, negative worse than random.

    Parameters
    ----------
    correct : array-like of shape (n,)
        Booleans, 0/1, or a graded quality in [0, 1].
    confidence : array-like of shape (n,)
        Any finite scale (only the order matters); higher is more confident.
    max_rejection : float in (0, 1], default=1.0
        The share of the curve used: 0.5 gives PRR over the first half.

    Returns
    -------
    float
        NaN, with an :class:`~beyondauc.utils.validation.UndefinedMetricWarning`,
        when every loss is the same (or ``k < 2``): the oracle is then no
        better than random.

    Notes
    -----
    LM-Polygraph (``ue_metrics/pred_rej_area.py`` and
    ``normalize_metric`` in ``ue_metrics/ue_metric.py``) computes the same
    areas on the quality, which gives the same ratio; it estimates the
    random area from 1000 seeded shuffles where this uses its exact value,
    the mean, and it breaks tied confidences by sort order where this
    averages over every order of the ties.

    Examples
    --------
    >>> from beyondauc import prediction_rejection_ratio
    >>> correct = [1, 1, 0, 1, 0, 0]
    >>> prediction_rejection_ratio(correct, [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]) < 1
    True
    >>> prediction_rejection_ratio(correct, [0.9, 0.8, 0.1, 0.7, 0.2, 0.3])  # the oracle's order
    1.0
    """
    return rejection_curve(correct, confidence).prr(max_rejection)
