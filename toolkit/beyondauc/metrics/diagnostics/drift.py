"""How two cohorts differ: the drift of sensitivity and specificity between a validation cohort V and a test
cohort T at the same threshold, and the Wasserstein matrix of their four class-conditional distributions."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import frame_html, result_html
from ...utils.validation import (
    check_number,
    warn_undefined,
)
from ..core.kernel import (
    exact_wasserstein,
    merged_values,
    rates,
    sorted_by_class,
)
from ..core.logistic import unit_scale
from .cohort_checks import check_cohort, check_range

__all__ = ["SensSpecDrift", "WassersteinMatrix", "check_p", "sens_spec_drift", "two_cohorts", "wasserstein_matrix"]


@dataclass(frozen=True)
class SensSpecDrift:
    """Sensitivity/specificity drift between a validation and a test cohort.

    Attributes
    ----------
    score : float
        ``D = (1 / (hi - lo)) * integral_lo^hi ||S_V(tau) - S_T(tau)||^2 dtau``,
        exact, [lo, hi] the score range of V and T together.
    thresholds : ndarray
        The merged distinct scores of V and T, ascending; every curve below
        is the value at ``tau = thresholds[k]`` (and stays so on
        ``(thresholds[k-1], thresholds[k]]``).
    sensitivity_val, specificity_val, sensitivity_test, specificity_test : ndarray
        P(s+ >= tau) and P(s- < tau) in each cohort.
    """

    score: float
    thresholds: np.ndarray = field(repr=False)
    sensitivity_val: np.ndarray = field(repr=False)
    specificity_val: np.ndarray = field(repr=False)
    sensitivity_test: np.ndarray = field(repr=False)
    specificity_test: np.ndarray = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """The curves as an evaluation's ``drift_curves`` rows: threshold, both cohorts' rates, score."""
        return pd.DataFrame(
            {
                "threshold": self.thresholds,
                "sensitivity_val": self.sensitivity_val,
                "specificity_val": self.specificity_val,
                "sensitivity_test": self.sensitivity_test,
                "specificity_test": self.specificity_test,
                "score": self.score,
            }
        )

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, score: float | None = None) -> SensSpecDrift:
        """Back from :meth:`to_frame`'s rows (``score``: the exact drift, when the rows were thinned)."""
        score = float(frame["score"].iloc[0]) if score is None else float(score)
        return cls(
            score,
            frame["threshold"].to_numpy(),
            frame["sensitivity_val"].to_numpy(),
            frame["specificity_val"].to_numpy(),
            frame["sensitivity_test"].to_numpy(),
            frame["specificity_test"].to_numpy(),
        )

    @property
    def sensitivity_drift(self) -> np.ndarray:
        """``sensitivity_test - sensitivity_val`` per threshold."""
        return self.sensitivity_test - self.sensitivity_val

    @property
    def specificity_drift(self) -> np.ndarray:
        """``specificity_test - specificity_val`` per threshold."""
        return self.specificity_test - self.specificity_val

    @property
    def distance(self) -> np.ndarray:
        """Euclidean distance ``||S_V(tau) - S_T(tau)||`` per threshold."""
        return np.hypot(self.sensitivity_drift, self.specificity_drift)

    def _repr_html_(self):
        d = self.distance
        return result_html(
            "SensSpecDrift",
            [
                ("score", self.score),
                ("thresholds", len(self.thresholds)),
                ("largest distance", float(d.max()) if len(d) else np.nan),
            ],
        )


@dataclass(frozen=True)
class WassersteinMatrix:
    """p-Wasserstein distances between the class-conditional score distributions.

    Laid out as the paper's Figure 4: rows (V-, T+), columns (V+, T-), so the
    diagonal holds the between-class distances (want large) and the
    off-diagonal the same class across cohorts (want small)::

              V+        T-
        V-  V-V+      V-T-
        T+  T+V+      T+T-

    Attributes
    ----------
    score : float
        ``W = (V-V+ + T-T+) / (V-T- + V+T+)``; ``inf`` when the cohorts agree
        exactly (denominator 0), see ``note``.
    matrix : ndarray of shape (2, 2)
    p : float
    note : str
        Empty, or why ``score`` is inf or NaN.
    """

    score: float
    matrix: np.ndarray = field(repr=False)
    p: float = 2
    note: str = ""
    row_labels: tuple = ("V-", "T+")
    col_labels: tuple = ("V+", "T-")

    @property
    def val_separation(self) -> float:
        """V- to V+ (between classes in the validation cohort)."""
        return float(self.matrix[0, 0])

    @property
    def test_separation(self) -> float:
        """T+ to T- (between classes in the test cohort)."""
        return float(self.matrix[1, 1])

    @property
    def negative_shift(self) -> float:
        """V- to T- (negatives across cohorts)."""
        return float(self.matrix[0, 1])

    @property
    def positive_shift(self) -> float:
        """T+ to V+ (positives across cohorts)."""
        return float(self.matrix[1, 0])

    def to_frame(self) -> pd.DataFrame:
        """The matrix as a labelled DataFrame."""
        return pd.DataFrame(self.matrix, index=list(self.row_labels), columns=list(self.col_labels))

    def to_rows(self) -> pd.DataFrame:
        """The matrix as an evaluation's ``wasserstein`` rows: p, row, column, distance, score, note."""
        return pd.DataFrame(
            [
                {
                    "p": int(self.p),
                    "row": r,
                    "column": c,
                    "distance": float(self.matrix[i, j]),
                    "score": self.score,
                    "note": self.note,
                }
                for i, r in enumerate(self.row_labels)
                for j, c in enumerate(self.col_labels)
            ]
        )

    @classmethod
    def from_rows(cls, frame: pd.DataFrame) -> WassersteinMatrix:
        """Back from :meth:`to_rows`' rows (one matrix: one p).

        Examples
        --------
        >>> from beyondauc import wasserstein_matrix
        >>> from beyondauc.metrics import WassersteinMatrix
        >>> w = wasserstein_matrix([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], [0, 1, 0, 1], [0.2, 0.7, 0.4, 0.9])
        >>> back = WassersteinMatrix.from_rows(w.to_rows())
        >>> bool((back.matrix == w.matrix).all()), back.p == w.p
        (True, True)
        """
        matrix = frame["distance"].to_numpy(dtype=float).reshape(2, 2)
        return cls(float(frame["score"].iloc[0]), matrix, int(frame["p"].iloc[0]), str(frame["note"].iloc[0] or ""))

    def _repr_html_(self):
        return result_html(
            f"{self.p:g}-WassersteinMatrix",
            [("score", self.score), ("p", self.p)],
            parts=[frame_html(self.to_frame())],
            note=self.note or None,
        )


# -- two cohorts -------------------------------------------------------------------


def two_cohorts(y_val, s_val, y_test, s_test, pos_label):
    yv, sv = check_cohort(y_val, s_val, pos_label=pos_label, names=("y_val", "s_val"))
    yt, st = check_cohort(y_test, s_test, pos_label=pos_label, names=("y_test", "s_test"))
    check_range(np.array([sv.min(), sv.max(), st.min(), st.max()]), "s_val` and `s_test")
    return yv, sv, yt, st


def sens_spec_drift(
    y_val: ArrayLike, s_val: ArrayLike, y_test: ArrayLike, s_test: ArrayLike, *, pos_label: object = None
) -> SensSpecDrift:
    """Drift of sensitivity and specificity between a validation and a test cohort.

    ``S_X(tau) = (sens_X(tau), spec_X(tau))`` with sens = P(s+ >= tau) and
    spec = P(s- < tau);
    ``D = (1 / (hi - lo)) * integral_lo^hi ||S_V(tau) - S_T(tau)||^2 dtau``
    over the score range [lo, hi] of V and T together.  Both are step
    functions that change only at observed scores, so the integral is an
    exact sum over the merged distinct scores, O(n log n).  0 means the same
    threshold gives the same sensitivity and specificity in both cohorts;
    the largest possible value is 2.

    (The testAUC package reports instead the mean of the unsquared distance
    over the validation ROC thresholds; that number depends on how the
    validation scores are spaced, this one does not.)

    Parameters
    ----------
    y_val, s_val : array-like
        Labels and scores of the validation cohort V.
    y_test, s_test : array-like
        Labels and scores of the test cohort T.
    pos_label : scalar, default=None

    Returns
    -------
    SensSpecDrift
        ``.score`` is NaN with a warning when a cohort has a single class or
        all scores are equal.

    Examples
    --------
    >>> from beyondauc import sens_spec_drift
    >>> d = sens_spec_drift([0, 1], [0.0, 1.0], [0, 1], [1.0, 2.0])
    >>> d.thresholds.tolist(), d.score
    ([0.0, 1.0, 2.0], 1.0)
    """
    yv, sv, yt, st = two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    vpos, vneg = sorted_by_class(yv, sv)
    tpos, tneg = sorted_by_class(yt, st)
    values = merged_values(vpos, vneg, tpos, tneg)
    sens_v, spec_v = rates(values, vpos, vneg)
    sens_t, spec_t = rates(values, tpos, tneg)
    if min(len(vpos), len(vneg), len(tpos), len(tneg)) == 0:
        warn_undefined("sensitivity/specificity drift is undefined when a cohort has a single class; returning NaN")
        score = np.nan
    elif len(values) < 2:
        warn_undefined(
            "sensitivity/specificity drift is undefined when every score is the same (empty range); returning NaN"
        )
        score = np.nan
    else:
        gap = (sens_v - sens_t) ** 2 + (spec_v - spec_t) ** 2
        score = float(np.dot(np.diff(values), gap[1:]) / (values[-1] - values[0]))
    return SensSpecDrift(score, values, sens_v, spec_v, sens_t, spec_t)


def check_p(p):
    p = check_number(p, "p", low=1, hint=" (1 or 2 as in the paper)")
    return int(p) if p in (1, 2) else p


def wasserstein_matrix(
    y_val: ArrayLike, s_val: ArrayLike, y_test: ArrayLike, s_test: ArrayLike, *, p: float = 2, pos_label: object = None
) -> WassersteinMatrix:
    """p-Wasserstein matrix between V-, V+, T- and T+, and its summary W.

    Each entry is the exact p-Wasserstein distance between two empirical
    score distributions, from their quantile functions.  The between-class
    entries (V-V+, T-T+) should be large and the across-cohort entries
    (V-T-, V+T+) small; ``W = (V-V+ + T-T+) / (V-T- + V+T+)`` summarises
    both (higher is better).  Scaling all scores by k > 0 scales every entry
    by k and leaves W unchanged.

    Parameters
    ----------
    y_val, s_val, y_test, s_test : array-like
    p : float >= 1, default=2
        2 as the paper's text says; 1 is the earth mover's distance of
        ``scipy.stats.wasserstein_distance``, which the paper's Figure 4 was
        computed with (its example data give [[0.040, 0.384], [0.384, 0.562]]
        at p = 1, the figure's [[0.04, 0.38], [0.38, 0.56]]; at p = 2 the
        T+T- entry is 0.668).
    pos_label : scalar, default=None

    Returns
    -------
    WassersteinMatrix
        ``.score`` is ``inf`` with a note when the cohorts' class
        distributions are identical (denominator 0) but the classes differ;
        NaN with a warning when a class is missing from a cohort, or when all
        four distributions are identical (0 / 0).

    Examples
    --------
    >>> from beyondauc import wasserstein_matrix
    >>> w = wasserstein_matrix([0, 1], [0.0, 1.0], [0, 1], [0.5, 1.5], p=1)
    >>> w.matrix.tolist(), w.score
    ([[1.0, 0.5], [0.5, 1.0]], 2.0)
    """
    p = check_p(p)
    yv, sv, yt, st = two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    vpos, vneg = sorted_by_class(yv, sv)
    tpos, tneg = sorted_by_class(yt, st)
    if min(len(vpos), len(vneg), len(tpos), len(tneg)) == 0:
        warn_undefined("the Wasserstein matrix is undefined when a cohort has a single class; returning NaN")
        return WassersteinMatrix(np.nan, np.full((2, 2), np.nan), p, "a cohort has a single class")
    # on the scores over a power of two near their largest magnitude (exact), then scaled back:
    # gap**p neither overflows at 1e300 nor underflows at 1e-300
    _, e = unit_scale(np.array([vpos[[0, -1]], vneg[[0, -1]], tpos[[0, -1]], tneg[[0, -1]]]))
    vp, vn, tp, tn = (np.ldexp(s, -e) for s in (vpos, vneg, tpos, tneg))
    matrix = np.ldexp(
        np.array(
            [
                [exact_wasserstein(vn, vp, p), exact_wasserstein(vn, tn, p)],
                [exact_wasserstein(tp, vp, p), exact_wasserstein(tp, tn, p)],
            ]
        ),
        e,
    )
    num = matrix[0, 0] + matrix[1, 1]
    den = matrix[0, 1] + matrix[1, 0]
    note = ""
    if den > 0:
        score = float(num / den)
    elif num > 0:
        score = np.inf
        note = "V- = T- and V+ = T+ exactly: no shift between the cohorts, so W is infinite"
    else:
        score = np.nan
        note = "all four class distributions are identical: W = 0 / 0"
        warn_undefined("W is undefined when all four class distributions are identical (0 / 0); returning NaN")
    return WassersteinMatrix(score, matrix, p, note)
