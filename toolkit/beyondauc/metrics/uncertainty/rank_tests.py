"""Rank tests: do the models' ranks over datasets differ more than chance would make them?

:func:`friedman_test` ranks the models on each dataset, averages the ranks
and tests them (Friedman's chi-square and Iman and Davenport's F), with
Nemenyi's critical difference for the pairs (Demšar 2006); the result,
:class:`FriedmanResult`, gives the groups of a critical-difference diagram.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...utils.html import caption_table, repr_number
from ...utils.validation import check_number, warn_undefined

# scipy.stats is imported inside the functions that use it: a report kernel only reads a saved
# evaluation and draws, and skips its import.

__all__ = ["FriedmanResult", "friedman_test"]


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman's test of model ranks over datasets, with the Nemenyi critical difference.

    Attributes
    ----------
    value : str
        The column that was ranked.
    statistic, pvalue : float
        Friedman's chi-square (corrected for ties) and its p-value
        (chi-square with k - 1 degrees of freedom).
    f_statistic, f_pvalue : float
        Iman and Davenport's F variant, (N - 1) chi2 / (N (k - 1) - chi2), and
        its p-value (F with k - 1 and (k - 1)(N - 1) degrees of freedom),
        less conservative than the chi-square (Demšar 2006).
    n_datasets, n_models : int
        N and k (datasets where any model has no value are left out).
    critical_difference : float
        Nemenyi's CD = q_alpha sqrt(k (k + 1) / (6 N)): two models whose
        average ranks differ by at least this are significantly different.
    alpha : float
    average_ranks : pandas.Series
        Average rank of each model (1 = best, ties share the average rank),
        best first.
    """

    value: str
    statistic: float
    pvalue: float
    f_statistic: float
    f_pvalue: float
    n_datasets: int
    n_models: int
    critical_difference: float
    alpha: float
    average_ranks: pd.Series = field(repr=False)

    def __repr__(self):
        return (
            f"FriedmanResult(value={self.value!r}, statistic={repr_number(self.statistic)}, pvalue={repr_number(self.pvalue)}, "
            f"f_statistic={repr_number(self.f_statistic)}, f_pvalue={repr_number(self.f_pvalue)}, n_datasets={self.n_datasets}, "
            f"n_models={self.n_models}, critical_difference={repr_number(self.critical_difference)}, "
            f"alpha={self.alpha:g})"
        )

    def groups(self) -> list[tuple[str, ...]]:
        """Maximal groups of models whose average ranks differ by less than the CD.

        The bars of the critical-difference diagram: every pair inside a group
        is not significantly different; groups of one model are left out.

        Returns
        -------
        list of tuple of str
            Models of each group, best first; groups ordered by their best model.
        """
        ranks = self.average_ranks.sort_values(kind="stable")
        r = ranks.to_numpy()
        names = list(ranks.index)
        # the last model within CD of model i (a window that only moves right)
        ends = np.searchsorted(r, r + self.critical_difference, side="left") - 1
        out, reach = [], -1
        for i, j in enumerate(ends):  # a loop over models (a handful), not examples
            if j > i and j > reach:
                out.append(tuple(names[i : j + 1]))
                reach = j
        return out

    def _repr_html_(self):
        ranks = ", ".join(f"{m} {r:.2f}" for m, r in self.average_ranks.items())
        return caption_table(
            f"Friedman test of {self.value} ranks",
            [
                ("datasets x models", f"{self.n_datasets} x {self.n_models}"),
                ("chi-square (p)", f"{repr_number(self.statistic)} ({repr_number(self.pvalue)})"),
                ("Iman-Davenport F (p)", f"{repr_number(self.f_statistic)} ({repr_number(self.f_pvalue)})"),
                (f"Nemenyi CD (alpha={self.alpha:g})", repr_number(self.critical_difference)),
                ("average ranks", ranks),
            ],
        )


def nemenyi_q(n_models, alpha=0.05):
    """Critical value q_alpha of the Nemenyi test: the studentized range quantile / sqrt(2)."""
    from scipy.stats import studentized_range

    return float(studentized_range.ppf(1.0 - alpha, n_models, np.inf) / math.sqrt(2.0))


def friedman_test(
    table: pd.DataFrame, *, value: str = "accuracy", higher_is_better: bool = True, alpha: float = 0.05
) -> FriedmanResult:
    """Friedman's test of the models' ranks over datasets, and Nemenyi's critical difference.

    Demšar (2006): rank the models on each dataset (1 = best, ties share the
    average rank), average the ranks over the N datasets, and test whether
    the k models' average ranks differ more than chance would make them.
    Two models whose average ranks differ by at least the critical difference
    are significantly different (Nemenyi's post-hoc test; see
    :class:`~beyondauc.plots.CriticalDifferenceDisplay`).  Run it on
    ``value="auc"`` and on the deployed score of the same results to see
    whether the two rankings disagree beyond noise.

    Parameters
    ----------
    table : pandas.DataFrame
        Tidy rows with columns ``dataset``, ``model`` and ``value``, one row
        per (dataset, model), e.g. the result of
        :func:`~beyondauc.expected_accuracy` (one protocol x method) or of
        :func:`auc_intervals`.
    value : str, default="accuracy"
        The column to rank.
    higher_is_better : bool, default=True
    alpha : float, default=0.05
        Significance level of the critical difference.

    Returns
    -------
    FriedmanResult

    Notes
    -----
    A dataset where any model has no value (NaN) is left out, with a
    warning.  The chi-square is corrected for ties as in
    :func:`scipy.stats.friedmanchisquare`; q_alpha is the studentized
    range's quantile over sqrt(2) (Demšar's Table 5).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import friedman_test
    >>> t = pd.DataFrame({"dataset": list("aaabbbcccddd"), "model": ["x", "y", "z"] * 4,
    ...                   "accuracy": [.9, .8, .7, .85, .8, .6, .7, .75, .6, .9, .7, .8]})
    >>> res = friedman_test(t)
    >>> res.average_ranks.round(2).to_dict(), round(res.pvalue, 4), round(res.critical_difference, 3)
    ({'x': 1.25, 'y': 2.0, 'z': 2.75}, 0.1054, 1.657)
    """
    alpha = _checked_table(table, value, higher_is_better, alpha)
    wide = _complete_table(table, value)
    n_data, k = wide.shape
    x = wide.to_numpy()
    ranks = _ranks(x, higher_is_better)
    stat, pvalue, f_stat, f_pvalue = _friedman_statistics(x, ranks, value)
    cd = nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n_data))
    avg = pd.Series(
        ranks.mean(axis=0), index=[str(m) if not isinstance(m, str) else m for m in wide.columns], name=f"{value}_rank"
    ).sort_values(kind="stable")
    avg.index.name = "model"
    return FriedmanResult(value, stat, pvalue, f_stat, f_pvalue, n_data, k, float(cd), alpha, avg)


def _ranks(x, higher_is_better):
    """Each dataset's ranks of the models (1 = best, ties averaged), (N, k)."""
    from scipy.stats import rankdata

    return rankdata(-x if higher_is_better else x, axis=1)


def _checked_table(table, value, higher_is_better, alpha):
    """The table's checks: the columns, ``value``, ``alpha``, ``higher_is_better``, one protocol x method,
    one row per (dataset, model); each failure a one-line error naming what is wrong.  Returns ``alpha``, checked."""
    if not isinstance(table, pd.DataFrame) or not {"dataset", "model"} <= set(table.columns):
        raise ValueError(
            "`table` must be a DataFrame with columns 'dataset' and 'model' (e.g. expected_accuracy's "
            f"result), got {type(table).__name__}"
        )
    if value not in table.columns:
        raise ValueError(f"`value` must be a column of `table` ({list(table.columns)}), got {value!r}")
    alpha = check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise ValueError(f"`higher_is_better` must be a bool, got {higher_is_better!r}")
    if {"protocol", "method"} <= set(table.columns):
        combos = table[["protocol", "method"]].drop_duplicates()
        if len(combos) > 1:
            raise ValueError(
                f"`table` holds {len(combos)} protocol x method combinations; select one "
                "(e.g. table.query(\"protocol == 'xdomain' and method == 'logistic'\"))"
            )
    dup = table.duplicated(["dataset", "model"])
    if dup.any():
        row = table.loc[dup, ["dataset", "model"]].iloc[0].tolist()
        raise ValueError(
            f"`table` must have one row per (dataset, model), got {int(dup.sum())} duplicate(s), the first {row}"
        )
    return alpha


def _complete_table(table, value):
    """Datasets x models of ``value``, in the table's order, without the datasets some model has no value on."""
    try:
        wide = table.pivot(index="dataset", columns="model", values=value).astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"`value` column {value!r} must hold numbers") from None
    wide = wide.reindex(columns=list(dict.fromkeys(table["model"])), index=list(dict.fromkeys(table["dataset"])))
    complete = np.isfinite(wide.to_numpy()).all(axis=1)
    if not complete.all():
        left = list(wide.index[~complete])
        warnings.warn(
            f"dataset(s) {left} have no {value} for some model and are left out of the Friedman test",
            UserWarning,
            stacklevel=3,
        )
        wide = wide[complete]
    n_data, k = wide.shape
    if k < 2 or n_data < 2:
        raise ValueError(
            f"`table` must give {value} of at least 2 models on at least 2 datasets, got {k} "
            f"model(s) on {n_data} complete dataset(s)"
        )
    return wide


def _friedman_statistics(x, ranks, value):
    """(chi-square, p-value, Iman-Davenport F, p-value) of the (N, k) values ``x`` and their ranks; NaN when
    every model ties on every dataset (with an UndefinedMetricWarning)."""
    from scipy.stats import chi2 as chi2_dist
    from scipy.stats import f as f_dist

    n_data, k = x.shape
    # Friedman's chi-square with scipy's tie correction
    ssbn = (ranks.sum(axis=0) ** 2).sum()
    ties = 0.0
    for row in np.sort(x, axis=1):  # a loop over datasets
        _, t = np.unique(row, return_counts=True)
        ties += (t**3 - t).sum()
    c = 1.0 - ties / (k * (k * k - 1) * n_data)
    if c <= 0:
        warn_undefined(f"every model ties on every dataset by {value}; the Friedman statistic is NaN")
        return (float("nan"),) * 4
    stat = float((12.0 / (k * n_data * (k + 1)) * ssbn - 3 * n_data * (k + 1)) / c)
    pvalue = float(chi2_dist.sf(stat, k - 1))
    den = n_data * (k - 1) - stat
    f_stat = float((n_data - 1) * stat / den) if den > 0 else float("inf")
    f_pvalue = float(f_dist.sf(f_stat, k - 1, (k - 1) * (n_data - 1))) if den > 0 else 0.0
    return stat, pvalue, f_stat, f_pvalue
