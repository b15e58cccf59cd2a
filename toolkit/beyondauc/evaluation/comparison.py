"""The ``comparison`` table of an evaluation: every model against its reference model.

The reference is the ``baseline`` parameter, or, without one, the best other
model by mean AUC (:func:`~beyondauc.metrics.uncertainty.paired.reference_models`).
Each model gets, per dataset and for the mean over datasets, the difference
model - reference of:

* ``auc``: the paired DeLong test on scores benchmarks (Obuchowski's
  clustered version when rows repeat items); on an answers
  benchmark, whose label is each model's own correctness, the paired
  bootstrap of the items (:func:`~beyondauc.metrics.uncertainty.answers_auc.paired_auc_replicates`);
  the ``test`` column says which;
* ``accuracy`` and ``kappa`` (headline protocol and method): the grid
  bootstrap, every model on the same replicate;
* ``disca`` and ``drift``: the replicates each dataset's selective answering
  and cohort diagnostics carry, drawn from the dataset's own seed and strata
  (role or cohort, and for scores the class), the same for every model.

Only numbers the evaluation already holds are read; nothing is refitted.

A model compared on many datasets makes many tests: the per-dataset rows of
one value form a family, whose p-values carry Holm's adjustment
(``pvalue_holm``) beside the raw ones; "better" and "worse" are read from the
adjusted value.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.calibration.grid_bootstrap_result import nanmean_quiet
from ..metrics.uncertainty.answers_auc import paired_auc_replicates
from ..metrics.uncertainty.paired import (
    DIFFERENCE_COLUMNS,
    delong_differences,
    grid_differences,
    holm_adjust,
    paired_differences,
    reference_models,
)
from ..utils.formatting import MISSING, format_number
from .parts import concat_parts, typed_columns
from .readings import BETTER, MEAN_ROW, NO_DIFFERENCE, NOT_TESTED, VALUE_NAMES, WORSE, difference_text, p_text, reading  # noqa: F401  (reading, VALUE_NAMES...: the names this module's users know)

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark
    from ..metrics.calibration.grid_bootstrap import GridBootstrap
    from .container import Evaluation
    from .settings import EvaluationParameters

__all__ = [
    "CLUSTERED_DELONG",
    "COMPARISON_COLUMNS",
    "ComparisonSummary",
    "comparison_summary",
    "comparison_table",
    "holm_pvalues",
    "index_cell",
    "reading",
]

#: The columns of the ``comparison`` table.
COMPARISON_COLUMNS = (
    "model",
    "reference",
    "reference_kind",
    "dataset",
    "value",
    *DIFFERENCE_COLUMNS,
    "pvalue_holm",
    "test",
    "note",
)

#: The ``test`` of a ΔAUC row of a scores benchmark whose rows repeat items.
CLUSTERED_DELONG = "paired DeLong, clustered by item (Obuchowski)"
_ANSWERS_AUC = (
    "the paired DeLong test needs the same labels, and an answers benchmark's label is each model's "
    "own correctness; the paired bootstrap answers it, and needs n_bootstrap > 0"
)


def comparison_table(
    bench: Benchmark,
    head: pd.DataFrame,
    boot: GridBootstrap | None,
    tables: dict,
    replicates: dict | None,
    p: EvaluationParameters,
    *,
    given: dict | None = None,
) -> pd.DataFrame:
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
    given : dict, optional
        :func:`~beyondauc.metrics.selective.given_calibration.given_calibration_replicates`:
        with the ``given_calibration`` table, rows for the Brier score, NLL,
        ECE, smooth ECE and PRR of the confidence as given (paired bootstrap).

    Returns
    -------
    DataFrame
        :data:`COMPARISON_COLUMNS`: ``reference_kind`` is ``"baseline"`` or
        ``"best other"``; ``pvalue_holm`` is ``pvalue`` adjusted by Holm's
        method within each model's family of per-dataset tests of one value
        (:func:`holm_pvalues`); ``test`` names where the interval and p-value come
        from; ``note`` says why they are missing.  Empty with one model.
    """
    models = list(bench.models)
    board = tables["leaderboard"].set_index("model")
    mean_auc = [board["auc"].get(m, np.nan) for m in models]
    refs = reference_models(models, mean_auc, baseline=p.baseline)
    if not refs:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    level = p.confidence_level
    parts = [
        _auc_rows(bench, head, refs, level, p),
        _grid_rows(head, boot, refs, p),
        _bootstrap_rows(tables["selective"], "disca", refs, replicates, board, level, rankable=True),
        _bootstrap_rows(tables["diagnostics"], "drift", refs, replicates, board, level),
        _given_rows(tables.get("given_calibration"), given, refs, level),
    ]
    out = pd.concat([x for x in parts if len(x)], ignore_index=True)
    base = p.baseline
    out["reference_kind"] = np.where(out["reference"] == base, "baseline", "best other") if base else "best other"
    order = {m: i for i, m in enumerate(models)}
    values = {v: i for i, v in enumerate(VALUE_NAMES)}
    datasets = {d: i for i, d in enumerate([*bench.datasets, "mean"])}
    keys = {"model": order, "value": values, "dataset": datasets}
    out = out.sort_values(["model", "value", "dataset"], key=lambda c: c.map(keys[c.name]), kind="stable")
    out["pvalue_holm"] = holm_pvalues(out)
    return out[list(COMPARISON_COLUMNS)].reset_index(drop=True)


def holm_pvalues(table: pd.DataFrame) -> np.ndarray:
    """Holm-adjusted p-values of a comparison table: one family per model and value, over its datasets.

    The per-dataset comparisons of one model with its reference by one value
    (say ΔAUC on each of 8 datasets) are one family of tests; the mean over
    datasets is a single test of its own, so its adjusted p-value is its raw
    one.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.evaluation.comparison import holm_pvalues
    >>> t = pd.DataFrame({"model": "a", "value": "auc", "dataset": ["x", "y", "mean"], "pvalue": [0.01, 0.04, 0.02]})
    >>> holm_pvalues(t).round(3).tolist()
    [0.02, 0.04, 0.02]
    """
    p = table["pvalue"].to_numpy(float)
    per_dataset = (table["dataset"] != "mean").to_numpy()
    family = (table["model"].astype(str) + "\0" + table["value"].astype(str)).to_numpy()
    out = p.copy()
    out[per_dataset] = holm_adjust(p[per_dataset], groups=family[per_dataset])
    return out


def _auc_rows(bench, head, refs, level, p=None):
    """ΔAUC per dataset and for the mean: the paired DeLong test (scores), the paired bootstrap (answers)."""
    if bench.kind == "answers":
        n_bootstrap = (p or {}).get("n_bootstrap", 0)
        reps = (
            paired_auc_replicates(bench, n_bootstrap=n_bootstrap, random_state=p.random_state) if n_bootstrap else None
        )
        auc = head.pivot(index="dataset", columns="model", values="auc").reindex(bench.datasets)
        rows = []
        for m, ref in refs.items():
            a, b = auc[m].to_numpy(float), auc[ref].to_numpy(float)
            ra, rb = (
                (None, None)
                if reps is None
                else (np.column_stack([reps[x], nanmean_quiet(reps[x], 1)]) for x in (m, ref))
            )
            t = paired_differences(
                np.r_[a, nanmean_quiet(a, 0)], np.r_[b, nanmean_quiet(b, 0)], ra, rb, confidence_level=level
            )
            rows.append(
                t.assign(
                    model=m,
                    reference=ref,
                    dataset=[*bench.datasets, "mean"],
                    value="auc",
                    test="" if reps is None else "paired bootstrap",
                    note=_ANSWERS_AUC if reps is None else t["interval_note"],
                )
            )
        return pd.concat(rows, ignore_index=True)
    y, groups = bench.labels(), np.asarray(bench.datasets, dtype=object)[bench.dataset_codes()]
    rows = []
    clusters = bench.items() if bench.repeated else None  # repeated samples: Obuchowski's clustered DeLong
    for m, ref in refs.items():
        t = delong_differences(y, bench.scores(m), bench.scores(ref), groups, confidence_level=level, clusters=clusters)
        cols = {("dataset" if c == "group" else c): v for c, v in typed_columns(t).items() if c != "standard_error"}
        rows.append(
            (
                len(t),
                {
                    **cols,
                    "model": m,
                    "reference": ref,
                    "value": "auc",
                    "test": "paired DeLong" if clusters is None else CLUSTERED_DELONG,
                    "note": "",
                },
            )
        )
    return concat_parts(rows)


def _grid_rows(head, boot, refs, p):
    """Δ deployed accuracy and Δkappa of the headline protocol and method, from the grid bootstrap."""
    if boot is not None:
        t = grid_differences(boot, p.protocol, p.method, refs)
        return t.assign(test="paired bootstrap", note=t["interval_note"])
    rows = []
    for value in ("accuracy", "kappa"):
        wide = head.pivot(index="dataset", columns="model", values=value).reindex(pd.unique(head["dataset"]))
        for m, ref in refs.items():
            a, b = wide[m].to_numpy(float), wide[ref].to_numpy(float)
            t = paired_differences(np.r_[a, nanmean_quiet(a, 0)], np.r_[b, nanmean_quiet(b, 0)])
            rows.append(
                (
                    len(t),
                    {
                        **typed_columns(t),
                        "model": m,
                        "reference": ref,
                        "dataset": np.array([*wide.index, "mean"], dtype=object),
                        "value": value,
                        "test": "",
                        "note": "no interval: n_bootstrap = 0",
                    },
                )
            )
    return concat_parts(rows)


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
        keep = (
            rows["rankable"].fillna(False).astype(bool).to_numpy()
            if rankable and "rankable" in rows
            else np.ones(len(datasets), dtype=bool)
        )
        est[m] = np.r_[rows[value].to_numpy(float), board[value].get(m, np.nan)]
        r = None if replicates is None else (replicates.get(m) or {}).get(value)
        r = None if r is None else r["replicates"]  # beside the jackknife the BCa intervals of the means read
        if r is not None and len(r) == keep.sum():
            full = np.full((r.shape[1], len(datasets)), np.nan)
            full[:, keep] = r.T
            reps[m] = np.column_stack([full, nanmean_quiet(full, 1)])
    out = []
    for m, ref in refs.items():
        if m not in est or ref not in est:
            continue
        paired = m in reps and ref in reps
        t = paired_differences(
            est[m], est[ref], reps.get(m) if paired else None, reps.get(ref) if paired else None, confidence_level=level
        )
        cols = typed_columns(t)
        out.append(
            (
                len(t),
                {
                    **cols,
                    "model": m,
                    "reference": ref,
                    "dataset": np.array([*datasets, "mean"], dtype=object),
                    "value": value,
                    "test": "paired bootstrap" if paired else "",
                    "note": cols["interval_note"] if paired else "no interval: n_bootstrap = 0",
                },
            )
        )
    return concat_parts(out) if out else pd.DataFrame()


#: The numbers of the confidence as given that the comparison reads (``given_calibration`` columns).
GIVEN_COMPARED = ("brier", "nll", "ece_uniform", "smooth_ece", "prr")


def _given_rows(table, given, refs, level):
    """ΔBrier, ΔNLL, ΔECE, Δsmooth ECE and ΔPRR of the confidence as given per dataset and for the mean (paired bootstrap)."""
    if table is None or not len(table):
        return pd.DataFrame()
    datasets = list(pd.unique(table["dataset"]))
    out = []
    for value in GIVEN_COMPARED:
        wide = table.pivot(index="dataset", columns="model", values=value).reindex(datasets)
        for m, ref in refs.items():
            if m not in wide or ref not in wide:
                continue  # a model whose scores are no probabilities has no row there
            a, b = wide[m].to_numpy(float), wide[ref].to_numpy(float)
            paired = given is not None and m in given and ref in given
            ra, rb = (
                (np.column_stack([given[x][value], nanmean_quiet(given[x][value], 1)]) for x in (m, ref))
                if paired
                else (None, None)
            )
            t = paired_differences(
                np.r_[a, nanmean_quiet(a, 0)], np.r_[b, nanmean_quiet(b, 0)], ra, rb, confidence_level=level
            )
            cols = typed_columns(t)
            out.append(
                (
                    len(t),
                    {
                        **cols,
                        "model": m,
                        "reference": ref,
                        "dataset": np.array([*datasets, "mean"], dtype=object),
                        "value": value,
                        "test": "paired bootstrap" if paired else "",
                        "note": cols["interval_note"] if paired else "no interval: n_bootstrap = 0",
                    },
                )
            )
    return concat_parts(out) if out else pd.DataFrame()


# ---------------------------------------------------------------------------
# the view: one model against its reference, in words
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparisonSummary:
    """One model against its reference (the baseline, or the best other model), per dataset and the mean.

    ``table`` holds text, one row per dataset x value (the mean first):
    the two models' values, the difference with its interval, the raw and
    the Holm-adjusted p-value, and the reading of the adjusted one
    (:func:`reading`); ``sentence`` says what the reference
    is and what the mean shows.
    """

    model: str
    reference: str
    reference_kind: str
    sentence: str
    table: pd.DataFrame = field(repr=False)

    def to_markdown(self) -> str:
        """The sentence and the table as Markdown, names escaped."""
        from ..utils.formatting import markdown_text

        head = "| " + " | ".join(self.table.columns) + " |"
        rule = "|" + "---|" * len(self.table.columns)
        rows = ["| " + " | ".join(markdown_text(v) for v in r) + " |" for r in self.table.itertuples(index=False)]
        return "\n".join([markdown_text(self.sentence), "", head, rule, *rows])

    def mean_rows(self) -> ComparisonSummary:
        """The sentence and the rows of the mean over datasets only: the comparison in short (the report's summary).

        Examples
        --------
        >>> import pandas as pd
        >>> from beyondauc.evaluation.comparison import ComparisonSummary
        >>> t = pd.DataFrame({"Dataset": ["mean over datasets", "wine"], "Value": ["AUC", "AUC"]})
        >>> s = ComparisonSummary("a", "b", "baseline", "a against the baseline b.", t)
        >>> list(s.mean_rows().table["Dataset"]), list(s.dataset_rows().table["Dataset"])
        (['mean over datasets'], ['wine'])
        """
        if not len(self.table):
            return self
        return replace(self, table=self.table[self.table["Dataset"] == MEAN_ROW].reset_index(drop=True))

    def dataset_rows(self) -> ComparisonSummary:
        """The rows of each dataset, without the mean and without the sentence (the mean's rows and the sentence
        are :meth:`mean_rows`): the comparison in full, after the summary."""
        if not len(self.table):
            return replace(self, sentence="")
        return replace(self, sentence="", table=self.table[self.table["Dataset"] != MEAN_ROW].reset_index(drop=True))

    def _repr_html_(self) -> str:
        text = ("Dataset", "Value", "Test", "Reading")  # left-aligned; the numbers stay right-aligned
        align = [' style="text-align: left"' if c in text else "" for c in self.table.columns]
        head = "".join(f"<th{a}>{html.escape(str(c))}</th>" for a, c in zip(align, self.table.columns))
        body = "".join(
            "<tr>" + "".join(f"<td{a}>{html.escape(str(v))}</td>" for a, v in zip(align, r)) + "</tr>"
            for r in self.table.itertuples(index=False)
        )
        sentence = f"<p>{html.escape(self.sentence)}</p>" if self.sentence else ""
        table = (
            f'<table class="ba-comparison-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
            if len(self.table)
            else ""
        )
        return f'<div class="ba-comparison">{sentence}{table}</div>'


def comparison_summary(evaluation: Evaluation, model: str) -> ComparisonSummary:
    """``model`` against its reference, read from the evaluation's ``comparison`` table (nothing recomputed).

    Parameters
    ----------
    evaluation : Evaluation
    model : str

    Returns
    -------
    ComparisonSummary

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "logreg", "knn"], noise_repeats=2,
    ...                  n_bootstrap=20, baseline="logreg")
    >>> s = ba.comparison_summary(ev, "svm")
    >>> s.reference, s.reference_kind, list(s.table["Dataset"].unique())
    ('logreg', 'baseline', ['mean over datasets', 'wine', 'diabetes'])
    """
    evaluation.check_model(model)
    level = float(evaluation.parameters.get("confidence_level", 0.95))
    t = evaluation.table("comparison")
    t = t[t["model"] == model]
    if not len(t):
        return ComparisonSummary(model, "", "", "No other model to compare with.", pd.DataFrame())
    ref, kind = str(t["reference"].iloc[0]), str(t["reference_kind"].iloc[0])
    order = {d: i for i, d in enumerate(["mean", *evaluation.datasets])}
    t = t.sort_values("dataset", key=lambda c: c.map(order), kind="stable")
    rows = []
    for _, r in t.iterrows():
        name, higher = VALUE_NAMES[r["value"]]
        rows.append(
            {
                "Dataset": MEAN_ROW if r["dataset"] == "mean" else r["dataset"],
                "Value": name,
                model: format_number(r["estimate"]),
                ref: format_number(r["reference_estimate"]),
                f"Difference ({level:.0%} interval)": difference_text(r),
                "p-value": p_text(r["pvalue"]),
                "Holm p": p_text(_holm(r)),
                "Test": r["test"] or MISSING,
                "Reading": reading(r["difference"], _holm(r), higher_is_better=higher, alpha=1 - level),
            }
        )
    table = pd.DataFrame(rows)
    sentence = reference_sentence(model, ref, kind, table, t, evaluation.parameters.get("baseline"))
    return ComparisonSummary(model, ref, kind, sentence, table)


def reference_sentence(model, ref, kind, table, t, baseline):
    """What the reference is, and the readings of the mean."""
    if kind == "baseline":
        who = f"{model} against the baseline {ref}"
    elif baseline == model:
        who = f"{model} is the baseline; here it is compared with {ref}, the best other model by mean AUC"
    else:
        who = f"{model} against {ref}, the best other model by mean AUC (no baseline was given)"
    mean = table[table["Dataset"] == MEAN_ROW]
    by = {w: _and([v for v, r in zip(mean["Value"], mean["Reading"]) if r == w]) for w in (BETTER, WORSE)}
    said = [f"{w} by {by[w]}" for w in (BETTER, WORSE) if by[w]]
    same = _and([v for v, r in zip(mean["Value"], mean["Reading"]) if r == NO_DIFFERENCE])
    if same:
        said.append(f"no detectable difference in {same}")
    text = f"{who}. Over the mean of the datasets: {'; '.join(said)}." if said else f"{who}."
    notes = {}  # each note once, with the rows it concerns when they are not all of them
    for n, value, dataset in zip(t["note"], t["value"], t["dataset"]):
        if n:
            notes.setdefault(n, []).append(f"{VALUE_NAMES[value][0]} on {MEAN_ROW if dataset == 'mean' else dataset}")
    return text + "".join(
        f" Note: {n}." if len(rows) == len(t) or n.startswith("no interval") else f" Note ({_and(rows)}): {n}."
        for n, rows in sorted(notes.items())
    )


def _holm(row):
    """A comparison row's Holm-adjusted p-value (an evaluation saved before Holm: its raw p-value)."""
    return row.get("pvalue_holm", row["pvalue"])


def _and(items):
    items = list(items)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def index_cell(evaluation: Evaluation, model: str) -> str:
    """The index's "vs" cell of ``model``: the reference, ΔAUC and Δ accuracy of the mean, each with its reading.

    The parts are joined by ``"; "`` (the index shows one a line).

    Empty when the evaluation has no comparison (an older evaluation, one model).

    Examples
    --------
    >>> import beyondauc as ba
    >>> from beyondauc.evaluation.comparison import index_cell
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "logreg"], noise_repeats=2,
    ...                  n_bootstrap=20, baseline="logreg")
    >>> index_cell(ev, "svm").startswith("vs logreg; AUC +")
    True
    """
    if "comparison" not in evaluation.tables:
        return ""
    t = evaluation.table("comparison")
    t = t[(t["model"] == model) & (t["dataset"] == "mean") & t["value"].isin(["auc", "accuracy"])]
    if not len(t):
        return ""
    alpha = 1 - float(evaluation.parameters.get("confidence_level", 0.95))
    parts = []
    for _, r in t.iterrows():
        p = p_text(r["pvalue"])
        p = "p " + p if p.startswith("<") else "p = " + p
        parts.append(
            f"{'AUC' if r['value'] == 'auc' else 'accuracy'} {format_number(r['difference'], signed=True)}: "
            f"{reading(r['difference'], _holm(r), alpha=alpha)} ({p})"
        )
    return "; ".join([f"vs {t['reference'].iloc[0]}", *parts])
