"""Every ```python block of README.md runs as written, in order, in one namespace.

The README's snippets are what a newcomer copies first; they run on the embedded demo
benchmark (``ba.load_demo()``, ``run_report("demo", ...)``) and name the path form of
the user's own data in a comment.  A block that raises fails this test with the
README line where it starts (tracebacks point at README lines).  The run_report block
executes a real report (one model, two datasets: about 40 s on 2 shared cores).
"""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text):
    """(first line number, source) of every ```python block, in order."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_block_extraction():
    text = "a\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = x\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = x\n")]


def test_use_it_section_is_covered():
    text = README.read_text(encoding="utf-8")
    start = text.index("## Use it")
    end = text.find("\n## ", start + 1)
    lines = {line for line, _ in python_blocks(text)}
    section = python_blocks(text[start:end])
    assert section, "the 'Use it' section has no ```python block"
    first = text.count("\n", 0, start)
    assert {first + line for line, _ in section} <= lines


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)  # blocks that write (reports/...) write here
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    namespace = {"__name__": "__readme__"}
    try:
        for line, source in blocks:
            code = compile("\n" * (line - 1) + source, str(README), "exec")
            try:
                exec(code, namespace)
            except Exception as exc:  # noqa: BLE001 - name the block, keep the traceback
                pytest.fail(f"README.md block at line {line} raised {type(exc).__name__}: {exc}")
    finally:
        plt.close("all")
    if "result" in namespace:  # the report block: a real run that succeeded
        assert namespace["result"].ok, namespace["result"].summary()
