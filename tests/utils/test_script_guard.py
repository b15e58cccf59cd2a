"""A script runs as written: no ``if __name__ == "__main__":`` guard is needed around run_report or evaluate.

Workers started by ``spawn`` (the report's workers everywhere; every pool where ``fork`` does not exist)
import the parent's main module before their first task, which runs an unguarded script's top level
again in every worker and, with the standard library's pool, ends in ``BrokenProcessPool``. The package's
pools start their workers with ``__main__`` hidden (``beyondauc.utils.parallel.script_hidden``). Each test
runs a real script file in a subprocess; the script appends a line to a file each time its top level
runs, so "ran once" is checked, not assumed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import beyondauc as ba
from helpers.report import tiny_notebooks

PACKAGE_ROOT = Path(ba.__file__).resolve().parents[1]

HEADER = """\
import json, multiprocessing, os, sys
with open(sys.argv[1], "a") as f:  # one line each time this top level runs
    f.write(f"{os.getpid()}\\n")
"""


def script(tmp_path, body, *, guard, name="run_me.py"):
    """Write HEADER + body (under the guard or not) as ``name`` in ``tmp_path``; return its path."""
    lines = body.strip("\n").splitlines()
    if guard:
        lines = ['if __name__ == "__main__":'] + [f"    {line}" for line in lines]
    path = tmp_path / name
    path.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_script(path, *, module=False, timeout=240):
    """Run the script (or ``python -m`` its module) in ``path``'s folder: (process, top-level runs)."""
    marker = path.with_suffix(".runs")
    marker.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])}
    target = ["-m", path.stem] if module else [str(path)]
    proc = subprocess.run(
        [sys.executable, *target, str(marker)],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    runs = marker.read_text().split() if marker.exists() else []
    return proc, runs


POOL = """
from beyondauc.utils.parallel import process_pool
with process_pool(2, multiprocessing.get_context("spawn")) as ex:
    values = list(ex.map(abs, [-1, -2, -3]))
    pids = {ex.submit(os.getpid).result() for _ in range(4)}
print(json.dumps({"values": values, "workers": sorted(pids), "me": os.getpid()}))
"""


@pytest.mark.parametrize("guard", [False, True])
@pytest.mark.parametrize("module", [False, True], ids=["file", "module"])
def test_a_spawn_pool_of_the_package_runs_a_script_once_with_or_without_guard(tmp_path, guard, module):
    proc, runs = run_script(script(tmp_path, POOL, guard=guard), module=module)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["values"] == [1, 2, 3]
    assert out["me"] not in out["workers"]  # the tasks ran in other processes
    assert runs == [str(out["me"])]  # and the script's top level ran once, in this process only


def test_the_standard_library_pool_breaks_on_the_same_script(tmp_path):
    """The control: what a script without guard meets with a plain spawn pool (so the tests above can fail)."""
    body = POOL.replace("from beyondauc.utils.parallel import process_pool", "import concurrent.futures").replace(
        'process_pool(2, multiprocessing.get_context("spawn"))',
        'concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))',
    )
    proc, runs = run_script(script(tmp_path, body, guard=False))
    assert proc.returncode != 0 and "BrokenProcessPool" in proc.stderr
    assert len(runs) > 1  # the workers ran the script again


def test_the_stand_in_main_is_put_back():
    """The stand-in is the package's ``_spawn_main.py`` (what a spawned worker runs first), never the script."""
    from beyondauc.utils.parallel import SPAWN_MAIN, script_hidden

    main = sys.modules["__main__"]
    with script_hidden("spawn"):
        hidden = sys.modules["__main__"]
    assert sys.modules["__main__"] is main
    assert hidden is not main
    assert hidden.__file__ == SPAWN_MAIN and hidden.__spec__ is None
    assert Path(SPAWN_MAIN).parent == Path(ba.utils.parallel.__file__).resolve().parent
    with script_hidden("fork"):  # forked workers copy the parent: nothing to hide
        assert sys.modules["__main__"] is main


EVALUATE = """
import beyondauc as ba
import beyondauc.utils.tasks, beyondauc.metrics.calibration.grid, beyondauc.metrics.calibration.grid_bootstrap
spawn = lambda: multiprocessing.get_context("spawn")  # as where fork does not exist (Windows)
for module in (ba.utils.tasks, ba.metrics.calibration.grid, ba.metrics.calibration.grid_bootstrap):
    module.pool_context = spawn
ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "knn", "mlp"], n_jobs=2, n_bootstrap=5,
                 n_repeats=2, noise_repeats=2, n_points=5)
print(ev.table("leaderboard").to_json(orient="records", double_precision=15))
"""


def test_evaluate_with_spawned_workers_runs_a_script_without_guard_once(tmp_path):
    proc, runs = run_script(script(tmp_path, EVALUATE, guard=False))
    assert proc.returncode == 0, proc.stderr
    assert len(runs) == 1
    got = pd.DataFrame(json.loads(proc.stdout.strip().splitlines()[-1]))
    want = ba.evaluate(
        "demo",
        datasets=["wine", "diabetes"],
        models=["svm", "knn", "mlp"],
        n_jobs=1,
        n_bootstrap=5,
        n_repeats=2,
        noise_repeats=2,
        n_points=5,
    ).table("leaderboard")
    for column in ("auc", "accuracy", "accuracy_low", "accuracy_high", "disca", "drift"):  # n_jobs changes nothing
        assert got[column].tolist() == pytest.approx(want[column].tolist(), rel=1e-12, nan_ok=True), column


#: The report's notebooks are cut to a cell (``{notebooks}``): what is tested is how its workers start.
REPORT = """
import beyondauc as ba
result = ba.run_report("demo", models="svm,knn", datasets="wine,diabetes", out="report", jobs=2, progress=False,
                       parameters={{"n_bootstrap": 0, "n_repeats": 2, "noise_repeats": 2, "n_points": 5}},
                       notebooks_dir={notebooks!r})
print(json.dumps({{"ok": result.ok, "summary": result.summary()}}))
"""


def test_run_report_in_a_script_without_guard_writes_the_report(tmp_path):
    notebooks = tiny_notebooks(Path(__file__).resolve().parents[2] / "notebooks", tmp_path / "notebooks")
    proc, runs = run_script(script(tmp_path, REPORT.format(notebooks=str(notebooks)), guard=False))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ok"], out["summary"]
    assert len(runs) == 1
    assert (tmp_path / "report" / "index.html").is_file()
    assert sorted(p.name for p in (tmp_path / "report" / "models").iterdir()) == ["knn", "svm"]
