#!/usr/bin/env python
"""Screenshot the demo report for the README and the docs (headless Debian chromium).

Runs ``beyondauc demo`` unless ``reports/demo/index.html`` exists (or
``--rerun``), then opens the index and one model's report over ``file://``
with Playwright driving ``/usr/bin/chromium`` (no browser download) and saves
``docs/images/report_index.png`` (the leaderboard), ``docs/images/report_index_sorted.png`` (the
leaderboard sorted by mean accuracy and filtered by name), ``docs/images/report_summary.png`` (the
first screen of a model's report: its verdict) and ``docs/images/report_model.png``
(the diagnostics section opened at its dashboard).

Usage::

    python scripts/make_readme_screenshots.py [--rerun] [--model svm] [--out docs/images]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rerun", action="store_true", help="run `beyondauc demo` even if the report exists")
    parser.add_argument("--model", default="mlp", help="the model whose report is shown (default: mlp)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"), help="folder for the PNG files")
    args = parser.parse_args(argv)

    index = ROOT / "reports" / "demo" / "index.html"
    if args.rerun or not index.exists():
        subprocess.run([sys.executable, "-m", "beyondauc.cli", "demo", "--quiet"], cwd=ROOT, check=True)
    from playwright.sync_api import sync_playwright

    from beyondauc.report import safe_name

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(index.as_uri())
        page.screenshot(path=str(out / "report_index.png"))
        sort = page.locator("thead th button", has_text="mean accuracy")  # descending: two clicks
        sort.click()
        sort.click()
        page.get_by_role("searchbox", name="Filter models by name").fill("n")
        page.mouse.move(0, 0)  # no hover underline in the picture
        page.screenshot(path=str(out / "report_index_sorted.png"))
        page.goto((index.parent / "models" / safe_name(args.model) / "report.html").as_uri())
        page.set_viewport_size({"width": 1280, "height": 800})
        page.screenshot(path=str(out / "report_summary.png"))
        page.set_viewport_size({"width": 1280, "height": 1000})
        page.evaluate("""() => {  // open the diagnostics section at its dashboard
            const section = document.getElementById('section-test_auroc');
            section.open = true;
            const img = section.querySelector('img');
            const heading = img.closest('.jp-Cell').previousElementSibling;
            (heading || img).scrollIntoView();
        }""")
        page.screenshot(path=str(out / "report_model.png"))
        browser.close()
    print(
        f"wrote {out / 'report_index.png'}, {out / 'report_index_sorted.png'}, {out / 'report_summary.png'} and "
        f"{out / 'report_model.png'}"
    )


if __name__ == "__main__":
    main()
