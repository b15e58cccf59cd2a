"""Time the given-confidence stage of an evaluation against a per-replicate loop of the public functions.

The stage (:func:`~beyondauc.metrics.selective.given_calibration.given_calibration_replicates`)
computes, for every model, dataset and bootstrap replicate, the Brier score
with its decomposition, the NLL, both ECEs, the smooth ECE and PRR (whole and
first half), every replicate at once.  The baseline is the straightforward
loop: per replicate, repeat the answers by their counts and call the public
functions (:func:`beyondauc.brier_score`, :func:`beyondauc.negative_log_likelihood`,
:func:`beyondauc.expected_calibration_error` twice, :func:`beyondauc.smooth_ece`
-- relplot -- and :func:`beyondauc.prediction_rejection_ratio` twice).  The
loop is timed on ``--loop`` replicates and scaled to ``B``; its values are
compared with the stage's on those replicates (largest absolute difference;
the equal-mass ECE aside: the stage keeps the data's bins in every replicate,
where the public function on repeated rows draws new percentiles).
The smooth ECE alone is timed the same way, batched against relplot.

Data: 2 models x 2 datasets of ``n`` answers (confidence Beta(5, 2), right
with probability confidence ** 1.3), B = ``--replicates``.  Each timing is
the median wall time of ``--runs`` runs, with the CPU time of the same runs.

Usage::

    python benchmarks/bench_given_stage.py                    # n = 1000 and 10000, B = 200, 3 runs
    python benchmarks/bench_given_stage.py --sizes 2000 --runs 1
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import beyondauc as ba
from beyondauc.metrics.selective.given_calibration import GIVEN_METRICS, given_calibration_replicates, given_replicates
from beyondauc.metrics.selective.smooth_replicates import smooth_ece_replicates
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, dataset_seed


def benchmark(n, seed=0):
    rng = np.random.default_rng(seed)
    parts = []
    for d in ("qa", "nli"):
        for m in ("a", "b"):
            conf = rng.beta(5, 2, size=n)
            parts.append(
                pd.DataFrame(
                    {
                        "dataset": d,
                        "id": np.arange(n),
                        "model": m,
                        "confidence": conf,
                        "correct": (rng.uniform(size=n) < conf**1.3).astype(int),
                    }
                )
            )
    return ba.load_benchmark(pd.concat(parts, ignore_index=True))


def public(q, c):
    b = ba.brier_score(q, c)
    return {
        "brier": b.score,
        "reliability": b.reliability,
        "resolution": b.resolution,
        "uncertainty": b.uncertainty,
        "nll": ba.negative_log_likelihood(q, c),
        "ece_uniform": ba.expected_calibration_error(q, c, strategy="uniform"),
        "ece_quantile": ba.expected_calibration_error(q, c, strategy="quantile"),
        "smooth_ece": ba.smooth_ece(q, c),
        "prr": ba.prediction_rejection_ratio(q, c),
        "prr_half": ba.prediction_rejection_ratio(q, c, max_rejection=0.5),
    }


def timed(fn, runs):
    wall, cpu, out = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu), out


def loop(bench, n_replicates, n_loop):
    """The per-replicate loop over every model and dataset, on the first ``n_loop`` replicates."""
    out = {}
    for i, d in enumerate(bench.datasets):  # a loop over datasets and models, then replicates: the baseline
        n = len(bench.quality(d, model=bench.models[0]))
        W = bootstrap_counts(np.zeros(n, dtype=int), n_replicates, random_state=dataset_seed(0, i), stop=n_loop)
        for m in bench.models:
            q, c = bench.quality(d, model=m), bench.scores(m, d)
            rows = [public(q[np.repeat(np.arange(n), w)], c[np.repeat(np.arange(n), w)]) for w in W]
            out[m, i] = {k: np.array([r[k] for r in rows]) for k in GIVEN_METRICS}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--loop", type=int, default=10, help="replicates the loop is timed on")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    B, L = args.replicates, args.loop
    warnings.simplefilter("ignore")
    ba.smooth_ece([1, 0], [0.5, 0.4])  # relplot imported once, outside the timings
    print(f"B = {B}; 2 models x 2 datasets; median of {args.runs} runs; the loop timed on {L} replicates, scaled")
    print(
        f"{'n':>7} {'part':<22} {'batched s':>10} {'(cpu)':>7} {'loop s':>9} {'(cpu)':>7} {'speed-up':>9} "
        f"{'(cpu)':>7} {'max |diff|':>11}"
    )
    for n in args.sizes:
        bench = benchmark(n)
        wall, cpu, reps = timed(lambda: given_calibration_replicates(bench, n_bootstrap=B, random_state=0), args.runs)
        lwall, lcpu, ref = timed(lambda: loop(bench, B, L), args.runs)
        diff = max(
            np.nanmax(np.abs(reps[m][k][:L, i] - ref[m, i][k]))
            for (m, i) in ref
            for k in GIVEN_METRICS
            if k != "ece_quantile"
        )
        scale = B / L
        print(
            f"{n:>7} {'whole stage':<22} {wall:>10.3f} {cpu:>7.2f} {lwall * scale:>9.2f} {lcpu * scale:>7.2f} "
            f"{lwall * scale / wall:>8.1f}x {lcpu * scale / cpu:>6.1f}x {diff:>11.1e}"
        )
        q, c = bench.quality("qa", model="a"), bench.scores("a", "qa")
        W = bootstrap_counts(np.zeros(n, dtype=int), B, random_state=0)
        swall, scpu, sm = timed(lambda: smooth_ece_replicates(q, c, W), args.runs)
        rows = [np.repeat(np.arange(n), w) for w in W[:L]]
        rwall, rcpu, rel = timed(lambda: np.array([ba.smooth_ece(q[r], c[r]) for r in rows]), args.runs)
        print(
            f"{n:>7} {'smooth ECE (1 model)':<22} {swall:>10.3f} {scpu:>7.2f} {rwall * scale:>9.2f} "
            f"{rcpu * scale:>7.2f} {rwall * scale / swall:>8.1f}x {rcpu * scale / scpu:>6.1f}x "
            f"{np.max(np.abs(sm[:L] - rel)):>11.1e}"
        )
        others, others_cpu, _ = timed(lambda: given_replicates(q, c, W), args.runs)
        print(f"{n:>7} {'all 10 (1 model)':<22} {others:>10.3f} {others_cpu:>7.2f}")


if __name__ == "__main__":
    main()
