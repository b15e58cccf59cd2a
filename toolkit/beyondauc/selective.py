"""Selective answering (Mishra et al.): when should a model abstain?

A model answers the examples it is confident about and abstains on the
rest.  Ranking examples by confidence (descending, tied confidences together)
gives the coverage-accuracy curve; its area -- the "AUC" of selective
answering -- hides where accuracy drops and whether it rises again.  DiSCA
scores what a safety-critical deployment needs instead:

* **a** -- the confidence at which accuracy first drops below 100%;
* **b(t)** -- the confidence at which accuracy first drops below the
  tolerance t (the worst admissible accuracy);
* **fluctuations** -- every step along the curve where accuracy *rises*
  with coverage, i.e. confidence and correctness disagree.

``DiSCA = x / a + y / b - z * sum_i (n - i + 1) (d2 - d1) / c / sum_i (n - i + 1)``;
DiDMA adds a computation score, NiDMA a DiSCA on out-of-distribution data.
DiSCA depends on the step of the confidence grid it is read from, so every
DiSCA carries its ``resolution`` (:func:`disca_resolution_sensitivity`
shows how much it moves).

Beside the paper's numbers: the conventions of the selective-classification
literature -- :func:`aurc` with step or linear integration, :func:`e_aurc`
against the exact or the analytic optimum, and :func:`augrc` (Traub et al.
2024), the area under the generalized risk.

Array functions take ``confidence, correct`` first.  The area, AURC and
friends accept confidences of any scale (only their order matters); DiSCA and
the grid curve need probabilities in [0, 1] -- for a binary probability p the
confidence is max(p, 1 - p).  :func:`selective_answering` and
:func:`selective_table` run them on a :class:`~beyondauc.Benchmark` with
calibrated probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import xlogy

from ._bootstrap import bootstrap_counts, check_bootstrap, dataset_seed, grid_weights, percentile_interval, strata_of
from ._fitting import class_weighted, logistic_params
from ._html import frame_html, result_html
from ._kernel import _grid_counts
from ._replicates import accuracy_at_coverages, calibrated_rows, intervals_of, replicate_chunks, selective_rows
from ._validation import check_number, check_option, check_random_state, check_scores
from .calibration import METHODS, PROTOCOLS, ScoreCalibrator, _protocol_rows

__all__ = [
    "RESOLUTIONS",
    "TOLERANCES",
    "CoverageAccuracyCurve",
    "DiDMA",
    "DiSCA",
    "NiDMA",
    "Plateau",
    "SelectiveAnswering",
    "accuracy_at_coverage",
    "auc_tail",
    "augrc",
    "aurc",
    "calibrated_confidence",
    "computation_score",
    "coverage_accuracy_curve",
    "coverage_at_accuracy",
    "didma",
    "disca",
    "disca_resolution_sensitivity",
    "selective_intervals",
    "e_aurc",
    "nidma",
    "plateau",
    "selective_answering",
    "selective_table",
    "tolerance_table",
]

TOLERANCES = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55)
_FLOOR = 0.001  # a, b and the fluctuation confidence gap are floored here (the paper's rule)
_GRID_SLACK = 1e-9  # a confidence within this many grid steps of a threshold reaches it


# -- validation -------------------------------------------------------------------

def _check_correct(correct, n, name="correct"):
    arr = np.asarray(correct)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got an array of shape {arr.shape}")
    if len(arr) != n:
        raise ValueError(f"`{name}` must have one entry per confidence ({n}), got {len(arr)}")
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iuf":
        bad = ~np.isin(arr, (0, 1))
        if not bad.any():
            return arr.astype(bool)
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must be boolean (True/False or 0/1), got {arr[i]!r} at position {i}")
    raise ValueError(f"`{name}` must be boolean (True/False or 0/1), got dtype {arr.dtype}")


def _check_inputs(confidence, correct, *, probability, names=("confidence", "correct")):
    c = check_scores(confidence, names[0])
    if len(c) == 0:
        raise ValueError(f"`{names[0]}` is empty: nothing was answered")
    ok = _check_correct(correct, len(c), names[1])
    if probability:
        bad = (c < 0) | (c > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`{names[0]}` must be a probability in [0, 1] here, got {c[i]!r} at position {i} "
                "(calibrate raw scores first, e.g. with ScoreCalibrator)"
            )
    return c, ok


def _check_unit(value, name, *, low_open=False):
    return check_number(value, name, low=0, high=1, low_open=low_open)


def _check_resolution(resolution):
    return check_number(resolution, "resolution", low=0, high=1, low_open=True)


def _check_weights(weights, name, k):
    try:
        w = tuple(float(v) for v in weights)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be {k} non-negative numbers summing to 1, got {weights!r}") from None
    if len(w) != k or not all(np.isfinite(v) and v >= 0 for v in w) or abs(sum(w) - 1) > 0.01 + 1e-9:  # the margin lets the paper's 0.33 + 0.33 + 0.33 pass
        raise ValueError(f"`{name}` must be {k} non-negative numbers summing to 1, got {weights!r}")
    return w


# -- curves ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CoverageAccuracyCurve:
    """Accuracy of the answered examples as the confidence threshold falls.

    Point k answers every example with confidence >= ``confidence[k]``;
    points run from the highest confidence to the lowest (the last answers
    everything).

    Attributes
    ----------
    score : float
        Area under the curve (the paper's "AUC"), with accuracy a step
        function of coverage: ``sum_k (coverage_k - coverage_{k-1}) * accuracy_k``.
        Equals ``1 - aurc``.
    coverage, accuracy : ndarray
        Share answered and accuracy of the answered, per point.
    confidence : ndarray
        The lowest confidence among the examples a point answers.
    n_answered, n_correct : ndarray
    resolution : float or None
        Grid step, or None for the exact per-unique-confidence curve.
    """

    score: float
    coverage: np.ndarray = field(repr=False)
    accuracy: np.ndarray = field(repr=False)
    confidence: np.ndarray = field(repr=False)
    n_answered: np.ndarray = field(repr=False)
    n_correct: np.ndarray = field(repr=False)
    resolution: float | None = None

    def partial_area(self, low=0.0, high=1.0):
        """Area under the curve between coverages ``low`` and ``high``."""
        low, high = _check_unit(low, "low"), _check_unit(high, "high")
        if high < low:
            raise ValueError(f"`high` must be >= `low`, got low={low} and high={high}")
        prev = np.concatenate([[0.0], self.coverage[:-1]])
        span = np.clip(np.minimum(self.coverage, high) - np.maximum(prev, low), 0.0, None)
        return float(np.dot(span, self.accuracy))

    def to_frame(self):
        """The points as a DataFrame."""
        return pd.DataFrame(
            {
                "confidence": self.confidence,
                "coverage": self.coverage,
                "accuracy": self.accuracy,
                "n_answered": self.n_answered,
                "n_correct": self.n_correct,
            }
        )

    def _repr_html_(self):
        n = len(self.coverage)
        return result_html("CoverageAccuracyCurve", [
            ("area", self.score), ("points", n),
            ("accuracy at full coverage", float(self.accuracy[-1]) if n else np.nan),
            ("resolution", "exact" if self.resolution is None else self.resolution),
        ])


def _exact_points(c, ok):
    """Exact curve: one point per distinct confidence, highest first."""
    values, _, n_ok, n_wrong = _grid_counts(ok, c)
    n_ok, n_wrong = n_ok[::-1], n_wrong[::-1]
    answered = np.cumsum(n_ok + n_wrong)
    right = np.cumsum(n_ok)
    return values[::-1], answered, right


def _curve(c, ok, resolution):
    conf, answered, right = _exact_points(c, ok)
    if resolution is not None:
        # grid threshold j is c_max - j * resolution; each distinct confidence is
        # first answered at step ceil((c_max - c) / resolution).  Points that
        # answer the same set merge: keep the last distinct confidence per step.
        step = np.ceil((conf[0] - conf) / resolution - _GRID_SLACK)
        last = np.flatnonzero(np.diff(step, append=np.inf) != 0)
        conf, answered, right = conf[last], answered[last], right[last]
    n = answered[-1]
    coverage = answered / n
    accuracy = right / answered
    area = float(np.dot(np.diff(coverage, prepend=0.0), accuracy))
    return CoverageAccuracyCurve(area, coverage, accuracy, conf, answered.astype(np.int64), right.astype(np.int64), resolution)


def _exact_curve(confidence, correct):
    """Validate confidences of any scale and return (exact curve, correct)."""
    c, ok = _check_inputs(confidence, correct, probability=False)
    return _curve(c, ok, None), ok


def coverage_accuracy_curve(confidence, correct, *, resolution=None):
    """Coverage and accuracy of the answered examples, threshold by threshold.

    With ``resolution=None`` there is one point per distinct confidence (the
    exact curve; confidences of any scale).  With a ``resolution`` the
    thresholds run from the highest confidence down in steps of
    ``resolution`` (answered: confidence >= threshold); thresholds that
    answer the same set give one point, and the last point answers
    everything -- the curve DiSCA reads (confidences must then be
    probabilities).  A confidence within 1e-9 steps of a threshold counts as
    reaching it, so 0.7 reaches the threshold 1 - 3 * 0.1.

    Parameters
    ----------
    confidence : array-like of shape (n,)
    correct : array-like of bool, shape (n,)
    resolution : float in (0, 1], default=None

    Returns
    -------
    CoverageAccuracyCurve

    Examples
    --------
    >>> from beyondauc import coverage_accuracy_curve
    >>> cur = coverage_accuracy_curve([0.9, 0.8, 0.8, 0.6], [True, True, False, True])
    >>> cur.coverage.tolist(), cur.accuracy.tolist(), cur.score
    ([0.25, 0.75, 1.0], [1.0, 0.6666666666666666, 0.75], 0.7708333333333333)
    """
    if resolution is not None:
        resolution = _check_resolution(resolution)
    c, ok = _check_inputs(confidence, correct, probability=resolution is not None)
    return _curve(c, ok, resolution)


_INTERPOLATIONS = ("step", "linear")
_OPTIMA = ("exact", "analytic")


def _area(coverage, value, interpolation, start):
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


def _risks(cur):
    """Selective risk (wrong / answered) and generalized risk (wrong / all) per exact-curve point."""
    wrong = cur.n_answered - cur.n_correct
    return wrong / cur.n_answered, wrong / cur.n_answered[-1]


def _aurc_of(cur, interpolation):
    if interpolation == "step":
        return 1.0 - cur.score  # bit-identical to the number reported before the option existed
    risk = _risks(cur)[0]
    return _area(cur.coverage, risk, interpolation, risk[0])


def aurc(confidence, correct, *, interpolation="step"):
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
    correct : array-like of bool, shape (n,)
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
    return _aurc_of(_exact_curve(confidence, correct)[0], interpolation)


def augrc(confidence, correct, *, interpolation="step"):
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
    correct : array-like of bool, shape (n,)
    interpolation : {"step", "linear"}, default="step"

    Returns
    -------
    float

    Examples
    --------
    >>> from beyondauc import augrc
    >>> augrc([0.9, 0.8, 0.7], [True, False, True])
    0.2222222222222222
    >>> augrc([0.9, 0.8, 0.7], [True, False, True], interpolation="linear")
    0.16666666666666666
    """
    check_option(interpolation, "interpolation", _INTERPOLATIONS)
    cur, _ = _exact_curve(confidence, correct)
    return _area(cur.coverage, _risks(cur)[1], interpolation, 0.0)


def _optimal_aurc(n, n_correct, interpolation="step"):
    """AURC of the best ranking (every correct answer first, every confidence distinct)."""
    k = np.arange(1, n + 1, dtype=np.float64)
    risk = np.maximum(k - n_correct, 0.0) / k
    if interpolation == "step":  # the sum over k > n_correct only, as before the option existed
        return float(risk[n_correct:].sum() / n)
    return _area(k / n, risk, interpolation, risk[0])


def _analytic_aurc(n, n_correct):
    """The large-n optimum ``r + (1 - r) ln(1 - r)``, r the overall risk (Geifman et al. 2019)."""
    r = 1.0 - n_correct / n
    return float(r + xlogy(1.0 - r, 1.0 - r))


def e_aurc(confidence, correct, *, optimum="exact", interpolation="step"):
    """Excess AURC: :func:`aurc` minus the AURC of the best possible ranking.

    Parameters
    ----------
    confidence : array-like of shape (n,)
    correct : array-like of bool, shape (n,)
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
    cur, ok = _exact_curve(confidence, correct)
    return _excess(cur, len(ok), int(ok.sum()), optimum, interpolation)


def _excess(cur, n, n_correct, optimum, interpolation):
    best = _optimal_aurc(n, n_correct, interpolation) if optimum == "exact" else _analytic_aurc(n, n_correct)
    return float(_aurc_of(cur, interpolation) - best)


def coverage_at_accuracy(confidence, correct, *, target):
    """Largest coverage whose answered examples reach accuracy >= ``target``.

    Read from the exact curve; 0.0 when no threshold reaches the target.

    Examples
    --------
    >>> from beyondauc import coverage_at_accuracy
    >>> coverage_at_accuracy([0.9, 0.8, 0.7, 0.6], [True, True, False, True], target=0.75)
    1.0
    """
    target = _check_unit(target, "target")
    cur, _ = _exact_curve(confidence, correct)
    reach = cur.accuracy >= target
    return float(cur.coverage[reach].max()) if reach.any() else 0.0


def accuracy_at_coverage(confidence, correct, *, coverage):
    """Accuracy when answering the most confident share ``coverage`` of examples.

    Tied confidences enter together, so this is the accuracy of the first
    exact-curve point whose coverage reaches ``coverage``.

    Examples
    --------
    >>> from beyondauc import accuracy_at_coverage
    >>> accuracy_at_coverage([0.9, 0.8, 0.7, 0.6], [True, False, True, True], coverage=0.5)
    0.5
    """
    coverage = _check_unit(coverage, "coverage", low_open=True)
    cur, _ = _exact_curve(confidence, correct)
    k = int(np.searchsorted(cur.coverage, coverage - 1e-12))
    return float(cur.accuracy[min(k, len(cur.accuracy) - 1)])


def auc_tail(confidence, correct, *, max_coverage=0.2):
    """Mean accuracy over the low-coverage end (0, ``max_coverage``] of the curve.

    The paper's "AUC tail": a safety-critical deployment operates where
    coverage is low and accuracy high, so a model that is better there can
    be the better model even with the smaller total area.

    Examples
    --------
    >>> from beyondauc import auc_tail
    >>> auc_tail([0.9, 0.8, 0.7, 0.6], [True, False, True, True], max_coverage=0.5)
    0.75
    """
    max_coverage = _check_unit(max_coverage, "max_coverage", low_open=True)
    return _exact_curve(confidence, correct)[0].partial_area(0.0, max_coverage) / max_coverage


@dataclass(frozen=True)
class Plateau:
    """The high-coverage stretch over which accuracy stays flat.

    Attributes
    ----------
    score : float
        Share of coverage, ending at full coverage, over which accuracy
        stays within ``band`` of the accuracy at full coverage.
    accuracy_low, accuracy_high : float
        Accuracy range over the plateau.
    confidence_low, confidence_high : float
        Confidence range over the plateau; a plateau at high confidence is
        the undesirable kind (confident wrong answers).
    band : float
    """

    score: float
    accuracy_low: float
    accuracy_high: float
    confidence_low: float
    confidence_high: float
    band: float


def plateau(confidence, correct, *, band=0.02):
    """The plateau of the coverage-accuracy curve (exact curve).

    Examples
    --------
    >>> from beyondauc import plateau
    >>> p = plateau([0.9, 0.8, 0.7, 0.6], [False, True, True, True], band=0.1)
    >>> p.score, p.confidence_high
    (0.5, 0.7)
    """
    band = _check_unit(band, "band")
    cur, _ = _exact_curve(confidence, correct)
    outside = np.abs(cur.accuracy - cur.accuracy[-1]) > band
    start = int(np.flatnonzero(outside)[-1]) + 1 if outside.any() else 0
    before = cur.coverage[start - 1] if start > 0 else 0.0
    acc = cur.accuracy[start:]
    return Plateau(float(1.0 - before), float(acc.min()), float(acc.max()), float(cur.confidence[-1]),
                   float(cur.confidence[start]), band)


# -- DiSCA ------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiSCA:
    """DiSCA (Deployment in Safety-Critical Applications) and its parts.

    Attributes
    ----------
    score : float
        ``x / a + y / b - penalty``.
    a : float
        Confidence at which accuracy first drops below 100% (the lowest
        confidence if it never does), floored at 0.001.
    b : float
        Confidence at which accuracy first drops below ``tolerance`` (the
        lowest confidence if it never does), floored at 0.001.
    n_fluctuations : int
        Steps where accuracy rises with coverage.
    fluctuation_magnitude : float
        Total accuracy rise over the fluctuations, ``sum_i (d2 - d1)``.
    penalty : float
        ``z * sum_i (n - i + 1) (d2 - d1) / c / sum_i (n - i + 1)`` (0 when n = 0).
    tolerance : float
    weights : tuple
        (x, y, z).
    resolution : float
        The grid step the curve was read at.  DiSCA depends on it (a finer
        grid finds more fluctuations across smaller confidence gaps, down
        to the 0.001 floor), so it is reported with every DiSCA; see
        :func:`disca_resolution_sensitivity`.
    fluctuations : DataFrame
        One row per fluctuation: ``i, coverage_1, coverage_2, d1, d2, c1, c2, c``.
    b_table : DataFrame
        b and DiSCA over the tolerance grid 0.95 ... 0.55 (the paper's
        Table 2 layout, one row per tolerance), with ``falls_below``: whether
        accuracy ever drops below the tolerance.
    curve : CoverageAccuracyCurve
        The grid curve a, b and the fluctuations are read from.
    """

    score: float
    a: float
    b: float
    n_fluctuations: int
    fluctuation_magnitude: float
    penalty: float
    tolerance: float
    weights: tuple
    resolution: float
    fluctuations: pd.DataFrame = field(repr=False)
    b_table: pd.DataFrame = field(repr=False)
    curve: CoverageAccuracyCurve = field(repr=False)

    def to_dict(self):
        """Headline numbers by name."""
        return {
            "disca": self.score,
            "a": self.a,
            "b": self.b,
            "n_fluctuations": self.n_fluctuations,
            "fluctuation_magnitude": self.fluctuation_magnitude,
            "penalty": self.penalty,
            "tolerance": self.tolerance,
            "resolution": self.resolution,
        }

    def _repr_html_(self):
        x, y, z = self.weights
        return result_html(
            "DiSCA", [("score", self.score), ("a", self.a), (f"b({self.tolerance:g})", self.b),
                      ("n_fluctuations", self.n_fluctuations), ("penalty", self.penalty),
                      ("weights (x, y, z)", f"{x:.3g}, {y:.3g}, {z:.3g}")],
            parts=[frame_html(self.b_table, index=False, caption="b and DiSCA over the tolerance grid")],
        )


def _first_below(cur, level):
    """(confidence at the first point with accuracy < level, or the lowest confidence; whether one exists)."""
    below = cur.accuracy < level
    k = int(np.argmax(below)) if below.any() else len(cur.confidence) - 1
    return float(cur.confidence[k]), bool(below.any())


def _fluctuations(cur, z):
    """Fluctuation table and the weighted penalty of a grid curve."""
    rise = np.flatnonzero(np.diff(cur.accuracy) > 0)
    d1, d2 = cur.accuracy[rise], cur.accuracy[rise + 1]
    c1, c2 = cur.confidence[rise], cur.confidence[rise + 1]
    c = np.maximum(c1 - c2, _FLOOR)
    n = len(rise)
    w = np.arange(n, 0, -1, dtype=np.float64)  # n - i + 1 for i = 1..n
    penalty = z * float(np.dot(w, (d2 - d1) / c) / w.sum()) if n else 0.0
    table = pd.DataFrame(
        {"i": np.arange(1, n + 1), "coverage_1": cur.coverage[rise], "coverage_2": cur.coverage[rise + 1],
         "d1": d1, "d2": d2, "c1": c1, "c2": c2, "c": c}
    )
    return table, penalty


def disca(confidence, correct, *, tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01):
    """DiSCA score: a, b(tolerance) and the fluctuation penalty.

    Read from the grid coverage-accuracy curve (step ``resolution`` from the
    highest confidence down, see :func:`coverage_accuracy_curve`):

    * a = confidence of the first point whose accuracy is below 1 (the last
      point's if none);
    * b = confidence of the first point whose accuracy is below
      ``tolerance`` (the last point's if none);
    * a fluctuation is a step k -> k+1 where accuracy rises (d2 > d1, at
      confidences c1 >= c2); they are numbered i = 1..n by increasing
      coverage and weighted n - i + 1, so early (high-confidence) ones
      weigh most; ``c = max(c1 - c2, 0.001)``.

    ``DiSCA = x / max(a, 0.001) + y / max(b, 0.001) - z * sum_i (n-i+1) (d2-d1)/c / sum_i (n-i+1)``.
    Lower a and b are better (mistakes only at low confidence), so higher
    DiSCA is better.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Probabilities in [0, 1]; for a binary probability p use max(p, 1 - p).
    correct : array-like of bool, shape (n,)
    tolerance : float in (0, 1], default=0.9
        Worst admissible accuracy.
    weights : (x, y, z), default=(1/3, 1/3, 1/3)
        Non-negative, summing to 1 (within 0.01, so the paper's 0.33 work).
    resolution : float in (0, 1], default=0.01
        Step of the confidence grid.  DiSCA is only comparable at the same
        resolution: see :func:`disca_resolution_sensitivity`.

    Returns
    -------
    DiSCA

    Examples
    --------
    >>> from beyondauc import disca
    >>> d = disca([0.95, 0.9, 0.8, 0.7], [True, False, True, True], tolerance=0.6)
    >>> d.a, d.b, d.n_fluctuations
    (0.9, 0.9, 2)
    """
    tolerance = _check_unit(tolerance, "tolerance", low_open=True)
    weights = _check_weights(weights, "weights", 3)
    resolution = _check_resolution(resolution)
    c, ok = _check_inputs(confidence, correct, probability=True)
    return _disca(c, ok, tolerance, weights, resolution)


def _disca(c, ok, tolerance, weights, resolution):
    """DiSCA of validated inputs."""
    cur = _curve(c, ok, resolution)
    x, y, z = weights
    a = max(_first_below(cur, 1.0)[0], _FLOOR)
    flucts, penalty = _fluctuations(cur, z)
    rows = []
    for t in TOLERANCES:  # nine tolerances, each one argmax over the curve
        b_t, falls = _first_below(cur, t)
        b_t = max(b_t, _FLOOR)
        rows.append({"tolerance": t, "b": b_t, "disca": x / a + y / b_t - penalty, "falls_below": falls})
    b = max(_first_below(cur, tolerance)[0], _FLOOR)
    return DiSCA(
        score=x / a + y / b - penalty,
        a=a,
        b=b,
        n_fluctuations=len(flucts),
        fluctuation_magnitude=float((flucts["d2"] - flucts["d1"]).sum()),
        penalty=penalty,
        tolerance=tolerance,
        weights=weights,
        resolution=resolution,
        fluctuations=flucts,
        b_table=pd.DataFrame(rows),
        curve=cur,
    )


RESOLUTIONS = (0.1, 0.05, 0.02, 0.01, 0.005, 0.001, 1e-4)


def _check_resolutions(resolutions):
    try:
        values = [float(r) for r in resolutions]
    except (TypeError, ValueError):
        raise ValueError(f"`resolutions` must be numbers in (0, 1], got {resolutions!r}") from None
    if not values:
        raise ValueError("`resolutions` must hold at least one number in (0, 1], got none")
    for r in values:
        if not (np.isfinite(r) and 0 < r <= 1):
            raise ValueError(f"`resolutions` must be numbers in (0, 1], got {r!r}")
    return values


def disca_resolution_sensitivity(confidence, correct, *, resolutions=RESOLUTIONS, tolerance=0.9,
                                 weights=(1 / 3, 1 / 3, 1 / 3)):
    """DiSCA and its parts on the same answers over several grid resolutions, tidy.

    DiSCA is read from the grid curve (:func:`coverage_accuracy_curve` with
    a ``resolution``), and its fluctuation term divides each accuracy rise
    by the confidence gap ``c = max(c1 - c2, 0.001)``.  A finer grid
    separates more points, so it finds more (and smaller) rises across
    smaller gaps, many of them at the 0.001 floor: the penalty, and with it
    DiSCA, changes with the resolution.  This table shows by how much; a
    DiSCA is only comparable with another at the same resolution.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Probabilities in [0, 1]; for a binary probability p use max(p, 1 - p).
    correct : array-like of bool, shape (n,)
    resolutions : sequence of float in (0, 1], default=(0.1, 0.05, 0.02, 0.01, 0.005, 0.001, 1e-4)
    tolerance : float in (0, 1], default=0.9
    weights : (x, y, z), default=(1/3, 1/3, 1/3)

    Returns
    -------
    DataFrame
        One row per resolution, in the order given: ``resolution, disca,
        a, b, n_fluctuations, fluctuation_magnitude, penalty, n_points``
        (``n_points``: points of the grid curve).

    Examples
    --------
    >>> from beyondauc import disca_resolution_sensitivity
    >>> conf = [0.99, 0.97, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7]
    >>> ok = [True, False, True, True, False, True, True, True]
    >>> t = disca_resolution_sensitivity(conf, ok, resolutions=[0.1, 0.01])
    >>> t["n_fluctuations"].tolist(), t["disca"].round(3).tolist()
    ([1, 5], [0.463, -0.534])
    """
    tolerance = _check_unit(tolerance, "tolerance", low_open=True)
    weights = _check_weights(weights, "weights", 3)
    values = _check_resolutions(resolutions)
    c, ok = _check_inputs(confidence, correct, probability=True)
    rows = []
    for r in values:  # a few resolutions, each one vectorised pass over the sorted answers
        d = _disca(c, ok, tolerance, weights, r)
        rows.append({"resolution": r, "disca": d.score, "a": d.a, "b": d.b, "n_fluctuations": d.n_fluctuations,
                     "fluctuation_magnitude": d.fluctuation_magnitude, "penalty": d.penalty,
                     "n_points": len(d.curve.coverage)})
    return pd.DataFrame(rows)


def computation_score(*, energy=None, parameters=None, reference_parameters=None):
    """The computation score of DiDMA: ``1 / energy`` or ``reference_parameters / parameters``.

    Give either ``energy`` (in any unit, e.g. kWh per 1,000 answers) or both
    ``parameters`` and ``reference_parameters`` (the size the deployment
    device handles well).

    Examples
    --------
    >>> from beyondauc import computation_score
    >>> computation_score(parameters=2_000_000, reference_parameters=1_000_000)
    0.5
    """
    def positive(v, name):
        return check_number(v, name, low=0, low_open=True)

    if energy is not None and (parameters is not None or reference_parameters is not None):
        raise ValueError("give either `energy` or `parameters` with `reference_parameters`, not both")
    if energy is not None:
        return 1.0 / positive(energy, "energy")
    if parameters is None or reference_parameters is None:
        raise ValueError("give `energy`, or both `parameters` and `reference_parameters`")
    return positive(reference_parameters, "reference_parameters") / positive(parameters, "parameters")


@dataclass(frozen=True)
class DiDMA:
    """DiDMA = p * DiSCA + q * computation_score.

    Attributes
    ----------
    score : float
    disca : DiSCA
    computation_score : float
    weights : tuple
        (p, q).
    """

    score: float
    disca: DiSCA = field(repr=False)
    computation_score: float = np.nan
    weights: tuple = (0.5, 0.5)

    def _repr_html_(self):
        return result_html("DiDMA", [("score", self.score), ("DiSCA", self.disca.score),
                                     ("computation_score", self.computation_score),
                                     ("weights (p, q)", ", ".join(f"{w:.3g}" for w in self.weights))])


def _check_computation(value):
    return check_number(value, "computation_score", low=0, hint=" (see computation_score())")


def didma(confidence, correct, *, computation_score, weights=(0.5, 0.5), tolerance=0.9,
          disca_weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01):
    """DiDMA (Deployment in Disaster Management Applications).

    ``DiDMA = p * DiSCA + q * computation_score`` with ``weights=(p, q)``
    summing to 1.  The computation score depends on the deployment device,
    so it is given, not measured: see :func:`computation_score`.

    Examples
    --------
    >>> from beyondauc import didma, disca
    >>> conf, ok = [0.95, 0.9, 0.8, 0.7], [True, False, True, True]
    >>> d = didma(conf, ok, computation_score=2.0, weights=(0.5, 0.5))
    >>> d.score == 0.5 * disca(conf, ok).score + 0.5 * 2.0
    True
    """
    p, q = _check_weights(weights, "weights", 2)
    _check_weights(disca_weights, "disca_weights", 3)
    comp = _check_computation(computation_score)
    d = disca(confidence, correct, tolerance=tolerance, weights=disca_weights, resolution=resolution)
    return DiDMA(p * d.score + q * comp, d, comp, (p, q))


@dataclass(frozen=True)
class NiDMA:
    """NiDMA = u * DiDMA + v * DiSCA(OOD).

    Attributes
    ----------
    score : float
    didma : DiDMA
        On the in-distribution data.
    disca_ood : DiSCA
        On the out-of-distribution data.
    weights : tuple
        (u, v).
    """

    score: float
    didma: DiDMA = field(repr=False)
    disca_ood: DiSCA = field(repr=False)
    weights: tuple = (0.5, 0.5)

    def _repr_html_(self):
        return result_html("NiDMA", [("score", self.score), ("DiDMA", self.didma.score),
                                     ("DiSCA (in distribution)", self.didma.disca.score),
                                     ("DiSCA (OOD)", self.disca_ood.score),
                                     ("weights (u, v)", ", ".join(f"{w:.3g}" for w in self.weights))])


def nidma(confidence, correct, confidence_ood, correct_ood, *, computation_score, weights=(0.5, 0.5),
          didma_weights=(0.5, 0.5), tolerance=0.9, disca_weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01):
    """NiDMA (NLP in Disaster Management Applications).

    ``NiDMA = u * DiDMA(IID) + v * DiSCA(OOD)`` with ``weights=(u, v)``
    summing to 1: the in-distribution data give DiDMA, an
    out-of-distribution dataset gives the second DiSCA with the same
    tolerance, weights and resolution.

    Examples
    --------
    >>> from beyondauc import nidma
    >>> n = nidma([0.9, 0.8], [True, False], [0.9, 0.6], [False, True], computation_score=1.0)
    >>> round(n.score, 4)
    0.5509
    """
    u, v = _check_weights(weights, "weights", 2)
    _check_weights(didma_weights, "didma_weights", 2)
    _check_inputs(confidence_ood, correct_ood, probability=True, names=("confidence_ood", "correct_ood"))
    iid = didma(confidence, correct, computation_score=computation_score, weights=didma_weights,
                tolerance=tolerance, disca_weights=disca_weights, resolution=resolution)
    ood = disca(confidence_ood, correct_ood, tolerance=tolerance, weights=disca_weights, resolution=resolution)
    return NiDMA(u * iid.score + v * ood.score, iid, ood, (u, v))


# -- benchmark level ---------------------------------------------------------------------

def _selective_rows(bench, dataset, protocol, random_state, ood_dataset):
    """Masks over all rows: calibration, evaluation and out-of-distribution rows."""
    check_option(protocol, "protocol", PROTOCOLS)
    seed = check_random_state(random_state)
    bench._slice(dataset)  # a clear error for an unknown name
    if ood_dataset is not None:
        bench._slice(ood_dataset)
        if ood_dataset == dataset:
            raise ValueError(f"`ood_dataset` must differ from `dataset`, got {dataset!r} for both")
    cal, ev = _protocol_rows(bench, dataset, protocol, seed)
    ood = np.zeros(len(bench), dtype=bool)
    if ood_dataset is not None:  # out of distribution means unseen: never calibrate (or score) on it
        ood[bench._slice(ood_dataset)] = True
        cal, ev = cal & ~ood, ev & ~ood
        if not cal.any():
            raise ValueError(f"protocol {protocol!r} has no calibration data for {dataset!r} once "
                             f"`ood_dataset`={ood_dataset!r} is left out")
    return cal, ev, ood


def calibrated_confidence(bench, model, dataset, *, protocol="indata", method="logistic", class_weight=None,
                          random_state=0, ood_dataset=None):
    """Calibrated confidence and correctness of a model's answers on a dataset.

    The raw score is calibrated on the protocol's calibration data for
    ``dataset`` (as in :func:`~beyondauc.expected_accuracy`; for ``indata``
    the first seeded 80/20 split, evaluated on its 20%).  Each evaluated
    example gets p = the calibrated probability of the positive class, the
    decision of the calibrator (p > 0.5, or the stump's split), confidence
    max(p, 1 - p) and whether the decision is right.  With ``ood_dataset``
    the same calibrator also answers every example of that dataset; its rows
    are left out of the calibration data (and of ``outdata``'s evaluation
    rows), so it stays unseen under every protocol.

    Returns
    -------
    confidence, correct : ndarray
        On ``dataset``'s evaluation rows (for ``outdata``: all other datasets).
    confidence_ood, correct_ood : ndarray or None

    Examples
    --------
    >>> from beyondauc import load_demo, calibrated_confidence
    >>> conf, ok, _, _ = calibrated_confidence(load_demo(), "logreg", "wine")
    >>> len(conf), bool(((conf >= 0.5) & (conf <= 1)).all())
    (22, True)
    """
    check_option(method, "method", METHODS)
    cal, ev, ood = _selective_rows(bench, dataset, protocol, random_state, ood_dataset)
    y_all, s_all = bench.labels(), bench.scores(model)
    cal_model = ScoreCalibrator(method, class_weight=class_weight).fit(s_all[cal], y_all[cal])

    def answer(rows):
        proba = cal_model.predict_proba(s_all[rows])
        pred = cal_model.predict(s_all[rows])
        conf = np.maximum(proba, 1.0 - proba)
        return conf, pred == y_all[rows]

    conf, ok = answer(ev)
    if ood_dataset is None:
        return conf, ok, None, None
    return (conf, ok, *answer(ood))


@dataclass(frozen=True)
class SelectiveAnswering:
    """Selective answering of one model on one dataset of a benchmark.

    Attributes
    ----------
    score : float
        DiSCA on ``dataset`` (in distribution).
    model, dataset : str
    ood_dataset : str or None
    protocol, method : str
    disca : DiSCA
    curve : CoverageAccuracyCurve
        The exact curve.
    aurc, e_aurc : float
        Step integration, exact optimum (the defaults of :func:`aurc` and
        :func:`e_aurc`).
    aurc_linear : float
        :func:`aurc` with ``interpolation="linear"`` (fd-shifts' AURC).
    e_aurc_analytic : float
        Step AURC minus the analytic optimum ``r + (1 - r) ln(1 - r)`` (CRL's E-AURC).
    augrc, augrc_linear : float
        :func:`augrc`, step and linear (Traub et al.'s AUGRC is the linear one).
    disca_ood : DiSCA or None
    didma, nidma : float or None
        Only with a ``computation_score`` (and an ``ood_dataset`` for NiDMA).
    confidence, correct, confidence_ood, correct_ood : ndarray
    intervals : dict
        ``name -> (low, high)`` bootstrap percentile intervals (empty without
        ``n_bootstrap``); :meth:`to_dict` adds them as ``<name>_low`` /
        ``<name>_high``.
    replicates : DataFrame or None
        The bootstrap replicates, one row each (columns: the interval names).
    accuracy_band : (coverages, low, high) or None
        Pointwise bootstrap band of the exact curve's accuracy at fixed
        coverage levels (:func:`accuracy_at_coverage` per replicate).
    """

    score: float
    model: str
    dataset: str
    ood_dataset: str | None
    protocol: str
    method: str
    disca: DiSCA = field(repr=False)
    curve: CoverageAccuracyCurve = field(repr=False)
    aurc: float = np.nan
    e_aurc: float = np.nan
    disca_ood: DiSCA | None = field(default=None, repr=False)
    didma: float | None = None
    nidma: float | None = None
    confidence: np.ndarray = field(default=None, repr=False)
    correct: np.ndarray = field(default=None, repr=False)
    confidence_ood: np.ndarray | None = field(default=None, repr=False)
    correct_ood: np.ndarray | None = field(default=None, repr=False)
    aurc_linear: float = np.nan
    e_aurc_analytic: float = np.nan
    augrc: float = np.nan
    augrc_linear: float = np.nan
    intervals: dict = field(default_factory=dict, repr=False)
    replicates: pd.DataFrame | None = field(default=None, repr=False)
    accuracy_band: tuple | None = field(default=None, repr=False)

    def to_dict(self):
        """Headline numbers by name."""
        out = {
            "model": self.model,
            "dataset": self.dataset,
            "ood_dataset": self.ood_dataset,
            "protocol": self.protocol,
            "method": self.method,
            "n": len(self.correct),
            "accuracy": float(self.curve.accuracy[-1]),
            **self.disca.to_dict(),
            "area": self.curve.score,
            "aurc": self.aurc,
            "e_aurc": self.e_aurc,
            "aurc_linear": self.aurc_linear,
            "e_aurc_analytic": self.e_aurc_analytic,
            "augrc": self.augrc,
            "augrc_linear": self.augrc_linear,
        }
        if self.disca_ood is not None:
            out.update({f"{k}_ood": v for k, v in self.disca_ood.to_dict().items()
                        if k not in ("tolerance", "resolution")})
        out["didma"] = self.didma
        out["nidma"] = self.nidma
        for name, (low, high) in self.intervals.items():
            out[f"{name}_low"] = low
            out[f"{name}_high"] = high
        return out

    def _repr_html_(self):
        rec = self.to_dict()
        keep = ["n", "accuracy", "disca", "a", "b", "n_fluctuations", "penalty", "area", "aurc", "e_aurc",
                "disca_ood", "didma", "nidma"]
        rows = [(k, rec[k]) for k in keep if k in rec and rec[k] is not None]
        title = f"SelectiveAnswering: {self.model} on {self.dataset}"
        if self.ood_dataset is not None:
            title += f" (OOD: {self.ood_dataset})"
        return result_html(title, rows, subtitle=f"calibrated: {self.protocol} / {self.method}")


def selective_answering(bench, model, dataset, *, ood_dataset=None, protocol="indata", method="logistic",
                        class_weight=None, tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01,
                        computation_score=None, didma_weights=(0.5, 0.5), nidma_weights=(0.5, 0.5),
                        random_state=0, n_bootstrap=0, confidence_level=0.95):
    """DiSCA, the curve, AURC (and DiSCA on OOD data, DiDMA, NiDMA) for one model.

    The model's raw scores are calibrated into probabilities with
    :func:`calibrated_confidence`; ``dataset`` is the in-distribution data
    and ``ood_dataset`` (optional) the out-of-distribution data answered by
    the same calibrator, which never sees it (it is left out of every
    protocol's calibration data).  DiDMA needs a ``computation_score`` and NiDMA
    both; without them they are None.

    With ``n_bootstrap`` > 0 the result carries percentile intervals of
    ``accuracy``, ``area``, ``aurc``, ``disca``, ``a`` and ``b`` (and
    ``disca_ood``) from a bootstrap stratified by role (calibration,
    evaluation, out-of-distribution rows), dataset and class, seeded by
    ``random_state``'s child stream for ``dataset``'s place among the
    benchmark's datasets other than ``ood_dataset`` (every model reads the same
    replicates of a dataset; two datasets draw independent ones).  Each
    replicate *refits the calibrator* on its resample of the calibration data -- the threshold's own sampling error
    is part of what a deployed model meets -- then answers its resample of the
    evaluation data; all replicates are fitted and scored at once on the
    model's score grid.  ``confidence_level`` (default 0.95) sets the
    interval width.

    Examples
    --------
    >>> from beyondauc import load_demo, selective_answering
    >>> r = selective_answering(load_demo(), "logreg", "breast_cancer", ood_dataset="diabetes")
    >>> sorted(k for k in r.to_dict() if k.startswith("disca"))
    ['disca', 'disca_ood']
    >>> r = selective_answering(load_demo(), "logreg", "wine", n_bootstrap=50)
    >>> bool(r.to_dict()["aurc_low"] <= r.aurc <= r.to_dict()["aurc_high"])
    True
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    conf, ok, conf_ood, ok_ood = calibrated_confidence(
        bench, model, dataset, protocol=protocol, method=method, class_weight=class_weight,
        random_state=random_state, ood_dataset=ood_dataset,
    )
    d = disca(conf, ok, tolerance=tolerance, weights=weights, resolution=resolution)
    exact = _curve(conf, ok, None)
    n_ok, grisk = int(ok.sum()), _risks(exact)[1]
    d_ood = None if conf_ood is None else disca(conf_ood, ok_ood, tolerance=tolerance, weights=weights,
                                                 resolution=resolution)
    dd = nd = None
    if computation_score is not None:
        p, q = _check_weights(didma_weights, "didma_weights", 2)
        dd = p * d.score + q * _check_computation(computation_score)
        if d_ood is not None:
            u, v = _check_weights(nidma_weights, "nidma_weights", 2)
            nd = u * dd + v * d_ood.score
    intervals, reps, band = {}, None, None
    if n_bootstrap:
        reps, acc = _benchmark_bootstrap(
            bench, model, dataset, ood_dataset=ood_dataset, protocol=protocol, method=method,
            class_weight=class_weight, tolerance=tolerance, weights=weights, resolution=resolution,
            random_state=dataset_seed(random_state, [d for d in bench.datasets if d != ood_dataset].index(dataset)),
            n_bootstrap=n_bootstrap,
        )
        intervals = intervals_of(reps, confidence_level)
        band = _band(acc, confidence_level)
    return SelectiveAnswering(
        score=d.score,
        model=model,
        dataset=dataset,
        ood_dataset=ood_dataset,
        protocol=protocol,
        method=method,
        disca=d,
        curve=exact,
        aurc=_aurc_of(exact, "step"),
        e_aurc=_excess(exact, len(ok), n_ok, "exact", "step"),
        disca_ood=d_ood,
        didma=dd,
        nidma=nd,
        confidence=conf,
        correct=ok,
        confidence_ood=conf_ood,
        correct_ood=ok_ood,
        aurc_linear=_aurc_of(exact, "linear"),
        e_aurc_analytic=_excess(exact, len(ok), n_ok, "analytic", "step"),
        augrc=_area(exact.coverage, grisk, "step", 0.0),
        augrc_linear=_area(exact.coverage, grisk, "linear", 0.0),
        intervals=intervals,
        replicates=reps,
        accuracy_band=band,
    )


def selective_table(bench, *, models=None, datasets=None, **options):
    """Headline selective-answering numbers of every model on every dataset, tidy.

    One row per (model, dataset) with the keys of
    :meth:`SelectiveAnswering.to_dict`: DiSCA and its parts with the
    ``tolerance`` and grid ``resolution`` they were read at, and the
    conventions of the selective-classification literature beside the
    paper's (``aurc``/``aurc_linear``, ``e_aurc``/``e_aurc_analytic``,
    ``augrc``/``augrc_linear``).  ``options`` go to
    :func:`selective_answering`.
    :meth:`SelectiveAnswering.to_dict`; ``options`` go to
    :func:`selective_answering` (``n_bootstrap=B`` adds ``<name>_low`` /
    ``<name>_high`` columns).

    Examples
    --------
    >>> from beyondauc import load_demo, selective_table
    >>> t = selective_table(load_demo(), models=["logreg", "svm"], datasets=["wine"])
    >>> t[["model", "dataset"]].values.tolist()
    [['logreg', 'wine'], ['svm', 'wine']]
    """
    models = bench.models if models is None else list(models)
    datasets = bench.datasets if datasets is None else list(datasets)
    return pd.DataFrame([selective_answering(bench, m, d, **options).to_dict() for m in models for d in datasets])


# -- bootstrap intervals ------------------------------------------------------------------

INTERVAL_NAMES = ("accuracy", "area", "aurc", "disca", "a", "b")
def _answers(proba, pred, pos, neg):
    """Confidence and (weighted) correct / wrong answers per grid value, (R, m) each."""
    conf = np.maximum(proba, 1.0 - proba)
    return conf, np.where(pred, pos, neg), np.where(pred, neg, pos)


def _selective_design(bench, model, dataset, *, ood_dataset, protocol, random_state):
    """Rows a benchmark-level bootstrap resamples: scores, labels, role (0 cal, 1 eval, 2 ood), strata."""
    cal, ev, ood = _selective_rows(bench, dataset, protocol, random_state, ood_dataset)
    used = cal | ev | ood
    role = np.where(cal, 0, np.where(ev, 1, 2))[used]
    y = bench.labels()[used]
    s = bench.scores(model)[used]
    strata = strata_of(role, bench.dataset_codes()[used], y)
    return s, y, role, strata


BAND_COVERAGES = np.linspace(0.02, 1.0, 50)  # coverage levels of the pointwise accuracy band


def _benchmark_replicates(bench, model, dataset, **options):
    """Replicates (DataFrame, one row each) of the selective numbers with the calibrator refitted per replicate."""
    return _benchmark_bootstrap(bench, model, dataset, **options)[0]


def _benchmark_bootstrap(bench, model, dataset, *, ood_dataset, protocol, method, class_weight, tolerance,
                         weights, resolution, random_state, n_bootstrap):
    """(replicates frame, (B, k) accuracy at :data:`BAND_COVERAGES`), the calibrator refitted per replicate."""
    tolerance = _check_unit(tolerance, "tolerance", low_open=True)
    weights = _check_weights(weights, "weights", 3)
    resolution = _check_resolution(resolution)
    s, y, role, strata = _selective_design(bench, model, dataset, ood_dataset=ood_dataset, protocol=protocol,
                                           random_state=random_state)
    x, inv, _, _ = _grid_counts(y, s)
    m = len(x)
    init = None
    if method == "logistic":  # warm start every replicate from the fit on the calibration data itself
        p0, n0 = grid_weights(np.ones((1, len(y))), inv, y, m, groups=np.where(role == 0, 0, -1))
        init = logistic_params(x, *class_weighted(p0[:, 0], n0[:, 0], class_weight))
    seed = check_random_state(random_state)
    # the curves only need the grid values the evaluation (and OOD) rows have
    cols_ev = np.unique(inv[role == 1])
    cols_ood = np.unique(inv[role == 2])
    at = np.concatenate([cols_ev, cols_ood])
    parts, band = [], []
    for lo, hi in replicate_chunks(n_bootstrap, max(len(y), m)):
        counts = bootstrap_counts(strata, n_bootstrap, random_state=seed, start=lo, stop=hi)
        pos, neg = grid_weights(counts, inv, y, m, groups=role, n_groups=3)
        proba, pred = calibrated_rows(method, x, *class_weighted(pos[:, 0], neg[:, 0], class_weight), init=init,
                                      at=at)
        k = len(cols_ev)
        answers = _answers(proba[:, :k], pred[:, :k], pos[:, 1, cols_ev], neg[:, 1, cols_ev])
        out = selective_rows(*answers, resolution=resolution, tolerance=tolerance, weights=weights)
        band.append(accuracy_at_coverages(*answers, BAND_COVERAGES))
        rows = {k: out[k] for k in INTERVAL_NAMES}
        if ood_dataset is not None:
            rows["disca_ood"] = selective_rows(*_answers(proba[:, k:], pred[:, k:], pos[:, 2, cols_ood],
                                                         neg[:, 2, cols_ood]), resolution=resolution,
                                               tolerance=tolerance, weights=weights)["disca"]
        parts.append(pd.DataFrame(rows))
    return pd.concat(parts, ignore_index=True), np.concatenate(band)


def _band(acc, confidence_level):
    """(coverages, low, high) of a pointwise percentile band from (B, k) replicates."""
    low, high = percentile_interval(acc, confidence_level, axis=0)
    return BAND_COVERAGES.copy(), low, high


def _array_band(confidence, correct, *, n_bootstrap, confidence_level, random_state):
    """Pointwise band (coverages, low, high) of accuracy at fixed coverages, examples resampled."""
    c, ok = _check_inputs(confidence, correct, probability=False)
    values, inv, _, _ = _grid_counts(ok, c)
    acc = []
    for lo, hi in replicate_chunks(n_bootstrap, len(c)):
        counts = bootstrap_counts(np.zeros(len(c), dtype=np.int64), n_bootstrap, random_state=random_state,
                                  start=lo, stop=hi)
        n_ok, n_wrong = grid_weights(counts, inv, ok, len(values))
        acc.append(accuracy_at_coverages(values, n_ok[:, 0], n_wrong[:, 0], BAND_COVERAGES))
    return _band(np.concatenate(acc), confidence_level)


def selective_intervals(confidence, correct, *, n_bootstrap=1000, confidence_level=0.95, random_state=0,
                        tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01):
    """Bootstrap percentile intervals of accuracy, area, AURC, DiSCA, a and b for given answers.

    The examples are resampled with replacement (``n_bootstrap`` seeded
    replicates); the confidences are taken as given (no calibrator to refit:
    for that, use :func:`selective_answering` with ``n_bootstrap``).  A
    replicate is a reweighting of the counts at each distinct confidence, so
    all replicates' curves come from one pass of cumulative sums.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Probabilities in [0, 1] (DiSCA reads the grid curve).
    correct : array-like of bool, shape (n,)
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    random_state : int or None, default=0
    tolerance, weights, resolution
        As in :func:`disca`.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``metric`` (accuracy, area, aurc, disca, a, b) with columns
        ``estimate`` (the point estimate), ``low`` and ``high``.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import selective_intervals
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 200)
    >>> ok = rng.uniform(size=200) < conf
    >>> ci = selective_intervals(conf, ok, n_bootstrap=200, random_state=1)
    >>> list(ci.columns), bool((ci["low"] <= ci["estimate"]).all() and (ci["estimate"] <= ci["high"]).all())
    (['estimate', 'low', 'high'], True)
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    seed = check_random_state(random_state)
    d = disca(confidence, correct, tolerance=tolerance, weights=weights, resolution=resolution)
    c, ok = _check_inputs(confidence, correct, probability=True)
    exact = _curve(c, ok, None)
    estimate = {"accuracy": float(exact.accuracy[-1]), "area": exact.score, "aurc": 1.0 - exact.score,
                "disca": d.score, "a": d.a, "b": d.b}
    values, inv, _, _ = _grid_counts(ok, c)
    strata = np.zeros(len(c), dtype=np.int64)
    parts = []
    for lo, hi in replicate_chunks(n_bootstrap, len(c)):
        counts = bootstrap_counts(strata, n_bootstrap, random_state=seed, start=lo, stop=hi)
        n_ok, n_wrong = grid_weights(counts, inv, ok, len(values))
        out = selective_rows(values, n_ok[:, 0], n_wrong[:, 0], resolution=d.resolution, tolerance=d.tolerance,
                             weights=d.weights)
        parts.append(pd.DataFrame({k: out[k] for k in INTERVAL_NAMES}))
    ints = intervals_of(pd.concat(parts, ignore_index=True), confidence_level)
    frame = pd.DataFrame(
        {"estimate": [estimate[k] for k in INTERVAL_NAMES], "low": [ints[k][0] for k in INTERVAL_NAMES],
         "high": [ints[k][1] for k in INTERVAL_NAMES]},
        index=pd.Index(INTERVAL_NAMES, name="metric"),
    )
    return frame


def tolerance_table(bench, dataset, *, models=None, value="disca", **options):
    """Models x tolerance: DiSCA (or b) at each tolerance, the paper's Table 2 layout.

    Columns are ``"<0.95"`` ... ``"<0.55"``, then ``resolution`` (the grid
    step the numbers were read at: DiSCA depends on it, see
    :func:`disca_resolution_sensitivity`); rows sorted by the first
    tolerance, best first.  ``options`` go to :func:`selective_answering`.

    Examples
    --------
    >>> from beyondauc import load_demo, tolerance_table
    >>> t = tolerance_table(load_demo(), "wine", models=["logreg", "svm"])
    >>> list(t.columns)[:2], t.index.name
    (['<0.95', '<0.9'], 'model')
    """
    check_option(value, "value", ("disca", "b"))
    models = bench.models if models is None else list(models)
    rows = {}
    for m in models:
        d = selective_answering(bench, m, dataset, **options).disca
        rows[m] = {f"<{t:g}": v for t, v in zip(d.b_table["tolerance"], d.b_table[value])}
        rows[m]["resolution"] = d.resolution
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "model"
    return out.sort_values(out.columns[0], ascending=value == "b", kind="stable")
