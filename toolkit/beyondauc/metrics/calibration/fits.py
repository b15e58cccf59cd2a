"""Blocks of calibration fits on one score grid: their decisions and their binned probabilities.

A block (:class:`FitBlock`) is F fits on a grid ``x`` of distinct scores:
calibration counts and evaluation counts, each (F, m); :class:`FitSettings`
says how to fit them.  :func:`run_fits` turns a block into the
confusion counts of the expected-accuracy grid
(:func:`~beyondauc.metrics.calibration.grid.point_grid`);
:func:`probabilities_binned` into the reliability bin sums of
:func:`~beyondauc.calibration_error_table`.  :func:`block_tables` gives
both from one block, fitting once what both read: the stumps, and the
logistic's conditioned grid, penalty and sums, solved from each table's own
start.  Its numbers are those of the two called apart, bit for bit.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from threadpoolctl import ThreadpoolController

from ..core.fitting import class_weighted, override_single, single_class
from ..core.isotonic import fit_predict_isotonic, isotonic_knots, isotonic_transform, within_range
from ..core.kernel import confusion
from ..core.logistic import (
    FULL_PRECISION,
    LogLoss,
    conditioned_grid,
    initial_params,
    logistic_decision,
    logistic_params,
    newton,
    raw_params,
    scaler_penalty,
)
from ..core.stump import fit_predict_stump, stump_decision, stump_grid, stump_params

__all__ = ["FitBlock", "FitSettings", "block_tables", "probabilities_binned", "run_fits"]

#: Per-row fitters; logistic is solved for all rows at once (logistic_params) and decided with logistic_decision.
FIT_PREDICT: dict[str, Callable[..., np.ndarray]] = {
    "isotonic": fit_predict_isotonic,
    "stump": fit_predict_stump,
}

_ROW_BLOCK = 32_768  # grid cells per block of decisions (keeps temporaries in cache)


@dataclass(frozen=True)
class FitBlock:
    """F calibration fits on one grid ``x`` of distinct scores (m,): their calibration and evaluation counts.

    ``cal_pos``, ``cal_neg``, ``ev_pos``, ``ev_neg`` are (F, m); ``lbfgs``, under
    ``reference="opitz2024"`` only, the rows' scikit-learn logistic parameters
    (intercept, coef), each (F,).
    """

    x: np.ndarray
    cal_pos: np.ndarray
    cal_neg: np.ndarray
    ev_pos: np.ndarray
    ev_neg: np.ndarray
    lbfgs: tuple | None = None


@dataclass(frozen=True)
class FitSettings:
    """How the grid fits a block: its calibration methods, the class weight (None or ``"balanced"``) and the
    reference mode (None, or ``"opitz2024"``: the code behind the paper's tables)."""

    methods: tuple
    class_weight: str | None = None
    reference: str | None = None


# -- decisions: the expected-accuracy grid ----------------------------------------------


def run_fits(block: FitBlock, settings: FitSettings, *, init=None, standardize=None, stop=FULL_PRECISION, fitted=None):
    """Fit every method of ``settings`` on every row of the block's calibration counts; return confusions.

    Logistic parameters are solved for all rows at once (each row standardised
    on its own unweighted calibration counts); decisions and confusion counts
    (and the stump fits) run over cache-sized row blocks.  With
    ``reference="opitz2024"``, the block's ``lbfgs`` holds the rows' scikit-learn logistic
    parameters (:func:`~beyondauc.metrics.calibration.calibrator.lbfgs_params`), isotonic decisions are negative
    outside each fit's calibration range and the stump sees float32 scores.
    ``fitted`` may hold what :func:`_shared_fits` fitted already: the
    ``"logistic"`` (intercept, coef) and the ``"stump"`` (threshold, left, right).
    """
    x, cal_pos, cal_neg, ev_pos, ev_neg = block.x, block.cal_pos, block.cal_neg, block.ev_pos, block.ev_neg
    reference = settings.reference
    out, fitted = {}, fitted or {}
    wpos, wneg = class_weighted(cal_pos, cal_neg, settings.class_weight)
    F, m = wpos.shape
    per = max(1, _ROW_BLOCK // max(m, 1))
    blocks = [slice(i, min(i + per, F)) for i in range(0, F, per)]
    single = single_class(wpos, wneg)
    for method in settings.methods:
        if method == "logistic":
            b0, b1 = _chosen_logistic(
                reference,
                block.lbfgs,
                fitted,
                lambda: logistic_rows(
                    x, wpos, wneg, init=init, standardize=standardize, stop=stop, counts=cal_pos + cal_neg
                ),
            )

            def decide(r):
                return override_single(logistic_decision(x, b0[r], b1[r]), single[r])  # noqa: B023 -- called in this iteration
        elif method == "isotonic" and reference == "opitz2024":

            def decide(r):
                inside = within_range(wpos[r], wneg[r]) | (single[r] >= 0)[:, None]
                return fit_predict_isotonic(x, wpos[r], wneg[r]) & inside
        elif method == "stump" and "stump" in fitted:
            thr, lc, rc = fitted["stump"]

            def decide(r):
                return override_single(stump_decision(x, thr[r], lc[r], rc[r]), single[r])  # noqa: B023 -- called in this iteration
        elif method == "stump":

            def decide(r):
                return stump_rows(x, wpos[r], wneg[r], reference=reference)
        else:
            fit_predict = FIT_PREDICT[method]

            def decide(r):
                return fit_predict(x, wpos[r], wneg[r])  # noqa: B023 -- called in this iteration

        parts = [confusion(decide(r), ev_pos[r], ev_neg[r]) for r in blocks]
        out[method] = tuple(np.concatenate([p[k] for p in parts]) for k in range(4))
    return out


def _chosen_logistic(reference, lbfgs, fitted, fit):
    """The logistic's (intercept, coef) rows: scikit-learn's under ``opitz2024``, else the shared fit, else ``fit()``."""
    if reference == "opitz2024":
        return lbfgs
    if "logistic" in fitted:
        return fitted["logistic"]
    return fit()


def logistic_rows(x, wpos, wneg, *, counts, **kw):
    """:func:`logistic_params` of the rows; a single row on the grid values it has calibration weight at.

    Grid values without weight add nothing to the fit's sums (only the
    rounding of the sums' order can move), so a lone fit's Newton steps
    run over its own calibration values, not the whole grid.
    """
    if len(wpos) == 1:
        own = counts[0] > 0
        if not own.all():
            return logistic_params(x[own], wpos[:, own], wneg[:, own], counts=counts[:, own], **kw)
    return logistic_params(x, wpos, wneg, counts=counts, **kw)


def stump_rows(x, pos, neg, *, reference=None):
    """:func:`fit_predict_stump`; a single row split on the grid values it has calibration weight at.

    Its best split and the next value with weight (the threshold) are
    those of the whole grid (zero counts add nothing to the cumulative
    counts), so the fit runs over its own calibration values only.
    """
    own = (pos + neg)[0] > 0 if len(pos) == 1 and reference is None else None
    if own is None or own.all():
        return fit_predict_stump(x, pos, neg, reference=reference)
    thr, lc, rc = stump_params(x[own], pos[:, own], neg[:, own])
    return override_single(stump_decision(x, thr, lc, rc), single_class(pos, neg))


# -- probabilities: the calibration errors ----------------------------------------------


def bin_edges(n_bins):
    """``calibration_curve``'s uniform edges: ``linspace(0, 1, n_bins + 1)``."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def bin_ids(prob, n_bins):
    """Bin of each probability exactly as ``calibration_curve``: ``searchsorted(edges[1:-1], p)``.

    An inner edge belongs to the bin below it; 0 to the first bin, 1 to the last.
    """
    return np.searchsorted(bin_edges(n_bins)[1:-1], prob)


def _grid_probabilities(block, method, settings, *, at, init=None, fitted=None):
    """Probability of the positive class of F fits at the grid entries ``at``: (rows, columns), row-major.

    The probabilities of :meth:`ScoreCalibrator.predict_proba` fitted on each
    row's calibration counts: Platt (all rows at once), isotonic (scipy's PAVA
    per row, scikit-learn's interpolation), the stump's weighted leaf
    fractions (all rows at once).  NaN where ``reference="opitz2024"``
    isotonic leaves the calibration range.  A single-class row is that class.
    Each probability is the one the whole grid would hold there (the same
    arithmetic), computed only where it is asked: the evaluation's values.
    ``fitted``: as in :func:`run_fits`.
    """
    x, cal_pos, cal_neg, reference = block.x, block.cal_pos, block.cal_neg, settings.reference
    rows, cols = at
    fitted = fitted or {}
    wpos, wneg = class_weighted(cal_pos, cal_neg, settings.class_weight)
    F, m = wpos.shape
    single = single_class(wpos, wneg)
    if method == "logistic":
        b0, b1 = _chosen_logistic(
            reference, block.lbfgs, fitted, lambda: logistic_rows(x, wpos, wneg, init=init, counts=cal_pos + cal_neg)
        )
        prob = expit(x[cols] * b1[rows] + b0[rows])
    elif method == "isotonic":
        prob = np.zeros(len(rows))
        bounds = np.searchsorted(rows, np.arange(F + 1))  # each row's entries
        for f in np.flatnonzero(single < 0):  # PAVA is sequential: one C call per fit
            kx, ky = isotonic_knots(x, wpos[f], wneg[f])
            e = slice(bounds[f], bounds[f + 1])
            prob[e] = isotonic_transform(x[cols[e]], kx, ky)
        if reference == "opitz2024":
            prob[~within_range(wpos, wneg)[rows, cols]] = np.nan
    else:
        x32, p32, n32, group = stump_grid(x, wpos, wneg, reference=reference)
        if "stump" in fitted:
            thr = fitted["stump"][0]
        else:
            own = (p32 + n32)[0] > 0 if F == 1 and group is None else slice(None)  # a lone fit: its own values
            thr, _, _ = stump_params(x32[own], p32[:, own], n32[:, own], reference=reference)
        left = ~(x32[None, :] > thr[:, None])  # NaN threshold (no split): one leaf
        lp, ln = (p32 * left).sum(axis=1), (n32 * left).sum(axis=1)
        rp, rn = (p32 * ~left).sum(axis=1), (n32 * ~left).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lf = np.where(lp + ln > 0, lp / (lp + ln), 0.0)
            rf = np.where(rp + rn > 0, rp / (rp + rn), 0.0)
        prob = np.where(left[rows, cols if group is None else group[cols]], lf[rows], rf[rows])
    one = single[rows] >= 0
    prob[one] = single[rows][one]
    return prob


def _evaluation_entries(ev_pos, ev_neg):
    """The entries of the (F, n_values) evaluation counts with weight, row-major: (rows, columns, positives there,
    negatives there, their sum)."""
    rows, cols = np.nonzero((ev_pos + ev_neg) > 0)
    flat = rows * ev_pos.shape[1] + cols
    ep, en = ev_pos.ravel().take(flat), ev_neg.ravel().take(flat)
    return rows, cols, ep, en, ep + en


def _binned(F, at, prob, n_bins):
    """Per-fit bin sums of the evaluation data: (count, positives, sum of p), each (F, n_bins), and NaN counts (F,).

    One flat bincount over fit x bin of the entries ``at`` (:func:`_evaluation_entries`,
    ``prob`` there); the entries left out have no evaluation weight and would add
    zeros, so the sums are those over the whole grid, bit for bit.
    """
    rows, _, ep, n = at[0], at[1], at[2], at[4]
    nan = np.isnan(prob)
    if nan.any():  # (opitz2024 isotonic outside the calibration range) left out of the bins, counted apart
        n_nan = np.bincount(rows, weights=np.where(nan, n, 0.0), minlength=F)
        p, keep, ep = np.where(nan, 0.0, prob), np.where(nan, 0.0, n), np.where(nan, 0.0, ep)
    else:
        n_nan, p, keep = np.zeros(F), prob, n
    flat = rows * n_bins + bin_ids(p, n_bins)
    size = F * n_bins
    count = np.bincount(flat, weights=keep, minlength=size).reshape(F, n_bins)
    positive = np.bincount(flat, weights=ep, minlength=size).reshape(F, n_bins)
    psum = np.bincount(flat, weights=keep * p, minlength=size).reshape(F, n_bins)
    return count, positive, psum, n_nan


def probabilities_binned(block: FitBlock, method: str, settings: FitSettings, n_bins: int, *, at=None, fitted=None):
    """:func:`_binned` sums of the block's fits' probabilities (:func:`_grid_probabilities`) by ``method``, at their
    evaluation values (``at``: :func:`_evaluation_entries`, when known; ``fitted``: as in :func:`run_fits`)."""
    at = _evaluation_entries(block.ev_pos, block.ev_neg) if at is None else at
    prob = _grid_probabilities(block, method, settings, at=at[:2], fitted=fitted)
    return _binned(len(block.ev_pos), at, prob, n_bins)


# -- both from one set of fits ------------------------------------------------------------


def logistic_starts(x, wpos, wneg, *, counts, inits):
    """:func:`logistic_rows` of the rows from each start of ``inits`` (raw (intercept, coef), or None), one setup.

    The conditioned grid, the penalty and the loss's basis depend on the
    calibration counts only; Newton's method then runs from each start on
    them.  Each result is that of ``logistic_rows(x, wpos, wneg, init=start,
    counts=counts)``, bit for bit (:func:`~beyondauc.metrics.core.logistic.logistic_params`'s
    steps, the setup not repeated).
    """
    if len(wpos) == 1:
        own = counts[0] > 0
        if not own.all():
            x, wpos, wneg, counts = x[own], wpos[:, own], wneg[:, own], counts[:, own]
    pos = np.ascontiguousarray(np.atleast_2d(wpos), dtype=np.float64)
    neg = np.ascontiguousarray(np.atleast_2d(wneg), dtype=np.float64)
    n = pos + neg
    tot = n.sum(axis=1)
    safe_tot = np.where(tot > 0, tot, 1.0)
    xs, mu, sd, e = conditioned_grid(x, n)
    objective = LogLoss(xs, pos, n, scaler_penalty(xs, counts))
    out = []
    for init in inits:  # a loop over starts (two)
        beta = newton(objective, initial_params(pos, safe_tot, init, mu, sd, e), tot > 0, max_iter=100, tol=1e-9)
        out.append(raw_params(beta[:, 0], beta[:, 1], mu, sd, e))
    return out


def _shared_fits(block, settings, init):
    """What :func:`run_fits` and :func:`_grid_probabilities` both fit, fitted once: their ``fitted`` (grid, probabilities).

    The logistic from the grid's warm start ``init`` and from the
    probabilities' cold start (one fit if ``init`` is None), and a lone
    fit's stump (both split it on its own calibration values).  Under
    ``reference="opitz2024"`` nothing: both read the given lbfgs parameters,
    and several fits' stumps are fitted by row blocks in one and all at once
    in the other.
    """
    grid, prob = {}, {}
    if settings.reference == "opitz2024":
        return grid, prob
    x, methods = block.x, settings.methods
    wpos, wneg = class_weighted(block.cal_pos, block.cal_neg, settings.class_weight)
    counts = block.cal_pos + block.cal_neg
    if len(wpos) == 1:  # a lone fit: both fitters keep only the values it has calibration weight at
        own = np.flatnonzero(counts[0] > 0)  # = (wpos + wneg)[0] > 0, the stump's test: a class weight is >= 1/2
        if len(own) < len(x):
            x, wpos, wneg, counts = x[own], wpos[:, own], wneg[:, own], counts[:, own]
    if "logistic" in methods:
        fits = logistic_starts(x, wpos, wneg, counts=counts, inits=(init,) if init is None else (init, None))
        grid["logistic"], prob["logistic"] = fits[0], fits[-1]
    if "stump" in methods and len(wpos) == 1:
        grid["stump"] = prob["stump"] = stump_params(x, wpos, wneg)
    return grid, prob


def block_tables(block: FitBlock, settings: FitSettings, *, init=None, grid=True, n_bins=None):
    """One block's confusions (:func:`run_fits`; None without ``grid``) and its bin sums per method
    (:func:`probabilities_binned`; None without ``n_bins``).

    The grid's logistic starts from ``init``, the probabilities' from the
    log-odds, as each does alone.  With both, what both fit alike is fitted
    once (:func:`_shared_fits`): every number is that of the two called
    apart, bit for bit.
    """
    fitted = _shared_fits(block, settings, init) if grid and n_bins is not None else ({}, {})
    conf = run_fits(block, settings, init=init, fitted=fitted[0]) if grid else None
    if n_bins is None:
        return conf, None
    at = _evaluation_entries(block.ev_pos, block.ev_neg)
    return conf, {
        m: probabilities_binned(block, m, settings, n_bins, at=at, fitted=fitted[1]) for m in settings.methods
    }


_BLAS = [None, -1]  # (the process's ThreadpoolController, len(sys.modules) when it was made)


def one_blas_thread():
    """``threadpool_limits(limits=1, user_api="blas")``, the libraries looked up once per process, not per call.

    Looking them up reads the process's memory maps (a fixed cost per model in the grid's tasks); they are looked up
    again when a module was imported since, which may have loaded another.
    """
    if _BLAS[1] != len(sys.modules):
        _BLAS[:] = [ThreadpoolController(), len(sys.modules)]
    return _BLAS[0].limit(limits=1, user_api="blas")


def repeat_means(scores):
    """Each score's mean over the repeats, NaN ones left out (NaN if all are): one ``nanmean`` of the stacked scores
    along the repeats, each row summed as ``nanmean`` of the row alone sums it."""
    names = list(scores)
    v = np.stack([np.asarray(scores[k], dtype=np.float64) for k in names])
    ok = np.isfinite(v).any(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(v, axis=1)
    return {k: float(mean[j]) if ok[j] else np.nan for j, k in enumerate(names)}


def as_columns(rows, columns):
    """The rows (dicts) as one list per column: a frame of these is that of the rows, made without a dict a row."""
    return {c: [r[c] for r in rows] for c in columns}


def positions(values, order):
    """Each value's position in ``order`` (a dict), as int64: one dict look-up a value, no ``Series.map``."""
    return np.fromiter((order[v] for v in values), dtype=np.int64, count=len(values))
