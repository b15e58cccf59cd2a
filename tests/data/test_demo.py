"""Checks on the embedded demo benchmark ``beyondauc/datasets/demo.csv.gz``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_PATH = REPO_ROOT / "toolkit" / "beyondauc" / "datasets" / "demo.csv.gz"
SCRIPT = REPO_ROOT / "scripts" / "make_demo_data.py"
META_COLUMNS = ["dataset", "domain", "split", "id", "label"]


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    assert DEMO_PATH.is_file(), f"missing {DEMO_PATH}; run python scripts/make_demo_data.py"
    return pd.read_csv(DEMO_PATH)


@pytest.fixture(scope="module")
def model_columns(demo) -> list[str]:
    return list(demo.columns[len(META_COLUMNS) :])


def test_file_size():
    assert DEMO_PATH.stat().st_size < 2 * 1024 * 1024


def test_column_order(demo, model_columns):
    assert list(demo.columns[: len(META_COLUMNS)]) == META_COLUMNS
    assert len(model_columns) >= 6
    for required in ("logreg", "svm", "naive_bayes", "random_forest", "knn", "grad_boost", "single_feature"):
        assert required in model_columns
    for m in model_columns:
        assert pd.api.types.is_float_dtype(demo[m]), m


def test_datasets_and_domains(demo):
    assert demo["dataset"].nunique() >= 6
    assert demo["domain"].nunique() >= 3
    for name in demo["dataset"].unique():
        assert name.isidentifier() and name == name.lower(), name
    # each dataset belongs to exactly one domain
    assert (demo.groupby("dataset")["domain"].nunique() == 1).all()
    assert set(demo["split"].unique()) == {"val", "test"}


def test_labels_binary_int(demo):
    assert pd.api.types.is_integer_dtype(demo["label"])
    assert set(demo["label"].unique()) == {0, 1}


def test_both_classes_everywhere(demo):
    for name, g in demo.groupby("dataset"):
        assert set(g["label"]) == {0, 1}, name
        for split in ("val", "test"):
            labels = set(g.loc[g["split"] == split, "label"])
            assert labels == {0, 1}, (name, split)


def test_no_missing_or_infinite(demo, model_columns):
    assert not demo.isna().any().any()
    assert np.isfinite(demo[model_columns].to_numpy()).all()


def test_ids_unique_per_dataset(demo):
    assert not demo.duplicated(["dataset", "id"]).any()
    assert all(i.startswith(d + "-") for d, i in zip(demo["dataset"], demo["id"]))


def test_scores_differ_in_scale(demo, model_columns):
    scores = demo[model_columns]
    outside = [m for m in model_columns if (scores[m] < 0).any() or (scores[m] > 1).any()]
    inside = [m for m in model_columns if scores[m].between(0, 1).all()]
    assert outside, "no model with raw scores outside [0, 1]"
    assert inside, "no model with scores inside [0, 1]"


def test_every_model_beats_chance_on_every_dataset(demo, model_columns):
    for name, g in demo.groupby("dataset"):
        for m in model_columns:
            auc = roc_auc_score(g["label"], g[m])
            assert auc > 0.5, (name, m, auc)


def test_regeneration_is_byte_identical(tmp_path):
    out = tmp_path / "demo.csv.gz"
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)], check=True, cwd=REPO_ROOT, capture_output=True, timeout=300
    )
    assert out.read_bytes() == DEMO_PATH.read_bytes()
