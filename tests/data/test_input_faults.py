"""Input a researcher really has, and faults of it, end in one line: a text field of any size, one line
without a newline, a gzip file cut short or damaged, a seed out of numpy's range, a text column named as a
model, a missing `dataset` column; every message in the command line's spelling on the command line and
in the API's in Python; no traceback and no other library's warning text on stderr."""

from __future__ import annotations

import gzip
import re
import zlib
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc import load_benchmark
from beyondauc.data import readers
from helpers.cli import check_single_error, run

#: Fast options of an evaluation for the tests that compute one.
FAST = ["--n-bootstrap", "0", "--n-repeats", "2", "--noise-repeats", "2", "--n-points", "5", "--jobs", "1"]
#: What Python prints for a warning nobody caught (``file.py:12: RuntimeWarning: ...``), and numpy's own words.
RAW_WARNING = re.compile(r"\w+Warning:|warnings\.warn|invalid value encountered|unclosed event loop")


def clean_stderr(err):
    assert "Traceback" not in err, err
    assert not RAW_WARNING.search(err), err
    return err


def frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"dataset": np.repeat(["a", "b"], n // 2), "label": np.tile([0, 1], n // 2)})
    df["m1"] = df["label"] + rng.normal(0, 1, n)
    df["m2"] = df["label"] + rng.normal(0, 1, n)
    return df


# -- a text field of any size ---------------------------------------------------------------------------

BIG = 200_000  # over the csv module's default field limit (131072)


@pytest.fixture
def prompt_csv(tmp_path):
    df = frame()
    df["prompt"] = "short"
    df.loc[3, "prompt"] = "y" * BIG
    df.loc[5, "prompt"] = "line one\nline two " + "z" * BIG  # a quoted field spanning lines, and big
    path = tmp_path / "llm.csv"
    df.to_csv(path, index=False)
    return path, df


def test_a_200kb_text_field_loads(prompt_csv):
    path, df = prompt_csv
    with pytest.warns(UserWarning, match="ignored column.*'prompt'"):
        bench = load_benchmark(path)
    assert bench.models == ("m1", "m2") and len(bench) == len(df)
    np.testing.assert_array_equal(bench.scores("m1"), df["m1"].to_numpy())


def test_the_field_limit_is_restored(prompt_csv):
    import csv

    before = csv.field_size_limit()
    with pytest.warns(UserWarning):
        load_benchmark(prompt_csv[0])
    assert csv.field_size_limit() == before


def test_line_numbers_are_found_only_for_a_message(prompt_csv, monkeypatch):
    def scan(*args):
        raise AssertionError("line numbers were computed while every name was fine")

    monkeypatch.setattr(readers, "_csv_line", scan)
    with pytest.warns(UserWarning):
        load_benchmark(prompt_csv[0])


def test_a_bad_name_after_big_fields_names_its_line(prompt_csv, tmp_path):
    _, df = prompt_csv
    df.loc[30:, "dataset"] = "bad\u202ename"  # a bidirectional override: refused, naming the line
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    # its line: the header, 30 rows, and the extra line of row 5's quoted field
    with pytest.raises(ValueError, match=r"at file .*bad\.csv', line 33 holds"):
        load_benchmark(path)


def test_one_line_larger_than_the_field_limit_without_a_newline(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("x" * (BIG + 1), encoding="utf-8")  # a header of one field, no newline, no rows
    line = check_single_error(capsys, ["calibrate", str(path)], str(path), "has no rows")
    assert "field limit" not in line


# -- compressed input cut short or damaged -------------------------------------------------------------


def demo_gzip():
    return (resources.files("beyondauc") / "datasets" / "demo.csv.gz").read_bytes()


def complete_lines(data):
    """Brute force: the line ends of the stream, fed to zlib one byte at a time until it fails or ends."""
    unpack, text = zlib.decompressobj(wbits=31), b""
    for i in range(len(data)):
        try:
            text += unpack.decompress(data[i : i + 1])
        except zlib.error:
            break
    return text.count(b"\n")


@pytest.mark.parametrize("keep", [0.2, 0.6, 0.97])
def test_a_truncated_gzip_is_one_line_naming_file_and_line(tmp_path, capsys, keep):
    data = demo_gzip()
    cut = data[: int(len(data) * keep)]
    path = tmp_path / "demo.csv.gz"
    path.write_bytes(cut)
    n = complete_lines(cut)
    assert n > 0
    line = check_single_error(
        capsys,
        ["evaluate", str(path), "--out", str(tmp_path / "ev"), "--quiet"],
        str(path),
        "is cut short",
        f"after line {n},",
    )
    clean_stderr(line)
    assert not (tmp_path / "ev").exists()
    with pytest.raises(ValueError, match=rf"is cut short: its gzip stream ends after line {n},"):
        load_benchmark(path)


def test_a_damaged_gzip_is_one_line(tmp_path, capsys):
    data = bytearray(demo_gzip())
    data[3000:3040] = bytes(range(200, 240))  # garbage inside the deflate stream
    path = tmp_path / "demo.csv.gz"
    path.write_bytes(bytes(data))
    n = complete_lines(bytes(data))
    assert n > 0
    check_single_error(capsys, ["calibrate", str(path)], str(path), "is damaged", f"after line {n} (")


def test_a_wrong_crc_is_named(tmp_path):
    data = bytearray(demo_gzip())
    data[-8] ^= 0xFF  # the CRC of the trailer
    path = tmp_path / "demo.csv.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"is damaged: its gzip stream fails gzip's own check \(CRC"):
        load_benchmark(path)


@pytest.mark.parametrize("name", ["scores.tsv.gz", "scores.jsonl.gz", "scores.csv.gz"])
def test_every_gzip_form_cut_short(tmp_path, name):
    df = frame(400)
    path = tmp_path / name
    if name.endswith(".jsonl.gz"):
        text = df.to_json(orient="records", lines=True)
    else:
        text = df.to_csv(index=False, sep="\t" if ".tsv" in name else ",")
    data = gzip.compress(text.encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=rf"file '.*{re.escape(name)}' is cut short"):
        load_benchmark(path)


def test_a_truncated_gzip_domains_file(tmp_path):
    path = tmp_path / "domains.csv.gz"
    text = "dataset,domain\n" + "".join(f"d{i},news\n" for i in range(5000))
    data = gzip.compress(text.encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"domains file '.*domains\.csv\.gz' is cut short"):
        ba.read_domains(path)


# -- messages that say what to do, in the caller's spelling ---------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--out", "{out}", "-p", "random_state=4294967296"],
        ["evaluate", "--out", "{out}", "--random-state", "4294967296"],
        ["report", "demo", "--out", "{out}", "--random-state", "4294967296"],
        ["calibrate", "--random-state", "4294967296"],
        ["diagnose", "--model", "svm", "--random-state", "-1"],
    ],
)
def test_a_seed_out_of_range_names_the_flag_and_the_range(capsys, tmp_path, argv):
    argv = [a.format(out=tmp_path / "out") for a in argv]
    line = check_single_error(capsys, argv, "--random-state must be an int in [0, 4294967295]")
    assert "`random_state`" not in line and "Seed must be" not in line
    assert not (tmp_path / "out").exists()


def test_a_seed_out_of_range_in_python_names_the_keyword():
    with pytest.raises(ValueError, match=re.escape("`random_state` must be an int in [0, 4294967295]")):
        ba.evaluate("demo", random_state=2**32)


@pytest.fixture(params=["csv", "parquet"])
def with_text_column(request, tmp_path):
    df = frame()
    df["prompt"] = "hello"
    path = tmp_path / f"scores.{request.param}"
    if request.param == "csv":
        df.to_csv(path, index=False)
    else:
        pytest.importorskip("pyarrow")
        df.to_parquet(path)
    return path


@pytest.mark.parametrize("command", ["evaluate", "report", "calibrate"])
def test_models_naming_a_text_column_says_it_is_not_numeric(capsys, tmp_path, with_text_column, command):
    extra = ["--out", str(tmp_path / "out"), "--quiet"] if command != "calibrate" else []
    line = check_single_error(
        capsys,
        [command, str(with_text_column), "--models", "m1,prompt", *extra],
        "'prompt' must be numeric",
        "'hello'",
        str(with_text_column),
    )
    assert "not in" not in line and "not found" not in line
    clean_stderr(line)


def test_models_naming_no_column_lists_the_columns(capsys, tmp_path, with_text_column):
    check_single_error(
        capsys,
        ["evaluate", str(with_text_column), "--models", "zz", "--out", str(tmp_path / "o")],
        "['zz'] not found",
        "'prompt'",
    )


@pytest.fixture
def no_dataset_column(tmp_path):
    path = tmp_path / "one.csv"
    frame().drop(columns="dataset").to_csv(path, index=False)
    return path


# one dataset: xdomain cohorts asked for by name have no validation cohort (by default they fall back to indata)
@pytest.mark.parametrize("command", ["evaluate", "report"])
def test_a_missing_dataset_column_speaks_the_cli(capsys, tmp_path, no_dataset_column, command):
    line = check_single_error(
        capsys,
        [command, str(no_dataset_column), "--out", str(tmp_path / "o"), "--quiet", "--cohort-protocol", "xdomain"],
        "--cohort-protocol xdomain",
        "set --cohort-protocol indata",
    )
    assert "`" not in line and "cohort_protocol" not in line


def test_a_missing_dataset_column_speaks_python_in_python(no_dataset_column):
    with pytest.raises(ValueError, match=r"or set `cohort_protocol`='indata'$"):
        ba.evaluate(no_dataset_column, n_bootstrap=0, cohort_protocol="xdomain")


def test_one_example_dataset_speaks_the_cli(capsys, tmp_path):
    path = tmp_path / "tiny.csv"
    df = frame()
    df.loc[len(df)] = {"dataset": "c", "label": 1, "m1": 0.5, "m2": 0.5}
    df.to_csv(path, index=False)
    line = check_single_error(
        capsys,
        ["evaluate", str(path), "--out", str(tmp_path / "o")],
        "--selective-protocol indata",
        "leave the dataset out with --datasets",
    )
    assert "`" not in line


# -- the one renderer of parameter names ---------------------------------------------------------------


def test_the_renderer_follows_each_subcommands_options():
    from beyondauc.cli.commands import build_parser
    from beyondauc.cli.wording import cli_message, spelling_of

    commands = build_parser().commands
    message = "set `cohort_protocol`='indata', or give `domains=` (dataset -> domain); `n_repeats` too"
    assert (
        cli_message(message, spelling_of(commands["evaluate"]))
        == "set --cohort-protocol indata, or give --domains (dataset -> domain); --n-repeats too"
    )
    # calibrate has --domains and --n-repeats but no cohorts and no -p: the clause suggesting them is left out
    assert (
        cli_message(message, spelling_of(commands["calibrate"]))
        == "give --domains (dataset -> domain); --n-repeats too"
    )
    # names that are no parameter stay as written; so does a value with a space, quoted for the shell
    assert cli_message("`y_true` has one class", spelling_of(commands["evaluate"])) == "`y_true` has one class"
    assert (
        cli_message("`val_split`='my val' names no rows", spelling_of(commands["evaluate"]))
        == "--val-split 'my val' names no rows"
    )


# -- quiet by default ----------------------------------------------------------------------------------


@pytest.fixture
def noisy_csv(tmp_path):
    df = frame(200)
    df["note"] = "text"  # an ignored column: one warning; no domains: another
    path = tmp_path / "noisy.csv"
    df.to_csv(path, index=False)
    return path


def test_evaluate_prints_one_line_about_its_warnings(capsys, tmp_path, noisy_csv):
    out = tmp_path / "ev"
    code, _ = run(["evaluate", str(noisy_csv), "--out", str(out), "--quiet", *FAST])
    err = clean_stderr(capsys.readouterr().err)
    assert code == 0, err
    assert err.splitlines() == [
        "beyondauc: 2 warnings, each kept in full in the evaluation (its manifest's data.notes); --verbose prints them"
    ]
    notes = ba.load_evaluation(out).data["notes"]
    assert len(notes) == 2 and any("ignored column(s) 'note'" in n["text"] for n in notes)
    assert any("left out" in n["text"] for n in notes)


def test_verbose_prints_each_warning_in_the_cli_spelling(capsys, tmp_path, noisy_csv):
    code, _ = run(["evaluate", str(noisy_csv), "--out", str(tmp_path / "ev"), "--quiet", "--verbose", *FAST])
    err = clean_stderr(capsys.readouterr().err)
    assert code == 0, err
    lines = err.splitlines()
    assert len(lines) == 2 and all(x.startswith("beyondauc: warning: ") for x in lines), err
    assert "give --models" in err and "give --domains" in err and "`" not in err


def test_the_notes_of_a_model_are_in_its_report_text(noisy_csv):
    from beyondauc.evaluation.scope import notes

    with pytest.warns(UserWarning):
        ev = ba.evaluate(noisy_csv, n_bootstrap=0, n_repeats=2, noise_repeats=2, n_points=5, n_jobs=1)
    said = notes(ev, model="m1")
    assert len(said) == 2
    text = ba.scope_markdown(ev, model="m1")
    assert "**Notes**" in text
    from beyondauc.report import markdown_text

    assert all(f"- {markdown_text(note)}" in text.splitlines() for note in said)
    assert any("ignored column(s) 'note'" in note for note in said)


def test_other_libraries_warnings_are_dropped_at_the_boundary():
    import warnings

    from beyondauc.utils.validation import warnings_once

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with warnings_once() as log:
            np.array([0.0]) / np.array([0.0])  # numpy: invalid value encountered in divide
            warnings.warn("unclosed event loop", ResourceWarning)
            warnings.warn("ours", UserWarning)
    assert [str(w.message) for w in caught] == ["ours"]
    assert [n["text"] for n in log.said] == ["ours"]


# -- a bootstrap too large to run is refused up front, with what it would cost -----------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--out", "{out}", "-p", "n_bootstrap=100000000"],
        ["report", "demo", "--out", "{out}", "--n-bootstrap", "100000000"],
        ["calibrate", "--n-bootstrap", "100000000"],
        ["selective", "--model", "svm", "--n-bootstrap", "100000000"],
    ],
)
def test_a_huge_bootstrap_is_refused_with_its_cost(capsys, tmp_path, argv):
    argv = [a.format(out=tmp_path / "out") for a in argv]
    # 10^8 replicates x 59 kB = 5.9e12 bytes = 5.4 TiB; x 0.014 s = 1.4e6 s = 16 days (REPLICATE_COST)
    line = check_single_error(
        capsys, argv, "--n-bootstrap must be an int in [0, 10000]", "got 100000000", "about 5.4 TiB and 16 days of CPU"
    )
    assert "`" not in line
    assert not (tmp_path / "out").exists()


def test_the_bound_itself_is_accepted_and_python_names_the_keyword():
    from beyondauc.evaluation.parameters import check_evaluation_parameters
    from beyondauc.metrics.uncertainty.bootstrap import MAX_BOOTSTRAP

    assert check_evaluation_parameters({"n_bootstrap": MAX_BOOTSTRAP})["n_bootstrap"] == 10_000
    with pytest.raises(
        ValueError,
        match=r"^`n_bootstrap` must be an int in \[0, 10000\].*got 10001, which would "
        r"need about 0\.5 GiB and 2 minutes of CPU on the 8 x 8 demo$",
    ):
        ba.evaluate("demo", n_bootstrap=10_001)


def test_the_demo_prints_its_progress_and_one_line_of_warnings(demo_run):
    """The README's first command (the session's shared run, see ``shared_runs``) as a user sees it."""
    proc, out = demo_run, demo_run.out
    assert proc.returncode == 0, proc.stderr[-3000:]
    clean_stderr(proc.stderr)
    lines = [x for x in re.split(r"[\r\n]", proc.stderr) if x.strip()]
    progress = re.compile(r"beyondauc (report|evaluate): ")
    said = [x for x in lines if not progress.match(x)]
    assert len(said) <= 1, said  # at most one line about the warnings (the bound is 3)
    notes = ba.load_evaluation(out / "evaluation").data["notes"]
    if said:
        assert said[0] == (
            f"beyondauc: {len(notes)} warning{'s' if len(notes) > 1 else ''}, each kept in full in "
            "the reports (What this report shows); --verbose prints "
            f"{'them' if len(notes) > 1 else 'it'}"
        )
    for note in notes:  # shown in the report of every model it concerns (the demo's folders are its names)
        opening = re.match(r"[\w ]+", note["text"]).group(0)
        for model in note["models"]:
            page = (out / "models" / model / "report.html").read_text(encoding="utf-8")
            assert "<strong>Notes</strong>" in page and opening in page, (model, note)


# -- the fault cases as a user runs them: a real process, Python's warnings on ----------------------------


def cli_process(*args):
    """The command line in its own process with ``-W default`` (so any uncaught warning would be printed)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-W", "default", "-m", "beyondauc.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def fault_files(tmp_path, prompt_csv, no_dataset_column):
    cut = tmp_path / "cut.csv.gz"
    data = demo_gzip()
    cut.write_bytes(data[: len(data) // 2])
    text = tmp_path / "text.csv"
    df = frame()
    df["prompt"] = "hello"
    df.to_csv(text, index=False)
    return {
        "big": prompt_csv[0],
        "cut": cut,
        "text": text,
        "nodataset": no_dataset_column,
        "lines": complete_lines(data[: len(data) // 2]),
        "out": tmp_path / "out",
    }


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["evaluate", "{cut}", "--out", "{out}"], ["{cut}", "is cut short", "after line {lines},"]),
        (["calibrate", "{cut}"], ["{cut}", "is cut short"]),
        (["evaluate", "--out", "{out}", "-p", "random_state=4294967296"], ["--random-state", "[0, 4294967295]"]),
        (
            ["evaluate", "{text}", "--models", "m1,prompt", "--out", "{out}"],
            ["'prompt' must be numeric", "{text}", "line 2"],
        ),
        (["evaluate", "{nodataset}", "--out", "{out}", "--cohort-protocol", "xdomain"], ["--cohort-protocol indata"]),
        (["evaluate", "--out", "{out}", "-p", "n_bootstrap=100000000"], ["--n-bootstrap", "10000", "TiB"]),
    ],
    ids=["truncated-gzip", "truncated-gzip-calibrate", "seed", "text-model", "no-dataset-column", "huge-bootstrap"],
)
def test_each_fault_is_one_line_in_a_real_process(fault_files, argv, needles):
    argv = [a.format(**fault_files) for a in argv]
    code, out, err = cli_process(*argv)
    assert code == 2, err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("beyondauc: error: "), err
    for needle in needles:
        assert needle.format(**fault_files) in lines[0], (needle, err)
    assert "`" not in lines[0]
    clean_stderr(err)
    assert not fault_files["out"].exists()


def test_a_big_text_field_runs_in_a_real_process(fault_files):
    code, out, err = cli_process("evaluate", fault_files["big"], "--out", fault_files["out"], "--quiet", *FAST)
    assert code == 0, err
    clean_stderr(err)
    notes = ba.load_evaluation(fault_files["out"]).data["notes"]
    assert any("ignored column(s) 'prompt'" in n["text"] for n in notes)
    assert err.splitlines() == [
        f"beyondauc: {len(notes)} warnings, each kept in full in the evaluation (its "
        "manifest's data.notes); --verbose prints them"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "a,b,c\n1,2,3\n",
        "a,b,c\r\n1,2,3\r\n",
        "a,b,c",
        '"a,1",b\n1,2\n',
        '"a\nb",c\n1,2\n',
        "\n\na,b\n",
        "",
        "x" * 10,
        " a , b \n",
    ],
)
@pytest.mark.parametrize("sep", [",", "\t"])
def test_the_header_is_the_csv_modules(tmp_path, text, sep):
    import csv
    import io

    text = text.replace(",", sep)
    path = tmp_path / "h.csv"
    path.write_bytes(text.encode())
    assert readers.csv_header(path, sep) == next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
