"""The drift topic's finding: cohort drift, the Wasserstein summary and a fragile AUC, judged on each dataset.

Drift and W need their permutation null rejected (p-value below 1 - confidence
level) as well as their interval past the threshold; where their bootstrap
interval cannot contain the estimate (NaN), the estimate past the threshold
and the null decide, and the finding says so.  The bias robustness of the
test cohort ("fragile AUC") is judged on its interval alone.
"""

from __future__ import annotations

from ..utils.formatting import format_interval
from .finding_text import (
    GE,
    LT,
    SEVERITY,
    THRESHOLDS,
    and_list,
    is_blank,
    judge,
    name_list,
    number_text,
    reason_text,
    undefined_notes,
    value_interval,
)

__all__ = ["DRIFT_RULES", "drift_finding", "drift_judged", "drift_reason", "merge_items", "null_judged", "p_perm"]

#: The drift topic's rules: (rule, column, threshold, below, label in the sentence, digits).
DRIFT_RULES = (
    ("cohort drift", "drift", THRESHOLDS["drift"], False, "drift", 3),
    ("Wasserstein", "wasserstein", THRESHOLDS["wasserstein"], True, "W", 2),
    ("fragile AUC", "bias_robustness_test", THRESHOLDS["bias_robustness"], True, "bias robustness", 2),
)


def null_judged(judged, r, col, alpha):
    """A drift rule's judgement with its permutation p-value: (judged, why) -- why is '' (the interval
    decides), 'null' (the null explains the number) or 'estimate' (the null and the estimate decide: the
    bootstrap ran, but no interval can contain the estimate)."""
    pvalue = r.get(f"{col}_pvalue")
    if judged == "clear" or is_blank(pvalue) or f"{col}_low" not in r:
        return judged, ""  # without a null, or without a bootstrap, the interval alone decides
    if pvalue >= alpha:
        return "inconclusive", "null"
    return ("flag", "estimate") if judged == "unchecked" else (judged, "")


def p_perm(r, col):
    """'permutation p = 0.004' ('' without a null)."""
    pvalue = r.get(f"{col}_pvalue")
    return "" if is_blank(pvalue) else f"permutation p = {number_text(pvalue, 2 if pvalue >= 0.01 else 3)}"


def drift_reason(spec, judged, why, r, alpha):
    """The reason of a drift rule (``spec``, a row of :data:`DRIFT_RULES`) past its threshold on the diagnostics row
    ``r``, with its permutation p-value when there is one."""
    rule, col, threshold, below, label, digits = spec
    where, past = str(r["dataset"]), f"{label} {number_text(r[col], digits)}"
    iv = format_interval(r.get(f"{col}_low"), r.get(f"{col}_high"), digits, minus="-")
    sign, perm = LT if below else GE, p_perm(r, col)
    if why == "null":
        return (
            f"{rule} inconclusive: {past} {sign} {threshold:g} on {where}, but {perm} \u2265 {alpha:g}: "
            "sampling alone can explain it"
        )
    if why == "estimate":
        return f"{rule}: {past} {sign} {threshold:g} on {where}, {perm} (no interval can contain the estimate)"
    return reason_text(rule, judged, past, where, threshold, below=below, interval=iv) + (f", {perm}" if perm else "")


def drift_judged(mine, alpha=0.05):
    """[(judged, rule, dataset, value, reason, description)] of every drift rule past its threshold.

    Drift and W need their permutation null rejected (p < ``alpha``) as well as their interval past the
    threshold; where their interval is NaN (no interval can contain the estimate) the estimate and the
    null decide.  Without a null (no ``<name>_pvalue``) the interval alone decides.
    """
    out, records = [], mine.to_dict("records")  # once: the rows are the same for every rule
    for spec in DRIFT_RULES:
        rule, col, threshold, below, label, digits = spec
        if col not in mine:
            continue
        for r in records:
            judged, why = null_judged(
                judge(r[col], r.get(f"{col}_low"), r.get(f"{col}_high"), threshold, below=below), r, col, alpha
            )
            if judged != "clear":
                reason = drift_reason(spec, judged, why, r, alpha)
                value = number_text(r[col], digits) if why == "estimate" else value_interval(r, col, digits)
                desc = f"{label} {value} {LT if below else GE} {threshold:g}"
                desc += f"; {p_perm(r, col)}" if p_perm(r, col) else ""
                desc += " (no interval can contain it)" if why == "estimate" else ""
                out.append((judged, rule, str(r["dataset"]), r[col] if not below else -r[col], reason, desc, why))
    return sorted(out, key=lambda t: (-SEVERITY[t[0]], -t[3]))


def drift_finding(model, diagnostics, alpha=0.05):
    """The drift topic's finding on ``model``: ``(status, "drift", sentence, rule, reason)``.

    Every drift rule (:data:`DRIFT_RULES`) judged on each dataset of the ``diagnostics`` table, with
    its permutation null at level ``alpha``: a warning where drift or W flags, a problem where a
    fragile AUC flags as well, a note where a number is past its threshold without the evidence.
    """
    mine = diagnostics[diagnostics["model"] == model]
    if not len(mine):
        return "info", "drift", "No cohort diagnostics were computed.", "", ""
    cohorts = ", ".join(sorted(set(map(str, mine["cohorts"]))))
    undefined = mine[mine["drift"].isna()]
    why = undefined_notes(undefined)
    if len(undefined) == len(mine):  # nothing to judge: say why instead
        reasons = "; ".join(why) or "a cohort with a single class"
        text = f"Its cohort drift is undefined on every dataset ({reasons}; cohorts: {cohorts})."
        return "info", "drift", text, "", ""
    judged = drift_judged(mine, alpha)
    flags = [j for j in judged if j[0] == "flag"]
    doubts = [j for j in judged if j[0] != "flag"]
    drifted = [j for j in flags if j[1] != "fragile AUC"]
    fragile = [j for j in flags if j[1] == "fragile AUC"]
    parts = _flag_clauses(mine, cohorts, drifted, fragile, doubts)
    if doubts:
        parts.append(_doubt_clause(doubts))
    if len(undefined):
        parts.append(
            "its drift is undefined on " + "; ".join(f"{and_list(d, 2)} ({note})" for note, d in why.items())
            if why
            else f"its drift is undefined on {and_list(map(str, undefined['dataset']), 2)}"
        )
    status = "bad" if drifted and fragile else "warn" if flags else "info" if doubts else "good"
    text = "; ".join(parts)
    top = flags or doubts
    rule = ", ".join(dict.fromkeys(j[1] for j in top)) if top else ""
    reason = top[0][4] + (f" (and {len(top) - 1} more)" if len(top) > 1 else "") if top else ""
    return status, "drift", text[0].upper() + text[1:] + ".", rule, reason


def _flag_clauses(mine, cohorts, drifted, fragile, doubts):
    """The finding's opening clauses: the datasets that drift, those with a fragile AUC, or that none drifts."""
    parts = []
    if drifted:
        items = merge_items(drifted)
        parts.append(
            f"validation and test cohorts ({cohorts}) drift apart on {len(items)} of {len(mine)} datasets: "
            f"{name_list(items, 2)}"
        )
    if fragile:
        parts.append(
            f"{'its' if drifted else 'Its'} AUC is fragile to a small shift of the positives on "
            f"{name_list(merge_items(fragile), 2)}"
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
            f"no dataset shows cohort drift{with_evidence} (largest {number_text(mine['drift'].max(), 3)} on "
            f"{mine.loc[mine['drift'].idxmax(), 'dataset']}; cohorts: {cohorts})"
        )
    return parts


def _doubt_clause(doubts):
    """'inconclusive on a (...): past the threshold, but sampling alone can explain it (permutation null)'."""
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
    return f"{word} on {name_list(merge_items(doubts), 2)}: past the threshold, but {but}"


def merge_items(judged):
    """'iris (drift 0.081 (0.032–0.221) ≥ 0.05, W 0.77 (0.51–0.93) < 1)': one item per dataset."""
    by = {}
    for j in judged:
        by.setdefault(j[2], []).append(j[5])
    return [f"{d} ({', '.join(descs)})" for d, descs in by.items()]
