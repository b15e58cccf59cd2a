"""``--domains`` (a file, or NAME=DOMAIN pairs) and ``--nan-policy`` on every command that reads data.

Both come from the one parameter table (flag, default, help); each command's output with them equals the
API on the benchmark read with the same domains / policy.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.cli import commands as cli
from beyondauc.evaluation.parameters import PARAMETERS
from helpers.cli import check_single_error, run

READING = ["calibrate", "diagnose", "selective", "evaluate", "report", "demo"]
DOMAINS = {"a": "news", "b": "news", "c": "chat"}
FAST = ["--n-bootstrap", "0", "--n-repeats", "2", "--noise-repeats", "2", "--n-points", "5"]


def scores(nan=False):
    rng = np.random.default_rng(1)
    n = 40
    df = pd.DataFrame({"dataset": np.repeat(list("abc"), n), "label": np.tile([0, 1], 3 * n // 2)})
    df["m1"] = df["label"] + rng.normal(0, 1, len(df))
    df["m2"] = df["label"] + rng.normal(0.5, 1.5, len(df))
    if nan:
        df.loc[7, "m2"] = np.nan  # dataset 'a', file line 9
    return df


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "scores.csv"
    scores().to_csv(path, index=False)
    return path


@pytest.fixture
def nan_csv(tmp_path):
    path = tmp_path / "nan.csv"
    scores(nan=True).to_csv(path, index=False)
    return path


def domain_forms(tmp_path):
    """The same mapping as --domains arguments: one pairs value, repeated flags, a JSON file, a CSV file."""
    as_json = tmp_path / "domains.json"
    as_json.write_text(json.dumps(DOMAINS), encoding="utf-8")
    as_csv = tmp_path / "domains.csv"
    pd.DataFrame({"dataset": list(DOMAINS), "domain": list(DOMAINS.values())}).to_csv(as_csv, index=False)
    return {
        "pairs": ["--domains", "a=news, b=news,c=chat"],
        "repeated": ["--domains", "a=news", "--domains", "b=news,c=chat"],
        "json": ["--domains", str(as_json)],
        "csv": ["--domains", str(as_csv)],
        "file and pairs": ["--domains", str(as_json), "--domains", "c=chat"],
    }


# -- the options ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", READING)
def test_every_reading_command_has_both_options_from_the_table(command):
    sub = cli.build_parser().commands[command]
    by_flag = {flag: action for action in sub.options for flag in action.option_strings}
    domains = by_flag[PARAMETERS["domains"].flag]
    assert domains.option_strings == ["--domains"] and domains.default is None
    assert PARAMETERS["domains"].help in domains.help and "NAME=DOMAIN" in domains.help
    nan = by_flag[PARAMETERS["nan_policy"].flag]
    assert nan.option_strings == ["--nan-policy"]
    assert tuple(nan.choices) == ("raise", "drop") and nan.default == PARAMETERS["nan_policy"].default == "raise"
    assert PARAMETERS["nan_policy"].help in nan.help


@pytest.mark.parametrize("form", ["pairs", "repeated", "json", "csv", "file and pairs"])
def test_domains_in_every_form_give_the_api_grid(csv, tmp_path, form):
    code, text = run(
        [
            "calibrate",
            str(csv),
            "--protocol",
            "outdomain",
            "--protocol",
            "indomain",
            "--repeats",
            "2",
            "--format",
            "json",
            *domain_forms(tmp_path)[form],
        ]
    )
    assert code == 0
    got = pd.DataFrame(json.loads(text))
    assert dict(zip(got["dataset"], got["domain"])) == DOMAINS
    want = ba.expected_accuracy_grid(
        ba.load_benchmark(csv, domains=DOMAINS), protocols=["outdomain", "indomain"], methods=["logistic"], n_repeats=2
    )
    np.testing.assert_array_equal(got["accuracy"].to_numpy(float), want["accuracy"].to_numpy(float))


@pytest.mark.parametrize("command, protocol", [("diagnose", "indomain"), ("selective", "outdomain")])
def test_diagnose_and_selective_read_the_domains(csv, tmp_path, command, protocol):
    code, text = run(
        [
            command,
            str(csv),
            "--model",
            "m2",
            "--dataset",
            "c",
            "--protocol",
            protocol,
            "--format",
            "json",
            *domain_forms(tmp_path)["repeated"],
        ]
    )
    assert code == 0
    rec = json.loads(text)
    bench = ba.load_benchmark(csv, domains=DOMAINS)
    if command == "diagnose":
        want = ba.cohort_diagnostics(bench, "m2", "c", protocol=protocol)
        assert rec["cohorts"] == want.to_dict()["cohorts"] and rec["n_val"] == want.to_dict()["n_val"]
        assert rec["drift"] == want.drift.score
    else:
        want = ba.selective_answering(bench, "m2", "c", protocol=protocol)
        assert rec["disca"] == want.to_dict()["disca"] and rec["accuracy"] == want.to_dict()["accuracy"]
        assert rec["n"] == len(bench.labels("c"))  # outdomain: calibrated on 'a' and 'b', scored on all of 'c'


def test_evaluate_records_the_domains_and_computes_every_protocol(csv, tmp_path):
    out = tmp_path / "ev"
    code, _ = run(["evaluate", str(csv), "--out", str(out), "--quiet", *FAST, *domain_forms(tmp_path)["pairs"]])
    assert code == 0
    ev = ba.load_evaluation(out)
    assert ev.parameters["domains"] == DOMAINS and ev.data["domains"] == DOMAINS
    assert set(ev.table("grid")["protocol"]) == set(ba.PROTOCOLS)
    assert ev.data["protocols_left_out"] == {}


def test_report_hands_the_domains_and_the_policy_to_the_evaluation(csv, tmp_path, monkeypatch):
    """run_report(domains=, nan_policy=) reach the evaluation's parameters (stopped there: no notebook runs)."""
    from beyondauc.report import runner

    seen = {}

    class Stop(Exception):
        pass

    def evaluate(data, **params):
        seen.update(params)
        raise Stop

    monkeypatch.setattr(runner, "evaluate", evaluate)
    with pytest.raises(Stop):
        ba.run_report(
            csv,
            out=tmp_path / "r",
            jobs=1,
            progress=False,
            domains=DOMAINS,
            nan_policy="drop",
            parameters={"n_bootstrap": 0},
        )
    assert seen["domains"] == DOMAINS and seen["nan_policy"] == "drop" and seen["n_bootstrap"] == 0


@pytest.mark.parametrize(
    "bad, needle",
    [
        ({"domains": {"a": 1}}, "`domains` must be a mapping dataset -> domain"),
        ({"nan_policy": "ignore"}, "`nan_policy` must be one of 'raise', 'drop'"),
        ({"parameters": {"domains": DOMAINS}}, "`parameters` may not set ['domains']; use the arguments"),
    ],
)
def test_report_refuses_bad_data_options_before_any_work(csv, tmp_path, bad, needle):
    with pytest.raises(ValueError) as info:
        ba.run_report(csv, out=tmp_path / "r", progress=False, **bad)
    assert needle in str(info.value)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["--domains", "nofile.json"], ["--domains 'nofile.json' is neither a file nor NAME=DOMAIN pairs"]),
        (["--domains", "a="], ["--domains 'a=' must be NAME=DOMAIN pairs"]),
        (
            ["--domains", "a=news", "--domains", "a=chat"],
            ["--domains gives dataset 'a' two domains: 'news' and 'chat'"],
        ),
        (["--domains", "a=news,a=chat"], ["two domains"]),
    ],
)
@pytest.mark.parametrize("command", ["calibrate", "evaluate"])
def test_bad_domains_are_one_line_naming_the_flag(capsys, csv, tmp_path, argv, needles, command):
    extra = ["--out", str(tmp_path / "ev")] if command == "evaluate" else []
    check_single_error(capsys, [command, str(csv), *extra, *argv], *needles)


def test_python_keeps_its_own_words_for_the_same_mistake(csv):
    with pytest.raises(ValueError, match=r"Give `domains=` \(dataset -> domain\)"):
        ba.expected_accuracy(ba.load_benchmark(csv), protocol="outdomain")


# -- --nan-policy drop -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:protocols outdomain and indomain are left out")
def test_evaluate_nan_policy_drop_equals_the_api(capsys, nan_csv, tmp_path):
    check_single_error(
        capsys,
        ["evaluate", str(nan_csv), "--out", str(tmp_path / "x"), "--quiet"],
        "'m2'",
        "line 9",
        "--nan-policy drop",
    )
    out = tmp_path / "ev"
    code, _ = run(["evaluate", str(nan_csv), "--out", str(out), "--quiet", "--verbose", "--nan-policy", "drop", *FAST])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("dropped 1 row(s) with NaN/inf scores") == 1  # --verbose: every warning in full
    got = ba.load_evaluation(out)
    with pytest.warns(UserWarning, match="dropped 1 row"):
        want = ba.evaluate(nan_csv, nan_policy="drop", n_bootstrap=0, n_repeats=2, noise_repeats=2, n_points=5)
    assert got.data["n_rows"] == want.data["n_rows"] == 119 and got.parameters["nan_policy"] == "drop"
    pd.testing.assert_frame_equal(got.table("grid"), want.table("grid"))


def test_evaluate_nan_policy_may_come_by_p(capsys, nan_csv, tmp_path):
    code, _ = run(["evaluate", str(nan_csv), "--out", str(tmp_path / "ev"), "--quiet", "-p", "nan_policy=drop", *FAST])
    assert code == 0, capsys.readouterr().err
    assert ba.load_evaluation(tmp_path / "ev").parameters["nan_policy"] == "drop"


def test_domains_given_for_the_demo_or_a_benchmark_override_its_own():
    """What `demo --domains` and run_report(Benchmark, domains=) read: the given domains over the data's own."""
    from beyondauc.data.open import open_benchmark

    demo = ba.load_demo()
    for data in ("demo", demo):
        got = open_benchmark(data, domains={"wine": "drinks"})
        assert got.source == demo.source and len(got) == len(demo)
        assert got.domains == {**demo.domains, "wine": "drinks"}
        assert dict(zip(got.frame["dataset"], got.frame["domain"])) == got.domains  # the column follows
