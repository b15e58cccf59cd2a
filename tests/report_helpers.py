"""Helpers for the report tests: benchmarks with hostile model names, an HTML tree, a run_report spy.

The HTML checks parse the pages with the standard library's ``html.parser`` into
a small element tree, so they test what a browser would see (elements and
attribute values, entities decoded) rather than guess with regular expressions.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from beyondauc import load_demo

#: Model names that try to break out of HTML, of the report folder, or of ASCII.
HOSTILE = ("<script>alert(1)</script>", "../x", "a/b", "modèle 1")
SCRIPT = HOSTILE[0]
DATASETS = ("wine", "diabetes")
#: The notebooks executed per model, in report order: the summary, then the analyses.
NOTEBOOKS = ("summary", "auc_vs_accuracy", "test_auroc", "selective_answering")
#: The analyses: each a collapsible section of the report, after the summary.
ANALYSES = NOTEBOOKS[1:]
BROKEN, HEALTHY = "broken_model", "healthy"
BOOM = "boom from the test"
FAILING_NOTEBOOK = "test_auroc"


def demo_frame(columns):
    """The demo benchmark on two datasets, with demo model columns renamed by ``columns`` (old -> new)."""
    frame = load_demo().frame
    frame = frame[frame["dataset"].isin(DATASETS)]
    meta = [c for c in ("dataset", "domain", "label", "split", "id") if c in frame.columns]
    return frame[[*meta, *columns]].rename(columns=columns).reset_index(drop=True)


def hostile_frame():
    return demo_frame(dict(zip(("logreg", "svm", "knn", "mlp"), HOSTILE)))


def broken_frame():
    return demo_frame({"svm": BROKEN, "logreg": HEALTHY})


def sha256_file(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def notebooks_with_failure(src_dir, dst_dir):
    """Copy the notebooks; ``test_auroc`` raises for model ``broken_model`` right after its parameters."""
    dst_dir = Path(dst_dir)
    dst_dir.mkdir(parents=True, exist_ok=True)
    for nb in Path(src_dir).glob("*.ipynb"):
        shutil.copyfile(nb, dst_dir / nb.name)
    path = dst_dir / f"{FAILING_NOTEBOOK}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    cell = nbformat.v4.new_code_cell(f'if model == "{BROKEN}":\n    raise RuntimeError("{BOOM}")')
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):  # cell ids came with nbformat 4.5
        del cell["id"]
    nb.cells.insert(at + 1, cell)
    nbformat.validate(nb)
    nbformat.write(nb, str(path))
    return dst_dir


def tiny_notebooks(src_dir, dst_dir, *, sleep=0.0, wait_for=None):
    """The notebooks cut to their title, their parameters and one cell that reads the evaluation (and sleeps).

    For tests of the runner itself: a report of a few seconds, still executed by
    papermill with the real parameters. With ``wait_for`` (a path), the cell also
    waits until that file exists (at most 300 s), so a test holds the run in its
    notebooks for exactly as long as it needs.
    """
    dst_dir = Path(dst_dir)
    dst_dir.mkdir(parents=True, exist_ok=True)
    wait = ("" if wait_for is None else
            f"\ngate = pathlib.Path({str(wait_for)!r})\nstop = time.monotonic() + 300\n"
            "while not gate.exists() and time.monotonic() < stop:\n    time.sleep(0.05)")
    for path in Path(src_dir).glob("*.ipynb"):
        nb = nbformat.read(str(path), as_version=4)
        at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
        code = nbformat.v4.new_code_cell(
            "import pathlib\nimport time\nimport beyondauc\n"
            "ev = beyondauc.load_evaluation(evaluation)\n"
            f"print(ev.models, ev.datasets)\ntime.sleep({sleep!r}){wait}")
        code.id = "tiny-code"
        nb.cells = [nb.cells[0], nb.cells[at], code]
        nbformat.write(nb, str(dst_dir / path.name))
    return dst_dir


#: Runs the CLI with ``beyondauc.report``'s notebooks taken from argv[1] (a subprocess of the tests).
CLI_WITH_NOTEBOOKS = ("import sys\nfrom pathlib import Path\nimport beyondauc.report.runner\n"
                      "beyondauc.report.runner._notebooks_dir = lambda: Path(sys.argv[1])\n"
                      "from beyondauc.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main(sys.argv[2:]))\n")


@contextlib.contextmanager
def spy_run_report(**inject):
    """Patch ``beyondauc.report.run_report`` (what the CLI calls) to record its calls and results.

    ``inject`` keyword arguments are added to every call (e.g. ``notebooks_dir``,
    which the CLI does not expose). Yields a list of ``(kwargs, ReportResult)``.
    """
    from beyondauc import report

    real = report.run_report
    calls = []

    def spy(*args, **kwargs):
        kwargs.update(inject)
        result = real(*args, **kwargs)
        calls.append((kwargs, result))
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report, "run_report", spy)
        yield calls


# -- a small HTML tree ----------------------------------------------------------

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def __repr__(self):
        return f"<{self.tag} {self.attrs}>"

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def iter(self):
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def find_all(self, tag=None, **attrs):
        """Descendants with this tag and these attribute values (``data_x`` means ``data-x``)."""
        want = {k.replace("_", "-"): v for k, v in attrs.items()}
        return [e for e in self.iter()
                if (tag is None or e.tag == tag) and all(e.attrs.get(k) == v for k, v in want.items())]

    def find(self, tag=None, **attrs):
        found = self.find_all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, found)
        return found[0]

    def marked(self, marker):
        """Elements with ``data-beyondauc="marker"``."""
        return self.find_all(data_beyondauc=marker)

    @property
    def text(self):
        return "".join(c if isinstance(c, str) else c.text for c in self.children)


class _TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        el = Element(tag, attrs, self.stack[-1])
        self.stack[-1].children.append(el)
        if tag not in _VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Element(tag, attrs, self.stack[-1]))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_html(text):
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root
