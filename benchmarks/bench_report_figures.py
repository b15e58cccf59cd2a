"""Drawing the report's figures: the per-model drawing cost, this checkout against another, side by side in one run.

Builds every figure a model report shows, as the notebooks build it (the
summary's AUC vs accuracy, the AUC-vs-accuracy pair, the reliability grid, the
rank-slope pair, the score-histogram grid, the diagnostics dashboard, the
coverage-accuracy grid), from the demo's evaluation, and renders each as the
report does (``beyondauc.report.notebook.render``: drawn at 2x on an Agg
canvas, then a palette PNG).  Prints the median CPU seconds of building plus
rendering each figure, and their sum: one model's drawing.

With ``--baseline DIR`` (the ``toolkit`` folder of another checkout, e.g.
``git archive REV toolkit | tar -x -C base``) each figure is drawn in two
worker processes, one per checkout, one after the other in alternating order
(the machine is shared: compare the paired medians, not times across runs);
both read the same saved evaluation.  It then also prints the ratio and
whether both checkouts drew the same pixels.

``--mode ticks`` instead compares, in this checkout, the ticks fixed for the
layout and the drawing (``_fix_ticks``) against matplotlib's own draw.

    python benchmarks/bench_report_figures.py --baseline ../base/toolkit [--repeats 7] [--models svm,knn]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _grid(n):
    from beyondauc.plots import report_layout

    ncols = min(3, max(1, n))
    nrows = max(1, -(-n // ncols))
    return plt.subplots(nrows, ncols, figsize=(3.9 * ncols, 3.3 * nrows), layout=report_layout(), squeeze=False)


def builders(ev, model):
    """name -> function building the figure as the report notebooks do."""
    from beyondauc.plots import (
        AUCAccuracyDisplay,
        CoverageAccuracyGridDisplay,
        DiagnosticsDashboard,
        RankSlopeDisplay,
        ReliabilityDisplay,
        ScoreHistogramsDisplay,
        report_layout,
    )

    p = ev.parameters
    mine = ev.table("diagnostics")
    mine = mine[mine["model"] == model].set_index("dataset")
    worst = mine["drift"].sort_values(ascending=False, na_position="last").index[0]

    def summary():
        fig, ax = plt.subplots(figsize=(7.5, 4.6), layout=report_layout())
        AUCAccuracyDisplay.from_evaluation(ev, model=model, score="accuracy", ax=ax)
        return fig

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
            ReliabilityDisplay.from_table(
                rel, model=model, dataset=dataset, protocol=p["protocol"], method=p["method"], ax=ax
            )
            ax.set_title(str(dataset), fontsize=9)
        for ax in axes.flat[len(shown) :]:
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

    return {
        "summary: AUC vs accuracy": summary,
        "diagnostics dashboard": dashboard,
        "AUC vs accuracy (1x2)": auc_accuracy,
        "reliability grid": reliability,
        "rank slopes (1x2)": rank_slope,
        "score histograms": histograms,
        "coverage-accuracy grid": coverage,
    }


def render(build):
    """CPU seconds to build the figure and render it as the report does, and a digest of its pixels."""
    from beyondauc.report import notebook

    t0 = time.process_time()
    fig = build()
    obj = notebook.render(fig)
    seconds = time.process_time() - t0
    plt.close(fig)
    return seconds, hashlib.sha256(obj.data).hexdigest()[:16]


def worker(evaluation):
    """Answer ``model<TAB>figure`` lines on stdin with ``{"seconds": .., "digest": ..}`` lines on stdout."""
    import beyondauc as ba

    ev = ba.open_evaluation(evaluation)
    cache = {}
    print(json.dumps({"ready": ba.__file__}), flush=True)
    for line in sys.stdin:
        model, name = line.rstrip("\n").split("\t")
        if model not in cache:
            cache[model] = builders(ev, model)
        seconds, digest = render(cache[model][name])
        print(json.dumps({"seconds": seconds, "digest": digest}), flush=True)


class _Side:
    """A worker process drawing with the beyondauc of ``toolkit`` (None: this checkout's, as imported)."""

    def __init__(self, toolkit, evaluation):
        env = dict(os.environ, PYTHONHASHSEED="0")
        if toolkit:
            env["PYTHONPATH"] = os.pathsep.join([str(Path(toolkit).resolve()), *filter(None, [env.get("PYTHONPATH")])])
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", evaluation],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.package = json.loads(self.proc.stdout.readline())["ready"]

    def draw(self, model, name):
        self.proc.stdin.write(f"{model}\t{name}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def paired(args):
    """This checkout against ``--baseline``, figure by figure, in alternating order."""
    import beyondauc as ba

    with tempfile.TemporaryDirectory() as tmp:
        evaluation = str(Path(tmp) / "evaluation")
        ba.evaluate("demo", n_jobs=2).save(evaluation)
        sides = {"this": _Side(None, evaluation), "baseline": _Side(args.baseline, evaluation)}
        print(f"this: {sides['this'].package}\nbaseline: {sides['baseline'].package}", file=sys.stderr)
        names = list(builders(ba.open_evaluation(evaluation), args.models[0]))
        times = {(s, m, n): [] for s in sides for m in args.models for n in names}
        same = {}
        for model in args.models:
            for name in names:  # warm-up: fonts, caches
                digests = {s: side.draw(model, name)["digest"] for s, side in sides.items()}
                same[model, name] = digests["this"] == digests["baseline"]
        for i in range(args.repeats):
            order = list(sides) if i % 2 == 0 else list(sides)[::-1]
            for model in args.models:
                for name in names:
                    for s in order:
                        times[s, model, name].append(sides[s].draw(model, name)["seconds"])
        for side in sides.values():
            side.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"| figure (demo; models {', '.join(args.models)}) | this checkout | baseline | ratio | same pixels |")
    print("|:--|--:|--:|--:|:--|")
    for name in names:
        ours = statistics.mean(med["this", m, name] for m in args.models)
        theirs = statistics.mean(med["baseline", m, name] for m in args.models)
        alike = "yes" if all(same[m, name] for m in args.models) else "no"
        print(f"| {name} | {ours:.3f} s | {theirs:.3f} s | {ours / theirs:.2f} | {alike} |")
    per_model = {s: statistics.mean(sum(med[s, m, n] for n in names) for m in args.models) for s in sides}
    print(
        f"| one model's figures | {per_model['this']:.3f} s | {per_model['baseline']:.3f} s | "
        f"{per_model['this'] / per_model['baseline']:.2f} | |"
    )
    print(f"(CPU seconds to build and render one figure, median of {args.repeats} paired runs, mean over the models)")


def ticks(args):
    """Ticks fixed for the layout and the drawing against matplotlib's own draw, in this checkout."""
    import beyondauc as ba
    from beyondauc.report import notebook as _notebook

    def draw(build, fixed):
        original = _notebook.fix_ticks
        if not fixed:
            _notebook.fix_ticks = lambda fig: []
        try:
            t0 = time.process_time()
            fig = build()
            image = _notebook.raster(fig, 2 * _notebook.BASE_DPI)
            seconds = time.process_time() - t0
        finally:
            _notebook.fix_ticks = original
        plt.close(fig)
        return seconds, np.asarray(image)

    ev = ba.evaluate("demo", n_jobs=2)
    rows, total = [], {True: 0.0, False: 0.0}
    for name, build in builders(ev, args.models[0]).items():
        draw(build, True), draw(build, False)  # warm-up: fonts, caches
        times, pixels = {True: [], False: []}, {}
        for i in range(args.repeats):
            for fixed in (True, False) if i % 2 == 0 else (False, True):
                seconds, pixels[fixed] = draw(build, fixed)
                times[fixed].append(seconds)
            if not np.array_equal(pixels[True], pixels[False]):
                raise SystemExit(f"{name}: the pixels differ")
        med = {k: statistics.median(v) for k, v in times.items()}
        total[True] += med[True]
        total[False] += med[False]
        rows.append((name, med[True], med[False]))
    print(f"| figure ({args.models[0]}, demo) | ticks fixed | matplotlib's draw | ratio |")
    print("|:--|--:|--:|--:|")
    for name, ours, theirs in rows:
        print(f"| {name} | {ours:.3f} s | {theirs:.3f} s | {ours / theirs:.2f} |")
    print(f"| all | {total[True]:.3f} s | {total[False]:.3f} s | {total[True] / total[False]:.2f} |")
    print(f"(CPU seconds to build and draw one figure, median of {args.repeats}; the same pixels)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--models", default="svm", help="comma-separated models of the demo")
    parser.add_argument("--baseline", help="the toolkit folder of another checkout, drawn side by side with this one")
    parser.add_argument("--mode", choices=["paired", "ticks"], default="paired")
    parser.add_argument("--worker", metavar="EVALUATION", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    args.models = args.models.split(",")
    if args.mode == "ticks":
        return ticks(args)
    if not args.baseline or not (Path(args.baseline) / "beyondauc" / "__init__.py").is_file():
        raise SystemExit(f"--baseline: expected a folder holding the beyondauc package, got {args.baseline!r}")
    return paired(args)


if __name__ == "__main__":
    main()
