"""Selective answering on a benchmark: one model on one dataset, and the benchmark tables.

:func:`selective_answering` is a short recipe: the model's answers from their
:class:`~beyondauc.metrics.selective.benchmark_confidence.ConfidenceSource`, the point estimates (DiSCA,
the coverage-accuracy curve, AURC, E-AURC, AUGRC, and DiSCA on out-of-distribution data, DiDMA,
NiDMA), and, with ``n_bootstrap``, their intervals from
:func:`~beyondauc.metrics.selective.benchmark_intervals.benchmark_bootstrap`.  :func:`selective_table`
and :func:`tolerance_table` lay the results of many models and datasets out; :func:`confidence_ties`
says which answers DiSCA can rank.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import result_html
from ...utils.validation import UndefinedMetricWarning, check_option
from ..uncertainty.bootstrap import check_bootstrap, dataset_seed
from ..uncertainty.cells import check_cells
from ..uncertainty.replicates import interval_frame, interval_summary
from .benchmark_confidence import ConfidenceSource, given_quality
from .benchmark_intervals import DiscaReading, benchmark_bootstrap, percentile_band
from .curves import CoverageAccuracyCurve, check_weights, exact_curve
from .didma_nidma import check_computation
from .risk_coverage import area_under, aurc_of, excess, graded_excess, risks
from .scores import DiSCA, disca

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from ...data.benchmark import Benchmark

__all__ = [
    "MAX_TIE_SHARE",
    "MIN_CONFIDENCES",
    "SelectiveAnswering",
    "confidence_ties",
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
        stacklevel=4,
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
    source = ConfidenceSource(
        protocol=protocol, method=method, class_weight=class_weight, random_state=random_state, ood_dataset=ood_dataset
    )
    reading = DiscaReading(tolerance=tolerance, weights=weights, resolution=resolution)
    answers = source.answers(bench, model, dataset)
    quality = given_quality(bench, model, dataset) if protocol == "none" else None
    point, estimate = _point_estimates(answers, quality, reading)
    didma, nidma = _didma_nidma(point["disca"], point["disca_ood"], computation_score, didma_weights, nidma_weights)
    spread = {}
    if n_bootstrap:
        resample_state = dataset_seed(random_state, [d for d in bench.datasets if d != ood_dataset].index(dataset))
        replicates = benchmark_bootstrap(
            bench,
            model,
            dataset,
            source=source,
            reading=reading,
            n_bootstrap=n_bootstrap,
            cells=check_cells(cells),
            resample_state=resample_state,
        )
        spread = _interval_fields(estimate, replicates, confidence_level)
    return SelectiveAnswering(
        model=model,
        dataset=dataset,
        ood_dataset=ood_dataset,
        protocol=protocol,
        method=method,
        didma=didma,
        nidma=nidma,
        **point,
        **spread,
    )


def _point_estimates(answers, quality, reading):
    """(the point estimates' fields of :class:`SelectiveAnswering`, the numbers with intervals) of a model's answers.

    ``answers``: (confidence, correct, confidence_ood, correct_ood); ``quality``: graded answers' quality (None:
    0/1 answers), the loss AURC, E-AURC and AUGRC read; ``reading``: DiSCA's options.
    """
    conf, ok, conf_ood, ok_ood = answers
    options = {"tolerance": reading.tolerance, "weights": reading.weights, "resolution": reading.resolution}
    d = disca(conf, ok, **options)
    n_conf, top_share, rankable = confidence_ties(conf)
    if not rankable:
        _warn_unrankable()
    exact = exact_curve(conf, ok, None)
    lossy = exact if quality is None else exact_curve(conf, quality, None)  # AURC, E-AURC, AUGRC: loss 1 - quality
    grisk = risks(lossy)[1]
    d_ood = None if conf_ood is None else disca(conf_ood, ok_ood, **options)
    point = dict(
        score=d.score,
        disca=d,
        curve=exact,
        aurc=aurc_of(lossy, "step"),
        e_aurc=_e_aurc(lossy, ok, quality, "exact"),
        disca_ood=d_ood,
        confidence=conf,
        correct=ok,
        confidence_ood=conf_ood,
        correct_ood=ok_ood,
        aurc_linear=aurc_of(lossy, "linear"),
        e_aurc_analytic=_e_aurc(lossy, ok, quality, "analytic"),
        augrc=area_under(lossy.coverage, grisk, "step", 0.0),
        augrc_linear=area_under(lossy.coverage, grisk, "linear", 0.0),
        n_confidences=n_conf,
        top_share=top_share,
        rankable=rankable,
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
    return point, estimate


def _interval_fields(estimate, replicates, confidence_level):
    """The interval fields of :class:`SelectiveAnswering` from :func:`benchmark_bootstrap`'s (replicates, band, jackknife)."""
    reps, acc, jack = replicates
    intervals, how, why = interval_summary(interval_frame(estimate, reps, confidence_level, jackknife=jack))
    return dict(
        intervals=intervals,
        replicates=reps,
        accuracy_band=percentile_band(acc, confidence_level),
        jackknife=jack,
        interval_method=how,
        interval_note=why,
    )


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
