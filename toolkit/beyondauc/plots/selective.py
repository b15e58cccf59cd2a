"""Displays of selective answering (Mishra et al.): coverage-accuracy curves and the tolerance view."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..data.estimators import estimator_answers
from ..metrics.selective.band import coverage_accuracy_band
from ..metrics.selective.benchmark import selective_answering
from ..metrics.selective.curves import TOLERANCES, coverage_accuracy_curve
from ..metrics.selective.scores import disca
from ..metrics.uncertainty.bootstrap import check_bootstrap
from ..utils.validation import check_int, check_random_state
from ._base import axes_or_new, full_legend, literal_plot, literal_text, panel_grid

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import FigureBase
    from numpy.typing import ArrayLike

    from ..data.benchmark import Benchmark
    from ..evaluation.container import Evaluation
    from ..metrics.selective.curves import CoverageAccuracyCurve
    from ..metrics.selective.scores import DiSCA

__all__ = ["CoverageAccuracyDisplay", "CoverageAccuracyGridDisplay", "ToleranceDisplay"]


# -- selective answering -------------------------------------------------------------------


class CoverageAccuracyDisplay:
    """Coverage-accuracy curve with a, b(t) and the fluctuations marked.

    Parameters
    ----------
    curve : CoverageAccuracyCurve
        The grid curve DiSCA reads.
    disca : DiSCA or None
        Its a, b and fluctuations are marked.
    exact : CoverageAccuracyCurve or None
        Drawn faintly behind the grid curve.
    name : str
    band : (coverages, low, high) or None, default=None
        Pointwise bootstrap band of the (exact curve's) accuracy at fixed
        coverage levels; ``from_predictions`` / ``from_benchmark`` with
        ``n_bootstrap=B`` compute it (the latter refitting the calibrator on
        every replicate).  Drawn shaded when given.

    Examples
    --------
    >>> from beyondauc.plots import CoverageAccuracyDisplay
    >>> disp = CoverageAccuracyDisplay.from_predictions([0.95, 0.9, 0.8, 0.7], [True, False, True, True])
    >>> disp.ax_.get_xlabel()
    'coverage (share answered)'
    >>> disp = CoverageAccuracyDisplay.from_predictions([0.95, 0.9, 0.8, 0.7], [True, False, True, True],
    ...                                                 n_bootstrap=50)
    >>> len(disp.band[0]) == len(disp.band[1]) == len(disp.band[2])
    True
    """

    def __init__(
        self,
        curve: CoverageAccuracyCurve,
        *,
        disca: DiSCA | None = None,
        exact: CoverageAccuracyCurve | None = None,
        name: str = "",
        band: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.curve, self.disca, self.exact, self.name = curve, disca, exact, name
        self.band = band

    @literal_plot
    def plot(self, ax: Axes | None = None, *, mark: bool = True, legend: bool = True) -> CoverageAccuracyDisplay:
        """Draw on ``ax``; ``mark``: a, b and the fluctuations; ``legend``: the panel's own legend (a grid
        of panels has one for all: :class:`CoverageAccuracyGridDisplay`)."""
        ax = axes_or_new(ax)
        c = self.curve
        if self.band is not None:
            cov, low, high = self.band
            ax.fill_between(
                cov, low, high, step="pre", color="tab:blue", alpha=0.2, linewidth=0, label="bootstrap band (pointwise)"
            )
        if self.exact is not None:
            ax.plot(
                self.exact.coverage,
                self.exact.accuracy,
                color="lightgrey",
                linewidth=1,
                label="exact (every confidence)",
            )
        label = f"{self.name} " if self.name else ""
        (self.line_,) = ax.plot(c.coverage, c.accuracy, marker=".", label=f"{label}area {c.score:.3f}")
        d = self.disca
        if mark and d is not None:

            def at(conf):
                k = int(np.argmin(np.abs(c.confidence - conf)))
                return c.coverage[k], c.accuracy[k]

            xb, yb = at(d.b)
            ax.plot(
                [xb], [yb], "s", color="darkorange", markersize=8, label=f"b = {d.b:.3f} (accuracy < {d.tolerance:g})"
            )
            xa, ya = at(d.a)
            ax.plot([xa], [ya], "v", color="crimson", markersize=9, zorder=5, label=f"a = {d.a:.3f} (first error)")
            ax.axhline(d.tolerance, color="darkorange", linestyle=":", linewidth=1)
            f = d.fluctuations
            if len(f):
                ax.plot(f["coverage_2"], f["d2"], "^", color="purple", markersize=6, label=f"{len(f)} fluctuation(s)")
            ax.set_title(f"Selective answering: DiSCA = {d.score:.3f}")
        else:
            ax.set_title("Selective answering")
        ax.set(xlabel="coverage (share answered)", ylabel="accuracy of answered", xlim=(0, 1.02))
        ax.grid(color="lightgrey", linewidth=0.5)
        if legend:
            full_legend(ax, loc="best", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        confidence: ArrayLike,
        correct: ArrayLike,
        *,
        tolerance: float = 0.9,
        weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
        resolution: float = 0.01,
        name: str = "",
        n_bootstrap: int = 0,
        confidence_level: float = 0.95,
        random_state: int | None = 0,
        ax: Axes | None = None,
    ) -> CoverageAccuracyDisplay:
        """Compute DiSCA and both curves (and the band with ``n_bootstrap`` > 0), then plot.

        The band is :func:`~beyondauc.metrics.selective.band.coverage_accuracy_band`."""
        n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
        seed = check_random_state(random_state)
        d = disca(confidence, correct, tolerance=tolerance, weights=weights, resolution=resolution)
        band = None
        if n_bootstrap:
            band = coverage_accuracy_band(
                confidence, correct, n_bootstrap=n_bootstrap, confidence_level=confidence_level, random_state=seed
            )
        exact = coverage_accuracy_curve(confidence, correct)
        return cls(d.curve, disca=d, exact=exact, name=name, band=band).plot(ax)

    @classmethod
    def from_estimator(cls, estimator: object, X: ArrayLike, y: ArrayLike, **kwargs: object) -> CoverageAccuracyDisplay:
        """The answers of a fitted classifier of any number of classes on ``(X, y)``
        (:func:`~beyondauc.data.estimator_answers`: confidence = largest ``predict_proba``), then
        :meth:`from_predictions` (named after the estimator's class)."""
        confidence, correct = estimator_answers(estimator, X, y)
        return cls.from_predictions(confidence, correct, **{"name": type(estimator).__name__, **kwargs})

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        model: str,
        dataset: str,
        *,
        where: str = "in",
        ax: Axes | None = None,
        **kwargs: object,
    ) -> CoverageAccuracyDisplay:
        """Plot the curve an :class:`~beyondauc.Evaluation` stored (``where="ood"``: on the OOD dataset)."""
        return cls._stored(evaluation, model, dataset, where=where, name=kwargs.pop("name", model)).plot(ax, **kwargs)

    @classmethod
    def _stored(cls, evaluation, model, dataset, *, where="in", name=None):
        """The display of the curve an Evaluation stored, not drawn yet (the exact curve only in distribution)."""
        d = evaluation.disca(model, dataset, where=where)
        exact = evaluation.coverage_curve(model, dataset, curve="exact") if where == "in" else None
        return cls(d.curve, disca=d, exact=exact, name=model if name is None else name)

    @classmethod
    def from_benchmark(
        cls, bench: Benchmark, model: str, dataset: str, *, ax: Axes | None = None, **options: object
    ) -> CoverageAccuracyDisplay:
        """Run :func:`~beyondauc.selective_answering` and plot its curve (with its band if ``n_bootstrap``)."""
        r = selective_answering(bench, model, dataset, **options)
        return cls(r.disca.curve, disca=r.disca, exact=r.curve, name=model, band=r.accuracy_band).plot(ax)


class CoverageAccuracyGridDisplay:
    """One model's coverage-accuracy curves, one panel per dataset, with one legend for all.

    Each panel is a :class:`CoverageAccuracyDisplay` without its own legend:
    its title gives the dataset, DiSCA, the curve's area, a, b and the number
    of fluctuations (the numbers a panel's legend would repeat), and one
    legend, in a panel of its own after the last dataset, says what the
    lines and marks are. A legend per panel covered part of its curve, and
    was a third of the figure's drawing time.

    Parameters
    ----------
    displays : dict
        Dataset name -> :class:`CoverageAccuracyDisplay` (with its DiSCA).
    model : str

    Examples
    --------
    >>> import beyondauc as ba
    >>> from beyondauc.plots import CoverageAccuracyGridDisplay
    >>> ev = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], noise_repeats=2,
    ...                  n_bootstrap=0)
    >>> disp = CoverageAccuracyGridDisplay.from_evaluation(ev, "svm")
    >>> [ax.get_title().split(":")[0] for ax in disp.axes_]
    ['wine', 'diabetes']
    >>> disp.legend_.get_texts()[0].get_text()
    'exact curve (every confidence)'
    """

    def __init__(self, displays: dict[str, CoverageAccuracyDisplay], *, model: str = "") -> None:
        self.displays, self.model = dict(displays), model

    @literal_plot
    def plot(self, figure: FigureBase | None = None, *, ncols: int = 3) -> CoverageAccuracyGridDisplay:
        """Draw on ``figure`` (its layout is left to the caller), or on a new one sized to the panels."""
        ncols = check_int(ncols, "ncols", minimum=1)
        names = list(self.displays)
        figure, axes, _ = panel_grid(figure, len(names) + 1, ncols, (3.9, 3.3))  # + the legend's panel
        axes = axes.ravel()
        tolerance, band = self._panels(axes, names)
        axes[len(names)].axis("off")
        color = self.displays[names[0]].line_.get_color() if names else "C0"
        self.legend_ = axes[len(names)].legend(
            handles=self._handles(color, band, tolerance),
            loc="center",
            fontsize=9,
            frameon=False,
            title="Each panel",
            title_fontproperties={"size": 9},
        )
        literal_text(axes[len(names)])  # the legend names the model; its panel is not one of axes_
        self.figure_, self.axes_ = figure, list(axes[: len(names)])
        return self

    def _panels(self, axes, names):
        """One dataset's curve per panel, titled with its numbers; returns (the tolerance, whether a band is drawn)."""
        tolerance, band = None, False
        for ax, name in zip(axes, names):
            disp = self.displays[name].plot(ax, legend=False)
            d = disp.disca
            if d is None:
                ax.set_title(f"{name}: area {disp.curve.score:.3f}", fontsize=9)
                continue
            tolerance, band = d.tolerance, band or disp.band is not None
            n = len(d.fluctuations)
            ax.set_title(
                f"{name}: DiSCA = {d.score:.3f}\narea {disp.curve.score:.3f} · a = {d.a:.3f} · "
                f"b = {d.b:.3f} · {n} fluctuation{'' if n == 1 else 's'}",
                fontsize=9,
            )
        return tolerance, band

    def _handles(self, color, band, tolerance):
        """The legend's entries, one for each mark the panels use."""
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        model = f"{self.model} on the resolution grid" if self.model else "curve on the resolution grid"
        handles = [
            Line2D([], [], color="lightgrey", linewidth=1, label="exact curve (every confidence)"),
            Line2D([], [], color=color, marker=".", label=model),
        ]
        if band:
            handles.append(Patch(color="tab:blue", alpha=0.2, linewidth=0, label="bootstrap band (pointwise)"))
        if tolerance is None:
            return handles
        return handles + [
            Line2D([], [], color="darkorange", linestyle=":", linewidth=1, label=f"tolerance {tolerance:g}"),
            Line2D(
                [],
                [],
                linestyle="",
                color="darkorange",
                marker="s",
                markersize=8,
                label=f"b: accuracy falls below {tolerance:g}",
            ),
            Line2D([], [], linestyle="", color="crimson", marker="v", markersize=9, label="a: the first error"),
            Line2D(
                [],
                [],
                linestyle="",
                color="purple",
                marker="^",
                markersize=6,
                label="fluctuation: accuracy rises again",
            ),
        ]

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        model: str,
        *,
        datasets: Sequence[str] | None = None,
        figure: FigureBase | None = None,
        **kwargs: object,
    ) -> CoverageAccuracyGridDisplay:
        """The curves an :class:`~beyondauc.Evaluation` stored for ``model`` on each in-distribution dataset
        (nothing recomputed)."""
        evaluation.check_model(model)
        if datasets is None:
            datasets = list(dict.fromkeys(evaluation.table("selective")["dataset"]))
        displays = {dataset: CoverageAccuracyDisplay._stored(evaluation, model, dataset) for dataset in datasets}
        return cls(displays, model=model).plot(figure, **kwargs)


class ToleranceDisplay:
    """b (or DiSCA) over the tolerance grid 0.95 ... 0.55, one line per model.

    Parameters
    ----------
    tables : dict
        Name -> a DiSCA ``b_table``.
    value : {"b", "disca"}

    Examples
    --------
    >>> from beyondauc.plots import ToleranceDisplay
    >>> disp = ToleranceDisplay.from_predictions([0.95, 0.9, 0.8, 0.7], [True, False, True, True], name="m")
    >>> len(disp.ax_.lines)
    1
    """

    def __init__(self, tables: dict[str, pd.DataFrame], *, value: str = "b") -> None:
        if value not in ("b", "disca"):
            raise ValueError(f"`value` must be 'b' or 'disca', got {value!r}")
        self.tables, self.value = dict(tables), value

    @literal_plot
    def plot(self, ax: Axes | None = None) -> ToleranceDisplay:
        ax = axes_or_new(ax)
        for name, tab in self.tables.items():
            ax.plot(tab["tolerance"], tab[self.value], marker="o", label=str(name))
        # a tick at every tolerance, a label at every other one: nine labels overlap on a small panel
        ax.set_xticks(list(TOLERANCES), [f"{t:g}" if i % 2 == 0 else "" for i, t in enumerate(TOLERANCES)])
        ax.set_xlim(max(TOLERANCES) + 0.02, min(TOLERANCES) - 0.02)
        ax.set(
            xlabel="tolerance t (worst admissible accuracy)",
            ylabel="b (confidence where accuracy drops below)" if self.value == "b" else "DiSCA",
            title="b over tolerance" if self.value == "b" else "DiSCA over tolerance",
        )
        ax.grid(color="lightgrey", linewidth=0.5)
        full_legend(ax, fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        confidence: ArrayLike,
        correct: ArrayLike,
        *,
        name: str = "model",
        value: str = "b",
        ax: Axes | None = None,
        **options: object,
    ) -> ToleranceDisplay:
        """One model's table from its confidences; ``options`` go to :func:`~beyondauc.disca`."""
        return cls({name: disca(confidence, correct, **options).b_table}, value=value).plot(ax)

    @classmethod
    def from_estimator(cls, estimator: object, X: ArrayLike, y: ArrayLike, **kwargs: object) -> ToleranceDisplay:
        """The answers of a fitted classifier on ``(X, y)`` (:func:`~beyondauc.data.estimator_answers`), then
        :meth:`from_predictions` (named after the estimator's class)."""
        confidence, correct = estimator_answers(estimator, X, y)
        return cls.from_predictions(confidence, correct, **{"name": type(estimator).__name__, **kwargs})

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        dataset: str,
        *,
        models: Sequence[str] | None = None,
        value: str = "b",
        where: str = "in",
        ax: Axes | None = None,
    ) -> ToleranceDisplay:
        """Every model's stored table on one dataset of an :class:`~beyondauc.Evaluation`."""
        t = evaluation.table("tolerance")
        t = t[(t["dataset"] == dataset) & (t["where"] == where)]
        models = evaluation.models if models is None else list(models)
        tables = {m: t[t["model"] == m] for m in models if (t["model"] == m).any()}
        return cls(tables, value=value).plot(ax)

    @classmethod
    def from_benchmark(
        cls,
        bench: Benchmark,
        dataset: str,
        *,
        models: Sequence[str] | None = None,
        value: str = "b",
        ax: Axes | None = None,
        **options: object,
    ) -> ToleranceDisplay:
        """Every model's table on one dataset; ``options`` go to :func:`~beyondauc.selective_answering`."""
        models = bench.models if models is None else list(models)
        tables = {m: selective_answering(bench, m, dataset, **options).disca.b_table for m in models}
        return cls(tables, value=value).plot(ax)
