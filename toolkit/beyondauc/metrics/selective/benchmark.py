"""Selective answering on a benchmark: calibrated confidences per model and dataset, the
benchmark tables, and the bootstrap intervals of every selective number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import result_html
from ...utils.validation import UndefinedMetricWarning, check_option, check_random_state
from ..calibration.calibrator import ScoreCalibrator
from ..calibration.grid import METHODS, PROTOCOLS, protocol_masks
from ..core.fitting import class_weighted
from ..core.kernel import grid_counts
from ..core.logistic import logistic_params
from ..core.views import model_view_of
from ..uncertainty.bootstrap import (
    check_bootstrap,
    dataset_seed,
    grid_weights,
    percentile_interval,
    strata_of,
)
from ..uncertainty.cells import cell_scores, check_cells
from ..uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    calibrated_rows,
    interval_frame,
    interval_summary,
    jackknife_replicates,
)
from .curves import (
    CoverageAccuracyCurve,
    area_under,
    aurc_of,
    check_resolution,
    check_unit,
    check_weights,
    exact_area_rows,
    exact_curve,
    excess,
    graded_excess,
    risks,
)
from .scores import (
    DiSCA,
    check_computation,
    disca,
    selective_rows,
)

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from ...data.benchmark import Benchmark

__all__ = [
    "BAND_COVERAGES",
    "MAX_TIE_SHARE",
    "MIN_CONFIDENCES",
    "SELECTIVE_PROTOCOLS",
    "SelectiveAnswering",
    "calibrated_confidence",
    "confidence_ties",
    "given_quality",
    "protocol_rows",
    "selective_answering",
    "selective_table",
    "tolerance_table",
]

#: Fewest distinct confidences a model's answers on a dataset need to be ranked by DiSCA.
MIN_CONFIDENCES: int = 5
#: Largest share of those answers that may tie at one confidence for them to be ranked by DiSCA.
MAX_TIE_SHARE: float = 0.75


def confidence_ties(confidence: ArrayLike) -> tuple[int, float, bool]:
    """(distinct confidences, largest share of answers tied at one of them, whether DiSCA can rank them).

    DiSCA ranks answers by confidence, and answers of one confidence enter
    the coverage-accuracy curve together: answers with few distinct
    confidences make a curve of few points, with no room for the
    fluctuations DiSCA penalises and with a and b at the few confidences
    there are.  A judge that always says 5 gets one point, a = b = its one
    confidence, and a high DiSCA for ranking nothing.  Such answers are
    *not rankable*: fewer than :data:`MIN_CONFIDENCES` distinct confidences,
    or more than :data:`MAX_TIE_SHARE` of the answers at a single one (a
    judge that says 5 nearly always).  Their DiSCA is still computed, but
    left out of DiSCA rankings and means (:func:`~beyondauc.evaluate`).

    Parameters
    ----------
    confidence : array-like of shape (n,)
        The confidences of the answers (any scale; only ties matter).

    Returns
    -------
    n_confidences : int
    top_share : float
        NaN without answers.
    rankable : bool

    Examples
    --------
    >>> from beyondauc.metrics.selective.benchmark import confidence_ties
    >>> confidence_ties([0.7, 0.7, 0.7, 0.7])  # a constant judge
    (1, 1.0, False)
    >>> confidence_ties([0.6, 0.7, 0.8, 0.9, 0.95, 0.99])
    (6, 0.16666666666666666, True)
    >>> confidence_ties([0.6, 0.7, 0.8, 0.9, 0.95] + [0.99] * 20)[2]  # 80% at one confidence
    False
    """
    c = np.asarray(confidence, dtype=float).ravel()
    if not len(c):
        return 0, np.nan, False
    _, counts = np.unique(c, return_counts=True)
    top = float(counts.max() / len(c))
    return len(counts), top, bool(len(counts) >= MIN_CONFIDENCES and top <= MAX_TIE_SHARE)


# -- benchmark level ---------------------------------------------------------------------

#: Where selective answering's confidences come from: a calibration protocol, or ``"none"``, the
#: confidences as given (an answers benchmark's own confidence; for scores, probabilities p read as max(p, 1 - p)).
SELECTIVE_PROTOCOLS = (*PROTOCOLS, "none")


def _selective_rows(bench, dataset, protocol, random_state, ood_dataset):
    """Masks over all rows: calibration, evaluation and out-of-distribution rows (no calibration rows for "none")."""
    check_option(protocol, "protocol", SELECTIVE_PROTOCOLS)
    seed = check_random_state(random_state)
    sl = bench._slice(dataset)  # a clear error for an unknown name
    if ood_dataset is not None:
        bench._slice(ood_dataset)
        if ood_dataset == dataset:
            raise ValueError(f"`ood_dataset` must differ from `dataset`, got {dataset!r} for both")
    if protocol == "none":
        cal, ev = np.zeros(len(bench), dtype=bool), np.zeros(len(bench), dtype=bool)
        ev[sl] = True
    else:
        cal, ev = protocol_masks(bench, dataset, protocol, seed)
    ood = np.zeros(len(bench), dtype=bool)
    if ood_dataset is not None:  # out of distribution means unseen: never calibrate (or score) on it
        ood[bench._slice(ood_dataset)] = True
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
    cal, ev, ood = _selective_rows(bench, dataset, protocol, random_state, ood_dataset)
    y_all, s_all = bench.labels(model=model), bench.scores(model)
    if protocol == "none":

        def answer(rows):
            return _given_answers(bench, model, s_all[rows], y_all[rows])
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
    return _selective_rows(bench, dataset, protocol, random_state, None)[:2]


def _given_answers(bench, model, s, y):
    """(confidence, correct) as given (protocol "none"): an answers benchmark's own confidence and correctness;
    for scores, probabilities p answered as p > 0.5 with confidence max(p, 1 - p)."""
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


@dataclass(frozen=True)
class SelectiveAnswering:
    """Selective answering of one model on one dataset of a benchmark.

    Attributes
    ----------
    score : float
        DiSCA on ``dataset`` (in distribution).
    model, dataset : str
    ood_dataset : str or None
    protocol, method : str
    disca : DiSCA
    curve : CoverageAccuracyCurve
        The exact curve.
    aurc, e_aurc : float
        Step integration, exact optimum (the defaults of :func:`aurc` and
        :func:`e_aurc`).
    aurc_linear : float
        :func:`aurc` with ``interpolation="linear"`` (fd-shifts' AURC).
    e_aurc_analytic : float
        Step AURC minus the analytic optimum ``r + (1 - r) ln(1 - r)`` (CRL's E-AURC).
    augrc, augrc_linear : float
        :func:`augrc`, step and linear (Traub et al.'s AUGRC is the linear one).
    disca_ood : DiSCA or None
    didma, nidma : float or None
        Only with a ``computation_score`` (and an ``ood_dataset`` for NiDMA).
    confidence, correct, confidence_ood, correct_ood : ndarray
    intervals : dict
        ``name -> (low, high)`` bootstrap intervals (empty without
        ``n_bootstrap``): BCa for the numbers the bootstrap biases
        (:data:`SELECTIVE_BCA`: DiSCA, a, b, DiSCA OOD), percentile for
        accuracy, area and AURC; (NaN, NaN) where no interval contains the
        estimate.  :meth:`to_dict` adds them as ``<name>_low`` /
        ``<name>_high``, with ``interval_method`` and ``interval_note``.
    replicates : DataFrame or None
        The bootstrap replicates, one row each (columns: the interval names).
    jackknife : DataFrame or None
        Delete-a-group jackknife values of the BCa numbers (their acceleration).
    interval_method, interval_note : str
        Which method gave which interval, and why an interval is NaN ('' when none is).
    accuracy_band : (coverages, low, high) or None
        Pointwise bootstrap band of the exact curve's accuracy at fixed
        coverage levels (:func:`accuracy_at_coverage` per replicate).
    n_confidences, top_share, rankable : int, float, bool
        The distinct confidences of the answers on ``dataset``, the largest
        share tied at one of them, and whether DiSCA can rank them
        (:func:`confidence_ties`).
    """

    score: float
    model: str
    dataset: str
    ood_dataset: str | None
    protocol: str
    method: str
    disca: DiSCA = field(repr=False)
    curve: CoverageAccuracyCurve = field(repr=False)
    aurc: float = np.nan
    e_aurc: float = np.nan
    disca_ood: DiSCA | None = field(default=None, repr=False)
    didma: float | None = None
    nidma: float | None = None
    confidence: np.ndarray = field(default=None, repr=False)
    correct: np.ndarray = field(default=None, repr=False)
    confidence_ood: np.ndarray | None = field(default=None, repr=False)
    correct_ood: np.ndarray | None = field(default=None, repr=False)
    aurc_linear: float = np.nan
    e_aurc_analytic: float = np.nan
    augrc: float = np.nan
    augrc_linear: float = np.nan
    intervals: dict = field(default_factory=dict, repr=False)
    replicates: pd.DataFrame | None = field(default=None, repr=False)
    accuracy_band: tuple | None = field(default=None, repr=False)
    jackknife: pd.DataFrame | None = field(default=None, repr=False)
    interval_method: str = ""
    interval_note: str = ""
    n_confidences: int = 0
    top_share: float = np.nan
    rankable: bool = True

    def to_dict(self) -> dict[str, object]:
        """Headline numbers by name."""
        out = {
            "model": self.model,
            "dataset": self.dataset,
            "ood_dataset": self.ood_dataset,
            "protocol": self.protocol,
            "method": self.method,
            "n": len(self.correct),
            "n_confidences": self.n_confidences,
            "top_share": self.top_share,
            "rankable": self.rankable,
            "accuracy": float(self.curve.accuracy[-1]),
            **self.disca.to_dict(),
            "area": self.curve.score,
            "aurc": self.aurc,
            "e_aurc": self.e_aurc,
            "aurc_linear": self.aurc_linear,
            "e_aurc_analytic": self.e_aurc_analytic,
            "augrc": self.augrc,
            "augrc_linear": self.augrc_linear,
        }
        if self.disca_ood is not None:
            out.update(
                {f"{k}_ood": v for k, v in self.disca_ood.to_dict().items() if k not in ("tolerance", "resolution")}
            )
        out["didma"] = self.didma
        out["nidma"] = self.nidma
        for name, (low, high) in self.intervals.items():
            out[f"{name}_low"] = low
            out[f"{name}_high"] = high
        if self.intervals:
            out["interval_method"], out["interval_note"] = self.interval_method, self.interval_note
        return out

    def _repr_html_(self):
        rec = self.to_dict()
        keep = [
            "n",
            "n_confidences",
            "rankable",
            "accuracy",
            "disca",
            "a",
            "b",
            "n_fluctuations",
            "penalty",
            "area",
            "aurc",
            "e_aurc",
            "disca_ood",
            "didma",
            "nidma",
        ]
        rows = [(k, rec[k]) for k in keep if k in rec and rec[k] is not None]
        title = f"SelectiveAnswering: {self.model} on {self.dataset}"
        if self.ood_dataset is not None:
            title += f" (OOD: {self.ood_dataset})"
        return result_html(title, rows, subtitle=f"calibrated: {self.protocol} / {self.method}")


def _warn_unrankable():
    warnings.warn(
        f"too few distinct confidences to rank the answers (DiSCA needs at least {MIN_CONFIDENCES}, "
        f"none shared by more than {MAX_TIE_SHARE:.0%} of the answers): DiSCA is flagged "
        "`rankable` = False and left out of DiSCA rankings",
        UndefinedMetricWarning,
        stacklevel=3,
    )


def _didma_nidma(d, d_ood, computation_score, didma_weights, nidma_weights):
    """(DiDMA, NiDMA), each None without what it needs (a computation score; and DiSCA on OOD data for NiDMA)."""
    if computation_score is None:
        return None, None
    p, q = check_weights(didma_weights, "didma_weights", 2)
    dd = p * d.score + q * check_computation(computation_score)
    if d_ood is None:
        return dd, None
    u, v = check_weights(nidma_weights, "nidma_weights", 2)
    return dd, u * dd + v * d_ood.score


def selective_answering(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    ood_dataset: str | None = None,
    protocol: str = "indata",
    method: str = "logistic",
    class_weight: str | None = None,
    tolerance: float = 0.9,
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    resolution: float = 0.01,
    computation_score: float | None = None,
    didma_weights: tuple[float, float] = (0.5, 0.5),
    nidma_weights: tuple[float, float] = (0.5, 0.5),
    random_state: int | None = 0,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    cells: int | None = None,
) -> SelectiveAnswering:
    """DiSCA, the curve, AURC (and DiSCA on OOD data, DiDMA, NiDMA) for one model.

    The model's raw scores are calibrated into probabilities with
    :func:`calibrated_confidence`; ``dataset`` is the in-distribution data
    and ``ood_dataset`` (optional) the out-of-distribution data answered by
    the same calibrator, which never sees it (it is left out of every
    protocol's calibration data).  DiDMA needs a ``computation_score`` and NiDMA
    both; without them they are None.

    Answers with too few distinct confidences to rank (fewer than
    :data:`MIN_CONFIDENCES`, or more than :data:`MAX_TIE_SHARE` of them at
    one confidence: :func:`confidence_ties`) are flagged ``rankable=False``,
    with an :class:`~beyondauc.UndefinedMetricWarning`: their DiSCA is
    computed but ranks nothing.

    With ``n_bootstrap`` > 0 the result carries percentile intervals of
    ``accuracy``, ``area``, ``aurc``, ``disca``, ``a`` and ``b`` (and
    ``disca_ood``) from a bootstrap stratified by role (calibration,
    evaluation, out-of-distribution rows), dataset and, for scores, class
    (an answers benchmark's class is the model's own correctness, so it is
    left out: every model resamples the same rows), seeded by
    ``random_state``'s child stream for ``dataset``'s place among the
    benchmark's datasets other than ``ood_dataset`` (every model reads the same
    replicates of a dataset; two datasets draw independent ones).  Each
    replicate *refits the calibrator* on its resample of the calibration data -- the threshold's own sampling error
    is part of what a deployed model meets -- then answers its resample of the
    evaluation data; all replicates are fitted and scored at once on the
    model's score grid.  ``confidence_level`` (default 0.95) sets the
    interval width.  ``cells`` (None: every score) bounds the cells per stratum and class the replicates and
    jackknife run on (:func:`~beyondauc.metrics.uncertainty.cells.cell_scores`); the point estimates stay exact.

    Examples
    --------
    >>> from beyondauc import load_demo, selective_answering
    >>> r = selective_answering(load_demo(), "logreg", "breast_cancer", ood_dataset="diabetes")
    >>> sorted(k for k in r.to_dict() if k.startswith("disca"))
    ['disca', 'disca_ood']
    >>> r = selective_answering(load_demo(), "logreg", "wine", n_bootstrap=50)
    >>> bool(r.to_dict()["aurc_low"] <= r.aurc <= r.to_dict()["aurc_high"])
    True
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    conf, ok, conf_ood, ok_ood = calibrated_confidence(
        bench,
        model,
        dataset,
        protocol=protocol,
        method=method,
        class_weight=class_weight,
        random_state=random_state,
        ood_dataset=ood_dataset,
    )
    d = disca(conf, ok, tolerance=tolerance, weights=weights, resolution=resolution)
    n_conf, top_share, rankable = confidence_ties(conf)
    if not rankable:
        _warn_unrankable()
    exact = exact_curve(conf, ok, None)
    quality = given_quality(bench, model, dataset) if protocol == "none" else None
    lossy = exact if quality is None else exact_curve(conf, quality, None)  # AURC, E-AURC, AUGRC: loss 1 - quality
    grisk = risks(lossy)[1]
    d_ood = (
        None
        if conf_ood is None
        else disca(conf_ood, ok_ood, tolerance=tolerance, weights=weights, resolution=resolution)
    )
    dd, nd = _didma_nidma(d, d_ood, computation_score, didma_weights, nidma_weights)
    intervals, reps, band, jack, how, why = {}, None, None, None, "", ""
    if n_bootstrap:
        reps, acc, jack = benchmark_bootstrap(
            bench,
            model,
            dataset,
            ood_dataset=ood_dataset,
            protocol=protocol,
            method=method,
            class_weight=class_weight,
            tolerance=tolerance,
            weights=weights,
            resolution=resolution,
            random_state=random_state,
            n_bootstrap=n_bootstrap,
            cells=check_cells(cells),
            resample_state=dataset_seed(random_state, [d for d in bench.datasets if d != ood_dataset].index(dataset)),
        )
        estimate = {
            "accuracy": float(exact.accuracy[-1]),
            "area": exact.score,
            "aurc": 1.0 - lossy.score,
            "disca": d.score,
            "a": d.a,
            "b": d.b,
            **({} if d_ood is None else {"disca_ood": d_ood.score}),
        }
        intervals, how, why = interval_summary(interval_frame(estimate, reps, confidence_level, jackknife=jack))
        band = percentile_band(acc, confidence_level)
    return SelectiveAnswering(
        score=d.score,
        model=model,
        dataset=dataset,
        ood_dataset=ood_dataset,
        protocol=protocol,
        method=method,
        disca=d,
        curve=exact,
        aurc=aurc_of(lossy, "step"),
        e_aurc=_e_aurc(lossy, ok, quality, "exact"),
        disca_ood=d_ood,
        didma=dd,
        nidma=nd,
        confidence=conf,
        correct=ok,
        confidence_ood=conf_ood,
        correct_ood=ok_ood,
        aurc_linear=aurc_of(lossy, "linear"),
        e_aurc_analytic=_e_aurc(lossy, ok, quality, "analytic"),
        augrc=area_under(lossy.coverage, grisk, "step", 0.0),
        augrc_linear=area_under(lossy.coverage, grisk, "linear", 0.0),
        intervals=intervals,
        replicates=reps,
        accuracy_band=band,
        jackknife=jack,
        interval_method=how,
        interval_note=why,
        n_confidences=n_conf,
        top_share=top_share,
        rankable=rankable,
    )


def given_quality(bench: Benchmark, model: str, dataset: str) -> np.ndarray | None:
    """The graded quality of ``model``'s answers on ``dataset`` (None unless the benchmark's answers are graded).

    Read with the confidence as given (protocol "none"): AURC, E-AURC and
    AUGRC then take ``1 - quality`` as the loss, while the coverage-accuracy
    curve, DiSCA, a and b read the answers thresholded at the benchmark's
    ``correct_threshold``.
    """
    return bench.quality(dataset, model=model) if bench.kind == "answers" and bench.graded else None


def _e_aurc(cur, ok, quality, optimum):
    """E-AURC (step) of the exact curve: of 0/1 answers, or of graded ones (``quality`` not None)."""
    if quality is None:
        return excess(cur, len(ok), int(ok.sum()), optimum, "step")
    return graded_excess(cur, quality, optimum, "step")


def selective_table(
    bench: Benchmark, *, models: Sequence[str] | None = None, datasets: Sequence[str] | None = None, **options: object
) -> pd.DataFrame:
    """Headline selective-answering numbers of every model on every dataset, tidy.

    One row per (model, dataset) with the keys of
    :meth:`SelectiveAnswering.to_dict`: DiSCA and its parts with the
    ``tolerance`` and grid ``resolution`` they were read at, and the
    conventions of the selective-classification literature beside the
    paper's (``aurc``/``aurc_linear``, ``e_aurc``/``e_aurc_analytic``,
    ``augrc``/``augrc_linear``).  ``options`` go to
    :func:`selective_answering`.
    :meth:`SelectiveAnswering.to_dict`; ``options`` go to
    :func:`selective_answering` (``n_bootstrap=B`` adds ``<name>_low`` /
    ``<name>_high`` columns).

    Examples
    --------
    >>> from beyondauc import load_demo, selective_table
    >>> t = selective_table(load_demo(), models=["logreg", "svm"], datasets=["wine"])
    >>> t[["model", "dataset"]].values.tolist()
    [['logreg', 'wine'], ['svm', 'wine']]
    """
    models = bench.models if models is None else list(models)
    datasets = bench.datasets if datasets is None else list(datasets)
    return pd.DataFrame([selective_answering(bench, m, d, **options).to_dict() for m in models for d in datasets])


# -- bootstrap intervals ------------------------------------------------------------------

INTERVAL_NAMES = ("accuracy", "area", "aurc", "disca", "a", "b")

#: The numbers whose intervals are BCa: the bootstrap biases them (DiSCA and its thresholds a and b).
SELECTIVE_BCA = ("disca", "a", "b", "disca_ood")


def _replicates_and_jackknife(sample, statistic, plan):
    """(replicates, band, jackknife) of a selective statistic: the bootstrap, and the jackknife of :data:`SELECTIVE_BCA`."""
    reps = bootstrap_replicates(sample, statistic, plan)
    jack = jackknife_replicates(sample, statistic, plan)
    band = reps.pop("band")
    jack = pd.DataFrame({k: v for k, v in jack.items() if k in SELECTIVE_BCA})
    return pd.DataFrame(reps), band, jack


def _answers(proba, pred, pos, neg, kind="scores"):
    """Confidence and (weighted) correct / wrong answers per grid value, (R, m) each.

    For scores the decision is ``pred`` and its confidence max(p, 1 - p); for
    answers ``proba`` is the recalibrated probability that the model's own
    answer is right (``pos``: right answers), so it is the confidence.
    """
    if kind == "answers":
        return proba, pos, neg
    conf = np.maximum(proba, 1.0 - proba)
    return conf, np.where(pred, pos, neg), np.where(pred, neg, pos)


def selective_design(bench, model, dataset, *, ood_dataset, protocol, random_state):
    """Rows a benchmark-level bootstrap resamples: scores, labels, role (0 cal, 1 eval, 2 ood), strata."""
    cal, ev, ood = _selective_rows(bench, dataset, protocol, random_state, ood_dataset)
    used = cal | ev | ood
    role = np.where(cal, 0, np.where(ev, 1, 2))[used]
    y = bench.labels(model=model)[used]
    s = bench.scores(model)[used]
    # paired: strata the same for every model (an answers benchmark's class is the model's own correctness)
    strata = (
        strata_of(role, bench.dataset_codes()[used])
        if bench.kind == "answers"
        else strata_of(role, bench.dataset_codes()[used], y)
    )
    return s, y, role, strata


def _refit_items(bench, used, strata, protocol):
    """Each used row's item for the cluster bootstrap (None when no item repeats).

    An item whose samples the protocol splits between calibration and
    evaluation rows (a random split of rows) cannot be resampled whole: its
    rows are then resampled one by one, with a warning.
    """
    if not bench.repeated:
        return None
    items = bench.items()[used]
    per_item = np.zeros(int(items.max()) + 1 if len(items) else 0, dtype=np.int64)
    per_item[items] = strata
    if (per_item[items] != strata).any():
        warnings.warn(
            f"protocol {protocol!r} splits the repeated samples of some items between calibration and "
            "evaluation rows: its selective intervals resample rows, and are too narrow for correlated "
            "samples (choose a protocol that keeps items whole, e.g. 'none' or 'xdomain')",
            UserWarning,
            stacklevel=4,
        )
        return None
    return items


#: Coverage levels of the pointwise accuracy band.
BAND_COVERAGES = np.linspace(0.02, 1.0, 50)


def percentile_band(acc, confidence_level):
    """(coverages, low, high) of a pointwise percentile band from (B, k) replicates."""
    low, high = percentile_interval(acc, confidence_level, axis=0)
    return BAND_COVERAGES.copy(), low, high


def benchmark_replicates(bench, model, dataset, **options):
    """Replicates (DataFrame, one row each) of the selective numbers with the calibrator refitted per replicate."""
    return benchmark_bootstrap(bench, model, dataset, **options)[0]


def benchmark_bootstrap(
    bench,
    model,
    dataset,
    *,
    ood_dataset,
    protocol,
    method,
    class_weight,
    tolerance,
    weights,
    resolution,
    random_state,
    n_bootstrap,
    resample_state=None,
    cells=None,
):
    """(replicates frame, (B, k) accuracy at :data:`BAND_COVERAGES`, jackknife frame), the calibrator refitted per replicate.

    ``random_state`` picks the protocol's rows (the ``indata`` split) as the
    point estimate does; ``resample_state`` (default: ``random_state``) seeds
    the resampling; ``cells`` bounds the cells of the scores the replicates run on."""
    tolerance = check_unit(tolerance, "tolerance", low_open=True)
    weights = check_weights(weights, "weights", 3)
    resolution = check_resolution(resolution)
    options = {"resolution": resolution, "tolerance": tolerance, "weights": weights}
    resample_state = check_random_state(random_state if resample_state is None else resample_state)
    if protocol == "none" and given_quality(bench, model, dataset) is not None:
        return _graded_bootstrap(bench, model, dataset, ood_dataset, options, resample_state, n_bootstrap)
    if protocol == "none":
        return _given_bootstrap(bench, model, dataset, ood_dataset, options, resample_state, n_bootstrap, cells)
    s, y, role, strata = selective_design(
        bench, model, dataset, ood_dataset=ood_dataset, protocol=protocol, random_state=random_state
    )
    items = None
    if bench.repeated:  # the rows _selective_design resamples, as items
        cal, ev, ood = _selective_rows(bench, dataset, protocol, random_state, ood_dataset)
        items = _refit_items(bench, cal | ev | ood, strata, protocol)
    s = cell_scores(s, strata, y, cells=cells)
    x, inv, _, _ = grid_counts(y, s)
    m = len(x)
    init = None
    if method == "logistic":  # warm start every replicate from the fit on the calibration data itself
        p0, n0 = grid_weights(np.ones((1, len(y))), inv, y, m, groups=np.where(role == 0, 0, -1))
        init = logistic_params(x, *class_weighted(p0[:, 0], n0[:, 0], class_weight), counts=p0[:, 0] + n0[:, 0])
    # the curves only need the grid values the evaluation (and OOD) rows have
    cols = (np.unique(inv[role == 1]), np.unique(inv[role == 2]) if ood_dataset is not None else None)
    blocks = {0: np.arange(m), 1: cols[0], **({} if cols[1] is None else {2: cols[1]})}
    column, starts = side_by_side(inv, role, blocks)
    statistic = _refit_statistic(
        x, cols, method=method, class_weight=class_weight, init=init, options=options, kind=bench.kind
    )
    sample = GridSample(strata, column, y, int(starts[-1]), clusters=items)
    return _replicates_and_jackknife(
        sample, statistic, ReplicatePlan(n_bootstrap, resample_state, chunk_width=max(len(y), m))
    )


def side_by_side(inv, role, blocks):
    """Each row's column when each role's grid values (``blocks``: role -> sorted grid indices) sit side by side.

    The per-value counts of role r then fill columns ``starts[i]`` on (its
    block's place i), the same counts as a (role, grid value) layout gives at
    those values, without the columns of values the role never has.  Returns
    (column, starts); ``starts[-1]`` is the width.
    """
    column = np.zeros(len(inv), dtype=np.int64)
    starts = np.cumsum([0] + [len(v) for v in blocks.values()])
    for start, (r, values) in zip(starts, blocks.items()):  # a loop over the (two or three) roles
        rows = role == r
        column[rows] = start + np.searchsorted(values, inv[rows])
    return column, starts


def _given_bootstrap(bench, model, dataset, ood_dataset, options, random_state, n_bootstrap, cells=None):
    """:func:`_benchmark_bootstrap` for confidences as given (protocol "none"): nothing to refit.

    The evaluation rows (role 1) and the OOD rows (role 2) are resampled
    within role (and, for scores, label): the same strata for every model,
    so every model resamples the same rows (paired); each replicate
    reweights the counts of right and wrong answers at each distinct
    confidence.
    """
    s, y = bench.scores(model), bench.labels(model=model)
    parts = [(dataset, 1)] + ([(ood_dataset, 2)] if ood_dataset is not None else [])
    answers = [_given_answers(bench, model, s[bench._slice(d)], y[bench._slice(d)]) for d, _ in parts]
    conf = np.concatenate([c for c, _ in answers])
    ok = np.concatenate([o for _, o in answers]).astype(np.int8)
    role = np.concatenate([np.full(len(c), r) for (c, _), (_, r) in zip(answers, parts)])
    key = [role] if bench.kind == "answers" else [role, np.concatenate([y[bench._slice(d)] for d, _ in parts])]
    x, inv, _, _ = grid_counts(ok, cell_scores(conf, *key, ok, cells=cells))
    cols = [np.unique(inv[role == r]) for _, r in parts]
    column, starts = side_by_side(inv, role, {r: c for (_, r), c in zip(parts, cols)})
    k = len(cols[0])

    def statistic(pos, neg):  # the confidences are the same in every replicate: sorted once
        rows = selective_rows(x[cols[0]], pos[:, :k], neg[:, :k], **options, coverages=BAND_COVERAGES)
        out = {name: rows[name] for name in INTERVAL_NAMES}
        if ood_dataset is not None:
            out["disca_ood"] = selective_rows(x[cols[1]], pos[:, k:], neg[:, k:], **options)["disca"]
        out["band"] = rows["band"]
        return out

    sample = GridSample(strata_of(*key), column, ok, int(starts[-1]), clusters=_items(bench, parts))
    return _replicates_and_jackknife(
        sample, statistic, ReplicatePlan(n_bootstrap, random_state, chunk_width=max(len(ok), len(x)))
    )


def _graded_bootstrap(bench, model, dataset, ood_dataset, options, random_state, n_bootstrap):
    """:func:`_given_bootstrap` for graded answers: the grid is the distinct (confidence, quality) pairs.

    Every example counts as a "positive" of its pair; each replicate's pair
    counts then give, per distinct confidence, both the right/wrong counts
    at the benchmark's ``correct_threshold`` (accuracy, area, DiSCA, a, b)
    and the summed quality and loss (AURC on ``1 - quality``), exactly.
    """
    s, q = bench.scores(model), bench.quality(model=model)
    parts = [(dataset, 1)] + ([(ood_dataset, 2)] if ood_dataset is not None else [])
    conf = np.concatenate(
        [_given_answers(bench, model, s[bench._slice(d)], q[bench._slice(d)] >= 0.5)[0] for d, _ in parts]
    )
    quality = np.concatenate([q[bench._slice(d)] for d, _ in parts])
    role = np.concatenate([np.full(bench.dataset_sizes()[bench.datasets.index(d)], r) for d, r in parts])
    pairs, inv = np.unique(np.column_stack([conf, quality]), axis=0, return_inverse=True)  # by confidence, quality
    inv = inv.ravel()
    cols = [np.unique(inv[role == r]) for _, r in parts]
    column, starts = side_by_side(inv, role, {r: c for (_, r), c in zip(parts, cols)})
    right = (pairs[:, 1] >= bench.correct_threshold).astype(np.float64)

    def counts(pos, at):  # (R, pairs of one role) -> per distinct confidence: right, wrong, quality, loss
        c = pairs[at, 0]
        first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])

        def by(w):
            return np.add.reduceat(pos * w, first, axis=1)

        return c[first], (by(right[at]), by(1.0 - right[at])), (by(pairs[at, 1]), by(1.0 - pairs[at, 1]))

    k = len(cols[0])

    def statistic(pos, neg):
        x, binary, graded = counts(pos[:, :k], cols[0])
        rows = selective_rows(x, *binary, **options, coverages=BAND_COVERAGES)
        out = {name: rows[name] for name in INTERVAL_NAMES}
        out["aurc"] = 1.0 - exact_area_rows(x, *graded)
        if ood_dataset is not None:
            x_ood, binary_ood, _ = counts(pos[:, k:], cols[1])
            out["disca_ood"] = selective_rows(x_ood, *binary_ood, **options)["disca"]
        out["band"] = rows["band"]
        return out

    ones = np.ones(len(inv), dtype=np.int8)
    sample = GridSample(strata_of(role), column, ones, int(starts[-1]), clusters=_items(bench, parts))
    return _replicates_and_jackknife(
        sample, statistic, ReplicatePlan(n_bootstrap, random_state, chunk_width=max(len(inv), len(pairs)))
    )


def _items(bench, parts):
    """Each resampled row's item (rows of ``parts``' datasets in order), or None when no item repeats."""
    if not bench.repeated:
        return None
    items = bench.items()
    return np.concatenate([items[bench._slice(d)] for d, _ in parts])


def _refit_statistic(x, cols, *, method, class_weight, init, options, kind="scores"):
    """The batched statistic of :func:`_benchmark_bootstrap`: refit, answer, score; on (R, width) counts.

    The counts are (R, width) rows laid out by :func:`_side_by_side`: the
    calibration rows on the whole grid of ``x``, then the evaluation rows on
    their grid values ``cols[0]``, then the OOD rows on theirs ``cols[1]``
    (None: no OOD dataset).
    """
    cols_ev, cols_ood = cols
    at = cols_ev if cols_ood is None else np.concatenate([cols_ev, cols_ood])
    m, k = len(x), len(cols_ev)

    def statistic(pos, neg):
        cal_pos, cal_neg = pos[:, :m], neg[:, :m]
        proba, pred = calibrated_rows(
            method, x, *class_weighted(cal_pos, cal_neg, class_weight), init=init, at=at, counts=cal_pos + cal_neg
        )
        answers = _answers(proba[:, :k], pred[:, :k], pos[:, m : m + k], neg[:, m : m + k], kind)
        out = selective_rows(*answers, **options, coverages=BAND_COVERAGES)
        rows = {name: out[name] for name in INTERVAL_NAMES}
        if cols_ood is not None:
            rows["disca_ood"] = selective_rows(
                *_answers(proba[:, k:], pred[:, k:], pos[:, m + k :], neg[:, m + k :], kind), **options
            )["disca"]
        rows["band"] = out["band"]
        return rows

    return statistic


def tolerance_table(
    bench: Benchmark, dataset: str, *, models: Sequence[str] | None = None, value: str = "disca", **options: object
) -> pd.DataFrame:
    """Models x tolerance: DiSCA (or b) at each tolerance, the paper's Table 2 layout.

    Columns are ``"<0.95"`` ... ``"<0.55"``, then ``resolution`` (the grid
    step the numbers were read at: DiSCA depends on it, see
    :func:`disca_resolution_sensitivity`); rows sorted by the first
    tolerance, best first.  ``options`` go to :func:`selective_answering`.

    Examples
    --------
    >>> from beyondauc import load_demo, tolerance_table
    >>> t = tolerance_table(load_demo(), "wine", models=["logreg", "svm"])
    >>> list(t.columns)[:2], t.index.name
    (['<0.95', '<0.9'], 'model')
    """
    check_option(value, "value", ("disca", "b"))
    models = bench.models if models is None else list(models)
    rows = {}
    for m in models:
        d = selective_answering(bench, m, dataset, **options).disca
        rows[m] = {f"<{t:g}": v for t, v in zip(d.b_table["tolerance"], d.b_table[value])}
        rows[m]["resolution"] = d.resolution
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "model"
    return out.sort_values(out.columns[0], ascending=value == "b", kind="stable")
