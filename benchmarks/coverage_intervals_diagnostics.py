"""Coverage of the bootstrap intervals of the diagnostics (binormal) and of drift and DiSCA (BCa, known truth).

Two cohorts with known class-conditional normals (V: negatives N(0, 1),
positives N(1.5, 1); T: negatives N(0.3, 1.2), positives N(1.6, 1.1)),
``--n`` examples per class and cohort, seeded.  The true values are analytic:

* AUC = Phi(mu / s) with mu, s the mean and sd of D = s+ - s-;
* bias robustness at a fixed sigma_max = 6: E[clip(D, 0, sigma_max)] / (A sigma_max),
  with E[clip(D, 0, sigma)] = integral_0^sigma Phi((mu - t) / s) dt (quadrature);
* the 2-Wasserstein distance of two normals is sqrt((m1 - m2)^2 + (s1 - s2)^2),
  so W = (V-V+ + T-T+) / (V-T- + V+T+) is known.

For each simulation, :func:`beyondauc.diagnostics_intervals` (B replicates,
stratified by cohort and class) gives 95% intervals; the script reports how
often they cover the truth, beside the *basic* bootstrap interval
(2 * estimate - high, 2 * estimate - low) built from the same percentiles,
which corrects a bias of the estimator that the percentile interval
inherits.  (Drift has no sample-size-free truth for
unbounded scores -- it is normalised by the observed score range -- so it is
left out.)

``--bca`` runs instead the long version of ``tests/metrics/uncertainty/test_interval_coverage.py``
(its simulations are imported from there, one definition for both): the BCa
intervals of the drift (scores on a fixed grid of 11 values, so the range is
fixed and the truth analytic) and of DiSCA (confidences at five levels: a and
b fixed by design, one fluctuation), the share of simulations whose interval
covers the truth, the share with no interval (NaN: none contains the
estimate), and that every interval given contains its estimate.

Usage::

    python benchmarks/coverage_intervals_diagnostics.py              # 400 simulations, B = 400
    python benchmarks/coverage_intervals_diagnostics.py --sims 50    # a quick look
    python benchmarks/coverage_intervals_diagnostics.py --bca --sims 1000 --bootstrap 200
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.integrate import quad
from scipy.stats import norm

import beyondauc as ba

V = ((0.0, 1.0), (1.5, 1.0))  # (mean, sd) of negatives, positives
T = ((0.3, 1.2), (1.6, 1.1))
SIGMA_MAX = 6.0


def truth():
    out = {}
    for name, ((mn, sn), (mp, sp)) in (("val", V), ("test", T)):
        mu, s = mp - mn, np.hypot(sp, sn)
        auc = norm.cdf(mu / s)
        clip = quad(lambda t: norm.cdf((mu - t) / s), 0, SIGMA_MAX)[0]
        out[f"auc_{name}"] = auc
        out[f"bias_robustness_{name}"] = clip / (auc * SIGMA_MAX)

    def w2(a, b):
        return np.hypot(a[0] - b[0], a[1] - b[1])

    out["wasserstein"] = (w2(V[0], V[1]) + w2(T[0], T[1])) / (w2(V[0], T[0]) + w2(V[1], T[1]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--bootstrap", type=int, default=400)
    ap.add_argument("--n", type=int, default=150, help="examples per class and cohort (default: 150)")
    ap.add_argument("--bca", action="store_true", help="BCa coverage of drift and DiSCA (known truth)")
    args = ap.parse_args(argv)
    if args.bca:
        return bca_coverage(args.sims, args.bootstrap)
    true = truth()
    names = list(true)
    hits = {k: 0 for k in names}
    basic = {k: 0 for k in names}
    widths = {k: [] for k in names}
    t0 = time.perf_counter()
    for sim in range(args.sims):
        rng = np.random.default_rng(sim)
        y = np.r_[np.zeros(args.n, int), np.ones(args.n, int)]
        sv = np.r_[rng.normal(*V[0], args.n), rng.normal(*V[1], args.n)]
        st = np.r_[rng.normal(*T[0], args.n), rng.normal(*T[1], args.n)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = ba.diagnostics_intervals(
                y, sv, y, st, n_bootstrap=args.bootstrap, sigma_max=SIGMA_MAX, p=2, random_state=sim
            )
        for k in names:
            lo, hi = ci.loc[k, "low"], ci.loc[k, "high"]
            hits[k] += lo <= true[k] <= hi
            est = ci.loc[k, "estimate"]
            basic[k] += 2 * est - hi <= true[k] <= 2 * est - lo  # meaningful beside percentile intervals only
            widths[k].append(hi - lo)
    elapsed = time.perf_counter() - t0
    print(
        f"{args.sims} simulations, {args.n} examples per class and cohort, B = {args.bootstrap}, "
        f"95% intervals, BCa for W, percentile for the others ({elapsed:.0f} s)"
    )
    print(f"{'metric':22s} {'truth':>8s} {'coverage':>9s} {'method':>10s} {'basic':>7s} {'mean width':>11s}")
    for k in names:
        method = ci.loc[k, "interval_method"]
        shown = f"{basic[k] / args.sims:7.3f}" if method == "percentile" else f"{'-':>7s}"
        print(f"{k:22s} {true[k]:8.4f} {hits[k] / args.sims:9.3f} {method:>10s} {shown} {np.nanmean(widths[k]):11.4f}")


def bca_coverage(sims, n_bootstrap):
    """Coverage of the BCa intervals of drift and DiSCA on the simulations of ``tests/metrics/uncertainty/test_interval_coverage.py``."""
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "metrics" / "uncertainty"))
    import test_interval_coverage as sim

    cases = {
        "drift": (
            sim.draw_cohorts,
            sim.true_drift(),
            lambda data, seed: ba.diagnostics_intervals(*data, n_bootstrap=n_bootstrap, random_state=seed).loc["drift"],
        ),
        "disca": (
            sim.draw_answers,
            sim.true_disca(),
            lambda data, seed: ba.selective_intervals(*data, n_bootstrap=n_bootstrap, random_state=seed).loc["disca"],
        ),
    }
    print(f"{sims} simulations, B = {n_bootstrap}, 95% BCa intervals")
    print(f"{'metric':8s} {'truth':>8s} {'coverage':>9s} {'no interval':>12s} {'mean width':>11s} {'seconds':>8s}")
    for name, (draw, true, interval) in cases.items():
        t0 = time.perf_counter()
        hits, missing, widths = 0, 0, []
        for seed in range(sims):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row = interval(draw(np.random.default_rng(seed)), seed)
            lo, hi, est = row["low"], row["high"], row["estimate"]
            if np.isnan(lo):
                missing += 1
                continue
            assert lo <= est <= hi, (name, seed)
            hits += lo <= true <= hi
            widths.append(hi - lo)
        print(
            f"{name:8s} {true:8.4f} {hits / sims:9.3f} {missing / sims:12.3f} {np.mean(widths):11.4f} "
            f"{time.perf_counter() - t0:8.0f}"
        )


if __name__ == "__main__":
    main()
