"""The smooth ECE of every bootstrap replicate at once: one bandwidth search for all of them.

The smooth ECE (:func:`~beyondauc.metrics.selective.given_confidence.smooth_ece`,
computed by the authors' ``relplot``) smooths the residuals ``confidence -
correct`` with a Gaussian kernel reflected at 0 and 1, of bandwidth
``sigma``, and reads the mean absolute smoothed residual at the bandwidth
where it equals ``sigma``.  ``relplot.smECE`` finds that bandwidth by a
bisection: ``sigma = 1`` if the smooth ECE there exceeds it, else ten halving
steps on (0, 1), each keeping the half where the predicate
``sigma < 0.001 or sigma < smooth ECE at sigma`` changes.  Each replicate
of a bootstrap has its own data, hence its own bandwidth.

Here the bisection runs for all replicates together: a loop over the ten
steps, each step evaluating every replicate at its own midpoint.  The
evaluation is relplot's, with the replicate's counts as weights (a row
counted ``w`` times is ``w`` rows to relplot):

1. the residuals and the counts are binned linearly on relplot's grid of
   ``E = max(2000, round(20 / sigma)) // 2 + 1`` points (``E = 1001`` for
   every ``sigma >= 0.01``); the binned grid is a sum of counts, so the
   replicates' grids are one product of the counts with each answer's two
   grid weights;
2. each grid, reflected at both ends, is convolved with the sampled Gaussian
   of the replicate's own ``sigma`` -- by FFT, the grids' transforms
   computed once per grid size and reused at every step, the kernels'
   once per distinct bandwidth of a step;
3. the smoothed residual and density are interpolated on relplot's
   ``max(round(10 / sigma), 200)`` evaluation points (the points of each
   replicate's own count, padded and masked), and the smooth ECE is the
   density-weighted mean absolute smoothed residual.

The only difference from relplot is the FFT in place of its direct
convolution: rounding, about 1e-13 here.  The bisection then takes the same
path (unless a replicate's smooth ECE lies within rounding of a midpoint)
and the values agree with ``relplot.smECE`` of the repeated rows to 1e-6
and closer.  Cost per chunk of replicates: the binning, O(R n) per grid
size, plus per step O(R E log E); no loop over replicates.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["SMOOTH_EPS", "smooth_ece_at", "smooth_ece_replicates"]

#: relplot's bisection: bandwidths below this count as a fixed point; ten halving steps.
SMOOTH_EPS, _STEPS = 0.001, 10
_DENSITY_EPS = 1e-4  # relplot's BaseKernelMixin.smooth adds this to the smoothed density


def _grid_size(sigma):
    """relplot's grid of the kernel smoothing for each bandwidth: ``max(2000, round(20 / sigma)) // 2 + 1``."""
    return np.maximum(2000, np.rint(20.0 / sigma)).astype(np.int64) // 2 + 1


_COMMON = int(_grid_size(np.ones(1))[0])  # the grid of every bandwidth >= 0.01 (1001 points)


def _eval_points(sigma):
    """relplot's evaluation points of the smooth ECE for each bandwidth: ``max(round(10 / sigma), 200)``."""
    return np.maximum(np.rint(10.0 / sigma), 200).astype(np.int64)


def _linspace(m, size):
    """``np.linspace(0, 1, m)`` for each ``m`` of a vector, padded to ``size`` columns (the padding past 1)."""
    j = np.arange(size, dtype=np.float64)
    t = j[None, :] * (1.0 / (np.asarray(m, dtype=np.float64)[:, None] - 1.0))
    t[j[None, :] == (np.asarray(m)[:, None] - 1)] = 1.0  # linspace sets its last point to the stop exactly
    return t


def _binned(W, confidence, residual, E):
    """relplot's linear binning of the residuals and of the counts on ``E`` grid points: (R, E) each."""
    x = confidence * (E - 1)
    bins = x.astype(np.int64).clip(0, E - 2)
    frac = x - bins
    order = np.argsort(bins, kind="stable")
    starts = np.flatnonzero(np.r_[True, bins[order][1:] != bins[order][:-1]])
    at = bins[order][starts]
    Ws = W[:, order]
    out = []
    for y in (residual, np.ones_like(residual)):  # the residuals, then the density (two arrays)
        grid = np.zeros((len(W), E))
        grid[:, at] = np.add.reduceat(Ws * ((1.0 - frac) * y)[order], starts, axis=1)
        grid[:, at + 1] += np.add.reduceat(Ws * (frac * y)[order], starts, axis=1)
        out.append(grid)
    return out


class _Grids:
    """The FFTs of one grid size's reflected residual and density grids, for every replicate (computed once).

    The convolution is circular, of a length ``N`` just past ``2.5 E``: the
    reflected grid (``3E - 2`` points) folded onto it, the ``E`` outputs
    relplot keeps are those of the linear convolution (nothing wraps onto them).
    """

    def __init__(self, W, confidence, residual, E):
        from scipy.fft import next_fast_len  # scipy.fft, not scipy.stats: cheap to import in a report kernel

        self.E, self.lo = E, E - 1 + E // 2  # np.convolve's "valid" part starts at E - 1, relplot's slice E // 2 on
        full = 4 * E - 3  # the linear convolution's length
        self.nfft = next_fast_len(max(full - self.lo, self.lo + E), real=True)
        self.spectra = []
        for g in _binned(W, confidence, residual, E):  # the residuals, then the density (two grids)
            ext = np.concatenate([g[:, ::-1][:, :-1], g, g[:, ::-1][:, 1:]], axis=1)
            folded = ext[:, : self.nfft].copy()
            folded[:, : ext.shape[1] - self.nfft] += ext[:, self.nfft :]
            self.spectra.append(np.fft.rfft(folded, self.nfft, axis=1))

    def smoothed(self, rows, sigma):
        """relplot's reflected convolution of the grids of ``rows`` with the Gaussian of each row's ``sigma``."""
        t = _linspace(np.full(1, self.E), self.E)[0]
        values, which = np.unique(sigma, return_inverse=True)  # the replicates share few bandwidths per step
        kernel = np.exp(-((t[None, :] - 0.5) ** 2) / (2 * values[:, None] ** 2)) / (
            np.sqrt(2 * np.pi) * values[:, None]
        )
        spectrum = np.fft.rfft(kernel, self.nfft, axis=1)[which.ravel()]
        return [
            np.fft.irfft(s[rows] * spectrum, self.nfft, axis=1)[:, self.lo : self.lo + self.E] for s in self.spectra
        ]


def _interpolate(grid, t):
    """relplot's ``interpolate``: the grid's piecewise-linear function at the points ``t``, row by row."""
    E = grid.shape[1]
    inds = (t * (E - 1)).astype(np.int64).clip(0, E - 2)
    residual = (t - inds * (1.0 / (E - 1))) / (1.0 / (E - 1))
    rows = np.arange(len(grid))[:, None]
    return grid[rows, inds] * (1 - residual) + grid[rows, inds + 1] * residual


def _evaluate(grids, rows, sigma):
    """The smooth ECE of ``rows`` (replicates of one grid size) at their bandwidths ``sigma``."""
    smoothed, density = grids.smoothed(rows, sigma)
    m = _eval_points(sigma)
    t = _linspace(m, int(m.max()))
    inside = np.arange(t.shape[1])[None, :] < m[:, None]
    t = np.where(inside, t, 0.0)
    ys = _interpolate(smoothed, t)
    dens = _interpolate(density, t) + _DENSITY_EPS
    return np.where(inside, np.abs(ys / dens) * dens, 0.0).sum(axis=1) / np.where(inside, dens, 0.0).sum(axis=1)


def smooth_ece_at(
    W: np.ndarray,
    confidence: np.ndarray,
    residual: np.ndarray,
    sigma: np.ndarray,
    *,
    rows: np.ndarray | None = None,
    cache: dict[int, object] | None = None,
) -> np.ndarray:
    """The smooth ECE of replicates ``rows`` (rows of counts ``W``, all by default) each at its own ``sigma``.

    Replicates are grouped by relplot's grid size (one group for every
    ``sigma >= 0.01``); ``cache`` keeps that group's transforms of every row
    of ``W`` for the next call (a smaller bandwidth has a grid of its own).  ``residual`` is ``confidence - correct``.

    Examples
    --------
    >>> import numpy as np, relplot
    >>> from beyondauc.metrics.selective.smooth_replicates import smooth_ece_at
    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(size=50); q = (rng.uniform(size=50) < c).astype(float)
    >>> v = smooth_ece_at(np.ones((1, 50)), c, c - q, np.array([0.1]))
    >>> bool(abs(v[0] - relplot.metrics.smECE_sigma(c, q, 0.1)) < 1e-10)
    True
    """
    rows = np.arange(len(W)) if rows is None else np.asarray(rows)
    cache = {} if cache is None else cache
    out = np.empty(len(rows))
    sizes = _grid_size(sigma)
    for E in np.unique(sizes):  # a loop over grid sizes (one for every sigma >= 0.01), each batched
        mine = np.flatnonzero(sizes == E)
        if E != _COMMON:  # a bandwidth under 0.01: its own grid, for these rows only (the next step has another)
            grids = _Grids(W[rows[mine]], confidence, residual, int(E))
            out[mine] = _evaluate(grids, np.arange(len(mine)), sigma[mine])
            continue
        if E not in cache:
            cache[E] = _Grids(W, confidence, residual, int(E))
        out[mine] = _evaluate(cache[E], rows[mine], sigma[mine])
    return out


def smooth_ece_replicates(quality: ArrayLike, confidence: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """The smooth ECE of each row of replicate ``counts`` (R, n): relplot's bandwidth search, batched.

    Replicate ``r`` is ``relplot.smECE`` of the answers repeated ``counts[r]``
    times (to rounding of the convolution, see the module's notes), so with
    counts of 1 it is :func:`~beyondauc.smooth_ece`.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import smooth_ece
    >>> from beyondauc.metrics.selective.smooth_replicates import smooth_ece_replicates
    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(size=200); q = (rng.uniform(size=200) < c ** 2).astype(float)
    >>> bool(abs(smooth_ece_replicates(q, c, np.ones((1, 200)))[0] - smooth_ece(q, c)) < 1e-9)
    True
    """
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(confidence, dtype=np.float64)
    W = np.asarray(counts, dtype=np.float64)
    residual = c - q  # relplot smooths f - y
    cache: dict[int, object] = {}
    R = len(W)
    value = smooth_ece_at(W, c, residual, np.ones(R), cache=cache)  # relplot first tries sigma = 1
    done = value > 1.0
    start, end = np.ones(R), np.zeros(R)
    for _ in range(_STEPS):  # a loop over the bisection's steps, every replicate at its own midpoint
        mid = (start + end) / 2
        holds = mid < SMOOTH_EPS
        todo = np.flatnonzero(~holds & ~done)
        at_mid = np.full(R, np.nan)
        if len(todo):
            at_mid[todo] = smooth_ece_at(W, c, residual, mid[todo], rows=todo, cache=cache)
        holds |= mid < np.where(np.isnan(at_mid), -np.inf, at_mid)
        moved = ~holds & ~done
        value = np.where(moved, at_mid, value)  # the value at the new start: relplot's answer if it ends there
        end = np.where(holds & ~done, mid, end)
        start = np.where(moved, mid, start)
    return np.where(W.sum(axis=1) >= 2, value, np.nan)
