"""Rendering of the reports: executed notebooks to one HTML page (nbconvert), and the index.

The PDF of a page is made in :mod:`beyondauc.report.pdf`.

Private: :mod:`beyondauc.report` runs the notebooks and calls these to turn
them into what a reader opens.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import re
import urllib.parse
import uuid
from pathlib import Path

import pandas as pd

from ..evaluation.abstention import guarantee_held, headline_risk
from ..evaluation.comparison import index_cell
from ..utils.formatting import format_interval, format_number, is_missing

_TEMPLATE = "beyondauc"


#: Tag of the banner papermill puts above a failed notebook's cells (it is not the notebook's first cell).
_PAPERMILL_BANNER = "papermill-error-cell-tag"


def _is_banner(cell):
    return _PAPERMILL_BANNER in cell.metadata.get("tags", [])


def _notebook_title(nb, default):
    for cell in nb.cells:
        if cell.cell_type == "markdown" and not _is_banner(cell):
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
            break
    return default


def combine(executed, title):
    """One notebook made of the executed ones, each behind a section marker cell.

    The first notebook named ``summary`` becomes the report's summary section
    (``id="summary"``); every other notebook a collapsible section whose title
    is the notebook's ``# Title`` (dropped from its first cell); the table of
    contents goes between them. Cells tagged ``notebook-only`` (parameters and
    set-up prose for Jupyter users) stay out of the report.
    """
    import nbformat

    combined = nbformat.v4.new_notebook()
    close = None
    for i, (run, nb) in enumerate(executed):
        if i == 0:
            for key in ("kernelspec", "language_info"):
                if key in nb.metadata:
                    combined.metadata[key] = copy.deepcopy(nb.metadata[key])
        kind = "summary" if run.name == "summary" and i == 0 else "analysis"
        section = {
            "name": run.name,
            "title": _notebook_title(nb, run.name),
            "error": run.error,
            "kind": kind,
            "close": close,
            "contents": kind == "analysis" and (i == 1 or (i == 0 and len(executed) > 1)),
            "open": len(executed) == 1,
        }
        marker = nbformat.v4.new_markdown_cell("", metadata={"beyondauc_section": section})
        marker.id = f"s{i}-section"
        combined.cells.append(marker)
        close = "summary" if kind == "summary" else "details"
        titled = False
        for cell in nb.cells:
            cell = copy.deepcopy(cell)
            if "notebook-only" in cell.metadata.get("tags", []):
                continue
            if cell.cell_type == "markdown" and not titled and not _is_banner(cell):
                titled = True
                lines = cell.source.splitlines()
                if lines and lines[0].startswith("# "):
                    cell.source = "\n".join(lines[1:]).strip()
                    if not cell.source:
                        continue
            cell.id = f"s{i}-{cell.get('id', uuid.uuid4().hex[:8])}"[:64]
            combined.cells.append(cell)
    end = nbformat.v4.new_markdown_cell(
        "",
        metadata={
            "beyondauc_section": {
                "name": "end",
                "title": "",
                "error": None,
                "kind": "end",
                "close": close,
                "contents": False,
                "open": False,
            }
        },
    )
    end.id = "end-section"
    combined.cells.append(end)
    combined.metadata["title"] = title
    return combined


_H2 = re.compile(r'<h2 id="([^"]+)">(.*?)<a class="anchor-link"', re.S)
_ID = re.compile(r'(?<=<h[1-6]) id="([^"]+)"')  # headings only: figures keep their own ids


def _unique_ids(body):
    """Give every repeated heading ``id`` (and its own anchor link) a ``-2``, ``-3``... suffix."""
    seen = {}

    def rename(m):
        name = m.group(1)
        seen[name] = seen.get(name, 0) + 1
        return m.group(0) if seen[name] == 1 else f' id="{name}-{seen[name]}"'

    out = _ID.sub(rename, body)
    # links of headings point at their own (renamed) heading
    return re.sub(
        r'(<h\d id="([^"]+)">.*?<a class="anchor-link" href=")#[^"]+"',
        lambda m: f'{m.group(1)}#{m.group(2)}"',
        out,
        flags=re.S,
    )


def _contents(body):
    """The table of contents: every analysis section and its second-level headings, linked."""
    parts = re.split(r'(<details class="ba-section"[^>]*>)', body)
    items = []
    for head, text in zip(parts[1::2], parts[2::2]):
        sid = re.search(r'id="([^"]+)"', head).group(1)
        title = re.search(r'<summary class="ba-section-title">(.*?)</summary>', text, re.S)
        subs = "".join(
            f'<li><a href="#{hid}">{re.sub(r"<[^>]+>", "", label).strip()}</a></li>'
            for hid, label in _H2.findall(text.split("</details>")[0])
        )
        items.append(
            f'<li><a href="#{sid}">{title.group(1) if title else sid}</a>'
            + (f"<ol>{subs}</ol>" if subs else "")
            + "</li>"
        )
    summary = '<li><a href="#summary">Summary</a></li>' if 'id="summary"' in body else ""
    return (
        f'<nav class="ba-contents" id="contents" data-beyondauc="contents"><strong>Contents</strong>'
        f"<ol>{summary}{''.join(items)}</ol><p><small>Open a section to read it; "
        f"every number is read from the same evaluation as the index.</small></p></nav>"
    )


_MARKDOWN_TAGS = frozenset(
    {
        "p",
        "br",
        "hr",
        "a",
        "strong",
        "em",
        "b",
        "i",
        "code",
        "pre",
        "ul",
        "ol",
        "li",
        "blockquote",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "del",
        "span",
        "div",
    }
)
_MARKDOWN_ATTRIBUTES = {"a": {"href", "title"}, "*": {"class", "id"}}


def clean_markdown_html(text):
    """HTML of Markdown displayed at run time, made inert.

    Only the tags Markdown produces survive (a raw ``<script>`` goes with its
    content, other raw tags are dropped and their text kept), links keep only
    http(s)/mailto or relative targets (no ``javascript:``) and images are
    dropped, so the page never runs or loads anything. The notebooks escape
    names from the data (:func:`~beyondauc.report.markdown_text`), so those
    show verbatim.
    """
    import nh3

    return nh3.clean(
        str(text), tags=set(_MARKDOWN_TAGS), attributes=_MARKDOWN_ATTRIBUTES, url_schemes={"http", "https", "mailto"}
    )


#: The start tags of the cells' inputs and outputs, to which nbconvert's HTML exporter gives
#: ``tabindex="0"`` (so a keyboard reaches them): every ``div`` of class ``jp-Cell-inputWrapper`` or
#: ``jp-OutputArea-output``. Only the template writes such tags: the text of names and tables is
#: escaped, and Markdown shown at run time is cleaned (:func:`_clean_markdown_html`).
_FOCUSABLE = re.compile(
    r'<div\b(?=[^>]*\bclass="(?:[^"]*\s)?(?:jp-Cell-inputWrapper|jp-OutputArea-output)'
    r'(?:\s[^"]*)?")(?![^>]*\btabindex=)([^>]*)>'
)
_IMG_WITHOUT_ALT = re.compile(r"<img\b(?![^>]*\balt=)", re.I)


def report_exporter_class():
    """nbconvert's ``HTMLExporter`` without its BeautifulSoup pass over the finished page.

    ``HTMLExporter.from_notebook_node`` parses the whole page (every figure
    inlined) with BeautifulSoup's pure-Python parser and writes it out again,
    only to add ``alt`` to images without one and ``tabindex="0"`` to the
    inputs and outputs: about 0.1 to 0.2 s of a worker's CPU per report. The
    report template gives every image its alt text, and :data:`_FOCUSABLE`
    adds the tabindex to the tags the template writes, so the page has the
    same elements and attributes as nbconvert's (tested). A page with an
    image without alt text (which the template never writes) still goes
    through nbconvert's own pass.

    Only nbconvert's public API: the filters ``HTMLExporter`` registers, then
    ``TemplateExporter.from_notebook_node`` (the exporter's own preprocessors
    and resources run there), compared with ``HTMLExporter``'s page in the tests.
    """
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class ReportExporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            # what HTMLExporter.from_notebook_node does before its BeautifulSoup pass
            langinfo = nb.metadata.get("language_info", {})
            lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
            self.register_filter(
                "highlight_code", self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
            )
            # The filter looks the notebook's metadata up by the notebook's path (its name, here),
            # as HTMLExporter gives it through its own record of the notebooks it converted.
            meta = (resources or {}).get("metadata", {"name": "Notebook"})
            path = os.path.join(meta.get("path", ""), meta.get("name", ""))
            self.register_filter(
                "filter_data_type",
                WidgetsDataTypeFilter(notebook_metadata={path: nb.metadata}, parent=self, resources=resources),
            )
            html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            if _IMG_WITHOUT_ALT.search(html):
                return HTMLExporter.from_notebook_node(self, nb, resources, **kw)
            return _FOCUSABLE.sub(r'<div\1 tabindex="0">', html), resources

    return ReportExporter


@functools.cache
def _exporter(include_code):
    """The nbconvert exporter of the report template, one per process and setting.

    Kept: building one compiles its Jinja templates (about 0.3 s), and a report
    worker renders one report after another.
    """
    exporter = report_exporter_class()(template_name=_TEMPLATE, extra_template_basedirs=[str(_templates_dir())])
    # Markdown displayed by code carries names from the data: the template cleans its HTML.
    exporter.register_filter("clean_markdown_html", clean_markdown_html)
    exporter.exclude_input = not include_code
    exporter.exclude_input_prompt = not include_code
    exporter.exclude_output_prompt = True
    # validate the combined notebook once, after its preprocessors, not after each of them (a dozen
    # validations of a notebook holding every figure of the report)
    exporter.optimistic_validation = True
    return exporter


def render_html(executed, header, *, include_code):
    """HTML of the combined notebooks through the ``templates/beyondauc`` nbconvert template."""
    combined = combine(executed, header["title"])
    header = dict(header, include_code=bool(include_code))
    exporter = _exporter(bool(include_code))
    body, _ = exporter.from_notebook_node(
        combined, resources={"beyondauc": header, "metadata": {"name": header["title"]}}
    )
    body = _unique_ids(body)
    return body.replace("<!--ba-contents-->", _contents(body), 1)


def _interval(row, name, digits=3):
    """``row``'s interval of ``name`` as 'low–high' ('' without one).

    ``digits=None``: a rank's interval, each end rounded to the nearest rank
    (halves up), since the percentiles of integer ranks are interpolated
    (1.975: just under 2.5% of the replicates rank the model first) and a
    reader looks for ranks.
    """
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    if digits is None and not (is_missing(low) or is_missing(high)):
        low, high, digits = math.floor(low + 0.5), math.floor(high + 0.5), 0
    return format_interval(low, high, digits)


def _stability(row, change, parameters):
    """'stable in 99% of replicates, significant (p = 0.02)': the share of bootstrap replicates that keep the sign of
    the rank change (a stability, not a p-value) and the change's bootstrap p-value, which alone decides
    significance ('' without a change or a bootstrap)."""
    share = row.get("sign_share", row.get("p_change"))
    p_value = row.get("p_value")
    if not math.isfinite(change) or change == 0 or is_missing(share):
        return ""
    text = f"stable in {format_number(100 * share, 0)}% of replicates"
    if is_missing(p_value):
        return text
    n_bootstrap = parameters.get("n_bootstrap") or 0
    p_text = f"p < {1 / n_bootstrap:.2g}" if p_value == 0 and n_bootstrap else f"p = {format_number(p_value, 2)}"
    significant = bool(row.get("significant")) and not is_missing(row.get("significant"))
    return f"{text}, {'significant' if significant else 'not significant'} ({p_text})"


#: The leaderboard's numeric columns, whose cells carry their number for the index's sorting script.
SORTED_NUMBERS = ("auc", "auc_rank", "accuracy", "accuracy_rank", "kappa", "disca", "drift")


def sort_values(row, change):
    """``{column: text}``: each numeric cell's unrounded number as the index's sorting script reads it (``""`` when
    missing, which sorts last), so an interval under an estimate never enters the order.

    Examples
    --------
    >>> from beyondauc.report.render import sort_values
    >>> sort_values({"auc": 0.81234, "auc_rank": 2, "kappa": float("nan")}, -1)["auc"]
    '0.81234'
    >>> v = sort_values({}, float("nan")); v["kappa"], v["rank_change"]
    ('', '')
    """
    out = {}
    for name, value in [*((n, row.get(n)) for n in SORTED_NUMBERS), ("rank_change", change)]:
        out[name] = "" if value is None or is_missing(value) or not math.isfinite(float(value)) else repr(float(value))
    return out


def _guarantee_counts(evaluation, model):
    """(held, judged) at the headline target risk under xdomain; None without a ``risk_control`` table."""
    if "risk_control" not in evaluation.tables or "target_risks" not in evaluation.parameters:
        return None
    risk = headline_risk(evaluation.parameters["target_risks"])
    return guarantee_held(evaluation.table("risk_control"), model, risk=risk)


def _guarantee_cell(evaluation, model):
    """The index's "guarantee held" cell, "7/8" datasets, and the share it sorts by ("–" and "" where nothing was
    judged)."""
    counts = _guarantee_counts(evaluation, model)
    if counts is None or not counts[1]:
        return "\u2013", ""
    return f"{counts[0]}/{counts[1]}", repr(counts[0] / counts[1])


def index_rows(evaluation, reports):
    """One row per model for ``index.html``, read from the evaluation (the numbers the reports show)."""
    board = evaluation.table("leaderboard")
    verdicts = evaluation.table("verdicts").set_index("model")
    by_model = {row["model"]: row for row in board.to_dict("records")}
    rows = []
    for rep in reports:
        row = by_model.get(rep.model, {})
        change = row.get("rank_change")
        change = math.nan if change is None or pd.isna(change) else int(change)
        stability = _stability(row, change, evaluation.parameters)
        verdict = verdicts.loc[rep.model] if rep.model in verdicts.index else None
        guarantee = _guarantee_cell(evaluation, rep.model)
        rows.append(
            {
                "model": rep.model,
                "status": rep.status,
                "error": rep.error,
                "verdict": None if verdict is None else verdict["verdict"],
                "verdict_status": None if verdict is None else verdict["status"],
                "verdict_reason": "" if verdict is None else str(verdict.get("reason", "") or ""),
                "auc": format_number(row.get("auc")),
                "auc_ci": _interval(row, "auc"),
                "auc_rank": format_number(row.get("auc_rank"), 0),
                "auc_rank_ci": _interval(row, "auc_rank", None),
                "accuracy": format_number(row.get("accuracy")),
                "accuracy_ci": _interval(row, "accuracy"),
                "accuracy_rank": format_number(row.get("accuracy_rank"), 0),
                "accuracy_rank_ci": _interval(row, "accuracy_rank", None),
                "rank_change": format_number(change, 0, signed=True),
                "change_class": ("up" if change > 0 else "down" if change < 0 else "")
                + (" ns" if "not significant" in stability else ""),
                "stability": stability,
                "kappa": format_number(row.get("kappa")),
                "kappa_ci": _interval(row, "kappa"),
                "disca": format_number(row.get("disca")),
                "disca_ci": _interval(row, "disca"),
                "drift": format_number(row.get("drift")),
                "drift_ci": _interval(row, "drift"),
                "vs": index_cell(evaluation, rep.model),
                "guarantee": guarantee[0],
                "values": {**sort_values(row, change), "guarantee": guarantee[1]},
                "html": rep.html,
                "pdf": rep.pdf,
                "notebooks": [{"name": nb.name, "path": nb.path} for nb in rep.notebooks],
            }
        )
    order = {m: i for i, m in enumerate(by_model)}
    rows.sort(key=lambda r: order.get(r["model"], len(order)))
    return rows


def render_index(context):
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_templates_dir())), autoescape=True, undefined=jinja2.StrictUndefined
    )
    env.filters["urlpath"] = lambda p: urllib.parse.quote(p)
    return env.get_template("index.html.j2").render(**context)


def _templates_dir():
    return Path(__file__).resolve().parent.parent / "templates"  # a symlink in a checkout
