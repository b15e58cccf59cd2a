"""Time the permutation null of drift and W beside the diagnostics' bootstrap, per replicate.

Two binormal cohorts of n examples each (labels ~ Bernoulli(0.5), scores
N(label, 1): every score distinct, the largest grid), seeded.  Times
``permutation_null`` (B shuffles within class: multivariate hypergeometric
draws of V's per-value counts, then the drift and W kernels) and
``diagnostics_intervals`` (B bootstrap replicates of the AUCs, bias
robustness, drift and W, plus the 20-group jackknife of BCa), and prints the
median over repeats of each, in milliseconds per replicate.

Usage::

    python benchmarks/bench_permutation_null.py           # n = 500, 5,000, 50,000; B = 200; 3 repeats
    python benchmarks/bench_permutation_null.py --quick   # n = 500, 5,000; B = 100; 1 repeat
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from beyondauc.metrics.diagnostics.benchmark import diagnostics_intervals
from beyondauc.metrics.diagnostics.null import permutation_null


def _median_seconds(run, repeats):
    times = []
    for _ in range(repeats):  # a few timed runs, their median
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes, B, repeats = ((500, 5_000), 100, 1) if args.quick else ((500, 5_000, 50_000), 200, 3)
    rng = np.random.default_rng(0)
    print(f"{'n per cohort':>12} {'null ms/shuffle':>16} {'bootstrap ms/replicate':>23}")
    for n in sizes:
        yv, yt = rng.integers(0, 2, n), rng.integers(0, 2, n)
        sv, st = rng.normal(yv, 1.0), rng.normal(yt, 1.0)
        null = _median_seconds(lambda: permutation_null(yv, sv, yt, st, n_permutations=B), repeats)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            boot = _median_seconds(lambda: diagnostics_intervals(yv, sv, yt, st, n_bootstrap=B), repeats)
        print(f"{n:>12,} {1e3 * null / B:>16.2f} {1e3 * boot / B:>23.2f}")


if __name__ == "__main__":
    main()
