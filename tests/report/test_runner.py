"""Tests of the report runner (``beyondauc.report.run_report`` and ``beyondauc report|demo``).

A few real runs of the real notebooks are shared by module fixtures, because a
notebook costs a kernel and seconds:

* ``hostile``: four models named to break HTML, paths and ASCII, two datasets,
  two local workers, PDF;
* ``broken``: through the CLI, one model whose ``test_auroc`` raises (a copy of
  the notebooks with one more cell) next to a healthy one, with code and
  ``-p protocol=indata``;
* ``rerun``: a copy of ``broken``'s folder run again with the healthy model only,
  on a two-process Dask ``LocalCluster``;
* ``demo_cli``: ``beyondauc demo`` on one model and two datasets.

Everything else (names, atomic writes, bad input) runs no notebook.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.parse
from importlib import resources
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import beyondauc
from beyondauc.report import (
    ModelReport,
    NotebookRun,
    ReportResult,
    leaderboard,
    open_benchmark,
    run_report,
    safe_name,
)
from beyondauc.report import runner as report
from beyondauc.report.render import render_html
from beyondauc.utils.output import MANIFEST, ReportFolder, atomic_write
from helpers.cli import check_single_error, run
from helpers.report import (
    ANALYSES,
    BOOM,
    BROKEN,
    CLI_WITH_NOTEBOOKS,
    DATASETS,
    FAILING_NOTEBOOK,
    HEALTHY,
    HOSTILE,
    NOTEBOOKS,
    SCRIPT,
    broken_frame,
    hostile_frame,
    manifest_files,
    notebooks_with_failure,
    parse_html,
    sha256_file,
    spy_run_report,
    summary_pages_and_thin_pages,
    tiny_notebooks,
)

REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@functools.cache
def page(path):
    """Parsed HTML of a file (cached: the reports are megabytes)."""
    return parse_html(Path(path).read_text(encoding="utf-8"))


def texts(root, marker):
    return [e.text for e in root.marked(marker)]


def one_text(root, marker):
    found = texts(root, marker)
    assert len(found) == 1, (marker, found)
    return found[0]


def dotfiles(folder):
    """Temp files and staging folders (all named ``.something``) anywhere below ``folder``, but the manifest."""
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob(".*") if p.name != MANIFEST)


def leftovers(out):
    """Lock and staging entries of ``out``'s runs: inside it, or beside it (where the previous version put them)."""
    inside = (
        [p.name for p in Path(out).iterdir() if p.name.startswith((".beyondauc.lock", ".beyondauc-staging"))]
        if Path(out).is_dir()
        else []
    )
    beside = [p.name for p in Path(out).parent.iterdir() if p.name.startswith(f".{Path(out).name}.beyondauc")]
    return sorted(inside + beside)


# -- the shared runs -----------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    data = base / "scores.csv"
    hostile_frame().to_csv(data, index=False)
    assert os.environ.get("MPLBACKEND") == "Agg"  # the runner must still get inline images
    start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    result = run_report(str(data), out=base / "out", jobs=2, pdf=True, progress=False)
    end = dt.datetime.now(dt.timezone.utc)
    return {"data": data, "out": base / "out", "result": result, "start": start, "end": end}


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    base = tmp_path_factory.mktemp("broken")
    data = base / "scores.csv"
    broken_frame().to_csv(data, index=False)
    nbdir = notebooks_with_failure(REPO_NOTEBOOKS, base / "notebooks")
    argv = [
        "report",
        str(data),
        "--out",
        str(base / "out"),
        "--jobs",
        "2",
        "--quiet",
        "--include-code",
        "-p",
        "protocol=indata",
        "-p",
        "n_repeats=2",
    ]
    with spy_run_report(notebooks_dir=nbdir) as calls:
        code, stdout = run(argv)
    assert len(calls) == 1
    kwargs, result = calls[0]
    return {
        "data": data,
        "out": base / "out",
        "nbdir": nbdir,
        "code": code,
        "stdout": stdout,
        "kwargs": kwargs,
        "result": result,
    }


@pytest.fixture(scope="module")
def rerun(broken, tmp_path_factory):
    """``broken``'s output copied, then run again with the healthy model only, on Dask."""
    from distributed import LocalCluster

    out = tmp_path_factory.mktemp("rerun") / "out"
    shutil.copytree(broken["out"], out)
    for rel, data in USER_FILES.items():  # the user's files in our report folder, one in the model not re-run
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    before = {str(p.relative_to(out)): (p.stat().st_mtime_ns, sha256_file(p)) for p in out.rglob("*") if p.is_file()}
    time.sleep(0.01)  # coarse file-system clocks
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        argv = [
            "report",
            str(broken["data"]),
            "--models",
            HEALTHY,
            "--out",
            str(out),
            "--quiet",
            "--dask",
            cluster.scheduler_address,
        ]
        with spy_run_report() as calls:
            code, stdout = run(argv)
        prefixes = set(cluster.scheduler.task_prefixes)
        address = cluster.scheduler_address
    kwargs, result = calls[0]
    return {
        "out": out,
        "before": before,
        "code": code,
        "stdout": stdout,
        "kwargs": kwargs,
        "result": result,
        "prefixes": prefixes,
        "address": address,
    }


USER_FILES = {
    f"models/{BROKEN}/weights.pt": b"\x00weights",
    "overview/my_slides.pptx": b"slides",
    f"models/{HEALTHY}/notes.md": b"notes",
    "mine/data.csv": b"a,b\n",
}


@pytest.fixture(scope="module")
def demo_cli(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    with spy_run_report() as calls:
        code, stdout = run(
            ["demo", "--out", str(out), "--models", "svm", "--datasets", ",".join(DATASETS), "--jobs", "1", "--quiet"]
        )
    return {"out": out, "code": code, "stdout": stdout, "result": calls[0][1] if calls else None}


# -- safe_name -------------------------------------------------------------------

ROOT = Path(tempfile.gettempdir()).resolve() / "beyondauc-safe-name"


def check_safe(name, result):
    assert isinstance(result, str) and result
    assert "/" not in result and "\\" not in result and "\0" not in result
    assert not result.startswith(".")
    assert not result.endswith(".")
    assert len(result.encode("utf-8")) <= 255
    assert re.fullmatch(r"[\w.-]+", result)
    assert (ROOT / result).resolve().parent == ROOT
    assert unicodedata.normalize("NFC", result) == result


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("svm", "svm"),
        ("a_b", "a_b"),
        ("grad-boost.v2", "grad-boost.v2"),
        ("modèle", "modèle"),
        ("../x", "x-72e4d01d"),  # the docstring's examples
        ("modèle 1", "modèle_1-9f6f6f25"),
    ],
)
def test_safe_name_examples(name, expected):
    assert safe_name(name) == expected


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("../x", "x-"),
        ("a/b", "a_b-"),
        ("a\\b", "a_b-"),
        ("a b", "a_b-"),
        ("..", "model-"),
        (".", "model-"),
        ("", "model-"),
        ("/", "model-"),
        ("\0", "model-"),
        ("   ", "model-"),
        ("_", "model-"),
        (".hidden", "hidden-"),
        ("x.", "x-"),
        ("../../etc/passwd", "etc_passwd-"),
        ("<script>alert(1)</script>", "script_alert_1_script_-"),
        ("e\u0301", "é-"),  # decomposed: NFC letter, but the name differs so it is hashed
    ],
)
def test_safe_name_cleans_and_hashes(name, prefix):
    result = safe_name(name)
    assert result.startswith(prefix)
    assert re.fullmatch(re.escape(prefix) + r"[0-9a-f]{8}", result), result
    check_safe(name, result)


@pytest.mark.parametrize("name", ["x" * 300, "é" * 300, "日本" * 200, "😀" * 100, "a/" * 200])
def test_safe_name_long_names_fit_a_file_name(name):
    result = safe_name(name)
    check_safe(name, result)
    assert result != safe_name(name[:-1])


def test_safe_name_distinct_for_look_alikes():
    names = ["a/b", "a_b", "a b", "a\\b", "a//b", "a__b", "A_b", "a_b.", "_a_b", ".a_b", "a/b/", "../a_b"]
    results = [safe_name(n) for n in names]
    assert len(set(results)) == len(names), dict(zip(names, results))


def test_safe_name_safe_name_of_a_cleaned_name_is_distinct():
    assert safe_name("a_b-3ec69c85") != safe_name("a/b")


@given(st.text())
@example("..")
@example("\x00/..\\")
@example("." * 300)
def test_safe_name_property_stays_in_its_folder(name):
    check_safe(name, safe_name(name))


HOSTILE_CHARS = st.lists(st.sampled_from([*"ab/_. -\\é", "e\u0301", "\0", "-3ec69c8"]), max_size=8).map("".join)


@given(st.lists(st.one_of(st.text(), HOSTILE_CHARS), unique=True, max_size=20))
@example(["a/b", "a_b", "a b", "a_b-", ".a_b", "a_b."])
def test_safe_name_property_distinct_names_distinct_results(names):
    results = [safe_name(n) for n in names]
    assert len(set(results)) == len(results), dict(zip(names, results))


@given(st.from_regex(r"\A[A-Za-z0-9é][A-Za-z0-9é_.-]{0,60}[A-Za-z0-9é_-]\Z"))
def test_safe_name_property_idempotent_on_safe_names(name):
    assert safe_name(name) == name
    assert safe_name(safe_name(name)) == name


@pytest.mark.parametrize("name", [None, 1, b"svm", ["svm"]])
def test_safe_name_rejects_non_str(name):
    with pytest.raises(TypeError, match="`name`"):
        safe_name(name)


# -- atomic writes ---------------------------------------------------------------


@pytest.mark.parametrize("data", ["text é\n", b"\x00\x01bytes"])
def test_atomic_write_writes_and_leaves_no_temp(tmp_path, data):
    target = tmp_path / "report.html"
    target.write_text("old")
    atomic_write(target, data)
    expected = data.encode("utf-8") if isinstance(data, str) else data
    assert target.read_bytes() == expected
    assert sorted(os.listdir(tmp_path)) == ["report.html"]
    assert target.stat().st_mode & 0o777 == 0o644  # shareable, not mkstemp's 0o600


def _raise_oserror(*args, **kwargs):
    raise OSError("disk full (test)")


@pytest.mark.parametrize(
    ("where", "data", "error"),
    [
        ("replace", "new", OSError),
        ("chmod", "new", OSError),
        (None, 12345, TypeError),  # fails inside the write
    ],
)
def test_atomic_write_failure_keeps_old_file_and_no_temp(tmp_path, monkeypatch, where, data, error):
    target = tmp_path / "index.html"
    target.write_text("old content")
    if where:
        monkeypatch.setattr(os, where, _raise_oserror)
    with pytest.raises(error):
        atomic_write(target, data)
    monkeypatch.undo()
    assert target.read_text() == "old content"
    assert sorted(os.listdir(tmp_path)) == ["index.html"]


# -- the output folder: ours only, swapped in whole, locked ---------------------------------


def tree(folder):
    """relative path -> bytes of every file below ``folder``."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def write_report(out, files):
    """A report run of the output-folder machinery alone: write ``files`` (path -> text) and commit."""
    with ReportFolder(out) as folder:
        for rel, text in files.items():
            (folder.staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder.staging / rel).write_text(text)
        folder.commit()


FIRST = {
    "index.html": "1",
    "models/bert/report.html": "bert 1",
    "models/svm/report.html": "svm 1",
    "overview/overview.html": "o 1",
}
SECOND = {"index.html": "2", "models/svm/report.html": "svm 2", "overview/overview.html": "o 2"}


def test_report_folder_new_then_replaced_whole(tmp_path):
    out = tmp_path / "reports" / "demo"  # the parent is created too
    write_report(out, FIRST)
    assert tree(out) == {**{k: v.encode() for k, v in FIRST.items()}, MANIFEST: (out / MANIFEST).read_bytes()}
    assert manifest_files(out) == sorted(FIRST)
    write_report(out, SECOND)
    assert {k: v for k, v in tree(out).items() if k != MANIFEST} == {k: v.encode() for k, v in SECOND.items()}
    assert manifest_files(out) == sorted(SECOND)  # bert's report, not in this run, is gone with its folder
    assert not (out / "models" / "bert").exists()
    assert leftovers(out) == [] and dotfiles(out) == []


def test_report_folder_keeps_the_users_files(tmp_path):
    out = tmp_path / "out"
    write_report(out, FIRST)
    user = {
        "models/bert/weights.pt": b"\x00weights",
        "overview/my_slides.pptx": b"slides",
        "notes.txt": b"n",
        "mine/deep/a.csv": b"a",
        "models/svm/comments.md": b"c",
    }
    for rel, data in user.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    (out / "link").symlink_to(tmp_path / "elsewhere")  # a dangling link of the user's is kept as it is
    write_report(out, SECOND)
    got = tree(out)
    assert {k: got[k] for k in user} == user
    assert os.readlink(out / "link") == str(tmp_path / "elsewhere")
    assert got["models/svm/report.html"] == b"svm 2" and "models/bert/report.html" not in got
    assert MANIFEST in got and not set(user) & set(manifest_files(out))  # never listed as ours
    write_report(out, FIRST)  # and again: still there
    assert {k: tree(out)[k] for k in user} == user


def test_report_folder_refuses_a_foreign_folder(tmp_path):
    out = tmp_path / "photos"
    out.mkdir()
    (out / "cat.jpg").write_bytes(b"cat")
    with pytest.raises(FileExistsError, match="`out` .*photos.* not empty"):
        write_report(out, FIRST)
    assert tree(out) == {"cat.jpg": b"cat"} and leftovers(out) == []


def test_report_folder_takes_an_empty_folder(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    write_report(out, SECOND)
    assert manifest_files(out) == sorted(SECOND)


def test_report_folder_refuses_to_replace_a_users_file_of_the_same_name(tmp_path):
    out = tmp_path / "out"
    write_report(out, SECOND)
    (out / "models" / "bert").mkdir()
    (out / "models" / "bert" / "report.html").write_text("the user's")
    with pytest.raises(FileExistsError, match="models/bert/report.html"):
        write_report(out, FIRST)  # this run would write models/bert/report.html
    assert (out / "models" / "bert" / "report.html").read_text() == "the user's"
    assert (out / "index.html").read_text() == "2" and leftovers(out) == []


def test_report_folder_without_a_manifest_is_not_ours_whatever_its_index(tmp_path):
    """An index.html carrying ``data-beyondauc="`` does not make a folder ours: only the manifest does."""
    out = tmp_path / "old"
    for rel in ("models/svm/report.html", "models/svm/test_auroc.ipynb", "overview/overview.html"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("old")
    (out / "index.html").write_text('<table data-beyondauc="leaderboard"></table>')
    (out / "models" / "svm" / "weights.pt").write_text("user")
    before = tree(out)
    with pytest.raises(FileExistsError, match="not a beyondauc report"):
        write_report(out, SECOND)
    assert tree(out) == before and dotfiles(out) == [] and leftovers(out) == []


def test_report_folder_abandoned_run_leaves_the_old_report(tmp_path):
    out = tmp_path / "out"
    write_report(out, FIRST)
    before = tree(out)
    with pytest.raises(RuntimeError, match="interrupted"):
        with ReportFolder(out) as folder:
            (folder.staging / "index.html").write_text("half")
            raise RuntimeError("interrupted")
    assert tree(out) == before and leftovers(out) == []


def test_report_folder_second_run_fails_while_the_first_holds_it(tmp_path, small_csv, capsys):
    out = tmp_path / "out"
    write_report(out, FIRST)
    with ReportFolder(out) as folder:
        with pytest.raises(BlockingIOError, match=f"`out` .*in use .*pid {os.getpid()}"):
            with ReportFolder(out):
                pass
        # through the CLI: exit 2 with one line, before any kernel starts
        check_single_error(capsys, ["report", str(small_csv), "--out", str(out), "--quiet"], "in use")
        (folder.staging / "index.html").write_text("3")
        folder.commit()
    assert (out / "index.html").read_text() == "3"
    write_report(out, SECOND)  # released
    assert leftovers(out) == []


# What a killed run leaves (a staging folder inside `out`, before or after its commit point) and how the next
# run finishes it: tests/utils/test_output.py.


# -- bad input --------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "scores.csv"
    broken_frame().to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("data", "kwargs", "error", "needle"),
    [
        pytest.param("csv", {"models": ["nope"]}, ValueError, "`models`", id="models-file"),
        pytest.param("demo", {"models": ["nope"]}, ValueError, "`models`", id="models-demo"),
        pytest.param("csv", {"datasets": ["nope"]}, ValueError, "`datasets`", id="datasets-file"),
        pytest.param("demo", {"datasets": "wine,nope"}, ValueError, "`datasets`", id="datasets-demo"),
        pytest.param("csv", {"models": [1]}, TypeError, "`models`", id="models-type"),
        pytest.param("csv", {"jobs": 0}, ValueError, "`jobs`", id="jobs-0"),
        pytest.param("csv", {"jobs": 1.5}, ValueError, "`jobs`", id="jobs-float"),
        pytest.param("csv", {"parameters": {"data": "x.csv"}}, ValueError, "`parameters`", id="param-data"),
        pytest.param("csv", {"parameters": {"model": "svm"}}, ValueError, "`parameters`", id="param-model"),
        pytest.param("csv", {"parameters": {"x": object()}}, ValueError, "`parameters`['x']", id="param-object"),
        pytest.param("csv", {"parameters": {"x": {1, 2}}}, ValueError, "`parameters`['x']", id="param-set"),
        pytest.param("csv", {"parameters": {"not a name": 1}}, ValueError, "`parameters`", id="param-key"),
        pytest.param("csv", {"dask": 8786}, TypeError, "`dask`", id="dask-type"),
        pytest.param(
            "csv", {"parameters": {"tolerence": 0.8}}, ValueError, "did you mean 'tolerance'", id="param-unknown"
        ),
        pytest.param("csv", {"parameters": {"tolerance": 1.5}}, ValueError, "`tolerance`", id="param-value"),
        pytest.param("csv", {"parameters": {"ood_dataset": "nope"}}, ValueError, "`ood_dataset`", id="param-ood"),
        pytest.param("csv", {"parameters": {"val_split": "dev"}}, ValueError, "`val_split`='dev'", id="param-split"),
        pytest.param("csv", {"parameters": [("tolerance", 0.8)]}, TypeError, "`parameters`", id="param-not-dict"),
        pytest.param("csv", {"pos_label": [1]}, ValueError, "`pos_label`", id="pos-label"),
        pytest.param("missing", {}, (ValueError, OSError), "`data`", id="data-missing"),
        pytest.param("csv", {"notebooks_dir": "empty"}, FileNotFoundError, "`notebooks_dir`", id="notebooks"),
    ],
)
def test_run_report_bad_input_names_the_parameter(tmp_path, small_csv, data, kwargs, error, needle):
    data = {"csv": str(small_csv), "missing": str(tmp_path / "missing.csv")}.get(data, data)
    if kwargs.get("notebooks_dir") == "empty":
        (tmp_path / "empty").mkdir()
        (tmp_path / "empty" / "overview.ipynb").write_text("{}")
        kwargs = {"notebooks_dir": tmp_path / "empty"}
    out = tmp_path / "out"
    with pytest.raises(error) as info:
        run_report(data, out=out, progress=False, **kwargs)
    assert needle in str(info.value)
    if "notebooks_dir" in kwargs:
        assert "auc_vs_accuracy.ipynb" in str(info.value) and "overview.ipynb" not in str(info.value)
    assert not out.exists()  # nothing is written before the input is known good


def test_run_report_out_is_a_file(tmp_path, small_csv):
    out = tmp_path / "out"
    out.write_text("not a folder")
    with pytest.raises(NotADirectoryError, match="`out`"):
        run_report(str(small_csv), out=out, progress=False)
    assert out.read_text() == "not a folder"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(["--models", "nope"], "nope", id="models"),
        pytest.param(["--datasets", "nope"], "--datasets", id="datasets"),
        pytest.param(["--jobs", "0"], "--jobs", id="jobs"),
        pytest.param(["-p", "data=x.csv"], "`parameters`", id="param-data"),
        pytest.param(["-p", "model=svm"], "`parameters`", id="param-model"),
        pytest.param(["-p", "protocol"], "--parameter", id="param-syntax"),
        pytest.param(["-p", "a b=1"], "`parameters`", id="param-key"),
        pytest.param(["--out", "FILE"], "--out", id="out-file"),
        pytest.param(
            ["-p", "tolerence=0.8"], "unknown parameter 'tolerence'; did you mean 'tolerance'?", id="param-unknown"
        ),
        pytest.param(["-p", "tolerance=1.5"], "--tolerance must be a number in (0, 1], got 1.5", id="param-value"),
        pytest.param(["-p", "n_points=many"], "--n-points must be an int", id="param-type"),
        pytest.param(["DATA=missing"], "does not exist", id="data-missing"),
        pytest.param(["NOTEBOOKS=empty"], "`notebooks_dir`", id="notebooks"),
    ],
)
def test_cli_report_bad_input_one_line(tmp_path, small_csv, capsys, monkeypatch, args, needle):
    data = str(small_csv)
    if args == ["DATA=missing"]:
        data, args = str(tmp_path / "missing.csv"), []
    if args == ["NOTEBOOKS=empty"]:
        (tmp_path / "empty").mkdir()
        monkeypatch.setattr(report, "_notebooks_dir", lambda: tmp_path / "empty")
        args = []
    out = tmp_path / "out"
    out_is_file = "FILE" in args
    if out_is_file:
        out.write_text("a file")
        args = [a for a in args if a not in ("--out", "FILE")]
    check_single_error(capsys, ["report", data, "--out", str(out), "--quiet", *args], needle)
    if out_is_file:
        assert out.read_text() == "a file"
    else:
        assert not out.exists()  # nothing written


def test_cli_report_refuses_a_foreign_folder(tmp_path, small_csv, capsys):
    out = tmp_path / "project"
    out.mkdir()
    (out / "weights.pt").write_bytes(b"w")
    check_single_error(capsys, ["report", str(small_csv), "--out", str(out), "--quiet"], "--out", "not empty")
    assert sorted(os.listdir(out)) == ["weights.pt"] and leftovers(out) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-p", "tolerance=1.5"], "beyondauc: error: --tolerance must be a number in (0, 1], got 1.5"),
        (["-p", "tolerence=0.8"], "beyondauc: error: unknown parameter 'tolerence'; did you mean 'tolerance'?"),
    ],
)
def test_cli_strict_parameters_fail_before_any_work(tmp_path, small_csv, args, needle):
    """The console script exits 2 with one line in seconds (import included), no kernel, nothing written."""
    out = tmp_path / "out"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "beyondauc.cli", "report", str(small_csv), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    seconds = time.perf_counter() - start
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()] and proc.stderr.startswith(needle), proc.stderr
    assert not out.exists() and leftovers(out) == []
    assert seconds < 60  # loose: the machine may be loaded; what matters is that no notebook ran


# -- kernels: one per worker, reset between notebooks --------------------------------


def _tiny_notebook(path, code):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell("x = 0")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in code)]
    nbformat.write(nb, str(path))
    return path


def _printed(path):
    nb = nbformat.read(str(path), as_version=4)
    return [
        o.get("text", "").strip()
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream"
    ]


def test_jupyter_kernel_is_reused_with_a_fresh_namespace_and_replaced_when_it_dies(tmp_path):
    from beyondauc.report.execute import JupyterKernel, run_with_papermill

    sets = _tiny_notebook(
        tmp_path / "sets.ipynb",
        ["import os, matplotlib.pyplot as plt\ny = x + 1\nfig = plt.figure()\nprint(os.getcwd())"],
    )
    reads = _tiny_notebook(
        tmp_path / "reads.ipynb",
        [
            "import matplotlib.pyplot as plt\nnames = dir()\n"
            "print(sorted(k for k in ('x', 'y', 'os', 'fig', 'plt') if k in names), len(plt.get_fignums()), x)"
        ],
    )
    dies = _tiny_notebook(tmp_path / "dies.ipynb", ["import os\nos._exit(3)"])
    kernel = JupyterKernel("python3")
    runs = []
    try:
        for i, nb in enumerate([sets, reads, dies, reads, sets]):
            out = tmp_path / f"run{i}"
            out.mkdir()
            runs.append((out / nb.name, run_with_papermill(nb, out / nb.name, {"x": i}, kernel, 60)))
    finally:
        kernel.shutdown()
    status = [r[0] for _, r in runs]
    assert status == ["ok", "ok", "failed", "ok", "ok"]
    assert "DeadKernelError" in runs[2][1][1]  # only that notebook failed
    assert [r[4] for _, r in runs] == [True, False, False, True, False]  # a new kernel after the death only
    assert kernel.started == 2
    assert _printed(runs[0][0]) == [str(tmp_path / "run0")]  # runs in the executed notebook's folder
    # nothing of the notebook before: not its variables, imports or figures; the parameters are its own
    assert _printed(runs[1][0]) == ["['plt', 'x'] 0 1"]
    assert _printed(runs[3][0]) == ["['plt', 'x'] 0 3"]
    assert _printed(runs[4][0]) == [str(tmp_path / "run4")]
    for path, result in runs:  # numbered from 1 in every notebook, as in a new kernel
        counts = [c.execution_count for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]
        if result[0] == "ok":
            assert counts == list(range(1, len(counts) + 1)), (path, counts)


# -- layout and results -------------------------------------------------------------


def test_layout(hostile):
    out, result = hostile["out"], hostile["result"]
    assert isinstance(result, ReportResult)
    assert result.ok and result.failed == ()
    assert result.out_dir == out and result.index == out / "index.html" and result.index.is_file()
    assert sorted(os.listdir(out)) == [MANIFEST, "evaluation", "index.html", "models", "overview"]
    assert (out / "evaluation" / "manifest.json").is_file()
    assert manifest_files(out) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != MANIFEST
    )
    assert leftovers(out) == []
    assert sorted(os.listdir(out / "models")) == sorted(safe_name(m) for m in HOSTILE)
    for model in HOSTILE:
        folder = out / "models" / safe_name(model)
        assert folder.resolve().parent == (out / "models").resolve()
        assert sorted(os.listdir(folder)) == sorted(["report.html", "report.pdf", *(f"{n}.ipynb" for n in NOTEBOOKS)])
    assert sorted(os.listdir(out / "overview")) == ["overview.html", "overview.ipynb", "overview.pdf"]
    assert dotfiles(out) == []
    assert result.jobs == 2
    assert "4 model reports" in result.summary() and "FAILED" not in result.summary()


def test_model_reports(hostile):
    out, result = hostile["out"], hostile["result"]
    assert [r.model for r in result.reports] == list(HOSTILE)
    for rep in (*result.reports, result.overview):
        assert isinstance(rep, ModelReport)
        assert rep.status == "ok" and rep.error is None
        folder = "overview" if rep.model is None else f"models/{safe_name(rep.model)}"
        stem = "overview" if rep.model is None else "report"
        assert rep.slug == folder.split("/")[-1]
        assert rep.html == f"{folder}/{stem}.html" and rep.pdf == f"{folder}/{stem}.pdf"
        names = ["overview"] if rep.model is None else list(NOTEBOOKS)
        assert [nb.name for nb in rep.notebooks] == names
        for path in (rep.html, rep.pdf, *(nb.path for nb in rep.notebooks)):
            assert not Path(path).is_absolute() and ".." not in Path(path).parts
            assert (out / path).is_file()
        assert rep.seconds > 0


def test_notebook_runs(hostile):
    runs = hostile["result"].notebook_runs
    assert len(runs) == len(NOTEBOOKS) * len(HOSTILE) + 1
    for nb in runs:
        assert isinstance(nb, NotebookRun)
        assert nb.status == "ok" and nb.error is None
        assert 0 < nb.kernel_seconds < nb.seconds, nb
    # one kernel per worker process, not one per notebook (usually started while the evaluation is
    # computed, before any notebook: then no notebook reports a new kernel)
    assert sum(nb.new_kernel for nb in runs) <= hostile["result"].jobs == 2
    assert all(
        r.notebooks[0].new_kernel or not any(nb.new_kernel for nb in r.notebooks[1:])
        for r in (*hostile["result"].reports, hostile["result"].overview)
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS)
@pytest.mark.parametrize("model", HOSTILE)
def test_executed_notebook_is_the_models(hostile, model, notebook):
    folder = hostile["out"] / "models" / safe_name(model)
    nb = nbformat.read(str(folder / f"{notebook}.ipynb"), as_version=4)
    params = nb.metadata.papermill.parameters
    # the notebook gets the model and the saved evaluation (relative to its folder), nothing else
    assert params == {"evaluation": "../../evaluation", "model": model}
    assert (folder / params["evaluation"]).resolve() == (hostile["out"] / "evaluation").resolve()
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))


# -- rendering ----------------------------------------------------------------------


def report_path(run, model):
    if model is None:
        return run["out"] / "overview" / "overview.html"
    return run["out"] / "models" / safe_name(model) / "report.html"


@pytest.mark.parametrize("model", [*HOSTILE, None])
def test_report_header(hostile, model):
    root = page(report_path(hostile, model))
    header = root.marked("report-header")
    assert len(header) == 1
    header = header[0]
    title = "beyondauc report: " + ("benchmark overview" if model is None else model)
    assert header.find("h1").text == title
    assert root.find("title").text == title
    if model is None:
        assert header.marked("model") == []
    else:
        assert one_text(header, "model") == model
    # the parameters are the evaluation's (every number is read from it); the model is named above
    shown = {
        k: v for k, v in beyondauc.load_evaluation(hostile["out"]).parameters.items() if v is not None and k != "models"
    }
    assert "protocol" in shown and "tolerance" in shown
    assert one_text(header, "parameters") == ", ".join(f"{k}={v}" for k, v in shown.items())
    # a link back to the index of the same run, first in the header
    back = header.marked("back")
    assert len(back) == 1 and back[0] is header.find_all("a")[0]
    assert back[0].attrs["href"] == ("../index.html" if model is None else "../../index.html")
    assert (report_path(hostile, model).parent / back[0].attrs["href"]).resolve() == (
        hostile["out"] / "index.html"
    ).resolve()
    # the meta table is folded away under "About this report"
    about = header.find("details", **{"class": "ba-about"})
    assert "open" not in about.attrs and about.find("summary").text.startswith("About this report")
    for marker in ("source", "sha256", "parameters", "version", "date", *(["model"] if model else [])):
        assert len(about.marked(marker)) == 1, marker
    assert one_text(header, "source") == str(hostile["data"])
    assert one_text(header, "sha256") == sha256_file(hostile["data"])
    assert one_text(header, "version") == beyondauc.__version__
    date = dt.datetime.fromisoformat(one_text(header, "date"))
    assert date.tzinfo is not None and hostile["start"] <= date <= hostile["end"]
    assert root.marked("report-failed") == []
    generator = [m for m in root.find_all("meta") if m.attrs.get("name") == "generator"]
    assert [m.attrs.get("content") for m in generator] == [f"beyondauc {beyondauc.__version__}"]


@functools.cache
def notebook_title(name):
    """The ``# Title`` line of a notebook of the repository."""
    nb = nbformat.read(str(REPO_NOTEBOOKS / f"{name}.ipynb"), as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "markdown").source.splitlines()[0]
    assert first.startswith("# "), first
    return first[2:].strip()


def check_structure(root, analyses=ANALYSES):
    """Summary first, then the contents, then one collapsed section per analysis, in order.

    Returns the sections (the summary's first) and the document order of the page's elements.
    """
    flat = list(root.iter())
    sections = root.marked("section")
    assert [(s.tag, s.attrs.get("id")) for s in sections] == [
        ("section", "summary"),
        *(("details", f"section-{n}") for n in analyses),
    ]
    contents = root.marked("contents")
    assert len(contents) == 1 and contents[0].tag == "nav" and contents[0].attrs.get("id") == "contents"
    assert flat.index(root.marked("report-header")[0]) < flat.index(sections[0]) < flat.index(contents[0])
    assert flat.index(contents[0]) < flat.index(sections[1])
    assert not any(e.marked("section") or e.marked("contents") for e in sections)  # not nested in each other
    for section, name in zip(sections[1:], analyses):
        assert "ba-section" in section.classes and "open" not in section.attrs  # collapsed
        title = [e for e in section.children if isinstance(e, type(section))][0]
        assert title.tag == "summary" and "ba-section-title" in title.classes
        assert title.text.strip() == notebook_title(name)
        # the notebook's own title line is not repeated inside the section
        assert not [h for h in section.find_all("h1") if h.text.strip().rstrip("¶").strip() == notebook_title(name)]
    # contents: the summary, then every section in order (with their headings), each link resolving
    hrefs = [a.attrs["href"] for a in contents[0].find_all("a")]
    assert hrefs[0] == "#summary"
    tops = [h for h in hrefs if h.startswith("#section-")]
    assert tops == [f"#section-{n}" for n in analyses]
    ids = [e.attrs["id"] for e in flat if e.attrs.get("id")]
    for href in hrefs:
        assert href.startswith("#") and ids.count(href[1:]) == 1, href
    headings = [e.attrs["id"] for e in flat if e.tag in ("h1", "h2", "h3", "h4", "h5", "h6") and e.attrs.get("id")]
    assert len(set(headings)) == len(headings)  # unique anchors
    return sections, flat


@pytest.mark.parametrize("model", HOSTILE)
def test_report_sections_in_order_each_with_an_inline_image(hostile, model):
    root = page(report_path(hostile, model))
    sections, flat = check_structure(root)
    assert root.marked("section-failed") == []
    # the summary and every analysis drew at least one figure, in its own section
    for name, section in zip(NOTEBOOKS, sections):
        assert section.find_all("img"), f"no image in section {name}"


def test_overview_is_one_open_section(hostile):
    root = page(report_path(hostile, None))
    sections = root.marked("section")
    assert [(s.tag, s.attrs.get("id")) for s in sections] == [("details", "section-overview")]
    assert "open" in sections[0].attrs  # nothing to choose between: shown open
    assert sections[0].find("summary").text.strip() == notebook_title("overview")
    assert root.find_all(id="summary") == [] and root.marked("contents") == []
    assert sections[0].find_all("img") and root.marked("section-failed") == []


@pytest.mark.parametrize("model", [*HOSTILE, None])
def test_report_is_self_contained(hostile, model):
    path = report_path(hostile, model)
    raw = path.read_text(encoding="utf-8")
    root = page(path)
    images = root.find_all("img")
    assert images
    for img in images:
        assert img.attrs.get("src", "").startswith("data:image/"), img.attrs.get("src", "")[:60]
    png = next(i.attrs["src"] for i in images if i.attrs["src"].startswith("data:image/png;base64,"))
    assert base64.b64decode(png.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")
    relative = []
    for el in root.iter():
        for attr in ("src", "href", "data", "action", "poster", "srcset"):
            value = (el.attrs.get(attr) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//", "file:", "javascript:")), (el, attr)
            if attr in ("src", "href") and value and not value.startswith(("data:", "#")):
                relative.append((el, attr, el.attrs[attr]))
    # the one file it refers to: the back link to the run's own index.html, inside the report folder
    assert len(relative) == 1, relative
    el, attr, value = relative[0]
    assert (el.tag, attr, el.attrs.get("data-beyondauc")) == ("a", "href", "back")
    out = hostile["out"].resolve()
    assert (path.parent / value).resolve() == out / "index.html"
    assert [e for e in root.find_all("script") if e.attrs.get("src")] == []
    assert [e for e in root.find_all("link") if "stylesheet" in (e.attrs.get("rel") or "")] == []
    assert "@import" not in raw
    low = raw.lower()
    assert "require.js" not in low and "requirejs" not in low and "mathjax" not in low


@pytest.mark.parametrize("model", [*HOSTILE, None])
def test_report_hides_code_by_default(hostile, model):
    root = page(report_path(hostile, model))
    code_cells = [e for e in root.iter() if "jp-CodeCell" in e.classes]
    assert code_cells
    for cell in code_cells:  # outputs only: no input area (markdown cells have one, code cells not)
        assert "jp-mod-noInput" in cell.classes
        assert not [e for e in cell.iter() if "jp-InputArea" in e.classes]
    classes = {c for e in root.iter() for c in e.classes}
    assert "jp-InputArea-editor" not in classes and "highlight" not in classes
    assert "celltag_injected-parameters" not in classes and "celltag_parameters" not in classes
    assert "# Parameters" not in root.text  # papermill's injected cell
    assert "open_evaluation(" not in root.text
    # nor the cells tagged notebook-only (parameters and set-up prose for Jupyter users)
    for name in ("overview",) if model is None else NOTEBOOKS:
        nb = nbformat.read(str(REPO_NOTEBOOKS / f"{name}.ipynb"), as_version=4)
        only = [c for c in nb.cells if "notebook-only" in c.metadata.get("tags", [])]
        assert only
        for cell in only:
            lines = [ln.strip("# ") for ln in cell.source.splitlines() if len(ln.strip("# ")) > 30]
            assert lines and lines[0] not in root.text, (name, lines[:1])
    assert root.marked("section")  # it is a report, not an empty page


def test_images_are_inline_despite_agg(hostile):
    # the test process asked for Agg; the kernels still drew inline PNGs into the reports
    assert os.environ["MPLBACKEND"] == "Agg"
    for model in HOSTILE:
        images = page(report_path(hostile, model)).find_all("img")
        assert len(images) >= 3


# -- escaping -----------------------------------------------------------------------

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.mark.parametrize("which", ["index", "overview", *HOSTILE])
def test_no_script_element_anywhere(hostile, which):
    """No script in the reports; in the index only the leaderboard's sorting script, inline and exactly the
    template's (so no name from the data can enter it)."""
    path = {"index": hostile["out"] / "index.html", "overview": report_path(hostile, None)}.get(which)
    path = path or report_path(hostile, which)
    raw = path.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in raw.lower()
    scripts = page(path).find_all("script")
    if which != "index":
        assert scripts == []
        return
    template = (REPO_NOTEBOOKS.parent / "templates" / "index.html.j2").read_text(encoding="utf-8")
    own = re.search(r"<script>(.*?)</script>", template, re.S).group(1)
    assert len(scripts) == 1 and not scripts[0].attrs and scripts[0].text == own


@pytest.mark.parametrize("which", ["index", "overview", SCRIPT])
def test_hostile_name_is_escaped_text(hostile, which):
    path = {"index": hostile["out"] / "index.html", "overview": report_path(hostile, None)}.get(which)
    path = path or report_path(hostile, SCRIPT)
    raw = path.read_text(encoding="utf-8")
    assert ESCAPED in raw
    root = page(path)
    if which == "index":
        names = [row.find("td", **{"class": "name"}).text for row in root.marked("model-row")]
        assert SCRIPT in names
        return
    if which == SCRIPT:
        assert one_text(root, "model") == SCRIPT
    # the notebooks display Markdown naming the models: the name is shown as text, not dropped
    markdown = [
        e for e in root.iter() if e.attrs.get("data-mime-type") == "text/markdown" or "jp-MarkdownOutput" in e.classes
    ]
    assert any(SCRIPT in e.text for e in markdown)


def render_markdown_output(text):
    """Render, without a kernel, one notebook whose code displayed ``text`` as Markdown (as the notebooks do)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A section"),
        nbformat.v4.new_code_cell(
            "display(Markdown(text))",
            outputs=[
                nbformat.v4.new_output("display_data", data={"text/markdown": text, "text/plain": "<Markdown object>"})
            ],
        ),
    ]
    return render_notebook(nb, text)


def render_notebook(nb, model):
    """The report HTML of one executed notebook ``nb`` of model ``model``, without a kernel."""
    nb_run = NotebookRun("auc_vs_accuracy", "auc_vs_accuracy.ipynb", "ok", None, 1.0, 0.5)
    header = {
        "title": f"beyondauc report: {model}",
        "model": model,
        "source": "scores.csv",
        "sha256": "0" * 64,
        "version": beyondauc.__version__,
        "date": "2026-01-01T00:00:00+00:00",
        "parameters": {"model": model},
        "failed": None,
    }
    return render_html([(nb_run, nb)], header, include_code=False)


def test_a_report_is_validated_once_and_an_invalid_one_still_fails(monkeypatch):
    """nbconvert validates the combined notebook after its preprocessors, once, not after each of
    its dozen preprocessors (each time the whole notebook, every figure of the report)."""
    from nbconvert.exporters.exporter import Exporter

    calls = []
    validate = Exporter._validate_preprocessor
    monkeypatch.setattr(
        Exporter, "_validate_preprocessor", lambda self, nb, pre: calls.append(pre) or validate(self, nb, pre)
    )
    assert "A section" in render_markdown_output("text")
    assert len(calls) == 1
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1")]
    nb.cells[0].outputs = [nbformat.from_dict({"output_type": "no such output"})]
    with pytest.raises(Exception, match="(?i)valid"):
        render_notebook(nb, "m")


def dom(text):
    """The page's element tree as nested tuples: (tag, sorted attributes, children); text as is. What
    BeautifulSoup shortens when it writes a page is compared as it shows: whitespace between
    elements (outside ``<pre>``) as one space, a class list as its classes."""

    def value(name, v):
        return " ".join((v or "").split()) if name == "class" else v or ""

    def walk(node, pre=False):
        pre = pre or node.tag in ("pre", "textarea")
        return (
            node.tag,
            tuple(sorted((k, value(k, v)) for k, v in node.attrs.items())),
            tuple(walk(c, pre) if not isinstance(c, str) else c if pre or c.strip() else " " for c in node.children),
        )

    return walk(parse_html(text))


def pages_ours_and_nbconverts(monkeypatch, render):
    """``render()`` through the report's exporter, then through nbconvert's own HTMLExporter (same
    template, filters and settings): both pages, and how often each ran BeautifulSoup."""
    import nbconvert.exporters.html as nbconvert_html

    from beyondauc.report import render as _render

    soups = []
    soup = nbconvert_html.BeautifulSoup
    _render._exporter.cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(nbconvert_html, "BeautifulSoup", lambda *a, **k: soups.append(1) or soup(*a, **k))
        try:
            ours, ours_soups = render(), len(soups)
            patch.setattr(_render, "report_exporter_class", lambda: nbconvert_html.HTMLExporter)
            _render._exporter.cache_clear()
            theirs = render()
        finally:
            _render._exporter.cache_clear()
    return ours, theirs, ours_soups, len(soups) - ours_soups


def test_report_page_is_the_page_nbconvert_writes_without_its_soup_pass(demo_cli, monkeypatch):
    """The report's exporter skips nbconvert's BeautifulSoup pass over the finished page (it parses
    and writes every inlined figure again to add alt and tabindex): on a real report the page has
    the same elements, attributes (tabindex="0" on every input and output) and text."""
    folder = demo_cli["out"] / "models" / "svm"
    executed = [
        (NotebookRun(n, f"{n}.ipynb", "ok", None, 1.0, 0.5), nbformat.read(folder / f"{n}.ipynb", 4))
        for n in report.NOTEBOOKS
    ]
    header = {
        "title": "beyondauc report: svm",
        "model": "svm",
        "source": "demo",
        "sha256": "0" * 64,
        "version": beyondauc.__version__,
        "date": "2026-01-01T00:00:00+00:00",
        "parameters": {},
        "failed": None,
    }
    for include_code in (False, True):
        ours, theirs, ours_soups, their_soups = pages_ours_and_nbconverts(
            monkeypatch, lambda: render_html(executed, header, include_code=include_code)
        )
        assert (ours_soups, their_soups) == (0, 1)
        assert dom(ours) == dom(theirs)
        root = parse_html(ours)
        outputs = [e for e in root.iter() if "jp-OutputArea-output" in e.classes]
        assert len(outputs) > 20 and all(e.attrs.get("tabindex") == "0" for e in outputs)
        inputs = [e for e in root.iter() if "jp-Cell-inputWrapper" in e.classes]  # Markdown cells, and code
        assert len(inputs) > 10 and all(e.attrs.get("tabindex") == "0" for e in inputs)


def test_an_image_without_alt_text_goes_through_nbconverts_own_pass(monkeypatch):
    """The template writes alt text on every figure; an image it did not write (raw HTML in a Markdown
    cell) still gets nbconvert's alt text, through nbconvert's own pass."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell('# A section\n\n<img src="logo.png">')]
    ours, theirs, ours_soups, their_soups = pages_ours_and_nbconverts(monkeypatch, lambda: render_notebook(nb, "m"))
    assert (ours_soups, their_soups) == (1, 1)
    assert dom(ours) == dom(theirs)
    assert parse_html(ours).find("img").attrs["alt"] == "No description has been provided for this image"


@pytest.mark.parametrize(
    "name",
    [
        SCRIPT,
        "<img src=x onerror=alert(1)>",
        "</div><script>alert(1)</script>",
        "a & b <i>",
        "[x](javascript:alert(1))",
        "![t](http://evil.example/t.png)",
        "a_b *c* `d` $x$ \\ www.example.com",
    ],
)
@pytest.mark.parametrize("template", ["Model **{}**, compared with 3 others.", "### {}"])
@pytest.mark.parametrize("escaped", [True, False])
def test_displayed_markdown_cannot_inject_markup(name, template, escaped):
    """Names go through markdown_text in the notebooks (shown verbatim); unescaped, the
    template's cleaning still keeps them inert (no script, handler, javascript: or remote URL)."""
    root = parse_html(
        render_markdown_output(template.format(beyondauc.report.markdown_text(name) if escaped else name))
    )
    assert root.find_all("script") == []
    for el in root.iter():
        assert not [a for a in el.attrs if a.startswith("on")], el
        for attr in ("src", "href"):
            value = (el.attrs.get(attr) or "").strip().lower()
            assert not value.startswith(("javascript:", "http:", "https:", "//")), el
    if escaped:
        assert name in root.text  # shown verbatim, not dropped or turned into markup


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>a <script>alert(1)</script>b</p>", "<p>a b</p>"),  # script goes with its content
        ('<p><a href="javascript:alert(1)">x</a></p>', '<p><a rel="noopener noreferrer">x</a></p>'),
        ('<p><img src="http://evil.example/t.png">t</p>', "<p>t</p>"),  # nothing is loaded
        ('<p onclick="alert(1)"><b>x</b></p>', "<p><b>x</b></p>"),
        ("<p>&lt;script&gt;</p>", "<p>&lt;script&gt;</p>"),  # escaped text stays text
        (
            '<a href="https://example.com" title="t">y</a>',
            '<a href="https://example.com" title="t" rel="noopener noreferrer">y</a>',
        ),
        ('<span class="math" id="m">x</span>', '<span class="math" id="m">x</span>'),
    ],
)
def test_clean_markdown_html(html, expected):
    from beyondauc.report.render import clean_markdown_html

    assert clean_markdown_html(html) == expected


# -- the index ------------------------------------------------------------------------


def _fmt(value, digits=3):  # negative numbers with a true minus sign
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}".replace("-", "\u2212")


def _rank(value):
    return "–" if not math.isfinite(value) else f"{value:g}"


def _ci(r, name):
    low, high = r.get(f"{name}_low"), r.get(f"{name}_high")
    if low is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    ends = _fmt(low), _fmt(high)  # an interval with a negative end reads "−2.403 to 0.988", not "−2.403–0.988"
    return " to ".join(ends) if any(e.startswith(("\u2212", "-")) for e in ends) else "–".join(ends)


def _rank_ci(r, name):
    low, high = r.get(f"{name}_low"), r.get(f"{name}_high")
    if low is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    return f"{int(np.floor(low + 0.5))}–{int(np.floor(high + 0.5))}"  # nearest ranks, halves up


def _cell(td):
    """(value, what is under it) of an index cell: its own text, and its ``ci`` line."""
    under = [e for e in td.find_all("span") if "ci" in e.classes]
    value = "".join(c if isinstance(c, str) else c.text for c in td.children if c not in under)
    return value.strip(), "".join(e.text for e in under).strip()


def test_index_leaderboard_values(hostile):
    evaluation = beyondauc.load_evaluation(hostile["out"])  # the evaluation saved with the report
    board = evaluation.table("leaderboard")
    pd.testing.assert_frame_equal(hostile["result"].leaderboard, board)
    pd.testing.assert_frame_equal(hostile["result"].evaluation.table("leaderboard"), board)
    # and what a user computes afresh from the same data and the default parameters
    pd.testing.assert_frame_equal(leaderboard(open_benchmark(str(hostile["data"]))), board)
    verdicts = evaluation.table("verdicts").set_index("model")
    root = page(hostile["out"] / "index.html")
    head = [th.text.strip() for th in root.marked("leaderboard")[0].find("thead").find_all("th")]
    assert head == [
        "model",
        "verdict",
        "mean AUC",
        "AUC rank",
        "mean accuracy",
        "accuracy rank",
        "change",
        "kappa",
        "DiSCA",
        "drift",
        "guarantee held",
        "vs best other",
        "files",
    ]
    rows = root.marked("model-row")
    assert len(rows) == len(HOSTILE)
    got = [[_cell(td) for td in row.find_all("td")][:10] for row in rows]
    expected = []
    for r in board.to_dict("records"):
        change = r["rank_change"]
        if change == 0 or pd.isna(r["significant"]):
            stability = ""
        else:  # the share of replicates is a stability; only the p-value says significant
            p = (
                f"p < {1 / evaluation.parameters['n_bootstrap']:.2g}"
                if r["p_value"] == 0
                else f"p = {r['p_value']:.2f}"
            )
            stability = (
                f"stable in {r['sign_share']:.0%} of replicates, {'' if r['significant'] else 'not '}significant ({p})"
            )
        expected.append(
            [
                (r["model"], ""),
                (verdicts.loc[r["model"], "verdict"], verdicts.loc[r["model"], "reason"]),
                (_fmt(r["auc"]), _ci(r, "auc")),
                (_rank(r["auc_rank"]), _rank_ci(r, "auc_rank")),
                (_fmt(r["accuracy"]), _ci(r, "accuracy")),
                (_rank(r["accuracy_rank"]), _rank_ci(r, "accuracy_rank")),
                ("0" if change == 0 else f"{change:+g}".replace("-", "\u2212"), stability),
                (_fmt(r["kappa"]), _ci(r, "kappa")),
                (_fmt(r["disca"]), _ci(r, "disca")),
                (_fmt(r["drift"]), _ci(r, "drift")),
            ]
        )
    assert got == expected
    assert any(e[2][1] for e in expected)  # intervals are shown (the default bootstrap)
    assert sorted(board["auc_rank"]) == [1, 2, 3, 4] and sorted(board["accuracy_rank"]) == [1, 2, 3, 4]
    rc = evaluation.table("risk_control")
    for row in rows:  # guarantee held: datasets whose xdomain guarantee at risk 0.1 held, of those judged
        model = row.find("td", **{"class": "name"}).text
        mine = rc[(rc["model"] == model) & (rc["protocol"] == "xdomain") & (rc["target_risk"] == 0.1)]
        judged = [bool(x) for x in mine["held"] if not pd.isna(x)]
        cell = row.marked("guarantee")[0]
        assert cell.text == (f"{sum(judged)}/{len(judged)}" if judged else "\u2013")
        assert cell.attrs["data-value"] == (repr(sum(judged) / len(judged)) if judged else "")
    for row in rows:  # the verdict cell is labelled by the verdict's status
        model = row.find("td", **{"class": "name"}).text
        cell = row.marked("verdict")[0]
        assert f"status-{verdicts.loc[model, 'status']}" in cell.classes
    guide = root.marked("column-guide")
    assert len(guide) == 1 and [dt.text for dt in guide[0].find_all("dt")] == [
        "verdict",
        "mean AUC, AUC rank",
        "mean accuracy, accuracy rank",
        "change",
        "kappa",
        "DiSCA",
        "drift",
        "guarantee held",
        "vs best other",
    ]
    assert f"protocol {evaluation.parameters['protocol']}" in guide[0].text
    assert all(row.attrs["class"] == "ok" for row in rows)
    assert root.marked("summary-failed") == [] and root.marked("leaderboard-failed") == []


def test_index_header(hostile):
    root = page(hostile["out"] / "index.html")
    assert one_text(root, "sha256") == sha256_file(hostile["data"])
    header = root.marked("index-header")[0].text
    assert f"beyondauc {beyondauc.__version__}" in header and f"{len(DATASETS)} datasets" in header
    generator = [m for m in root.find_all("meta") if m.attrs.get("name") == "generator"]
    assert [m.attrs.get("content") for m in generator] == [f"beyondauc {beyondauc.__version__}"]


def test_index_links_resolve_inside_the_folder(hostile):
    out = hostile["out"].resolve()
    root = page(out / "index.html")
    hrefs = [a.attrs["href"] for a in root.find_all("a")]
    assert hrefs
    for href in hrefs:
        assert href.isascii() and " " not in href, href  # percent-encoded
        assert urllib.parse.quote(urllib.parse.unquote(href)) == href
        target = (out / urllib.parse.unquote(href)).resolve()
        assert target.is_relative_to(out) and target.is_file(), href
    for row in root.marked("model-row"):
        model = row.find("td", **{"class": "name"}).text
        folder = f"models/{safe_name(model)}/"
        links = [urllib.parse.unquote(a.attrs["href"]) for a in row.find_all("a")]
        assert links == [folder + f for f in ("report.html", "report.pdf", *(f"{n}.ipynb" for n in NOTEBOOKS))]
        assert len(row.marked("report-link")) == 1
    assert [a.attrs["href"] for a in root.marked("overview-link")] == ["overview/overview.html"]


# -- PDF ------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [*HOSTILE, None])
def test_pdf_renders(hostile, model):
    pdfium = pytest.importorskip("pypdfium2")
    path = report_path(hostile, model).with_suffix(".pdf")
    assert path.read_bytes()[:4] == b"%PDF"
    pdf = pdfium.PdfDocument(str(path))
    try:
        assert len(pdf) >= 1
        first = pdf[0]
        pixels = np.asarray(first.render(scale=1).to_pil().convert("RGB"))
        assert (pixels.min(axis=2) < 240).mean() > 0.01  # not blank
        assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 16
        text = first.get_textpage().get_text_range()
        assert "beyondauc report" in text
        if model is not None:
            assert model in text  # the header, fonts and unicode intact
        # the figures made it into the PDF: the first page holding an image renders as more than text
        with_image = [
            i for i in range(len(pdf)) if list(pdf[i].get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE], max_depth=3))
        ]
        assert with_image
        pixels = np.asarray(pdf[with_image[0]].render(scale=1).to_pil().convert("RGB"))
        assert (pixels.min(axis=2) < 240).mean() > 0.03
        assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 64
    finally:
        pdf.close()


@pytest.mark.parametrize("model", HOSTILE)
def test_pdf_summary_is_at_most_four_pages_and_no_page_is_near_empty(hostile, model):
    """Each model's PDF of the demo's data: the summary (up to appendix A) on at most 4 pages, and no page under a
    fifth full, measured on the page images, except the last of a section."""
    pytest.importorskip("pypdfium2")
    summary, thin, fills = summary_pages_and_thin_pages(report_path(hostile, model).with_suffix(".pdf"))
    assert 1 <= summary <= 4, summary
    assert thin == [], [round(f, 2) for f in fills]


# -- a failing notebook ------------------------------------------------------------------


def test_failure_fails_only_its_model(broken):
    result = broken["result"]
    assert broken["kwargs"]["notebooks_dir"] == broken["nbdir"]
    by_model = {r.model: r for r in result.reports}
    assert list(by_model) == [BROKEN, HEALTHY]  # the benchmark's column order
    bad, good = by_model[BROKEN], by_model[HEALTHY]
    assert bad.status == "failed"
    assert "RuntimeError" in bad.error and BOOM in bad.error and FAILING_NOTEBOOK in bad.error
    assert [(nb.name, nb.status) for nb in bad.notebooks] == [
        (n, "failed" if n == FAILING_NOTEBOOK else "ok") for n in NOTEBOOKS
    ]
    failed_nb = bad.notebooks[NOTEBOOKS.index(FAILING_NOTEBOOK)]
    assert failed_nb.error == f"RuntimeError: {BOOM}"
    assert good.status == "ok" and good.error is None
    assert result.overview.status == "ok"
    assert result.failed == (bad,) and not result.ok


def test_failure_keeps_the_executed_notebook_with_papermills_banner(broken):
    path = broken["out"] / "models" / BROKEN / f"{FAILING_NOTEBOOK}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    sources = "\n".join(c.source for c in nb.cells)
    assert "papermill-error-cell" in sources or "An Exception was encountered" in sources
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert [(e["ename"], e["evalue"]) for e in errors] == [("RuntimeError", BOOM)]


def test_failure_report_shows_it(broken):
    path = broken["out"] / "models" / BROKEN / "report.html"
    root = page(path)
    assert BOOM in one_text(root, "report-failed") and "RuntimeError" in one_text(root, "report-failed")
    failed = root.marked("section-failed")
    assert len(failed) == 1 and BOOM in failed[0].text
    sections, _ = check_structure(root)
    assert failed[0] in list(sections[NOTEBOOKS.index(FAILING_NOTEBOOK)].iter())  # in its own section
    assert root.find_all("img")  # the notebooks that ran are still in it


def test_failure_listed_in_index(broken):
    root = page(broken["out"] / "index.html")
    rows = {row.find("td", **{"class": "name"}).text: row for row in root.marked("model-row")}
    assert set(rows) == {BROKEN, HEALTHY}
    assert rows[BROKEN].attrs["class"] == "failed" and rows[HEALTHY].attrs["class"] == "ok"
    error = one_text(rows[BROKEN], "model-error")
    assert "RuntimeError" in error and BOOM in error
    assert rows[HEALTHY].marked("model-error") == []
    assert "1 of 3" in one_text(root, "summary-failed")
    for row in rows.values():  # the failed model's report and notebooks are linked too
        for a in row.find_all("a"):
            assert (broken["out"] / urllib.parse.unquote(a.attrs["href"])).is_file()


def test_failure_cli_exits_1_with_summary(broken):
    assert broken["code"] == 1
    lines = broken["stdout"].strip().splitlines()
    failed = [line for line in lines if "FAILED" in line]
    assert len(failed) == 1
    assert BROKEN in failed[0] and "RuntimeError" in failed[0] and BOOM in failed[0]
    assert HEALTHY not in failed[0]
    assert lines[0].startswith("2 model reports and the overview")


# -- code and parameters through the CLI ----------------------------------------------------


def test_cli_parameters_reach_the_evaluation(broken):
    """``-p`` evaluation parameters go to the one evaluation; the notebooks get only its path and the model."""
    assert broken["kwargs"]["parameters"] == {"protocol": "indata", "n_repeats": 2}
    evaluation = beyondauc.load_evaluation(broken["out"])
    assert evaluation.parameters["protocol"] == "indata" and evaluation.parameters["n_repeats"] == 2
    assert evaluation.parameters["method"] == "logistic"  # not asked for: the default
    pd.testing.assert_frame_equal(broken["result"].leaderboard, evaluation.table("leaderboard"))
    folder = broken["out"] / "models" / HEALTHY
    shown = one_text(page(folder / "report.html"), "parameters")
    assert "protocol=indata" in shown.split(", ") and "n_repeats=2" in shown.split(", ")
    for name in NOTEBOOKS:
        nb = nbformat.read(str(folder / f"{name}.ipynb"), as_version=4)
        assert nb.metadata.papermill.parameters == {"evaluation": "../../evaluation", "model": HEALTHY}
        injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
        assert len(injected) == 1 and f'model = "{HEALTHY}"' in injected[0].source
        assert "protocol" not in injected[0].source
    index = page(broken["out"] / "index.html")
    assert "protocol indata (threshold learnt on 80% of the dataset" in index.marked("column-guide")[0].text


def test_include_code_shows_code_and_parameters(broken):
    root = page(broken["out"] / "models" / HEALTHY / "report.html")
    classes = {c for e in root.iter() for c in e.classes}
    assert "jp-InputArea-editor" in classes
    assert "celltag_injected-parameters" in classes and "celltag_parameters" in classes
    text = root.text
    assert "# Parameters" in text and f'model = "{HEALTHY}"' in text and 'evaluation = "../../evaluation"' in text
    assert "open_evaluation(" in text
    assert root.find_all("img")
    assert [e for e in root.find_all("script") if e.attrs.get("src")] == []


# -- re-run into the same folder, on Dask -----------------------------------------------------


def test_dask_run_is_complete(rerun):
    assert rerun["kwargs"]["dask"] == rerun["address"]
    assert any(p.strip("_") == "report_job" for p in rerun["prefixes"])  # the reports ran on the cluster
    result = rerun["result"]
    assert result.ok and [r.model for r in result.reports] == [HEALTHY]
    folder = rerun["out"] / "models" / HEALTHY
    assert sorted(os.listdir(folder)) == sorted(["report.html", "notes.md", *(f"{n}.ipynb" for n in NOTEBOOKS)])
    root = page(folder / "report.html")
    check_structure(root)
    assert root.find_all("img") and root.marked("report-failed") == []
    assert all(0 < nb.kernel_seconds < nb.seconds for nb in result.notebook_runs)


def test_rerun_cli_exits_0_and_writes_the_index(rerun):
    assert rerun["code"] == 0
    assert rerun["stdout"].startswith("1 model reports and the overview")
    assert "FAILED" not in rerun["stdout"]
    assert (rerun["out"] / "index.html").is_file()


def test_rerun_replaces_cleanly(rerun):
    out, before = rerun["out"], rerun["before"]
    assert sorted(os.listdir(out / "models")) == [BROKEN, HEALTHY]
    assert os.listdir(out / "models" / BROKEN) == [
        "weights.pt"
    ]  # the model not in this run is gone, not the user's file
    assert {rel: (out / rel).read_bytes() for rel in USER_FILES} == USER_FILES  # the user's files are all there
    assert not set(USER_FILES) & set(manifest_files(out))
    assert dotfiles(out) == [] and leftovers(out) == []  # no staging folder, old report, lock or temp file
    for rel in (
        "index.html",
        f"models/{HEALTHY}/report.html",
        "overview/overview.html",
        *(f"models/{HEALTHY}/{n}.ipynb" for n in NOTEBOOKS),
    ):
        assert (out / rel).stat().st_mtime_ns > before[rel][0], rel
    for rel in ("index.html", f"models/{HEALTHY}/report.html"):
        assert sha256_file(out / rel) != before[rel][1], rel
    # the first run showed code, this one does not: the old page is not patched, it is replaced
    assert "jp-InputArea-editor" not in {
        c for e in page(out / "models" / HEALTHY / "report.html").iter() for c in e.classes
    }
    root = page(out / "index.html")
    assert [row.find("td", **{"class": "name"}).text for row in root.marked("model-row")] == [HEALTHY]
    assert f"models/{BROKEN}" not in (out / "index.html").read_text(encoding="utf-8")  # no report of it (it is
    # still in the data, so the evaluation ranks and compares against it)
    assert root.marked("summary-failed") == []


# -- beyondauc demo ------------------------------------------------------------------------------


def test_cli_demo_subset(demo_cli):
    assert demo_cli["code"] == 0, demo_cli["stdout"]
    out = demo_cli["out"]
    assert demo_cli["stdout"].startswith("1 model reports and the overview")
    assert "with 1 worker(s)" in demo_cli["stdout"]
    assert demo_cli["result"].jobs == 1
    root = page(out / "index.html")
    assert [row.find("td", **{"class": "name"}).text for row in root.marked("model-row")] == ["svm"]
    ref = resources.files("beyondauc") / "datasets" / "demo.csv.gz"
    with resources.as_file(ref) as path:
        assert one_text(root, "sha256") == sha256_file(path)
    assert "beyondauc demo benchmark" in root.marked("index-header")[0].text
    report_root = page(out / "models" / "svm" / "report.html")
    assert one_text(report_root, "source") == "beyondauc demo benchmark"
    params = one_text(report_root, "parameters")
    assert "datasets=" in params and all(d in params for d in DATASETS)
    check_structure(report_root)
    nb = nbformat.read(str(out / "models" / "svm" / "test_auroc.ipynb"), as_version=4)
    assert nb.metadata.papermill.parameters == {"evaluation": "../../evaluation", "model": "svm"}
    evaluation = beyondauc.load_evaluation(out)  # the demo's subset, evaluated once
    # --models picks the reports: the evaluation holds every model, so svm is ranked among all 8
    assert (
        len(evaluation.models) == 8 and "svm" in evaluation.models and sorted(evaluation.datasets) == sorted(DATASETS)
    )
    assert evaluation.data["source"] == "beyondauc demo benchmark"
    assert not (out / "data.csv.gz").exists()


# -- kill -9 and concurrent runs (notebooks cut to a cell: the runner is what is tested) --------------


def _start_cli(nbdir, args):
    return subprocess.Popen(
        [sys.executable, "-c", CLI_WITH_NOTEBOOKS, str(nbdir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def check_complete(out):
    """``out`` holds one complete report: every file its manifest lists, an index whose links resolve."""
    files = manifest_files(out)
    assert all((out / f).is_file() for f in files), [f for f in files if not (out / f).is_file()]
    assert "index.html" in files and "overview/overview.html" in files
    root = page.__wrapped__(out / "index.html")
    links = [a.attrs["href"] for a in root.find_all("a") if not a.attrs["href"].startswith(("#", "http"))]
    assert links and all((out / urllib.parse.unquote(h)).is_file() for h in links)
    return files


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("tiny")
    data = base / "scores.csv"
    broken_frame().to_csv(data, index=False)
    return {"data": data, "nbdir": tiny_notebooks(REPO_NOTEBOOKS, base / "notebooks")}


def test_kill_9_at_any_moment_leaves_a_complete_report(tiny, tmp_path):
    out = tmp_path / "out"
    args = ["report", str(tiny["data"]), "--out", str(out), "--jobs", "2", "--quiet"]
    start = time.perf_counter()
    first = _start_cli(tiny["nbdir"], args)
    assert first.wait(timeout=600) == 0, first.stderr.read()
    duration = time.perf_counter() - start
    check_complete(out)
    (out / "overview" / "my_slides.pptx").write_text("mine")
    rng = np.random.default_rng(9)
    for delay in sorted(rng.uniform(0.2, duration, size=2)):
        proc = _start_cli(tiny["nbdir"], args)
        time.sleep(delay)
        os.killpg(proc.pid, 9)  # the run and its workers, at a random moment
        proc.wait(timeout=60)
        check_complete(out)  # the previous report, or the new one if the run got that far
        assert (out / "overview" / "my_slides.pptx").read_text() == "mine" or leftovers(out)
    last = _start_cli(tiny["nbdir"], args)  # a re-run works and finishes what the killed runs left
    assert last.wait(timeout=600) == 0, last.stderr.read()
    files = check_complete(out)
    assert (out / "overview" / "my_slides.pptx").read_text() == "mine" and "overview/my_slides.pptx" not in files
    assert leftovers(out) == [] and dotfiles(out) == []


def test_second_run_into_a_folder_in_use_fails_clearly(tiny, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["report", str(tiny["data"]), "--out", str(out), "--jobs", "1", "--quiet"]
    release = tmp_path / "release"  # the first run's notebooks wait for it: the run holds the folder till then
    first = _start_cli(tiny_notebooks(REPO_NOTEBOOKS, tmp_path / "held", wait_for=release), args)
    lock = out / ".beyondauc.lock"
    deadline = time.monotonic() + 300
    try:
        while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read() if first.poll() else "slow"
            time.sleep(0.05)
        check_single_error(capsys, args, "--out", "in use by another beyondauc report run", f"pid {first.pid}")
        assert first.poll() is None  # refused while the first run was still running
    finally:
        release.touch()
    assert first.wait(timeout=600) == 0, first.stderr.read()  # the first run is undisturbed
    check_complete(out)
    assert leftovers(out) == []


def test_pdf_breaks_a_very_long_name_in_linear_time(tmp_path):
    """A 10,000-character model name in a table cell (WeasyPrint's ``overflow-wrap: anywhere`` is quadratic in
    it: the hostile-names report hung for many minutes) prints in seconds, and reads the same."""
    pytest.importorskip("weasyprint")
    from beyondauc.report.pdf import breakable_words, write_pdf_file

    name = "x" * 10_000
    png = "data:image/png;base64," + "A" * 200
    html = (
        f"<html><head><style>td, th {{ overflow-wrap: anywhere; }} .a{name[:70]} {{ color: red; }}</style></head>"
        f'<body><table><tr><th>{name}</th><td>{name}</td><td>0.5</td></tr></table><img src="{png}" alt="{name}">'
        f"<p>short words stay {'y' * 63}</p></body></html>"
    )
    broken = breakable_words(html)
    assert (
        broken.replace("\u200b", "").replace('<span style="overflow-wrap: break-word">', "").replace("</span>", "")
        == html
    )
    assert f'src="{png}" alt="{name}"' in broken and f".a{name[:70]} " in broken  # tags and styles untouched
    assert "y" * 63 in broken and max(map(len, re.findall("x+", broken.split("<body>")[1].split("<img")[0]))) == 32
    start = time.perf_counter()
    write_pdf_file(html, tmp_path / "long.pdf", tmp_path)
    assert time.perf_counter() - start < 30
    assert (tmp_path / "long.pdf").read_bytes()[:4] == b"%PDF"


@pytest.mark.parametrize("with_state", [True, False])
def test_the_report_exporter_picks_widget_outputs_as_nbconverts_does(monkeypatch, with_state):
    """The report's exporter registers nbconvert's widget filter through public names only: a widget
    view is shown when the notebook's metadata holds its state, and skipped (for its text) otherwise,
    as in nbconvert's own HTMLExporter."""
    from beyondauc.report import render as _render

    view = "application/vnd.jupyter.widget-view+json"
    nb = nbformat.v4.new_notebook()
    if with_state:
        nb.metadata["widgets"] = {
            "application/vnd.jupyter.widget-state+json": {
                "state": {"m1": {"model_name": "IntSliderModel", "state": {}}},
                "version_major": 2,
                "version_minor": 0,
            }
        }
    nb.cells = [
        nbformat.v4.new_code_cell(
            "slider",
            outputs=[
                nbformat.v4.new_output(
                    "display_data",
                    data={
                        view: {"model_id": "m1", "version_major": 2, "version_minor": 0},
                        "text/plain": "IntSlider(value=0)",
                    },
                )
            ],
        )
    ]

    def render():
        exporter = _render._exporter(False)
        header = {
            "title": "beyondauc report: m",
            "model": "m",
            "source": "scores.csv",
            "sha256": "0" * 64,
            "version": beyondauc.__version__,
            "date": "2026-01-01T00:00:00+00:00",
            "parameters": {},
            "failed": None,
            "include_code": False,
        }
        return exporter.from_notebook_node(nb, resources={"beyondauc": header, "metadata": {"name": "m"}})[0]

    ours, theirs, _, _ = pages_ours_and_nbconverts(monkeypatch, render)
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # a widget's new element id
    assert dom(uuid.sub("id", ours)) == dom(uuid.sub("id", theirs))
    assert ('"model_id": "m1"' in ours) == with_state
    assert ("IntSlider(value=0)" in ours) != with_state
