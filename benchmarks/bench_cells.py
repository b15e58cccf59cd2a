"""How many cells the Monte Carlo needs: every interval with ``cells`` against the per-value engine.

The bootstrap (and its jackknife, the drift permutations and the bootstrap's
``indata`` repeats) may run on at most ``cells`` cells of each model's scores
per dataset and class instead of on every distinct score.  This script
evaluates one generated benchmark (the score kinds of ``bench_scale.py``:
probabilities, log-likelihoods, margins, heavily tied and discrete scores)
with ``cells=None`` (per value) and with each ``--cells`` value, the same
``random_state``, so the replicates are drawn from the same examples and the
only difference is the cells.  It also evaluates per value with a second
``random_state``: two independent Monte Carlo runs, whose difference gives the
Monte Carlo standard error of every interval bound (the difference of two
independent runs has sqrt(2) times their standard error).

For every table column ``<name>_low`` / ``<name>_high`` it reports the
largest and the median move of a bound under cells, in units of that
column's Monte Carlo standard error (the root mean square over its rows of the
two per-value runs' difference / sqrt 2), and the wall time of each run.  The
rule that set the default: the smallest ``cells`` at which every bound moves
by less than a tenth of its Monte Carlo standard error.

Usage::

    python benchmarks/bench_cells.py --examples 10000 --models 4 --cells 256 1024 4096
    python benchmarks/bench_cells.py --examples 100000 --models 2 --cells 1024   # slow: per value at 10^5

Writes ``benchmarks/results/bench_cells.json``.  Tables whose rows follow the results (the findings)
are not compared row for row and are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def bounds(ev):
    """{(table, column): values} of every interval bound of an evaluation (rows in the evaluation's order)."""
    out = {}
    for name in ev.tables:
        t = ev.tables[name]
        if not isinstance(t, pd.DataFrame):
            continue
        for c in t.columns:
            if str(c).endswith(("_low", "_high")) and pd.api.types.is_numeric_dtype(t[c]):
                out[(name, str(c))] = t[c].to_numpy(dtype=float)
    return out


def run(path, cells, random_state, n_bootstrap, jobs, cache):
    """(bounds, seconds) of one evaluation, kept in ``cache`` (a folder) so a run is made once."""
    import pickle

    saved = Path(cache) / f"{Path(path).stem}_{cells}_{random_state}_{n_bootstrap}.pkl"
    if saved.exists():
        return pickle.loads(saved.read_bytes())
    got = _run(path, cells, random_state, n_bootstrap, jobs)
    saved.write_bytes(pickle.dumps(got))
    return got


def _run(path, cells, random_state, n_bootstrap, jobs):
    import beyondauc as ba

    t0 = time.perf_counter()
    ev = ba.evaluate(path, n_bootstrap=n_bootstrap, n_jobs=jobs, cells=cells, random_state=random_state, progress=False)
    return bounds(ev), time.perf_counter() - t0


def compare(ref, other, se):
    """{(table, column): (largest |move| / se, median |move| / se, rows)} of the bounds ``other`` moved."""
    out = {}
    for key, a in ref.items():
        b, s = other.get(key), se.get(key, np.nan)
        if b is None or len(b) != len(a):  # a table whose rows follow the results (findings): not row for row
            continue
        both = np.isfinite(a) & np.isfinite(b)
        if not both.any() or not np.isfinite(s) or s == 0:
            continue
        move = np.abs(a[both] - b[both]) / s
        out[key] = (float(move.max()), float(np.median(move)), int(both.sum()))
    return out


def standard_errors(ref, seed2):
    """{(table, column): Monte Carlo standard error of a bound} from two independent per-value runs."""
    out = {}
    for key, a in ref.items():
        b = seed2.get(key)
        if b is None or len(b) != len(a):
            continue
        both = np.isfinite(a) & np.isfinite(b)
        out[key] = float(np.sqrt(np.mean((a[both] - b[both]) ** 2) / 2)) if both.any() else np.nan
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=10_000, help="examples per dataset (8 datasets)")
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--cells", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--n-bootstrap", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=None, help="a folder keeping each run's bounds (a re-run reuses them)")
    a = ap.parse_args()
    from bench_scale import data_file

    with tempfile.TemporaryDirectory() as tmp:
        cache = a.cache or tmp
        Path(cache).mkdir(parents=True, exist_ok=True)
        path = data_file(cache, a.examples, a.models)
        ref, t_ref = run(path, None, 0, a.n_bootstrap, a.jobs, cache)
        seed2, _ = run(path, None, 1, a.n_bootstrap, a.jobs, cache)
        se = standard_errors(ref, seed2)
        results = {
            "examples": a.examples,
            "models": a.models,
            "n_bootstrap": a.n_bootstrap,
            "per_value_seconds": t_ref,
            "cells": {},
        }
        print(
            f"{a.examples} examples x 8 datasets x {a.models} models, {a.n_bootstrap} replicates; "
            f"per value: {t_ref:.1f} s"
        )
        print("| cells | wall | bounds compared | largest move / MC SE (where) | median move / MC SE |")
        print("|--:|--:|--:|:--|--:|")
        for c in a.cells:
            got, t = run(path, c, 0, a.n_bootstrap, a.jobs, cache)
            moves = compare(ref, got, se)
            worst = max(moves.items(), key=lambda kv: kv[1][0])
            n = sum(v[2] for v in moves.values())
            med = float(np.median([v[1] for v in moves.values()]))
            print(f"| {c} | {t:.1f} s | {n} | {worst[1][0]:.3f} ({worst[0][0]}.{worst[0][1]}) | {med:.4f} |")
            results["cells"][str(c)] = {
                "seconds": t,
                "largest": worst[1][0],
                "where": list(worst[0]),
                "median": med,
                "columns": {f"{k[0]}.{k[1]}": v for k, v in moves.items()},
            }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "bench_cells.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
