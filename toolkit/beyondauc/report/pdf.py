"""A report as PDF: the HTML page laid out by WeasyPrint with every section open and every table on the page.

Long words get break points, too-wide tables get smaller type, are transposed or, last, break
anywhere; the cells marked for the appendix move after the analyses. :mod:`beyondauc.report.jobs`
calls :func:`write_pdf_file` after the HTML (:mod:`beyondauc.report.render`).
"""

from __future__ import annotations

import html as html_module
import logging
import re

from ..utils.output import atomic_write

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
