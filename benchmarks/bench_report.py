"""Time the report runner as a user runs it: ``beyondauc demo``, and report time against the number of models.

Runs the ``beyondauc`` command line in a child process (``--quiet``, a fresh
output folder per run, so nothing is reused), ``--jobs 2``:

* ``demo``: ``beyondauc demo`` (the embedded demo benchmark: 8 datasets, 8
  models); the issue's target is under 30 s on 2 cores.
* ``models``: ``beyondauc report`` on the demo's 8 datasets with 4 and with 16
  models (the demo's 8 models and 8 copies whose scores carry seeded noise, so
  they are models of their own); the target is 16 models in at most 4.5x the
  time of 4.

For every run it reads ``out/evaluation/manifest.json`` (the seconds of each
stage of the one evaluation) and the executed notebooks' papermill
timestamps, and prints the wall time, the evaluation's time, the notebooks'
summed time, the number of notebooks and the size of the largest model report.
Each row is the median of ``--repeats`` runs; ratios are computed from the
medians of runs interleaved in one invocation (the machine is shared: compare
ratios, quote medians).

With ``--baseline DIR`` (the ``toolkit`` folder of another checkout, e.g. a
``git worktree`` of an earlier commit) every run is paired with the same run
of that code (``PYTHONPATH=DIR``, so the command line, its workers and its
kernels import it), in alternating order, and the table ends with the ratio
of the medians: on a machine whose speed drifts from minute to minute, only
runs made side by side compare.

Usage::

    python benchmarks/bench_report.py                 # both cases, 3 repeats (~10 min on 2 idle cores)
    python benchmarks/bench_report.py --only demo --repeats 5
    python benchmarks/bench_report.py --only demo --repeats 4 --baseline ../base/toolkit
    python benchmarks/bench_report.py --wait-quiet 300  # start each run when the load average is low

Writes the cases it ran into ``benchmarks/results/bench_report.json`` (the
other cases already there are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def cli():
    return [sys.executable, "-c", "import sys; from beyondauc.cli import main; sys.exit(main())"]


def wait_quiet(max_wait, limit=0.6):
    """Wait (at most ``max_wait`` s) until the 1-minute load average per core is below ``limit``."""
    t0 = time.time()
    while time.time() - t0 < max_wait and os.getloadavg()[0] / (os.cpu_count() or 1) > limit:
        time.sleep(10)
    return os.getloadavg()[0]


def models_benchmark(path, n_models, random_state=0):
    """The demo's datasets with ``n_models`` models: the demo's 8, then seeded noisy copies of them."""
    from beyondauc import load_demo

    bench = load_demo()
    frame = bench.frame[[c for c in ("dataset", "domain", "label", "split", "id") if c in bench.frame.columns]].copy()
    rng = np.random.default_rng(random_state)
    base = list(bench.models)
    for i in range(n_models):
        m = base[i % len(base)]
        s = bench.frame[m].to_numpy(dtype=float)
        if i < len(base):
            frame[m] = s
        else:
            frame[f"{m}_noisy{i // len(base)}"] = s + rng.normal(0.0, 0.25 * s.std(), len(s))
    frame.to_csv(path, index=False)
    return str(path)


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(args, tmp, baseline=None):
    """One run of the command line; ``baseline``: a folder put first on the PYTHONPATH of the run."""
    out = Path(tempfile.mkdtemp(dir=tmp)) / "report"
    env = dict(os.environ)
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(baseline).resolve()), *filter(None, [env.get("PYTHONPATH")])])
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(
        [*cli(), *args, "--out", str(out), "--jobs", "2", "--quiet"], capture_output=True, text=True, env=env
    )
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    manifest = json.loads((out / "evaluation" / "manifest.json").read_text())
    notebooks, nb_seconds = 0, 0.0
    import nbformat

    for path in out.rglob("*.ipynb"):
        meta = nbformat.read(str(path), as_version=4).metadata.get("papermill", {})
        notebooks += 1
        nb_seconds += float(meta.get("duration") or 0.0)
    sizes = [p.stat().st_size for p in (out / "models").glob("*/report.html")]
    return {
        "wall": wall,
        "cpu": cpu,
        "evaluation": manifest["timing"]["total"],
        "notebook_seconds": nb_seconds,
        "notebooks": notebooks,
        "max_report_mb": max(sizes) / 1e6,
        "median_report_mb": statistics.median(sizes) / 1e6,
        "load": os.getloadavg()[0],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["demo", "models"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--wait-quiet", type=float, default=0.0, help="seconds to wait for an idle machine per run")
    ap.add_argument("--baseline", help="the toolkit folder of another checkout, run side by side with this one")
    a = ap.parse_args()
    if a.baseline and not (Path(a.baseline) / "beyondauc" / "__init__.py").is_file():
        raise SystemExit(f"--baseline: expected a folder holding the beyondauc package, got {a.baseline!r}")
    variants = [("", None)] + ([(" [baseline]", a.baseline)] if a.baseline else [])
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        cases = {}
        if a.only in (None, "demo"):
            cases["demo (8 datasets, 8 models)"] = ["demo"]
        if a.only in (None, "models"):
            for n in (4, 16):
                cases[f"demo datasets, {n} models"] = ["report", models_benchmark(Path(tmp) / f"m{n}.csv", n)]
        for r in range(a.repeats):  # interleaved: each repeat runs every case (and variant) once
            for name, args in cases.items():
                for label, baseline in variants if r % 2 == 0 else variants[::-1]:
                    if a.wait_quiet:
                        wait_quiet(a.wait_quiet)
                    res = one_run(args, tmp, baseline)
                    results.setdefault(name + label, []).append(res)
                    print(
                        f"[{r + 1}/{a.repeats}] {name}{label}: {res['wall']:.1f} s, {res['cpu']:.1f} CPU s "
                        f"(evaluation {res['evaluation']:.1f} s, load {res['load']:.1f})",
                        file=sys.stderr,
                        flush=True,
                    )
    print("| case | runs | wall (median) | CPU (median) | evaluation | notebooks | notebook s (sum) | largest report |")
    print("|:--|--:|--:|--:|--:|--:|--:|--:|")
    med = {}
    for name, runs in results.items():
        m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        med[name] = m
        print(
            f"| {name} | {len(runs)} | {m['wall']:.1f} s | {m['cpu']:.1f} s | {m['evaluation']:.1f} s | "
            f"{int(m['notebooks'])} | {m['notebook_seconds']:.1f} | {m['max_report_mb']:.2f} MB |"
        )
    if a.baseline:
        print("\nthis code / baseline (medians of the paired runs):")
        for name in cases:
            this, base = med[name], med[name + variants[1][0]]
            print(f"- {name}: wall {this['wall'] / base['wall']:.2f}x, CPU {this['cpu'] / base['cpu']:.2f}x")
    k4, k16 = "demo datasets, 4 models", "demo datasets, 16 models"
    if k4 in med and k16 in med:
        print(
            f"\n16 models / 4 models: {med[k16]['wall'] / med[k4]['wall']:.2f}x the wall time "
            f"(linear would be 4x; the target is at most 4.5x)"
        )
    (HERE / "results").mkdir(exist_ok=True)
    path = HERE / "results" / "bench_report.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    runs = {**saved.get("runs", {}), **results}
    if a.baseline:  # the commit, not the folder (a path of this machine)
        rev = subprocess.run(
            ["git", "-C", str(a.baseline), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        saved["baseline_commit"] = rev.stdout.strip() or None
    path.write_text(json.dumps({**saved, "runs": runs, "cpus": os.cpu_count()}, indent=1))


if __name__ == "__main__":
    main()
