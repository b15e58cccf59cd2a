"""Test-set AUROC diagnostics on a benchmark: the validation and test cohorts of a model on a
dataset, all four diagnostics at once, their bootstrap intervals and tidy tables.

The intervals and the permutation null draw items, not rows, when rows repeat
items (an ``epoch`` or ``sample`` column): see
:mod:`beyondauc.metrics.diagnostics.resampling` and
:mod:`beyondauc.metrics.diagnostics.null`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...utils.validation import check_int, check_option, check_random_state
from ..calibration.grid import PROTOCOLS, protocol_masks
from ..core.views import each_model_view, model_view_of
from ..uncertainty.bootstrap import check_bootstrap, dataset_seed
from ..uncertainty.cells import check_cells
from ..uncertainty.replicates import interval_summary
from .cohorts import bias_robustness, check_p, noise_robustness, sens_spec_drift, wasserstein_matrix
from .items import first_split_item
from .null import NullDesign, permutation_null
from .resampling import (
    DIAGNOSTIC_BCA,
    DIAGNOSTIC_INTERVALS,
    DiagnosticsBootstrap,
    cell_cohorts,
    diagnostics_bootstrap,
    diagnostics_intervals,
)
from .result import CohortDiagnostics

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Iterable, Sequence

    from ...data.benchmark import Benchmark

__all__ = [
    "DIAGNOSTIC_INTERVALS",
    "CohortDiagnostics",
    "cohort_diagnostics",
    "cohort_rows",
    "cohorts",
    "diagnostics_intervals",
    "diagnostics_table",
    "diagnostics_frame",
]


def check_cohort_protocol(bench, protocol):
    if protocol is None:  # one dataset has no other to take a validation cohort from: a split of itself
        return "split" if bench.has_split else "xdomain" if len(bench.datasets) > 1 else "indata"
    if protocol == "split":
        if not bench.has_split:
            raise ValueError("`protocol`='split' needs a benchmark with a 'split' column; this one has none")
        return protocol
    return check_option(protocol, "protocol", PROTOCOLS + ("split",))


def cohorts(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    protocol: str | None = None,
    val_split: str = "val",
    test_split: str = "test",
    random_state: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The validation and test cohorts (V, T) of one model on one dataset.

    * ``protocol=None`` uses the benchmark's ``split`` column when it has
      one (V = rows whose split is ``val_split``, T = ``test_split``), else
      ``"xdomain"`` (``"indata"`` on a benchmark of one dataset); ``"split"``
      asks for the split column explicitly.
    * a calibration protocol makes V its calibration data for ``dataset``
      and T its evaluation data: ``xdomain`` / ``outdomain`` / ``indomain``
      V = the other (out-of-domain / same-domain) datasets pooled, T =
      ``dataset``; ``indata`` V = a random 80% of ``dataset`` (the first
      split of :func:`~beyondauc.expected_accuracy`, same seed), T = the
      other 20%; ``outdata`` V = ``dataset``, T = all other datasets.

    Returns
    -------
    y_val, s_val, y_test, s_test : ndarray
        Labels 0/1 (int8) and scores.

    Examples
    --------
    >>> from beyondauc import load_demo, cohorts
    >>> yv, sv, yt, st = cohorts(load_demo(), "logreg", "wine")
    >>> len(yv) + len(yt)
    107
    """
    v, t = cohort_rows(
        bench, dataset, protocol=protocol, val_split=val_split, test_split=test_split, random_state=random_state
    )
    y_all, s_all = bench.labels(), bench.scores(model)
    return y_all[v], s_all[v], y_all[t], s_all[t]


def cohort_rows(
    bench: Benchmark,
    dataset: str,
    *,
    protocol: str | None = None,
    val_split: str = "val",
    test_split: str = "test",
    random_state: int | None = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows (indices into the benchmark) of the validation and test cohorts of ``dataset``; see :func:`cohorts`.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.diagnostics.benchmark import cohort_rows
    >>> v, t = cohort_rows(load_demo(), "wine")
    >>> len(v) + len(t)
    107
    """
    kind = check_cohort_protocol(bench, protocol)
    sl = bench.rows_of(dataset)
    if kind == "split":
        split = bench.frame["split"].to_numpy()[sl].astype(str)
        for name, value in (("val_split", val_split), ("test_split", test_split)):
            if not (split == str(value)).any():
                raise ValueError(
                    f"`{name}`={value!r} names no rows of dataset {dataset!r}; its split values are {sorted(set(split.tolist()))}"
                )
        return sl.start + np.flatnonzero(split == str(val_split)), sl.start + np.flatnonzero(split == str(test_split))
    v, t = protocol_masks(bench, dataset, kind, check_random_state(random_state))
    return np.flatnonzero(v), np.flatnonzero(t)


def _default_sigma_max(model, dataset, sv, st):
    """The score range of both cohorts (None when it is 0); refused where floating point cannot hold it."""
    both = np.concatenate([sv, st])
    if not len(both):
        return None
    lo, hi = float(both.min()), float(both.max())
    with np.errstate(over="ignore"):  # say so in the data's terms, not the parameter's
        if not np.isfinite(hi - lo):
            raise ValueError(
                f"model {model!r} on dataset {dataset!r}: the scores of the two cohorts range "
                f"from {lo!r} to {hi!r}, a range wider than floating point can hold; rescale "
                "the scores"
            )
    rng = float(both.max() - both.min())
    return rng if rng > 0 else None


@model_view_of
def cohort_diagnostics(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    protocol: str | None = None,
    val_split: str = "val",
    test_split: str = "test",
    sigma_max: float | None = None,
    n_points: int = 21,
    n_repeats: int = 20,
    p: float = 2,
    random_state: int | None = 0,
    noise_method: str = "exact",
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    n_permutations: int = 0,
    cells: int | None = None,
) -> CohortDiagnostics:
    """Bias and noise robustness of both cohorts, drift and the Wasserstein matrix.

    The cohorts come from :func:`cohorts`.  Both cohorts' robustness uses the
    same ``sigma_max`` -- by default the score range of V and T together -- so
    their numbers and curves are comparable.

    Parameters
    ----------
    bench : Benchmark
    model, dataset : str
    protocol : {None, "split", "xdomain", "outdomain", "indomain", "indata", "outdata"}
    val_split, test_split : str
        Split values of V and T when the split column is used.
    sigma_max : float > 0, default=None
    n_points, n_repeats : int
        Sigma grid size of the robustness curves, and Monte Carlo repeats of
        the noise robustness with ``noise_method="monte_carlo"``.
    p : float >= 1, default=2
        Wasserstein order of ``.wasserstein``; the matrices at p = 1 and
        p = 2 are computed either way (``.wasserstein_p1``, ``.wasserstein_p2``).
    random_state : int or None, default=0
        Seeds the indata split and the Monte Carlo noise; the bootstrap draws from its
        child stream for ``dataset``'s place among the benchmark's datasets
        (every model reads the same replicates of a dataset; two datasets draw
        independent ones).
    n_bootstrap : int >= 0, default=0
        With B > 0, intervals of the AUCs and bias robustness (percentile),
        drift and W (BCa) from B replicates of a bootstrap stratified by
        cohort and class (see :func:`diagnostics_intervals`); noise
        robustness gets none.  When rows repeat items (an ``epoch`` or
        ``sample`` column) the replicates draw whole items: within cohort
        and class on scores where every item has one label, within cohort
        on answers (and on scores whose items hold both classes, as
        clusters of units do).
    confidence_level : float in (0, 1), default=0.95
    noise_method : {"exact", "monte_carlo"}, default="exact"
        How :func:`~beyondauc.noise_robustness` computes the expected AUC
        under noise: exactly, or by seeded draws (as the testAUC package).
    n_permutations : int >= 0, default=0
        With B > 0, permutation p-values of drift and W (cohorts shuffled
        within class; within the whole pool for answers, as the bootstrap
        stratifies; whole items when rows repeat items), seeded as the
        bootstrap: is there drift at all?  Drift
        and W whose interval cannot contain them are then not warned about:
        the null answers their question.
    cells : int >= 2 or None, default=None
        The bootstrap, its jackknife and the permutation null run on at most
        this many cells of the scores per class (both cohorts together;
        :func:`~beyondauc.metrics.uncertainty.cells.cell_scores`); None: on every
        distinct score.  The point estimates are exact either way.

    Returns
    -------
    CohortDiagnostics

    Examples
    --------
    >>> from beyondauc import load_demo, cohort_diagnostics
    >>> d = cohort_diagnostics(load_demo(), "logreg", "wine", n_repeats=2)
    >>> d.cohorts, sorted(d.to_dict())[:3]
    ('split', ['auc_test', 'auc_val', 'bias_robustness_test'])
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    kind = check_cohort_protocol(bench, protocol)
    v, t = cohort_rows(
        bench, dataset, protocol=kind, val_split=val_split, test_split=test_split, random_state=random_state
    )
    y_all, s_all = bench.labels(), bench.scores(model)
    yv, sv, yt, st = y_all[v], s_all[v], y_all[t], s_all[t]
    if sigma_max is None:
        sigma_max = _default_sigma_max(model, dataset, sv, st)
    common = dict(sigma_max=sigma_max, n_points=n_points)
    noise = dict(common, n_repeats=n_repeats, random_state=random_state, noise_method=noise_method)
    bv, bt = bias_robustness(yv, sv, **common), bias_robustness(yt, st, **common)
    w = wasserstein_matrix(yv, sv, yt, st, p=p)
    drift = sens_spec_drift(yv, sv, yt, st)
    n_permutations = check_int(n_permutations, "n_permutations", minimum=0)
    options = DiagnosticsBootstrap(
        n_bootstrap,
        sigma_max,
        p,
        confidence_level,
        dataset_seed(check_random_state(random_state), list(bench.datasets).index(dataset)),
        by_class=bench.kind != "answers",
        answered=DIAGNOSTIC_BCA if n_permutations else (),
    )
    estimate = dict(zip(DIAGNOSTIC_INTERVALS, (bv.auc, bt.auc, bv.score, bt.score, drift.score, w.score)))
    items = _cohort_items(bench, dataset, kind, v, t) if (n_bootstrap or n_permutations) else None
    cv, ct = cell_cohorts(yv, sv, yt, st, check_cells(cells))  # what the Monte Carlo runs on
    uncertainty = _uncertainty((yv, cv, yt, ct), items, estimate, options, n_permutations)
    robustness = dict(bias_val=bv, bias_test=bt, auc_val=bv.auc, auc_test=bt.auc, drift=drift, wasserstein=w)
    robustness.update(noise_val=noise_robustness(yv, sv, **noise), noise_test=noise_robustness(yt, st, **noise))
    cohort = dict(model=model, dataset=dataset, cohorts=kind, y_val=yv, s_val=sv, y_test=yt, s_test=st)
    return CohortDiagnostics(**cohort, **robustness, **uncertainty, n_permutations=n_permutations)


def _uncertainty(cohorts, items, estimate, options, n_permutations):
    """The intervals (with ``options.n_bootstrap``) and the permutation null (with ``n_permutations``) of the
    numbers of two cohorts, as :class:`CohortDiagnostics` fields; ``items``: each row's item, or None."""
    yv, sv, yt, st = cohorts
    out = {}
    if n_permutations:
        ids = (None, None) if items is None else (items[: len(yv)], items[len(yv) :])
        design = NullDesign(by_class=options.by_class, items_val=ids[0], items_test=ids[1])
        out.update(
            permutation_null(
                yv,
                sv,
                yt,
                st,
                n_permutations=n_permutations,
                p=options.p,
                random_state=options.random_state,
                design=design,
            ).to_dict()
        )
    if options.n_bootstrap:
        options = replace(options, p=check_p(options.p))
        table, reps, jack = diagnostics_bootstrap(yv, sv, yt, st, estimate, options, items=items)
        intervals, method, note = interval_summary(table)
        out.update(intervals=intervals, replicates=reps, jackknife=jack, interval_method=method, interval_note=note)
    return out


def _cohort_items(bench, dataset, kind, v, t):
    """Each cohort row's item (V's rows then T's, 0 .. n_items - 1) when rows repeat items, else None.

    An item whose samples the cohorts split (a random ``indata`` split of rows) cannot be drawn whole: the
    rows are then drawn one by one, with a warning.
    """
    if not bench.repeated:
        return None
    codes = bench.items()
    items = np.unique(codes[np.concatenate([v, t])], return_inverse=True)[1].ravel()
    if first_split_item(items, np.repeat([0, 1], [len(v), len(t)])) is not None:
        warnings.warn(
            f"cohorts {kind!r} of dataset {dataset!r} split the repeated samples of some items between the "
            "validation and the test cohort: the diagnostics' intervals and permutation null draw rows, not items "
            "(choose cohorts that keep items whole, e.g. a split column or 'xdomain')",
            UserWarning,
            stacklevel=4,
        )
        return None
    return items


@each_model_view(("model", "dataset"))
def diagnostics_table(
    bench: Benchmark,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    protocol: str | None = None,
    **options: object,
) -> pd.DataFrame:
    """Headline diagnostics of every model on every dataset, tidy.

    One row per (model, dataset) with the keys of
    :meth:`CohortDiagnostics.to_dict`; ``options`` go to
    :func:`cohort_diagnostics` (``n_bootstrap=B`` adds ``<name>_low`` /
    ``<name>_high`` columns).

    Examples
    --------
    >>> from beyondauc import load_demo, diagnostics_table
    >>> t = diagnostics_table(load_demo(), models=["logreg"], datasets=["wine"], n_repeats=2)
    >>> t[["model", "dataset", "cohorts"]].values.tolist()
    [['logreg', 'wine', 'split']]
    """
    models = bench.models if models is None else list(models)
    datasets = bench.datasets if datasets is None else list(datasets)
    return diagnostics_frame(
        cohort_diagnostics(bench, m, d, protocol=protocol, **options) for m in models for d in datasets
    )


def diagnostics_frame(results: Iterable[CohortDiagnostics]) -> pd.DataFrame:
    """Tidy table of already computed :class:`CohortDiagnostics`, one row each.

    What :func:`diagnostics_table` returns, for results that are also drawn
    (e.g. with :class:`~beyondauc.plots.DiagnosticsDashboard`), so nothing is
    computed twice.

    Examples
    --------
    >>> from beyondauc import load_demo, cohort_diagnostics, diagnostics_frame
    >>> bench = load_demo()
    >>> results = [cohort_diagnostics(bench, "svm", d, n_repeats=2) for d in ("wine", "diabetes")]
    >>> diagnostics_frame(results)["dataset"].tolist()
    ['wine', 'diabetes']
    """
    rows = []
    for r in results:
        if not isinstance(r, CohortDiagnostics):
            raise TypeError(f"`results` must hold CohortDiagnostics, got {type(r).__name__}")
        rows.append(r.to_dict())
    return pd.DataFrame(rows)
