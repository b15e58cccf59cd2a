"""Test-set AUROC diagnostics on a benchmark: the validation and test cohorts of a model on a
dataset, all four diagnostics at once, their bootstrap intervals and tidy tables.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import frame_html, result_html
from ...utils.validation import (
    UndefinedMetricWarning,
    check_int,
    check_option,
    check_random_state,
)
from ..calibration.grid import PROTOCOLS, protocol_masks
from ..core.kernel import auc_from_counts, buffer_view
from ..core.views import each_model_view, model_view_of
from ..uncertainty.bootstrap import check_bootstrap, dataset_seed, strata_of
from ..uncertainty.cells import cell_scores, check_cells
from ..uncertainty.replicates import (
    GridSample,
    ReplicatePlan,
    bootstrap_replicates,
    interval_frame,
    interval_summary,
    jackknife_replicates,
)
from .cohorts import (
    BiasRobustness,
    NoiseRobustness,
    SensSpecDrift,
    WassersteinMatrix,
    bias_robustness,
    check_p,
    check_range,
    check_sigma_max,
    noise_robustness,
    sens_spec_drift,
    two_cohorts,
    wasserstein_matrix,
)
from .null import permutation_null
from .rows import bias_rows, bias_units, drift_rows, lead_cumsum, wasserstein_rows, workspace

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Iterable, Sequence

    from ...data.benchmark import Benchmark

__all__ = [
    "CohortDiagnostics",
    "cohort_diagnostics",
    "cohorts",
    "diagnostics_intervals",
    "diagnostics_table",
    "diagnostics_frame",
    "undefined_reasons",
]


# -- benchmark level ------------------------------------------------------------------


@dataclass(frozen=True)
class CohortDiagnostics:
    """All four diagnostics of one model on one dataset of a benchmark.

    Attributes
    ----------
    model, dataset : str
    cohorts : str
        How V and T were formed: ``"split"`` (the benchmark's split column)
        or a calibration protocol name.
    y_val, s_val, y_test, s_test : ndarray
        The cohorts (labels 0/1).
    auc_val, auc_test : float
    bias_val, bias_test : BiasRobustness
    noise_val, noise_test : NoiseRobustness
    drift : SensSpecDrift
    wasserstein : WassersteinMatrix
        At the order ``p`` asked for (default 2, as the paper's text says).
    wasserstein_p1, wasserstein_p2 : WassersteinMatrix
        At p = 1 and p = 2, always both: the paper's text says 2-Wasserstein
        but its Figure 4 was computed with p = 1 (scipy's
        ``wasserstein_distance``).  Filled from the cohorts when not given.
    intervals : dict
        ``name -> (low, high)`` bootstrap intervals of ``auc_val``,
        ``auc_test``, ``bias_robustness_val``, ``bias_robustness_test``
        (percentile), ``drift`` and ``wasserstein`` (BCa: the bootstrap
        biases them), empty without ``n_bootstrap``; :meth:`to_dict` adds
        them as ``<name>_low`` / ``<name>_high``.  (NaN, NaN) where no
        interval contains the estimate (``interval_note`` says why).
    replicates : DataFrame or None
        The bootstrap replicates of those numbers, one row each.
    jackknife : DataFrame or None
        The delete-a-group jackknife values of the BCa numbers (drift, W),
        one row per left-out group: their acceleration.
    interval_method, interval_note : str
        Which method gave which interval ("BCa: drift, wasserstein;
        percentile: auc_val, ...") and why an interval is NaN ('' when none
        is); in :meth:`to_dict` when there are intervals.
    drift_pvalue, wasserstein_pvalue : float
        Permutation p-values of drift and W (NaN without ``n_permutations``):
        how often cohorts shuffled within class drift as much
        (:func:`~beyondauc.metrics.diagnostics.null.permutation_null`); in
        :meth:`to_dict` when computed.
    n_permutations : int
        The permutations behind them (0: none).
    note : str
        Why some diagnostics are undefined (NaN), in words ('' when all are
        defined): constant scores, a cohort with a single class, an AUC of 0
        (:func:`undefined_reasons`).
    """

    model: str
    dataset: str
    cohorts: str
    y_val: np.ndarray = field(repr=False)
    s_val: np.ndarray = field(repr=False)
    y_test: np.ndarray = field(repr=False)
    s_test: np.ndarray = field(repr=False)
    auc_val: float = np.nan
    auc_test: float = np.nan
    bias_val: BiasRobustness = field(default=None, repr=False)
    bias_test: BiasRobustness = field(default=None, repr=False)
    noise_val: NoiseRobustness = field(default=None, repr=False)
    noise_test: NoiseRobustness = field(default=None, repr=False)
    drift: SensSpecDrift = field(default=None, repr=False)
    wasserstein: WassersteinMatrix = field(default=None, repr=False)
    wasserstein_p1: WassersteinMatrix = field(default=None, repr=False)
    wasserstein_p2: WassersteinMatrix = field(default=None, repr=False)

    def __post_init__(self):
        for order, name in ((1, "wasserstein_p1"), (2, "wasserstein_p2")):
            if getattr(self, name) is not None:
                continue
            if self.wasserstein is not None and self.wasserstein.p == order:
                value = self.wasserstein
            else:  # the chosen order already warned about a missing class, if any
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UndefinedMetricWarning)
                    value = wasserstein_matrix(self.y_val, self.s_val, self.y_test, self.s_test, p=order)
            object.__setattr__(self, name, value)

    intervals: dict = field(default_factory=dict, repr=False)
    replicates: pd.DataFrame | None = field(default=None, repr=False)
    jackknife: pd.DataFrame | None = field(default=None, repr=False)
    interval_method: str = ""
    interval_note: str = ""
    drift_pvalue: float = np.nan
    wasserstein_pvalue: float = np.nan
    n_permutations: int = 0

    def to_dict(self) -> dict[str, object]:
        """The headline numbers by name.

        ``wasserstein`` is W at the order asked for (``wasserstein_p``);
        ``wasserstein_p1`` and ``wasserstein_p2`` are W at p = 1 (the
        paper's Figure 4) and p = 2 (the paper's text).
        """
        return {
            "model": self.model,
            "dataset": self.dataset,
            "cohorts": self.cohorts,
            "n_val": len(self.y_val),
            "n_test": len(self.y_test),
            "auc_val": self.auc_val,
            "auc_test": self.auc_test,
            "bias_robustness_val": self.bias_val.score,
            "bias_robustness_test": self.bias_test.score,
            "noise_robustness_val": self.noise_val.score,
            "noise_robustness_test": self.noise_test.score,
            "drift": self.drift.score,
            "wasserstein": self.wasserstein.score,
            "wasserstein_p": self.wasserstein.p,
            "wasserstein_p1": self.wasserstein_p1.score,
            "wasserstein_p2": self.wasserstein_p2.score,
            "note": self.note,
            **{f"{name}_{end}": v for name, lh in self.intervals.items() for end, v in zip(("low", "high"), lh)},
            **(
                {"interval_method": self.interval_method, "interval_note": self.interval_note} if self.intervals else {}
            ),
            **(
                {"drift_pvalue": self.drift_pvalue, "wasserstein_pvalue": self.wasserstein_pvalue}
                if self.n_permutations
                else {}
            ),
        }

    @property
    def note(self) -> str:
        """Why some of the headline diagnostics are NaN, in words ('' when none is)."""
        values = (
            self.auc_val,
            self.auc_test,
            self.bias_val.score,
            self.bias_test.score,
            self.noise_val.score,
            self.noise_test.score,
            self.drift.score,
            self.wasserstein.score,
        )
        if not np.isnan(np.asarray(values, dtype=float)).any():
            return ""
        return undefined_reasons(self.y_val, self.s_val, self.y_test, self.s_test)

    def to_frame(self) -> pd.DataFrame:
        """Validation and test cohort side by side: n, AUC, bias and noise robustness."""
        return pd.DataFrame(
            {
                "n": [len(self.y_val), len(self.y_test)],
                "auc": [self.auc_val, self.auc_test],
                "bias robustness": [self.bias_val.score, self.bias_test.score],
                "noise robustness": [self.noise_val.score, self.noise_test.score],
            },
            index=["validation", "test"],
        )

    def _repr_html_(self):
        return result_html(
            f"CohortDiagnostics: {self.model} on {self.dataset}",
            [
                ("drift", self.drift.score),
                ("wasserstein", self.wasserstein.score),
            ],
            subtitle=f"(cohorts: {self.cohorts})",
            parts=[frame_html(self.to_frame())],
            note=self.wasserstein.note or None,
        )


def undefined_reasons(y_val: ArrayLike, s_val: ArrayLike, y_test: ArrayLike, s_test: ArrayLike) -> str:
    """Why diagnostics of two cohorts can be undefined, in words ('' when no reason applies).

    The reasons, in this order: a cohort without both classes (no AUC, no
    drift, no W), constant scores over both cohorts (no score range: no
    robustness, no drift, and W is 0 / 0) or within one, and a cohort whose
    AUC is 0 (robustness is relative to the AUC).

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.benchmark import undefined_reasons
    >>> undefined_reasons([0, 1, 0], [5, 5, 5], [1, 0], [5, 5])
    'constant scores (every score is 5)'
    >>> undefined_reasons([1, 1], [0.2, 0.4], [0, 1], [0.1, 0.9])
    'the validation cohort has a single class'
    >>> undefined_reasons([0, 1], [0.2, 0.4], [0, 1], [0.1, 0.9])
    ''
    """
    cohorts = [
        ("validation", np.asarray(y_val), np.asarray(s_val, dtype=float)),
        ("test", np.asarray(y_test), np.asarray(s_test, dtype=float)),
    ]
    reasons = []
    single = [name for name, y, _ in cohorts if len(np.unique(y)) < 2]
    if single:
        reasons.append(
            "both cohorts have a single class" if len(single) == 2 else f"the {single[0]} cohort has a single class"
        )
    both = np.concatenate([s for _, _, s in cohorts])
    if len(both) and both.min() == both.max():
        reasons.append(f"constant scores (every score is {both[0]:g})")
    else:
        reasons += [
            f"the {name} cohort's scores are constant" for name, _, s in cohorts if len(s) > 1 and s.min() == s.max()
        ]
    for name, y, s in cohorts:
        if name not in single and len(s) and _auc_is_zero(y, s):
            reasons.append(f"an AUC of 0 in the {name} cohort")
    return "; ".join(reasons)


def _auc_is_zero(y, s):
    """Whether every positive scores below every negative (both classes present)."""
    y = np.asarray(y).astype(bool)
    return bool(y.any() and (~y).any() and s[y].max() < s[~y].min())


def check_cohort_protocol(bench, protocol):
    if protocol is None:  # one dataset has no other to take a validation cohort from: a split of itself
        return "split" if bench.has_split else "xdomain" if len(bench.datasets) > 1 else "indata"
    if protocol == "split":
        if not bench.has_split:
            raise ValueError("`protocol`='split' needs a benchmark with a 'split' column; this one has none")
        return protocol
    return check_option(protocol, "protocol", PROTOCOLS + ("split",))


def cohorts(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    protocol: str | None = None,
    val_split: str = "val",
    test_split: str = "test",
    random_state: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The validation and test cohorts (V, T) of one model on one dataset.

    * ``protocol=None`` uses the benchmark's ``split`` column when it has
      one (V = rows whose split is ``val_split``, T = ``test_split``), else
      ``"xdomain"`` (``"indata"`` on a benchmark of one dataset); ``"split"``
      asks for the split column explicitly.
    * a calibration protocol makes V its calibration data for ``dataset``
      and T its evaluation data: ``xdomain`` / ``outdomain`` / ``indomain``
      V = the other (out-of-domain / same-domain) datasets pooled, T =
      ``dataset``; ``indata`` V = a random 80% of ``dataset`` (the first
      split of :func:`~beyondauc.expected_accuracy`, same seed), T = the
      other 20%; ``outdata`` V = ``dataset``, T = all other datasets.

    Returns
    -------
    y_val, s_val, y_test, s_test : ndarray
        Labels 0/1 (int8) and scores.

    Examples
    --------
    >>> from beyondauc import load_demo, cohorts
    >>> yv, sv, yt, st = cohorts(load_demo(), "logreg", "wine")
    >>> len(yv) + len(yt)
    107
    """
    kind = check_cohort_protocol(bench, protocol)
    sl = bench._slice(dataset)
    s_all = bench.scores(model)
    y_all = bench.labels()
    if kind == "split":
        split = bench.frame["split"].to_numpy()[sl].astype(str)
        y, s = y_all[sl], s_all[sl]
        for name, value in (("val_split", val_split), ("test_split", test_split)):
            if not (split == str(value)).any():
                raise ValueError(
                    f"`{name}`={value!r} names no rows of dataset {dataset!r}; its split values are {sorted(set(split.tolist()))}"
                )
        v, t = split == str(val_split), split == str(test_split)
        return y[v], s[v], y[t], s[t]
    v, t = protocol_masks(bench, dataset, kind, check_random_state(random_state))
    return y_all[v], s_all[v], y_all[t], s_all[t]


def _default_sigma_max(model, dataset, sv, st):
    """The score range of both cohorts (None when it is 0); refused where floating point cannot hold it."""
    both = np.concatenate([sv, st])
    if not len(both):
        return None
    lo, hi = float(both.min()), float(both.max())
    with np.errstate(over="ignore"):  # say so in the data's terms, not the parameter's
        if not np.isfinite(hi - lo):
            raise ValueError(
                f"model {model!r} on dataset {dataset!r}: the scores of the two cohorts range "
                f"from {lo!r} to {hi!r}, a range wider than floating point can hold; rescale "
                "the scores"
            )
    rng = float(both.max() - both.min())
    return rng if rng > 0 else None


@model_view_of
def cohort_diagnostics(
    bench: Benchmark,
    model: str,
    dataset: str,
    *,
    protocol: str | None = None,
    val_split: str = "val",
    test_split: str = "test",
    sigma_max: float | None = None,
    n_points: int = 21,
    n_repeats: int = 20,
    p: float = 2,
    random_state: int | None = 0,
    noise_method: str = "exact",
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    n_permutations: int = 0,
    cells: int | None = None,
) -> CohortDiagnostics:
    """Bias and noise robustness of both cohorts, drift and the Wasserstein matrix.

    The cohorts come from :func:`cohorts`.  Both cohorts' robustness uses the
    same ``sigma_max`` -- by default the score range of V and T together -- so
    their numbers and curves are comparable.

    Parameters
    ----------
    bench : Benchmark
    model, dataset : str
    protocol : {None, "split", "xdomain", "outdomain", "indomain", "indata", "outdata"}
    val_split, test_split : str
        Split values of V and T when the split column is used.
    sigma_max : float > 0, default=None
    n_points, n_repeats : int
        Sigma grid size of the robustness curves, and Monte Carlo repeats of
        the noise robustness with ``noise_method="monte_carlo"``.
    p : float >= 1, default=2
        Wasserstein order of ``.wasserstein``; the matrices at p = 1 and
        p = 2 are computed either way (``.wasserstein_p1``, ``.wasserstein_p2``).
    random_state : int or None, default=0
        Seeds the indata split and the Monte Carlo noise; the bootstrap draws from its
        child stream for ``dataset``'s place among the benchmark's datasets
        (every model reads the same replicates of a dataset; two datasets draw
        independent ones).
    n_bootstrap : int >= 0, default=0
        With B > 0, intervals of the AUCs and bias robustness (percentile),
        drift and W (BCa) from B replicates of a bootstrap stratified by
        cohort and class (see :func:`diagnostics_intervals`); noise
        robustness gets none.
    confidence_level : float in (0, 1), default=0.95
    noise_method : {"exact", "monte_carlo"}, default="exact"
        How :func:`~beyondauc.noise_robustness` computes the expected AUC
        under noise: exactly, or by seeded draws (as the testAUC package).
    n_permutations : int >= 0, default=0
        With B > 0, permutation p-values of drift and W (cohorts shuffled
        within class; within the whole pool for answers, as the bootstrap
        stratifies), seeded as the bootstrap: is there drift at all?  Drift
        and W whose interval cannot contain them are then not warned about:
        the null answers their question.
    cells : int >= 2 or None, default=None
        The bootstrap, its jackknife and the permutation null run on at most
        this many cells of the scores per class (both cohorts together;
        :func:`~beyondauc.metrics.uncertainty.cells.cell_scores`); None: on every
        distinct score.  The point estimates are exact either way.

    Returns
    -------
    CohortDiagnostics

    Examples
    --------
    >>> from beyondauc import load_demo, cohort_diagnostics
    >>> d = cohort_diagnostics(load_demo(), "logreg", "wine", n_repeats=2)
    >>> d.cohorts, sorted(d.to_dict())[:3]
    ('split', ['auc_test', 'auc_val', 'bias_robustness_test'])
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    kind = check_cohort_protocol(bench, protocol)
    yv, sv, yt, st = cohorts(
        bench, model, dataset, protocol=kind, val_split=val_split, test_split=test_split, random_state=random_state
    )
    if sigma_max is None:
        sigma_max = _default_sigma_max(model, dataset, sv, st)
    common = dict(sigma_max=sigma_max, n_points=n_points)
    noise = dict(common, n_repeats=n_repeats, random_state=random_state, noise_method=noise_method)
    bv, bt = bias_robustness(yv, sv, **common), bias_robustness(yt, st, **common)
    w = wasserstein_matrix(yv, sv, yt, st, p=p)
    drift = sens_spec_drift(yv, sv, yt, st)
    intervals, reps, jack, method, note = {}, None, None, "", ""
    n_permutations = check_int(n_permutations, "n_permutations", minimum=0)
    seed = dataset_seed(check_random_state(random_state), list(bench.datasets).index(dataset))
    null = {}
    cv, ct = _cell_cohorts(yv, sv, yt, st, check_cells(cells))  # what the Monte Carlo runs on
    if n_permutations:
        null = permutation_null(
            yv, cv, yt, ct, n_permutations=n_permutations, p=p, by_class=bench.kind != "answers", random_state=seed
        ).to_dict()
    if n_bootstrap:
        estimate = {
            "auc_val": bv.auc,
            "auc_test": bt.auc,
            "bias_robustness_val": bv.score,
            "bias_robustness_test": bt.score,
            "drift": drift.score,
            "wasserstein": w.score,
        }
        table, reps, jack = _diagnostics_bootstrap(
            yv,
            cv,
            yt,
            ct,
            estimate,
            sigma_max=sigma_max,
            p=check_p(p),
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            by_class=bench.kind != "answers",
            random_state=seed,
            answered=DIAGNOSTIC_BCA if n_permutations else (),
        )
        intervals, method, note = interval_summary(table)
    return CohortDiagnostics(
        model=model,
        dataset=dataset,
        cohorts=kind,
        y_val=yv,
        s_val=sv,
        y_test=yt,
        s_test=st,
        auc_val=bv.auc,
        auc_test=bt.auc,
        bias_val=bv,
        bias_test=bt,
        noise_val=noise_robustness(yv, sv, **noise),
        noise_test=noise_robustness(yt, st, **noise),
        drift=drift,
        wasserstein=w,
        intervals=intervals,
        replicates=reps,
        jackknife=jack,
        interval_method=method,
        interval_note=note,
        n_permutations=n_permutations,
        **null,
    )


# -- bootstrap intervals ------------------------------------------------------------------

# replicate x value cells per chunk: every number is computed row by row (chunks change nothing),
# and the four Wasserstein merges hold about ten (replicates, 2 x values) arrays each
_DIAGNOSTICS_CELLS = 1 << 19
DIAGNOSTIC_INTERVALS = ("auc_val", "auc_test", "bias_robustness_val", "bias_robustness_test", "drift", "wasserstein")

#: The numbers whose intervals are BCa: the bootstrap biases them (resampling noise raises the drift, lowers W).
DIAGNOSTIC_BCA = ("drift", "wasserstein")


def _cell_cohorts(yv, sv, yt, st, cells):
    """V's and T's scores on at most ``cells`` cells per class, both cohorts pooled (so a permutation of the
    cohorts within class leaves the cells as they are)."""
    if cells is None:
        return sv, st
    both = cell_scores(np.concatenate([sv, st]), np.concatenate([yv, yt]), cells=cells)
    return both[: len(sv)], both[len(sv) :]


def _diagnostics_bootstrap(
    yv, sv, yt, st, estimate, *, sigma_max, p, n_bootstrap, confidence_level, random_state, by_class=True, answered=()
):
    """(interval frame, replicates, jackknife) of the AUCs, bias robustness, drift and W; stratified by cohort and class.

    ``by_class=False`` (an answers benchmark, whose class is each model's own correctness) stratifies by
    cohort alone, so every model resamples the same rows (paired).

    One score grid for V and T together; each replicate is its per-value
    counts of V-, V+, T-, T+ (:func:`~beyondauc.metrics.uncertainty.bootstrap.grid_weights`), and
    every number is a batched statistic over those rows (:func:`_diagnostics_statistic`).
    ``sigma_max`` stays at the point estimate's value in every replicate (None:
    bias robustness is NaN).  The numbers of :data:`DIAGNOSTIC_BCA` get BCa
    intervals, their acceleration from a delete-a-group jackknife stratified
    as the bootstrap (the same statistic on 20 more rows of counts).  ``answered``: the numbers whose
    question a permutation null answers; a NaN interval of theirs keeps its note but is not warned about.
    """
    sample, statistic = diagnostics_design(yv, sv, yt, st, sigma_max, p, by_class)
    plan = ReplicatePlan(n_bootstrap, random_state, cells=_DIAGNOSTICS_CELLS)
    reps = pd.DataFrame(bootstrap_replicates(sample, statistic, plan))
    jack = pd.DataFrame(jackknife_replicates(sample, statistic, plan))[list(DIAGNOSTIC_BCA)]
    return interval_frame(estimate, reps, confidence_level, jackknife=jack, answered=answered), reps, jack


def diagnostics_design(yv, sv, yt, st, sigma_max, p, by_class=True):
    """(sample, statistic) of the diagnostics' bootstrap and jackknife on one grid of V and T."""
    y = np.concatenate([yv, yt]).astype(np.int64)
    s = np.concatenate([sv, st])
    cohort = np.concatenate([np.zeros(len(yv), np.int64), np.ones(len(yt), np.int64)])
    x, inv = np.unique(s, return_inverse=True)
    units = None if sigma_max is None else bias_units(x, sigma_max)  # the same for every replicate
    held = {}  # one workspace for the chunks, grown to the largest

    def statistic(pos, neg):
        if held.get("rows", 0) < len(pos):
            held.update(rows=len(pos), work=workspace(len(pos), len(x)))
        return diagnostics_statistic(x, pos, neg, sigma_max, p, units=units, work=held["work"])

    strata = strata_of(cohort, y) if by_class else strata_of(cohort)
    return GridSample(strata, inv.ravel(), y, len(x), groups=cohort, n_groups=2), statistic


def diagnostics_replicates(yv, sv, yt, st, *, sigma_max, p, n_bootstrap, random_state, by_class=True):
    """Replicates (DataFrame, one row each) of the numbers of :data:`DIAGNOSTIC_INTERVALS`."""
    sample, statistic = diagnostics_design(yv, sv, yt, st, sigma_max, p, by_class)
    plan = ReplicatePlan(n_bootstrap, random_state, cells=_DIAGNOSTICS_CELLS)
    return pd.DataFrame(bootstrap_replicates(sample, statistic, plan))


def diagnostics_statistic(x, pos, neg, sigma_max, p, *, units=None, work=None):
    """The numbers of :data:`DIAGNOSTIC_INTERVALS` of each row of (R, 2, m) counts (V: 0, T: 1).

    Each class's cumulative sums are taken once (in int64: the rows are counts) and read by all four kernels;
    ``units``: :func:`~beyondauc.metrics.diagnostics.rows.bias_units` of the grid, and ``work``:
    a :func:`~beyondauc.metrics.diagnostics.rows.workspace` for at least R rows, when the caller has them.
    """
    R, _, m = pos.shape
    work = workspace(R, m) if work is None else work  # every kernel's temporaries, in turn
    cp = lead_cumsum(pos, buffer_view(work[5], (R, 2, m + 1)), scratch=work[0])
    cn = lead_cumsum(neg, buffer_view(work[6], (R, 2, m + 1)), scratch=work[0])
    rows = {}
    for k, name in enumerate(("val", "test")):  # the two cohorts
        if sigma_max is None:
            rows[f"auc_{name}"] = auc_from_counts(pos[:, k], neg[:, k])
            rows[f"bias_robustness_{name}"] = np.full(len(pos), np.nan)
        else:
            score, auc = bias_rows(x, pos[:, k], neg[:, k], sigma_max, cn=cn[:, k], units=units, work=work)
            rows[f"auc_{name}"], rows[f"bias_robustness_{name}"] = auc, score
    rows["drift"] = drift_rows(x, pos, neg, cp=cp, cn=cn, work=work)
    rows["wasserstein"] = wasserstein_rows(x, pos, neg, p, cp=cp, cn=cn, counts=True, work=work)[0]
    return {k: rows[k] for k in DIAGNOSTIC_INTERVALS}


def diagnostics_intervals(
    y_val: ArrayLike,
    s_val: ArrayLike,
    y_test: ArrayLike,
    s_test: ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    sigma_max: float | None = None,
    p: float = 2,
    random_state: int | None = 0,
    pos_label: object = None,
) -> pd.DataFrame:
    """Bootstrap intervals of the AUCs, bias robustness (percentile), drift and W (BCa) of two cohorts.

    The bootstrap is stratified by cohort and class: each replicate resamples
    V-, V+, T- and T+ to their own sizes.  A replicate is a reweighting of the
    per-value counts on one score grid of V and T, so the exact kernels run
    for all replicates at once (weighted sensitivity/specificity step
    functions for the drift, sorted cumulative sums for bias robustness,
    weighted CDFs (p = 1) or quantile functions for W).  Bias robustness
    keeps ``sigma_max`` at the point estimate's value (default: the score
    range of V and T together, as :func:`cohort_diagnostics` uses) in every
    replicate, so the replicates measure the same integral.  Drift and W,
    which resampling biases, get BCa intervals (acceleration from a
    delete-a-group jackknife with 20 groups, stratified as the bootstrap); an
    interval that cannot contain its estimate is NaN, with the reason in
    ``interval_note`` (see the user guide, "Uncertainty").

    Parameters
    ----------
    y_val, s_val, y_test, s_test : array-like
    n_bootstrap : int >= 1, default=1000
    confidence_level : float in (0, 1), default=0.95
    sigma_max : float > 0, default=None
    p : float >= 1, default=2
        Wasserstein order.
    random_state : int or None, default=0
    pos_label : scalar, default=None

    Returns
    -------
    pandas.DataFrame
        Indexed by ``metric`` (auc_val, auc_test, bias_robustness_val,
        bias_robustness_test, drift, wasserstein) with columns ``estimate``,
        ``low``, ``high``, ``interval_method`` ("BCa" or "percentile") and
        ``interval_note``.  An undefined metric (e.g. a cohort with a
        single class) is NaN with a warning.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc import diagnostics_intervals
    >>> rng = np.random.default_rng(0)
    >>> yv, yt = rng.integers(0, 2, 150), rng.integers(0, 2, 150)
    >>> sv, st = rng.normal(yv, 1.0), rng.normal(yt, 1.0) + 0.5
    >>> ci = diagnostics_intervals(yv, sv, yt, st, n_bootstrap=200)
    >>> bool((ci["low"] <= ci["estimate"]).all() and (ci["estimate"] <= ci["high"]).all())
    True
    """
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap < 1:
        raise ValueError(f"`n_bootstrap` must be an int >= 1, got {n_bootstrap}")
    p = check_p(p)
    seed = check_random_state(random_state)
    sigma_max = check_sigma_max(sigma_max)
    yv, sv, yt, st = two_cohorts(y_val, s_val, y_test, s_test, pos_label)
    if sigma_max is None:
        both = np.concatenate([sv, st])
        check_range(both, "s_val` with `s_test")
        rng = float(both.max() - both.min())
        sigma_max = rng if rng > 0 else None
    bv, bt = bias_robustness(yv, sv, sigma_max=sigma_max), bias_robustness(yt, st, sigma_max=sigma_max)
    estimate = {
        "auc_val": bv.auc,
        "auc_test": bt.auc,
        "bias_robustness_val": bv.score,
        "bias_robustness_test": bt.score,
        "drift": sens_spec_drift(yv, sv, yt, st).score,
        "wasserstein": wasserstein_matrix(yv, sv, yt, st, p=p).score,
    }
    return _diagnostics_bootstrap(
        yv,
        sv,
        yt,
        st,
        estimate,
        sigma_max=sigma_max,
        p=p,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        random_state=seed,
    )[0]


@each_model_view(("model", "dataset"))
def diagnostics_table(
    bench: Benchmark,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    protocol: str | None = None,
    **options: object,
) -> pd.DataFrame:
    """Headline diagnostics of every model on every dataset, tidy.

    One row per (model, dataset) with the keys of
    :meth:`CohortDiagnostics.to_dict`; ``options`` go to
    :func:`cohort_diagnostics` (``n_bootstrap=B`` adds ``<name>_low`` /
    ``<name>_high`` columns).

    Examples
    --------
    >>> from beyondauc import load_demo, diagnostics_table
    >>> t = diagnostics_table(load_demo(), models=["logreg"], datasets=["wine"], n_repeats=2)
    >>> t[["model", "dataset", "cohorts"]].values.tolist()
    [['logreg', 'wine', 'split']]
    """
    models = bench.models if models is None else list(models)
    datasets = bench.datasets if datasets is None else list(datasets)
    return diagnostics_frame(
        cohort_diagnostics(bench, m, d, protocol=protocol, **options) for m in models for d in datasets
    )


def diagnostics_frame(results: Iterable[CohortDiagnostics]) -> pd.DataFrame:
    """Tidy table of already computed :class:`CohortDiagnostics`, one row each.

    What :func:`diagnostics_table` returns, for results that are also drawn
    (e.g. with :class:`~beyondauc.plots.DiagnosticsDashboard`), so nothing is
    computed twice.

    Examples
    --------
    >>> from beyondauc import load_demo, cohort_diagnostics, diagnostics_frame
    >>> bench = load_demo()
    >>> results = [cohort_diagnostics(bench, "svm", d, n_repeats=2) for d in ("wine", "diabetes")]
    >>> diagnostics_frame(results)["dataset"].tolist()
    ['wine', 'diabetes']
    """
    rows = []
    for r in results:
        if not isinstance(r, CohortDiagnostics):
            raise TypeError(f"`results` must hold CohortDiagnostics, got {type(r).__name__}")
        rows.append(r.to_dict())
    return pd.DataFrame(rows)
