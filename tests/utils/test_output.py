"""Output safety: a report or evaluation folder is beyondauc's only by its manifest, and nothing else is touched.

One mechanism (``beyondauc.utils.output.OutputFolder``) writes reports and
evaluations alike. These tests hold it to the promises of issue 26:

* a manifest is untrusted input: a path it lists outside its folder (``..``,
  absolute, through a symlink) refuses the folder, and nothing is deleted;
* a folder is ours only when its manifest says so by kind and schema version
  (not an ``index.html`` copied from a report, not any ``manifest.json``), and
  only the files that manifest lists are replaced;
* everything that can be refused is refused before any computation;
* the lock and the staging folder live inside ``out``: a writable ``out`` in a
  read-only parent works, and nothing is left inside or beside it;
* a run killed after its commit point is finished by the next run.

The command-line cases run ``beyondauc`` in a subprocess, on two small
datasets with cheap parameters; the mechanism's cases need no computation.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import beyondauc
from beyondauc.evaluation.container import SCHEMA_VERSION, evaluation_folder
from beyondauc.report import safe_name
from beyondauc.utils import output as _output
from beyondauc.utils.output import MANIFEST, OutputFolder, ReportFolder, UnsafeManifestError
from helpers.cli import check_single_error
from helpers.report import BROKEN, CLI_WITH_NOTEBOOKS, HEALTHY, broken_frame, manifest_files, tiny_notebooks

REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: ``beyondauc evaluate`` on two datasets and one model, with cheap parameters: about a second.
CHEAP = [
    "--datasets",
    "wine,diabetes",
    "--models",
    "svm",
    "-p",
    "noise_repeats=2",
    "-p",
    "n_bootstrap=0",
    "-p",
    "n_repeats=2",
    "--quiet",
]


# -- helpers ------------------------------------------------------------------------------


def tree(folder):
    """relative path -> bytes of every file below ``folder`` (symlinks as their target text)."""
    out = {}
    for p in sorted(Path(folder).rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[rel] = f"-> {os.readlink(p)}".encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


def hidden(folder):
    """The lock and staging entries of beyondauc inside ``folder`` and beside it."""
    folder = Path(folder)
    inside = (
        [p.name for p in folder.iterdir() if p.name.startswith(".beyondauc") and p.name != MANIFEST]
        if folder.is_dir()
        else []
    )
    beside = [p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")]
    return sorted(inside + beside)


def cli(*args, cwd=None, preexec_fn=None):
    """Run ``beyondauc`` in a subprocess; return the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "beyondauc.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        preexec_fn=preexec_fn,
    )


def check_one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("beyondauc: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def write_report(out, files, **kwargs):
    """A report of the output-folder machinery alone: write ``files`` (path -> text) and commit."""
    with ReportFolder(out, **kwargs) as folder:
        for rel, text in files.items():
            (folder.staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder.staging / rel).write_text(text)
        folder.commit()


def report_manifest(listed, **fields):
    """A report manifest as this version writes it, listing ``listed`` (``fields`` replace or, when None, drop)."""
    data = {
        "kind": "beyondauc-report",
        "schema_version": 1,
        "format": "beyondauc-report",
        "version": 1,
        "beyondauc": beyondauc.__version__,
        "files": listed,
    }
    data.update(fields)
    return json.dumps({k: v for k, v in data.items() if v is not None})


FIRST = {
    "index.html": "1",
    "models/bert/report.html": "bert 1",
    "models/svm/report.html": "svm 1",
    "overview/overview.html": "o 1",
}
SECOND = {"index.html": "2", "models/svm/report.html": "svm 2", "overview/overview.html": "o 2"}


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "base.csv"
    broken_frame().to_csv(path, index=False)
    return path


@pytest.fixture()
def no_computation(monkeypatch):
    """Fail the test if an evaluation is computed or report workers start (the run must be refused first)."""
    from beyondauc.report import runner as report

    evaluate_module = sys.modules["beyondauc.evaluation.pipeline"]  # `beyondauc.evaluate` is the function

    calls = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise AssertionError("computed although the run should have been refused first")

    monkeypatch.setattr(evaluate_module, "evaluate", refuse)
    monkeypatch.setattr(report, "evaluate", refuse)
    monkeypatch.setattr(report, "_make_executor", refuse)
    return calls


# -- a manifest is untrusted input ----------------------------------------------------------


def _victims(base):
    victims = {base / "victim1.txt": "v1", base / "elsewhere" / "victim2.txt": "v2"}
    for path, text in victims.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return victims


@pytest.mark.parametrize("entry", ["../victim1.txt", "ABSOLUTE", "models/../../victim1.txt"])
def test_report_manifest_traversal_is_refused_and_nothing_deleted(tmp_path, small_csv, entry):
    """The issue's case: a shared report folder whose manifest lists ``../victim1.txt`` or an absolute path."""
    victims = _victims(tmp_path)
    entry = str(tmp_path / "elsewhere" / "victim2.txt") if entry == "ABSOLUTE" else entry
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "index.html").write_text("report")
    (evil / MANIFEST).write_text(report_manifest(["index.html", entry]))
    before = tree(evil)
    proc = cli("report", small_csv, "--out", evil, "--quiet")
    check_one_line_error(proc, str(evil), MANIFEST, repr(entry), "nothing was deleted")
    assert all(path.read_text() == text for path, text in victims.items())
    assert tree(evil) == before and hidden(evil) == []


def test_manifest_entries_through_symlinks_are_refused(tmp_path):
    """A listed symlink pointing out, or a path through a symlinked folder out: refused, nothing deleted."""
    victims = _victims(tmp_path)
    for entry, make in [
        ("link.txt", lambda out: (out / "link.txt").symlink_to(tmp_path / "victim1.txt")),
        ("sub/victim2.txt", lambda out: (out / "sub").symlink_to(tmp_path / "elsewhere")),
    ]:
        out = tmp_path / f"out-{entry.split('/')[0]}"
        out.mkdir()
        make(out)
        (out / MANIFEST).write_text(report_manifest([entry]))
        with pytest.raises(UnsafeManifestError, match=f"lists '{entry}', which resolves outside the folder"):
            write_report(out, SECOND)
        assert all(path.read_text() == text for path, text in victims.items())
        assert hidden(out) == [] and (out / entry).exists()


def test_a_symlink_inside_the_folder_is_not_outside(tmp_path):
    out = tmp_path / "out"
    write_report(out, FIRST)
    (out / "models" / "alias.html").symlink_to("svm/report.html")  # resolves inside: allowed
    data = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(report_manifest([*data["files"], "models/alias.html"]))
    write_report(out, SECOND)
    assert not os.path.lexists(out / "models" / "alias.html")  # listed as ours, not written again: deleted
    assert (out / "models" / "svm" / "report.html").read_text() == "svm 2"


def test_evaluation_manifest_traversal_is_refused(tmp_path):
    """An evaluation manifest whose table file lies outside: ``evaluate --out`` refuses, ``load_evaluation`` too."""
    victims = _victims(tmp_path)
    out = tmp_path / "ev"
    out.mkdir()
    manifest = {
        "kind": "beyondauc-evaluation",
        "schema_version": SCHEMA_VERSION,
        "parameters": {},
        "data": {},
        "tables": {"grid": {"file": "../victim1.txt"}},
    }
    (out / "manifest.json").write_text(json.dumps(manifest))
    proc = cli("evaluate", "demo", "--out", out, *CHEAP)
    check_one_line_error(proc, str(out), "manifest.json lists '../victim1.txt'", "nothing was deleted")
    assert all(path.read_text() == text for path, text in victims.items())
    with pytest.raises(ValueError, match="names '../victim1.txt', which leads out of the folder"):
        beyondauc.load_evaluation(out)


def test_a_killed_runs_staging_state_is_untrusted_too(tmp_path):
    victims = _victims(tmp_path)
    out = tmp_path / "out"
    write_report(out, FIRST)
    stage = out / ".beyondauc-staging-forged"
    stage.mkdir()
    (stage / ".beyondauc-staging.json").write_text(
        json.dumps(
            {
                "kind": "beyondauc-staging",
                "complete": True,
                "manifest": MANIFEST,
                "files": [],
                "remove": ["../victim1.txt"],
            }
        )
    )
    before = tree(out)
    with pytest.raises(UnsafeManifestError, match="lists '../victim1.txt'"):
        write_report(out, SECOND)
    assert all(path.read_text() == text for path, text in victims.items()) and tree(out) == before


# -- ours by the manifest only ---------------------------------------------------------------


def test_legacy_looking_folder_keeps_every_user_file(tmp_path, small_csv):
    """A copy of a beyondauc index.html (``data-beyondauc="``) beside the user's files, no manifest: refused."""
    out = tmp_path / "legacy"
    (out / "overview").mkdir(parents=True)
    (out / "index.html").write_text('<table data-beyondauc="leaderboard"></table>')
    (out / "data.csv.gz").write_bytes(b"\x1f\x8bthe user's data")
    (out / "overview" / "overview.pdf").write_bytes(b"%PDF the user's")
    before = tree(out)
    proc = cli("report", small_csv, "--out", out, "--quiet")
    check_one_line_error(proc, str(out), "not a beyondauc report", MANIFEST, "give a new or empty folder")
    assert tree(out) == before and hidden(out) == []


def test_evaluate_into_a_foreign_manifest_keeps_every_file(tmp_path):
    """The issue's web project: ``myapp/manifest.json``, ``src/app.js``, ``README.md``."""
    out = tmp_path / "myapp"
    (out / "src").mkdir(parents=True)
    (out / "manifest.json").write_text('{"name": "myapp", "start_url": "/"}')
    (out / "src" / "app.js").write_text("console.log('app')")
    (out / "README.md").write_text("# myapp")
    before = tree(out)
    proc = cli("evaluate", "demo", "--out", out, *CHEAP)
    check_one_line_error(
        proc, str(out), "manifest.json that is not a beyondauc evaluation manifest", "give a new or empty folder"
    )
    assert tree(out) == before and hidden(out) == []
    (out / "README.md").unlink()  # a foreign manifest.json alone is not ours either
    (out / "src" / "app.js").unlink()
    (out / "src").rmdir()
    check_one_line_error(cli("evaluate", "demo", "--out", out, *CHEAP), "not a beyondauc evaluation manifest")
    assert tree(out) == {"manifest.json": b'{"name": "myapp", "start_url": "/"}'}


def test_a_users_notes_in_an_evaluation_folder_survive_a_rerun(tmp_path):
    out = tmp_path / "ev"
    first = cli("evaluate", "demo", "--out", out, *CHEAP)
    assert first.returncode == 0, first.stderr
    (out / "NOTES.md").write_text("my notes")
    (out / "plots").mkdir()
    (out / "plots" / "fig.png").write_bytes(b"png")
    manifest = json.loads((out / "manifest.json").read_text())
    created = manifest["created"]
    # a table the next evaluation does not write is the evaluation's own: deleted with it
    manifest["tables"]["retired"] = {"file": "retired.parquet"}
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "retired.parquet").write_bytes(b"old")
    again = cli("evaluate", "demo", "--out", out, *CHEAP)
    assert again.returncode == 0, again.stderr
    assert (out / "NOTES.md").read_text() == "my notes" and (out / "plots" / "fig.png").read_bytes() == b"png"
    assert not (out / "retired.parquet").exists()
    ev = beyondauc.load_evaluation(out)
    assert ev.created and ev.models == ("svm",) and "retired" not in ev.tables
    assert json.loads((out / "manifest.json").read_text())["created"] >= created
    assert hidden(out) == []


def test_evaluation_save_through_the_api_keeps_user_files(tmp_path):
    ev = beyondauc.evaluate(
        "demo", datasets=["wine", "diabetes"], models=["svm"], noise_repeats=2, n_bootstrap=0, n_repeats=2
    )
    path = ev.save(tmp_path / "ev")
    (path / "NOTES.md").write_text("n")
    assert ev.save(path) == path and (path / "NOTES.md").read_text() == "n"
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "manifest.json").write_text("{}")
    with pytest.raises(FileExistsError, match="`path` .*web.* not a beyondauc evaluation manifest"):
        ev.save(tmp_path / "web")
    assert tree(tmp_path / "web") == {"manifest.json": b"{}"}


def test_a_report_manifest_of_the_previous_version_is_ours(tmp_path):
    """Without ``kind``: recognised by its ``format`` and ``version``; only the files it lists are replaced."""
    out = tmp_path / "old"
    for rel, text in FIRST.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    (out / "models" / "svm" / "weights.pt").write_text("user")
    (out / MANIFEST).write_text(report_manifest(sorted(FIRST), kind=None, schema_version=None))
    write_report(out, SECOND)
    assert (out / "models" / "svm" / "weights.pt").read_text() == "user"
    assert (out / "index.html").read_text() == "2" and not (out / "models" / "bert").exists()
    data = json.loads((out / MANIFEST).read_text())
    assert (data["kind"], data["schema_version"], data["format"], data["version"]) == (
        "beyondauc-report",
        1,
        "beyondauc-report",
        1,
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "beyondauc-report", "schema_version": 99},
        {"kind": "something"},
        {"kind": None, "format": "beyondauc-report", "version": 7},
        {"files": "index.html"},
    ],
)
def test_an_unknown_report_manifest_is_not_ours(tmp_path, fields):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("theirs")
    (out / MANIFEST).write_text(report_manifest(["index.html"], **fields))
    before = tree(out)
    with pytest.raises(FileExistsError, match="not a beyondauc report manifest"):
        write_report(out, SECOND)
    assert tree(out) == before and hidden(out) == []


# -- refused before any computation ------------------------------------------------------------


def test_a_users_file_where_a_model_report_goes_is_refused_before_computing(
    tmp_path, small_csv, capsys, no_computation
):
    """``models/<model>/report.html`` of the user's, in a report folder of ours: refused at once, nothing computed."""
    out = tmp_path / "out"
    write_report(out, FIRST)
    theirs = out / "models" / safe_name(HEALTHY) / "report.html"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("the user's")
    before = tree(out)
    check_single_error(
        capsys,
        ["report", str(small_csv), "--out", str(out), "--quiet"],
        f"models/{safe_name(HEALTHY)}/report.html",
        "move it away",
    )
    assert no_computation == [] and not (out / "evaluation").exists()
    assert tree(out) == before and hidden(out) == []


@pytest.mark.parametrize("blocker", ["models", "evaluation"])
def test_a_users_file_where_a_folder_goes_is_refused_before_computing(
    tmp_path, small_csv, capsys, no_computation, blocker
):
    out = tmp_path / "out"
    write_report(out, SECOND)
    if blocker == "models":
        shutil.rmtree(out / "models")
    (out / blocker).write_text("a file of the user's")
    check_single_error(capsys, ["report", str(small_csv), "--out", str(out), "--quiet"], repr(blocker))
    assert no_computation == [] and (out / blocker).read_text() == "a file of the user's"


def test_a_users_table_file_is_refused_before_computing(tmp_path, capsys, no_computation):
    out = tmp_path / "ev"
    out.mkdir()
    (out / "manifest.json").write_text(
        json.dumps(
            {
                "kind": "beyondauc-evaluation",
                "schema_version": SCHEMA_VERSION,
                "tables": {"datasets": {"file": "datasets.parquet"}},
            }
        )
    )
    (out / "grid.parquet").write_bytes(b"the user's")
    check_single_error(capsys, ["evaluate", "demo", "--out", str(out), *CHEAP], "'grid.parquet'", "move it away")
    assert no_computation == [] and (out / "grid.parquet").read_bytes() == b"the user's"


def test_a_users_file_appearing_during_the_run_is_refused_at_commit(tmp_path):
    out = tmp_path / "out"
    write_report(out, SECOND)
    with pytest.raises(FileExistsError, match="models/bert/report.html"):
        with ReportFolder(out) as folder:
            (out / "models" / "bert").mkdir()
            (out / "models" / "bert" / "report.html").write_text("the user's")
            for rel, text in FIRST.items():
                (folder.staging / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder.staging / rel).write_text(text)
            folder.commit()
    assert (out / "models" / "bert" / "report.html").read_text() == "the user's"
    assert (out / "index.html").read_text() == "2" and hidden(out) == []


# -- the lock and the staging folder live inside out -----------------------------------------------


def _without_root_override():
    """For a subprocess run as root: drop the capabilities that ignore file permissions (else a no-op)."""
    if os.geteuid() != 0:
        return None

    def drop():
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl")

    return drop


@pytest.fixture()
def read_only_parent(tmp_path):
    parent = tmp_path / "ro"
    (parent / "rw").mkdir(parents=True)
    parent.chmod(0o555)
    try:
        probe = subprocess.run(
            [sys.executable, "-c", f"open({str(parent / 'probe')!r}, 'w')"],
            preexec_fn=_without_root_override(),
            capture_output=True,
        )
        if probe.returncode == 0:
            pytest.skip("this system lets the test write into a read-only folder")
        yield parent / "rw"
    finally:
        parent.chmod(0o755)


def test_evaluate_into_a_writable_folder_of_a_read_only_parent(read_only_parent):
    out = read_only_parent
    proc = cli("evaluate", "demo", "--out", out, *CHEAP, preexec_fn=_without_root_override())
    assert proc.returncode == 0, proc.stderr
    assert beyondauc.load_evaluation(out).models == ("svm",)
    assert os.listdir(out.parent) == ["rw"] and hidden(out) == []
    again = cli("evaluate", "demo", "--out", out, *CHEAP, preexec_fn=_without_root_override())
    assert again.returncode == 0, again.stderr


def test_report_into_a_writable_folder_of_a_read_only_parent(read_only_parent, small_csv, tmp_path):
    out = read_only_parent
    nbdir = tiny_notebooks(REPO_NOTEBOOKS, tmp_path / "notebooks")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CLI_WITH_NOTEBOOKS,
            str(nbdir),
            "report",
            str(small_csv),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--quiet",
            "-p",
            "noise_repeats=2",
            "-p",
            "n_bootstrap=0",
            "-p",
            "n_repeats=2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_without_root_override(),
    )
    assert proc.returncode == 0, proc.stderr
    files = manifest_files(out)
    assert "index.html" in files and f"models/{safe_name(BROKEN)}/report.html" in files
    assert all((out / f).is_file() for f in files)
    assert os.listdir(out.parent) == ["rw"] and hidden(out) == []


def test_an_unwritable_out_is_refused_before_computing(tmp_path, capsys, no_computation, monkeypatch):
    out = tmp_path / "ev"

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(out / ".beyondauc.lock"))

    monkeypatch.setattr(_output.os, "open", denied)
    check_single_error(
        capsys,
        ["evaluate", "demo", "--out", str(out), *CHEAP],
        str(out),
        "is not writable",
        "choose a folder you can write to",
    )
    assert no_computation == [] and not out.exists()  # the folder this run made is removed again


def test_lock_and_staging_are_inside_out_during_the_run_and_gone_after(tmp_path):
    out = tmp_path / "out"
    with ReportFolder(out) as folder:
        assert folder.staging.parent == out.resolve()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
        assert (out / ".beyondauc.lock").read_text() == str(os.getpid())
        (folder.staging / "index.html").write_text("1")
        folder.commit()
    assert tree(out).keys() == {"index.html", MANIFEST} and hidden(out) == []
    with pytest.raises(RuntimeError, match="interrupted"):  # abandoned: out as it was, nothing left
        with ReportFolder(out) as folder:
            (folder.staging / "index.html").write_text("half")
            raise RuntimeError("interrupted")
    assert (out / "index.html").read_text() == "1" and hidden(out) == []
    with pytest.raises(RuntimeError):  # a first run into a new folder that fails leaves no folder
        with ReportFolder(tmp_path / "new"):
            raise RuntimeError
    assert not (tmp_path / "new").exists()


def test_a_second_run_fails_at_once_while_the_first_holds_the_folder(tmp_path):
    out = tmp_path / "ev"
    with evaluation_folder(out):
        with pytest.raises(BlockingIOError, match=f"in use by another beyondauc evaluation run .pid {os.getpid()}"):
            with evaluation_folder(out):
                pass
    assert hidden(out) == [] and not out.exists()


# -- kill -9: before the commit point nothing changes, after it the next run finishes ----------------


def _killed(out, files, *, complete, moved=(), remove=()):
    """A staging folder inside ``out`` as a run killed at that point leaves it (``moved`` files already in)."""
    stage = Path(out) / ".beyondauc-staging-killed"
    for rel, text in files.items():
        target = (Path(out) if rel in moved else stage) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if complete:
        manifest = report_manifest(sorted(files))
        (Path(out) / MANIFEST if MANIFEST in moved else stage / MANIFEST).write_text(manifest)
    state = {"kind": "beyondauc-staging", "complete": complete}
    if complete:
        state.update(manifest=MANIFEST, files=sorted([*files, MANIFEST]), remove=sorted(remove))
    stage.mkdir(exist_ok=True)
    (stage / ".beyondauc-staging.json").write_text(json.dumps(state))
    return stage


def test_a_run_killed_before_its_commit_point_leaves_the_old_output(tmp_path):
    out = tmp_path / "out"
    write_report(out, FIRST)
    (out / "notes.txt").write_text("mine")
    before = tree(out)
    stage = _killed(out, SECOND, complete=False)
    (out / ".beyondauc-staging-empty").mkdir()  # killed before its state was written
    (out / ".beyondauc-staging-foreign").mkdir()  # not ours (no state file): never touched
    (out / ".beyondauc-staging-foreign" / "x").write_text("x")
    before[".beyondauc-staging-foreign/x"] = b"x"
    with ReportFolder(out) as folder:
        assert not stage.exists() and not (out / ".beyondauc-staging-empty").exists()
        ours = (".beyondauc.lock", folder.staging.name)
        assert {k: v for k, v in tree(out).items() if k.split("/")[0] not in ours} == before
    assert tree(out) == before and hidden(out) == [".beyondauc-staging-foreign"]


@pytest.mark.parametrize("moved", [(), ("models/svm/report.html",), ("models/svm/report.html", "index.html")])
def test_a_run_killed_during_its_roll_forward_is_finished_by_the_next(tmp_path, moved):
    out = tmp_path / "out"
    write_report(out, FIRST)
    (out / "models" / "bert" / "weights.pt").write_text("user")
    old = set(manifest_files(out))
    _killed(out, SECOND, complete=True, moved=moved, remove=old - set(SECOND))
    # at the moment of the kill, every file the manifest in out lists is there
    assert all((out / f).is_file() for f in manifest_files(out))
    with ReportFolder(out):
        pass  # entering finishes it
    assert manifest_files(out) == sorted(SECOND)
    assert {k: v for k, v in tree(out).items() if k != MANIFEST} == {
        **{k: v.encode() for k, v in SECOND.items()},
        "models/bert/weights.pt": b"user",
    }
    assert hidden(out) == []


def test_a_first_run_killed_during_its_roll_forward_is_finished_by_the_next(tmp_path):
    """A new folder, killed after some files moved in but before its manifest: not taken for a foreign folder."""
    out = tmp_path / "out"
    out.mkdir()
    _killed(out, FIRST, complete=True, moved=("models/svm/report.html",))
    write_report(out, SECOND)
    assert manifest_files(out) == sorted(SECOND) and not (out / "models" / "bert").exists()
    assert hidden(out) == []


def test_an_evaluation_run_finishes_a_killed_evaluation_save(tmp_path):
    ev = beyondauc.evaluate(
        "demo", datasets=["wine", "diabetes"], models=["svm"], noise_repeats=2, n_bootstrap=0, n_repeats=2
    )
    out = ev.save(tmp_path / "ev")
    with evaluation_folder(out) as folder:
        ev._write(folder.staging)
        folder.commit = lambda: None  # killed after writing everything, before the commit point
        files = sorted(_output._files(folder.staging))
        state = {
            "kind": "beyondauc-staging",
            "complete": True,
            "manifest": "manifest.json",
            "files": files,
            "remove": [],
        }
        (folder.staging / ".beyondauc-staging.json").write_text(json.dumps(state))
        os.replace(folder.staging / "grid.parquet", out / "grid.parquet")  # ... and after one rename
        folder._committed = True  # leaving does not clean it up: as after a kill
    assert any(p.name.startswith(".beyondauc-staging-") for p in out.iterdir())
    with evaluation_folder(out):
        pass
    assert hidden(out) == [] and set(beyondauc.load_evaluation(out).tables) == set(ev.tables)


def test_output_folder_kinds_do_not_mix(tmp_path):
    """A report folder is not an evaluation folder, nor the other way round."""
    report, ev = tmp_path / "report", tmp_path / "ev"
    write_report(report, SECOND)
    with pytest.raises(FileExistsError, match="not a beyondauc evaluation"):
        with evaluation_folder(report):
            pass
    with OutputFolder(ev, _output.EVALUATION) as folder:
        (folder.staging / "manifest.json").write_text(
            json.dumps({"kind": "beyondauc-evaluation", "schema_version": SCHEMA_VERSION, "tables": {}})
        )
        folder.commit()
    with pytest.raises(FileExistsError, match="not a beyondauc report"):
        write_report(ev, SECOND)
    assert tree(report).keys() == {*SECOND, MANIFEST} and tree(ev).keys() == {"manifest.json"}
