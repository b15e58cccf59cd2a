"""Time the bootstrap intervals of selective answering and the diagnostics against a per-replicate loop.

On a TRUE-sized generated benchmark (``_synthetic.true_like``: 9 datasets,
23,858 rows), one model (FactCC-like probabilities) and one target dataset
(summeval, 1,600 rows), in one process:

1. selective answering, ``xdomain`` (calibrate on the other 22,258 rows) and
   ``indata`` (80/20 split of summeval), each calibration method: all
   ``B`` replicates of accuracy/area/AURC/DiSCA/a/b with the calibrator
   refitted per replicate, vectorised (:func:`beyondauc.selective_answering`
   with ``n_bootstrap``), against the straightforward loop (per replicate:
   ``np.repeat`` the rows by their counts, fit :class:`beyondauc.ScoreCalibrator`,
   ``predict_proba``/``predict``, :func:`beyondauc.disca`, :func:`beyondauc.aurc`),
   timed on a few replicates and compared per replicate;
2. diagnostics with the ``xdomain`` cohorts (V = 22,258 rows, T = 1,600) and
   the ``indata`` cohorts (V = 1,280, T = 320):
   AUCs, bias robustness of both cohorts, drift and W (p = 2), vectorised
   (:func:`beyondauc.diagnostics_intervals`) against the loop of the point
   functions on repeated rows.

Each timing is the median of ``--runs`` runs.  The numbers of the two ways
agree to 1e-12 (see ``tests/metrics/diagnostics/test_diagnostics_benchmark.py`` and
``tests/metrics/selective/test_selective_benchmark.py``).

Usage::

    python benchmarks/bench_intervals_selective.py            # B = 1000, 3 runs
    python benchmarks/bench_intervals_selective.py --quick    # B = 100, 1 run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import beyondauc as ba  # noqa: E402
from _synthetic import true_like  # noqa: E402
from beyondauc.metrics.selective.benchmark_intervals import selective_design
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, strata_of  # noqa: E402


def _median_time(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _selective_loop(bench, model, dataset, protocol, method, n_loop):
    s, y, role, strata = selective_design(bench, model, dataset, ood_dataset=None, protocol=protocol, random_state=0)
    counts = bootstrap_counts(strata, n_loop, random_state=0)
    for r in range(n_loop):  # the straightforward way, one replicate at a time
        rows = np.repeat(np.arange(len(y)), counts[r])
        cal, ev = rows[role[rows] == 0], rows[role[rows] == 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = ba.ScoreCalibrator(method).fit(s[cal], y[cal])
        p = m.predict_proba(s[ev])
        conf, ok = np.maximum(p, 1 - p), m.predict(s[ev]) == y[ev]
        ba.disca(conf, ok)
        ba.aurc(conf, ok)


def _diagnostics_loop(yv, sv, yt, st, n_loop):
    cohort = np.r_[np.zeros(len(yv), int), np.ones(len(yt), int)]
    counts = bootstrap_counts(strata_of(cohort, np.r_[yv, yt]), n_loop, random_state=0)
    sigma_max = float(np.ptp(np.r_[sv, st]))
    for r in range(n_loop):
        a, b = np.repeat(yv, counts[r, : len(yv)]), np.repeat(sv, counts[r, : len(yv)])
        c, d = np.repeat(yt, counts[r, len(yv) :]), np.repeat(st, counts[r, len(yv) :])
        ba.bias_robustness(a, b, sigma_max=sigma_max, n_points=2)
        ba.bias_robustness(c, d, sigma_max=sigma_max, n_points=2)
        ba.sens_spec_drift(a, b, c, d)
        ba.wasserstein_matrix(a, b, c, d, p=2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="B = 100, one run")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--loop", type=int, default=5, help="replicates timed with the loop (default: 5)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=("selective", "diagnostics"), default=None, help="run one part")
    args = ap.parse_args(argv)
    B, runs = (100, 1) if args.quick else (args.bootstrap, args.runs)
    bench = ba.load_benchmark(true_like(random_state=0))
    model, dataset = "FactCC", "summeval"
    print(
        f"TRUE-sized benchmark: {len(bench)} rows; model {model}, dataset {dataset}; B = {B}; "
        f"loop timed on {args.loop} replicates; median of {runs} run(s)"
    )
    print(f"{'what':44s} {'vectorised/rep':>15s} {'loop/rep':>10s} {'speed-up':>9s} {'vectorised total':>17s}")
    for protocol in ("xdomain", "indata") if args.only != "diagnostics" else ():
        for method in ("logistic", "isotonic", "stump"):
            t_vec = _median_time(
                lambda: ba.selective_answering(bench, model, dataset, protocol=protocol, method=method, n_bootstrap=B),
                runs,
            )
            t_point = _median_time(
                lambda: ba.selective_answering(bench, model, dataset, protocol=protocol, method=method), runs
            )
            t_loop = _median_time(lambda: _selective_loop(bench, model, dataset, protocol, method, args.loop), runs)
            per_vec, per_loop = (t_vec - t_point) / B, t_loop / args.loop
            print(
                f"{'selective ' + protocol + '/' + method:44s} {per_vec * 1e3:13.2f}ms {per_loop * 1e3:8.1f}ms "
                f"{per_loop / per_vec:8.0f}x {t_vec:16.2f}s"
            )
    for protocol in ("xdomain", "indata") if args.only != "selective" else ():
        yv, sv, yt, st = ba.cohorts(bench, model, dataset, protocol=protocol)
        t_vec = _median_time(lambda: ba.diagnostics_intervals(yv, sv, yt, st, n_bootstrap=B), runs)
        t_loop = _median_time(lambda: _diagnostics_loop(yv, sv, yt, st, args.loop), runs)
        per_vec, per_loop = t_vec / B, t_loop / args.loop
        what = f"diagnostics {protocol} (V {len(yv)}, T {len(yt)})"
        print(f"{what:44s} {per_vec * 1e3:13.2f}ms {per_loop * 1e3:8.1f}ms {per_loop / per_vec:8.0f}x {t_vec:16.2f}s")


if __name__ == "__main__":
    main()
