"""Rendering of the reports: executed notebooks to one HTML page (nbconvert), PDF, the index.

Private: :mod:`beyondauc.report` runs the notebooks and calls these to turn
them into what a reader opens.
"""

from __future__ import annotations

import copy
import functools
import html as html_module
import logging
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
from ..utils.output import atomic_write

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


_MARKUP = re.compile(r"(<style\b.*?</style>|<script\b.*?</script>|<[^>]*>)", re.S | re.I)
_LONG_WORD = re.compile(r"[^\s<>&]{64,}")


def breakable_words(html):
    """``html`` with every word of 64 or more characters of its text breakable every 32 characters.

    For the PDF only: table cells wrap between words only, so such a word (a
    10,000-character model name) would make its table wider than any page, and
    WeasyPrint's ``overflow-wrap: anywhere`` (the last resort of
    :func:`_fit_tables`) takes time quadratic in the length of a cell's
    text: it held a report for many minutes. Such a word gets a zero-width
    space every 32 characters and ``overflow-wrap: break-word`` instead. Tags,
    styles and scripts are left alone; the text reads the same.
    """

    def split(m):
        word = m.group(0)
        pieces = "\u200b".join(word[i : i + 32] for i in range(0, len(word), 32))
        return f'<span style="overflow-wrap: break-word">{pieces}</span>'

    parts = _MARKUP.split(html)
    parts[::2] = [_LONG_WORD.sub(split, text) for text in parts[::2]]
    return "".join(parts)


_TABLE_START = re.compile(r"<table\b", re.I)
_TABLE_END = re.compile(r"</table\s*>", re.I)
#: The smallest type (pt) a table too wide for the page is set in, before its cells may break anywhere.
_PRINT_MIN_FONT_PT = 5.0


def print_tables(html):
    """``html`` with every table numbered (``data-ba-table``) and its text breakable after each underscore.

    For the PDF only: a snake_case header or name (``auc_rank_low``) then wraps
    between its parts when its column is narrow, never inside a word or a
    number (the print style lets cells wrap at spaces only); the number lets
    :func:`_too_wide_tables` name the tables wider than the page. The text
    reads the same (``<wbr>`` has none).
    """
    parts = _MARKUP.split(html)
    depth = count = 0
    for i, part in enumerate(parts):
        if i % 2 == 0:
            if depth > 0:
                parts[i] = part.replace("_", "_<wbr>")
        elif _TABLE_START.match(part):
            parts[i] = f'<table data-ba-table="{count}"{part[6:]}'
            depth, count = depth + 1, count + 1
        elif _TABLE_END.match(part):
            depth = max(depth - 1, 0)
    return "".join(parts)


def _too_wide_tables(document):
    """``{number: (font size in pt, width available / width)}`` of the laid-out tables wider than the page."""
    from weasyprint.formatting_structure.boxes import TableBox

    found = {}
    for page in document.pages:
        box = page._page_box
        right = box.content_box_x() + box.width
        for table in box.descendants():
            if not (isinstance(table, TableBox) and table.element_tag == "table"):
                continue
            number = table.element.get("data-ba-table")
            if number is None:
                continue
            width = table.margin_width()
            over = table.position_x + width - right
            if over > 0.5:
                ratio = (right - table.position_x) / width
                found[number] = (table.style["font_size"] * 0.75, min(ratio, found.get(number, (0, 1))[1]))
    return found


_ROW = re.compile(r"<tr\b[^>]*>(.*?)</tr\s*>", re.S | re.I)
_CELL = re.compile(r"<(t[hd])\b([^>]*)>(.*?)</\1\s*>", re.S | re.I)


def transposed_table(html, number):
    """``html`` with table ``number`` (``data-ba-table``) transposed, or None when that would not narrow it.

    A wide and short table (a few datasets, many statistics) prints as a tall
    and narrow one: its columns become rows. Only a plain table is transposed
    (no ``colspan``/``rowspan``, no nested table, every row as long) and only
    when it has fewer rows than columns. A pandas header row that holds only
    the index's name ('dataset') goes into the top-left cell.
    """
    start = html.find(f'<table data-ba-table="{number}"')
    end = html.find("</table>", start)
    if start < 0 or end < 0:
        return None
    body = html[html.index(">", start) + 1 : end]
    if re.search(r"<table\b|\b(?:col|row)span=", body, re.I):
        return None
    rows = [_CELL.findall(row) for row in _ROW.findall(body)]
    if not rows or any(len(row) != len(rows[0]) for row in rows):
        return None
    blank = [i for i, row in enumerate(rows) if i > 0 and not any(_MARKUP.sub("", c[2]).strip() for c in row[1:])]
    if len(blank) == 1 and not _MARKUP.sub("", rows[0][0][2]).strip():
        rows[0][0] = rows.pop(blank[0])[0]
    if len(rows) >= len(rows[0]):
        return None
    flipped = "".join(
        "<tr>" + "".join(f"<{tag}{attrs}>{text}</{tag}>" for tag, attrs, text in column) + "</tr>"
        for column in zip(*rows)
    )
    head = html[start : html.index(">", start) + 1]
    return f"{html[:start]}{head}<tbody>{flipped}</tbody>{html[end:]}"


def _fit_tables(html, too_wide, state):
    """The next try at fitting the tables of ``too_wide`` (:func:`_too_wide_tables`) on the page.

    Each is set in the type that fits it (its padding is in em), down to
    :data:`_PRINT_MIN_FONT_PT`; one wider than the page even then is
    transposed once (:func:`_transposed_table`), and failing that its cells
    may break anywhere, the last resort that still prints every character.
    Updates ``state`` (``sizes``: number -> pt; ``transposed`` and
    ``anywhere``: numbers) and returns the html.
    """
    for number, (size, ratio) in too_wide.items():
        fitted = size * ratio * 0.97
        if fitted >= _PRINT_MIN_FONT_PT:
            state["sizes"][number] = fitted
        elif number not in state["transposed"] and (flipped := transposed_table(html, number)) is not None:
            html, state["sizes"][number] = flipped, size
            state["transposed"].add(number)
        else:
            state["sizes"][number] = _PRINT_MIN_FONT_PT
            state["anywhere"].add(number)
    return html


def _tables_css(sizes, anywhere):
    rules = [f'table[data-ba-table="{n}"] {{ font-size: {size:.2f}pt !important; }}' for n, size in sizes.items()]
    rules += [
        f'table[data-ba-table="{n}"] th, table[data-ba-table="{n}"] td {{ overflow-wrap: anywhere !important; }}'
        for n in anywhere
    ]
    return "@media print { " + "\n".join(rules) + " }"


_PRINT_APPENDIX = re.compile(r"<!--ba-print-appendix-->(.*?)<!--/ba-print-appendix-->", re.S)
_FIRST_H2 = re.compile(r"<h2\b[^>]*>(.*?)</h2>", re.S)


def print_appendix(html):
    """``html`` with the summary's details (cells tagged ``print-appendix``) moved after the analyses.

    For the PDF only: the printed summary holds the verdict, the key figure and
    the comparison in short. The marked cells follow the analyses as further
    appendices, one for each marked cell holding a ``##`` heading (the
    heading becomes the appendix's title) and the marked cells after it,
    each listed in the contents. Without such cells (or without the end of
    the sections, an overview) the html is returned as it is.
    """
    moved = _PRINT_APPENDIX.findall(html)
    if not moved or "<!--ba-end-->" not in html:
        return html
    groups = []
    for cell in moved:
        heading = _FIRST_H2.search(cell)
        if heading or not groups:
            text = _MARKUP.sub("", heading.group(1)) if heading else ""
            title = html_module.escape(html_module.unescape(text).replace("\u00b6", "").strip())
            title = title or "Details of the summary"
            groups.append([title, ""])
            cell = cell[: heading.start()] + cell[heading.end() :] if heading else cell
        groups[-1][1] += cell
    sections, items = [], []
    for i, (title, body) in enumerate(groups):
        sid = "print-appendix" if i == 0 else f"print-appendix-{i + 1}"
        sections.append(
            f'<section class="ba-section ba-print-appendix" id="{sid}" data-beyondauc="print-appendix">'
            f'<div class="ba-section-title">{title}</div>'
            f'<div class="ba-section-body">{body}</div></section>'
        )
        items.append(f'<li><a href="#{sid}">{title}</a></li>')
    html = _PRINT_APPENDIX.sub("", html).replace("<!--ba-end-->", "".join(sections), 1)
    return re.sub(
        r'(<nav class="ba-contents".*?)(</ol><p>)',
        lambda m: m.group(1) + "".join(items) + m.group(2),
        html,
        count=1,
        flags=re.S,
    )


def print_document(html, base_dir):
    """The laid-out PDF (a WeasyPrint document) of a report's ``html``: every section open, every table on the page.

    Laid out once; while a table is wider than the page (a generic fallback:
    the notebooks keep their tables narrow), laid out again with that table
    in smaller type, transposed or, last, with cells that break anywhere
    (:func:`_fit_tables`); at most four layouts, one in the usual case.
    """
    try:
        import weasyprint
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("`pdf=True` needs WeasyPrint: pip install 'beyondauc[pdf]'") from exc
    for name in ("weasyprint", "fontTools"):
        logging.getLogger(name).setLevel(logging.ERROR)
    html = html.replace('<details class="ba-section"', '<details open class="ba-section"')  # print every section
    html = print_tables(breakable_words(print_appendix(html)))
    state = {"sizes": {}, "transposed": set(), "anywhere": set()}
    for _ in range(4):
        css = [weasyprint.CSS(string=_tables_css(state["sizes"], state["anywhere"]))] if state["sizes"] else []
        document = weasyprint.HTML(string=html, base_url=str(base_dir)).render(stylesheets=css)
        too_wide = {n: fit for n, fit in _too_wide_tables(document).items() if n not in state["anywhere"]}
        if not too_wide:
            break
        html = _fit_tables(html, too_wide, state)
    return document


def write_pdf_file(html, target, base_dir):
    atomic_write(target, print_document(html, base_dir).write_pdf())


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
