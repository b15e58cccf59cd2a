"""Figure formats for the reports: 1x PNG vs 2x PNG (retina) vs SVG.

For two of the reports' figures (the 8-panel DiagnosticsDashboard and a
CoverageAccuracyDisplay) this renders each figure the way IPython's inline
backend does (``savefig(..., bbox_inches="tight")``) to memory and reports the
bytes and the median render time of several runs, side by side in one run.

    python benchmarks/bench_figures.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402

import beyondauc as ba  # noqa: E402
from beyondauc.plots import CoverageAccuracyDisplay, DiagnosticsDashboard  # noqa: E402

FORMATS = {  # name -> savefig keywords, as IPython's figure formatters call it
    "png 1x (default)": dict(format="png", dpi=100),
    "png 2x (retina)": dict(format="png", dpi=200),
    "svg": dict(format="svg"),
}


def figures(large):
    bench = ba.load_demo()
    dash = DiagnosticsDashboard.from_benchmark(bench, "svm", "iris_versicolor")
    fig, ax = plt.subplots(figsize=(6.4, 4.8), layout="constrained")
    CoverageAccuracyDisplay.from_benchmark(bench, "logreg", "digits_even", ax=ax)
    out = {
        "DiagnosticsDashboard, demo (45 + 45 examples)": dash.figure_,
        "CoverageAccuracyDisplay, demo (216 examples)": fig,
    }
    if large:  # every distinct score is a vertex of the ROC and drift curves: SVG grows with n
        rng = np.random.default_rng(0)
        y = rng.integers(0, 2, (2, large))
        s = y + rng.normal(0, 1, (2, large))
        dash = DiagnosticsDashboard.from_predictions(y[0], s[0], y[1], s[1] + 0.2, n_repeats=2)
        out[f"DiagnosticsDashboard, {large:,} + {large:,} examples"] = dash.figure_
    return out


def measure(fig, kwargs, repeats):
    times, size = [], 0
    for _ in range(repeats):
        buf = io.BytesIO()
        t0 = time.perf_counter()
        fig.savefig(buf, bbox_inches="tight", facecolor="white", **kwargs)
        times.append(time.perf_counter() - t0)
        size = buf.tell()
    return size, statistics.median(times)


PAGE_WIDTH_IN = (297 - 20) / 25.4  # A4 landscape minus the report's 10 mm side margins


def smallest_font(fig):
    """Smallest font size (pt) among the figure's visible, non-empty texts (tick labels included)."""
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes)


def print_table():
    """Printed size of each report figure's smallest text on the PDF's A4 landscape page.

    A figure of w inches is an image of w * 100 CSS px (dpi 100; 2x PNG keeps the CSS
    size), i.e. w * 100 / 96 inches, shrunk to the page width when wider."""
    import beyondauc.plots as bp

    bench = ba.load_demo()
    res = ba.expected_accuracy(bench)
    cases = {
        "DiagnosticsDashboard (default 20 x 9)": lambda: (
            bp.DiagnosticsDashboard.from_benchmark(bench, "svm", "wine", n_repeats=2).figure_
        ),
        "DiagnosticsDashboard (test_auroc: 16 x 7)": lambda: (
            bp.DiagnosticsDashboard.from_benchmark(
                bench, "svm", "wine", n_repeats=2, figure=plt.figure(figsize=(16, 7), layout="constrained")
            ).figure_
        ),
        "ScoreHistogramsDisplay (9 panels, 16 x 7.8)": lambda: (
            bp.ScoreHistogramsDisplay.from_benchmark(bench, "mlp").figure_
        ),
        "AUCAccuracy + RankSlope (auc_vs_accuracy: 13 x 5)": lambda: _pair(bp, res, (13, 5)),
        "overview 1 x 3 (18 x 5.5)": lambda: _triple(bp, res, (18, 5.5)),
        "CoverageAccuracy + Tolerance (14 x 5)": lambda: _cov(bp, bench, (14, 5)),
    }
    print("| figure | width in | smallest font pt | printed width in | smallest font printed pt |")
    print("|:--|--:|--:|--:|--:|")
    for name, make in cases.items():
        fig = make()
        w = fig.get_size_inches()[0]
        printed = min(PAGE_WIDTH_IN, w * 100 / 96)
        small = smallest_font(fig)
        print(f"| {name} | {w:.1f} | {small:g} | {printed:.1f} | {small * printed / w:.1f} |")
        plt.close(fig)


def _pair(bp, res, size):
    fig, axes = plt.subplots(1, 2, figsize=size, layout="constrained")
    bp.AUCAccuracyDisplay.from_results(res, model="mlp", ax=axes[0])
    bp.RankSlopeDisplay.from_results(res, highlight="mlp", ax=axes[1])
    return fig


def _triple(bp, res, size):
    fig, axes = plt.subplots(1, 3, figsize=size, layout="constrained")
    bp.RankSlopeDisplay.from_results(res, ax=axes[0])
    bp.RankSlopeDisplay.from_results(res, score="kappa", ax=axes[1])
    bp.AUCAccuracyDisplay.from_results(res, ax=axes[2])
    return fig


def _cov(bp, bench, size):
    fig, axes = plt.subplots(1, 2, figsize=size, layout="constrained")
    bp.CoverageAccuracyDisplay.from_benchmark(bench, "logreg", "digits_even", ax=axes[0])
    bp.ToleranceDisplay.from_benchmark(bench, "digits_even", ax=axes[1])
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--large", type=int, default=10_000, help="examples per cohort of a large dashboard (0: none)")
    parser.add_argument(
        "--print-fonts", action="store_true", help="only the table of the figures' smallest text as printed in the PDF"
    )
    args = parser.parse_args(argv)
    if args.print_fonts:
        print_table()
        return
    print("| figure | format | bytes | vs png 1x | render ms (median) | vs png 1x |")
    print("|:--|:--|--:|--:|--:|--:|")
    for name, fig in figures(args.large).items():
        base = None
        for fmt, kwargs in FORMATS.items():
            size, seconds = measure(fig, kwargs, args.repeats)
            base = base or (size, seconds)
            print(
                f"| {name} | {fmt} | {size:,} | {size / base[0]:.2f}x | {seconds * 1e3:.0f} | "
                f"{seconds / base[1]:.2f}x |"
            )


if __name__ == "__main__":
    main()
