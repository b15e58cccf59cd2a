"""Display of the comparison over datasets: Demšar's critical-difference diagram."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.intervals import FriedmanResult, friedman_test
from ..metrics.ranking import (
    check_results,
)
from ._base import _literal_plot, report_layout

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    from matplotlib.axes import Axes

__all__ = ["CriticalDifferenceDisplay"]


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

    Examples
    --------
    >>> from beyondauc import expected_accuracy, load_demo
    >>> from beyondauc.plots import CriticalDifferenceDisplay
    >>> res = expected_accuracy(load_demo(), protocol="xdomain")
    >>> disp = CriticalDifferenceDisplay.from_results(res)
    >>> disp.labels
    ['AUC', 'accuracy']
    """

    def __init__(self, average_ranks: pd.Series | Sequence[pd.Series], critical_difference: float | Sequence[float],
                 *, labels: Sequence[str] | None = None, pvalues: Sequence[float] | None = None, alpha: float = 0.05,
                 title: str = "") -> None:
        single = isinstance(average_ranks, pd.Series)
        self.average_ranks = [average_ranks] if single else list(average_ranks)
        cds = [critical_difference] if np.ndim(critical_difference) == 0 else list(critical_difference)
        if len(cds) != len(self.average_ranks):
            raise ValueError(f"`critical_difference` must give one value per ranking ({len(self.average_ranks)}), "
                             f"got {len(cds)}")
        self.critical_difference = [float(c) for c in cds]
        self.labels = [str(r.name) for r in self.average_ranks] if labels is None else [str(x) for x in labels]
        self.pvalues = None if pvalues is None else [float(p) for p in pvalues]
        self.alpha, self.title = float(alpha), title

    @staticmethod
    def _groups(ranks, cd):
        return FriedmanResult("", np.nan, np.nan, np.nan, np.nan, 0, len(ranks), cd, 0.05, ranks).groups()

    @_literal_plot
    def plot(self, ax: Axes | None = None) -> CriticalDifferenceDisplay:
        """Draw every ranking as a CD diagram, stacked top to bottom on ``ax``."""
        if ax is None:
            import matplotlib.pyplot as plt

            k = max(len(r) for r in self.average_ranks)
            _, ax = plt.subplots(figsize=(9, 0.9 + len(self.average_ranks) * (1.2 + 0.28 * k)),
                                 layout=report_layout())
        k = max(len(r) for r in self.average_ranks)
        models = list(dict.fromkeys(m for r in self.average_ranks for m in r.index))
        colors = {m: f"C{i % 10}" for i, m in enumerate(models)}
        literal = dict(usetex=False, parse_math=False)  # model names are user text: no mathtext
        step, top = 0.45, 0.0
        left, right = 1 - 0.12 * max(k - 1, 1), k + 0.12 * max(k - 1, 1)
        for i, (ranks, cd, label) in enumerate(zip(self.average_ranks, self.critical_difference, self.labels)):
            ranks = ranks.sort_values(kind="stable")
            text = label if self.pvalues is None else f"{label} (Friedman p = {self.pvalues[i]:.3g})"
            ax.text((1 + k) / 2, top, text, ha="center", va="bottom", fontsize=10, fontweight="bold", **literal)
            y_cd = top - 0.45
            ax.plot([1, 1 + cd], [y_cd, y_cd], color="black", linewidth=1.2)
            ax.plot([1, 1], [y_cd - 0.08, y_cd + 0.08], [1 + cd] * 2, [y_cd - 0.08, y_cd + 0.08], color="black",
                    linewidth=1.2)
            ax.text(1 + cd / 2, y_cd + 0.06, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
            y_axis = top - 1.05
            ax.plot([1, k], [y_axis, y_axis], color="black", linewidth=1)
            for t in range(1, k + 1):
                ax.plot([t, t], [y_axis, y_axis + 0.1], color="black", linewidth=1)
                ax.text(t, y_axis + 0.13, str(t), ha="center", va="bottom", fontsize=8)
            groups = self._groups(ranks, cd)
            for g, members in enumerate(groups):  # bars of not-significantly-different models
                y_bar = y_axis - 0.2 - 0.15 * g
                ax.plot([ranks[members[0]] - 0.03, ranks[members[-1]] + 0.03], [y_bar, y_bar], color="black",
                        linewidth=3.5, solid_capstyle="round")
            y_names = y_axis - 0.2 - 0.15 * len(groups)
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
                ax.text(x_end + pad * (k - 1 or 1), y, f"{m} ({r:.2f})", ha=ha, va="center", fontsize=9,
                        color=colors[m], **literal)
            top = y_names - step * (max(n_left, len(ranks) - n_left) + 1.4)
        # room for the longest name beside the rank axis: a margin m (data units) holds a label of L points
        # when m * W / (span + 2 m) >= L, W the axes width in points
        longest = max(len(f"{m} (0.00)") for m in models) * 9 * 0.62 + 8
        width = ax.get_window_extent().width * 72.0 / ax.figure.dpi
        span = right - left
        margin = longest * span / max(width - 2 * longest, 0.25 * width)
        ax.set_xlim(left - margin, right + margin)
        ax.set_ylim(top + 0.2, 0.45)
        ax.set_axis_off()
        ax.set_title(self.title or f"Average ranks over datasets\nbars join models not significantly different "
                                   f"(Nemenyi, alpha = {self.alpha:g})", fontsize=9)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_friedman(cls, *results: FriedmanResult, labels: Sequence[str] | None = None, ax: Axes | None = None,
                      title: str = "") -> CriticalDifferenceDisplay:
        """Draw the results of :func:`~beyondauc.friedman_test`, one row each."""
        if not results or not all(isinstance(r, FriedmanResult) for r in results):
            raise ValueError("`results` must be one or more FriedmanResult (from friedman_test)")
        return cls([r.average_ranks for r in results], [r.critical_difference for r in results],
                   labels=labels or [r.value for r in results], pvalues=[r.pvalue for r in results],
                   alpha=results[0].alpha, title=title).plot(ax)

    @classmethod
    def from_results(cls, results: pd.DataFrame, *, value: str = "accuracy", alpha: float = 0.05,
                     ax: Axes | None = None) -> CriticalDifferenceDisplay:
        """Rank the models of :func:`~beyondauc.expected_accuracy` results by AUC and by ``value``; draw both."""
        check_results(results, value)
        by_auc = friedman_test(results, value="auc", alpha=alpha)
        by_value = friedman_test(results, value=value, alpha=alpha)
        where = ""
        if {"protocol", "method"} <= set(results.columns) and len(results):
            where = f" ({results['protocol'].iloc[0]}, {results['method'].iloc[0]})"
        title = (f"AUC ranks vs {value} ranks{where} over {by_value.n_datasets} datasets\nbars join models not "
                 f"significantly different (Nemenyi, alpha = {alpha:g})")
        return cls.from_friedman(by_auc, by_value, labels=["AUC", value], ax=ax, title=title)
