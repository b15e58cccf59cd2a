"""DiSCA (Mishra et al.): one number for how safely a model abstains.

DiSCA rewards a high confidence at which accuracy first drops below 100% (a) and below the
tolerance (b), and penalises fluctuations of the coverage-accuracy curve (every step where
accuracy *rises* with coverage):
``DiSCA = x / a + y / b - z * sum_i (n - i + 1) (d2 - d1) / c / sum_i (n - i + 1)``.
It is read from the curve on a confidence grid, so every DiSCA carries its ``resolution``
(:func:`disca_resolution_sensitivity` shows how much it moves).  :func:`selective_rows` is its
batched twin: DiSCA, a, b, the area and AURC of every row of counts at once, for the bootstrap.
DiDMA and NiDMA, which weigh DiSCA against cost and out-of-distribution data, are in
:mod:`~beyondauc.metrics.selective.didma_nidma`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import frame_html, result_html
from .curves import (
    FLOOR,
    GRID_SLACK,
    TOLERANCES,
    CoverageAccuracyCurve,
    accuracy_of,
    area_of,
    check_inputs,
    check_resolution,
    check_unit,
    check_weights,
    exact_curve,
    sorted_count_rows,
)

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

__all__ = [
    "RESOLUTIONS",
    "DiSCA",
    "disca",
    "disca_resolution_sensitivity",
]


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

    def to_dict(self) -> dict[str, float]:
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

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Its tables as an evaluation stores them: ``curve`` (the grid curve's points), ``tolerance``
        (b and DiSCA over the tolerance grid) and ``fluctuations``; :meth:`to_dict` has the numbers."""
        return {
            "curve": self.curve.to_frame(),
            "tolerance": self.b_table.copy(),
            "fluctuations": self.fluctuations.copy(),
        }

    @classmethod
    def from_tables(
        cls,
        numbers: dict,
        tables: dict[str, pd.DataFrame],
        *,
        tolerance: float,
        resolution: float,
        weights: tuple = (1 / 3, 1 / 3, 1 / 3),
    ) -> DiSCA:
        """A DiSCA back from :meth:`to_dict`'s numbers and :meth:`to_tables`' tables (an evaluation's rows).

        Examples
        --------
        >>> from beyondauc import disca
        >>> from beyondauc.metrics import DiSCA
        >>> d = disca([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 1, 0], resolution=0.1)
        >>> back = DiSCA.from_tables(d.to_dict(), d.to_tables(), tolerance=d.tolerance, resolution=d.resolution)
        >>> back.score == d.score and back.n_fluctuations == d.n_fluctuations
        True
        """
        curve = CoverageAccuracyCurve.from_frame(tables["curve"], resolution=resolution)
        return cls(
            float(numbers["disca"]),
            float(numbers["a"]),
            float(numbers["b"]),
            int(numbers["n_fluctuations"]),
            float(numbers["fluctuation_magnitude"]),
            float(numbers["penalty"]),
            float(tolerance),
            weights,
            float(resolution),
            tables["fluctuations"].reset_index(drop=True),
            tables["tolerance"].reset_index(drop=True),
            curve,
        )

    def _repr_html_(self):
        x, y, z = self.weights
        return result_html(
            "DiSCA",
            [
                ("score", self.score),
                ("a", self.a),
                (f"b({self.tolerance:g})", self.b),
                ("n_fluctuations", self.n_fluctuations),
                ("penalty", self.penalty),
                ("weights (x, y, z)", f"{x:.3g}, {y:.3g}, {z:.3g}"),
            ],
            parts=[frame_html(self.b_table, index=False, caption="b and DiSCA over the tolerance grid")],
        )


def _first_below(cur, level):
    """(confidence at the first point with accuracy < level, or the lowest confidence; whether one exists)."""
    below = cur.accuracy < level
    k = int(np.argmax(below)) if below.any() else len(cur.confidence) - 1
    return float(cur.confidence[k]), bool(below.any())


def _rises(cur, z):
    """(the points where the grid curve's accuracy rises, the weighted fluctuation penalty)."""
    rise = np.flatnonzero(np.diff(cur.accuracy) > 0)
    d1, d2 = cur.accuracy[rise], cur.accuracy[rise + 1]
    c = np.maximum(cur.confidence[rise] - cur.confidence[rise + 1], FLOOR)
    n = len(rise)
    w = np.arange(n, 0, -1, dtype=np.float64)  # n - i + 1 for i = 1..n
    penalty = z * float(np.dot(w, (d2 - d1) / c) / w.sum()) if n else 0.0
    return rise, penalty


def _fluctuations(cur, z):
    """Fluctuation table and the weighted penalty of a grid curve."""
    rise, penalty = _rises(cur, z)
    d1, d2 = cur.accuracy[rise], cur.accuracy[rise + 1]
    c1, c2 = cur.confidence[rise], cur.confidence[rise + 1]
    table = pd.DataFrame(
        {
            "i": np.arange(1, len(rise) + 1),
            "coverage_1": cur.coverage[rise],
            "coverage_2": cur.coverage[rise + 1],
            "d1": d1,
            "d2": d2,
            "c1": c1,
            "c2": c2,
            "c": np.maximum(c1 - c2, FLOOR),
        }
    )
    return table, penalty


def disca(
    confidence: ArrayLike,
    correct: ArrayLike,
    *,
    tolerance: float = 0.9,
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    resolution: float = 0.01,
) -> DiSCA:
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
    tolerance = check_unit(tolerance, "tolerance", low_open=True)
    weights = check_weights(weights, "weights", 3)
    resolution = check_resolution(resolution)
    c, ok = check_inputs(confidence, correct, probability=True)
    return _disca(c, ok, tolerance, weights, resolution)


def _disca(c, ok, tolerance, weights, resolution):
    """DiSCA of validated inputs."""
    cur = exact_curve(c, ok, resolution)
    x, y, z = weights
    a = max(_first_below(cur, 1.0)[0], FLOOR)
    flucts, penalty = _fluctuations(cur, z)
    b_table = {"tolerance": [], "b": [], "disca": [], "falls_below": []}
    for t in TOLERANCES:  # nine tolerances, each one argmax over the curve
        b_t, falls = _first_below(cur, t)
        b_t = max(b_t, FLOOR)
        for k, v in zip(b_table, (t, b_t, x / a + y / b_t - penalty, falls)):
            b_table[k].append(v)
    b = max(_first_below(cur, tolerance)[0], FLOOR)
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
        b_table=pd.DataFrame(b_table),
        curve=cur,
    )


def _disca_row(c, ok, tolerance, weights, resolution):
    """:func:`disca_resolution_sensitivity`'s row of one resolution: :func:`_disca`'s numbers, without its tables."""
    cur = exact_curve(c, ok, resolution)
    x, y, z = weights
    a = max(_first_below(cur, 1.0)[0], FLOOR)
    b = max(_first_below(cur, tolerance)[0], FLOOR)
    rise, penalty = _rises(cur, z)
    magnitude = float(np.nansum(cur.accuracy[rise + 1] - cur.accuracy[rise]))  # as the table's pandas sum: NaN skipped
    return {
        "resolution": resolution,
        "disca": x / a + y / b - penalty,
        "a": a,
        "b": b,
        "n_fluctuations": len(rise),
        "fluctuation_magnitude": magnitude,
        "penalty": penalty,
        "n_points": len(cur.coverage),
    }


def selective_rows(
    conf: ArrayLike,
    n_ok: ArrayLike,
    n_wrong: ArrayLike,
    *,
    resolution: float,
    tolerance: float,
    weights: tuple[float, float, float],
    coverages: ArrayLike | None = None,
) -> dict[str, np.ndarray]:
    """Area, AURC, accuracy, a, b, fluctuations, penalty and DiSCA of each row, as a dict of (R,).

    Exactly :func:`beyondauc.disca` and :func:`beyondauc.aurc` on the
    examples each row's counts describe.  The grid curve is a (rows x bins)
    count matrix from one flat ``bincount``; a point is a non-empty bin.
    With ``coverages``, ``"band"`` adds each row's accuracy at those coverage
    levels, (R, k): :func:`~beyondauc.metrics.selective.curves.accuracy_at_coverages`
    on the same sorted rows.  Confidences shared by every row (shape (m,))
    are sorted once.
    """
    n_ok, n_wrong = (np.asarray(x, dtype=np.float64) for x in (n_ok, n_wrong))
    conf = np.asarray(conf, dtype=np.float64)
    ranked = sorted_count_rows(conf, n_ok, n_wrong)
    area = area_of(ranked)
    cnt, ok, cmin = grid_bins(conf, n_ok, n_ok + n_wrong, resolution)
    answered, right = np.cumsum(cnt, axis=1), np.cumsum(ok, axis=1)
    point = cnt > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right / answered
    a, b = _first_below_rows(point, acc, cmin, 1.0), _first_below_rows(point, acc, cmin, tolerance)
    x_w, y_w, z_w = weights
    n_fl, penalty, magnitude = _fluctuation_rows(point, acc, cmin, z_w)
    band = {} if coverages is None else {"band": accuracy_of(ranked, coverages)}
    return {
        "accuracy": right[:, -1] / answered[:, -1],
        "area": area,
        "aurc": 1.0 - area,
        "disca": x_w / a + y_w / b - penalty,
        "a": a,
        "b": b,
        "n_fluctuations": n_fl.astype(np.float64),
        "fluctuation_magnitude": magnitude,
        "penalty": penalty,
        **band,
    }


def grid_bins(conf: np.ndarray, n_ok: np.ndarray, w: np.ndarray, resolution: float) -> tuple[np.ndarray, ...]:
    """Each row's grid curve as bins: (answers, right answers, lowest confidence) per bin, (R, nb) each.

    Bin k of a row holds the confidences c with ``k - 1 < (highest - c) / resolution <= k``
    (up to :data:`~beyondauc.metrics.selective.curves.GRID_SLACK`), the row's highest in bin 0;
    all rows are binned by one flat ``bincount``.  ``conf`` (m,) or (R, m);
    ``n_ok`` and ``w`` (R, m): right answers and all answers per confidence.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.selective.scores import grid_bins
    >>> conf = np.array([0.9, 0.85, 0.82, 0.75])
    >>> cnt, ok, cmin = grid_bins(conf, np.array([[1.0, 0.0, 1.0, 1.0]]), np.ones((1, 4)), 0.1)
    >>> cnt.tolist(), ok.tolist(), cmin.tolist()
    ([[1.0, 2.0, 1.0]], [[1.0, 1.0, 1.0]], [[0.9, 0.82, 0.75]])
    """
    R, m = w.shape
    conf = np.broadcast_to(conf, (R, m))
    present = w > 0
    cmax = np.where(present, conf, -np.inf).max(axis=1)
    with np.errstate(invalid="ignore"):
        step = np.ceil((cmax[:, None] - conf) / resolution - GRID_SLACK)
    step = np.where(present, step, 0).astype(np.int64)
    nb = int(step.max()) + 1 if step.size else 1
    flat = (np.arange(R)[:, None] * nb + step).ravel()
    cnt = np.bincount(flat, weights=w.ravel(), minlength=R * nb).reshape(R, nb)
    ok = np.bincount(flat, weights=n_ok.ravel(), minlength=R * nb).reshape(R, nb)
    cmin = np.full(R * nb, np.inf)
    keep = present.ravel()
    np.minimum.at(cmin, flat[keep], conf.ravel()[keep])
    return cnt, ok, cmin.reshape(R, nb)


def _first_below_rows(point, acc, cmin, level):
    """Each row's confidence where accuracy first drops below ``level`` (the last point's when it never does),
    floored at :data:`~beyondauc.metrics.selective.curves.FLOOR`: a and b of :func:`_first_below`, batched."""
    R, nb = point.shape
    rows = np.arange(R)
    last = nb - 1 - np.argmax(point[:, ::-1], axis=1)
    below = point & (acc < level)
    k = np.where(below.any(axis=1), np.argmax(below, axis=1), last)
    return np.maximum(cmin[rows, k], FLOOR)


def _fluctuation_rows(point, acc, cmin, z_w):
    """Each row's (number of fluctuations, penalty, summed rise): :func:`_fluctuations`, batched.

    A fluctuation is a point whose accuracy exceeds the previous point's; the
    i-th of n weighs n - i + 1, its rise over the (floored) confidence gap.
    """
    R, nb = point.shape
    rows = np.arange(R)
    bins = np.arange(nb)
    prev = np.maximum.accumulate(np.where(point, bins, -1), axis=1)
    prev = np.concatenate([np.full((R, 1), -1), prev[:, :-1]], axis=1)
    has_prev = point & (prev >= 0)
    pk = np.maximum(prev, 0)
    d1, c1 = acc[rows[:, None], pk], cmin[rows[:, None], pk]
    with np.errstate(invalid="ignore"):
        rise = has_prev & (acc > d1)
    n_fl = rise.sum(axis=1)
    i = np.cumsum(rise, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(rise, (n_fl[:, None] - i + 1) * (acc - d1) / np.maximum(c1 - cmin, FLOOR), 0.0)
        penalty = np.where(n_fl > 0, z_w * term.sum(axis=1) / (n_fl * (n_fl + 1) / 2.0), 0.0)
    magnitude = np.where(rise, acc - d1, 0.0).sum(axis=1)
    return n_fl, penalty, magnitude


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


def disca_resolution_sensitivity(
    confidence: ArrayLike,
    correct: ArrayLike,
    *,
    resolutions: Sequence[float] = RESOLUTIONS,
    tolerance: float = 0.9,
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
) -> pd.DataFrame:
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
    tolerance = check_unit(tolerance, "tolerance", low_open=True)
    weights = check_weights(weights, "weights", 3)
    values = _check_resolutions(resolutions)
    c, ok = check_inputs(confidence, correct, probability=True)
    rows = [_disca_row(c, ok, tolerance, weights, r) for r in values]  # each one vectorised pass over the answers
    return pd.DataFrame({k: [row[k] for row in rows] for k in rows[0]})
