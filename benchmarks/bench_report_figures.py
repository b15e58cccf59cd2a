"""Drawing the report's figures: each axis's ticks computed once (``_raster`` today) against matplotlib's
own tight-layout draw, side by side in one run.

Builds every figure kind a model report shows, as the notebooks build it
(the diagnostics dashboard, the AUC-vs-accuracy pair, the reliability grid,
the rank-slope pair, the score-histogram grid, the coverage-accuracy grid),
from the demo's evaluation, and draws each the way the report does
(``beyondauc.report.notebook._raster`` at 2x), once with the ticks fixed for the
layout and the drawing (:func:`beyondauc.report.notebook._fix_ticks`) and once
without (``_fix_ticks`` returns nothing: matplotlib's plain draw), in
alternating order. Prints the median CPU seconds of building plus drawing
each kind, and the ratio; checks that both give the same pixels.

    python benchmarks/bench_report_figures.py [--repeats 9] [--model svm]
"""
from __future__ import annotations

import argparse
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import beyondauc as ba  # noqa: E402
from beyondauc.report import notebook as _notebook  # noqa: E402
from beyondauc.plots import (  # noqa: E402
    AUCAccuracyDisplay,
    CoverageAccuracyGridDisplay,
    DiagnosticsDashboard,
    RankSlopeDisplay,
    ReliabilityDisplay,
    ScoreHistogramsDisplay,
    report_layout,
)


def _grid(n):
    ncols = min(3, max(1, n))
    nrows = max(1, -(-n // ncols))
    return plt.subplots(nrows, ncols, figsize=(3.9 * ncols, 3.3 * nrows), layout=report_layout(), squeeze=False)


def builders(ev, model):
    """name -> function building the figure as the report notebooks do."""
    p = ev.parameters
    mine = ev.table("diagnostics")
    mine = mine[mine["model"] == model].set_index("dataset")
    worst = mine["drift"].sort_values(ascending=False, na_position="last").index[0]

    def dashboard():
        fig = plt.figure(figsize=(12, 7.2), layout=report_layout())
        DiagnosticsDashboard.from_evaluation(ev, model, worst, figure=fig)
        return fig

    def auc_accuracy():
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), layout=report_layout())
        AUCAccuracyDisplay.from_evaluation(ev, model=model, score="accuracy", ax=axes[0])
        AUCAccuracyDisplay.from_evaluation(ev, model=model, score="kappa", ax=axes[1])
        return fig

    def reliability():
        rel = ev.table("reliability")
        cells = rel[(rel["model"] == model) & (rel["protocol"] == p["protocol"]) & (rel["method"] == p["method"])]
        shown = list(dict.fromkeys(cells["dataset"]))
        fig, axes = _grid(len(shown))
        for ax, dataset in zip(axes.flat, shown):
            ReliabilityDisplay.from_table(rel, model=model, dataset=dataset, protocol=p["protocol"],
                                          method=p["method"], ax=ax)
            ax.set_title(str(dataset), fontsize=9)
        for ax in axes.flat[len(shown):]:
            ax.axis("off")
        return fig

    def rank_slope():
        fig, axes = plt.subplots(1, 2, figsize=(12, 5), layout=report_layout())
        RankSlopeDisplay.from_evaluation(ev, score="accuracy", highlight=model, ax=axes[0])
        RankSlopeDisplay.from_evaluation(ev, score="kappa", highlight=model, ax=axes[1])
        return fig

    def histograms():
        return ScoreHistogramsDisplay.from_evaluation(ev, model, ncols=3).figure_

    def coverage():
        return CoverageAccuracyGridDisplay.from_evaluation(ev, model).figure_

    return {"diagnostics dashboard": dashboard, "AUC vs accuracy (1x2)": auc_accuracy,
            "reliability grid": reliability, "rank slopes (1x2)": rank_slope, "score histograms": histograms,
            "coverage-accuracy grid": coverage}


def draw(build, fixed):
    """CPU seconds to build and draw the figure (ticks fixed or not), and its pixels."""
    original = _notebook._fix_ticks
    if not fixed:
        _notebook._fix_ticks = lambda fig: []
    try:
        t0 = time.process_time()
        fig = build()
        image = _notebook._raster(fig, 2 * _notebook._BASE_DPI)
        seconds = time.process_time() - t0
    finally:
        _notebook._fix_ticks = original
    plt.close(fig)
    return seconds, np.asarray(image)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--model", default="svm")
    args = parser.parse_args(argv)
    ev = ba.evaluate("demo", n_jobs=2)
    rows, total = [], {True: 0.0, False: 0.0}
    for name, build in builders(ev, args.model).items():
        draw(build, True), draw(build, False)  # warm-up: fonts, caches
        times = {True: [], False: []}
        for i in range(args.repeats):
            for fixed in ((True, False) if i % 2 == 0 else (False, True)):
                seconds, pixels = draw(build, fixed)
                times[fixed].append(seconds)
                if fixed:
                    ours = pixels
                else:
                    theirs = pixels
            if not np.array_equal(ours, theirs):
                raise SystemExit(f"{name}: the pixels differ")
        med = {k: statistics.median(v) for k, v in times.items()}
        total[True] += med[True]
        total[False] += med[False]
        rows.append((name, med[True], med[False]))
    print(f"| figure ({args.model}, demo) | ticks fixed | matplotlib's draw | ratio |")
    print("|:--|--:|--:|--:|")
    for name, ours, theirs in rows:
        print(f"| {name} | {ours:.3f} s | {theirs:.3f} s | {ours / theirs:.2f} |")
    print(f"| all six | {total[True]:.3f} s | {total[False]:.3f} s | {total[True] / total[False]:.2f} |")
    print(f"(CPU seconds to build and draw one figure, median of {args.repeats}; the same pixels)")


if __name__ == "__main__":
    main()
