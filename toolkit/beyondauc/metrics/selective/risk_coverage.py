"""Risk-coverage: AURC, AUGRC and E-AURC, the selective-classification literature's areas.

The risk of a point of the exact coverage-accuracy curve is its share of
wrong answers among the answered (:func:`aurc`), or among all examples, the
generalized risk (:func:`augrc`, Traub et al. 2024); :func:`e_aurc` is AURC
less the AURC of the best possible ranking.  Each integrates with steps (the
paper's and CRL's convention) or linearly (fd-shifts'), and accepts a graded
quality in [0, 1] (the loss is ``1 - quality``).  The curve itself is
:func:`~beyondauc.metrics.selective.curves.coverage_accuracy_curve`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy

from ...utils.validation import check_option
from .curves import CoverageAccuracyCurve, checked_curve

__all__ = ["augrc", "aurc", "e_aurc", "graded_excess"]


_INTERPOLATIONS = ("step", "linear")
_OPTIMA = ("exact", "analytic")


def area_under(coverage, value, interpolation, start):
    """Area under ``value`` over ``coverage`` (exact-curve points, ascending coverage).

    ``step``: each point's value holds over the coverage it adds (tied
    confidences enter together, so a block of ties is charged the value at
    its end).  ``linear``: the trapezoid rule over the points with the
    point ``(0, start)`` prepended (what ``sklearn.metrics.auc`` gives on
    those points).
    """
    width = np.diff(coverage, prepend=0.0)
    if interpolation == "step":
        return float(np.dot(width, value))
    before = np.concatenate([[start], value[:-1]])
    return float(np.dot(width, (before + value) / 2.0))


def risks(cur):
    """Selective risk (wrong / answered) and generalized risk (wrong / all) per exact-curve point."""
    wrong = cur.n_answered - cur.n_correct
    return wrong / cur.n_answered, wrong / cur.n_answered[-1]


def aurc_of(cur, interpolation):
    """AURC of an exact curve (:func:`aurc` without the checks)."""
    if interpolation == "step":
        return 1.0 - cur.score  # bit-identical to the number reported before the option existed
    risk = risks(cur)[0]
    return area_under(cur.coverage, risk, interpolation, risk[0])


def aurc(confidence: ArrayLike, correct: ArrayLike, *, interpolation: str = "step") -> float:
    """Area under the risk-coverage curve (risk = 1 - accuracy), lower is better.

    The exact curve has one point per distinct confidence (tied confidences
    enter together); the risk of a point is the share of wrong answers among
    the answered.

    * ``interpolation="step"`` (default): ``sum_k (coverage_k - coverage_{k-1}) * risk_k``.
      Without ties it is the mean selective risk over the n prefixes
      (Geifman et al.; the AURC of CRL, Moon et al. 2020); a block of tied
      confidences is charged the risk at its end.
    * ``"linear"``: the trapezoid rule over the same points, starting from
      ``(0, risk_1)`` -- the AURC of fd-shifts (``RiskCoverageStats.aurc``,
      divided by its display scale 1000; Traub et al. 2024).
      torch-uncertainty's ``AURC`` differs again: it breaks ties in sort
      order, integrates from coverage 1/n and divides by ``1 - 1/n``.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Any scale; only the order matters.
    correct : array-like of shape (n,)
        Right/wrong (bool or 0/1), or a graded quality in [0, 1]: the loss is ``1 - quality``.
    interpolation : {"step", "linear"}, default="step"

    Returns
    -------
    float

    Examples
    --------
    >>> from beyondauc import aurc
    >>> aurc([0.9, 0.8, 0.7], [True, False, True])
    0.2777777777777778
    >>> aurc([0.9, 0.8, 0.7], [True, False, True], interpolation="linear")
    0.2222222222222222
    """
    check_option(interpolation, "interpolation", _INTERPOLATIONS)
    return aurc_of(checked_curve(confidence, correct, graded=True)[0], interpolation)


def augrc(confidence: ArrayLike, correct: ArrayLike, *, interpolation: str = "step") -> float:
    """Area under the generalized risk-coverage curve (Traub et al. 2024), lower is better.

    The generalized risk of a point of the exact curve (tied confidences
    enter together) is the share of *all* n examples that are answered and
    wrong: ``wrong_answered_k / n``, so it grows from 0 at coverage 0 to
    the overall error rate at full coverage.  AUGRC is the area under it:

    * ``interpolation="step"`` (default, as :func:`aurc`):
      ``sum_k (coverage_k - coverage_{k-1}) * wrong_answered_k / n``, i.e.
      ``(1 / n^2) * #{(i, j): i wrong, c_i >= c_j}``;
    * ``"linear"``: the trapezoid rule over the points from ``(0, 0)`` --
      the AUGRC of fd-shifts, Traub et al.'s reference implementation
      (``RiskCoverageStats.augrc`` divided by its display scale 1000).  It
      equals their closed form ``(1 - AUROC_f) * acc * (1 - acc) + (1 - acc)^2 / 2``,
      with acc the accuracy and AUROC_f the AUROC of the confidence for
      telling right from wrong answers (ties count one half).

    AUGRC is the probability that a random wrong answer is given while a
    random other example is rejected: the average risk of an undetected
    failure.  The best ranking reaches ``(1 - acc)^2 / 2`` (linear).

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Any scale; only the order matters.
    correct : array-like of shape (n,)
        Right/wrong (bool or 0/1), or a graded quality in [0, 1]: the loss is ``1 - quality``.
    interpolation : {"step", "linear"}, default="step"

    Returns
    -------
    float

    Examples
    --------
    >>> from beyondauc import augrc
    >>> augrc([0.9, 0.8, 0.7], [True, False, True])
    0.2222222222222222
    >>> round(augrc([0.9, 0.8, 0.7], [True, False, True], interpolation="linear"), 12)
    0.166666666667
    """
    check_option(interpolation, "interpolation", _INTERPOLATIONS)
    cur, _ = checked_curve(confidence, correct, graded=True)
    return area_under(cur.coverage, risks(cur)[1], interpolation, 0.0)


def _optimal_aurc(n, n_correct, interpolation="step"):
    """AURC of the best ranking (every correct answer first, every confidence distinct)."""
    k = np.arange(1, n + 1, dtype=np.float64)
    risk = np.maximum(k - n_correct, 0.0) / k
    if interpolation == "step":  # the sum over k > n_correct only, as before the option existed
        return float(risk[n_correct:].sum() / n)
    return area_under(k / n, risk, interpolation, risk[0])


def _analytic_aurc(n, n_correct):
    """The large-n optimum ``r + (1 - r) ln(1 - r)``, r the overall risk (Geifman et al. 2019)."""
    r = 1.0 - n_correct / n
    return float(r + xlogy(1.0 - r, 1.0 - r))


def e_aurc(confidence: ArrayLike, correct: ArrayLike, *, optimum: str = "exact", interpolation: str = "step") -> float:
    """Excess AURC: :func:`aurc` minus the AURC of the best possible ranking.

    Parameters
    ----------
    confidence : array-like of shape (n,)
    correct : array-like of shape (n,)
        Right/wrong (bool or 0/1), or a graded quality in [0, 1]: the loss is ``1 - quality``.
    optimum : {"exact", "analytic"}, default="exact"
        ``"exact"``: the AURC (with the same ``interpolation``) of the best
        ranking of these n answers -- every correct answer first, each at
        its own confidence; for step integration
        ``(1/n) * sum_{k > n_correct} (k - n_correct) / k``.
        ``"analytic"``: ``r + (1 - r) ln(1 - r)`` with r the overall risk,
        the large-n limit of that optimum used by CRL (Moon et al. 2020,
        with step integration) and fd-shifts (with linear integration).
        With step integration the analytic optimum is below the exact one
        (by about ``r / (2n)``), so it gives the larger E-AURC.
    interpolation : {"step", "linear"}, default="step"
        As in :func:`aurc`.

    Returns
    -------
    float

    Notes
    -----
    With the exact optimum and step integration E-AURC is never negative,
    and it is 0 only when the confidence ranks every correct answer above
    every wrong one *and* no two wrong answers share a confidence.  Tied
    confidences enter together, so a block of tied wrong answers is charged
    the risk at its end over its whole width, while the optimum ranks them
    one by one: ``e_aurc([1, 0, 0], [True, False, False])`` is 1/18 = 0.056
    although the one correct answer is ranked first (the tied pair costs
    ``(1/3) * (2/3 - 1/2)``).  With the analytic optimum or linear
    integration E-AURC can be slightly negative.

    Examples
    --------
    >>> from beyondauc import e_aurc
    >>> e_aurc([0.9, 0.8], [True, False]), round(e_aurc([0.9, 0.8], [False, True]), 4)
    (0.0, 0.5)
    >>> round(e_aurc([1, 0, 0], [True, False, False]), 4)
    0.0556
    >>> round(e_aurc([0.9, 0.8], [True, False], optimum="analytic"), 4)
    0.0966
    """
    check_option(optimum, "optimum", _OPTIMA)
    check_option(interpolation, "interpolation", _INTERPOLATIONS)
    cur, ok = checked_curve(confidence, correct, graded=True)
    if ok.dtype.kind == "f":
        return graded_excess(cur, ok, optimum, interpolation)
    return excess(cur, len(ok), int(ok.sum()), optimum, interpolation)


def excess(cur, n, n_correct, optimum, interpolation):
    """E-AURC of an exact curve of ``n`` 0/1 answers, ``n_correct`` of them right (:func:`e_aurc` without the checks)."""
    best = _optimal_aurc(n, n_correct, interpolation) if optimum == "exact" else _analytic_aurc(n, n_correct)
    return float(aurc_of(cur, interpolation) - best)


def graded_excess(cur: CoverageAccuracyCurve, quality: np.ndarray, optimum: str, interpolation: str) -> float:
    """E-AURC of graded answers: the curve's AURC less that of the ranking by quality, best answers first.

    The best ranking answers the lowest losses ``1 - quality`` first, each
    at its own confidence: its risk at k answers is the mean of the k
    lowest losses (for 0/1 answers the exact optimum of :func:`e_aurc`).
    ``optimum="analytic"`` takes ``r + (1 - r) ln(1 - r)`` at the mean loss r,
    the 0/1 formula: for graded losses it is no bound, only the convention.
    """
    if optimum == "analytic":
        return float(aurc_of(cur, interpolation) - _analytic_aurc(1, 1.0 - float(np.mean(1.0 - quality))))
    losses = np.sort(1.0 - quality)
    k = np.arange(1, len(losses) + 1, dtype=np.float64)
    risk = np.cumsum(losses) / k
    return float(aurc_of(cur, interpolation) - area_under(k / len(k), risk, interpolation, risk[0]))
