"""The leaderboard of an evaluation: one row per model from its own tables (nothing recomputed), each mean
over datasets with its BCa interval from the datasets' replicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.calibration.grid_bootstrap_result import nanmean_quiet
from ..metrics.uncertainty.bootstrap import honest_interval, jackknife_acceleration

__all__ = ["leaderboard_table"]


def _mean_interval(replicates, confidence_level):
    """(low, high): the BCa interval of the mean over datasets, from per-dataset replicates and jackknives.

    Parameters
    ----------
    replicates : dict or None
        :func:`replicates_of`: ``replicates`` (row d: dataset d's bootstrap
        replicates, those its own interval comes from), ``jackknife`` (row d:
        dataset d's delete-a-group jackknife) and ``estimate`` (dataset d's
        value).
    confidence_level : float

    Returns
    -------
    low, high : float
        NaN without replicates, when every replicate of the mean is NaN, or
        when no BCa interval contains the mean (:func:`~beyondauc.metrics.uncertainty.bootstrap.honest_interval`).

    Notes
    -----
    Replicate b of the mean is the mean over datasets of every dataset's
    replicate b.  A dataset whose value is undefined (NaN) in replicate b is
    skipped in that replicate's mean, as the point mean (pandas) skips a
    dataset whose value is NaN and as the grid bootstrap's mean over
    datasets does; a replicate with no defined dataset is NaN and, as in
    every per-dataset interval, left out of the percentiles.  One vectorised
    mean over the dataset axis and one quantile over the replicates.

    The interval is BCa, as each dataset's: the bias correction compares the
    replicates of the mean with the mean of the datasets' values (datasets
    with an undefined value left out, as the point mean leaves them out); the
    acceleration pools the datasets' jackknives (the datasets are resampled
    independently, so the mean's influence values are each dataset's, scaled
    by one common factor that cancels).
    """
    if replicates is None or not replicates["replicates"].size:
        return np.nan, np.nan
    defined = ~np.isnan(replicates["estimate"])
    if not defined.any():
        return np.nan, np.nan
    low, high, _, _ = honest_interval(
        nanmean_quiet(replicates["replicates"][defined], 0),
        float(np.mean(replicates["estimate"][defined])),
        confidence_level,
        acceleration=jackknife_acceleration(replicates["jackknife"][defined]),
    )
    return float(low), float(high)


def leaderboard_table(
    grid_head, changes, selective, diagnostics, models, mean_intervals=None, replicates=None, confidence_level=0.95
):
    """One row per model from the evaluation's own tables (nothing recomputed).

    Parameters
    ----------
    grid_head : DataFrame
        The grid rows of the headline protocol and method.
    changes : DataFrame
        The ``rank_changes`` table.
    selective, diagnostics : DataFrame
        The ``selective`` and ``diagnostics`` tables (one row per model x dataset).
    models : sequence of str
    mean_intervals : DataFrame or None
        The ``mean_intervals`` table (None without a bootstrap).
    replicates : dict or None
        ``model -> {"disca": R, "drift": R}`` with ``R`` the (n_datasets,
        n_bootstrap) per-dataset bootstrap replicates (or None); None without
        a bootstrap.
    confidence_level : float
        Level of the DiSCA and drift intervals.

    Returns
    -------
    DataFrame
        Means over datasets; with a bootstrap, the intervals of the mean AUC,
        accuracy and kappa (the grid bootstrap: the same replicates for every
        dataset and model), the rank intervals, ``sign_share`` and ``p_value``, and the
        intervals of the mean DiSCA and drift (``disca_low``/``_high``,
        ``drift_low``/``_high``, see :func:`_mean_interval`).

    Notes
    -----
    The mean DiSCA and drift have no replicates of their own: every
    dataset's selective answering and cohort diagnostics are bootstrapped on
    their own rows (stratified by role or cohort, and class), with the
    same ``n_bootstrap``, so replicate b of the mean is the mean of the
    datasets' replicates b (:func:`_mean_interval`).  Each dataset's
    bootstrap draws from ``random_state``'s child stream for its place among
    the datasets, so the datasets' resamples are independent draws; but with cohorts or
    calibration data that span several datasets (``xdomain``-style
    protocols) a dataset's rows also enter the other datasets' numbers, a
    dependence the interval does not carry.

    The drift is a squared distance: resampling both cohorts adds noise to
    both curves and raises it, so its replicates sit above the point value,
    and the interval of the mean, narrowed by averaging but not re-centred,
    can lie wholly above the point mean (``docs/user_guide/uncertainty.md``: the demo).
    """
    mean = grid_head.groupby("model", sort=False)[["auc", "accuracy", "kappa"]].mean()
    ch = changes[(changes["score"] == "accuracy") & (changes["dataset"] == "mean")].set_index("model")
    with np.errstate(all="ignore"):
        ranked = selective[selective["rankable"].astype(bool)] if "rankable" in selective else selective
        disca = ranked.groupby("model", sort=False)["disca"].mean() if len(ranked) else pd.Series(dtype=float)
        drift = diagnostics.groupby("model", sort=False)["drift"].mean() if len(diagnostics) else pd.Series(dtype=float)
    board = pd.DataFrame({"model": list(models)})
    for value in ("auc", "accuracy", "kappa"):
        board[value] = [mean[value].get(m, np.nan) for m in models]
        if mean_intervals is not None:
            iv = mean_intervals[mean_intervals["score"] == value].set_index("model")
            board[f"{value}_low"] = [iv["low"].get(m, np.nan) for m in models]
            board[f"{value}_high"] = [iv["high"].get(m, np.nan) for m in models]
    for src, dst in (
        ("auc_rank", "auc_rank"),
        ("rank", "accuracy_rank"),
        ("change", "rank_change"),
        ("auc_rank_low", "auc_rank_low"),
        ("auc_rank_high", "auc_rank_high"),
        ("rank_low", "accuracy_rank_low"),
        ("rank_high", "accuracy_rank_high"),
        ("change_low", "rank_change_low"),
        ("change_high", "rank_change_high"),
        ("sign_share", "sign_share"),
        ("p_value", "p_value"),
        ("p_change", "p_change"),
        ("significant", "significant"),
    ):
        if src in ch.columns:
            board[dst] = [ch[src].get(m, np.nan) for m in models]
    for value, point in (("disca", disca), ("drift", drift)):
        board[value] = [point.get(m, np.nan) for m in models]
        if replicates is not None:  # the interval of the mean, from the per-dataset replicates
            ivs = [_mean_interval(replicates.get(m, {}).get(value), confidence_level) for m in models]
            board[f"{value}_low"] = [low for low, _ in ivs]
            board[f"{value}_high"] = [high for _, high in ivs]
    for c in ("auc_rank", "accuracy_rank", "rank_change"):
        board[c] = pd.array(board[c], dtype="Int64")
    return board.sort_values(["accuracy_rank", "auc_rank"], kind="stable").reset_index(drop=True)
