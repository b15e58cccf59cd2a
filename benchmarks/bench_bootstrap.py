"""Speed and coverage of the bootstrap of the expected-accuracy grid.

``speed``: on the generated TRUE-sized benchmark (9 datasets, 23,858 rows, 11
models; ``_synthetic.true_like``), in one process, side by side:

* ``bootstrap_grid`` over xdomain x {logistic, isotonic, stump} with
  ``--n-bootstrap`` replicates and ``--jobs`` processes;
* the straightforward loop on ``--loop-replicates`` of the *same* replicates:
  rows materialised with ``np.repeat``, one scikit-learn estimator refitted per
  cell (``tests/helpers/reference_impl.py``), accuracy with ``accuracy_score``;

and prints seconds per replicate of each and their ratio, over ``--runs``
runs (median): wall-clock seconds, and CPU seconds (this process and its
worker processes), which a machine shared with other jobs inflates less.

``coverage``: two binormal datasets (equal variances, so the population
logistic and isotonic calibrators both decide at the Bayes threshold of the
calibration population), xdomain: each dataset's accuracy after calibrating on
the other.  The true expected accuracy is analytic -- the evaluation
population's accuracy at the calibration population's threshold -- and we
count how often the bootstrap's 95% percentile interval covers it over
``--simulations`` seeded simulations.

Usage::

    python benchmarks/bench_bootstrap.py speed --n-bootstrap 1000 --jobs 2
    python benchmarks/bench_bootstrap.py coverage --simulations 1000 --n-bootstrap 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import beyondauc  # noqa: E402
from _synthetic import true_like  # noqa: E402
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, strata_of  # noqa: E402
from helpers.reference_impl import fit_predict  # noqa: E402

METHODS = ("logistic", "isotonic", "stump")


def loop_replicate(df, counts, models, datasets):
    """One xdomain replicate the straightforward way: repeat rows, refit sklearn per cell."""
    from sklearn.metrics import accuracy_score

    ds = df["dataset"].to_numpy()
    y = df["label"].to_numpy().astype(int)
    out = []
    for model in models:
        s = df[model].to_numpy(float)
        for d in datasets:
            in_d = ds == d
            tr = np.repeat(np.flatnonzero(~in_d), counts[~in_d])
            te = np.repeat(np.flatnonzero(in_d), counts[in_d])
            for method in METHODS:
                pred = fit_predict(method, s[tr], y[tr], s[te])
                out.append(accuracy_score(y[te], pred))
    return np.array(out)


def _cpu():
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def speed(args):
    df = true_like(random_state=0)
    bench = beyondauc.load_benchmark(df)
    strata = strata_of(bench.dataset_codes(), bench.labels())
    fast, slow, fast_cpu, slow_cpu = [], [], [], []
    for run in range(args.runs):
        t, c = time.perf_counter(), _cpu()
        beyondauc.bootstrap_grid(
            bench,
            protocols=["xdomain"],
            methods=list(METHODS),
            n_bootstrap=args.n_bootstrap,
            n_jobs=args.jobs,
            random_state=run,
        )
        fast.append(time.perf_counter() - t)
        fast_cpu.append(_cpu() - c)
        counts = bootstrap_counts(strata, args.loop_replicates, random_state=run)
        t, c = time.perf_counter(), _cpu()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for b in range(args.loop_replicates):
                loop_replicate(df, counts[b], bench.models, bench.datasets)
        slow.append(time.perf_counter() - t)
        slow_cpu.append(_cpu() - c)
        print(
            json.dumps(
                {
                    "run": run,
                    "bootstrap_seconds": fast[-1],
                    "bootstrap_cpu_seconds": fast_cpu[-1],
                    "loop_seconds": slow[-1],
                    "loop_cpu_seconds": slow_cpu[-1],
                }
            ),
            flush=True,
        )
    f, s = statistics.median(fast), statistics.median(slow)
    fc, sc = statistics.median(fast_cpu), statistics.median(slow_cpu)
    print(
        json.dumps(
            {
                "rows": len(bench),
                "models": len(bench.models),
                "datasets": len(bench.datasets),
                "n_bootstrap": args.n_bootstrap,
                "jobs": args.jobs,
                "runs": args.runs,
                "bootstrap_seconds_median": f,
                "bootstrap_ms_per_replicate": 1000 * f / args.n_bootstrap,
                "loop_replicates": args.loop_replicates,
                "loop_ms_per_replicate": 1000 * s / args.loop_replicates,
                "speedup_per_replicate": (s / args.loop_replicates) / (f / args.n_bootstrap),
                "bootstrap_cpu_ms_per_replicate": 1000 * fc / args.n_bootstrap,
                "loop_cpu_ms_per_replicate": 1000 * sc / args.loop_replicates,
                "cpu_speedup_per_replicate": (sc / args.loop_replicates) / (fc / args.n_bootstrap),
                "projected_wall_seconds_for_1000": 1000 * f / args.n_bootstrap,
            }
        )
    )


# -- coverage ---------------------------------------------------------------------

# (n, prevalence, mean of negatives, mean of positives); unit variances
POPULATIONS = {"A": (300, 0.4, 0.0, 1.5), "B": (250, 0.55, 0.4, 1.7)}


def bayes_threshold(pi, mu0, mu1):
    """Where P(y=1 | s) = 1/2 for N(mu0, 1) / N(mu1, 1) with prevalence pi."""
    return (mu0 + mu1) / 2 + np.log((1 - pi) / pi) / (mu1 - mu0)


def population_accuracy(t, pi, mu0, mu1):
    return pi * norm.sf(t - mu1) + (1 - pi) * norm.cdf(t - mu0)


def coverage(args):
    truth = {}
    for d, other in (("A", "B"), ("B", "A")):
        _, pi_c, m0c, m1c = POPULATIONS[other]  # calibrated on the other dataset
        _, pi_e, m0e, m1e = POPULATIONS[d]
        truth[d] = population_accuracy(bayes_threshold(pi_c, m0c, m1c), pi_e, m0e, m1e)
    methods = list(args.methods)
    hits = {(d, m): 0 for d in truth for m in methods}
    widths = {(d, m): [] for d in truth for m in methods}
    t0 = time.perf_counter()
    for sim in range(args.simulations):
        rng = np.random.default_rng([args.seed, sim])
        parts = []
        for d, (n, pi, m0, m1) in POPULATIONS.items():
            y = (rng.random(n) < pi).astype(int)
            parts.append(pd.DataFrame({"dataset": d, "label": y, "score": rng.normal(size=n) + np.where(y, m1, m0)}))
        bench = beyondauc.load_benchmark(pd.concat(parts, ignore_index=True))
        bs = beyondauc.bootstrap_grid(
            bench, protocols=["xdomain"], methods=methods, n_bootstrap=args.n_bootstrap, random_state=sim
        )
        for row in bs.grid.itertuples(index=False):
            key = (row.dataset, row.method)
            hits[key] += row.accuracy_low <= truth[row.dataset] <= row.accuracy_high
            widths[key].append(row.accuracy_high - row.accuracy_low)
    result = {
        "simulations": args.simulations,
        "n_bootstrap": args.n_bootstrap,
        "confidence_level": 0.95,
        "seconds": time.perf_counter() - t0,
        "populations": POPULATIONS,
        "cells": [
            dict(
                evaluated_on=d,
                method=m,
                true_accuracy=truth[d],
                coverage=hits[(d, m)] / args.simulations,
                median_width=statistics.median(widths[(d, m)]),
            )
            for d, m in hits
        ],
    }
    print(json.dumps(result, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("--n-bootstrap", type=int, default=1000)
    sp.add_argument("--jobs", type=int, default=2)
    sp.add_argument("--loop-replicates", type=int, default=2)
    sp.add_argument("--runs", type=int, default=3)
    cp = sub.add_parser("coverage")
    cp.add_argument("--simulations", type=int, default=1000)
    cp.add_argument("--n-bootstrap", type=int, default=300)
    cp.add_argument("--methods", nargs="+", default=["logistic", "isotonic"])
    cp.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    speed(args) if args.what == "speed" else coverage(args)


if __name__ == "__main__":
    main()
