"""AUC vs expected accuracy (Opitz, "Schroedinger's Threshold").

A benchmark ranks models by AUC, which needs no threshold.  In use, a model's
raw score must be turned into a decision with a threshold chosen on *other*
data.  :func:`expected_accuracy` calibrates every model on other datasets
under one of five protocols and one of three methods, and reports the
accuracy (and kappa, ...) it really reaches on each dataset.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ...data.benchmark import Benchmark
from ...utils.parallel import pool_context, process_pool
from ...utils.validation import (
    UndefinedMetricWarning,
    check_int,
    check_option,
    check_random_state,
)
from ..core.fitting import class_weighted
from ..core.kernel import (
    auc_from_counts,
    grid_counts,
    scores_from_confusion,
    stacked_counts,
)
from ..core.logistic import logistic_params
from ..core.views import each_model_view
from .calibrator import METHODS, REFERENCES, lbfgs_params
from .fits import as_columns, block_tables, one_blas_thread, positions, repeat_means, run_fits

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence


# scikit-learn is imported inside the functions that fit or split with it: a report kernel only
# reads a saved evaluation and draws, and skips its import (see utils.parallel.FITTING_MODULES).

__all__ = [
    "PROTOCOLS",
    "METHODS",
    "SCORES",
    "auc_table",
    "point_grid",
]

PROTOCOLS = ("xdomain", "outdomain", "indomain", "indata", "outdata")
SCORES = ("accuracy", "kappa", "balanced_accuracy", "mcc", "f1")
_INDATA_TEST_SIZE = 0.2
_CHUNK = 131_072  # grid cells per batch of fits (bounds memory, keeps batches cache-sized)


# -- protocols --------------------------------------------------------------------


@dataclass(frozen=True)
class _Fit:
    """One calibration: calibrate on datasets ``cal``, evaluate on ``evl``."""

    protocol: str
    dataset: int
    cal: tuple
    evl: tuple


def _check_domains(bench, protocol):
    missing = [d for d in bench.datasets if bench.domains.get(d) is None]
    if missing:
        raise ValueError(
            f"protocol {protocol!r} needs a domain for every dataset; none for {missing}. "
            "Give `domains=` (dataset -> domain), a 'domain' column, or use TRUE dataset names"
        )


def protocol_plan(bench, protocol):
    """Return (fits, indata_datasets) for a protocol."""
    n = len(bench.datasets)
    dom = [bench.domains.get(d) for d in bench.datasets]
    allidx = range(n)
    fits, indata = [], []
    if protocol in ("outdomain", "indomain"):
        _check_domains(bench, protocol)
    for i in allidx:
        others = tuple(j for j in allidx if j != i)
        if protocol == "xdomain":
            fits.append(_Fit(protocol, i, others, (i,)))
        elif protocol == "outdomain":
            fits.append(_Fit(protocol, i, tuple(j for j in others if dom[j] != dom[i]), (i,)))
        elif protocol == "indomain":
            same = tuple(j for j in others if dom[j] == dom[i])
            if same:
                fits.append(_Fit(protocol, i, same, (i,)))
            else:
                indata.append(i)
        elif protocol == "outdata":
            fits.append(_Fit(protocol, i, (i,), others))
        else:  # indata
            indata.append(i)
    return fits, indata


def _indata_splits(n, n_repeats, random_state, *, dtype=np.int64):
    """Evaluation rows of each repeat's 80/20 split, (R, n_test) ints of ``dtype``; None if n < 2.

    Written into one array as the splits come (never a list of them and then its stack).
    """
    from sklearn.model_selection import ShuffleSplit

    if n < 2:
        return None
    ss = ShuffleSplit(n_splits=n_repeats, test_size=_INDATA_TEST_SIZE, random_state=random_state)
    out = None
    for r, (_, test) in enumerate(ss.split(np.zeros((n, 1)))):  # a loop over repeats
        if out is None:
            out = np.empty((n_repeats, len(test)), dtype=dtype)
        out[r] = test
    return out


def protocol_masks(bench, dataset, protocol, random_state):
    """Boolean masks over all rows: a protocol's calibration and evaluation data for ``dataset``.

    For ``indata`` (and ``indomain`` without a same-domain dataset) these
    are the first seeded 80/20 split of :func:`expected_accuracy`.
    """
    sl = bench._slice(dataset)
    fits, _ = protocol_plan(bench, protocol)
    i = bench.datasets.index(dataset)
    fit = next((f for f in fits if f.dataset == i), None)
    if fit is not None:
        codes = bench.dataset_codes()
        cal, ev = np.isin(codes, fit.cal), np.isin(codes, fit.evl)
        if not cal.any() or not ev.any():
            raise ValueError(
                f"`protocol`={protocol!r} leaves dataset {dataset!r} no {'calibration' if not cal.any() else 'evaluation'} "
                "data (no other dataset qualifies); choose another protocol"
            )
        return cal, ev
    test = _indata_splits(sl.stop - sl.start, 1, random_state)
    if test is None:
        raise ValueError(
            f"dataset {dataset!r} has {sl.stop - sl.start} example(s); the indata protocol needs at least 2"
        )
    cal = np.zeros(len(bench), dtype=bool)
    cal[sl] = True
    ev = np.zeros(len(bench), dtype=bool)
    ev[sl.start + test[0]] = True
    return cal & ~ev, ev


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
class Context:
    """What every model's cells share (sent once to each worker process)."""

    y: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray
    datasets: tuple
    domains: dict
    protocols: tuple
    methods: tuple
    plans: dict
    class_weight: object
    n_repeats: int
    seed: object
    reference: object = None


_SPLITS = {}  # (n, n_repeats, seed) -> indata evaluation rows; per process


def splits(n, n_repeats, seed):
    key = (n, n_repeats, seed)
    if key not in _SPLITS:
        if len(_SPLITS) > 64:
            _SPLITS.clear()
        # held for the process's next models: int32 (half of int64) where the rows allow
        _SPLITS[key] = _indata_splits(n, n_repeats, seed, dtype=np.int32 if n <= np.iinfo(np.int32).max else np.int64)
    return _SPLITS[key]


def _indata_train(n, n_repeats, seed):
    """Calibration rows of each repeat's split, in ShuffleSplit's order, (R, n_train) ints."""
    from sklearn.model_selection import ShuffleSplit

    ss = ShuffleSplit(n_splits=n_repeats, test_size=_INDATA_TEST_SIZE, random_state=seed)
    return np.stack([train for train, _ in ss.split(np.zeros((n, 1)))])


def model_cells(ctx, model, s, *, n_bins=None):
    """All (protocol, method, dataset) cells of one model, as a list of dicts.

    With ``n_bins`` (not under ``reference="opitz2024"``), ``(rows, bins)``:
    also the reliability bin sums of the same fits, as
    :func:`~beyondauc.metrics.calibration.reliability._model_bins` gives them, each
    distinct fit computed once (:func:`~beyondauc.metrics.calibration.fits.block_tables`).
    """
    x, inv, tot_pos, tot_neg = grid_counts(ctx.y, s)
    parts = dataset_columns(inv, ctx.y, ctx.codes, len(x), len(ctx.datasets))  # never (datasets, grid)
    auc = np.array([auc_from_counts(p, q) for _, p, q in parts], dtype=np.float64)
    bins = {}
    rows = _fit_cells(ctx, model, s, x, inv, parts, auc, (tot_pos, tot_neg), bins=bins, n_bins=n_bins)
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


def _cell_row(ctx, model, protocol, method, i, auc, scores, n_cal, n_ev, calibration):
    """One cell of the grid: dataset ``i``'s row for a protocol and method, ``scores`` a dict of floats."""
    return dict(
        protocol=protocol,
        method=method,
        dataset=ctx.datasets[i],
        domain=ctx.domains.get(ctx.datasets[i]),
        model=model,
        auc=float(auc),
        **scores,
        n_calibration=n_cal,
        n_evaluation=n_ev,
        calibration=calibration,
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

    Each fit on its own rows' grid (:func:`_fit_columns`): its cost follows
    its calibration and evaluation rows, not the model's.
    """
    out = {m: np.zeros((4, len(fits))) for m in ctx.methods} if grid else None
    bins = {}
    for k, f in enumerate(fits):  # a loop over fits
        u, cp, cn, ep, en = fit_columns(parts, f, len(x))
        if not len(u) or (cp + cn).sum() == 0:  # no calibration data: the cell is NaN, nothing to bin
            if n_bins is not None:
                bins.update({(f.protocol, f.dataset, m): (np.zeros(n_bins),) * 3 + (0.0,) for m in ctx.methods})
            continue
        conf, binned = block_tables(
            x[u], cp, cn, ep, en, ctx.methods, ctx.class_weight, init=init, grid=grid, n_bins=n_bins
        )
        for m in ctx.methods:
            if grid:
                out[m][:, k] = [c[0] for c in conf[m]]
            if n_bins is not None:
                bins[(f.protocol, f.dataset, m)] = tuple(b[0] for b in binned[m])
    return ({m: tuple(out[m]) for m in ctx.methods} if grid else None), bins


def _fit_confusions(ctx, s, x, fits, G_cal, G_ev, pos_ds, neg_ds, parts, totals, bins=None, n_bins=None):
    """Confusion counts (tp, fp, fn, tn), each (fits,), of every method on every fit.

    Each fit on its own grid from ``parts`` (:func:`_dataset_columns`); with
    ``reference="opitz2024"`` in chunks of fits on the model's grid (``pos_ds``/``neg_ds``).
    ``totals``: the model's positives and negatives on its grid (the warm start).
    With ``n_bins`` (not under opitz2024), the fits' bin sums go into ``bins``.
    """
    methods = ctx.methods
    lbfgs = None
    if ctx.reference == "opitz2024" and "logistic" in methods:
        lbfgs = lbfgs_params(
            [(s[np.isin(ctx.codes, f.cal)], ctx.y[np.isin(ctx.codes, f.cal)]) for f in fits], ctx.class_weight
        )
    # warm start from the fit on all data: the pooled fits lie near it
    init = _warm_start(ctx, x, *totals)
    if ctx.reference != "opitz2024":  # each fit on its own rows' grid
        conf, binned = own_grid_fits(ctx, x, fits, parts, init, n_bins=n_bins)
        bins.update(binned)
        return conf
    results = {m: [[], [], [], []] for m in methods}
    for sl in chunks(len(fits), len(x)):
        conf = run_fits(
            x,
            G_cal[sl] @ pos_ds,
            G_cal[sl] @ neg_ds,
            G_ev[sl] @ pos_ds,
            G_ev[sl] @ neg_ds,
            methods,
            ctx.class_weight,
            init=init,
            reference=ctx.reference,
            lbfgs=None if lbfgs is None else (lbfgs[0][sl], lbfgs[1][sl]),
        )
        for m in methods:
            for acc, part in zip(results[m], conf[m]):
                acc.append(part)
    return {m: tuple(np.concatenate(a) for a in results[m]) for m in methods}


def _fit_cells(ctx, model, s, x, inv, parts, auc, totals, *, bins, n_bins=None):
    """Rows of the cells calibrated on whole datasets (every protocol's fits), method by method (and their bin
    sums into ``bins`` with ``n_bins``)."""
    fits = [f for p in ctx.protocols for f in ctx.plans[p][0]]
    if not fits:
        return []
    G_cal, G_ev = fit_matrices(fits, len(ctx.datasets))
    auc_fit = auc[[f.dataset for f in fits]]
    pos_ds = neg_ds = None
    if ctx.reference == "opitz2024":  # the code behind the paper's tables: outdata AUC on the pooled evaluation data
        pos_ds, neg_ds = stacked_counts(inv, ctx.y, ctx.codes, len(x), len(ctx.datasets))
        auc_fit = np.where(
            [f.protocol == "outdata" for f in fits], auc_from_counts(G_ev @ pos_ds, G_ev @ neg_ds), auc_fit
        )
    results = _fit_confusions(ctx, s, x, fits, G_cal, G_ev, pos_ds, neg_ds, parts, totals, bins, n_bins)
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
            rows.append(
                _cell_row(ctx, model, f.protocol, m, f.dataset, auc_fit[k], scores, n_cal[k], n_ev[k], f.protocol)
            )
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
    trains = _indata_train(n, n_repeats, ctx.seed) if lbfgs_needed else None
    acc = {m: [] for m in methods}
    n_test = tests.shape[1]
    for ch in chunks(n_repeats, len(xd)):
        R = ch.stop - ch.start
        rows_ = tests[ch]
        groups = np.repeat(np.arange(R), n_test)
        ep, en = stacked_counts(invd[rows_.ravel()], yd[rows_.ravel()], groups, len(xd), R, presorted=True)
        lbfgs = lbfgs_params([(sd[t], yd[t]) for t in trains[ch]], ctx.class_weight) if lbfgs_needed else None
        conf, binned = block_tables(
            xd,
            full_pos - ep,
            full_neg - en,
            ep,
            en,
            methods,
            ctx.class_weight,
            init=init,
            reference=ctx.reference,
            lbfgs=lbfgs,
            grid=grid,
            n_bins=n_bins,
        )
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
                rows.append(_cell_row(ctx, model, p, m, i, auc[i], means[(i, m)], n_cal, n_ev, "indata"))
    return rows


_COLUMNS = [
    "protocol",
    "method",
    "dataset",
    "domain",
    "model",
    "auc",
    *SCORES,
    "n_calibration",
    "n_evaluation",
    "calibration",
]


def check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state, reference=None):
    if not isinstance(bench, Benchmark):
        raise ValueError(f"`bench` must be a Benchmark (see load_benchmark), got {type(bench).__name__}")
    for p in protocols:
        check_option(p, "protocol", PROTOCOLS)
    for m in methods:
        check_option(m, "method", METHODS)
    if not protocols:
        raise ValueError("`protocols` must name at least one protocol, got none")
    if not methods:
        raise ValueError("`methods` must name at least one method, got none")
    check_option(class_weight, "class_weight", (None, "balanced"))
    check_option(reference, "reference", REFERENCES)
    check_int(n_repeats, "n_repeats", minimum=1)
    return check_random_state(random_state)


def _init_worker(ctx):
    global _WORKER_CTX
    _WORKER_CTX = ctx
    threadpool_limits(limits=1, user_api="blas")  # one BLAS thread per worker: no oversubscription


def _worker_cells(model, s, func=None):
    return (func or model_cells)(_WORKER_CTX, model, s)


def map_models(ctx, bench, n_jobs, func=None):
    """Yield ``func(ctx, model, scores)`` (default :func:`_model_cells`) per model, in model order.

    In ``n_jobs`` processes if > 1; ``func`` must then be picklable (a
    module-level function or a ``functools.partial`` of one).
    """
    func = func or model_cells
    if n_jobs == 1 or len(bench.models) == 1:
        for model in bench.models:
            yield func(ctx, model, bench.scores(model))
        return
    mp = pool_context()
    workers = min(n_jobs, len(bench.models))
    with process_pool(workers, mp, initializer=_init_worker, initargs=(ctx,)) as ex:
        futures = [ex.submit(_worker_cells, m, bench.scores(m), func) for m in bench.models]
        for f in futures:
            yield f.result()


def check_n_jobs(n_jobs: int) -> int:
    if n_jobs == -1:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"`n_jobs` must be an int >= 1 or -1 (all cores), got {n_jobs!r}")
    return int(n_jobs)


def point_grid(
    bench: Benchmark,
    protocols: Sequence[str],
    methods: Sequence[str],
    *,
    class_weight: str | None,
    n_repeats: int,
    seed: int | None,
    n_jobs: int,
    reference: str | None = None,
) -> pd.DataFrame:
    """The grid of :func:`~beyondauc.expected_accuracy_grid` without intervals, arguments already checked."""
    warn_single_class(bench)
    ctx = grid_context(
        bench, protocols, methods, class_weight=class_weight, n_repeats=n_repeats, seed=seed, reference=reference
    )
    rows = []
    # the grid's matrix products are small: BLAS threads cost more than they give
    with one_blas_thread():
        for cells in map_models(ctx, bench, n_jobs):
            rows.extend(cells)
    return grid_frame(rows, protocols, methods, bench)


def warn_single_class(bench):
    """The grid's warning for each dataset with a single class (said at the grid's caller)."""
    for d in bench.datasets:
        y = bench.labels(d)
        if y.min() == y.max():
            warnings.warn(
                f"dataset {d!r} has a single class: its AUC is NaN (kappa too where all decisions are that class)",
                UndefinedMetricWarning,
                stacklevel=3,
            )


def grid_context(bench, protocols, methods, *, class_weight, n_repeats, seed, reference):
    """The :class:`_Context` of a benchmark's grid (arguments already checked)."""
    return Context(
        y=bench.labels(),
        codes=bench.dataset_codes(),
        offsets=bench._offsets,
        datasets=bench.datasets,
        domains=dict(bench.domains),
        protocols=tuple(protocols),
        methods=tuple(methods),
        plans={p: protocol_plan(bench, p) for p in protocols},
        class_weight=class_weight,
        n_repeats=n_repeats,
        seed=seed,
        reference=reference,
    )


def grid_frame(rows, protocols, methods, bench):
    """The grid's DataFrame of the cells' rows, ordered by protocol, method, dataset, model (the rows sorted, then
    the frame made once from their columns)."""
    order = {
        "protocol": {p: i for i, p in enumerate(protocols)},
        "method": {m: i for i, m in enumerate(methods)},
        "dataset": {d: i for i, d in enumerate(bench.datasets)},
        "model": {m: i for i, m in enumerate(bench.models)},
    }
    key = np.lexsort([positions([r[c] for r in rows], order[c]) for c in ("model", "dataset", "method", "protocol")])
    return pd.DataFrame(as_columns([rows[j] for j in key.tolist()], _COLUMNS), columns=_COLUMNS)


@each_model_view()
def auc_table(bench: Benchmark) -> pd.DataFrame:
    """AUC of every model on every dataset, tidy: ``dataset``, ``domain``, ``model``, ``auc``.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark, auc_table
    >>> b = load_benchmark(pd.DataFrame({"label": [0, 0, 1, 1], "m": [0.1, 0.4, 0.35, 0.8]}))
    >>> auc_table(b)["auc"].tolist()
    [0.75]
    """
    rows = []
    y = bench.labels()
    codes = bench.dataset_codes()
    D = len(bench.datasets)
    for model in bench.models:
        x, inv, _, _ = grid_counts(y, bench.scores(model))
        pos, neg = stacked_counts(inv, y, codes, len(x), D)
        auc = auc_from_counts(pos, neg)
        rows += [
            dict(dataset=d, domain=bench.domains.get(d), model=model, auc=float(a)) for d, a in zip(bench.datasets, auc)
        ]
    return pd.DataFrame(rows, columns=["dataset", "domain", "model", "auc"])
