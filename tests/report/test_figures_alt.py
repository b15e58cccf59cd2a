"""Figures in the reports: beyondauc.report.notebook.show puts alt text into the output
metadata, the report template writes it into <img alt>, escaped; setup_figures("retina")
makes the inline backend emit 2x PNG (half-size width metadata)."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import nbformat
import pytest
from matplotlib.figure import Figure

from beyondauc.report import notebook as _notebook
from helpers.report import parse_html

TEMPLATES = Path(_notebook.__file__).resolve().parent.parent / "templates"
ALT = 'ROC of <script>alert(1)</script> & "quotes"'


def render(nb):
    """HTML of ``nb`` through the report template (as the report renders it)."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="beyondauc", extra_template_basedirs=[str(TEMPLATES)])
    exporter.register_filter("clean_markdown_html", lambda text: text)
    header = {
        "title": "t",
        "model": "m",
        "source": "s",
        "sha256": "0",
        "parameters": {},
        "version": "0",
        "date": "d",
        "sections": [],
        "include_code": False,
        "failed": None,
    }
    body, _ = exporter.from_notebook_node(nb, resources={"beyondauc": header})
    return body


@pytest.fixture(scope="module")
def executed():
    """A notebook run in a real kernel: one figure through show(alt=...), one left to the
    inline backend after setup_figures("retina"), one through show(format="svg")."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
            "from beyondauc.report.notebook import setup_figures, show\nsetup_figures('retina')"
        ),
        nbformat.v4.new_code_cell(
            f"fig, ax = plt.subplots(figsize=(4, 3))\nax.set_title('first')\nshow(fig, alt={ALT!r});"
        ),
        nbformat.v4.new_code_cell("fig, ax = plt.subplots(figsize=(4, 3))\nax.plot([0, 1], [1, 0]);"),
        nbformat.v4.new_code_cell(
            "fig, ax = plt.subplots(figsize=(3, 2))\nfig.suptitle('svm on wine')\n"
            "ax.set_title('drift')\nshow(fig, format='svg');"
        ),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return nb


def test_show_sets_alt_and_closes_the_figure(executed):
    outputs = [o for cell in executed.cells for o in cell.get("outputs", []) if o.get("output_type") == "display_data"]
    assert len(outputs) == 3  # show()'s figures are closed: the inline backend does not draw them again
    first, inline, svg = outputs
    assert first.metadata["image/png"]["alt"] == ALT
    assert "alt" not in inline.metadata.get("image/png", {})
    assert svg.metadata["image/svg+xml"]["alt"] == "svm on wine. Panel: drift."
    for out in (first, inline):  # 2x PNG: pixels twice the width metadata
        png = base64.b64decode(out.data["image/png"])
        width, _ = struct.unpack(">II", png[16:24])
        assert width == 2 * out.metadata["image/png"]["width"], (width, out.metadata)


def test_template_writes_alt_escaped(executed):
    root = parse_html(render(executed))
    assert root.find_all("script") == []
    imgs = root.find_all("img")
    assert [i.attrs.get("alt") for i in imgs] == [ALT, "figure", "svm on wine. Panel: drift."]
    assert imgs[0].attrs["width"] == str(executed.cells[1].outputs[0].metadata["image/png"]["width"])
    assert imgs[2].attrs["src"].startswith("data:image/svg+xml;base64,")


def test_figure_alt_and_bad_format():
    fig = Figure()
    assert _notebook.figure_alt(fig) == "Figure."
    ax = fig.subplots()
    ax.set(xlabel="coverage", ylabel="accuracy")
    assert _notebook.figure_alt(fig) == "Figure: accuracy against coverage."
    with pytest.raises(ValueError, match="`format`"):
        _notebook.render(fig, format="jpeg")


def _savefig_pixels(fig, dpi, **kwargs):
    import io

    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white", **kwargs)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))


@pytest.mark.parametrize("layout", ["constrained", "compressed", "tight"])
def test_one_pass_raster_equals_savefig(layout):
    """A figure with a layout engine is drawn once at the target dpi, and gives the pixels
    savefig gives (which draws it twice); the figure's dpi, facecolor and canvas are kept."""
    import numpy as np

    fig = Figure(figsize=(5.3, 3.1), layout=layout, facecolor=(1, 1, 1, 0))
    axes = fig.subplots(1, 2)
    for i, ax in enumerate(axes):
        ax.plot(np.linspace(0, 1, 50) ** (i + 1), label=f"model {i}")
        ax.set(title=f"panel {i}", xlabel="coverage", ylabel="a long accuracy label")
        ax.legend()
    fig.suptitle("svm on wine")
    canvas, dpi, face = fig.canvas, fig.dpi, fig.get_facecolor()
    pixels = np.asarray(_notebook.raster(fig, 160))
    assert (fig.canvas, fig.dpi, fig.get_facecolor()) == (canvas, dpi, face)
    np.testing.assert_array_equal(pixels, _savefig_pixels(fig, 160))
    assert pixels.shape[:2] == (round(3.1 * 160), round(5.3 * 160))
    assert (pixels[0, 0] == 255).all()  # white, not the transparent facecolor


def test_raster_without_layout_engine_is_cropped_tight():
    import numpy as np

    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.set(title="t", ylabel="a label drawn outside the axes' default margin " * 2)
    np.testing.assert_array_equal(
        np.asarray(_notebook.raster(fig, 100)), _savefig_pixels(fig, 100, bbox_inches="tight")
    )


def _one_draw_pixels(fig, dpi):
    """What matplotlib draws of ``fig`` in one plain draw (layout included) at ``dpi`` on white."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.set_facecolor("white")
    fig.dpi = dpi
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def _tick_figure(kind):
    """A tight-layout figure whose ticks are hard to fix: see test_fixed_ticks_draw_what_matplotlib_draws."""
    import numpy as np
    from matplotlib.layout_engine import TightLayoutEngine

    fig = Figure(figsize=(7, 3.2), layout=TightLayoutEngine(rect=None))
    if kind == "ticks change in the layout":  # a panel that grows in the layout gets more ticks
        ax, side = fig.subplots(1, 2, width_ratios=[1, 5])
        ax.plot([0, 1], [0, 1])
        side.plot(np.linspace(0, 1, 20))
        fig.subplots_adjust(left=0.3, right=0.45, bottom=0.4, top=0.6)  # small before the layout
    elif kind == "offset and log":
        a, b = fig.subplots(1, 2)
        a.plot(1e6 + np.linspace(0, 1e-2, 30), 7e5 + np.linspace(0, 0.05, 30))  # offset text on both axes
        b.loglog(np.logspace(-3, 2, 30), np.logspace(0, 4, 30))  # minor ticks
    elif kind == "shared, twin and categories":
        a, b = fig.subplots(1, 2, sharey=True)
        a.plot(np.linspace(-3, 7, 40))
        a.twinx().plot(np.linspace(0, 250, 40), color="C1")
        b.bar(["breast_cancer", "wine", "iris_virginica"], [0.9, 0.7, 0.8])
        b.set_title("categories")
    elif kind == "titles and views":  # titles matplotlib moves, and a view that changes in the draw
        a, b, c, d, e = fig.subplots(1, 5)
        e.plot(np.linspace(0, 1, 20))
        e.set_title("left where it is")  # the one title matplotlib would not move
        a.plot(np.linspace(0, 5, 20))
        a.xaxis.tick_top()  # the title goes above the top tick labels
        a.set_title("ticks on top")
        b.plot(np.linspace(0, 3, 20), np.linspace(0, 1, 20))
        b.set_aspect("equal", adjustable="datalim")  # the view grows at draw time: more ticks are shown
        b.set_title("equal, datalim")
        c.plot(np.linspace(0, 1, 20))
        c.set_title("gy descends", fontsize=30, pad=-4)  # the title's descent reaches into the axes
        d.plot(7e5 + np.linspace(0, 0.05, 30))  # an offset text under the title
        d.set_title("offset", loc="left")
    fig.suptitle(kind)
    return fig


@pytest.mark.parametrize(
    "kind", ["ticks change in the layout", "offset and log", "shared, twin and categories", "titles and views"]
)
def test_fixed_ticks_draw_what_matplotlib_draws(kind):
    """_raster computes each axis's ticks once for the tight layout and the drawing: the pixels are those
    of a plain matplotlib draw, including an axis that gets more ticks once laid out (it gets its own
    locator back), offset text and log axes; every locator and formatter is given back afterwards."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = _tick_figure(kind)
    tickers = [
        (t, t.locator, t.formatter)
        for ax in fig.axes
        for axis in (ax.xaxis, ax.yaxis)
        for t in (axis.major, axis.minor)
    ]
    if kind == "ticks change in the layout":  # the hard case is really there
        probe = _tick_figure(kind)
        FigureCanvasAgg(probe)
        counts = [len(axis.get_majorticklocs()) for ax in probe.axes for axis in (ax.xaxis, ax.yaxis)]
        probe.canvas.draw()
        assert counts != [len(axis.get_majorticklocs()) for ax in probe.axes for axis in (ax.xaxis, ax.yaxis)]
    titled = []
    fix_titles = _notebook._fix_titles
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_notebook, "_fix_titles", lambda *a: titled.extend(fix_titles(*a)) or titled)
        pixels = np.asarray(_notebook.raster(fig, 120))
    if kind == "titles and views":  # titles above top ticks, an offset text or their own descent are placed
        assert "left where it is" in [ax.get_title() for ax in titled]
        assert not {"ticks on top", "gy descends", ""} & {ax.get_title() for ax in titled}
    assert [(t.locator, t.formatter) for t, *_ in tickers] == [(loc, fmt) for _, loc, fmt in tickers]
    assert fig.get_layout_engine() is not None and fig.get_layout_engine()._params["rect"] is None
    np.testing.assert_array_equal(pixels, _one_draw_pixels(_tick_figure(kind), 120))
    if kind == "titles and views":  # titles placed by matplotlib again: drawn again, the figure is as matplotlib's
        twice = _tick_figure(kind)
        _one_draw_pixels(twice, 120)
        np.testing.assert_array_equal(_one_draw_pixels(fig, 120), _one_draw_pixels(twice, 120))
