"""Displays of the comparison of models: Demšar's critical-difference diagram and the matrix of pairwise
differences."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.calibration.ranking import (
    check_results,
)
from ..metrics.uncertainty.rank_tests import FriedmanResult, friedman_test
from ._base import literal_plot, report_layout

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from matplotlib.axes import Axes

    from ..evaluation.container import Evaluation

__all__ = ["CriticalDifferenceDisplay", "PairwiseDifferenceDisplay"]


def _fit_names(ax, models, left, right):
    """Set the x limits so that the longest name fits beside the rank axis.

    A margin m (data units) holds a label of L points when m * W / (span + 2 m) >= L, W the axes width in points.
    """
    longest = max(len(f"{m} (0.00)") for m in models) * 9 * 0.62 + 8
    width = ax.get_window_extent().width * 72.0 / ax.figure.dpi
    span = right - left
    margin = longest * span / max(width - 2 * longest, 0.25 * width)
    ax.set_xlim(left - margin, right + margin)


#: Text options for model names, which are user text: no mathtext.
_LITERAL = dict(usetex=False, parse_math=False)


class CriticalDifferenceDisplay:
    """Critical-difference diagrams (Demšar 2006): average ranks over datasets, one row per ranking.

    Each row is a rank axis (1 = best, on the left) with every model at its
    average rank over the datasets; thick bars join groups of models whose
    average ranks differ by less than Nemenyi's critical difference (CD,
    the bracket above the axis) -- models under one bar are not significantly
    different.  :meth:`from_results` draws the AUC ranking above the ranking
    by the deployed score (e.g. accuracy after calibration) on one axes, each
    model in the same colour in both: a model that moves out of its AUC group
    (or into another one) changes rank beyond noise; one that stays inside
    the bars it shares does not.

    Parameters
    ----------
    average_ranks : pandas.Series or list of pandas.Series
        Average rank of each model (index: model names), one Series per row.
    critical_difference : float or list of float
        Nemenyi's CD of each row.
    labels : list of str, optional
        Name of each row (default: the Series' names).
    pvalues : list of float, optional
        Friedman p-value of each row, shown with its label.
    alpha : float, default=0.05
        Significance level of the CD (for the legend).
    title : str

    Attributes
    ----------
    cd_lines_ : list of matplotlib.lines.Line2D
        The CD bracket of each row: from rank 1 to rank 1 + CD on the rank axis.
    groups_ : list of list of tuple of str
        The groups of each row (:meth:`~beyondauc.metrics.uncertainty.rank_tests.FriedmanResult.groups`).
    group_lines_ : list of list of matplotlib.lines.Line2D
        The bar of each group, from its best model's average rank to its worst's (0.03 beyond each).

    Examples
    --------
    >>> from beyondauc import expected_accuracy, load_demo
    >>> from beyondauc.plots import CriticalDifferenceDisplay
    >>> res = expected_accuracy(load_demo(), protocol="xdomain")
    >>> disp = CriticalDifferenceDisplay.from_results(res)
    >>> disp.labels
    ['AUC', 'accuracy']
    """

    def __init__(
        self,
        average_ranks: pd.Series | Sequence[pd.Series],
        critical_difference: float | Sequence[float],
        *,
        labels: Sequence[str] | None = None,
        pvalues: Sequence[float] | None = None,
        alpha: float = 0.05,
        title: str = "",
    ) -> None:
        single = isinstance(average_ranks, pd.Series)
        self.average_ranks = [average_ranks] if single else list(average_ranks)
        cds = [critical_difference] if np.ndim(critical_difference) == 0 else list(critical_difference)
        if len(cds) != len(self.average_ranks):
            raise ValueError(
                f"`critical_difference` must give one value per ranking ({len(self.average_ranks)}), got {len(cds)}"
            )
        self.critical_difference = [float(c) for c in cds]
        self.labels = [str(r.name) for r in self.average_ranks] if labels is None else [str(x) for x in labels]
        self.pvalues = None if pvalues is None else [float(p) for p in pvalues]
        self.alpha, self.title = float(alpha), title

    @staticmethod
    def _groups(ranks, cd):
        return FriedmanResult("", np.nan, np.nan, np.nan, np.nan, 0, len(ranks), cd, 0.05, ranks).groups()

    @literal_plot
    def plot(self, ax: Axes | None = None) -> CriticalDifferenceDisplay:
        """Draw every ranking as a CD diagram, stacked top to bottom on ``ax``."""
        if ax is None:
            import matplotlib.pyplot as plt

            k = max(len(r) for r in self.average_ranks)
            _, ax = plt.subplots(figsize=(9, 0.9 + len(self.average_ranks) * (1.2 + 0.28 * k)), layout=report_layout())
        k = max(len(r) for r in self.average_ranks)
        models = list(dict.fromkeys(m for r in self.average_ranks for m in r.index))
        colors = {m: f"C{i % 10}" for i, m in enumerate(models)}
        step, top = 0.45, 0.0
        self.cd_lines_, self.group_lines_, self.groups_ = [], [], []
        left, right = 1 - 0.12 * max(k - 1, 1), k + 0.12 * max(k - 1, 1)
        for i, (ranks, cd, label) in enumerate(zip(self.average_ranks, self.critical_difference, self.labels)):
            ranks = ranks.sort_values(kind="stable")
            text = label if self.pvalues is None else f"{label} (Friedman p = {self.pvalues[i]:.3g})"
            y_axis = self._draw_scale(ax, text, top, cd, k)
            groups = self._draw_groups(ax, ranks, cd, y_axis)
            y_names = y_axis - 0.2 - 0.15 * len(groups)
            n_left = (len(ranks) + 1) // 2
            self._draw_names(ax, ranks, (y_axis, y_names, step), k, colors, (left, right))
            top = y_names - step * (max(n_left, len(ranks) - n_left) + 1.4)
        _fit_names(ax, models, left, right)
        ax.set_ylim(top + 0.2, 0.45)
        ax.set_axis_off()
        ax.set_title(
            self.title
            or f"Average ranks over datasets\nbars join models not significantly different "
            f"(Nemenyi, alpha = {self.alpha:g})",
            fontsize=9,
        )
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _draw_scale(self, ax, text, top, cd, k):
        """A ranking's title, its critical-difference bar and its rank axis 1..k; returns the axis' height."""
        ax.text((1 + k) / 2, top, text, ha="center", va="bottom", fontsize=10, fontweight="bold", **_LITERAL)
        y_cd = top - 0.45
        self.cd_lines_.append(ax.plot([1, 1 + cd], [y_cd, y_cd], color="black", linewidth=1.2)[0])
        ax.plot(
            [1, 1],
            [y_cd - 0.08, y_cd + 0.08],
            [1 + cd] * 2,
            [y_cd - 0.08, y_cd + 0.08],
            color="black",
            linewidth=1.2,
        )
        ax.text(1 + cd / 2, y_cd + 0.06, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
        y_axis = top - 1.05
        ax.plot([1, k], [y_axis, y_axis], color="black", linewidth=1)
        for t in range(1, k + 1):
            ax.plot([t, t], [y_axis, y_axis + 0.1], color="black", linewidth=1)
            ax.text(t, y_axis + 0.13, str(t), ha="center", va="bottom", fontsize=8)
        return y_axis

    def _draw_groups(self, ax, ranks, cd, y_axis):
        """The bars joining models not significantly different, under the axis; returns the groups."""
        groups = self._groups(ranks, cd)
        self.groups_.append(groups)
        self.group_lines_.append([])
        for g, members in enumerate(groups):  # bars of not-significantly-different models
            y_bar = y_axis - 0.2 - 0.15 * g
            self.group_lines_[-1].append(
                ax.plot(
                    [ranks[members[0]] - 0.03, ranks[members[-1]] + 0.03],
                    [y_bar, y_bar],
                    color="black",
                    linewidth=3.5,
                    solid_capstyle="round",
                )[0]
            )
        return groups

    @staticmethod
    def _draw_names(ax, ranks, heights, k, colors, ends):
        """Each model's name and mean rank, joined to its place on the axis: the best half on the left, the
        worst half on the right, the best and the worst highest. ``heights``: (axis, names, step)."""
        (y_axis, y_names, step), (left, right) = heights, ends
        n_left = (len(ranks) + 1) // 2
        names, values = list(ranks.index), ranks.to_numpy()
        for j, (m, r) in enumerate(zip(names, values)):  # a loop over models
            if j < n_left:  # best half: names on the left, the best highest
                depth, x_end, ha = j + 1, left, "right"
            else:  # worst half: names on the right, the worst highest
                depth, x_end, ha = len(ranks) - j, right, "left"
            y = y_names - step * depth
            ax.plot([r, r, x_end], [y_axis, y, y], color=colors[m], linewidth=1.2)
            ax.plot([r], [y_axis], marker="o", markersize=4, color=colors[m])
            pad = -0.04 if ha == "right" else 0.04
            ax.text(
                x_end + pad * (k - 1 or 1),
                y,
                f"{m} ({r:.2f})",
                ha=ha,
                va="center",
                fontsize=9,
                color=colors[m],
                **_LITERAL,
            )

    @classmethod
    def from_friedman(
        cls, *results: FriedmanResult, labels: Sequence[str] | None = None, ax: Axes | None = None, title: str = ""
    ) -> CriticalDifferenceDisplay:
        """Draw the results of :func:`~beyondauc.friedman_test`, one row each."""
        if not results or not all(isinstance(r, FriedmanResult) for r in results):
            raise ValueError("`results` must be one or more FriedmanResult (from friedman_test)")
        return cls(
            [r.average_ranks for r in results],
            [r.critical_difference for r in results],
            labels=labels or [r.value for r in results],
            pvalues=[r.pvalue for r in results],
            alpha=results[0].alpha,
            title=title,
        ).plot(ax)

    @classmethod
    def from_evaluation(cls, evaluation: Evaluation, *, ax: Axes | None = None) -> CriticalDifferenceDisplay:
        """Draw the Friedman tests an :class:`~beyondauc.Evaluation` stored (AUC above the deployed accuracy).

        Nothing is recomputed: the ranks, the CD and the p-values are those of
        its ``friedman`` table (headline protocol x method).  An evaluation of a
        single model, or of a single dataset, has no Friedman test: a one-line
        error says so.
        """
        table = evaluation.table("friedman")
        if not len(table):
            raise ValueError(
                "the evaluation has no Friedman test: it needs at least 2 models on 2 datasets "
                f"(it has {len(evaluation.models)} models on {len(evaluation.datasets)} datasets)"
            )
        values = list(dict.fromkeys(table["value"]))
        rows = [table[table["value"] == v] for v in values]
        ranks = [
            pd.Series(r["average_rank"].to_numpy(float), index=list(r["model"]), name=v) for r, v in zip(rows, values)
        ]
        p = evaluation.parameters
        alpha = float(rows[0]["alpha"].iloc[0])
        title = (
            f"AUC ranks vs accuracy ranks ({p['protocol']}, {p['method']}) over "
            f"{int(rows[-1]['n_datasets'].iloc[0])} datasets\nbars join models not significantly different "
            f"(Nemenyi, alpha = {alpha:g})"
        )
        return cls(
            ranks,
            [float(r["critical_difference"].iloc[0]) for r in rows],
            labels=["AUC" if v == "auc" else v for v in values],
            pvalues=[float(r["pvalue"].iloc[0]) for r in rows],
            alpha=alpha,
            title=title,
        ).plot(ax)

    @classmethod
    def from_results(
        cls, results: pd.DataFrame, *, value: str = "accuracy", alpha: float = 0.05, ax: Axes | None = None
    ) -> CriticalDifferenceDisplay:
        """Rank the models of :func:`~beyondauc.expected_accuracy` results by AUC and by ``value``; draw both."""
        check_results(results, value)
        by_auc = friedman_test(results, value="auc", alpha=alpha)
        by_value = friedman_test(results, value=value, alpha=alpha)
        where = ""
        if {"protocol", "method"} <= set(results.columns) and len(results):
            where = f" ({results['protocol'].iloc[0]}, {results['method'].iloc[0]})"
        title = (
            f"AUC ranks vs {value} ranks{where} over {by_value.n_datasets} datasets\nbars join models not "
            f"significantly different (Nemenyi, alpha = {alpha:g})"
        )
        return cls.from_friedman(by_auc, by_value, labels=["AUC", value], ax=ax, title=title)


class PairwiseDifferenceDisplay:
    """The matrix of pairwise differences: row model minus column model, with the pairs that differ marked.

    Each cell shows the difference of a score (by default the deployed
    accuracy of the headline setting) between the row's model and the
    column's, coloured from blue (the row is better) to red (worse); a cell
    whose interval of the difference excludes 0 is marked ``*`` (and drawn
    bold).  Models are ordered best first (by their mean difference to the
    others, which orders them as their scores do), so the upper right
    triangle holds the better models' margins.  With many models (more than
    ``annotate_max``) the numbers are left out and a marked cell gets a dot.

    Parameters
    ----------
    difference, low, high : pandas.DataFrame
        Square tables (index: row models, columns: the same models): the
        difference row - column and its interval; the diagonal is not drawn.
    score : str, default="accuracy"
        Name of the score, for the colour bar.
    dataset : str, default="mean"
        Where the differences come from, for the title.
    confidence_level : float, default=0.95
        Level of the intervals, for the title.
    annotate_max : int, default=12
        Write the numbers in the cells up to this many models.
    title : str

    Attributes
    ----------
    models : list of str
        The models, best first (rows and columns in this order).
    significant : pandas.DataFrame
        Whether each cell's interval excludes 0.
    im_ : matplotlib.image.AxesImage
        The matrix.
    text_ : numpy.ndarray of matplotlib.text.Text, or None
        Each cell's number (None on the diagonal; None in all when not annotated).
    colorbar_ : matplotlib.colorbar.Colorbar

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.plots import PairwiseDifferenceDisplay
    >>> rows = [("a", "b", 0.10, 0.04, 0.16), ("b", "a", -0.10, -0.16, -0.04),
    ...         ("a", "c", 0.02, -0.01, 0.05), ("c", "a", -0.02, -0.05, 0.01),
    ...         ("b", "c", -0.08, -0.12, -0.03), ("c", "b", 0.08, 0.03, 0.12)]
    >>> table = pd.DataFrame(rows, columns=["model", "other", "difference", "low", "high"]).assign(dataset="mean")
    >>> disp = PairwiseDifferenceDisplay.from_table(table)
    >>> disp.models
    ['a', 'c', 'b']
    >>> bool(disp.significant.loc["a", "b"]), bool(disp.significant.loc["a", "c"])
    (True, False)
    """

    def __init__(
        self,
        difference: pd.DataFrame,
        low: pd.DataFrame,
        high: pd.DataFrame,
        *,
        score: str = "accuracy",
        dataset: str = "mean",
        confidence_level: float = 0.95,
        annotate_max: int = 12,
        title: str = "",
    ) -> None:
        for name, t in (("difference", difference), ("low", low), ("high", high)):
            if list(t.index) != list(difference.index) or list(t.columns) != list(difference.index):
                raise ValueError(
                    f"`{name}` must be a square table with the same models as rows and columns as "
                    f"`difference` ({list(difference.index)})"
                )
        order = difference.mean(axis=1, skipna=True).sort_values(ascending=False, kind="stable").index
        self.models = [str(m) for m in order]
        self.difference, self.low, self.high = (t.loc[order, order].astype(float) for t in (difference, low, high))
        self.significant = (self.low > 0) | (self.high < 0)
        self.score, self.dataset, self.title = score, dataset, title
        self.confidence_level, self.annotate_max = float(confidence_level), int(annotate_max)

    @literal_plot
    def plot(self, ax: Axes | None = None) -> PairwiseDifferenceDisplay:
        """Draw the matrix on ``ax`` (a new figure sized to the number of models if None), with a colour bar."""
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedFormatter, FixedLocator

        n = len(self.models)
        if ax is None:
            side = min(max(4.5, 0.55 * n + 2.5), 16.0)
            _, ax = plt.subplots(figsize=(side + 1.0, side), layout=report_layout())
        d = self.difference.to_numpy(copy=True)
        np.fill_diagonal(d, np.nan)
        vmax = float(np.nanmax(np.abs(d))) if np.isfinite(d).any() else 1.0
        cmap = plt.get_cmap("RdBu").with_extremes(bad="#eeeeee")  # the diagonal: light grey
        self.im_ = ax.imshow(
            d, cmap=cmap, vmin=-(vmax or 1.0), vmax=vmax or 1.0, aspect="equal", interpolation="nearest"
        )
        # a cell's side in points (about 0.8 of the axes' shorter side over n): labels and dots fit the rows
        cell = (
            0.8
            * min(
                ax.get_position().width * ax.figure.get_figwidth(), ax.get_position().height * ax.figure.get_figheight()
            )
            * 72.0
            / max(n, 1)
        )
        fontsize = 9 if n <= self.annotate_max else float(np.clip(0.6 * cell, 5.0, 8.0))
        for axis in (ax.xaxis, ax.yaxis):  # a FixedFormatter: the names are then drawn literally (_literal_text)
            axis.set_major_locator(FixedLocator(np.arange(n)))
            axis.set_major_formatter(FixedFormatter(self.models))
        ax.tick_params(labelsize=fontsize)
        few = n <= self.annotate_max
        for label in ax.get_xticklabels():
            label.set(rotation=45 if few else 90, ha="right" if few else "center", rotation_mode="anchor")
        ax.set_xlabel("column model", fontsize=9)
        ax.set_ylabel("row model", fontsize=9)
        ax.tick_params(length=0)
        sig = self.significant.to_numpy() & np.isfinite(d)
        self.text_ = None
        if n <= self.annotate_max:
            self.text_ = self._annotate(ax, d, sig, vmax)
        elif sig.any():  # many models: a dot marks a cell whose interval excludes 0 (one artist)
            rows, cols = np.nonzero(sig)
            ax.scatter(
                cols, rows, s=float(np.clip((0.15 * cell) ** 2, 2.0, 16.0)), color="black", marker="o", linewidths=0
            )
        level = f"{100 * self.confidence_level:g}%"
        mark = "*" if n <= self.annotate_max else "a dot"
        where = "mean over datasets" if self.dataset == "mean" else self.dataset
        ax.set_title(
            self.title or f"{self.score} difference, row - column ({where})\n{mark}: its {level} interval excludes 0",
            fontsize=9,
        )
        self.colorbar_ = ax.figure.colorbar(self.im_, ax=ax, shrink=0.8, label=f"{self.score} difference")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _annotate(self, ax, d, sig, vmax):
        """Write each cell's difference (``*`` and bold where significant); returns the (n, n) array of texts."""
        n = len(self.models)
        texts = np.full((n, n), None, dtype=object)
        for i, j in zip(*np.nonzero(np.isfinite(d))):  # a loop over cells (models squared, at most annotate_max²)
            value = d[i, j]
            color = "white" if abs(value) > 0.6 * vmax else "black"
            texts[i, j] = ax.text(
                j,
                i,
                f"{value:+.3f}{'*' if sig[i, j] else ''}",
                ha="center",
                va="center",
                fontsize=7.5,
                color=color,
                fontweight="bold" if sig[i, j] else "normal",
            )
        return texts

    @classmethod
    def from_table(
        cls,
        pairwise: pd.DataFrame,
        *,
        dataset: str = "mean",
        score: str = "accuracy",
        confidence_level: float = 0.95,
        annotate_max: int = 12,
    ) -> PairwiseDifferenceDisplay:
        """The rows of ``dataset`` of a pairwise table (:meth:`~beyondauc.GridBootstrap.pairwise`), not drawn."""
        missing = {"dataset", "model", "other", "difference", "low", "high"} - set(pairwise.columns)
        if missing:
            raise ValueError(f"`pairwise` must have the columns of GridBootstrap.pairwise; missing {sorted(missing)}")
        rows = pairwise[pairwise["dataset"] == dataset]
        if not len(rows):
            raise ValueError(f"`dataset` must be 'mean' or a dataset of the pairwise table, got {dataset!r}")
        models = list(dict.fromkeys([*rows["model"], *rows["other"]]))
        wide = {
            v: rows.pivot(index="model", columns="other", values=v).reindex(index=models, columns=models)
            for v in ("difference", "low", "high")
        }
        return cls(
            wide["difference"],
            wide["low"],
            wide["high"],
            score=score,
            dataset=dataset,
            confidence_level=confidence_level,
            annotate_max=annotate_max,
        )

    @classmethod
    def from_evaluation(
        cls, evaluation: Evaluation, *, dataset: str = "mean", annotate_max: int = 12, ax: Axes | None = None
    ) -> PairwiseDifferenceDisplay:
        """Draw the accuracy differences an :class:`~beyondauc.Evaluation` stored (its grid bootstrap's
        ``pairwise`` table, headline protocol x method); an evaluation without the bootstrap has none."""
        if "pairwise" not in evaluation.tables:
            raise ValueError(
                "the evaluation has no pairwise differences: they come from the bootstrap "
                "(evaluate with n_bootstrap > 0)"
            )
        return cls.from_table(
            evaluation.table("pairwise"),
            dataset=dataset,
            score="accuracy",
            confidence_level=evaluation.parameters["confidence_level"],
            annotate_max=annotate_max,
        ).plot(ax)
