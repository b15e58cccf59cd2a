"""One evaluation, many views: the index, every report and the saved evaluation show the same numbers.

A real ``run_report`` on a small CSV whose ``split`` column says ``dev``/``test``
(so ``val_split=dev`` must reach the evaluation) with non-default parameters; the
index's leaderboard and each report's summary are read back from the HTML and
compared with the evaluation saved in the report folder.  A second run reuses
the evaluation, ``recompute=True`` computes it again.
"""

from __future__ import annotations

import html
import json
import re
from functools import partial
from pathlib import Path

import pytest

import beyondauc as ba
from helpers.report import tiny_notebooks

REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
MODELS = ["svm", "naive_bayes", "mlp"]
DATASETS = ["wine", "diabetes", "digits_3v8"]
PARAMETERS = {
    "val_split": "dev",
    "tolerance": 0.8,
    "protocol": "indata",
    "method": "stump",
    "n_bootstrap": 20,
    "noise_repeats": 2,
    "n_repeats": 5,
    "random_state": 7,
}


def _text(page):
    """What a reader sees: tags removed, entities decoded, white space folded."""
    page = re.sub(r"<(style|script)[^>]*>.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"<img[^>]*>", " ", page)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("one_evaluation")
    frame = ba.load_demo().subset(models=MODELS, datasets=DATASETS).frame
    frame["split"] = frame["split"].replace({"val": "dev"})
    data = tmp / "scores.csv"
    frame.to_csv(data, index=False)
    out = tmp / "report"
    result = ba.run_report(str(data), out=out, jobs=2, progress=False, parameters=PARAMETERS)
    return result, out, str(data)


def test_the_run_succeeds_and_saves_its_evaluation(run):
    result, out, _ = run
    assert result.ok, result.summary()
    ev = ba.load_evaluation(out)
    assert ev.parameters["val_split"] == "dev" and ev.parameters["tolerance"] == 0.8
    assert set(ev.table("diagnostics")["cohorts"]) == {"split"}


def test_index_shows_the_evaluations_leaderboard(run):
    result, out, _ = run
    board = ba.load_evaluation(out).table("leaderboard").set_index("model")
    page = (out / "index.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="[^"]*" data-beyondauc="model-row">(.*?)</tr>', page, re.S)
    assert len(rows) == len(MODELS)
    verdicts = ba.load_evaluation(out).table("verdicts").set_index("model")

    def num(value):  # the index writes negative numbers with a minus sign (U+2212)
        return f"{value:.3f}".replace("-", "\u2212")

    def rank_ci(b, name):  # percentiles of ranks, each end rounded to the nearest rank (halves up)
        return f"{int(b[f'{name}_low'] + 0.5)}–{int(b[f'{name}_high'] + 0.5)}"

    for row in rows:
        cells = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        model = cells[0]
        b = board.loc[model]
        assert cells[1] == f"{verdicts.loc[model, 'verdict']} {verdicts.loc[model, 'reason']}"  # the reason under it
        assert cells[2].split()[0] == num(b["auc"])
        assert cells[2].split()[1] == f"{num(b['auc_low'])}–{num(b['auc_high'])}"
        assert cells[3].split() == [str(int(b["auc_rank"])), rank_ci(b, "auc_rank")]
        assert cells[4].split()[0] == num(b["accuracy"])
        assert cells[5].split() == [str(int(b["accuracy_rank"])), rank_ci(b, "accuracy_rank")]
        assert cells[7].split()[0] == num(b["kappa"])
        # every mean carries its interval under it, DiSCA and drift (means of per-dataset replicates) too
        for cell, name in ((cells[8], "disca"), (cells[9], "drift")):
            assert cell.split() == [num(b[name]), f"{num(b[f'{name}_low'])}–{num(b[f'{name}_high'])}"], name
    # the column guide names the parameters the numbers were computed with
    guide = _text(page)
    assert "protocol indata" in guide and "method stump" in guide and "tolerance 0.8" in guide
    assert "intervals in the report" not in guide  # the index itself shows them


def test_each_report_states_the_evaluations_findings(run):
    result, out, _ = run
    ev = ba.load_evaluation(out)
    findings = ev.table("findings")
    for rep in result.reports:
        page = (out / rep.html).read_text(encoding="utf-8")
        assert page.index('id="summary"') < page.index('id="contents"') < page.index('id="section-auc_vs_accuracy"')
        text = _text(page)
        for sentence in findings[findings["model"] == rep.model]["sentence"]:
            assert sentence in text, sentence
        assert "tolerance t = 0.8" in text  # the selective section shows the evaluation's own tolerance
        assert "index" in page and 'href="../../index.html"' in page


def test_a_rerun_reuses_the_evaluation_and_recompute_does_not(run, tmp_path):
    result, out, data = run
    # what is tested is the evaluation's reuse: the re-runs' notebooks are cut to a cell that reads it, and one
    # worker (one Jupyter kernel) runs them (the job count is no input of the evaluation: its numbers are the same)
    rerun = partial(
        ba.run_report,
        data,
        out=out,
        jobs=1,
        progress=False,
        parameters=PARAMETERS,
        models=["svm"],
        notebooks_dir=tiny_notebooks(REPO_NOTEBOOKS, tmp_path / "notebooks"),
    )
    created = ba.load_evaluation(out).created
    again = rerun()
    # --models picks the reports, not what is evaluated: same data and parameters, so the evaluation is reused
    assert again.ok and again.evaluation.models == result.evaluation.models == ("svm", "naive_bayes", "mlp")
    assert again.evaluation.created == created and [r.model for r in again.reports] == ["svm"]
    same = rerun()
    # same data and parameters: the saved evaluation is read back, stamps and stage timings included
    assert (same.evaluation.created, same.evaluation.timing) == (again.evaluation.created, again.evaluation.timing)
    forced = rerun(recompute=True)
    assert forced.evaluation.timing != same.evaluation.timing  # computed again (its stages timed anew) ...
    assert forced.evaluation.table("leaderboard").equals(same.evaluation.table("leaderboard"))  # ... same numbers
    assert created
    # an evaluation made by other package versions is not reused (an upgrade may change the numbers)
    manifest = out / "evaluation" / "manifest.json"
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    meta["versions"]["beyondauc"] = "0.0.1"
    manifest.write_text(json.dumps(meta), encoding="utf-8")
    older = ba.load_evaluation(out)
    assert not older.same_inputs(older.data["sha256"], older.parameters)
    upgraded = rerun()
    assert upgraded.evaluation.created != forced.evaluation.created
    assert upgraded.evaluation.versions["beyondauc"] == ba.__version__


def test_index_without_a_bootstrap_claims_no_intervals():
    """``n_bootstrap=0``: the index says there are no intervals, instead of '0 replicates'."""
    from beyondauc.report import ModelReport
    from beyondauc.report.render import index_rows, render_index

    ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "knn"], noise_repeats=2, n_bootstrap=0)
    reports = [ModelReport(m, m, "ok", None, None, None, (), 0.0) for m in ev.models]
    page = render_index(
        {
            "source": "demo",
            "sha256": "0" * 64,
            "version": ba.__version__,
            "date": "today",
            "n_datasets": 2,
            "n_models": 2,
            "n_failed": 0,
            "n_jobs": 1,
            "parameters": ev.parameters,
            "evaluation_created": ev.created,
            "reused": False,
            "models": index_rows(ev, reports),
            "overview": {"html": None, "status": "ok", "error": None, "notebooks": []},
        }
    )
    text = _text(page)
    assert "ran without a bootstrap" in text
    assert "replicates" not in text
    assert 'class="ci"' not in page
