"""What one bootstrap replicate of ``evaluate`` costs: the measurement behind ``n_bootstrap``'s bound.

Runs ``beyondauc evaluate demo --jobs 1`` (8 models x 8 datasets, everything in one
process) in a fresh process per run, for each ``--replicates`` count, and prints
each run's CPU seconds (user + system: a machine shared with other jobs inflates
them less than wall time) and peak resident memory, the median over ``--runs``
runs, and the cost of a replicate: the slope between the smallest and the largest
count.  ``beyondauc.metrics.uncertainty.bootstrap.REPLICATE_COST`` holds the figures the
refusal of a larger ``n_bootstrap`` quotes (Linux: peak memory from
``getrusage``'s ``ru_maxrss`` in KiB).

Usage::

    python benchmarks/bench_replicate_cost.py --replicates 0 1000 3000 --runs 1
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def one_run(n_bootstrap: int) -> tuple[float, float]:
    """(CPU seconds, peak memory in bytes) of one ``evaluate demo`` with ``n_bootstrap`` replicates, in a new
    process (``RUSAGE_CHILDREN`` after it ends: that process alone, as runs are sequential and waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "beyondauc.cli",
                "evaluate",
                "demo",
                "--out",
                str(Path(tmp) / "ev"),
                "-p",
                f"n_bootstrap={n_bootstrap}",
                "--jobs",
                "1",
                "--quiet",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss * 1024.0  # the largest child so far: runs go from few replicates to many


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, nargs="+", default=[0, 1000, 3000])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    counts = sorted(args.replicates)
    medians = {}
    for b in counts:
        runs = [one_run(b) for _ in range(args.runs)]
        cpu = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        medians[b] = (cpu, peak)
        print(f"n_bootstrap={b:>6}: {cpu:7.1f} CPU s, peak {peak / 2**20:7.1f} MiB", flush=True)
    lo, hi = counts[0], counts[-1]
    if hi > lo:
        per_cpu = (medians[hi][0] - medians[lo][0]) / (hi - lo)
        per_mem = (medians[hi][1] - medians[lo][1]) / (hi - lo)
        print(f"per replicate: {per_cpu * 1000:.1f} ms of CPU, {per_mem / 1000:.0f} kB of peak memory")


if __name__ == "__main__":
    main()
