"""The Display machinery every plot module shares: colours, literal text, legends, panel grids,
the report layout.

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
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # names in annotations only
    from matplotlib.layout_engine import TightLayoutEngine

__all__ = ["report_layout"]


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
    return "\n".join(
        line if len(line) <= limit else f"{line[:half]}…{line[len(line) - (limit - 1 - half) :]}"
        for line in text.split("\n")
    )


def literal_text(*targets):
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


def full_legend(ax, **kwargs):
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
        if (
            not label
            or label == "_nolegend_"
            or re.fullmatch(r"_(child|container)\d+", label)
            or Legend.get_legend_handler(handler_map, artist) is None
        ):
            continue
        handles.append(artist)
        labels.append(label)
    return ax.legend(handles, labels, **kwargs)


def spread_labels(ax, x, y, texts, *, fontsize=8):
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
    return [
        ax.annotate(
            text,
            (x[i], y[i]),
            xytext=(dx, tops[i] - py[i]),
            textcoords="offset points",
            fontsize=fontsize,
            arrowprops=leader if tops[i] < py[i] + dy - 0.5 else None,
        )
        for i, text in enumerate(texts)
    ]


def panel_grid(figure, n, ncols, panel_size, *, extra_height=0.0):
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


def literal_plot(plot):
    """Decorate a Display's ``plot``: whatever it drew is then drawn literally (see :func:`_literal_text`)."""

    @functools.wraps(plot)
    def wrapper(self, *args, **kwargs):
        result = plot(self, *args, **kwargs)
        literal_text(*_drawn_by(self))
        return result

    wrapper._draws_literal_text = True
    return wrapper


def report_layout() -> TightLayoutEngine:
    """The layout engine of every report figure: matplotlib's tight layout, measured once.

    ``layout="tight"`` measures every panel's labels twice (its second pass fits
    the result into ``rect=(0, 0, 1, 1)``, which the first already does); with
    ``rect=None`` it measures once and places the panels where the two passes
    would (the same positions on every report figure of the demo), at about 14%
    less drawing than ``layout="constrained"`` (``docs/performance.md``, "Reports").

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

    return TightLayoutEngine(rect=None)  # type: ignore[arg-type]  # None: no rect, as the figure's own draw (stubs: a tuple)


def axes_or_new(ax):
    """Return ``ax``, or a new figure's single axes."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


#: The headline numbers the dashboard's text panel lists (intervals are in the tables).
