"""The command line speaks its own interface: ``--nan-policy`` exists on every command
that loads data, and errors suggest flags (``--nan-policy drop``), not API arguments."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from beyondauc import load_benchmark
from beyondauc.cli import commands as cli
from helpers.cli import check_single_error, run

LOADING = ["calibrate", "diagnose", "selective", "report", "demo"]


def frame_with_nan():
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame(
        {
            "dataset": np.repeat(["a", "b"], n // 2),
            "split": np.tile(["val", "test"], n // 2),
            "label": np.tile([0, 0, 1, 1], n // 4),
        }
    )
    df["good"] = df["label"] + rng.normal(0, 0.6, n)
    df["other"] = df["label"] + rng.normal(0, 0.9, n)
    df.loc[5, "other"] = np.nan
    return df


@pytest.fixture
def nan_csv(tmp_path):
    path = tmp_path / "scores.csv"
    frame_with_nan().to_csv(path, index=False)
    return path


@pytest.mark.parametrize("command", LOADING)
def test_every_loading_command_has_nan_policy(command):
    sub = cli.build_parser().commands[command]
    action = sub._option_string_actions["--nan-policy"]
    assert tuple(action.choices) == ("raise", "drop") and action.default == "raise"


@pytest.mark.parametrize(
    "argv",
    [
        ["calibrate", "{path}"],
        ["diagnose", "{path}", "--model", "good"],
        ["selective", "{path}", "--model", "good"],
        ["report", "{path}", "--quiet"],
    ],
)
def test_nonfinite_error_suggests_the_cli_flag(capsys, nan_csv, argv):
    argv = [a.format(path=nan_csv) for a in argv]
    line = check_single_error(capsys, argv, "'other'", "line 7", "--nan-policy drop")
    assert "nan_policy" not in line


def test_api_error_suggests_the_api_argument(nan_csv):
    with pytest.raises(ValueError, match=r'pass nan_policy="drop"$'):
        load_benchmark(nan_csv)


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_nan_policy_drop_equals_the_api(capsys, nan_csv, command):
    code, text = run(
        [command, str(nan_csv), "--model", "good", "--dataset", "a", "--nan-policy", "drop", "--format", "json"]
        + (["--repeats", "2"] if command == "diagnose" else [])
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning: dropped 1 row(s) with NaN/inf scores" in err
    rec = json.loads(text)
    with pytest.warns(UserWarning, match="dropped 1 row"):
        bench = load_benchmark(nan_csv, nan_policy="drop")
    assert rec["n_val"] + rec["n_test"] == 19 if command == "diagnose" else rec["n"] < 20
    if command == "diagnose":
        from beyondauc import cohort_diagnostics

        assert rec["drift"] == cohort_diagnostics(bench, "good", "a", n_repeats=2).drift.score


def test_calibrate_nan_policy_drop(capsys, nan_csv):
    code, text = run(["calibrate", str(nan_csv), "--nan-policy", "drop", "--format", "json", "--repeats", "2"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "dropped 1 row(s)" in err
    assert {r["model"] for r in json.loads(text)} == {"good", "other"}


def test_report_passes_nan_policy_and_domains_to_run_report(monkeypatch, capsys, nan_csv):
    """`report --nan-policy drop --domains ...` hands run_report the path with nan_policy and the domains (the
    evaluation reads the data with them and records them); the header shows the file."""
    seen = {}

    class Result:
        ok = True

        def summary(self):
            return "ok"

    def fake_run_report(data, **kwargs):
        seen["data"], seen["kwargs"] = data, kwargs
        return Result()

    monkeypatch.setattr("beyondauc.report.run_report", fake_run_report)
    code, _ = run(
        ["report", str(nan_csv), "--nan-policy", "drop", "--quiet", "--pos-label", "1", "--domains", "x=news"]
    )
    assert code == 0, capsys.readouterr().err
    assert seen["data"] == str(nan_csv)
    assert seen["kwargs"]["nan_policy"] == "drop" and seen["kwargs"]["pos_label"] == 1
    assert seen["kwargs"]["domains"] == {"x": "news"}
    code, _ = run(["report", str(nan_csv), "--quiet"])  # the defaults: raise, the data's own domains
    assert seen["kwargs"]["nan_policy"] == "raise" and seen["kwargs"]["domains"] is None


def test_models_hint_only_where_the_flag_exists(capsys, tmp_path):
    """A model missing from one TRUE file: calibrate suggests --models; diagnose has no
    --models, so its message names the problem without suggesting a flag it lacks."""
    root = tmp_path / "true"
    root.mkdir()
    a = pd.DataFrame({"label": [0, 1, 0, 1], "m1": [0.1, 0.9, 0.2, 0.8], "m2": [0.3, 0.4, 0.1, 0.9]})
    a.to_csv(root / "begin_dev_true_scores.csv", index=False)
    a.drop(columns="m2").to_csv(root / "q2_dev_true_scores.csv", index=False)
    line = check_single_error(capsys, ["calibrate", str(root)], "'m2' is missing from file", "give --models")
    assert "models=" not in line
    line = check_single_error(capsys, ["diagnose", str(root), "--model", "m1"], "'m2' is missing from file")
    assert line.endswith("(dataset 'q2')"), line


@pytest.mark.parametrize("misspelled", ["datset", "Dataset"])
def test_misspelled_dataset_column_in_the_cli(capsys, tmp_path, misspelled):
    df = frame_with_nan().dropna().rename(columns={"dataset": misspelled})
    df["domain"] = np.where(df[misspelled] == "a", "news", "chat")
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    line = check_single_error(
        capsys,
        ["calibrate", str(path)],
        f"a column {misspelled!r}: did you mean 'dataset'?",
        "'label'",
        "'split'",
        "'id'",
    )
    assert "several values" not in line
