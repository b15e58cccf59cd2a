"""Figures in the notebooks: crisp on high-density screens, with alt text.

For the report notebooks (not public API)::

    from beyondauc.report.notebook import setup_figures, show
    setup_figures()                       # once, in the set-up cell
    show(fig, alt="ROC curves of ...")    # instead of leaving the figure to the inline backend

:func:`setup_figures` makes the inline backend draw every figure as 2x PNG
("retina"); :func:`show` displays one figure as an image whose output
metadata carries ``alt``, which the report template (``templates/beyondauc``)
writes into the ``<img alt=...>`` (an image without one gets ``alt="figure"``).
The default alt is made from the figure's titles (:func:`figure_alt`).

Why 2x PNG and not SVG (``benchmarks/bench_figures.py``, ``docs/performance.md``):
on the demo's small cohorts SVG is about half the bytes of 2x PNG and as
fast, but an SVG holds every vertex, so a dashboard of 10,000 + 10,000
examples is 4.1 MB as SVG against 0.55 MB as 2x PNG; 2x PNG's size does not
grow with the data.
"""

from __future__ import annotations

import contextlib
import io
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: matplotlib and IPython are heavy
    from IPython.display import SVG, Image
    from matplotlib.figure import Figure

__all__ = ["FORMATS", "displayed", "figure_alt", "setup_figures", "show"]

#: Formats :func:`setup_figures` and :func:`show` accept.
FORMATS = ("retina", "png", "svg")


def _check_format(format):
    if format not in FORMATS:
        raise ValueError(f"`format` must be one of {list(FORMATS)}, got {format!r}")
    return format


def setup_figures(format: str = "retina") -> None:
    """Make the inline backend render figures as ``format`` (default: 2x PNG).

    Call once in a notebook's set-up cell; the same as IPython's
    ``set_matplotlib_formats(format)``.  Changes no matplotlib rcParams.

    Examples
    --------
    >>> from beyondauc.report.notebook import setup_figures
    >>> setup_figures("retina")  # doctest: +SKIP
    """
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats(_check_format(format))


def figure_alt(fig: Figure) -> str:
    """A description of ``fig`` from its titles: suptitle, then each panel's title.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from beyondauc.report.notebook import figure_alt
    >>> fig = Figure()
    >>> axes = fig.subplots(1, 2)
    >>> _ = fig.suptitle("svm on wine"), axes[0].set_title("ROC"), axes[1].set_title("drift")
    >>> figure_alt(fig)
    'svm on wine. Panels: ROC; drift.'
    """
    parts = []
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text().strip():
        parts.append(" ".join(sup.get_text().split()) + ".")
    titles = [" ".join(ax.get_title().split()) for ax in fig.axes if ax.get_title().strip()]
    if titles:
        parts.append(("Panels: " if len(titles) > 1 else "Panel: ") + "; ".join(titles) + ".")
    if not parts:
        labels = [
            ax.get_ylabel() + " against " + ax.get_xlabel()
            for ax in fig.axes
            if ax.get_xlabel().strip() and ax.get_ylabel().strip()
        ]
        parts.append("Figure: " + "; ".join(labels) + "." if labels else "Figure.")
    return " ".join(parts)


def _png_size(data):
    """(width, height) in pixels from a PNG's IHDR chunk."""
    return struct.unpack(">II", data[16:24])


#: Pixels per inch of a figure on screen: a 12-inch report figure is 960 CSS pixels wide (and 1920
#: device pixels in 2x PNG), which fits the report's column without being scaled down.
BASE_DPI = 80


def _palette_png(image):
    """``image`` (a PIL RGB image) as a PNG with its colours reduced to a 256-colour palette: a
    plot's flat colours and anti-aliased edges survive, the file is about 4x smaller
    (measured in ``docs/performance.md``)."""
    from PIL import Image

    pal = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    pal.save(out, format="PNG")
    return out.getvalue()


def fix_ticks(fig):
    """Fix every axis's ticks at what its locator and formatter give now; return what to undo.

    matplotlib asks an axis's locator and formatter for its ticks about six
    times in one tight-layout draw (each panel's extent in the layout, the
    title's and the labels' positions, the drawing itself); the layout
    measures them at the panels' sizes before it, the drawing at the sizes
    after it. Asked once before the layout and fixed (``FixedLocator`` and
    ``FixedFormatter``), they are what the layout measures; after the layout,
    :func:`_keep_fixed` gives back its own ticker to every axis whose ticks
    change with its new size, so the drawing is the one matplotlib makes. An
    axis whose formatter shows an offset (``1e6``, ``+0.5``) is left alone: a
    fixed formatter has none.

    Only the ticks matplotlib draws are fixed: a locator gives a tick or two
    beyond each end of the view, which matplotlib makes (a ``Tick`` of two
    lines, a grid line and two labels each), lays out and then leaves out;
    fixed, they are not made at all.  The labels are formatted from all of
    them, as matplotlib does.

    Returns a list of ``(ticker, locator, formatter, values, labels, axis, view)``,
    one per ticker fixed (axes that share an axis share its ticker), ``view``
    the axis's view interval when fixed.
    """
    import numpy as np
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    fixed, seen = [], set()
    for ax in fig.axes:
        for axis in (getattr(ax, name) for name in ("xaxis", "yaxis", "zaxis") if hasattr(ax, name)):
            for ticker in (axis.major, axis.minor):
                if id(ticker) in seen or isinstance(ticker.locator, NullLocator):
                    continue
                seen.add(id(ticker))
                locator, formatter = ticker.locator, ticker.formatter
                values = locator()
                labels = formatter.format_ticks(values)
                if formatter.get_offset():
                    continue
                shown = _drawn_ticks(axis, values) if getattr(ax, "name", "") == "rectilinear" else slice(None)
                ticker.locator = FixedLocator(np.asarray(values)[shown])
                ticker.formatter = FixedFormatter(list(np.asarray(labels, dtype=object)[shown]))
                fixed.append((ticker, locator, formatter, values, labels, axis, tuple(axis.get_view_interval())))
    return fixed


def _drawn_ticks(axis, values):
    """Which of ``values`` lie in ``axis``'s view interval: the ticks its draw keeps. matplotlib's draw keeps a
    tick within the interval widened by 1e-10 of its length on each side (in transformed coordinates), so a
    close call is kept: the same test, for all ticks at once."""
    import numpy as np

    low, high = sorted(axis.get_view_interval())
    transform = axis.get_transform()
    a, b = sorted(transform.transform([low, high]))
    locs = transform.transform(np.asarray(values, dtype=float))
    slack = (b - a) * 1e-10
    return (a - slack <= locs) & (locs <= b + slack)


def _unfix(fixed):
    for ticker, locator, formatter, *_ in fixed:
        ticker.locator, ticker.formatter = locator, formatter


def _keep_fixed(fixed):
    """Of :func:`_fix_ticks`'s tickers, those whose own locator and formatter give the same ticks at the
    axis's size now, on the same view (kept fixed); the others get their locator and formatter back."""
    import numpy as np

    kept = []
    for item in fixed:
        _, locator, formatter, values, labels, axis, view = item
        now = locator()
        if (
            len(now) == len(values)
            and np.array_equal(now, values)
            and tuple(axis.get_view_interval()) == view
            and list(formatter.format_ticks(now)) == list(labels)
            and not formatter.get_offset()
        ):
            kept.append(item)
        else:
            _unfix([item])
    return kept


def _fix_titles(fig, fixed):
    """Turn off, for one draw, matplotlib's placing of the titles of every Axes where it would not move them.

    Before each layout and each draw matplotlib places an Axes' titles above
    whatever sticks out of its top (x ticks or label on top, the y axis'
    offset text, twin axes), measuring the whole y axis to learn its offset
    text.  Where the y axis' ticks are fixed (:func:`_fix_ticks`: no offset
    text), the x axis' ticks and label are at the bottom, no other Axes sits
    on the same place and each title starts above the Axes (its pad exceeds
    its descent), nothing moves them: they are put at y = 1, where that
    placing puts them, and left there.  Returns the Axes to give it back to
    (:func:`_unfix_titles`).
    """
    fixed_y = {id(item[0]) for item in fixed if item[0] is item[5].major and item[5] is item[5].axes.yaxis}
    renderer = fig.canvas.get_renderer()
    places = [ax.get_position().bounds for ax in fig.axes]
    out = []
    for ax, place in zip(fig.axes, places):
        titles = [
            t for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)) if t is not None
        ]
        if (
            getattr(ax, "_autotitlepos", False) is False
            or ax.child_axes
            or places.count(place) > 1
            or id(ax.yaxis.major) not in fixed_y
            or ax.xaxis.get_ticks_position() in ("top", "unknown")
            or ax.xaxis.get_label_position() == "top"
            or not any(t.get_text() for t in titles)
        ):
            continue
        for t in titles:
            t.set_y(1.0)
        if all(t.get_window_extent(renderer).y0 >= ax.bbox.y1 for t in titles if t.get_text()):
            ax._autotitlepos = False
            out.append(ax)
    return out


def _unfix_titles(axes, fixed=None):
    """Give the Axes back matplotlib's placing of their titles (with ``fixed``: those whose y ticks are no longer
    fixed); returns the others."""
    still = {id(item[0]) for item in fixed} if fixed is not None else set()
    kept = []
    for ax in axes:
        if id(ax.yaxis.major) in still:
            kept.append(ax)
        else:
            ax._autotitlepos = True
    return kept


def raster(fig, dpi):
    """``fig`` drawn at ``dpi`` on a white background, as a PIL RGB image (the figure is
    opaque, so no alpha channel is kept).

    A figure with a layout engine (every report figure is ``tight``) is
    drawn once on an Agg canvas at the target dpi, so the layout is computed at
    that dpi within the one draw; ``savefig`` would draw it twice (a layout
    pass, then the pixels) and encode a PNG only for us to decode it again.
    A figure without one goes through ``savefig(bbox_inches="tight")`` so
    nothing outside its axes is cut off.  The figure's dpi, facecolor and
    canvas are restored afterwards.  Under tight layout each axis's ticks are
    computed once for the layout and the drawing (:func:`_fix_ticks`), not six
    times; the pixels are the same.  The RGB image is converted straight from
    the canvas's buffer: a copy of the RGBA buffer first (``np.array``) cost
    about 10 ms per report figure, mostly in touching its fresh memory.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.layout_engine import TightLayoutEngine
    from PIL import Image

    if fig.get_layout_engine() is None:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
        buf.seek(0)
        with Image.open(buf) as im:
            return im.convert("RGB")
    old_canvas, old_dpi, old_face = fig.canvas, fig.dpi, fig.get_facecolor()
    canvas = old_canvas if isinstance(old_canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    try:
        fig.set_facecolor("white")
        fig.dpi = dpi
        engine = fig.get_layout_engine()
        # tight layout measures the panels once, where they are before it (constrained layout measures
        # them again where its first pass put them: their ticks are not fixed for it)
        fixed = fix_ticks(fig) if fig.axes and isinstance(engine, TightLayoutEngine) else []
        titled = _fix_titles(fig, fixed) if fixed else []
        try:
            if fixed:  # lay out with the ticks fixed, then draw without laying out again
                with contextlib.suppress(ValueError):  # as Figure.draw does (a figure too small to lay out)
                    engine.execute(fig)
                fixed = _keep_fixed(fixed)
                titled = _unfix_titles(titled, fixed)
                fig.set_layout_engine("none")
            canvas.draw()
        finally:
            fig.set_layout_engine(engine)
            _unfix(fixed)
            _unfix_titles(titled)
        rgba = canvas.buffer_rgba()  # (height, width, 4) uint8, the renderer's own memory
        return Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba, "raw", "RGBA", 0, 1).convert("RGB")
    finally:
        fig.dpi = old_dpi
        fig.set_facecolor(old_face)
        if canvas is not old_canvas:
            fig.set_canvas(old_canvas)


def render(fig: Figure, *, format: str = "retina") -> Image | SVG:
    """``fig`` as an IPython display object (Image or SVG) without alt metadata."""
    from IPython.display import SVG, Image

    _check_format(format)
    if format == "svg":
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", bbox_inches="tight", facecolor="white")
        return SVG(data=buf.getvalue().decode("utf-8"))
    scale = 2 if format == "retina" else 1
    data = _palette_png(raster(fig, BASE_DPI * scale))

    width, height = _png_size(data)
    return Image(data=data, format="png", width=width // scale, height=height // scale)


def show(fig: Figure, *, alt: str | None = None, format: str = "retina", close: bool = True) -> None:
    """Display ``fig`` as an image with ``alt`` text in its output metadata.

    The report template puts the metadata's ``alt`` into the image's ``alt``
    attribute.  The figure is closed afterwards (``close=True``) so the
    inline backend does not show it a second time.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    alt : str, optional
        What the figure shows, for readers who cannot see it; default
        :func:`figure_alt` (its titles).
    format : {"retina", "png", "svg"}, default="retina"
    close : bool, default=True

    Returns
    -------
    None
        Nothing, so that a notebook cell ending with ``show(...)`` shows the
        figure once (use :func:`displayed` for the object itself).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from beyondauc.report.notebook import displayed, show
    >>> fig = Figure(figsize=(2, 1))
    >>> _ = fig.subplots().set_title("ROC")
    >>> show(fig, alt="ROC of svm")
    <IPython.core.display.Image object>
    >>> obj = displayed(fig, alt="ROC of svm")
    >>> obj.metadata["alt"], obj._repr_png_()[1]["alt"]
    ('ROC of svm', 'ROC of svm')
    """
    from IPython.display import display

    display(displayed(fig, alt=alt, format=format))
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)


def displayed(fig: Figure, *, alt: str | None = None, format: str = "retina") -> Image | SVG:
    """The display object :func:`show` shows: ``fig`` rendered, with ``alt`` in its metadata."""
    obj = render(fig, format=format)
    alt_text = str(alt) if alt is not None else figure_alt(fig)
    obj.metadata = {**(obj.metadata or {}), "alt": alt_text}  # type: ignore[assignment]  # IPython types it None
    return obj
