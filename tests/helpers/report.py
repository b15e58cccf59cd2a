"""Helpers for the report tests: benchmarks with hostile model names, an HTML tree, a run_report spy.

The HTML checks parse the pages with the standard library's ``html.parser`` into
a small element tree, so they test what a browser would see (elements and
attribute values, entities decoded) rather than guess with regular expressions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from beyondauc import load_demo
from beyondauc.utils.output import MANIFEST

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


def manifest_files(out):
    """The files a report or evaluation folder's manifest lists."""
    return json.loads((Path(out) / MANIFEST).read_text())["files"]


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
    wait = (
        ""
        if wait_for is None
        else f"\ngate = pathlib.Path({str(wait_for)!r})\nstop = time.monotonic() + 300\n"
        "while not gate.exists() and time.monotonic() < stop:\n    time.sleep(0.05)"
    )
    for path in Path(src_dir).glob("*.ipynb"):
        nb = nbformat.read(str(path), as_version=4)
        at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
        code = nbformat.v4.new_code_cell(
            "import pathlib\nimport time\nimport beyondauc\n"
            "ev = beyondauc.load_evaluation(evaluation)\n"
            f"print(ev.models, ev.datasets)\ntime.sleep({sleep!r}){wait}"
        )
        code.id = "tiny-code"
        nb.cells = [nb.cells[0], nb.cells[at], code]
        nbformat.write(nb, str(dst_dir / path.name))
    return dst_dir


#: Runs the CLI with ``beyondauc.report``'s notebooks taken from argv[1] (a subprocess of the tests).
CLI_WITH_NOTEBOOKS = (
    "import sys\nfrom pathlib import Path\nimport beyondauc.report.runner\n"
    "beyondauc.report.runner._notebooks_dir = lambda: Path(sys.argv[1])\n"
    "from beyondauc.cli import main\n"
    "if __name__ == '__main__':\n    sys.exit(main(sys.argv[2:]))\n"
)


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
        return [
            e
            for e in self.iter()
            if (tag is None or e.tag == tag) and all(e.attrs.get(k) == v for k, v in want.items())
        ]

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


def pdf_layout(path, *, scale=50 / 72):
    """``(texts, fills)`` of each page of the PDF at ``path``: the page's text and how full it is.

    The fill is measured on the page's image (rendered at 50 dpi by pypdfium2): the share of the height
    between the running header and the page number, from its top down to its lowest non-white row. A page
    holding only the end of a paragraph is near 0; a page of table rows near 1.
    """
    import numpy as np
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        texts, fills = [], []
        for page in pdf:
            texts.append(page.get_textpage().get_text_bounded())
            pixels = np.asarray(page.render(scale=scale, grayscale=True).to_pil().convert("L"))
            height = pixels.shape[0]  # A4 landscape: 210 mm, margins 14 mm (running header) and 13 mm (number)
            body = pixels[round(height * 14 / 210) : round(height * (210 - 13) / 210)]
            rows = np.flatnonzero((body < 245).any(axis=1))
            fills.append((rows[-1] + 1) / len(body) if len(rows) else 0.0)
    finally:
        pdf.close()
    return texts, fills


def appendix_starts(texts):
    """``{letter: (page, at_top)}``: where each appendix of a report's PDF begins (its title line, not its line in
    the contents) and whether its title is the first line of that page's body."""
    import re

    starts = {}
    for number, text in enumerate(texts, start=1):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        body = [
            line for line in lines if not line.startswith("beyondauc report:") and not re.match(r"page \d+ / \d+", line)
        ]
        for i, line in enumerate(body):
            m = re.match(r"Appendix ([A-Z])\. ", line)
            if m and "(page" not in line and m.group(1) not in starts:
                starts[m.group(1)] = (number, i == 0)
    return starts


def summary_pages_and_thin_pages(path, *, minimum=0.2):
    """``(summary pages, thin pages, fills)`` of a report's PDF: the pages of its summary (up to where appendix A
    begins) and the pages under ``minimum`` full that are not the last of a section."""
    texts, fills = pdf_layout(path)
    starts = appendix_starts(texts)
    first, at_top = starts["A"]
    summary = first - 1 if at_top else first
    last_of_section = {len(texts)} | {page - 1 for page, top in starts.values() if top} | {summary}
    thin = [
        (page, round(fill, 3))
        for page, fill in enumerate(fills, start=1)
        if fill < minimum and page not in last_of_section
    ]
    return summary, thin, fills
