"""Robustness of one cohort's AUC (Roberts et al.): how much shift (bias) or noise the positives' scores
can take before the AUC drops, as a curve over the shift or noise level and its normalised area."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import result_html
from ...utils.validation import (
    check_int,
    check_option,
    check_random_state,
    warn_undefined,
)
from ..core.kernel import (
    auc_rows,
    auc_sorted,
    sorted_by_class,
)
from .cohort_checks import check_cohort, check_sigma_max
from .noise_exact import noise_pair_means
from .rows import sigma_units

__all__ = ["NOISE_METHODS", "BiasRobustness", "NoiseRobustness", "bias_robustness", "noise_robustness"]

_NOISE_BLOCK = 4_000_000  # noisy scores held at once (rows x examples), bounds memory


# -- results -------------------------------------------------------------------


def _robustness_args(frame: pd.DataFrame) -> tuple[float, float, float, np.ndarray, np.ndarray]:
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
    method = str(check_option(noise_method, "noise_method", NOISE_METHODS))
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
