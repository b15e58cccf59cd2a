"""Exact noise robustness against the seeded Monte Carlo, and the measurements behind its two settings.

Runs, in one process:

1. **speed** at 100,000 + 100,000 scores of one cohort, for score kinds of
   different shape (probabilities, log-likelihoods, BLEU-like scores with
   many ties, a few discrete values): ``noise_robustness``'s default
   (``noise_method="exact"``) against the Monte Carlo of earlier releases
   (``noise_method="monte_carlo"``: 21 sigmas, 20 draws per sigma), the
   median wall and CPU seconds of ``--runs`` runs of each, alternated, with
   the two scores, the exact one's error bound and the Monte Carlo's
   standard error;
2. **the switch** between the direct sum and the FFT
   (``noise_exact.DIRECT_PAIRS``): the time of each at growing numbers of
   pairs of distinct values;
3. **the grid** of the FFT (``noise_exact.GRID_POINTS`` per ``sigma_max``):
   CPU time at 100,000 + 100,000 scores, the stated worst-case bound, the error
   against the direct sum on 10,000 + 10,000 rounded scores (a density) and on
   near ties placed where linear binning errs most (the worst case).

Usage::

    python benchmarks/bench_noise.py            # about 2 minutes on 2 cores
    python benchmarks/bench_noise.py --quick    # 20,000 per class, a few seconds
    python benchmarks/bench_noise.py --save     # also write benchmarks/results/bench_noise.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import beyondauc  # noqa: E402
from _synthetic import _model_score  # noqa: E402
from beyondauc.metrics.diagnostics import noise_exact  # noqa: E402

KINDS = ("prob", "loglik", "bleu", "discrete")


def cohort(kind, n, seed=0):
    """``n`` positives and ``n`` negatives of one score kind."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n, dtype=np.int8), np.zeros(n, dtype=np.int8)]
    return y, _model_score(rng, y, kind, 1.0)


def clocked(fn):
    """(wall seconds, CPU seconds, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def speed(n, runs):
    print(f"[1] noise robustness of one cohort, {n:,} + {n:,} scores: exact (default) vs Monte Carlo 21 x 20")
    print(
        f"  {'kind':<9}{'exact wall':>11}{'MC wall':>10}{'ratio':>8}{'exact CPU':>11}{'MC CPU':>9}{'ratio':>8}"
        f"{'R exact':>11}{'R MC':>10}{'MC s.e.':>9}{'bound':>10}"
    )
    out = {}
    for kind in KINDS:
        y, s = cohort(kind, n)
        times = {"exact": [], "monte_carlo": []}
        res = {}
        for _ in range(runs):  # alternate, so machine load hits both alike
            for method in times:
                w, c, res[method] = clocked(lambda m=method: beyondauc.noise_robustness(y, s, noise_method=m))
                times[method].append((w, c))
        med = {m: np.median(np.array(t), axis=0) for m, t in times.items()}
        ex, mc = res["exact"], res["monte_carlo"]
        # the Monte Carlo score is a trapezoid of 20 means of 20 draws: its standard error from their spread
        se = np.sqrt(np.sum((mc.auc_std[1:] / np.sqrt(mc.n_repeats)) ** 2)) / (len(mc.sigmas) - 1) / mc.auc
        print(
            f"  {kind:<9}{med['exact'][0] * 1e3:>9.1f}ms{med['monte_carlo'][0]:>9.2f}s"
            f"{med['monte_carlo'][0] / med['exact'][0]:>7.0f}x{med['exact'][1] * 1e3:>9.1f}ms"
            f"{med['monte_carlo'][1]:>8.2f}s{med['monte_carlo'][1] / med['exact'][1]:>7.0f}x"
            f"{ex.score:>11.6f}{mc.score:>10.6f}{se:>9.1e}{ex.error_bound:>10.1e}"
        )
        out[kind] = {
            "exact_wall_s": med["exact"][0],
            "mc_wall_s": med["monte_carlo"][0],
            "exact_cpu_s": med["exact"][1],
            "mc_cpu_s": med["monte_carlo"][1],
            "score_exact": ex.score,
            "score_mc": mc.score,
            "mc_standard_error": se,
            "error_bound": ex.error_bound,
        }
    print("  medians of", runs, "runs; 'bound' is the exact score's worst-case error (0: direct sum)")
    return out


def _with(direct_pairs=None, grid_points=None):
    """Set the two module settings (None: keep); returns the old values."""
    old = noise_exact.DIRECT_PAIRS, noise_exact.GRID_POINTS
    if direct_pairs is not None:
        noise_exact.DIRECT_PAIRS = direct_pairs
    if grid_points is not None:
        noise_exact.GRID_POINTS = grid_points
    return old


def switch(runs):
    print("\n[2] direct sum vs FFT by pairs of distinct values (20 sigmas and the integral; median CPU ms)")
    print(f"  {'value pairs':>12}{'direct':>10}{'FFT':>10}")
    rng = np.random.default_rng(1)
    shifts = np.linspace(0.0, 1.0, 21)[1:]
    out = {}
    for log2 in range(13, 21):
        m = 1 << (log2 // 2)
        pos, neg = np.sort(rng.random(m)), np.sort(rng.random((1 << log2) // m))
        t = {}
        for name, pairs in (("direct", 1 << 62), ("fft", 0)):
            old = _with(direct_pairs=pairs)
            t[name] = np.median(
                [clocked(lambda: noise_exact.noise_pair_means(pos, neg, shifts))[1] for _ in range(runs)]
            )
            _with(*old)
        print(f"  {'2^' + str(log2):>12}{t['direct'] * 1e3:>10.1f}{t['fft'] * 1e3:>10.1f}")
        out[log2] = t
    print(f"  DIRECT_PAIRS = 2^{int(np.log2(noise_exact.DIRECT_PAIRS))}: the direct sum below it, the FFT above")
    return out


def _near_ties(n, h):
    """n + n scores in [0, 1] whose pairs but one are near ties at the binning's worst offsets."""
    pos, neg = np.full(n, 1001.2637 * h), np.full(n, 1000.7313 * h)
    pos[-1], neg[-1] = 1.0, 0.0
    return np.sort(pos), np.sort(neg)


def grid(n, runs):
    print("\n[3] FFT grid points per sigma_max: time, stated bound, measured error of the integral")
    print(f"  {'grid':>6}{'CPU ms':>9}{'bound':>10}{'err, density':>14}{'err, near ties':>16}")
    shifts = np.linspace(0.0, 1.0, 21)[1:]
    rng = np.random.default_rng(7)
    y, s = cohort("prob", n)
    dens = np.sort(np.round(rng.beta(3, 2, 10_000), 3)), np.sort(np.round(rng.beta(2, 3, 10_000), 3))
    orig = _with(direct_pairs=1 << 62)
    ref = noise_exact.noise_pair_means(*dens, shifts)[0]
    out = {}
    for log2 in (14, 15, 16, 17, 18):
        old = _with(direct_pairs=0, grid_points=1 << log2)
        ms = np.median([clocked(lambda: beyondauc.noise_robustness(y, s))[1] for _ in range(runs)]) * 1e3
        approx, _, h, bound = noise_exact.noise_pair_means(*dens, shifts)
        near = _near_ties(10_000, 1.0 / (noise_exact.grid_size(1.0) - 1))
        far, _, _, _ = noise_exact.noise_pair_means(*near, shifts)
        _with(direct_pairs=1 << 62)
        near_ref = noise_exact.noise_pair_means(*near, shifts)[0]
        _with(*old)
        print(f"  2^{log2:<4}{ms:>9.1f}{bound:>10.1e}{abs(approx - ref):>14.1e}{abs(far - near_ref):>16.1e}")
        out[log2] = {
            "ms": ms,
            "bound": bound,
            "error_density": abs(approx - ref),
            "error_near_ties": abs(far - near_ref),
        }
    _with(*orig)
    print(f"  GRID_POINTS = 2^{int(np.log2(noise_exact.GRID_POINTS))} per sigma_max")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 per class, fewer runs: a smoke run")
    ap.add_argument("--runs", type=int, default=3, help="runs per timing (median; default 3)")
    ap.add_argument("--save", action="store_true", help="also write the numbers to benchmarks/results/")
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    rec = {
        "n_per_class": n,
        "runs": args.runs,
        "speed": speed(n, args.runs),
        "switch": switch(args.runs),
        "grid": grid(n, args.runs),
    }
    if args.save:
        out = HERE / "results" / ("bench_noise-quick.json" if args.quick else "bench_noise.json")
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(rec, indent=2, default=float))
        print(f"\nwrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
