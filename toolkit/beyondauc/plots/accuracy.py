"""Displays of AUC vs expected accuracy (Opitz): AUC against accuracy, rank slopes, score histograms."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..metrics.calibration.ranking import (
    CLIP_QUANTILES,
    check_results,
    rank_changes,
    score_histograms,
)
from ..utils.formatting import format_range
from ..utils.validation import check_int
from ._base import (
    NEG_COLOR,
    POS_COLOR,
    axes_or_new,
    full_legend,
    literal_plot,
    panel_grid,
    spread_labels,
)

if TYPE_CHECKING:  # names in annotations only
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import FigureBase
    from numpy.typing import ArrayLike

    from ..data.benchmark import Benchmark
    from ..evaluation.container import Evaluation
    from ..metrics.calibration.grid_bootstrap import GridBootstrap

__all__ = ["AUCAccuracyDisplay", "RankSlopeDisplay", "ScoreHistogramsDisplay"]


# -- AUC vs expected accuracy --------------------------------------------------------------


class AUCAccuracyDisplay:
    """AUC against the expected accuracy (or kappa) after calibration.

    One point per model and dataset, from the results of
    :func:`~beyondauc.expected_accuracy`.  With ``model`` that model's points
    are coloured and labelled with their dataset, the others grey: a point
    far below the others at the same AUC is a dataset where the model loses
    more than its peers once it must commit to a threshold chosen on other
    data (Opitz, "Schroedinger's Threshold").  For accuracy the dotted line
    is accuracy = AUC.

    Parameters
    ----------
    auc, value : array-like of float
        AUC and score of each point.
    models, datasets : array-like of str
        The model and the dataset of each point.
    model : str or None
        The model to highlight; None colours every model.
    score : str, default="accuracy"
        Name of the score on the y axis.
    title : str
    auc_interval, value_interval : pair of array-like, optional
        (low, high) of each point's AUC and score (e.g. the bootstrap's
        ``auc_low``/``auc_high``); drawn as error bars.

    Examples
    --------
    >>> from beyondauc import load_demo, expected_accuracy
    >>> from beyondauc.plots import AUCAccuracyDisplay
    >>> two = load_demo().subset(datasets=["breast_cancer", "wine"])
    >>> AUCAccuracyDisplay.from_results(expected_accuracy(two, n_bootstrap=20)).errorbars_ is not None
    True
    >>> res = expected_accuracy(load_demo(), protocol="xdomain")
    >>> disp = AUCAccuracyDisplay.from_results(res, model="svm")
    >>> len(disp.ax_.texts)  # one label per dataset of the highlighted model
    8
    """

    def __init__(
        self,
        auc: ArrayLike,
        value: ArrayLike,
        models: ArrayLike,
        datasets: ArrayLike,
        *,
        model: str | None = None,
        score: str = "accuracy",
        title: str = "",
        auc_interval: tuple[ArrayLike, ArrayLike] | None = None,
        value_interval: tuple[ArrayLike, ArrayLike] | None = None,
    ) -> None:
        self.auc = np.asarray(auc, dtype=float)
        self.value = np.asarray(value, dtype=float)
        self.models = np.asarray(models, dtype=object)
        self.datasets = np.asarray(datasets, dtype=object)
        self.model, self.score, self.title = model, score, title
        self.auc_interval = None if auc_interval is None else np.asarray(auc_interval, dtype=float)
        self.value_interval = None if value_interval is None else np.asarray(value_interval, dtype=float)

    @staticmethod
    def _err(center, interval):
        if interval is None:
            return None
        return np.nan_to_num(np.abs(np.stack([center - interval[0], interval[1] - center])), nan=0.0)

    @literal_plot
    def plot(self, ax: Axes | None = None, *, annotate: bool = True) -> AUCAccuracyDisplay:
        ax = axes_or_new(ax)
        self.errorbars_ = None
        if self.auc_interval is not None or self.value_interval is not None:
            self.errorbars_ = ax.errorbar(
                self.auc,
                self.value,
                xerr=self._err(self.auc, self.auc_interval),
                yerr=self._err(self.value, self.value_interval),
                fmt="none",
                ecolor="silver",
                elinewidth=0.8,
                zorder=1,
            )
        if self.model is None:
            for m in dict.fromkeys(self.models):
                sel = self.models == m
                ax.scatter(self.auc[sel], self.value[sel], s=20, label=str(m))
        else:
            sel = self.models == self.model
            if (~sel).any():
                ax.scatter(self.auc[~sel], self.value[~sel], s=16, color="lightgrey", label="other models")
            ax.scatter(self.auc[sel], self.value[sel], s=40, color="tab:blue", zorder=3, label=str(self.model))
            if annotate:
                ok = sel & np.isfinite(self.auc) & np.isfinite(self.value)
                spread_labels(ax, self.auc[ok], self.value[ok], [str(d) for d in self.datasets[ok]])
        if self.score in ("accuracy", "balanced_accuracy"):
            ax.axline((0.5, 0.5), slope=1.0, color="grey", linestyle=":", linewidth=1, label=f"{self.score} = AUC")
        ax.set(xlabel="AUC", ylabel=f"expected {self.score}", title=self.title or f"AUC vs expected {self.score}")
        ax.grid(color="lightgrey", linewidth=0.5)
        full_legend(ax, fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        *,
        model: str | None = None,
        score: str = "accuracy",
        ax: Axes | None = None,
        **kwargs: object,
    ) -> AUCAccuracyDisplay:
        """The headline protocol x method of an :class:`~beyondauc.Evaluation`."""
        return cls.from_results(evaluation.headline(), model=model, score=score, ax=ax, **kwargs)

    @classmethod
    def from_results(
        cls,
        results: pd.DataFrame,
        *,
        model: str | None = None,
        score: str = "accuracy",
        ax: Axes | None = None,
        **kwargs: object,
    ) -> AUCAccuracyDisplay:
        """Take the points from :func:`~beyondauc.expected_accuracy` results (one protocol x method)."""
        check_results(results, score)
        if model is not None and model not in set(results["model"]):
            raise ValueError(f"`model` must be one of {list(dict.fromkeys(results['model']))}, got {model!r}")
        title = f"AUC vs expected {score}"
        if {"protocol", "method"} <= set(results.columns) and len(results):
            title += f"\n({results['protocol'].iloc[0]}, {results['method'].iloc[0]})"
        cols = set(results.columns)
        auc_iv = (results["auc_low"], results["auc_high"]) if {"auc_low", "auc_high"} <= cols else None
        val_iv = (
            (results[f"{score}_low"], results[f"{score}_high"]) if {f"{score}_low", f"{score}_high"} <= cols else None
        )
        return cls(
            results["auc"],
            results[score],
            results["model"],
            results["dataset"],
            model=model,
            score=score,
            title=title,
            auc_interval=auc_iv,
            value_interval=val_iv,
        ).plot(ax, **kwargs)


class RankSlopeDisplay:
    """Rank by AUC (left) against rank by expected accuracy (right), one line per model.

    Green lines climb once the models must commit to a threshold, red lines
    drop (the AUC flattered them), grey ones keep their place.  Models that
    share a rank share one label.  With bootstrap rank intervals, each end
    carries its interval as a vertical bar, and a change that is not
    significant (its bootstrap ``p_value`` above 1 - confidence level) is
    drawn dashed and grey.

    Parameters
    ----------
    models : array-like of str
    auc_ranks, ranks : array-like of float
        Rank by AUC and rank by ``score`` (1 = best; NaN = no rank, not drawn).
    score : str, default="accuracy"
    highlight : str or None
        A model drawn bold, the others faded.
    title : str
    auc_rank_interval, rank_interval : pair of array-like, optional
        (low, high) of each model's ranks over bootstrap replicates
        (:meth:`~beyondauc.GridBootstrap.rank_stability`).
    significant : array-like of bool, optional
        Whether each model's change survives the bootstrap.

    Examples
    --------
    >>> from beyondauc.plots import RankSlopeDisplay
    >>> disp = RankSlopeDisplay(["m1", "m2", "m3"], [1, 2, 3], [2, 1, 3]).plot()
    >>> [line.get_color() for line in disp.ax_.lines[:3]]
    ['tab:red', 'tab:green', 'grey']
    >>> disp = RankSlopeDisplay(["m1", "m2"], [1, 2], [2, 1], significant=[True, False]).plot()
    >>> [line.get_linestyle() for line in disp.ax_.lines[:2]]
    ['-', '--']
    """

    def __init__(
        self,
        models: ArrayLike,
        auc_ranks: ArrayLike,
        ranks: ArrayLike,
        *,
        score: str = "accuracy",
        highlight: str | None = None,
        title: str = "",
        auc_rank_interval: tuple[ArrayLike, ArrayLike] | None = None,
        rank_interval: tuple[ArrayLike, ArrayLike] | None = None,
        significant: ArrayLike | None = None,
    ) -> None:
        self.models = [str(m) for m in np.asarray(models, dtype=object).ravel()]
        self.auc_ranks = np.asarray(auc_ranks, dtype=float)
        self.ranks = np.asarray(ranks, dtype=float)
        self.score, self.highlight, self.title = score, highlight, title
        self.auc_rank_interval = None if auc_rank_interval is None else np.asarray(auc_rank_interval, dtype=float)
        self.rank_interval = None if rank_interval is None else np.asarray(rank_interval, dtype=float)
        self.significant = None if significant is None else np.asarray(significant, dtype=bool)

    @literal_plot
    def plot(self, ax: Axes | None = None) -> RankSlopeDisplay:
        from matplotlib.lines import Line2D

        ax = axes_or_new(ax)
        ok = np.isfinite(self.auc_ranks) & np.isfinite(self.ranks)
        self._draw_slopes(ax, ok)
        self._draw_rank_intervals(ax, ok)
        self._draw_names(ax, ok)
        n = int(max(self.auc_ranks[ok].max(), self.ranks[ok].max())) if ok.any() else 1
        ax.set_xticks([0, 1], ["AUC rank", f"{self.score} rank"])
        ax.set_yticks(range(1, n + 1))
        ax.set(
            xlim=(-0.9, 1.9),
            ylim=(n + 1.2, 0.5),
            ylabel="rank (1 = best)",  # room for the legend
            title=self.title or f"Rank by AUC vs by {self.score}",
        )
        handles = [
            Line2D([], [], color=c, label=t)
            for c, t in (("tab:green", "climbs"), ("tab:red", "drops"), ("grey", "same"))
        ]
        if self.significant is not None:
            handles.append(Line2D([], [], color="grey", linestyle="--", label="not significant"))
        ax.legend(handles=handles, loc="lower center", ncols=3, fontsize=8, frameon=False)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _draw_slopes(self, ax, ok):
        """One line per model from its AUC rank to its rank by the score: green climbs, red drops, grey same
        (or not significant, dashed); the highlighted model bold, the others faded."""
        sig = np.ones(len(self.models), dtype=bool) if self.significant is None else self.significant
        for _k, (m, a, r, keep, s) in enumerate(zip(self.models, self.auc_ranks, self.ranks, ok, sig)):
            if not keep:
                continue
            color = "tab:green" if r < a else "tab:red" if r > a else "grey"
            if not s and r != a:
                color = "grey"
            bold = m == self.highlight
            faded = self.highlight is not None and not bold
            ax.plot(
                [0, 1],
                [a, r],
                color=color,
                marker="o",
                linewidth=3.0 if bold else 1.5,
                linestyle="-" if s or r == a else "--",
                alpha=0.3 if faded else 0.9,
                zorder=3 if bold else 2,
            )

    def _draw_rank_intervals(self, ax, ok):
        """The rank intervals: a thin bar beside each end, offset per model so bars do not overlap."""
        n_ok = max(int(ok.sum()), 1)
        for x, iv, side in ((0, self.auc_rank_interval, -1), (1, self.rank_interval, 1)):
            if iv is None:
                continue
            for k in np.flatnonzero(ok & np.isfinite(iv[0]) & np.isfinite(iv[1])):
                dx = side * (0.02 + 0.012 * (k % n_ok))
                ax.plot([x + dx, x + dx], [iv[0][k], iv[1][k]], color="silver", linewidth=1.0, zorder=1)

    def _draw_names(self, ax, ok):
        """The models' names at each end, those sharing a rank on one line."""
        for x, ranks, ha in ((0, self.auc_ranks, "right"), (1, self.ranks, "left")):
            names = {}
            for m, r, keep in zip(self.models, ranks, ok):
                if keep:
                    names.setdefault(float(r), []).append(m)
            for r, ms in names.items():
                ax.text(
                    x + (0.05 if x else -0.05),
                    r,
                    ", ".join(ms),
                    ha=ha,
                    va="center",
                    fontsize=8,
                    fontweight="bold" if self.highlight in ms else "normal",
                )

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        *,
        score: str = "accuracy",
        dataset: str = "mean",
        highlight: str | None = None,
        ax: Axes | None = None,
    ) -> RankSlopeDisplay:
        """The stored rank changes of an :class:`~beyondauc.Evaluation` (headline protocol x method),
        with their bootstrap rank intervals when the evaluation has them."""
        ch = evaluation.table("rank_changes")
        return cls._from_changes(ch[ch["score"] == score], score, dataset, highlight, ax)

    @classmethod
    def from_results(
        cls,
        results: pd.DataFrame,
        *,
        score: str = "accuracy",
        dataset: str = "mean",
        highlight: str | None = None,
        ax: Axes | None = None,
        bootstrap: GridBootstrap | None = None,
    ) -> RankSlopeDisplay:
        """Rank the models of :func:`~beyondauc.expected_accuracy` results on ``dataset`` (or their mean).

        With ``bootstrap`` (a :class:`~beyondauc.GridBootstrap` of the same
        benchmark), draw the rank intervals and mark non-significant changes.
        """
        return cls._from_changes(rank_changes(results, score=score, bootstrap=bootstrap), score, dataset, highlight, ax)

    @classmethod
    def _from_changes(cls, ch, score, dataset, highlight, ax):
        ch = ch[ch["dataset"] == dataset]
        if not len(ch):
            raise ValueError(f"`dataset` must be 'mean' or a dataset of the results, got {dataset!r}")
        where = "mean over datasets" if dataset == "mean" else str(dataset)
        iv = {}
        if "rank_low" in ch.columns:
            iv = dict(
                auc_rank_interval=(ch["auc_rank_low"], ch["auc_rank_high"]),
                rank_interval=(ch["rank_low"], ch["rank_high"]),
                significant=ch["significant"].to_numpy(bool),
            )
        return cls(
            ch["model"],
            ch["auc_rank"],
            ch["rank"],
            score=score,
            highlight=highlight,
            title=f"Rank by AUC vs by {score}\n({where})",
            **iv,
        ).plot(ax)


class ScoreHistogramsDisplay:
    """One model's score histograms per class, one panel per dataset plus all pooled.

    The paper's Figures 3-4 (Opitz, "Schroedinger's Threshold"): the bins are
    shared by every panel (they span the model's scores on the whole
    benchmark), so a class that moves between datasets shows as a shift
    between panels, and one threshold cannot suit every dataset.  Far
    outliers are counted in the end bins (see
    :func:`~beyondauc.score_histograms`): each panel says how many, and the
    title gives the total and the range.

    Parameters
    ----------
    histograms : pandas.DataFrame
        Rows of one model from :func:`~beyondauc.score_histograms`.
    model : str, optional
        Name in the title (default: the table's model).

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.plots import ScoreHistogramsDisplay
    >>> disp = ScoreHistogramsDisplay.from_benchmark(load_demo(), "knn", bins=10)
    >>> len(disp.axes_), disp.axes_[-1].get_title()
    (9, 'all')
    """

    def __init__(self, histograms: pd.DataFrame, *, model: str | None = None) -> None:
        self.histograms = histograms
        if model is None:
            models = list(dict.fromkeys(histograms["model"]))
            if len(models) != 1:
                raise ValueError(f"`histograms` must hold one model, got {models}")
            model = models[0]
        self.model = model

    @literal_plot
    def plot(
        self,
        figure: FigureBase | None = None,
        *,
        ncols: int = 4,
        density: bool = True,
    ) -> ScoreHistogramsDisplay:
        """Draw on ``figure`` (its layout is left to the caller), or on a new one sized to the panels."""
        ncols = check_int(ncols, "ncols", minimum=1)
        h = self.histograms
        names = list(dict.fromkeys(h["dataset"]))
        figure, axes, ncols = panel_grid(figure, len(names), ncols, (4, 2.4), extra_height=0.6)
        column = "density" if density else "count"
        for ax, name in zip(axes.flat, names):
            for label, color, text in ((0, NEG_COLOR, "negative"), (1, POS_COLOR, "positive")):
                part = h[(h["dataset"] == name) & (h["label"] == label)].sort_values("bin")
                if not len(part):
                    continue
                edges = np.r_[part["left"].to_numpy(), part["right"].to_numpy()[-1]]
                ax.stairs(
                    np.nan_to_num(part[column].to_numpy(dtype=float)),
                    edges,
                    fill=True,
                    alpha=0.6,
                    color=color,
                    label=text,
                )
            clipped = int(h.loc[h["dataset"] == name, "clipped"].sum()) if "clipped" in h else 0
            if clipped:
                ax.text(
                    0.98,
                    0.96,
                    f"{clipped} clipped",
                    transform=ax.transAxes,
                    ha="right",
                    va="top",
                    fontsize=8,
                    color="#555555",
                )
            ax.set_title(str(name))
        full_legend(axes.flat[0], fontsize=8)
        for ax in axes.flat[max(len(names) - ncols, 0) : len(names)]:  # the lowest panel of each column
            ax.set_xlabel("score")
        for ax in axes[:, 0]:
            ax.set_ylabel("share of class" if density else "examples")
        title = f"{self.model}: scores by class on each dataset (shared bins)"
        pooled = h[h["dataset"] == names[-1]] if "clipped" in h else None
        if pooled is not None and pooled["clipped"].sum() > 0:
            lo, hi = pooled["left"].min(), pooled["right"].max()
            title += (
                f"\n{int(pooled['clipped'].sum())} of {int(pooled['count'].sum())} scores outside "
                f"{format_range(lo, hi)} are counted in the end bins"
            )
        figure.suptitle(title)
        self.figure_, self.axes_ = figure, list(axes.flat[: len(names)])
        return self

    @classmethod
    def from_evaluation(
        cls, evaluation: Evaluation, model: str, *, figure: FigureBase | None = None, **kwargs: object
    ) -> ScoreHistogramsDisplay:
        """One model's stored histograms of an :class:`~beyondauc.Evaluation`."""
        evaluation.check_model(model)
        h = evaluation.table("histograms")
        return cls(h[h["model"] == model], model=model).plot(figure, **kwargs)

    @classmethod
    def from_benchmark(
        cls,
        bench: Benchmark,
        model: str,
        *,
        bins: int = 20,
        clip_quantiles: tuple[float, float] | None = CLIP_QUANTILES,
        figure: FigureBase | None = None,
        **kwargs: object,
    ) -> ScoreHistogramsDisplay:
        """Run :func:`~beyondauc.score_histograms` for ``model`` and draw every dataset."""
        table = score_histograms(bench, bins=bins, models=[model], clip_quantiles=clip_quantiles)
        return cls(table, model=model).plot(figure, **kwargs)
