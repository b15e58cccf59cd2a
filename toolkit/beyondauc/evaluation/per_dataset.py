"""The per-dataset stage of an evaluation: one model on one dataset (cohort diagnostics, selective answering)
as tidy rows, its curves thinned to what a figure resolves.

:func:`cohort_task` is the task :func:`~beyondauc.evaluate` runs per model and dataset, in any
process or on a Dask worker; it returns rows and replicates, never the results' arrays.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np

from ..metrics.calibration.ranking import (
    histogram_range,
)
from ..metrics.diagnostics.benchmark import cohort_diagnostics
from ..metrics.diagnostics.curves import class_histogram, roc_points
from ..metrics.selective.benchmark import selective_answering
from ..metrics.selective.scores import disca_resolution_sensitivity
from ..utils.validation import WarningLog

__all__ = ["thin", "thinned", "replicates_of", "DatasetJob", "cohort_task"]


_MAX_POINTS = 2000  # curves with more points are thinned to what a figure resolves


_THIN_STEP = 1e-3  # ... keeping a point whenever a coordinate moves by one step of this size


def thin(*columns):
    """Indices of the points to keep so a curve keeps its shape at figure resolution.

    Curves of at most ``_MAX_POINTS`` points are kept whole.  Longer ones keep
    the first and last point and every point where one of ``columns``
    (values in [0, 1], e.g. rates) enters a new step of ``_THIN_STEP``, plus
    the point before it, so every step of a step function keeps both its
    corners; no figure can tell the difference at 1000 pixels.
    """
    n = len(columns[0])
    if n <= _MAX_POINTS:
        return np.arange(n)
    keep = np.zeros(n, dtype=bool)
    keep[[0, -1]] = True
    for c in columns:
        q = np.floor(np.nan_to_num(np.asarray(c, dtype=float)) / _THIN_STEP)
        change = np.flatnonzero(q[1:] != q[:-1]) + 1
        keep[change] = True
        keep[change - 1] = True
    return np.flatnonzero(keep)


def _roc_points(y, s):
    """ROC points of one cohort, thinned to what a figure resolves."""
    fpr, tpr, thr = roc_points(y, s)
    k = thin(fpr, tpr)
    return fpr[k], tpr[k], thr[k]


def _diagnostic_curves(d, bins):
    """The tidy rows every figure of one CohortDiagnostics needs, as parts for :func:`concat_parts`."""
    key = dict(model=d.model, dataset=d.dataset)
    roc, hist, rob = [], [], []
    both = np.concatenate([d.s_val, d.s_test])
    edges = np.linspace(*histogram_range(both), bins + 1)  # the dashboard's bins, robust to outliers
    for cohort, y, s, bias, noise in (
        ("val", d.y_val, d.s_val, d.bias_val, d.noise_val),
        ("test", d.y_test, d.s_test, d.bias_test, d.noise_test),
    ):
        fpr, tpr, thr = _roc_points(y, s)
        roc.append((len(fpr), {**key, "cohort": cohort, "fpr": fpr, "tpr": tpr, "threshold": thr}))
        _, neg, pos, clipped = class_histogram(y, s, edges)
        hist.append(
            (
                bins,
                {
                    **key,
                    "cohort": cohort,
                    "bin": np.arange(bins),
                    "left": edges[:-1],
                    "right": edges[1:],
                    "negative": neg,
                    "positive": pos,
                    "clipped": clipped,
                },
            )
        )
        for kind, r in (("bias", bias), ("noise", noise)):
            rob.append(_keyed(r.to_frame(), **key, cohort=cohort, kind=kind))
    dr = d.drift
    k = thin(dr.sensitivity_val, dr.specificity_val, dr.sensitivity_test, dr.specificity_test)
    drift = _keyed(thinned(dr, k).to_frame(), **key)
    wass = []
    for w in (d.wasserstein_p1, d.wasserstein_p2):
        n, cols = _keyed(w.to_rows(), **key)
        wass.append(
            (
                n,
                {
                    "model": cols["model"],
                    "dataset": cols["dataset"],
                    "p": cols["p"],
                    "chosen": w.p == d.wasserstein.p,
                    **{c: cols[c] for c in ("row", "column", "distance", "score", "note")},
                },
            )
        )
    return roc, hist, rob, drift, wass


def thinned(curve, rows):
    """``curve`` (a dataclass of per-point arrays) with only the points ``rows``: a table of it is made thinned,
    never whole and then thinned."""
    arrays = {
        f.name: getattr(curve, f.name)
        for f in dataclasses.fields(curve)
        if isinstance(getattr(curve, f.name), np.ndarray) and getattr(curve, f.name).ndim == 1
    }
    n = max((len(a) for a in arrays.values()), default=0)
    if len(rows) == n:
        return curve
    return dataclasses.replace(curve, **{name: a[rows] for name, a in arrays.items() if len(a) == n})


def _keyed(frame, **key):
    """``frame``'s rows after the key columns, as the tables store them: a part for :func:`concat_parts`."""
    return len(frame), {**key, **{c: col.to_numpy() for c, col in frame.items()}}


def _selective_rows(r):
    """Tidy rows of one SelectiveAnswering: curves, tolerance tables, fluctuations (parts for :func:`concat_parts`)."""
    key = dict(model=r.model, dataset=r.dataset)
    curves, tol, fl = [], [], []
    parts = [("in", r.disca)] + ([("ood", r.disca_ood)] if r.disca_ood is not None else [])
    for where, d in parts:
        curves.append(_keyed(d.curve.to_frame(), **key, where=where, curve="grid"))
        tol.append(_keyed(d.b_table, **key, where=where))
        fl.append(_keyed(d.fluctuations, **key, where=where))
    e = r.curve
    k = thin(e.coverage, e.accuracy)
    curves.append(_keyed(thinned(e, k).to_frame(), **key, where="in", curve="exact"))
    return curves, tol, fl


def replicates_of(results, name):
    """``{"replicates": (D, B), "jackknife": (D, G), "estimate": (D,)}`` of ``name`` over D results (None without any).

    ``results`` are one model's :class:`~beyondauc.CohortDiagnostics` or
    :class:`~beyondauc.SelectiveAnswering`, one per dataset; each carries the
    replicates its own interval was read from, and the jackknife of its BCa
    acceleration.
    """
    done = [r for r in results if r.replicates is not None and r.jackknife is not None]
    if not done:
        return None
    return {
        "replicates": np.stack([r.replicates[name].to_numpy(dtype=float) for r in done]),
        "jackknife": np.stack([r.jackknife[name].to_numpy(dtype=float) for r in done]),
        "estimate": np.array([r.to_dict()[name] for r in done], dtype=float),
    }


@dataclass(frozen=True)
class DatasetJob:
    """What one task of the diagnostics stage does with a model's views (picklable: options only, no data)."""

    in_datasets: tuple
    options: dict
    sel_options: dict
    bins: int


def cohort_task(views, model, arg):
    """One model x dataset: cohort diagnostics and their curves, and selective answering (a task).

    ``views`` is the model's (benchmark view, selective benchmark view): the
    task's only data.  Returns tidy rows and the replicates behind the
    per-dataset intervals, never the results themselves (their arrays stay in
    the worker).
    """
    job, dataset = arg
    bench, bench_sel = views
    log = WarningLog()  # said once per run by evaluate, with the models and datasets they came from
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = cohort_diagnostics(bench, model, dataset, **job.options)
        roc, hist, rob, drift, wass = _diagnostic_curves(d, job.bins)
    log.record(caught, model=model, dataset=dataset)
    out = {
        "diagnostics": d.to_dict(),
        "roc": roc,
        "cohort_histograms": hist,
        "robustness": rob,
        "drift_curves": [drift],
        "wasserstein": wass,
        "selective": [],
        "tolerance": [],
        "coverage_curves": [],
        "fluctuations": [],
        "resolution_sensitivity": [],
        "disca": None,
        "drift": replicates_of([d], "drift"),
    }
    if dataset in job.in_datasets:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = selective_answering(bench_sel, model, dataset, **job.sel_options)
            sens = disca_resolution_sensitivity(r.confidence, r.correct, tolerance=job.sel_options["tolerance"])
        log.record(caught, model=model, dataset=dataset)
        out["selective"].append(r.to_dict())
        out["resolution_sensitivity"].append(_keyed(sens, model=model, dataset=dataset))
        out["coverage_curves"], out["tolerance"], out["fluctuations"] = _selective_rows(r)
        out["disca"] = replicates_of([r], "disca") if r.rankable else None  # as the mean: rankable ones only
    out["warnings"] = log.records
    return out
