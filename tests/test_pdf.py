"""The PDF of a report loses nothing: every column header of every table of the HTML is in
the PDF's text (wide tables wrap instead of being cut), and every page has its number and
the running header with the model's name.

Renders one real report (one model, two datasets, ``pdf=True``; about a minute on 2
shared cores) and reads the text inside each page's box with pypdfium2.  (With the
previous print CSS, A4 portrait and no wrapping, the diagnostics table overflowed the
page and 'noise_robustness_val' / 'noise_robustness_test' were missing.)
"""
from __future__ import annotations

import re

import pytest
from report_helpers import parse_html

import beyondauc as ba

pytest.importorskip("weasyprint")
pdfium = pytest.importorskip("pypdfium2")

MODEL = "mlp"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("pdf_report")
    result = ba.run_report("demo", models=MODEL, datasets="wine,digits_3v8", out=out, pdf=True, jobs=2,
                           progress=False)
    assert result.ok, result.summary()
    rep = result.reports[0]
    html = (out / rep.html).read_text(encoding="utf-8")
    pdf = pdfium.PdfDocument(str(out / rep.pdf))
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

    from beyondauc.report.render import _render_html, _write_pdf
    from beyondauc.report import NotebookRun

    buf = io.BytesIO()
    Image.new("RGB", (1872, 1584), "steelblue").save(buf, format="PNG")  # 11.7 x 9.9 in at 2 x 80 dpi
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Tall"), nbformat.v4.new_code_cell("show(fig)", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(buf.getvalue()).decode()},
                               metadata={"image/png": {"width": 936, "height": 792, "alt": "a grid"}})])]
    header = {"title": "beyondauc report: m", "model": "m", "source": "s", "sha256": "0" * 64,
              "version": ba.__version__, "date": "d", "parameters": {}, "failed": None}
    html = _render_html([(NotebookRun("summary", "summary.ipynb", "ok", None, 1.0, 0.5), nb)], header,
                        include_code=False)
    _write_pdf(html, tmp_path / "tall.pdf", tmp_path)
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
    assert 0 <= left < right <= width and 0 <= bottom < top <= height, (images[0])
    assert (right - left) / (top - bottom) == pytest.approx(1872 / 1584, rel=0.01)  # not squashed
