"""Hostile model, dataset and domain names through a real report: notebooks, HTML and PDF.

The report part of ``tests/end_to_end/test_hostile_names.py`` (its own file, so that the suite's two workers run it beside
the rest): one real report run (``report`` fixture, module scope: four models, two datasets of 100 rows, PDF).
Every name is shown verbatim, renaming changes no number, the PDF prints the name.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pandas as pd
import pytest

from beyondauc import leaderboard, open_benchmark, run_report
from helpers.hostile_names import (
    LONG,
    REPORT_DATASETS,
    REPORT_DOMAINS,
    REPORT_MODELS,
    name_map,
    plain_frame,
    rename_values,
    renamed,
)
from helpers.report import parse_html

# -- a real report ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile_report")
    plain = plain_frame(len(REPORT_MODELS), rows=100)
    data = base / "scores.csv"
    renamed(plain, REPORT_MODELS, REPORT_DATASETS, REPORT_DOMAINS).to_csv(data, index=False)
    plain_data = base / "plain.csv"
    plain.to_csv(plain_data, index=False)
    result = run_report(str(data), out=base / "out", jobs=2, pdf=True, progress=False)
    return {"data": data, "plain": plain_data, "out": base / "out", "result": result}


def _page(path):
    return parse_html(Path(path).read_text(encoding="utf-8"))


def _report_pages(report):
    """model -> its report.html (found through the index's links, not by guessing folder names)."""
    index = _page(report["out"] / "index.html")
    pages = {}
    for row in index.marked("model-row"):
        model = row.find("td", **{"class": "name"}).text
        link = row.marked("report-link")[0].attrs["href"]
        pages[model] = report["out"] / urllib.parse.unquote(link)
    return pages


def test_report_every_model_rendered(report):
    result = report["result"]
    assert result.ok, result.summary()
    assert [r.model for r in result.reports] == list(REPORT_MODELS)
    assert all(r.status == "ok" for r in result.reports)
    pages = _report_pages(report)
    assert set(pages) == set(REPORT_MODELS)
    folders = [p.parent.name for p in pages.values()]
    assert len({f.casefold() for f in folders}) == len(folders)
    assert all(p.is_file() for p in pages.values())


def test_report_names_verbatim_in_the_html_text(report):
    pages = _report_pages(report)
    index_text = _page(report["out"] / "index.html").text
    overview = _page(report["out"] / "overview" / "overview.html")
    assert overview.find_all("script") == []
    for model in REPORT_MODELS:
        assert model in index_text
        assert model in overview.text
        root = _page(pages[model])
        assert root.find_all("script") == []
        assert [e.text for e in root.marked("model")] == [model]
        for dataset in REPORT_DATASETS:
            assert dataset in root.text, (model[:40], dataset)
    for domain in REPORT_DOMAINS:
        assert domain in overview.text


def test_report_numbers_are_those_of_plain_names(report):
    """The leaderboard equals the one computed on the same scores under plain names."""
    plain = leaderboard(open_benchmark(str(report["plain"])))
    mapping = name_map(REPORT_MODELS)
    pd.testing.assert_frame_equal(report["result"].leaderboard, rename_values(plain, mapping))


def test_report_pdf_renders_with_the_name(report):
    pdfium = pytest.importorskip("pypdfium2")
    model = REPORT_MODELS[0]
    path = _report_pages(report)[model].with_suffix(".pdf")
    pdf = pdfium.PdfDocument(str(path))
    try:
        text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    finally:
        pdf.close()
    assert model in text.replace("\r\n", " ").replace("\n", " ") or model in text


def test_report_pdf_of_a_long_name_has_it_whole_and_a_short_running_header(report):
    """The 10,000-character name prints whole (in the heading), while the running header on every page cuts
    the title at 100 characters: a margin box is laid out again on each page, and the whole name there took
    the PDF of this one report from about 7 to 40 CPU seconds."""
    pdfium = pytest.importorskip("pypdfium2")
    pdf = pdfium.PdfDocument(str(_report_pages(report)[LONG].with_suffix(".pdf")))
    try:
        pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()
    running = "beyondauc report: " + "x" * 81 + "\u2026"
    assert all(running in page for page in pages), [page[-200:] for page in pages if running not in page][:1]
    # the heading itself runs over pages: read the body of each page, without its header and number
    body = "".join(
        page.replace(running, "").replace(f"page {i} / {len(pages)}", "") for i, page in enumerate(pages, start=1)
    )
    assert "beyondaucreport:" + LONG in re.sub(r"[\s\u200b\ufffe\x02]", "", body)
