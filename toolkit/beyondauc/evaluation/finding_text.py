"""The words and numbers the findings share: how a rule's number is judged against its threshold and written.

The thresholds (:data:`THRESHOLDS`) and the helpers every topic's finding reads
(:mod:`beyondauc.evaluation.summary`, :mod:`~beyondauc.evaluation.drift_findings`,
:mod:`~beyondauc.evaluation.guarantee_findings`): numbers as the stored sentences write them,
lists of datasets, and :func:`judge`, the evidence rule of every finding.
"""

from __future__ import annotations

import pandas as pd

from ..utils.formatting import format_interval, format_number

__all__ = [
    "GE",
    "LT",
    "SEVERITY",
    "THRESHOLDS",
    "and_list",
    "grouped_names",
    "is_blank",
    "judge",
    "name_list",
    "number_text",
    "ordinal",
    "reason_text",
    "undefined_notes",
    "value_interval",
]

#: The thresholds behind the findings (printed in every report).
THRESHOLDS = {
    "transfer_loss": 0.05,  # accuracy lost against a threshold learnt on the dataset itself (indata)
    "kappa_floor": 0.2,  # kappa below this with an AUC of at least auc_promise: decisions near chance
    "auc_promise": 0.8,
    "drift": 0.05,  # sensitivity/specificity drift between cohorts
    "wasserstein": 1.0,  # W below this: the cohorts shift as much as the classes differ
    "bias_robustness": 0.1,  # bias robustness of the test cohort below this: a small shift mixes the classes
}

_ORDINAL = {1: "st", 2: "nd", 3: "rd"}


def ordinal(n):
    """'1st', '2nd', '11th', '23rd'."""
    n = int(n)
    return f"{n}{'th' if 10 <= n % 100 <= 20 else _ORDINAL.get(n % 10, 'th')}"


def number_text(x, digits=3):
    """A number of a finding: missing as '–', and the hyphen-minus the stored sentences have always had."""
    return format_number(x, digits, minus="-")


def value_interval(row, name, digits=3):
    """'0.858 (0.840–0.871)' or '0.858' without an interval."""
    interval = format_interval(row.get(f"{name}_low"), row.get(f"{name}_high"), digits, minus="-")
    value = number_text(row.get(name), digits)
    return f"{value} ({interval})" if interval else value


def name_list(items, limit=3):
    """'a, b, c'; past ``limit`` names, 'a, b, c and 2 more'."""
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def and_list(items, limit=6):
    """'a', 'a and b', 'a, b and c'; past ``limit`` names, 'a, b, ... and 2 more'."""
    items = list(items)
    if len(items) > limit:
        return f"{', '.join(items[:limit])} and {len(items) - limit} more"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def grouped_names(datasets, values):
    """'a and b (x); c (y)': datasets with the same value named together, in order of appearance."""
    groups = {}
    for d, v in zip(datasets, values):
        groups.setdefault(v, []).append(str(d))
    return "; ".join(f"{and_list(ds)} ({v})" for v, ds in groups.items())


def is_blank(x):
    """Whether ``x`` is missing (None, NaN, NA); a string never is."""
    return x is None or (not isinstance(x, str) and pd.isna(x))


def judge(value, low, high, threshold, *, below=False):
    """How a rule's number stands against its threshold.

    'clear' (not past it), 'flag' (the whole interval is past it), 'inconclusive' (the number is
    past it, its interval reaches back across) or 'unchecked' (past it, but no interval).
    """
    if is_blank(value) or not (value < threshold if below else value >= threshold):
        return "clear"
    if is_blank(low) or is_blank(high):
        return "unchecked"
    return "flag" if (high < threshold if below else low >= threshold) else "inconclusive"


LT, GE = "<", "\u2265"
SEVERITY = {"flag": 3, "inconclusive": 2, "unchecked": 1, "clear": 0}


def reason_text(rule, judged, what, where, threshold, *, below=False, interval="", context=""):
    """The reason a rule gives: 'cohort drift: 0.081 ≥ 0.05 on wine, interval 0.032–0.221'."""
    past = f"{what} {LT if below else GE} {threshold:g}{context} on {where}"
    if judged == "flag":
        return f"{rule}: {past}" + (f", interval {interval}" if interval else "")
    if judged == "inconclusive":
        return f"{rule} inconclusive: {past}, but its interval {interval} straddles {threshold:g}"
    return f"{rule} unchecked: {past}, no interval (no bootstrap)"


def undefined_notes(diagnostics):
    """``{reason: [datasets]}``: why a model's cohort diagnostics are undefined, from the rows' ``note``."""
    out = {}
    if "note" not in diagnostics:
        return out
    for dataset, note in zip(diagnostics["dataset"], diagnostics["note"]):
        if isinstance(note, str) and note:
            out.setdefault(note, []).append(str(dataset))
    return out
