"""Time the expected-accuracy grid against the straightforward per-fit loop.

Runs, in one process and on the same generated TRUE-sized benchmark (9
datasets in 3 domains, 23,858 rows, 11 models):

* beyondauc's ``expected_accuracy_grid`` over 5 protocols x 3 methods
  (``indata`` with 100 repeats), accuracy and kappa;
* the per-fit loop of ``tests/helpers/reference_impl.py`` -- one scikit-learn
  estimator per cell and per repeat, sklearn's defaults -- for the same grid;

and prints both times, their ratio, and whether the numbers agree.  Then, in
a child process, the peak memory (max RSS) of the grid on a 1,000,000-row,
10-model benchmark.

Usage::

    python benchmarks/bench_calibration.py            # full run (a few minutes)
    python benchmarks/bench_calibration.py --quick    # 10 indata repeats, no 1M run
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import beyondauc  # noqa: E402
from _synthetic import true_like  # noqa: E402
from helpers.reference_impl import reference_expected_accuracy  # noqa: E402


def _memory_child(n_rows, n_models, n_repeats):
    df = true_like(n_rows=n_rows, n_models=n_models, random_state=3)
    bench = beyondauc.load_benchmark(df)
    del df
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    grid = beyondauc.expected_accuracy_grid(bench, n_repeats=n_repeats, n_jobs=1)
    elapsed = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "rows": len(bench),
                "models": len(bench.models),
                "cells": len(grid),
                "seconds": elapsed,
                "peak_rss_mib": peak / 1024,
                "rss_before_grid_mib": base / 1024,
            }
        )
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 indata repeats and skip the 1M-row memory run")
    ap.add_argument("--memory-child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        _memory_child(*args.memory_child)
        return

    repeats = 10 if args.quick else 100
    df = true_like()
    bench = beyondauc.load_benchmark(df)
    print(
        f"benchmark: {len(bench.datasets)} datasets, {len(bench.models)} models, {len(bench)} rows; "
        f"5 protocols x 3 methods, indata repeats = {repeats}"
    )

    times = {}
    for jobs in (1, 2):
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            grid = beyondauc.expected_accuracy_grid(bench, n_repeats=repeats, n_jobs=jobs)
            runs.append(time.perf_counter() - t)
        times[jobs] = min(runs)
        print(
            f"beyondauc grid, n_jobs={jobs}: {times[jobs]:8.2f} s  (best of 3; {', '.join(f'{r:.2f}' for r in runs)}; "
            f"{len(grid)} cells)"
        )

    t = time.perf_counter()
    refs = []
    for p in beyondauc.PROTOCOLS:
        for m in beyondauc.METHODS:
            r = reference_expected_accuracy(df, bench.domains, protocol=p, method=m, n_repeats=repeats)
            refs.append(r.assign(protocol=p, method=m))
    loop = time.perf_counter() - t
    print(f"per-fit sklearn loop:     {loop:8.2f} s (one process)")
    for jobs, fast in times.items():
        print(f"speed-up, n_jobs={jobs}:      {loop / fast:8.1f} x")

    import pandas as pd

    ref = pd.concat(refs, ignore_index=True)
    mg = grid.merge(ref, on=["protocol", "method", "dataset", "model"], suffixes=("", "_ref"))
    same_acc = mg["accuracy"] == mg["accuracy_ref"]
    same_kappa = (mg["kappa"] == mg["kappa_ref"]) | (mg["kappa"].isna() & mg["kappa_ref"].isna())
    for meth, g in mg.groupby("method"):
        sa, sk = same_acc[g.index], same_kappa[g.index]
        examples = (np.abs(g["accuracy"] - g["accuracy_ref"]) * g["n_evaluation"]).max()
        print(
            f"  {meth:9s} identical accuracy {int(sa.sum())}/{len(g)} cells, kappa {int(sk.sum())}/{len(g)}; "
            f"largest difference {examples:.2f} examples"
        )
    print(
        "  (sklearn's default lbfgs stops at tol=1e-4 short of the optimum beyondauc solves to; "
        "tests compare logistic exactly against LogisticRegression(tol=1e-10).)"
    )

    if not args.quick:
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", "1000000", "10", "100"],
            capture_output=True,
            text=True,
            check=True,
        )
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"1M rows x 10 models, full grid, n_jobs=1: {rec['seconds']:.1f} s, peak RSS "
            f"{rec['peak_rss_mib']:.0f} MiB (of which {rec['rss_before_grid_mib']:.0f} MiB before the grid: "
            "Python, libraries and the data)"
        )


if __name__ == "__main__":
    main()
