"""Displays of the test-set AUROC diagnostics (Roberts et al.): threshold-coloured ROC, class
histograms, robustness and drift curves.

The Wasserstein matrix is in :mod:`~beyondauc.plots.wasserstein`, the dashboard of all five in
:mod:`~beyondauc.plots.dashboard`; both score a fitted estimator with :func:`cohort_scores`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..data.estimators import estimator_scores
from ..metrics.calibration.ranking import CLIP_QUANTILES, check_clip_quantiles
from ..metrics.diagnostics.cohorts import (
    bias_robustness,
    check_cohort,
    noise_robustness,
    sens_spec_drift,
)
from ..metrics.diagnostics.curves import histogram_edges, roc_band, roc_points
from ..metrics.uncertainty.bootstrap import check_bootstrap
from ..utils.formatting import format_range
from ..utils.validation import check_int, check_random_state
from ._base import (
    NEG_COLOR,
    POS_COLOR,
    TEST_STYLE,
    VAL_STYLE,
    axes_or_new,
    full_legend,
    literal_plot,
)

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..metrics.diagnostics.cohorts import (
        BiasRobustness,
        NoiseRobustness,
        SensSpecDrift,
    )
__all__ = [
    "ThresholdROCDisplay",
    "ClassHistogramDisplay",
    "RobustnessDisplay",
    "DriftDisplay",
]


# -- cohort diagnostics -------------------------------------------------------------------


class ThresholdROCDisplay:
    """ROC curves of a validation and a test cohort, coloured by threshold.

    Both curves share one colour scale, so the same colour is the same
    threshold in both cohorts: where the colours of V and T differ at the
    same operating point, the threshold chosen on V will not hold on T.

    Parameters
    ----------
    curves : list of (fpr, tpr, thresholds, name, auc)
    color_lim : (float, float)
        Threshold range mapped onto the colour map (shared by all curves).
    bands : list of (fpr_grid, tpr_low, tpr_high) or None, default=None
        Pointwise bootstrap bands of the TPR at fixed FPRs, one per curve
        (``from_predictions(..., n_bootstrap=B)`` computes them); drawn
        shaded behind the curves when given.

    Examples
    --------
    >>> from beyondauc.plots import ThresholdROCDisplay
    >>> disp = ThresholdROCDisplay.from_predictions([0, 1, 0, 1], [0.1, 0.8, 0.4, 0.6],
    ...                                             [0, 1, 0, 1], [0.3, 0.9, 0.5, 0.4])
    >>> disp.color_lim
    (0.1, 0.9)
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 100)
    >>> disp = ThresholdROCDisplay.from_predictions(y, rng.normal(y), y, rng.normal(y), n_bootstrap=100)
    >>> len(disp.bands), bool((disp.bands[0][1] <= disp.bands[0][2]).all())
    (2, True)
    """

    def __init__(
        self,
        curves: list[tuple],
        color_lim: tuple[float, float],
        *,
        bands: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        self.curves = curves
        self.color_lim = color_lim
        self.bands = bands

    @literal_plot
    def plot(
        self, ax: Axes | None = None, *, cmap: str = "viridis", linewidth: float = 5.0, colorbar: bool = True
    ) -> ThresholdROCDisplay:
        from matplotlib.collections import LineCollection
        from matplotlib.colors import Normalize

        ax = axes_or_new(ax)
        norm = Normalize(*self.color_lim)
        lc = None
        for band, color in zip(self.bands or (), ("grey", "tab:orange", "tab:green", "tab:red")):
            grid, low, high = band
            ax.fill_between(grid, low, high, color=color, alpha=0.2, linewidth=0)
        for (fpr, tpr, thr, name, auc), style in zip(self.curves, (VAL_STYLE, TEST_STYLE, ":", "-.")):
            pts = np.column_stack([fpr, tpr])
            segments = np.stack([pts[:-1], pts[1:]], axis=1)
            lc = LineCollection(segments, cmap=cmap, norm=norm, linewidths=linewidth, alpha=0.8)
            lc.set_array(thr[1:])  # a segment's colour: the threshold reached at its end
            ax.add_collection(lc)
            ax.plot(fpr, tpr, color="black", linewidth=0.8, linestyle=style, label=f"{name} (AUC {auc:.3f})")
        if colorbar and lc is not None:
            self.colorbar_ = ax.figure.colorbar(lc, ax=ax, label="threshold (score)")
        ax.plot([0, 1], [0, 1], color="lightgrey", linewidth=0.8)
        ax.set(
            xlim=(-0.01, 1.01),
            ylim=(-0.01, 1.01),
            xlabel="False positive rate (1 - specificity)",
            ylabel="True positive rate (sensitivity)",
            title="ROC coloured by threshold",
        )
        # small, with short handles: in the dashboard the panel is narrow and the legend stays inside it
        full_legend(ax, loc="lower right", fontsize=8, handlelength=1.2, handletextpad=0.5)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_val: ArrayLike,
        s_val: ArrayLike,
        y_test: ArrayLike,
        s_test: ArrayLike,
        *,
        pos_label: object = None,
        names: tuple[str, str] = ("validation", "test"),
        n_bootstrap: int = 0,
        confidence_level: float = 0.95,
        random_state: int | None = 0,
        ax: Axes | None = None,
        **kwargs: object,
    ) -> ThresholdROCDisplay:
        """Compute both ROC curves (and, with ``n_bootstrap`` > 0, their bands) and plot them.

        The band of a cohort is the pointwise percentile interval of the TPR
        at 101 fixed FPRs over ``n_bootstrap`` replicates stratified by class.
        """
        yv, sv = check_cohort(y_val, s_val, pos_label=pos_label, names=("y_val", "s_val"))
        yt, st = check_cohort(y_test, s_test, pos_label=pos_label, names=("y_test", "s_test"))
        n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
        seed = check_random_state(random_state)
        return cls._from_cohorts(
            yv, sv, yt, st, names, n_bootstrap=n_bootstrap, confidence_level=confidence_level, random_state=seed
        ).plot(ax, **kwargs)

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
        **kwargs: object,
    ) -> ThresholdROCDisplay:
        """Score both cohorts with a fitted binary classifier (:func:`~beyondauc.data.estimator_scores`), then
        :meth:`from_predictions`."""
        return cls.from_predictions(
            *cohort_scores(estimator, X_val, y_val, X_test, y_test, response_method, pos_label), **kwargs
        )

    @classmethod
    def _from_cohorts(cls, yv, sv, yt, st, names, *, n_bootstrap=0, confidence_level=0.95, random_state=0):
        curves = []
        for y, s, name in ((yv, sv, names[0]), (yt, st, names[1])):
            fpr, tpr, thr = roc_points(y, s)
            curves.append((fpr, tpr, thr, name, float(np.trapezoid(tpr, fpr))))
        lim = (float(min(sv.min(), st.min())), float(max(sv.max(), st.max())))
        bands = None
        if n_bootstrap:
            bands = [
                roc_band(y, s, n_bootstrap=n_bootstrap, confidence_level=confidence_level, random_state=random_state)
                for y, s in ((yv, sv), (yt, st))
            ]
        return cls(curves, lim, bands=bands)


class ClassHistogramDisplay:
    """Histogram of the scores of each class in one cohort.

    With ``bins`` an int, the bins span the ``clip_quantiles`` of the pooled
    scores (padded by 5% of their spread, within [min, max]), so a few extreme
    scores do not crush the others into one bin; scores beyond the edges are
    counted in the first or last bin and the x label says how many.

    Parameters
    ----------
    neg, pos : ndarray
        Scores of the negatives and of the positives.
    bins : int or ndarray
        Number of bins, or edges: pass the same edges for several cohorts to
        compare them (scores beyond them go to the end bins).
    name : str
    clip_quantiles : (float, float) or None, default=(0.005, 0.995)
        Quantiles that bound the bins when ``bins`` is an int; None: [min, max].

    Attributes
    ----------
    edges_ : ndarray
    n_clipped_ : int
        Scores beyond the edges, counted in the end bins.

    Examples
    --------
    >>> from beyondauc.plots import ClassHistogramDisplay
    >>> disp = ClassHistogramDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], bins=4)
    >>> len(disp.ax_.patches) > 0, disp.n_clipped_
    (True, 0)
    """

    def __init__(
        self,
        neg: ArrayLike,
        pos: ArrayLike,
        *,
        bins: int | ArrayLike = 30,
        name: str = "",
        clip_quantiles: tuple[float, float] | None = CLIP_QUANTILES,
        weights: tuple[np.ndarray, np.ndarray] | None = None,
        clipped: int | None = None,
    ) -> None:
        self.neg, self.pos, self.bins, self.name, self.weights = neg, pos, bins, name, weights
        self.clip_quantiles = check_clip_quantiles(clip_quantiles)
        self.clipped = clipped

    def _edges(self):
        if np.ndim(self.bins) == 1:
            return np.asarray(self.bins, dtype=float)
        both = np.concatenate([np.asarray(self.neg, dtype=float), np.asarray(self.pos, dtype=float)])
        if not len(both):
            return np.linspace(0.0, 1.0, check_int(self.bins, "bins", minimum=1) + 1)
        return histogram_edges(both, bins=self.bins, clip_quantiles=self.clip_quantiles)

    @classmethod
    def from_counts(
        cls, edges: ArrayLike, neg_counts: ArrayLike, pos_counts: ArrayLike, *, name: str = "", clipped: int = 0
    ) -> ClassHistogramDisplay:
        """A display of already binned scores: ``edges`` (n_bins + 1), the counts per bin of each class, and
        how many scores beyond the edges were counted in the end bins."""
        edges = np.asarray(edges, dtype=float)
        centers = (edges[:-1] + edges[1:]) / 2
        return cls(
            centers,
            centers,
            bins=edges,
            name=name,
            clipped=int(clipped),
            weights=(np.asarray(neg_counts, dtype=float), np.asarray(pos_counts, dtype=float)),
        )

    @literal_plot
    def plot(
        self, ax: Axes | None = None, *, density: bool = False, xlim: tuple[float, float] | None = None
    ) -> ClassHistogramDisplay:
        ax = axes_or_new(ax)
        edges = self._edges()
        lo, hi = edges[0], edges[-1]
        clipped = 0
        wn, wp = self.weights if self.weights is not None else (None, None)
        for scores, w, color, text in ((self.neg, wn, NEG_COLOR, "negative"), (self.pos, wp, POS_COLOR, "positive")):
            scores = np.asarray(scores, dtype=float)
            clipped += int(((scores < lo) | (scores > hi)).sum())
            n = len(scores) if w is None else int(w.sum())
            ax.hist(
                np.clip(scores, lo, hi),
                bins=edges,
                weights=w,
                alpha=0.65,
                color=color,
                label=f"{text} (n={n})",
                density=density,
            )
        if self.clipped is not None:
            clipped = self.clipped
        xlabel = "score" if not clipped else f"score ({clipped} outside {format_range(lo, hi)} in the end bins)"
        ax.set(xlabel=xlabel, ylabel="density" if density else "examples", title=f"{self.name} scores by class".strip())
        if xlim is not None:
            ax.set_xlim(xlim)
        full_legend(ax)
        self.edges_, self.n_clipped_ = edges, clipped
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_score: ArrayLike,
        *,
        pos_label: object = None,
        bins: int | ArrayLike = 30,
        name: str = "",
        clip_quantiles: tuple[float, float] | None = CLIP_QUANTILES,
        ax: Axes | None = None,
        **kwargs: object,
    ) -> ClassHistogramDisplay:
        """Split the scores by class and plot them."""
        y, s = check_cohort(y_true, y_score, pos_label=pos_label)
        return cls(s[y == 0], s[y == 1], bins=bins, name=name, clip_quantiles=clip_quantiles).plot(ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator: object,
        X: ArrayLike,
        y: ArrayLike,
        *,
        response_method: str = "auto",
        pos_label: object = None,
        **kwargs: object,
    ) -> ClassHistogramDisplay:
        """Score ``X`` with a fitted binary classifier (:func:`~beyondauc.data.estimator_scores`), then
        :meth:`from_predictions` (named after the estimator's class)."""
        labels, scores = estimator_scores(estimator, X, y, response_method=response_method, pos_label=pos_label)
        return cls.from_predictions(labels, scores, **{"name": type(estimator).__name__, **kwargs})


class RobustnessDisplay:
    """AUC under growing bias or noise, relative to the unperturbed AUC.

    Parameters
    ----------
    results : list of BiasRobustness or NoiseRobustness
    names : list of str
    kind : {"bias", "noise"}

    Examples
    --------
    >>> from beyondauc.plots import RobustnessDisplay
    >>> disp = RobustnessDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], kind="bias")
    >>> disp.ax_.get_ylabel()
    'AUC relative to unperturbed (%)'
    """

    def __init__(
        self, results: Sequence[BiasRobustness | NoiseRobustness], names: Sequence[str], *, kind: str = "bias"
    ) -> None:
        self.results, self.names, self.kind = list(results), list(names), kind

    @literal_plot
    def plot(self, ax: Axes | None = None) -> RobustnessDisplay:
        ax = axes_or_new(ax)
        for r, name, style in zip(self.results, self.names, (VAL_STYLE, TEST_STYLE, ":", "-.")):
            if len(r.sigmas):
                ax.plot(
                    r.sigmas, 100 * r.relative_curve, linestyle=style, marker=".", label=f"{name}: R = {r.score:.3f}"
                )
                std = np.nan_to_num(np.asarray(getattr(r, "auc_std", ()), dtype=float))  # NaN: exact, no draws
                if self.kind == "noise" and np.any(std):  # the spread of the Monte Carlo draws
                    lo = 100 * (r.auc_curve - std) / r.auc
                    hi = 100 * (r.auc_curve + std) / r.auc
                    ax.fill_between(r.sigmas, lo, hi, alpha=0.15)
        shift = "positives shifted down by σ" if self.kind == "bias" else "Gaussian noise of sd σ"
        ax.set(xlabel=f"σ ({shift})", ylabel="AUC relative to unperturbed (%)", title=f"Robustness to {self.kind}")
        ax.grid(color="lightgrey", linewidth=0.5)
        full_legend(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_score: ArrayLike,
        *,
        kind: str = "bias",
        name: str = "scores",
        ax: Axes | None = None,
        **options: object,
    ) -> RobustnessDisplay:
        """Compute one cohort's robustness curve and plot it; ``options`` go to the metric."""
        fn = {"bias": bias_robustness, "noise": noise_robustness}
        if kind not in fn:
            raise ValueError(f"`kind` must be 'bias' or 'noise', got {kind!r}")
        return cls([fn[kind](y_true, y_score, **options)], [name], kind=kind).plot(ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: object,
        X: ArrayLike,
        y: ArrayLike,
        *,
        response_method: str = "auto",
        pos_label: object = None,
        **kwargs: object,
    ) -> RobustnessDisplay:
        """Score ``X`` with a fitted binary classifier (:func:`~beyondauc.data.estimator_scores`), then
        :meth:`from_predictions` (named after the estimator's class)."""
        labels, scores = estimator_scores(estimator, X, y, response_method=response_method, pos_label=pos_label)
        return cls.from_predictions(labels, scores, **{"name": type(estimator).__name__, **kwargs})


class DriftDisplay:
    """Sensitivity and specificity drift (test minus validation) per threshold.

    Parameters
    ----------
    drift : SensSpecDrift

    Examples
    --------
    >>> from beyondauc.plots import DriftDisplay
    >>> disp = DriftDisplay.from_predictions([0, 1, 0, 1], [0.1, 0.8, 0.4, 0.6], [0, 1, 0, 1], [0.3, 0.9, 0.5, 0.4])
    >>> len(disp.ax_.lines)
    4
    """

    def __init__(self, drift: SensSpecDrift) -> None:
        self.drift = drift

    @literal_plot
    def plot(self, ax: Axes | None = None) -> DriftDisplay:
        ax = axes_or_new(ax)
        d = self.drift
        kw = dict(drawstyle="steps-pre")  # the value at thresholds[k] holds on (thresholds[k-1], thresholds[k]]
        ax.plot(d.thresholds, d.sensitivity_drift, color=POS_COLOR, label="sensitivity (T - V)", **kw)
        ax.plot(d.thresholds, d.specificity_drift, color=NEG_COLOR, label="specificity (T - V)", **kw)
        ax.plot(d.thresholds, d.distance, color="black", label="distance ‖S_T − S_V‖", **kw)
        ax.axhline(0, color="lightgrey", linewidth=0.8)
        ax.set(
            xlabel="threshold (predict positive when score >= threshold)",
            ylabel="drift",
            title=f"Sensitivity/specificity drift: D = {d.score:.4f}",
        )
        full_legend(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_val: ArrayLike,
        s_val: ArrayLike,
        y_test: ArrayLike,
        s_test: ArrayLike,
        *,
        pos_label: object = None,
        ax: Axes | None = None,
    ) -> DriftDisplay:
        """Compute the drift and plot it."""
        return cls(sens_spec_drift(y_val, s_val, y_test, s_test, pos_label=pos_label)).plot(ax)

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
        ax: Axes | None = None,
    ) -> DriftDisplay:
        """Score both cohorts with a fitted binary classifier, then :meth:`from_predictions`."""
        return cls.from_predictions(
            *cohort_scores(estimator, X_val, y_val, X_test, y_test, response_method, pos_label), ax=ax
        )


def cohort_scores(estimator, X_val, y_val, X_test, y_test, response_method, pos_label):
    """(y_val, s_val, y_test, s_test) of a fitted binary classifier on two cohorts, labels 0/1."""
    yv, sv = estimator_scores(
        estimator,
        X_val,
        y_val,
        response_method=response_method,
        pos_label=pos_label,
        name="estimator (validation cohort)",
    )
    yt, st = estimator_scores(
        estimator, X_test, y_test, response_method=response_method, pos_label=pos_label, name="estimator (test cohort)"
    )
    return yv, sv, yt, st
