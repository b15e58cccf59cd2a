"""The README and the documentation pages say what runs: every ```python block runs as written.

The README's snippets are what a newcomer copies first; the pages of ``docs/`` hold the rest
(the user guide's examples, the evaluation, the own-data recipe). They run on the embedded
demo benchmark (``ba.load_demo()``, ``run_report("demo", ...)``) and name the path form of the
user's own data in a comment. The README's blocks run in order in one namespace, each page's
in a namespace of its own; a block that raises fails with the file and line where it starts
(tracebacks point at those lines). The README's run_report block executes a real report (one
model, two datasets: about 40 s on 2 shared cores). Blocks written as ``{code-block} python``
in the pages are shown, not run (a second real report would double this test's time).

The README also stays short and points into the docs: at most 150 lines, the two set-up
commands first, the docs build command, and links to pages that exist, the own-data recipe
among them.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if not {"_build", "_generated"} & set(p.relative_to(DOCS).parts))
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
SETUP = [
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/beyondauc demo",
    (
        "bash scripts/install_system_deps.sh && python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' "
        "&& .venv/bin/python -m pytest"
    ),
]
DOCS_BUILD = ".venv/bin/sphinx-build -W -b html docs docs/_build/html"
MAX_README_LINES = 150


def python_blocks(text):
    """(first line number, source) of every ```python block, in order."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def run_blocks(path, namespace):
    """Execute the ```python blocks of ``path`` in order in ``namespace``; fail naming the block's line."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        for line, source in python_blocks(path.read_text(encoding="utf-8")):
            code = compile("\n" * (line - 1) + source, str(path), "exec")
            try:
                exec(code, namespace)  # noqa: S102 - running the documented snippets is the test
            except Exception as exc:  # noqa: BLE001 - name the block, keep the traceback
                pytest.fail(f"{path.relative_to(ROOT)} block at line {line} raised {type(exc).__name__}: {exc}")
    finally:
        plt.close("all")


def test_block_extraction():
    text = "a\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = x\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = x\n")]


def test_readme_is_short_and_starts_with_the_setup():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES, f"README.md has {len(text.splitlines())} lines"
    first = re.search(r"^```bash\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert first and first.group(1).splitlines() == SETUP, "the README's first block is not the two set-up commands"
    assert DOCS_BUILD in text, "the README does not say how to build the docs"


def test_readme_links_into_the_docs():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)(#[^)\s]+)?\)", text)
    assert links, "the README links to no documentation page"
    for path, _anchor in links:
        assert (ROOT / path).is_file(), f"the README links to {path}, which does not exist"
    assert ("docs/getting_started.md", "#your-own-data") in links, "the own-data recipe is not one click away"
    assert "\n## Your own data\n" in (DOCS / "getting_started.md").read_text(encoding="utf-8")


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks that write (reports/...) write here
    assert len(python_blocks(README.read_text(encoding="utf-8"))) >= 1
    namespace = {"__name__": "__readme__"}
    run_blocks(README, namespace)
    if "result" in namespace:  # the report block: a real run that succeeded
        assert namespace["result"].ok, namespace["result"].summary()


@pytest.mark.parametrize(
    "page", [p for p in PAGES if python_blocks(p.read_text(encoding="utf-8"))], ids=lambda p: str(p.relative_to(DOCS))
)
def test_docs_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_blocks(page, {"__name__": "__docs__"})
