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

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._bootstrap import bootstrap_counts, check_bootstrap, dataset_seed, grid_weights, strata_of
from ._html import frame_html, result_html
from ._kernel import (
    _auc_from_counts,
    _auc_rows,
    _auc_sorted,
    _exact_wasserstein,
    _merged_values,
    _rates,
    _sorted_by_class,
)
from ._replicates import bias_rows, drift_rows, intervals_of, replicate_chunks, wasserstein_rows
from ._validation import (
    UndefinedMetricWarning,
    binarize_labels,
    check_int,
    check_number,
    check_option,
    check_random_state,
    check_scores,
    warn_undefined,
)
from .calibration import PROTOCOLS, _protocol_rows

__all__ = [
    "BiasRobustness",
    "CohortDiagnostics",
    "NoiseRobustness",
    "SensSpecDrift",
    "WassersteinMatrix",
    "bias_robustness",
    "cohort_diagnostics",
    "cohorts",
    "diagnostics_intervals",
    "diagnostics_table",
    "noise_robustness",
    "sens_spec_drift",
    "wasserstein_matrix",
]

_NOISE_BLOCK = 4_000_000  # noisy scores held at once (rows x examples), bounds memory


# -- results -------------------------------------------------------------------

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

    @property
    def relative_curve(self):
        """``auc_curve / auc``: the curve the score averages."""
        return self.auc_curve / self.auc

    def _repr_html_(self):
        return result_html("BiasRobustness", [("score", self.score), ("auc", self.auc),
                                              ("sigma_max", self.sigma_max), ("curve points", len(self.sigmas))])


@dataclass(frozen=True)
class NoiseRobustness:
    """Robustness of the AUC to Gaussian noise on every score.

    Attributes
    ----------
    score : float
        ``(1 / (A * sigma_max)) * integral_0^sigma_max E[A(s + sigma * eps)] dsigma``,
        trapezoid rule on the sigma grid, the expectation by seeded Monte Carlo.
    auc : float
        The AUC A of the scores without noise.
    sigma_max : float
    sigmas : ndarray
        The sigma grid.
    auc_curve : ndarray
        Mean AUC over the repeats at each grid sigma.
    auc_std : ndarray
        Standard deviation of the AUC over the repeats at each grid sigma.
    n_repeats, random_state : int
    """

    score: float
    auc: float
    sigma_max: float
    sigmas: np.ndarray = field(repr=False)
    auc_curve: np.ndarray = field(repr=False)
    auc_std: np.ndarray = field(repr=False)
    n_repeats: int = 20
    random_state: int | None = 0

    @property
    def relative_curve(self):
        """``auc_curve / auc``: the curve the score integrates."""
        return self.auc_curve / self.auc

    def _repr_html_(self):
        return result_html("NoiseRobustness", [
            ("score", self.score), ("auc", self.auc), ("sigma_max", self.sigma_max),
            ("curve points", len(self.sigmas)), ("n_repeats", self.n_repeats), ("random_state", self.random_state),
        ])


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

    @property
    def sensitivity_drift(self):
        """``sensitivity_test - sensitivity_val`` per threshold."""
        return self.sensitivity_test - self.sensitivity_val

    @property
    def specificity_drift(self):
        """``specificity_test - specificity_val`` per threshold."""
        return self.specificity_test - self.specificity_val

    @property
    def distance(self):
        """Euclidean distance ``||S_V(tau) - S_T(tau)||`` per threshold."""
        return np.hypot(self.sensitivity_drift, self.specificity_drift)

    def _repr_html_(self):
        d = self.distance
        return result_html("SensSpecDrift", [
            ("score", self.score), ("thresholds", len(self.thresholds)),
            ("largest distance", float(d.max()) if len(d) else np.nan),
        ])


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
    def val_separation(self):
        """V- to V+ (between classes in the validation cohort)."""
        return float(self.matrix[0, 0])

    @property
    def test_separation(self):
        """T+ to T- (between classes in the test cohort)."""
        return float(self.matrix[1, 1])

    @property
    def negative_shift(self):
        """V- to T- (negatives across cohorts)."""
        return float(self.matrix[0, 1])

    @property
    def positive_shift(self):
        """T+ to V+ (positives across cohorts)."""
        return float(self.matrix[1, 0])

    def to_frame(self):
        """The matrix as a labelled DataFrame."""
        return pd.DataFrame(self.matrix, index=list(self.row_labels), columns=list(self.col_labels))

    def _repr_html_(self):
        return result_html(f"{self.p:g}-WassersteinMatrix", [("score", self.score), ("p", self.p)],
                           parts=[frame_html(self.to_frame())], note=self.note or None)


# -- validation ------------------------------------------------------------------

def _cohort(y_true, y_score, pos_label, y_name, s_name):
    """Validate one cohort; return (y 0/1 int8, s float64)."""
    s = check_scores(y_score, s_name)
    y = binarize_labels(y_true, y_name, pos_label=pos_label)
    if len(y) != len(s):
        raise ValueError(f"`{y_name}` and `{s_name}` must have the same length, got {len(y)} and {len(s)}")
    if len(s) == 0:
        raise ValueError(f"`{s_name}` is empty: the cohort has no examples")
    _check_range(s, s_name)
    return y, s


def _check_range(s, name):
    """Differences of scores must be finite: max - min must not overflow float64."""
    lo, hi = float(s.min()), float(s.max())
    with np.errstate(over="ignore"):
        spread = hi - lo
    if not np.isfinite(spread):
        raise ValueError(
            f"`{name}` spans more than float64 can subtract (max - min = inf, from {lo!r} to {hi!r}); rescale the scores"
        )


def _check_sigma_max(sigma_max):
    if sigma_max is None:
        return None
    return check_number(sigma_max, "sigma_max", low=0, low_open=True, hint=" (or None for the score range)")


def _robustness_setup(y_true, y_score, sigma_max, pos_label, what):
    y, s = _cohort(y_true, y_score, pos_label, "y_true", "y_score")
    sigma_max = _check_sigma_max(sigma_max)
    pos, neg = _sorted_by_class(y, s)
    if len(pos) == 0 or len(neg) == 0:
        warn_undefined(f"{what} is undefined with a single class in `y_true`; returning NaN")
        return pos, neg, np.nan, np.nan
    if sigma_max is None:
        sigma_max = float(s.max() - s.min())
        if sigma_max == 0:
            warn_undefined(f"{what} is undefined for constant scores (sigma_max = score range = 0); returning NaN")
            return pos, neg, _auc_sorted(pos, neg), np.nan
    auc = _auc_sorted(pos, neg)
    if auc == 0:
        warn_undefined(f"{what} is undefined when the AUC is 0 (it is relative to the AUC); returning NaN")
        return pos, neg, auc, np.nan
    return pos, neg, auc, sigma_max


# -- one cohort --------------------------------------------------------------------

def bias_robustness(y_true, y_score, *, sigma_max=None, n_points=21, pos_label=None):
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
    # E[clip(D, 0, sigma_max)]: negatives below s+ - sigma_max count sigma_max,
    # negatives in (s+ - sigma_max, s+) count s+ - s-.  Centre for precision.
    centre = neg[0]
    q = neg - centre
    x = pos - centre
    csum = np.concatenate([[0.0], np.cumsum(q)])
    hi = np.searchsorted(q, x, side="left")
    lo = np.searchsorted(q, x - sigma_max, side="right")
    total = sigma_max * lo.sum() + np.dot(hi - lo, x) - (csum[hi] - csum[lo]).sum()
    mean_clip = total / (len(pos) * len(neg))
    sigmas = np.linspace(0.0, sigma_max, n_points)
    curve = np.empty(n_points)
    curve[0] = auc
    for k in range(1, n_points):  # one searchsorted per plotted sigma, not per example
        curve[k] = _auc_sorted(pos, neg, pos - sigmas[k])
    return BiasRobustness(float(mean_clip / (auc * sigma_max)), float(auc), sigma_max, sigmas, curve)


def noise_robustness(
    y_true, y_score, *, sigma_max=None, n_points=21, n_repeats=20, random_state=0, pos_label=None
):
    """Robustness of the AUC to Gaussian noise added to every score.

    ``R_noise = (1 / (A * sigma_max)) * integral_0^sigma_max E[A(s + sigma * eps)] dsigma``
    with eps standard normal.  The integral uses the trapezoid rule on
    ``n_points`` equally spaced sigmas; the expectation averages
    ``n_repeats`` seeded draws per sigma.  The draws are standard normal
    (float32, then scaled by sigma in float64) and go to the examples in a
    canonical order -- positives then negatives, each by score -- so the
    same seed gives the same number whatever the input order, and an affine
    map ``k * s + c`` (k > 0, default ``sigma_max``) gives the same number
    too.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_score : array-like of shape (n,)
    sigma_max : float > 0, default=None
        Largest noise scale; default the score range max - min.
    n_points : int >= 2, default=21
    n_repeats : int >= 1, default=20
    random_state : int or None, default=0
    pos_label : scalar, default=None

    Returns
    -------
    NoiseRobustness

    Examples
    --------
    >>> from beyondauc import noise_robustness
    >>> r = noise_robustness([0, 0, 1, 1], [0.0, 1.0, 2.0, 3.0], random_state=0)
    >>> r.auc, 0 < r.score < 1
    (1.0, True)
    """
    n_points = check_int(n_points, "n_points", minimum=2)
    n_repeats = check_int(n_repeats, "n_repeats", minimum=1)
    seed = check_random_state(random_state)
    pos, neg, auc, sigma_max = _robustness_setup(y_true, y_score, sigma_max, pos_label, "noise robustness")
    if np.isnan(sigma_max):
        return NoiseRobustness(np.nan, auc, sigma_max, np.array([]), np.array([]), np.array([]), n_repeats, seed)
    # Noise is drawn for the examples in a canonical order (positives, then
    # negatives, each by score), so reordering the input changes nothing.
    rng = np.random.default_rng(seed)
    sigmas = np.linspace(0.0, sigma_max, n_points)
    mean = np.empty(n_points)
    std = np.zeros(n_points)
    mean[0] = auc
    n, n_pos = len(pos) + len(neg), len(pos)
    rows = max(1, min(n_repeats, _NOISE_BLOCK // n))
    for k in range(1, n_points):  # loop over the sigma grid and repeat blocks, never over examples
        aucs = []
        for start in range(0, n_repeats, rows):
            eps = rng.standard_normal((min(rows, n_repeats - start), n), dtype=np.float32)
            aucs.append(_auc_rows(pos + sigmas[k] * eps[:, :n_pos], neg + sigmas[k] * eps[:, n_pos:]))
        aucs = np.concatenate(aucs)
        mean[k], std[k] = aucs.mean(), aucs.std()
    score = np.trapezoid(mean, sigmas) / (auc * sigma_max)
    return NoiseRobustness(float(score), float(auc), sigma_max, sigmas, mean, std, n_repeats, seed)


# -- two cohorts -------------------------------------------------------------------

def _two_cohorts(y_val, s_val, y_test, s_test, pos_label):
    yv, sv = _cohort(y_val, s_val, pos_label, "y_val", "s_val")
    yt, st = _cohort(y_test, s_test, pos_label, "y_test", "s_test")
    _check_range(np.array([sv.min(), sv.max(), st.min(), st.max()]), "s_val` and `s_test")
    return yv, sv, yt, st


def sens_spec_drift(y_val, s_val, y_test, s_test, *, pos_label=None):
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
    yv, sv, yt, st = _two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    vpos, vneg = _sorted_by_class(yv, sv)
    tpos, tneg = _sorted_by_class(yt, st)
    values = _merged_values(vpos, vneg, tpos, tneg)
    sens_v, spec_v = _rates(values, vpos, vneg)
    sens_t, spec_t = _rates(values, tpos, tneg)
    if min(len(vpos), len(vneg), len(tpos), len(tneg)) == 0:
        warn_undefined("sensitivity/specificity drift is undefined when a cohort has a single class; returning NaN")
        score = np.nan
    elif len(values) < 2:
        warn_undefined("sensitivity/specificity drift is undefined when every score is the same (empty range); returning NaN")
        score = np.nan
    else:
        gap = (sens_v - sens_t) ** 2 + (spec_v - spec_t) ** 2
        score = float(np.dot(np.diff(values), gap[1:]) / (values[-1] - values[0]))
    return SensSpecDrift(score, values, sens_v, spec_v, sens_t, spec_t)


def _check_p(p):
    p = check_number(p, "p", low=1, hint=" (1 or 2 as in the paper)")
    return int(p) if p in (1, 2) else p


def wasserstein_matrix(y_val, s_val, y_test, s_test, *, p=2, pos_label=None):
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
    p = _check_p(p)
    yv, sv, yt, st = _two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    vpos, vneg = _sorted_by_class(yv, sv)
    tpos, tneg = _sorted_by_class(yt, st)
    if min(len(vpos), len(vneg), len(tpos), len(tneg)) == 0:
        warn_undefined("the Wasserstein matrix is undefined when a cohort has a single class; returning NaN")
        return WassersteinMatrix(np.nan, np.full((2, 2), np.nan), p, "a cohort has a single class")
    matrix = np.array(
        [
            [_exact_wasserstein(vneg, vpos, p), _exact_wasserstein(vneg, tneg, p)],
            [_exact_wasserstein(tpos, vpos, p), _exact_wasserstein(tpos, tneg, p)],
        ]
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


# -- benchmark level ------------------------------------------------------------------

@dataclass(frozen=True)
class CohortDiagnostics:
    """All four diagnostics of one model on one dataset of a benchmark.

    Attributes
    ----------
    model, dataset : str
    cohorts : str
        How V and T were formed: ``"split"`` (the benchmark's split column)
        or a calibration protocol name.
    y_val, s_val, y_test, s_test : ndarray
        The cohorts (labels 0/1).
    auc_val, auc_test : float
    bias_val, bias_test : BiasRobustness
    noise_val, noise_test : NoiseRobustness
    drift : SensSpecDrift
    wasserstein : WassersteinMatrix
        At the order ``p`` asked for (default 2, as the paper's text says).
    wasserstein_p1, wasserstein_p2 : WassersteinMatrix
        At p = 1 and p = 2, always both: the paper's text says 2-Wasserstein
        but its Figure 4 was computed with p = 1 (scipy's
        ``wasserstein_distance``).  Filled from the cohorts when not given.
    intervals : dict
        ``name -> (low, high)`` bootstrap percentile intervals of ``auc_val``,
        ``auc_test``, ``bias_robustness_val``, ``bias_robustness_test``,
        ``drift`` and ``wasserstein`` (empty without ``n_bootstrap``);
        :meth:`to_dict` adds them as ``<name>_low`` / ``<name>_high``.
    replicates : DataFrame or None
        The bootstrap replicates of those numbers, one row each.
    """

    model: str
    dataset: str
    cohorts: str
    y_val: np.ndarray = field(repr=False)
    s_val: np.ndarray = field(repr=False)
    y_test: np.ndarray = field(repr=False)
    s_test: np.ndarray = field(repr=False)
    auc_val: float = np.nan
    auc_test: float = np.nan
    bias_val: BiasRobustness = field(default=None, repr=False)
    bias_test: BiasRobustness = field(default=None, repr=False)
    noise_val: NoiseRobustness = field(default=None, repr=False)
    noise_test: NoiseRobustness = field(default=None, repr=False)
    drift: SensSpecDrift = field(default=None, repr=False)
    wasserstein: WassersteinMatrix = field(default=None, repr=False)
    wasserstein_p1: WassersteinMatrix = field(default=None, repr=False)
    wasserstein_p2: WassersteinMatrix = field(default=None, repr=False)

    def __post_init__(self):
        for order, name in ((1, "wasserstein_p1"), (2, "wasserstein_p2")):
            if getattr(self, name) is not None:
                continue
            if self.wasserstein is not None and self.wasserstein.p == order:
                value = self.wasserstein
            else:  # the chosen order already warned about a missing class, if any
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UndefinedMetricWarning)
                    value = wasserstein_matrix(self.y_val, self.s_val, self.y_test, self.s_test, p=order)
            object.__setattr__(self, name, value)
    intervals: dict = field(default_factory=dict, repr=False)
    replicates: pd.DataFrame | None = field(default=None, repr=False)

    def to_dict(self):
        """The headline numbers by name.

        ``wasserstein`` is W at the order asked for (``wasserstein_p``);
        ``wasserstein_p1`` and ``wasserstein_p2`` are W at p = 1 (the
        paper's Figure 4) and p = 2 (the paper's text).
        """
        return {
            "model": self.model,
            "dataset": self.dataset,
            "cohorts": self.cohorts,
            "n_val": len(self.y_val),
            "n_test": len(self.y_test),
            "auc_val": self.auc_val,
            "auc_test": self.auc_test,
            "bias_robustness_val": self.bias_val.score,
            "bias_robustness_test": self.bias_test.score,
            "noise_robustness_val": self.noise_val.score,
            "noise_robustness_test": self.noise_test.score,
            "drift": self.drift.score,
            "wasserstein": self.wasserstein.score,
            "wasserstein_p": self.wasserstein.p,
            "wasserstein_p1": self.wasserstein_p1.score,
            "wasserstein_p2": self.wasserstein_p2.score,
            **{f"{name}_{end}": v for name, lh in self.intervals.items() for end, v in zip(("low", "high"), lh)},
        }

    def to_frame(self):
        """Validation and test cohort side by side: n, AUC, bias and noise robustness."""
        return pd.DataFrame(
            {
                "n": [len(self.y_val), len(self.y_test)],
                "auc": [self.auc_val, self.auc_test],
                "bias robustness": [self.bias_val.score, self.bias_test.score],
                "noise robustness": [self.noise_val.score, self.noise_test.score],
            },
            index=["validation", "test"],
        )

    def _repr_html_(self):
        return result_html(
            f"CohortDiagnostics: {self.model} on {self.dataset}", [
                ("drift", self.drift.score), ("wasserstein", self.wasserstein.score),
            ],
            subtitle=f"(cohorts: {self.cohorts})",
            parts=[frame_html(self.to_frame())],
            note=self.wasserstein.note or None,
        )


def _check_protocol(bench, protocol):
    if protocol is None:
        return "split" if bench.has_split else "xdomain"
    if protocol == "split":
        if not bench.has_split:
            raise ValueError("`protocol`='split' needs a benchmark with a 'split' column; this one has none")
        return protocol
    return check_option(protocol, "protocol", PROTOCOLS + ("split",))


def cohorts(bench, model, dataset, *, protocol=None, val_split="val", test_split="test", random_state=0):
    """The validation and test cohorts (V, T) of one model on one dataset.

    * ``protocol=None`` uses the benchmark's ``split`` column when it has
      one (V = rows whose split is ``val_split``, T = ``test_split``), else
      ``"xdomain"``; ``"split"`` asks for the split column explicitly.
    * a calibration protocol makes V its calibration data for ``dataset``
      and T its evaluation data: ``xdomain`` / ``outdomain`` / ``indomain``
      V = the other (out-of-domain / same-domain) datasets pooled, T =
      ``dataset``; ``indata`` V = a random 80% of ``dataset`` (the first
      split of :func:`~beyondauc.expected_accuracy`, same seed), T = the
      other 20%; ``outdata`` V = ``dataset``, T = all other datasets.

    Returns
    -------
    y_val, s_val, y_test, s_test : ndarray
        Labels 0/1 (int8) and scores.

    Examples
    --------
    >>> from beyondauc import load_demo, cohorts
    >>> yv, sv, yt, st = cohorts(load_demo(), "logreg", "wine")
    >>> len(yv) + len(yt)
    107
    """
    kind = _check_protocol(bench, protocol)
    sl = bench._slice(dataset)
    s_all = bench.scores(model)
    y_all = bench.labels()
    if kind == "split":
        split = bench.frame["split"].to_numpy()[sl].astype(str)
        y, s = y_all[sl], s_all[sl]
        for name, value in (("val_split", val_split), ("test_split", test_split)):
            if not (split == str(value)).any():
                raise ValueError(
                    f"`{name}`={value!r} names no rows of dataset {dataset!r}; its split values are {sorted(set(split.tolist()))}"
                )
        v, t = split == str(val_split), split == str(test_split)
        return y[v], s[v], y[t], s[t]
    v, t = _protocol_rows(bench, dataset, kind, check_random_state(random_state))
    return y_all[v], s_all[v], y_all[t], s_all[t]


def cohort_diagnostics(
    bench,
    model,
    dataset,
    *,
    protocol=None,
    val_split="val",
    test_split="test",
    sigma_max=None,
    n_points=21,
    n_repeats=20,
    p=2,
    random_state=0,
    n_bootstrap=0,
    confidence_level=0.95,
):
    """Bias and noise robustness of both cohorts, drift and the Wasserstein matrix.

    The cohorts come from :func:`cohorts`.  Both cohorts' robustness uses the
    same ``sigma_max`` -- by default the score range of V and T together -- so
    their numbers and curves are comparable.

    Parameters
    ----------
    bench : Benchmark
    model, dataset : str
    protocol : {None, "split", "xdomain", "outdomain", "indomain", "indata", "outdata"}
    val_split, test_split : str
        Split values of V and T when the split column is used.
    sigma_max : float > 0, default=None
    n_points, n_repeats : int
        Sigma grid size and Monte Carlo repeats of the robustness curves.
    p : float >= 1, default=2
        Wasserstein order of ``.wasserstein``; the matrices at p = 1 and
        p = 2 are computed either way (``.wasserstein_p1``, ``.wasserstein_p2``).
    random_state : int or None, default=0
        Seeds the noise and the indata split; the bootstrap draws from its
        child stream for ``dataset``'s place among the benchmark's datasets
        (every model reads the same replicates of a dataset; two datasets draw
        independent ones).
    n_bootstrap : int >= 0, default=0
        With B > 0, percentile intervals of the AUCs, bias robustness, drift
        and W from B replicates of a bootstrap stratified by cohort and class
        (see :func:`diagnostics_intervals`); noise robustness, itself a Monte
        Carlo number, gets none.
    confidence_level : float in (0, 1), default=0.95

    Returns
    -------
    CohortDiagnostics

    Examples
    --------
    >>> from beyondauc import load_demo, cohort_diagnostics
    >>> d = cohort_diagnostics(load_demo(), "logreg", "wine", n_repeats=2)
    >>> d.cohorts, sorted(d.to_dict())[:3]
    ('split', ['auc_test', 'auc_val', 'bias_robustness_test'])
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    kind = _check_protocol(bench, protocol)
    yv, sv, yt, st = cohorts(bench, model, dataset, protocol=kind, val_split=val_split, test_split=test_split,
                             random_state=random_state)
    if sigma_max is None:
        both = np.concatenate([sv, st])
        if len(both):  # the default sigma_max is this range: say so in the data's terms, not the parameter's
            lo, hi = float(both.min()), float(both.max())
            with np.errstate(over="ignore"):
                if not np.isfinite(hi - lo):
                    raise ValueError(f"model {model!r} on dataset {dataset!r}: the scores of the two cohorts range "
                                     f"from {lo!r} to {hi!r}, a range wider than floating point can hold; rescale "
                                     "the scores")
        rng = float(both.max() - both.min()) if len(both) else 0.0
        sigma_max = rng if rng > 0 else None
    common = dict(sigma_max=sigma_max, n_points=n_points)
    noise = dict(common, n_repeats=n_repeats, random_state=random_state)
    bv, bt = bias_robustness(yv, sv, **common), bias_robustness(yt, st, **common)
    w = wasserstein_matrix(yv, sv, yt, st, p=p)
    intervals, reps = {}, None
    if n_bootstrap:
        p_ = _check_p(p)
        reps = _diagnostics_replicates(yv, sv, yt, st, sigma_max=sigma_max, p=p_, n_bootstrap=n_bootstrap,
                                       random_state=dataset_seed(check_random_state(random_state),
                                                                 list(bench.datasets).index(dataset)))
        intervals = intervals_of(reps, confidence_level)
    return CohortDiagnostics(
        model=model,
        dataset=dataset,
        cohorts=kind,
        y_val=yv,
        s_val=sv,
        y_test=yt,
        s_test=st,
        auc_val=bv.auc,
        auc_test=bt.auc,
        bias_val=bv,
        bias_test=bt,
        noise_val=noise_robustness(yv, sv, **noise),
        noise_test=noise_robustness(yt, st, **noise),
        drift=sens_spec_drift(yv, sv, yt, st),
        wasserstein=w,
        intervals=intervals,
        replicates=reps,
    )


# -- bootstrap intervals ------------------------------------------------------------------

DIAGNOSTIC_INTERVALS = ("auc_val", "auc_test", "bias_robustness_val", "bias_robustness_test", "drift", "wasserstein")


def _diagnostics_replicates(yv, sv, yt, st, *, sigma_max, p, n_bootstrap, random_state):
    """Replicates (DataFrame) of the AUCs, bias robustness, drift and W; stratified by cohort and class.

    One score grid for V and T together; each replicate is its per-value
    counts of V-, V+, T-, T+ (:func:`~beyondauc._bootstrap.grid_weights`), and
    every number is a vectorised kernel over those rows.  ``sigma_max`` stays
    at the point estimate's value in every replicate (None: bias robustness
    is NaN).
    """
    y = np.concatenate([yv, yt]).astype(np.int64)
    s = np.concatenate([sv, st])
    cohort = np.concatenate([np.zeros(len(yv), np.int64), np.ones(len(yt), np.int64)])
    x, inv = np.unique(s, return_inverse=True)
    inv = inv.ravel()
    strata = strata_of(cohort, y)
    m = len(x)
    parts = []
    for lo, hi in replicate_chunks(n_bootstrap, max(len(y), m)):
        counts = bootstrap_counts(strata, n_bootstrap, random_state=random_state, start=lo, stop=hi)
        pos, neg = grid_weights(counts, inv, y, m, groups=cohort, n_groups=2)
        rows = {}
        for k, name in enumerate(("val", "test")):
            if sigma_max is None:
                rows[f"auc_{name}"] = _auc_from_counts(pos[:, k], neg[:, k])
                rows[f"bias_robustness_{name}"] = np.full(len(counts), np.nan)
            else:
                score, auc = bias_rows(x, pos[:, k], neg[:, k], sigma_max)
                rows[f"auc_{name}"], rows[f"bias_robustness_{name}"] = auc, score
        rows["drift"] = drift_rows(x, pos, neg)
        rows["wasserstein"] = wasserstein_rows(x, pos, neg, p)[0]
        parts.append(pd.DataFrame({k: rows[k] for k in DIAGNOSTIC_INTERVALS}))
    return pd.concat(parts, ignore_index=True)


def diagnostics_intervals(y_val, s_val, y_test, s_test, *, n_bootstrap=1000, confidence_level=0.95, sigma_max=None,
                          p=2, random_state=0, pos_label=None):
    """Bootstrap percentile intervals of the AUCs, bias robustness, drift and W of two cohorts.

    The bootstrap is stratified by cohort and class: each replicate resamples
    V-, V+, T- and T+ to their own sizes.  A replicate is a reweighting of the
    per-value counts on one score grid of V and T, so the exact kernels run
    for all replicates at once (weighted sensitivity/specificity step
    functions for the drift, sorted cumulative sums for bias robustness,
    weighted CDFs (p = 1) or quantile functions for W).  Bias robustness
    keeps ``sigma_max`` at the point estimate's value (default: the score
    range of V and T together, as :func:`cohort_diagnostics` uses) in every
    replicate, so the replicates measure the same integral.

    Parameters
    ----------
    y_val, s_val, y_test, s_test : array-like
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    sigma_max : float > 0, default=None
    p : float >= 1, default=2
        Wasserstein order.
    random_state : int or None, default=0
    pos_label : scalar, default=None

    Returns
    -------
    pandas.DataFrame
        Indexed by ``metric`` (auc_val, auc_test, bias_robustness_val,
        bias_robustness_test, drift, wasserstein) with columns ``estimate``,
        ``low`` and ``high``.  An undefined metric (e.g. a cohort with a
        single class) is NaN with a warning.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import diagnostics_intervals
    >>> rng = np.random.default_rng(0)
    >>> yv, yt = rng.integers(0, 2, 150), rng.integers(0, 2, 150)
    >>> sv, st = rng.normal(yv, 1.0), rng.normal(yt, 1.0) + 0.5
    >>> ci = diagnostics_intervals(yv, sv, yt, st, n_bootstrap=200)
    >>> bool((ci["low"] <= ci["estimate"]).all() and (ci["estimate"] <= ci["high"]).all())
    True
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    p = _check_p(p)
    seed = check_random_state(random_state)
    sigma_max = _check_sigma_max(sigma_max)
    yv, sv, yt, st = _two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    if sigma_max is None:
        both = np.concatenate([sv, st])
        _check_range(both, "s_val` with `s_test")
        rng = float(both.max() - both.min())
        sigma_max = rng if rng > 0 else None
    bv, bt = bias_robustness(yv, sv, sigma_max=sigma_max), bias_robustness(yt, st, sigma_max=sigma_max)
    estimate = {"auc_val": bv.auc, "auc_test": bt.auc, "bias_robustness_val": bv.score,
                "bias_robustness_test": bt.score, "drift": sens_spec_drift(yv, sv, yt, st).score,
                "wasserstein": wasserstein_matrix(yv, sv, yt, st, p=p).score}
    reps = _diagnostics_replicates(yv, sv, yt, st, sigma_max=sigma_max, p=p, n_bootstrap=n_bootstrap,
                                   random_state=seed)
    ints = intervals_of(reps, confidence_level)
    names = list(DIAGNOSTIC_INTERVALS)
    return pd.DataFrame(
        {"estimate": [estimate[k] for k in names], "low": [ints[k][0] for k in names],
         "high": [ints[k][1] for k in names]},
        index=pd.Index(names, name="metric"),
    )


def diagnostics_table(bench, *, models=None, datasets=None, protocol=None, **options):
    """Headline diagnostics of every model on every dataset, tidy.

    One row per (model, dataset) with the keys of
    :meth:`CohortDiagnostics.to_dict`; ``options`` go to
    :func:`cohort_diagnostics` (``n_bootstrap=B`` adds ``<name>_low`` /
    ``<name>_high`` columns).

    Examples
    --------
    >>> from beyondauc import load_demo, diagnostics_table
    >>> t = diagnostics_table(load_demo(), models=["logreg"], datasets=["wine"], n_repeats=2)
    >>> t[["model", "dataset", "cohorts"]].values.tolist()
    [['logreg', 'wine', 'split']]
    """
    models = bench.models if models is None else list(models)
    datasets = bench.datasets if datasets is None else list(datasets)
    return diagnostics_frame(
        cohort_diagnostics(bench, m, d, protocol=protocol, **options) for m in models for d in datasets
    )


def diagnostics_frame(results):
    """Tidy table of already computed :class:`CohortDiagnostics`, one row each.

    What :func:`diagnostics_table` returns, for results that are also drawn
    (e.g. with :class:`~beyondauc.plots.DiagnosticsDashboard`), so nothing is
    computed twice.

    Examples
    --------
    >>> from beyondauc import load_demo, cohort_diagnostics, diagnostics_frame
    >>> bench = load_demo()
    >>> results = [cohort_diagnostics(bench, "svm", d, n_repeats=2) for d in ("wine", "diabetes")]
    >>> diagnostics_frame(results)["dataset"].tolist()
    ['wine', 'diabetes']
    """
    rows = []
    for r in results:
        if not isinstance(r, CohortDiagnostics):
            raise TypeError(f"`results` must hold CohortDiagnostics, got {type(r).__name__}")
        rows.append(r.to_dict())
    return pd.DataFrame(rows)
