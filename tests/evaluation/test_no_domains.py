"""Data without domains: every analysis that can run runs; outdomain and indomain are left out and said so.

``outdomain`` and ``indomain`` need the domain of every dataset (a dataset whose domain is unknown could be
of any domain, so no dataset's calibration data is known). A plain wide CSV (``dataset,label,<models>``)
has none: the grid leaves those two protocols out with one warning, the evaluation records why, and the
reports say so; asked for by name, a domain protocol is an error.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.metrics.calibration.protocols import DOMAIN_PROTOCOLS, left_out_protocols
from helpers.cli import check_single_error, run

FAST = {"n_bootstrap": 0, "n_repeats": 2, "noise_repeats": 2, "n_points": 5}
DOMAINS = {"a": "news", "b": "news", "c": "chat"}
KEY = ["protocol", "method", "dataset", "model"]


def scores(seed=0, n=60):
    """3 models x 3 datasets, wide, no domain column: what a user has."""
    rng = np.random.default_rng(seed)
    parts = []
    for shift, d in enumerate("abc"):
        y = np.tile([0, 1], n // 2)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "m1": y + rng.normal(shift, 1, n),
                    "m2": y + rng.normal(0, 1.5, n),
                    "m3": 0.3 * y + rng.normal(0, 1, n),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("nodomains") / "my.csv"
    scores().to_csv(path, index=False)
    return path


def left_out_warnings(caught):
    return [w for w in caught if "left out" in str(w.message)]


@pytest.fixture(scope="module")
def evaluations(csv):
    """(the evaluation without domains, its warnings, the evaluation of the same data with domains)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bare = ba.evaluate(csv, **FAST)
    named = ba.evaluate(csv, domains=DOMAINS, **FAST)
    return bare, caught, named


# -- the evaluation -------------------------------------------------------------------------------


def test_the_evaluation_runs_without_domains_and_says_once_what_it_left_out(evaluations):
    bare, caught, _ = evaluations
    said = left_out_warnings(caught)
    assert len(said) == 1, [str(w.message) for w in caught]
    message = str(said[0].message)
    assert message.startswith(
        "protocols outdomain and indomain are left out: each needs the domain of every "
        "dataset, and ['a', 'b', 'c'] have none"
    )
    assert "`domains=`" in message and "--domains" not in message  # Python's words in Python
    assert set(bare.table("grid")["protocol"]) == {"xdomain", "indata", "outdata"}
    assert set(bare.table("calibration_error")["protocol"]) == {"xdomain", "indata", "outdata"}
    assert set(bare.data["protocols_left_out"]) == set(DOMAIN_PROTOCOLS)
    assert bare.data["domains"] == {"a": None, "b": None, "c": None}
    for name in ("leaderboard", "diagnostics", "selective", "findings", "verdicts"):
        assert len(bare.table(name)), name


def test_leaving_protocols_out_changes_no_other_number(evaluations):
    """The three protocols left are computed exactly as with domains (the reference: the same data named)."""
    bare, _, named = evaluations
    assert set(named.table("grid")["protocol"]) == {"xdomain", "outdomain", "indomain", "indata", "outdata"}
    assert named.data["protocols_left_out"] == {}
    kept = named.table("grid")
    kept = kept[~kept["protocol"].isin(DOMAIN_PROTOCOLS)].drop(columns="domain")
    pd.testing.assert_frame_equal(
        bare.table("grid").drop(columns="domain").sort_values(KEY).reset_index(drop=True),
        kept.sort_values(KEY).reset_index(drop=True),
    )
    for name in ("leaderboard", "diagnostics", "selective"):
        pd.testing.assert_frame_equal(bare.table(name), named.table(name), check_like=True)


def test_domains_for_some_datasets_only_leave_the_protocols_out_naming_the_others(csv):
    with pytest.warns(UserWarning, match=r"and \['b', 'c'\] have none") as caught:
        ev = ba.evaluate(csv, domains={"a": "news"}, **FAST)
    assert len(left_out_warnings(caught)) == 1
    assert "outdomain" not in set(ev.table("grid")["protocol"])
    assert ev.data["domains"] == {"a": "news", "b": None, "c": None}


def test_the_record_of_what_was_left_out_survives_save_and_load(evaluations, tmp_path):
    bare, _, _ = evaluations
    again = ba.load_evaluation(bare.save(tmp_path / "ev"))
    assert again.data["protocols_left_out"] == bare.data["protocols_left_out"]


@pytest.mark.parametrize("name", ["protocol", "selective_protocol", "cohort_protocol"])
@pytest.mark.parametrize("protocol", DOMAIN_PROTOCOLS)
def test_a_domain_protocol_asked_for_by_name_is_an_error(csv, name, protocol):
    with pytest.raises(
        ValueError,
        match=rf"^`{name}`='{protocol}' needs the domain of every dataset, and "
        r"\['a', 'b', 'c'\] have none: add a 'domain' column to the data, or "
        rf"give `domains=` \(dataset -> domain\), or choose another `{name}`$",
    ):
        ba.evaluate(csv, **FAST, **{name: protocol})


def test_domains_from_a_file_are_those_of_the_mapping(csv, tmp_path):
    path = tmp_path / "domains.json"
    path.write_text(json.dumps(DOMAINS), encoding="utf-8")
    ev = ba.evaluate(csv, domains=str(path), **{**FAST, "noise_repeats": 1})
    assert ev.data["domains"] == DOMAINS and ev.parameters["domains"] == DOMAINS  # recorded as read
    assert ev.data["protocols_left_out"] == {}


@pytest.mark.parametrize("value", [{"a": 1}, ["a", "news"], 3])
def test_a_bad_domains_value_is_refused_naming_the_parameter(csv, value):
    with pytest.raises(ValueError, match=r"^`domains` must be a mapping dataset -> domain"):
        ba.evaluate(csv, domains=value, **FAST)


# -- the metric functions: their default is every protocol the data allows ---------------------------


def test_the_grid_functions_leave_domain_protocols_out_by_default_and_refuse_them_by_name(csv):
    bench = ba.load_benchmark(csv)
    assert left_out_protocols(bench).keys() == set(DOMAIN_PROTOCOLS)
    for func, table in (
        (ba.expected_accuracy_grid, lambda r: r),
        (ba.calibration_error_table, lambda r: r.ece),
        (lambda b, **k: ba.bootstrap_grid(b, n_bootstrap=2, **k), lambda r: r.grid),
    ):
        with pytest.warns(UserWarning, match="outdomain and indomain are left out") as caught:
            got = table(func(bench, methods=["stump"], n_repeats=2))
        assert len(left_out_warnings(caught)) == 1
        assert list(dict.fromkeys(got["protocol"])) == ["xdomain", "indata", "outdata"]
        with pytest.raises(ValueError, match=r"protocol 'outdomain' needs a domain for every dataset"):
            func(bench, protocols=["xdomain", "outdomain"], methods=["stump"], n_repeats=2)
    named = ba.load_benchmark(csv, domains=DOMAINS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out, nothing said
        assert set(ba.expected_accuracy_grid(named, methods=["stump"], n_repeats=2)["protocol"]) == set(ba.PROTOCOLS)


# -- the command line and the reports ---------------------------------------------------------------


def test_report_on_a_csv_without_domains_exits_0_and_says_what_it_left_out(csv, tmp_path, capsys):
    out = tmp_path / "report"
    code, text = run(
        [
            "report",
            str(csv),
            "--out",
            str(out),
            "--n-bootstrap",
            "0",
            "--n-repeats",
            "2",
            "--noise-repeats",
            "2",
            "--n-points",
            "5",
            "--jobs",
            "2",
            "--quiet",
            "--verbose",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "3 model reports and the overview" in text
    said = [line for line in err.splitlines() if "left out" in line]
    assert len(said) == 1, err
    assert said[0].startswith("beyondauc: warning: protocols outdomain and indomain are left out")
    assert "give --domains" in said[0] and "`domains=`" not in said[0]  # the CLI's words on the CLI
    note = (
        "Protocols outdomain and indomain are left out: each needs the domain of every dataset, and "
        "[&#39;a&#39;, &#39;b&#39;, &#39;c&#39;] have none; to include them, add a &#39;domain&#39; column to "
        "the data, or give the domains (--domains on the command line, domains= in Python)."
    )
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'<p class="note" data-beyondauc="note">{note}</p>' in index
    for page in [out / "overview" / "overview.html", *sorted((out / "models").glob("*/report.html"))]:
        html = page.read_text(encoding="utf-8")
        assert f'data-beyondauc="report-note">{note}</p>' in html, page
        assert "report-failed" not in html, page
    ev = ba.load_evaluation(out / "evaluation")
    assert set(ev.table("grid")["protocol"]) == {"xdomain", "indata", "outdata"}


def test_a_report_with_every_domain_has_no_note():
    from types import SimpleNamespace

    from beyondauc.report.runner import notes

    named = SimpleNamespace(data={"protocols_left_out": {}})
    old = SimpleNamespace(data={})  # an evaluation saved before the record existed
    assert notes(named) == [] and notes(old) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["calibrate", "{csv}", "--protocol", "outdomain"],
        ["diagnose", "{csv}", "--model", "m1", "--protocol", "indomain"],
        ["selective", "{csv}", "--model", "m1", "--protocol", "outdomain"],
        ["evaluate", "{csv}", "--out", "{out}", "--protocol", "indomain", "--quiet"],
        ["report", "{csv}", "--out", "{out}", "--selective-protocol", "outdomain", "--quiet"],
    ],
)
def test_a_domain_protocol_asked_for_on_the_cli_names_the_flag(capsys, csv, tmp_path, argv):
    argv = [a.format(csv=csv, out=tmp_path / "out") for a in argv]
    line = check_single_error(
        capsys,
        argv,
        "needs a domain" if argv[0] in ("calibrate", "diagnose", "selective") else "needs the domain of every dataset",
        "--domains",
    )
    assert "`domains=`" not in line and "load_benchmark" not in line
    assert not (tmp_path / "out").exists()  # refused before any folder is made
