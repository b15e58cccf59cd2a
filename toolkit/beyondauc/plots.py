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
  every dataset;
* :class:`CriticalDifferenceDisplay` -- Demšar's critical-difference diagram of
  average ranks over datasets, by AUC and by the deployed score;
* :class:`ReliabilityDisplay` -- reliability diagram (fraction of positives
  against mean probability per bin) with the ECE.

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
import pandas as pd

from ._bootstrap import bootstrap_counts, check_bootstrap, grid_weights, percentile_interval
from ._kernel import _merged_values, _rates, _sorted_by_class
from ._replicates import replicate_chunks, roc_band
from ._validation import check_int, check_random_state
from .intervals import FriedmanResult, friedman_test
from .diagnostics import (
    _cohort,
    bias_robustness,
    cohort_diagnostics,
    noise_robustness,
    sens_spec_drift,
    wasserstein_matrix,
)
from .ranking import (
    CLIP_QUANTILES,
    _check_clip_quantiles,
    _check_results,
    _histogram_range,
    rank_changes,
    score_histograms,
)
from .reliability import CalibrationErrors, _ece, reliability_bins
from .selective import (
    TOLERANCES,
    _array_band,
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
    "CoverageAccuracyGridDisplay",
    "CriticalDifferenceDisplay",
    "DiagnosticsDashboard",
    "DriftDisplay",
    "RankSlopeDisplay",
    "ReliabilityDisplay",
    "RobustnessDisplay",
    "ScoreHistogramsDisplay",
    "ThresholdROCDisplay",
    "ToleranceDisplay",
    "WassersteinDisplay",
    "report_layout",
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
    ``usetex=False`` (their mathtext, if any, is matplotlib's own), which
    needs their ticks made now only when ``text.usetex`` is on (otherwise
    they are left to be made once, at draw time).  On a Figure: its own
    texts (``suptitle``, ``fig.text``, figure legends), not those of its
    Axes.  Returns nothing; rcParams are not touched.
    """
    import matplotlib as mpl
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import FigureBase
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter

    def literal(text):
        text.set_usetex(False)
        text.set_parse_math(False)
        short = _shorten(text.get_text())
        if short != text.get_text():
            text.set_text(short)

    usetex = mpl.rcParams["text.usetex"]
    for target in targets:
        if target is None:
            continue
        if not isinstance(target, Axes):  # a Figure or SubFigure: its own artists only
            for child in target.get_children():
                if not isinstance(child, (Axes, FigureBase)):
                    for text in child.findobj(Text):
                        literal(text)
            continue
        axes = [a for a in (target.xaxis, target.yaxis, getattr(target, "zaxis", None)) if a is not None]
        for axis in axes:
            for major in (True, False):
                formatter = axis.get_major_formatter() if major else axis.get_minor_formatter()
                fixed = isinstance(formatter, FixedFormatter)
                if not (fixed or usetex):
                    continue  # numbers as matplotlib formats them, without TeX: nothing to change
                locs = axis.get_majorticklocs() if major else axis.get_minorticklocs()
                ticks = axis.get_major_ticks(len(locs)) if major else axis.get_minor_ticks(len(locs))
                if fixed:
                    formatter.seq = [_shorten(label) for label in formatter.seq]
                for tick in ticks:
                    for label in (tick.label1, tick.label2):
                        label.set_usetex(False)
                        if fixed:
                            label.set_parse_math(False)
            axis.offsetText.set_usetex(False)
            literal(axis.label)
        # everything else the Axes holds (not its Axis objects: walking them would make every tick now)
        for child in target.get_children():
            if not isinstance(child, Axis):
                for text in child.findobj(Text):
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


def _spread_labels(ax, x, y, texts, *, fontsize=8):
    """Label each point (x, y) on its right; a label that would overlap one above it goes down a line,
    with a thin line to its point.

    The points are taken in screen space, top first: a label whose box would
    overlap one already placed (their left-to-right spans meet and they are
    less than a line apart) moves down below it. The panel's size is the one
    before the figure's layout, and text widths are estimated, so both are
    taken with room to spare: 0.7 em per character and 3 points, and a line
    of 1.25 em.
    """
    if not len(texts):
        return []
    ax.get_xlim(), ax.get_ylim()  # settle the autoscaled limits the points are placed in
    to_points = 72.0 / ax.figure.dpi
    px, py = (ax.transData.transform(np.column_stack([x, y])) * to_points).T
    line = 1.25 * fontsize
    dx, dy = 4.0, 3.0
    placed, tops = [], np.empty(len(texts))
    for i in np.argsort(-py, kind="stable"):
        left, right = px[i] + dx, px[i] + dx + 0.7 * fontsize * len(texts[i]) + 3.0
        top = py[i] + dy
        moved = True
        while moved:
            moved = False
            for a, b, other in placed:
                if left < b and a < right and abs(top - other) < line:
                    top, moved = other - line, True
        placed.append((left, right, top))
        tops[i] = top
    leader = dict(arrowstyle="-", color="grey", linewidth=0.5, shrinkA=0, shrinkB=2)
    return [ax.annotate(text, (x[i], y[i]), xytext=(dx, tops[i] - py[i]), textcoords="offset points",
                        fontsize=fontsize, arrowprops=leader if tops[i] < py[i] + dy - 0.5 else None)
            for i, text in enumerate(texts)]


def _panel_grid(figure, n, ncols, panel_size, *, extra_height=0.0):
    """``n`` panels in rows of at most ``ncols`` (already checked) on ``figure``, or on a new report figure
    of ``panel_size`` inches per panel (plus ``extra_height`` for a suptitle); the slots after the last
    panel are hidden. Returns the figure, the (rows, columns) axes and the number of columns."""
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    if figure is None:
        import matplotlib.pyplot as plt

        width, height = panel_size
        figure = plt.figure(figsize=(width * ncols, height * nrows + extra_height), layout=report_layout())
    axes = figure.subplots(nrows, ncols, squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return figure, axes, ncols


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


def report_layout():
    """The layout engine of every report figure: matplotlib's tight layout, measured once.

    ``layout="tight"`` measures every panel's labels twice (its second pass fits
    the result into ``rect=(0, 0, 1, 1)``, which the first already does); with
    ``rect=None`` it measures once and places the panels where the two passes
    would (the same positions on every report figure of the demo), at about 14%
    less drawing than ``layout="constrained"`` (README "Reports").

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from beyondauc.plots import report_layout
    >>> fig, axes = plt.subplots(1, 2, layout=report_layout())
    >>> type(fig.get_layout_engine()).__name__
    'TightLayoutEngine'
    >>> plt.close(fig)
    """
    from matplotlib.layout_engine import TightLayoutEngine

    return TightLayoutEngine(rect=None)


def _axes(ax):
    """Return ``ax``, or a new figure's single axes."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


#: The headline numbers the dashboard's text panel lists (intervals are in the tables).
_DASHBOARD_NUMBERS = ("model", "dataset", "cohorts", "n_val", "n_test", "auc_val", "auc_test", "bias_robustness_val",
                      "bias_robustness_test", "noise_robustness_val", "noise_robustness_test", "drift",
                      "wasserstein", "wasserstein_p", "wasserstein_p1", "wasserstein_p2")


def _binned(y, s, edges):
    """(edges, negative counts, positive counts, scores beyond the edges): scores outside go to the end bins."""
    lo, hi = edges[0], edges[-1]
    clipped = int(((s < lo) | (s > hi)).sum())
    s = np.clip(s, lo, hi)
    return edges, np.histogram(s[y == 0], edges)[0], np.histogram(s[y == 1], edges)[0], clipped


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

    def __init__(self, curves, color_lim, *, bands=None):
        self.curves = curves
        self.color_lim = color_lim
        self.bands = bands

    @_literal_plot
    def plot(self, ax=None, *, cmap="viridis", linewidth=5.0, colorbar=True):
        from matplotlib.collections import LineCollection
        from matplotlib.colors import Normalize

        ax = _axes(ax)
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
        ax.set(xlim=(-0.01, 1.01), ylim=(-0.01, 1.01), xlabel="False positive rate (1 - specificity)",
               ylabel="True positive rate (sensitivity)", title="ROC coloured by threshold")
        # small, with short handles: in the dashboard the panel is narrow and the legend stays inside it
        _legend(ax, loc="lower right", fontsize=8, handlelength=1.2, handletextpad=0.5)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_val, s_val, y_test, s_test, *, pos_label=None, names=("validation", "test"),
                         n_bootstrap=0, confidence_level=0.95, random_state=0, ax=None, **kwargs):
        """Compute both ROC curves (and, with ``n_bootstrap`` > 0, their bands) and plot them.

        The band of a cohort is the pointwise percentile interval of the TPR
        at 101 fixed FPRs over ``n_bootstrap`` replicates stratified by class.
        """
        yv, sv = _cohort(y_val, s_val, pos_label, "y_val", "s_val")
        yt, st = _cohort(y_test, s_test, pos_label, "y_test", "s_test")
        n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
        seed = check_random_state(random_state)
        return cls._from_cohorts(yv, sv, yt, st, names, n_bootstrap=n_bootstrap, confidence_level=confidence_level,
                                 random_state=seed).plot(ax, **kwargs)

    @classmethod
    def _from_cohorts(cls, yv, sv, yt, st, names, *, n_bootstrap=0, confidence_level=0.95, random_state=0):
        curves = []
        for y, s, name in ((yv, sv, names[0]), (yt, st, names[1])):
            fpr, tpr, thr = _roc(y, s)
            curves.append((fpr, tpr, thr, name, float(np.trapezoid(tpr, fpr))))
        lim = (float(min(sv.min(), st.min())), float(max(sv.max(), st.max())))
        bands = None
        if n_bootstrap:
            bands = [_roc_band(y, s, n_bootstrap=n_bootstrap, confidence_level=confidence_level,
                               random_state=random_state) for y, s in ((yv, sv), (yt, st))]
        return cls(curves, lim, bands=bands)


_BAND_FPR = np.linspace(0.0, 1.0, 101)


def _roc_band(y, s, *, n_bootstrap, confidence_level, random_state):
    """(fpr_grid, low, high): pointwise bootstrap band of the TPR, resampling within each class."""
    x, inv = np.unique(s, return_inverse=True)
    inv = inv.ravel()
    rows = []
    for lo, hi in replicate_chunks(n_bootstrap, len(s)):
        counts = bootstrap_counts(y, n_bootstrap, random_state=random_state, start=lo, stop=hi)
        pos, neg = grid_weights(counts, inv, y, len(x))
        rows.append(roc_band(x, pos[:, 0], neg[:, 0], _BAND_FPR))
    low, high = percentile_interval(np.concatenate(rows), confidence_level)
    return _BAND_FPR.copy(), low, high


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

    def __init__(self, neg, pos, *, bins=30, name="", clip_quantiles=CLIP_QUANTILES, weights=None, clipped=None):
        self.neg, self.pos, self.bins, self.name, self.weights = neg, pos, bins, name, weights
        self.clip_quantiles = _check_clip_quantiles(clip_quantiles)
        self.clipped = clipped

    def _edges(self):
        if np.ndim(self.bins) == 1:
            return np.asarray(self.bins, dtype=float)
        bins = check_int(self.bins, "bins", minimum=1)
        both = np.concatenate([np.asarray(self.neg, dtype=float), np.asarray(self.pos, dtype=float)])
        if not len(both):
            return np.linspace(0.0, 1.0, bins + 1)
        return np.linspace(*_histogram_range(both, self.clip_quantiles), bins + 1)

    @classmethod
    def from_counts(cls, edges, neg_counts, pos_counts, *, name="", clipped=0):
        """A display of already binned scores: ``edges`` (n_bins + 1), the counts per bin of each class, and
        how many scores beyond the edges were counted in the end bins."""
        edges = np.asarray(edges, dtype=float)
        centers = (edges[:-1] + edges[1:]) / 2
        return cls(centers, centers, bins=edges, name=name, clipped=int(clipped),
                   weights=(np.asarray(neg_counts, dtype=float), np.asarray(pos_counts, dtype=float)))

    @_literal_plot
    def plot(self, ax=None, *, density=False, xlim=None):
        ax = _axes(ax)
        edges = self._edges()
        lo, hi = edges[0], edges[-1]
        clipped = 0
        wn, wp = self.weights if self.weights is not None else (None, None)
        for scores, w, color, text in ((self.neg, wn, NEG_COLOR, "negative"), (self.pos, wp, POS_COLOR, "positive")):
            scores = np.asarray(scores, dtype=float)
            clipped += int(((scores < lo) | (scores > hi)).sum())
            n = len(scores) if w is None else int(w.sum())
            ax.hist(np.clip(scores, lo, hi), bins=edges, weights=w, alpha=0.65, color=color, label=f"{text} (n={n})",
                    density=density)
        if self.clipped is not None:
            clipped = self.clipped
        xlabel = "score" if not clipped else f"score ({clipped} beyond [{lo:.3g}, {hi:.3g}] in the end bins)"
        ax.set(xlabel=xlabel, ylabel="density" if density else "examples", title=f"{self.name} scores by class".strip())
        if xlim is not None:
            ax.set_xlim(xlim)
        _legend(ax)
        self.edges_, self.n_clipped_ = edges, clipped
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_score, *, pos_label=None, bins=30, name="", clip_quantiles=CLIP_QUANTILES,
                         ax=None, **kwargs):
        """Split the scores by class and plot them."""
        y, s = _cohort(y_true, y_score, pos_label, "y_true", "y_score")
        return cls(s[y == 0], s[y == 1], bins=bins, name=name, clip_quantiles=clip_quantiles).plot(ax, **kwargs)


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
        The matrix drawn (colours and first number of each cell).
    other : WassersteinMatrix, optional
        The same matrix at another order p (e.g. p = 1, which the paper's
        Figure 4 used, beside the p = 2 its text names): its entries are
        written in brackets under each cell and its W in the title.

    Examples
    --------
    >>> from beyondauc.plots import WassersteinDisplay
    >>> disp = WassersteinDisplay.from_predictions([0, 1, 0, 1], [0.1, 0.8, 0.4, 0.6], [0, 1, 0, 1], [0.3, 0.9, 0.5, 0.4])
    >>> len(disp.ax_.texts)
    4
    """

    def __init__(self, result, *, other=None):
        self.result = result
        self.other = other

    @_literal_plot
    def plot(self, ax=None, *, cmap="Greens"):
        ax = _axes(ax)
        r = self.result
        m = r.matrix
        finite = np.isfinite(m)
        vmax = float(m[finite].max()) if finite.any() and m[finite].max() > 0 else 1.0
        ax.imshow(np.where(finite, m, 0.0), cmap=cmap, vmin=0, vmax=vmax)
        hints = [["want large", "want small"], ["want small", "want large"]]
        o = self.other
        for i in range(2):
            for j in range(2):
                dark = finite[i, j] and m[i, j] > 0.6 * vmax
                extra = f"\n[p={o.p:g}: {o.matrix[i, j]:.4g}]" if o is not None else ""
                ax.text(j, i, f"{m[i, j]:.4g}{extra}\n({hints[i][j]})", ha="center", va="center", fontsize=9,
                        color="white" if dark else "black")
        ax.set_xticks([0, 1], list(r.col_labels))
        ax.set_yticks([0, 1], list(r.row_labels))
        title = f"{r.p:g}-Wasserstein matrix: W = {r.score:.3f}"
        if o is not None:
            title += f"\n[p={o.p:g}: W = {o.score:.3f}]"
        ax.set_title(title + (f"\n{r.note}" if r.note else ""))
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

    def __init__(self, diagnostics, *, panels=None):
        self.diagnostics = diagnostics
        self.panels = panels

    @staticmethod
    def _panels_of(d, bins, clip_quantiles=CLIP_QUANTILES):
        """What the dashboard draws, computed from a CohortDiagnostics's cohorts."""
        both = np.concatenate([d.s_val, d.s_test])
        edges = np.linspace(*_histogram_range(both, _check_clip_quantiles(clip_quantiles)),
                            check_int(bins, "bins", minimum=1) + 1)
        hist = {c: _binned(y, s, edges) for c, y, s in (("val", d.y_val, d.s_val), ("test", d.y_test, d.s_test))}
        other = d.wasserstein_p1 if d.wasserstein.p != 1 else d.wasserstein_p2
        return dict(model=d.model, dataset=d.dataset, cohorts=d.cohorts, summary=d.to_dict(),
                    wasserstein=d.wasserstein, wasserstein_other=other, bias=(d.bias_val, d.bias_test),
                    noise=(d.noise_val, d.noise_test), drift=d.drift,
                    roc={"val": _roc(d.y_val, d.s_val), "test": _roc(d.y_test, d.s_test)},
                    auc={"val": d.auc_val, "test": d.auc_test}, histograms=hist)

    @_literal_plot
    def plot(self, figure=None, *, bins=30, clip_quantiles=CLIP_QUANTILES):
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
        lines = [f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}" for k, v in d["summary"].items()
                 if k in _DASHBOARD_NUMBERS]
        axes[1, 3].axis("off")
        axes[1, 3].text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=9,
                        transform=axes[1, 3].transAxes)
        figure.suptitle(f"{d['model']} on {d['dataset']}: validation vs test cohort ({d['cohorts']})")
        self.figure_, self.axes_ = figure, list(axes.ravel())
        return self

    @classmethod
    def from_evaluation(cls, evaluation, model, dataset, *, figure=None, **kwargs):
        """Draw the dashboard from an :class:`~beyondauc.Evaluation`'s stored curves (nothing recomputed)."""
        return cls(None, panels=evaluation.cohort_panels(model, dataset)).plot(figure, **kwargs)

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

    def __init__(self, curve, *, disca=None, exact=None, name="", band=None):
        self.curve, self.disca, self.exact, self.name = curve, disca, exact, name
        self.band = band

    @_literal_plot
    def plot(self, ax=None, *, mark=True, legend=True):
        """Draw on ``ax``; ``mark``: a, b and the fluctuations; ``legend``: the panel's own legend (a grid
        of panels has one for all: :class:`CoverageAccuracyGridDisplay`)."""
        ax = _axes(ax)
        c = self.curve
        if self.band is not None:
            cov, low, high = self.band
            ax.fill_between(cov, low, high, step="pre", color="tab:blue", alpha=0.2, linewidth=0,
                            label="bootstrap band (pointwise)")
        if self.exact is not None:
            ax.plot(self.exact.coverage, self.exact.accuracy, color="lightgrey", linewidth=1,
                    label="exact (every confidence)")
        label = f"{self.name} " if self.name else ""
        (self.line_,) = ax.plot(c.coverage, c.accuracy, marker=".", label=f"{label}area {c.score:.3f}")
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
        if legend:
            _legend(ax, loc="best", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, confidence, correct, *, tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3),
                         resolution=0.01, name="", n_bootstrap=0, confidence_level=0.95, random_state=0, ax=None):
        """Compute DiSCA and both curves (and the band with ``n_bootstrap`` > 0), then plot."""
        resolution = _check_resolution(resolution)
        n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
        seed = check_random_state(random_state)
        c, ok = _check_inputs(confidence, correct, probability=True)
        d = disca(c, ok, tolerance=tolerance, weights=weights, resolution=resolution)
        band = None
        if n_bootstrap:
            band = _array_band(c, ok, n_bootstrap=n_bootstrap, confidence_level=confidence_level, random_state=seed)
        return cls(d.curve, disca=d, exact=_curve(c, ok, None), name=name, band=band).plot(ax)

    @classmethod
    def from_evaluation(cls, evaluation, model, dataset, *, where="in", ax=None, **kwargs):
        """Plot the curve an :class:`~beyondauc.Evaluation` stored (``where="ood"``: on the OOD dataset)."""
        return cls._stored(evaluation, model, dataset, where=where, name=kwargs.pop("name", model)).plot(ax, **kwargs)

    @classmethod
    def _stored(cls, evaluation, model, dataset, *, where="in", name=None):
        """The display of the curve an Evaluation stored, not drawn yet (the exact curve only in distribution)."""
        d = evaluation.disca(model, dataset, where=where)
        exact = evaluation.coverage_curve(model, dataset, curve="exact") if where == "in" else None
        return cls(d.curve, disca=d, exact=exact, name=model if name is None else name)

    @classmethod
    def from_benchmark(cls, bench, model, dataset, *, ax=None, **options):
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

    def __init__(self, displays, *, model=""):
        self.displays, self.model = dict(displays), model

    @_literal_plot
    def plot(self, figure=None, *, ncols=3):
        """Draw on ``figure`` (its layout is left to the caller), or on a new one sized to the panels."""
        from matplotlib.lines import Line2D

        ncols = check_int(ncols, "ncols", minimum=1)
        names = list(self.displays)
        figure, axes, _ = _panel_grid(figure, len(names) + 1, ncols, (3.9, 3.3))  # + the legend's panel
        axes = axes.ravel()
        tolerance, band = None, False
        for ax, name in zip(axes, names):
            disp = self.displays[name].plot(ax, legend=False)
            d = disp.disca
            if d is None:
                ax.set_title(f"{name}: area {disp.curve.score:.3f}", fontsize=9)
                continue
            tolerance, band = d.tolerance, band or disp.band is not None
            n = len(d.fluctuations)
            ax.set_title(f"{name}: DiSCA = {d.score:.3f}\narea {disp.curve.score:.3f} · a = {d.a:.3f} · "
                         f"b = {d.b:.3f} · {n} fluctuation{'' if n == 1 else 's'}", fontsize=9)
        axes[len(names)].axis("off")
        color = self.displays[names[0]].line_.get_color() if names else "C0"
        handles = [Line2D([], [], color="lightgrey", linewidth=1, label="exact curve (every confidence)"),
                   Line2D([], [], color=color, marker=".", label=f"{self.model} on the resolution grid"
                                                                 if self.model else "curve on the resolution grid")]
        if band:
            from matplotlib.patches import Patch

            handles.append(Patch(color="tab:blue", alpha=0.2, linewidth=0, label="bootstrap band (pointwise)"))
        if tolerance is not None:
            handles += [
                Line2D([], [], color="darkorange", linestyle=":", linewidth=1, label=f"tolerance {tolerance:g}"),
                Line2D([], [], color="darkorange", marker="s", linestyle="", markersize=8,
                       label=f"b: accuracy falls below {tolerance:g}"),
                Line2D([], [], color="crimson", marker="v", linestyle="", markersize=9, label="a: the first error"),
                Line2D([], [], color="purple", marker="^", linestyle="", markersize=6,
                       label="fluctuation: accuracy rises again")]
        self.legend_ = axes[len(names)].legend(handles=handles, loc="center", fontsize=9, frameon=False,
                                               title="Each panel", title_fontproperties={"size": 9})
        _literal_text(axes[len(names)])  # the legend names the model; its panel is not one of axes_
        self.figure_, self.axes_ = figure, list(axes[:len(names)])
        return self

    @classmethod
    def from_evaluation(cls, evaluation, model, *, datasets=None, figure=None, **kwargs):
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

    def __init__(self, tables, *, value="b"):
        if value not in ("b", "disca"):
            raise ValueError(f"`value` must be 'b' or 'disca', got {value!r}")
        self.tables, self.value = dict(tables), value

    @_literal_plot
    def plot(self, ax=None):
        ax = _axes(ax)
        for name, tab in self.tables.items():
            ax.plot(tab["tolerance"], tab[self.value], marker="o", label=str(name))
        # a tick at every tolerance, a label at every other one: nine labels overlap on a small panel
        ax.set_xticks(list(TOLERANCES), [f"{t:g}" if i % 2 == 0 else "" for i, t in enumerate(TOLERANCES)])
        ax.set_xlim(max(TOLERANCES) + 0.02, min(TOLERANCES) - 0.02)
        ax.set(xlabel="tolerance t (worst admissible accuracy)",
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
    def from_evaluation(cls, evaluation, dataset, *, models=None, value="b", where="in", ax=None):
        """Every model's stored table on one dataset of an :class:`~beyondauc.Evaluation`."""
        t = evaluation.table("tolerance")
        t = t[(t["dataset"] == dataset) & (t["where"] == where)]
        models = evaluation.models if models is None else list(models)
        tables = {m: t[t["model"] == m] for m in models if (t["model"] == m).any()}
        return cls(tables, value=value).plot(ax)

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

    def __init__(self, auc, value, models, datasets, *, model=None, score="accuracy", title="", auc_interval=None,
                 value_interval=None):
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

    @_literal_plot
    def plot(self, ax=None, *, annotate=True):
        ax = _axes(ax)
        self.errorbars_ = None
        if self.auc_interval is not None or self.value_interval is not None:
            self.errorbars_ = ax.errorbar(self.auc, self.value, xerr=self._err(self.auc, self.auc_interval),
                                          yerr=self._err(self.value, self.value_interval), fmt="none",
                                          ecolor="silver", elinewidth=0.8, zorder=1)
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
                _spread_labels(ax, self.auc[ok], self.value[ok], [str(d) for d in self.datasets[ok]])
        if self.score in ("accuracy", "balanced_accuracy"):
            ax.axline((0.5, 0.5), slope=1.0, color="grey", linestyle=":", linewidth=1, label=f"{self.score} = AUC")
        ax.set(xlabel="AUC", ylabel=f"expected {self.score}",
               title=self.title or f"AUC vs expected {self.score}")
        ax.grid(color="lightgrey", linewidth=0.5)
        _legend(ax, fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_evaluation(cls, evaluation, *, model=None, score="accuracy", ax=None, **kwargs):
        """The headline protocol x method of an :class:`~beyondauc.Evaluation`."""
        return cls.from_results(evaluation.headline(), model=model, score=score, ax=ax, **kwargs)

    @classmethod
    def from_results(cls, results, *, model=None, score="accuracy", ax=None, **kwargs):
        """Take the points from :func:`~beyondauc.expected_accuracy` results (one protocol x method)."""
        _check_results(results, score)
        if model is not None and model not in set(results["model"]):
            raise ValueError(f"`model` must be one of {list(dict.fromkeys(results['model']))}, got {model!r}")
        title = f"AUC vs expected {score}"
        if {"protocol", "method"} <= set(results.columns) and len(results):
            title += f"\n({results['protocol'].iloc[0]}, {results['method'].iloc[0]})"
        cols = set(results.columns)
        auc_iv = (results["auc_low"], results["auc_high"]) if {"auc_low", "auc_high"} <= cols else None
        val_iv = (results[f"{score}_low"], results[f"{score}_high"]) if {f"{score}_low", f"{score}_high"} <= cols else None
        return cls(results["auc"], results[score], results["model"], results["dataset"], model=model,
                   score=score, title=title, auc_interval=auc_iv, value_interval=val_iv).plot(ax, **kwargs)


class RankSlopeDisplay:
    """Rank by AUC (left) against rank by expected accuracy (right), one line per model.

    Green lines climb once the models must commit to a threshold, red lines
    drop (the AUC flattered them), grey ones keep their place.  Models that
    share a rank share one label.  With bootstrap rank intervals, each end
    carries its interval as a vertical bar, and a change that is not
    significant (``p_change`` < 0.95) is drawn dashed and grey.

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

    def __init__(self, models, auc_ranks, ranks, *, score="accuracy", highlight=None, title="",
                 auc_rank_interval=None, rank_interval=None, significant=None):
        self.models = [str(m) for m in models]
        self.auc_ranks = np.asarray(auc_ranks, dtype=float)
        self.ranks = np.asarray(ranks, dtype=float)
        self.score, self.highlight, self.title = score, highlight, title
        self.auc_rank_interval = None if auc_rank_interval is None else np.asarray(auc_rank_interval, dtype=float)
        self.rank_interval = None if rank_interval is None else np.asarray(rank_interval, dtype=float)
        self.significant = None if significant is None else np.asarray(significant, dtype=bool)

    @_literal_plot
    def plot(self, ax=None):
        from matplotlib.lines import Line2D

        ax = _axes(ax)
        ok = np.isfinite(self.auc_ranks) & np.isfinite(self.ranks)
        sig = np.ones(len(self.models), dtype=bool) if self.significant is None else self.significant
        n_ok = max(int(ok.sum()), 1)
        for k, (m, a, r, keep, s) in enumerate(zip(self.models, self.auc_ranks, self.ranks, ok, sig)):
            if not keep:
                continue
            color = "tab:green" if r < a else "tab:red" if r > a else "grey"
            if not s and r != a:
                color = "grey"
            bold = m == self.highlight
            faded = self.highlight is not None and not bold
            ax.plot([0, 1], [a, r], color=color, marker="o", linewidth=3.0 if bold else 1.5,
                    linestyle="-" if s or r == a else "--", alpha=0.3 if faded else 0.9, zorder=3 if bold else 2)
        # rank intervals: a thin bar beside each end, offset per model so bars do not overlap
        for x, iv, side in ((0, self.auc_rank_interval, -1), (1, self.rank_interval, 1)):
            if iv is None:
                continue
            for k in np.flatnonzero(ok & np.isfinite(iv[0]) & np.isfinite(iv[1])):
                dx = side * (0.02 + 0.012 * (k % n_ok))
                ax.plot([x + dx, x + dx], [iv[0][k], iv[1][k]], color="silver", linewidth=1.0, zorder=1)
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
        if self.significant is not None:
            handles.append(Line2D([], [], color="grey", linestyle="--", label="not significant"))
        ax.legend(handles=handles, loc="lower center", ncols=3, fontsize=8, frameon=False)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_evaluation(cls, evaluation, *, score="accuracy", dataset="mean", highlight=None, ax=None):
        """The stored rank changes of an :class:`~beyondauc.Evaluation` (headline protocol x method),
        with their bootstrap rank intervals when the evaluation has them."""
        ch = evaluation.table("rank_changes")
        return cls._from_changes(ch[ch["score"] == score], score, dataset, highlight, ax)

    @classmethod
    def from_results(cls, results, *, score="accuracy", dataset="mean", highlight=None, ax=None, bootstrap=None):
        """Rank the models of :func:`~beyondauc.expected_accuracy` results on ``dataset`` (or their mean).

        With ``bootstrap`` (a :class:`~beyondauc.GridBootstrap` of the same
        benchmark), draw the rank intervals and mark non-significant changes.
        """
        return cls._from_changes(rank_changes(results, score=score, bootstrap=bootstrap), score, dataset, highlight,
                                 ax)

    @classmethod
    def _from_changes(cls, ch, score, dataset, highlight, ax):
        ch = ch[ch["dataset"] == dataset]
        if not len(ch):
            raise ValueError(f"`dataset` must be 'mean' or a dataset of the results, got {dataset!r}")
        where = "mean over datasets" if dataset == "mean" else str(dataset)
        iv = {}
        if "rank_low" in ch.columns:
            iv = dict(auc_rank_interval=(ch["auc_rank_low"], ch["auc_rank_high"]),
                      rank_interval=(ch["rank_low"], ch["rank_high"]), significant=ch["significant"].to_numpy(bool))
        return cls(ch["model"], ch["auc_rank"], ch["rank"], score=score, highlight=highlight,
                   title=f"Rank by AUC vs by {score}\n({where})", **iv).plot(ax)


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
        figure, axes, ncols = _panel_grid(figure, len(names), ncols, (4, 2.4), extra_height=0.6)
        column = "density" if density else "count"
        for ax, name in zip(axes.flat, names):
            for label, color, text in ((0, NEG_COLOR, "negative"), (1, POS_COLOR, "positive")):
                part = h[(h["dataset"] == name) & (h["label"] == label)].sort_values("bin")
                if not len(part):
                    continue
                edges = np.r_[part["left"].to_numpy(), part["right"].to_numpy()[-1]]
                ax.stairs(np.nan_to_num(part[column].to_numpy(dtype=float)), edges, fill=True, alpha=0.6,
                          color=color, label=text)
            clipped = int(h.loc[h["dataset"] == name, "clipped"].sum()) if "clipped" in h else 0
            if clipped:
                ax.text(0.98, 0.96, f"{clipped} clipped", transform=ax.transAxes, ha="right", va="top", fontsize=8,
                        color="#555555")
            ax.set_title(str(name))
        _legend(axes.flat[0], fontsize=8)
        for ax in axes.flat[max(len(names) - ncols, 0):len(names)]:  # the lowest panel of each column
            ax.set_xlabel("score")
        for ax in axes[:, 0]:
            ax.set_ylabel("share of class" if density else "examples")
        title = f"{self.model}: scores by class on each dataset (shared bins)"
        pooled = h[h["dataset"] == names[-1]] if "clipped" in h else None
        if pooled is not None and pooled["clipped"].sum() > 0:
            lo, hi = pooled["left"].min(), pooled["right"].max()
            title += (f"\n{int(pooled['clipped'].sum())} of {int(pooled['count'].sum())} scores beyond "
                      f"[{lo:.3g}, {hi:.3g}] are counted in the end bins")
        figure.suptitle(title)
        self.figure_, self.axes_ = figure, list(axes.flat[:len(names)])
        return self

    @classmethod
    def from_evaluation(cls, evaluation, model, *, figure=None, **kwargs):
        """One model's stored histograms of an :class:`~beyondauc.Evaluation`."""
        evaluation.check_model(model)
        h = evaluation.table("histograms")
        return cls(h[h["model"] == model], model=model).plot(figure, **kwargs)

    @classmethod
    def from_benchmark(cls, bench, model, *, bins=20, clip_quantiles=CLIP_QUANTILES, figure=None, **kwargs):
        """Run :func:`~beyondauc.score_histograms` for ``model`` and draw every dataset."""
        table = score_histograms(bench, bins=bins, models=[model], clip_quantiles=clip_quantiles)
        return cls(table, model=model).plot(figure, **kwargs)


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

    def __init__(self, average_ranks, critical_difference, *, labels=None, pvalues=None, alpha=0.05, title=""):
        import pandas as pd

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
    def plot(self, ax=None):
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
    def from_friedman(cls, *results, labels=None, ax=None, title=""):
        """Draw the results of :func:`~beyondauc.friedman_test`, one row each."""
        if not results or not all(isinstance(r, FriedmanResult) for r in results):
            raise ValueError("`results` must be one or more FriedmanResult (from friedman_test)")
        return cls([r.average_ranks for r in results], [r.critical_difference for r in results],
                   labels=labels or [r.value for r in results], pvalues=[r.pvalue for r in results],
                   alpha=results[0].alpha, title=title).plot(ax)

    @classmethod
    def from_results(cls, results, *, value="accuracy", alpha=0.05, ax=None):
        """Rank the models of :func:`~beyondauc.expected_accuracy` results by AUC and by ``value``; draw both."""
        _check_results(results, value)
        by_auc = friedman_test(results, value="auc", alpha=alpha)
        by_value = friedman_test(results, value=value, alpha=alpha)
        where = ""
        if {"protocol", "method"} <= set(results.columns) and len(results):
            where = f" ({results['protocol'].iloc[0]}, {results['method'].iloc[0]})"
        title = (f"AUC ranks vs {value} ranks{where} over {by_value.n_datasets} datasets\nbars join models not "
                 f"significantly different (Nemenyi, alpha = {alpha:g})")
        return cls.from_friedman(by_auc, by_value, labels=["AUC", value], ax=ax, title=title)


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

    def __init__(self, mean_predicted, fraction_positive, count, *, name="", title=""):
        self.mean_predicted = np.asarray(mean_predicted, dtype=float)
        self.fraction_positive = np.asarray(fraction_positive, dtype=float)
        self.count = np.asarray(count)
        self.name, self.title = name, title
        self.ece = _ece(self.mean_predicted, self.fraction_positive, self.count) if len(self.count) else np.nan

    @_literal_plot
    def plot(self, ax=None, *, ref_line=True, marker="s", **kwargs):
        """Draw the diagonal and the bins; returns self (``ax_``, ``figure_``, ``line_``)."""
        ax = _axes(ax)
        if ref_line:
            ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfectly calibrated")
        label = f"{self.name} (ECE = {self.ece:.3f})" if self.name else f"ECE = {self.ece:.3f}"
        (self.line_,) = ax.plot(self.mean_predicted, self.fraction_positive, marker=marker, label=label, **kwargs)
        ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="mean predicted probability (per bin)",
               ylabel="fraction of positives (per bin)", title=self.title or "Reliability diagram")
        ax.grid(color="lightgrey", linewidth=0.5)
        ax.legend(loc="upper left", fontsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_prob, *, n_bins=15, pos_label=None, name="", title="", ax=None, **kwargs):
        """Bin probabilities of the positive class against binary labels, then plot."""
        _, mean_predicted, fraction_positive, count = reliability_bins(y_true, y_prob, n_bins=n_bins,
                                                                       pos_label=pos_label)
        return cls(mean_predicted, fraction_positive, count, name=name, title=title).plot(ax, **kwargs)

    @classmethod
    def from_table(cls, table, *, model, dataset, protocol, method, name=None, ax=None, **kwargs):
        """Plot one cell of :func:`~beyondauc.calibration_error_table` (its result or its ``reliability`` frame)."""
        if isinstance(table, CalibrationErrors):
            table = table.reliability
        need = {"protocol", "method", "dataset", "model", "mean_predicted", "fraction_positive", "count"}
        if not isinstance(table, pd.DataFrame) or not need <= set(table.columns):
            raise ValueError("`table` must be a CalibrationErrors or its reliability DataFrame with columns "
                             f"{sorted(need)}, got {type(table).__name__}")
        for key, value in (("protocol", protocol), ("method", method), ("dataset", dataset), ("model", model)):
            if not (table[key] == value).any():  # vectorised: a set of the column walks it value by value
                raise ValueError(f"`{key}` must be one of {list(dict.fromkeys(table[key]))}, got {value!r}")
        cell = table[(table["protocol"] == protocol) & (table["method"] == method) & (table["dataset"] == dataset)
                     & (table["model"] == model)]
        return cls(cell["mean_predicted"], cell["fraction_positive"], cell["count"],
                   name=model if name is None else name,
                   title=f"Reliability: {dataset} ({protocol}, {method})").plot(ax, **kwargs)
