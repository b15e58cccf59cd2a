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

import numpy as np
import pandas as pd

from ..metrics.selective.benchmark import MAX_TIE_SHARE, MIN_CONFIDENCES
from ..metrics.selective.given_calibration import GIVEN_ECE_TOLERANCE
from ..utils.formatting import format_interval, format_number
from .abstention import HEADLINE_RISK, headline_risk, rows_at_risk

__all__ = ["THRESHOLDS", "RULES", "findings_table", "verdicts_table"]

#: The thresholds behind the findings (printed in every report).
THRESHOLDS = {
    "transfer_loss": 0.05,  # accuracy lost against a threshold learnt on the dataset itself (indata)
    "kappa_floor": 0.2,  # kappa below this with an AUC of at least auc_promise: decisions near chance
    "auc_promise": 0.8,
    "drift": 0.05,  # sensitivity/specificity drift between cohorts
    "wasserstein": 1.0,  # W below this: the cohorts shift as much as the classes differ
    "bias_robustness": 0.1,  # bias robustness of the test cohort below this: a small shift mixes the classes
}

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


def _missing(x):
    return x is None or (not isinstance(x, str) and pd.isna(x))


def _judge(value, low, high, threshold, *, below=False):
    """How a rule's number stands against its threshold.

    'clear' (not past it), 'flag' (the whole interval is past it), 'inconclusive' (the number is
    past it, its interval reaches back across) or 'unchecked' (past it, but no interval).
    """
    if _missing(value) or not (value < threshold if below else value >= threshold):
        return "clear"
    if _missing(low) or _missing(high):
        return "unchecked"
    return "flag" if (high < threshold if below else low >= threshold) else "inconclusive"


_LT, _GE = "<", "\u2265"
_SEVERITY = {"flag": 3, "inconclusive": 2, "unchecked": 1, "clear": 0}


def _reason(rule, judged, what, where, threshold, *, below=False, interval="", context=""):
    """The reason a rule gives: 'cohort drift: 0.081 ≥ 0.05 on wine, interval 0.032–0.221'."""
    past = f"{what} {_LT if below else _GE} {threshold:g}{context} on {where}"
    if judged == "flag":
        return f"{rule}: {past}" + (f", interval {interval}" if interval else "")
    if judged == "inconclusive":
        return f"{rule} inconclusive: {past}, but its interval {interval} straddles {threshold:g}"
    return f"{rule} unchecked: {past}, no interval (no bootstrap)"


def _p_text(p_value, n_bootstrap):
    """'p = 0.16', or 'p < 0.005' when no replicate goes against the change."""
    if p_value == 0 and n_bootstrap:
        return f"p < {1 / n_bootstrap:.2g}"
    return f"p = {_num(p_value, 2 if p_value >= 0.01 else 3)}"


def _ranking(model, p, board, n_models):
    row = board[board["model"] == model].iloc[0].to_dict()
    auc_rank, rank, change = row.get("auc_rank"), row.get("accuracy_rank"), row.get("rank_change")
    setting = f"{p['protocol']}, {p['method']}"
    if pd.isna(auc_rank) or pd.isna(rank):
        return "info", "ranking", f"No rank could be given (undefined AUC or accuracy), ({setting}).", "", ""
    text = (
        f"{_ordinal(auc_rank)} of {n_models} by mean AUC, {_ci(row, 'auc')}, and {_ordinal(rank)} by expected "
        f"accuracy once its threshold is learnt on other data ({setting}), {_ci(row, 'accuracy')}; "
        f"kappa {_ci(row, 'kappa')}."
    )
    share = row.get("sign_share", row.get("p_change", np.nan))
    p_value, alpha = row.get("p_value", np.nan), 1 - p.get("confidence_level", 0.95)
    if _missing(change) or not change:
        stable = f" (the same in {share:.0%} of bootstrap replicates)" if not _missing(share) else ""
        return "good", "ranking", text + f" Its rank does not change{stable}.", "", ""
    places = f"{abs(int(change))} place{'s' if abs(change) != 1 else ''}"
    move = f"{'climbs' if change > 0 else 'drops'} {places}"
    if _missing(share) or _missing(p_value):
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
    if not _missing(indata):
        loss = indata - row["accuracy"]
        ends = [row.get(f"accuracy_{end}") for end in ("high", "low")]
        low, high = (np.nan if _missing(x) else indata - x for x in ends)
        judged = _judge(loss, low, high, THRESHOLDS["transfer_loss"])
        if judged != "clear":
            iv = format_interval(low, high, 2, minus="-")
            out.append(
                (
                    judged,
                    "threshold transfer",
                    _reason(
                        "threshold transfer",
                        judged,
                        f"accuracy lost {_num(loss, 2)}",
                        name,
                        THRESHOLDS["transfer_loss"],
                        interval=iv,
                    ),
                    f"{loss:.2f} below a threshold learnt on the dataset itself ({iv or 'no interval'})",
                )
            )
    if not _missing(row["auc"]) and row["auc"] >= THRESHOLDS["auc_promise"]:
        judged = _judge(
            row["kappa"], row.get("kappa_low"), row.get("kappa_high"), THRESHOLDS["kappa_floor"], below=True
        )
        if judged == "flag" and not row.get("auc_low", 0) >= THRESHOLDS["auc_promise"]:
            judged = "inconclusive"  # the AUC's interval reaches below its promise
        if judged != "clear":
            iv = format_interval(row.get("kappa_low"), row.get("kappa_high"), 2, minus="-")
            out.append(
                (
                    judged,
                    "decisions near chance",
                    _reason(
                        "decisions near chance",
                        judged,
                        f"kappa {_num(row['kappa'], 2)}",
                        name,
                        THRESHOLDS["kappa_floor"],
                        below=True,
                        interval=iv,
                        context=f" at AUC {_num(row['auc'])}",
                    ),
                    f"kappa {_ci(row, 'kappa', 2)}",
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
            found.sort(key=lambda t: -_SEVERITY[t[0]])
            worst = found[0][0]
            loss = indata.get(row["dataset"], np.nan) - row["accuracy"] if p["protocol"] != "indata" else 1.0
            what = [f"accuracy {_ci(row, 'accuracy')} at AUC {_num(row['auc'])}"]
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
        text = f"{where} fails on {len(failed)} of {len(head)} datasets: {_names([f[2] for f in failed], 2)}."
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
        text += (
            f" {'Unchecked' if doubt[0][0] == 'unchecked' else 'Inconclusive'} on {_names([f[2] for f in doubt], 2)}."
        )
    return status, "threshold", text, rule, reason


#: The drift topic's rules: (rule, column, threshold, below, label in the sentence, digits).
_DRIFT_RULES = (
    ("cohort drift", "drift", THRESHOLDS["drift"], False, "drift", 3),
    ("Wasserstein", "wasserstein", THRESHOLDS["wasserstein"], True, "W", 2),
    ("fragile AUC", "bias_robustness_test", THRESHOLDS["bias_robustness"], True, "bias robustness", 2),
)


def _null_judged(judged, r, col, alpha):
    """A drift rule's judgement with its permutation p-value: (judged, why) -- why is '' (the interval
    decides), 'null' (the null explains the number) or 'estimate' (the null and the estimate decide: the
    bootstrap ran, but no interval can contain the estimate)."""
    pvalue = r.get(f"{col}_pvalue")
    if judged == "clear" or _missing(pvalue) or f"{col}_low" not in r:
        return judged, ""  # without a null, or without a bootstrap, the interval alone decides
    if pvalue >= alpha:
        return "inconclusive", "null"
    return ("flag", "estimate") if judged == "unchecked" else (judged, "")


def _p_perm(r, col):
    """'permutation p = 0.004' ('' without a null)."""
    pvalue = r.get(f"{col}_pvalue")
    return "" if _missing(pvalue) else f"permutation p = {_num(pvalue, 2 if pvalue >= 0.01 else 3)}"


def _drift_reason(rule, judged, why, r, col, threshold, below, label, digits, alpha):
    """The reason of a drift rule past its threshold, with its permutation p-value when there is one."""
    where, past = str(r["dataset"]), f"{label} {_num(r[col], digits)}"
    iv = format_interval(r.get(f"{col}_low"), r.get(f"{col}_high"), digits, minus="-")
    sign, perm = _LT if below else _GE, _p_perm(r, col)
    if why == "null":
        return (
            f"{rule} inconclusive: {past} {sign} {threshold:g} on {where}, but {perm} \u2265 {alpha:g}: "
            "sampling alone can explain it"
        )
    if why == "estimate":
        return f"{rule}: {past} {sign} {threshold:g} on {where}, {perm} (no interval can contain the estimate)"
    return _reason(rule, judged, past, where, threshold, below=below, interval=iv) + (f", {perm}" if perm else "")


def drift_judged(mine, alpha=0.05):
    """[(judged, rule, dataset, value, reason, description)] of every drift rule past its threshold.

    Drift and W need their permutation null rejected (p < ``alpha``) as well as their interval past the
    threshold; where their interval is NaN (no interval can contain the estimate) the estimate and the
    null decide.  Without a null (no ``<name>_pvalue``) the interval alone decides.
    """
    out, records = [], mine.to_dict("records")  # once: the rows are the same for every rule
    for rule, col, threshold, below, label, digits in _DRIFT_RULES:
        if col not in mine:
            continue
        for r in records:
            judged, why = _null_judged(
                _judge(r[col], r.get(f"{col}_low"), r.get(f"{col}_high"), threshold, below=below), r, col, alpha
            )
            if judged != "clear":
                reason = _drift_reason(rule, judged, why, r, col, threshold, below, label, digits, alpha)
                value = _num(r[col], digits) if why == "estimate" else _ci(r, col, digits)
                desc = f"{label} {value} {_LT if below else _GE} {threshold:g}"
                desc += f"; {_p_perm(r, col)}" if _p_perm(r, col) else ""
                desc += " (no interval can contain it)" if why == "estimate" else ""
                out.append((judged, rule, str(r["dataset"]), r[col] if not below else -r[col], reason, desc, why))
    return sorted(out, key=lambda t: (-_SEVERITY[t[0]], -t[3]))


def _drift(model, diagnostics, alpha=0.05):
    mine = diagnostics[diagnostics["model"] == model]
    if not len(mine):
        return "info", "drift", "No cohort diagnostics were computed.", "", ""
    cohorts = ", ".join(sorted(set(map(str, mine["cohorts"]))))
    undefined = mine[mine["drift"].isna()]
    why = _notes(undefined)
    if len(undefined) == len(mine):  # nothing to judge: say why instead
        reasons = "; ".join(why) or "a cohort with a single class"
        return (
            "info",
            "drift",
            (f"Its cohort drift is undefined on every dataset ({reasons}; cohorts: {cohorts})."),
            "",
            "",
        )
    judged = drift_judged(mine, alpha)
    flags = [j for j in judged if j[0] == "flag"]
    doubts = [j for j in judged if j[0] != "flag"]
    drifted = [j for j in flags if j[1] != "fragile AUC"]
    fragile = [j for j in flags if j[1] == "fragile AUC"]
    parts = []
    if drifted:
        items = _merge_items(drifted)
        parts.append(
            f"validation and test cohorts ({cohorts}) drift apart on {len(items)} of {len(mine)} datasets: "
            f"{_names(items, 2)}"
        )
    if fragile:
        parts.append(
            f"{'its' if drifted else 'Its'} AUC is fragile to a small shift of the positives on "
            f"{_names(_merge_items(fragile), 2)}"
        )
    if not drifted:
        with_evidence = (
            ""
            if not any(j[1] != "fragile AUC" for j in doubts)
            else " with evidence from its interval and permutation null"
            if "drift_pvalue" in mine
            else " with evidence from its interval"
        )
        parts.append(
            f"no dataset shows cohort drift{with_evidence} (largest {_num(mine['drift'].max(), 3)} on "
            f"{mine.loc[mine['drift'].idxmax(), 'dataset']}; cohorts: {cohorts})"
        )
    if doubts:
        word = "unchecked" if all(j[0] == "unchecked" for j in doubts) else "inconclusive"
        but = (
            "without an interval"
            if word == "unchecked"
            else " or ".join(
                dict.fromkeys(
                    "sampling alone can explain it (permutation null)"
                    if j[6] == "null"
                    else "its interval reaches back across it"
                    for j in doubts
                    if j[0] == "inconclusive"
                )
            )
        )
        parts.append(f"{word} on {_names(_merge_items(doubts), 2)}: past the threshold, but {but}")
    if len(undefined):
        parts.append(
            "its drift is undefined on " + "; ".join(f"{_and(d, 2)} ({note})" for note, d in why.items())
            if why
            else f"its drift is undefined on {_and(map(str, undefined['dataset']), 2)}"
        )
    status = "bad" if drifted and fragile else "warn" if flags else "info" if doubts else "good"
    text = "; ".join(parts)
    top = flags or doubts
    rule = ", ".join(dict.fromkeys(j[1] for j in top)) if top else ""
    reason = top[0][4] + (f" (and {len(top) - 1} more)" if len(top) > 1 else "") if top else ""
    return status, "drift", text[0].upper() + text[1:] + ".", rule, reason


def _merge_items(judged):
    """'iris (drift 0.081 (0.032–0.221) ≥ 0.05, W 0.77 (0.51–0.93) < 1)': one item per dataset."""
    by = {}
    for j in judged:
        by.setdefault(j[2], []).append(j[5])
    return [f"{d} ({', '.join(descs)})" for d, descs in by.items()]


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
                f"to rank ({RANK_RULE}); the DiSCA they get ({_num(mine['disca'].min(), 2)} to "
                f"{_num(mine['disca'].max(), 2)}) says nothing about when to abstain."
            ),
            "unrankable confidences",
            (f"unrankable confidences: too few distinct confidences on all {len(mine)} datasets ({RANK_RULE})"),
        )
    worst = ranked.loc[ranked["disca"].idxmin()]
    row = board[board["model"] == model].iloc[0].to_dict()
    text = (
        f"{setting}: mean DiSCA {_ci(row, 'disca')}, {_ordinal(rank[model])} of {n_ranked}; median first mistake "
        f"at confidence a = {_num(ranked['a'].median(), 2)}, accuracy below {p['tolerance']:g} from b = "
        f"{_num(ranked['b'].median(), 2)}; {int(ranked['n_fluctuations'].sum())} fluctuation(s) in all, the "
        f"lowest DiSCA on {worst['dataset']} ({_ci(worst.to_dict(), 'disca', 2)})."
    )
    if len(ranked) < len(mine):
        left = mine[~_rankable(mine)]
        where = _grouped(left["dataset"], map(_confidences, left["n_confidences"], left["top_share"]))
        text += f" DiSCA leaves out {where}, where its answers have too few distinct confidences to rank ({RANK_RULE})."
    worse = _abstains_worse(model, board, means)
    if worse is None:
        return "good", "selective", text, "", ""
    text = f"It abstains worse than {worse[0]}: {worse[1]}. " + text
    return "warn", "selective", text, "abstains worse", f"abstains worse: {worse[1]}"


def _risk_interval(rows, level):
    """Clopper-Pearson interval (at ``level``) of each row's realised risk from its answered examples."""
    from scipy.stats import beta  # imported here: a report kernel reading an evaluation skips scipy.stats

    n = np.rint(rows["target_coverage"].to_numpy(float) * rows["n_target"].to_numpy(float))
    k = np.rint(rows["realised_risk"].to_numpy(float) * n)
    a = (1 - level) / 2
    low = np.where(k > 0, beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)
    high = np.where(k < n, beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)
    return low, high


def _guarantee(model, risk_control, p):
    """``(judged, details, reason)`` when a threshold certified on other data answers some dataset at a realised
    risk above the headline target: 'flag' when the realised risk's interval lies wholly above it, 'inconclusive'
    when it reaches back, 'unchecked' without a bootstrap (an evaluation without intervals warns of nothing)."""
    if risk_control is None or not len(risk_control):
        return None
    risk = headline_risk(p.get("target_risks", (HEADLINE_RISK,)))
    rc = rows_at_risk(risk_control, risk, model=model)
    rc = rc[rc["protocol"].isin(["xdomain", "outdomain"]) & rc["certified"].astype(bool)]
    failed = rc[rc["realised_risk"] > risk]
    if not len(failed):
        return None
    low, high = _risk_interval(failed, p.get("confidence_level", 0.95))
    failed = failed.assign(low=low, high=high).sort_values(["low", "realised_risk"], ascending=False)
    worst = failed.iloc[0]
    judged = "unchecked" if not p.get("n_bootstrap") else "flag" if worst["low"] > risk else "inconclusive"
    where = "the other datasets" if worst["protocol"] == "xdomain" else "the datasets of other domains"
    interval = format_interval(worst["low"], worst["high"], 2, minus="-")
    evidence = {
        "flag": f" (interval {interval}, wholly above the target)",
        "unchecked": "",
        "inconclusive": f" (interval {interval}, which reaches back to the target)",
    }[judged]
    others = failed[failed["dataset"] != worst["dataset"]].groupby("dataset", sort=False)["low"].max()
    more = _more_datasets(others, risk, judged)
    details = (
        f"certified at risk \u2264 {risk:.2f} on {where} ({worst['protocol']}), its threshold answered "
        f"{_num(100 * worst['target_coverage'], 0)}% of {worst['dataset']} at a realised risk of "
        f"{worst['realised_risk']:.2f}{evidence}{more}"
    )
    past = f"realised risk {_num(worst['realised_risk'], 2)} > {risk:g} on {worst['dataset']} ({worst['protocol']})"
    rule = "guarantee fails to transfer"
    also = f"; above {risk:g} also on {len(others)} more dataset{'s' * (len(others) > 1)}" if len(others) else ""
    reason = (
        f"{rule}: {past}, interval {interval} wholly above{also}"
        if judged == "flag"
        else f"{rule} inconclusive: {past}, but its interval {interval} reaches {risk:g}{also}"
        if judged == "inconclusive"
        else f"{rule} unchecked: {past}, no interval (no bootstrap){also}"
    )
    return judged, details, reason


def _more_datasets(others, risk, judged):
    """'; the realised risk is above 0.10 on 2 more datasets too (a, b), 1 of them with its interval wholly above':
    the other datasets whose guarantee failed (``others``: the lower end of each one's highest interval)."""
    if not len(others):
        return ""
    sure = int((others > risk).sum())
    if len(others) == 1:
        evidence = (
            ""
            if judged != "flag"
            else ", its interval wholly above as well"
            if sure
            else ", its interval reaching back to the target"
        )
        return f"; the realised risk is above {risk:.2f} on {others.index[0]} too{evidence}"
    names = ", ".join(map(str, others.index[:3])) + (", ..." if len(others) > 3 else "")
    evidence = f", {sure} of them with the interval wholly above" if judged == "flag" else ""
    return f"; the realised risk is above {risk:.2f} on {len(others)} more datasets too ({names}){evidence}"


def _with_guarantee(item, guarantee):
    """The selective finding with the guarantee rule joined: opening its sentence when it flags the model, a note
    (inconclusive or unchecked) otherwise."""
    if guarantee is None:
        return item
    status, topic, text, rule, reason = item
    judged, details, why = guarantee
    if judged != "flag":
        if rule:  # the finding's own rule stands; the guarantee's doubt is said after it
            return status, topic, f"{text} A guarantee may fail to transfer: {details}.", rule, f"{reason}; {why}"
        return (
            "info" if status == "good" else status,
            topic,
            f"{text} A guarantee may fail to transfer: {details}.",
            "guarantee fails to transfer",
            why,
        )
    if rule:  # both rules open the sentence; the guarantee's number follows the other's
        text = f"A guarantee fails to transfer, and {text[0].lower()}{text[1:]} The guarantee: {details}."
    else:
        text = f"A guarantee fails to transfer: {details}. {text}"
    rules = ", ".join(x for x in ("guarantee fails to transfer", rule) if x)
    return "bad" if status == "bad" else "warn", topic, text, rules, "; ".join(x for x in (why, reason) if x)


def _abstains_worse(model, board, means):
    """``(best other model, why)`` when the mean DiSCA interval of ``model`` lies wholly below the best other's."""
    if "disca_low" not in board or len(means) < 2:
        return None
    iv = board.set_index("model")[["disca", "disca_low", "disca_high"]]
    others = means.drop(model)
    best = others.idxmax()
    mine, theirs = iv.loc[model], iv.loc[best]
    if _missing(mine["disca_high"]) or _missing(theirs["disca_low"]) or not mine["disca_high"] < theirs["disca_low"]:
        return None
    own = format_interval(mine["disca_low"], mine["disca_high"], 3, minus="-")
    other = format_interval(theirs["disca_low"], theirs["disca_high"], 3, minus="-")
    return str(best), f"mean DiSCA {_num(mine['disca'])}, interval {own}, wholly below {best}'s {other}"


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
        short.append(
            f"{'constant scores' if constant else 'cohort diagnostics undefined'} on {n} of {len(diag)} datasets"
        )
        details.append(
            "; ".join(f"{note} on {_and(d)}" for note, d in notes.items())
            + ", so its cohort diagnostics are undefined there (NaN)"
        )
    if len(left):
        short.append(f"too few distinct confidences to rank on {len(left)} of {len(sel)} datasets")
        why = [
            ("a single class" if str(d) in single else _confidences(n, t))
            for d, n, t in zip(left["dataset"], left["n_confidences"], left["top_share"])
        ]
        details.append(
            f"DiSCA cannot rank its answers on {_grouped(left['dataset'], why)} and leaves them out of "
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
    past = f"ECE {_num(worst['ece_uniform'])} > {GIVEN_ECE_TOLERANCE:g} on {worst['dataset']}"
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
    tables: Mapping[str, pd.DataFrame], parameters: Mapping[str, object], models: Sequence[str]
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
            _drift(model, diag, 1 - parameters.get("confidence_level", 0.95)),
            _with_guarantee(
                _selective(model, parameters, tables["selective"], tables["leaderboard"]),  # whole
                _guarantee(model, tables.get("risk_control"), parameters),
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
        rank = f"{_ordinal(r['auc_rank'])} by AUC, {_ordinal(r['accuracy_rank'])} by accuracy"
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
        parts.append(f"DiSCA {_num(r['disca'])}")
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
