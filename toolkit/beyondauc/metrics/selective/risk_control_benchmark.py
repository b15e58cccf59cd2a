"""Abstention with a guarantee on a benchmark: does a threshold certified on calibration data keep its promise?

For each model, dataset and calibration protocol, :func:`risk_control_table`
certifies a confidence threshold on the protocol's calibration data with
:func:`~beyondauc.metrics.selective.risk_control.risk_controlled_threshold` and applies
it to the dataset: the realised risk of the answers there says whether the
guarantee held.  ``xdomain`` and ``outdomain`` ask whether a guarantee
transfers to a dataset it was not certified on; ``indata`` (the seeded 80/20
split of the dataset itself) is the setting the guarantee is made for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...utils.validation import check_option
from ..calibration.calibrator import ScoreCalibrator
from ..calibration.grid import METHODS, PROTOCOLS, protocol_plan
from .benchmark_confidence import protocol_rows
from .risk_control import risk_controlled_threshold

if TYPE_CHECKING:
    from ...data.benchmark import Benchmark

__all__ = ["RISK_CONTROL_COLUMNS", "RISK_CONTROL_PROTOCOLS", "protocol_answers", "realised_risk", "risk_control_table"]

#: The calibration protocols of the ``risk_control`` table, in the order of its rows.
RISK_CONTROL_PROTOCOLS = ("xdomain", "outdomain", "indata")

#: The columns of the ``risk_control`` table.
RISK_CONTROL_COLUMNS = [
    "model",
    "dataset",
    "protocol",
    "target_risk",
    "method",
    "delta",
    "certified",
    "threshold",
    "calibration_coverage",
    "calibration_risk",
    "n_calibration",
    "realised_risk",
    "target_coverage",
    "n_target",
    "held",
]


def protocol_answers(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    protocol: str = "indata",
    method: str = "logistic",
    class_weight: str | None = None,
    random_state: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A protocol's answers on its calibration data and on ``dataset``, from one fitted calibrator.

    The confidences and correctness
    :func:`~beyondauc.metrics.selective.benchmark_confidence.calibrated_confidence` gives on
    ``dataset``'s evaluation rows, and those the same calibrator gives on the
    rows it was fitted on.  An answers benchmark keeps each model's own
    confidence and correctness on both (nothing is fitted); ``protocol``
    then only chooses the rows.

    Returns
    -------
    confidence_cal, correct_cal, confidence, correct : ndarray

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.risk_control_benchmark import protocol_answers
    >>> c_cal, ok_cal, c, ok = protocol_answers(load_demo(), "logreg", "wine", protocol="indata")
    >>> len(c_cal) + len(c), len(c)  # wine's 107 examples split 80/20
    (107, 22)
    """
    check_option(method, "method", METHODS)
    check_option(protocol, "protocol", PROTOCOLS)
    cal, ev = protocol_rows(bench, dataset, protocol, random_state)
    y_all, s_all = bench.labels(model=model), bench.scores(model)
    if bench.kind == "answers":
        return (s_all[cal].astype(np.float64), y_all[cal] == 1, s_all[ev].astype(np.float64), y_all[ev] == 1)
    cal_model = ScoreCalibrator(method, class_weight=class_weight).fit(s_all[cal], y_all[cal])

    def answer(rows):
        proba = cal_model.predict_proba(s_all[rows])
        return np.maximum(proba, 1.0 - proba), cal_model.predict(s_all[rows]) == y_all[rows]

    return (*answer(cal), *answer(ev))


def realised_risk(correct, confidence, threshold: float) -> tuple[float, float]:
    """Selective risk and coverage of the answers at ``confidence >= threshold`` (risk NaN when none is answered).

    Examples
    --------
    >>> realised_risk([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.2], 0.7)
    (0.3333333333333333, 0.75)
    """
    ok = np.asarray(correct, dtype=np.float64)
    answered = np.asarray(confidence, dtype=np.float64) >= threshold
    n = int(answered.sum())
    coverage = n / len(ok) if len(ok) else float("nan")
    return (float(np.mean(1.0 - ok[answered])) if n else float("nan")), coverage


def _calibrates(bench, dataset, protocol):
    """Whether ``protocol`` has calibration data for ``dataset`` (another dataset, or one of another domain)."""
    if protocol == "indata":
        return True
    fits, _ = protocol_plan(bench, protocol)
    i = bench.datasets.index(dataset)
    return any(f.dataset == i and len(f.cal) for f in fits)


def _rows(conf_cal, ok_cal, conf, ok, risks, delta, method):
    """One row per target risk: the threshold certified on the calibration answers, applied to the target's."""
    out = []
    for r in risks:
        rc = risk_controlled_threshold(ok_cal, conf_cal, risk=r, delta=delta, method=method)
        realised, coverage = realised_risk(ok, conf, rc.threshold)
        held = pd.NA if not rc.certified or np.isnan(realised) else bool(realised <= r)
        out.append(
            {
                "target_risk": float(r),
                "method": method,
                "delta": float(delta),
                "certified": rc.certified,
                "threshold": rc.threshold,
                "calibration_coverage": rc.coverage,
                "calibration_risk": rc.risk,
                "n_calibration": len(ok_cal),
                "realised_risk": realised,
                "target_coverage": coverage,
                "n_target": len(ok),
                "held": held,
            }
        )
    return out


def risk_control_table(
    bench: Benchmark,
    *,
    risks: Sequence[float] = (0.05, 0.1, 0.2),
    delta: float = 0.05,
    method: str = "ltt",
    protocols: Sequence[str] = RISK_CONTROL_PROTOCOLS,
    calibration_method: str = "logistic",
    class_weight: str | None = None,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Certified thresholds and whether they held, per model x dataset x protocol x target risk.

    The answers are those of :func:`protocol_answers`:
    for scores, the confidence max(p, 1 - p) of a calibrator (``calibration_method``)
    fitted on the protocol's calibration data and whether its decision is right,
    on the calibration data and on the target alike; for an answers benchmark,
    each model's own confidence and correctness.  A protocol without
    calibration data for a dataset (a single dataset, or no dataset of
    another domain) gives it no rows.  ``held`` is whether the
    realised risk on the target is at most the target risk (missing where no
    threshold is certified or the target answers nothing).

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.risk_control_benchmark import risk_control_table
    >>> t = risk_control_table(load_demo(), risks=[0.1], models=["logreg"], datasets=["wine", "diabetes"],
    ...                        protocols=["xdomain"])
    >>> t[["dataset", "protocol", "target_risk"]].values.tolist()
    [['wine', 'xdomain', 0.1], ['diabetes', 'xdomain', 0.1]]
    """
    rows = []
    datasets = bench.datasets if datasets is None else datasets
    runs = [(d, x) for d in datasets for x in protocols if _calibrates(bench, d, x)]
    for model in bench.models if models is None else models:
        for dataset, protocol in runs:
            answers = protocol_answers(
                bench,
                model,
                dataset,
                protocol=protocol,
                method=calibration_method,
                class_weight=class_weight,
                random_state=random_state,
            )
            rows += [
                {"model": model, "dataset": dataset, "protocol": protocol, **row}
                for row in _rows(*answers, risks, delta, method)
            ]
    table = pd.DataFrame(rows, columns=RISK_CONTROL_COLUMNS)
    return table.astype({"certified": bool, "held": "boolean", "n_calibration": np.int64, "n_target": np.int64})
