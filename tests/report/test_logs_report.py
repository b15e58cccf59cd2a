"""End to end: ``beyondauc report FOLDER`` on harness logs, no argument but where to write.

The folders are the logs the real harnesses wrote (tests/fixtures/logs, see tests/data/test_logs.py): lm-evaluation-harness
runs of two models on two tasks, and a HELM run folder (one model, one task: the defaults fall back to what
one dataset allows).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


@pytest.mark.parametrize("folder, models", [("lm_eval", ["dummy-a", "dummy-b"]), ("helm", ["openai_gpt2"])])
def test_a_log_folder_gives_a_report_per_model(tmp_path, folder, models):
    out = tmp_path / "report"
    code, text = run(["report", str(LOGS / folder), "--out", str(out), "--jobs", "1", "--quiet"])
    assert code == 0, text
    folders = sorted(p.name for p in (out / "models").iterdir())  # 'openai/gpt2' gets a safe folder name
    assert len(folders) == len(models) and all(f.startswith(m) for f, m in zip(folders, models)), folders
    for name in folders:
        html = (out / "models" / name / "report.html").read_text(encoding="utf-8")
        assert "Traceback" not in html and "Error" not in html.split("<body", 1)[-1][:2000]
    index = (out / "index.html").read_text(encoding="utf-8")
    assert all(m.replace("_", "/") in index or m in index for m in models)
    manifest = json.loads((out / "evaluation" / "manifest.json").read_text())
    assert manifest["parameters"]["correct_metric"] is None


def test_the_llm_demo_script_rewrites_the_shipped_folder_byte_for_byte(tmp_path):
    import subprocess
    import sys

    from beyondauc.data.logs import llm_demo

    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, str(root / "scripts" / "make_llm_demo.py"), "--out", str(tmp_path / "llm")],
        check=True,
        capture_output=True,
    )
    shipped = sorted(p.relative_to(llm_demo()) for p in llm_demo().rglob("*") if p.is_file())
    made = sorted(p.relative_to(tmp_path / "llm") for p in (tmp_path / "llm").rglob("*") if p.is_file())
    assert shipped == made and len(made) == 9
    for rel in made:
        assert (tmp_path / "llm" / rel).read_bytes() == (llm_demo() / rel).read_bytes(), rel


def test_beyondauc_demo_kind_llm_reports_on_the_embedded_logs(tmp_path):
    out = tmp_path / "demo-llm"
    code, text = run(["demo", "--kind", "llm", "--out", str(out), "--jobs", "1", "--quiet", "--n-bootstrap", "50"])
    assert code == 0, text
    assert sorted(p.name for p in (out / "models").iterdir()) == ["llama-mini", "phi-tiny", "qwen-small"]
    manifest = json.loads((out / "evaluation" / "manifest.json").read_text())
    assert manifest["parameters"]["baseline"] == "qwen-small"


def test_an_inspect_eval_log_with_epochs_gives_a_report_with_items_and_cluster_intervals(tmp_path):
    # the .eval log Inspect AI itself wrote (mock model, 8 samples, epochs=2): 8 items, 16 samples
    import numpy as np

    import beyondauc as ba
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed, honest_interval
    from beyondauc.metrics.uncertainty.clustered_delong import clustered_auc_variance
    from beyondauc.metrics.uncertainty.clusters import cluster_counts

    log = next((LOGS / "inspect").glob("*.eval"))
    out = tmp_path / "report"
    code, text = run(["report", str(log), "--out", str(out), "--jobs", "1", "--quiet", "-p", "n_bootstrap=20"])
    assert code == 0, text
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "8 items, 16 samples" in index
    (page,) = (out / "models").glob("*/report.html")
    html = page.read_text(encoding="utf-8")
    assert "The rows are 16 samples of 8 items" in html and "Traceback" not in html
    ev = ba.load_evaluation(out / "evaluation")
    assert ev.data["n_items"] == 8 and ev.data["n_rows"] == 16
    assert ev.table("datasets")["n_items"].tolist() == [8]
    # the intervals are the cluster ones: the Brier score's, from item draws made here (an item's epochs together)
    bench = ba.load_benchmark(ba.data.read_logs(log))
    (model,) = bench.models
    q, c = bench.quality(bench.datasets[0], model=model), bench.scores(model)
    items = np.unique(bench.items(), return_inverse=True)[1]
    W = cluster_counts(
        items, np.zeros(len(q), dtype=int), 20, random_state=dataset_seed(ev.parameters["random_state"], 0)
    )
    row = ev.table("given_calibration").iloc[0]
    low, high, _, _ = honest_interval(W @ (c - q) ** 2 / W.sum(axis=1), row["brier"], 0.95)
    assert (row["brier_low"], row["brier_high"]) == pytest.approx((low, high), abs=1e-12)
    # and the AUC's is Obuchowski's clustered DeLong interval over the items
    auc = ev.table("auc_intervals").iloc[0]
    _, var = clustered_auc_variance(q >= 0.5, c, items)
    assert auc["auc_se"] == pytest.approx(np.sqrt(var), abs=1e-12)
