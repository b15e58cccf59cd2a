"""The verdict on each model: one sentence per finding, generated from an evaluation's numbers.

A report opens with these findings, and the index shows each model's
one-line verdict; both read the ``findings`` and ``verdicts`` tables that
:func:`~beyondauc.evaluate` stores, so they always agree.  Each finding states
its number with its interval and the threshold that decided it; the
thresholds are the module constants below and are printed in every report.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.selective_benchmark import MAX_TIE_SHARE, MIN_CONFIDENCES
from ..utils.formatting import format_interval, format_number, markdown_text

if TYPE_CHECKING:
    from .container import Evaluation

__all__ = ["ModelSummary", "model_summary", "THRESHOLDS"]

#: The thresholds behind the findings (printed in every report).
THRESHOLDS = {
    "transfer_loss": 0.05,  # accuracy lost against a threshold learnt on the dataset itself (indata)
    "kappa_floor": 0.2,  # kappa below this with an AUC of at least auc_promise: decisions near chance
    "auc_promise": 0.8,
    "drift": 0.05,  # sensitivity/specificity drift between cohorts
    "wasserstein": 1.0,  # W below this: the cohorts shift as much as the classes differ
    "bias_robustness": 0.1,  # bias robustness of the test cohort below this: a small shift mixes the classes
    "p_change": 0.95,  # a rank change whose sign holds in fewer replicates is not significant
}

THRESHOLD_TEXT = (
    "How the findings are decided: a rank change is significant when its sign holds in at least "
    f"{THRESHOLDS['p_change']:.0%} of the bootstrap replicates; a threshold learnt elsewhere *fails* a dataset "
    f"when it loses at least {THRESHOLDS['transfer_loss']:.2f} accuracy against a threshold learnt on the dataset "
    f"itself (indata), or when kappa stays below {THRESHOLDS['kappa_floor']:.1f} although the AUC is at least "
    f"{THRESHOLDS['auc_promise']:.1f}; cohorts *drift* when the sensitivity/specificity drift is at least "
    f"{THRESHOLDS['drift']:.2f} or W is below {THRESHOLDS['wasserstein']:.0f}; the AUC is *fragile* when the bias "
    f"robustness of the test cohort is below {THRESHOLDS['bias_robustness']:.1f}. Intervals are "
    "{level:.0%} bootstrap intervals ({n_bootstrap} replicates): BCa for DiSCA and drift, which resampling biases, "
    "percentile for the others, DeLong for single AUCs; an interval that cannot contain its value is not shown."
)

#: Why DiSCA leaves some answers out of its ranking (:func:`~beyondauc.metrics.selective_benchmark.confidence_ties`).
RANK_RULE = (f"DiSCA needs at least {MIN_CONFIDENCES} distinct confidences, none shared by more than "
             f"{MAX_TIE_SHARE:.0%} of the answers")

_ORDINAL = {1: "st", 2: "nd", 3: "rd"}


def _ordinal(n):
    n = int(n)
    return f"{n}{'th' if 10 <= n % 100 <= 20 else _ORDINAL.get(n % 10, 'th')}"


def _num(x, digits=3):
    """A number of a finding: missing as '–', and the hyphen-minus the stored sentences have always had."""
    return format_number(x, digits, minus="-")


def _ci(row, name, digits=3):
    """'0.858 (0.840–0.871)' or '0.858' without an interval."""
    interval = format_interval(row.get(f"{name}_low"), row.get(f"{name}_high"), digits, minus="-")
    value = _num(row.get(name), digits)
    return f"{value} ({interval})" if interval else value


def _names(items, limit=3):
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _and(items, limit=6):
    """'a', 'a and b', 'a, b and c'; past ``limit`` names, 'a, b, ... and 2 more'."""
    items = list(items)
    if len(items) > limit:
        return f"{', '.join(items[:limit])} and {len(items) - limit} more"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _grouped(datasets, values):
    """'a and b (x); c (y)': datasets with the same value named together, in order of appearance."""
    groups = {}
    for d, v in zip(datasets, values):
        groups.setdefault(v, []).append(str(d))
    return "; ".join(f"{_and(ds)} ({v})" for v, ds in groups.items())


def _ranking(model, p, board, n_models):
    row = board[board["model"] == model].iloc[0].to_dict()
    auc_rank, rank, change = row.get("auc_rank"), row.get("accuracy_rank"), row.get("rank_change")
    setting = f"{p['protocol']}, {p['method']}"
    if pd.isna(auc_rank) or pd.isna(rank):
        return "info", "ranking", f"No rank could be given (undefined AUC or accuracy), ({setting})."
    text = (f"{_ordinal(auc_rank)} of {n_models} by mean AUC, {_ci(row, 'auc')}, and {_ordinal(rank)} by expected "
            f"accuracy once its threshold is learnt on other data ({setting}), {_ci(row, 'accuracy')}; "
            f"kappa {_ci(row, 'kappa')}.")
    pch = row.get("p_change", np.nan)
    sig = bool(row.get("significant")) if "significant" in row and not pd.isna(row.get("significant")) else None
    if change and not pd.isna(change):
        move = f"{'climbs' if change > 0 else 'drops'} {abs(int(change))} place{'s' if abs(change) != 1 else ''}"
        if sig is None:
            text += f" It {move} (no bootstrap: stability unknown)."
            status = "warn" if change < 0 else "good"
        elif sig:
            text += f" It {move}, a change that holds in {pch:.0%} of bootstrap replicates (significant)."
            status = "bad" if change < 0 else "good"
        else:
            text += (f" It {move}, but the sign of that change holds in only {pch:.0%} of bootstrap replicates "
                     f"(below {THRESHOLDS['p_change']:.0%}: not significant).")
            status = "warn" if change < 0 else "info"
    else:
        text += " Its rank does not change" + (f" (in {pch:.0%} of replicates)." if np.isfinite(pch or np.nan) else ".")
        status = "good" if rank <= max(1, n_models // 3) else "info"
    return status, "ranking", text


def _threshold(model, p, grid):
    mine = grid[(grid["model"] == model) & (grid["method"] == p["method"])]
    head = mine[mine["protocol"] == p["protocol"]].set_index("dataset")
    indata = mine[mine["protocol"] == "indata"].set_index("dataset")["accuracy"]
    failed = []
    for dataset, row in head.iterrows():
        loss = indata.get(dataset, np.nan) - row["accuracy"] if p["protocol"] != "indata" else np.nan
        chance = row["kappa"] < THRESHOLDS["kappa_floor"] and row["auc"] >= THRESHOLDS["auc_promise"]
        if (np.isfinite(loss) and loss >= THRESHOLDS["transfer_loss"]) or chance:
            what = [f"accuracy {_ci(row.to_dict(), 'accuracy')} at AUC {_num(row['auc'])}"]
            if np.isfinite(loss) and loss >= THRESHOLDS["transfer_loss"]:
                what.append(f"{loss:.2f} below a threshold learnt on the dataset itself")
            if chance:
                what.append(f"kappa {_num(row['kappa'], 2)}")
            failed.append((loss if np.isfinite(loss) else 1.0, f"{dataset} ({'; '.join(what)})"))
    if not failed:
        return "good", "threshold", (f"A threshold learnt on other data ({p['protocol']}) holds on all "
                                     f"{len(head)} datasets.")
    failed.sort(key=lambda t: -t[0])
    status = "bad" if len(failed) > 1 or failed[0][0] >= 2 * THRESHOLDS["transfer_loss"] else "warn"
    return status, "threshold", (f"A threshold learnt on other data ({p['protocol']}) fails on {len(failed)} of "
                                 f"{len(head)} datasets: {_names([f for _, f in failed], 2)}.")


def _drift(model, diagnostics):
    mine = diagnostics[diagnostics["model"] == model]
    if not len(mine):
        return "info", "drift", "No cohort diagnostics were computed."
    drifted = mine[(mine["drift"] >= THRESHOLDS["drift"]) | (mine["wasserstein"] < THRESHOLDS["wasserstein"])]
    fragile = mine[mine["bias_robustness_test"] < THRESHOLDS["bias_robustness"]]
    cohorts = ", ".join(sorted(set(map(str, mine["cohorts"]))))
    undefined = mine[mine["drift"].isna()]
    why = _notes(undefined)
    if len(undefined) == len(mine):  # nothing to judge: say why instead
        reasons = "; ".join(why) or "a cohort with a single class"
        return "info", "drift", (f"Its cohort drift is undefined on every dataset ({reasons}; cohorts: {cohorts}).")
    parts = []
    if len(drifted):
        items = [f"{r['dataset']} (drift {_ci(r, 'drift', 3)}, W {_num(r['wasserstein'], 2)})"
                 for r in drifted.sort_values("drift", ascending=False).to_dict("records")]
        parts.append(f"validation and test cohorts ({cohorts}) drift apart on {len(drifted)} of {len(mine)} datasets: "
                     f"{_names(items, 2)}")
    else:
        parts.append(f"no dataset shows cohort drift (largest {_num(mine['drift'].max(), 3)} on "
                     f"{mine.loc[mine['drift'].idxmax(), 'dataset']}; cohorts: {cohorts})")
    if len(undefined):
        parts.append("its drift is undefined on " + "; ".join(f"{_and(d, 2)} ({note})" for note, d in why.items())
                     if why else f"its drift is undefined on {_and(map(str, undefined['dataset']), 2)}")
    if len(fragile):
        items = [f"{r['dataset']} ({_ci(r, 'bias_robustness_test', 2)})"
                 for r in fragile.sort_values("bias_robustness_test").to_dict("records")]
        parts.append(f"its AUC is fragile to a small shift of the positives on {_names(items, 2)}")
    status = "bad" if len(drifted) and len(fragile) else "warn" if len(drifted) or len(fragile) else "good"
    text = "; ".join(parts)
    return status, "drift", text[0].upper() + text[1:] + "."


def _rankable(selective):
    """Whether DiSCA can rank each row's answers (every row of an evaluation without the column)."""
    if "rankable" not in selective:
        return pd.Series(True, index=selective.index)
    return selective["rankable"].astype(bool)


def _selective(model, p, selective, board):
    if not len(selective):
        return "info", "selective", "Selective answering was not computed."
    means = board.set_index("model")["disca"].dropna()  # the leaderboard's mean DiSCA over the rankable datasets
    rank = means.rank(ascending=False, method="min")
    n_ranked = len(rank)
    mine = selective[selective["model"] == model]
    if mine["disca"].isna().all():
        return "info", "selective", "DiSCA is undefined on every dataset."
    setting = ("Selective answering (confidences as given)" if p["selective_protocol"] == "none" else
               f"Selective answering (confidences calibrated {p['selective_protocol']}/{p['selective_method']})")
    ranked = mine[_rankable(mine)]
    if model not in rank.index and len(ranked):
        return "info", "selective", "DiSCA is undefined on every dataset where its answers can be ranked."
    if model not in rank.index:
        return "warn", "selective", (
            f"{setting}: not ranked by DiSCA, since on every dataset its answers have too few distinct confidences "
            f"to rank ({RANK_RULE}); the DiSCA they get ({_num(mine['disca'].min(), 2)} to "
            f"{_num(mine['disca'].max(), 2)}) says nothing about when to abstain.")
    worst = ranked.loc[ranked["disca"].idxmin()]
    row = board[board["model"] == model].iloc[0].to_dict()
    text = (f"{setting}: mean DiSCA {_ci(row, 'disca')}, {_ordinal(rank[model])} of {n_ranked}; median first mistake "
            f"at confidence a = {_num(ranked['a'].median(), 2)}, accuracy below {p['tolerance']:g} from b = "
            f"{_num(ranked['b'].median(), 2)}; {int(ranked['n_fluctuations'].sum())} fluctuation(s) in all, the "
            f"lowest DiSCA on {worst['dataset']} ({_ci(worst.to_dict(), 'disca', 2)}).")
    if len(ranked) < len(mine):
        left = mine[~_rankable(mine)]
        where = _grouped(left["dataset"], map(_confidences, left["n_confidences"], left["top_share"]))
        text += f" DiSCA leaves out {where}, where its answers have too few distinct confidences to rank ({RANK_RULE})."
    k = max(1, n_ranked // 3)
    status = "good" if rank[model] <= k else "bad" if rank[model] > n_ranked - k else "info"
    return status, "selective", text


def _notes(diagnostics):
    """``{reason: [datasets]}``: why a model's cohort diagnostics are undefined, from the rows' ``note``."""
    out = {}
    if "note" not in diagnostics:
        return out
    for dataset, note in zip(diagnostics["dataset"], diagnostics["note"]):
        if isinstance(note, str) and note:
            out.setdefault(note, []).append(str(dataset))
    return out


def _confidences(n, share):
    """'1 distinct confidence' or '5 distinct confidences, 80% at one'."""
    n = int(n)
    text = f"{n} distinct confidence{'s' if n != 1 else ''}"
    return text + (f", {share:.0%} at one" if n > 1 and share > MAX_TIE_SHARE else "")


def _single_class(datasets):
    """The names of the datasets with a single class, from the ``datasets`` table."""
    if not {"dataset", "n", "n_positive"} <= set(datasets.columns):
        return set()
    single = (datasets["n_positive"] == 0) | (datasets["n_positive"] == datasets["n"])
    return set(map(str, datasets.loc[single, "dataset"]))


def _analysis(model, diagnostics, selective, single=frozenset()):
    """Where part of the analysis of ``model`` is undefined, and why (None where everything is defined).

    ``single`` are the datasets with a single class: what is undefined there is the data's doing, a note;
    constant or tied scores are the model's, a warning.  The sentence opens with a clause naming no dataset,
    up to the first colon: the index's verdict quotes it.
    """
    diag = diagnostics[diagnostics["model"] == model]
    notes = _notes(diag)
    sel = selective[selective["model"] == model] if len(selective) else selective
    left = sel[~_rankable(sel)] if len(sel) else sel
    if not notes and not len(left):
        return None
    short, details = [], []
    if notes:
        n = sum(len(d) for d in notes.values())
        constant = all(note.startswith("constant scores") for note in notes)
        short.append(f"{'constant scores' if constant else 'cohort diagnostics undefined'} on {n} of "
                     f"{len(diag)} datasets")
        details.append("; ".join(f"{note} on {_and(d)}" for note, d in notes.items())
                       + ", so its cohort diagnostics are undefined there (NaN)")
    if len(left):
        short.append(f"too few distinct confidences to rank on {len(left)} of {len(sel)} datasets")
        why = [("a single class" if str(d) in single else _confidences(n, t))
               for d, n, t in zip(left["dataset"], left["n_confidences"], left["top_share"])]
        details.append(f"DiSCA cannot rank its answers on {_grouped(left['dataset'], why)} and leaves them out of "
                       f"its ranking ({RANK_RULE})")
    own = any(str(d) not in single for d in left["dataset"]) if len(left) else False
    own = own or any("single class" not in part for note in notes for part in note.split("; "))
    text = " and ".join(short)
    return "warn" if own else "info", "analysis", f"{text[0].upper()}{text[1:]}: {'; '.join(details)}."


def findings_table(tables: Mapping[str, pd.DataFrame], parameters: Mapping[str, object],
                   models: Sequence[str]) -> pd.DataFrame:
    """The ``findings`` table of an evaluation: model, order, topic, status, sentence."""
    rows = []
    n = len(models)
    single = _single_class(tables["datasets"]) if "datasets" in tables else set()
    for model in models:
        analysis = _analysis(model, tables["diagnostics"], tables["selective"], single)
        items = [analysis] if analysis else []
        items += [
            _ranking(model, parameters, tables["leaderboard"], n),
            _threshold(model, parameters, tables["grid"]),
            _drift(model, tables["diagnostics"]),
            _selective(model, parameters, tables["selective"], tables["leaderboard"]),
        ]
        for i, (status, topic, sentence) in enumerate(items):
            rows.append({"model": model, "order": i, "topic": topic, "status": status, "sentence": sentence})
    return pd.DataFrame(rows, columns=["model", "order", "topic", "status", "sentence"])


def verdicts_table(findings: pd.DataFrame, leaderboard: pd.DataFrame) -> pd.DataFrame:
    """One line per model for the index, from its findings."""
    rows = []
    board = leaderboard.set_index("model")
    for model, f in findings.groupby("model", sort=False):
        r = board.loc[model]
        by = dict(zip(f["topic"], f["status"]))
        text = dict(zip(f["topic"], f["sentence"]))
        parts = []
        if not pd.isna(r["auc_rank"]) and not pd.isna(r["accuracy_rank"]):
            rank = f"{_ordinal(r['auc_rank'])} by AUC, {_ordinal(r['accuracy_rank'])} by accuracy"
            if r["rank_change"] and "significant" in r and not pd.isna(r["significant"]):
                rank += " (significant)" if r["significant"] else " (not significant)"
            parts.append(rank)
        if "analysis" in text:  # why part of it is undefined: the sentence's opening clause
            why = text["analysis"].split(":", 1)[0]
            parts.append(why[0].lower() + why[1:])
        if by.get("threshold") in ("warn", "bad"):
            parts.append(text["threshold"].split(":")[0].replace("A threshold learnt on other data", "threshold")
                         .replace(" datasets", ""))
        if by.get("drift") in ("warn", "bad"):
            parts.append("cohort drift" if "drift apart" in text["drift"] else "fragile AUC")
        parts.append({"good": "answers selectively well", "bad": "answers selectively poorly",
                      "warn": "not ranked by DiSCA"}.get(by.get("selective"), "selective answering average"))
        worst = "bad" if "bad" in by.values() else "warn" if "warn" in by.values() else "good"
        rows.append({"model": model, "status": worst, "verdict": "; ".join(parts) + "."})
    return pd.DataFrame(rows, columns=["model", "status", "verdict"])


_LABELS = {"good": "good", "warn": "warning", "bad": "problem", "info": "note"}
_COLORS = {"good": "#1a7f37", "warn": "#9a6700", "bad": "#b00020", "info": "#57606a"}
_BADGE_STYLE = ("display: inline-block; min-width: 4.6em; text-align: center; color: white; border-radius: 3px; "
                "font-size: 0.8em; font-weight: bold; padding: 0 0.3em;")


@dataclass(frozen=True)
class ModelSummary:
    """The verdict on one model: its findings, each one sentence, and the thresholds behind them."""

    model: str
    verdict: str
    status: str
    findings: pd.DataFrame = field(repr=False)
    note: str = field(default="", repr=False)

    def __repr__(self) -> str:
        lines = [f"ModelSummary({self.model!r}, {self.status}): {self.verdict}"]
        lines += [f"  [{s}] {t}" for s, t in zip(self.findings["status"], self.findings["sentence"])]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The findings as a Markdown list, names escaped, for notebooks."""
        return "\n".join(f"- **{_LABELS.get(s, s)}**: {markdown_text(t)}"
                         for s, t in zip(self.findings["status"], self.findings["sentence"]))

    def _repr_html_(self) -> str:
        items = "".join(
            f'<li class="ba-finding ba-{html.escape(s)}" style="margin: 0.25em 0">'
            f'<span style="{_BADGE_STYLE} background: {_COLORS.get(s, "#666")}">{_LABELS.get(s, s)}</span> '
            f'{html.escape(t)}</li>' for s, t in zip(self.findings["status"], self.findings["sentence"]))
        return (f'<div class="ba-summary"><p class="ba-verdict" style="font-size: 1.15em; margin: 0.2em 0 0.4em 0">'
                f'<span style="{_BADGE_STYLE} background: {_COLORS.get(self.status, "#666")}">'
                f'{_LABELS.get(self.status, self.status)}</span> <strong>{html.escape(self.model)}</strong>: '
                f'{html.escape(self.verdict)}</p><ul class="ba-findings" style="list-style: none; padding-left: 0">'
                f'{items}</ul><p class="ba-thresholds" style="color: #555"><small>{html.escape(self.note)}</small></p>'
                f'</div>')


def model_summary(evaluation: Evaluation, model: str) -> ModelSummary:
    """The verdict on ``model`` read from an :class:`~beyondauc.Evaluation` (nothing recomputed).

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes", "digits_even"], models=["svm", "naive_bayes"],
    ...                  noise_repeats=2, n_bootstrap=20)
    >>> s = ba.model_summary(ev, "naive_bayes")
    >>> list(s.findings["topic"])
    ['ranking', 'threshold', 'drift', 'selective']
    """
    evaluation.check_model(model)
    f = evaluation.table("findings")
    f = f[f["model"] == model].sort_values("order").reset_index(drop=True)
    v = evaluation.table("verdicts").set_index("model").loc[model]
    p = evaluation.parameters
    note = THRESHOLD_TEXT.replace("*", "").format(level=p.get("confidence_level", 0.95),
                                                   n_bootstrap=p.get("n_bootstrap", 0))
    return ModelSummary(model, str(v["verdict"]), str(v["status"]), f, note)
