"""Display objects for the diagnostics and selective-answering results.

scikit-learn style: ``__init__`` stores computed data, ``plot(ax=None)``
draws and returns ``self`` with ``ax_`` and ``figure_`` set, and the
``from_predictions`` / ``from_benchmark`` class methods compute, then plot.
Nothing here calls ``plt.show()`` or changes ``rcParams``; styles are passed
to each artist.

* :class:`ThresholdROCDisplay` -- ROC curves of V and T coloured by threshold,
  sharing colour limits;
* :class:`ClassHistogramDisplay` -- score histograms per class;
* :class:`RobustnessDisplay` -- bias or noise robustness curves;
* :class:`DriftDisplay` -- sensitivity/specificity drift per threshold;
* :class:`WassersteinDisplay` -- the 2x2 Wasserstein matrix;
* :class:`DiagnosticsDashboard` -- all of the above in one figure;
* :class:`CoverageAccuracyDisplay` -- coverage-accuracy curve with a, b(t)
  and the fluctuations marked;
* :class:`ToleranceDisplay` -- b (or DiSCA) over the tolerance grid;
* :class:`AUCAccuracyDisplay` -- AUC against the expected accuracy (or kappa)
  after calibration, one point per model and dataset;
* :class:`RankSlopeDisplay` -- rank by AUC against rank by expected accuracy;
* :class:`ScoreHistogramsDisplay` -- one model's score histograms per class on
  every dataset.

Names are text
--------------
Model, dataset and domain names come from users' files, and matplotlib would
read ``$...$`` in them as mathtext (or hand them to TeX under
``text.usetex``): ``m$\\foo$`` fails to draw, ``$x^2$`` draws a formula.  So
every Display draws its text literally: its ``plot`` is decorated with
:func:`_literal_plot`, which ends the call by passing what it drew
(``self.ax_``, or ``self.axes_`` and ``self.figure_``, and ``self.colorbar_``)
to :func:`_literal_text`.  That sets ``parse_math=False`` and
``usetex=False`` on every title, axis label, legend entry, annotation, text,
colorbar label and tick label set from strings, whatever the rcParams say and
without changing them; numeric tick labels keep matplotlib's formatting (no
TeX).  A line longer than 120 characters is shortened in the middle with
"…" in figures only (tables and reports show the whole name).  Our own labels
use Unicode (σ, ‖·‖), never mathtext.  A new Display decorates its ``plot``
with ``@_literal_plot`` (or calls ``_literal_text(ax, ...)`` at its end).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ._kernel import _merged_values, _rates, _sorted_by_class
from ._validation import check_int
from .diagnostics import (
    _cohort,
    bias_robustness,
    cohort_diagnostics,
    noise_robustness,
    sens_spec_drift,
    wasserstein_matrix,
)
from .ranking import _check_results, rank_changes, score_histograms
from .selective import (
    TOLERANCES,
    _check_inputs,
    _check_resolution,
    _curve,
    disca,
    selective_answering,
)

__all__ = [
    "AUCAccuracyDisplay",
    "ClassHistogramDisplay",
    "CoverageAccuracyDisplay",
    "DiagnosticsDashboard",
    "DriftDisplay",
    "RankSlopeDisplay",
    "RobustnessDisplay",
    "ScoreHistogramsDisplay",
    "ThresholdROCDisplay",
    "ToleranceDisplay",
    "WassersteinDisplay",
]

NEG_COLOR = "#629FCA"
POS_COLOR = "#FFA556"
VAL_STYLE = "-"
TEST_STYLE = "--"


_MAX_LINE = 120  # characters per line of text in a figure


def _shorten(text, limit=_MAX_LINE):
    """``text`` with every line longer than ``limit`` characters cut in the middle ("…")."""
    text = str(text)
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return "\n".join(line if len(line) <= limit else f"{line[:half]}…{line[len(line) - (limit - 1 - half):]}"
                     for line in text.split("\n"))


def _literal_text(*targets):
    """Make every text of ``targets`` (Axes or Figures) draw literally: no mathtext, no TeX.

    On an Axes: the title(s), axis labels, legend, texts and annotations get
    ``parse_math=False, usetex=False`` (and long lines are shortened); tick
    labels set from strings (a ``FixedFormatter``) too, after creating every
    tick now, since matplotlib does not copy ``parse_math`` to the ticks it
    creates at draw time; numeric tick labels and the offset text only get
    ``usetex=False`` (their mathtext, if any, is matplotlib's own).  On a
    Figure: its own texts (``suptitle``, ``fig.text``, figure legends), not
    those of its Axes.  Returns nothing; rcParams are not touched.
    """
    from matplotlib.axes import Axes
    from matplotlib.figure import FigureBase
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter

    def literal(text):
        text.set_usetex(False)
        text.set_parse_math(False)
        short = _shorten(text.get_text())
        if short != text.get_text():
            text.set_text(short)

    for target in targets:
        if target is None:
            continue
        if not isinstance(target, Axes):  # a Figure or SubFigure: its own artists only
            for child in target.get_children():
                if not isinstance(child, (Axes, FigureBase)):
                    for text in child.findobj(Text):
                        literal(text)
            continue
        formatted = set()
        for axis in (target.xaxis, target.yaxis, getattr(target, "zaxis", None)):
            if axis is None:
                continue
            for major in (True, False):
                formatter = axis.get_major_formatter() if major else axis.get_minor_formatter()
                locs = axis.get_majorticklocs() if major else axis.get_minorticklocs()
                ticks = axis.get_major_ticks(len(locs)) if major else axis.get_minor_ticks(len(locs))
                fixed = isinstance(formatter, FixedFormatter)
                if fixed:
                    formatter.seq = [_shorten(label) for label in formatter.seq]
                for tick in ticks:
                    for label in (tick.label1, tick.label2):
                        label.set_usetex(False)
                        if fixed:
                            label.set_parse_math(False)
                        formatted.add(id(label))
            axis.offsetText.set_usetex(False)
            formatted.add(id(axis.offsetText))
        for text in target.findobj(Text):
            if id(text) not in formatted:
                literal(text)


def _legend(ax, **kwargs):
    """``ax.legend(**kwargs)`` that keeps labels starting with "_" (a model called ``_x_``).

    matplotlib leaves such labels out of a legend; this passes the handles
    and labels explicitly, leaving out only what matplotlib itself named
    (``_nolegend_``, ``_child0``, ``_container0``...) or cannot draw in a legend.
    """
    from matplotlib.collections import Collection
    from matplotlib.legend import Legend
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handler_map = Legend.get_default_handler_map()
    handles, labels = [], []
    for artist in (*ax.get_children(), *ax.containers):
        if not isinstance(artist, (Line2D, Patch, Collection)) and artist not in ax.containers:
            continue
        label = artist.get_label()
        if (not label or label == "_nolegend_" or re.fullmatch(r"_(child|container)\d+", label)
                or Legend.get_legend_handler(handler_map, artist) is None):
            continue
        handles.append(artist)
        labels.append(label)
    return ax.legend(handles, labels, **kwargs)


def _drawn_by(display):
    """The Axes (and, for figure-level Displays, the Figure) a Display's last ``plot`` drew on."""
    targets = list(getattr(display, "axes_", None) or [])
    if targets:
        targets.append(display.figure_)
    elif getattr(display, "ax_", None) is not None:
        targets.append(display.ax_)
    colorbar = getattr(display, "colorbar_", None)
    if colorbar is not None and colorbar.ax.figure is getattr(display, "figure_", None):
        targets.append(colorbar.ax)
    return targets


def _literal_plot(plot):
    """Decorate a Display's ``plot``: whatever it drew is then drawn literally (see :func:`_literal_text`)."""
    @functools.wraps(plot)
    def wrapper(self, *args, **kwargs):
        result = plot(self, *args, **kwargs)
        _literal_text(*_drawn_by(self))
        return result

    wrapper._draws_literal_text = True
    return wrapper


def _axes(ax):
    """Return ``ax``, or a new figure's single axes."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def _roc(y, s):
    """ROC of one cohort: fpr, tpr, thresholds (descending; first point (0, 0) at +inf)."""
    pos, neg = _sorted_by_class(y, s)
    thr = _merged_values(pos, neg)[::-1]
    sens, spec = _rates(thr, pos, neg)
    return np.r_[0.0, 1.0 - spec], np.r_[0.0, sens], np.r_[np.inf, thr]


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

    Examples
    --------
    >>> from beyondauc.plots import ThresholdROCDisplay
    >>> disp = ThresholdROCDisplay.from_predictions([0, 1, 0, 1], [0.1, 0.8, 0.4, 0.6],
    ...                                             [0, 1, 0, 1], [0.3, 0.9, 0.5, 0.4])
    >>> disp.color_lim
    (0.1, 0.9)
    """

    def __init__(self, curves, color_lim):
        self.curves = curves
        self.color_lim = color_lim

    @_literal_plot
    def plot(self, ax=None, *, cmap="viridis", linewidth=5.0, colorbar=True):
        from matplotlib.collections import LineCollection
        from matplotlib.colors import Normalize

        ax = _axes(ax)
        norm = Normalize(*self.color_lim)
        lc = None
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
        ax.set(xlim=(-0.01, 1.01), ylim=(-0.01, 1.01), xlabel="False positive rate (1 - specificity)",
               ylabel="True positive rate (sensitivity)", title="ROC coloured by threshold")
        _legend(ax, loc="lower right")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_val, s_val, y_test, s_test, *, pos_label=None, names=("validation", "test"),
                         ax=None, **kwargs):
        """Compute both ROC curves and plot them."""
        yv, sv = _cohort(y_val, s_val, pos_label, "y_val", "s_val")
        yt, st = _cohort(y_test, s_test, pos_label, "y_test", "s_test")
        return cls._from_cohorts(yv, sv, yt, st, names).plot(ax, **kwargs)

    @classmethod
    def _from_cohorts(cls, yv, sv, yt, st, names):
        curves = []
        for y, s, name in ((yv, sv, names[0]), (yt, st, names[1])):
            fpr, tpr, thr = _roc(y, s)
            curves.append((fpr, tpr, thr, name, float(np.trapezoid(tpr, fpr))))
        lim = (float(min(sv.min(), st.min())), float(max(sv.max(), st.max())))
        return cls(curves, lim)


class ClassHistogramDisplay:
    """Histogram of the scores of each class in one cohort.

    Parameters
    ----------
    neg, pos : ndarray
        Scores of the negatives and of the positives.
    bins : int or ndarray
        Pass the same edges for several cohorts to compare them.
    name : str

    Examples
    --------
    >>> from beyondauc.plots import ClassHistogramDisplay
    >>> disp = ClassHistogramDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], bins=4)
    >>> len(disp.ax_.patches) > 0
    True
    """

    def __init__(self, neg, pos, *, bins=30, name=""):
        self.neg, self.pos, self.bins, self.name = neg, pos, bins, name

    @_literal_plot
    def plot(self, ax=None, *, density=False, xlim=None):
        ax = _axes(ax)
        ax.hist(self.neg, bins=self.bins, alpha=0.65, color=NEG_COLOR, label=f"negative (n={len(self.neg)})",
                density=density)
        ax.hist(self.pos, bins=self.bins, alpha=0.65, color=POS_COLOR, label=f"positive (n={len(self.pos)})",
                density=density)
        ax.set(xlabel="score", ylabel="density" if density else "examples", title=f"{self.name} scores by class".strip())
        if xlim is not None:
            ax.set_xlim(xlim)
        _legend(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_score, *, pos_label=None, bins=30, name="", ax=None, **kwargs):
        """Split the scores by class and plot them."""
        y, s = _cohort(y_true, y_score, pos_label, "y_true", "y_score")
        return cls(s[y == 0], s[y == 1], bins=bins, name=name).plot(ax, **kwargs)


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

    def __init__(self, results, names, *, kind="bias"):
        self.results, self.names, self.kind = list(results), list(names), kind

    @_literal_plot
    def plot(self, ax=None):
        ax = _axes(ax)
        for r, name, style in zip(self.results, self.names, (VAL_STYLE, TEST_STYLE, ":", "-.")):
            if len(r.sigmas):
                ax.plot(r.sigmas, 100 * r.relative_curve, linestyle=style, marker=".",
                        label=f"{name}: R = {r.score:.3f}")
                if self.kind == "noise" and np.any(r.auc_std):
                    lo = 100 * (r.auc_curve - r.auc_std) / r.auc
                    hi = 100 * (r.auc_curve + r.auc_std) / r.auc
                    ax.fill_between(r.sigmas, lo, hi, alpha=0.15)
        shift = "positives shifted down by σ" if self.kind == "bias" else "Gaussian noise of sd σ"
        ax.set(xlabel=f"σ ({shift})", ylabel="AUC relative to unperturbed (%)",
               title=f"Robustness to {self.kind}")
        ax.grid(color="lightgrey", linewidth=0.5)
        _legend(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_score, *, kind="bias", name="scores", ax=None, **options):
        """Compute one cohort's robustness curve and plot it; ``options`` go to the metric."""
        fn = {"bias": bias_robustness, "noise": noise_robustness}
        if kind not in fn:
            raise ValueError(f"`kind` must be 'bias' or 'noise', got {kind!r}")
        return cls([fn[kind](y_true, y_score, **options)], [name], kind=kind).plot(ax)


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

    def __init__(self, drift):
        self.drift = drift

    @_literal_plot
    def plot(self, ax=None):
        ax = _axes(ax)
        d = self.drift
        kw = dict(drawstyle="steps-pre")  # the value at thresholds[k] holds on (thresholds[k-1], thresholds[k]]
        ax.plot(d.thresholds, d.sensitivity_drift, color=POS_COLOR, label="sensitivity (T - V)", **kw)
        ax.plot(d.thresholds, d.specificity_drift, color=NEG_COLOR, label="specificity (T - V)", **kw)
        ax.plot(d.thresholds, d.distance, color="black", label="distance ‖S_T − S_V‖", **kw)
        ax.axhline(0, color="lightgrey", linewidth=0.8)
        ax.set(xlabel="threshold (predict positive when score >= threshold)", ylabel="drift",
               title=f"Sensitivity/specificity drift: D = {d.score:.4f}")
        _legend(ax)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_val, s_val, y_test, s_test, *, pos_label=None, ax=None):
        """Compute the drift and plot it."""
        return cls(sens_spec_drift(y_val, s_val, y_test, s_test, pos_label=pos_label)).plot(ax)


class WassersteinDisplay:
    """The Wasserstein matrix: diagonal = between classes (want large), off = across cohorts (want small).

    Parameters
    ----------
    result : WassersteinMatrix

    Examples
    --------
    >>> from beyondauc.plots import WassersteinDisplay
    >>> disp = WassersteinDisplay.from_predictions([0, 1, 0, 1], [0.1, 0.8, 0.4, 0.6], [0, 1, 0, 1], [0.3, 0.9, 0.5, 0.4])
    >>> len(disp.ax_.texts)
    4
    """

    def __init__(self, result):
        self.result = result

    @_literal_plot
    def plot(self, ax=None, *, cmap="Greens"):
        ax = _axes(ax)
        r = self.result
        m = r.matrix
        finite = np.isfinite(m)
        vmax = float(m[finite].max()) if finite.any() and m[finite].max() > 0 else 1.0
        ax.imshow(np.where(finite, m, 0.0), cmap=cmap, vmin=0, vmax=vmax)
        hints = [["want large", "want small"], ["want small", "want large"]]
        for i in range(2):
            for j in range(2):
                dark = finite[i, j] and m[i, j] > 0.6 * vmax
                ax.text(j, i, f"{m[i, j]:.4g}\n({hints[i][j]})", ha="center", va="center", fontsize=9,
                        color="white" if dark else "black")
        ax.set_xticks([0, 1], list(r.col_labels))
        ax.set_yticks([0, 1], list(r.row_labels))
        ax.set_title(f"{r.p}-Wasserstein matrix: W = {r.score:.3f}" + (f"\n{r.note}" if r.note else ""))
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_val, s_val, y_test, s_test, *, p=2, pos_label=None, ax=None, **kwargs):
        """Compute the matrix and plot it."""
        return cls(wasserstein_matrix(y_val, s_val, y_test, s_test, p=p, pos_label=pos_label)).plot(ax, **kwargs)


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

    def __init__(self, diagnostics):
        self.diagnostics = diagnostics

    @_literal_plot
    def plot(self, figure=None, *, bins=30):
        """Draw on ``figure`` (its layout is left to the caller), or on a new 20 x 9 inch one."""
        if figure is None:
            import matplotlib.pyplot as plt

            figure = plt.figure(figsize=(20, 9), layout="constrained")
        d = self.diagnostics
        axes = figure.subplots(2, 4)
        WassersteinDisplay(d.wasserstein).plot(axes[0, 0])
        both = np.concatenate([d.s_val, d.s_test])
        lo, hi = float(both.min()), float(both.max())
        edges = np.linspace(lo, hi, bins + 1) if hi > lo else bins
        for ax, y, s, name in ((axes[0, 1], d.y_val, d.s_val, "validation"), (axes[0, 2], d.y_test, d.s_test, "test")):
            ClassHistogramDisplay(s[y == 0], s[y == 1], bins=edges, name=name).plot(ax)
        ThresholdROCDisplay._from_cohorts(d.y_val, d.s_val, d.y_test, d.s_test, ("validation", "test")).plot(axes[0, 3])
        RobustnessDisplay([d.bias_val, d.bias_test], ["validation", "test"], kind="bias").plot(axes[1, 0])
        RobustnessDisplay([d.noise_val, d.noise_test], ["validation", "test"], kind="noise").plot(axes[1, 1])
        DriftDisplay(d.drift).plot(axes[1, 2])
        summary = d.to_dict()
        lines = [f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}" for k, v in summary.items()]
        axes[1, 3].axis("off")
        axes[1, 3].text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=9,
                        transform=axes[1, 3].transAxes)
        figure.suptitle(f"{d.model} on {d.dataset}: validation vs test cohort ({d.cohorts})")
        self.figure_, self.axes_ = figure, list(axes.ravel())
        return self

    @classmethod
    def from_predictions(cls, y_val, s_val, y_test, s_test, *, pos_label=None, sigma_max=None, n_points=21,
                         n_repeats=20, p=2, random_state=0, figure=None, model="model", dataset="data"):
        """Compute every diagnostic of two cohorts and draw the dashboard."""
        from .diagnostics import CohortDiagnostics

        yv, sv = _cohort(y_val, s_val, pos_label, "y_val", "s_val")
        yt, st = _cohort(y_test, s_test, pos_label, "y_test", "s_test")
        if sigma_max is None:
            rng = float(max(sv.max(), st.max()) - min(sv.min(), st.min()))
            sigma_max = rng if rng > 0 else None
        common = dict(sigma_max=sigma_max, n_points=n_points)
        noise = dict(common, n_repeats=n_repeats, random_state=random_state)
        bv, bt = bias_robustness(yv, sv, **common), bias_robustness(yt, st, **common)
        diag = CohortDiagnostics(
            model, dataset, "given", yv, sv, yt, st, bv.auc, bt.auc, bv, bt,
            noise_robustness(yv, sv, **noise), noise_robustness(yt, st, **noise),
            sens_spec_drift(yv, sv, yt, st), wasserstein_matrix(yv, sv, yt, st, p=p),
        )
        return cls(diag).plot(figure)

    @classmethod
    def from_benchmark(cls, bench, model, dataset, *, figure=None, **options):
        """Run :func:`~beyondauc.cohort_diagnostics` and draw the dashboard."""
        return cls(cohort_diagnostics(bench, model, dataset, **options)).plot(figure)


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

    Examples
    --------
    >>> from beyondauc.plots import CoverageAccuracyDisplay
    >>> disp = CoverageAccuracyDisplay.from_predictions([0.95, 0.9, 0.8, 0.7], [True, False, True, True])
    >>> disp.ax_.get_xlabel()
    'coverage (share answered)'
    """

    def __init__(self, curve, *, disca=None, exact=None, name=""):
        self.curve, self.disca, self.exact, self.name = curve, disca, exact, name

    @_literal_plot
    def plot(self, ax=None, *, mark=True):
        ax = _axes(ax)
        c = self.curve
        if self.exact is not None:
            ax.plot(self.exact.coverage, self.exact.accuracy, color="lightgrey", linewidth=1,
                    label="exact (every confidence)")
        label = f"{self.name} " if self.name else ""
        ax.plot(c.coverage, c.accuracy, marker=".", label=f"{label}area {c.score:.3f}")
        d = self.disca
        if mark and d is not None:
            def at(conf):
                k = int(np.argmin(np.abs(c.confidence - conf)))
                return c.coverage[k], c.accuracy[k]

            xb, yb = at(d.b)
            ax.plot([xb], [yb], "s", color="darkorange", markersize=8,
                    label=f"b = {d.b:.3f} (accuracy < {d.tolerance:g})")
            xa, ya = at(d.a)
            ax.plot([xa], [ya], "v", color="crimson", markersize=9, zorder=5, label=f"a = {d.a:.3f} (first error)")
            ax.axhline(d.tolerance, color="darkorange", linestyle=":", linewidth=1)
            f = d.fluctuations
            if len(f):
                ax.plot(f["coverage_2"], f["d2"], "^", color="purple", markersize=6,
                        label=f"{len(f)} fluctuation(s)")
            ax.set_title(f"Selective answering: DiSCA = {d.score:.3f}")
        else:
            ax.set_title("Selective answering")
        ax.set(xlabel="coverage (share answered)", ylabel="accuracy of answered", xlim=(0, 1.02))
        ax.grid(color="lightgrey", linewidth=0.5)
        _legend(ax, loc="best", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, confidence, correct, *, tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3),
                         resolution=0.01, name="", ax=None):
        """Compute DiSCA and both curves, then plot."""
        resolution = _check_resolution(resolution)
        c, ok = _check_inputs(confidence, correct, probability=True)
        d = disca(c, ok, tolerance=tolerance, weights=weights, resolution=resolution)
        return cls(d.curve, disca=d, exact=_curve(c, ok, None), name=name).plot(ax)

    @classmethod
    def from_benchmark(cls, bench, model, dataset, *, ax=None, **options):
        """Run :func:`~beyondauc.selective_answering` and plot its curve."""
        r = selective_answering(bench, model, dataset, **options)
        return cls(r.disca.curve, disca=r.disca, exact=r.curve, name=model).plot(ax)


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

    def __init__(self, tables, *, value="b"):
        if value not in ("b", "disca"):
            raise ValueError(f"`value` must be 'b' or 'disca', got {value!r}")
        self.tables, self.value = dict(tables), value

    @_literal_plot
    def plot(self, ax=None):
        ax = _axes(ax)
        for name, tab in self.tables.items():
            ax.plot(tab["tolerance"], tab[self.value], marker="o", label=str(name))
        ax.set_xticks(list(TOLERANCES), [f"<{t:g}" for t in TOLERANCES])
        ax.set_xlim(max(TOLERANCES) + 0.02, min(TOLERANCES) - 0.02)
        ax.set(xlabel="tolerance (worst admissible accuracy)",
               ylabel="b (confidence where accuracy drops below)" if self.value == "b" else "DiSCA",
               title="b over tolerance" if self.value == "b" else "DiSCA over tolerance")
        ax.grid(color="lightgrey", linewidth=0.5)
        _legend(ax, fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, confidence, correct, *, name="model", value="b", ax=None, **options):
        """One model's table from its confidences; ``options`` go to :func:`~beyondauc.disca`."""
        return cls({name: disca(confidence, correct, **options).b_table}, value=value).plot(ax)

    @classmethod
    def from_benchmark(cls, bench, dataset, *, models=None, value="b", ax=None, **options):
        """Every model's table on one dataset; ``options`` go to :func:`~beyondauc.selective_answering`."""
        models = bench.models if models is None else list(models)
        tables = {m: selective_answering(bench, m, dataset, **options).disca.b_table for m in models}
        return cls(tables, value=value).plot(ax)


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

    Examples
    --------
    >>> from beyondauc import load_demo, expected_accuracy
    >>> from beyondauc.plots import AUCAccuracyDisplay
    >>> res = expected_accuracy(load_demo(), protocol="xdomain")
    >>> disp = AUCAccuracyDisplay.from_results(res, model="svm")
    >>> len(disp.ax_.texts)  # one label per dataset of the highlighted model
    8
    """

    def __init__(self, auc, value, models, datasets, *, model=None, score="accuracy", title=""):
        self.auc = np.asarray(auc, dtype=float)
        self.value = np.asarray(value, dtype=float)
        self.models = np.asarray(models, dtype=object)
        self.datasets = np.asarray(datasets, dtype=object)
        self.model, self.score, self.title = model, score, title

    @_literal_plot
    def plot(self, ax=None, *, annotate=True):
        ax = _axes(ax)
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
                for x, y, d in zip(self.auc[sel], self.value[sel], self.datasets[sel]):
                    if np.isfinite(x) and np.isfinite(y):
                        ax.annotate(str(d), (x, y), xytext=(4, 3), textcoords="offset points", fontsize=8)
        if self.score in ("accuracy", "balanced_accuracy"):
            ax.axline((0.5, 0.5), slope=1.0, color="grey", linestyle=":", linewidth=1, label=f"{self.score} = AUC")
        ax.set(xlabel="AUC", ylabel=f"expected {self.score}",
               title=self.title or f"AUC vs expected {self.score}")
        ax.grid(color="lightgrey", linewidth=0.5)
        _legend(ax, fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_results(cls, results, *, model=None, score="accuracy", ax=None, **kwargs):
        """Take the points from :func:`~beyondauc.expected_accuracy` results (one protocol x method)."""
        _check_results(results, score)
        if model is not None and model not in set(results["model"]):
            raise ValueError(f"`model` must be one of {list(dict.fromkeys(results['model']))}, got {model!r}")
        title = f"AUC vs expected {score}"
        if {"protocol", "method"} <= set(results.columns) and len(results):
            title += f" ({results['protocol'].iloc[0]}, {results['method'].iloc[0]})"
        return cls(results["auc"], results[score], results["model"], results["dataset"], model=model,
                   score=score, title=title).plot(ax, **kwargs)


class RankSlopeDisplay:
    """Rank by AUC (left) against rank by expected accuracy (right), one line per model.

    Green lines climb once the models must commit to a threshold, red lines
    drop (the AUC flattered them), grey ones keep their place.  Models that
    share a rank share one label.

    Parameters
    ----------
    models : array-like of str
    auc_ranks, ranks : array-like of float
        Rank by AUC and rank by ``score`` (1 = best; NaN = no rank, not drawn).
    score : str, default="accuracy"
    highlight : str or None
        A model drawn bold, the others faded.
    title : str

    Examples
    --------
    >>> from beyondauc.plots import RankSlopeDisplay
    >>> disp = RankSlopeDisplay(["m1", "m2", "m3"], [1, 2, 3], [2, 1, 3]).plot()
    >>> [line.get_color() for line in disp.ax_.lines[:3]]
    ['tab:red', 'tab:green', 'grey']
    """

    def __init__(self, models, auc_ranks, ranks, *, score="accuracy", highlight=None, title=""):
        self.models = [str(m) for m in models]
        self.auc_ranks = np.asarray(auc_ranks, dtype=float)
        self.ranks = np.asarray(ranks, dtype=float)
        self.score, self.highlight, self.title = score, highlight, title

    @_literal_plot
    def plot(self, ax=None):
        from matplotlib.lines import Line2D

        ax = _axes(ax)
        ok = np.isfinite(self.auc_ranks) & np.isfinite(self.ranks)
        for m, a, r, keep in zip(self.models, self.auc_ranks, self.ranks, ok):
            if not keep:
                continue
            color = "tab:green" if r < a else "tab:red" if r > a else "grey"
            bold = m == self.highlight
            faded = self.highlight is not None and not bold
            ax.plot([0, 1], [a, r], color=color, marker="o", linewidth=3.0 if bold else 1.5,
                    alpha=0.3 if faded else 0.9, zorder=3 if bold else 2)
        for x, ranks, ha in ((0, self.auc_ranks, "right"), (1, self.ranks, "left")):
            names = {}
            for m, r, keep in zip(self.models, ranks, ok):
                if keep:
                    names.setdefault(float(r), []).append(m)
            for r, ms in names.items():
                ax.text(x + (0.05 if x else -0.05), r, ", ".join(ms), ha=ha, va="center", fontsize=8,
                        fontweight="bold" if self.highlight in ms else "normal")
        n = int(max(self.auc_ranks[ok].max(), self.ranks[ok].max())) if ok.any() else 1
        ax.set_xticks([0, 1], ["AUC rank", f"{self.score} rank"])
        ax.set_yticks(range(1, n + 1))
        ax.set(xlim=(-0.9, 1.9), ylim=(n + 1.2, 0.5), ylabel="rank (1 = best)",  # room for the legend
               title=self.title or f"Rank by AUC vs by {self.score}")
        handles = [Line2D([], [], color=c, label=t) for c, t in
                   (("tab:green", "climbs"), ("tab:red", "drops"), ("grey", "same"))]
        ax.legend(handles=handles, loc="lower center", ncols=3, fontsize=8, frameon=False)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_results(cls, results, *, score="accuracy", dataset="mean", highlight=None, ax=None):
        """Rank the models of :func:`~beyondauc.expected_accuracy` results on ``dataset`` (or their mean)."""
        ch = rank_changes(results, score=score)
        ch = ch[ch["dataset"] == dataset]
        if not len(ch):
            raise ValueError(f"`dataset` must be 'mean' or one of {list(dict.fromkeys(results['dataset']))}, "
                             f"got {dataset!r}")
        where = "mean over datasets" if dataset == "mean" else str(dataset)
        return cls(ch["model"], ch["auc_rank"], ch["rank"], score=score, highlight=highlight,
                   title=f"Rank by AUC vs by {score} ({where})").plot(ax)


class ScoreHistogramsDisplay:
    """One model's score histograms per class, one panel per dataset plus all pooled.

    The paper's Figures 3-4 (Opitz, "Schroedinger's Threshold"): the bins are
    shared by every panel (they span the model's scores on the whole
    benchmark), so a class that moves between datasets shows as a shift
    between panels, and one threshold cannot suit every dataset.

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

    def __init__(self, histograms, *, model=None):
        self.histograms = histograms
        if model is None:
            models = list(dict.fromkeys(histograms["model"]))
            if len(models) != 1:
                raise ValueError(f"`histograms` must hold one model, got {models}")
            model = models[0]
        self.model = model

    @_literal_plot
    def plot(self, figure=None, *, ncols=4, density=True):
        """Draw on ``figure`` (its layout is left to the caller), or on a new one sized to the panels."""
        ncols = check_int(ncols, "ncols", minimum=1)
        h = self.histograms
        names = list(dict.fromkeys(h["dataset"]))
        ncols = min(ncols, len(names))
        nrows = -(-len(names) // ncols)
        if figure is None:
            import matplotlib.pyplot as plt

            figure = plt.figure(figsize=(4 * ncols, 2.4 * nrows + 0.6), layout="constrained")
        axes = figure.subplots(nrows, ncols, squeeze=False)
        column = "density" if density else "count"
        for ax, name in zip(axes.flat, names):
            for label, color, text in ((0, NEG_COLOR, "negative"), (1, POS_COLOR, "positive")):
                part = h[(h["dataset"] == name) & (h["label"] == label)].sort_values("bin")
                if not len(part):
                    continue
                edges = np.r_[part["left"].to_numpy(), part["right"].to_numpy()[-1]]
                ax.stairs(np.nan_to_num(part[column].to_numpy(dtype=float)), edges, fill=True, alpha=0.6,
                          color=color, label=text)
            ax.set_title(str(name))
        for ax in axes.flat[len(names):]:
            ax.axis("off")
        _legend(axes.flat[0], fontsize=8)
        for ax in axes.flat[max(len(names) - ncols, 0):len(names)]:  # the lowest panel of each column
            ax.set_xlabel("score")
        for ax in axes[:, 0]:
            ax.set_ylabel("share of class" if density else "examples")
        figure.suptitle(f"{self.model}: scores by class on each dataset (shared bins)")
        self.figure_, self.axes_ = figure, list(axes.flat[:len(names)])
        return self

    @classmethod
    def from_benchmark(cls, bench, model, *, bins=20, figure=None, **kwargs):
        """Run :func:`~beyondauc.score_histograms` for ``model`` and draw every dataset."""
        return cls(score_histograms(bench, bins=bins, models=[model]), model=model).plot(figure, **kwargs)
