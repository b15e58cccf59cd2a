"""The evaluation's ``risk_control`` and ``risk_control_curves`` tables: abstention with a guarantee under the
calibration protocols."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

from ..metrics.selective.risk_control_benchmark import RISK_CONTROL_PROTOCOLS, RiskControlOptions, risk_control_tables

if TYPE_CHECKING:
    from .settings import EvaluationParameters

__all__ = ["HEADLINE_RISK", "guarantee_held", "headline_risk", "risk_control_evaluation", "rows_at_risk"]

#: The target risk the verdict and the index read (the nearest of ``target_risks`` when it is not one of them).
HEADLINE_RISK = 0.1


def headline_risk(risks) -> float:
    """The target risk of ``risks`` the verdict reads: 0.1, or the nearest to it.

    Examples
    --------
    >>> headline_risk((0.05, 0.1, 0.2)), headline_risk([0.02, 0.3])
    (0.1, 0.02)
    """
    return float(min(risks, key=lambda r: (abs(r - HEADLINE_RISK), r)))


def rows_at_risk(table: pd.DataFrame, risk: float | None = None, *, model: str | None = None) -> pd.DataFrame:
    """The rows of a ``risk_control`` table at target risk ``risk`` (default: the headline risk of the table's risks),
    of ``model`` when given: the one selection the report's figure, its table and the index make.

    Target risks are matched within 1e-9, so a risk read back from a file or typed as ``0.1`` finds the rows
    stored as ``0.1`` (a parameter's ``0.30000000000000004`` too).

    Examples
    --------
    >>> t = pd.DataFrame({"model": ["m", "m", "n"], "target_risk": [0.05, 0.1 + 1e-17, 0.1]})
    >>> rows_at_risk(t).index.tolist(), rows_at_risk(t, 0.05).index.tolist(), rows_at_risk(t, model="n").index.tolist()
    ([1, 2], [0], [2])
    """
    if risk is None:
        risk = headline_risk(table["target_risk"].unique()) if len(table) else HEADLINE_RISK
    keep = (table["target_risk"].astype(float) - float(risk)).abs() <= 1e-9
    if model is not None:
        keep &= table["model"] == model
    return table[keep]


def risk_control_evaluation(
    bench, p: EvaluationParameters, left_out: Mapping[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``risk_control`` and ``risk_control_curves`` tables of an evaluation with parameters ``p``.

    Protocols ``xdomain``, ``outdomain`` (left out without domains, as in the
    calibration grid) and ``indata``; the calibrator is the selective
    answering's (``selective_method``, ``class_weight``); the
    out-of-distribution dataset is never a target.  The curves are each
    dataset's risk-coverage curve under the calibrator that certified the
    thresholds (at most 101 points per model x dataset x protocol).
    """
    options = RiskControlOptions(
        risks=p.target_risks,
        delta=p.risk_delta,
        method=p.risk_method,
        protocols=[x for x in RISK_CONTROL_PROTOCOLS if x not in left_out],
        calibration_method=p.selective_method,
        class_weight=p.class_weight,
        random_state=p.random_state,
    )
    return risk_control_tables(bench, options, datasets=[d for d in bench.datasets if d != p.ood_dataset])


def guarantee_held(table: pd.DataFrame, model: str, *, risk: float, protocol: str = "xdomain") -> tuple[int, int]:
    """``(held, judged)``: on how many datasets the guarantee at ``risk`` under ``protocol`` held, of those where
    one was certified and something answered.

    Examples
    --------
    >>> t = pd.DataFrame({"model": "m", "protocol": "xdomain", "target_risk": 0.1,
    ...                   "held": pd.array([True, False, None, True], dtype="boolean")})
    >>> guarantee_held(t, "m", risk=0.1)
    (2, 3)
    """
    rows = rows_at_risk(table, risk, model=model)
    rows = rows[rows["protocol"] == protocol]
    held = rows["held"].dropna().astype(bool)
    return int(held.sum()), int(len(held))
