"""The logistic calibrator on the score grid, for many fits at once.

``make_pipeline(StandardScaler(), LogisticRegression())`` of scikit-learn: the
score standardised on each fit's own calibration rows, then L2 with C=1 on the
standardised coefficient and an unpenalized intercept, solved to full precision
by a vectorised damped Newton method on the two parameters (the optimum lbfgs
approximates).  The scores are first divided by a power of two near their
largest magnitude (exact), so nothing overflows at 1e300 or underflows at
1e-300.  See :mod:`beyondauc.metrics.core.fitting` for what every calibrator shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .fitting import EPSILON

__all__ = ["FULL_PRECISION", "NewtonStop", "logistic_decision", "logistic_params"]

_BLOCK = 16_384  # grid cells per block: temporaries stay in cache


def _column_blocks(F, m):
    width = max(256, _BLOCK // max(F, 1))
    return [slice(c, min(c + width, m)) for c in range(0, m, width)]


def unit_scale(x):
    """``(x / 2**e, e)``: the scores over the power of two just above their largest magnitude.

    Only the exponents change, so the division is exact (for normal numbers)
    and the result lies in (-1, 1): sums and squares of it cannot overflow at
    scores near 1e300, nor underflow at 1e-300.  ``e`` is 0 for an empty,
    all-zero or non-finite grid.
    """
    x = np.asarray(x, dtype=np.float64)
    big = float(np.max(np.abs(x))) if x.size else 0.0
    if big == 0.0 or not np.isfinite(big):
        return x, 0
    e = int(np.frexp(big)[1])
    return np.ldexp(x, -e), e


def _weighted_moments(xn, w):
    """(mean, standard deviation) of the unit-scaled grid ``xn`` under weights ``w`` (m,); sd 1 where 0."""
    W = float(w.sum())
    if W <= 0:
        return 0.0, 1.0
    mu = float(w @ xn) / W
    return mu, float(np.sqrt(w @ (xn - mu) ** 2 / W)) or 1.0


def grid_standardization(x, pos, neg):
    """(centre, scale) of the grid under the total weight of every row, in the scores' units.

    Computed on the unit-scaled grid (:func:`unit_scale`), so it neither
    overflows nor underflows; the ``standardize`` that
    :func:`logistic_params` can be given to make a row's fit independent of
    the rows that share its batch.
    """
    w = np.asarray(pos + neg, dtype=np.float64)
    w = w.sum(axis=0) if w.ndim > 1 else w
    xn, e = unit_scale(x)
    mu, sd = _weighted_moments(xn, w)
    return float(np.ldexp(mu, e)), float(np.ldexp(sd, e))


def _grid_standardization(xn, e, n, standardize):
    """(centre, scale) of the unit-scaled grid: given (in the scores' units), or from the rows' total weight."""
    if standardize is not None:
        sd = float(np.ldexp(float(standardize[1]), -e))
        return float(np.ldexp(float(standardize[0]), -e)), sd if sd > 0 and np.isfinite(sd) else 1.0
    return _weighted_moments(xn, n.sum(axis=0))


def scaler_penalty(xs, counts, C=1.0):
    """The L2 penalty (F,) on the coefficient of the conditioned grid ``xs`` that is ``coef**2 / (2 C)`` on each fit's own standardised score.

    ``StandardScaler`` fitted on a fit's calibration rows (``counts`` (F, m),
    unweighted: the scaler sees every row once) divides by their standard
    deviation r (in units of ``xs``), so a coefficient c on ``xs`` is ``c * r``
    on the standardised score and its penalty ``(c * r)**2 / (2 C)``: ``lam =
    r**2 / C``.  A fit whose scores scikit-learn deems constant
    (``_is_constant_feature``: variance within rounding of 0) has no slope to
    penalise (its scores all sit at one point, so the loss does not depend on
    it): ``lam = 1 / C`` keeps its Hessian regular.

    The moments are one matrix product; the rows where that one-pass variance
    could lose more than about 1e-12 to cancellation (a spread small beside
    the mean, constant rows among them) are recomputed in two passes.
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    N = counts.sum(axis=1)
    safe = np.where(N > 0, N, 1.0)
    moments = counts @ np.stack([xs, xs * xs], axis=1) / safe[:, None]
    mean = moments[:, 0]
    var = moments[:, 1] - mean * mean
    doubtful = np.flatnonzero(~(var > 1e-3 * (mean * mean + np.abs(var))))
    if doubtful.size:
        c = counts[doubtful]
        dev = xs[None, :] - mean[doubtful, None]
        var[doubtful] = np.einsum("fm,fm->f", c, dev * dev) / safe[doubtful]
    constant = var <= N * EPSILON * var + (N * mean * EPSILON) ** 2
    if doubtful.size:
        constant[doubtful] |= (counts[doubtful] > 0).sum(axis=1) <= 1  # one value: constant whatever the rounding
    return np.where(constant, 1.0, var) / C


def conditioned_grid(x, n, standardize=None):
    """The grid :func:`logistic_params` works on: ``(xs, mu, sd, e)`` with ``xs = (x / 2**e - mu) / sd``.

    ``mu``/``sd`` are in units of the unit-scaled grid (:func:`unit_scale`):
    from ``standardize`` (centre, scale in the scores' units) or the total
    weight of the rows ``n`` (F, m).
    """
    xn, e = unit_scale(x)
    mu, sd = _grid_standardization(xn, e, n, standardize)
    xs = xn - mu
    xs /= sd  # in place: (xn - mu) / sd without a second array of the grid
    return xs, mu, sd, e


def raw_params(b0, b1, mu, sd, e):
    """(intercept, coef) on the raw scale of conditioned parameters ``b0 + b1 * xs``."""
    slope = b1 / sd  # on the unit grid
    return b0 - slope * mu, np.ldexp(slope, -e)


def conditioned_params(intercept, coef, mu, sd, e):
    """(F, 2) conditioned parameters of raw (intercept, coef): the inverse of :func:`raw_params`."""
    slope = np.ldexp(np.asarray(coef, dtype=np.float64), e)  # on the unit grid
    return np.stack(np.broadcast_arrays(intercept + slope * mu, slope * sd), axis=1)


def initial_params(pos, safe_tot, init, mu, sd, e):
    """Starting conditioned (intercept, coef) (F, 2): ``init`` on the raw scale, or the log-odds and 0."""
    F = len(pos)
    if init is None:
        rate = np.clip(pos.sum(axis=1) / safe_tot, 1e-6, 1 - 1e-6)
        return np.stack([np.log(rate / (1 - rate)), np.zeros(F)], axis=1)
    return conditioned_params(np.broadcast_to(init[0], (F,)), np.broadcast_to(init[1], (F,)), mu, sd, e)


class LogLoss:
    """The penalised log-loss of F fits on the standardised grid ``xs``, summed over cache-sized blocks."""

    def __init__(self, xs, pos, n, lam):
        F, m = pos.shape
        self.pos, self.n, self.lam = pos, n, lam
        self.basis = np.empty((m, 3))  # (1, xs, xs**2) per grid value, written in place: no temporaries of m
        self.basis[:, 0] = 1.0
        self.basis[:, 1] = xs
        np.multiply(xs, xs, out=self.basis[:, 2])
        self.blocks = _column_blocks(F, m)
        width = self.blocks[0].stop - self.blocks[0].start if self.blocks else 0
        self.buf_z = np.empty((F, width))
        self.buf_q = np.empty((F, width))

    def _lin(self, blk):
        """(2, block) rows (1, xs) of a block of the grid, contiguous (one block's copy, not the whole grid's)."""
        return np.ascontiguousarray(self.basis[blk, :2].T)

    def newton_sums(self, bt):
        """Gradient terms (F, 3) and Hessian terms (F, 3) of the unpenalised loss at ``bt``."""
        F = len(bt)
        gr = np.zeros((F, 3))
        hs = np.zeros((F, 3))
        for blk in self.blocks:
            k = blk.stop - blk.start
            z, q = self.buf_z[:, :k], self.buf_q[:, :k]
            np.matmul(bt, self._lin(blk), out=z)
            expit(z, out=z)  # p
            np.multiply(self.n[:, blk], z, out=q)  # q = n p
            np.multiply(q, z, out=z)  # n p^2
            np.subtract(q, z, out=z)  # h = n p (1 - p)
            hs += z @ self.basis[blk]
            np.subtract(q, self.pos[:, blk], out=q)  # r = n p - pos
            gr += q @ self.basis[blk]
        return gr, hs

    def __call__(self, bt):
        """The objective (F,) at ``bt``."""
        # sum pos*softplus(-z) + neg*softplus(z) == sum n*softplus(z) - pos*z
        total = 0.5 * self.lam * bt[:, 1] ** 2
        for blk in self.blocks:
            k = blk.stop - blk.start
            z, q = self.buf_z[:, :k], self.buf_q[:, :k]
            np.matmul(bt, self._lin(blk), out=z)
            np.multiply(self.pos[:, blk], z, out=q)
            np.logaddexp(0.0, z, out=z)
            np.multiply(self.n[:, blk], z, out=z)
            np.subtract(z, q, out=z)
            total = total + z.sum(axis=1)
        return total


def _damped_steps(objective, beta, d, g0, g1, check, active):
    """Step lengths (F,) along ``d``: 1 where active, Armijo backtracking where ``check``; and the fits that stall."""
    F = len(beta)
    step = np.where(active, 1.0, 0.0)
    stalled = np.zeros(F, dtype=bool)
    if not check.any():
        return step, stalled
    slope = g0 * d[:, 0] + g1 * d[:, 1]
    f_cur = objective(beta)
    slack = 1e-12 * np.abs(f_cur)  # rounding noise of the objective near the optimum
    t = np.ones(F)
    ok = ~check | (objective(beta + d) <= f_cur + 1e-4 * slope + slack)
    for _ in range(60):
        if ok.all():
            break
        t = np.where(ok, t, 0.5 * t)
        ok = ~check | ok | (objective(beta + t[:, None] * d) <= f_cur + 1e-4 * t * slope + slack)
    stalled = check & ~ok
    step = np.where(check, np.where(ok, t, 0.0), step)
    return step, stalled


def newton(objective, beta, active, *, max_iter, tol):
    """Newton's method on the active fits from ``beta``; long steps, and every step after 20, damped."""
    lam = objective.lam
    for it in range(max_iter):
        if not active.any():
            break
        gr, hs = objective.newton_sums(beta)
        g0, g1 = gr[:, 0], gr[:, 1] + lam * beta[:, 1]
        d = np.stack(newton_direction(g0, g1, hs[:, 0], hs[:, 1], hs[:, 2] + lam), axis=1)
        d[~active] = 0.0
        check = active & ((np.abs(d).max(axis=1) > 1.0) | (it >= 20))
        step, stalled = _damped_steps(objective, beta, d, g0, g1, check, active)
        beta = beta + step[:, None] * d
        done = ((step == 1.0) & (np.abs(d).max(axis=1) < tol)) | stalled
        active &= ~done
    return beta


@dataclass(frozen=True)
class NewtonStop:
    """When the logistic fits' Newton method stops: after ``max_iter`` steps, or once a full step moves the
    conditioned parameters by less than ``tol``."""

    max_iter: int = 100
    tol: float = 1e-9


#: Newton's method run to full precision (an error of order ``tol**2`` after the last step).
FULL_PRECISION = NewtonStop()


def logistic_params(x, pos, neg, *, C=1.0, init=None, stop=FULL_PRECISION, standardize=None, counts=None):
    """Fit Platt scaling on the standardised score for F fits at once; return (intercept, coef), each (F,).

    The fit of ``make_pipeline(StandardScaler(), LogisticRegression(C=C))``
    on each row's calibration data, returned on the raw scale: decide
    positive where ``coef * x + intercept > 0``.  It minimises ``sum_i w_i
    logloss(y_i, b0 + b1 z_i) + b1**2 / (2 C)`` with ``z`` the score
    standardised by the row's own mean and standard deviation (of
    ``counts``: the unweighted calibration counts, default ``pos + neg``;
    give them when ``pos``/``neg`` carry class weights, since the scaler sees
    every row once).  So the fit does not depend on the scores' scale:
    a positive affine map of the scores maps (intercept, coef) along with it.

    The grid is first divided by a power of two near its largest magnitude
    (exact) and conditioned by a centre and scale shared by the rows (the
    rows' total weight, or ``standardize``: (centre, scale) in the scores'
    units, fixed so a row's fit does not depend on which other rows share its
    batch -- the bootstrap's chunking); each row's penalty is transformed to
    its own standardisation (:func:`scaler_penalty`).  Newton's method is
    affine invariant, so the iterates do not depend on that conditioning.
    Newton steps run until a full step moves the conditioned parameters by
    less than ``stop.tol`` (at most ``stop.max_iter`` steps, :class:`NewtonStop`); the error after that step
    is of order ``tol**2`` (quadratic convergence).  Long steps, and every step after 20
    iterations, are damped by Armijo backtracking on the objective.  Sums run
    over cache-sized blocks of the grid with preallocated buffers.

    ``init`` optionally gives starting (intercept, coef) on the raw scale
    (warm start from a nearby fit).
    """
    pos = np.ascontiguousarray(np.atleast_2d(pos), dtype=np.float64)
    neg = np.ascontiguousarray(np.atleast_2d(neg), dtype=np.float64)
    n = pos + neg
    tot = n.sum(axis=1)
    safe_tot = np.where(tot > 0, tot, 1.0)
    xs, mu, sd, e = conditioned_grid(x, n, standardize)
    lam = scaler_penalty(xs, n if counts is None else counts, C)
    objective = LogLoss(xs, pos, n, lam)
    beta = initial_params(pos, safe_tot, init, mu, sd, e)
    beta = newton(objective, beta, tot > 0, max_iter=stop.max_iter, tol=stop.tol)
    return raw_params(beta[:, 0], beta[:, 1], mu, sd, e)


def newton_direction(g0, g1, h00, h01, h11):
    """The Newton step ``-H^-1 g`` of a two-parameter fit, elementwise: (d0, d1).

    ``h00`` gets 1e-300 added and a determinant that is not positive is taken
    as 1e-300, so a fit with no weight (H = 0, g = 0) gets a zero step.
    """
    h00 = h00 + 1e-300
    det = h00 * h11 - h01 * h01
    det = np.where(det > 0, det, 1e-300)
    return -(h11 * g0 - h01 * g1) / det, -(h00 * g1 - h01 * g0) / det


def logistic_decision(x, intercept, coef):
    """Decisions ``coef * x + intercept > 0`` (scikit-learn's ``predict``), (F, n)."""
    return (x[None, :] * coef[:, None] + intercept[:, None]) > 0
