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
    "{level:.0%} bootstrap percentile intervals ({n_bootstrap} replicates; DeLong for single AUCs)."
)

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
    parts = []
    if len(drifted):
        items = [f"{r['dataset']} (drift {_ci(r, 'drift', 3)}, W {_num(r['wasserstein'], 2)})"
                 for r in drifted.sort_values("drift", ascending=False).to_dict("records")]
        parts.append(f"validation and test cohorts ({cohorts}) drift apart on {len(drifted)} of {len(mine)} datasets: "
                     f"{_names(items, 2)}")
    elif mine["drift"].notna().any():
        parts.append(f"no dataset shows cohort drift (largest {_num(mine['drift'].max(), 3)} on "
                     f"{mine.loc[mine['drift'].idxmax(), 'dataset']}; cohorts: {cohorts})")
    else:  # every dataset has a cohort with a single class
        parts.append(f"its cohort drift is undefined on every dataset (a cohort with a single class; cohorts: "
                     f"{cohorts})")
    if len(fragile):
        items = [f"{r['dataset']} ({_ci(r, 'bias_robustness_test', 2)})"
                 for r in fragile.sort_values("bias_robustness_test").to_dict("records")]
        parts.append(f"its AUC is fragile to a small shift of the positives on {_names(items, 2)}")
    status = "bad" if len(drifted) and len(fragile) else "warn" if len(drifted) or len(fragile) else "good"
    text = "; ".join(parts)
    return status, "drift", text[0].upper() + text[1:] + "."


def _selective(model, p, selective, board, n_models):
    if not len(selective):
        return "info", "selective", "Selective answering was not computed."
    means = board.set_index("model")["disca"]  # the leaderboard's mean DiSCA over datasets, with its interval
    rank = means.rank(ascending=False, method="min")
    mine = selective[selective["model"] == model]
    if mine["disca"].isna().all():
        return "info", "selective", "DiSCA is undefined on every dataset."
    worst = mine.loc[mine["disca"].idxmin()]
    row = board[board["model"] == model].iloc[0].to_dict()
    text = (f"Selective answering (confidences calibrated {p['selective_protocol']}/{p['selective_method']}): "
            f"mean DiSCA {_ci(row, 'disca')}, {_ordinal(rank[model])} of {n_models}; median first mistake at "
            f"confidence a = {_num(mine['a'].median(), 2)}, accuracy below {p['tolerance']:g} from b = "
            f"{_num(mine['b'].median(), 2)}; {int(mine['n_fluctuations'].sum())} fluctuation(s) in all, the lowest "
            f"DiSCA on {worst['dataset']} ({_ci(worst.to_dict(), 'disca', 2)}).")
    status = "good" if rank[model] <= max(1, n_models // 3) else "bad" if rank[model] > n_models - max(1, n_models // 3) \
        else "info"
    return status, "selective", text


def findings_table(tables: Mapping[str, pd.DataFrame], parameters: Mapping[str, object],
                   models: Sequence[str]) -> pd.DataFrame:
    """The ``findings`` table of an evaluation: model, order, topic, status, sentence."""
    rows = []
    n = len(models)
    for model in models:
        items = [
            _ranking(model, parameters, tables["leaderboard"], n),
            _threshold(model, parameters, tables["grid"]),
            _drift(model, tables["diagnostics"]),
            _selective(model, parameters, tables["selective"], tables["leaderboard"], n),
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
        parts = []
        if not pd.isna(r["auc_rank"]) and not pd.isna(r["accuracy_rank"]):
            rank = f"{_ordinal(r['auc_rank'])} by AUC, {_ordinal(r['accuracy_rank'])} by accuracy"
            if r["rank_change"] and "significant" in r and not pd.isna(r["significant"]):
                rank += " (significant)" if r["significant"] else " (not significant)"
            parts.append(rank)
        text = f["sentence"].tolist()
        if by.get("threshold") in ("warn", "bad"):
            parts.append(text[1].split(":")[0].replace("A threshold learnt on other data", "threshold")
                         .replace(" datasets", ""))
        if by.get("drift") in ("warn", "bad"):
            parts.append("cohort drift" if "drift apart" in text[2] else "fragile AUC")
        parts.append({"good": "answers selectively well", "bad": "answers selectively poorly"}
                     .get(by.get("selective"), "selective answering average"))
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
