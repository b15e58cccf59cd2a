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

from ...utils.formatting import MISSING, format_number
from ...utils.validation import UndefinedMetricWarning, binarize_labels, check_int, check_option, check_scores
from ..core.kernel import grid_counts, stacked_counts
from ..core.views import each_model_view, sort_like
from .calibrator import METHODS, lbfgs_params
from .fits import FitBlock, FitSettings, bin_edges, bin_ids, one_blas_thread, probabilities_binned
from .grid import (
    check_grid_args,
    check_n_jobs,
    grid_context,
    grid_frame,
    map_models,
    warn_single_class,
)
from .grid_cells import (
    chunks,
    dataset_columns,
    fit_matrices,
    indata_datasets,
    indata_fits,
    model_cells,
    own_grid_fits,
)
from .protocols import grid_choices

if TYPE_CHECKING:
    from ...data.benchmark import Benchmark

__all__ = ["CalibrationErrors", "calibration_error_table", "expected_calibration_error", "reliability_bins"]

_ECE_COLUMNS = ["protocol", "method", "dataset", "domain", "model", "calibration", "ece", "n_evaluation", "n_nan"]
_RELIABILITY_COLUMNS = [
    "protocol",
    "method",
    "dataset",
    "model",
    "bin",
    "bin_low",
    "bin_high",
    "mean_predicted",
    "fraction_positive",
    "count",
]


def expected_calibration_error(
    y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 15, pos_label: object = None, strategy: str = "uniform"
) -> float:
    """Expected calibration error over equal-width (or equal-mass) probability bins.

    ``ECE = sum_b n_b / n * |mean(y)_b - mean(p)_b|`` over the bins of
    :func:`sklearn.calibration.calibration_curve`: with ``strategy="uniform"``
    the edges are ``linspace(0, 1, n_bins + 1)``; with ``"quantile"`` they are
    the ``linspace(0, 1, n_bins + 1)`` percentiles of ``y_prob`` (equal-mass
    bins; tied probabilities stay in one bin, so some bins may be empty).  A
    probability on an inner edge belongs to the bin below it.  Empty bins
    contribute nothing.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels ({0, 1}, {-1, 1}, booleans, or two values with
        ``pos_label``), or a graded correctness in [0, 1] (then
        ``mean(y)_b`` is the bin's mean quality).
    y_prob : array-like of shape (n,)
        Predicted probabilities of the positive class (or the confidence
        given with each answer), in [0, 1].
    n_bins : int, default=15
    pos_label : optional
        The positive label, when the labels need it.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-mass bins.

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

    >>> round(expected_calibration_error([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.9], n_bins=2, strategy="quantile"), 6)
    0.225

    Equal-mass bins {0.1, 0.2} and {0.3, 0.9}: ``|0.5 - 0.15| / 2 + |0.5 - 0.6| / 2``.
    """
    bins, mean_predicted, fraction_positive, count = reliability_bins(
        y_true, y_prob, n_bins=n_bins, pos_label=pos_label, strategy=strategy
    )
    return ece_from_bins(mean_predicted, fraction_positive, count)


def ece_from_bins(mean_predicted, fraction_positive, count):
    """``sum_b n_b / n * |fraction_b - mean_b|`` from the bins."""
    count = np.asarray(count, dtype=float)
    return float(np.sum(count * np.abs(np.asarray(fraction_positive) - np.asarray(mean_predicted))) / count.sum())


def reliability_bins(
    y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 15, pos_label: object = None, strategy: str = "uniform"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty bins of a reliability diagram, as ``calibration_curve`` forms them.

    ``y_true`` and ``strategy`` as in :func:`expected_calibration_error`.

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
    y = _labels_or_quality(y_true, pos_label)
    p = check_scores(y_prob, "y_prob")
    if len(p) != len(y):
        raise ValueError(f"`y_true` and `y_prob` must have the same length, got {len(y)} and {len(p)}")
    if len(p) == 0:
        raise ValueError("`y_prob` is empty: no examples to bin")
    if p.min() < 0 or p.max() > 1:
        bad = int(np.flatnonzero((p < 0) | (p > 1))[0])
        raise ValueError(f"`y_prob` must be probabilities in [0, 1], got {float(p[bad])!r} at position {bad}")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    if check_option(strategy, "strategy", ("uniform", "quantile")) == "uniform":
        b = bin_ids(p, n_bins)
    else:  # calibration_curve(strategy="quantile"): the percentiles of the probabilities as edges
        b = np.searchsorted(np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)[1:-1], p)
    count = np.bincount(b, minlength=n_bins)
    nz = np.flatnonzero(count)
    psum = np.bincount(b, weights=p, minlength=n_bins)
    ysum = np.bincount(b, weights=y, minlength=n_bins)
    return nz, psum[nz] / count[nz], ysum[nz] / count[nz], count[nz]


def _labels_or_quality(y_true, pos_label):
    """Binary labels as 0/1 (:func:`binarize_labels`), or a graded correctness in [0, 1] as floats."""
    arr = np.asarray(y_true)
    if pos_label is None and arr.ndim == 1 and arr.dtype.kind == "f" and np.isfinite(arr).all():
        graded = (arr != 0) & (arr != 1) & (arr != -1)
        if graded.any() and arr.min() >= 0 and arr.max() <= 1:
            return arr.astype(np.float64)
    return binarize_labels(y_true, "y_true", pos_label=pos_label)


def _model_bins(ctx, model, s, *, n_bins):
    """Pooled bin sums of one model: {(protocol, dataset index, method): (count, positive, psum, n_nan)}.

    The fits of :func:`~beyondauc.metrics.calibration.grid_cells.model_cells`, block by
    block (:func:`~beyondauc.metrics.calibration.fits.block_tables`), without the decisions.
    """
    y, codes, methods, class_weight = ctx.y, ctx.codes, ctx.methods, ctx.class_weight
    D = len(ctx.datasets)
    x, inv, _, _ = grid_counts(y, s)
    out = {}
    fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
    if fits and ctx.reference != "opitz2024":  # each fit on its own rows' grid
        parts = dataset_columns(inv, y, codes, len(x), D)
        out.update(own_grid_fits(ctx, x, fits, parts, None, grid=False, n_bins=n_bins)[1])
    elif fits:  # the reproduction mode: batched on the model's grid
        pos_ds, neg_ds = stacked_counts(inv, y, codes, len(x), D)
        G_cal, G_ev = fit_matrices(fits, D)
        cal_pos, cal_neg, ev_pos, ev_neg = G_cal @ pos_ds, G_cal @ neg_ds, G_ev @ pos_ds, G_ev @ neg_ds
        lbfgs = None
        if "logistic" in methods:
            lbfgs = lbfgs_params([(s[np.isin(codes, f.cal)], y[np.isin(codes, f.cal)]) for f in fits], class_weight)
        settings = FitSettings(methods, class_weight, ctx.reference)
        for m in methods:
            parts = []
            for sl in chunks(len(fits), len(x)):
                block = FitBlock(
                    x,
                    cal_pos[sl],
                    cal_neg[sl],
                    ev_pos[sl],
                    ev_neg[sl],
                    lbfgs=None if lbfgs is None else (lbfgs[0][sl], lbfgs[1][sl]),
                )
                parts.append(probabilities_binned(block, m, settings, n_bins))
            binned = [np.concatenate([p[j] for p in parts]) for j in range(4)]
            for k, f in enumerate(fits):
                if cal_pos[k].sum() + cal_neg[k].sum() == 0:  # no calibration data: nothing to bin
                    out[(f.protocol, f.dataset, m)] = (np.zeros(n_bins),) * 3 + (0.0,)
                else:
                    out[(f.protocol, f.dataset, m)] = tuple(b[k] for b in binned)
    for i in indata_datasets(ctx):
        out.update(indata_fits(ctx, s, i, grid=False, n_bins=n_bins)[1])
    return out


def _model_cells_and_bins(ctx, model, s, *, n_bins):
    """(:func:`~beyondauc.metrics.calibration.grid_cells.model_cells`, :func:`_model_bins`) of one model, each distinct fit
    computed once (under ``reference="opitz2024"`` the two apart)."""
    if ctx.reference == "opitz2024":
        return model_cells(ctx, model, s), _model_bins(ctx, model, s, n_bins=n_bins)
    return model_cells(ctx, model, s, n_bins=n_bins)


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
        return (
            f"CalibrationErrors(n_bins={self.n_bins}, cells={len(self.ece)}, "
            f"mean_ece={format_number(float(self.ece['ece'].mean()), 4, minus='-')})"
        )

    def _repr_html_(self) -> str:
        summary = self.ece.pivot_table(index="model", columns=["protocol", "method"], values="ece", aggfunc="mean")
        return (
            f"<p>Expected calibration error ({self.n_bins} equal-width bins), mean over datasets</p>"
            + summary.to_html(float_format=format_number, na_rep=MISSING)
        )


def _errors_of_views(parts, bench):
    """One :class:`CalibrationErrors` of the per-model views of an answers benchmark."""
    return CalibrationErrors(
        ece=sort_like(pd.concat([e.ece for e in parts], ignore_index=True), bench),
        reliability=sort_like(pd.concat([e.reliability for e in parts], ignore_index=True), bench),
        n_bins=parts[0].n_bins,
    )


@each_model_view(combine=_errors_of_views)
def calibration_error_table(
    bench: Benchmark,
    *,
    protocols: str | Sequence[str] | None = None,
    methods: str | Sequence[str] = METHODS,
    n_bins: int = 15,
    class_weight: str | None = None,
    n_repeats: int = 100,
    random_state: int | None = 0,
    reference: str | None = None,
    n_jobs: int = 1,
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
    protocols, methods = grid_choices(bench, protocols, methods)  # None: the protocols the data allows
    seed = check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state, reference)
    n_bins, n_jobs = check_int(n_bins, "n_bins", minimum=1), check_n_jobs(n_jobs)
    ctx = grid_context(
        bench, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, reference=reference
    )
    with one_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        per_model = list(map_models(ctx, bench, n_jobs, functools.partial(_model_bins, n_bins=n_bins)))
    return _errors_table(ctx, bench, per_model, n_bins)


def _pairs_of_views(parts, bench):
    """The (grid, :class:`CalibrationErrors`) of the per-model views of an answers benchmark."""
    return (
        sort_like(pd.concat([g for g, _ in parts], ignore_index=True), bench),
        _errors_of_views([e for _, e in parts], bench),
    )


@each_model_view(combine=_pairs_of_views)
def grid_and_calibration_errors(
    bench: Benchmark,
    *,
    protocols: str | Sequence[str] | None = None,
    methods: str | Sequence[str] = METHODS,
    n_bins: int = 15,
    class_weight: str | None = None,
    n_repeats: int = 100,
    random_state: int | None = 0,
    reference: str | None = None,
    n_jobs: int = 1,
) -> tuple[pd.DataFrame, CalibrationErrors]:
    """:func:`~beyondauc.expected_accuracy_grid` and :func:`calibration_error_table` of the same arguments, at once.

    Both fit the same calibrators on the same rows: here each model's
    scores are sorted, split by dataset and scattered onto each fit's rows
    once, and what both fit alike (the stumps; the logistic's conditioned
    grid, penalty and sums) is fitted once.  The logistic of the grid still
    starts from the fit on all the data and that of the probabilities from
    the log-odds, as each does alone, so both tables are those of the two
    functions called apart, bit for bit.

    Parameters
    ----------
    bench : Benchmark
    protocols, methods, n_bins, class_weight, n_repeats, random_state, reference, n_jobs
        As in :func:`calibration_error_table`.

    Returns
    -------
    grid : pandas.DataFrame
        :func:`~beyondauc.expected_accuracy_grid`'s (without intervals).
    errors : CalibrationErrors
        :func:`calibration_error_table`'s.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.calibration.reliability import grid_and_calibration_errors
    >>> grid, errors = grid_and_calibration_errors(load_demo(), protocols=["xdomain"], methods=["stump"])
    >>> len(grid) == len(errors.ece)
    True
    """
    protocols, methods = grid_choices(bench, protocols, methods)  # None: the protocols the data allows
    seed = check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state, reference)
    n_bins, n_jobs = check_int(n_bins, "n_bins", minimum=1), check_n_jobs(n_jobs)
    warn_single_class(bench)
    ctx = grid_context(
        bench, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, reference=reference
    )
    rows, per_model = [], []
    with one_blas_thread():
        for cells, bins in map_models(ctx, bench, n_jobs, functools.partial(_model_cells_and_bins, n_bins=n_bins)):
            rows.extend(cells)
            per_model.append(bins)
    return grid_frame(rows, protocols, methods, bench), _errors_table(ctx, bench, per_model, n_bins)


def _errors_table(ctx, bench, per_model, n_bins):
    """The :class:`CalibrationErrors` of each model's bin sums (:func:`_model_bins`), in ``bench.models``' order.

    The cells' bins are stacked once, (cells, bins), and each table is made once from its columns, already in the
    order of protocol, method, dataset, model (and bin): no frame, no string look-up per model or cell.
    """
    keys, sums = [], []
    for k, (_model, bins) in enumerate(zip(bench.models, per_model)):
        for a, p in enumerate(ctx.protocols):
            fits, indata = ctx.plans[p]
            cells = sorted([(f.dataset, p) for f in fits] + [(i, "indata") for i in indata])
            for c, m in enumerate(ctx.methods):
                for i, used in cells:
                    keys.append((a, c, i, k, used))
                    sums.append(bins[(used, i, m)])
    count, positive, psum = (
        np.array([x[j] for x in sums], dtype=np.float64).reshape(len(sums), n_bins) for j in range(3)
    )
    total = count.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ece = np.where(total > 0, np.abs(positive - psum).sum(axis=1) / total, np.nan)
    codes = np.array([k[:4] for k in keys], dtype=np.int64).reshape(len(keys), 4)
    names = {
        "protocol": list(ctx.protocols),
        "method": list(ctx.methods),
        "dataset": list(ctx.datasets),
        "model": list(bench.models),
    }
    order = np.lexsort(codes.T[::-1])  # by protocol, method, dataset, model; stable
    labels = {name: [names[name][x] for x in codes[order, j].tolist()] for j, name in enumerate(names)}
    ece_table = pd.DataFrame(
        {
            **{name: labels[name] for name in ("protocol", "method", "dataset")},
            "domain": [ctx.domains.get(d) for d in labels["dataset"]],
            "model": labels["model"],
            "calibration": [keys[j][4] for j in order.tolist()],
            "ece": ece[order].tolist(),
            "n_evaluation": [int(round(t)) for t in total[order].tolist()],
            "n_nan": [int(round(x[3])) for x in (sums[j] for j in order.tolist())],
        },
        columns=_ECE_COLUMNS,
    )
    return CalibrationErrors(
        ece=ece_table, reliability=_reliability_frame(codes, names, count, positive, psum, n_bins), n_bins=n_bins
    )


def _reliability_frame(codes, names, count, positive, psum, n_bins):
    """One tidy frame of the cells' non-empty bins (``codes``: each cell's protocol, method, dataset, model
    positions in ``names``), ordered by protocol, method, dataset, model, bin."""
    cell, b = np.nonzero(count > 0)  # each cell's non-empty bins, ascending
    order = np.lexsort([b, *codes[cell].T[::-1]])
    cell, b = cell[order], b[order]
    edges = bin_edges(n_bins)
    n = count[cell, b]
    return pd.DataFrame(
        {
            **{name: np.array(names[name], dtype=object)[codes[cell, j]] for j, name in enumerate(names)},
            "bin": b.astype(np.int64),
            "bin_low": edges[b],
            "bin_high": edges[b + 1],
            "mean_predicted": psum[cell, b] / n,
            "fraction_positive": positive[cell, b] / n,
            "count": np.rint(n).astype(np.int64),
        },
        columns=_RELIABILITY_COLUMNS,
    )
