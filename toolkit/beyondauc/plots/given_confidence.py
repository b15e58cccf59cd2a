"""Displays of the confidence as given: its reliability diagram with a band, and its rejection curve."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.calibration.reliability import ece_from_bins
from ..metrics.selective.given_confidence import RejectionCurve, rejection_curve, reliability_band, smooth_ece
from ..utils.formatting import format_number
from ..utils.validation import check_number
from ._base import axes_or_new, full_legend, literal_plot

if TYPE_CHECKING:  # names in annotations only
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

__all__ = ["ConfidenceReliabilityDisplay", "RejectionCurveDisplay"]

_BAND_COLUMNS = ("mean_confidence", "accuracy", "count", "low", "high")


class ConfidenceReliabilityDisplay:
    """Reliability diagram of a given confidence, a Wilson band per bin, the ECE and smooth ECE in the legend.

    Per bin (equal-width or equal-mass), the mean correctness against the
    mean confidence; points on the diagonal are calibrated.  The band of a
    bin is the Wilson score interval of its mean correctness
    (:func:`~beyondauc.reliability_band`): a bin whose band misses the
    diagonal is miscalibrated beyond what its few answers explain.

    Parameters
    ----------
    band : pandas.DataFrame
        :func:`~beyondauc.reliability_band`'s: ``mean_confidence``,
        ``accuracy``, ``count``, ``low``, ``high`` per non-empty bin.
    ece, smooth_ece : float
        Shown in the legend (NaN: not shown).
    strategy : {"uniform", "quantile"}
        The bins, for the legend.
    level : float
        The band's level, for the legend.
    name, title : str

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.plots import ConfidenceReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> confidence = rng.uniform(0.3, 1, size=500)
    >>> correct = rng.uniform(size=500) < confidence ** 2  # overconfident
    >>> disp = ConfidenceReliabilityDisplay.from_predictions(correct, confidence, n_bins=10, name="m")
    >>> disp.ax_.get_legend().get_texts()[1].get_text().startswith("m (ECE = 0.")
    True
    """

    def __init__(
        self,
        band: pd.DataFrame,
        *,
        ece: float = float("nan"),
        smooth_ece: float = float("nan"),
        strategy: str = "uniform",
        level: float = 0.95,
        name: str = "",
        title: str = "",
    ) -> None:
        if not isinstance(band, pd.DataFrame) or not set(_BAND_COLUMNS) <= set(band.columns):
            raise ValueError(
                f"`band` must be a DataFrame with columns {list(_BAND_COLUMNS)} (reliability_band's), "
                f"got {type(band).__name__}"
            )
        self.band, self.ece, self.smooth_ece = band, float(ece), float(smooth_ece)
        self.strategy, self.level, self.name, self.title = strategy, float(level), name, title

    def _label(self):
        numbers = [
            f"{what} = {format_number(value, 3)}"
            for what, value in (("ECE", self.ece), ("smooth ECE", self.smooth_ece))
            if not np.isnan(value)
        ]
        inner = ", ".join(numbers)
        return f"{self.name} ({inner})" if self.name and inner else (self.name or inner or "given confidence")

    @literal_plot
    def plot(self, ax: Axes | None = None, *, ref_line: bool = True, **kwargs: object) -> ConfidenceReliabilityDisplay:
        """Draw the diagonal, the band and the bins; returns self (``ax_``, ``figure_``, ``line_``)."""
        ax = axes_or_new(ax)
        b = self.band
        if ref_line:
            ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfectly calibrated")
        (self.line_,) = ax.plot(b["mean_confidence"], b["accuracy"], marker="o", label=self._label(), **kwargs)
        colour = self.line_.get_color()
        ax.fill_between(b["mean_confidence"], b["low"], b["high"], color=colour, alpha=0.15, linewidth=0)
        ax.vlines(
            b["mean_confidence"],
            b["low"],
            b["high"],
            color=colour,
            alpha=0.6,
            linewidth=1.5,
            label=f"Wilson {self.level:.0%} band (per bin)",
        )
        bins = "equal-mass" if self.strategy == "quantile" else "equal-width"
        ax.set(
            xlim=(-0.02, 1.02),
            ylim=(-0.02, 1.02),
            xlabel=f"mean confidence ({bins} bins)",
            ylabel="mean correctness (per bin)",
            title=self.title or "Reliability of the given confidence",
        )
        ax.grid(color="lightgrey", linewidth=0.5)
        full_legend(ax, loc="upper left", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        correct: ArrayLike,
        confidence: ArrayLike,
        *,
        n_bins: int = 15,
        strategy: str = "uniform",
        level: float = 0.95,
        name: str = "",
        title: str = "",
        ax: Axes | None = None,
        **kwargs: object,
    ) -> ConfidenceReliabilityDisplay:
        """Bin the confidence, compute the band, the binned ECE (same bins) and the smooth ECE, then plot."""
        band = reliability_band(correct, confidence, n_bins=n_bins, strategy=strategy, level=level)
        ece = ece_from_bins(band["mean_confidence"], band["accuracy"], band["count"])  # the ECE of these bins
        return cls(
            band,
            ece=ece,
            smooth_ece=smooth_ece(correct, confidence),
            strategy=strategy,
            level=level,
            name=name,
            title=title,
        ).plot(ax, **kwargs)


class RejectionCurveDisplay:
    """Rejection curve of a given confidence, with the oracle and random curves and PRR in the legend.

    The mean loss (``1 - correct``) of the kept answers as the least
    confident are rejected (:func:`~beyondauc.rejection_curve`).  PRR
    (:func:`~beyondauc.prediction_rejection_ratio`) is the share of the
    area between random and the oracle that the model's curve gains;
    with ``max_rejection < 1`` a line marks the part it is computed on.

    Parameters
    ----------
    curve : RejectionCurve
    max_rejection : float in (0, 1], default=1.0
    name, title : str
    prr : float, optional
        The PRR shown (None: the curve's own).  A curve thinned for storage
        (an evaluation's ``rejection_curves``) passes the exact one.

    Attributes
    ----------
    prr : float

    Examples
    --------
    >>> from beyondauc.plots import RejectionCurveDisplay
    >>> disp = RejectionCurveDisplay.from_predictions([1, 1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], name="m")
    >>> round(disp.prr, 3), disp.ax_.get_legend().get_texts()[0].get_text()
    (0.82, 'm (PRR = 0.820)')
    """

    def __init__(
        self,
        curve: RejectionCurve,
        *,
        max_rejection: float = 1.0,
        name: str = "",
        title: str = "",
        prr: float | None = None,
    ) -> None:
        if not isinstance(curve, RejectionCurve):
            raise ValueError(f"`curve` must be a RejectionCurve (rejection_curve's), got {type(curve).__name__}")
        self.max_rejection = check_number(max_rejection, "max_rejection", low=0, high=1, low_open=True)
        self.curve, self.name, self.title = curve, name, title
        self.prr = curve.prr(self.max_rejection) if prr is None else float(prr)

    @literal_plot
    def plot(self, ax: Axes | None = None, **kwargs: object) -> RejectionCurveDisplay:
        """Draw the model's, the oracle's and the random curve; returns self (``ax_``, ``figure_``, ``line_``)."""
        ax = axes_or_new(ax)
        c = self.curve
        part = "" if self.max_rejection == 1 else f" over the first {self.max_rejection:.0%}"
        label = f"PRR{part} = {format_number(self.prr, 3)}"
        (self.line_,) = ax.plot(c.rejection, c.model, label=f"{self.name} ({label})" if self.name else label, **kwargs)
        ax.plot(c.rejection, c.oracle, color="black", linestyle="--", linewidth=1, label="oracle (by true loss)")
        ax.plot(c.rejection, c.random, color="grey", linestyle=":", linewidth=1, label="random")
        if self.max_rejection < 1:
            ax.axvline(self.max_rejection, color="grey", linewidth=0.8, alpha=0.7)
        ax.set(
            xlim=(0, 1),
            xlabel="share rejected (least confident first)",
            ylabel="mean loss of kept answers (1 - correct)",
            title=self.title or "Prediction rejection curve",
        )
        top = max(float(np.max(c.model)), float(c.random[0]))
        ax.set_ylim(0, 1.05 * top if top > 0 else 1)
        ax.grid(color="lightgrey", linewidth=0.5)
        full_legend(ax, loc="best", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        correct: ArrayLike,
        confidence: ArrayLike,
        *,
        max_rejection: float = 1.0,
        name: str = "",
        title: str = "",
        ax: Axes | None = None,
        **kwargs: object,
    ) -> RejectionCurveDisplay:
        """Compute the rejection curves (:func:`~beyondauc.rejection_curve`) and PRR, then plot."""
        return cls(rejection_curve(correct, confidence), max_rejection=max_rejection, name=name, title=title).plot(
            ax, **kwargs
        )
