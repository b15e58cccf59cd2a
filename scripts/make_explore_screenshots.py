#!/usr/bin/env python
"""Screenshot the explorer (``ba.explore``) in JupyterLab for the docs (headless Debian chromium).

Starts a JupyterLab of its own over a temporary folder holding a copy of
``notebooks/explore.ipynb`` (the same server and clicks as
``tests/end_to_end/test_explore_browser.py``), runs all cells in Chromium (on the whole
demo by default: a minute or two), and saves
``docs/images/explore.png`` (the explorer as it opens: the controls, the
verdict and AUC vs accuracy), ``docs/images/explore_model.png`` (after
picking another model in the dropdown) and ``docs/images/explore_selective.png``
(that model's selective-answering tab).

Usage::

    python scripts/make_explore_screenshots.py [--model mlp] [--overrides '{"n_bootstrap": 0}'] [--out docs/images]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the JupyterLab server and page helpers the browser test uses
sys.path.insert(0, str(ROOT / "tests" / "end_to_end"))  # the browser test itself

from test_explore_browser import FIGURE, NOTEBOOK, VERDICT, notebook_with  # noqa: E402

from helpers.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from helpers.jupyterlab import RUN_TIMEOUT_MS, dropdown, jupyterlab, run_all_cells  # noqa: E402

APP = ".jp-OutputArea-output .widget-vbox"  # the explorer: its outermost box


VISIBLE_SRC = "sel => [...document.querySelectorAll(sel)].find(i => i.offsetParent)?.src"


def wait_for_new_figure(page, src_before: str) -> None:
    """Wait until the figure in view is another than ``src_before``."""
    page.wait_for_function(
        f"([sel, src]) => {{ const now = ({VISIBLE_SRC})(sel); return now && now !== src; }}",
        arg=[FIGURE, src_before],
        timeout=RUN_TIMEOUT_MS,
    )


def shoot(page, out: Path, model: str) -> list[Path]:
    """The three screenshots, from the page showing the explorer with all cells run."""
    app = page.locator(APP).first
    page.locator(FIGURE).first.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    paths = [out / "explore.png", out / "explore_model.png", out / "explore_selective.png"]
    page.mouse.move(0, 0)
    app.screenshot(path=str(paths[0]))
    src = page.evaluate(VISIBLE_SRC, FIGURE)
    dropdown(page, "Model").select_option(model)
    page.wait_for_function(
        "([sel, text]) => document.querySelector(sel)?.innerText.startsWith(text)",
        arg=[VERDICT, f"{model}: "],
        timeout=RUN_TIMEOUT_MS,
    )
    wait_for_new_figure(page, src)
    page.mouse.move(0, 0)
    app.screenshot(path=str(paths[1]))
    src = page.evaluate(VISIBLE_SRC, FIGURE)
    page.locator(".widget-tab .lm-TabBar-tab", has_text="Selective answering").click()
    wait_for_new_figure(page, src)
    page.mouse.move(0, 0)
    app.screenshot(path=str(paths[2]))
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp", help="the model picked in the dropdown (default: mlp)")
    parser.add_argument("--overrides", default="{}", help="evaluation parameters as JSON (default: the demo's)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"), help="folder for the PNG files")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        overrides = json.loads(args.overrides)
        if overrides:
            notebook_with(overrides, root / "explore.ipynb")
        else:
            shutil.copy(NOTEBOOK, root / "explore.ipynb")
        with jupyterlab(root, Path(tmp) / "scratch") as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 2000})
                run_all_cells(page, url, "explore.ipynb")
                page.keyboard.press("Control+b")  # the file browser closed: the notebook gets the width
                paths = shoot(page, out, args.model)
            finally:
                browser.close()
    print("wrote " + ", ".join(str(p) for p in paths))


if __name__ == "__main__":
    main()
