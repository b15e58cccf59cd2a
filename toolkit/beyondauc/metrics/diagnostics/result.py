"""What :func:`~beyondauc.cohort_diagnostics` returns: the four diagnostics of one model on one dataset,
their intervals, and why a number is undefined."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.html import frame_html, result_html
from ...utils.validation import UndefinedMetricWarning
from .cohorts import BiasRobustness, NoiseRobustness, SensSpecDrift, WassersteinMatrix, wasserstein_matrix

__all__ = ["CohortDiagnostics", "undefined_reasons"]


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
    bias_val: BiasRobustness = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    bias_test: BiasRobustness = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    noise_val: NoiseRobustness = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    noise_test: NoiseRobustness = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    drift: SensSpecDrift = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    wasserstein: WassersteinMatrix = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    wasserstein_p1: WassersteinMatrix = field(default=None, repr=False)  # type: ignore[assignment]  # always given
    wasserstein_p2: WassersteinMatrix = field(default=None, repr=False)  # type: ignore[assignment]  # always given

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
    >>> from beyondauc.metrics.diagnostics.result import undefined_reasons
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
