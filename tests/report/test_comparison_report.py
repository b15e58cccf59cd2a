"""``report --baseline``: a vs-baseline section in every report and a column on the index; ``--models``
picks the reports written, while ranks are among every model of the data.

One real run of the real notebooks (two models, two datasets, 20 replicates), through the CLI.
"""

from __future__ import annotations

import re

import pytest

from helpers.cli import run
from helpers.report import DATASETS, parse_html, spy_run_report

MODELS = ("svm", "single_feature")


@pytest.fixture(scope="module")
def baseline_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("baseline") / "out"
    with spy_run_report() as calls:
        code, stdout = run(
            [
                "report",
                "demo",
                "--baseline",
                "logreg",
                "--models",
                ",".join(MODELS),
                "--datasets",
                ",".join(DATASETS),
                "--out",
                str(out),
                "--jobs",
                "2",
                "--quiet",
                "--n-bootstrap",
                "20",
                "--noise-repeats",
                "2",
            ]
        )
    return {"out": out, "code": code, "stdout": stdout, "kwargs": calls[0][0], "result": calls[0][1]}


def _text(path):
    return re.sub(r"\s+", " ", parse_html(path.read_text(encoding="utf-8")).text)


def test_every_report_has_a_vs_baseline_section(baseline_run):
    assert baseline_run["code"] == 0, baseline_run["stdout"]
    assert baseline_run["kwargs"]["baseline"] == "logreg"
    for model in MODELS:
        text = _text(baseline_run["out"] / "models" / model / "report.html")
        assert "Against the baseline" in text
        assert f"{model} against the baseline logreg." in text
        for dataset in ("mean over datasets", *DATASETS):
            assert dataset in text
        assert "paired DeLong" in text and "paired bootstrap" in text
        assert re.search(r"(better|worse|no detectable difference)", text)


def test_the_index_has_a_vs_baseline_column(baseline_run):
    tree = parse_html((baseline_run["out"] / "index.html").read_text(encoding="utf-8"))
    headers = [th.text.strip() for th in tree.find_all("th")]
    assert "vs baseline" in headers
    cells = tree.marked("vs")
    assert len(cells) == len(MODELS)  # the index lists the reports written
    ev = baseline_run["result"].evaluation
    t = ev.table("comparison").query("dataset == 'mean' and value == 'auc'").set_index("model")
    for cell, model in zip(cells, [r.model for r in baseline_run["result"].reports]):
        assert cell.text.startswith("vs logreg")
        assert f"AUC {t.loc[model, 'difference']:+.3f}".replace("-", "\u2212") in cell.text


def test_models_picks_the_reports_but_ranks_are_among_every_model(baseline_run):
    ev = baseline_run["result"].evaluation
    assert len(ev.models) == 8  # the evaluation keeps every model of the data
    assert sorted(r.model for r in baseline_run["result"].reports) == sorted(MODELS)
    assert sorted(p.name for p in (baseline_run["out"] / "models").iterdir()) == sorted(MODELS)
    board = ev.table("leaderboard").set_index("model")
    rank = int(board.loc["svm", "auc_rank"])
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(rank, "th")
    assert f"{rank}{suffix} of 8 by mean AUC" in _text(baseline_run["out"] / "models" / "svm" / "report.html")
    index = _text(baseline_run["out"] / "index.html")
    assert "8 models on 2 datasets" in index


def test_an_unknown_baseline_is_one_line_before_any_work(capsys, tmp_path):
    code, _ = run(["report", "demo", "--baseline", "nope", "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "`baseline` 'nope' is not a model of" in err or "--baseline" in err
    assert "logreg" in err and not (tmp_path / "o").exists()
