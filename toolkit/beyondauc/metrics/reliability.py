"""How well calibrated are the probabilities of a calibrator learnt on other data?

:func:`expected_accuracy` asks whether the *decisions* of a transferred
calibrator are right; this module asks whether its *probabilities* are
honest.  :func:`expected_calibration_error` is the binned ECE over the
equal-width bins of :func:`sklearn.calibration.calibration_curve`;
:func:`calibration_error_table` computes it for every protocol x method x
dataset x model of a benchmark, together with the reliability diagram's
bins, from the same batched fits as :func:`expected_accuracy_grid`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import expit
from threadpoolctl import threadpool_limits

from .views import each_model_view, sort_like
from .fitting import (
    _single_class,
    class_weighted,
    isotonic_knots,
    isotonic_transform,
    logistic_params,
    stump_grid,
    stump_params,
    within_range,
)
from .kernel import _grid_counts, _stacked_counts
from .protocols import grid_protocols
from ..utils.formatting import MISSING, format_number
from ..utils.validation import UndefinedMetricWarning, binarize_labels, check_int, check_scores
from .calibration import (
    METHODS,
    _Context,
    _check_grid_args,
    check_n_jobs,
    _chunks,
    _dataset_columns,
    _fit_columns,
    _indata_train,
    _logistic_rows,
    _lbfgs_params,
    _map_models,
    protocol_plan,
    _splits,
)

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark

__all__ = ["CalibrationErrors", "calibration_error_table", "expected_calibration_error", "reliability_bins"]

_ECE_COLUMNS = ["protocol", "method", "dataset", "domain", "model", "calibration", "ece", "n_evaluation", "n_nan"]
_RELIABILITY_COLUMNS = ["protocol", "method", "dataset", "model", "bin", "bin_low", "bin_high", "mean_predicted",
                        "fraction_positive", "count"]


def _bin_edges(n_bins):
    """``calibration_curve``'s uniform edges: ``linspace(0, 1, n_bins + 1)``."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def _bin_ids(prob, n_bins):
    """Bin of each probability exactly as ``calibration_curve``: ``searchsorted(edges[1:-1], p)``.

    An inner edge belongs to the bin below it; 0 to the first bin, 1 to the last.
    """
    return np.searchsorted(_bin_edges(n_bins)[1:-1], prob)


def expected_calibration_error(y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 15,
                               pos_label: object = None) -> float:
    """Expected calibration error over equal-width probability bins.

    ``ECE = sum_b n_b / n * |mean(y)_b - mean(p)_b|`` over the bins of
    :func:`sklearn.calibration.calibration_curve` with ``strategy="uniform"``
    (edges ``linspace(0, 1, n_bins + 1)``; a probability on an inner edge
    belongs to the bin below it).  Empty bins contribute nothing.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels ({0, 1}, {-1, 1}, booleans, or two values with ``pos_label``).
    y_prob : array-like of shape (n,)
        Predicted probabilities of the positive class, in [0, 1].
    n_bins : int, default=15
    pos_label : optional
        The positive label, when the labels need it.

    Returns
    -------
    float
        In [0, 1]; 0 when, in every bin, the mean prediction equals the
        fraction of positives.

    Examples
    --------
    >>> from beyondauc import expected_calibration_error
    >>> round(expected_calibration_error([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], n_bins=2), 6)
    0.225

    Bins [0, 0.5] and (0.5, 1]: ``|0 - 0.2| / 2 + |1 - 0.75| / 2``.
    """
    bins, mean_predicted, fraction_positive, count = reliability_bins(y_true, y_prob, n_bins=n_bins,
                                                                     pos_label=pos_label)
    return ece_from_bins(mean_predicted, fraction_positive, count)


def ece_from_bins(mean_predicted, fraction_positive, count):
    """``sum_b n_b / n * |fraction_b - mean_b|`` from the bins."""
    count = np.asarray(count, dtype=float)
    return float(np.sum(count * np.abs(np.asarray(fraction_positive) - np.asarray(mean_predicted))) / count.sum())


def reliability_bins(y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 15, pos_label: object = None,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty bins of a reliability diagram, as ``calibration_curve`` forms them.

    Returns
    -------
    bins, mean_predicted, fraction_positive, count : ndarray
        Index (0-based) of each non-empty bin of ``linspace(0, 1, n_bins + 1)``,
        the mean probability in it (``calibration_curve``'s ``prob_pred``),
        the fraction of positives (its ``prob_true``) and the number of examples.

    Examples
    --------
    >>> from beyondauc import reliability_bins
    >>> bins, mean_predicted, fraction_positive, count = reliability_bins(
    ...     [0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], n_bins=2)
    >>> bins.tolist(), mean_predicted.tolist(), fraction_positive.tolist(), count.tolist()
    ([0, 1], [0.2, 0.75], [0.0, 1.0], [2, 2])
    """
    y = binarize_labels(y_true, "y_true", pos_label=pos_label)
    p = check_scores(y_prob, "y_prob")
    if len(p) != len(y):
        raise ValueError(f"`y_true` and `y_prob` must have the same length, got {len(y)} and {len(p)}")
    if len(p) == 0:
        raise ValueError("`y_prob` is empty: no examples to bin")
    if p.min() < 0 or p.max() > 1:
        bad = int(np.flatnonzero((p < 0) | (p > 1))[0])
        raise ValueError(f"`y_prob` must be probabilities in [0, 1], got {float(p[bad])!r} at position {bad}")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    b = _bin_ids(p, n_bins)
    count = np.bincount(b, minlength=n_bins)
    nz = np.flatnonzero(count)
    psum = np.bincount(b, weights=p, minlength=n_bins)
    ysum = np.bincount(b, weights=y, minlength=n_bins)
    return nz, psum[nz] / count[nz], ysum[nz] / count[nz], count[nz]


# -- batched probabilities on the score grid -------------------------------------------

def _grid_probabilities(x, cal_pos, cal_neg, method, class_weight, *, at, reference=None, lbfgs=None, init=None):
    """Probability of the positive class of F fits at the grid entries ``at``: (rows, columns), row-major.

    The probabilities of :meth:`ScoreCalibrator.predict_proba` fitted on each
    row's calibration counts: Platt (all rows at once), isotonic (scipy's PAVA
    per row, scikit-learn's interpolation), the stump's weighted leaf
    fractions (all rows at once).  NaN where ``reference="opitz2024"``
    isotonic leaves the calibration range.  A single-class row is that class.
    Each probability is the one the whole grid would hold there (the same
    arithmetic), computed only where it is asked: the evaluation's values.
    """
    rows, cols = at
    wpos, wneg = class_weighted(cal_pos, cal_neg, class_weight)
    F, m = wpos.shape
    single = _single_class(wpos, wneg)
    if method == "logistic":
        b0, b1 = lbfgs if reference == "opitz2024" else _logistic_rows(x, wpos, wneg, init=init,
                                                                        counts=cal_pos + cal_neg)
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
    """The (row, column) entries of the (F, n_values) evaluation counts with weight, row-major."""
    return np.nonzero((ev_pos + ev_neg) > 0)


def _binned(F, at, prob, ev_pos, ev_neg, n_bins):
    """Per-fit bin sums of the evaluation data: (count, positives, sum of p), each (F, n_bins), and NaN counts (F,).

    One flat bincount over fit x bin of the entries ``at`` (:func:`_evaluation_entries`,
    ``prob`` there); the entries left out have no evaluation weight and would add
    zeros, so the sums are those over the whole grid, bit for bit.
    """
    rows, cols = at
    nan = np.isnan(prob)
    flat = rows * ev_pos.shape[1] + cols
    ep, en = ev_pos.ravel().take(flat), ev_neg.ravel().take(flat)
    n = ep + en
    p = np.where(nan, 0.0, prob)
    flat = rows * n_bins + _bin_ids(p, n_bins)
    keep = np.where(nan, 0.0, n)
    size = F * n_bins
    count = np.bincount(flat, weights=keep, minlength=size).reshape(F, n_bins)
    positive = np.bincount(flat, weights=np.where(nan, 0.0, ep), minlength=size).reshape(F, n_bins)
    psum = np.bincount(flat, weights=keep * p, minlength=size).reshape(F, n_bins)
    return count, positive, psum, np.bincount(rows, weights=np.where(nan, n, 0.0), minlength=F)


def _probabilities_binned(x, cal_pos, cal_neg, ev_pos, ev_neg, method, class_weight, n_bins, **kw):
    """:func:`_binned` sums of F fits' probabilities (:func:`_grid_probabilities`) at their evaluation values."""
    at = _evaluation_entries(ev_pos, ev_neg)
    prob = _grid_probabilities(x, cal_pos, cal_neg, method, class_weight, at=at, **kw)
    return _binned(len(ev_pos), at, prob, ev_pos, ev_neg, n_bins)


def _own_grid_bins(ctx, x, fits, parts, n_bins):
    """Bin sums of the fits calibrated on whole datasets, each on its own rows' grid
    (:func:`~beyondauc.metrics.calibration._fit_columns`): {(protocol, dataset index, method): sums}."""
    out = {}
    for f in fits:  # a loop over fits
        u, cp, cn, ep, en = _fit_columns(parts, f, len(x))
        for m in ctx.methods:
            if not len(u) or (cp + cn).sum() == 0:  # no calibration data: nothing to bin
                out[(f.protocol, f.dataset, m)] = (np.zeros(n_bins),) * 3 + (0.0,)
                continue
            binned = _probabilities_binned(x[u], cp, cn, ep, en, m, ctx.class_weight, n_bins)
            out[(f.protocol, f.dataset, m)] = tuple(b[0] for b in binned)
    return out


def _model_bins(ctx, model, s, *, n_bins):
    """Pooled bin sums of one model: {(protocol, dataset index, method): (count, positive, psum, n_nan)}."""
    y, codes, methods, class_weight = ctx.y, ctx.codes, ctx.methods, ctx.class_weight
    opitz = ctx.reference == "opitz2024"
    D = len(ctx.datasets)
    x, inv, _, _ = _grid_counts(y, s)
    out = {}
    fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
    if fits and not opitz:  # each fit on its own rows' grid
        out.update(_own_grid_bins(ctx, x, fits, _dataset_columns(inv, y, codes, len(x), D), n_bins))
    elif fits:  # the reproduction mode: batched on the model's grid
        pos_ds, neg_ds = _stacked_counts(inv, y, codes, len(x), D)
        G_cal = np.zeros((len(fits), D))
        G_ev = np.zeros((len(fits), D))
        for k, f in enumerate(fits):
            G_cal[k, list(f.cal)] = 1.0
            G_ev[k, list(f.evl)] = 1.0
        cal_pos, cal_neg, ev_pos, ev_neg = G_cal @ pos_ds, G_cal @ neg_ds, G_ev @ pos_ds, G_ev @ neg_ds
        lbfgs = None
        if "logistic" in methods:
            lbfgs = _lbfgs_params([(s[np.isin(codes, f.cal)], y[np.isin(codes, f.cal)]) for f in fits], class_weight)
        for m in methods:
            parts = []
            for sl in _chunks(len(fits), len(x)):
                parts.append(_probabilities_binned(
                    x, cal_pos[sl], cal_neg[sl], ev_pos[sl], ev_neg[sl], m, class_weight, n_bins,
                    reference=ctx.reference, lbfgs=None if lbfgs is None else (lbfgs[0][sl], lbfgs[1][sl])))
            binned = [np.concatenate([p[j] for p in parts]) for j in range(4)]
            for k, f in enumerate(fits):
                if cal_pos[k].sum() + cal_neg[k].sum() == 0:  # no calibration data: nothing to bin
                    out[(f.protocol, f.dataset, m)] = (np.zeros(n_bins),) * 3 + (0.0,)
                else:
                    out[(f.protocol, f.dataset, m)] = tuple(b[k] for b in binned)
    for i in sorted({i for p in ctx.protocols for i in ctx.plans[p][1]}):
        sl = slice(int(ctx.offsets[i]), int(ctx.offsets[i + 1]))
        n_i = sl.stop - sl.start
        tests = _splits(n_i, ctx.n_repeats, ctx.seed)
        if tests is None:
            for m in methods:
                out[("indata", i, m)] = (np.zeros(n_bins),) * 3 + (0.0,)
            continue
        yd, sd = y[sl], s[sl]
        xd, invd, full_pos, full_neg = _grid_counts(yd, sd)
        trains = _indata_train(n_i, ctx.n_repeats, ctx.seed) if opitz and "logistic" in methods else None
        sums = {m: [np.zeros(n_bins), np.zeros(n_bins), np.zeros(n_bins), 0.0] for m in methods}
        n_test = tests.shape[1]
        for ch in _chunks(ctx.n_repeats, len(xd)):
            R = ch.stop - ch.start
            rows = tests[ch]
            groups = np.repeat(np.arange(R), n_test)
            ep, en = _stacked_counts(invd[rows.ravel()], yd[rows.ravel()], groups, len(xd), R, presorted=True)
            lbfgs = _lbfgs_params([(sd[t], yd[t]) for t in trains[ch]], class_weight) if trains is not None else None
            for m in methods:
                binned = _probabilities_binned(xd, full_pos - ep, full_neg - en, ep, en, m, class_weight, n_bins,
                                               reference=ctx.reference, lbfgs=lbfgs)
                for j in range(4):  # all repeats pooled
                    sums[m][j] = sums[m][j] + binned[j].sum(axis=0)
        for m in methods:
            out[("indata", i, m)] = tuple(sums[m])
    return out


@dataclass(frozen=True)
class CalibrationErrors:
    """Calibration quality of transferred calibrators, as two tidy tables.

    Attributes
    ----------
    ece : pandas.DataFrame
        One row per protocol x method x dataset x model: ``protocol``,
        ``method``, ``dataset``, ``domain``, ``model``, ``calibration`` (the
        protocol really used; ``indata`` where ``indomain`` fell back),
        ``ece``, ``n_evaluation`` (probabilities binned; for ``indata`` summed
        over the repeats) and ``n_nan`` (evaluation examples without a
        probability: ``reference="opitz2024"`` isotonic outside the
        calibration range; left out of the bins).
    reliability : pandas.DataFrame
        The reliability diagrams: one row per non-empty bin of each cell,
        ``protocol``, ``method``, ``dataset``, ``model``, ``bin`` (0-based),
        ``bin_low``, ``bin_high``, ``mean_predicted``, ``fraction_positive``,
        ``count``.
    n_bins : int
    """

    ece: pd.DataFrame = field(repr=False)
    reliability: pd.DataFrame = field(repr=False)
    n_bins: int = 15

    def __repr__(self) -> str:
        return (f"CalibrationErrors(n_bins={self.n_bins}, cells={len(self.ece)}, "
                f"mean_ece={format_number(float(self.ece['ece'].mean()), 4, minus='-')})")

    def _repr_html_(self) -> str:
        summary = self.ece.pivot_table(index="model", columns=["protocol", "method"], values="ece", aggfunc="mean")
        return (f"<p>Expected calibration error ({self.n_bins} equal-width bins), mean over datasets</p>"
                + summary.to_html(float_format=format_number, na_rep=MISSING))


def _errors_of_views(parts, bench):
    """One :class:`CalibrationErrors` of the per-model views of an answers benchmark."""
    return CalibrationErrors(ece=sort_like(pd.concat([e.ece for e in parts], ignore_index=True), bench),
                             reliability=sort_like(pd.concat([e.reliability for e in parts], ignore_index=True), bench),
                             n_bins=parts[0].n_bins)


@each_model_view(combine=_errors_of_views)
def calibration_error_table(
    bench: Benchmark, *, protocols: str | Sequence[str] | None = None, methods: str | Sequence[str] = METHODS,
    n_bins: int = 15, class_weight: str | None = None, n_repeats: int = 100, random_state: int | None = 0,
    reference: str | None = None, n_jobs: int = 1,
) -> CalibrationErrors:
    """ECE and reliability bins of the probabilities a calibrator learnt on other data gives.

    For every protocol x method x dataset x model, the calibrator is fitted on
    the protocol's calibration data exactly as in :func:`expected_accuracy`
    (same fits, same seeded ``indata`` splits) and its probabilities on the
    evaluation data are binned like :func:`expected_calibration_error`.
    For ``indata`` the evaluation examples of all ``n_repeats`` splits are
    pooled (one reliability diagram per cell; an example counts once per
    split that holds it out).

    Parameters
    ----------
    bench : Benchmark
    protocols, methods : sequence of str, default: all
        The default protocols are those the data allows, as in
        :func:`expected_accuracy_grid`.
    n_bins : int, default=15
    class_weight : {None, "balanced"}
        Note that balanced weights shift the probabilities towards the
        minority class, so they are not meant to be calibrated.
    n_repeats, random_state, reference, n_jobs
        As in :func:`expected_accuracy`.

    Returns
    -------
    CalibrationErrors
        ``.ece`` and ``.reliability`` tidy DataFrames.

    Notes
    -----
    Each model's scores are sorted once; each fit's probability is computed
    at every distinct score (Platt and stump for all fits at once, isotonic
    by one PAVA call per fit) and binned for all fits by one flat bincount
    of the evaluation counts -- no loop over examples.  A cell without
    calibration or evaluation data has ECE NaN.

    Examples
    --------
    >>> from beyondauc import load_demo, calibration_error_table
    >>> res = calibration_error_table(load_demo(), protocols=["xdomain"], methods=["logistic"])
    >>> list(res.ece.columns[:7])
    ['protocol', 'method', 'dataset', 'domain', 'model', 'calibration', 'ece']
    >>> bool(res.ece["ece"].between(0, 1).all())
    True
    >>> list(res.reliability.columns[4:])
    ['bin', 'bin_low', 'bin_high', 'mean_predicted', 'fraction_positive', 'count']
    """
    protocols = grid_protocols(bench, protocols)  # None: every protocol the data allows
    if isinstance(protocols, str):
        protocols = [protocols]
    if isinstance(methods, str):
        methods = [methods]
    protocols, methods = list(dict.fromkeys(protocols)), list(dict.fromkeys(methods))
    seed = _check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state, reference)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    n_jobs = check_n_jobs(n_jobs)
    ctx = _Context(
        y=bench.labels(), codes=bench.dataset_codes(), offsets=bench._offsets, datasets=bench.datasets,
        domains=dict(bench.domains), protocols=tuple(protocols), methods=tuple(methods),
        plans={p: protocol_plan(bench, p) for p in protocols}, class_weight=class_weight, n_repeats=n_repeats, seed=seed,
        reference=reference,
    )
    edges = _bin_edges(n_bins)
    ece_rows, rel_keys, rel_bins, rel_vals = [], [], [], []
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        per_model = _map_models(ctx, bench, n_jobs, functools.partial(_model_bins, n_bins=n_bins))
        for model, bins in zip(bench.models, per_model):
            for p in protocols:
                fits, indata = ctx.plans[p]
                cells = sorted([(f.dataset, p) for f in fits] + [(i, "indata") for i in indata])
                for m in methods:
                    for i, used in cells:
                        count, positive, psum, n_nan = bins[(used, i, m)]
                        total = count.sum()
                        ece = float(np.abs(positive - psum).sum() / total) if total > 0 else np.nan
                        d = ctx.datasets[i]
                        ece_rows.append(dict(protocol=p, method=m, dataset=d, domain=ctx.domains.get(d), model=model,
                                             calibration=used, ece=ece, n_evaluation=int(round(total)),
                                             n_nan=int(round(n_nan))))
                        nz = np.flatnonzero(count > 0)
                        rel_keys.append((p, m, d, model, len(nz)))
                        rel_bins.append(nz)
                        rel_vals.append(np.stack([psum[nz] / count[nz], positive[nz] / count[nz], count[nz]]))
    rel = _reliability_frame(rel_keys, rel_bins, rel_vals, edges)
    ece = _ordered(pd.DataFrame(ece_rows, columns=_ECE_COLUMNS), protocols, methods, bench)
    rel = _ordered(rel, protocols, methods, bench, extra="bin")
    return CalibrationErrors(ece=ece, reliability=rel, n_bins=n_bins)


def _reliability_frame(keys, bins, vals, edges):
    """One tidy frame from the cells' non-empty bins (built once, not per cell)."""
    reps = np.array([k[4] for k in keys], dtype=np.int64)
    b = np.concatenate(bins) if bins else np.zeros(0, dtype=np.int64)
    v = np.concatenate(vals, axis=1) if vals else np.zeros((3, 0))
    cols = {name: np.repeat(np.array([k[j] for k in keys], dtype=object), reps)
            for j, name in enumerate(("protocol", "method", "dataset", "model"))}
    return pd.DataFrame({
        **cols, "bin": b.astype(np.int64), "bin_low": edges[b], "bin_high": edges[b + 1], "mean_predicted": v[0],
        "fraction_positive": v[1], "count": np.rint(v[2]).astype(np.int64),
    }, columns=_RELIABILITY_COLUMNS)


def _ordered(frame, protocols, methods, bench, extra=None):
    order = {
        "protocol": {p: i for i, p in enumerate(protocols)},
        "method": {m: i for i, m in enumerate(methods)},
        "dataset": {d: i for i, d in enumerate(bench.datasets)},
        "model": {m: i for i, m in enumerate(bench.models)},
    }
    keys = [frame[c].map(order[c]).to_numpy() for c in ("model", "dataset", "method", "protocol")]
    if extra is not None:
        keys.insert(0, frame[extra].to_numpy())
    return frame.iloc[np.lexsort(keys)].reset_index(drop=True)
