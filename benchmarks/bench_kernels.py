"""Before/after timing of ``evaluate``'s kernels on the synthetic scaling benchmark.

Pairs, in one run, the code of a base git revision (default ``HEAD~1``,
exported with ``git archive`` into a temporary folder) with this working
tree's, on the same generated benchmark (``_synthetic.scale_like``: datasets
with val/test cohorts and domains, models of mixed score kinds).  Each run is
a fresh process (``n_jobs=1``), so its peak memory is its own; runs alternate
before/after so machine noise hits both alike.  Prints, per size, the median
CPU seconds of every stage of ``evaluate`` (its ``timing``, read with the
process clock: on a shared machine other people's load moves wall time by
several times, CPU time much less), the total, the wall seconds and the peak
RSS, and after/before ratios.  ``--kernels`` times the diagnostics'
replicate kernels alone against their floors, each twice: standalone (the
kernel takes its own cumulative sums and makes its own buffers) and
``_shared`` as the engine's statistic calls it (the sums, the grid's units
and a warm workspace made once per bootstrap and passed in), and their
whole bootstrap statistic (all six numbers of a chunk, as the engine calls
it).

Usage::

    python benchmarks/bench_kernels.py                        # 10^4 and 10^5 rows per dataset, 3 runs each
    python benchmarks/bench_kernels.py --sizes 10000 --runs 5 --datasets 8 --models 8
    python benchmarks/bench_kernels.py --base main --save     # also write benchmarks/results/bench_kernels.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r"""
import json, resource, sys, time
wall = time.perf_counter
time.perf_counter = time.process_time  # evaluate's stage timing in CPU seconds: a shared machine's load moves wall time
sys.path.insert(0, {bench!r})
from _synthetic import scale_like
import beyondauc as ba
frame = scale_like({n}, n_datasets={d}, n_models={m})
t0 = wall()
ev = ba.evaluate(frame, n_bootstrap={b}, n_jobs=1)
out = dict(ev.timing, wall=wall() - t0, peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print("RESULT" + json.dumps(out))
"""


KERNELS = r"""
import json, time, numpy as np
from beyondauc.metrics.uncertainty.bootstrap import strata_of, bootstrap_counts, grid_weights
from beyondauc.metrics.diagnostics.cohorts import bias_rows, drift_rows, wasserstein_rows
n, R = {n}, {r}
rng = np.random.default_rng(0)
y = (rng.random(n) < 0.4).astype(np.int64)
s = rng.normal(y, 1.0)  # distinct scores: the grid is as long as the data
cohort = (np.arange(n) >= n // 2).astype(np.int64)
x, inv = np.unique(s, return_inverse=True)
strata = strata_of(cohort, y)
def cpu(f, k=5):
    ts = []
    for _ in range(k):
        t0 = time.process_time(); f(); ts.append(time.process_time() - t0)
    return float(np.median(ts))
try:
    from beyondauc.metrics.uncertainty.bootstrap import CountGrid, bootstrap_grid_counts
    draw = lambda: bootstrap_grid_counts(strata, CountGrid(inv, y, len(x), groups=cohort, n_groups=2), R, random_state=0)
except ImportError:
    draw = lambda: grid_weights(bootstrap_counts(strata, R, random_state=0), inv, y, len(x), groups=cohort, n_groups=2)
pos, neg = draw()
out = dict(draws_to_grid=cpu(draw), bias_rows=cpu(lambda: [bias_rows(x, pos[:, k], neg[:, k], 3.0) for k in (0, 1)]),
           drift_rows=cpu(lambda: drift_rows(x, pos, neg)), wasserstein_rows=cpu(lambda: wasserstein_rows(x, pos, neg, 2)))
# each kernel as the engine's statistic calls it: the counts' cumulative sums, the grid's units and a
# workspace made once per bootstrap and passed in (the standalone calls above also make their own)
from beyondauc.metrics.diagnostics.rows import _bias_units, _lead_cumsum, _workspace
work, units = _workspace(len(pos), len(x)), _bias_units(x, 3.0)
cp, cn = _lead_cumsum(pos), _lead_cumsum(neg)
shared = dict(bias_rows=lambda: [bias_rows(x, pos[:, k], neg[:, k], 3.0, cn=cn[:, k], units=units, work=work) for k in (0, 1)],
              drift_rows=lambda: drift_rows(x, pos, neg, cp=cp, cn=cn, work=work),
              wasserstein_rows=lambda: wasserstein_rows(x, pos, neg, 2, cp=cp, cn=cn, counts=True, work=work))
for k, f in shared.items():
    f()  # the workspace's pages touched once, as after a bootstrap's first chunk
    out[k + "_shared"] = cpu(f)
# the whole bootstrap statistic as the engine calls it (the kernels sharing their sums and buffers)
from beyondauc.metrics.diagnostics import resampling as db
_, stat = db.diagnostics_design(y[cohort == 0], s[cohort == 0], y[cohort == 1], s[cohort == 1],
                               db.DiagnosticsBootstrap(1, 3.0, 2, random_state=0))
out["statistic"] = cpu(lambda: stat(pos, neg))
# floors: the replicates' uniform draws themselves, and one cumulative sum over the counts a statistic reads
size = np.bincount(strata)[strata]
out["floor_draws"] = cpu(lambda: np.random.default_rng(0).integers(0, size, size=(R, n)))
out["floor_pass"] = cpu(lambda: (np.cumsum(pos, axis=2), np.cumsum(neg, axis=2)))
print("RESULT" + json.dumps(out))
"""


def kernels(toolkit, n, replicates):
    """CPU seconds of the diagnostics' replicate kernels on two cohorts of n / 2 (medians of 5), and floors."""
    env = {"PYTHONPATH": str(toolkit), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    res = subprocess.run(
        [sys.executable, "-c", KERNELS.format(n=n, r=replicates)], env=env, capture_output=True, text=True, check=False
    )
    line = next((x for x in res.stdout.splitlines() if x.startswith("RESULT")), None)
    if line is None:
        raise RuntimeError(f"kernel run failed ({toolkit}, n={n}):\n{res.stderr[-2000:]}")
    return json.loads(line[len("RESULT") :])


def export(rev, where):
    """The ``toolkit`` folder of git revision ``rev``, written under ``where``; its path."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "toolkit"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(where, filter="data")
    return Path(where) / "toolkit"


def run(toolkit, n, args):
    """One evaluation in a fresh process with ``toolkit`` first on the path: its timing dict."""
    code = CHILD.format(bench=str(HERE), n=n, d=args.datasets, m=args.models, b=args.bootstrap)
    env = {
        "PYTHONPATH": str(toolkit),
        "PATH": "/usr/bin:/bin",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    line = next((x for x in res.stdout.splitlines() if x.startswith("RESULT")), None)
    if line is None:
        raise RuntimeError(f"run failed ({toolkit}, n={n}):\n{res.stderr[-2000:]}")
    return json.loads(line[len("RESULT") :])


def table(results, n):
    """Rows (name, median before, median after, ratio) of one size."""
    before, after = results[("before", n)], results[("after", n)]
    names = [k for k in before[0] if k not in ("total",)] + ["total"]
    rows = []
    for k in names:
        b = float(np.median([r[k] for r in before]))
        a = float(np.median([r[k] for r in after]))
        rows.append((k, b, a, a / b if b else float("nan")))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="HEAD~1", help="git revision of the before code (default HEAD~1)")
    ap.add_argument("--after", default=None, help="git revision of the after code (default: this working tree)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="examples per dataset")
    ap.add_argument("--datasets", type=int, default=4)
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--kernels", action="store_true", help="time the replicate kernels alone (CPU seconds)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        after = ROOT / "toolkit" if args.after is None else export(args.after, Path(tmp) / "after")
        versions = {"before": export(args.base, Path(tmp) / "before"), "after": after}
        if args.kernels:
            return print_kernels(versions, args)
        results = {}
        for n in args.sizes:
            for i in range(args.runs):
                for v, toolkit in versions.items():  # alternate, so noise hits both
                    results.setdefault((v, n), []).append(run(toolkit, n, args))
                    print(f"  {v} n={n} run {i + 1}: {results[(v, n)][-1]['total']:.1f} s CPU", file=sys.stderr)
    print(
        f"{args.datasets} datasets x {args.models} models, n_bootstrap={args.bootstrap}, n_jobs=1, "
        f"medians of {args.runs} runs (before: {args.base}); stages and total in CPU s, wall in s, peak RSS in MiB"
    )
    report = {}
    for n in args.sizes:
        print(f"\n{n:,} examples per dataset")
        print(f"{'stage':<46}{'before':>10}{'after':>10}{'ratio':>8}")
        rows = table(results, n)
        for k, b, a, r in rows:
            unit = "M" if k == "peak_mib" else "s"
            print(f"{k:<46}{b:>9.1f}{unit}{a:>9.1f}{unit}{r:>8.2f}")
        report[str(n)] = [{"stage": k, "before": b, "after": a, "ratio": r} for k, b, a, r in rows]
    if args.save:
        out = HERE / "results" / "bench_kernels.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"args": vars(args), "results": report}, indent=1))


def print_kernels(versions, args):
    """The kernel table: CPU seconds before/after per kernel, and after over the floor (draws or one pass)."""
    for n in args.sizes:
        reps = max(1, (1 << 19) // n)  # a chunk of replicates as the diagnostics' engine holds them at once
        res = {v: kernels(t, n, reps) for v, t in versions.items()}
        print(f"\ntwo cohorts of {n // 2:,} (distinct scores), {reps} replicates, CPU s (median of 5)")
        print(f"{'kernel':<24}{'before':>9}{'after':>9}{'ratio':>7}{'after/floor':>13}")
        for k in (
            "draws_to_grid",
            "bias_rows",
            "drift_rows",
            "wasserstein_rows",
            "bias_rows_shared",
            "drift_rows_shared",
            "wasserstein_rows_shared",
            "statistic",
        ):
            floor = res["after"]["floor_draws" if k == "draws_to_grid" else "floor_pass"]
            b, a = res["before"][k], res["after"][k]
            print(f"{k:<24}{b:>9.3f}{a:>9.3f}{a / b:>7.2f}{a / floor:>13.1f}")
        print(f"{'floor: draws':<24}{'':>9}{res['after']['floor_draws']:>9.3f}")
        print(f"{'floor: one pass':<24}{'':>9}{res['after']['floor_pass']:>9.3f}")


if __name__ == "__main__":
    main()
