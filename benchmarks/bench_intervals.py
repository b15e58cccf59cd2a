"""Coverage and speed of the AUC intervals (``beyondauc.auc_ci``).

Coverage: binormal simulations with known AUC.  Negatives ~ N(0, 1),
positives ~ N(d, 1), so AUC = Phi(d / sqrt(2)); n examples per class; 1,000
seeded simulations per (n, d).  For each simulation the 95% interval of every
method is computed and the share that covers the true AUC is reported, with
its binomial standard error (sqrt(0.95 * 0.05 / 1000) = 0.7 points): a
correct 95% interval lands in 93.6-96.4% with probability ~0.95.  The
bootstrap methods (percentile and BCa, from the same stratified replicates)
run on the smaller sizes only (``--bootstrap-reps`` replicates each).

Speed (same process, same data, the machine may be shared: medians of
``--repeats`` runs, ratios in the same run):

1. ``auc_ci`` (DeLong) and ``compare_auc`` at n = 10^6 against
   ``sklearn.metrics.roc_auc_score`` alone (a point estimate, no interval)
   and against DeLong written with ``scipy.stats.rankdata`` midranks (Sun &
   Xu's formulation, three rank computations per score);
2. the O(n^2) structural components (the textbook definition) timed at
   n = 10,000 and extrapolated to 10^6 (labelled so);
3. ``auc_ci(method="bootstrap")`` with 2,000 replicates at n = 10^4 against a
   loop that resamples with numpy and calls ``roc_auc_score`` per replicate,
   timed on 100 replicates, per replicate.

Usage::

    python benchmarks/bench_intervals.py            # full run (a few minutes on 2 cores)
    python benchmarks/bench_intervals.py --quick    # 200 simulations, smaller sizes
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from scipy.stats import norm, rankdata
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from beyondauc.metrics.core.kernel import auc_from_counts, grid_counts
from beyondauc.metrics.uncertainty.bootstrap import bca_interval, percentile_interval
from beyondauc.metrics.uncertainty.intervals import acceleration, bootstrap_aucs


def binormal(n, d, seed):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n, dtype=np.int8), np.zeros(n, dtype=np.int8)]
    return y, np.r_[rng.normal(d, 1.0, n), rng.normal(0.0, 1.0, n)]


def coverage(ns, ds, n_sims, boot_ns, boot_reps):
    rows = []
    for n in ns:
        for d in ds:
            truth = norm.cdf(d / np.sqrt(2))
            hits = {"delong": 0, "logit": 0}
            width = {"delong": 0.0, "logit": 0.0}
            boot = n in boot_ns
            if boot:
                hits.update(bootstrap=0, bca=0)
                width.update(bootstrap=0.0, bca=0.0)
            t0 = time.perf_counter()
            for seed in range(n_sims):  # a loop over simulations
                y, s = binormal(n, d, seed)
                for method in ("delong", "logit"):
                    ci = ba.auc_ci(y, s, method=method)
                    hits[method] += ci.low <= truth <= ci.high
                    width[method] += ci.high - ci.low
                if boot:
                    values, inverse, pos, neg = grid_counts(y, s)
                    reps = bootstrap_aucs(y, inverse, len(values), boot_reps, seed)
                    est = float(auc_from_counts(pos, neg))
                    lo, hi = percentile_interval(reps, 0.95)
                    hits["bootstrap"] += lo <= truth <= hi
                    width["bootstrap"] += hi - lo
                    bca = bca_interval(reps, est, acceleration(pos, neg), 0.95) or (lo, hi)
                    hits["bca"] += bca[0] <= truth <= bca[1]
                    width["bca"] += bca[1] - bca[0]
            elapsed = time.perf_counter() - t0
            for method in hits:
                rows.append(
                    dict(
                        n=n,
                        d=d,
                        auc=truth,
                        method=method,
                        coverage=hits[method] / n_sims,
                        width=width[method] / n_sims,
                        seconds=elapsed,
                    )
                )
    return rows


def delong_rankdata(y, s):
    """DeLong via midranks (Sun & Xu 2014) with scipy.stats.rankdata: the usual Python implementation."""
    x, z = s[y == 1], s[y == 0]
    m, n = len(x), len(z)
    tz = rankdata(np.r_[x, z])
    tx, ty = rankdata(x), rankdata(z)
    auc = (tz[:m].sum() - m * (m + 1) / 2) / (m * n)
    v10 = (tz[:m] - tx) / n
    v01 = 1.0 - (tz[m:] - ty) / m
    return auc, np.var(v10, ddof=1) / m + np.var(v01, ddof=1) / n


def delong_brute(y, s):
    x, z = s[y == 1], s[y == 0]
    psi = (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), np.var(v10, ddof=1) / len(x) + np.var(v01, ddof=1) / len(z)


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def speed(n, repeats, boot_n, boot_reps):
    rng = np.random.default_rng(0)
    y = (rng.random(n) < 0.4).astype(np.int8)
    s = np.round(rng.normal(size=n) + y, 3)  # rounded: ties, as real scores have
    s2 = np.round(s + rng.normal(scale=0.8, size=n), 3)
    rows = []
    t_ba, ci = timed(lambda: ba.auc_ci(y, s), repeats)
    t_sk, auc_sk = timed(lambda: roc_auc_score(y, s), repeats)
    t_rk, (auc_rk, var_rk) = timed(lambda: delong_rankdata(y, s), repeats)
    t_cmp, _ = timed(lambda: ba.compare_auc(y, s, s2), repeats)
    assert abs(ci.estimate - auc_sk) < 1e-12 and abs(ci.standard_error**2 - var_rk) < 1e-12
    small = 10_000
    t_bf, (auc_bf, var_bf) = timed(lambda: delong_brute(y[:small], s[:small]), 1)
    ref = ba.auc_ci(y[:small], s[:small])
    assert abs(ref.standard_error**2 - var_bf) < 1e-12
    rows += [
        (f"auc_ci (DeLong), n={n:,}", t_ba, 1.0),
        (f"compare_auc (paired DeLong, two scores), n={n:,}", t_cmp, t_cmp / t_ba),
        (f"sklearn roc_auc_score (point estimate only), n={n:,}", t_sk, t_sk / t_ba),
        (f"DeLong with scipy rankdata midranks, n={n:,}", t_rk, t_rk / t_ba),
        (f"O(n^2) structural components, n={small:,} (measured)", t_bf, None),
        (
            f"O(n^2) structural components, n={n:,} (extrapolated x{(n / small) ** 2:,.0f})",
            t_bf * (n / small) ** 2,
            t_bf * (n / small) ** 2 / t_ba,
        ),
    ]
    yb, sb = y[:boot_n], s[:boot_n]
    t_boot, _ = timed(lambda: ba.auc_ci(yb, sb, method="bootstrap", n_bootstrap=boot_reps), repeats)
    loop_reps = 100
    pos, neg = sb[yb == 1], sb[yb == 0]
    lab = np.r_[np.ones(len(pos)), np.zeros(len(neg))]

    def loop():
        g = np.random.default_rng(0)
        return [roc_auc_score(lab, np.r_[g.choice(pos, len(pos)), g.choice(neg, len(neg))]) for _ in range(loop_reps)]

    t_loop, _ = timed(loop, 1)
    per_ba, per_loop = t_boot / boot_reps, t_loop / loop_reps
    rows += [
        (f"auc_ci bootstrap, {boot_reps} replicates, n={boot_n:,}: per replicate", per_ba, 1.0),
        (f"numpy resample + roc_auc_score loop, n={boot_n:,}: per replicate", per_loop, per_loop / per_ba),
    ]
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="200 simulations and smaller sizes")
    p.add_argument("--sims", type=int, default=None, help="simulations per (n, d) (default 1000)")
    p.add_argument("--bootstrap-reps", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=5, help="timing repeats (median)")
    p.add_argument("--no-speed", action="store_true")
    p.add_argument("--no-coverage", action="store_true")
    a = p.parse_args(argv)
    n_sims = a.sims or (200 if a.quick else 1000)
    warnings.simplefilter("ignore", ba.UndefinedMetricWarning)
    if not a.no_coverage:
        ns = (50, 200) if a.quick else (50, 200, 1000)
        ds = (0.5, 1.0, 2.0, 3.0)
        rows = coverage(ns, ds, n_sims, boot_ns=(50, 200), boot_reps=a.bootstrap_reps)
        print(
            f"Coverage of 95% intervals, {n_sims} seeded binormal simulations per row "
            f"(bootstrap: {a.bootstrap_reps} replicates)\n"
        )
        print("| n per class | d | true AUC | DeLong | logit | bootstrap (pct) | BCa |")
        print("|---|---|---|---|---|---|---|")
        cells = {}
        for r in rows:
            cells.setdefault((r["n"], r["d"], r["auc"]), {})[r["method"]] = r
        for (n, d, auc), m in cells.items():

            def c(k):
                return f"{100 * m[k]['coverage']:.1f}% (w {m[k]['width']:.3f})" if k in m else "-"

            print(f"| {n} | {d:g} | {auc:.3f} | {c('delong')} | {c('logit')} | {c('bootstrap')} | {c('bca')} |")
        print()
    if not a.no_speed:
        n = 100_000 if a.quick else 1_000_000
        rows = speed(n, a.repeats, boot_n=10_000, boot_reps=2000)
        print(f"Speed, median of {a.repeats} runs (shared machine; ratios from the same run)\n")
        print("| run | time | vs auc_ci |")
        print("|---|---|---|")
        for name, t, ratio in rows:
            print(f"| {name} | {t * 1e3:,.2f} ms | {'' if ratio is None else f'{ratio:,.1f}x'} |")


if __name__ == "__main__":
    main()
