"""Noise robustness without Monte Carlo: the exact pair means behind :func:`~beyondauc.noise_robustness`.

With independent noise ``N(0, sigma^2)`` on every score, a pair of a
positive and a negative whose scores differ by ``D = s+ - s-`` keeps its
order with probability ``Phi(D / (sigma * sqrt(2)))`` (one half for a tie), so
the expected AUC under noise is the mean of that over the ``n+ * n-`` pairs.
Its integral over ``sigma`` in ``[0, sigma_max]`` has a closed form per pair:
with ``a = D / sqrt(2) > 0``::

    g(a) = sigma_max * Phi(a / sigma_max) + a * E1(a^2 / (2 sigma_max^2)) / (2 sqrt(2 pi))

``g(0) = sigma_max / 2`` and ``g(-a) = sigma_max - g(a)``; E1 is the
exponential integral.  Everything here works in units of ``sigma_max``
(differences divided by it), where the integral is :func:`noise_integral`.

The mean over pairs is a function of the distribution of ``D`` alone, the
cross-correlation of the two classes' score distributions:

* **direct sum** when the two classes have at most :data:`DIRECT_PAIRS` pairs
  of distinct values: every pair of distinct values, weighted by how many
  examples share them -- exact up to floating-point rounding (about 1e-15);
* otherwise **one FFT cross-correlation** of the classes' histograms on a
  common grid of ``G`` points with spacing ``h`` (in units of
  ``sigma_max``), each score split between its two grid neighbours in
  proportion to its distance (linear binning, which keeps each class's mean).
  Each pair's difference is then replaced by a random difference with the
  same mean, off by at most ``2h`` and with variance at most ``h^2 / 2``,
  so its error is at most ``h^2 / 4`` times the largest second derivative
  nearby.  For the curve at noise ``sigma`` (``|Phi''| <= phi(1)``) that
  gives ``|error| <= phi(1) / 8 * (h / sigma)^2 = 0.0303 (h / sigma)^2``.
  The integral's second derivative is ``phi(D / sqrt(2)) / (sqrt(2) |D|)``,
  unbounded at a tie: a pair at ``|D| >= 4h`` is off by at most
  ``h^2 / (4 sqrt(pi) |D|)``, and any pair by at most :data:`NEAR_TIE_ERROR`
  ``* h`` (exact ties are exact: their spread is symmetric, and the integral
  minus one half is odd).  So the score ``R_noise`` is off by at most
  ``NEAR_TIE_ERROR * h / A`` in the worst case (every pair a near tie), and
  by ``h^2 / (4 sqrt(pi)) * mean(1 / |D|) / A`` -- orders of magnitude less --
  when the differences have a density.  :func:`fft_error_bound` gives the
  worst-case bounds of a given grid.
"""

from __future__ import annotations

import numpy as np
from scipy import fft, special

__all__ = [
    "DIRECT_PAIRS",
    "GRID_POINTS",
    "NEAR_TIE_ERROR",
    "fft_error_bound",
    "grid_size",
    "noise_integral",
    "noise_pair_means",
]

#: Pairs of distinct values up to which the pair means are a direct sum (above: the FFT).
DIRECT_PAIRS = 1 << 16  # measured: the two take the same time there (benchmarks/bench_noise.py)
#: Grid points of the FFT path per ``sigma_max`` of score range (at least this many in all).
GRID_POINTS = 1 << 16
#: Most the FFT changes one pair's integral (units of ``sigma_max``) per grid step ``h``; measured, with margin.
NEAR_TIE_ERROR = 0.125
_MAX_GRID = 1 << 22  # the grid never grows past this, however wide the range is in units of sigma_max
_CHUNK = 1 << 18  # value pairs evaluated at once by the direct sum: bounds its memory
_SQRT2 = np.sqrt(2.0)
_PHI1 = np.exp(-0.5) / np.sqrt(2.0 * np.pi)  # the largest |Phi''|


def noise_integral(d: np.ndarray) -> np.ndarray:
    """``integral_0^1 Phi(d / (sigma * sqrt(2))) dsigma`` of each difference ``d`` (in units of ``sigma_max``).

    The closed form ``g(d / sqrt(2)) / sigma_max`` of the module docstring:
    one half at ``d = 0``, and ``f(-d) = 1 - f(d)``.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.noise_exact import noise_integral
    >>> f = noise_integral(np.array([-1.0, 0.0, 1.0, 50.0]))
    >>> float(f[1]), float(f[0] + f[2]), round(float(f[3]), 12)
    (0.5, 1.0, 1.0)
    """
    d = np.asarray(d, dtype=np.float64)
    a = np.abs(d) / _SQRT2
    x = 0.5 * a * a
    with np.errstate(divide="ignore", invalid="ignore"):
        # E1(x) = -gamma - ln x + O(x): where a^2 / 2 underflows (a < 1e-154), its series
        e1 = np.where(x > 0, special.exp1(x), -np.euler_gamma - 2.0 * np.log(a) + np.log(2.0))
        v = special.ndtr(a) + a * e1 / (2.0 * np.sqrt(2.0 * np.pi))
    v = np.where(a > 0, v, 0.5)
    return np.where(d < 0, 1.0 - v, v)


def noise_pair_means(pos: np.ndarray, neg: np.ndarray, shifts: np.ndarray) -> tuple[float, np.ndarray, float, float]:
    """Mean over all pairs of :func:`noise_integral` and of ``Phi(D / (sigma * sqrt(2)))`` at each sigma in ``shifts``.

    Parameters
    ----------
    pos, neg : ndarray
        The two classes' scores in units of ``sigma_max``, ascending, each non-empty.
    shifts : ndarray
        Noise scales sigma > 0, in units of ``sigma_max``.

    Returns
    -------
    integral : float
        ``mean_pairs integral_0^1 Phi(D / (sigma * sqrt(2))) dsigma``.
    curve : ndarray
        The expected AUC under noise of each sigma.
    h : float
        The FFT's grid step (units of ``sigma_max``), 0 when the direct sum was used.
    bound : float
        Worst-case error of ``integral`` (0 for the direct sum; see :func:`fft_error_bound`).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.noise_exact import noise_pair_means
    >>> integral, curve, h, bound = noise_pair_means(np.array([1.0]), np.array([0.0]), np.array([1e-9, 1e9]))
    >>> round(integral, 6), curve.round(6).tolist(), h
    (0.907543, [1.0, 0.5], 0.0)
    """
    vp, cp = _runs(pos)
    vn, cn = _runs(neg)
    total = float(len(pos)) * float(len(neg))
    if len(vp) * len(vn) <= DIRECT_PAIRS:
        integral, curve = _direct_sums(vp, cp, vn, cn, shifts)
        return integral / total, curve / total, 0.0, 0.0
    lags, w, h = _difference_histogram(vp, cp, vn, cn)
    integral, curve = _lag_sums(lags, w, shifts)
    return integral / total, curve / total, h, fft_error_bound(h, shifts)[0]


def _runs(v):
    """Distinct values of an ascending array and how many times each occurs."""
    starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])
    return v[starts], np.diff(np.r_[starts, len(v)]).astype(np.float64)


def fft_error_bound(h: float, shifts: np.ndarray) -> tuple[float, np.ndarray]:
    """Worst-case errors of the FFT path's pair means on a grid of step ``h`` (units of ``sigma_max``).

    ``(integral bound, curve bounds)``: ``NEAR_TIE_ERROR * h`` and
    ``phi(1) / 8 * (h / sigma)^2`` per sigma of ``shifts``; divide by the AUC
    for the bound on ``R_noise``.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.noise_exact import fft_error_bound
    >>> b, c = fft_error_bound(1e-5, np.array([0.05, 1.0]))
    >>> b, bool(c[0] < 2e-6)
    (1.25e-06, True)
    """
    shifts = np.asarray(shifts, dtype=np.float64)
    return NEAR_TIE_ERROR * h, _PHI1 / 8.0 * (h / shifts) ** 2


def _direct_sums(vp, cp, vn, cn, shifts):
    """Sum over every pair of distinct values of count x count x (integral, curve); chunked over positives."""
    rows = max(1, _CHUNK // len(vn))
    integral, curve = 0.0, np.zeros(len(shifts))
    scale = 1.0 / (shifts * _SQRT2)
    for start in range(0, len(vp), rows):  # loop over chunks of values, not over examples
        d = vp[start : start + rows, None] - vn[None, :]
        c = cp[start : start + rows]
        integral += _weighted(c, noise_integral(d), cn)
        for k, sc in enumerate(scale):  # the few plotted sigmas
            curve[k] += _weighted(c, special.ndtr(d * sc), cn)
    return integral, curve


def _weighted(a, m, b):
    """``a @ m @ b`` by einsum: a matrix-vector product through BLAS wakes its threads, which costs
    more CPU than the product itself at these sizes."""
    return float(np.einsum("i,ij,j->", a, m, b, optimize=False))


def grid_size(span: float) -> int:
    """Grid points for scores spanning ``span`` (units of ``sigma_max``): ``GRID_POINTS`` per unit, a fast FFT length.

    At most 2**22 points, so the step, and the error bound, grow when
    ``sigma_max`` is much smaller than the score range.

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.noise_exact import grid_size
    >>> grid_size(1.0), grid_size(0.5)
    (65536, 65536)
    """
    g = int(min(_MAX_GRID, max(GRID_POINTS, np.ceil(GRID_POINTS * span))))
    return fft.next_fast_len(g, real=True)


def _difference_histogram(vp, cp, vn, cn):
    """(lags >= 0 in units of sigma_max, weights, h): the distribution of s+ - s- on a grid, folded at 0.

    Both classes are linearly binned on one grid of step ``h`` over their
    joint range; one FFT cross-correlation gives the weight at each lag
    ``k * h``.  Returned folded -- ``w[0]`` the weight at 0, then for
    ``k > 0`` the pairs ``(w_+k, w_-k)`` as two rows -- because the summands
    are ``F(D)`` with ``F(-D) = 1 - F(D)``.
    """
    lo, hi = min(vp[0], vn[0]), max(vp[-1], vn[-1])
    n_grid = grid_size(hi - lo)
    h = (hi - lo) / (n_grid - 1)
    hp, hn = _linear_bins(vp, cp, lo, h, n_grid), _linear_bins(vn, cn, lo, h, n_grid)
    size = fft.next_fast_len(2 * n_grid - 1, real=True)
    c = fft.irfft(fft.rfft(hp, size) * np.conj(fft.rfft(hn, size)), size)  # c[k] = sum_i hp[i + k] hn[i]
    up, down = c[1:n_grid], c[size - 1 : size - n_grid : -1]  # lags +1..+(G-1) and -1..-(G-1)
    w = np.stack([up, down])
    np.maximum(w, 0.0, out=w)  # FFT round-off around empty lags
    return np.arange(1, n_grid) * h, (max(c[0], 0.0), w), h


def _linear_bins(v, c, lo, h, n_grid):
    """Counts ``c`` at values ``v`` split between the two nearest of ``n_grid`` points ``lo + k * h``."""
    t = (v - lo) / h
    i = np.minimum(np.floor(t).astype(np.int64), n_grid - 2)
    frac = t - i
    out = np.bincount(i, weights=c * (1.0 - frac), minlength=n_grid)
    out += np.bincount(i + 1, weights=c * frac, minlength=n_grid)
    return out


def _lag_sums(lags, w, shifts):
    """(sum w F(lag), per-sigma sums of w Phi(lag / (sigma sqrt 2))) of a folded lag histogram."""
    w0, (up, down) = w
    diff, base = up - down, float(down.sum()) + 0.5 * w0  # F(-x) = 1 - F(x): down pairs count 1 - F
    integral = base + float(np.einsum("i,i->", diff, noise_integral(lags)))  # not BLAS: see _weighted
    curve = np.empty(len(shifts))
    rows = max(1, _CHUNK * 8 // len(lags))
    for start in range(0, len(shifts), rows):  # a few sigmas at once: one (sigmas, lags) block in memory
        z = np.multiply.outer(1.0 / (shifts[start : start + rows] * _SQRT2), lags)
        curve[start : start + rows] = base + np.einsum("ij,j->i", special.ndtr(z, out=z), diff)
    return integral, curve
