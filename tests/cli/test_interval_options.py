"""``--bootstrap`` and ``--confidence-level`` on ``beyondauc diagnose`` and ``beyondauc selective``."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from beyondauc import cohort_diagnostics, load_demo, selective_answering
from helpers.cli import check_single_error, run


def _ok(capsys, argv):
    code, text = run(argv)
    err = capsys.readouterr().err
    assert code == 0, (argv, err)
    return text


def test_selective_json_intervals_equal_api(capsys):
    rec = json.loads(
        _ok(
            capsys,
            [
                "selective",
                "--model",
                "svm",
                "--dataset",
                "wine",
                "--bootstrap",
                "40",
                "--confidence-level",
                "0.9",
                "--seed",
                "3",
                "--format",
                "json",
            ],
        )
    )
    api = selective_answering(
        load_demo(), "svm", "wine", n_bootstrap=40, confidence_level=0.9, random_state=3
    ).to_dict()
    for name in ("accuracy", "area", "aurc", "disca", "a", "b"):
        assert rec[f"{name}_low"] == pytest.approx(api[f"{name}_low"], abs=1e-12)
        assert rec[f"{name}_high"] == pytest.approx(api[f"{name}_high"], abs=1e-12)


def test_diagnose_csv_intervals_equal_api(capsys):
    text = _ok(capsys, ["diagnose", "--model", "svm", "--bootstrap", "30", "--repeats", "2", "--format", "csv"])
    frame = pd.read_csv(io.StringIO(text))
    api = cohort_diagnostics(load_demo(), "svm", frame["dataset"][0], n_repeats=2, n_bootstrap=30).to_dict()
    for name in ("drift", "wasserstein", "bias_robustness_test", "auc_val"):
        assert frame[f"{name}_low"][0] == pytest.approx(api[f"{name}_low"], abs=1e-12)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_text_formats_show_the_intervals(capsys, fmt):
    text = _ok(capsys, ["selective", "--model", "svm", "--bootstrap", "20", "--format", fmt])
    assert "95% bootstrap percentile interval" in text and "20 replicates" in text
    text = _ok(capsys, ["diagnose", "--model", "svm", "--repeats", "2", "--format", fmt])
    assert "bootstrap" not in text and "drift_low" not in text


def test_bad_interval_options(capsys):
    check_single_error(capsys, ["diagnose", "--model", "svm", "--bootstrap", "-1"], "--n-bootstrap")
    check_single_error(capsys, ["selective", "--model", "svm", "--confidence-level", "1"], "--confidence-level")
