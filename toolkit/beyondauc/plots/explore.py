"""An interactive view of one :class:`~beyondauc.Evaluation` in Jupyter (ipywidgets).

:func:`explore` opens an :class:`Explorer`: pick a model and a baseline, a
dataset, a protocol and method, a tolerance; the panes redraw from the
evaluation's tables with the same Displays the reports use.  Nothing is
recomputed, except b(t) and DiSCA at a tolerance between the stored grid
points, read from the stored grid curve.  Only standard ipywidgets are used
(no front-end build), so it runs in JupyterLab, Notebook 7 and VS Code.
Figures are drawn on :class:`matplotlib.figure.Figure` objects that pyplot
never sees (nothing to close, no global state) and shown as PNG in
:class:`ipywidgets.Output` panes.
"""

from __future__ import annotations

import base64
import html
import io
import os
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import imsave

from ..evaluation import Evaluation, comparison_summary, load_evaluation, model_summary
from ..evaluation.paper import paper_table
from .accuracy import AUCAccuracyDisplay
from .dashboard import DiagnosticsDashboard
from .selective import CoverageAccuracyDisplay, ToleranceDisplay

__all__ = ["TABS", "Explorer", "FrozenLayout", "explore", "b_at_tolerance"]

#: a and b are floored here before DiSCA divides by them (the paper's rule, as the evaluation applies it).
B_FLOOR = 0.001
#: the tabs, in order: the panes drawn only when in view.
TABS = ("accuracy", "dashboard", "selective", "comparison", "table")
#: the resolution of the PNGs the panes show (low enough to redraw fast).
DPI = 80


def b_at_tolerance(confidence: np.ndarray, accuracy: np.ndarray, tolerance: float) -> float:
    """b(t): the confidence of the first point of a grid curve whose accuracy is below ``tolerance``.

    The points go from the highest confidence down, as the evaluation stores
    the grid curve; without such a point, the lowest confidence.  Floored at
    0.001 as DiSCA floors it.

    Examples
    --------
    >>> import numpy as np
    >>> b_at_tolerance(np.array([0.9, 0.7, 0.5]), np.array([1.0, 0.95, 0.8]), 0.9)
    0.5
    >>> b_at_tolerance(np.array([0.9, 0.7, 0.5]), np.array([1.0, 0.95, 0.92]), 0.9)
    0.5
    """
    below = np.asarray(accuracy) < tolerance
    k = int(np.argmax(below)) if below.any() else len(confidence) - 1
    return max(float(np.asarray(confidence)[k]), B_FLOOR)


def _png(figure: Figure) -> str:
    """``figure`` drawn once by Agg, as base64 PNG (``savefig`` would draw it a second time)."""
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    buf = io.BytesIO()
    imsave(buf, np.asarray(canvas.buffer_rgba()), format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _image_output(out: Any, png: str, alt: str) -> None:
    """Show the base64 PNG ``png`` in the Output ``out`` (with ``alt`` as its text form)."""
    out.outputs = ({"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": alt}},)


class FrozenLayout:
    """Figures of one pane, laid out by constrained layout once and then at those axes positions.

    Solving a constrained layout costs about as much as drawing the figure,
    and a pane's figures differ only in their data and labels, so the first
    figure of a pane is solved and every later one with as many axes is
    placed where the first one's axes went.  A figure with another number of
    axes is solved again (and its positions kept instead).

    Parameters
    ----------
    figsize : (float, float)
        The pane's figure size in inches.

    Examples
    --------
    >>> layout = FrozenLayout((4, 3))
    >>> fig = layout.figure()
    >>> _ = fig.subplots(1, 2)
    >>> png = layout.png(fig)          # solved by constrained layout, positions kept
    >>> later = layout.figure()
    >>> later.get_layout_engine() is None
    True
    >>> _ = later.subplots(1, 2)
    >>> _ = layout.png(later)
    >>> [tuple(ax.get_position().bounds) for ax in later.axes] == [tuple(b.bounds) for b in layout.positions]
    True
    """

    def __init__(self, figsize: tuple[float, float]):
        self.figsize = figsize
        self.positions: list[Any] | None = None

    def figure(self) -> Figure:
        """A new figure to draw on (pyplot never sees it), laid out by constrained layout while none is kept."""
        fig = Figure(figsize=self.figsize, dpi=DPI, layout="constrained" if self.positions is None else None)
        FigureCanvasAgg(fig)
        return fig

    def png(self, figure: Figure) -> str:
        """``figure``, once drawn on it, as base64 PNG at the pane's positions."""
        if figure.get_layout_engine() is None:
            if self.positions is not None and len(self.positions) == len(figure.axes):
                for ax, box in zip(figure.axes, self.positions):
                    ax.set_position(box)
                return _png(figure)
            figure.set_layout_engine("constrained")
        png = _png(figure)
        self.positions = [ax.get_position(original=True) for ax in figure.axes]
        return png


def _text_output(out: Any, text: str) -> None:
    """Show why a pane is empty."""
    out.outputs = (
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"text/plain": text, "text/html": f"<p><em>{html.escape(text)}</em></p>"},
        },
    )


class Explorer:
    """The widgets of :func:`explore` and what they show (see there).

    Attributes
    ----------
    evaluation : Evaluation
    controls : dict of str -> ipywidgets widget
        ``model``, ``baseline``, ``dataset``, ``protocol``, ``method``,
        ``tolerance``, ``export_format``, ``export``.
    panes : dict of str -> ipywidgets widget
        ``verdict`` and ``comparison`` and ``table`` (HTML), ``accuracy``,
        ``dashboard`` and ``selective`` (Output), ``export_text`` (Textarea).
    shown : dict
        What each pane shows now, as numbers and text (``verdict``,
        ``table``, ``selective``, ``comparison``).
    widget : ipywidgets.VBox
        The whole app; displaying the Explorer displays it.
    """

    def __init__(self, evaluation: Evaluation):
        import ipywidgets as w

        self.evaluation = ev = evaluation
        p = ev.parameters
        grid = ev.table("grid")
        models, datasets = list(ev.models), list(ev.datasets)
        base = p.get("baseline") or (models[1] if len(models) > 1 else models[0])
        tol = ev.table("tolerance")["tolerance"] if "tolerance" in ev.tables else []
        t_lo, t_hi = (float(np.min(tol)), float(np.max(tol))) if len(tol) else (0.5, 1.0)
        self.controls = dict(
            model=w.Dropdown(options=models, value=models[0], description="Model"),
            baseline=w.Dropdown(options=models, value=base, description="Baseline"),
            dataset=w.Dropdown(options=datasets, value=datasets[0], description="Dataset"),
            protocol=w.Dropdown(
                options=list(dict.fromkeys(grid["protocol"])), value=p["protocol"], description="Protocol"
            ),
            method=w.Dropdown(options=list(dict.fromkeys(grid["method"])), value=p["method"], description="Method"),
            tolerance=w.FloatSlider(
                value=float(p.get("tolerance", 0.9)),
                min=t_lo,
                max=t_hi,
                step=0.01,
                description="Tolerance",
                continuous_update=False,
            ),
            # labelled by a Label beside them in the layout: with a description of their own, JupyterLab put the
            # buttons on a line under it, and the export button beside the label
            export_format=w.ToggleButtons(
                options=["LaTeX", "CSV"],
                value="LaTeX",
                tooltips=["booktabs", "CSV"],
                layout=w.Layout(width="auto"),
                style={"button_width": "6em"},
            ),
            export=w.Button(description="Export the table"),
        )
        self.panes = dict(
            verdict=w.HTML(),
            accuracy=w.Output(),
            dashboard=w.Output(),
            selective=w.Output(),
            comparison=w.HTML(),
            table=w.HTML(),
            export_text=w.Textarea(layout=w.Layout(width="100%", height="12em")),
        )
        self.shown: dict[str, Any] = {}
        self.stale: set[str] = set()
        self.layouts = {"dashboard": FrozenLayout((13, 7)), "selective": FrozenLayout((11, 4.2))}
        self.widget = self._layout(w)
        for name in ("model", "baseline", "dataset", "protocol", "method", "tolerance"):
            self.controls[name].observe(self._on_change(name), names="value")
        self.controls["export"].on_click(lambda _: self.export())
        self.tabs.observe(lambda _: self.redraw(()), names="selected_index")
        self.redraw(("verdict", *TABS))

    # -- layout -----------------------------------------------------------------------

    def _layout(self, w):
        c, pn = self.controls, self.panes
        bar = w.VBox(
            [w.HBox([c["model"], c["baseline"], c["dataset"]]), w.HBox([c["protocol"], c["method"], c["tolerance"]])]
        )
        export = w.HBox([w.Label("Export as"), c["export_format"], c["export"]], layout=w.Layout(align_items="center"))
        self.tabs = tabs = w.Tab(
            children=[
                pn["accuracy"],
                pn["dashboard"],
                pn["selective"],
                pn["comparison"],
                w.VBox([pn["table"], export, pn["export_text"]]),
            ]
        )
        for i, title in enumerate(("AUC vs accuracy", "Diagnostics", "Selective answering", "Comparison", "Table")):
            tabs.set_title(i, title)
        tabs.selected_index = 0
        return w.VBox([bar, pn["verdict"], tabs])

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    # -- what changes what ------------------------------------------------------------

    _DEPENDS = {
        "model": ("verdict", "accuracy", "dashboard", "selective", "comparison", "table"),
        "baseline": ("comparison",),
        "dataset": ("dashboard", "selective", "comparison"),
        "protocol": ("accuracy", "table"),
        "method": ("accuracy", "table"),
        "tolerance": ("selective",),
    }

    def _on_change(self, name):
        return lambda change: self.redraw(self._DEPENDS[name])

    def redraw(self, panes: tuple[str, ...] = ("verdict", *TABS)) -> None:
        """Mark ``panes`` out of date and draw those in view (the verdict and the open tab) now.

        A tab not in view is drawn when it is opened, so a switch of model or
        dataset draws one figure, not four.
        """
        self.stale |= set(panes)
        visible = {"verdict", TABS[self.tabs.selected_index or 0]}
        draw = dict(
            verdict=self._verdict,
            accuracy=self._accuracy,
            dashboard=self._dashboard,
            selective=self._selective,
            comparison=self._comparison,
            table=self._table,
        )
        for name in [p for p in draw if p in self.stale & visible]:
            draw[name]()
            self.stale.discard(name)

    def show(self, tab: str) -> Explorer:
        """Open the tab ``tab`` (one of ``TABS``), drawing it if it is out of date; returns ``self``."""
        if tab not in TABS:
            raise ValueError(f"`tab` must be one of {', '.join(TABS)}, got {tab!r}")
        self.tabs.selected_index = TABS.index(tab)
        self.redraw(())
        return self

    @property
    def selection(self) -> dict[str, Any]:
        """The controls' values."""
        return {k: v.value for k, v in self.controls.items() if k not in ("export", "export_format")}

    # -- panes ------------------------------------------------------------------------

    def _verdict(self):
        s = model_summary(self.evaluation, self.controls["model"].value)
        items = "".join(
            f"<li><strong>{html.escape(str(r.topic))}</strong> ({html.escape(str(r.status))}): "
            f"{html.escape(str(r.sentence))}</li>"
            for r in s.findings.itertuples()
        )
        self.shown["verdict"] = {
            "model": s.model,
            "verdict": s.verdict,
            "status": s.status,
            "findings": list(s.findings["sentence"]),
        }
        # ipywidgets' HTML sets the line height of one control row (28 px): text that wraps needs its own;
        # the rules behind the findings are folded away (one click opens them), as the report words them
        self.panes["verdict"].value = (
            f'<div style="line-height: 1.45"><h3>{html.escape(s.model)}: '
            f"{html.escape(s.verdict)}</h3><ul>{items}</ul><details><summary><small>"
            "How the findings are decided</small></summary><p><small>"
            f"{html.escape(s.note)}</small></p></details></div>"
        )

    def _grid_rows(self):
        g = self.evaluation.table("grid")
        sel = self.selection
        return g[(g["protocol"] == sel["protocol"]) & (g["method"] == sel["method"])].reset_index(drop=True)

    def _accuracy(self):
        sel, rows = self.selection, self._grid_rows()
        out = self.panes["accuracy"]
        if not len(rows):
            return _text_output(
                out,
                f"The evaluation has no {sel['protocol']} x {sel['method']} results: "
                "that protocol and method were not evaluated.",
            )
        fig = Figure(figsize=(6, 4.5), dpi=DPI)
        AUCAccuracyDisplay.from_results(rows, model=sel["model"], ax=fig.subplots())
        _image_output(
            out, _png(fig), f"AUC vs expected accuracy ({sel['protocol']}, {sel['method']}), {sel['model']} highlighted"
        )

    def _dashboard(self):
        sel, out = self.selection, self.panes["dashboard"]
        try:
            panels = self.evaluation.cohort_panels(sel["model"], sel["dataset"])
        except (KeyError, ValueError) as exc:
            return _text_output(out, f"No diagnostics dashboard: {exc}.")
        layout = self.layouts["dashboard"]
        fig = layout.figure()
        DiagnosticsDashboard(None, panels=panels).plot(fig)
        _image_output(out, layout.png(fig), f"Diagnostics of {sel['model']} on {sel['dataset']} ({panels['cohorts']})")

    def _selective(self):
        ev, sel, out = self.evaluation, self.selection, self.panes["selective"]
        try:
            d = ev.disca(sel["model"], sel["dataset"])
        except (KeyError, ValueError) as exc:
            return _text_output(out, f"No selective answering: {exc}.")
        t = float(sel["tolerance"])
        b = b_at_tolerance(d.curve.confidence, d.curve.accuracy, t)
        score = d.weights[0] / d.a + d.weights[1] / b - d.penalty
        self.shown["selective"] = {
            "a": float(d.a),
            "b": b,
            "disca": float(score),
            "tolerance": t,
            "stored_tolerance": float(d.tolerance),
            "stored_disca": float(d.score),
        }
        layout = self.layouts["selective"]
        fig = layout.figure()
        ax1, ax2 = fig.subplots(1, 2)
        CoverageAccuracyDisplay(
            d.curve, disca=d, exact=ev.coverage_curve(sel["model"], sel["dataset"]), name=sel["model"]
        ).plot(ax1)
        ax1.axvline(b, color="tab:red", linestyle="--", linewidth=1, label=f"b({t:.2f}) = {b:.3f}")
        ax1.legend(fontsize=7)
        ToleranceDisplay.from_evaluation(ev, sel["dataset"], ax=ax2)
        ax2.axvline(t, color="grey", linestyle=":", linewidth=1)
        fig.suptitle(
            f"{sel['model']} on {sel['dataset']}: a = {d.a:.3f}, b({t:.2f}) = {b:.3f}, "
            f"DiSCA = {score:.3f} (stored at t = {d.tolerance:g}: {d.score:.3f})",
            fontsize=9,
        )
        _image_output(out, layout.png(fig), f"Coverage-accuracy of {sel['model']} on {sel['dataset']}")

    def _comparison(self):
        ev, sel = self.evaluation, self.selection
        model, base = sel["model"], sel["baseline"]
        if model == base:
            self.shown["comparison"] = None
            self.panes["comparison"].value = "<p><em>The model is the baseline: pick another baseline.</em></p>"
            return
        s = comparison_summary(ev, model)
        if s.reference == base:
            self.shown["comparison"] = s.table
            self.panes["comparison"].value = s._repr_html_()
            return
        self.shown["comparison"] = self._pairwise(model, base)
        self.panes["comparison"].value = self._pairwise_html(model, base)

    def _pairwise(self, model, base):
        pw = self.evaluation.tables.get("pairwise")
        if pw is None:
            return None
        return pw[(pw["model"] == model) & (pw["other"] == base)].reset_index(drop=True)

    def _pairwise_html(self, model, base):
        rows = self._pairwise(model, base)
        head = (
            f"<p>The evaluation compared {html.escape(model)} in full with "
            f"{html.escape(comparison_summary(self.evaluation, model).reference or 'no model')}; against "
            f"{html.escape(base)} it holds the paired bootstrap difference of the ranking score:</p>"
        )
        if rows is None or not len(rows):
            return head.replace(" it holds", " it holds no") + (
                "<p><em>none stored: the evaluation ran without the bootstrap.</em></p>"
            )
        return head + rows.drop(columns=["model", "other"]).to_html(index=False, float_format="{:.3f}".format)

    def _table(self):
        sel = self.selection
        if not len(self._grid_rows()):
            self.shown["table"] = None
            missing = f"{html.escape(sel['protocol'])} x {html.escape(sel['method'])} was not evaluated."
            self.panes["table"].value = f"<p><em>{missing}</em></p>"
            return
        t = paper_table(self.evaluation, "grid", protocol=sel["protocol"], method=sel["method"])
        self.shown["table"] = t
        cells = "".join(
            "<tr>"
            + "".join(
                f"<td>{'<b>' if bold else ''}{html.escape(text)}{'</b>' if bold else ''}</td>" for text, bold in r
            )
            + "</tr>"
            for r in t.rows
        )
        head = "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
        note = (
            ""
            if self.evaluation.parameters.get("n_bootstrap")
            else ("<p><em>No intervals: the evaluation ran without the bootstrap.</em></p>")
        )
        self.panes["table"].value = (
            f'<div style="line-height: 1.45"><p>{html.escape(t.title)}</p>{note}'
            f'<table style="border-spacing: 0.8em 0.2em"><thead><tr>{head}</tr></thead>'
            f"<tbody>{cells}</tbody></table></div>"
        )

    def export(self) -> str:
        """The table pane as LaTeX (booktabs) or CSV, per the format control; also put in the text box."""
        if "table" in self.stale:
            self._table()
            self.stale.discard("table")
        t = self.shown.get("table")
        text = "" if t is None else (t.to_latex() if self.controls["export_format"].value == "LaTeX" else t.to_csv())
        self.panes["export_text"].value = text
        return text


def explore(evaluation_or_path: Evaluation | str | os.PathLike) -> Explorer:
    """Explore one evaluation in Jupyter: pick, and the panes redraw from its tables.

    Controls: the model (highlighted among the others) and a baseline, the
    dataset (the cohort pair of the diagnostics and the selective answering),
    the protocol and method of the expected accuracy, and the tolerance of
    b(t) and DiSCA.  A target risk is not offered: the evaluation does not
    store one.

    Panes: the model's verdict and findings; AUC vs expected accuracy; the
    diagnostics dashboard; coverage-accuracy with a, b(t) and DiSCA beside
    every model's b(t); the comparison with the baseline (the evaluation's
    comparison if the baseline is the model's reference, else the stored
    pairwise bootstrap difference); the model x dataset table of the
    protocol and method, exported as LaTeX (booktabs) or CSV by a button.
    Where a pane cannot show something (a protocol not evaluated, no
    bootstrap), it says why.

    Parameters
    ----------
    evaluation_or_path : Evaluation or path
        An :class:`~beyondauc.Evaluation`, or the folder
        :meth:`~beyondauc.Evaluation.save` wrote.

    Returns
    -------
    Explorer
        Display it (the last line of a cell) to show the app.

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "logreg"], noise_repeats=2,
    ...                  n_bootstrap=0, progress=False)
    >>> app = ba.explore(ev)
    >>> app.controls["model"].value = "logreg"
    >>> app.shown["verdict"]["model"]
    'logreg'
    """
    ev = evaluation_or_path if isinstance(evaluation_or_path, Evaluation) else load_evaluation(evaluation_or_path)
    return Explorer(ev)
