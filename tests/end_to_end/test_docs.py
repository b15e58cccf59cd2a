"""The documentation site: built warning-free, complete, offline, and searchable in a real browser.

The build is the command the README gives (``sphinx-build -W -b html docs ...``, plus
``--keep-going`` so that one run lists every warning), into a temporary folder; its time is
printed. It runs the gallery's demo report unless ``docs/_build/.beyondauc-gallery`` holds
one for the same state of the sources. The doctests of the docstrings shown in the API
reference run through pytest's ``--doctest-modules``, not here; the Python blocks of the
pages run in ``tests/end_to_end/test_readme.py``.

The browser part opens the built site from ``file://`` in Debian's headless ``chromium``
through Playwright (launched as ``tests/end_to_end/test_browser.py`` does), searches for DiSCA and
expects results, and no request leaving the site. ``BEYONDAUC_SKIP_BROWSER=1`` skips it.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import beyondauc
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, require_browser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LAYERS = ("utils", "data", "metrics", "evaluation", "plots", "report", "cli")
BUILD_TIMEOUT_S = 900

# pydata-sphinx-theme logs this on a first visit, when no light/dark choice is stored yet.
THEME_FIRST_VISIT = "Got invalid theme mode"

# A reference that makes the browser fetch something: script, stylesheet, image, frame, font.
_LOADING = re.compile(
    r"""<(?:script|img|iframe|source|embed)\b[^>]*\bsrc\s*=\s*["']([^"']+)["']"""
    r"""|<link\b[^>]*\bhref\s*=\s*["']([^"']+)["']""",
    re.IGNORECASE,
)
_CSS_URL = re.compile(r"""(?:@import\s+|url\()\s*["']?((?:https?:)?//[^"')\s]+)""", re.IGNORECASE)
_REMOTE = re.compile(r"^(?:https?:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site's folder (the build's output is printed when it fails)."""
    out = tmp_path_factory.mktemp("docs") / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(DOCS), str(out)]
    start = time.perf_counter()
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
    seconds = time.perf_counter() - start
    print(f"\nsphinx-build took {seconds:.1f} s")
    assert run.returncode == 0, f"sphinx-build -W failed ({seconds:.0f} s):\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"
    return out


def _ids(pages):
    """Every ``id="beyondauc...."`` anchor of the pages: the objects they document."""
    found = set()
    for page in pages:
        found |= set(re.findall(r'id="(beyondauc\.[\w.]+)"', page.read_text(encoding="utf-8")))
    return found


def test_api_reference_documents_every_public_name(site):
    api = list((site / "_generated" / "api").rglob("*.html")) + [site / "api" / "index.html"]
    documented = _ids(api)
    missing = []
    for layer in LAYERS:
        module = importlib.import_module(f"beyondauc.{layer}")
        missing += [f"beyondauc.{layer}.{n}" for n in module.__all__ if f"beyondauc.{layer}.{n}" not in documented]
    assert not missing, f"layer exports without an entry in the API reference: {missing}"
    index = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in beyondauc.__all__:
        obj = getattr(beyondauc, name)
        homes = {f"beyondauc.{name}"} | {
            f"beyondauc.{layer}.{n}"
            for layer in LAYERS
            for n in importlib.import_module(f"beyondauc.{layer}").__all__
            if getattr(importlib.import_module(f"beyondauc.{layer}"), n) is obj and (n == name or callable(obj))
        }
        assert homes & documented, f"beyondauc.{name} is documented nowhere (looked for {sorted(homes)})"
        assert f"ba.{name}<" in index, f"the API index does not list ba.{name}"


def test_generated_pages_follow_the_package(site):
    from beyondauc.evaluation import PARAMETERS, TABLES

    cli = (site / "cli.html").read_text(encoding="utf-8")
    for p in PARAMETERS.values():
        assert f">{p.name}<" in cli, f"parameter {p.name} missing from the CLI reference"
    for command in ("calibrate", "diagnose", "selective", "report", "demo", "evaluate"):
        assert f"usage: beyondauc {command}" in cli, f"no --help of beyondauc {command}"
    schema = (site / "evaluation.html").read_text(encoding="utf-8")
    for table in TABLES:
        assert f">{table}<" in schema, f"table {table} missing from the schema"
    assert "(built with the gallery)" not in schema, "the schema lacks the gallery's columns"


def test_gallery_has_the_executed_notebooks_and_a_report(site):
    for name in ("summary", "auc_vs_accuracy", "test_auroc", "selective_answering", "overview"):
        page = (site / "_generated" / "gallery" / f"{name}.html").read_text(encoding="utf-8")
        assert "cell_output" in page and "<img" in page, f"the {name} notebook is shown without its outputs"
    assert (site / "gallery" / "report" / "index.html").is_file()
    assert (site / "gallery" / "report" / "models" / "mlp" / "report.html").is_file()
    texts = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert str(ROOT) not in texts and "/tmp/" not in texts, "a machine path is shown in the site"


def test_nothing_is_fetched_from_elsewhere(site):
    remote = []
    for page in list(site.rglob("*.html")) + list(site.rglob("*.css")):
        text = page.read_text(encoding="utf-8", errors="replace")
        urls = [a or b for a, b in _LOADING.findall(text)] if page.suffix == ".html" else []
        urls += _CSS_URL.findall(text)
        remote += [f"{page.relative_to(site)}: {url}" for url in urls if _REMOTE.match(url)]
    assert not remote, "references that load from other hosts:\n" + "\n".join(remote[:20])


def test_search_index_knows_disca(site):
    index = (site / "searchindex.js").read_text(encoding="utf-8")
    assert "disca" in index.lower()


def _file_path(url):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(urllib.request.url2pathname(parts.path)).resolve()


def test_search_works_offline_in_chromium(site):
    require_browser()
    from playwright.sync_api import sync_playwright

    requests, problems = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.on("request", lambda request: requests.append(request.url))
            page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
            page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
            page.on(
                "console",
                lambda msg: (
                    problems.append(f"console: {msg.text}")
                    if msg.type == "error" and THEME_FIRST_VISIT not in msg.text
                    else None
                ),
            )
            page.goto((site / "search.html").resolve().as_uri() + "?q=DiSCA", wait_until="load")
            page.wait_for_function(  # Sphinx writes the summary when the search has finished
                "() => (document.querySelector('#search-results .search-summary') || {}).textContent?.includes('found')"
            )
            summary = page.locator("#search-results .search-summary").inner_text()
            results = page.locator("#search-results ul.search li")
            titles = [results.nth(i).locator("a").first.inner_text() for i in range(results.count())]
        finally:
            browser.close()
    assert any("disca" in title.lower() for title in titles), f"no result names DiSCA: {titles[:10]}"
    assert re.search(r"found [1-9]\d* page", summary), summary[:200]
    assert not problems, problems
    outside = [
        url
        for url in requests
        if urllib.parse.urlsplit(url).scheme != "data"
        and not (_file_path(url) or Path("/")).is_relative_to(site.resolve())
    ]
    assert not outside, f"requests that leave the site: {outside}"
