"""Abstention with a guarantee: where a certified threshold lands on the dataset it is applied to."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..utils.validation import check_int
from ._base import literal_plot, literal_text, panel_grid

if TYPE_CHECKING:
    from collections.abc import Sequence

    from matplotlib.figure import FigureBase
    from numpy.typing import ArrayLike

    from ..evaluation.container import Evaluation

__all__ = ["RiskControlDisplay"]

_COLORS = {"xdomain": "tab:blue", "outdomain": "tab:purple", "indata": "tab:green", "given": "tab:blue"}


class RiskControlDisplay:
    """Risk against coverage on each dataset, with the target line and each certified threshold's point.

    Each panel is one dataset. For each calibration protocol a curve of its
    colour is the dataset's whole risk-coverage curve (risk = the mean loss of
    the answered examples, as the answers are added from the most confident
    down) under the very calibrator that certified the protocol's threshold,
    read from the evaluation's ``risk_control_curves``: the threshold's point on
    the dataset lies on it. A hollow circle marks the certified threshold on its
    calibration data (coverage, risk) and a filled one the same threshold on the
    dataset (target coverage, realised risk), joined by a thin line: a filled
    point above the dashed target line is a guarantee that did not hold. A
    protocol that certified no threshold is named in the panel.

    Parameters
    ----------
    table : DataFrame
        The ``risk_control`` rows of one model at one target risk.
    target_risk : float
    model : str
    curves : DataFrame, optional
        The model's risk-coverage curves (columns ``dataset``, ``protocol``, ``coverage``, ``risk``; an
        evaluation's ``risk_control_curves`` rows); without them only the points are drawn.

    Examples
    --------
    >>> import beyondauc as ba
    >>> from beyondauc.plots import RiskControlDisplay
    >>> ev = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], noise_repeats=2,
    ...                  n_bootstrap=0)
    >>> disp = RiskControlDisplay.from_evaluation(ev, "svm")
    >>> [ax.get_title().split(":")[0] for ax in disp.axes_]
    ['wine', 'diabetes']
    """

    def __init__(
        self, table: pd.DataFrame, *, target_risk: float, model: str = "", curves: pd.DataFrame | None = None
    ) -> None:
        self.table, self.target_risk, self.model, self.curves = table, float(target_risk), model, curves

    @literal_plot
    def plot(self, figure: FigureBase | None = None, *, ncols: int = 4) -> RiskControlDisplay:
        """Draw on ``figure`` (its layout is left to the caller), or on a new one sized to the panels."""
        ncols = check_int(ncols, "ncols", minimum=1)
        names = list(dict.fromkeys(self.table["dataset"]))
        figure, axes, _ = panel_grid(figure, len(names) + 1, ncols, (3.2, 2.9))  # + the legend's panel
        axes = axes.ravel()
        for ax, name in zip(axes, names):
            self._panel(ax, name, self.table[self.table["dataset"] == name])
        self.legend_ = self._legend(axes[len(names)])
        self.figure_, self.axes_ = figure, list(axes[: len(names)])
        return self

    def _panel(self, ax, name, rows):
        """One dataset: the target line, and each protocol's calibration and target points."""
        ax.axhline(self.target_risk, color="crimson", linestyle="--", linewidth=1)
        uncertified, top = [], self.target_risk
        for protocol in dict.fromkeys(rows["protocol"]):
            top = np.nanmax([top, self._curve(ax, name, protocol)])
        for r in rows.to_dict("records"):
            if not r["certified"]:
                uncertified.append(r["protocol"])
                continue
            color = _COLORS.get(r["protocol"], "tab:grey")
            ax.plot(
                [r["calibration_coverage"], r["target_coverage"]],
                [r["calibration_risk"], r["realised_risk"]],
                color=color,
                linewidth=0.8,
                alpha=0.6,
            )
            ax.plot(r["calibration_coverage"], r["calibration_risk"], "o", mfc="white", mec=color, markersize=6)
            ax.plot(r["target_coverage"], r["realised_risk"], "o", color=color, markersize=6)
            top = np.nanmax([top, r["realised_risk"], r["calibration_risk"]])
        if uncertified:
            ax.text(
                0.02,
                0.97,
                "not certified: " + ", ".join(uncertified),
                transform=ax.transAxes,
                fontsize=7,
                va="top",
                color="#555",
            )
        held = rows["held"].dropna().astype(bool)
        ax.set_xlim(-0.02, 1.02)
        upper = max(0.05, 1.25 * top)
        ax.set_ylim(
            -0.02 * upper, upper
        )  # a curve at risk 0 (the most confident answers all right) shows above the axis
        ax.set_title(f"{name}: held {int(held.sum())}/{len(held)}", fontsize=9)
        ax.set_xlabel("coverage", fontsize=8)
        ax.set_ylabel("risk of the answered", fontsize=8)
        ax.tick_params(labelsize=7)

    def _curve(self, ax, name, protocol):
        """The dataset's risk-coverage curve under ``protocol``'s calibrator; its highest risk (0 without one)."""
        if self.curves is None:
            return 0.0
        curve = self.curves[(self.curves["dataset"] == name) & (self.curves["protocol"] == protocol)]
        if not len(curve):
            return 0.0
        curve = curve.sort_values("coverage", kind="stable")
        risk = curve["risk"].to_numpy(float)
        color = _COLORS.get(protocol, "tab:grey")
        ax.plot(curve["coverage"].to_numpy(float), risk, color=color, linewidth=1.1, alpha=0.55, zorder=1)
        return float(np.nanmax(risk, initial=0.0))

    def _legend(self, ax):
        from matplotlib.lines import Line2D

        ax.axis("off")
        handles = [Line2D([], [], color="crimson", linestyle="--", label=f"target risk {self.target_risk:g}")]
        curves = self.curves is not None and len(self.curves) > 0
        for protocol in dict.fromkeys(self.table["protocol"]):
            color = _COLORS.get(protocol, "tab:grey")
            if curves:
                handles.append(Line2D([], [], color=color, alpha=0.55, label=f"{protocol}: risk-coverage curve"))
            handles += [
                Line2D(
                    [],
                    [],
                    color=color,
                    marker="o",
                    mfc="white",
                    linestyle="",
                    label=f"{protocol}: on its calibration data",
                ),
                Line2D([], [], color=color, marker="o", linestyle="", label=f"{protocol}: on the dataset"),
            ]
        legend = ax.legend(
            handles=handles,
            loc="center",
            fontsize=8,
            frameon=False,
            title=f"{self.model}: certified thresholds" if self.model else "certified thresholds",
            title_fontproperties={"size": 8},
        )
        literal_text(ax)  # the legend names the model; its panel is not one of axes_
        return legend

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Evaluation,
        model: str,
        *,
        target_risk: float | None = None,
        datasets: Sequence[str] | None = None,
        figure: FigureBase | None = None,
        **kwargs: object,
    ) -> RiskControlDisplay:
        """The ``risk_control`` rows an :class:`~beyondauc.Evaluation` stored for ``model`` at ``target_risk``
        (default: the headline risk the verdict reads; nothing recomputed)."""
        from ..evaluation.abstention import headline_risk, rows_at_risk

        evaluation.check_model(model)
        table = evaluation.table("risk_control")
        risk = headline_risk(evaluation.parameters["target_risks"]) if target_risk is None else float(target_risk)
        rows = rows_at_risk(table, risk, model=model)
        if datasets is not None:
            rows = rows[rows["dataset"].isin(list(datasets))]
        curves = None
        if "risk_control_curves" in evaluation.tables:  # an evaluation saved before the curves were stored has none
            c = evaluation.table("risk_control_curves")
            curves = c[c["model"] == model]
        return cls(rows.reset_index(drop=True), target_risk=risk, model=model, curves=curves).plot(figure, **kwargs)

    @classmethod
    def from_predictions(
        cls,
        correct_calibration: ArrayLike,
        confidence_calibration: ArrayLike,
        correct: ArrayLike,
        confidence: ArrayLike,
        *,
        risk: float,
        delta: float = 0.05,
        method: str = "ltt",
        name: str = "target",
        figure: FigureBase | None = None,
        **kwargs: object,
    ) -> RiskControlDisplay:
        """Certify a threshold on calibration answers and draw it on the target's answers (one panel, ``name``).

        The threshold of :func:`~beyondauc.risk_controlled_threshold` on ``correct_calibration`` and
        ``confidence_calibration``; on ``correct`` and ``confidence`` the target's risk-coverage curve
        (:func:`~beyondauc.metrics.selective.risk_control_benchmark.risk_coverage_points`) and the
        threshold's realised risk and coverage.

        Examples
        --------
        >>> import numpy as np
        >>> from beyondauc.plots import RiskControlDisplay
        >>> rng = np.random.default_rng(0)
        >>> conf = rng.uniform(size=4000)
        >>> ok = rng.uniform(size=4000) < 0.5 + 0.5 * conf
        >>> disp = RiskControlDisplay.from_predictions(ok[:2000], conf[:2000], ok[2000:], conf[2000:], risk=0.1)
        >>> bool(disp.table["certified"].iloc[0]), disp.axes_[0].get_title().split(":")[0]
        (True, 'target')
        """
        from ..metrics.selective.risk_control import risk_controlled_threshold
        from ..metrics.selective.risk_control_benchmark import realised_risk, risk_coverage_points

        rc = risk_controlled_threshold(
            correct_calibration, confidence_calibration, risk=risk, delta=delta, method=method
        )
        realised, coverage = realised_risk(correct, confidence, rc.threshold)
        held = pd.NA if not rc.certified or np.isnan(realised) else bool(realised <= risk)
        row = {
            "dataset": name,
            "protocol": "given",
            "certified": rc.certified,
            "calibration_coverage": rc.coverage,
            "calibration_risk": rc.risk,
            "target_coverage": coverage,
            "realised_risk": realised,
        }
        table = pd.DataFrame([row]).assign(held=pd.array([held], dtype="boolean"))
        _, cov, r = risk_coverage_points(correct, confidence)
        curves = pd.DataFrame({"dataset": name, "protocol": "given", "coverage": cov, "risk": r})
        return cls(table, target_risk=risk, curves=curves).plot(figure, **kwargs)
