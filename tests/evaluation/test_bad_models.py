"""A model that cannot be analysed somewhere never stops the others.

A constant model (an LLM judge that always says 5), a judge whose scores are
heavily tied, a dataset with a single class: the evaluation completes, the
model gets NaN where it cannot be analysed and a finding that says why, its
report renders, and the other models' numbers do not move.  One real
``beyondauc report`` subprocess on a small benchmark checks the report and
the index.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections import Counter

import nbformat
import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.metrics.diagnostics.result import undefined_reasons
from beyondauc.metrics.selective.benchmark import MAX_TIE_SHARE, MIN_CONFIDENCES, confidence_ties
from helpers.report import parse_html

DATASETS = ["wine", "diabetes", "iris_virginica", "breast_cancer"]
MODELS = ["svm", "logreg", "knn"]
OPTIONS = dict(n_bootstrap=20, noise_repeats=2, n_repeats=2)
META = ["dataset", "domain", "label", "split", "id"]


def frame(datasets=DATASETS, models=MODELS):
    f = ba.load_demo().frame
    return f[f["dataset"].isin(datasets)][[*META, *models]].reset_index(drop=True)


def tied_judge(f):
    """A judge on a 1-5 scale that says 5 for 80% of each dataset and 1-4 (by logreg's rank) for the rest."""
    q = f.groupby("dataset")["logreg"].rank(pct=True)
    return np.where(q > 0.2, 5.0, 1.0 + np.floor(q / 0.05).clip(0, 3))


def evaluate(f):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = ba.evaluate(f, **OPTIONS)
    return ev, [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def plain():
    return evaluate(frame())[0]


@pytest.fixture(scope="module")
def constant():
    f = frame()
    f["judge"] = 5.0
    return evaluate(f)


@pytest.fixture(scope="module")
def tied():
    f = frame()
    f["tied"] = tied_judge(f)
    f["partly"] = np.where(f["dataset"] == "wine", np.round(f["logreg"]).clip(-1, 1), f["logreg"])  # 3 values there
    return evaluate(f)[0]


def rows(ev, table, model):
    t = ev.table(table)
    return t[t["model"] == model].set_index("dataset")


def findings(ev, model):
    f = ev.table("findings")
    f = f[f["model"] == model].sort_values("order")
    return dict(zip(f["topic"], zip(f["status"], f["sentence"]))), list(f["topic"])


# -- the rule ---------------------------------------------------------------------------


def brute_ties(conf):
    counts = Counter(float(c) for c in conf)
    top = max(counts.values()) / len(conf)
    return len(counts), top, len(counts) >= MIN_CONFIDENCES and top <= MAX_TIE_SHARE


@pytest.mark.parametrize(
    "conf",
    [
        [0.7] * 10,  # constant
        [0.6, 0.7, 0.8] * 5,  # three values
        [0.6, 0.7, 0.8, 0.9] * 5,  # four: one short
        [0.6, 0.7, 0.8, 0.9, 0.95] * 5,  # five, evenly: rankable
        [0.6, 0.7, 0.8, 0.9, 0.95] + [0.99] * 15,  # six, 75% at one: still rankable
        [0.6, 0.7, 0.8, 0.9, 0.95] + [0.99] * 16,  # 76% at one: not
        list(np.linspace(0.5, 1, 200)),
    ],
)
def test_confidence_ties_against_a_count(conf):
    assert confidence_ties(conf) == pytest.approx(brute_ties(conf))
    assert confidence_ties(np.random.default_rng(0).permutation(conf)) == confidence_ties(conf)  # order-free


def test_confidence_ties_boundaries_are_the_stated_constants():
    five = list(np.linspace(0.6, 0.99, MIN_CONFIDENCES))
    assert confidence_ties(five)[2] and not confidence_ties(five[:-1])[2]
    n = 100
    at_limit = [0.9] * int(MAX_TIE_SHARE * n) + list(np.linspace(0.5, 0.8, n - int(MAX_TIE_SHARE * n)))
    over = [0.9] * (int(MAX_TIE_SHARE * n) + 1) + list(np.linspace(0.5, 0.8, n - int(MAX_TIE_SHARE * n) - 1))
    assert confidence_ties(at_limit)[2] and not confidence_ties(over)[2]
    assert confidence_ties([]) == (0, pytest.approx(np.nan, nan_ok=True), False)


@pytest.mark.parametrize(
    "args, expected",
    [
        (([0, 1, 0], [5, 5, 5], [1, 0], [5, 5]), "constant scores (every score is 5)"),
        (([0, 1, 0], [2.5, 2.5, 2.5], [0, 1], [0.1, 0.9]), "the validation cohort's scores are constant"),
        (([1, 1], [0.2, 0.4], [0, 1], [0.1, 0.9]), "the validation cohort has a single class"),
        (([1, 1], [0.2, 0.4], [0, 0], [0.1, 0.9]), "both cohorts have a single class"),
        (([0, 1], [0.9, 0.1], [0, 1], [0.1, 0.9]), "an AUC of 0 in the validation cohort"),
        (([0, 1], [0.2, 0.4], [0, 1], [0.1, 0.9]), ""),
    ],
)
def test_undefined_reasons_by_hand(args, expected):
    assert undefined_reasons(*args) == expected


# -- a constant model ---------------------------------------------------------------------


def test_constant_model_does_not_move_the_others(plain, constant):
    """Every per-model table of the other models is identical with and without a constant model beside them."""
    ev, _ = constant
    per_model = [
        "grid",
        "calibration_error",
        "reliability",
        "rank_table",
        "mean_intervals",
        "auc_intervals",
        "calibration_modes",
        "best_of_methods",
        "variance",
        "histograms",
        "diagnostics",
        "roc",
        "cohort_histograms",
        "robustness",
        "drift_curves",
        "wasserstein",
        "selective",
        "tolerance",
        "coverage_curves",
        "resolution_sensitivity",
        "fluctuations",
    ]
    for name in per_model:
        a = plain.table(name).reset_index(drop=True)
        b = ev.table(name)
        b = b[b["model"] != "judge"].reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)
    pairs = ev.table("pairwise")
    pairs = pairs[(pairs["model"] != "judge") & (pairs["other"] != "judge")].reset_index(drop=True)
    alone = plain.table("pairwise").reset_index(drop=True)
    # Holm's adjustment is a property of the family of tests, and the judge's pairs join each dataset's family:
    # every pair's own numbers are identical, and no other pair's adjusted p-value can fall by a larger family
    pd.testing.assert_frame_equal(
        alone.drop(columns="pvalue_holm"), pairs.drop(columns="pvalue_holm"), check_exact=True
    )
    assert (pairs["pvalue_holm"] >= alone["pvalue_holm"]).all()
    # the leaderboard's values (not the ranks, which now count the judge): pandas' group mean may differ in
    # the last bit when another group holds NaN, nothing more
    values = [
        c
        for c in plain.table("leaderboard").columns
        if c.split("_")[0] in ("auc", "accuracy", "kappa", "disca", "drift") and "rank" not in c
    ]
    a = plain.table("leaderboard").set_index("model")[values]
    b = ev.table("leaderboard").set_index("model").loc[a.index, values]
    pd.testing.assert_frame_equal(a, b, rtol=1e-15, atol=1e-17)


def test_constant_model_gets_nan_and_says_why(constant):
    ev, messages = constant
    diag = rows(ev, "diagnostics", "judge")
    for c in ("bias_robustness_val", "bias_robustness_test", "noise_robustness_val", "drift", "wasserstein"):
        assert diag[c].isna().all(), c
    assert (diag["auc_val"] == 0.5).all()  # defined: ties count one half, as scikit-learn's
    assert (diag["note"] == "constant scores (every score is 5)").all()
    assert (rows(ev, "diagnostics", "svm")["note"] == "").all()
    sel = rows(ev, "selective", "judge")
    assert (sel["n_confidences"] == 1).all() and (sel["top_share"] == 1).all() and not sel["rankable"].any()
    board = ev.table("leaderboard").set_index("model")
    assert np.isnan(board.loc["judge", ["disca", "disca_low", "disca_high", "drift"]].astype(float)).all()
    # each warning once, naming the model and the datasets
    ranked = [m for m in messages if "too few distinct confidences" in m]
    assert len(ranked) == 1 and "model 'judge'" in ranked[0] and all(d in ranked[0] for d in DATASETS)


def test_constant_model_findings_and_verdict(constant):
    ev, _ = constant
    by, topics = findings(ev, "judge")
    assert topics == ["analysis", "ranking", "threshold", "drift", "selective"]  # why first
    status, sentence = by["analysis"]
    assert status == "warn"
    assert sentence.startswith(
        f"Constant scores on {len(DATASETS)} of {len(DATASETS)} datasets and too few "
        f"distinct confidences to rank on {len(DATASETS)} of {len(DATASETS)} datasets:"
    )
    assert "every score is 5" in sentence and all(d in sentence for d in DATASETS)
    assert by["drift"] == (
        "info",
        "Its cohort drift is undefined on every dataset (constant scores (every score is 5); cohorts: split).",
    )
    assert by["selective"][0] == "warn" and "not ranked by DiSCA" in by["selective"][1]
    verdict = ev.table("verdicts").set_index("model").loc["judge", "verdict"]
    assert "constant scores on 4 of 4 datasets" in verdict and "not ranked by DiSCA" in verdict
    for model in MODELS:  # the others keep their four findings, no 'analysis'
        assert findings(ev, model)[1] == ["ranking", "threshold", "drift", "selective"]
    assert list(ba.model_summary(ev, "judge").findings["topic"]) == topics


def test_constant_model_panels_rebuild_with_nan_curves(constant):
    ev, _ = constant
    panels = ev.cohort_panels("judge", "wine")
    for r in (*panels["bias"], *panels["noise"]):
        assert np.isnan(r.score) and r.auc == 0.5 and len(r.sigmas) == 0
    normal = ev.cohort_panels("svm", "wine")  # the others' curves are read back as before
    assert len(normal["bias"][0].sigmas) == ev.parameters["n_points"]


def test_selective_interval_is_about_the_point_split():
    """The bootstrap resamples the split the point estimate used (indata's 80/20 is seeded by random_state).

    A constant model's calibrated answers depend only on the classes, and the resampling keeps each role's
    class counts: every replicate must equal the point estimate.  It did not while the bootstrap drew its
    own split from the dataset's bootstrap seed.
    """
    f = frame(datasets=["wine", "diabetes"], models=["svm"])
    f["judge"] = 5.0
    bench = ba.load_benchmark(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dataset in ("wine", "diabetes"):
            r = ba.selective_answering(bench, "judge", dataset, n_bootstrap=30, random_state=3).to_dict()
            for name in ("accuracy", "area", "a", "b", "disca"):
                assert r[f"{name}_low"] == pytest.approx(r[name]) == r[f"{name}_high"], (dataset, name)


def test_single_class_dataset_is_the_datas_doing():
    f = frame(datasets=["wine", "diabetes", "breast_cancer"], models=["svm", "logreg"])
    f = f[(f["dataset"] != "wine") | (f["label"] == 0)].reset_index(drop=True)
    ev, messages = evaluate(f)
    # said once when the data was read; its consequences (no ranking of wine's answers either) are not repeated
    assert [m for m in messages if "single class" in m and "wine" in m]
    assert not [m for m in messages if "too few distinct confidences" in m]
    for model in ("svm", "logreg"):
        diag = rows(ev, "diagnostics", model)
        assert np.isnan(diag.loc["wine", "drift"]) and diag.loc["wine", "note"] == "both cohorts have a single class"
        by, topics = findings(ev, model)
        assert topics[0] == "analysis" and by["analysis"][0] == "info"  # a note: not the model's fault
        assert "both cohorts have a single class on wine" in by["analysis"][1]
        assert "DiSCA cannot rank its answers on wine (a single class)" in by["analysis"][1]
        assert "wine (both cohorts have a single class)" in by["drift"][1]
        assert np.isfinite(ev.table("leaderboard").set_index("model").loc[model, "drift"])


# -- a tied judge -------------------------------------------------------------------------------


def test_tied_judge_is_flagged_not_ranked_first(tied):
    sel = tied.table("selective")
    judge = sel[sel["model"] == "tied"]
    assert not judge["rankable"].any()
    assert (judge["top_share"] > MAX_TIE_SHARE).any() and (judge["n_confidences"] <= 5).all()
    others = sel[sel["model"].isin(MODELS)]
    assert others["rankable"].all()
    # the judge's DiSCA, averaged as the others' are, would top the board: the failure this guards against
    naive = sel.groupby("model")["disca"].mean()
    assert naive.idxmax() == "tied"
    board = tied.table("leaderboard").set_index("model")
    assert np.isnan(board.loc["tied", "disca"])
    assert board["disca"].idxmax() != "tied"
    by, topics = findings(tied, "tied")
    assert topics[0] == "analysis" and by["analysis"][0] == "warn"
    assert by["analysis"][1].startswith("Too few distinct confidences to rank on 4 of 4 datasets:")
    assert "at one)" in by["analysis"][1] and f"none shared by more than {MAX_TIE_SHARE:.0%}" in by["analysis"][1]
    assert "not ranked by DiSCA" in by["selective"][1]
    rank_sentences = [findings(tied, m)[0]["selective"][1] for m in (*MODELS, "partly")]
    assert all(f"of {len(MODELS) + 1};" in s for s in rank_sentences)  # ranked among the rankable models only
    assert any(" 1st of " in s for s in rank_sentences)


def test_partly_tied_model_is_ranked_on_its_other_datasets(tied):
    sel = rows(tied, "selective", "partly")
    assert list(sel.index[~sel["rankable"]]) == ["wine"] and sel.loc["wine", "n_confidences"] <= 3
    board = tied.table("leaderboard").set_index("model")
    assert board.loc["partly", "disca"] == pytest.approx(sel.loc[sel["rankable"], "disca"].mean(), rel=1e-15)
    for model in MODELS:  # a model rankable everywhere: the mean of all its datasets, as before
        assert board.loc[model, "disca"] == pytest.approx(rows(tied, "selective", model)["disca"].mean(), rel=1e-15)
    low, high = board.loc["partly", ["disca_low", "disca_high"]]
    assert np.isfinite(low) and np.isfinite(high)
    by, _ = findings(tied, "partly")
    assert by["analysis"][1].startswith("Too few distinct confidences to rank on 1 of 4 datasets:")
    assert (
        "DiSCA leaves out wine (3 distinct confidences" in by["selective"][1]
        or "DiSCA leaves out wine (2 distinct confidences" in by["selective"][1]
    )


# -- the report -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("bad_models")
    f = frame(datasets=["wine", "diabetes"], models=["svm", "logreg"])
    f["judge"] = 5.0
    f.to_csv(base / "scores.csv", index=False)
    out = base / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "beyondauc.cli",
            "report",
            str(base / "scores.csv"),
            "--out",
            str(out),
            "--n-bootstrap",
            "20",
            "--noise-repeats",
            "2",
            "--n-repeats",
            "2",
            "--jobs",
            "2",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, MPLBACKEND="Agg"),
    )
    return {"out": out, "proc": proc}


def test_report_of_a_constant_model_exits_0(report):
    proc = report["proc"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAILED" not in proc.stdout and "Traceback" not in proc.stderr


def test_every_notebook_of_the_constant_model_runs_and_says_why(report):
    folder = report["out"] / "models" / "judge"
    for name in ("summary", "auc_vs_accuracy", "test_auroc", "selective_answering"):
        nb = nbformat.read(str(folder / f"{name}.ipynb"), as_version=4)
        errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert errors == [], name
    text = " ".join(parse_html((folder / "report.html").read_text(encoding="utf-8")).text.split())
    assert "Traceback" not in text
    assert "Undefined (\u2013) on diabetes, wine: constant scores (every score is 5)." in text
    assert "No dashboard for diabetes, wine: none of the diagnostics of judge is defined there" in text
    assert "Not ranked by DiSCA on diabetes, wine" in text
    assert "Constant scores on 2 of 2 datasets" in text


def test_index_lists_the_constant_model_with_the_reason(report):
    root = parse_html((report["out"] / "index.html").read_text(encoding="utf-8"))
    rows_ = {r.find("td", **{"class": "name"}).text: r for r in root.marked("model-row")}
    assert set(rows_) == {"svm", "logreg", "judge"}
    judge = rows_["judge"]
    assert judge.attrs["class"] == "ok"
    verdict = judge.marked("verdict")[0].text
    assert "constant scores on 2 of 2 datasets" in verdict and "not ranked by DiSCA" in verdict
    assert "status-warn" in judge.marked("verdict")[0].classes or "status-bad" in judge.marked("verdict")[0].classes
