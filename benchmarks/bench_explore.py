"""How long the explorer (``ba.explore``) takes to redraw when the model or the dataset changes.

On the demo's evaluation (8 models x 8 datasets, every protocol and method), with each tab open in turn,
the model (or the dataset) is switched round its options and each switch timed: the median of the runs
per tab is printed.  A switch redraws the verdict and the open tab only (a tab out of view is drawn when
it is opened).  The evaluation is computed once first (``--n-bootstrap``, default 200 as the notebook),
or read from ``--evaluation`` (a folder ``Evaluation.save`` wrote).

    python benchmarks/bench_explore.py [--repeats 3] [--n-bootstrap 200] [--evaluation FOLDER]
"""
from __future__ import annotations

import argparse
import statistics
import time

import beyondauc as ba
from beyondauc.plots.explore import TABS


def switch_times(app, control, values, repeats):
    """Seconds of each switch of ``control`` round ``values``, ``repeats`` times."""
    times = []
    for _ in range(repeats):
        for v in values:
            t = time.perf_counter()
            app.controls[control].value = v
            times.append(time.perf_counter() - t)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-bootstrap", type=int, default=200)
    ap.add_argument("--evaluation", default=None)
    a = ap.parse_args()
    t = time.perf_counter()
    ev = ba.open_evaluation(a.evaluation, data="demo", n_bootstrap=a.n_bootstrap, progress=False)
    print(f"evaluation: {len(ev.models)} models x {len(ev.datasets)} datasets, {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    app = ba.explore(ev)
    print(f"opening the explorer: {time.perf_counter() - t:.2f} s")
    print(f"{'open tab':<12} {'model switch (median s)':>24} {'dataset switch (median s)':>26}")
    for tab in TABS:
        app.show(tab)
        models = [m for m in ev.models if m != app.controls["model"].value] + [app.controls["model"].value]
        datasets = [d for d in ev.datasets if d != app.controls["dataset"].value] + [app.controls["dataset"].value]
        m = statistics.median(switch_times(app, "model", models, a.repeats))
        d = statistics.median(switch_times(app, "dataset", datasets, a.repeats))
        print(f"{tab:<12} {m:>24.3f} {d:>26.3f}")


if __name__ == "__main__":
    main()
