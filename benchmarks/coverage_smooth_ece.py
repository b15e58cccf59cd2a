"""Coverage of the smooth ECE's bootstrap interval, in a seeded simulation.

The confidence takes ``K = 10`` values (0.05, 0.15, ..., 0.95) with equal
probability; an answer given with confidence ``c`` is right with probability
``c ** 1.5`` (an overconfident model).  A sample of ``n`` answers is then a
vector of counts on the 20 (confidence, right or wrong) cells, and so is each
of its bootstrap replicates: every sample and every replicate is one row of
counts for :func:`~beyondauc.metrics.selective.smooth_replicates.smooth_ece_replicates`.
The truth is the smooth ECE of the population (the cells' probabilities
times 10^7 answers).  For each of ``--samples`` samples, B = ``--replicates``,
the percentile interval ``given_calibration_table`` gives (through
``honest_interval``) and the bias-corrected one the binned ECEs get; the
share of samples whose interval holds the truth is its coverage.

Usage::

    python benchmarks/coverage_smooth_ece.py                 # n = 300 and 1000, 400 samples, B = 200
    python benchmarks/coverage_smooth_ece.py --samples 100   # quicker
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from beyondauc.metrics.selective.smooth_replicates import smooth_ece_replicates
from beyondauc.metrics.uncertainty.bootstrap import honest_interval

LEVEL = 0.95


def cells():
    c = np.linspace(0.05, 0.95, 10)
    p = c**1.5
    conf = np.r_[c, c]
    correct = np.r_[np.ones(10), np.zeros(10)]
    prob = np.r_[p, 1 - p] / 10
    return correct, conf, prob


def coverage(n, n_samples, n_replicates, seed):
    correct, conf, prob = cells()
    truth = smooth_ece_replicates(correct, conf, prob[None, :] * 1e7)[0]
    rng = np.random.default_rng(seed)
    samples = rng.multinomial(n, prob, size=n_samples)
    estimate = smooth_ece_replicates(correct, conf, samples)
    hits_bc = hits_pct = given = 0
    for s0 in range(0, n_samples, 20):  # chunks of 20 samples, each with all its replicates in one call
        chunk = samples[s0 : s0 + 20]
        reps = np.concatenate([rng.multinomial(n, w / n, size=n_replicates) for w in chunk])  # (20 B, 20 cells)
        values = smooth_ece_replicates(correct, conf, reps).reshape(len(chunk), n_replicates)
        for i, v in enumerate(values):  # per sample: its two intervals
            lo, hi, _, _ = honest_interval(v, estimate[s0 + i], LEVEL)  # the table's
            low, high, _, _ = honest_interval(v, estimate[s0 + i], LEVEL, acceleration=0.0)  # bias-corrected
            given += bool(np.isfinite(lo) and np.isfinite(low))
            hits_pct += bool(lo <= truth <= hi)
            hits_bc += bool(low <= truth <= high)
    return truth, float(np.mean(estimate)), given, hits_bc, hits_pct


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--replicates", type=int, default=200)
    args = parser.parse_args()
    print(f"{'n':>6} {'truth':>8} {'mean est.':>10} {'given':>7} {'percentile':>11} {'bias-corr.':>11} {'s':>6}")
    for n in args.sizes:
        t0 = time.perf_counter()
        truth, mean, given, bc, pct = coverage(n, args.samples, args.replicates, seed=n)
        print(
            f"{n:>6} {truth:>8.4f} {mean:>10.4f} {given:>7} {pct / args.samples:>11.3f} "
            f"{bc / args.samples:>11.3f} {time.perf_counter() - t0:>6.1f}"
        )


if __name__ == "__main__":
    main()
