"""Tables for papers: the leaderboard, the comparison with the reference and the per-dataset grid.

Each is read from the evaluation's tables (nothing is recomputed; a grid's
ranks come from :func:`~beyondauc.rank_table`, the function the evaluation's
``rank_table`` comes from) and written as LaTeX (booktabs), Markdown or CSV.
The cells print numbers as the report does: three decimals, an estimate
with its interval in brackets (``0.925 [0.904–0.941]``, or ``−0.20 to 0.10``
when an end is negative), ranks as integers with their bootstrap range.

A cell is set in bold where its interval separates it:

* leaderboard and grid: the column's best estimate (highest; lowest for
  drift) is bold when the lower end of its interval lies strictly above the
  upper end of every other model's interval in that column (for drift: its
  upper end strictly below every other's lower end). Without intervals (an
  evaluation with ``n_bootstrap=0``), or when any other model of the column
  has a value but no interval, nothing is bold: the best cannot be told
  apart;
* comparison: a difference is bold when its interval lies wholly on the
  better side of zero (above for AUC, accuracy, kappa and DiSCA; below for
  drift): the model is better than its reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ..metrics.calibration.ranking import rank_table
from ..utils.formatting import MINUS, MISSING, comment, escape_text, format_interval, format_number, is_missing
from ..utils.tables import column_title
from .readings import VALUE_NAMES, difference_text, p_text


class EvaluationTables(Protocol):
    """What a paper table reads of a :class:`~beyondauc.evaluation.container.Evaluation` (which is not
    imported: the container imports this module for ``Evaluation.to_latex``)."""

    @property
    def tables(self) -> dict[str, pd.DataFrame]: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    def table(self, name: str) -> pd.DataFrame: ...

    @property
    def models(self) -> tuple[str, ...]: ...

    @property
    def datasets(self) -> tuple[str, ...]: ...


__all__ = ["PAPER_FORMATS", "PAPER_TABLES", "PaperTable", "paper_table", "separated_best"]

#: The tables :func:`paper_table` makes.
PAPER_TABLES = ("leaderboard", "comparison", "grid")
#: The formats a :class:`PaperTable` is written in.
PAPER_FORMATS = ("latex", "markdown", "csv")
_GRID_SCORES = ("auc", "accuracy", "kappa", "balanced_accuracy", "mcc", "f1")
#: The leaderboard's value columns: title, and whether higher is better (None: a rank, never bold).
_BOARD = {
    "auc": ("mean AUC", True),
    "auc_rank": ("AUC rank", None),
    "accuracy": ("mean accuracy", True),
    "accuracy_rank": ("accuracy rank", None),
    "rank_change": ("change", None),
    "kappa": ("kappa", True),
    "disca": ("DiSCA", True),
    "drift": ("drift", False),
}
#: Unicode the report prints, as LaTeX that compiles without any package (after the special characters).
_LATEX_UNICODE = str.maketrans({MINUS: "$-$", MISSING: "--", "\u221e": r"$\infty$", "\n": " ", "\r": " "})


@dataclass(frozen=True)
class PaperTable:
    """A table for a paper: cells as text (bold or not) and the numbers behind them.

    Attributes
    ----------
    name : str
        ``"leaderboard"``, ``"comparison"`` or ``"grid"``.
    title : str
        What the table shows, one line (a comment above the LaTeX table).
    header : tuple of str
    rows : tuple of tuple of (str, bool)
        Each cell's text, as the report prints it, and whether it is bold.
    numbers : DataFrame
        The evaluation's numbers behind the cells, unrounded (what
        :meth:`to_csv` writes).
    label_columns : int
        How many leading columns are names (left-aligned).
    """

    name: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[tuple[str, bool], ...], ...]
    numbers: pd.DataFrame = field(repr=False)
    label_columns: int = 1

    def to_latex(self, *, caption: str | None = None, label: str | None = None) -> str:
        """The table as LaTeX: a booktabs ``tabular`` (``\\usepackage{booktabs}``).

        Names are escaped (``_ % & # $ { } ~ ^ \\`` print as themselves), a
        minus sign is ``$-$`` and a range's dash ``--``, so the table needs
        no other package. With ``caption`` or ``label`` (LaTeX source, put
        in as given) the tabular goes in a centred ``table`` float.
        """

        def cell(text, bold):
            text = escape_text(text, "latex").translate(_LATEX_UNICODE)
            return f"\\textbf{{{text}}}" if bold else text

        align = "l" * self.label_columns + "r" * (len(self.header) - self.label_columns)
        lines = [
            comment(self.title),
            comment(_BOLD_RULES[self.name]),
            f"\\begin{{tabular}}{{{align}}}",
            r"\toprule",
            " & ".join(cell(h, False) for h in self.header) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(cell(*c) for c in row) + r" \\" for row in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if caption is None and label is None:
            return "\n".join(lines) + "\n"
        float_ = [r"\begin{table}", r"\centering"] + ([f"\\caption{{{caption}}}"] if caption is not None else [])
        float_ += [f"\\label{{{label}}}"] if label is not None else []
        return "\n".join(float_ + lines + [r"\end{table}"]) + "\n"

    def to_markdown(self) -> str:
        """The table as Markdown (a pipe table, bold as ``**``), then the rule that set the bold cells."""

        def cell(text, bold):
            text = escape_text(str(text).replace("\n", " ").replace("\r", " "), "markdown")
            return f"**{text}**" if bold and text else text

        rule = ["---"] * self.label_columns + ["---:"] * (len(self.header) - self.label_columns)
        lines = ["| " + " | ".join(cell(h, False) for h in self.header) + " |", "| " + " | ".join(rule) + " |"]
        lines += ["| " + " | ".join(cell(*c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + f"\n\n{_BOLD_RULES[self.name]}\n"

    def to_csv(self) -> str:
        """The numbers behind the cells as CSV: unrounded, an interval as ``low`` and ``high`` columns."""
        return self.numbers.to_csv(index=False)

    def to(self, fmt: str) -> str:
        """The table in ``fmt`` (one of :data:`PAPER_FORMATS`)."""
        if fmt not in PAPER_FORMATS:
            raise ValueError(f"`fmt` must be one of {', '.join(PAPER_FORMATS)}, got {fmt!r}")
        return {"latex": self.to_latex, "markdown": self.to_markdown, "csv": self.to_csv}[fmt]()


_BOLD_RULES = {
    "leaderboard": "Bold: the best value of a column whose interval lies wholly beyond every other model's interval.",
    "grid": "Bold: the best value of a column whose interval lies wholly beyond every other model's interval.",
    "comparison": "Bold: a difference whose interval lies wholly on the better side of zero.",
}


def separated_best(estimates, lows, highs, *, higher_is_better: bool = True) -> int | None:
    """The position of the best estimate when its interval separates it from every other, else None.

    Separated: the best's lower end lies strictly above the upper end of
    every other estimate's interval (``higher_is_better=False``: its upper
    end strictly below every other's lower end). Missing estimates take no
    part; a best or another estimate without an interval, or fewer than two
    estimates, give None.

    Examples
    --------
    >>> from beyondauc.evaluation.paper import separated_best
    >>> separated_best([0.9, 0.8, 0.7], [0.85, 0.7, 0.6], [0.95, 0.84, 0.8])
    0
    >>> separated_best([0.9, 0.8], [0.85, 0.7], [0.95, 0.86])  # 0.85 < 0.86: the intervals overlap
    >>> separated_best([0.1, 0.3], [0.05, 0.2], [0.15, 0.4], higher_is_better=False)
    0
    """
    est, low, high = (np.asarray(v, dtype=float) for v in (estimates, lows, highs))
    ok = np.isfinite(est)
    if ok.sum() < 2:
        return None
    signed = np.where(ok, est if higher_is_better else -est, -np.inf)
    best = int(np.argmax(signed))
    near, far = (low, high) if higher_is_better else (-high, -low)  # the best's inner end, the others' outer end
    others = ok & (np.arange(len(est)) != best)
    whole = np.isfinite(low) & np.isfinite(high)  # an interval with a missing end is no interval
    if not whole[best] or not whole[others].all():
        return None
    return best if near[best] > far[others].max() else None


def _estimate(value, low, high):
    """``0.925 [0.904–0.941]``: the estimate and its interval as the report prints them (the estimate alone
    without one)."""
    interval = format_interval(low, high)
    return f"{format_number(value)} [{interval}]" if interval else format_number(value)


def _rank(value, low=None, high=None):
    """``2 [1–3]``: a rank and its bootstrap range, each end rounded half up as the report index shows it."""
    text = format_number(value, 0)
    if is_missing(value) or is_missing(low) or is_missing(high):
        return text
    return f"{text} [{format_interval(math.floor(low + 0.5), math.floor(high + 0.5), 0)}]"


def _order(evaluation: EvaluationTables) -> list[str]:
    """The models in the leaderboard's order (then any it lacks, in the evaluation's)."""
    board = list(evaluation.table("leaderboard")["model"]) if "leaderboard" in evaluation.tables else []
    return list(dict.fromkeys([*board, *evaluation.models]))


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    return frame[name].to_numpy(dtype=float) if name in frame.columns else np.full(len(frame), np.nan)


def leaderboard_table(evaluation: EvaluationTables) -> PaperTable:
    """The index's leaderboard: mean AUC, accuracy, their ranks and the change, kappa, DiSCA, drift."""
    board = evaluation.table("leaderboard").set_index("model").reindex(_order(evaluation)).reset_index()
    names = [c for c in _BOARD if c in board.columns]
    cells = {"model": [(str(m), False) for m in board["model"]]}
    kept = ["model"]
    for name in names:
        title, higher = _BOARD[name]
        value, low, high = (_column(board, name + s) for s in ("", "_low", "_high"))
        if higher is None:
            fmt = (lambda v, lo, hi: format_number(v, 0, signed=True)) if name == "rank_change" else _rank
            cells[title] = [(fmt(v, lo, hi), False) for v, lo, hi in zip(value, low, high)]
        else:
            best = separated_best(value, low, high, higher_is_better=higher)
            cells[title] = [(_estimate(v, lo, hi), i == best) for i, (v, lo, hi) in enumerate(zip(value, low, high))]
        kept += [c for c in (name, name + "_low", name + "_high") if c in board.columns]
    header = tuple(cells)
    rows = tuple(zip(*cells.values()))
    title = (
        f"Leaderboard: mean over {len(evaluation.datasets)} datasets, protocol {evaluation.parameters['protocol']}, "
        f"method {evaluation.parameters['method']}{_level(evaluation)}"
    )
    return PaperTable("leaderboard", title, header, rows, board[kept].reset_index(drop=True))


def _level(evaluation: EvaluationTables) -> str:
    p = evaluation.parameters
    return (
        f"; intervals: {float(p.get('confidence_level', 0.95)):.0%} bootstrap ({p['n_bootstrap']} replicates)"
        if p.get("n_bootstrap")
        else "; no intervals (n_bootstrap=0)"
    )


def comparison_paper_table(
    evaluation: EvaluationTables, *, dataset: str = "mean", values: tuple[str, ...] = ("auc", "accuracy")
) -> PaperTable:
    """Each model against its reference on ``dataset``: the difference of each of ``values``, interval, p-value.

    On one dataset the p-value is Holm-adjusted within the model's family of per-dataset tests of that
    value (the report's reading); the mean over datasets is a single test, its p-value raw.
    """
    t = evaluation.table("comparison")
    known = ["mean", *evaluation.datasets]
    if dataset not in known:
        raise ValueError(f"`dataset` {dataset!r} is not in the evaluation; it has {known}")
    unknown = [v for v in values if v not in VALUE_NAMES]
    if unknown or not values:
        raise ValueError(f"`values` must be some of {', '.join(VALUE_NAMES)}, got {list(values)}")
    t = t[(t["dataset"] == dataset) & t["value"].isin(list(values))]
    if not len(t):
        raise ValueError("the evaluation has no comparison (it needs two models or more)")
    order = {m: i for i, m in enumerate(_order(evaluation))}
    vorder = {v: i for i, v in enumerate(values)}
    t = t.sort_values(["model", "value"], key=lambda c: c.map(order if c.name == "model" else vorder), kind="stable")
    holm = dataset != "mean" and "pvalue_holm" in t
    header = ["model", "reference"]
    for v in values:
        header += [f"{VALUE_NAMES[v][0]} difference", f"{'Holm p' if holm else 'p'} ({VALUE_NAMES[v][0]})"]
    rows = []
    for model, part in t.groupby("model", sort=False):
        by = {r["value"]: r for _, r in part.iterrows()}
        row = [(str(model), False), (str(part["reference"].iloc[0]), False)]
        for v in values:
            r = by.get(v)
            if r is None:
                row += [(MISSING, False), (MISSING, False)]
                continue
            gap = r["low"] if VALUE_NAMES[v][1] else -r["high"]
            pvalue = r["pvalue_holm"] if holm else r["pvalue"]
            row += [(difference_text(r), bool(np.isfinite(gap) and gap > 0)), (p_text(pvalue), False)]
        rows.append(tuple(row))
    where = "the mean over datasets" if dataset == "mean" else f"dataset {dataset}"
    title = f"Each model minus its reference on {where}{_level(evaluation)}"
    numbers = t[
        [
            "model",
            "reference",
            "reference_kind",
            "dataset",
            "value",
            "estimate",
            "reference_estimate",
            "difference",
            "low",
            "high",
            "pvalue",
            *(["pvalue_holm"] if "pvalue_holm" in t else []),
            "test",
        ]
    ].reset_index(drop=True)
    return PaperTable("comparison", title, tuple(header), tuple(rows), numbers, label_columns=2)


def grid_table(
    evaluation: EvaluationTables, *, score: str = "accuracy", protocol: str | None = None, method: str | None = None
) -> PaperTable:
    """``score`` per model (rows) and dataset (columns, then the mean), with its interval and rank."""
    if score not in _GRID_SCORES:
        raise ValueError(f"`score` must be one of {', '.join(_GRID_SCORES)}, got {score!r}")
    p = evaluation.parameters
    protocol, method = protocol or p["protocol"], method or p["method"]
    g = evaluation.table("grid")
    rows = g[(g["protocol"] == protocol) & (g["method"] == method)]
    if not len(rows):
        pairs = sorted(set(zip(g["protocol"], g["method"])))
        raise ValueError(f"the evaluation's grid has no protocol {protocol!r} with method {method!r}; it has {pairs}")
    ranked = rank_table(rows, score=score)
    ranked["low"], ranked["high"] = _grid_intervals(evaluation, rows, ranked, score, protocol, method)
    models, datasets = _order(evaluation), [*pd.unique(ranked["dataset"])]
    full = ranked.set_index(["model", "dataset"]).reindex(pd.MultiIndex.from_product([models, datasets]))
    cells = {"model": [(m, False) for m in models]}
    for d in datasets:
        part = full.xs(d, level=1)
        best = separated_best(part["value"], part["low"], part["high"], higher_is_better=True)
        cells[d] = [
            (_estimate(r.value, r.low, r.high) + ("" if is_missing(r.rank) else f" ({r.rank})"), i == best)
            for i, r in enumerate(part.itertuples())
        ]
    numbers = full.rename_axis(["model", "dataset"]).reset_index()[["model", "dataset", "value", "low", "high", "rank"]]
    title = (
        f"{column_title(score)} per dataset (rank in parentheses), protocol {protocol}, method {method}"
        f"{_level(evaluation)}"
    )
    return PaperTable(
        "grid", title, tuple(cells), tuple(zip(*cells.values())), numbers.rename(columns={"value": score})
    )


def _grid_intervals(evaluation, rows, ranked, score, protocol, method):
    """The intervals of ``ranked``'s values: each dataset's from the grid, the mean's from ``mean_intervals``."""

    def lookup(frame, keys, column):
        table = frame.set_index(keys)[column] if column in frame.columns else pd.Series(dtype=float)
        return ranked.set_index(keys).index.map(lambda k: table.get(k, np.nan)).to_numpy(dtype=float)

    low, high = lookup(rows, ["dataset", "model"], f"{score}_low"), lookup(rows, ["dataset", "model"], f"{score}_high")
    m = evaluation.tables.get("mean_intervals")
    if m is not None and len(m):
        m = m[(m["protocol"] == protocol) & (m["method"] == method) & (m["score"] == score)]
        mean = (ranked["dataset"] == "mean").to_numpy()
        low = np.where(mean, lookup(m, ["dataset", "model"], "low"), low)
        high = np.where(mean, lookup(m, ["dataset", "model"], "high"), high)
    return low, high


def paper_table(
    evaluation: EvaluationTables,
    table: str = "leaderboard",
    *,
    score: str | None = None,
    dataset: str | None = None,
    values: tuple[str, ...] | None = None,
    protocol: str | None = None,
    method: str | None = None,
) -> PaperTable:
    """A table of ``evaluation`` for a paper (see the module's text for the bold rule).

    Parameters
    ----------
    evaluation : Evaluation
    table : {"leaderboard", "comparison", "grid"}, default="leaderboard"
        The index's leaderboard; every model against its reference (the
        baseline, or the best other model by mean AUC); or one score per
        model and dataset with its rank.
    score : str, optional
        ``grid`` only: ``auc``, ``accuracy`` (default), ``kappa``,
        ``balanced_accuracy``, ``mcc`` or ``f1``.
    dataset : str, optional
        ``comparison`` only: a dataset, or ``"mean"`` (default).
    values : tuple of str, optional
        ``comparison`` only: some of ``auc``, ``accuracy``, ``kappa``,
        ``disca``, ``drift`` (default: ``auc`` and ``accuracy``).
    protocol, method : str, optional
        ``grid`` only: a setting of the grid (default: the headline's).

    Returns
    -------
    PaperTable

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "logreg"], noise_repeats=2,
    ...                  n_bootstrap=0)
    >>> t = paper_table(ev, "grid", score="auc")
    >>> t.header
    ('model', 'wine', 'diabetes', 'mean')
    >>> print(t.to_latex().splitlines()[3])
    \\toprule
    """
    if table not in PAPER_TABLES:
        raise ValueError(f"`table` must be one of {', '.join(PAPER_TABLES)}, got {table!r}")
    options = {"score": score, "dataset": dataset, "values": values, "protocol": protocol, "method": method}
    allowed = {"leaderboard": (), "comparison": ("dataset", "values"), "grid": ("score", "protocol", "method")}[table]
    extra = [k for k, v in options.items() if v is not None and k not in allowed]
    if extra:
        raise ValueError(
            f"`{extra[0]}` does not apply to the {table} table"
            + (f" (it takes {', '.join(f'`{a}`' for a in allowed)})" if allowed else "")
        )
    given: dict[str, Any] = {
        k: ((v,) if k == "values" and isinstance(v, str) else tuple(v) if k == "values" else v)
        for k, v in options.items()
        if v is not None
    }
    if table == "leaderboard":
        return leaderboard_table(evaluation)
    if table == "comparison":
        return comparison_paper_table(evaluation, **given)
    return grid_table(evaluation, **given)
