"""Answers end to end (issue 23): an NLI-like 3-class table of class probabilities in the long
form goes through ``beyondauc report``; the same rows wide and long, CSV and JSON Lines, give the
same evaluation; ``beyondauc demo --kind answers`` reports on the embedded answers demo."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba

CLASSES = ("entailment", "neutral", "contradiction")
FAST = ["--n-bootstrap", "20", "--noise-repeats", "2", "--n-repeats", "3", "--jobs", "2", "--quiet"]


def nli_long(seed=0, n=150):
    """3 datasets (val/test) x 3 models: each row one model's class probabilities for one example."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, domain in (("mnli", "genre"), ("snli", "captions"), ("anli", "adversarial")):
        gold = rng.integers(0, 3, n)
        for m, skill in (("roberta", 2.5), ("bert", 1.5), ("bow", 0.4)):
            logits = rng.normal(size=(n, 3))
            logits[np.arange(n), gold] += skill
            p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
            p = np.round(p, 6)
            p[:, 2] = 1 - p[:, 0] - p[:, 1]  # rounded, still a distribution
            for i in range(n):
                rows.append(
                    {
                        "dataset": d,
                        "domain": domain,
                        "split": "val" if i < n // 2 else "test",
                        "id": f"{d}-{i}",
                        "model": m,
                        "label": CLASSES[gold[i]],
                        **{f"p_{c}": p[i, k] for k, c in enumerate(CLASSES)},
                    }
                )
    return pd.DataFrame(rows)


def raw_answers(long, model, dataset):
    """(confidence, correct) of one model on one dataset, by hand from the probabilities."""
    sub = long[(long["model"] == model) & (long["dataset"] == dataset)]
    p = sub[[f"p_{c}" for c in CLASSES]].to_numpy()
    pred = np.array(CLASSES)[p.argmax(axis=1)]
    return p.max(axis=1), pred == sub["label"].to_numpy()


def test_nli_answers_table_through_report(tmp_path):
    long = nli_long()
    path = tmp_path / "nli.csv"
    long.to_csv(path, index=False)
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "beyondauc.cli", "report", str(path), "--out", str(out), "--ood-dataset", "anli", *FAST],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ev = ba.load_evaluation(out / "evaluation")
    assert ev.data["kind"] == "answers" and ev.parameters["selective_protocol"] == "none"
    sel = ev.table("selective").set_index(["model", "dataset"])
    for m in ("roberta", "bert", "bow"):
        for d in ("mnli", "snli"):
            conf, ok = raw_answers(long, m, d)
            assert sel.loc[(m, d), "disca"] == pytest.approx(ba.disca(conf, ok).score, abs=1e-12)
        conf, ok = raw_answers(long, m, "anli")
        assert sel.loc[(m, "mnli"), "disca_ood"] == pytest.approx(ba.disca(conf, ok).score, abs=1e-12)
    board = ev.table("leaderboard")
    assert board["model"].tolist()[0] == "roberta"  # the skilled model tells right from wrong best
    for m in ("roberta", "bert", "bow"):
        html = (out / "models" / m / "report.html").read_text(encoding="utf-8")
        assert "Answers: each model gave an answer per example" in html
        assert "confidences as given" in html


def _wide_and_long(tmp_path):
    """The demo's first three datasets and models, wide (CSV) and long (JSON Lines, one row per model)."""
    bench = ba.load_demo().subset(models=["logreg", "svm", "knn"], datasets=["wine", "diabetes", "iris_virginica"])
    wide = bench.frame.assign(id=np.arange(len(bench.frame)))
    long = wide.melt(
        id_vars=["dataset", "domain", "label", "split", "id"],
        value_vars=list(bench.models),
        var_name="model",
        value_name="score",
    )
    wide_path, long_path = tmp_path / "wide.csv", tmp_path / "long.jsonl"
    wide.to_csv(wide_path, index=False)
    with open(long_path, "w", encoding="utf-8") as f:
        for rec in long.to_dict(orient="records"):
            f.write(json.dumps(rec) + "\n")
    return wide_path, long_path


def test_wide_csv_and_long_jsonl_give_equal_evaluations(tmp_path):
    wide_path, long_path = _wide_and_long(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ba.evaluate(wide_path, n_bootstrap=20, noise_repeats=2, n_repeats=3)
        b = ba.evaluate(long_path, n_bootstrap=20, noise_repeats=2, n_repeats=3)
    assert a.data["kind"] == b.data["kind"] == "scores"
    assert set(a.tables) == set(b.tables)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.table(name), b.table(name), check_exact=True, obj=name)


def test_demo_kind_answers_reports_on_the_answers_demo(tmp_path):
    out = tmp_path / "answers"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "beyondauc.cli",
            "demo",
            "--kind",
            "answers",
            "--out",
            str(out),
            "--models",
            "logreg,deep_tree",
            *FAST,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ev = ba.load_evaluation(out / "evaluation")
    assert ev.data["kind"] == "answers" and ev.parameters["ood_dataset"] == "digits_noisy"
    sel = ev.table("selective")
    # the demo gives every model the computation score 1, so DiDMA and NiDMA appear; and a baseline
    assert ev.parameters["computation_score"] == 1 and ev.parameters["baseline"] == "logreg"
    assert sel["didma"].notna().all() and sel["nidma"].notna().all() and sel["disca_ood"].notna().all()
    assert set(ev.table("comparison").query("model == 'deep_tree'")["reference"]) == {"logreg"}
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "answers demo" in index and "deep_tree" in index
