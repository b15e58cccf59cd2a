"""Batched calibrators on the score grid of :mod:`beyondauc.metrics.core.kernel`.

Every function takes the ascending distinct scores ``x`` (n_values,) and the
calibration counts ``pos``/``neg`` of F independent fits, shape
(F, n_values) -- a fit uses only the grid values where it has weight -- and
returns, for each fit, the decision (predict positive) at *every* grid value,
shape (F, n_values).  Evaluating a fit on any examples whose scores lie on the
grid is then one masked sum (:func:`beyondauc.metrics.core.kernel.confusion`).

The fits are scale-free: a positive affine map ``a * s + b`` of the scores
changes no decision (up to rounding at the threshold itself).  They reproduce
scikit-learn's estimators fitted on the same rows:

* ``logistic``: ``make_pipeline(StandardScaler(), LogisticRegression())``
  (the score standardised on each fit's own calibration rows, then L2 with
  C=1 on the standardised coefficient, unpenalized intercept); solved to full
  precision by a vectorised damped Newton method on the two parameters, which
  reaches the optimum lbfgs approximates.  The scores are first divided by a
  power of two near their largest magnitude (exact), so nothing overflows at
  1e300 or underflows at 1e-300.
* ``isotonic``: ``IsotonicRegression(out_of_bounds="clip")`` -- same
  pooling (:func:`scipy.optimize.isotonic_regression`), same knots and the
  same linear interpolation formula as its ``predict``.  Rank-based.
* ``stump``: a depth-1 Gini tree, ``DecisionTreeClassifier(max_depth=1)``'s
  search (first best split, majority leaves with ties to the negative class)
  on the float64 scores: a split between any two distinct calibration values,
  mid-point thresholds.  Only the order of the scores matters, so it is
  scikit-learn's tree on the standardised score wherever that has no two
  values within float32 rounding.  With ``reference="opitz2024"`` it is
  scikit-learn's tree on the raw scores (float32 features, splits only between
  values ``a < b`` with ``b > a + 1e-7`` evaluated in float32, as its splitter
  does), which depends on the scale: shifted by 1e9, or multiplied by 1e50
  (beyond float32's range), every score is one value to it.

A fit whose calibration data has a single class predicts that class.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .kernel import run_means, stump_best

__all__: list[str] = []

# sklearn.tree._partitioner.FEATURE_THRESHOLD: a float32 constant, added to
# float32 feature values in float32 arithmetic (see :func:`_splittable`)
_FEATURE_THRESHOLD = np.float32(1e-7)
EPSILON = np.finfo(np.float64).eps


def class_weighted(pos, neg, class_weight):
    """Apply ``class_weight`` ("balanced" or None) to per-fit counts.

    Balanced weights are scikit-learn's ``n / (2 * n_class)`` computed on each
    fit's own calibration data.
    """
    if class_weight is None:
        return pos, neg
    n_pos = pos.sum(axis=1, keepdims=True)
    n_neg = neg.sum(axis=1, keepdims=True)
    n = n_pos + n_neg
    with np.errstate(divide="ignore", invalid="ignore"):
        w_pos = np.where(n_pos > 0, n / (2.0 * n_pos), 1.0)
        w_neg = np.where(n_neg > 0, n / (2.0 * n_neg), 1.0)
    return pos * w_pos, neg * w_neg


def single_class(pos, neg):
    """(F,) int: 1/0 where a fit saw only positives/negatives, -1 otherwise."""
    has_pos = pos.sum(axis=1) > 0
    has_neg = neg.sum(axis=1) > 0
    out = np.full(pos.shape[0], -1, dtype=np.int8)
    out[has_pos & ~has_neg] = 1
    out[~has_pos & has_neg] = 0
    out[~has_pos & ~has_neg] = 0
    return out


# -- logistic -------------------------------------------------------------------

_BLOCK = 16_384  # grid cells per block: temporaries stay in cache
_TRANSFORM_BLOCK = 1 << 16  # values per block of an isotonic transform


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


def logistic_params(x, pos, neg, *, C=1.0, init=None, max_iter=100, tol=1e-9, standardize=None, counts=None):
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
    less than ``tol``; the error after that step is of order ``tol**2``
    (quadratic convergence).  Long steps, and every step after 20
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
    beta = newton(objective, beta, tot > 0, max_iter=max_iter, tol=tol)
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


# -- isotonic -------------------------------------------------------------------

def _trim(xk, yk):
    """Drop interior points of constant runs (scikit-learn keeps the ends)."""
    if len(yk) <= 2:
        return xk, yk
    keep = np.ones(len(yk), dtype=bool)
    keep[1:-1] = (yk[1:-1] != yk[:-2]) | (yk[1:-1] != yk[2:])
    return xk[keep], yk[keep]


def isotonic_knots(x, pos, neg, *, trim=True):
    """Knots (X_thresholds_, y_thresholds_) of one isotonic fit on grid counts.

    Trimming (as scikit-learn does) drops interior points of constant runs;
    it never changes an interpolated value, since the slope is 0 inside a run
    and the run ends, which bound the sloped segments, are kept.
    """
    from scipy.optimize import isotonic_regression
    n = pos + neg
    present = n > 0
    y_fit = np.asarray(isotonic_regression(pos[present] / n[present], weights=n[present]).x, dtype=np.float64)
    return _trim(x[present], y_fit) if trim else (x[present], y_fit)


def isotonic_transform(x_new, knots_x, knots_y):
    """Clip then interpolate linearly, exactly as ``IsotonicRegression.predict``.

    Elementwise, by blocks of values: its temporaries are a block's, however many values it transforms.
    """
    if len(knots_x) == 1:
        return np.full(len(x_new), knots_y[0])
    out = np.empty(len(x_new))
    for start in range(0, len(x_new), _TRANSFORM_BLOCK):  # a loop over blocks of values
        t = np.clip(x_new[start:start + _TRANSFORM_BLOCK], knots_x[0], knots_x[-1])
        idx = np.clip(np.searchsorted(knots_x, t), 1, len(knots_x) - 1)
        lo, hi = idx - 1, idx
        slope = (knots_y[hi] - knots_y[lo]) / (knots_x[hi] - knots_x[lo])
        out[start:start + len(t)] = slope * (t - knots_x[lo]) + knots_y[lo]
    return out


def within_range(pos, neg):
    """(F, n) bool: grid values inside each fit's calibration range [min, max].

    ``IsotonicRegression(out_of_bounds="nan")`` predicts NaN outside it (so
    ``predict(x) > 0.5`` is False there).
    """
    present = (pos + neg) > 0
    m = present.shape[1]
    first = np.argmax(present, axis=1)
    last = m - 1 - np.argmax(present[:, ::-1], axis=1)
    idx = np.arange(m)[None, :]
    return (idx >= first[:, None]) & (idx <= last[:, None])


def _isotonic_row(x, pos, neg):
    """Decisions ``predict(x) > 0.5`` of one isotonic fit on the whole grid.

    The fit is increasing, so grid values left of the knots whose fitted value
    is near 0.5 are negative and those right of the first knot above 0.5 are
    positive; only the grid values in between (the crossing) are evaluated
    with scikit-learn's interpolation formula, so rounding matches it exactly.
    """
    kx, ky = isotonic_knots(x, pos, neg, trim=False)
    pred = np.zeros(len(x), dtype=bool)
    hi_k = int(np.searchsorted(ky, 0.5 + 1e-9, side="right"))  # first knot clearly above 0.5
    lo_k = int(np.searchsorted(ky, 0.5 - 1e-9, side="left"))  # first knot near or above 0.5
    if hi_k < len(kx):
        pred[np.searchsorted(x, kx[hi_k], side="right"):] = True
    if lo_k == 0:
        start = 0
    else:
        start = int(np.searchsorted(x, kx[lo_k - 1], side="left"))
    stop = len(x) if hi_k >= len(kx) else int(np.searchsorted(x, kx[hi_k], side="right"))
    if stop > start:
        pred[start:stop] = isotonic_transform(x[start:stop], kx, ky) > 0.5
    return pred


def _suffix_sums(pos, neg):
    """What both isotonic paths start from: (single class, weights, presence, suffix sums).

    ``suffix[:, j]`` (F, m + 1) is the sum of ``pos - neg`` over grid values j
    and above (0 at the end): the level set {fit > 0.5} maximises it.
    """
    F, m = pos.shape
    n = pos + neg
    suffix = np.zeros((F, m + 1))
    np.cumsum((pos - neg)[:, ::-1], axis=1, out=suffix[:, m - 1::-1] if m else suffix[:, :0])
    return single_class(pos, neg), n, n > 0, suffix


def _crossing_means(x, ps, nn, pr, k, p_, idx):
    """(fit(k), fit(p), slope between them) of rows whose fit crosses 0.5 between knots p < k.

    ``k`` starts a PAVA block and ``p`` ends one, so fit(k) = min_t mean(k..t)
    and fit(p) = max_s mean(s..p), over weighted grid values (``pr``).
    """
    mean_sp, mean_kt = run_means(ps, nn, pr, p_, k, idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        y_k, y_p = mean_kt.min(axis=1), mean_sp.max(axis=1)
        slope = (y_k - y_p) / (x[k] - x[p_])
    return y_k, y_p, slope


def _unsure(inside, val, y_p, y_k):
    """Rows where rounding could decide an interpolated decision, or the fit is odd: solve them exactly.

    ``val`` is overwritten (by its distance to 0.5).
    """
    np.abs(np.subtract(val, 0.5, out=val), out=val)
    return (inside & ~(val > 1e-9)).any(axis=1) | ~(y_p <= 0.5) | ~(y_k > 0.5)


def fit_predict_isotonic(x, pos, neg, *, integer=False):
    """Isotonic decisions ``predict(x) > 0.5`` for F fits.

    The level set {fit > 0.5} of an isotonic regression is the upper set of
    grid values that maximises the sum of ``pos - n / 2`` over it (its
    smallest maximiser; the largest gives {fit >= 0.5}), so most fits need
    only reversed cumulative sums; grid values strictly inside the segment
    where the fit crosses 0.5 are interpolated from the two block means
    around it.  A fit is solved with PAVA (:func:`_isotonic_row`), with
    scikit-learn's exact interpolation, where rounding could decide: a block
    fitted (nearly) exactly at 0.5, or an interpolated value within 1e-9 of 0.5.

    ``integer=True`` declares the counts integers (the bootstrap's unweighted
    fits): the same decisions by :func:`_isotonic_integer`, which runs PAVA only
    on the exact level sets around 0.5 (falls back here where its precondition
    on the total weight fails).
    """
    if integer and _integer_ok(pos + neg, pos.shape[1]):
        return _isotonic_integer(x, pos, neg)
    F, m = pos.shape
    single, n, present, suffix = _suffix_sums(pos, neg)
    # a grid value without weight has the suffix of the next one (it adds 0), so the
    # maximum and the last value near it over the candidates (weighted values and the
    # end) are those over every index
    best = suffix.max(axis=1)
    # near-ties (weighted counts carry rounding) count as ties: such fits take the PAVA path
    tol = 1e-9 * n.sum(axis=1)
    near = suffix >= (best - tol)[:, None]
    del n, suffix  # freed before the crossing's arrays are made
    k_strict = m - np.argmax(near[:, ::-1], axis=1)  # first grid index with fit > 0.5 (m: none)
    near[:, :m] &= present
    k_weak = np.argmax(near, axis=1)  # first grid index with fit >= 0.5
    del near
    first = np.argmax(present, axis=1)
    idx = np.arange(m)[None, :]
    before = present & (idx < k_strict[:, None])
    prev = np.where(before.any(axis=1), m - 1 - np.argmax(before[:, ::-1], axis=1), -1)
    crossing_gap = (k_strict < m) & (k_strict != first) & (k_strict - prev > 1)
    exact = (k_weak != k_strict) & (single < 0)
    pred = (idx >= k_strict[:, None]) | (k_strict == first)[:, None]
    gap_rows = np.flatnonzero(crossing_gap & ~exact & (single < 0))
    if gap_rows.size:
        # grid values strictly between the last knot fitted <= 0.5 (p) and the
        # first fitted > 0.5 (k) are interpolated.  k starts a PAVA block and p
        # ends one, so fit(k) = min_t mean(k..t) and fit(p) = max_s mean(s..p).
        G = gap_rows
        k, p_ = k_strict[G], prev[G]
        every = len(G) == F  # all rows: the counts themselves, not copies
        ps, pr = (pos, present) if every else (pos[G], present[G])
        y_k, y_p, slope = _crossing_means(x, ps, ps + (neg if every else neg[G]), pr, k, p_, idx)
        with np.errstate(invalid="ignore"):  # slope * (x - x[p]) + y_p, in place
            val = np.subtract(x[None, :], x[p_][:, None])
            val *= slope[:, None]
            val += y_p[:, None]
        inside = (idx > p_[:, None]) & (idx < k[:, None])
        pred[G] |= inside & (val > 0.5)
        exact[G[_unsure(inside, val, y_p, y_k)]] = True  # solved exactly below
    for f in np.flatnonzero(exact):
        pred[f] = _isotonic_row(x, pos[f], neg[f])
    return override_single(pred, single)


# -- isotonic on integer counts (the bootstrap's xdomain fits) --------------------------
#
# With integer counts every suffix sum of ``pos - neg`` is an exact integer, so the
# level sets {fit > 0.5} and {fit >= 0.5} are exact, and every exact fitted value is a
# ratio a / b of integers with b <= W (a fit's total weight): two distinct values are
# at least 1 / W**2 apart, a value other than 0.5 at least 1 / (2 W) from it.  PAVA in
# floating point keeps each block mean within about 3 * n * eps of its exact value
# (one rounding per pooling, at most n poolings), so while 3 * n * eps * W**2 is small
# it decides every comparison of unequal exact means as exact arithmetic does: its
# blocks refine the exact level sets, and a boundary between two exact level sets is a
# block boundary of the floating-point run.  PAVA never pools across a block boundary
# of its own final result and works left to right, so the run on the points between
# two such boundaries performs exactly the operations of the full run on them: the
# same block means, bit for bit (:func:`_isotonic_segment`).

_ISO_EXACT_BOUND = 0.1  # 3 * n * eps * W**2 below this: the argument above holds, 10x to spare


def isotonic_segment(x, pos, neg, s0, e0):
    """Decisions of one fit on the whole grid from PAVA on the grid slice [s0, e0].

    ``s0`` must start, and ``e0`` end, exact level sets of the fit; the slice must
    hold the knots from the last one fitted below 0.5 to the first one fitted above
    it (those the interpolation around 0.5 reads).  Grid values left of the slice
    are below 0.5 -- or, left of the first knot, clipped to it; right of it above
    0.5 -- or, right of the last knot, clipped to it.
    """
    seg = _isotonic_row(x[s0:e0 + 1], pos[s0:e0 + 1], neg[s0:e0 + 1])
    present = (pos + neg) > 0
    out = np.empty(len(x), dtype=bool)
    out[s0:e0 + 1] = seg
    out[:s0] = seg[0] if not present[:s0].any() else False
    out[e0 + 1:] = seg[-1] if not present[e0 + 1:].any() else True
    return out


def _isotonic_integer(x, pos, neg):
    """:func:`fit_predict_isotonic` for integer counts: the same decisions, fewer passes.

    Maxima of the suffix sums are exact (integers), so the first and last maximiser
    are two ``argmax``; presence is looked at only where it decides; a fit with a block
    fitted at exactly 0.5 (or an interpolated value near it) runs PAVA only on the
    exact level sets around 0.5 (:func:`_isotonic_segment`).
    """
    F, m = pos.shape
    single, n, present, suffix = _suffix_sums(pos, neg)
    j0 = np.argmax(suffix, axis=1)  # first maximiser (the maximum is exact)
    k_strict = m - np.argmax(suffix[:, ::-1], axis=1)  # last: first grid index with fit > 0.5 (m: none)
    del suffix
    # the last maximiser is a weighted value or the end; the first weighted value at or after
    # the first maximiser starts {fit >= 0.5}
    k_weak = k_strict.copy()
    idx = np.arange(m)[None, :]
    cand = np.flatnonzero(j0 < k_strict)
    if cand.size:
        pc = present[cand] & (idx >= j0[cand, None]) & (idx < k_strict[cand, None])
        got = pc.any(axis=1)
        k_weak[cand[got]] = np.argmax(pc[got], axis=1)
    first = np.argmax(present, axis=1)
    rows = np.arange(F)
    inner = (k_strict < m) & (k_strict != first)
    crossing_gap = inner.copy()
    crossing_gap[inner] = ~present[rows[inner], k_strict[inner] - 1]
    exact = (k_weak != k_strict) & (single < 0)
    pred = (idx >= k_strict[:, None]) | (k_strict == first)[:, None]
    gap_rows = np.flatnonzero(crossing_gap & ~exact & (single < 0))
    if gap_rows.size:
        G = gap_rows
        pr = present[G]
        k = k_strict[G]
        before = pr & (idx < k[:, None])
        p_ = m - 1 - np.argmax(before[:, ::-1], axis=1)
        y_k, y_p, slope = _crossing_means(x, pos[G], n[G], pr, k, p_, idx)
        # only the grid values strictly between p and k: a window of columns per row
        w = int((k - p_).max()) - 1
        cols = p_[:, None] + 1 + np.arange(max(w, 0))[None, :]
        inside = cols < k[:, None]
        cols = np.minimum(cols, m - 1)
        with np.errstate(invalid="ignore"):
            val = slope[:, None] * (x[cols] - x[p_][:, None]) + y_p[:, None]
        up = inside & (val > 0.5)
        rr, cc = np.nonzero(up)
        pred[G[rr], cols[rr, cc]] = True
        exact[G[_unsure(inside, val, y_p, y_k)]] = True
    E = np.flatnonzero(exact)
    if E.size:
        s0, e0 = _exact_level_sets(pos[E], n[E], present[E], k_weak[E], k_strict[E])
        for f, a, b in zip(E, s0, e0):
            pred[f] = isotonic_segment(x, pos[f], neg[f], a, b)
    return override_single(pred, single)


def _exact_level_sets(ps, nn, pr, kw, ks):
    """Start of the exact level set ending before ``kw`` and end of the one starting at ``ks``.

    For a level set ending at p, its value is max_s mean(s..p) and its start the
    smallest maximiser; for one starting at k, min_t mean(k..t) and the largest
    minimiser (ties within 1 / (4 W**2): distinct exact means are 1 / W**2 apart,
    the computed ones within one rounding).  Without a weighted value before ``kw``
    the start is the first weighted value; with ``ks`` at the end, the last one.
    """
    m = ps.shape[1]
    idx = np.arange(m)[None, :]
    tol = 0.25 / np.maximum(nn.sum(axis=1), 1.0) ** 2
    first = np.argmax(pr, axis=1)
    last = m - 1 - np.argmax(pr[:, ::-1], axis=1)
    before = pr & (idx < kw[:, None])
    has_p = before.any(axis=1)
    p_ = m - 1 - np.argmax(before[:, ::-1], axis=1)
    mean_sp, mean_kt = run_means(ps, nn, pr, p_, np.minimum(ks, m - 1), idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        top = mean_sp.max(axis=1)
        s0 = np.argmax(mean_sp >= (top - tol)[:, None], axis=1)
        s0 = np.where(has_p, s0, first)
        low = mean_kt.min(axis=1)
        e0 = m - 1 - np.argmax((mean_kt <= (low + tol)[:, None])[:, ::-1], axis=1)
        e0 = np.where(ks < m, e0, last)
    return s0, e0


def _integer_ok(n, m):
    """Whether :func:`_isotonic_integer`'s exactness argument holds for these fits."""
    W = float(n.sum(axis=1).max()) if n.size else 0.0
    return W < 2.0**50 and 3.0 * m * EPSILON * W * W < _ISO_EXACT_BOUND


# -- stump ----------------------------------------------------------------------

def _float32_grid(x, pos, neg):
    """Merge grid values that collapse in float32 (scikit-learn's trees see float32 features).

    Beyond float32's range (|s| > 3.4e38) a score is +-inf to the tree, all one value
    (scikit-learn itself refuses such input).
    """
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    new = np.concatenate([[True], x32[1:] != x32[:-1]])
    if new.all():
        return x32.astype(np.float64), pos, neg, None
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    return x32[starts].astype(np.float64), np.add.reduceat(pos, starts, axis=1), np.add.reduceat(neg, starts, axis=1), group


def stump_grid(x, pos, neg, *, reference=None):
    """The grid a stump splits, its counts, and each grid value's place on it (None: the grid itself).

    The scores themselves (scale-free: only their order matters); under
    ``reference="opitz2024"`` rounded to float32 as scikit-learn's trees
    round them (:func:`_float32_grid`).
    """
    if reference == "opitz2024":
        return _float32_grid(x, pos, neg)
    return np.asarray(x, dtype=np.float64), pos, neg, None


def _splittable(lo, hi):
    """Whether a tree may split between float32 values ``lo < hi`` (float64 arrays).

    scikit-learn's splitter skips a position while
    ``feature_values[p] <= feature_values[p - 1] + FEATURE_THRESHOLD``, all
    float32: the sum is rounded to float32, so near 1 (float32 spacing
    ``2**-23`` ~ 1.19e-7) two adjacent float32 values count as tied although
    they are more than 1e-7 apart.  The same test decides a constant feature.
    """
    lo32 = np.asarray(lo).astype(np.float32)
    hi32 = np.asarray(hi).astype(np.float32)
    return hi32 > lo32 + _FEATURE_THRESHOLD  # float32 + float32 -> float32, as in C


def _close_splits(x, pos, neg):
    """(F, m) bool: present grid values a float32 tree may split after (next present value > 1e-7 above, in float32)."""
    F, m = pos.shape
    present = (pos + neg) > 0
    idx = np.where(present, np.arange(m)[None, :], m)
    nxt_incl = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
    nxt = np.concatenate([nxt_incl[:, 1:], np.full((F, 1), m)], axis=1)
    x_ext = np.concatenate([x, [np.inf]])
    return present & _splittable(x[None, :], x_ext[nxt])


def stump_params(x, pos, neg, *, reference=None):
    """Fit depth-1 Gini trees; return (threshold, left_class, right_class), each (F,).

    ``threshold`` is NaN where the tree does not split (its root predicts
    ``left_class``).  ``x`` ascending: the grid of :func:`stump_grid` (float32
    values, as float64, under ``reference="opitz2024"``, where splits need
    values more than 1e-7 apart in float32 as scikit-learn's splitter does).

    Besides the cumulative counts, the search holds one block of grid values at a time
    (:func:`~beyondauc.metrics.core.kernel.stump_best`): two copies of the counts, however long the grid.
    """
    F = pos.shape[0]
    cpos = np.cumsum(pos, axis=1)
    cneg = np.cumsum(neg, axis=1)
    tpos, tneg = cpos[:, -1], cneg[:, -1]
    total = tpos + tneg
    close = None
    if reference == "opitz2024" and (~_splittable(x[:-1], x[1:])).any():
        close = _close_splits(x, pos, neg)  # splits only between present values more than 1e-7 apart
    best, k = stump_best(cpos, cneg, tpos, tneg, total, close)
    rows = np.arange(F)
    root_impurity = 1.0 - (tneg * tneg + tpos * tpos) / np.where(total > 0, total * total, 1.0)
    cp_best, cn_best = cpos[rows, best], cneg[rows, best]
    nl_best = cp_best + cn_best
    valid = (nl_best > 0) & ((total - nl_best) > 0)
    if close is not None:
        valid &= close[rows, best]
    splits = valid & (root_impurity > EPSILON)
    xj, xk = x[best], x[k]
    with np.errstate(invalid="ignore"):  # -inf / 2 + inf / 2 where a row does not split (masked below)
        thr = xj / 2.0 + xk / 2.0
    thr = np.where((thr == xk) | np.isinf(thr), xj, thr)
    left_c = np.where(splits, cp_best > cn_best, tpos > tneg).astype(np.int8)
    right_c = np.where(splits, (tpos - cp_best) > (tneg - cn_best), tpos > tneg).astype(np.int8)
    thr = np.where(splits, thr, np.nan)
    return thr, left_c, right_c


def stump_decision(x, threshold, left_c, right_c):
    """Decisions of fitted stumps at scores ``x`` (float32 values under opitz2024), (F, n)."""
    go_left = ~(x[None, :] > threshold[:, None])  # NaN threshold: always left
    return np.where(go_left, left_c[:, None], right_c[:, None]).astype(bool)


def fit_predict_stump(x, pos, neg, *, reference=None):
    """Stump decisions at every grid value for F fits (scikit-learn's float32 tree under ``reference``)."""
    single = single_class(pos, neg)
    xg, pg, ng, group = stump_grid(x, pos, neg, reference=reference)
    thr, lc, rc = stump_params(xg, pg, ng, reference=reference)
    pred = stump_decision(xg, thr, lc, rc)
    if group is not None:
        pred = pred[:, group]
    return override_single(pred, single)


def override_single(pred, single):
    for cls in (0, 1):
        rows = single == cls
        if rows.any():
            pred[rows] = bool(cls)
    return pred


# per-row fitters; logistic is solved for all rows at once (logistic_params) and
# decided with logistic_decision
FIT_PREDICT = {
    "isotonic": fit_predict_isotonic,
    "stump": fit_predict_stump,
}
