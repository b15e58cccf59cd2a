"""Time the test-set AUROC diagnostics against the testAUC package.

Runs, in one process and on the same generated cohorts (labels ~ Bernoulli(0.4),
scores = sigmoid of a normal with class-dependent means, the test cohort
shifted and widened: covariate drift; scores stay in [0, 1]; seeded):

1. sensitivity/specificity drift on 10,000 examples per cohort:
   ``testAUC.roc_drift`` (a scikit-learn confusion matrix per validation ROC
   threshold, O(n^2)) against ``beyondauc.sens_spec_drift``;
2. drift + bias robustness of both cohorts + Wasserstein matrix on 1,000,000
   examples per cohort with beyondauc, and the same with testAUC: its bias
   robustness and the four ``scipy.stats.wasserstein_distance`` calls of its
   ``plot_wasserstein_distance_matrix`` (p=1 only) are measured at 1M; its
   drift cannot finish at 1M and is extrapolated, and labelled so;
3. noise robustness on 100,000 examples per cohort: ``beyondauc``'s Monte
   Carlo (``noise_method="monte_carlo"``), 20 repeats per sigma, against
   ``testAUC.noise_robustness``'s one draw per sigma, in raw time and in
   time per AUC evaluated (``bench_noise.py`` times the exact default);

and checks that the numbers agree where the two definitions coincide.  Both
libraries get the same sigma grid (21 points from 0 to sigma_max = 1, the
width of the [0, 1] score scale).

Usage::

    pip install -e ".[bench]"                        # testauc==1.2.1
    python benchmarks/bench_diagnostics.py           # full run (about 1.5 minutes on 2 cores)
    python benchmarks/bench_diagnostics.py --quick   # smaller sizes, a few seconds
    python benchmarks/bench_diagnostics.py --save    # also write benchmarks/results/bench_diagnostics.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import scipy
import sklearn
from scipy.stats import wasserstein_distance
from sklearn.metrics import roc_auc_score, roc_curve

HERE = Path(__file__).resolve().parent

import beyondauc

try:
    import testAUC
    from testAUC.utils import calc_tpr_fpr
except ImportError:  # pragma: no cover - message only
    sys.exit('testAUC is not installed: pip install -e ".[bench]" (or pip install testauc==1.2.1)')

SIGMA_MAX = 1.0  # same for both libraries: the width of the [0, 1] score scale
N_POINTS = 21  # beyondauc's default grid; testAUC is given the same
N_REPEATS = 20  # beyondauc's default Monte Carlo noise repeats per sigma
TARGETS = {"drift_ratio": 1000.0, "pipeline_s": 5.0, "noise_both_s": 10.0}


# -- data ----------------------------------------------------------------------------


def _cohort(rng, n, shift, widen):
    y = (rng.random(n) < 0.4).astype(np.int8)
    latent = np.where(y == 1, rng.normal(0.9, 1.1, n), rng.normal(-0.6, 1.0, n))
    return y, 1.0 / (1.0 + np.exp(-(widen * latent + shift)))


def cohorts(n, seed=0):
    """Validation and test cohorts of ``n`` examples each; T has covariate drift."""
    rng = np.random.default_rng(seed)
    yv, sv = _cohort(rng, n, 0.0, 1.0)
    yt, st = _cohort(rng, n, 0.35, 1.15)
    return yv, sv, yt, st


# -- timing ----------------------------------------------------------------------------


def timed(fn, repeats=1):
    """(best time over ``repeats`` runs, all times, last result)."""
    runs, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        runs.append(time.perf_counter() - t)
    return min(runs), runs, out


def fmt_s(seconds):
    if seconds >= 3600:
        return f"{seconds:,.0f} s (~{seconds / 3600:.1f} h)"
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.1f} ms"


def fmt_x(ratio):
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def row(cells, widths):
    return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = [row(header, widths), "  ".join("-" * w for w in widths)]
    lines += [row(r, widths) for r in rows]
    print("\n".join("  " + line for line in lines))


def verdict(ok):
    return "met" if ok else "NOT met"


# -- the peer's building blocks ----------------------------------------------------------


def peer_wasserstein(yv, sv, yt, st):
    """The four scipy calls of testAUC.plot_wasserstein_distance_matrix (p=1), no plotting."""
    v0, v1, t0, t1 = sv[yv == 0], sv[yv == 1], st[yt == 0], st[yt == 1]
    return {
        "V-V+": wasserstein_distance(v0, v1),
        "V-T-": wasserstein_distance(v0, t0),
        "T+V+": wasserstein_distance(t1, v1),
        "T+T-": wasserstein_distance(t1, t0),
    }


def ours_pipeline(yv, sv, yt, st, p=2):
    return (
        beyondauc.sens_spec_drift(yv, sv, yt, st),
        beyondauc.bias_robustness(yv, sv, sigma_max=SIGMA_MAX, n_points=N_POINTS),
        beyondauc.bias_robustness(yt, st, sigma_max=SIGMA_MAX, n_points=N_POINTS),
        beyondauc.wasserstein_matrix(yv, sv, yt, st, p=p),
    )


def drift_at_thresholds(d, thresholds):
    """beyondauc's per-threshold distance ||S_V - S_T|| at the given thresholds (inf: 0)."""
    out = np.zeros(len(thresholds))
    finite = np.isfinite(thresholds)
    k = np.searchsorted(d.thresholds, thresholds[finite])
    assert np.array_equal(d.thresholds[k], thresholds[finite])  # validation scores are thresholds of both
    out[finite] = d.distance[k]
    return out


# -- the run -----------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (2k / 100k / 10k) for a smoke run")
    ap.add_argument("--save", action="store_true", help="also write the numbers to benchmarks/results/")
    args = ap.parse_args()

    if args.quick:
        n_drift, n_big, n_noise, reps, peer_reps = 2_000, 100_000, 10_000, 3, 1
    else:
        n_drift, n_big, n_noise, reps, peer_reps = 10_000, 1_000_000, 100_000, 5, 3
    scaling_sizes = [n_drift // 4, n_drift // 2]  # extra peer drift sizes for the scaling fit
    rec = {"quick": args.quick, "sizes": {"drift": n_drift, "pipeline": n_big, "noise": n_noise}}

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    rec["machine"] = {
        "cpu_count": cores,
        "usable_cores": usable,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
    }
    print(
        f"machine: {cores} cores ({usable} usable); Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}; beyondauc {version('beyondauc')} "
        f"vs testauc {version('testauc')}"
    )
    print(
        "cohorts: labels ~ Bernoulli(0.4), scores = sigmoid(normal, class means -0.6 / 0.9); test cohort "
        "shifted +0.35 and widened x1.15 (covariate drift); all scores in [0, 1]; seeded"
    )
    print(
        f"robustness grid for both libraries: {N_POINTS} sigmas from 0 to sigma_max = {SIGMA_MAX:g}; "
        f"beyondauc best of {reps} runs, testAUC best of {peer_reps} unless said otherwise; "
        "everything single-process"
    )
    print("ratio = testAUC time / beyondauc time, measured in this run (above 1: beyondauc is faster)")

    # 1 -- drift, n_drift per cohort --------------------------------------------------------
    print(f"\n[1] sensitivity/specificity drift, {n_drift:,} examples per cohort")
    yv, sv, yt, st = cohorts(n_drift, seed=1)
    ours_t, _, d = timed(lambda: beyondauc.sens_spec_drift(yv, sv, yt, st), max(reps, 10))
    peer_t, _, (_, _, p_drift, p_thr, p_mean) = timed(lambda: testAUC.roc_drift(yv, sv, yt, st), 1)
    ratio1 = peer_t / ours_t
    table(
        ["", "time", "vs testAUC"],
        [
            ["testAUC.roc_drift (run once)", fmt_s(peer_t), "1x"],
            [f"beyondauc.sens_spec_drift (best of {max(reps, 10)})", fmt_s(ours_t), fmt_x(ratio1)],
        ],
    )
    ok = ratio1 >= TARGETS["drift_ratio"]
    print(
        f"  speed-up {fmt_x(ratio1)}: target >= {TARGETS['drift_ratio']:,.0f}x {verdict(ok)}; "
        f"testAUC evaluated {len(p_thr):,} validation ROC thresholds, one confusion matrix each"
    )
    ours_at = drift_at_thresholds(d, p_thr)
    gap = np.abs(ours_at - p_drift).max()
    print(
        f"  agreement: per-threshold distance ||S_V - S_T|| at testAUC's {len(p_thr):,} thresholds, max |difference| "
        f"= {gap:.1e}; testAUC's mean_drift {p_mean:.6f}, the same mean from beyondauc's curves {ours_at.mean():.6f}"
    )
    print(
        f"  (beyondauc's score D = {d.score:.6f} is a different summary: the integral of the squared distance over "
        f"the score range, not the mean over validation thresholds)"
    )
    rec["drift"] = {
        "n": n_drift,
        "beyondauc_s": ours_t,
        "testauc_s": peer_t,
        "ratio": ratio1,
        "testauc_thresholds": len(p_thr),
        "max_abs_diff_per_threshold": float(gap),
    }

    # peer drift scaling, for the 1M extrapolation
    scaling = [(n_drift, peer_t, len(p_thr))]
    for n in scaling_sizes:
        a, b, c, e = cohorts(n, seed=1)
        t, _, out = timed(lambda a=a, b=b, c=c, e=e: testAUC.roc_drift(a, b, c, e), 1)
        scaling.append((n, t, len(out[3])))
    scaling.sort()
    ns, ts = np.log([s[0] for s in scaling]), np.log([s[1] for s in scaling])
    slope = np.polyfit(ns, ts, 1)[0]

    # 2 -- the pipeline at n_big ---------------------------------------------------------------
    print(f"\n[2] drift + bias robustness (V and T) + Wasserstein matrix, {n_big:,} examples per cohort")
    yv, sv, yt, st = cohorts(n_big, seed=2)
    pipe_t, pipe_runs, (_, bv, bt, _) = timed(lambda: ours_pipeline(yv, sv, yt, st, p=2), reps)
    drift_t, _, _ = timed(lambda: beyondauc.sens_spec_drift(yv, sv, yt, st), reps)
    bias_t, _, _ = timed(
        lambda: (
            beyondauc.bias_robustness(yv, sv, sigma_max=SIGMA_MAX, n_points=N_POINTS),
            beyondauc.bias_robustness(yt, st, sigma_max=SIGMA_MAX, n_points=N_POINTS),
        ),
        reps,
    )
    w1_t, _, w1 = timed(lambda: beyondauc.wasserstein_matrix(yv, sv, yt, st, p=1), reps)
    w2_t, _, _ = timed(lambda: beyondauc.wasserstein_matrix(yv, sv, yt, st, p=2), reps)

    p_bias_t, _, (p_bv, p_bt) = timed(
        lambda: (
            testAUC.bias_robustness(yv, sv, n_points=N_POINTS, σmax=SIGMA_MAX),
            testAUC.bias_robustness(yt, st, n_points=N_POINTS, σmax=SIGMA_MAX),
        ),
        peer_reps,
    )
    p_w_t, _, p_w = timed(lambda: peer_wasserstein(yv, sv, yt, st), peer_reps)

    # testAUC's drift at n_big: (a) O(n^2) from the measured n_drift run; (b) the number of
    # validation ROC thresholds at n_big (measured) x the time of one threshold at n_big (measured
    # on a sample of thresholds).  Both are extrapolations; the ratio uses the smaller.
    quad = peer_t * (n_big / n_drift) ** 2
    _, _, thr_big = roc_curve(yv, sv)
    sample = np.quantile(thr_big[1:], np.linspace(0.05, 0.95, 7))
    per_thr = min(timed(lambda q=q: calc_tpr_fpr(st, yt, q), 1)[0] for q in sample)
    per_thr_est = len(thr_big) * per_thr
    p_drift_est = min(quad, per_thr_est)
    p_total = p_bias_t + p_w_t + p_drift_est

    table(
        ["component", "beyondauc", "testAUC / scipy", "ratio"],
        [
            ["sens/spec drift", fmt_s(drift_t), fmt_s(p_drift_est) + " EXTRAPOLATED", fmt_x(p_drift_est / drift_t)],
            ["bias robustness, V and T", fmt_s(bias_t), fmt_s(p_bias_t) + " measured", fmt_x(p_bias_t / bias_t)],
            ["Wasserstein matrix, p=1", fmt_s(w1_t), fmt_s(p_w_t) + " measured (4 scipy calls)", fmt_x(p_w_t / w1_t)],
            ["Wasserstein matrix, p=2 (paper)", fmt_s(w2_t), "-- (scipy: p=1 only)", ""],
            ["total: drift + bias x2 + W (p=2)", fmt_s(pipe_t), "", ""],
            ["total, testAUC: measured + extrapolated", "", fmt_s(p_total), fmt_x(p_total / pipe_t)],
            [
                "total, testAUC without its drift",
                "",
                fmt_s(p_bias_t + p_w_t) + " measured",
                fmt_x((p_bias_t + p_w_t) / pipe_t),
            ],
        ],
    )
    print(
        f"  beyondauc total {fmt_s(pipe_t)} (runs: {', '.join(f'{r:.2f}' for r in pipe_runs)}): "
        f"target < {TARGETS['pipeline_s']:g} s {verdict(pipe_t < TARGETS['pipeline_s'])}"
    )
    print(
        f"  testAUC drift at {n_big:,} is not run.  Extrapolations: (a) O(n^2) from its measured "
        f"{n_drift:,} run: {fmt_s(peer_t)} x ({n_big:,}/{n_drift:,})^2 = {fmt_s(quad)}; (b) its "
        f"{len(thr_big):,} validation ROC thresholds at {n_big:,} (measured) x {per_thr * 1000:.1f} ms per "
        f"threshold at {n_big:,} (measured, best of {len(sample)} thresholds) = {fmt_s(per_thr_est)}.  "
        f"The table uses the smaller."
    )
    steps = ", ".join(f"{n:,}: {fmt_s(t)} ({k:,} thresholds)" for n, t, k in scaling)
    print(
        f"  measured testAUC drift scaling: {steps}; log-log slope {slope:.2f} "
        "(below 2 at these sizes: scikit-learn's fixed cost per confusion matrix dominates)"
    )
    w_gap = max(abs(w1.to_frame().loc[r, c] - p_w[f"{r}{c}"]) for r in ("V-", "T+") for c in ("V+", "T-"))
    w_rel = w_gap / max(p_w.values())
    print(
        f"  agreement: Wasserstein p=1 matrix vs scipy.stats.wasserstein_distance, 4 entries, max |difference| "
        f"= {w_gap:.1e} (relative {w_rel:.1e}); W = {w1.score:.6f} vs testAUC's formula "
        f"{(p_w['V-V+'] + p_w['T+T-']) / (p_w['V-T-'] + p_w['T+V+']):.6f}"
    )
    b_gap = max(np.abs(ours.relative_curve - peer[1]).max() for ours, peer in ((bv, p_bv), (bt, p_bt)))
    grid_same = all(np.array_equal(ours.sigmas, peer[0]) for ours, peer in ((bv, p_bv), (bt, p_bt)))
    print(
        f"  agreement: bias robustness curve A(sigma)/A on the same {N_POINTS}-sigma grid (identical grid: "
        f"{grid_same}) vs testAUC's auc_gains, V and T, max |difference| = {b_gap:.1e}; testAUC's summary "
        f"trapz(gains)/n_points = {p_bv[2]:.6f} / {p_bt[2]:.6f}, from beyondauc's curves "
        f"{np.trapezoid(bv.relative_curve) / N_POINTS:.6f} / {np.trapezoid(bt.relative_curve) / N_POINTS:.6f} "
        f"(beyondauc's own score is the exact integral: {bv.score:.6f} / {bt.score:.6f})"
    )
    rec["pipeline"] = {
        "n": n_big,
        "beyondauc_total_s": pipe_t,
        "beyondauc_drift_s": drift_t,
        "beyondauc_bias_both_s": bias_t,
        "beyondauc_w_p1_s": w1_t,
        "beyondauc_w_p2_s": w2_t,
        "testauc_bias_both_s": p_bias_t,
        "scipy_w_p1_s": p_w_t,
        "testauc_drift_extrapolated_s": {
            "quadratic_from_measured": quad,
            "thresholds_x_per_threshold": per_thr_est,
            "used": p_drift_est,
        },
        "testauc_drift_scaling": [{"n": n, "s": t, "thresholds": k} for n, t, k in scaling],
        "max_abs_diff_wasserstein_p1": float(w_gap),
        "max_abs_diff_bias_curve": float(b_gap),
    }

    # 3 -- noise robustness, n_noise per cohort ------------------------------------------------------
    print(f"\n[3] noise robustness, {n_noise:,} examples per cohort")
    yv, sv, yt, st = cohorts(n_noise, seed=3)
    runs = {"V": [], "T": []}
    res = {}
    for _ in range(max(1, reps - 2)):
        for name, (y, s) in (("V", (yv, sv)), ("T", (yt, st))):
            t = time.perf_counter()
            res[name] = beyondauc.noise_robustness(
                y,
                s,
                sigma_max=SIGMA_MAX,
                n_points=N_POINTS,
                noise_method="monte_carlo",
                n_repeats=N_REPEATS,
                random_state=0,
            )
            runs[name].append(time.perf_counter() - t)
    ours_n = {k: min(v) for k, v in runs.items()}
    ours_n["both"] = min(a + b for a, b in zip(runs["V"], runs["T"]))
    peer_runs = {"V": [], "T": []}
    peer_res = {}
    for _ in range(peer_reps):
        np.random.seed(0)  # noqa: NPY002 -- testAUC draws from numpy's global generator
        for name, (y, s) in (("V", (yv, sv)), ("T", (yt, st))):
            t = time.perf_counter()
            peer_res[name] = testAUC.noise_robustness(y, s, n_points=N_POINTS, σmax=SIGMA_MAX)
            peer_runs[name].append(time.perf_counter() - t)
    peer_n = {k: min(v) for k, v in peer_runs.items()}
    peer_n["both"] = min(a + b for a, b in zip(peer_runs["V"], peer_runs["T"]))
    ours_aucs = 1 + (N_POINTS - 1) * N_REPEATS  # the exact AUC, then repeats at every sigma > 0
    peer_aucs = 1 + N_POINTS  # the original AUC, then one draw per sigma
    rows = []
    for k in ("V", "T", "both"):
        m = 2 if k == "both" else 1
        po, pp = ours_n[k] / (m * ours_aucs), peer_n[k] / (m * peer_aucs)
        rows.append(
            [
                f"cohort {k}" if k != "both" else "both cohorts",
                fmt_s(ours_n[k]),
                fmt_s(peer_n[k]),
                fmt_x(peer_n[k] / ours_n[k]),
                f"{m * ours_aucs} / {m * peer_aucs}",
                f"{po * 1000:.2f} ms",
                f"{pp * 1000:.2f} ms",
                fmt_x(pp / po),
            ]
        )
    table(
        [
            "",
            "beyondauc",
            "testAUC",
            "raw ratio",
            "AUCs (ours / testAUC)",
            "per AUC, ours",
            "per AUC, testAUC",
            "per-AUC ratio",
        ],
        rows,
    )
    print(
        f"  beyondauc: {N_REPEATS} seeded draws per sigma ({ours_aucs} AUCs per cohort); testAUC: one draw per sigma "
        f"({peer_aucs} AUCs per cohort).  A raw ratio below 1 means testAUC is faster only because it evaluates "
        f"{ours_aucs / peer_aucs:.0f}x fewer AUCs."
    )
    print(
        f"  beyondauc both cohorts {fmt_s(ours_n['both'])}: target < {TARGETS['noise_both_s']:g} s "
        f"{verdict(ours_n['both'] < TARGETS['noise_both_s'])}"
    )
    zs = []
    for k in ("V", "T"):
        r, gains = res[k], peer_res[k][1]
        peer_auc = gains[1:] * r.auc  # testAUC's noisy AUCs (its gains are relative to the same exact AUC)
        zs.append(np.abs(peer_auc - r.auc_curve[1:]) / r.auc_std[1:])
    z = np.concatenate(zs)
    print(
        f"  agreement (Monte Carlo, different generators): testAUC's single noisy AUC per sigma lies within "
        f"{z.max():.1f} standard deviations of beyondauc's {N_REPEATS}-draw mean at every sigma > 0 "
        f"(median {np.median(z):.1f}); AUC without noise vs sklearn's roc_auc_score, max |difference| "
        f"{max(abs(res[k].auc - roc_auc_score(y, s)) for k, (y, s) in (('V', (yv, sv)), ('T', (yt, st)))):.1e}"
    )
    rec["noise"] = {
        "n": n_noise,
        "beyondauc_s": ours_n,
        "testauc_s": peer_n,
        "aucs_per_cohort": {"beyondauc": ours_aucs, "testauc": peer_aucs},
        "max_z": float(z.max()),
    }

    if args.save:
        out = HERE / "results" / ("bench_diagnostics-quick.json" if args.quick else "bench_diagnostics.json")
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(rec, indent=2, default=float))
        print(f"\nwrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
