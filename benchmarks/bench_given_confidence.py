"""Timing of the given-confidence metrics against the size of the input.

For each size n, binary and graded correctness with confidence Beta(5, 2)
(continuous: every confidence distinct, the costliest case for Murphy's
groups and the tie runs), the median CPU seconds over ``--runs`` calls of
:func:`brier_score`, :func:`negative_log_likelihood`, both ECEs,
:func:`smooth_ece` and :func:`prediction_rejection_ratio`, read with the
process clock (other people's load on a shared machine moves wall time by
several times, CPU time much less).  The ratio column is the time per example
at the largest size over that at the smallest: near 1 (up to the log factor
of a sort) for an O(n log n) kernel.

Usage::

    python benchmarks/bench_given_confidence.py                      # 10^4, 10^5, 10^6; 5 runs
    python benchmarks/bench_given_confidence.py --sizes 1000 100000 --runs 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import beyondauc as ba

METRICS = {
    "brier_score": ba.brier_score,
    "negative_log_likelihood": ba.negative_log_likelihood,
    "ece_uniform": lambda q, c: ba.expected_calibration_error(q, c, strategy="uniform"),
    "ece_quantile": lambda q, c: ba.expected_calibration_error(q, c, strategy="quantile"),
    "smooth_ece": ba.smooth_ece,
    "prr": ba.prediction_rejection_ratio,
}


def data(n, graded, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.beta(5, 2, size=n)
    if graded:
        return np.clip(conf**2 + rng.normal(0, 0.2, size=n), 0, 1), conf
    return rng.uniform(size=n) < conf**2, conf


def median_cpu(call, runs):
    times = []
    for _ in range(runs):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ba.smooth_ece([1, 0], [0.5, 0.4])  # its package imported once, outside the timings
    for graded in (False, True):
        print(f"\n{'graded' if graded else 'binary'} correctness: median CPU seconds over {args.runs} runs")
        print(f"{'metric':<26}" + "".join(f"{n:>12,}" for n in args.sizes) + f"{'ratio':>8}")
        inputs = {n: data(n, graded) for n in args.sizes}
        for name, metric in METRICS.items():
            seconds = [median_cpu(lambda n=n: metric(*inputs[n]), args.runs) for n in args.sizes]
            per = [s / n for s, n in zip(seconds, args.sizes)]
            ratio = per[-1] / per[0] if per[0] > 0 else float("nan")
            print(f"{name:<26}" + "".join(f"{s:>12.4f}" for s in seconds) + f"{ratio:>8.2f}")


if __name__ == "__main__":
    main()
