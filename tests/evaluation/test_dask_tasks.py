"""The evaluation's tasks and a report on a real 2-worker Dask ``LocalCluster`` without a shared file system.

- ``evaluate`` gives the same tables, exactly, in this process, in two local
  processes and on the cluster (the tasks' results are concatenated, so the
  split cannot change a number);
- ``run_report(dask=...)``: every worker runs in a folder of its own (its
  ``local_directory``, also its working directory), an audit hook in each
  worker records every file it opens for writing, and the test asserts that no
  worker wrote into the client's folder while each wrote its reports into its
  own; the client writes the files the workers send back;
- the index's numbers are those of a local run, and the evaluation's tasks ran
  on the workers (the scheduler's task stream: their compute time).
"""

from __future__ import annotations

import io
import os
import re
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import beyondauc as ba
import beyondauc.metrics.calibration.grid_chunks as grid_chunks
from helpers.report import NOTEBOOKS, parse_html

distributed = pytest.importorskip("distributed")

MODELS, DATASETS = ["svm", "knn"], ["wine", "diabetes"]
PARAMETERS = {"n_bootstrap": 10, "n_repeats": 2, "noise_repeats": 2, "n_points": 5}
EVALUATION_TASKS = ("grid_task", "bootstrap_task", "cohort_task")  # the task prefixes of evaluate's stages


def _watch_writes(dask_worker):
    """On a worker: work in its own folder, and record every path it opens for writing, creates or renames."""
    import sys

    os.chdir(dask_worker.local_directory)
    written = []
    flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def hook(event, args):
        path = None
        if event == "open":
            mode, how = args[1], args[2]
            if (mode and any(c in mode for c in "wax+")) or (not mode and isinstance(how, int) and how & flags):
                path = args[0]
        elif event == "os.mkdir":
            path = args[0]
        elif event in ("os.rename", "os.replace"):
            path = args[1]  # the destination
        if isinstance(path, (str, bytes, os.PathLike)):  # not a file descriptor
            written.append(os.path.abspath(os.fsdecode(path)))

    sys.addaudithook(hook)  # the worker process ends with the cluster
    dask_worker.beyondauc_written = written
    return os.getcwd()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    workers = tmp_path_factory.mktemp("workers")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, local_directory=str(workers)
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        cwd = client.run(_watch_writes)
        yield {"cluster": cluster, "client": client, "cwd": cwd, "workers": workers}


def test_evaluate_gives_the_same_tables_in_any_split(cluster, monkeypatch):
    small = dict(
        models=["svm", "knn", "mlp"], datasets=["wine", "diabetes"], noise_repeats=2, n_bootstrap=10, n_repeats=3
    )
    one = ba.evaluate("demo", n_jobs=1, **small)  # the bootstrap: one task per model
    monkeypatch.setattr(grid_chunks, "MIN_CHUNK", 4)  # 3 models, 2 workers: two chunks of 5 replicates per model
    two = ba.evaluate("demo", n_jobs=2, **small)
    with distributed.get_task_stream(cluster["client"]) as stream:
        on_dask = ba.evaluate("demo", dask=cluster["cluster"].scheduler_address, **small)  # (the report: a Client)
    keys = [t["key"] for t in stream.data if isinstance(t["key"], str)]
    assert len([k for k in keys if k.rsplit("-", 1)[0] == "bootstrap_task"]) == 3 * 2  # the cluster's 2 threads
    assert len(one.tables) > 20
    for name, table in one.tables.items():
        assert len(table.columns), name
        pd.testing.assert_frame_equal(table, two.tables[name], check_exact=True, obj=f"n_jobs=2: {name}")
        pd.testing.assert_frame_equal(table, on_dask.tables[name], check_exact=True, obj=f"dask: {name}")


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory):
    client_dir = tmp_path_factory.mktemp("client")
    local = ba.run_report(
        "demo",
        models=MODELS,
        datasets=DATASETS,
        out=client_dir / "local",
        jobs=1,
        progress=False,
        parameters=PARAMETERS,
    )
    client = cluster["client"]
    with distributed.get_task_stream(client) as stream:
        t0 = time.perf_counter()
        remote = ba.run_report(
            "demo",
            models=MODELS,
            datasets=DATASETS,
            out=client_dir / "dask",
            progress=False,
            parameters=PARAMETERS,
            dask=cluster["cluster"].scheduler_address,
        )
        seconds = time.perf_counter() - t0
    written = client.run(lambda dask_worker: list(dask_worker.beyondauc_written))
    directories = client.run(lambda dask_worker: dask_worker.local_directory)
    return {
        "local": local,
        "dask": remote,
        "client_dir": client_dir,
        "stream": stream.data,
        "seconds": seconds,
        "written": written,
        "directories": directories,
    }


def _leaderboard_text(out):
    return parse_html((Path(out) / "index.html").read_text(encoding="utf-8")).marked("leaderboard")[0].text


def test_dask_report_has_the_numbers_of_the_local_one(runs):
    local, remote = runs["local"], runs["dask"]
    assert local.ok and remote.ok, (local.summary(), remote.summary())
    text = _leaderboard_text(remote.out_dir)
    assert all(m in text for m in MODELS) and any(c.isdigit() for c in text)
    assert text == _leaderboard_text(local.out_dir)
    pd.testing.assert_frame_equal(remote.leaderboard, local.leaderboard, check_exact=True)
    for model in MODELS:
        folder = remote.out_dir / "models" / model
        assert sorted(os.listdir(folder)) == sorted(["report.html", *(f"{n}.ipynb" for n in NOTEBOOKS)])
        assert parse_html((folder / "report.html").read_text(encoding="utf-8")).find_all("img")


def test_dask_workers_write_only_in_their_own_folders(cluster, runs):
    client_cwd = os.getcwd()
    assert len(cluster["cwd"]) == 2 and all(cwd != client_cwd for cwd in cluster["cwd"].values())
    client_dir = str(runs["client_dir"].resolve())
    for worker, paths in runs["written"].items():
        own = str(Path(runs["directories"][worker]).resolve())
        assert not [p for p in paths if p.startswith(client_dir)], worker  # nothing in the client's folder
        reports = [p for p in paths if p.endswith(("report.html", "overview.html"))]
        assert reports and all(p.startswith(own) for p in reports), (worker, reports)  # written, in its own folder
    folders = runs["directories"].values()
    assert not [p for d in folders for p in Path(d).rglob("beyondauc-report-*")]  # the temporary folders are gone


def test_the_evaluation_runs_on_the_workers(cluster, runs):
    workers = set(cluster["cluster"].scheduler.workers)
    computed = {}
    for task in runs["stream"]:
        prefix = task["key"].rsplit("-", 1)[0] if isinstance(task["key"], str) else ""
        if prefix in EVALUATION_TASKS:
            assert task["worker"] in workers
            spent = sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
            computed.setdefault(prefix, []).append(spent)
    n_models, n_datasets = len(runs["dask"].evaluation.models), len(DATASETS)  # every model: --models picks reports
    assert n_models > len(MODELS)
    assert {k: len(v) for k, v in computed.items()} == {
        "grid_task": n_models,
        "bootstrap_task": n_models,
        "cohort_task": n_models * n_datasets,
    }
    timing = runs["dask"].evaluation.timing
    stages = sum(v for k, v in timing.items() if k.startswith(("calibration grid", "bootstrap", "cohort")))
    on_workers = sum(sum(v) for v in computed.values())
    assert on_workers > 0.3 * stages, (on_workers, timing)


# -- without the cluster: what a task receives, the bars -------------------------------------------


def _part_of(part, key, arg):
    return part.models, len(part), arg


def test_a_task_receives_its_models_rows_only_in_task_order():
    from beyondauc.evaluation.stages import one_model
    from beyondauc.utils.tasks import run_tasks

    bench = ba.load_demo().subset(models=["svm", "knn", "mlp"], datasets=["wine", "diabetes"])
    tasks = [(m, d) for m in bench.models for d in bench.datasets]
    for n_jobs in (1, 2):
        got = run_tasks(_part_of, tasks, data=bench, view=one_model, n_jobs=n_jobs)
        assert got == [((m,), len(bench), d) for m, d in tasks]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_a_bar_per_stage_counts_its_tasks_with_the_time_left_on_a_terminal(monkeypatch, terminal):
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    ba.evaluate(
        "demo",
        models=["svm", "knn"],
        datasets=["wine", "diabetes"],
        n_jobs=1,
        n_bootstrap=5,
        noise_repeats=2,
        n_repeats=2,
        progress=True,
    )
    text = err.getvalue()
    lines = [line for line in text.replace("\r", "\n").splitlines() if line.startswith("beyondauc evaluate:")]
    assert [line.rsplit(" ", 2)[0] for line in lines] == [
        "beyondauc evaluate: calibration grid and calibration error",
        "beyondauc evaluate: bootstrap of the headline setting",
        "beyondauc evaluate: tables of the paper",
        "beyondauc evaluate: cohort diagnostics and selective answering",
        "beyondauc evaluate: abstention with a guarantee",
        "beyondauc evaluate: calibration of the given confidence",
    ]
    bars = re.findall(r"\rbeyondauc ([a-z ]+): +(\d+)%\|[^|]*\| (\d+)/(\d+) \[\d\d:\d\d<(\d\d:\d\d|\?)", text)
    if not terminal:
        assert bars == [] and "\r" not in text  # a log file gets the stage lines only
        return
    final = {stage: (done, total) for stage, _, done, total, _ in bars}
    assert final == {
        "calibration grid": ("2", "2"),
        "bootstrap": ("2", "2"),
        "cohort diagnostics and selective answering": ("4", "4"),
    }
    assert any(left != "?" for *_, left in bars)  # the time left, estimated once a task is done


@pytest.mark.parametrize(
    "bad, error, needle",
    [
        ({"dask": 8786}, TypeError, "`dask` must be a scheduler address"),
        ({"n_jobs": 0}, ValueError, "`n_jobs` must be an int >= 1 or -1"),
        ({"n_jobs": 1.5}, ValueError, "`n_jobs`"),
    ],
)
def test_bad_runner_options_are_refused_before_any_work(monkeypatch, bad, error, needle):
    import beyondauc.evaluation.pipeline as pipeline

    monkeypatch.setattr(pipeline, "_open", lambda *a: pytest.fail("the data was read"))
    with pytest.raises(error, match=re.escape(needle)):
        ba.evaluate("demo", **bad)


def test_warnings_are_said_once_the_same_whatever_the_split():
    import warnings

    frame = ba.load_demo().subset(models=["svm", "knn"], datasets=["wine", "diabetes"]).frame.copy()
    frame.loc[frame["dataset"] == "wine", "label"] = 1  # a dataset with a single class, said when read
    said = []
    for n_jobs in (1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ba.evaluate(frame, n_jobs=n_jobs, n_bootstrap=5, noise_repeats=2, n_repeats=2, n_points=5)
        said.append([(w.category.__name__, str(w.message)) for w in caught])
    assert said[0] == said[1]
    single = [m for _, m in said[0] if "has a single class" in m]
    assert len(single) == 1, said[0]  # once, when the data was read; not again by each model's task
    assert len(said[0]) == len(set(said[0]))
