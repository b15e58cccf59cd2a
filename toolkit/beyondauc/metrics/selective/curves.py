"""The coverage-accuracy curve of selective answering: when should a model abstain?

A model answers the examples it is confident about and abstains on the
rest.  Ranking examples by confidence (descending, tied confidences together)
gives the coverage-accuracy curve (:func:`coverage_accuracy_curve`, one
point per distinct confidence, or read on a confidence grid); its area -- the
"AUC" of selective answering -- hides where accuracy drops and whether it
rises again.  This module holds the curve, the numbers read off it
(:func:`accuracy_at_coverage`, :func:`coverage_at_accuracy`,
:func:`auc_tail`, :func:`plateau`), their batched twins on rows of counts
(:func:`exact_area_rows`, :func:`accuracy_at_coverages`) and the checks of
the inputs every selective function shares.

The scores read from the curve live beside it: DiSCA in
:mod:`~beyondauc.metrics.selective.scores`, DiDMA and NiDMA in
:mod:`~beyondauc.metrics.selective.didma_nidma`, and the
selective-classification literature's AURC, AUGRC and E-AURC in
:mod:`~beyondauc.metrics.selective.risk_coverage`.

Array functions take ``confidence, correct`` first.  The area and the
numbers read off the exact curve accept confidences of any scale (only their
order matters); the grid curve needs probabilities in [0, 1] -- for a binary
probability p the confidence is max(p, 1 - p).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import result_html
from ...utils.validation import check_number, check_scores
from ..core.kernel import grid_counts

__all__ = [
    "TOLERANCES",
    "CoverageAccuracyCurve",
    "Plateau",
    "accuracy_at_coverage",
    "auc_tail",
    "coverage_accuracy_curve",
    "coverage_at_accuracy",
    "loss_points",
    "plateau",
]


TOLERANCES = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55)
FLOOR = 0.001  # a, b and the fluctuation confidence gap are floored here (the paper's rule)
GRID_SLACK = 1e-9  # a confidence within this many grid steps of a threshold reaches it


# -- validation -------------------------------------------------------------------


def _check_correct(correct, n, name="correct", *, graded=False):
    """``correct`` as booleans; with ``graded``, a quality in [0, 1] stays float64 when some value lies between."""
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
        if graded:
            q = arr.astype(np.float64)
            bad = ~((q >= 0) & (q <= 1))  # NaN too
            if not bad.any():
                return q
        i = int(np.flatnonzero(bad)[0])
        what = "boolean (True/False or 0/1) or a quality in [0, 1]" if graded else "boolean (True/False or 0/1)"
        value = arr[i].item() if graded else arr[i]
        raise ValueError(f"`{name}` must be {what}, got {value!r} at position {i}")
    raise ValueError(f"`{name}` must be boolean (True/False or 0/1), got dtype {arr.dtype}")


def check_inputs(confidence, correct, *, probability, names=("confidence", "correct"), graded=False):
    c = check_scores(confidence, names[0])
    if len(c) == 0:
        raise ValueError(f"`{names[0]}` is empty: nothing was answered")
    ok = _check_correct(correct, len(c), names[1], graded=graded)
    if probability:
        bad = (c < 0) | (c > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`{names[0]}` must be a probability in [0, 1] here, got {c[i]!r} at position {i} "
                "(calibrate raw scores first, e.g. with ScoreCalibrator)"
            )
    return c, ok


def check_unit(value, name, *, low_open=False):
    return check_number(value, name, low=0, high=1, low_open=low_open)


def check_resolution(resolution):
    return check_number(resolution, "resolution", low=0, high=1, low_open=True)


def check_weights(weights, name, k):
    try:
        w = tuple(float(v) for v in weights)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be {k} non-negative numbers summing to 1, got {weights!r}") from None
    if (
        len(w) != k or not all(np.isfinite(v) and v >= 0 for v in w) or abs(sum(w) - 1) > 0.01 + 1e-9
    ):  # the margin lets the paper's 0.33 + 0.33 + 0.33 pass
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

    def partial_area(self, low: float = 0.0, high: float = 1.0) -> float:
        """Area under the curve between coverages ``low`` and ``high``."""
        low, high = check_unit(low, "low"), check_unit(high, "high")
        if high < low:
            raise ValueError(f"`high` must be >= `low`, got low={low} and high={high}")
        prev = np.concatenate([[0.0], self.coverage[:-1]])
        span = np.clip(np.minimum(self.coverage, high) - np.maximum(prev, low), 0.0, None)
        return float(np.dot(span, self.accuracy))

    def to_frame(self) -> pd.DataFrame:
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

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, *, score: float | None = None, resolution: float | None = None
    ) -> CoverageAccuracyCurve:
        """The curve back from :meth:`to_frame`'s columns (an evaluation's ``coverage_curves`` rows).

        ``score`` is the area; when not given it is recomputed from the points.

        Examples
        --------
        >>> from beyondauc import coverage_accuracy_curve
        >>> from beyondauc.metrics import CoverageAccuracyCurve
        >>> cur = coverage_accuracy_curve([0.9, 0.8, 0.7, 0.6], [1, 1, 0, 1], resolution=0.1)
        >>> back = CoverageAccuracyCurve.from_frame(cur.to_frame(), resolution=0.1)
        >>> back.score == cur.score, back.accuracy.tolist() == cur.accuracy.tolist()
        (True, True)
        """
        coverage, accuracy = frame["coverage"].to_numpy(), frame["accuracy"].to_numpy()
        if score is None:
            score = float(np.dot(np.diff(coverage, prepend=0.0), accuracy))
        return cls(
            score,
            coverage,
            accuracy,
            frame["confidence"].to_numpy(),
            frame["n_answered"].to_numpy(),
            frame["n_correct"].to_numpy(),
            resolution,
        )

    def _repr_html_(self):
        n = len(self.coverage)
        return result_html(
            "CoverageAccuracyCurve",
            [
                ("area", self.score),
                ("points", n),
                ("accuracy at full coverage", float(self.accuracy[-1]) if n else np.nan),
                ("resolution", "exact" if self.resolution is None else self.resolution),
            ],
        )


def _exact_points(c, ok):
    """Exact curve: one point per distinct confidence, highest first."""
    values, _, n_ok, n_wrong = grid_counts(ok, c)
    n_ok, n_wrong = n_ok[::-1], n_wrong[::-1]
    answered = np.rint(np.cumsum(n_ok + n_wrong))  # whole counts: graded q + (1 - q) may round off a 1
    right = np.cumsum(n_ok)
    return values[::-1], answered, right


def exact_curve(c, ok, resolution):
    conf, answered, right = _exact_points(c, ok)
    if resolution is not None:
        # grid threshold j is c_max - j * resolution; each distinct confidence is
        # first answered at step ceil((c_max - c) / resolution).  Points that
        # answer the same set merge: keep the last distinct confidence per step.
        step = np.ceil((conf[0] - conf) / resolution - GRID_SLACK)
        last = np.flatnonzero(np.diff(step, append=np.inf) != 0)
        conf, answered, right = conf[last], answered[last], right[last]
    n = answered[-1]
    coverage = answered / n
    accuracy = right / answered
    area = float(np.dot(np.diff(coverage, prepend=0.0), accuracy))
    right = right if ok.dtype.kind == "f" else right.astype(np.int64)  # graded: the summed quality
    return CoverageAccuracyCurve(area, coverage, accuracy, conf, answered.astype(np.int64), right, resolution)


def checked_curve(
    confidence: ArrayLike, correct: ArrayLike, *, graded: bool = False
) -> tuple[CoverageAccuracyCurve, np.ndarray]:
    """Validate confidences of any scale and return (exact curve, correct); ``graded`` admits a quality in [0, 1].

    Examples
    --------
    >>> from beyondauc.metrics.selective.curves import checked_curve
    >>> cur, ok = checked_curve([0.9, 0.8, 0.8], [True, False, True])
    >>> cur.coverage.tolist(), ok.tolist()
    ([0.3333333333333333, 1.0], [True, False, True])
    """
    c, ok = check_inputs(confidence, correct, probability=False, graded=graded)
    return exact_curve(c, ok, None), ok


def loss_points(confidence: ArrayLike, correct: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct confidences, highest first, with the answers and their summed loss at each as threshold.

    The loss of an answer is ``1 - quality``: 1 for a wrong answer, 0 for a
    right one, ``1 - q`` for a graded one of quality q in [0, 1].  Tied
    confidences enter together.  Risk-coverage curves, AURC and the
    risk-controlled threshold read these sums.

    Returns
    -------
    confidence : ndarray, descending
    answered : ndarray of float
        Answers with a confidence at or above each.
    loss : ndarray of float
        Their summed loss.

    Examples
    --------
    >>> from beyondauc.metrics.selective.curves import loss_points
    >>> c, n, loss = loss_points([0.9, 0.8, 0.8, 0.6], [1, 0.5, 0, 1])
    >>> c.tolist(), n.tolist(), loss.tolist()
    ([0.9, 0.8, 0.6], [1.0, 3.0, 4.0], [0.0, 1.5, 1.5])
    """
    c, q = check_inputs(confidence, correct, probability=False, graded=True)
    values, inverse, _, wrong = grid_counts(q, c)
    counts = np.bincount(inverse, minlength=len(values)).astype(np.float64)  # whole counts, whatever the qualities
    return values[::-1], np.cumsum(counts[::-1]), np.cumsum(wrong[::-1])


def coverage_accuracy_curve(
    confidence: ArrayLike, correct: ArrayLike, *, resolution: float | None = None
) -> CoverageAccuracyCurve:
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
        resolution = check_resolution(resolution)
    c, ok = check_inputs(confidence, correct, probability=resolution is not None)
    return exact_curve(c, ok, resolution)


def sorted_count_rows(conf, n_ok, n_wrong):
    """Each row's counts by confidence, highest first (ties in grid order): (weights, answered, right, end_idx).

    ``end_idx`` is, at each position, the last position of its tie group.
    Confidences shared by every row (``conf`` of shape (m,)) are sorted once
    (a stable sort orders each row the same way).
    """
    w = n_ok + n_wrong
    R, m = w.shape
    conf = np.asarray(conf)
    if conf.ndim == 1:
        order = np.argsort(-conf, kind="stable")
        cs = conf[order][None, :]
        ws, oks = w[:, order], n_ok[:, order]
    else:
        conf = np.broadcast_to(conf, (R, m))
        order = np.argsort(-conf, axis=1, kind="stable")
        cs = np.take_along_axis(conf, order, axis=1)
        ws, oks = np.take_along_axis(w, order, axis=1), np.take_along_axis(n_ok, order, axis=1)
    answered = np.cumsum(ws, axis=1)
    right = np.cumsum(oks, axis=1)
    end = np.ones(cs.shape, dtype=bool)
    end[:, :-1] = cs[:, :-1] != cs[:, 1:]
    idx = np.arange(m)
    end_idx = np.broadcast_to(np.minimum.accumulate(np.where(end, idx, m)[:, ::-1], axis=1)[:, ::-1], (R, m))
    return ws, answered, right, end_idx


def exact_area_rows(conf: np.ndarray, n_ok: np.ndarray, n_wrong: np.ndarray) -> np.ndarray:
    """Area under the exact coverage-accuracy curve of each row, (R,).

    The batched twin of :func:`coverage_accuracy_curve`'s ``score``.

    ``conf`` (R, m) or (m,): the confidence of each grid value; ``n_ok`` and
    ``n_wrong`` (R, m) the (weighted) correct and wrong answers there.  Tied
    confidences enter together: every example's accuracy term is that of the
    last point of its tie group.
    """
    return area_of(sorted_count_rows(conf, n_ok, n_wrong))


def area_of(sorted_rows):
    """:func:`exact_area_rows` from :func:`sorted_count_rows`."""
    ws, answered, right, end_idx = sorted_rows
    r_ = np.arange(len(ws))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right[r_, end_idx] / answered[r_, end_idx]
    return np.where(ws > 0, ws * acc, 0.0).sum(axis=1) / answered[:, -1]


def coverage_at_accuracy(confidence: ArrayLike, correct: ArrayLike, *, target: float) -> float:
    """Largest coverage whose answered examples reach accuracy >= ``target``.

    Read from the exact curve; 0.0 when no threshold reaches the target.

    Examples
    --------
    >>> from beyondauc import coverage_at_accuracy
    >>> coverage_at_accuracy([0.9, 0.8, 0.7, 0.6], [True, True, False, True], target=0.75)
    1.0
    """
    target = check_unit(target, "target")
    cur, _ = checked_curve(confidence, correct)
    reach = cur.accuracy >= target
    return float(cur.coverage[reach].max()) if reach.any() else 0.0


def accuracy_at_coverage(confidence: ArrayLike, correct: ArrayLike, *, coverage: float) -> float:
    """Accuracy when answering the most confident share ``coverage`` of examples.

    Tied confidences enter together, so this is the accuracy of the first
    exact-curve point whose coverage reaches ``coverage``.

    Examples
    --------
    >>> from beyondauc import accuracy_at_coverage
    >>> accuracy_at_coverage([0.9, 0.8, 0.7, 0.6], [True, False, True, True], coverage=0.5)
    0.5
    """
    coverage = check_unit(coverage, "coverage", low_open=True)
    cur, _ = checked_curve(confidence, correct)
    k = int(np.searchsorted(cur.coverage, coverage - 1e-12))
    return float(cur.accuracy[min(k, len(cur.accuracy) - 1)])


def accuracy_at_coverages(conf: np.ndarray, n_ok: np.ndarray, n_wrong: np.ndarray, coverages: ArrayLike) -> np.ndarray:
    """Accuracy of each row's exact curve at fixed coverage levels, (R, k): :func:`accuracy_at_coverage` batched.

    As :func:`beyondauc.accuracy_at_coverage`: the accuracy of the first
    exact-curve point (tie groups enter together) whose coverage reaches the level.
    """
    return accuracy_of(sorted_count_rows(conf, n_ok, n_wrong), coverages)


def accuracy_of(sorted_rows, coverages):
    """:func:`accuracy_at_coverages` from :func:`sorted_count_rows`."""
    _, answered, right, end_idx = sorted_rows
    R, m = answered.shape
    total = answered[:, -1:]
    # coverage at group ends (non-decreasing along the row); elsewhere carry the end's value
    r_ = np.arange(R)[:, None]
    cov = answered[r_, end_idx] / total
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right[r_, end_idx] / answered[r_, end_idx]
    levels = np.asarray(coverages, dtype=np.float64) - 1e-12
    # first position whose (group-end) coverage reaches the level: row-offset searchsorted
    flat = (cov + 2.0 * np.arange(R)[:, None]).ravel()
    q = (levels[None, :] + 2.0 * np.arange(R)[:, None]).ravel()
    pos = np.searchsorted(flat, q, side="left").reshape(R, -1) - (np.arange(R) * m)[:, None]
    pos = np.clip(pos, 0, m - 1)
    return acc[r_, pos]


def auc_tail(confidence: ArrayLike, correct: ArrayLike, *, max_coverage: float = 0.2) -> float:
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
    max_coverage = check_unit(max_coverage, "max_coverage", low_open=True)
    return checked_curve(confidence, correct)[0].partial_area(0.0, max_coverage) / max_coverage


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


def plateau(confidence: ArrayLike, correct: ArrayLike, *, band: float = 0.02) -> Plateau:
    """The plateau of the coverage-accuracy curve (exact curve).

    Examples
    --------
    >>> from beyondauc import plateau
    >>> p = plateau([0.9, 0.8, 0.7, 0.6], [False, True, True, True], band=0.1)
    >>> p.score, p.confidence_high
    (0.5, 0.7)
    """
    band = check_unit(band, "band")
    cur, _ = checked_curve(confidence, correct)
    outside = np.abs(cur.accuracy - cur.accuracy[-1]) > band
    start = int(np.flatnonzero(outside)[-1]) + 1 if outside.any() else 0
    before = cur.coverage[start - 1] if start > 0 else 0.0
    acc = cur.accuracy[start:]
    return Plateau(
        float(1.0 - before),
        float(acc.min()),
        float(acc.max()),
        float(cur.confidence[-1]),
        float(cur.confidence[start]),
        band,
    )
