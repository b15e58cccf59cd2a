"""How `evaluate` and `report` scale: examples per dataset, models, local processes and a Dask cluster.

Every run is a child process (``python -c``) on a generated benchmark of 8
datasets (4 domains, each dataset with ``val``/``test`` cohorts) whose models
mix the score kinds real benchmarks have: probabilities, log-likelihoods,
unbounded margins and heavily tied scores.  The data files are written once
(Parquet) before any run, so generation is not timed; reading them is.

For each run it records the wall time, the CPU time of the process tree and
the **peak memory of the whole process tree** (the process, its worker
processes and, with ``--dask``, the cluster's workers, sampled every 50 ms),
two ways: the sum of the proportional set sizes (PSS: a page shared by k
processes counts 1/k in each, so pages a forked worker shares copy-on-write
with its parent count once, as the machine holds them) and the sum of the
resident sizes (RSS: shared pages counted in every process that maps them,
an upper bound).  Each row is the median of ``--repeats`` runs.

Cases (``--only`` picks some):

* ``examples``: 10^3, 10^4, 10^5, 10^6 examples per dataset, 8 models,
  no bootstrap; prints the exponent of time in examples between 10^4 and 10^6.
* ``models``: 4, 16, 64, 256 models at 10^3 examples per dataset, 200
  replicates; prints the exponent of time in models.
* ``issue``: 10^4 examples per dataset x 8 models, 200 replicates (the
  issue's first measurement).
* ``target``: 10^5 examples per dataset x 16 models with 200 replicates
  (target: <= 120 s and <= 2 GiB) and 10^6 x 8 models without the bootstrap
  (target: finishes within 4 GiB).
* ``report``: ``beyondauc report`` on 4, 16 and 64 models at 10^3 examples
  (evaluation and notebooks), with ``--jobs`` processes.
* ``--case EXAMPLES DATASETS MODELS REPLICATES``: any other evaluation
  (``--only none`` to run only those).

``--cells N`` evaluates this checkout with ``cells=N`` (bounded Monte Carlo);
a ``--baseline`` runs as it is, per value.

``--dask`` runs every case on a 2-worker ``LocalCluster`` (one thread each)
started in the child process; the evaluation's tasks then run on the
workers, whose memory is counted.  ``--baseline DIR`` (the ``toolkit`` folder
of another checkout, e.g. a ``git worktree`` of an earlier commit) pairs every
run with the same run of that code, in alternating order, and ends with the
ratios of the medians: on a shared machine only runs made side by side
compare.  A run longer than ``--timeout`` seconds is stopped and shown as
``> timeout``.

Usage::

    python benchmarks/bench_scale.py --only target --repeats 3
    python benchmarks/bench_scale.py --only none --case 100000 8 2 200 --jobs 1 --baseline ../base/toolkit
    python benchmarks/bench_scale.py --only examples models --repeats 3 --baseline ../base/toolkit
    python benchmarks/bench_scale.py --only report --dask

Writes what it ran into ``benchmarks/results/bench_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

HERE = Path(__file__).resolve().parent
KINDS = ("prob", "loglik", "logit", "tied", "prob", "narrow", "discrete", "logit")
DATASETS = 8


def _score(rng, y, kind, strength):
    """One model's raw score of kind ``kind`` (the latent strength sets its AUC)."""
    latent = rng.normal(size=len(y)) + strength * y
    if kind == "prob":
        return 1.0 / (1.0 + np.exp(-2.0 * latent + 1.0))
    if kind == "loglik":
        return -20.0 * np.exp(-0.5 * latent)
    if kind == "tied":  # many exact ties, most at zero
        return np.round(np.clip(0.1 * latent, 0.0, None), 2)
    if kind == "discrete":
        return np.round(np.clip((latent + 2.0) * 2.0, 0.0, 8.0))
    if kind == "narrow":
        return 0.8 + 0.05 * latent
    return 2.5 * latent - 1.0


def scale_frame(n_examples, n_models, *, n_datasets=DATASETS, random_state=0):
    """A benchmark of ``n_datasets`` datasets with ``n_examples`` rows each (half ``val``, half ``test``) and
    ``n_models`` models."""
    rng = np.random.default_rng(random_state)
    parts = []
    for d in range(n_datasets):
        y = (rng.random(n_examples) < rng.uniform(0.3, 0.7)).astype(np.int8)
        split = np.where(np.arange(n_examples) % 2 == 0, "val", "test")
        cols = {
            "dataset": np.full(n_examples, f"set{d}"),
            "domain": np.full(n_examples, f"domain{d // 2}"),
            "split": split,
            "label": y,
        }
        shift = rng.normal(0.0, 0.7)  # a dataset's own score shift: what breaks transfer
        drift = (split == "test") * rng.normal(0.0, 0.3)  # and a cohort shift: what the drift sees
        for m in range(n_models):
            kind = KINDS[m % len(KINDS)]
            s = _score(rng, y, kind, rng.uniform(0.4, 2.0)) + (shift + drift) * (0.1 if kind == "prob" else 1.0)
            cols[f"{kind}{m}"] = s.astype(np.float64)
        parts.append(pd.DataFrame(cols))
    return pd.concat(parts, ignore_index=True)


def data_file(folder, n_examples, n_models, n_datasets=DATASETS):
    path = Path(folder) / f"scale_{n_examples}x{n_models}x{n_datasets}.parquet"
    if not path.exists():
        scale_frame(n_examples, n_models, n_datasets=n_datasets).to_parquet(path, index=False)
    return path


EVALUATE = """
import sys, time
import beyondauc as ba
path, n_bootstrap, n_jobs, dask = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
options = dict(n_bootstrap=n_bootstrap, n_jobs=n_jobs)
if len(sys.argv) > 5:  # --cells (code without the parameter is run without it)
    options["cells"] = None if sys.argv[5] == "None" else int(sys.argv[5])
if dask:
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    options["dask"] = cluster.scheduler_address
t0 = time.perf_counter()
ev = ba.evaluate(path, **options)
print("SECONDS", time.perf_counter() - t0)
"""


def _tree_memory(proc):
    """(summed PSS, summed RSS) in bytes of ``proc`` and all its descendants (processes that end between calls
    are skipped; PSS falls back to RSS where the system gives no PSS)."""
    pss = rss = 0
    try:
        tree = [proc, *proc.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):  # the run ended between two samples
        return 0, 0
    for p in tree:
        try:
            full = p.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        rss += full.rss
        pss += getattr(full, "pss", full.rss)
    return pss, rss


def _tree_cpu(proc, seen):
    """Update ``seen`` (pid -> CPU seconds) with the CPU time of ``proc``'s tree; return the sum."""
    try:
        tree = [proc, *proc.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return sum(seen.values())
    for p in tree:
        try:
            t = p.cpu_times()
            # its own time only: a pool worker's CPU would count twice in its parent's children_* once reaped
            seen[p.pid] = t.user + t.system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return sum(seen.values())


def measure(command, env, timeout):
    """Run ``command``: (wall s, CPU s of the tree, peak tree RSS, the child's stdout, peak tree PSS), bytes; None
    on timeout."""
    t0 = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc, peak, cpu, done = psutil.Process(child.pid), [0, 0], {}, threading.Event()

    def sample():
        while not done.is_set():
            pss, rss = _tree_memory(proc)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            _tree_cpu(proc, cpu)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for p in [proc, *proc.children(recursive=True)]:
            p.kill()
        child.communicate()
        return None
    finally:
        done.set()
        sampler.join()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command[:4]))} failed ({child.returncode}): {err[-2000:]}")
    return time.perf_counter() - t0, sum(cpu.values()), peak[0], out, peak[1]


def evaluate_command(path, n_bootstrap, n_jobs, dask, cells=None):
    """The child's command; ``cells`` (an int) is passed only when given, so a baseline without it runs too."""
    return [
        sys.executable,
        "-c",
        EVALUATE,
        str(path),
        str(n_bootstrap),
        str(n_jobs),
        "1" if dask else "0",
        *([] if cells is None else [str(cells)]),
    ]


REPORT = """
import sys
from beyondauc import run_report
path, out, n_jobs, dask = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
address = None
if dask:
    from distributed import LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    address = cluster.scheduler_address
run_report(path, out=out, jobs=n_jobs, dask=address, progress=False)
"""


def report_command(path, out, n_jobs, dask):
    return [sys.executable, "-c", REPORT, str(path), str(out), str(n_jobs), "1" if dask else "0"]


def cases(only, folder, examples=(10**3, 10**4, 10**5, 10**6), models=(4, 16, 64, 256), custom=()):
    """(name, kind, size axis, data file, n bootstrap) of the cases asked for (``custom``: (examples, datasets,
    models, replicates) each)."""
    plan = [
        (f"evaluate {n:.0e} x {d} datasets x {m} models, {b} replicates", "evaluate", None, n, m, b, d)
        for n, d, m, b in custom
    ]
    if "issue" in only:  # the first measurement: 109 s and 616 MiB before this work
        plan += [("issue: 1e+04 x 8 models, 200 replicates", "evaluate", None, 10**4, 8, 200)]
    if "examples" in only:
        plan += [(f"evaluate {n:.0e} x 8 models", "evaluate", ("examples", n), n, 8, 0) for n in examples]
    if "models" in only:
        plan += [
            (f"evaluate 1e+03 x {m} models, 200 replicates", "evaluate", ("models", m), 10**3, m, 200) for m in models
        ]
    if "target" in only:
        plan += [
            ("target: 1e+05 x 16 models, 200 replicates", "evaluate", None, 10**5, 16, 200),
            ("target: 1e+06 x 8 models, no bootstrap", "evaluate", None, 10**6, 8, 0),
        ]
    if "report" in only:
        plan += [(f"report 1e+03 x {m} models", "report", ("report models", m), 10**3, m, 200) for m in (4, 16, 64)]
    return [(name, kind, axis, data_file(folder, n, m, *rest[1:]), rest[0]) for name, kind, axis, n, m, *rest in plan]


def _pss(run):
    """The peak PSS of a run (a run saved before PSS was measured: its RSS)."""
    return run[4] if len(run) > 4 else run[2]


def exponent(points):
    """Least-squares slope of log(time) on log(size) over ``points`` [(size, seconds)], NaN under 2 points."""
    pts = [(s, t) for s, t in points if t is not None and t > 0]
    if len(pts) < 2:
        return math.nan
    x, y = np.log([s for s, _ in pts]), np.log([t for _, t in pts])
    return float(np.polyfit(x, y, 1)[0])


def run_all(plan, variants, a, tmp):
    results = {}
    for r in range(a.repeats):  # interleaved: every repeat runs every case and variant once
        for name, kind, _axis, path, n_boot in plan:
            for label, base in variants if r % 2 == 0 else variants[::-1]:
                env = dict(os.environ)  # this checkout's package, or the baseline's: never whatever is installed
                env["PYTHONPATH"] = os.pathsep.join(
                    [str(Path(base or HERE.parent / "toolkit").resolve()), *filter(None, [env.get("PYTHONPATH")])]
                )
                cells = a.cells if not base else None  # the baseline: code before `cells`
                cmd = (
                    evaluate_command(path, n_boot, a.jobs, a.dask, cells)
                    if kind == "evaluate"
                    else report_command(path, Path(tempfile.mkdtemp(dir=tmp)) / "out", a.jobs, a.dask)
                )
                res = measure(cmd, env, a.timeout)
                results.setdefault(name + label, []).append(res)
                said = (
                    "timed out"
                    if res is None
                    else (f"{res[0]:.1f} s, PSS {_pss(res) / 2**30:.2f} GiB, RSS {res[2] / 2**30:.2f} GiB")
                )
                print(f"[{r + 1}/{a.repeats}] {name}{label}: {said}", file=sys.stderr, flush=True)
    return results


def summary(plan, variants, results, a):
    med, rows = {}, []
    print(
        f"| case{' (dask, 2 workers)' if a.dask else f' ({a.jobs} processes)'} | code | wall (median) | CPU | "
        "peak memory (PSS) | peak RSS summed |"
    )
    print("|:--|:--|--:|--:|--:|--:|")
    for name, _, _, _, _ in plan:
        for label, _ in variants:
            runs = results[name + label]
            done = [x for x in runs if x is not None]
            m = (
                None
                if len(done) < len(runs)
                else (
                    *(statistics.median(x[i] for x in done) for i in range(3)),
                    statistics.median(_pss(x) for x in done),
                )
            )
            med[name + label] = m
            wall = f"> {a.timeout:.0f} s" if m is None else f"{m[0]:.1f} s"
            cpu = "" if m is None else f"{m[1]:.1f} s"
            mem = "" if m is None else f"{m[3] / 2**30:.2f} GiB"
            rss = "" if m is None else f"{m[2] / 2**30:.2f} GiB"
            print(f"| {name} | {label.strip(' []') or 'this'} | {wall} | {cpu} | {mem} | {rss} |")
            rows.append({"case": name, "code": label.strip(" []") or "this", "runs": runs})
    for axis, lo in (("examples", 10**4), ("models", 4), ("report models", 4)):
        for label, _ in variants:
            pts = [
                (ax[1], (med[name + label] or (None,))[0])
                for name, _, ax, _, _ in plan
                if ax and ax[0] == axis and ax[1] >= lo
            ]
            if len(pts) >= 2:
                print(f"exponent in {axis} ({label.strip(' []') or 'this'}): {exponent(pts):.2f}")
    if len(variants) > 1:
        print("\nthis code / baseline (medians):")
        for name, _, _, _, _ in plan:
            this, base = med[name], med[name + variants[1][0]]
            if this and base:
                print(
                    f"- {name}: wall {this[0] / base[0]:.2f}x, peak PSS {this[3] / base[3]:.2f}x, "
                    f"peak RSS {this[2] / base[2]:.2f}x"
                )
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only",
        nargs="+",
        default=["examples", "models", "target", "report"],
        choices=["issue", "examples", "models", "target", "report", "none"],
    )
    ap.add_argument(
        "--examples",
        nargs="+",
        type=int,
        default=[10**3, 10**4, 10**5, 10**6],
        help="examples per dataset of the 'examples' case",
    )
    ap.add_argument("--models", nargs="+", type=int, default=[4, 16, 64, 256], help="models of the 'models' case")
    ap.add_argument(
        "--case",
        nargs=4,
        type=int,
        action="append",
        default=[],
        metavar=("EXAMPLES", "DATASETS", "MODELS", "REPLICATES"),
        help="also evaluate this benchmark (examples per dataset, datasets, models, bootstrap "
        "replicates); repeatable; with --only none, only these",
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: the cores)")
    ap.add_argument("--dask", action="store_true", help="run on a 2-worker LocalCluster")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a run is stopped")
    ap.add_argument(
        "--cells",
        type=int,
        default=None,
        help="evaluate this code with `cells` (the baseline runs per value, without the parameter)",
    )
    ap.add_argument("--baseline", help="the toolkit folder of another checkout, run side by side with this one")
    a = ap.parse_args()
    if a.baseline and not (Path(a.baseline) / "beyondauc" / "__init__.py").is_file():
        raise SystemExit(f"--baseline: expected a folder holding the beyondauc package, got {a.baseline!r}")
    variants = [("", None)] + ([(" [baseline]", a.baseline)] if a.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        plan = cases(a.only, tmp, a.examples, a.models, a.case)
        results = run_all(plan, variants, a, tmp)
        rows = summary(plan, variants, results, a)
    (HERE / "results").mkdir(exist_ok=True)
    path = HERE / "results" / "bench_scale.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    key = f"{'dask' if a.dask else 'local'}-{a.jobs}"
    saved.setdefault(key, {}).update({r["case"] + " | " + r["code"]: r["runs"] for r in rows})
    path.write_text(json.dumps({**saved, "cpus": os.cpu_count()}, indent=1))


if __name__ == "__main__":
    main()
