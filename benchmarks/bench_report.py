"""Time the report runner as a user runs it: ``beyondauc demo`` and a TRUE-sized report, --jobs 1 vs 2.

Runs the ``beyondauc`` command line in a child process, ``--quiet``, into a
temporary folder, for

* ``beyondauc demo`` (the embedded demo benchmark: 8 datasets, 8 models);
* ``beyondauc report true_like.csv``: a generated TRUE-sized benchmark (9
  datasets, 23,858 rows, 11 models; ``benchmarks/_synthetic.py``);

each with ``--jobs 1`` and ``--jobs 2``, and prints one row per case and jobs:
the wall time of the command, the notebooks executed, notebooks per second,
the share of notebook time spent starting kernels, the mean seconds per
notebook, the wall time during which no notebook was running (start-up,
loading the data, rendering, ``index.html``, the leaderboard) and the speed-up
of more jobs over one.

The per-notebook figures come from the executed notebooks the report keeps:
papermill records when it started a notebook (before the kernel), when each
cell started and ended, and when the notebook ended (after the kernel shut
down).  Kernel start = first cell start - notebook start.  One kernel runs per
notebook: models x 3 + 1 (the overview); the datasets are looped over inside
the notebooks, so the number of kernels does not grow with them.

Usage::

    python benchmarks/bench_report.py                  # demo and TRUE-sized, jobs 1 and 2 (~15 min on 2 cores)
    python benchmarks/bench_report.py --only demo      # only the demo (~5 min)
    python benchmarks/bench_report.py --repeats 2      # best of 2 runs per row
    python benchmarks/bench_report.py --wait-quiet 600 # start each run on an idle machine (shared hosts)
    python benchmarks/bench_report.py --pdf            # also every row with --pdf (WeasyPrint)

Writes ``benchmarks/results/bench_report.json`` (every run, every notebook).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _synthetic import true_like
from beyondauc import load_demo

#: Notebooks executed per model and once per report (see beyondauc.report).
PER_MODEL = ("auc_vs_accuracy", "test_auroc", "selective_answering")
OVERVIEW = "overview"

# Runs the command line with another notebook folder (--notebooks-dir, for trying the script
# itself before the notebooks exist); the workers get the notebook paths from this process.
_BOOTSTRAP = """\
import sys
from pathlib import Path
import beyondauc.report
folder = Path(sys.argv.pop(1))
beyondauc.report._notebooks_dir = lambda: folder
from beyondauc.cli import main
sys.exit(main(sys.argv[1:]))
"""


# -- running the command line ------------------------------------------------------------------

def cli_command(notebooks_dir=None):
    """The ``beyondauc`` console script of this interpreter's environment, else ``python -m``."""
    if notebooks_dir is not None:
        return [sys.executable, "-c", _BOOTSTRAP, str(Path(notebooks_dir).resolve())]
    script = Path(sys.executable).with_name("beyondauc")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "beyondauc.cli"]


def _kill_tree(pid):
    """Kill a process and every descendant (kernels run in sessions of their own)."""
    import psutil  # a dependency of ipykernel

    try:
        parent = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    procs = [*parent.children(recursive=True), parent]
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(procs, timeout=10)


def run_cli(base, args, cwd, timeout=None):
    """Run one command; (wall s, epoch start, epoch end, CPU s of it and its descendants, CompletedProcess).

    After ``timeout`` seconds the command and its descendants are killed; returncode is then None.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t_epoch = time.time()
    t0 = time.perf_counter()
    child = subprocess.Popen(base + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
        code = child.returncode
    except subprocess.TimeoutExpired:
        _kill_tree(child.pid)
        stdout, stderr = child.communicate()
        code = None
        stderr += f"\n[killed by bench_report.py after {timeout:g} s]"
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, t_epoch, t_epoch + wall, cpu, subprocess.CompletedProcess(child.args, code, stdout, stderr)


def wait_quiet(max_wait, limit=0.5):
    """Wait up to ``max_wait`` s for the 1-minute load average to fall below ``limit``; return it."""
    deadline = time.monotonic() + max_wait
    load = os.getloadavg()[0]
    while load >= limit and time.monotonic() < deadline:
        time.sleep(5)
        load = os.getloadavg()[0]
    return load


def notebook_hashes(notebooks_dir=None):
    """SHA-256 (first 12 hex digits) of the notebooks timed, to tell which version the numbers are of."""
    import beyondauc

    folder = Path(notebooks_dir) if notebooks_dir else Path(beyondauc.__file__).resolve().parent / "notebooks"
    return {p.stem: hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in sorted(folder.glob("*.ipynb"))}


# -- reading an executed report ---------------------------------------------------------------------

def _ts(text):
    return dt.datetime.fromisoformat(text).timestamp() if text else None


def notebook_times(path):
    """Timings of one executed notebook from its papermill metadata (epoch seconds)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    meta = nb.get("metadata", {}).get("papermill", {})
    start, end = _ts(meta.get("start_time")), _ts(meta.get("end_time"))
    cells = []
    for i, cell in enumerate(nb.get("cells", [])):
        pm = cell.get("metadata", {}).get("papermill", {})
        c0, c1 = _ts(pm.get("start_time")), _ts(pm.get("end_time"))
        if c0 is None:
            continue
        src = "".join(cell.get("source", "")) if isinstance(cell.get("source"), list) else cell.get("source", "")
        lines = [s.strip() for s in src.splitlines() if s.strip() and not s.strip().startswith("#")]
        cells.append({"index": i, "type": cell.get("cell_type"), "start": c0, "end": c1,
                      "seconds": None if c1 is None else c1 - c0,
                      "first_line": lines[0][:70] if lines else "", "tags": cell.get("metadata", {}).get("tags", [])})
    report = Path(path).parent.name
    report = report[1:].split(".new-")[0] if report.startswith(".") else report  # a staging folder
    rec = {"name": Path(path).stem, "report": report, "start": start, "end": end,
           "failed": bool(meta.get("exception")), "seconds": None, "kernel_start_s": None, "kernel_stop_s": None,
           "setup_s": None, "cells_s": None, "slowest_cell": None}
    if start is None or end is None or not cells:
        return rec
    rec["seconds"] = end - start
    rec["kernel_start_s"] = cells[0]["start"] - start
    ends = [c["end"] for c in cells if c["end"] is not None]
    if ends:
        rec["kernel_stop_s"] = end - max(ends)
        rec["cells_s"] = max(ends) - cells[0]["start"]
    timed = [c for c in cells if c["seconds"] is not None and c["type"] == "code"]
    # the set-up cell: the first code cell after the parameters (imports, loading the benchmark) --
    # paid once per kernel like the kernel start
    setup = [c for c in timed if not {"parameters", "injected-parameters"} & set(c["tags"])]
    if setup:
        rec["setup_s"] = setup[0]["seconds"]
    if timed:
        slow = max(timed, key=lambda c: c["seconds"])
        rec["slowest_cell"] = {"index": slow["index"], "seconds": slow["seconds"], "first_line": slow["first_line"]}
    return rec


def read_report(out_dir):
    """Every executed notebook of a report folder, and the HTML/PDF/index write times."""
    out_dir = Path(out_dir)
    notebooks, renders = [], []
    # a run killed by --timeout leaves the report it was building in a staging folder beside out
    staged = sorted(out_dir.parent.glob(f".{out_dir.name}.beyondauc-new-*"))
    if staged and not (out_dir / "models").is_dir():
        out_dir = staged[-1]
    folders = sorted(p for p in (out_dir / "models").iterdir() if p.is_dir()) if (out_dir / "models").is_dir() else []
    folders += [out_dir / "overview"]
    for folder in folders:
        runs = [notebook_times(p) for p in sorted(folder.glob("*.ipynb"))]
        notebooks += runs
        ends = [r["end"] for r in runs if r["end"] is not None]
        html = next(iter(folder.glob("*.html")), None)
        pdf = next(iter(folder.glob("*.pdf")), None)
        html_t = html.stat().st_mtime if html else None
        pdf_t = pdf.stat().st_mtime if pdf else None
        renders.append({
            "report": folder.name,
            "html_s": html_t - max(ends) if html_t and ends else None,  # reading the notebooks + nbconvert
            "pdf_s": pdf_t - html_t if pdf_t and html_t else None,       # WeasyPrint
            "done": pdf_t or html_t,
            "finished": not folder.name.startswith("."),
        })
    index = out_dir / "index.html"
    return notebooks, renders, index.stat().st_mtime if index.exists() else None


def _union(intervals):
    """Total length covered by a set of (start, end) intervals."""
    total, cur0, cur1 = 0.0, None, None
    for a, b in sorted(intervals):
        if cur1 is None or a > cur1:
            if cur1 is not None:
                total += cur1 - cur0
            cur0, cur1 = a, b
        else:
            cur1 = max(cur1, b)
    return total + (cur1 - cur0 if cur1 is not None else 0.0)


def summarize(wall, t_start, t_end, notebooks, renders, index_t):
    ok = [n for n in notebooks if n["seconds"] is not None]
    nb_s = sum(n["seconds"] for n in ok)
    kernel_s = sum(n["kernel_start_s"] for n in ok)
    stop_s = sum(n["kernel_stop_s"] or 0.0 for n in ok)
    setup_s = sum(n["setup_s"] or 0.0 for n in ok)
    busy = _union([(n["start"], n["end"]) for n in ok])
    first = min((n["start"] for n in ok), default=None)
    last = max((n["end"] for n in ok), default=None)
    done = max((r["done"] for r in renders if r["done"]), default=None)
    return {
        "wall_s": wall,
        "notebooks": len(ok),  # executed to the end (a failing cell ends a notebook too)
        "notebooks_unfinished": len(notebooks) - len(ok),
        "notebooks_failed": sum(n["failed"] for n in notebooks),
        "notebooks_per_s": len(ok) / wall,
        "notebook_s_sum": nb_s,
        "kernel_start_s_sum": kernel_s,
        "kernel_start_share": kernel_s / nb_s if nb_s else None,
        "kernel_stop_s_sum": stop_s,
        "kernel_stop_share": stop_s / nb_s if nb_s else None,
        "setup_cell_s_sum": setup_s,
        "setup_cell_share": setup_s / nb_s if nb_s else None,
        # per kernel: start + set-up cell + stop, what a notebook costs before and after its own work
        "fixed_share": (kernel_s + setup_s + stop_s) / nb_s if nb_s else None,
        "mean_s_per_notebook": nb_s / len(ok) if ok else None,
        # wall time with no notebook running: CLI start-up and data loading before the first one,
        # renderings not hidden behind another worker's notebook, index.html and the pool's shutdown
        "outside_notebooks_s": wall - busy,
        "before_first_notebook_s": first - t_start if first else None,
        "after_last_notebook_s": t_end - last if last else None,
        "html_render_s_sum": sum(r["html_s"] or 0.0 for r in renders),
        "pdf_render_s_sum": sum(r["pdf_s"] or 0.0 for r in renders),
        "index_s": index_t - done if index_t and done else None,  # also waits for the leaderboard
    }


# -- output ----------------------------------------------------------------------------------------

def _f(value, fmt):
    return "–" if value is None else format(value, fmt)


def md_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if i else ":" + "-" * (w + 1) for i, w in enumerate(widths)) + "|"
    print("\n".join([line(header), rule] + [line(r) for r in rows]))


def breakdown(notebooks):
    """Per notebook name: count, total / mean / max seconds, kernel start, slowest cell."""
    total = sum(n["seconds"] for n in notebooks if n["seconds"] is not None) or 1.0
    out = []
    for name in (*PER_MODEL, OVERVIEW):
        runs = [n for n in notebooks if n["name"] == name and n["seconds"] is not None]
        if not runs:
            continue
        secs = [n["seconds"] for n in runs]
        worst = max(runs, key=lambda n: n["seconds"])
        cells = [n["slowest_cell"] for n in runs if n["slowest_cell"]]
        slow = max(cells, key=lambda c: c["seconds"]) if cells else None
        out.append({
            "notebook": name, "runs": len(runs), "sum_s": sum(secs), "share": sum(secs) / total,
            "mean_s": sum(secs) / len(runs), "max_s": worst["seconds"], "max_report": worst["report"],
            "mean_kernel_start_s": sum(n["kernel_start_s"] for n in runs) / len(runs),
            "mean_kernel_stop_s": sum(n["kernel_stop_s"] or 0.0 for n in runs) / len(runs),
            "mean_setup_s": sum(n["setup_s"] or 0.0 for n in runs) / len(runs),
            "slowest_cell": slow,
        })
    return out


def print_breakdown(label, rows):
    print(f"\nPer notebook, {label}:\n")
    md_table(["notebook", "runs", "sum s", "share", "mean s", "max s (report)", "kernel start s", "set-up cell s",
              "kernel stop s", "slowest cell (s)"],
             [[r["notebook"], r["runs"], f"{r['sum_s']:.1f}", f"{r['share']:.0%}", f"{r['mean_s']:.2f}",
               f"{r['max_s']:.2f} ({r['max_report']})", f"{r['mean_kernel_start_s']:.2f}",
               f"{r['mean_setup_s']:.2f}", f"{r['mean_kernel_stop_s']:.2f}",
               f"#{r['slowest_cell']['index']} `{r['slowest_cell']['first_line']}` ({r['slowest_cell']['seconds']:.2f})"
               if r["slowest_cell"] else "–"] for r in rows])


# -- main ------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1, help="runs per row; the table shows the fastest (default: 1)")
    ap.add_argument("--only", choices=("demo", "true"), default=None, help="time only one case (default: both)")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="--jobs values to compare (default: 1 2)")
    ap.add_argument("--pdf", action="store_true", help="also time every row with --pdf")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the untimed one-model demo run that fills the caches first")
    ap.add_argument("--wait-quiet", type=float, default=0, metavar="SECONDS",
                    help="before each run, wait up to SECONDS for the 1-minute load average to fall below 0.5")
    ap.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                    help="kill a run after SECONDS; its table row then covers the notebooks that finished")
    ap.add_argument("--keep", metavar="DIR", default=None, help="keep the reports of the last runs in DIR")
    ap.add_argument("--notebooks-dir", default=None, help=argparse.SUPPRESS)  # stand-in notebooks, not the package's
    args = ap.parse_args()
    if args.repeats < 1 or any(j < 1 for j in args.jobs):
        ap.error("--repeats and --jobs must be >= 1")
    jobs_list = sorted(set(args.jobs))

    base = cli_command(args.notebooks_dir)
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    versions = {p: version(p) for p in ("beyondauc", "papermill", "nbconvert", "ipykernel", "jupyter_client")}
    rec = {"machine": {"cpu_count": cores, "usable_cores": usable, "python": platform.python_version(),
                       "platform": platform.platform(), **versions},
           "command": " ".join(Path(base[0]).name if i == 0 else ("<bootstrap>" if a == _BOOTSTRAP else a)
                               for i, a in enumerate(base)),
           "notebooks": "stand-ins (--notebooks-dir)" if args.notebooks_dir else "package",
           "notebook_sha256": notebook_hashes(args.notebooks_dir),
           "repeats": args.repeats, "jobs": jobs_list, "pdf": args.pdf, "cases": {}, "runs": []}
    print(f"machine: {cores} cores ({usable} usable); Python {platform.python_version()}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"command: {rec['command']} ... --jobs N --out <temp> --quiet"
          + ("  [stand-in notebooks: not the package's]" if args.notebooks_dir else ""))

    with tempfile.TemporaryDirectory(prefix="bench_report-") as tmp:
        tmp = Path(tmp)
        cases = {}
        if args.only in (None, "demo"):
            demo = load_demo()
            cases["demo"] = {"args": ["demo"], "models": len(demo.models), "datasets": len(demo.datasets),
                             "rows": len(demo)}
        if args.only in (None, "true"):
            df = true_like()
            csv = tmp / "true_like.csv"
            df.to_csv(csv, index=False)
            n_models = len(df.columns) - 2
            cases["true"] = {"args": ["report", str(csv)], "models": n_models,
                             "datasets": int(df["dataset"].nunique()), "rows": len(df)}
        for name, case in cases.items():
            case["kernels_expected"] = case["models"] * len(PER_MODEL) + 1
            rec["cases"][name] = {k: v for k, v in case.items() if k != "args"}
            print(f"case {name}: {case['datasets']} datasets, {case['models']} models, {case['rows']:,} rows -> "
                  f"{case['models']} x {len(PER_MODEL)} + 1 = {case['kernels_expected']} notebooks, one kernel each")

        if not args.no_warmup:  # byte-compiles, font cache, first kernel: not what a second run pays
            t = time.perf_counter()
            model = load_demo().models[0]
            *_, proc = run_cli(base, ["demo", "--models", model, "--jobs", "1", "--out", str(tmp / "warmup"),
                                      "--quiet"], tmp)
            print(f"warm-up (untimed): demo --models {model}: {time.perf_counter() - t:.1f} s, exit {proc.returncode}")
            if proc.returncode != 0:
                sys.exit("the warm-up run failed:\n" + (proc.stderr.strip() or proc.stdout.strip()))

        variants = [(c, p, j) for c in cases for p in ([False, True] if args.pdf else [False]) for j in jobs_list]
        best = {}
        for rep in range(args.repeats):
            for case, pdf, jobs in variants:
                out = tmp / f"{case}-{'pdf-' if pdf else ''}j{jobs}"
                if out.exists():
                    shutil.rmtree(out)
                cli_args = cases[case]["args"] + ["--jobs", str(jobs), "--out", str(out), "--quiet"]
                cli_args += ["--pdf"] if pdf else []
                load = wait_quiet(args.wait_quiet) if args.wait_quiet else os.getloadavg()[0]
                hashes = notebook_hashes(args.notebooks_dir)
                wall, t0, t1, cpu, proc = run_cli(base, cli_args, tmp, args.timeout)
                changed = sorted(k for k, v in notebook_hashes(args.notebooks_dir).items() if hashes.get(k) != v)
                notebooks, renders, index_t = read_report(out) if (out / "models").is_dir() else ([], [], None)
                s = summarize(wall, t0, t1, notebooks, renders, index_t)
                s.update(cpu_s=cpu, cpu_per_wall=cpu / wall, load_before=load, load_after=os.getloadavg()[0])
                run = {"case": case, "pdf": pdf, "jobs": jobs, "repeat": rep, "exit": proc.returncode,
                       "notebook_sha256": hashes, "notebooks_changed_during_run": changed,
                       "summary": s, "notebooks": notebooks, "renders": renders}
                if proc.returncode != 0:
                    run["stderr"] = proc.stderr[-4000:]
                    run["stdout"] = proc.stdout[-4000:]
                rec["runs"].append(run)
                tag = f"{case}{' + pdf' if pdf else ''}, --jobs {jobs}, run {rep + 1}/{args.repeats}"
                status = ("ok" if proc.returncode == 0 else "KILLED (--timeout)" if proc.returncode is None
                          else f"EXIT {proc.returncode}")
                print(f"  {tag}: {wall:.1f} s, {s['notebooks']} notebooks ({s['notebooks_failed']} failed), "
                      f"CPU {cpu:.1f} s ({cpu / wall:.2f} cores busy), load average before/after "
                      f"{load:.2f}/{s['load_after']:.2f}, {status}", flush=True)
                if hashes != rec["notebook_sha256"] or changed:
                    print(f"    WARNING: notebooks changed since the first run or during this one "
                          f"({', '.join(changed) or 'before it'}): rows may compare different notebooks")
                if proc.returncode != 0:
                    print("    " + (proc.stderr.strip() or proc.stdout.strip()).replace("\n", "\n    ")[-2000:])
                key = (case, pdf, jobs)
                if key not in best or wall < best[key]["summary"]["wall_s"]:
                    best[key] = run
                if args.keep and out.is_dir():
                    dest = Path(args.keep) / out.name
                    if dest.exists():
                        shutil.rmtree(dest)
                    shutil.copytree(out, dest)

    print(f"\nbeyondauc report, wall time of the command ({'best of ' + str(args.repeats) if args.repeats > 1 else 'one run'} "
          f"per row); kernel-start share = sum(first cell start - notebook start) / sum(notebook time); "
          f"outside notebooks = wall time with no notebook running; speed-up = wall(--jobs {jobs_list[0]}) / wall\n")
    rows, table = [], []
    for case, pdf, jobs in variants:
        run = best[(case, pdf, jobs)]
        s = run["summary"]
        ref = best[(case, pdf, jobs_list[0])]["summary"]["wall_s"]
        s["speedup"] = ref / s["wall_s"]
        label = f"{case}{' + pdf' if pdf else ''}"
        label += "" if run["exit"] == 0 else " (KILLED: partial)" if run["exit"] is None else " (FAILED)"
        rows.append([label, jobs, f"{s['wall_s']:.1f}", s["notebooks"], f"{s['notebooks_per_s']:.3f}",
                     _f(s["kernel_start_share"], ".1%"), _f(s["mean_s_per_notebook"], ".2f"),
                     f"{s['outside_notebooks_s']:.1f}", f"{s['speedup']:.2f}x"])
        table.append({"case": case, "pdf": pdf, "jobs": jobs, "exit": run["exit"], **s})
    md_table(["case", "jobs", "wall s", "notebooks", "notebooks/s", "kernel-start share", "mean s/notebook",
              "outside notebooks s", "speed-up"], rows)
    rec["table"] = table

    print("\nWhere the time outside the notebooks goes (same runs); set-up cell = the first code cell after the "
          "parameters (imports, loading the benchmark); fixed share per kernel = (kernel start + set-up cell + "
          "kernel stop) / notebook time:\n")
    md_table(["case", "jobs", "before 1st notebook s", "after last notebook s", "HTML render s (sum)",
              "PDF render s (sum)", "index.html s", "set-up cell share", "kernel stop share",
              "fixed share per kernel", "CPU s", "cores busy", "load avg before"],
             [[f"{t['case']}{' + pdf' if t['pdf'] else ''}", t["jobs"], _f(t["before_first_notebook_s"], ".1f"),
               _f(t["after_last_notebook_s"], ".1f"), f"{t['html_render_s_sum']:.1f}",
               f"{t['pdf_render_s_sum']:.1f}" if t["pdf"] else "–", _f(t["index_s"], ".2f"),
               _f(t["setup_cell_share"], ".1%"), _f(t["kernel_stop_share"], ".1%"), _f(t["fixed_share"], ".1%"),
               f"{t['cpu_s']:.1f}", f"{t['cpu_per_wall']:.2f}",
               f"{t['load_before']:.2f}"] for t in table])
    for case in cases:
        c = rec["cases"][case]
        counts = {t["notebooks"] for t in table if t["case"] == case}
        print(f"\n{case}: kernels started = {c['models']} models x {len(PER_MODEL)} + 1 overview = "
              f"{c['kernels_expected']} for {c['datasets']} datasets (measured: {', '.join(map(str, sorted(counts)))})")

    rec["breakdown"] = {}
    for case in cases:
        run = best[(case, False, jobs_list[0])]
        rows = breakdown(run["notebooks"])
        rec["breakdown"][case] = {"jobs": jobs_list[0], "notebooks": rows}
        note = " (one notebook at a time)" if jobs_list[0] == 1 else ""
        print_breakdown(f"{case}, --jobs {jobs_list[0]}{note}", rows)

    out = HERE / "results" / "bench_report.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rec, indent=1, default=float))
    print(f"\nwrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
