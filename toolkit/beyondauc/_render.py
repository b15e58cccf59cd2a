"""Rendering of the reports: executed notebooks to one HTML page (nbconvert), PDF, the index.

Private: :mod:`beyondauc.report` runs the notebooks and calls these to turn
them into what a reader opens.
"""

from __future__ import annotations

import copy
import logging
import math
import urllib.parse
import uuid
from pathlib import Path

import pandas as pd

from ._output import _atomic_write

_TEMPLATE = "beyondauc"


def _notebook_title(nb, default):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
            break
    return default


def _combine(executed, title):
    """One notebook made of the executed ones, each behind a section marker cell."""
    import nbformat

    combined = nbformat.v4.new_notebook()
    for i, (run, nb) in enumerate(executed):
        if i == 0:
            for key in ("kernelspec", "language_info"):
                if key in nb.metadata:
                    combined.metadata[key] = copy.deepcopy(nb.metadata[key])
        section = {"name": run.name, "title": _notebook_title(nb, run.name), "error": run.error}
        marker = nbformat.v4.new_markdown_cell("", metadata={"beyondauc_section": section})
        marker.id = f"s{i}-section"
        combined.cells.append(marker)
        for cell in nb.cells:
            cell = copy.deepcopy(cell)
            cell.id = f"s{i}-{cell.get('id', uuid.uuid4().hex[:8])}"[:64]
            combined.cells.append(cell)
    combined.metadata["title"] = title
    return combined


_MARKDOWN_TAGS = frozenset({"p", "br", "hr", "a", "strong", "em", "b", "i", "code", "pre", "ul", "ol", "li",
                            "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr",
                            "th", "td", "del", "span", "div"})
_MARKDOWN_ATTRIBUTES = {"a": {"href", "title"}, "*": {"class", "id"}}


def _clean_markdown_html(text):
    """HTML of Markdown displayed at run time, made inert.

    Only the tags Markdown produces survive (a raw ``<script>`` goes with its
    content, other raw tags are dropped and their text kept), links keep only
    http(s)/mailto or relative targets (no ``javascript:``) and images are
    dropped, so the page never runs or loads anything. The notebooks escape
    names from the data (:func:`~beyondauc.report.markdown_text`), so those
    show verbatim.
    """
    import nh3

    return nh3.clean(str(text), tags=set(_MARKDOWN_TAGS), attributes=_MARKDOWN_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"})


def _render_html(executed, header, *, include_code):
    """HTML of the combined notebooks through the ``templates/beyondauc`` nbconvert template."""
    from nbconvert import HTMLExporter

    combined = _combine(executed, header["title"])
    header = dict(header, include_code=bool(include_code),
                  sections=[{"name": r.name, "title": _notebook_title(nb, r.name)} for r, nb in executed])
    exporter = HTMLExporter(template_name=_TEMPLATE, extra_template_basedirs=[str(_templates_dir())])
    # Markdown displayed by code carries names from the data: the template cleans its HTML.
    exporter.register_filter("clean_markdown_html", _clean_markdown_html)
    exporter.exclude_input = not include_code
    exporter.exclude_input_prompt = not include_code
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(
        combined, resources={"beyondauc": header, "metadata": {"name": header["title"]}})
    return body


def _write_pdf(html, target, base_dir):
    try:
        import weasyprint
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("`pdf=True` needs WeasyPrint: pip install 'beyondauc[pdf]'") from exc
    for name in ("weasyprint", "fontTools"):
        logging.getLogger(name).setLevel(logging.ERROR)
    pdf = weasyprint.HTML(string=html, base_url=str(base_dir)).write_pdf()
    _atomic_write(target, pdf)


def _fmt(value, digits=3):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}f}"


def _rank(value):
    return "–" if value is None or pd.isna(value) else f"{int(value)}"


def _index_rows(bench, reports, board):
    by_model = {} if board is None else {row["model"]: row for row in board.to_dict("records")}
    rows = []
    for rep in reports:
        row = by_model.get(rep.model, {})
        change = row.get("rank_change")
        change = math.nan if change is None or pd.isna(change) else int(change)
        rows.append({
            "model": rep.model, "status": rep.status, "error": rep.error,
            "auc": _fmt(row.get("auc")), "auc_rank": _rank(row.get("auc_rank", math.nan)),
            "accuracy": _fmt(row.get("accuracy")), "accuracy_rank": _rank(row.get("accuracy_rank", math.nan)),
            "rank_change": "–" if not math.isfinite(change) else f"{change:+g}" if change else "0",
            "change_class": "up" if change > 0 else "down" if change < 0 else "",
            "kappa": _fmt(row.get("kappa")), "disca": _fmt(row.get("disca")), "drift": _fmt(row.get("drift"), 4),
            "html": rep.html, "pdf": rep.pdf,
            "notebooks": [{"name": nb.name, "path": nb.path} for nb in rep.notebooks],
        })
    order = {m: i for i, m in enumerate(by_model)}
    rows.sort(key=lambda r: order.get(r["model"], len(order)))
    return rows


def _render_index(context):
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_templates_dir())),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["urlpath"] = lambda p: urllib.parse.quote(p)
    return env.get_template("index.html.j2").render(**context)


def _templates_dir():
    return Path(__file__).resolve().parent / "templates"  # a symlink in a checkout

