"""One task is a benchmark too: with one dataset the analyses that need others are left out, and said to be; the
defaults that need others fall back (protocol and cohorts: indata), and the report says which were used."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.evaluation.scope import analyses_table


def _one_task(n=300, seed=0):
    rng = np.random.default_rng(seed)
    parts = []
    for m, noise in (("a", 0.1), ("b", 0.3)):
        p = rng.uniform(0.2, 0.95, n)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": "task",
                    "id": np.arange(n),
                    "model": m,
                    "confidence": np.clip(p + rng.normal(0, noise, n), 0, 1),
                    "correct": (rng.uniform(size=n) < p).astype(int),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def test_one_dataset_runs_with_the_defaults_replaced_and_says_so():
    with pytest.warns(
        UserWarning,
        match=r"protocols outdomain, indomain, xdomain and outdata are left out: each "
        r"needs other datasets than the one evaluated, and the data has one",
    ):
        ev = ba.evaluate(_one_task(), n_bootstrap=20, noise_repeats=2, n_jobs=1)
    assert ev.parameters["protocol"] == "indata" and ev.parameters["cohort_protocol"] == "indata"
    assert set(ev.data["defaults_replaced"]) == {"protocol", "cohort_protocol"}
    assert set(ev.table("grid")["protocol"]) == {"indata"}
    assert set(ev.table("risk_control")["protocol"]) == {"indata"}
    assert len(ev.table("selective")) == 2 and len(ev.table("given_calibration")) == 2
    scope = analyses_table(ev).set_index("analysis")
    assert scope.loc["Cross-dataset protocols (xdomain, outdomain, indomain, outdata)", "status"] == "left out"
    assert scope.loc["Default protocol", "status"] == "replaced"
    assert "the data has one" in scope.loc["DiSCA out of distribution, NiDMA", "why"]


def test_a_value_given_is_kept_and_two_datasets_keep_the_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(
            _one_task(), n_bootstrap=0, noise_repeats=2, n_jobs=1, cohort_protocol="indata", protocol="indata"
        )
        assert ev.data["defaults_replaced"] == {}
        two = pd.concat([_one_task(), _one_task(seed=1).assign(dataset="other")], ignore_index=True)
        ev2 = ba.evaluate(two, n_bootstrap=0, noise_repeats=2, n_jobs=1)
    assert ev2.parameters["protocol"] == "xdomain" and ev2.data["defaults_replaced"] == {}


def test_the_report_command_runs_on_one_task(tmp_path):
    from beyondauc.cli import main

    path = tmp_path / "task.csv"
    _one_task(n=120).to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(
            ["report", str(path), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10", "--jobs", "1", "--quiet"]
        )
    assert code == 0
    html = (tmp_path / "rep" / "models" / "a" / "report.html").read_text(encoding="utf-8")
    assert "Default protocol" in html and "Cross-dataset protocols" in html
