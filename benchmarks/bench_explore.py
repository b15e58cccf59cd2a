"""How long the explorer (``ba.explore``) takes to redraw when the model or the dataset changes.

On the demo's evaluation (8 models x 8 datasets, every protocol and method), with each tab open in turn,
the model (or the dataset) is switched round its options and each switch timed: the median of the runs
per tab is printed, wall time and the process's CPU time (on a shared machine the wall time also counts
the waits for a core).  A switch redraws the verdict and the open tab only (a tab out of view is drawn when
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
    """Wall and CPU seconds of each switch of ``control`` round ``values``, ``repeats`` times."""
    wall, cpu = [], []
    for _ in range(repeats):
        for v in values:
            t, c = time.perf_counter(), time.process_time()
            app.controls[control].value = v
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return wall, cpu


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
    print("medians in seconds, wall (CPU of this process: the machine may be shared)")
    print(f"{'open tab':<12} {'model switch':>20} {'dataset switch':>20}")
    for tab in TABS:
        app.show(tab)
        models = [m for m in ev.models if m != app.controls["model"].value] + [app.controls["model"].value]
        datasets = [d for d in ev.datasets if d != app.controls["dataset"].value] + [app.controls["dataset"].value]
        cells = []
        for control, values in (("model", models), ("dataset", datasets)):
            wall, cpu = switch_times(app, control, values, a.repeats)
            cells.append(f"{statistics.median(wall):.3f} ({statistics.median(cpu):.3f})")
        print(f"{tab:<12} {cells[0]:>20} {cells[1]:>20}")


if __name__ == "__main__":
    main()
