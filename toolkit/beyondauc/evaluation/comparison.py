"""The ``comparison`` table of an evaluation: every model against its reference model.

The reference is the ``baseline`` parameter, or, without one, the best other
model by mean AUC (:func:`~beyondauc.metrics.comparison.reference_models`).
Each model gets, per dataset and for the mean over datasets, the difference
model - reference of:

* ``auc``: the paired DeLong test (scores benchmarks; an answers benchmark
  has a label per model, so the test does not apply and the row says so);
* ``accuracy`` and ``kappa`` (headline protocol and method): the grid
  bootstrap, every model on the same replicate;
* ``disca`` and ``drift``: the replicates each dataset's selective answering
  and cohort diagnostics carry, drawn from the dataset's own seed and strata,
  the same for every model of a scores benchmark.

Only numbers the evaluation already holds are read; nothing is refitted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.comparison import DIFFERENCE_COLUMNS, delong_differences, grid_differences, paired_differences, \
    reference_models
from ..metrics.grid_bootstrap import nanmean_quiet

__all__ = ["COMPARISON_COLUMNS", "comparison_table"]

#: The columns of the ``comparison`` table.
COMPARISON_COLUMNS = ("model", "reference", "reference_kind", "dataset", "value", *DIFFERENCE_COLUMNS, "test",
                      "note")

_ANSWERS_AUC = ("the paired DeLong test needs the same labels, and an answers benchmark's label is each model's "
                "own correctness")
_ANSWERS_PAIRED = ("no paired interval: an answers benchmark resamples each model within its own right and wrong "
                   "answers, so the two models' replicates are not the same resample")


def comparison_table(bench, head: pd.DataFrame, boot, tables: dict, replicates: dict | None,
                     p: dict) -> pd.DataFrame:
    """Every model minus its reference, per dataset and the mean: AUC, accuracy, kappa, DiSCA, drift.

    Parameters
    ----------
    bench : Benchmark
        The benchmark evaluated (every model).
    head : DataFrame
        The grid rows of the headline protocol and method.
    boot : GridBootstrap or None
        The grid bootstrap (None without ``n_bootstrap``: no interval for
        accuracy and kappa).
    tables : dict
        The evaluation's ``selective``, ``diagnostics`` and ``leaderboard``.
    replicates : dict or None
        model -> {"disca": (n_rankable, B), "drift": (n_datasets, B)}, as the
        leaderboard reads them.
    p : dict
        The evaluation's parameters (``baseline``, ``protocol``, ``method``,
        ``confidence_level``).

    Returns
    -------
    DataFrame
        :data:`COMPARISON_COLUMNS`: ``reference_kind`` is ``"baseline"`` or
        ``"best other"``; ``test`` names where the interval and p-value come
        from; ``note`` says why they are missing.  Empty with one model.
    """
    models = list(bench.models)
    board = tables["leaderboard"].set_index("model")
    mean_auc = [board["auc"].get(m, np.nan) for m in models]
    refs = reference_models(models, mean_auc, baseline=p.get("baseline"))
    if not refs:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    level = p["confidence_level"]
    parts = [_auc_rows(bench, head, refs, level), _grid_rows(head, boot, refs, p),
             _bootstrap_rows(tables["selective"], "disca", refs, replicates, board, level, rankable=True),
             _bootstrap_rows(tables["diagnostics"], "drift", refs, replicates, board, level)]
    out = pd.concat([x for x in parts if len(x)], ignore_index=True)
    if bench.kind == "answers":
        unpaired = out["value"].isin(["disca", "drift"])
        out.loc[unpaired, ["low", "high", "pvalue"]] = np.nan
        out.loc[unpaired, "note"] = _ANSWERS_PAIRED
    base = p.get("baseline")
    out["reference_kind"] = np.where(out["reference"] == base, "baseline", "best other") if base else "best other"
    order = {m: i for i, m in enumerate(models)}
    values = {v: i for i, v in enumerate(("auc", "accuracy", "kappa", "disca", "drift"))}
    datasets = {d: i for i, d in enumerate([*bench.datasets, "mean"])}
    keys = {"model": order, "value": values, "dataset": datasets}
    out = out.sort_values(["model", "value", "dataset"], key=lambda c: c.map(keys[c.name]), kind="stable")
    return out[list(COMPARISON_COLUMNS)].reset_index(drop=True)


def _auc_rows(bench, head, refs, level):
    """ΔAUC by the paired DeLong test per dataset and for the mean (NaN with the reason on answers)."""
    if bench.kind == "answers":
        rows = []
        for m, ref in refs.items():
            auc = head.pivot(index="dataset", columns="model", values="auc").reindex(bench.datasets)
            a, b = auc[m].to_numpy(float), auc[ref].to_numpy(float)
            t = paired_differences(np.r_[a, nanmean_quiet(a, 0)], np.r_[b, nanmean_quiet(b, 0)])
            rows.append(t.assign(model=m, reference=ref, dataset=[*bench.datasets, "mean"], value="auc",
                                 test="", note=_ANSWERS_AUC))
        return pd.concat(rows, ignore_index=True)
    y, groups = bench.labels(), np.asarray(bench.datasets, dtype=object)[bench.dataset_codes()]
    rows = []
    for m, ref in refs.items():
        t = delong_differences(y, bench.scores(m), bench.scores(ref), groups, confidence_level=level)
        rows.append(t.rename(columns={"group": "dataset"}).drop(columns="standard_error")
                    .assign(model=m, reference=ref, value="auc", test="paired DeLong", note=""))
    return pd.concat(rows, ignore_index=True)


def _grid_rows(head, boot, refs, p):
    """Δ deployed accuracy and Δkappa of the headline protocol and method, from the grid bootstrap."""
    if boot is not None:
        t = grid_differences(boot, p["protocol"], p["method"], refs)
        return t.assign(test="paired bootstrap", note="")
    rows = []
    for value in ("accuracy", "kappa"):
        wide = head.pivot(index="dataset", columns="model", values=value).reindex(pd.unique(head["dataset"]))
        for m, ref in refs.items():
            a, b = wide[m].to_numpy(float), wide[ref].to_numpy(float)
            t = paired_differences(np.r_[a, nanmean_quiet(a, 0)], np.r_[b, nanmean_quiet(b, 0)])
            rows.append(t.assign(model=m, reference=ref, dataset=[*wide.index, "mean"], value=value, test="",
                                 note="no interval: n_bootstrap = 0"))
    return pd.concat(rows, ignore_index=True)


def _bootstrap_rows(frame, value, refs, replicates, board, level, *, rankable=False):
    """ΔDiSCA or Δdrift per dataset and for the mean, from the per-dataset replicates of each model.

    ``frame`` is the ``selective`` or ``diagnostics`` table; the replicates of
    a model are stacked over its datasets in the table's order (for DiSCA,
    its rankable datasets only, as the mean and the leaderboard use them).
    """
    if not len(frame) or value not in frame:
        return pd.DataFrame()
    datasets = list(pd.unique(frame["dataset"]))
    est, reps = {}, {}
    for m, rows in frame.groupby("model", sort=False):
        rows = rows.set_index("dataset").reindex(datasets)
        keep = rows["rankable"].fillna(False).astype(bool).to_numpy() if rankable and "rankable" in rows else \
            np.ones(len(datasets), dtype=bool)
        est[m] = np.r_[rows[value].to_numpy(float), board[value].get(m, np.nan)]
        r = None if replicates is None else (replicates.get(m) or {}).get(value)
        if r is not None and len(r) == keep.sum():
            full = np.full((r.shape[1], len(datasets)), np.nan)
            full[:, keep] = r.T
            reps[m] = np.column_stack([full, nanmean_quiet(full, 1)])
    out = []
    for m, ref in refs.items():
        if m not in est or ref not in est:
            continue
        paired = m in reps and ref in reps
        t = paired_differences(est[m], est[ref], reps.get(m) if paired else None, reps.get(ref) if paired else None,
                               confidence_level=level)
        out.append(t.assign(model=m, reference=ref, dataset=[*datasets, "mean"], value=value,
                            test="paired bootstrap" if paired else "",
                            note="" if paired else "no interval: n_bootstrap = 0"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()
