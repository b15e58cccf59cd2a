"""End to end: ``beyondauc report FOLDER`` on harness logs, no argument but where to write.

The folders are the logs the real harnesses wrote (tests/data/logs, see test_logs.py): lm-evaluation-harness
runs of two models on two tasks, and a HELM run folder (one model, one task: the defaults fall back to what
one dataset allows).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run

LOGS = Path(__file__).parent / "data" / "logs"


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
