"""How rankings change between AUC and expected accuracy, and why.

Pure functions of the tidy results of :func:`~beyondauc.expected_accuracy`
(or :func:`~beyondauc.expected_accuracy_grid`) and of a
:class:`~beyondauc.Benchmark`; each returns a tidy DataFrame.  Rank 1 is the
best; tied values share the best rank among them; a NaN score has no rank.
Ranks and rank changes are pandas' nullable integers (``Int64``), so they
print as ``2``, not ``2.0``, and a missing rank is ``<NA>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...data.benchmark import Benchmark
from ...utils.validation import check_int, check_option
from ..core.views import each_model_view
from .grid import SCORES
from .grid_bootstrap import GridBootstrap

__all__ = [
    "rank_table",
    "rank_changes",
    "kendall_tau",
    "calibration_modes",
    "best_of_methods",
    "score_variance",
    "score_histograms",
]

MEAN = "mean"


RANK_DTYPE = "Int64"


def rank(values):
    """Rank 1 = highest; ties share the minimum rank; NaN has no rank (<NA>).

    Returns a pandas ``Int64`` array."""
    from scipy.stats import rankdata

    values = np.asarray(values, dtype=float)
    out = np.zeros(len(values), dtype=np.int64)
    ok = np.isfinite(values)
    if ok.any():
        out[ok] = rankdata(-values[ok], method="min")
    return pd.arrays.IntegerArray(out, ~ok)


def check_results(results, score, *, single=True):
    if not isinstance(results, pd.DataFrame) or not {"dataset", "model", "auc"} <= set(results.columns):
        raise ValueError("`results` must be the DataFrame returned by expected_accuracy / expected_accuracy_grid")
    check_option(score, "score", ("auc", *SCORES))
    if single and {"protocol", "method"} <= set(results.columns):
        combos = results[["protocol", "method"]].drop_duplicates()
        if len(combos) > 1:
            raise ValueError(
                f"`results` holds {len(combos)} protocol x method combinations; select one "
                "(e.g. results.query(\"protocol == 'xdomain' and method == 'logistic'\"))"
            )


def rank_table(results: pd.DataFrame, *, score: str = "accuracy") -> pd.DataFrame:
    """Score and rank of every model on every dataset, plus the mean over datasets.

    Parameters
    ----------
    results : DataFrame
        From :func:`~beyondauc.expected_accuracy` (one protocol x method).
    score : {"auc", "accuracy", "kappa", "balanced_accuracy", "mcc", "f1"}

    Returns
    -------
    DataFrame
        ``dataset`` (the datasets, then ``"mean"``), ``model``, ``value``,
        ``rank`` -- the layout of the paper's Tables 1 and 2.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import rank_table
    >>> res = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "model": ["m1", "m2"] * 2,
    ...                     "auc": [.9, .8, .7, .6], "accuracy": [.6, .7, .8, .6]})
    >>> rank_table(res, score="accuracy")
      dataset model  value  rank
    0       a    m1    0.6     2
    1       a    m2    0.7     1
    2       b    m1    0.8     1
    3       b    m2    0.6     2
    4    mean    m1    0.7     1
    5    mean    m2    0.65    2
    """
    check_results(results, score)
    datasets = list(pd.unique(results["dataset"]))
    models = list(pd.unique(results["model"]))
    wide = results.pivot_table(index="dataset", columns="model", values=score, aggfunc="first", dropna=False)
    wide = wide.reindex(index=datasets, columns=models)
    with np.errstate(all="ignore"):
        mean = wide.mean(axis=0, skipna=True)
    table = pd.concat([wide, mean.to_frame(MEAN).T])
    values = table.to_numpy(dtype=float)
    ranks = np.concatenate([rank(row) for row in values])
    return pd.DataFrame(
        {
            "dataset": np.repeat(np.asarray(datasets + [MEAN], dtype=object), len(models)),
            "model": np.tile(np.asarray(models, dtype=object), len(table)),
            "value": values.ravel(),
            "rank": pd.array(ranks, dtype=RANK_DTYPE),
        }
    )


def _check_bootstrap_for(results, bootstrap):
    """(protocol, method) of ``results`` in ``bootstrap``; one-line error otherwise."""
    if not isinstance(bootstrap, GridBootstrap):
        raise ValueError(
            f"`bootstrap` must be a GridBootstrap (see bootstrap_grid) or None, got {type(bootstrap).__name__}"
        )
    if not {"protocol", "method"} <= set(results.columns):
        raise ValueError("`results` needs `protocol` and `method` columns to be matched with `bootstrap`")
    return results["protocol"].iloc[0], results["method"].iloc[0]


def rank_changes(
    results: pd.DataFrame,
    *,
    score: str = "accuracy",
    bootstrap: GridBootstrap | None = None,
) -> pd.DataFrame:
    """Rank of each model by AUC vs by ``score``, per dataset and for the mean.

    Parameters
    ----------
    results : DataFrame
        One protocol x method of :func:`~beyondauc.expected_accuracy_grid`.
    score : str, default="accuracy"
    bootstrap : GridBootstrap, optional
        From :func:`~beyondauc.bootstrap_grid` on the same benchmark: adds the
        rank intervals, ``sign_share``, ``p_value`` and ``significant`` of
        :meth:`GridBootstrap.rank_stability`, computed on its replicates.

    Returns
    -------
    DataFrame
        ``dataset`` (datasets then ``"mean"``), ``model``, ``auc``,
        ``auc_rank``, ``value`` (the score), ``rank``, and ``change`` =
        ``auc_rank - rank``: positive when the model climbs once it must
        commit to a threshold, negative when the AUC flattered it.  With
        ``bootstrap``: also ``auc_rank_low``, ``auc_rank_high``,
        ``rank_low``, ``rank_high``, ``change_low``, ``change_high``,
        ``sign_share`` (share of replicates whose change has the reported
        sign, or is 0 where 0 is reported: a stability, not a p-value),
        ``p_value`` (the bootstrap's two-sided p-value of the change),
        ``p_change`` (``sign_share`` under its former name) and
        ``significant`` (a nonzero change with ``p_value <= 1 -
        confidence_level``).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import rank_changes
    >>> res = pd.DataFrame({"dataset": ["a", "a"], "model": ["m1", "m2"],
    ...                     "auc": [.9, .8], "accuracy": [.6, .7]})
    >>> rank_changes(res).query("dataset == 'mean'")[["model", "auc_rank", "rank", "change"]]
      model  auc_rank  rank  change
    2    m1         1     2      -1
    3    m2         2     1       1
    """
    check_results(results, score)
    a = rank_table(results, score="auc").rename(columns={"value": "auc", "rank": "auc_rank"})
    s = rank_table(results, score=score)
    out = a.merge(s, on=["dataset", "model"], how="left")
    out["change"] = out["auc_rank"] - out["rank"]
    out = out[["dataset", "model", "auc", "auc_rank", "value", "rank", "change"]]
    if bootstrap is None:
        return out
    protocol, method = _check_bootstrap_for(results, bootstrap)
    st = bootstrap.rank_stability(protocol, method, score=score)
    extra = [
        "auc_rank_low",
        "auc_rank_high",
        "rank_low",
        "rank_high",
        "change_low",
        "change_high",
        "sign_share",
        "p_value",
        "p_change",
        "significant",
    ]
    return out.merge(st[["dataset", "model", *extra]], on=["dataset", "model"], how="left")


def kendall_tau(
    results: pd.DataFrame,
    *,
    score: str = "accuracy",
    bootstrap: GridBootstrap | None = None,
) -> pd.DataFrame:
    """Kendall's tau-b between the AUC ranking and the ``score`` ranking of the models.

    One row per dataset and one for the mean over datasets: ``dataset``,
    ``tau``, ``p_value``, ``n_models``.  tau = 1: same order; tau < 1: the AUC
    misorders some pairs of models.  NaN where fewer than two models have both.
    With ``bootstrap`` (a :class:`~beyondauc.GridBootstrap` of the same
    benchmark) also ``tau_low`` / ``tau_high``, the percentile interval of
    tau over its replicates.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import kendall_tau
    >>> res = pd.DataFrame({"dataset": ["a"] * 3, "model": ["m1", "m2", "m3"],
    ...                     "auc": [.9, .8, .7], "accuracy": [.7, .8, .6]})
    >>> round(float(kendall_tau(res)["tau"].iloc[0]), 3)
    0.333
    """
    from scipy.stats import kendalltau

    check_results(results, score)
    a = rank_table(results, score="auc")
    s = rank_table(results, score=score)
    rows = []
    for d in pd.unique(a["dataset"]):
        x = a.loc[a["dataset"] == d, "value"].to_numpy()
        y = s.loc[s["dataset"] == d, "value"].to_numpy()
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.sum() >= 2 and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
            res = kendalltau(x[ok], y[ok])
            tau, p = float(res.statistic), float(res.pvalue)
        else:
            tau, p = np.nan, np.nan
        rows.append(dict(dataset=d, tau=tau, p_value=p, n_models=int(ok.sum())))
    out = pd.DataFrame(rows, columns=["dataset", "tau", "p_value", "n_models"])
    if bootstrap is None:
        return out
    protocol, method = _check_bootstrap_for(results, bootstrap)
    kt = bootstrap.kendall(protocol, method, score=score)
    return out.merge(kt[["dataset", "tau_low", "tau_high"]], on="dataset", how="left")


def _means(grid, score):
    if not {"protocol", "method"} <= set(grid.columns):
        raise ValueError("`grid` must be the DataFrame returned by expected_accuracy_grid")
    check_results(grid, score, single=False)
    with np.errstate(all="ignore"):
        return grid.groupby(["protocol", "method", "model"], sort=False)[score].mean().reset_index()


def calibration_modes(grid: pd.DataFrame, *, score: str = "accuracy") -> pd.DataFrame:
    """Mean ``score`` over datasets for every protocol x method x model (the paper's Table 4).

    Returns
    -------
    DataFrame
        ``protocol``, ``method``, ``model``, ``value``, ``rank`` (among the
        models in that row), with a first row group ``protocol="auc"``,
        ``method=""`` holding the mean AUC for comparison.

    Examples
    --------
    >>> from beyondauc import load_demo, expected_accuracy_grid, calibration_modes
    >>> grid = expected_accuracy_grid(load_demo(), protocols=["xdomain"], methods=["logistic", "stump"])
    >>> calibration_modes(grid)["protocol"].unique().tolist()
    ['auc', 'xdomain']
    """
    m = _means(grid, score)
    auc = _means(grid, "auc").groupby("model", sort=False)["auc"].first().reset_index()
    auc = auc.assign(protocol="auc", method="").rename(columns={"auc": "value"})
    parts = []
    for (p, meth), g in [(("auc", ""), auc)] + list(
        m.rename(columns={score: "value"}).groupby(["protocol", "method"], sort=False)
    ):
        g = g.copy()
        g["protocol"], g["method"] = p, meth
        g["rank"] = rank(g["value"].to_numpy())
        parts.append(g[["protocol", "method", "model", "value", "rank"]])
    return pd.concat(parts, ignore_index=True)


def best_of_methods(grid: pd.DataFrame, *, score: str = "kappa") -> pd.DataFrame:
    """Best mean ``score`` over the calibration methods, per protocol and model (Table 5).

    Returns
    -------
    DataFrame
        ``protocol``, ``model``, ``value`` (the best method's mean over
        datasets), ``method`` (which method), ``rank`` among models.

    Examples
    --------
    >>> from beyondauc import load_demo, expected_accuracy_grid, best_of_methods
    >>> grid = expected_accuracy_grid(load_demo(), protocols=["xdomain", "outdata"])
    >>> t = best_of_methods(grid, score="kappa")
    >>> sorted(t["protocol"].unique())
    ['outdata', 'xdomain']
    """
    m = _means(grid, score)
    rows = []
    for (p, model), g in m.groupby(["protocol", "model"], sort=False):
        vals = g[score].to_numpy()
        if np.isfinite(vals).any():
            i = int(np.nanargmax(vals))
            rows.append(dict(protocol=p, model=model, value=float(vals[i]), method=g["method"].iloc[i]))
        else:
            rows.append(dict(protocol=p, model=model, value=np.nan, method=None))
    out = pd.DataFrame(rows, columns=["protocol", "model", "value", "method"])
    ranks = pd.Series(pd.array([pd.NA] * len(out), dtype=RANK_DTYPE), index=out.index)
    for _, idx in out.groupby("protocol", sort=False).groups.items():
        ranks.loc[idx] = rank(out.loc[idx, "value"].to_numpy())
    out["rank"] = ranks
    return out


@each_model_view(("model",))
def score_variance(
    bench: Benchmark,
    results: pd.DataFrame | None = None,
    *,
    score: str = "accuracy",
) -> pd.DataFrame:
    """Variance of each model's scores (the paper's Table 3).

    Raw scores are on different scales, so the variance is also given after
    min-max scaling each model's scores to [0, 1] over the whole benchmark
    (``scaled_variance``), which is comparable across models.  With
    ``results`` (one protocol x method), each model is also put in the group
    ``"better"``, ``"worse"`` or ``"same"`` by how its mean-over-datasets
    rank under ``score`` compares with its AUC rank, as in the paper.

    Returns
    -------
    DataFrame
        ``model``, ``variance``, ``scaled_variance``, ``mean_dataset_variance``
        (scaled, averaged over datasets) and, with ``results``,
        ``auc_rank``, ``rank``, ``change``, ``group``.

    Examples
    --------
    >>> from beyondauc import load_demo, score_variance
    >>> v = score_variance(load_demo())
    >>> bool((v["scaled_variance"] <= 0.25).all())
    True
    """
    if not isinstance(bench, Benchmark):
        raise ValueError(f"`bench` must be a Benchmark, got {type(bench).__name__}")
    check_option(score, "score", ("auc", *SCORES))
    codes = bench.dataset_codes()
    rows = []
    for m in bench.models:
        s = bench.scores(m)
        lo, hi = s.min(), s.max()
        scaled = (s - lo) / (hi - lo) if hi > lo else np.zeros_like(s)
        per_ds = pd.Series(scaled).groupby(codes).var(ddof=0).mean()
        rows.append(
            dict(
                model=m,
                variance=float(s.var()),
                scaled_variance=float(scaled.var()),
                mean_dataset_variance=float(per_ds),
            )
        )
    out = pd.DataFrame(rows)
    if results is not None:
        ch = rank_changes(results, score=score).query("dataset == @MEAN")[["model", "auc_rank", "rank", "change"]]
        out = out.merge(ch, on="model", how="left")
        change = out["change"]
        out["group"] = np.select(
            [change.gt(0).fillna(False).to_numpy(dtype=bool), change.lt(0).fillna(False).to_numpy(dtype=bool)],
            ["better", "worse"],
            "same",
        )
    return out


#: Default quantiles of the pooled scores that bound histogram bins.
CLIP_QUANTILES = (0.005, 0.995)


def check_clip_quantiles(clip_quantiles):
    if clip_quantiles is None:
        return None
    try:
        lo, hi = (float(q) for q in clip_quantiles)
    except (TypeError, ValueError):
        raise ValueError(
            f"`clip_quantiles` must be None or two quantiles (low, high), got {clip_quantiles!r}"
        ) from None
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"`clip_quantiles` must satisfy 0 <= low < high <= 1, got {clip_quantiles!r}")
    return lo, hi


def histogram_range(values, clip_quantiles=CLIP_QUANTILES):
    """(lo, hi) of histogram bins over ``values``, robust to a few extreme values.

    With ``clip_quantiles=(a, b)``, let q_a, q_b be the a- and b-quantiles of
    the values (order statistics rounded inwards, so a single extreme value is
    outside them at any sample size) and w = q_b - q_a.  A side is cut only
    where the extreme value lies more than 2w beyond its quantile -- where the
    tail would take more than two thirds of the axis and squeeze the other
    scores into a few bins; the cut side ends at its quantile plus 5% of w.  Data
    without such outliers keeps its full [min, max].  Values outside belong in
    the end bins.  ``None``: [min, max].  A constant range is widened to +-0.5
    around the value.
    """
    values = np.asarray(values, dtype=float)
    lo, hi = float(values.min()), float(values.max())
    if clip_quantiles is not None and hi > lo:
        q_lo = float(np.quantile(values, clip_quantiles[0], method="higher"))
        q_hi = float(np.quantile(values, clip_quantiles[1], method="lower"))
        width = q_hi - q_lo
        if width > 0:
            if q_lo - lo > 2 * width:
                lo = q_lo - 0.05 * width
            if hi - q_hi > 2 * width:
                hi = q_hi + 0.05 * width
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


@each_model_view(("model", "dataset"))
def score_histograms(
    bench: Benchmark,
    *,
    bins: int = 20,
    models: str | Sequence[str] | None = None,
    clip_quantiles: tuple[float, float] | None = CLIP_QUANTILES,
) -> pd.DataFrame:
    """Class-conditional histograms of each model's scores, per dataset and pooled.

    Bins are equal-width over each model's score range on the whole benchmark
    (so datasets of one model share edges); ``scaled_left``/``scaled_right``
    give the edges mapped to [0, 1], comparable across models (Figures 3-4).
    The range is the model's [min, max], except that a side whose extreme
    score lies further beyond the ``clip_quantiles`` quantile of the pooled
    scores than twice the distance between the two quantiles (a few extreme
    scores that would crush every other score into a few bins) ends at that quantile plus 5% of
    their distance; scores beyond are counted in the first or last bin, and
    ``clipped`` says how many of a bin's ``count`` are such scores.

    Parameters
    ----------
    bench : Benchmark
    bins : int, default=20
    models : str or list of str, optional
        Default: every model.
    clip_quantiles : (float, float) or None, default=(0.005, 0.995)
        Quantiles of the pooled scores that bound the bins; None spans the
        full [min, max] (nothing clipped).

    Returns
    -------
    DataFrame
        ``model``, ``dataset`` (each dataset, then ``"all"``), ``label``
        (0/1), ``bin``, ``left``, ``right``, ``scaled_left``, ``scaled_right``,
        ``count``, ``density`` (count / class size, sums to 1 per class),
        ``clipped`` (scores beyond the range counted in this end bin; 0 in
        inner bins).

    Examples
    --------
    >>> from beyondauc import load_demo, score_histograms
    >>> h = score_histograms(load_demo(), bins=10, models=["knn"])
    >>> h.groupby(["dataset", "label"])["density"].sum().round(6).unique().tolist()
    [1.0]
    >>> int(h.query("dataset == 'all'")["clipped"].sum()) >= 0
    True
    """
    bins = check_int(bins, "bins", minimum=1)
    clip_quantiles = check_clip_quantiles(clip_quantiles)
    models = bench.models if models is None else tuple([models] if isinstance(models, str) else models)
    y = bench.labels()
    codes = bench.dataset_codes()
    names = list(bench.datasets) + ["all"]
    parts = []
    for m in models:
        s = bench.scores(m)
        lo, hi = histogram_range(s, clip_quantiles)
        edges = np.linspace(lo, hi, bins + 1)
        idx = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, bins - 1)
        outside = (s < lo) | (s > hi)
        for label in (0, 1):
            sel = y == label
            counts = np.zeros((len(names), bins))
            np.add.at(counts, (codes[sel], idx[sel]), 1)
            counts[-1] = counts[:-1].sum(axis=0)
            clipped = np.zeros((len(names), bins), dtype=np.int64)
            out = sel & outside
            np.add.at(clipped, (codes[out], idx[out]), 1)
            clipped[-1] = clipped[:-1].sum(axis=0)
            sizes = counts.sum(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                dens = np.where(sizes > 0, counts / sizes, np.nan)
            k = len(names)  # the rows of each dataset (then "all") in turn, bin by bin
            parts.append(
                {
                    "model": np.full(k * bins, m, dtype=object if isinstance(m, str) else None),
                    "dataset": np.repeat(np.array(names, dtype=object), bins),
                    "label": np.full(k * bins, label),
                    "bin": np.tile(np.arange(bins), k),
                    "left": np.tile(edges[:-1], k),
                    "right": np.tile(edges[1:], k),
                    "scaled_left": np.tile((edges[:-1] - lo) / (hi - lo), k),
                    "scaled_right": np.tile((edges[1:] - lo) / (hi - lo), k),
                    "count": counts.astype(int).ravel(),
                    "density": dens.ravel(),
                    "clipped": clipped.ravel(),
                }
            )
    if not parts:
        raise ValueError("No objects to concatenate")  # as concatenating no tables says
    return pd.DataFrame({c: np.concatenate([x[c] for x in parts]) for c in parts[0]})  # made once, not per dataset
