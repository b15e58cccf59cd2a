"""The ranks of the models in the evaluation's tables, computed once here and read by every view.

Rank 1 is the best; ties share the lowest rank (``method="min"``, as the
leaderboard ranks); a model whose value is undefined, or whose answers DiSCA
cannot rank (``rankable`` false), gets no rank.  :func:`add_ranks` is run by
:func:`~beyondauc.evaluate` and again by :func:`~beyondauc.load_evaluation`, so an
evaluation saved before the rank columns existed shows them too.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["DIAGNOSTIC_RANKS", "add_ranks"]

#: rank column -> (column of the diagnostics table, whether higher is better).
DIAGNOSTIC_RANKS: dict[str, tuple[str, bool]] = {
    "drift_rank": ("drift", False),
    "wasserstein_rank": ("wasserstein", True),
    "bias_robustness_rank": ("bias_robustness_test", True),
}


def _rank(values: pd.Series, groups: list[pd.Series], *, higher_is_better: bool) -> pd.Series:
    """Rank of each value within its group (1 = best, ties share the lowest), NA where the value is."""
    if not len(values):
        return pd.Series(pd.array([], dtype="Int64"), index=values.index)
    ranks = values.groupby(groups).rank(ascending=not higher_is_better, method="min")
    return ranks.astype("Int64")


def _selective(sel: pd.DataFrame) -> pd.DataFrame:
    """``disca_rank`` per dataset, among the models whose answers DiSCA can rank."""
    if "disca_rank" in sel.columns or "disca" not in sel.columns:
        return sel
    rankable = sel["rankable"].astype(bool) if "rankable" in sel.columns else sel["disca"].notna()
    disca = pd.to_numeric(sel["disca"], errors="coerce").where(rankable)
    return sel.assign(disca_rank=_rank(disca, [sel["dataset"]], higher_is_better=True))


def _tolerance(tol: pd.DataFrame, sel: pd.DataFrame) -> pd.DataFrame:
    """``disca_rank`` per dataset and tolerance on the in-distribution rows (none on the OOD ones)."""
    if "disca_rank" in tol.columns or not {"disca", "where", "tolerance"} <= set(tol.columns):
        return tol
    ranked = sel.set_index(["model", "dataset"])["rankable"].astype(bool) if "rankable" in sel.columns else None
    keep = tol["where"].eq("in")
    if ranked is not None:
        pairs = pd.MultiIndex.from_frame(tol[["model", "dataset"]])
        keep &= pd.Series(ranked.reindex(pairs).fillna(True).to_numpy(dtype=bool), index=tol.index)
    disca = pd.to_numeric(tol["disca"], errors="coerce").where(keep)
    return tol.assign(disca_rank=_rank(disca, [tol["dataset"], tol["tolerance"]], higher_is_better=True))


def _diagnostics(diag: pd.DataFrame) -> pd.DataFrame:
    """A rank per dataset for drift (lower is better), W and bias robustness (higher is better)."""
    out = diag
    for rank, (column, higher) in DIAGNOSTIC_RANKS.items():
        if rank not in out.columns and column in out.columns:
            values = pd.to_numeric(out[column], errors="coerce")
            out = out.assign(**{rank: _rank(values, [out["dataset"]], higher_is_better=higher)})
    return out


def _calibration_error_ranks(ece: pd.DataFrame) -> pd.DataFrame:
    """Mean ECE over datasets per protocol x method x model, and its rank among the models (lower is better)."""
    keys = ["protocol", "method", "model"]
    mean = ece.groupby(keys, sort=False)[["ece"]].mean().reset_index()
    mean["rank"] = _rank(mean["ece"], [mean["protocol"], mean["method"]], higher_is_better=False)
    return mean


def add_ranks(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """``tables`` with their rank columns, where they are missing (the same dict, updated).

    Adds ``disca_rank`` to ``selective`` and ``tolerance``, ``drift_rank``,
    ``wasserstein_rank`` and ``bias_robustness_rank`` to ``diagnostics``, and
    the table ``calibration_error_ranks``.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.evaluation.ranks import add_ranks
    >>> sel = pd.DataFrame({"model": ["a", "b", "c"], "dataset": "d", "disca": [0.2, 0.9, 0.5],
    ...                     "rankable": [True, True, False]})
    >>> add_ranks({"selective": sel})["selective"]["disca_rank"].tolist()
    [2, 1, <NA>]
    """
    if "selective" in tables:
        tables["selective"] = _selective(tables["selective"])
        if "tolerance" in tables:
            tables["tolerance"] = _tolerance(tables["tolerance"], tables["selective"])
    if "diagnostics" in tables:
        tables["diagnostics"] = _diagnostics(tables["diagnostics"])
    if "calibration_error" in tables and "calibration_error_ranks" not in tables:
        tables["calibration_error_ranks"] = _calibration_error_ranks(tables["calibration_error"])
    return tables
