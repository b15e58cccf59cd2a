"""Display of calibration quality: the reliability diagram with its ECE."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..data.estimators import estimator_scores
from ..metrics.calibration.reliability import CalibrationErrors, ece_from_bins, reliability_bins
from ._base import axes_or_new, literal_plot

if TYPE_CHECKING:  # names in annotations only
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

__all__ = ["ReliabilityDisplay"]


# -- calibration quality ------------------------------------------------------------------


class ReliabilityDisplay:
    """Reliability diagram: per probability bin, the fraction of positives against the mean probability.

    Points on the diagonal are calibrated; the legend gives the expected
    calibration error (:func:`~beyondauc.expected_calibration_error`) over
    the same bins.  Bins as :func:`sklearn.calibration.calibration_curve`
    (``strategy="uniform"``); empty bins are not drawn.

    Parameters
    ----------
    mean_predicted, fraction_positive, count : array-like
        Per non-empty bin: mean probability, fraction of positives, examples.
    name : str
        Label of the curve (the ECE is appended).
    title : str

    Attributes
    ----------
    ece : float
        ``sum_b count_b / n * |fraction_positive_b - mean_predicted_b|``.

    Examples
    --------
    >>> from beyondauc.plots import ReliabilityDisplay
    >>> disp = ReliabilityDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], n_bins=2, name="m")
    >>> round(disp.ece, 3), disp.ax_.get_legend().get_texts()[1].get_text()
    (0.225, 'm (ECE = 0.225)')

    From the reliability table of :func:`~beyondauc.calibration_error_table`:

    >>> from beyondauc import load_demo, calibration_error_table
    >>> res = calibration_error_table(load_demo(), protocols=["xdomain"], methods=["isotonic"])
    >>> disp = ReliabilityDisplay.from_table(res, model="svm", dataset="wine", protocol="xdomain",
    ...                                      method="isotonic")
    >>> bool(abs(disp.ece - res.ece.query("model == 'svm' and dataset == 'wine'")["ece"].item()) < 1e-12)
    True
    """

    def __init__(
        self,
        mean_predicted: ArrayLike,
        fraction_positive: ArrayLike,
        count: ArrayLike,
        *,
        name: str = "",
        title: str = "",
    ) -> None:
        self.mean_predicted = np.asarray(mean_predicted, dtype=float)
        self.fraction_positive = np.asarray(fraction_positive, dtype=float)
        self.count = np.asarray(count)
        self.name, self.title = name, title
        self.ece = ece_from_bins(self.mean_predicted, self.fraction_positive, self.count) if len(self.count) else np.nan

    @literal_plot
    def plot(
        self, ax: Axes | None = None, *, ref_line: bool = True, marker: str = "s", **kwargs: object
    ) -> ReliabilityDisplay:
        """Draw the diagonal and the bins; returns self (``ax_``, ``figure_``, ``line_``)."""
        ax = axes_or_new(ax)
        if ref_line:
            ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfectly calibrated")
        label = f"{self.name} (ECE = {self.ece:.3f})" if self.name else f"ECE = {self.ece:.3f}"
        (self.line_,) = ax.plot(self.mean_predicted, self.fraction_positive, marker=marker, label=label, **kwargs)
        ax.set(
            xlim=(-0.02, 1.02),
            ylim=(-0.02, 1.02),
            xlabel="mean predicted probability (per bin)",
            ylabel="fraction of positives (per bin)",
            title=self.title or "Reliability diagram",
        )
        ax.grid(color="lightgrey", linewidth=0.5)
        ax.legend(loc="upper left", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        n_bins: int = 15,
        pos_label: object = None,
        name: str = "",
        title: str = "",
        ax: Axes | None = None,
        **kwargs: object,
    ) -> ReliabilityDisplay:
        """Bin probabilities of the positive class against binary labels, then plot."""
        _, mean_predicted, fraction_positive, count = reliability_bins(
            y_true, y_prob, n_bins=n_bins, pos_label=pos_label
        )
        return cls(mean_predicted, fraction_positive, count, name=name, title=title).plot(ax, **kwargs)

    @classmethod
    def from_estimator(
        cls, estimator: object, X: ArrayLike, y: ArrayLike, *, pos_label: object = None, **kwargs: object
    ) -> ReliabilityDisplay:
        """The positive class's ``predict_proba`` of a fitted binary classifier on ``X`` (as scikit-learn's
        ``CalibrationDisplay``), then :meth:`from_predictions` (named after the estimator's class)."""
        labels, proba = estimator_scores(estimator, X, y, response_method="predict_proba", pos_label=pos_label)
        return cls.from_predictions(labels, proba, **{"name": type(estimator).__name__, **kwargs})

    @classmethod
    def from_table(
        cls,
        table: CalibrationErrors | pd.DataFrame,
        *,
        model: str,
        dataset: str,
        protocol: str,
        method: str,
        name: str | None = None,
        ax: Axes | None = None,
        **kwargs: object,
    ) -> ReliabilityDisplay:
        """Plot one cell of :func:`~beyondauc.calibration_error_table` (its result or its ``reliability`` frame)."""
        if isinstance(table, CalibrationErrors):
            table = table.reliability
        need = {"protocol", "method", "dataset", "model", "mean_predicted", "fraction_positive", "count"}
        if not isinstance(table, pd.DataFrame) or not need <= set(table.columns):
            raise ValueError(
                "`table` must be a CalibrationErrors or its reliability DataFrame with columns "
                f"{sorted(need)}, got {type(table).__name__}"
            )
        for key, value in (("protocol", protocol), ("method", method), ("dataset", dataset), ("model", model)):
            if not (table[key] == value).any():  # vectorised: a set of the column walks it value by value
                raise ValueError(f"`{key}` must be one of {list(dict.fromkeys(table[key]))}, got {value!r}")
        cell = table[
            (table["protocol"] == protocol)
            & (table["method"] == method)
            & (table["dataset"] == dataset)
            & (table["model"] == model)
        ]
        return cls(
            cell["mean_predicted"],
            cell["fraction_positive"],
            cell["count"],
            name=model if name is None else name,
            title=f"Reliability: {dataset} ({protocol}, {method})",
        ).plot(ax, **kwargs)
