"""Bootstrap intervals of selective answering on a benchmark.

Each replicate resamples the rows a protocol reads (calibration, evaluation and
out-of-distribution rows, stratified by role, dataset and, for scores, class;
items whole where samples repeat), *refits the calibrator* on its calibration
rows and scores its answers: :func:`benchmark_bootstrap` runs every replicate at
once on the score grid through the replicate engine
(:mod:`beyondauc.metrics.uncertainty.replicates`), with the delete-a-group
jackknife of the BCa numbers (:data:`SELECTIVE_BCA`).  Confidences taken as
given (protocol ``"none"``) have nothing to refit; graded answers count by
(confidence, quality) pair.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...utils.validation import check_random_state
from ..core.fitting import class_weighted
from ..core.kernel import grid_counts
from ..core.logistic import logistic_params
from ..uncertainty.bootstrap import grid_weights, percentile_interval, strata_of
from ..uncertainty.cells import cell_scores
from ..uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    calibrated_rows,
    jackknife_replicates,
)
from .benchmark_confidence import ConfidenceSource, given_answers, given_quality, selective_masks
from .curves import check_resolution, check_unit, check_weights, exact_area_rows
from .scores import selective_rows

if TYPE_CHECKING:  # names in annotations only
    from ...data.benchmark import Benchmark

__all__ = [
    "BAND_COVERAGES",
    "INTERVAL_NAMES",
    "SELECTIVE_BCA",
    "DiscaReading",
    "benchmark_bootstrap",
    "benchmark_replicates",
    "percentile_band",
    "selective_design",
    "side_by_side",
]

INTERVAL_NAMES = ("accuracy", "area", "aurc", "disca", "a", "b")

#: The numbers whose intervals are BCa: the bootstrap biases them (DiSCA and its thresholds a and b).
SELECTIVE_BCA = ("disca", "a", "b", "disca_ood")


@dataclass(frozen=True)
class DiscaReading:
    """How DiSCA is read from a coverage-accuracy curve (the options of :func:`~beyondauc.disca`).

    Parameters
    ----------
    tolerance : float in (0, 1], default=0.9
        The accuracy b is read at.
    weights : (float, float, float), default=(1/3, 1/3, 1/3)
        The weights of a, b and the fluctuation penalty.
    resolution : float, default=0.01
        The grid step the curve is read at.

    Examples
    --------
    >>> from beyondauc.metrics.selective.benchmark_intervals import DiscaReading
    >>> DiscaReading(tolerance=0.8).checked()["tolerance"]
    0.8
    """

    tolerance: float = 0.9
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    resolution: float = 0.01

    def checked(self) -> dict[str, object]:
        """The options as keyword arguments of :func:`~beyondauc.disca`, each checked (a one-line error names it)."""
        tolerance = check_unit(self.tolerance, "tolerance", low_open=True)
        weights = check_weights(self.weights, "weights", 3)
        return {"resolution": check_resolution(self.resolution), "tolerance": tolerance, "weights": weights}


def _replicates_and_jackknife(sample, statistic, plan):
    """(replicates, band, jackknife) of a selective statistic: the bootstrap, and the jackknife of :data:`SELECTIVE_BCA`."""
    reps = bootstrap_replicates(sample, statistic, plan)
    jack = jackknife_replicates(sample, statistic, plan)
    band = reps.pop("band")
    jack = pd.DataFrame({k: v for k, v in jack.items() if k in SELECTIVE_BCA})
    return pd.DataFrame(reps), band, jack


def _answers(proba, pred, pos, neg, kind="scores"):
    """Confidence and (weighted) correct / wrong answers per grid value, (R, m) each.

    For scores the decision is ``pred`` and its confidence max(p, 1 - p); for
    answers ``proba`` is the recalibrated probability that the model's own
    answer is right (``pos``: right answers), so it is the confidence.
    """
    if kind == "answers":
        return proba, pos, neg
    conf = np.maximum(proba, 1.0 - proba)
    return conf, np.where(pred, pos, neg), np.where(pred, neg, pos)


def selective_design(bench, model, dataset, *, ood_dataset, protocol, random_state):
    """Rows a benchmark-level bootstrap resamples: scores, labels, role (0 cal, 1 eval, 2 ood), strata."""
    cal, ev, ood = selective_masks(bench, dataset, protocol, random_state, ood_dataset)
    used = cal | ev | ood
    role = np.where(cal, 0, np.where(ev, 1, 2))[used]
    y = bench.labels(model=model)[used]
    s = bench.scores(model)[used]
    # paired: strata the same for every model (an answers benchmark's class is the model's own correctness)
    strata = (
        strata_of(role, bench.dataset_codes()[used])
        if bench.kind == "answers"
        else strata_of(role, bench.dataset_codes()[used], y)
    )
    return s, y, role, strata


def _refit_items(bench, used, strata, protocol):
    """Each used row's item for the cluster bootstrap (None when no item repeats).

    An item whose samples the protocol splits between calibration and
    evaluation rows (a random split of rows) cannot be resampled whole: its
    rows are then resampled one by one, with a warning.
    """
    if not bench.repeated:
        return None
    items = bench.items()[used]
    per_item = np.zeros(int(items.max()) + 1 if len(items) else 0, dtype=np.int64)
    per_item[items] = strata
    if (per_item[items] != strata).any():
        warnings.warn(
            f"protocol {protocol!r} splits the repeated samples of some items between calibration and "
            "evaluation rows: its selective intervals resample rows, and are too narrow for correlated "
            "samples (choose a protocol that keeps items whole, e.g. 'none' or 'xdomain')",
            UserWarning,
            stacklevel=5,
        )
        return None
    return items


#: Coverage levels of the pointwise accuracy band.
BAND_COVERAGES = np.linspace(0.02, 1.0, 50)


def percentile_band(acc, confidence_level):
    """(coverages, low, high) of a pointwise percentile band from (B, k) replicates."""
    low, high = percentile_interval(acc, confidence_level, axis=0)
    return BAND_COVERAGES.copy(), low, high


def benchmark_replicates(bench, model, dataset, **options):
    """Replicates (DataFrame, one row each) of the selective numbers with the calibrator refitted per replicate."""
    return benchmark_bootstrap(bench, model, dataset, **options)[0]


def benchmark_bootstrap(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    source: ConfidenceSource,
    reading: DiscaReading,
    n_bootstrap: int,
    resample_state: int | None = None,
    cells: int | None = None,
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    """(replicates frame, (B, k) accuracy at :data:`BAND_COVERAGES`, jackknife frame), the calibrator refitted per replicate.

    ``source.random_state`` picks the protocol's rows (the ``indata`` split) as the
    point estimate does; ``resample_state`` (default: ``source.random_state``) seeds
    the resampling; ``cells`` bounds the cells of the scores the replicates run on.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.benchmark_intervals import DiscaReading, benchmark_bootstrap
    >>> from beyondauc.metrics.selective.benchmark_confidence import ConfidenceSource
    >>> reps, band, jack = benchmark_bootstrap(
    ...     load_demo(), "logreg", "wine", source=ConfidenceSource(), reading=DiscaReading(), n_bootstrap=5
    ... )
    >>> len(reps), band.shape, len(jack)
    (5, (5, 50), 20)
    """
    options = reading.checked()
    resample_state = check_random_state(source.random_state if resample_state is None else resample_state)
    ood_dataset = source.ood_dataset
    if source.protocol == "none" and given_quality(bench, model, dataset) is not None:
        return _graded_bootstrap(bench, model, dataset, ood_dataset, options, resample_state, n_bootstrap)
    if source.protocol == "none":
        return _given_bootstrap(bench, model, dataset, ood_dataset, options, resample_state, n_bootstrap, cells)
    return _refit_bootstrap(bench, model, dataset, source, options, ReplicatePlan(n_bootstrap, resample_state), cells)


def _refit_bootstrap(bench, model, dataset, source, options, plan, cells):
    """:func:`benchmark_bootstrap` with a calibration protocol: every replicate refits the calibrator.

    ``plan`` gives the replicates and their seed; its chunks are sized here, for the grid's width.
    """
    protocol, ood_dataset, random_state = source.protocol, source.ood_dataset, source.random_state
    s, y, role, strata = selective_design(
        bench, model, dataset, ood_dataset=ood_dataset, protocol=protocol, random_state=random_state
    )
    items = None
    if bench.repeated:  # the rows selective_design resamples, as items
        cal, ev, ood = selective_masks(bench, dataset, protocol, random_state, ood_dataset)
        items = _refit_items(bench, cal | ev | ood, strata, protocol)
    s = cell_scores(s, strata, y, cells=cells)
    x, inv, _, _ = grid_counts(y, s)
    init = _warm_start(x, inv, y, role, source)
    # the curves only need the grid values the evaluation (and OOD) rows have
    cols = (np.unique(inv[role == 1]), np.unique(inv[role == 2]) if ood_dataset is not None else None)
    blocks = {0: np.arange(len(x)), 1: cols[0], **({} if cols[1] is None else {2: cols[1]})}
    column, starts = side_by_side(inv, role, blocks)
    statistic = _refit_statistic(
        x, cols, method=source.method, class_weight=source.class_weight, init=init, options=options, kind=bench.kind
    )
    sample = GridSample(strata, column, y, int(starts[-1]), clusters=items)
    return _replicates_and_jackknife(sample, statistic, replace(plan, chunk_width=max(len(y), len(x))))


def _warm_start(x, inv, y, role, source):
    """The logistic's parameters fitted on the calibration rows themselves, every replicate's start (None otherwise)."""
    if source.method != "logistic":
        return None
    p0, n0 = grid_weights(np.ones((1, len(y))), inv, y, len(x), groups=np.where(role == 0, 0, -1))
    return logistic_params(x, *class_weighted(p0[:, 0], n0[:, 0], source.class_weight), counts=p0[:, 0] + n0[:, 0])


def side_by_side(inv, role, blocks):
    """Each row's column when each role's grid values (``blocks``: role -> sorted grid indices) sit side by side.

    The per-value counts of role r then fill columns ``starts[i]`` on (its
    block's place i), the same counts as a (role, grid value) layout gives at
    those values, without the columns of values the role never has.  Returns
    (column, starts); ``starts[-1]`` is the width.
    """
    column = np.zeros(len(inv), dtype=np.int64)
    starts = np.cumsum([0] + [len(v) for v in blocks.values()])
    for start, (r, values) in zip(starts, blocks.items()):  # a loop over the (two or three) roles
        rows = role == r
        column[rows] = start + np.searchsorted(values, inv[rows])
    return column, starts


def _given_bootstrap(bench, model, dataset, ood_dataset, options, random_state, n_bootstrap, cells=None):
    """:func:`benchmark_bootstrap` for confidences as given (protocol "none"): nothing to refit.

    The evaluation rows (role 1) and the OOD rows (role 2) are resampled
    within role (and, for scores, label): the same strata for every model,
    so every model resamples the same rows (paired); each replicate
    reweights the counts of right and wrong answers at each distinct
    confidence.
    """
    s, y = bench.scores(model), bench.labels(model=model)
    parts = [(dataset, 1)] + ([(ood_dataset, 2)] if ood_dataset is not None else [])
    answers = [given_answers(bench, model, s[bench.rows_of(d)], y[bench.rows_of(d)]) for d, _ in parts]
    conf = np.concatenate([c for c, _ in answers])
    ok = np.concatenate([o for _, o in answers]).astype(np.int8)
    role = np.concatenate([np.full(len(c), r) for (c, _), (_, r) in zip(answers, parts)])
    key = [role] if bench.kind == "answers" else [role, np.concatenate([y[bench.rows_of(d)] for d, _ in parts])]
    x, inv, _, _ = grid_counts(ok, cell_scores(conf, *key, ok, cells=cells))
    cols = [np.unique(inv[role == r]) for _, r in parts]
    column, starts = side_by_side(inv, role, {r: c for (_, r), c in zip(parts, cols)})
    k = len(cols[0])

    def statistic(pos, neg):  # the confidences are the same in every replicate: sorted once
        rows = selective_rows(x[cols[0]], pos[:, :k], neg[:, :k], **options, coverages=BAND_COVERAGES)
        out = {name: rows[name] for name in INTERVAL_NAMES}
        if ood_dataset is not None:
            out["disca_ood"] = selective_rows(x[cols[1]], pos[:, k:], neg[:, k:], **options)["disca"]
        out["band"] = rows["band"]
        return out

    sample = GridSample(strata_of(*key), column, ok, int(starts[-1]), clusters=_items(bench, parts))
    return _replicates_and_jackknife(
        sample, statistic, ReplicatePlan(n_bootstrap, random_state, chunk_width=max(len(ok), len(x)))
    )


def _graded_bootstrap(bench, model, dataset, ood_dataset, options, random_state, n_bootstrap):
    """:func:`_given_bootstrap` for graded answers: the grid is the distinct (confidence, quality) pairs.

    Every example counts as a "positive" of its pair; each replicate's pair
    counts then give, per distinct confidence, both the right/wrong counts
    at the benchmark's ``correct_threshold`` (accuracy, area, DiSCA, a, b)
    and the summed quality and loss (AURC on ``1 - quality``), exactly.
    """
    s, q = bench.scores(model), bench.quality(model=model)
    parts = [(dataset, 1)] + ([(ood_dataset, 2)] if ood_dataset is not None else [])
    conf = np.concatenate(
        [given_answers(bench, model, s[bench.rows_of(d)], q[bench.rows_of(d)] >= 0.5)[0] for d, _ in parts]
    )
    quality = np.concatenate([q[bench.rows_of(d)] for d, _ in parts])
    role = np.concatenate([np.full(bench.dataset_sizes()[bench.datasets.index(d)], r) for d, r in parts])
    pairs, inv = np.unique(np.column_stack([conf, quality]), axis=0, return_inverse=True)  # by confidence, quality
    inv = inv.ravel()
    cols = [np.unique(inv[role == r]) for _, r in parts]
    column, starts = side_by_side(inv, role, {r: c for (_, r), c in zip(parts, cols)})
    right = (pairs[:, 1] >= bench.correct_threshold).astype(np.float64)

    def counts(pos, at):  # (R, pairs of one role) -> per distinct confidence: right, wrong, quality, loss
        c = pairs[at, 0]
        first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])

        def by(w):
            return np.add.reduceat(pos * w, first, axis=1)

        return c[first], (by(right[at]), by(1.0 - right[at])), (by(pairs[at, 1]), by(1.0 - pairs[at, 1]))

    k = len(cols[0])

    def statistic(pos, neg):
        x, binary, graded = counts(pos[:, :k], cols[0])
        rows = selective_rows(x, *binary, **options, coverages=BAND_COVERAGES)
        out = {name: rows[name] for name in INTERVAL_NAMES}
        out["aurc"] = 1.0 - exact_area_rows(x, *graded)
        if ood_dataset is not None:
            x_ood, binary_ood, _ = counts(pos[:, k:], cols[1])
            out["disca_ood"] = selective_rows(x_ood, *binary_ood, **options)["disca"]
        out["band"] = rows["band"]
        return out

    ones = np.ones(len(inv), dtype=np.int8)
    sample = GridSample(strata_of(role), column, ones, int(starts[-1]), clusters=_items(bench, parts))
    return _replicates_and_jackknife(
        sample, statistic, ReplicatePlan(n_bootstrap, random_state, chunk_width=max(len(inv), len(pairs)))
    )


def _items(bench, parts):
    """Each resampled row's item (rows of ``parts``' datasets in order), or None when no item repeats."""
    if not bench.repeated:
        return None
    items = bench.items()
    return np.concatenate([items[bench.rows_of(d)] for d, _ in parts])


def _refit_statistic(x, cols, *, method, class_weight, init, options, kind="scores"):
    """The batched statistic of :func:`benchmark_bootstrap`: refit, answer, score; on (R, width) counts.

    The counts are (R, width) rows laid out by :func:`side_by_side`: the
    calibration rows on the whole grid of ``x``, then the evaluation rows on
    their grid values ``cols[0]``, then the OOD rows on theirs ``cols[1]``
    (None: no OOD dataset).
    """
    cols_ev, cols_ood = cols
    at = cols_ev if cols_ood is None else np.concatenate([cols_ev, cols_ood])
    m, k = len(x), len(cols_ev)

    def statistic(pos, neg):
        cal_pos, cal_neg = pos[:, :m], neg[:, :m]
        proba, pred = calibrated_rows(
            method, x, *class_weighted(cal_pos, cal_neg, class_weight), init=init, at=at, counts=cal_pos + cal_neg
        )
        answers = _answers(proba[:, :k], pred[:, :k], pos[:, m : m + k], neg[:, m : m + k], kind)
        out = selective_rows(*answers, **options, coverages=BAND_COVERAGES)
        rows = {name: out[name] for name in INTERVAL_NAMES}
        if cols_ood is not None:
            rows["disca_ood"] = selective_rows(
                *_answers(proba[:, k:], pred[:, k:], pos[:, m + k :], neg[:, m + k :], kind), **options
            )["disca"]
        rows["band"] = out["band"]
        return rows

    return statistic
