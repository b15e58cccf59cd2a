"""One model against a reference model: differences with intervals and p-values.

A report compares each model with a *reference*: the baseline the user names,
or, without one, the best other model by mean AUC (:func:`reference_models`).
Two kinds of evidence:

* the AUC: the paired DeLong test on the same examples
  (:func:`~beyondauc.metrics.uncertainty.intervals.compare_auc`), per dataset, and for the
  mean over datasets a normal interval from the datasets' DeLong variances
  (:func:`delong_differences`);
* every other number (deployed accuracy, kappa, DiSCA, drift): the paired
  bootstrap, the difference of the two models' values on the *same*
  resample, replicate by replicate (:func:`paired_differences`), with the
  percentile interval and the two-sided bootstrap p-value of
  :func:`bootstrap_pvalue`.

Everything here is a pure function of arrays (or of a
:class:`~beyondauc.GridBootstrap`) returning a tidy DataFrame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.validation import check_number
from .bootstrap import honest_interval
from .clustered_delong import clustered_difference_variance
from .intervals import compare_auc

__all__ = [
    "bootstrap_pvalue",
    "delong_differences",
    "grid_differences",
    "holm_adjust",
    "paired_differences",
    "reference_models",
]

#: Columns of every difference table, after its key columns.
DIFFERENCE_COLUMNS = ("estimate", "reference_estimate", "difference", "low", "high", "pvalue")


def bootstrap_pvalue(replicates: ArrayLike, *, axis: int = 0) -> np.ndarray:
    """Two-sided bootstrap p-value of "the difference is 0", from replicates of the difference.

    With ``n`` finite replicates of which ``k_le`` are <= 0 and ``k_ge`` are >= 0,

    ``p = min(1, 2 * min(k_le + 1, k_ge + 1) / (n + 1))``

    the share of replicates on the less common side of 0, doubled; the ``+1``
    (Davison & Hinkley 1997, eq. 4.11) counts the observed difference as one
    more replicate, so ``p`` is never 0 and, with ``n`` replicates, at least
    ``2 / (n + 1)``.  NaN replicates are left out; none finite gives NaN.

    Parameters
    ----------
    replicates : array-like
        Replicates of the difference along ``axis``.
    axis : int, default=0

    Returns
    -------
    ndarray
        The p-values (the shape of ``replicates`` without ``axis``).

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.paired import bootstrap_pvalue
    >>> float(bootstrap_pvalue([0.1, 0.2, 0.3, -0.1]))
    0.8
    >>> float(bootstrap_pvalue([0.1] * 99))  # every replicate above 0: the smallest p of 99 replicates
    0.02
    """
    r = np.moveaxis(np.asarray(replicates, dtype=float), axis, 0)
    finite = np.isfinite(r)
    n = finite.sum(axis=0)
    le = ((r <= 0) & finite).sum(axis=0)
    ge = ((r >= 0) & finite).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.minimum(1.0, 2.0 * (np.minimum(le, ge) + 1.0) / (n + 1.0))
    return np.where(n > 0, p, np.nan)


def holm_adjust(pvalues: ArrayLike, *, groups: ArrayLike | None = None) -> np.ndarray:
    """Holm's step-down adjusted p-values, within each family of tests.

    With the ``m`` finite p-values of a family sorted ascending,
    ``p_(1) <= ... <= p_(m)``, the adjusted value of the ``i``-th is
    ``min(1, max_{j <= i} (m - j + 1) * p_(j))`` (Holm 1979): rejecting where
    the adjusted value is below ``alpha`` controls the family-wise error rate
    at ``alpha`` under any dependence between the tests.  NaN p-values (a
    test that could not be made) are left out of their family and stay NaN.

    Parameters
    ----------
    pvalues : array-like of shape (n,)
        The raw p-values.
    groups : array-like of shape (n,), optional
        The family of each test (any hashable labels); default one family.

    Returns
    -------
    ndarray of shape (n,)
        The adjusted p-values, in the order given.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.paired import holm_adjust
    >>> holm_adjust([0.01, 0.04, 0.03, float("nan")]).round(4).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> holm_adjust([0.01, 0.04, 0.03, 0.02], groups=["a", "a", "b", "b"]).round(4).tolist()
    [0.02, 0.04, 0.04, 0.04]
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    if np.any(p[np.isfinite(p)] < 0) or np.any(p[np.isfinite(p)] > 1):
        raise ValueError("`pvalues` must lie in [0, 1] (or be NaN)")
    g = np.zeros(len(p), dtype=np.intp) if groups is None else pd.factorize(np.asarray(groups, dtype=object).ravel())[0]
    if len(g) != len(p):
        raise ValueError(f"`groups` must have one label per p-value, got {len(g)} for {len(p)}")
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.lexsort((p[ok], g[ok]))]  # by family, then ascending p within it
    fam, ps = g[order], p[order]
    start = np.r_[0, np.flatnonzero(fam[1:] != fam[:-1]) + 1]
    size = np.diff(np.r_[start, len(fam)])
    rank = np.arange(len(fam)) - np.repeat(start, size)  # j - 1 within the family
    scaled = np.minimum(1.0, (np.repeat(size, size) - rank) * ps)
    out = np.full(len(p), np.nan)
    out[order] = pd.Series(scaled).groupby(fam).cummax().to_numpy()  # the running maximum within each family
    return out


def paired_differences(
    estimate: ArrayLike,
    reference: ArrayLike,
    replicates: ArrayLike | None = None,
    reference_replicates: ArrayLike | None = None,
    *,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """Differences ``estimate - reference`` with paired-bootstrap intervals and p-values.

    Parameters
    ----------
    estimate, reference : array-like of shape (k,)
        The two models' values (e.g. one per dataset).
    replicates, reference_replicates : array-like of shape (n_bootstrap, k), optional
        Their bootstrap replicates; replicate ``b`` of both must come from the
        same resample of the data (paired), so ``replicates[b] -
        reference_replicates[b]`` is replicate ``b`` of the difference.
        None: no interval and no p-value (NaN).
    confidence_level : float, default=0.95
        Of the percentile interval.

    Returns
    -------
    DataFrame
        One row per value: ``estimate``, ``reference_estimate``,
        ``difference``, ``low``, ``high`` (percentile interval of the
        replicates of the difference, NaN replicates left out), ``pvalue``
        (:func:`bootstrap_pvalue`), ``n_replicates`` (the finite ones),
        ``interval_note``: where the percentile interval would not contain
        the difference (the replicates of a biased statistic such as DiSCA
        or drift may sit on one side of it), ``low``, ``high`` and
        ``pvalue`` are NaN and the note says why
        (:func:`~beyondauc.metrics.uncertainty.bootstrap.honest_interval`); else ''.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.paired import paired_differences
    >>> rng = np.random.default_rng(0)
    >>> common = rng.normal(size=(200, 1))  # what both models share on a resample
    >>> a, b = 0.8 + 0.01 * common + 0.002 * rng.normal(size=(200, 1)), 0.7 + 0.01 * common
    >>> t = paired_differences([0.8], [0.7], a, b)
    >>> round(float(t["difference"][0]), 2), bool(t["low"][0] > 0), float(t["pvalue"][0])
    (0.1, True, 0.00995)
    """
    confidence_level = check_number(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    est = np.atleast_1d(np.asarray(estimate, dtype=float))
    ref = np.atleast_1d(np.asarray(reference, dtype=float))
    if est.shape != ref.shape or est.ndim != 1:
        raise ValueError(
            f"`estimate` and `reference` must be 1-d of one length, got shapes {est.shape} and {ref.shape}"
        )
    out = {"estimate": est, "reference_estimate": ref, "difference": est - ref}  # one frame made at the end
    if replicates is None or reference_replicates is None:
        return pd.DataFrame(
            {**out, "low": np.nan, "high": np.nan, "pvalue": np.nan, "n_replicates": 0, "interval_note": ""}
        )
    a = np.asarray(replicates, dtype=float).reshape(-1, len(est))
    b = np.asarray(reference_replicates, dtype=float).reshape(-1, len(est))
    if a.shape != b.shape:
        raise ValueError(
            f"`replicates` and `reference_replicates` must have one shape (paired), got {a.shape} and {b.shape}"
        )
    diff = a - b
    # the percentile interval, or NaN with the reason where it would not contain the difference (a biased
    # statistic such as DiSCA or drift): the rule of every per-dataset interval; the p-value goes with it
    kept = [honest_interval(diff[:, j], d, confidence_level) for j, d in enumerate(out["difference"].tolist())]
    low, high, _, note = (np.array(v) for v in zip(*kept)) if kept else (np.array([]),) * 4
    pvalue = np.where(note == "", bootstrap_pvalue(diff), np.nan)
    return pd.DataFrame(
        {
            **out,
            "low": low.astype(float),
            "high": high.astype(float),
            "pvalue": pvalue,
            "n_replicates": np.isfinite(diff).sum(axis=0),
            "interval_note": note.astype(object),
        }
    )


def delong_differences(
    y_true: ArrayLike,
    scores: ArrayLike,
    reference_scores: ArrayLike,
    groups: ArrayLike,
    *,
    confidence_level: float = 0.95,
    clusters: ArrayLike | None = None,
) -> pd.DataFrame:
    """The paired DeLong test of two scores within each group, and of the mean over groups.

    Parameters
    ----------
    y_true : array-like of 0/1, shape (n,)
    scores, reference_scores : array-like of shape (n,)
        Two models' scores of the same examples.
    groups : array-like of shape (n,)
        The group (dataset) of each example; the groups are disjoint sets of
        examples, so their AUC differences are independent.
    confidence_level : float, default=0.95
    clusters : array-like of shape (n,), optional
        Each example's item when rows are repeated samples of items: the
        variance is then Obuchowski's clustered one
        (:func:`~beyondauc.metrics.uncertainty.clustered_delong.clustered_difference_variance`).

    Returns
    -------
    DataFrame
        One row per group in order of first appearance, then ``"mean"``:
        ``group``, ``estimate`` and ``reference_estimate`` (the two AUCs),
        ``difference``, ``low``, ``high``, ``pvalue`` and ``standard_error``.
        A group's row is :func:`~beyondauc.compare_auc`.  The mean row is the
        mean of the groups' AUCs and differences over the groups where the
        test is defined, with standard error ``sqrt(sum(se_g**2)) / G``
        (independent groups), a normal interval and two-sided p-value.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.paired import delong_differences
    >>> y = [0, 0, 0, 1, 0, 1, 1, 1] * 2
    >>> a = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] * 2
    >>> b = [0.2, 0.1, 0.6, 0.4, 0.3, 0.5, 0.8, 0.7] * 2
    >>> t = delong_differences(y, a, b, ["x"] * 8 + ["z"] * 8)
    >>> t["group"].tolist(), round(float(t["difference"].iloc[-1]), 4)
    (['x', 'z', 'mean'], 0.0625)
    """
    from scipy.stats import norm

    y, a, b = (np.asarray(v) for v in (y_true, scores, reference_scores))
    g = np.asarray(groups)
    if not len(y) == len(a) == len(b) == len(g):
        raise ValueError(
            f"`y_true`, `scores`, `reference_scores` and `groups` must have one length, got "
            f"{len(y)}, {len(a)}, {len(b)} and {len(g)}"
        )
    rows = []
    for name in pd.unique(g):
        k = g == name
        c = compare_auc(y[k], a[k], b[k], confidence_level=confidence_level)
        row = (name, c.auc_a, c.auc_b, c.difference, c.low, c.high, c.pvalue, c.standard_error)
        rows.append(
            row
            if clusters is None
            else _clustered_row(row, y[k], a[k], b[k], np.asarray(clusters)[k], confidence_level)
        )
    t = pd.DataFrame(rows, columns=["group", *DIFFERENCE_COLUMNS, "standard_error"])
    ok = np.isfinite(t["standard_error"].to_numpy()) & np.isfinite(t["difference"].to_numpy())
    n = int(ok.sum())
    mean = ["mean", *([math.nan] * 7)]
    if n:
        se = math.sqrt(float((t["standard_error"][ok] ** 2).sum())) / n
        diff = float(t["difference"][ok].mean())
        z = norm.ppf(0.5 + confidence_level / 2)
        p = float(2 * norm.sf(abs(diff / se))) if se > 0 else float(diff == 0)
        mean = [
            "mean",
            float(t["estimate"][ok].mean()),
            float(t["reference_estimate"][ok].mean()),
            diff,
            max(diff - z * se, -1.0),
            min(diff + z * se, 1.0),
            p,
            se,
        ]
    return pd.concat([t, pd.DataFrame([mean], columns=t.columns)], ignore_index=True)


def _clustered_row(row, y, a, b, clusters, confidence_level):
    """A group's row of :func:`delong_differences` with Obuchowski's clustered standard error."""
    from scipy.stats import norm

    if not np.isfinite(row[-1]):
        return row  # the test is undefined there (a class with fewer than two examples)
    _, _, var = clustered_difference_variance(y, a, b, np.unique(clusters, return_inverse=True)[1])
    se, diff = math.sqrt(max(var, 0.0)) if np.isfinite(var) else math.nan, row[3]
    z = norm.ppf(0.5 + confidence_level / 2)
    p = float(2 * norm.sf(abs(diff / se))) if se > 0 else float(diff == 0) if np.isfinite(se) else math.nan
    return (*row[:4], max(diff - z * se, -1.0), min(diff + z * se, 1.0), p, se)


def reference_models(models: Sequence[str], mean_auc: ArrayLike, *, baseline: str | None = None) -> dict[str, str]:
    """The model each model is compared with: ``baseline``, or the best *other* model by mean AUC.

    Parameters
    ----------
    models : sequence of str
    mean_auc : array-like of shape (len(models),)
        Each model's mean AUC over datasets (NaN: never the best).
    baseline : str, optional
        A model of ``models``: every other model is compared with it, and the
        baseline itself with the best other model.

    Returns
    -------
    dict
        model -> reference model; a model alone has none (left out). Ties go
        to the first model in ``models``.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.paired import reference_models
    >>> reference_models(["a", "b", "c"], [0.9, 0.8, 0.7])
    {'a': 'b', 'b': 'a', 'c': 'a'}
    >>> reference_models(["a", "b", "c"], [0.9, 0.8, 0.7], baseline="c")
    {'a': 'c', 'b': 'c', 'c': 'a'}
    """
    models = list(models)
    auc = np.asarray(mean_auc, dtype=float)
    if baseline is not None and baseline not in models:
        raise ValueError(f"`baseline` {baseline!r} is not a model of the data; it has {models}")
    out = {}
    for i, m in enumerate(models):
        if baseline is not None and m != baseline:
            out[m] = baseline
            continue
        others = np.where(np.arange(len(models)) == i, -np.inf, np.nan_to_num(auc, nan=-1.0))
        if len(models) > 1:
            out[m] = models[int(np.argmax(others))]
    return out


class PairedReplicates(Protocol):
    """What :func:`grid_differences` reads of a grid bootstrap
    (:class:`~beyondauc.metrics.calibration.grid_bootstrap.GridBootstrap`)."""

    confidence_level: float

    def replicates_of(
        self, protocol: str, method: str, value: str
    ) -> tuple[list[str], list[str], np.ndarray, np.ndarray]: ...


def grid_differences(
    boot: PairedReplicates,
    protocol: str,
    method: str,
    references: Mapping[str, str],
    *,
    values: Sequence[str] = ("accuracy", "kappa"),
) -> pd.DataFrame:
    """Each model minus its reference on the grid bootstrap's paired replicates, per dataset and the mean.

    Parameters
    ----------
    boot : GridBootstrap
        Every model is evaluated on the same replicate of the data (paired).
    protocol, method : str
        The grid cell (e.g. the headline protocol and method).
    references : mapping
        model -> reference model (:func:`reference_models`).
    values : sequence of str, default=("accuracy", "kappa")
        Grid values to compare.

    Returns
    -------
    DataFrame
        ``model``, ``reference``, ``dataset`` (the datasets, then ``"mean"``:
        replicate b of the mean is the mean of the datasets' replicates b, as
        the grid bootstrap's own intervals of the mean), ``value``, then the
        columns of :func:`paired_differences`.
    """
    parts = []
    for value in values:
        datasets, models, point, reps = boot.replicates_of(protocol, method, value)
        col = {m: j for j, m in enumerate(models)}
        for m, ref in references.items():
            if m not in col or ref not in col:
                continue
            i, j = col[m], col[ref]
            t = paired_differences(
                point[:, i], point[:, j], reps[:, :, i], reps[:, :, j], confidence_level=boot.confidence_level
            )
            parts.append(t.assign(model=m, reference=ref, dataset=datasets, value=value))
    cols = ["model", "reference", "dataset", "value", *DIFFERENCE_COLUMNS, "n_replicates", "interval_note"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)
