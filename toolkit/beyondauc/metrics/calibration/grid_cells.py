"""One model's cells of the AUC vs expected accuracy grid: every protocol's fits, method by method.

:func:`model_cells` sorts a model's scores once, splits them by dataset
(:func:`dataset_columns`) and fits each calibration on its own rows' grid
(:func:`fit_columns`), or, under ``reference="opitz2024"``, in chunks of fits
on the model's grid; the datasets calibrated within (``indata``) run their
repeated splits in chunks of repeats (:func:`indata_fits`).  With ``n_bins``
the same fits also give the reliability bin sums of the calibration errors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.fitting import class_weighted
from ..core.kernel import (
    auc_from_counts,
    grid_counts,
    scores_from_confusion,
    stacked_counts,
)
from ..core.logistic import logistic_params
from .calibrator import lbfgs_params
from .fits import FitBlock, FitSettings, block_tables, repeat_means, run_fits
from .protocol_plans import indata_train, splits

__all__ = [
    "chunks",
    "dataset_columns",
    "fit_columns",
    "fit_matrices",
    "indata_datasets",
    "indata_fits",
    "model_cells",
    "own_grid_fits",
]

_CHUNK = 131_072  # grid cells per batch of fits (bounds memory, keeps batches cache-sized)


def dataset_columns(inv, y, codes, m, D):
    """Each dataset's own part of the model's grid: D tuples (columns ascending, positives, negatives).

    One sort of the examples by (dataset, grid column): O(n log n), never (D, m).
    """
    key = codes.astype(np.int64) * m + inv
    uk, where, n = np.unique(key, return_inverse=True, return_counts=True)
    pos = np.bincount(where.ravel(), weights=np.asarray(y, dtype=np.float64), minlength=len(uk))
    ds, cols = np.divmod(uk, m)
    b = np.searchsorted(ds, np.arange(D + 1))
    return [(cols[b[d] : b[d + 1]], pos[b[d] : b[d + 1]], n[b[d] : b[d + 1]] - pos[b[d] : b[d + 1]]) for d in range(D)]


def fit_columns(parts, fit, m=None):
    """A fit's own grid: (the model's grid columns its calibration or evaluation rows take, and its
    calibration positives, negatives and evaluation positives, negatives there, each (1, columns)).

    Each dataset's columns scattered onto the model's grid (``m`` values; default: past the
    largest column): O(rows of the fit + m), no sort.  Integer counts: the sums are exact.
    """
    ds = (*fit.cal, *fit.evl)
    if m is None:
        m = 1 + max((int(parts[d][0][-1]) for d in ds if len(parts[d][0])), default=-1)
    present = np.zeros(m, dtype=bool)
    for d in ds:  # a loop over datasets
        present[parts[d][0]] = True
    u, out = np.flatnonzero(present), []
    for which, j in ((fit.cal, 1), (fit.cal, 2), (fit.evl, 1), (fit.evl, 2)):
        acc = np.zeros(m)
        for d in which:  # a dataset's columns are distinct: one scatter each
            acc[parts[d][0]] += parts[d][j]
        out.append(acc[u][None])
    return (u, *out)


def chunks(n_fits, n_values):
    size = max(1, _CHUNK // max(n_values, 1))
    return [slice(i, min(i + size, n_fits)) for i in range(0, n_fits, size)]


@dataclass(frozen=True)
class ModelGrid:
    """One model's scores on its grid of distinct values.

    Attributes
    ----------
    s : ndarray (n,)
        The scores.
    x : ndarray (m,)
        The distinct scores, ascending.
    inv : ndarray (n,)
        Each example's column of ``x``.
    parts : list
        Each dataset's own part of the grid (:func:`dataset_columns`).
    totals : tuple of ndarray (m,)
        The model's positives and negatives at each value (the logistic's warm start).
    """

    s: np.ndarray
    x: np.ndarray
    inv: np.ndarray
    parts: list
    totals: tuple


@dataclass(frozen=True)
class CellKey:
    """Which cell of the grid a row holds: its protocol, method and dataset (index), and the protocol really
    used to calibrate (``indata`` where ``indomain`` fell back)."""

    protocol: str
    method: str
    dataset: int
    calibration: str


def model_cells(ctx, model, s, *, n_bins=None):
    """All (protocol, method, dataset) cells of one model, as a list of dicts.

    With ``n_bins`` (not under ``reference="opitz2024"``), ``(rows, bins)``:
    also the reliability bin sums of the same fits, as
    :func:`~beyondauc.metrics.calibration.reliability.calibration_error_table` bins them, each
    distinct fit computed once (:func:`~beyondauc.metrics.calibration.fits.block_tables`).
    """
    x, inv, tot_pos, tot_neg = grid_counts(ctx.y, s)
    parts = dataset_columns(inv, ctx.y, ctx.codes, len(x), len(ctx.datasets))  # never (datasets, grid)
    auc = np.array([auc_from_counts(p, q) for _, p, q in parts], dtype=np.float64)
    bins = {}
    rows = _fit_cells(ctx, model, ModelGrid(s, x, inv, parts, (tot_pos, tot_neg)), auc, bins=bins, n_bins=n_bins)
    indata_cells = {}
    for i in indata_datasets(ctx):
        cells, binned = indata_fits(ctx, s, i, n_bins=n_bins)
        indata_cells.update(cells)
        bins.update(binned)
    rows = rows + _indata_rows(ctx, model, auc, indata_cells)
    return rows if n_bins is None else (rows, bins)


def indata_datasets(ctx):
    """Indices of the datasets some protocol calibrates within (indata, indomain's fallback), ascending."""
    return sorted({i for p in ctx.protocols for i in ctx.plans[p][1]})


def _cell_row(ctx, model, cell, auc, scores, n_cal, n_ev):
    """One cell of the grid: the row of ``cell`` (a :class:`CellKey`), ``scores`` a dict of floats."""
    return dict(
        protocol=cell.protocol,
        method=cell.method,
        dataset=ctx.datasets[cell.dataset],
        domain=ctx.domains.get(ctx.datasets[cell.dataset]),
        model=model,
        auc=float(auc),
        **scores,
        n_calibration=n_cal,
        n_evaluation=n_ev,
        calibration=cell.calibration,
    )


def _warm_start(ctx, x, pos, neg):
    """Start of the logistic fits: the fit on all of ``pos``/``neg`` (None without logistic, or with opitz2024)."""
    if "logistic" not in ctx.methods or ctx.reference == "opitz2024":
        return None
    wp, wn = class_weighted(pos[None], neg[None], ctx.class_weight)
    return logistic_params(x, wp, wn, counts=(pos + neg)[None])


def fit_matrices(fits, D):
    """0/1 matrices (fits, D) of each fit's calibration and evaluation datasets."""
    G_cal = np.zeros((len(fits), D))
    G_ev = np.zeros((len(fits), D))
    for k, f in enumerate(fits):
        G_cal[k, list(f.cal)] = 1.0
        G_ev[k, list(f.evl)] = 1.0
    return G_cal, G_ev


def own_grid_fits(ctx, x, fits, parts, init, *, grid=True, n_bins=None):
    """(confusion counts (tp, fp, fn, tn), each (fits,), of every method, or None without ``grid``;
    with ``n_bins`` the bin sums {(protocol, dataset index, method): (count, positive, psum, n_nan)}).

    Each fit on its own rows' grid (:func:`fit_columns`): its cost follows
    its calibration and evaluation rows, not the model's.
    """
    out = {m: np.zeros((4, len(fits))) for m in ctx.methods} if grid else None
    bins = {}
    settings = FitSettings(ctx.methods, ctx.class_weight)
    for k, f in enumerate(fits):  # a loop over fits
        u, cp, cn, ep, en = fit_columns(parts, f, len(x))
        if not len(u) or (cp + cn).sum() == 0:  # no calibration data: the cell is NaN, nothing to bin
            if n_bins is not None:
                bins.update({(f.protocol, f.dataset, m): (np.zeros(n_bins),) * 3 + (0.0,) for m in ctx.methods})
            continue
        conf, binned = block_tables(FitBlock(x[u], cp, cn, ep, en), settings, init=init, grid=grid, n_bins=n_bins)
        for m in ctx.methods:
            if grid:
                out[m][:, k] = [c[0] for c in conf[m]]
            if n_bins is not None:
                bins[(f.protocol, f.dataset, m)] = tuple(b[0] for b in binned[m])
    return ({m: tuple(out[m]) for m in ctx.methods} if grid else None), bins


def _reference_confusions(ctx, mg, fits, matrices, stacked):
    """Confusion counts (tp, fp, fn, tn), each (fits,), of every method on every fit, under
    ``reference="opitz2024"``: in chunks of fits on the model's grid (``stacked``: its per-dataset positives
    and negatives; ``matrices``: :func:`fit_matrices`), the logistic read from scikit-learn's fits."""
    methods, (G_cal, G_ev), (pos_ds, neg_ds) = ctx.methods, matrices, stacked
    lbfgs = None
    if "logistic" in methods:
        lbfgs = lbfgs_params(
            [(mg.s[np.isin(ctx.codes, f.cal)], ctx.y[np.isin(ctx.codes, f.cal)]) for f in fits], ctx.class_weight
        )
    init = _warm_start(ctx, mg.x, *mg.totals)
    settings = FitSettings(methods, ctx.class_weight, ctx.reference)
    results = {m: [[], [], [], []] for m in methods}
    for sl in chunks(len(fits), len(mg.x)):
        block = FitBlock(
            mg.x,
            G_cal[sl] @ pos_ds,
            G_cal[sl] @ neg_ds,
            G_ev[sl] @ pos_ds,
            G_ev[sl] @ neg_ds,
            lbfgs=None if lbfgs is None else (lbfgs[0][sl], lbfgs[1][sl]),
        )
        conf = run_fits(block, settings, init=init)
        for m in methods:
            for acc, part in zip(results[m], conf[m]):
                acc.append(part)
    return {m: tuple(np.concatenate(a) for a in results[m]) for m in methods}


def _fit_cells(ctx, model, mg, auc, *, bins, n_bins=None):
    """Rows of the cells calibrated on whole datasets (every protocol's fits), method by method (and their bin
    sums into ``bins`` with ``n_bins``).

    Each fit on its own grid from the model's ``parts`` (:func:`own_grid_fits`), warm-started from the fit on
    all the data (the pooled fits lie near it); under ``reference="opitz2024"`` in chunks of fits on the model's
    grid (:func:`_reference_confusions`).
    """
    fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
    if not fits:
        return []
    auc_fit = auc[[f.dataset for f in fits]]
    if ctx.reference == "opitz2024":  # the code behind the paper's tables: outdata AUC on the pooled evaluation data
        G_cal, G_ev = fit_matrices(fits, len(ctx.datasets))
        pos_ds, neg_ds = stacked_counts(mg.inv, ctx.y, ctx.codes, len(mg.x), len(ctx.datasets))
        auc_fit = np.where(
            [f.protocol == "outdata" for f in fits], auc_from_counts(G_ev @ pos_ds, G_ev @ neg_ds), auc_fit
        )
        results = _reference_confusions(ctx, mg, fits, (G_cal, G_ev), (pos_ds, neg_ds))
    else:
        init = _warm_start(ctx, mg.x, *mg.totals)
        results, binned = own_grid_fits(ctx, mg.x, fits, mg.parts, init, n_bins=n_bins)
        bins.update(binned)
    sizes = np.diff(ctx.offsets)
    n_cal = [int(sizes[list(f.cal)].sum()) for f in fits]
    n_ev = [int(sizes[list(f.evl)].sum()) for f in fits]
    empty = (np.array(n_cal) == 0) | (np.array(n_ev) == 0)  # no data to calibrate on or to evaluate: NaN scores
    rows = []
    for m in ctx.methods:  # the scores of all fits at once, elementwise as one fit's
        conf = np.where(empty, np.nan, np.asarray([np.asarray(c, dtype=np.float64) for c in results[m]]))
        columns = {name: v.tolist() for name, v in scores_from_confusion(*conf).items()}
        for k, f in enumerate(fits):
            scores = {name: v[k] for name, v in columns.items()}
            cell = CellKey(f.protocol, m, f.dataset, f.protocol)
            rows.append(_cell_row(ctx, model, cell, auc_fit[k], scores, n_cal[k], n_ev[k]))
    return rows


def indata_fits(ctx, s, i, *, grid=True, n_bins=None):
    """Dataset ``i``'s repeated 80/20 splits: ``({(i, method): (confusions (repeats, 4), n_cal, n_ev)}``, empty
    without ``grid``; with ``n_bins`` ``{("indata", i, method): bin sums, the repeats pooled}``, else empty)."""
    methods, n_repeats = ctx.methods, ctx.n_repeats
    n = int(ctx.offsets[i + 1] - ctx.offsets[i])
    tests = splits(n, n_repeats, ctx.seed)
    sums = {m: [np.zeros(n_bins), np.zeros(n_bins), np.zeros(n_bins), 0.0] for m in methods} if n_bins else {}
    if tests is None:  # fewer than 2 rows: nothing to split, nothing to bin
        cells = {(i, m): (np.full((1, 4), np.nan), 0, n) for m in methods} if grid else {}
        return cells, {("indata", i, m): tuple(v) for m, v in sums.items()}
    sl = slice(int(ctx.offsets[i]), int(ctx.offsets[i + 1]))
    yd, sd = ctx.y[sl], s[sl]
    xd, invd, full_pos, full_neg = grid_counts(yd, sd)
    init = _warm_start(ctx, xd, full_pos, full_neg) if grid else None  # the 80% fits lie close to it
    lbfgs_needed = ctx.reference == "opitz2024" and "logistic" in methods
    trains = indata_train(n, n_repeats, ctx.seed) if lbfgs_needed else None
    acc = {m: [] for m in methods}
    settings = FitSettings(methods, ctx.class_weight, ctx.reference)
    n_test = tests.shape[1]
    for ch in chunks(n_repeats, len(xd)):
        R = ch.stop - ch.start
        rows_ = tests[ch]
        groups = np.repeat(np.arange(R), n_test)
        ep, en = stacked_counts(invd[rows_.ravel()], yd[rows_.ravel()], groups, len(xd), R, presorted=True)
        lbfgs = lbfgs_params([(sd[t], yd[t]) for t in trains[ch]], ctx.class_weight) if lbfgs_needed else None
        block = FitBlock(xd, full_pos - ep, full_neg - en, ep, en, lbfgs=lbfgs)
        conf, binned = block_tables(block, settings, init=init, grid=grid, n_bins=n_bins)
        for m in methods:
            if grid:
                acc[m].append(np.stack(conf[m], axis=1))
            for j in range(4 if n_bins else 0):  # all repeats pooled
                sums[m][j] = sums[m][j] + binned[m][j].sum(axis=0)
    cells = {(i, m): (np.concatenate(acc[m]), n - n_test, n_test) for m in methods} if grid else {}
    return cells, {("indata", i, m): tuple(v) for m, v in sums.items()}


def _indata_rows(ctx, model, auc, indata_cells):
    """Rows of the indata cells (and indomain's fallback): each score's mean over the repeats."""
    rows, means = [], {}
    for p in ctx.protocols:
        for i in ctx.plans[p][1]:
            for m in ctx.methods:
                per_repeat, n_cal, n_ev = indata_cells[(i, m)]
                if (i, m) not in means:  # indomain's fallback is the same cell
                    means[(i, m)] = repeat_means(scores_from_confusion(*per_repeat.T))
                rows.append(_cell_row(ctx, model, CellKey(p, m, i, "indata"), auc[i], means[(i, m)], n_cal, n_ev))
    return rows
