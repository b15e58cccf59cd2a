"""Test-set AUROC diagnostics (Roberts et al., "The curious case of the test set AUROC").

A good test AUROC says the scores *rank* well; it says nothing about where
they lie.  These scores look at the class-conditional score distributions of a
validation cohort V and a test cohort T:

* :func:`bias_robustness` / :func:`noise_robustness` -- how much shift or
  noise the positives can take before the AUC drops (one cohort);
* :func:`sens_spec_drift` -- how far sensitivity and specificity move between
  V and T at the same threshold, integrated over all thresholds;
* :func:`wasserstein_matrix` -- transport distances between the four
  class-conditional distributions V-, V+, T-, T+.

All four accept any label type (with ``pos_label``) and any score scale:
logits, log-likelihoods, margins, negative values.  Convention: predict
positive when score >= threshold.  :func:`cohort_diagnostics` and
:func:`diagnostics_table` run them on a :class:`~beyondauc.Benchmark`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import frame_html, result_html
from ...utils.validation import (
    binarize_labels,
    check_int,
    check_number,
    check_option,
    check_random_state,
    check_scores,
    warn_undefined,
)
from ..core.kernel import (
    auc_rows,
    auc_sorted,
    exact_wasserstein,
    merged_values,
    rates,
    sorted_by_class,
)
from ..core.logistic import unit_scale
from .noise_exact import noise_pair_means

# the batched twins live beside: re-exported here, where their callers and tests have read them
from .rows import bias_rows, drift_rows, sigma_units, wasserstein_rows  # noqa: F401

__all__ = [
    "NOISE_METHODS",
    "BiasRobustness",
    "NoiseRobustness",
    "SensSpecDrift",
    "WassersteinMatrix",
    "bias_robustness",
    "noise_robustness",
    "sens_spec_drift",
    "wasserstein_matrix",
]


_NOISE_BLOCK = 4_000_000  # noisy scores held at once (rows x examples), bounds memory


# -- results -------------------------------------------------------------------


def _robustness_args(frame):
    """(score, auc, sigma_max, sigmas, auc_curve) of a robustness curve's rows."""
    return (
        float(frame["score"].iloc[0]),
        float(frame["auc_unperturbed"].iloc[0]),
        float(frame["sigma_max"].iloc[0]),
        frame["sigma"].to_numpy(),
        frame["auc"].to_numpy(),
    )


@dataclass(frozen=True)
class BiasRobustness:
    """Robustness of the AUC to shifting the positives down.

    Attributes
    ----------
    score : float
        ``(1 / (A * sigma_max)) * integral_0^sigma_max A(s - sigma * [y = 1]) dsigma``,
        exact.  1 means the AUC never drops inside the range.
    auc : float
        The AUC A of the unshifted scores.
    sigma_max : float
        Upper end of the integral.
    sigmas : ndarray
        The sigma grid of the plotting curve.
    auc_curve : ndarray
        A(s_sigma) at each grid sigma (for plots; the score is exact).
    """

    score: float
    auc: float
    sigma_max: float
    sigmas: np.ndarray = field(repr=False)
    auc_curve: np.ndarray = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """The curve as an evaluation's ``robustness`` rows: sigma, auc, auc_std, score, auc_unperturbed, sigma_max."""
        std = getattr(self, "auc_std", np.zeros(len(self.sigmas)))
        return pd.DataFrame(
            {
                "sigma": self.sigmas,
                "auc": self.auc_curve,
                "auc_std": std,
                "score": self.score,
                "auc_unperturbed": self.auc,
                "sigma_max": self.sigma_max,
            }
        )

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> BiasRobustness:
        """Back from :meth:`to_frame`'s rows.

        Examples
        --------
        >>> from beyondauc import bias_robustness
        >>> from beyondauc.metrics import BiasRobustness
        >>> r = bias_robustness([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], n_points=5)
        >>> back = BiasRobustness.from_frame(r.to_frame())
        >>> back.score == r.score, back.auc_curve.tolist() == r.auc_curve.tolist()
        (True, True)
        """
        return cls(*_robustness_args(frame))

    @property
    def relative_curve(self) -> np.ndarray:
        """``auc_curve / auc``: the curve the score averages."""
        return self.auc_curve / self.auc

    def _repr_html_(self):
        return result_html(
            "BiasRobustness",
            [
                ("score", self.score),
                ("auc", self.auc),
                ("sigma_max", self.sigma_max),
                ("curve points", len(self.sigmas)),
            ],
        )


@dataclass(frozen=True)
class NoiseRobustness:
    """Robustness of the AUC to Gaussian noise on every score.

    Attributes
    ----------
    score : float
        ``(1 / (A * sigma_max)) * integral_0^sigma_max E[A(s + sigma * eps)] dsigma``.
        ``method="exact"``: the exact integral, from the closed form per pair;
        ``"monte_carlo"``: the trapezoid rule on the sigma grid, the
        expectation by seeded Monte Carlo.
    auc : float
        The AUC A of the scores without noise.
    sigma_max : float
    sigmas : ndarray
        The sigma grid.
    auc_curve : ndarray
        E[A] at each grid sigma: exact, or the mean over the repeats.
    auc_std : ndarray
        Standard deviation of the AUC over the Monte Carlo repeats at each
        grid sigma; NaN for the exact method, which draws no noise.
    n_repeats, random_state : int
        The Monte Carlo draws per sigma and their seed (unused by the exact method).
    method : {"exact", "monte_carlo"}
    error_bound : float
        Largest possible error of ``score``: 0 when the pair means were
        direct sums (up to rounding) or Monte Carlo (whose error is
        statistical), else the FFT's worst case
        (:mod:`~beyondauc.metrics.diagnostics.noise_exact`); NaN when rebuilt from
        stored rows.
    """

    score: float
    auc: float
    sigma_max: float
    sigmas: np.ndarray = field(repr=False)
    auc_curve: np.ndarray = field(repr=False)
    auc_std: np.ndarray = field(repr=False)
    n_repeats: int = 20
    random_state: int | None = 0
    method: str = "exact"
    error_bound: float = 0.0

    def to_frame(self) -> pd.DataFrame:
        """The curve as an evaluation's ``robustness`` rows: sigma, auc, auc_std, score, auc_unperturbed, sigma_max."""
        std = getattr(self, "auc_std", np.zeros(len(self.sigmas)))
        return pd.DataFrame(
            {
                "sigma": self.sigmas,
                "auc": self.auc_curve,
                "auc_std": std,
                "score": self.score,
                "auc_unperturbed": self.auc,
                "sigma_max": self.sigma_max,
            }
        )

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, *, n_repeats: int = 20, random_state: int | None = 0, method: str = "exact"
    ) -> NoiseRobustness:
        """Back from :meth:`to_frame`'s rows (``n_repeats``, ``random_state`` and ``method`` are the
        evaluation's parameters; ``error_bound`` is not in the rows: NaN).

        Examples
        --------
        >>> from beyondauc import noise_robustness
        >>> from beyondauc.metrics import NoiseRobustness
        >>> r = noise_robustness([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], n_points=5)
        >>> back = NoiseRobustness.from_frame(r.to_frame())
        >>> back.score == r.score, back.auc_curve.tolist() == r.auc_curve.tolist(), back.method
        (True, True, 'exact')
        """
        return cls(*_robustness_args(frame), frame["auc_std"].to_numpy(), int(n_repeats), random_state, method, np.nan)

    @property
    def relative_curve(self) -> np.ndarray:
        """``auc_curve / auc``: the curve the score integrates."""
        return self.auc_curve / self.auc

    def _repr_html_(self):
        draws = [("n_repeats", self.n_repeats), ("random_state", self.random_state)]
        return result_html(
            "NoiseRobustness",
            [
                ("score", self.score),
                ("auc", self.auc),
                ("sigma_max", self.sigma_max),
                ("curve points", len(self.sigmas)),
                ("method", self.method),
                *(draws if self.method == "monte_carlo" else [("error bound", self.error_bound)]),
            ],
        )


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


# -- validation ------------------------------------------------------------------


def check_cohort(
    y_true: ArrayLike, y_score: ArrayLike, *, pos_label: object = None, names: tuple[str, str] = ("y_true", "y_score")
) -> tuple[np.ndarray, np.ndarray]:
    """Validate one cohort's labels and scores; return ``(y, s)``, labels 0/1 (int8) and scores (float64).

    The labels are binarized (with ``pos_label``); the scores must be finite,
    as many as the labels, at least one, and their range (max - min) finite.
    ``names`` are the parameter names the error messages give.

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.cohorts import check_cohort
    >>> y, s = check_cohort(["a", "b", "b"], [0.2, 0.9, 0.4], pos_label="b")
    >>> y.tolist(), s.tolist()
    ([0, 1, 1], [0.2, 0.9, 0.4])
    """
    y_name, s_name = names
    s = check_scores(y_score, s_name)
    y = binarize_labels(y_true, y_name, pos_label=pos_label)
    if len(y) != len(s):
        raise ValueError(f"`{y_name}` and `{s_name}` must have the same length, got {len(y)} and {len(s)}")
    if len(s) == 0:
        raise ValueError(f"`{s_name}` is empty: the cohort has no examples")
    check_range(s, s_name)
    return y, s


def check_range(s, name):
    """Differences of scores must be finite: max - min must not overflow float64."""
    lo, hi = float(s.min()), float(s.max())
    with np.errstate(over="ignore"):
        spread = hi - lo
    if not np.isfinite(spread):
        raise ValueError(
            f"`{name}` spans more than float64 can subtract (max - min = inf, from {lo!r} to {hi!r}); rescale the scores"
        )


def check_sigma_max(sigma_max):
    if sigma_max is None:
        return None
    return check_number(sigma_max, "sigma_max", low=0, low_open=True, hint=" (or None for the score range)")


def _robustness_setup(y_true, y_score, sigma_max, pos_label, what):
    y, s = check_cohort(y_true, y_score, pos_label=pos_label)
    sigma_max = check_sigma_max(sigma_max)
    pos, neg = sorted_by_class(y, s)
    if len(pos) == 0 or len(neg) == 0:
        warn_undefined(f"{what} is undefined with a single class in `y_true`; returning NaN")
        return pos, neg, np.nan, np.nan
    if sigma_max is None:
        sigma_max = float(s.max() - s.min())
        if sigma_max == 0:
            warn_undefined(f"{what} is undefined for constant scores (sigma_max = score range = 0); returning NaN")
            return pos, neg, auc_sorted(pos, neg), np.nan
    auc = auc_sorted(pos, neg)
    if auc == 0:
        warn_undefined(f"{what} is undefined when the AUC is 0 (it is relative to the AUC); returning NaN")
        return pos, neg, auc, np.nan
    return pos, neg, auc, sigma_max


# -- one cohort --------------------------------------------------------------------


def bias_robustness(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    sigma_max: float | None = None,
    n_points: int = 21,
    pos_label: object = None,
) -> BiasRobustness:
    """Robustness of the AUC to a downward shift of the positive scores.

    ``R_bias = (1 / (A * sigma_max)) * integral_0^sigma_max A(s_sigma) dsigma``
    with ``s_sigma = s - sigma * [y = 1]``.  With D the pairwise differences
    s+ - s-, the integral equals ``E[clip(D, 0, sigma_max)]`` (a tied pair
    counts one half at sigma = 0 only, a set of measure zero), which sorted
    cumulative sums give exactly in O(n log n).  The sigma grid curve is for
    plotting only.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels ({0, 1}, {-1, 1}, booleans, or any two values with
        ``pos_label``).
    y_score : array-like of shape (n,)
        Scores of any scale; higher means more positive.
    sigma_max : float > 0, default=None
        Upper end of the integral; default the score range max - min.
    n_points : int >= 2, default=21
        Points of the sigma grid for the plotting curve.
    pos_label : scalar, default=None

    Returns
    -------
    BiasRobustness
        ``.score`` is NaN with an :class:`~beyondauc.UndefinedMetricWarning`
        for a single class, constant scores or an AUC of 0.

    Examples
    --------
    >>> from beyondauc import bias_robustness
    >>> r = bias_robustness([0, 0, 1, 1], [0.0, 1.0, 2.0, 3.0])
    >>> r.auc, r.sigma_max, round(r.score, 4)
    (1.0, 3.0, 0.6667)
    """
    n_points = check_int(n_points, "n_points", minimum=2)
    pos, neg, auc, sigma_max = _robustness_setup(y_true, y_score, sigma_max, pos_label, "bias robustness")
    if np.isnan(sigma_max):
        return BiasRobustness(np.nan, auc, sigma_max, np.array([]), np.array([]))
    # In units of sigma_max (scores measured from the lowest negative):
    # E[clip(D, 0, 1)]: negatives below s+ - 1 count 1, negatives in (s+ - 1, s+) count s+ - s-.
    x, q = sigma_units(sigma_max, float(neg[0]), pos, neg)
    csum = np.concatenate([[0.0], np.cumsum(q)])
    hi = np.searchsorted(q, x, side="left")
    lo = np.searchsorted(q, x - 1.0, side="right")
    total = lo.sum() + np.dot(hi - lo, x) - (csum[hi] - csum[lo]).sum()
    mean_clip = total / (len(pos) * len(neg))
    shifts = np.linspace(0.0, 1.0, n_points)
    curve = np.empty(n_points)
    curve[0] = auc
    for k in range(1, n_points):  # one searchsorted per plotted sigma, not per example
        curve[k] = auc_sorted(x, q, x - shifts[k])
    return BiasRobustness(float(mean_clip / auc), float(auc), sigma_max, np.linspace(0.0, sigma_max, n_points), curve)


NOISE_METHODS = ("exact", "monte_carlo")


def noise_robustness(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    sigma_max: float | None = None,
    n_points: int = 21,
    n_repeats: int = 20,
    random_state: int | None = 0,
    noise_method: str = "exact",
    pos_label: object = None,
) -> NoiseRobustness:
    """Robustness of the AUC to Gaussian noise added to every score.

    ``R_noise = (1 / (A * sigma_max)) * integral_0^sigma_max E[A(s + sigma * eps)] dsigma``
    with eps standard normal, independent per example.

    ``noise_method="exact"`` (default) draws no noise: a pair of a positive
    and a negative whose scores differ by D keeps its order with probability
    ``Phi(D / (sigma * sqrt(2)))`` (one half for a tie), so E[A] is the mean
    of that over the pairs, and the sigma-integral has a closed form per pair
    (:mod:`~beyondauc.metrics.diagnostics.noise_exact`).  The mean over pairs is a direct
    sum when the classes have at most
    :data:`~beyondauc.metrics.diagnostics.noise_exact.DIRECT_PAIRS` pairs of distinct
    values (exact to rounding), else one FFT cross-correlation of the two
    classes' score histograms on a fine grid, whose worst-case error the
    result's ``error_bound`` gives (at most ``0.125 * h / A``, h the grid step
    over sigma_max: below 2e-6 / A when sigma_max is the score range; far
    less when the scores have a density).  The curve at the ``n_points``
    sigmas is E[A] from the same pairs.

    ``noise_method="monte_carlo"`` is the estimate of the testAUC package:
    the trapezoid rule on the sigma grid, the expectation averaging
    ``n_repeats`` seeded draws per sigma.  The draws are standard normal
    (float32, then scaled by sigma in float64) and go to the examples in a
    canonical order -- positives then negatives, each by score -- so the
    same seed gives the same number whatever the input order.

    Either way an affine map ``k * s + c`` (k > 0, default ``sigma_max``)
    gives the same number.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_score : array-like of shape (n,)
    sigma_max : float > 0, default=None
        Largest noise scale; default the score range max - min.
    n_points : int >= 2, default=21
    n_repeats : int >= 1, default=20
        Monte Carlo draws per sigma (``noise_method="monte_carlo"`` only).
    random_state : int or None, default=0
        Seed of the draws (``noise_method="monte_carlo"`` only).
    noise_method : {"exact", "monte_carlo"}, default="exact"
    pos_label : scalar, default=None

    Returns
    -------
    NoiseRobustness

    Examples
    --------
    >>> from beyondauc import noise_robustness
    >>> r = noise_robustness([0, 0, 1, 1], [0.0, 1.0, 2.0, 3.0])
    >>> r.auc, round(r.score, 6), r.error_bound
    (1.0, 0.832748, 0.0)
    >>> m = noise_robustness([0, 0, 1, 1], [0.0, 1.0, 2.0, 3.0], noise_method="monte_carlo", n_repeats=2000)
    >>> abs(m.score - r.score) < 0.01
    True
    """
    n_points = check_int(n_points, "n_points", minimum=2)
    n_repeats = check_int(n_repeats, "n_repeats", minimum=1)
    seed = check_random_state(random_state)
    method = check_option(noise_method, "noise_method", NOISE_METHODS)
    pos, neg, auc, sigma_max = _robustness_setup(y_true, y_score, sigma_max, pos_label, "noise robustness")
    if np.isnan(sigma_max):
        return NoiseRobustness(
            np.nan, auc, sigma_max, np.array([]), np.array([]), np.array([]), n_repeats, seed, method
        )
    # in units of sigma_max from the lowest score (exact at any scale, see _sigma_units)
    pos, neg = sigma_units(sigma_max, float(min(pos[0], neg[0])), pos, neg)
    sigmas, shifts = np.linspace(0.0, sigma_max, n_points), np.linspace(0.0, 1.0, n_points)
    if method == "exact":
        integral, curve, _, bound = noise_pair_means(pos, neg, shifts[1:])
        return NoiseRobustness(
            float(integral / auc),
            float(auc),
            sigma_max,
            sigmas,
            np.r_[auc, curve],
            np.full(n_points, np.nan),
            n_repeats,
            seed,
            method,
            float(bound / auc),
        )
    mean, std = _noise_monte_carlo(pos, neg, auc, shifts, n_repeats, seed)
    score = np.trapezoid(mean, shifts) / auc
    return NoiseRobustness(float(score), float(auc), sigma_max, sigmas, mean, std, n_repeats, seed, method)


def _noise_monte_carlo(pos, neg, auc, shifts, n_repeats, seed):
    """(mean, std) of the AUC over ``n_repeats`` seeded draws at each shift (units of sigma_max).

    Noise is drawn for the examples in a canonical order (positives, then
    negatives, each by score), so reordering the input changes nothing.
    """
    rng = np.random.default_rng(seed)
    n_points = len(shifts)
    mean = np.empty(n_points)
    std = np.zeros(n_points)
    mean[0] = auc
    n, n_pos = len(pos) + len(neg), len(pos)
    rows = max(1, min(n_repeats, _NOISE_BLOCK // n))
    # the draws and the noisy scores of a block, written in place: the same buffers for every sigma
    eps, noisy = np.empty((rows, n), dtype=np.float32), np.empty((rows, n))
    for k in range(1, n_points):  # loop over the sigma grid and repeat blocks, never over examples
        aucs = []
        for start in range(0, n_repeats, rows):
            r = min(rows, n_repeats - start)
            e, z = rng.standard_normal(dtype=np.float32, out=eps[:r]), noisy[:r]
            np.multiply(e, shifts[k], out=z)
            z[:, :n_pos] += pos
            z[:, n_pos:] += neg
            aucs.append(auc_rows(z[:, :n_pos], z[:, n_pos:], in_place=True))
        aucs = np.concatenate(aucs)
        mean[k], std[k] = aucs.mean(), aucs.std()
    return mean, std


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
