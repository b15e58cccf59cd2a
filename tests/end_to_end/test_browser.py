"""The reports in a real browser: headless Chromium over ``file://``.

What a reader does with a report folder somebody sent them: open
``index.html`` from disk, click through to one model's report and to the
benchmark overview. The pages must work offline (no request leaves the
report folder: no CDN script, font or tracker), log no console error, raise
no script error, and show a hostile model name (``<script>alert(1)</script>``)
as text, never as markup: no dialog may open.

The browser is Debian's ``chromium`` (``.ci/run`` installs it), driven by
Playwright's Python package with ``executable_path`` so that no browser is
downloaded. A machine without it fails this test with that hint; set
``BEYONDAUC_SKIP_BROWSER=1`` to skip it on purpose.
"""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from beyondauc import load_demo
from beyondauc.report import run_report, safe_name
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, require_browser

HOSTILE = "<script>alert(1)</script>"
MODELS = ("svm", "knn")
DATASETS = ["wine", "diabetes"]
VIEWPORT = {"width": 1280, "height": 800}  # a laptop screen
MIN_SCREENSHOT_BYTES = 10_000


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A small real report: the demo's svm and knn on two datasets, knn renamed to a script tag."""
    require_browser()
    bench = load_demo().subset(models=list(MODELS), datasets=DATASETS)
    frame = bench.frame.rename(columns={"knn": HOSTILE})
    out = tmp_path_factory.mktemp("browser_report")
    result = run_report(frame, out=out, jobs=2, progress=False)
    assert result.ok, result.summary()
    return result


@pytest.fixture(scope="module")
def demo_report(request):
    """The README's first command's report (every model and dataset; the session's shared run, read only)."""
    import beyondauc

    require_browser()  # before the run: a skipped browser test makes none
    demo_run = request.getfixturevalue("demo_run")
    return SimpleNamespace(
        out_dir=demo_run.out,
        index=demo_run.out / "index.html",
        evaluation=beyondauc.load_evaluation(demo_run.out / "evaluation"),
    )


@pytest.fixture(scope="module")
def browser(report):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Recorder:
    """What a page did that an offline, script-free report must not do (requests are checked later)."""

    def __init__(self, page):
        self.requests, self.console_errors, self.page_errors, self.failed, self.dialogs = [], [], [], [], []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("requestfailed", lambda request: self.failed.append(f"{request.url}: {request.failure}"))
        page.on("dialog", self._dialog)

    def _console(self, msg):
        if msg.type == "error":
            self.console_errors.append(f"{msg.text} @ {msg.location.get('url')}")

    def _dialog(self, dialog):
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def check(self, root):
        """Assert the page stayed quiet and offline: only data: URLs and file:// URLs inside ``root``."""
        assert self.requests, "no request recorded at all: the listener is not working"
        root = Path(root).resolve()
        outside = []
        for url in self.requests:
            if urllib.parse.urlsplit(url).scheme == "data":
                continue
            path = _file_path(url)
            if path is None or not path.is_relative_to(root):
                outside.append(url)
        problems = {
            "requests that leave the report folder": outside,
            "dialogs (a script ran)": self.dialogs,
            "uncaught script errors": self.page_errors,
            "console errors": self.console_errors,
            "failed requests": self.failed,
        }
        found = {what: items for what, items in problems.items() if items}
        assert not found, "\n".join(f"{what}: {items}" for what, items in found.items())


def _file_path(url):
    """The local path of a file:// URL (None for any other URL)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(urllib.request.url2pathname(parts.path)).resolve()


def _scripts_with_payload(page):
    """How many script elements of the page carry the hostile model name's code."""
    return page.evaluate("() => Array.from(document.scripts).filter(s => s.textContent.includes('alert(1)')).length")


def _check_screenshot(path, *, blank_check=False):
    assert path.is_file(), path
    size = path.stat().st_size
    assert size > MIN_SCREENSHOT_BYTES, f"{path.name} is only {size} bytes"
    if blank_check:
        from PIL import Image

        with Image.open(path) as img:
            gray = img.convert("L")
            lo, hi = gray.getextrema()
            histogram = gray.histogram()
        inked = sum(histogram[:200]) / sum(histogram)  # share of pixels clearly darker than the background
        assert hi - lo > 128 and inked > 0.005, (
            f"{path.name} looks blank: gray levels {lo}..{hi}, {inked:.2%} dark pixels"
        )


def _fresh_page(browser, viewport):
    """A page in its own context (no cache or history shared between tests) with a Recorder; closed after."""
    context = browser.new_context(viewport=viewport, service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.recorder = Recorder(page)
        yield page
    finally:
        context.close()


@pytest.fixture
def page(browser):
    """A fresh page (own context: no cache or history shared between tests) with a Recorder attached."""
    yield from _fresh_page(browser, VIEWPORT)


def _open_index(page, report):
    page.goto(report.index.resolve().as_uri(), wait_until="load")
    assert _file_path(page.url) == report.index.resolve(), page.url


def _follow(page, link, expected):
    """Click ``link`` and wait until the page that loads is the file ``expected``."""
    assert link.count() == 1, f"{link.count()} links match, expected one"
    before = page.url
    link.click()
    page.wait_for_url(lambda url: url != before, wait_until="load")
    assert _file_path(page.url) == Path(expected).resolve(), f"the link led to {page.url}"


def test_index_shows_the_leaderboard_offline(report, page, tmp_path):
    _open_index(page, report)
    table = page.locator('table[data-beyondauc="leaderboard"]')
    assert table.is_visible()
    rows = table.locator('tr[data-beyondauc="model-row"]')
    assert rows.count() == len(MODELS)
    names = [rows.nth(i).locator("td.name").inner_text().strip() for i in range(rows.count())]
    assert sorted(names) == sorted(["svm", HOSTILE])
    assert page.get_by_text(HOSTILE, exact=True).first.is_visible(), "the hostile model name is not shown as text"
    assert page.locator('a[data-beyondauc="report-link"]').count() == len(MODELS)
    scripts = page.locator("script")  # one: the leaderboard's sorting and filter, inline, reading no name
    assert scripts.count() == 1 and scripts.first.get_attribute("src") is None, "the index has one inline script"
    assert _scripts_with_payload(page) == 0 and "alert" not in scripts.first.text_content()
    shot = tmp_path / "index.png"
    page.screenshot(path=str(shot), full_page=True)
    _check_screenshot(shot, blank_check=True)
    page.recorder.check(report.out_dir)


def test_index_links_to_a_model_report(report, page, tmp_path):
    """Click the hostile model's report link: its header names it as text, its figures load, no code shows."""
    _open_index(page, report)
    row = page.locator('tr[data-beyondauc="model-row"]').filter(has=page.get_by_role("cell", name=HOSTILE, exact=True))
    expected = report.out_dir / "models" / safe_name(HOSTILE) / "report.html"
    _follow(page, row.locator('a[data-beyondauc="report-link"]'), expected)

    header = page.locator('[data-beyondauc="report-header"]')
    assert header.is_visible()
    assert HOSTILE in header.locator("h1").inner_text()
    about = header.locator("details.ba-about")  # the data, parameters and version, folded away
    assert not about.evaluate("e => e.open") and not header.locator('[data-beyondauc="model"]').is_visible()
    about.locator("summary").click()
    assert header.locator('[data-beyondauc="model"]').is_visible()
    assert header.locator('[data-beyondauc="model"]').inner_text().strip() == HOSTILE
    assert _scripts_with_payload(page) == 0, "the model name became a script element of the report"
    loaded = page.evaluate(
        "() => Array.from(document.images).filter(img => img.complete && img.naturalWidth > 0).length"
    )
    assert loaded >= 1, "no figure of the report was decoded"
    editors = page.locator(
        ".jp-InputArea-editor, .jp-Editor, .CodeMirror, .cm-editor, .jp-InputPrompt, .jp-CodeCell .jp-InputArea"
    )
    shown = sum(editors.nth(i).is_visible() for i in range(editors.count()))
    assert shown == 0, f"{shown} code editor elements are visible in a report without code"
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    _check_screenshot(shot)

    page.go_back(wait_until="load")
    assert _file_path(page.url) == report.index.resolve(), page.url
    assert page.locator('table[data-beyondauc="leaderboard"]').is_visible()
    page.recorder.check(report.out_dir)


def test_index_links_to_the_overview(report, page):
    _open_index(page, report)
    _follow(page, page.locator('a[data-beyondauc="overview-link"]'), report.out_dir / "overview" / "overview.html")
    header = page.locator('[data-beyondauc="report-header"]')
    assert header.is_visible()
    assert "overview" in header.locator("h1").inner_text()
    assert page.locator('[data-beyondauc="model"]').count() == 0
    assert page.locator('[data-beyondauc="section"]').count() >= 1
    assert _scripts_with_payload(page) == 0, "a model name became a script element of the overview"
    page.recorder.check(report.out_dir)


def _horizontal_overflow(page):
    """How many CSS pixels the page is wider than the window (0: no horizontal scroll bar)."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


def test_index_fits_the_window(report, page):
    _open_index(page, report)
    assert page.evaluate("() => window.innerWidth") == VIEWPORT["width"]
    assert _horizontal_overflow(page) <= 0, "the index scrolls sideways at 1280 px"
    assert page.locator('[data-beyondauc="column-guide"]').is_visible()
    page.recorder.check(report.out_dir)


def test_index_of_eight_models_with_the_widest_cells_fits_the_window(report, page):
    """The demo's index once scrolled sideways at 1280 px: a rank change's "not significant (p = 0.81)"
    did not wrap. Eight rows whose every cell holds the widest text the demo's index shows still fit."""
    from beyondauc.report.render import index_rows, render_index

    row = index_rows(report.evaluation, report.reports)[0]
    widest = dict(
        row,
        model="random_forest",
        rank_change="\u22123",
        change_class="down ns",
        stability="stable in 53% of replicates, not significant (p = 0.94)",
        auc_rank_ci="2\u20135",
        accuracy_rank_ci="1\u20135",
        verdict="2nd by AUC, 5th by accuracy (change not significant); fragile AUC; DiSCA 0.853.",
        verdict_reason="fragile AUC: bias robustness 0.04 < 0.1 on digits_3v8, interval 0.03\u20130.05; "
        "cohort drift: drift 0.081 \u2265 0.05 on iris_versicolor, interval "
        "0.062\u20130.100 (and 1 more)",
        verdict_status="warn",
        disca="\u22120.248",
        disca_ci="\u22121.696\u20131.021",
        kappa_ci="0.702\u20130.772",
        drift_ci="0.019\u20130.054",
    )
    context = {
        "source": "beyondauc demo benchmark",
        "sha256": "0" * 64,
        "version": "0.1.0",
        "date": "2026-11-24T00:00:00+00:00",
        "n_datasets": 8,
        "n_models": 8,
        "n_failed": 0,
        "n_jobs": 9,
        "parameters": report.evaluation.parameters,
        "evaluation_created": "2026-11-24T00:00:00+00:00",
        "reused": False,
        "models": [widest] * 8,
        "overview": {"html": report.overview.html, "status": "ok", "error": None, "notebooks": []},
    }
    path = report.out_dir / "index_widest.html"
    path.write_text(render_index(context), encoding="utf-8")
    page.goto(path.resolve().as_uri(), wait_until="load")
    assert _horizontal_overflow(page) <= 0, "an index of eight models scrolls sideways at 1280 px"


@pytest.mark.parametrize("model", MODELS)
def test_report_reads_in_two_minutes(report, page, model):
    """A model's report at 1280x800: the summary on the first screen, no sideways scrolling (also with every
    section open), contents links that lead somewhere, and a back link to the index."""
    model = HOSTILE if model == "knn" else model
    path = report.out_dir / "models" / safe_name(model) / "report.html"
    page.goto(path.resolve().as_uri(), wait_until="load")
    assert _horizontal_overflow(page) <= 0, "the report scrolls sideways at 1280 px"
    summary = page.locator("#summary")
    assert summary.is_visible()
    top = summary.evaluate("e => e.getBoundingClientRect().top + window.scrollY")
    assert 0 <= top < VIEWPORT["height"], f"the summary starts {top} px down: not on the first screen"
    assert page.evaluate("() => window.scrollY") == 0
    # the analyses are collapsed sections; the contents link the summary and each of them
    sections = page.locator('details[data-beyondauc="section"]')
    assert sections.count() == 3
    assert not any(sections.nth(i).evaluate("e => e.open") for i in range(sections.count()))
    hrefs = page.locator("#contents a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert hrefs[0] == "#summary" and len(hrefs) >= 1 + sections.count()
    missing = page.evaluate(
        "hrefs => hrefs.filter(h => !h.startsWith('#') || "
        "document.querySelectorAll('[id=\"' + CSS.escape(h.slice(1)) + '\"]').length !== 1)",
        hrefs,
    )
    assert missing == [], f"contents links without a unique target: {missing}"
    # following a section's link scrolls to it; opening it shows its content, still no sideways scroll
    first = sections.first
    section_id = first.get_attribute("id")
    page.locator(f'#contents a[href="#{section_id}"]').click()
    page.wait_for_function("id => location.hash === '#' + id", arg=section_id)
    assert first.evaluate("e => Math.abs(e.getBoundingClientRect().top) < window.innerHeight")
    first.locator("summary").click()
    assert first.evaluate("e => e.open")
    assert first.locator("img").first.is_visible()
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    assert _horizontal_overflow(page) <= 0, "an open section makes the report scroll sideways at 1280 px"
    # back to the index of the same run
    _follow(page, page.locator('a[data-beyondauc="back"]'), report.index)
    assert page.locator('table[data-beyondauc="leaderboard"]').is_visible()
    page.recorder.check(report.out_dir)


def test_overview_fits_and_links_back(report, page):
    page.goto((report.out_dir / "overview" / "overview.html").resolve().as_uri(), wait_until="load")
    assert _horizontal_overflow(page) <= 0, "the overview scrolls sideways at 1280 px"
    sections = page.locator('details[data-beyondauc="section"]')
    assert sections.count() == 1 and sections.first.evaluate("e => e.open")  # its single section, open
    _follow(page, page.locator('a[data-beyondauc="back"]'), report.index)
    page.recorder.check(report.out_dir)


# -- a window of 800 and of 1280 px: the index and the reports fit, read as text for people ----------------

WIDTHS = (800, 1280)  # half a laptop screen (or a tablet), and a laptop screen

#: What does not fit the window: the page's sideways scroll, tables reaching past its right edge, and
#: elements that scroll sideways inside the page (the inner scrollbar of a wide table's output area).
_LAYOUT = """() => {
  const vw = window.innerWidth, describe = e => (e.innerText || '').trim().slice(0, 60).replace(/\\s+/g, ' ');
  return {
    overflow: document.documentElement.scrollWidth - vw,
    tables: Array.from(document.querySelectorAll('table'))
      .filter(t => t.getClientRects().length && (t.getBoundingClientRect().right > vw + 0.5 || t.getBoundingClientRect().left < -0.5))
      .map(t => `${Math.round(t.getBoundingClientRect().width)} px: ${describe(t)}`),
    scrollers: Array.from(document.querySelectorAll('body *'))
      .filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1)
      .map(e => `${e.scrollWidth} in ${e.clientWidth} px: ${describe(e)}`),
  };
}"""


@pytest.fixture
def sized_page(browser, request):
    """A fresh page whose window is ``request.param`` px wide (as ``page``, with a Recorder)."""
    yield from _fresh_page(browser, {"width": request.param, "height": 900})


def _check_fits(page, what):
    width = page.evaluate("() => window.innerWidth")
    found = page.evaluate(_LAYOUT)
    assert found["overflow"] <= 0, f"{what} scrolls sideways at {width} px (by {found['overflow']} px)"
    assert found["tables"] == [], f"{what} at {width} px: tables wider than the window: {found['tables']}"
    assert found["scrollers"] == [], f"{what} at {width} px: content that scrolls sideways: {found['scrollers']}"


def _visible_text_problems(page):
    """``...`` (a pandas dump cut short) and Python's ``True``/``False`` in the text a reader sees."""
    text = page.evaluate("() => document.body.innerText")
    cut = re.findall(r".{0,40}(?:\.\.\.|\u2026).{0,40}", text)
    python = re.findall(r".{0,40}\b(?:True|False)\b.{0,40}", text)
    return cut, python


@pytest.mark.parametrize("sized_page", WIDTHS, indirect=True)
def test_index_fits_and_each_model_name_links_its_report(report, sized_page):
    page = sized_page
    _open_index(page, report)
    _check_fits(page, "the index")
    rows = page.locator('tr[data-beyondauc="model-row"]')
    assert rows.count() == len(MODELS)
    width = page.evaluate("() => window.innerWidth")
    for i in range(rows.count()):
        link = rows.nth(i).locator("td.name a")
        assert link.count() == 1 and link.is_visible()
        name = link.inner_text().strip()
        assert link.get_attribute("data-beyondauc") == "report-link"
        box = link.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"the link of {name} is off screen: {box}"
        target = urllib.parse.urljoin(page.url, link.get_attribute("href"))
        assert _file_path(target) == (report.out_dir / "models" / safe_name(name) / "report.html").resolve()
    assert not any(_visible_text_problems(page))
    row = rows.filter(has=page.locator("td.name", has_text="svm"))
    _follow(page, row.locator("td.name a"), report.out_dir / "models" / "svm" / "report.html")
    page.recorder.check(report.out_dir)


@pytest.mark.parametrize("sized_page", WIDTHS, indirect=True)
@pytest.mark.parametrize("model", MODELS)
def test_report_fits_with_every_section_open_and_reads_as_text(report, sized_page, model):
    """Every table of a model's report within the window (split, not scrolled), every number shown
    (no ``...``), booleans as words."""
    page = sized_page
    model = HOSTILE if model == "knn" else model
    page.goto((report.out_dir / "models" / safe_name(model) / "report.html").resolve().as_uri(), wait_until="load")
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.locator('[data-beyondauc="table"]').count() >= 10, "the report's tables are not readable_table's"
    _check_fits(page, f"the report of {model}")
    cut, python = _visible_text_problems(page)
    assert cut == [], f"text cut short by '...': {cut}"
    assert python == [], f"Python booleans shown: {python}"
    page.recorder.check(report.out_dir)


def _widest_index(report, name, *, extra_column=False):
    """The index of eight models whose every cell holds the widest text the demo's index shows; with
    ``extra_column``, one more column (as a comparison with a baseline will add) of wrapping text."""
    from beyondauc.report.render import index_rows, render_index

    row = index_rows(report.evaluation, report.reports)[0]
    widest = dict(
        row,
        model="random_forest",
        rank_change="\u22123",
        change_class="down ns",
        stability="not significant (p = 0.81)",
        auc_rank_ci="2\u20135",
        accuracy_rank_ci="1\u20135",
        verdict="2nd by AUC, 5th by accuracy (not significant); fragile AUC; selective answering average.",
        verdict_status="warn",
        disca="\u22120.248",
        disca_ci="\u22121.696\u20131.021",
        kappa_ci="0.702\u20130.772",
        drift_ci="0.019\u20130.054",
    )
    context = {
        "source": "beyondauc demo benchmark",
        "sha256": "0" * 64,
        "version": "0.1.0",
        "date": "2026-11-24T00:00:00+00:00",
        "n_datasets": 8,
        "n_models": 8,
        "n_failed": 0,
        "n_jobs": 9,
        "parameters": report.evaluation.parameters,
        "evaluation_created": "2026-11-24T00:00:00+00:00",
        "reused": False,
        "models": [widest] * 8,
        "overview": {"html": report.overview.html, "status": "ok", "error": None, "notebooks": []},
    }
    text = render_index(context)
    if extra_column:
        cell = '<td data-label="vs baseline">better than logreg: AUC +0.012 (\u22120.004 to 0.029), p = 0.03</td>'
        text = text.replace('<th class="verdict">verdict</th>', '<th class="verdict">verdict</th><th>vs baseline</th>')
        text = re.sub(r'(<td class="verdict[^>]*>.*?</td>)', lambda m: m.group(1) + cell, text, flags=re.DOTALL)
        assert text.count('data-label="vs baseline"') == 8
    path = report.out_dir / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("sized_page", WIDTHS, indirect=True)
@pytest.mark.parametrize("extra_column", [False, True], ids=["as-is", "one-more-column"])
def test_index_of_eight_models_with_the_widest_cells_fits_any_window(report, sized_page, extra_column):
    """The demo's index once scrolled sideways at 1280 px: a rank change's "not significant (p = 0.81)" did not
    wrap; at 800 px it scrolled, and the only link to a report was off screen. Eight rows whose every cell holds
    the widest text the demo's index shows fit at 800 and 1280 px, and still with one column more."""
    page = sized_page
    path = _widest_index(report, f"index_widest_{extra_column}.html", extra_column=extra_column)
    page.goto(path.resolve().as_uri(), wait_until="load")
    _check_fits(page, "an index of eight models")
    labels = page.locator('tr[data-beyondauc="model-row"] td[data-label="vs baseline"]')
    assert labels.count() == (8 if extra_column else 0)
    if extra_column:
        assert all(labels.nth(i).is_visible() for i in range(8))


@pytest.mark.parametrize("sized_page", WIDTHS, indirect=True)
def test_overview_fits_and_reads_as_text(report, sized_page):
    """The overview as the model reports: every table readable_table's, within the window (split, not scrolled),
    no ``...``, booleans as words. It once showed pandas dumps wider than the page, with ``False`` cells."""
    page = sized_page
    page.goto((report.out_dir / "overview" / "overview.html").resolve().as_uri(), wait_until="load")
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    # the data, the leaderboard, Kendall's tau, the rank changes, AUC and accuracy per dataset, Tables 4 and 5
    assert page.locator('[data-beyondauc="table"]').count() >= 10, "the overview's tables are not readable_table's"
    dumps = page.evaluate("() => Array.from(document.querySelectorAll('table.dataframe')).length")
    assert dumps == 0, f"{dumps} pandas tables in the overview"
    _check_fits(page, "the overview")
    cut, python = _visible_text_problems(page)
    assert cut == [], f"text cut short by '...': {cut}"
    assert python == [], f"Python booleans shown: {python}"
    page.recorder.check(report.out_dir)


# -- the leaderboard sorts and filters (JavaScript in the page), and reads the same without it --------------------


def _row_texts(page):
    """The text of every cell of the leaderboard's model rows shown, in the order shown."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('tr[data-beyondauc="model-row"]'))
        .filter(r => !r.hidden).map(r => Array.from(r.cells).map(c => c.innerText.trim()))""")


def _shown_models(page):
    return [cells[0] for cells in _row_texts(page)]


def _header(page, title):
    th = page.locator('table[data-beyondauc="leaderboard"] thead th').filter(
        has=page.get_by_role("button", name=re.compile(rf"^{re.escape(title)}\b"))
    )
    assert th.count() == 1, f"{th.count()} sortable headers named {title!r}"
    return th


def _sorted_index(report):
    """An index of six rows whose mean AUCs tie, sit in a different order from the table's, or are missing (–),
    each with its interval under it (the first row's cells otherwise)."""
    from beyondauc.report.render import index_rows, render_index

    row = index_rows(report.evaluation, report.reports)[0]
    aucs = {"m-a": 0.81, "m-b": None, "m-c": 0.9, "m-d": 0.805, "m-e": 0.81, "zeta": 0.1}
    rows = []
    for name, auc in aucs.items():
        values = dict(row["values"], auc="" if auc is None else repr(auc))
        rows.append(
            dict(
                row,
                model=name,
                auc="\u2013" if auc is None else f"{auc:.3f}",
                auc_ci="" if auc is None else f"{auc - 0.05:.3f}\u2013{auc + 0.05:.3f}",
                values=values,
            )
        )
    context = {
        "source": "sorting",
        "sha256": "0" * 64,
        "version": "0.1.0",
        "date": "2026-11-24T00:00:00+00:00",
        "n_datasets": 2,
        "n_models": len(rows),
        "n_failed": 0,
        "n_jobs": len(rows) + 1,
        "parameters": report.evaluation.parameters,
        "evaluation_created": "2026-11-24T00:00:00+00:00",
        "reused": False,
        "models": rows,
        "overview": {"html": report.overview.html, "status": "ok", "error": None, "notebooks": []},
    }
    path = report.out_dir / "index_sorting.html"
    path.write_text(render_index(context), encoding="utf-8")
    return path, aucs


def test_leaderboard_sorts_by_a_clicked_header(report, page):
    """Numbers sort by the estimate (not the interval under it), a missing one last either way, ties in the table's
    order; aria-sort follows; text columns sort as text."""
    path, aucs = _sorted_index(report)
    page.goto(path.resolve().as_uri(), wait_until="load")
    assert _shown_models(page) == list(aucs)  # as rendered: unsorted
    th = _header(page, "mean AUC")
    assert th.get_attribute("aria-sort") is None
    present = [m for m in aucs if aucs[m] is not None]
    th.get_by_role("button").click()
    assert th.get_attribute("aria-sort") == "ascending"
    assert _shown_models(page) == sorted(present, key=lambda m: aucs[m]) + ["m-b"]  # stable: m-a before m-e
    th.get_by_role("button").click()
    assert th.get_attribute("aria-sort") == "descending"
    expected = sorted(present, key=lambda m: -aucs[m]) + ["m-b"]
    assert _shown_models(page) == expected and expected[1:3] == ["m-a", "m-e"]
    name = _header(page, "model")
    name.get_by_role("button").click()
    assert name.get_attribute("aria-sort") == "ascending" and th.get_attribute("aria-sort") is None
    assert _shown_models(page) == sorted(aucs, key=str.lower)
    page.recorder.check(report.out_dir)


@pytest.mark.parametrize("sized_page", [800], indirect=True)
def test_leaderboard_cards_sort_with_a_select(report, sized_page):
    """At 800 px the leaderboard is one card per model, without its header row: a select sorts them."""
    page = sized_page
    path, aucs = _sorted_index(report)
    page.goto(path.resolve().as_uri(), wait_until="load")
    assert not page.locator("thead").is_visible()
    select = page.get_by_role("combobox", name="Sort by")
    assert select.is_visible()
    select.select_option(label="mean AUC, descending")
    present = [m for m in aucs if aucs[m] is not None]
    assert _shown_models(page) == sorted(present, key=lambda m: -aucs[m]) + ["m-b"]
    sorted_headers = page.evaluate(
        "() => Array.from(document.querySelectorAll('thead th[aria-sort]'))"
        ".map(th => [th.textContent.trim(), th.getAttribute('aria-sort')])"
    )
    assert sorted_headers == [["mean AUC", "descending"]]  # hidden, but said as the table's
    select.select_option(label="table order")
    assert _shown_models(page) == list(aucs)
    assert page.locator("thead th[aria-sort]").count() == 0
    page.recorder.check(report.out_dir)


def test_leaderboard_sorts_the_real_index_by_its_numbers(demo_report, page):
    report = demo_report  # the demo's eight models
    _open_index(page, report)
    board = report.evaluation.table("leaderboard").set_index("model")
    for title, column in (("mean accuracy", "accuracy"), ("kappa", "kappa"), ("AUC rank", "auc_rank")):
        button = _header(page, title).get_by_role("button")
        button.click()
        button.click()  # descending
        shown = _shown_models(page)
        values = [board.loc[m, column] for m in shown]
        assert values == sorted(values, reverse=True), (title, shown, values)
    page.recorder.check(report.out_dir)


def test_leaderboard_filters_models_by_name(report, page):
    path, aucs = _sorted_index(report)
    page.goto(path.resolve().as_uri(), wait_until="load")
    box = page.get_by_role("searchbox", name="Filter models by name")
    box.fill("M-")  # case does not matter
    assert _shown_models(page) == [m for m in aucs if m.startswith("m-")]
    assert page.locator('tr[data-beyondauc="model-row"][hidden]').count() == 1
    assert not page.locator('tr[data-beyondauc="model-row"]').filter(has_text="zeta").is_visible()
    assert page.get_by_role("status").inner_text() == f"5 of {len(aucs)} models shown"
    box.fill("zzz")
    assert _shown_models(page) == []
    box.fill("")
    assert _shown_models(page) == list(aucs)
    _open_index(page, report)  # the real index: the hostile name is found as text
    page.get_by_role("searchbox", name="Filter models by name").fill("<script>")
    assert _shown_models(page) == [HOSTILE]
    page.recorder.check(report.out_dir)


def test_leaderboard_without_javascript_is_the_same_table_unsorted(demo_report, browser, page):
    report = demo_report  # the demo's eight models, with its baseline
    _open_index(page, report)
    with_js = _row_texts(page)
    context = browser.new_context(viewport=VIEWPORT, java_script_enabled=False, service_workers="block")
    try:
        plain = context.new_page()
        plain.goto(report.index.resolve().as_uri(), wait_until="load")
        assert _row_texts(plain) == with_js
        assert [r[0] for r in with_js] == list(report.evaluation.table("leaderboard")["model"])
        assert plain.locator("thead button").count() == 0 and plain.locator("input").count() == 0
        assert plain.locator('table[data-beyondauc="leaderboard"] thead th').count() == 13  # with 'guarantee held'
        headers = plain.locator("thead th").all_inner_texts()
        assert headers[:3] == ["model", "verdict", "mean AUC"]
    finally:
        context.close()


# -- no sideways scroll at 1280 px, for the demo's reports and a TRUE-like benchmark's -----------------------------

TRUE_DATASETS = (
    "mnbm",
    "frank",
    "summeval",
    "qags_xsum",
    "qags_cnndm",
    "begin",
    "q2",
    "dialfact",
    "paws",
    "fever",
    "vitaminc",
)
#: names as long as real metrics' are, without a space: the first made the index 1283 px wide at 1280, and 1342 px
#: with its notebook links open, while a table cell broke such a name only at its own width
TRUE_MODELS = (
    "t5_11b_anli_mnli_fever_vitaminc",
    "SummaC-ZS",
    "bertscore_roberta_large_mnli_f1",
    "BARTScore-CNN-para",
    "Q2 metric",
)


@pytest.fixture(scope="module")
def true_like_report(tmp_path_factory, report):
    """A report of a benchmark laid out as TRUE's (eleven files, long model names): one model's report, with a
    baseline."""
    import numpy as np
    import pandas as pd

    root = tmp_path_factory.mktemp("true_like")
    rng = np.random.default_rng(3)
    for k, name in enumerate(TRUE_DATASETS):
        n = 80 + 8 * k
        y = (rng.random(n) < 0.3 + 0.03 * k).astype(int)
        frame = pd.DataFrame(
            {
                "id": np.arange(n),
                "grounding": [f"source {i}" for i in range(n)],
                "generated_text": [f"claim {i}" for i in range(n)],
                "label": y,
            }
        )
        for j, model in enumerate(TRUE_MODELS):
            frame[model] = rng.random(n) + 0.15 * (j + 1) * y
        frame.to_csv(root / f"{name}_dev_true_scores.csv", index=False)
    result = run_report(
        root,
        models=[TRUE_MODELS[0]],
        out=tmp_path_factory.mktemp("true_like_report"),
        jobs=2,
        baseline=TRUE_MODELS[1],
        parameters={"n_bootstrap": 20, "noise_repeats": 2},
        progress=False,
    )
    assert result.ok, result.summary()
    return result


@pytest.mark.parametrize("which", ["demo", "true-like"])
def test_no_report_is_wider_than_1280_px(demo_report, true_like_report, page, which):
    result = demo_report if which == "demo" else true_like_report  # the README's demo: every model and dataset
    model = MODELS[0] if which == "demo" else TRUE_MODELS[0]
    for path in (result.index, result.out_dir / "models" / safe_name(model) / "report.html"):
        page.goto(path.resolve().as_uri(), wait_until="load")
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= VIEWPORT["width"], f"{path.name} of the {which} report is {width} px wide"
        _check_fits(page, f"{path.name} of the {which} report")
    page.recorder.check(result.out_dir)
