"""The dashboard of the cohort diagnostics (Roberts et al.): the Wasserstein matrix, the class
histograms of both cohorts, the threshold-coloured ROC, the robustness and drift curves and the
headline numbers, in one figure.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from ..metrics.calibration.ranking import CLIP_QUANTILES
from ..metrics.diagnostics.benchmark import cohort_diagnostics
from ..metrics.diagnostics.cohorts import (
    bias_robustness,
    check_cohort,
    noise_robustness,
    sens_spec_drift,
    wasserstein_matrix,
)
from ..metrics.diagnostics.curves import class_histogram, histogram_edges, roc_points
from ._base import literal_plot, report_layout
from .diagnostics import ClassHistogramDisplay, DriftDisplay, RobustnessDisplay, ThresholdROCDisplay, cohort_scores
from .wasserstein import WassersteinDisplay

if TYPE_CHECKING:  # names in annotations only
    from matplotlib.figure import FigureBase
    from numpy.typing import ArrayLike

    from ..data.benchmark import Benchmark
    from ..evaluation.container import Evaluation
    from ..metrics.diagnostics.benchmark import CohortDiagnostics

__all__ = ["DiagnosticsDashboard"]

_DASHBOARD_NUMBERS = (
    "model",
    "dataset",
    "cohorts",
    "n_val",
    "n_test",
    "auc_val",
    "auc_test",
    "bias_robustness_val",
    "bias_robustness_test",
    "noise_robustness_val",
    "noise_robustness_test",
    "drift",
    "wasserstein",
    "wasserstein_p",
    "wasserstein_p1",
    "wasserstein_p2",
)


class DiagnosticsDashboard:
    """One figure with every cohort diagnostic (what testAUC's ``dashboard`` shows).

    Top row: Wasserstein matrix, score histograms of V and of T (shared bins
    and x range), threshold-coloured ROC.  Bottom row: bias robustness,
    noise robustness, sensitivity/specificity drift, the headline numbers.
    Correct for any score scale and label type.

    Parameters
    ----------
    diagnostics : CohortDiagnostics

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.plots import DiagnosticsDashboard
    >>> dash = DiagnosticsDashboard.from_benchmark(load_demo(), "logreg", "wine", n_repeats=2)
    >>> len(dash.axes_)
    8
    """

    def __init__(self, diagnostics: CohortDiagnostics | None, *, panels: dict | None = None) -> None:
        self.diagnostics = diagnostics
        self.panels = panels

    @staticmethod
    def _panels_of(d, bins, clip_quantiles=CLIP_QUANTILES):
        """What the dashboard draws, computed from a CohortDiagnostics's cohorts."""
        edges = histogram_edges(np.concatenate([d.s_val, d.s_test]), bins=bins, clip_quantiles=clip_quantiles)
        hist = {
            c: class_histogram(y, s, edges) for c, y, s in (("val", d.y_val, d.s_val), ("test", d.y_test, d.s_test))
        }
        other = d.wasserstein_p1 if d.wasserstein.p != 1 else d.wasserstein_p2
        return dict(
            model=d.model,
            dataset=d.dataset,
            cohorts=d.cohorts,
            summary=d.to_dict(),
            wasserstein=d.wasserstein,
            wasserstein_other=other,
            bias=(d.bias_val, d.bias_test),
            noise=(d.noise_val, d.noise_test),
            drift=d.drift,
            roc={"val": roc_points(d.y_val, d.s_val), "test": roc_points(d.y_test, d.s_test)},
            auc={"val": d.auc_val, "test": d.auc_test},
            histograms=hist,
        )

    @literal_plot
    def plot(
        self,
        figure: FigureBase | None = None,
        *,
        bins: int = 30,
        clip_quantiles: tuple[float, float] | None = CLIP_QUANTILES,
    ) -> DiagnosticsDashboard:
        """Draw on ``figure`` (its layout is left to the caller), or on a new 20 x 9 inch one.

        The two histograms share ``bins`` edges over the ``clip_quantiles`` of
        both cohorts' scores (see :class:`ClassHistogramDisplay`)."""
        if figure is None:
            import matplotlib.pyplot as plt

            figure = plt.figure(figsize=(20, 9), layout=report_layout())
        d = self.panels if self.panels is not None else self._panels_of(self.diagnostics, bins, clip_quantiles)
        names = {"val": "validation", "test": "test"}
        axes = figure.subplots(2, 4)
        WassersteinDisplay(d["wasserstein"], other=d.get("wasserstein_other")).plot(axes[0, 0])
        for ax, cohort in ((axes[0, 1], "val"), (axes[0, 2], "test")):
            edges, neg, pos, clipped = d["histograms"][cohort]
            ClassHistogramDisplay.from_counts(edges, neg, pos, name=names[cohort], clipped=clipped).plot(ax)
        curves = [(*d["roc"][c], names[c], d["auc"][c]) for c in ("val", "test")]
        thresholds = np.concatenate([d["roc"][c][2][1:] for c in ("val", "test")])
        finite = thresholds[np.isfinite(thresholds)]
        lim = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        ThresholdROCDisplay(curves, lim).plot(axes[0, 3])
        RobustnessDisplay(d["bias"], ["validation", "test"], kind="bias").plot(axes[1, 0])
        RobustnessDisplay(d["noise"], ["validation", "test"], kind="noise").plot(axes[1, 1])
        DriftDisplay(d["drift"]).plot(axes[1, 2])
        lines = [
            f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}"
            for k, v in d["summary"].items()
            if k in _DASHBOARD_NUMBERS
        ]
        axes[1, 3].axis("off")
        axes[1, 3].text(
            0.0,
            1.0,
            "\n".join(lines),
            va="top",
            ha="left",
            family="monospace",
            fontsize=9,
            transform=axes[1, 3].transAxes,
        )
        figure.suptitle(f"{d['model']} on {d['dataset']}: validation vs test cohort ({d['cohorts']})")
        self.figure_, self.axes_ = figure, list(axes.ravel())
        return self

    @classmethod
    def from_evaluation(
        cls, evaluation: Evaluation, model: str, dataset: str, *, figure: FigureBase | None = None, **kwargs: object
    ) -> DiagnosticsDashboard:
        """Draw the dashboard from an :class:`~beyondauc.Evaluation`'s stored curves (nothing recomputed)."""
        return cls(None, panels=evaluation.cohort_panels(model, dataset)).plot(figure, **kwargs)

    @classmethod
    def from_predictions(
        cls,
        y_val: ArrayLike,
        s_val: ArrayLike,
        y_test: ArrayLike,
        s_test: ArrayLike,
        *,
        pos_label: object = None,
        sigma_max: float | None = None,
        n_points: int = 21,
        n_repeats: int = 20,
        p: float = 2,
        random_state: int | None = 0,
        noise_method: str = "exact",
        figure: FigureBase | None = None,
        model: str = "model",
        dataset: str = "data",
    ) -> DiagnosticsDashboard:
        """Compute every diagnostic of two cohorts and draw the dashboard."""
        from ..metrics.diagnostics.benchmark import CohortDiagnostics

        yv, sv = check_cohort(y_val, s_val, pos_label=pos_label, names=("y_val", "s_val"))
        yt, st = check_cohort(y_test, s_test, pos_label=pos_label, names=("y_test", "s_test"))
        if sigma_max is None:
            rng = float(max(sv.max(), st.max()) - min(sv.min(), st.min()))
            sigma_max = rng if rng > 0 else None
        bv = bias_robustness(yv, sv, sigma_max=sigma_max, n_points=n_points)
        bt = bias_robustness(yt, st, sigma_max=sigma_max, n_points=n_points)
        noise = functools.partial(
            noise_robustness,
            sigma_max=sigma_max,
            n_points=n_points,
            n_repeats=n_repeats,
            random_state=random_state,
            noise_method=noise_method,
        )
        diag = CohortDiagnostics(
            model,
            dataset,
            "given",
            yv,
            sv,
            yt,
            st,
            bv.auc,
            bt.auc,
            bv,
            bt,
            noise(yv, sv),
            noise(yt, st),
            sens_spec_drift(yv, sv, yt, st),
            wasserstein_matrix(yv, sv, yt, st, p=p),
        )
        return cls(diag).plot(figure)

    @classmethod
    def from_estimator(
        cls,
        estimator: object,
        X_val: ArrayLike,
        y_val: ArrayLike,
        X_test: ArrayLike,
        y_test: ArrayLike,
        *,
        response_method: str = "auto",
        pos_label: object = None,
        **kwargs: Any,
    ) -> DiagnosticsDashboard:
        """Score both cohorts with a fitted binary classifier, then :meth:`from_predictions` (the model named
        after the estimator's class)."""
        return cls.from_predictions(
            *cohort_scores(estimator, X_val, y_val, X_test, y_test, response_method, pos_label),
            **{"model": type(estimator).__name__, **kwargs},
        )

    @classmethod
    def from_benchmark(
        cls, bench: Benchmark, model: str, dataset: str, *, figure: FigureBase | None = None, **options: object
    ) -> DiagnosticsDashboard:
        """Run :func:`~beyondauc.cohort_diagnostics` and draw the dashboard."""
        return cls(cohort_diagnostics(bench, model, dataset, **options)).plot(figure)
