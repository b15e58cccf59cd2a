"""Abstention with a guarantee: the confidence threshold certified to keep the risk of the answers at most r.

A model answers when its confidence is at or above a threshold λ and abstains
otherwise.  The *selective risk* of λ is the mean loss among the answered
examples (the error rate for right/wrong answers, ``1 - quality`` for graded
ones).  :func:`risk_controlled_threshold` chooses λ on calibration data so that,
with probability at least ``1 - delta`` over the draw of that data, the
selective risk of λ on new data from the same distribution is at most the
target ``risk``:

* ``method="ltt"``: Learn-then-Test (Angelopoulos, Bates, Candès, Jordan &
  Lei 2021).  Each candidate threshold λ (the distinct calibration
  confidences, tied confidences entering together) is the null hypothesis
  "the selective risk of λ exceeds r", with a p-value from the ``n_λ``
  answered losses: the binomial tail ``P(Binom(n_λ, r) <= k_λ)`` for 0/1
  losses (``k_λ`` errors), the Hoeffding--Bentkus p-value for graded losses
  in [0, 1].  The hypotheses are tested in a fixed sequence from the most
  confident end, at level ``delta`` each, stopping at the first that is not
  rejected.  The sequence starts at the first threshold that answers at
  least :func:`sequence_start` examples: the fewest at which a model at half
  the target risk would be certified, a count fixed by ``risk``, ``delta``
  and the kind of loss alone (76 answers for r = 0.1, delta = 0.05 and 0/1
  losses; 160 for graded ones).  Started at the very top, a fixed sequence
  would stop at once on the few examples answered there.  The certified
  threshold is the lowest rejected one (the largest coverage).
* ``method="sgr"``: Selection with Guaranteed Risk (Geifman & El-Yaniv
  2017): a binary search over the ``m`` distinct calibration confidences,
  each of its ``k = ceil(log2(m + 1))`` steps testing its threshold at level
  ``delta / k`` (a union bound over the steps), with the same p-values.
  The certified threshold is the lowest one that passed.

No certified threshold is a result, not an error: ``certified`` is False, the
threshold is ``inf`` (abstain on everything) and the coverage 0.

Both guarantees hold when the new data comes from the distribution of the
calibration data; whether a threshold chosen on one dataset keeps its promise
on another is what the evaluation's ``risk_control`` table measures.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ...utils.html import result_html
from ...utils.validation import check_number, check_option, check_scores
from .curves import loss_points

__all__ = [
    "RISK_CONTROL_METHODS",
    "RiskControl",
    "risk_controlled_threshold",
    "selective_risk_pvalues",
    "sequence_start",
]

RISK_CONTROL_METHODS = ("ltt", "sgr")


@dataclass(frozen=True)
class RiskControl:
    """A confidence threshold certified on calibration data (or the finding that none is).

    Attributes
    ----------
    threshold : float
        Answer when the confidence is at or above it; ``inf`` when no
        threshold is certified.
    certified : bool
        Whether some threshold passed the test.
    coverage : float
        Share of the calibration examples answered at ``threshold``.
    risk : float
        Selective risk (mean loss of the answered) on the calibration data;
        NaN when nothing is answered.
    n_answered : int
    target_risk, delta : float
        The guarantee asked for: selective risk at most ``target_risk`` with
        probability at least ``1 - delta``.
    method : {"ltt", "sgr"}
    graded : bool
        Whether the losses were graded (Hoeffding--Bentkus p-values) rather
        than 0/1 (binomial tail).
    pvalue : float
        The p-value of the certified threshold (NaN when none is).
    """

    threshold: float
    certified: bool
    coverage: float
    risk: float
    n_answered: int
    target_risk: float
    delta: float
    method: str
    graded: bool
    pvalue: float

    def __repr__(self) -> str:
        what = f"threshold={self.threshold:.4g}" if self.certified else "no threshold certified"
        return (
            f"RiskControl({what}, coverage={self.coverage:.3f}, risk={self.risk:.3f}, "
            f"target_risk={self.target_risk:g}, delta={self.delta:g}, method={self.method!r})"
        )

    def _repr_html_(self) -> str:
        return result_html(
            f"RiskControl ({self.method})",
            [
                ("certified", self.certified),
                ("threshold", self.threshold),
                ("coverage", self.coverage),
                ("calibration risk", self.risk),
                ("answered", self.n_answered),
                ("target risk", self.target_risk),
                ("delta", self.delta),
                ("losses", "graded" if self.graded else "0/1"),
                ("p-value", self.pvalue),
            ],
        )


def selective_risk_pvalues(losses: ArrayLike, n: ArrayLike, *, risk: float, graded: bool) -> np.ndarray:
    """P-values of "the selective risk exceeds ``risk``" from ``n`` answered losses summing to ``losses``.

    0/1 losses: the binomial tail ``P(Binom(n, r) <= losses)``, exact.
    Graded losses in [0, 1]: the Hoeffding--Bentkus p-value
    ``min(exp(-n h(min(mean, r), r)), e * P(Binom(n, r) <= ceil(n * mean)))``
    with ``h(a, b) = a log(a / b) + (1 - a) log((1 - a) / (1 - b))`` (Bates,
    Angelopoulos, Lei, Malik & Jordan 2021), valid for any losses in [0, 1].
    ``n = 0`` gives 1.

    Examples
    --------
    >>> from beyondauc.metrics.selective.risk_control import selective_risk_pvalues
    >>> float(selective_risk_pvalues([0], [30], risk=0.1, graded=False)[0].round(4))  # 0.9 ** 30
    0.0424
    """
    k = np.asarray(losses, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = n.astype(np.int64)  # scipy.special's binomial tail, not scipy.stats: the report kernels skip that
        if not graded:
            p = special.bdtr(np.floor(k + 1e-9).astype(np.int64), whole, risk)
        else:
            mean = np.minimum(np.where(n > 0, k / np.maximum(n, 1), 0.0), risk)
            h = mean * np.log(np.where(mean > 0, mean / risk, 1.0)) + (1 - mean) * np.log((1 - mean) / (1 - risk))
            hoeffding = np.exp(-n * h)
            bentkus = math.e * special.bdtr(np.ceil(k - 1e-9).astype(np.int64), whole, risk)
            p = np.minimum(hoeffding, bentkus)
    return np.where(n > 0, np.minimum(p, 1.0), 1.0)


def risk_controlled_threshold(
    correct: ArrayLike, confidence: ArrayLike, *, risk: float, delta: float = 0.05, method: str = "ltt"
) -> RiskControl:
    """The lowest confidence threshold certified to keep the risk of the answered at most ``risk``.

    Parameters
    ----------
    correct : array-like of shape (n,)
        Whether each calibration answer is right (0/1 or booleans), or its
        quality in [0, 1] (graded: the loss is ``1 - quality``).
    confidence : array-like of shape (n,)
        The model's confidence, any scale (only its order matters).
    risk : float in (0, 1)
        The target: the largest admissible mean loss among the answered.
    delta : float in (0, 1), default=0.05
        The admissible probability that the guarantee fails.
    method : {"ltt", "sgr"}, default="ltt"
        Learn-then-Test with fixed-sequence testing, or Selection with
        Guaranteed Risk (module docstring).

    Returns
    -------
    RiskControl

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import risk_controlled_threshold
    >>> rng = np.random.default_rng(0)
    >>> confidence = rng.uniform(size=2000)
    >>> correct = rng.uniform(size=2000) < 0.5 + 0.5 * confidence  # confident answers are right more often
    >>> rc = risk_controlled_threshold(correct, confidence, risk=0.1)
    >>> rc.certified, bool(rc.risk <= 0.1), bool(0.2 < rc.coverage < 0.6)
    (True, True, True)
    """
    method = str(check_option(method, "method", RISK_CONTROL_METHODS))
    risk = check_number(risk, "risk", low=0, high=1, low_open=True, high_open=True)
    delta = check_number(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    conf = check_scores(confidence, "confidence")
    given = np.asarray(correct)
    quality = check_scores(given.astype(float) if given.dtype.kind == "b" else given, "correct").astype(float)
    if len(quality) != len(conf):
        raise ValueError(f"`correct` and `confidence` must have one length, got {len(quality)} and {len(conf)}")
    if np.any((quality < 0) | (quality > 1)):
        raise ValueError("`correct` must be 0/1 or a quality in [0, 1]")
    graded = bool(np.any((quality != 0) & (quality != 1)))
    thresholds, answered, losses = loss_points(conf, quality)
    pvalues = selective_risk_pvalues(losses, answered, risk=risk, graded=graded)
    if method == "ltt":
        chosen = _ltt(pvalues, answered, sequence_start(risk, delta, graded=graded), delta)
    else:
        chosen = _sgr(pvalues, delta)
    if chosen < 0:
        return RiskControl(np.inf, False, 0.0, np.nan, 0, risk, delta, method, graded, np.nan)
    n = int(answered[chosen])
    return RiskControl(
        float(thresholds[chosen]),
        True,
        n / len(conf),
        float(losses[chosen] / n),
        n,
        risk,
        delta,
        method,
        graded,
        float(pvalues[chosen]),
    )


def sequence_start(risk: float, delta: float, *, graded: bool, limit: int = 1 << 20) -> int:
    """The fewest answers at which Learn-then-Test's fixed sequence starts.

    The smallest ``n`` at which a model whose answered risk is half the
    target would be certified: ``p(n * risk / 2 losses out of n) <= delta``
    (the losses rounded down for 0/1 losses).  It depends on the target,
    ``delta`` and the kind of loss only, never on the data, and thresholds
    answering fewer examples are not tested: with so few answers the test
    could only stop the sequence before it reaches the thresholds where the
    data can speak.  ``limit`` when even that many answers would not do.

    Examples
    --------
    >>> from beyondauc.metrics.selective.risk_control import sequence_start
    >>> sequence_start(0.1, 0.05, graded=False), sequence_start(0.1, 0.05, graded=True)
    (76, 160)
    """
    return _sequence_start(float(risk), float(delta), bool(graded), int(limit))


@functools.lru_cache(maxsize=64)
def _sequence_start(risk, delta, graded, limit):
    lo = 1
    while lo <= limit:  # blocks of doubling size: a few thousand p-values for usual targets
        n = np.arange(lo, min(2 * lo, limit + 1), dtype=float)
        losses = n * risk / 2
        p = selective_risk_pvalues(losses if graded else np.floor(losses), n, risk=risk, graded=graded)
        reached = np.flatnonzero(p <= delta)
        if len(reached):
            return int(n[reached[0]])
        lo *= 2
    return limit


def _ltt(pvalues, answered, start_count, delta):
    """Index of the last rejection of the fixed sequence from the most confident end (-1: none).

    The sequence starts at the first threshold answering at least ``start_count`` examples
    (:func:`sequence_start`) and stops at its first p-value above ``delta``.
    """
    start = int(np.searchsorted(answered, start_count, side="left"))  # answered is increasing
    failed = np.flatnonzero(pvalues[start:] > delta)
    rejected = failed[0] if len(failed) else len(pvalues) - start  # the sequence's rejections before it stops
    return start + rejected - 1 if rejected else -1


def _sgr(pvalues, delta):
    """Index of the lowest threshold passing the binary search of Geifman & El-Yaniv (-1: none).

    Over the thresholds, most confident first, the search looks for the
    largest index that passes; it takes at most ``k = ceil(log2(m + 1))``
    steps, and each test is at level ``delta / k``.
    """
    steps = max(1, math.ceil(math.log2(len(pvalues) + 1)))
    lo, hi, best = 0, len(pvalues) - 1, -1
    for _ in range(steps):
        if lo > hi:
            break
        z = (lo + hi + 1) // 2
        if pvalues[z] <= delta / steps:
            best, lo = z, z + 1  # certified: try to answer more
        else:
            hi = z - 1
    return best
