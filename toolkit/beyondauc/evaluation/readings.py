"""How a difference between two models reads: its words, its p-value and its interval as the report prints them.

Shared by the ``comparison`` table's views (:mod:`beyondauc.evaluation.comparison`) and the tables for papers
(:mod:`beyondauc.evaluation.paper`); it reads no evaluation, so either may import it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..utils.formatting import MISSING, format_number

__all__ = [
    "BETTER",
    "MEAN_ROW",
    "NOT_TESTED",
    "NO_DIFFERENCE",
    "VALUE_NAMES",
    "WORSE",
    "difference_text",
    "p_text",
    "reading",
]

#: How each compared value is named, and whether higher is better.
VALUE_NAMES = {
    "auc": ("AUC", True),
    "accuracy": ("deployed accuracy", True),
    "kappa": ("kappa", True),
    "disca": ("DiSCA", True),
    "drift": ("drift", False),
    "brier": ("Brier score", False),
    "nll": ("NLL", False),
    "ece_uniform": ("ECE", False),
    "smooth_ece": ("smooth ECE", False),
    "prr": ("PRR", True),
}
#: The readings of a difference.
BETTER, WORSE, NO_DIFFERENCE, NOT_TESTED = "better", "worse", "no detectable difference", "not tested"
MEAN_ROW = "mean over datasets"


def reading(difference: float, pvalue: float, *, higher_is_better: bool = True, alpha: float = 0.05) -> str:
    """The word for a difference model - reference: better, worse, no detectable difference, or not tested.

    Better or worse only when ``pvalue < alpha`` (two-sided); the direction
    follows ``higher_is_better`` (drift: lower is better).

    Examples
    --------
    >>> from beyondauc.evaluation.readings import reading
    >>> reading(0.03, 0.01), reading(0.03, 0.01, higher_is_better=False), reading(-0.1, 0.2)
    ('better', 'worse', 'no detectable difference')
    >>> reading(0.1, float("nan"))
    'not tested'
    """
    if pvalue is None or not np.isfinite(pvalue) or not np.isfinite(difference):
        return NOT_TESTED
    if pvalue >= alpha:
        return NO_DIFFERENCE
    return BETTER if (difference > 0) == higher_is_better else WORSE


def p_text(p: float) -> str:
    """A p-value as the report prints it: three decimals from 0.1 up, else three significant digits (0.0498 never
    reads 0.050 beside "better"), ``< 0.001`` below that, an en dash when missing.

    Examples
    --------
    >>> from beyondauc.evaluation.readings import p_text
    >>> p_text(0.597), p_text(0.0498), p_text(0.0004)
    ('0.597', '0.0498', '< 0.001')
    """
    if p is None or not np.isfinite(p):
        return MISSING
    return "< 0.001" if p < 0.001 else f"{p:.3f}" if p >= 0.1 else f"{p:.3g}"


def difference_text(row: Mapping) -> str:
    """A ``comparison`` row's difference and its interval as the report prints them.

    Examples
    --------
    >>> from beyondauc.evaluation.readings import difference_text
    >>> difference_text({"difference": 0.0677, "low": 0.0358, "high": 0.0995})
    '+0.068 (+0.036 to +0.100)'
    >>> difference_text({"difference": -0.01, "low": float("nan"), "high": float("nan")})
    '−0.010'
    """
    text = format_number(row["difference"], signed=True)
    if np.isfinite(row["low"]) and np.isfinite(row["high"]):
        text += f" ({format_number(row['low'], signed=True)} to {format_number(row['high'], signed=True)})"
    return text
