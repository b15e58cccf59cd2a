"""Where selective answering's confidences come from on a benchmark.

A model's answers on a dataset are read under a protocol: its calibration
rows fit a :class:`~beyondauc.ScoreCalibrator` whose probabilities answer the
evaluation rows (and an out-of-distribution dataset it never sees), or, with
protocol ``"none"``, the confidences are taken as given.
:func:`calibrated_confidence` gives the answers, :func:`selective_masks` the
rows each protocol reads, :class:`ConfidenceSource` the choices that travel
together to the point estimate and its bootstrap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...utils.validation import check_option, check_random_state
from ..calibration.calibrator import ScoreCalibrator
from ..calibration.grid import METHODS, PROTOCOLS, protocol_masks
from ..core.views import model_view_of

if TYPE_CHECKING:  # names in annotations only
    from ...data.benchmark import Benchmark

__all__ = ["SELECTIVE_PROTOCOLS", "ConfidenceSource", "calibrated_confidence", "given_quality", "protocol_rows"]

#: Where selective answering's confidences come from: a calibration protocol, or ``"none"``, the
#: confidences as given (an answers benchmark's own confidence; for scores, probabilities p read as max(p, 1 - p)).
SELECTIVE_PROTOCOLS = (*PROTOCOLS, "none")


def selective_masks(
    bench: Benchmark, dataset: str, protocol: str, random_state: int | None, ood_dataset: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean masks over all rows: calibration, evaluation and out-of-distribution rows.

    Protocol ``"none"`` has no calibration rows; out-of-distribution rows are
    never calibration (or, for ``outdata``, evaluation) rows.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.benchmark_confidence import selective_masks
    >>> cal, ev, ood = selective_masks(load_demo(), "wine", "xdomain", 0, "diabetes")
    >>> bool((cal & ood).any()), int(ood.sum()) > 0
    (False, True)
    """
    check_option(protocol, "protocol", SELECTIVE_PROTOCOLS)
    seed = check_random_state(random_state)
    sl = bench.rows_of(dataset)  # a clear error for an unknown name
    if ood_dataset is not None:
        bench.rows_of(ood_dataset)
        if ood_dataset == dataset:
            raise ValueError(f"`ood_dataset` must differ from `dataset`, got {dataset!r} for both")
    if protocol == "none":
        cal, ev = np.zeros(len(bench), dtype=bool), np.zeros(len(bench), dtype=bool)
        ev[sl] = True
    else:
        cal, ev = protocol_masks(bench, dataset, protocol, seed)
    ood = np.zeros(len(bench), dtype=bool)
    if ood_dataset is not None:  # out of distribution means unseen: never calibrate (or score) on it
        ood[bench.rows_of(ood_dataset)] = True
        cal, ev = cal & ~ood, ev & ~ood
        if not cal.any() and protocol != "none":
            raise ValueError(
                f"protocol {protocol!r} has no calibration data for {dataset!r} once "
                f"`ood_dataset`={ood_dataset!r} is left out"
            )
    return cal, ev, ood


@model_view_of
def calibrated_confidence(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    protocol: str = "indata",
    method: str = "logistic",
    class_weight: str | None = None,
    random_state: int | None = 0,
    ood_dataset: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Calibrated confidence and correctness of a model's answers on a dataset.

    The raw score is calibrated on the protocol's calibration data for
    ``dataset`` (as in :func:`~beyondauc.expected_accuracy`; for ``indata``
    the first seeded 80/20 split, evaluated on its 20%).  Each evaluated
    example gets p = the calibrated probability of the positive class, the
    decision of the calibrator (p > 0.5, or the stump's split), confidence
    max(p, 1 - p) and whether the decision is right.  With ``ood_dataset``
    the same calibrator also answers every example of that dataset; its rows
    are left out of the calibration data (and of ``outdata``'s evaluation
    rows), so it stays unseen under every protocol.

    Returns
    -------
    confidence, correct : ndarray
        On ``dataset``'s evaluation rows (for ``outdata``: all other datasets).
    confidence_ood, correct_ood : ndarray or None

    Examples
    --------
    >>> from beyondauc import load_demo, calibrated_confidence
    >>> conf, ok, _, _ = calibrated_confidence(load_demo(), "logreg", "wine")
    >>> len(conf), bool(((conf >= 0.5) & (conf <= 1)).all())
    (22, True)
    """
    check_option(method, "method", METHODS)
    cal, ev, ood = selective_masks(bench, dataset, protocol, random_state, ood_dataset)
    y_all, s_all = bench.labels(model=model), bench.scores(model)
    if protocol == "none":

        def answer(rows):
            return given_answers(bench, model, s_all[rows], y_all[rows])
    else:
        cal_model = ScoreCalibrator(method, class_weight=class_weight).fit(s_all[cal], y_all[cal])

        def answer(rows):
            proba = cal_model.predict_proba(s_all[rows])
            if bench.kind == "answers":  # recalibrated: the probability that the model's own answer is right
                return proba, y_all[rows] == 1
            pred = cal_model.predict(s_all[rows])
            return np.maximum(proba, 1.0 - proba), pred == y_all[rows]

    conf, ok = answer(ev)
    if ood_dataset is None:
        return conf, ok, None, None
    return (conf, ok, *answer(ood))


def protocol_rows(bench: Benchmark, dataset: str, protocol: str, random_state: int | None = 0):
    """Boolean masks over all rows: ``protocol``'s calibration and evaluation rows for ``dataset`` (as selective
    answering reads them; for ``indata`` the first seeded 80/20 split)."""
    return selective_masks(bench, dataset, protocol, random_state, None)[:2]


def given_answers(bench: Benchmark, model: str, s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) as given (protocol "none").

    An answers benchmark's own confidence and correctness; for scores,
    probabilities p answered as p > 0.5 with confidence max(p, 1 - p).  Scores
    outside [0, 1] are refused with a one-line error naming the model.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.benchmark_confidence import given_answers
    >>> conf, ok = given_answers(load_demo(), "logreg", np.array([0.2, 0.9]), np.array([0, 0]))
    >>> conf.tolist(), ok.tolist()
    ([0.8, 0.9], [True, False])
    """
    if len(s) and (s.min() < 0 or s.max() > 1):
        what = "confidences" if bench.kind == "answers" else "scores"
        raise ValueError(
            f"selective protocol 'none' reads model {model!r}'s {what} as probabilities, but they "
            f"span [{s.min():.4g}, {s.max():.4g}], outside [0, 1]; choose a calibration protocol "
            f"(e.g. 'indata') to recalibrate them"
        )
    if bench.kind == "answers":
        return s.astype(np.float64), y == 1
    return np.maximum(s, 1.0 - s), (s > 0.5) == (y == 1)


def given_quality(bench: Benchmark, model: str, dataset: str) -> np.ndarray | None:
    """The graded quality of ``model``'s answers on ``dataset`` (None unless the benchmark's answers are graded).

    Read with the confidence as given (protocol "none"): AURC, E-AURC and
    AUGRC then take ``1 - quality`` as the loss, while the coverage-accuracy
    curve, DiSCA, a and b read the answers thresholded at the benchmark's
    ``correct_threshold``.
    """
    return bench.quality(dataset, model=model) if bench.kind == "answers" and bench.graded else None


@dataclass(frozen=True)
class ConfidenceSource:
    """Where selective answering's confidences come from, one model at a time.

    Parameters
    ----------
    protocol : str, default="indata"
        The calibration protocol (:data:`SELECTIVE_PROTOCOLS`; ``"none"``: as given).
    method : str, default="logistic"
        The calibrator (:class:`~beyondauc.ScoreCalibrator`).
    class_weight : {None, "balanced"}, default=None
    random_state : int or None, default=0
        Picks the protocol's rows (the ``indata`` split).
    ood_dataset : str or None, default=None
        Out-of-distribution data answered by the same calibrator, never calibrated on.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.selective.benchmark_confidence import ConfidenceSource
    >>> conf, ok, _, _ = ConfidenceSource(protocol="xdomain").answers(load_demo(), "logreg", "wine")
    >>> len(conf) == len(ok)
    True
    """

    protocol: str = "indata"
    method: str = "logistic"
    class_weight: str | None = None
    random_state: int | None = 0
    ood_dataset: str | None = None

    def answers(
        self, bench: Benchmark, model: str, dataset: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """:func:`calibrated_confidence` of ``model`` on ``dataset`` (and on the OOD dataset) from this source."""
        return calibrated_confidence(
            bench,
            model,
            dataset,
            protocol=self.protocol,
            method=self.method,
            class_weight=self.class_weight,
            random_state=self.random_state,
            ood_dataset=self.ood_dataset,
        )
