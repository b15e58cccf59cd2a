"""Tests of the ``beyondauc calibrate`` command line, in-process and as a real console script."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from beyondauc import (
    expected_accuracy,
    expected_accuracy_grid,
    load_benchmark,
    rank_changes,
    rank_table,
)
from helpers.cli import check_single_error, run

RECORD_KEYS = {"protocol", "method", "dataset", "domain", "model", "auc", "accuracy", "kappa"}
CELL = re.compile(r"^(\*?)(-?\d+\.\d) \((\d+)\)$")


# -- helpers ------------------------------------------------------------------


def run_json(argv):
    code, text = run(["calibrate", *argv, "--format", "json"])
    assert code == 0
    return json.loads(text)


def blocks(text):
    """Map title -> block body of the plain table format (title, '=' rule, table)."""
    out = {}
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        if len(lines) > 2 and set(lines[1]) == {"="}:
            out[lines[0]] = lines[2:]
    return out


def parse_simple(lines):
    """Parse a tabulate 'simple' table into a DataFrame of strings, using the dash rule for columns."""
    rule = lines[1]
    spans = [m.span() for m in re.finditer(r"-+", rule)]

    def cut(line):
        return [line[a : b if i < len(spans) - 1 else None].strip() for i, (a, b) in enumerate(spans)]

    header = cut(lines[0])
    return pd.DataFrame([cut(line) for line in lines[2:]], columns=header)


def write_csv(path, frame):
    frame.to_csv(path, index=False)
    return path


def records_frame(records):
    return pd.DataFrame(records).set_index(["protocol", "method", "dataset", "model"]).sort_index()


def assert_records_match_grid(records, grid, cols=("auc", "accuracy", "kappa", "balanced_accuracy", "mcc", "f1")):
    got = records_frame(records)
    exp = grid.set_index(["protocol", "method", "dataset", "model"]).sort_index()
    assert list(got.index) == list(exp.index)
    for c in cols:
        g = got[c].astype(float).to_numpy()
        e = exp[c].astype(float).to_numpy()
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=0, equal_nan=True, err_msg=c)


@pytest.fixture(scope="module")
def demo_table():
    code, text = run(["calibrate"])
    assert code == 0
    return text


# -- default run on the demo: plain tables ------------------------------------------


def test_table_format_titles_rank_cells_mean_and_marks(demo, demo_table):
    b = blocks(demo_table)
    assert demo_table.startswith("beyondauc ")
    titles = [
        "AUC",
        "Expected accuracy: protocol=xdomain, method=logistic",
        "Expected kappa: protocol=xdomain, method=logistic",
    ]
    for title in titles:
        assert title in b, list(b)
        t = parse_simple(b[title])
        assert list(t.columns) == ["model", *demo.datasets, "mean"]
        assert list(t["model"]) == list(demo.models)
        for col in t.columns[1:]:
            cells = [CELL.match(c) for c in t[col]]
            assert all(cells), (title, col, list(t[col]))
            marked = [m for m in cells if m.group(1) == "*"]
            assert marked, (title, col)
            # the marked cells are exactly the best (rank 1) cells of the column
            assert {id(m) for m in marked} == {id(m) for m in cells if m.group(3) == "1"}
    assert "Rank changes AUC -> accuracy (xdomain, logistic)" in b
    assert "Kendall's tau, AUC vs accuracy ranking (xdomain, logistic)" in b
    # one protocol x method: no Table 4 / 5
    assert not any("Table 4" in t or "Table 5" in t for t in b)


def test_table_cells_equal_api_values_and_ranks(demo, demo_table):
    res = expected_accuracy(demo, protocol="xdomain", method="logistic")
    b = blocks(demo_table)
    for title, score in (
        ("AUC", "auc"),
        ("Expected accuracy: protocol=xdomain, method=logistic", "accuracy"),
        ("Expected kappa: protocol=xdomain, method=logistic", "kappa"),
    ):
        t = parse_simple(b[title]).set_index("model")
        for d, m, v, r in rank_table(res, score=score).itertuples(index=False):
            cell = CELL.match(t.loc[m, d])
            assert cell.group(2) == f"{v * 100:.1f}", (title, d, m)
            assert int(cell.group(3)) == int(r), (title, d, m)


def test_demo_ranking_differs_between_auc_and_accuracy(demo, demo_table):
    res = expected_accuracy(demo, protocol="xdomain", method="logistic")
    ch = rank_changes(res, score="accuracy").query("dataset == 'mean'").set_index("model")
    moved = ch[ch["change"] != 0]
    assert len(moved) >= 1, "the demo should show the AUC hiding something"
    b = blocks(demo_table)
    auc = parse_simple(b["AUC"]).set_index("model")
    acc = parse_simple(b["Expected accuracy: protocol=xdomain, method=logistic"]).set_index("model")
    changes = parse_simple(b["Rank changes AUC -> accuracy (xdomain, logistic)"]).set_index("model")
    for m in demo.models:
        auc_rank = int(CELL.match(auc.loc[m, "mean"]).group(3))
        acc_rank = int(CELL.match(acc.loc[m, "mean"]).group(3))
        assert auc_rank == ch.loc[m, "auc_rank"] and acc_rank == ch.loc[m, "rank"], m
        assert int(changes.loc[m, "AUC rank"]) == auc_rank
        assert int(changes.loc[m, "accuracy rank"]) == acc_rank
        assert int(changes.loc[m, "rank change"]) == auc_rank - acc_rank
    m = moved.index[0]
    assert CELL.match(auc.loc[m, "mean"]).group(3) != CELL.match(acc.loc[m, "mean"]).group(3)


# -- JSON ---------------------------------------------------------------------------


def test_json_records_match_api_grid(demo):
    protocols, methods = ["xdomain", "outdata"], ["logistic", "stump"]
    argv = [a for p in protocols for a in ("--protocol", p)] + [a for m in methods for a in ("--method", m)]
    records = run_json(argv)
    assert isinstance(records, list)
    assert len(records) == len(protocols) * len(methods) * len(demo.datasets) * len(demo.models)
    assert all(set(r) >= RECORD_KEYS for r in records)
    grid = expected_accuracy_grid(demo, protocols=protocols, methods=methods)
    assert_records_match_grid(records, grid)
    # a few records by hand
    g = grid.set_index(["protocol", "method", "dataset", "model"])
    for r in (records[0], records[len(records) // 2], records[-1]):
        row = g.loc[(r["protocol"], r["method"], r["dataset"], r["model"])]
        assert r["auc"] == row["auc"] and r["accuracy"] == row["accuracy"] and r["kappa"] == row["kappa"]
        assert r["domain"] == demo.domains[r["dataset"]]


def test_json_nan_is_null_for_single_class_dataset(tmp_path, capsys):
    df = pd.DataFrame(
        {
            "dataset": ["a"] * 4 + ["b"] * 4 + ["one"] * 3,
            "label": [0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1],
            # 'one' holds positives only, scored above everything: calibrated everywhere as positive
            "m1": [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 5.0, 6.0, 7.0],
            "m2": [0.3, 0.2, 0.5, 0.7, 0.1, 0.9, 0.4, 0.8, 5.0, 6.0, 7.0],
        }
    )
    path = write_csv(tmp_path / "scores.csv", df)
    code, text = run(["calibrate", str(path), "--format", "json"])
    assert code == 0
    assert "NaN" not in text
    records = json.loads(text)
    assert len(records) == 3 * 2
    one = [r for r in records if r["dataset"] == "one"]
    assert len(one) == 2
    for r in one:
        assert r["auc"] is None and r["kappa"] is None
        assert r["accuracy"] == 1.0
    for r in records:
        if r["dataset"] != "one":
            assert isinstance(r["auc"], float) and isinstance(r["kappa"], float)
    # the undefined metrics are reported as warnings, not errors
    assert "single class" in capsys.readouterr().err
    # and the table format shows them as n/a
    code, text = run(["calibrate", str(path)])
    assert code == 0 and "n/a" in text


# -- several protocols / methods: Table 4 and Table 5 ---------------------------------------

GRID_ARGS = ["--protocol", "xdomain", "--protocol", "outdata", "--method", "logistic", "--method", "stump"]


def test_table4_and_table5_blocks(demo):
    code, text = run(["calibrate", *GRID_ARGS])
    assert code == 0
    b = blocks(text)
    t4 = [t for t in b if "Calibration modes" in t and "Table 4" in t]
    t5 = [t for t in b if "best of the calibration methods" in t and "Table 5" in t]
    assert len(t4) == 1 and len(t5) == 1
    modes = parse_simple(b[t4[0]])
    assert list(modes["mode"]) == ["auc", "xdomain-logistic", "xdomain-stump", "outdata-logistic", "outdata-stump"]
    assert list(modes.columns[1:]) == list(demo.models)
    best = parse_simple(b[t5[0]])
    assert list(best["protocol"]) == ["xdomain", "outdata"]
    # every protocol x method pair gets its own accuracy and kappa tables
    for p in ("xdomain", "outdata"):
        for m in ("logistic", "stump"):
            assert f"Expected accuracy: protocol={p}, method={m}" in b
            assert f"Expected kappa: protocol={p}, method={m}" in b
    # Table 5 cells are the best-of-methods mean kappa
    grid = expected_accuracy_grid(demo, protocols=["xdomain", "outdata"], methods=["logistic", "stump"])
    means = grid.groupby(["protocol", "model", "method"])["kappa"].mean()
    best = best.set_index("protocol")
    for p in ("xdomain", "outdata"):
        for m in demo.models:
            v = float(CELL.match(best.loc[p, m]).group(2))
            assert v == pytest.approx(round(means.loc[(p, m)].max() * 100, 1), abs=0.051)


def test_repeated_options_are_deduplicated(demo):
    records = run_json(["--protocol", "xdomain", "--protocol", "xdomain", "--method", "stump", "--method", "stump"])
    assert len(records) == len(demo.datasets) * len(demo.models)


def test_markdown_format():
    code, text = run(["calibrate", *GRID_ARGS, "--format", "markdown"])
    assert code == 0
    assert "### AUC" in text and "### Calibration modes" in text and "(Table 5)" in text
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table_lines) > 50
    assert all(line.rstrip().endswith("|") for line in table_lines)
    assert re.search(r"\*\*\d+\.\d \(1\)\*\*", text)
    assert "*" not in text.replace("**", "")  # no plain-format marks left over


def test_latex_format_bold_and_escaped_underscores(tmp_path):
    # names with underscores, read from a path with underscores
    df = pd.DataFrame(
        {
            "dataset": ["news_a"] * 6 + ["chat_b"] * 6 + ["web_c"] * 6,
            "label": [0, 1] * 9,
            "model_one": np.linspace(0, 1, 18) + np.tile([0, 0.3], 9),
            "model_two": np.linspace(1, 0, 18) + np.tile([0, 0.6], 9),
        }
    )
    path = write_csv(tmp_path / "my_scores.csv", df)
    code, text = run(["calibrate", str(path), *GRID_ARGS, "--format", "latex"])
    assert code == 0
    assert "\\textbf{" in text and "\\begin{tabular}" in text
    for name in ("news\\_a", "chat\\_b", "web\\_c", "model\\_one", "model\\_two"):
        assert name in text
    # outside LaTeX comments, every underscore is escaped
    for line in text.splitlines():
        if line.lstrip().startswith("%"):
            continue
        assert re.search(r"(?<!\\)_", line) is None, line
    assert "*" not in text


def test_csv_format_parses_with_pandas(demo):
    code, text = run(["calibrate", *GRID_ARGS, "--format", "csv"])
    assert code == 0
    got = pd.read_csv(io.StringIO(text))
    grid = expected_accuracy_grid(demo, protocols=["xdomain", "outdata"], methods=["logistic", "stump"])
    assert list(got.columns) == list(grid.columns)
    assert len(got) == len(grid)
    for c in ("auc", "accuracy", "kappa", "n_calibration"):
        np.testing.assert_allclose(got[c].to_numpy(float), grid[c].to_numpy(float), rtol=1e-12)
    assert list(got["model"]) == list(grid["model"])


# -- options are honoured ---------------------------------------------------------------


def test_domains_file_is_honoured(demo, tmp_path):
    mapping = {d: ("left" if i % 2 else "right") for i, d in enumerate(demo.datasets)}
    path = tmp_path / "domains.json"
    path.write_text(json.dumps(mapping))
    records = run_json([f"--domains={path}", "--protocol", "outdomain"])
    assert {r["dataset"]: r["domain"] for r in records} == mapping
    bench = load_benchmark(demo.frame, domains=mapping)
    grid = expected_accuracy_grid(bench, protocols=["outdomain"], methods=["logistic"])
    assert_records_match_grid(records, grid)
    default = expected_accuracy_grid(demo, protocols=["outdomain"], methods=["logistic"])
    assert not np.allclose(
        records_frame(records)["accuracy"].to_numpy(),
        default.set_index(["protocol", "method", "dataset", "model"]).sort_index()["accuracy"],
    )


def test_reference_opitz2024_is_honoured(demo):
    records = run_json(["--reference", "opitz2024", "--protocol", "outdata", "--method", "isotonic", "--repeats", "3"])
    grid = expected_accuracy_grid(demo, protocols=["outdata"], methods=["isotonic"], reference="opitz2024")
    assert_records_match_grid(records, grid)
    plain = expected_accuracy_grid(demo, protocols=["outdata"], methods=["isotonic"])
    assert not np.allclose(grid["auc"], plain["auc"])  # outdata AUC on the pooled other datasets
    assert not np.allclose(grid["accuracy"], plain["accuracy"])


def test_class_weight_balanced_is_honoured(demo):
    records = run_json(["--class-weight", "balanced"])
    grid = expected_accuracy_grid(demo, protocols=["xdomain"], methods=["logistic"], class_weight="balanced")
    assert_records_match_grid(records, grid)
    plain = expected_accuracy_grid(demo, protocols=["xdomain"], methods=["logistic"])
    assert not np.allclose(grid["accuracy"], plain["accuracy"])


def test_repeats_and_seed_are_honoured(demo):
    records = run_json(["--protocol", "indata", "--repeats", "3", "--seed", "1"])
    grid = expected_accuracy_grid(demo, protocols=["indata"], methods=["logistic"], n_repeats=3, random_state=1)
    assert_records_match_grid(records, grid)
    other = expected_accuracy_grid(demo, protocols=["indata"], methods=["logistic"], n_repeats=3, random_state=2)
    assert not np.allclose(grid["accuracy"], other["accuracy"])
    assert all(r["calibration"] == "indata" for r in records)


def test_models_option(demo):
    records = run_json(["--models", "svm, knn"])
    assert {r["model"] for r in records} == {"svm", "knn"}
    assert len(records) == 2 * len(demo.datasets)


# -- data sources -----------------------------------------------------------------------


def test_csv_data_path(tmp_path):
    rng = np.random.default_rng(0)
    n = 30
    y = np.tile([0, 1], 3 * n // 2)
    df = pd.DataFrame(
        {
            "dataset": np.repeat(["x", "y", "z"], n),
            "label": y,
            "good": rng.normal(size=3 * n) + 2 * y,
            "bad": rng.normal(size=3 * n) + 0.2 * y,
        }
    )
    path = write_csv(tmp_path / "bench.csv", df)
    records = run_json([str(path)])
    assert len(records) == 3 * 2
    grid = expected_accuracy_grid(load_benchmark(path), protocols=["xdomain"], methods=["logistic"])
    assert_records_match_grid(records, grid)
    code, text = run(["calibrate", str(path)])
    assert code == 0 and str(path) in text and "3 datasets, 2 models, 90 examples" in text


def test_true_style_directory(tmp_path):
    root = tmp_path / "true"
    root.mkdir()
    rng = np.random.default_rng(1)
    for name in ("mnbm", "frank", "begin", "q2"):
        n = 24
        y = np.tile([0, 1], n // 2)
        pd.DataFrame(
            {
                "id": np.arange(n),
                "grounding": [f"src {i}" for i in range(n)],
                "generated_text": [f"claim {i}" for i in range(n)],
                "label": y,
                "ANLI": rng.random(n) + 0.5 * y,
                "BLEU": rng.random(n) * 0.1 + 0.02 * y,
            }
        ).to_csv(root / f"{name}_dev_true_scores.csv", index=False)
    records = run_json([str(root), "--protocol", "indomain", "--protocol", "outdomain"])
    assert {r["dataset"] for r in records} == {"mnbm", "frank", "begin", "q2"}
    assert {r["model"] for r in records} == {"ANLI", "BLEU"}
    assert {r["dataset"]: r["domain"] for r in records} == {
        "mnbm": "summarization",
        "frank": "summarization",
        "begin": "dialogue",
        "q2": "dialogue",
    }
    grid = expected_accuracy_grid(load_benchmark(root), protocols=["indomain", "outdomain"], methods=["logistic"])
    assert_records_match_grid(records, grid)


# -- errors: exit 2, one line on stderr, no traceback -----------------------------------------


def test_error_nonexistent_path(capsys, tmp_path):
    check_single_error(capsys, ["calibrate", str(tmp_path / "missing.csv")], "does not exist")


def test_error_invalid_protocol(capsys):
    check_single_error(capsys, ["calibrate", "--protocol", "sideways"], "--protocol", "sideways")


def test_error_repeats_zero(capsys):
    check_single_error(capsys, ["calibrate", "--repeats", "0"], "--n-repeats")  # the old spelling, the API name


def test_error_csv_without_label(capsys, tmp_path):
    path = write_csv(tmp_path / "nolabel.csv", pd.DataFrame({"dataset": ["a", "a"], "m": [0.1, 0.2]}))
    check_single_error(capsys, ["calibrate", str(path)], "'label'")


def test_error_non_numeric_model_value(capsys, tmp_path):
    df = pd.DataFrame({"dataset": ["a"] * 4, "label": [0, 1, 0, 1], "m": ["0.1", "0.9", "oops", "0.7"]})
    path = write_csv(tmp_path / "bad.csv", df)
    line = check_single_error(capsys, ["calibrate", str(path)], "'m'", "oops")
    assert "line 4" in line


def test_error_unknown_option_and_bad_format(capsys):
    check_single_error(capsys, ["calibrate", "--frobnicate"])
    check_single_error(capsys, ["calibrate", "--format", "yaml"], "--format")
    check_single_error(capsys, ["calibrate", "--repeats", "many"], "--repeats")


def test_no_command_prints_help():
    code, text = run([])
    assert code == 0 and "calibrate" in text


# -- the real console script ----------------------------------------------------------------


def test_module_entry_point_subprocess(demo):
    proc = subprocess.run(
        [sys.executable, "-m", "beyondauc.cli", "calibrate", "--format", "json", "--method", "isotonic"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    grid = expected_accuracy_grid(demo, protocols=["xdomain"], methods=["isotonic"])
    assert_records_match_grid(records, grid)


def test_console_script_error_subprocess(tmp_path):
    script = Path(sys.executable).with_name("beyondauc")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "beyondauc.cli"]
    proc = subprocess.run([*cmd, "calibrate", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("beyondauc") and "Traceback" not in proc.stderr
    proc = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("beyondauc ")
