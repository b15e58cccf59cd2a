"""The explorer in a real JupyterLab, in headless Chromium: what a user sees and does.

The test starts its own JupyterLab (a free port, no token, a temporary root
holding a copy of ``notebooks/explore.ipynb``, every Jupyter folder inside the
test's temporary folder), opens the notebook in Debian's ``chromium`` through
Playwright (as tests/end_to_end/test_browser.py does), runs all cells from the *Run* menu,
and waits for the widgets to render: the standard ipywidgets front end that
JupyterLab ships, no front-end build of ours. It then picks another model in
the *Model* dropdown and sees the verdict and the figure change.

To keep it cheap the notebook runs on a small evaluation of the demo (three
models, two datasets, two indata repeats, no bootstrap): its parameters are given in a cell after
the ``parameters`` cell, as papermill injects them. One server, one kernel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

import beyondauc as ba
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, require_browser
from helpers.jupyterlab import RUN_TIMEOUT_MS, dropdown, jupyterlab, run_all_cells

NOTEBOOK = Path(ba.__path__[0]) / "notebooks" / "explore.ipynb"
OVERRIDES = {"models": ["svm", "knn", "logreg"], "datasets": ["wine", "diabetes"], "n_repeats": 2, "n_bootstrap": 0}
VIEWPORT = {"width": 1280, "height": 900}
FIGURE = ".widget-tab .widget-output img"  # the open tab's figure (AUC vs accuracy at first)
VERDICT = ".widget-html h3"  # "<model>: <verdict>"
# JupyterLab shows an exception's traceback as the cell's stderr
TRACEBACK = "[data-mime-type='application/vnd.jupyter.stderr']:has-text('Traceback (most recent call last)')"
SCRIPT_ERRORS: list[str] = []  # errors the page's scripts raised (the widgets' front end included)


def notebook_with(overrides: dict, dest: Path) -> None:
    """The explorer notebook at ``dest``, with ``overrides`` set in a cell after its parameters cell."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    (i,) = [k for k, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    cell = nbformat.v4.new_code_cell(f"# Injected parameters\noverrides = {overrides!r}")
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(i + 1, cell)
    nbformat.write(nb, dest)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A Chromium page showing the explorer notebook in a JupyterLab of its own, all cells run."""
    require_browser()
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.fail(
            "the explorer's browser test needs JupyterLab (the `dev` extra: pip install -e '.[dev]')", pytrace=False
        )
    from playwright.sync_api import sync_playwright

    tmp = tmp_path_factory.mktemp("jupyterlab")
    root = tmp / "root"
    root.mkdir()
    notebook_with(OVERRIDES, root / "explore.ipynb")
    with jupyterlab(root, tmp / "scratch") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.on("pageerror", lambda exc: SCRIPT_ERRORS.append(str(exc)))
            run_all_cells(page, url, "explore.ipynb")
            # the explorer's figure, or a traceback: whichever comes first
            page.locator(FIGURE).or_(page.locator(TRACEBACK)).first.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
            if page.locator(TRACEBACK).count():
                pytest.fail(
                    "the notebook raised:\n" + page.locator(TRACEBACK).first.inner_text()[-3000:], pytrace=False
                )
            page.locator(".widget-vbox").first.scroll_into_view_if_needed()
            yield page
        finally:
            browser.close()


def test_the_notebook_runs_and_the_widgets_render(page):
    assert page.locator(TRACEBACK).count() == 0
    assert page.get_by_text("Error displaying widget").count() == 0
    for label in ("Model", "Baseline", "Dataset", "Protocol", "Method"):
        assert dropdown(page, label).count() == 1, label
    assert dropdown(page, "Model").input_value() == OVERRIDES["models"][0]
    assert page.locator(VERDICT).inner_text().startswith(f"{OVERRIDES['models'][0]}: ")
    assert page.locator(FIGURE).get_attribute("src").startswith("data:image/png;base64,")
    assert page.locator(".widget-tab .lm-TabBar-tab").all_inner_texts() == [
        "AUC vs accuracy",
        "Diagnostics",
        "Selective answering",
        "Comparison",
        "Table",
    ]


def test_picking_another_model_changes_the_verdict_and_the_figure(page):
    figure, verdict = page.locator(FIGURE), page.locator(VERDICT)
    src_before, verdict_before = figure.get_attribute("src"), verdict.inner_text()
    dropdown(page, "Model").select_option("knn")
    # the kernel redraws: wait for the new verdict, then for the new figure (each a concrete change in the page)
    page.wait_for_function(
        "([sel, text]) => document.querySelector(sel)?.innerText.startsWith(text)",
        arg=[VERDICT, "knn: "],
        timeout=RUN_TIMEOUT_MS,
    )
    page.wait_for_function(
        "([sel, src]) => { const img = document.querySelector(sel); return img && img.src !== src; }",
        arg=[FIGURE, src_before],
        timeout=RUN_TIMEOUT_MS,
    )
    assert verdict.inner_text() != verdict_before
    src_after = figure.get_attribute("src")
    assert src_after.startswith("data:image/png;base64,") and src_after != src_before
    assert SCRIPT_ERRORS == []
