"""The calibration of the confidence as given, on a benchmark: one row per model and dataset, with intervals.

For answers (and scores that are probabilities) the confidence a model gave
is judged as it is: the Brier score with Murphy's decomposition, the
negative log-likelihood, the ECE over equal-width and equal-mass bins, the
smooth ECE, and PRR (over the whole rejection curve and its first half).

The intervals come from a paired bootstrap of the answers: the replicate
counts of a dataset are drawn once from the evaluation's seed and that
dataset's place (every model reads the same counts), items drawn whole when
rows repeat them (:mod:`beyondauc.metrics.uncertainty.clusters`).  Every number is
computed for all replicates at once from per-group sums of the counts:

* Brier, NLL: weighted means of per-answer terms;
* the decomposition: sums per distinct confidence;
* ECE: sums per bin, the bins of the point estimate kept fixed (for
  equal-mass bins, the edges of the data, not redrawn per replicate);
* PRR: the rejection curves of a replicate are linear between distinct
  confidences (tied answers enter together), so the area under the mean
  kept loss is a sum of harmonic-number differences per distinct value;
* the smooth ECE: its bandwidth is searched anew for every replicate, as
  ``relplot`` searches it for the data, by one bisection run for all
  replicates at once (:mod:`beyondauc.metrics.selective.smooth_replicates`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import digamma, xlogy

from ..calibration.reliability import expected_calibration_error
from ..uncertainty.bootstrap import bootstrap_counts, dataset_seed, honest_interval
from ..uncertainty.clusters import cluster_counts
from .given_confidence import (
    NLL_EPS,
    RejectionCurve,
    brier_score,
    negative_log_likelihood,
    prediction_rejection_ratio,
    rejection_curve,
    reliability_band,
    smooth_ece,
)
from .smooth_replicates import smooth_ece_replicates

if TYPE_CHECKING:
    from ...data.benchmark import Benchmark

__all__ = [
    "CURVE_POINTS",
    "GIVEN_BIASED",
    "GIVEN_ECE_TOLERANCE",
    "GIVEN_METRICS",
    "given_calibration_table",
    "given_calibration_replicates",
    "given_curves",
    "given_replicates",
    "probability_models",
    "stored_rejection_curve",
]

#: The numbers of the table, in order.
GIVEN_METRICS = (
    "brier",
    "reliability",
    "resolution",
    "uncertainty",
    "nll",
    "ece_uniform",
    "ece_quantile",
    "smooth_ece",
    "prr",
    "prr_half",
)
#: Numbers the bootstrap biases upwards (sums of absolute or squared gaps): bias-corrected intervals.  Not the
#: smooth ECE: its bandwidth adapts to the sample, its bias is small, and in seeded simulations its percentile
#: interval covered better than the bias-corrected one (``benchmarks/coverage_smooth_ece.py``).
GIVEN_BIASED = ("reliability", "ece_uniform", "ece_quantile")
#: The verdict's rule: the given confidence is miscalibrated where the whole ECE interval (equal-width bins)
#: lies above this.
GIVEN_ECE_TOLERANCE = 0.05
_CHUNK_CELLS = 1 << 22  # replicate x answer counts held at once
#: Points kept of each rejection curve in :func:`given_curves` (evenly spaced in the share rejected).
CURVE_POINTS = 201


def _groups(key):
    """(order, starts): the answers sorted by ``key`` descending and where each run of equal keys starts."""
    order = np.argsort(-key, kind="stable")
    k = key[order]
    return order, np.flatnonzero(np.r_[True, k[1:] != k[:-1]])


def _sums(W, order, starts, *values):
    """Per-group sums of the counts (and of the counts times each of ``values``): (R, groups) each."""
    Ws = W[:, order]
    return [np.add.reduceat(Ws, starts, axis=1)] + [np.add.reduceat(Ws * v[order], starts, axis=1) for v in values]


def _harmonic(x):
    """H(x) = 1 + 1/2 + ... + 1/x for whole x >= 0 (H(0) = 0)."""
    return digamma(x + 1.0) + np.euler_gamma


def _kept_area(count, loss, low, high):
    """Sum over kept = low .. high of the mean loss of the ``kept`` first answers, the groups entering in order.

    Within a group of ``c`` tied answers the kept loss grows linearly (a random
    order of the ties on average), so each group adds
    ``(L0 - K0 m) (H(b) - H(a)) + m (b - a)`` over its kept counts ``(a, b]``.
    """
    K1 = np.cumsum(count, axis=1)
    K0 = K1 - count
    L0 = np.cumsum(loss, axis=1) - loss
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(count > 0, loss / count, 0.0)
    a = np.clip(K0, low[:, None] - 1, high[:, None])
    b = np.clip(K1, low[:, None] - 1, high[:, None])
    return ((L0 - K0 * m) * (_harmonic(b) - _harmonic(a)) + m * (b - a)).sum(axis=1)


def _prr(W, quality, conf, fraction):
    """PRR of each replicate (rows of ``W``) over the first ``fraction`` of its rejection curve."""
    loss = 1.0 - quality
    n = W.sum(axis=1).astype(np.float64)
    k = np.floor(fraction * n)  # the rejection steps read, as prediction_rejection_ratio counts them
    low, high = n - k + 1, n
    model_order, model_starts = _groups(conf)
    oracle_order, oracle_starts = _groups(-loss)  # the oracle keeps the smallest losses first
    model = _kept_area(*_sums(W, model_order, model_starts, loss), low, high)
    oracle = _kept_area(*_sums(W, oracle_order, oracle_starts, loss), low, high)
    random = (W @ loss) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (random - model / k) / (random - oracle / k)
    return np.where((k >= 2) & (random * k - oracle > 1e-12 * k), out, np.nan)


def _brier_parts(W, quality, conf):
    """(brier, reliability, resolution, uncertainty) of each replicate: Murphy's decomposition by distinct confidence."""
    n = W.sum(axis=1).astype(np.float64)
    order, starts = _groups(conf)
    count, qsum = _sums(W, order, starts, quality)
    c = conf[order][starts]
    mean = (W @ quality) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        qbar = np.where(count > 0, qsum / count, 0.0)
    reliability = (count * (c - qbar) ** 2).sum(axis=1) / n
    resolution = (count * (qbar - mean[:, None]) ** 2).sum(axis=1) / n
    uncertainty = (W @ (quality**2)) / n - mean**2
    brier = (W @ ((conf - quality) ** 2)) / n
    return brier, reliability, resolution, uncertainty


def _ece(W, quality, conf, bins):
    """ECE of each replicate over fixed bins (one bin id per answer)."""
    order, starts = _groups(-bins.astype(np.float64))
    _, csum, qsum = _sums(W, order, starts, conf, quality)
    return np.abs(csum - qsum).sum(axis=1) / W.sum(axis=1)


def given_replicates(
    quality: ArrayLike, confidence: ArrayLike, counts: ArrayLike, *, n_bins: int = 15
) -> dict[str, np.ndarray]:
    """Every number of :data:`GIVEN_METRICS` for each row of replicate ``counts`` (R, n).

    With counts of 1 they are the point estimates of :func:`brier_score`,
    :func:`negative_log_likelihood`, :func:`expected_calibration_error`
    (both strategies), :func:`smooth_ece` (to rounding, see
    :func:`~beyondauc.metrics.selective.smooth_replicates.smooth_ece_replicates`)
    and :func:`prediction_rejection_ratio`.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import brier_score, prediction_rejection_ratio
    >>> from beyondauc.metrics.selective.given_calibration import given_replicates
    >>> q, c = np.array([1, 0, 1, 1, 0.5]), np.array([0.9, 0.8, 0.7, 0.7, 0.2])
    >>> r = given_replicates(q, c, np.ones((1, 5)), n_bins=2)
    >>> bool(np.isclose(r["brier"][0], brier_score(q, c).score)), bool(np.isclose(r["prr"][0],
    ...                                                                       prediction_rejection_ratio(q, c)))
    (True, True)
    """
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(confidence, dtype=np.float64)
    W = np.asarray(counts, dtype=np.float64)
    uniform = np.searchsorted(np.linspace(0.0, 1.0, n_bins + 1)[1:-1], c)  # as reliability_bins bins them
    quantile = np.searchsorted(np.percentile(c, np.linspace(0, 1, n_bins + 1) * 100)[1:-1], c)
    brier, reliability, resolution, uncertainty = _brier_parts(W, q, c)
    terms = -(xlogy(q, np.maximum(c, NLL_EPS)) + xlogy(1 - q, np.maximum(1 - c, NLL_EPS)))
    return {
        "brier": brier,
        "reliability": reliability,
        "resolution": resolution,
        "uncertainty": uncertainty,
        "nll": (W @ terms) / W.sum(axis=1),
        "ece_uniform": _ece(W, q, c, uniform),
        "ece_quantile": _ece(W, q, c, quantile),
        "smooth_ece": smooth_ece_replicates(q, c, W),
        "prr": _prr(W, q, c, 1.0),
        "prr_half": _prr(W, q, c, 0.5),
    }


def _estimates(q, c, n_bins):
    """The point estimates, from the public functions."""
    b = brier_score(q, c)
    return {
        "brier": b.score,
        "reliability": b.reliability,
        "resolution": b.resolution,
        "uncertainty": b.uncertainty,
        "nll": negative_log_likelihood(q, c),
        "ece_uniform": expected_calibration_error(q, c, n_bins=n_bins, strategy="uniform"),
        "ece_quantile": expected_calibration_error(q, c, n_bins=n_bins, strategy="quantile"),
        "smooth_ece": smooth_ece(q, c),
        "prr": prediction_rejection_ratio(q, c),
        "prr_half": prediction_rejection_ratio(q, c, max_rejection=0.5),
    }


def _replicate_rows(q, c, items, n_bootstrap, seed, n_bins):
    """:func:`given_replicates` of the dataset's bootstrap, chunk of replicates by chunk: (n_bootstrap,) each."""
    strata = np.zeros(len(q), dtype=np.int64)
    step = max(1, _CHUNK_CELLS // max(len(q), 1))
    parts = []
    for b0 in range(0, n_bootstrap, step):  # chunks of replicates, each computed at once
        b1 = min(n_bootstrap, b0 + step)
        W = (
            bootstrap_counts(strata, n_bootstrap, random_state=seed, start=b0, stop=b1)
            if items is None
            else cluster_counts(items, strata, n_bootstrap, random_state=seed, start=b0, stop=b1)
        )
        parts.append(given_replicates(q, c, W, n_bins=n_bins))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def probability_models(bench: Benchmark) -> list[str]:
    """The models whose confidence the table judges: every model of answers; of scores, those in [0, 1]."""
    if bench.kind == "answers":
        return list(bench.models)
    return [m for m in bench.models if len(bench) and bench.scores(m).min() >= 0 and bench.scores(m).max() <= 1]


def given_calibration_replicates(
    bench: Benchmark, *, n_bootstrap: int = 200, random_state: int | None = 0, n_bins: int = 15
) -> dict[str, dict[str, np.ndarray]]:
    """The bootstrap replicates of :func:`given_calibration_table`: model -> name -> (n_bootstrap, n_datasets).

    Dataset ``i``'s replicate counts come from ``random_state``'s child for
    ``i`` (:func:`~beyondauc.metrics.uncertainty.bootstrap.dataset_seed`), drawn over its
    items, the same for every model: replicate ``b`` of two models is paired.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.given_calibration import given_calibration_replicates
    >>> reps = given_calibration_replicates(load_demo(kind="answers").subset(models=["knn"]), n_bootstrap=10)
    >>> reps["knn"]["brier"].shape
    (10, 5)
    """
    models = probability_models(bench)
    names = list(GIVEN_METRICS)
    out = {m: {n: np.full((n_bootstrap, len(bench.datasets)), np.nan) for n in names} for m in models}
    items_all = bench.items() if bench.repeated else None
    for i, d in enumerate(bench.datasets):  # a loop over datasets and models, each vectorised over replicates
        sl = bench.rows_of(d)
        items = None if items_all is None else np.unique(items_all[sl], return_inverse=True)[1]
        for m in models:
            reps = _replicate_rows(
                bench.quality(d, model=m), bench.scores(m, d), items, n_bootstrap, dataset_seed(random_state, i), n_bins
            )
            for n in names:
                out[m][n][:, i] = reps[n]
    return out


def given_calibration_table(
    bench: Benchmark,
    *,
    n_bootstrap: int = 200,
    confidence_level: float = 0.95,
    random_state: int | None = 0,
    n_bins: int = 15,
    replicates: dict[str, dict[str, np.ndarray]] | None = None,
) -> pd.DataFrame:
    """The calibration of the given confidence: one row per model and dataset, each number with its interval.

    Columns: ``model``, ``dataset``, ``n``, ``n_items``, then each of
    :data:`GIVEN_METRICS` with ``<name>_low`` and ``<name>_high`` (NaN
    without ``n_bootstrap``, or where no interval holds the estimate), and ``miscalibrated``: whether the ECE (equal-width bins)
    interval lies wholly above :data:`GIVEN_ECE_TOLERANCE`.  For a scores
    benchmark the models whose scores are probabilities are judged, the
    confidence being the probability of the positive class.  Percentile
    intervals; bias-corrected ones for :data:`GIVEN_BIASED`.  ``replicates``:
    :func:`given_calibration_replicates`' of the same benchmark, when already drawn.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.given_calibration import given_calibration_table
    >>> t = given_calibration_table(load_demo(kind="answers").subset(models=["logreg"], datasets=["wine"]),
    ...                             n_bootstrap=50)
    >>> bool(t.loc[0, "ece_uniform_low"] <= t.loc[0, "ece_uniform"] <= t.loc[0, "ece_uniform_high"])
    True
    """
    if replicates is None and n_bootstrap:
        replicates = given_calibration_replicates(
            bench, n_bootstrap=n_bootstrap, random_state=random_state, n_bins=n_bins
        )
    rows = []
    n_items = bench.item_counts()
    for i, d in enumerate(bench.datasets):  # a loop over datasets and models
        for m in probability_models(bench):
            q, c = bench.quality(d, model=m), bench.scores(m, d)
            row = {"model": m, "dataset": d, "n": len(q), "n_items": int(n_items[i]), **_estimates(q, c, n_bins)}
            for name in GIVEN_METRICS:
                low = high = np.nan
                if replicates and name in replicates[m]:
                    low, high, _, _ = honest_interval(
                        replicates[m][name][:, i],
                        row[name],
                        confidence_level,
                        acceleration=0.0 if name in GIVEN_BIASED else None,
                    )
                row[f"{name}_low"], row[f"{name}_high"] = low, high
            row["miscalibrated"] = bool(row["ece_uniform_low"] > GIVEN_ECE_TOLERANCE)
            rows.append(row)
    columns = [
        "model",
        "dataset",
        "n",
        "n_items",
        *(c for n in GIVEN_METRICS for c in (n, f"{n}_low", f"{n}_high")),
        "miscalibrated",
    ]
    out = pd.DataFrame(rows, columns=columns)  # no model with a probability: no rows, the same columns
    return out if rows else out.astype({"model": object, "dataset": object, "miscalibrated": bool})


def given_curves(bench: Benchmark, *, n_bins: int = 15, level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(reliability bins with their Wilson band, rejection curves) of the given confidence, per model and dataset.

    The first table is :func:`reliability_band` (equal-width bins) with
    ``model`` and ``dataset``; the second :func:`rejection_curve`'s model,
    oracle and random curves at :data:`CURVE_POINTS` evenly spaced shares
    rejected (every point of shorter curves), columns ``model``, ``dataset``,
    ``rejection``, ``loss``, ``oracle``, ``random``.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.given_calibration import given_curves
    >>> bands, curves = given_curves(load_demo(kind="answers").subset(models=["logreg"], datasets=["wine"]))
    >>> len(curves), bool((curves["oracle"] <= curves["loss"] + 1e-12).all())
    (89, True)
    """
    bands, curves = [], []
    for d in bench.datasets:  # a loop over datasets and models
        for m in probability_models(bench):
            q, c = bench.quality(d, model=m), bench.scores(m, d)
            key = {"model": m, "dataset": d}
            bands.append(reliability_band(q, c, n_bins=n_bins, level=level).assign(**key))
            rc = rejection_curve(q, c)
            keep = np.unique(np.rint(np.linspace(0, len(q) - 1, min(CURVE_POINTS, len(q)))).astype(np.int64))
            curves.append(
                pd.DataFrame(
                    {
                        **key,
                        "rejection": rc.rejection[keep],
                        "loss": rc.model[keep],
                        "oracle": rc.oracle[keep],
                        "random": rc.random[keep],
                    }
                )
            )
    columns = (
        ["model", "dataset", "bin", "mean_confidence", "accuracy", "count", "low", "high"],
        ["model", "dataset", "rejection", "loss", "oracle", "random"],
    )
    return tuple(
        pd.concat(t, ignore_index=True)[cols] if t else pd.DataFrame(columns=cols)
        for t, cols in zip((bands, curves), columns)
    )


def stored_rejection_curve(rows: pd.DataFrame) -> RejectionCurve:
    """The :class:`RejectionCurve` of one model and dataset back from :func:`given_curves`' rows (thinned).

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.given_calibration import given_curves, stored_rejection_curve
    >>> _, curves = given_curves(load_demo(kind="answers").subset(models=["knn"], datasets=["wine"]))
    >>> len(stored_rejection_curve(curves).rejection)
    89
    """
    oracle, random = rows["oracle"].to_numpy(float), rows["random"].to_numpy(float)
    return RejectionCurve(
        rejection=rows["rejection"].to_numpy(float),
        model=rows["loss"].to_numpy(float),
        oracle=oracle,
        random=random,
        constant_loss=bool(len(oracle) and oracle[0] == random[0]),
    )
