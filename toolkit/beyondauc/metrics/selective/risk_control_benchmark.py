"""Abstention with a guarantee on a benchmark: does a threshold certified on calibration data keep its promise?

For each model, dataset and calibration protocol, :func:`risk_control_table`
certifies a confidence threshold on the protocol's calibration data with
:func:`~beyondauc.metrics.selective.risk_control.risk_controlled_threshold` and applies
it to the dataset: the realised risk of the answers there says whether the
guarantee held.  :func:`risk_control_tables` gives, from the same fitted
calibrators, the dataset's whole risk-coverage curve under each protocol
(:func:`risk_coverage_points`, at most ``n_points`` points), the curve the
certified threshold lands on.  ``xdomain`` and ``outdomain`` ask whether a guarantee
transfers to a dataset it was not certified on; ``indata`` (the seeded 80/20
split of the dataset itself) is the setting the guarantee is made for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...utils.validation import check_int, check_option
from ..calibration.calibrator import ScoreCalibrator
from ..calibration.grid import METHODS, PROTOCOLS, protocol_plan
from .benchmark_confidence import protocol_rows
from .curves import loss_points
from .risk_control import risk_controlled_threshold

if TYPE_CHECKING:
    from ...data.benchmark import Benchmark

__all__ = [
    "RISK_CONTROL_COLUMNS",
    "RISK_CONTROL_CURVE_COLUMNS",
    "RISK_CONTROL_PROTOCOLS",
    "RiskControlOptions",
    "protocol_answers",
    "realised_risk",
    "risk_control_table",
    "risk_control_tables",
    "risk_coverage_points",
]

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

#: The columns of the ``risk_control_curves`` table: the dataset's risk-coverage curve under each protocol.
RISK_CONTROL_CURVE_COLUMNS = ["model", "dataset", "protocol", "threshold", "coverage", "risk"]


@dataclass(frozen=True)
class RiskControlOptions:
    """How :func:`risk_control_tables` certifies thresholds and answers.

    Attributes
    ----------
    risks : sequence of float, default=(0.05, 0.1, 0.2)
        The target risks, one row each.
    delta : float, default=0.05
        The admissible probability that a guarantee fails.
    method : {"ltt", "sgr"}, default="ltt"
        How the threshold is certified (:func:`risk_controlled_threshold`).
    protocols : sequence of str, default=RISK_CONTROL_PROTOCOLS
        The calibration protocols, in the order of the rows.
    calibration_method : str, default="logistic"
        The calibrator fitted on a protocol's calibration data (scores only).
    class_weight : str or None, default=None
        Its class weight.
    random_state : int or None, default=0
        Seeds ``indata``'s 80/20 split.
    n_points : int, default=101
        The most points of a stored risk-coverage curve (:func:`risk_coverage_points`).

    Examples
    --------
    >>> from beyondauc.metrics.selective.risk_control_benchmark import RiskControlOptions
    >>> RiskControlOptions(risks=(0.1,), protocols=("indata",)).method
    'ltt'
    """

    risks: Sequence[float] = (0.05, 0.1, 0.2)
    delta: float = 0.05
    method: str = "ltt"
    protocols: Sequence[str] = RISK_CONTROL_PROTOCOLS
    calibration_method: str = "logistic"
    class_weight: str | None = None
    random_state: int | None = 0
    n_points: int = 101


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


def risk_coverage_points(correct, confidence, *, n_points: int = 101) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The risk-coverage curve of the answers, at most ``n_points`` of its points.

    The whole curve has one point per distinct confidence λ (tied confidences
    enter together): the share of the examples with a confidence at or above λ
    (coverage) and the mean loss ``1 - correct`` among them (risk).  Of those
    points the curve keeps, for each of ``n_points`` coverages evenly spaced
    over [0, 1], the first (most confident) one reaching it: so the most
    confident point and the one answering everything are always kept, and
    every kept point is a point of the whole curve, reached by a threshold.

    Returns
    -------
    threshold, coverage, risk : ndarray
        Thresholds descending, coverages increasing.

    Examples
    --------
    >>> from beyondauc.metrics.selective.risk_control_benchmark import risk_coverage_points
    >>> t, c, r = risk_coverage_points([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.2], n_points=3)
    >>> t.tolist(), c.tolist(), r.round(3).tolist()
    ([0.9, 0.8, 0.2], [0.25, 0.5, 1.0], [0.0, 0.5, 0.25])
    """
    n_points = check_int(n_points, "n_points", minimum=2)
    ok = np.asarray(correct, dtype=np.float64)
    if not len(ok):
        return np.empty(0), np.empty(0), np.empty(0)
    thresholds, answered, losses = loss_points(confidence, ok)
    coverage = answered / len(ok)
    grid = np.linspace(0.0, 1.0, n_points)
    # the first point at or past each coverage of the grid (the last point's coverage is exactly 1)
    keep = np.unique(np.minimum(np.searchsorted(coverage, grid - 1e-12, side="left"), len(coverage) - 1))
    return thresholds[keep], coverage[keep], losses[keep] / answered[keep]


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


def risk_control_tables(
    bench: Benchmark,
    options: RiskControlOptions | None = None,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``risk_control`` table and, from the same calibrators, the datasets' risk-coverage curves.

    For each model, dataset and protocol one calibrator is fitted
    (:func:`protocol_answers`); the table's rows certify a threshold on its
    calibration answers at each target risk and apply it to the dataset's
    (:func:`risk_control_table`); the curves are the dataset's answers' whole
    risk-coverage curve under that calibrator, at most ``options.n_points``
    points (:func:`risk_coverage_points`): each certified threshold's target
    coverage and realised risk is a point of that curve.

    Returns
    -------
    table : DataFrame
        Columns :data:`RISK_CONTROL_COLUMNS`.
    curves : DataFrame
        Columns :data:`RISK_CONTROL_CURVE_COLUMNS`.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.risk_control_benchmark import RiskControlOptions, risk_control_tables
    >>> table, curves = risk_control_tables(load_demo(), RiskControlOptions(risks=[0.1], protocols=["indata"]),
    ...                                     models=["logreg"], datasets=["wine"])
    >>> len(table), float(curves["coverage"].max()), len(curves) <= 101
    (1, 1.0, True)
    """
    o = RiskControlOptions() if options is None else options
    rows, curves = [], []
    datasets = bench.datasets if datasets is None else datasets
    runs = [(d, x) for d in datasets for x in o.protocols if _calibrates(bench, d, x)]
    for model in bench.models if models is None else models:
        for dataset, protocol in runs:
            answers = protocol_answers(
                bench,
                model,
                dataset,
                protocol=protocol,
                method=o.calibration_method,
                class_weight=o.class_weight,
                random_state=o.random_state,
            )
            where = {"model": model, "dataset": dataset, "protocol": protocol}
            rows += [{**where, **row} for row in _rows(*answers, o.risks, o.delta, o.method)]
            threshold, coverage, risk = risk_coverage_points(answers[3], answers[2], n_points=o.n_points)
            curves.append(pd.DataFrame({**where, "threshold": threshold, "coverage": coverage, "risk": risk}))
    table = pd.DataFrame(rows, columns=RISK_CONTROL_COLUMNS)
    table = table.astype({"certified": bool, "held": "boolean", "n_calibration": np.int64, "n_target": np.int64})
    curve = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=RISK_CONTROL_CURVE_COLUMNS)
    return table, curve[RISK_CONTROL_CURVE_COLUMNS].astype({c: np.float64 for c in ("threshold", "coverage", "risk")})


def risk_control_table(
    bench: Benchmark,
    options: RiskControlOptions | None = None,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Certified thresholds and whether they held, per model x dataset x protocol x target risk.

    The answers are those of :func:`protocol_answers`:
    for scores, the confidence max(p, 1 - p) of a calibrator (``options.calibration_method``)
    fitted on the protocol's calibration data and whether its decision is right,
    on the calibration data and on the target alike; for an answers benchmark,
    each model's own confidence and correctness.  A protocol without
    calibration data for a dataset (a single dataset, or no dataset of
    another domain) gives it no rows.  ``held`` is whether the
    realised risk on the target is at most the target risk (missing where no
    threshold is certified or the target answers nothing).  ``options``
    (:class:`RiskControlOptions`) holds the target risks, delta, the method,
    the protocols and the calibrator; the first table of :func:`risk_control_tables`.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.risk_control_benchmark import RiskControlOptions, risk_control_table
    >>> t = risk_control_table(load_demo(), RiskControlOptions(risks=[0.1], protocols=["xdomain"]),
    ...                        models=["logreg"], datasets=["wine", "diabetes"])
    >>> t[["dataset", "protocol", "target_risk"]].values.tolist()
    [['wine', 'xdomain', 0.1], ['diabetes', 'xdomain', 0.1]]
    """
    return risk_control_tables(bench, options, models=models, datasets=datasets)[0]
