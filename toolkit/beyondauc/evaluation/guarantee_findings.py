"""The guarantee rule of the selective finding: does a threshold certified on other data keep its promise?

At the headline target risk, a threshold certified under ``xdomain`` or
``outdomain`` that answers a dataset at a realised risk above the target fails
to transfer; the realised risk's Clopper-Pearson interval says whether with
evidence.  :func:`with_guarantee` joins the rule to the selective finding.
"""

from __future__ import annotations

import numpy as np

from ..utils.formatting import format_interval
from .abstention import HEADLINE_RISK, headline_risk, rows_at_risk
from .finding_text import number_text

__all__ = ["guarantee_judged", "more_datasets", "risk_interval", "with_guarantee"]


def risk_interval(rows, level):
    """Clopper-Pearson interval (at ``level``) of each row's realised risk from its answered examples."""
    from scipy.stats import beta  # imported here: a report kernel reading an evaluation skips scipy.stats

    n = np.rint(rows["target_coverage"].to_numpy(float) * rows["n_target"].to_numpy(float))
    k = np.rint(rows["realised_risk"].to_numpy(float) * n)
    a = (1 - level) / 2
    low = np.where(k > 0, beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)
    high = np.where(k < n, beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)
    return low, high


def guarantee_judged(model, risk_control, p):
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
    low, high = risk_interval(failed, p.get("confidence_level", 0.95))
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
    more = more_datasets(others, risk, judged)
    details = (
        f"certified at risk \u2264 {risk:.2f} on {where} ({worst['protocol']}), its threshold answered "
        f"{number_text(100 * worst['target_coverage'], 0)}% of {worst['dataset']} at a realised risk of "
        f"{worst['realised_risk']:.2f}{evidence}{more}"
    )
    past = (
        f"realised risk {number_text(worst['realised_risk'], 2)} > {risk:g} on {worst['dataset']} ({worst['protocol']})"
    )
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


def more_datasets(others, risk, judged):
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


def with_guarantee(item, guarantee):
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
