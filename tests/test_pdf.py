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
    for wide in ("indata", "outdata", "disca"):  # the columns the issue saw cut off
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
