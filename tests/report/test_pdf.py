"""The PDF of a report loses nothing and reads like a document: every column header of every
table of the HTML is in the PDF's text (wide tables shrink or wrap between words instead of
being cut), no table cell is broken inside a word or a number, page 1 holds the verdict and its
findings, no page is left near-empty, and every page has its number and the running header with
the model's name.

Renders one real report (one model, two datasets, ``pdf=True``; about a minute on 2
shared cores) and reads the text inside each page's box with pypdfium2.  (With the
previous print CSS, A4 portrait and no wrapping, the diagnostics table overflowed the
page and 'noise_robustness_val' / 'noise_robustness_test' were missing; with the print CSS that
followed, cells wrapped anywhere: '0.9/85/6', 'auc_ran/k', 'significa/nt', and the verdict began
on page 2.)
"""

from __future__ import annotations

import re

import pytest

import beyondauc as ba
from helpers.report import appendix_starts, parse_html, pdf_layout, summary_pages_and_thin_pages

pytest.importorskip("weasyprint")
pdfium = pytest.importorskip("pypdfium2")

MODEL = "mlp"


ZWSP = "\u200b"
SPACE = " \t\n\r\f"  # what a line may break at (with an underscore's <wbr> and a zero-width space)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("pdf_report")
    result = ba.run_report("demo", models=MODEL, datasets="wine,digits_3v8", out=out, pdf=True, jobs=2, progress=False)
    assert result.ok, result.summary()
    rep = result.reports[0]
    return out / rep.html, out / rep.pdf


@pytest.fixture(scope="module")
def layout(rendered):
    """The laid-out pages (WeasyPrint's boxes) of the report's PDF: what ``write_pdf`` drew."""
    from beyondauc.report.pdf import print_document

    html, pdf = rendered
    return print_document(html.read_text(encoding="utf-8"), pdf.parent)


@pytest.fixture(scope="module")
def report(rendered):
    html_path, pdf_path = rendered
    html = html_path.read_text(encoding="utf-8")
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        # only text inside the page: content that overflows the page box is in the PDF but not visible
        pages = [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))]
        sizes = [pdf[i].get_size() for i in range(len(pdf))]
    finally:
        pdf.close()
    return html, pages, sizes


def squash(text):
    return re.sub(r"\s+", "", text)


def column_headers(html):
    """Text of every header cell of every table (thead cells, and th of header rows)."""
    root = parse_html(html)
    headers = []
    for table in root.find_all("table"):
        heads = table.find_all("thead") or [table]
        for head in heads:
            for th in head.find_all("th"):
                text = th.text.strip()
                if text:
                    headers.append(text)
    return headers


def test_every_table_column_header_is_in_the_pdf(report):
    html, pages, _ = report
    headers = column_headers(html)
    assert len(headers) > 40  # the report's tables: data, protocol x method, diagnostics, selective ...
    for wide in ("indata", "outdata", "DiSCA"):  # the columns the issue saw cut off
        assert wide in headers, wide
    text = squash("".join(pages))
    missing = [h for h in dict.fromkeys(headers) if squash(h) not in text]
    assert not missing, missing


def test_every_page_has_its_number_and_the_running_header(report):
    _, pages, sizes = report
    n = len(pages)
    assert n >= 3
    for i, text in enumerate(pages, start=1):
        assert f"page {i} / {n}" in text, (i, text[:200])
        assert f"beyondauc report: {MODEL}" in text, (i, text[:200])


def test_pages_are_landscape(report):
    _, _, sizes = report
    assert all(w > h for w, h in sizes)


def test_a_figure_taller_than_the_page_shrinks_to_it_whole(tmp_path):
    """A 3 x 3 grid of panels (the reliability and coverage-accuracy grids) is taller than a landscape
    page at the page's width; it once ran 70 pt past the page's bottom, its last row cut off. It shrinks
    to the page, keeping its proportions: the image lies inside the page box."""
    import base64
    import io

    import nbformat
    import pypdfium2.raw as raw
    from PIL import Image

    from beyondauc.report import NotebookRun
    from beyondauc.report.pdf import write_pdf_file
    from beyondauc.report.render import render_html

    buf = io.BytesIO()
    Image.new("RGB", (1872, 1584), "steelblue").save(buf, format="PNG")  # 11.7 x 9.9 in at 2 x 80 dpi
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Tall"),
        nbformat.v4.new_code_cell(
            "show(fig)",
            outputs=[
                nbformat.v4.new_output(
                    "display_data",
                    data={"image/png": base64.b64encode(buf.getvalue()).decode()},
                    metadata={"image/png": {"width": 936, "height": 792, "alt": "a grid"}},
                )
            ],
        ),
    ]
    header = {
        "title": "beyondauc report: m",
        "model": "m",
        "source": "s",
        "sha256": "0" * 64,
        "version": ba.__version__,
        "date": "d",
        "parameters": {},
        "failed": None,
    }
    html = render_html(
        [(NotebookRun("summary", "summary.ipynb", "ok", None, 1.0, 0.5), nb)], header, include_code=False
    )
    write_pdf_file(html, tmp_path / "tall.pdf", tmp_path)
    pdf = pdfium.PdfDocument(str(tmp_path / "tall.pdf"))
    try:
        images = []
        for i in range(len(pdf)):
            width, height = pdf[i].get_size()
            for obj in pdf[i].get_objects(filter=[raw.FPDF_PAGEOBJ_IMAGE]):
                images.append((obj.get_bounds(), width, height))
    finally:
        pdf.close()
    assert len(images) == 1
    (left, bottom, right, top), width, height = images[0]
    assert 0 <= left < right <= width and 0 <= bottom < top <= height, images[0]
    assert (right - left) / (top - bottom) == pytest.approx(1872 / 1584, rel=0.01)  # not squashed


# -- no cell broken inside a word, the verdict on page 1, no near-empty page ---------------------------------


def breaks_inside_words(source, lines):
    """The line breaks of a table cell that fall inside a word or a number.

    ``source`` is the cell's text in the HTML, ``lines`` its lines as laid out.
    A break may fall at white space, after an underscore (the PDF's markup puts
    a ``<wbr>`` there) or at a zero-width space (a 64-character word's); any
    other break splits a word ('significa|nt') or a number ('0.9|85|6').
    """
    keep = [i for i, ch in enumerate(source) if ch not in SPACE and ch != ZWSP]
    bad, count = [], 0
    for line, following in zip(lines, lines[1:]):
        count += sum(ch not in SPACE and ch != ZWSP for ch in line)
        if 0 < count < len(keep):
            at = keep[count - 1]
            if source[at] != "_" and source[at + 1] not in SPACE + ZWSP:
                bad.append((line, following))
    return bad


def test_breaks_inside_words_sees_a_broken_word_or_number():
    assert breaks_inside_words("0.9856", ["0.9", "85", "6"]) == [("0.9", "85"), ("85", "6")]
    assert breaks_inside_words("significant", ["significa", "nt"]) == [("significa", "nt")]
    assert breaks_inside_words("auc_rank low", ["auc_" + ZWSP, "rank", "low"]) == []
    assert breaks_inside_words("a  b", ["a", "b"]) == [] and breaks_inside_words("x", ["x"]) == []


def table_cells(document):
    """``(page, cell source text, laid-out lines)`` of every ``td``/``th`` on every page of ``document``."""
    from weasyprint.formatting_structure.boxes import LineBox, TableCellBox, TextBox

    for number, page in enumerate(document.pages, start=1):
        for cell in page._page_box.descendants():
            if isinstance(cell, TableCellBox) and cell.element_tag in ("td", "th"):
                lines = [
                    "".join(t.text for t in line.descendants() if isinstance(t, TextBox))
                    for line in cell.descendants()
                    if isinstance(line, LineBox)
                ]
                yield number, "".join(cell.element.itertext()), lines


def broken_cells(document):
    return [(page, lines) for page, source, lines in table_cells(document) if breaks_inside_words(source, lines)]


def test_no_table_cell_is_broken_inside_a_word_or_number(layout):
    cells = list(table_cells(layout))
    assert len(cells) > 500  # the report's tables, every cell
    assert sum(len(lines) > 1 for _, _, lines in cells) > 0  # some cells wrap (between words)
    assert broken_cells(layout) == []


def test_every_word_and_number_of_every_table_prints_on_one_line(report):
    """In the PDF itself: each word and number of each table cell (the pieces between spaces and after
    underscores, 3 characters or more) is on one line of the page's text, not spread over several."""
    html, pages, _ = report
    text = "\n".join(pages).replace(ZWSP, "")
    root = parse_html(html)
    pieces = set()
    for table in root.find_all("table"):
        if "ba-meta" in table.classes:  # the header's data, parameters and hash print as one paragraph
            continue
        for cell in table.find_all("td") + table.find_all("th"):
            pieces.update(p for p in re.split(r"\s+|(?<=_)", cell.text) if len(p) >= 3)
    assert len(pieces) > 200
    missing = sorted(p for p in pieces if p not in text)
    assert not missing, missing[:20]


def test_page_one_holds_the_verdict_and_its_findings(report):
    html, pages, _ = report
    root = parse_html(html)
    verdict = [p for p in root.find_all("p") if "ba-verdict" in p.classes]
    findings = [li for li in root.find_all("li") if "ba-finding" in li.classes]
    assert len(verdict) == 1 and len(findings) >= 3
    first = squash(pages[0])
    for element in verdict + findings:
        assert squash(element.text) in first, element.text


def page_fill(document):
    """Share of each page's content height that its content uses (to the bottom of its lowest line or image)."""
    from weasyprint.formatting_structure.boxes import LineBox, MarginBox, ReplacedBox

    fills = []
    for page in document.pages:
        box = page._page_box
        bottom = max(
            (
                b.position_y + b.margin_height()
                for child in box.children
                if not isinstance(child, MarginBox)
                for b in child.descendants()
                if isinstance(b, (LineBox, ReplacedBox))
            ),
            default=0,
        )
        fills.append((bottom - box.content_box_y()) / box.height)
    return fills


def test_no_page_is_left_near_empty(layout):
    """Sections follow one another and only a caption moves with its table or figure: no page but the last holds
    a line or two (once page 5 held one line of the contents, and each section left its last page near-empty)."""
    fills = page_fill(layout)
    assert all(0 < f <= 1.001 for f in fills), fills
    assert min(fills[:-1]) > 0.2, [round(f, 2) for f in fills]


def wide_table_notebook(columns, rows=6, levels=1):
    """A notebook showing one DataFrame of ``columns`` snake_case columns of 4-decimal numbers (``levels=2``: under
    a second header level, which pandas writes with ``colspan``)."""
    import nbformat
    import numpy as np
    import pandas as pd

    names = [f"bias_robustness_test_{i}" for i in range(columns)]
    if levels == 2:
        names = pd.MultiIndex.from_tuples([(f"protocol_{i // 4}", name) for i, name in enumerate(names)])
    frame = pd.DataFrame(
        np.random.default_rng(0).uniform(size=(rows, columns)).round(4),
        columns=names,
        index=pd.Index([f"iris_versicolor_{i}" for i in range(rows)], name="dataset"),
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Wide"),
        nbformat.v4.new_markdown_cell("The caption."),
        nbformat.v4.new_code_cell(
            "frame",
            outputs=[
                nbformat.v4.new_output(
                    "execute_result", data={"text/html": frame.to_html(), "text/plain": "frame"}, execution_count=1
                )
            ],
        ),
    ]
    return nb


def print_html(nb):
    from beyondauc.report import NotebookRun
    from beyondauc.report.render import render_html

    header = {
        "title": "beyondauc report: m",
        "model": "m",
        "source": "s",
        "sha256": "0" * 64,
        "version": ba.__version__,
        "date": "d",
        "parameters": {},
        "failed": None,
    }
    return render_html(
        [(NotebookRun("summary", "summary.ipynb", "ok", None, 1.0, 0.5), nb)], header, include_code=False
    )


def table_boxes(document):
    from weasyprint.formatting_structure.boxes import TableBox

    for page in document.pages:
        box = page._page_box
        for table in box.descendants():
            if isinstance(table, TableBox) and table.element_tag == "table":
                yield box.content_box_x() + box.width, table


@pytest.mark.parametrize(("columns", "levels"), [(8, 1), (16, 1), (40, 1), (40, 2)])
def test_a_table_wider_than_the_page_shrinks_or_turns_and_no_word_breaks(tmp_path, columns, levels):
    """Columns of 'bias_robustness_test_i' and 4-decimal numbers, 6 rows. 8 fit the landscape page in the print
    size (7.5 pt), their headers wrapping at underscores; 16 are wider than the page even so and are set in
    smaller type, just what fits; 40 do not fit even in the smallest type (5 pt) and are transposed (40 rows of
    6 numbers, in the print size). Under two header levels (colspan: not transposed) they are set in 5 pt and
    their cells, as the last resort, may break anywhere: the table stays on the page, nothing cut. Otherwise no
    cell is broken inside a word or number; with the print CSS of before (cells breaking anywhere) they were:
    the check sees it."""
    import weasyprint

    from beyondauc.report.pdf import breakable_words, print_document, print_tables

    html = print_html(wide_table_notebook(columns, levels=levels))
    document = print_document(html, tmp_path)
    tables = list(table_boxes(document))
    # one table; 41 rows (the transposed one) start under the caption and go on on the next page, its pieces
    # each on their page (a header row repeated on each page is counted once)
    assert len({id(t.element) for _, t in tables}) == 1 and len(tables) <= 2
    right, table = tables[0]
    assert all(t.position_x + t.margin_width() <= r + 0.5 for r, t in tables)  # on the page
    size = table.style["font_size"] * 0.75
    shape = (
        len(table.column_widths),
        sum(
            len(group.children)
            for i, (_, t) in enumerate(tables)
            for group in t.children
            if i == 0 or not group.is_header
        ),
    )  # columns, rows
    # 6 rows under 2 header rows (names, then the index name), 3 with two levels; turned: the index name
    # row goes into the top-left cell
    assert shape == ((columns + 1, 8 + (levels == 2)) if (columns, levels) != (40, 1) else (7, columns + 1))
    assert size == pytest.approx({8: 7.5, 16: size, 40: 7.5 if levels == 1 else 5.0}[columns])
    if columns == 16:
        assert 5 < size < 7.5
        # just what fits: a little more type and the table is wider than the page
        assert table.margin_width() > 0.9 * (right - table.position_x)
    if levels == 1:
        assert broken_cells(document) == []
    if columns == 16:
        before = weasyprint.CSS(
            string="td, th { overflow-wrap: anywhere !important; word-break: break-all !important }"
        )
        old = weasyprint.HTML(string=print_tables(breakable_words(html)), base_url=str(tmp_path)).render(
            stylesheets=[before]
        )
        assert broken_cells(old)
    if levels == 2:
        assert broken_cells(document)  # the last resort, said in the docs


def test_transposed_table_turns_a_plain_table_and_leaves_the_others():
    from beyondauc.report.pdf import transposed_table

    head = '<p>x</p><table data-ba-table="3" class="dataframe">'
    plain = (
        f"{head}<thead><tr><th></th><th>auc_val</th><th>drift</th><th>w</th></tr>"
        "<tr><th>dataset</th><th></th><th></th><th></th></tr></thead>"
        "<tbody><tr><th>wine</th><td>0.98</td><td>0.01</td><td>4.2</td></tr></tbody></table><p>y</p>"
    )
    assert transposed_table(plain, 3) == (
        f"{head}<tbody><tr><th>dataset</th><th>wine</th></tr><tr><th>auc_val</th><td>0.98</td></tr>"
        "<tr><th>drift</th><td>0.01</td></tr><tr><th>w</th><td>4.2</td></tr></tbody></table><p>y</p>"
    )
    assert transposed_table(plain, 4) is None  # no such table
    assert transposed_table(plain.replace("<th>auc_val</th>", '<th colspan="2">auc_val</th>'), 3) is None
    tall = plain.replace("</tbody>", "<tr><th>a</th><td>1</td><td>2</td><td>3</td></tr>" * 3 + "</tbody>")
    assert transposed_table(tall, 3) is None  # as many rows as columns: turning it would not narrow it


def test_print_tables_numbers_tables_and_breaks_after_underscores_only_inside_them():
    from beyondauc.report.pdf import print_tables

    html = (
        '<style>td_x { color: red }</style><p>a_b</p><table class="t"><tr><th>auc_rank</th>'
        "<td>0.9856</td></tr></table><p>c_d</p><TABLE><tr><td>x_y</td></tr></TABLE>"
    )
    out = print_tables(html)
    assert out == (
        '<style>td_x { color: red }</style><p>a_b</p><table data-ba-table="0" class="t"><tr>'
        '<th>auc_<wbr>rank</th><td>0.9856</td></tr></table><p>c_d</p><table data-ba-table="1">'
        "<tr><td>x_<wbr>y</td></tr></TABLE>"
    )


# -- a summary first, the analyses as appendices; no hole left by a table -------------------------------------


def test_the_pdf_opens_with_a_summary_of_at_most_four_pages_then_the_appendices(rendered):
    """The verdict, the key figure and the comparison's means, then appendix A, B, C (the analyses) and D (the
    comparison on every dataset); no page under a fifth full, measured on the page images, but a section's last."""
    html, pdf = rendered
    texts, _ = pdf_layout(pdf)
    starts = appendix_starts(texts)
    assert sorted(starts) == ["A", "B", "C", "D", "E"]
    assert [starts[k][0] for k in "ABCDE"] == sorted(starts[k][0] for k in "ABCDE")
    summary, thin, fills = summary_pages_and_thin_pages(pdf)
    assert 1 <= summary <= 4, summary
    assert thin == [], [round(f, 2) for f in fills]
    before = squash("".join(texts[:summary]))
    assert "Verdict" in before and "Thekeyfigure" in before and "Againstthebaseline" in before
    assert "meanoverdatasets" in before
    # the comparison on every dataset is appendix D: its rows (a paired DeLong test per dataset) are not in the
    # summary, which names the test once in its prose and once in the mean's row
    d_page = starts["D"][0]
    assert "AppendixD.Againstthebaselineoneverydataset" in squash(texts[d_page - 1])
    after = squash("".join(texts[d_page - 1 : starts["E"][0]]))
    assert "AppendixE.Whatthisreportshows" in squash(texts[starts["E"][0] - 1])
    assert before.count("pairedDeLong") == 2 and after.count("pairedDeLong") >= 2
    assert after.count("meanoverdatasets") == 0


def test_the_fill_measure_sees_a_near_empty_page(tmp_path):
    """The page-image measure of a page with one line of text is near 0, of a page of table rows near 1."""
    import nbformat

    from beyondauc.report.pdf import write_pdf_file

    nb = wide_table_notebook(4, rows=60)
    nb.cells.append(nbformat.v4.new_markdown_cell("One last line."))
    write_pdf_file(print_html(nb), tmp_path / "t.pdf", tmp_path)
    _, fills = pdf_layout(tmp_path / "t.pdf")
    assert len(fills) >= 2 and fills[0] > 0.9 and 0 < fills[-1] < 0.9


def test_a_long_table_breaks_across_pages_and_repeats_its_header_rows(tmp_path):
    """Half a page of text, then a table of 40 rows (less than a page, more than what is left of page 1). It starts
    under its caption on page 1 and goes on on page 2 under its header row repeated, rather than moving whole to
    page 2 and leaving half of page 1 empty, as it did with JupyterLab's print style (each output kept on one page):
    the check sees that."""
    import nbformat
    import weasyprint

    from beyondauc.report.pdf import print_document

    nb = wide_table_notebook(4, rows=40)
    text = "\n\n".join(f"Paragraph {i} of the text before." for i in range(14))
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(text))
    html = print_html(nb)

    def pages(document):
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.pdf"
        path.write_bytes(document.write_pdf())
        return pdf_layout(path)

    texts, fills = pages(print_document(html, tmp_path))
    assert len(texts) == 2
    assert "The caption." in texts[0] and "iris_versicolor_0" in texts[0]  # caption and first rows on page 1
    assert "iris_versicolor_39" in texts[1] and "iris_versicolor_0" not in texts[1]
    assert all("bias_robustness_test_3" in t.replace("\r", "").replace("\n", "") for t in texts)  # header repeated
    assert fills[0] > 0.9
    old = weasyprint.CSS(string=".jp-OutputArea-child { break-inside: avoid-page !important }")
    from beyondauc.report.pdf import breakable_words, print_tables

    before, _ = pages(
        weasyprint.HTML(string=print_tables(breakable_words(html)), base_url=str(tmp_path)).render(stylesheets=[old])
    )
    assert "iris_versicolor_0" not in before[0]  # the table moved whole to page 2


def test_print_appendix_moves_the_marked_cells_after_the_analyses():
    from beyondauc.report.pdf import print_appendix

    html = (
        '<nav class="ba-contents"><ol><li><a href="#summary">Summary</a></li><li><a href="#a">A</a><ol>'
        '<li>x</li></ol></li></ol><p><small>s</small></p></nav><section id="summary"><p>verdict</p>'
        '<!--ba-print-appendix--><h2 id="e">Every &amp; dataset<a class="anchor-link" href="#e">&#182;</a></h2>'
        "<!--/ba-print-appendix--><!--ba-print-appendix--><table><tr><td>1</td></tr></table>"
        '<!--/ba-print-appendix--><p>the data</p></section><details class="ba-section">A</details><!--ba-end-->'
    )
    out = print_appendix(html)
    assert (
        out.index("<p>verdict</p>")
        < out.index("<p>the data</p>")
        < out.index("A</details>")
        < out.index('<div class="ba-section-title">Every &amp; dataset</div>')
        < out.index("<td>1</td>")
    )
    assert "<h2" not in out and "ba-print-appendix-->" not in out
    assert '<li><a href="#print-appendix">Every &amp; dataset</a></li></ol><p>' in out
    assert print_appendix(html.replace("<!--ba-end-->", "")) == html.replace("<!--ba-end-->", "")  # an overview
    # a second marked heading opens a second appendix, after the first, both in the contents
    two = print_appendix(
        html.replace(
            "<p>the data</p>",
            '<!--ba-print-appendix--><h2 id="n">Notes</h2><p>n1</p><!--/ba-print-appendix--><p>the data</p>',
        )
    )
    assert (
        two.index("<td>1</td>")
        < two.index('id="print-appendix-2"')
        < two.index('<div class="ba-section-title">Notes</div>')
        < two.index("<p>n1</p>")
    )
    assert (
        '<li><a href="#print-appendix">Every &amp; dataset</a></li><li><a href="#print-appendix-2">Notes</a></li>'
        "</ol><p>"
    ) in two
