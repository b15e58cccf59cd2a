"""The verdict on each model: one sentence per finding, generated from an evaluation's numbers.

A report opens with these findings, and the index shows each model's
one-line verdict; both read the ``findings`` and ``verdicts`` tables that
:func:`~beyondauc.evaluate` stores, so they always agree.  Each finding states
its number with its interval and the threshold that decided it; the
thresholds are the module constants below and are printed in every report.

A rule (:data:`RULES`) flags a model only with evidence from the interval:
the number's whole interval must lie past the threshold.  A number past it
whose interval straddles it gives a note, "inconclusive"; without a bootstrap
(no interval) a note, "unchecked".  Drift and W need their permutation null
rejected too (p-value below 1 - confidence level); where their bootstrap
interval cannot contain the estimate (NaN), the estimate past the threshold
and the null decide, and the finding says so.  Every finding names the rule that set its
status and the number behind it (the ``rule`` and ``reason`` columns).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..metrics.selective.benchmark import MAX_TIE_SHARE, MIN_CONFIDENCES
from ..metrics.selective.given_calibration import GIVEN_ECE_TOLERANCE
from ..utils.formatting import format_interval
from .abstention import HEADLINE_RISK
from .drift_findings import drift_finding
from .finding_text import (
    SEVERITY,
    THRESHOLDS,
    and_list,
    grouped_names,
    is_blank,
    judge,
    name_list,
    number_text,
    ordinal,
    reason_text,
    undefined_notes,
    value_interval,
)
from .guarantee_findings import guarantee_judged, with_guarantee

__all__ = ["THRESHOLDS", "RULES", "findings_table", "verdicts_table"]

#: Every rule a finding applies: (rule, topic, number, threshold, evidence a flag needs).  A rule whose
#: number crosses its threshold flags the model only when the number's interval lies wholly past the
#: threshold too; when the interval reaches back across it the finding is a note, "inconclusive", and
#: without a bootstrap (no interval) a note, "unchecked".  ``docs/reports.md`` prints this table.
RULES = (
    (
        "rank drop",
        "ranking",
        "AUC rank - accuracy rank (mean over datasets)",
        "< 0",
        "bootstrap p-value of the change <= 1 - confidence level",
    ),
    (
        "threshold transfer",
        "threshold",
        "accuracy lost against a threshold learnt on the dataset itself (indata)",
        f">= {THRESHOLDS['transfer_loss']:g}",
        "the upper end of the accuracy's interval loses it too",
    ),
    (
        "decisions near chance",
        "threshold",
        f"kappa, where the AUC is at least {THRESHOLDS['auc_promise']:g}",
        f"< {THRESHOLDS['kappa_floor']:g}",
        "kappa's interval below the floor and the AUC's above the promise",
    ),
    (
        "cohort drift",
        "drift",
        "sensitivity/specificity drift between validation and test cohorts",
        f">= {THRESHOLDS['drift']:g}",
        "permutation p-value < 1 - confidence level and the lower end of the drift's "
        "interval at or above the threshold (the estimate, where no interval can contain it)",
    ),
    (
        "Wasserstein",
        "drift",
        "W = distance between the classes / distance between the cohorts",
        f"< {THRESHOLDS['wasserstein']:g}",
        "permutation p-value < 1 - confidence level and the upper end of W's "
        "interval below the threshold (the estimate, where no interval can contain it)",
    ),
    (
        "fragile AUC",
        "drift",
        "bias robustness of the test cohort",
        f"< {THRESHOLDS['bias_robustness']:g}",
        "the upper end of its interval below the threshold",
    ),
    (
        "abstains worse",
        "selective",
        "mean DiSCA against the best other model's",
        "below",
        "its interval wholly below the best other model's interval",
    ),
    (
        "unrankable confidences",
        "selective",
        "distinct confidences of the answers on every dataset",
        f"< {MIN_CONFIDENCES} or one shared by > {MAX_TIE_SHARE:.0%}",
        "a count, no interval needed",
    ),
    (
        "guarantee fails to transfer",
        "selective",
        "realised risk on a dataset of a threshold certified on other data "
        f"(xdomain, outdomain) at the headline target risk {HEADLINE_RISK:g}",
        "> the target risk",
        "the certificate itself (probability >= 1 - delta on its calibration data), no interval needed",
    ),
    (
        "miscalibrated confidence",
        "calibration",
        "ECE (15 equal-width bins) of the confidence as given, on a dataset "
        "(where selective answering reads it as given: answers by default)",
        f"> {GIVEN_ECE_TOLERANCE:g}",
        "the lower end of its interval above the threshold",
    ),
    (
        "undefined analysis",
        "analysis",
        "datasets where the model's scores leave a measure undefined (constant scores, tied confidences)",
        ">= 1",
        "a count, no interval needed",
    ),
)

THRESHOLD_TEXT = (
    "How the findings are decided: a rank change is significant when its bootstrap p-value is at most "
    "{alpha:g}; a threshold learnt elsewhere *fails* a dataset when it loses at least "
    f"{THRESHOLDS['transfer_loss']:.2f} accuracy against a threshold learnt on the dataset itself (indata), or "
    f"when kappa stays below {THRESHOLDS['kappa_floor']:.1f} although the AUC is at least "
    f"{THRESHOLDS['auc_promise']:.1f}; cohorts *drift* when the sensitivity/specificity drift is at least "
    f"{THRESHOLDS['drift']:.2f} or W is below {THRESHOLDS['wasserstein']:.0f}, and shuffling the cohorts within "
    "class (a permutation null) rarely does as much: p below {alpha:g}; the AUC is *fragile* when the bias "
    f"robustness of the test cohort is below {THRESHOLDS['bias_robustness']:.1f}; a model *abstains worse* when "
    "its mean DiSCA's interval lies wholly below the best other model's; an abstention guarantee *fails to "
    f"transfer* when a threshold certified on other datasets at risk {HEADLINE_RISK:g} answers a dataset at a "
    "higher realised risk (its interval: Clopper-Pearson). A warning needs the whole interval past "
    "the threshold; a number past it whose interval is not is a note (inconclusive), and without a bootstrap a "
    "note (unchecked). Intervals are {level:.0%} bootstrap intervals ({n_bootstrap} replicates): BCa for DiSCA "
    "and drift, which resampling biases, percentile for the others, DeLong for single AUCs; an interval that "
    "cannot contain its value is not shown (drift and W are then judged on the value and the permutation null)."
)

#: Why DiSCA leaves some answers out of its ranking (:func:`~beyondauc.metrics.selective.benchmark.confidence_ties`).
RANK_RULE = (
    f"DiSCA needs at least {MIN_CONFIDENCES} distinct confidences, none shared by more than "
    f"{MAX_TIE_SHARE:.0%} of the answers"
)


def _p_text(p_value, n_bootstrap):
    """'p = 0.16', or 'p < 0.005' when no replicate goes against the change."""
    if p_value == 0 and n_bootstrap:
        return f"p < {1 / n_bootstrap:.2g}"
    return f"p = {number_text(p_value, 2 if p_value >= 0.01 else 3)}"


def _ranking(model, p, board, n_models):
    row = board[board["model"] == model].iloc[0].to_dict()
    auc_rank, rank, change = row.get("auc_rank"), row.get("accuracy_rank"), row.get("rank_change")
    setting = f"{p['protocol']}, {p['method']}"
    if pd.isna(auc_rank) or pd.isna(rank):
        return "info", "ranking", f"No rank could be given (undefined AUC or accuracy), ({setting}).", "", ""
    text = (
        f"{ordinal(auc_rank)} of {n_models} by mean AUC, {value_interval(row, 'auc')}, and {ordinal(rank)} by expected "
        f"accuracy once its threshold is learnt on other data ({setting}), {value_interval(row, 'accuracy')}; "
        f"kappa {value_interval(row, 'kappa')}."
    )
    share = row.get("sign_share", row.get("p_change", np.nan))
    p_value, alpha = row.get("p_value", np.nan), 1 - p.get("confidence_level", 0.95)
    if is_blank(change) or not change:
        stable = f" (the same in {share:.0%} of bootstrap replicates)" if not is_blank(share) else ""
        return "good", "ranking", text + f" Its rank does not change{stable}.", "", ""
    places = f"{abs(int(change))} place{'s' if abs(change) != 1 else ''}"
    move = f"{'climbs' if change > 0 else 'drops'} {places}"
    if is_blank(share) or is_blank(p_value):
        text += f" It {move} (no bootstrap: whether the change is significant is unchecked)."
        judged = "unchecked" if change < 0 else "clear"
        reason = f"rank drop unchecked: {places}, no interval (no bootstrap)"
    else:
        sig = p_value <= alpha
        ptext = _p_text(p_value, p.get("n_bootstrap", 0))
        text += (
            f" It {move}; the change keeps its sign in {share:.0%} of bootstrap replicates ({ptext}: "
            f"{'significant' if sig else 'not significant'} at {alpha:g})."
        )
        judged = "clear" if change > 0 else "flag" if sig else "inconclusive"
        reason = f"rank drop{'' if sig else ' inconclusive'}: {places} once a threshold is learnt elsewhere, " + (
            f"{ptext} (significant at {alpha:g})" if sig else f"{ptext} > {alpha:g}"
        )
    if judged == "clear":
        return "good", "ranking", text, "", ""
    return ("warn" if judged == "flag" else "info"), "ranking", text, "rank drop", reason


def transfer(row, indata):
    """The threshold rules on one dataset: [(judged, rule, reason, description)] of those that apply."""
    out, name = [], str(row["dataset"])
    if not is_blank(indata):
        loss = indata - row["accuracy"]
        ends = [row.get(f"accuracy_{end}") for end in ("high", "low")]
        low, high = (np.nan if is_blank(x) else indata - x for x in ends)
        judged = judge(loss, low, high, THRESHOLDS["transfer_loss"])
        if judged != "clear":
            iv = format_interval(low, high, 2, minus="-")
            out.append(
                (
                    judged,
                    "threshold transfer",
                    reason_text(
                        "threshold transfer",
                        judged,
                        f"accuracy lost {number_text(loss, 2)}",
                        name,
                        THRESHOLDS["transfer_loss"],
                        interval=iv,
                    ),
                    f"{loss:.2f} below a threshold learnt on the dataset itself ({iv or 'no interval'})",
                )
            )
    if not is_blank(row["auc"]) and row["auc"] >= THRESHOLDS["auc_promise"]:
        judged = judge(row["kappa"], row.get("kappa_low"), row.get("kappa_high"), THRESHOLDS["kappa_floor"], below=True)
        if judged == "flag" and not row.get("auc_low", 0) >= THRESHOLDS["auc_promise"]:
            judged = "inconclusive"  # the AUC's interval reaches below its promise
        if judged != "clear":
            iv = format_interval(row.get("kappa_low"), row.get("kappa_high"), 2, minus="-")
            out.append(
                (
                    judged,
                    "decisions near chance",
                    reason_text(
                        "decisions near chance",
                        judged,
                        f"kappa {number_text(row['kappa'], 2)}",
                        name,
                        THRESHOLDS["kappa_floor"],
                        below=True,
                        interval=iv,
                        context=f" at AUC {number_text(row['auc'])}",
                    ),
                    f"kappa {value_interval(row, 'kappa', 2)}",
                )
            )
    return out


def _threshold(model, p, grid):
    mine = grid[(grid["model"] == model) & (grid["method"] == p["method"])]
    head = mine[mine["protocol"] == p["protocol"]]
    indata = mine[mine["protocol"] == "indata"].set_index("dataset")["accuracy"]
    judged = []  # (severity, loss, dataset text, rule, reason) per dataset that a rule reaches
    for row in head.to_dict("records"):
        found = transfer(row, indata.get(row["dataset"]) if p["protocol"] != "indata" else None)
        if found:
            found.sort(key=lambda t: -SEVERITY[t[0]])
            worst = found[0][0]
            loss = indata.get(row["dataset"], np.nan) - row["accuracy"] if p["protocol"] != "indata" else 1.0
            what = [f"accuracy {value_interval(row, 'accuracy')} at AUC {number_text(row['auc'])}"]
            what += [description for j, _, _, description in found if j == worst]
            judged.append(
                (
                    worst,
                    loss if np.isfinite(loss) else 1.0,
                    f"{row['dataset']} ({'; '.join(what)})",
                    found[0][1],
                    found[0][2],
                )
            )
    failed = sorted([j for j in judged if j[0] == "flag"], key=lambda t: -t[1])
    doubt = sorted([j for j in judged if j[0] != "flag"], key=lambda t: -t[1])
    where = f"A threshold learnt on other data ({p['protocol']})"
    if failed:
        text = f"{where} fails on {len(failed)} of {len(head)} datasets: {name_list([f[2] for f in failed], 2)}."
        status = "bad" if len(failed) > 1 or failed[0][1] >= 2 * THRESHOLDS["transfer_loss"] else "warn"
        rule, reason = failed[0][3], failed[0][4] + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
    elif doubt:
        text = (
            f"{where} fails on no dataset with evidence from the intervals (it holds on "
            f"{len(head) - len(doubt)} of {len(head)})."
        )
        status, rule, reason = "info", doubt[0][3], doubt[0][4]
    else:
        return "good", "threshold", f"{where} holds on all {len(head)} datasets.", "", ""
    if doubt:
        text += f" {'Unchecked' if doubt[0][0] == 'unchecked' else 'Inconclusive'} on {name_list([f[2] for f in doubt], 2)}."
    return status, "threshold", text, rule, reason


def _rankable(selective):
    """Whether DiSCA can rank each row's answers (every row of an evaluation without the column)."""
    if "rankable" not in selective:
        return pd.Series(True, index=selective.index)
    return selective["rankable"].astype(bool)


def _selective(model, p, selective, board):
    if not len(selective):
        return "info", "selective", "Selective answering was not computed.", "", ""
    means = board.set_index("model")["disca"].dropna()  # the leaderboard's mean DiSCA over the rankable datasets
    rank = means.rank(ascending=False, method="min")
    n_ranked = len(rank)
    mine = selective[selective["model"] == model]
    if mine["disca"].isna().all():
        return "info", "selective", "DiSCA is undefined on every dataset.", "", ""
    setting = (
        "Selective answering (confidences as given)"
        if p["selective_protocol"] == "none"
        else f"Selective answering (confidences calibrated {p['selective_protocol']}/{p['selective_method']})"
    )
    ranked = mine[_rankable(mine)]
    if model not in rank.index and len(ranked):
        return "info", "selective", "DiSCA is undefined on every dataset where its answers can be ranked.", "", ""
    if model not in rank.index:
        return (
            "warn",
            "selective",
            (
                f"{setting}: not ranked by DiSCA, since on every dataset its answers have too few distinct confidences "
                f"to rank ({RANK_RULE}); the DiSCA they get ({number_text(mine['disca'].min(), 2)} to "
                f"{number_text(mine['disca'].max(), 2)}) says nothing about when to abstain."
            ),
            "unrankable confidences",
            (f"unrankable confidences: too few distinct confidences on all {len(mine)} datasets ({RANK_RULE})"),
        )
    worst = ranked.loc[ranked["disca"].idxmin()]
    row = board[board["model"] == model].iloc[0].to_dict()
    text = (
        f"{setting}: mean DiSCA {value_interval(row, 'disca')}, {ordinal(rank[model])} of {n_ranked}; median first mistake "
        f"at confidence a = {number_text(ranked['a'].median(), 2)}, accuracy below {p['tolerance']:g} from b = "
        f"{number_text(ranked['b'].median(), 2)}; {int(ranked['n_fluctuations'].sum())} fluctuation(s) in all, the "
        f"lowest DiSCA on {worst['dataset']} ({value_interval(worst.to_dict(), 'disca', 2)})."
    )
    if len(ranked) < len(mine):
        left = mine[~_rankable(mine)]
        where = grouped_names(left["dataset"], map(_confidences, left["n_confidences"], left["top_share"]))
        text += f" DiSCA leaves out {where}, where its answers have too few distinct confidences to rank ({RANK_RULE})."
    worse = _abstains_worse(model, board, means)
    if worse is None:
        return "good", "selective", text, "", ""
    text = f"It abstains worse than {worse[0]}: {worse[1]}. " + text
    return "warn", "selective", text, "abstains worse", f"abstains worse: {worse[1]}"


def _abstains_worse(model, board, means):
    """``(best other model, why)`` when the mean DiSCA interval of ``model`` lies wholly below the best other's."""
    if "disca_low" not in board or len(means) < 2:
        return None
    iv = board.set_index("model")[["disca", "disca_low", "disca_high"]]
    others = means.drop(model)
    best = others.idxmax()
    mine, theirs = iv.loc[model], iv.loc[best]
    if is_blank(mine["disca_high"]) or is_blank(theirs["disca_low"]) or not mine["disca_high"] < theirs["disca_low"]:
        return None
    own = format_interval(mine["disca_low"], mine["disca_high"], 3, minus="-")
    other = format_interval(theirs["disca_low"], theirs["disca_high"], 3, minus="-")
    return str(best), f"mean DiSCA {number_text(mine['disca'])}, interval {own}, wholly below {best}'s {other}"


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
    notes = undefined_notes(diag)
    sel = selective[selective["model"] == model] if len(selective) else selective
    left = sel[~_rankable(sel)] if len(sel) else sel
    if not notes and not len(left):
        return None
    short, details = [], []
    if notes:
        n = sum(len(d) for d in notes.values())
        constant = all(note.startswith("constant scores") for note in notes)
        short.append(
            f"{'constant scores' if constant else 'cohort diagnostics undefined'} on {n} of {len(diag)} datasets"
        )
        details.append(
            "; ".join(f"{note} on {and_list(d)}" for note, d in notes.items())
            + ", so its cohort diagnostics are undefined there (NaN)"
        )
    if len(left):
        short.append(f"too few distinct confidences to rank on {len(left)} of {len(sel)} datasets")
        why = [
            ("a single class" if str(d) in single else _confidences(n, t))
            for d, n, t in zip(left["dataset"], left["n_confidences"], left["top_share"])
        ]
        details.append(
            f"DiSCA cannot rank its answers on {grouped_names(left['dataset'], why)} and leaves them out of "
            f"its ranking ({RANK_RULE})"
        )
    own = any(str(d) not in single for d in left["dataset"]) if len(left) else False
    own = own or any("single class" not in part for note in notes for part in note.split("; "))
    text = " and ".join(short)
    sentence = f"{text[0].upper()}{text[1:]}: {'; '.join(details)}."
    if not own:  # the data's doing (a single class): a note, no rule of the model's
        return "info", "analysis", sentence, "", ""
    return "warn", "analysis", sentence, "undefined analysis", f"undefined analysis: {text}"


def _given(model, table, p):
    """``(status, topic, sentence, rule, reason)`` when the ECE of the confidence as given passes the tolerance on some
    dataset (the out-of-distribution one aside), for confidences read as given (``selective_protocol="none"``): a warning when its interval lies wholly above it, a note
    (inconclusive, or unchecked without a bootstrap) otherwise; None when it passes nowhere."""
    if table is None or not len(table) or p.get("selective_protocol") != "none":
        return None  # the rule judges confidences the evaluation reads as given (answers, by default)
    mine = table[(table["model"] == model) & (table["dataset"] != p.get("ood_dataset"))]
    over = mine[mine["ece_uniform"] > GIVEN_ECE_TOLERANCE].sort_values("ece_uniform_low", ascending=False)
    if not len(over):
        return None
    worst = over.iloc[0]
    rule = "miscalibrated confidence"
    flagged = over[over["ece_uniform_low"] > GIVEN_ECE_TOLERANCE]
    interval = format_interval(worst["ece_uniform_low"], worst["ece_uniform_high"], 3, minus="-")
    more = f" (and {len(over) - 1} more dataset(s))" if len(over) > 1 else ""
    past = f"ECE {number_text(worst['ece_uniform'])} > {GIVEN_ECE_TOLERANCE:g} on {worst['dataset']}"
    if len(flagged):
        return (
            "warn",
            "calibration",
            f"Its confidence as given is miscalibrated: {past}, interval {interval}{more}.",
            rule,
            f"{rule}: {past}, interval {interval}{more}",
        )
    judged = "unchecked" if not p.get("n_bootstrap") else "inconclusive"
    why = "no interval (no bootstrap)" if judged == "unchecked" else f"its interval {interval} reaches it"
    return (
        "info",
        "calibration",
        f"Its confidence as given may be miscalibrated: {past}{more}; {why}.",
        rule,
        f"{rule} {judged}: {past}, {why}",
    )


def _by_model(frame):
    """``model -> frame[frame["model"] == model]``, split once (the rows of each model in their order)."""
    groups = dict(iter(frame.groupby("model", sort=False)))
    return lambda model: groups[model] if model in groups else frame[frame["model"] == model]


def findings_table(
    tables: Mapping[str, pd.DataFrame], parameters: Mapping[str, Any], models: Sequence[str]
) -> pd.DataFrame:
    """The ``findings`` table of an evaluation: model, order, topic, status, sentence, rule, reason.

    ``rule`` names the rule that set a warning, a problem or a note (see :data:`RULES`; empty when no
    rule reached its threshold) and ``reason`` states its number, threshold and interval.
    """
    rows = []
    n = len(models)
    single = _single_class(tables["datasets"]) if "datasets" in tables else set()
    grid, diagnostics = _by_model(tables["grid"]), _by_model(tables["diagnostics"])
    selective = _by_model(tables["selective"]) if len(tables["selective"]) else None
    for model in models:
        diag, sel = diagnostics(model), tables["selective"] if selective is None else selective(model)
        analysis = _analysis(model, diag, sel, single)
        items = [analysis] if analysis else []
        items += [
            _ranking(model, parameters, tables["leaderboard"], n),
            _threshold(model, parameters, grid(model)),
            drift_finding(model, diag, 1 - parameters.get("confidence_level", 0.95)),
            with_guarantee(
                _selective(model, parameters, tables["selective"], tables["leaderboard"]),  # whole
                guarantee_judged(model, tables.get("risk_control"), parameters),
            ),
        ]
        given = _given(model, tables.get("given_calibration"), parameters)
        items += [given] if given else []
        for i, (status, topic, sentence, rule, reason) in enumerate(items):
            rows.append(
                {
                    "model": model,
                    "order": i,
                    "topic": topic,
                    "status": status,
                    "sentence": sentence,
                    "rule": rule,
                    "reason": reason,
                }
            )
    return pd.DataFrame(rows, columns=["model", "order", "topic", "status", "sentence", "rule", "reason"])


def _overall(findings):
    """A model's status: its worst warning or problem; else a note when a rule went unchecked (no
    bootstrap: nothing has evidence); else good: no rule reaches its threshold with evidence (a rule
    whose interval straddles its threshold is a note in its finding and named in the verdict's reason)."""
    statuses = set(findings["status"])
    if "bad" in statuses or "warn" in statuses:
        return "bad" if "bad" in statuses else "warn"
    unchecked = findings["reason"].astype(str).str.contains("unchecked:", regex=False)
    return "info" if unchecked.any() else "good"


def _verdict_parts(r, by, text):
    """The short clauses of a model's one-line verdict (its reason is given apart)."""
    parts = []
    if not pd.isna(r["auc_rank"]) and not pd.isna(r["accuracy_rank"]):
        rank = f"{ordinal(r['auc_rank'])} by AUC, {ordinal(r['accuracy_rank'])} by accuracy"
        if r["rank_change"] and "significant" in r and not pd.isna(r["significant"]):
            rank += " (change significant)" if r["significant"] else " (change not significant)"
        parts.append(rank)
    if "analysis" in text:  # why part of it is undefined: the sentence's opening clause
        why = text["analysis"].split(":", 1)[0]
        parts.append(why[0].lower() + why[1:])
    if by.get("threshold") in ("warn", "bad"):
        parts.append(
            text["threshold"]
            .split(":")[0]
            .replace("A threshold learnt on other data", "threshold")
            .replace(" datasets", "")
        )
    elif by.get("threshold") == "info":
        parts.append("threshold transfer inconclusive")
    if by.get("drift") in ("warn", "bad", "info") and by.get("drift_rule"):
        rules = by["drift_rule"].replace("Wasserstein", "W below 1")
        parts.append(rules if by["drift"] != "info" else f"{rules} inconclusive")
    if by.get("selective") == "warn":
        parts.append(
            "not ranked by DiSCA"
            if "not ranked" in text["selective"]
            else text["selective"]
            .split(":", 1)[0]
            .replace("It abstains", "abstains")
            .replace("A guarantee fails", "guarantee fails")
        )
    elif "disca" in r and not pd.isna(r["disca"]):
        parts.append(f"DiSCA {number_text(r['disca'])}")
    if by.get("calibration") == "warn":
        parts.append("confidence as given miscalibrated")
    return parts


def verdicts_table(findings: pd.DataFrame, leaderboard: pd.DataFrame) -> pd.DataFrame:
    """One line per model for the index, from its findings: model, status, verdict, reason.

    ``status`` is the worst finding's (good only when no rule reached its threshold); ``reason`` names the
    rule and the number that set it, as the findings state them.
    """
    rows = []
    board = leaderboard.set_index("model")
    if "rule" not in findings:
        findings = findings.assign(rule="", reason="")
    for model, f in findings.groupby("model", sort=False):
        by = dict(zip(f["topic"], f["status"]))
        by["drift_rule"] = dict(zip(f["topic"], f["rule"])).get("drift", "")
        text = dict(zip(f["topic"], f["sentence"]))
        status = _overall(f)
        doubts = [str(x) for x in f.loc[f["rule"].astype(str) != "", "reason"]]
        if status == "good":
            reason = "no rule fires with evidence from its interval"
            if doubts:
                reason += "; " + "; ".join(doubts[:2]) + (f"; and {len(doubts) - 2} more" if len(doubts) > 2 else "")
        else:
            ruled = f[f["rule"].astype(str) != ""]
            if status != "info":  # the problems first, then the warnings; notes are left to the report
                ruled = ruled[ruled["status"].isin(["bad", "warn"])].sort_values(
                    "status", key=lambda c: c.map({"bad": 0, "warn": 1}), kind="stable"
                )
            reasons = [str(x) for x in ruled["reason"]]
            reason = "; ".join(reasons[:2]) + (f"; and {len(reasons) - 2} more" if len(reasons) > 2 else "")
        parts = _verdict_parts(board.loc[model], by, text)
        rows.append({"model": model, "status": status, "verdict": "; ".join(parts) + ".", "reason": reason})
    return pd.DataFrame(rows, columns=["model", "status", "verdict", "reason"])
