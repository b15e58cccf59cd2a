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
    out = {"DiagnosticsDashboard, demo (45 + 45 examples)": dash.figure_,
           "CoverageAccuracyDisplay, demo (216 examples)": fig}
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--large", type=int, default=10_000, help="examples per cohort of a large dashboard (0: none)")
    args = parser.parse_args(argv)
    print("| figure | format | bytes | vs png 1x | render ms (median) | vs png 1x |")
    print("|:--|:--|--:|--:|--:|--:|")
    for name, fig in figures(args.large).items():
        base = None
        for fmt, kwargs in FORMATS.items():
            size, seconds = measure(fig, kwargs, args.repeats)
            base = base or (size, seconds)
            print(f"| {name} | {fmt} | {size:,} | {size / base[0]:.2f}x | {seconds * 1e3:.0f} | "
                  f"{seconds / base[1]:.2f}x |")


if __name__ == "__main__":
    main()
