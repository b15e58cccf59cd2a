"""A calibrator on its own: a raw score turned into a decision, fitted on calibration data.

:class:`ScoreCalibrator` is what the expected-accuracy grid computes in batches
(:mod:`beyondauc.metrics.calibration.grid`), one fit at a time and in the
scikit-learn style: Platt scaling (logistic), isotonic regression or a stump.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

from ...utils.html import result_html
from ...utils.validation import (
    UndefinedMetricWarning,
    binarize_labels,
    check_option,
    check_scores,
)
from ..core.fitting import class_weighted, single_class
from ..core.isotonic import isotonic_knots, isotonic_transform
from ..core.kernel import grid_counts
from ..core.logistic import logistic_decision, logistic_params
from ..core.stump import stump_decision, stump_grid, stump_params

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["METHODS", "REFERENCES", "ScoreCalibrator", "lbfgs_params"]

#: The calibration methods.
METHODS = ("logistic", "isotonic", "stump")
#: The stump's references: None (float64, scale-free) or "opitz2024" (scikit-learn's tree on float32 scores).
REFERENCES = (None, "opitz2024")


class ScoreCalibrator:
    """Turn a raw score into a decision: Platt scaling, isotonic regression or a stump.

    The three methods of the paper, fitted exactly as scikit-learn's
    ``make_pipeline(StandardScaler(), LogisticRegression())``,
    ``IsotonicRegression(out_of_bounds="clip")`` and a depth-1 Gini tree
    (``DecisionTreeClassifier(max_depth=1)``'s split search on the float64
    scores, mid-point threshold) on the single score feature would be.
    Decision: positive when the calibrated value is > 0.5 (the stump uses its
    own split).  Calibration data with a single class predicts that class.

    The calibrators are scale-free: multiplying the scores by any positive
    number (1e300, 1e-300) or adding a constant changes no decision and no
    probability; ``threshold_``, ``coef_`` and ``intercept_`` move with the
    scores' units.  Only ``reference="opitz2024"`` depends on the scale.

    Parameters
    ----------
    method : {"logistic", "isotonic", "stump"}, default="logistic"
    class_weight : {None, "balanced"}, default=None
        ``"balanced"`` weights each class by ``n / (2 * n_class)`` (in the
        fit; the logistic's standardisation sees every row once, as
        ``StandardScaler`` in a pipeline does).
    reference : {None, "opitz2024"}, default=None
        ``"opitz2024"``: the settings of the code behind Opitz's tables,
        scikit-learn's ``LogisticRegression()`` on the *raw* score (lbfgs,
        stopped at its defaults; penalty on the raw coefficient, so the fit
        depends on the scores' scale), ``IsotonicRegression()`` with
        ``out_of_bounds="nan"`` (negative outside the calibration range) and
        ``DecisionTreeClassifier(max_depth=1)`` on the raw score (float32
        features: scores that round to one float32, or lie within 1e-7 of
        each other in float32, are one value to it).

    Attributes
    ----------
    threshold_ : float
        The score above which the decision is positive (for ``logistic`` with a
        negative slope, below which).  ``inf`` if never positive, ``-inf`` if
        always.
    coef_, intercept_ : float
        Platt parameters on the raw scale, ``coef_ * s + intercept_ > 0``
        (``logistic`` only).
    knots_x_, knots_y_ : ndarray
        Interpolation knots (``isotonic`` only).

    Examples
    --------
    >>> from beyondauc import ScoreCalibrator
    >>> cal = ScoreCalibrator("stump").fit([0.1, 0.2, 0.3, 0.7, 0.8, 0.9], [0, 0, 0, 1, 1, 1])
    >>> cal.threshold_
    0.5
    >>> cal.predict([0.45, 0.55]).tolist()
    [0, 1]
    >>> iso = ScoreCalibrator("isotonic", reference="opitz2024").fit([0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1])
    >>> iso.predict([0.1, 0.7, 0.9]).tolist()  # outside [0.2, 0.8]: negative
    [0, 1, 0]
    """

    def __init__(
        self, method: str = "logistic", *, class_weight: str | None = None, reference: str | None = None
    ) -> None:
        self.method = method
        self.class_weight = class_weight
        self.reference = reference

    def fit(self, y_score: ArrayLike, y_true: ArrayLike, *, pos_label: object = None) -> ScoreCalibrator:
        """Fit on raw scores and binary labels; returns self."""
        check_option(self.method, "method", METHODS)
        check_option(self.class_weight, "class_weight", (None, "balanced"))
        check_option(self.reference, "reference", REFERENCES)
        s = check_scores(y_score, "y_score")
        y = binarize_labels(y_true, "y_true", pos_label=pos_label)
        if len(s) != len(y):
            raise ValueError(f"`y_score` and `y_true` must have the same length, got {len(s)} and {len(y)}")
        if len(s) == 0:
            raise ValueError("`y_score` is empty: nothing to calibrate on")
        x, _, pos, neg = grid_counts(y, s)
        counts = (pos + neg)[None]  # what the logistic's StandardScaler sees: every row once
        pos, neg = class_weighted(pos[None], neg[None], self.class_weight)
        self.single_class_ = int(single_class(pos, neg)[0])
        if self.single_class_ >= 0:
            warnings.warn(
                f"calibration data has a single class; the calibrator always predicts {self.single_class_}",
                UndefinedMetricWarning,
                stacklevel=2,
            )
        if self.method == "logistic":
            if self.reference == "opitz2024":
                b0, b1 = lbfgs_params([(s, y)], self.class_weight)
            else:
                b0, b1 = logistic_params(x, pos, neg, counts=counts)
            self.intercept_, self.coef_ = float(b0[0]), float(b1[0])
            self.threshold_ = (
                -self.intercept_ / self.coef_ if self.coef_ != 0 else (-np.inf if self.intercept_ > 0 else np.inf)
            )
        elif self.method == "isotonic":
            self.knots_x_, self.knots_y_ = isotonic_knots(x, pos[0], neg[0])
            self._range = (float(x[0]), float(x[-1]))
            above = self.knots_y_ > 0.5
            if above.all():
                self.threshold_ = -np.inf
            elif not above.any():
                self.threshold_ = np.inf
            else:
                i = int(np.argmax(above))
                x0, x1, y0, y1 = self.knots_x_[i - 1], self.knots_x_[i], self.knots_y_[i - 1], self.knots_y_[i]
                self.threshold_ = float(x0 + (0.5 - y0) / (y1 - y0) * (x1 - x0))
        else:
            x32, p32, n32, _ = stump_grid(x, pos, neg, reference=self.reference)
            thr, lc, rc = stump_params(x32, p32, n32, reference=self.reference)
            self._stump = (thr, lc, rc)
            t = float(thr[0])
            if np.isnan(t) or lc[0] == rc[0]:  # no split, or both leaves predict the same class
                self.threshold_ = -np.inf if lc[0] else np.inf
            else:
                self.threshold_ = t
            left = x32 <= t if not np.isnan(t) else np.ones(len(x32), bool)
            lp, ln = p32[0][left].sum(), n32[0][left].sum()
            rp, rn = p32[0][~left].sum(), n32[0][~left].sum()
            self._leaf_proba = (lp / (lp + ln) if lp + ln else 0.0, rp / (rp + rn) if rp + rn else 0.0)
        return self

    def _check_fitted(self):
        if not hasattr(self, "threshold_"):
            raise ValueError("this ScoreCalibrator is not fitted yet; call fit(y_score, y_true) first")

    def predict_proba(self, y_score: ArrayLike) -> np.ndarray:
        """Calibrated probability of the positive class for raw scores."""
        self._check_fitted()
        s = check_scores(y_score, "y_score")
        if self.single_class_ >= 0:
            return np.full(len(s), float(self.single_class_))
        if self.method == "logistic":
            return expit(s * self.coef_ + self.intercept_)
        if self.method == "isotonic":
            p = isotonic_transform(s, self.knots_x_, self.knots_y_)
            if self.reference == "opitz2024":
                p[(s < self._range[0]) | (s > self._range[1])] = np.nan
            return p
        left = stump_decision(self._tree_scores(s), self._stump[0], np.ones(1, bool), np.zeros(1, bool))[0]
        return np.where(left, self._leaf_proba[0], self._leaf_proba[1])

    def predict(self, y_score: ArrayLike) -> np.ndarray:
        """Decisions (0/1) for raw scores."""
        self._check_fitted()
        s = check_scores(y_score, "y_score")
        if self.single_class_ >= 0:
            return np.full(len(s), self.single_class_, dtype=np.int8)
        if self.method == "logistic":
            pred = logistic_decision(s, np.array([self.intercept_]), np.array([self.coef_]))[0]
        elif self.method == "isotonic":
            pred = isotonic_transform(s, self.knots_x_, self.knots_y_) > 0.5
            if self.reference == "opitz2024":
                pred &= (s >= self._range[0]) & (s <= self._range[1])
        else:
            pred = stump_decision(self._tree_scores(s), *self._stump)[0]
        return pred.astype(np.int8)

    def _tree_scores(self, s):
        """Scores as the stump compares them: as given; rounded to float32 under opitz2024."""
        return _as_float32(s) if self.reference == "opitz2024" else s

    def __repr__(self) -> str:
        cw = "" if self.class_weight is None else f", class_weight={self.class_weight!r}"
        fitted = f", threshold_={self.threshold_:.6g}" if hasattr(self, "threshold_") else ""
        return f"ScoreCalibrator(method={self.method!r}{cw}{fitted})"

    def _repr_html_(self) -> str:
        rows: list[tuple[str, object]] = [("method", self.method), ("class_weight", self.class_weight or "none")]
        if not hasattr(self, "threshold_"):
            return result_html("ScoreCalibrator", rows, note="not fitted: call fit(y_score, y_true)")
        rows.append(("threshold_", self.threshold_))
        if self.method == "logistic":
            rows += [("coef_", self.coef_), ("intercept_", self.intercept_)]
        elif self.method == "isotonic":
            rows.append(("knots", len(self.knots_x_)))
        note = None
        if self.single_class_ >= 0:
            note = f"calibration data had a single class: always predicts {self.single_class_}"
        return result_html("ScoreCalibrator", rows, note=note)


def lbfgs_params(samples, class_weight):
    """(intercept, coef) of scikit-learn's ``LogisticRegression()`` fitted on each (scores, labels) pair.

    The ``reference="opitz2024"`` logistic: one scikit-learn fit per
    calibration, on the raw rows in their order, so the parameters are
    bit for bit those of the code behind the paper's tables (lbfgs stops
    early; its ConvergenceWarning is expected there and silenced).  A
    single-class pair gets (0, 0); its decisions are overridden.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    b0, b1 = np.zeros(len(samples)), np.zeros(len(samples))
    # one thread: on a single feature, OpenMP/BLAS threads only cost (15x on a loaded machine);
    # the per-example loss terms are summed by numpy, so the numbers do not depend on it
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for k, (s, y) in enumerate(samples):
            if len(y) == 0 or y.min() == y.max():
                continue
            est = LogisticRegression(class_weight=class_weight).fit(s[:, None], y)
            b0[k], b1[k] = est.intercept_[0], est.coef_[0, 0]
    return b0, b1


def _as_float32(s):
    """Scores as a tree sees them: rounded to float32 (+-inf beyond its range), compared in float64."""
    with np.errstate(over="ignore"):
        return s.astype(np.float32).astype(np.float64)
