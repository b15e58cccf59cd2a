"""Checks on the embedded answers demo ``beyondauc/datasets/answers.csv.gz`` and ``load_demo(kind="answers")``.

The accuracy and confidence checks refit every model from the recipe in
``beyondauc/datasets/README.md`` with scikit-learn, independently of the script
that wrote the file.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.ndimage import rotate
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from beyondauc import load_demo
from beyondauc.data.open import DEMO_ANSWERS, open_benchmark
from beyondauc.evaluation.pipeline import data_fingerprint

REPO_ROOT = Path(__file__).resolve().parents[2]
PATH = REPO_ROOT / "toolkit" / "beyondauc" / "datasets" / "answers.csv.gz"
SCRIPT = REPO_ROOT / "scripts" / "make_answers_demo.py"
COLUMNS = ["dataset", "domain", "split", "id", "model", "confidence", "correct", "prediction", "label"]
DATASETS = ("digits", "wine", "iris", "breast_cancer", "digits_noisy")
DOMAINS = {
    "digits": "vision",
    "wine": "chemistry",
    "iris": "botany",
    "breast_cancer": "medical",
    "digits_noisy": "vision",
}
N_CLASSES = {"digits": 10, "wine": 3, "iris": 3, "breast_cancer": 2, "digits_noisy": 10}
MODELS = ("logreg", "naive_bayes", "random_forest", "knn", "mlp", "deep_tree")


@pytest.fixture(scope="module")
def long() -> pd.DataFrame:
    assert PATH.is_file(), f"missing {PATH}; run python scripts/make_answers_demo.py"
    return pd.read_csv(PATH, dtype={"id": str})


@pytest.fixture(scope="module")
def bench():
    return load_demo(kind="answers")


# -- the recipe of the README, written out again ------------------------------------------------------------------


def _recipe_models(seed):
    return {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000)),
        "naive_bayes": GaussianNB(),
        "random_forest": RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=seed),
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=10)),
        "mlp": make_pipeline(
            StandardScaler(), MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-3, max_iter=2000, random_state=seed)
        ),
        "deep_tree": DecisionTreeClassifier(min_samples_leaf=2, random_state=seed),
    }


def _recipe_data():
    """name -> (X, y, seed), the features the README lists."""
    wine, bc = load_wine(), load_breast_cancer()
    wine_names = ["malic_acid", "ash", "alcalinity_of_ash", "magnesium", "color_intensity", "hue"]
    digits = load_digits()
    return {
        "digits": (digits.data, digits.target, 11),
        "wine": (pd.DataFrame(wine.data, columns=wine.feature_names)[wine_names].to_numpy(), wine.target, 12),
        "iris": (load_iris().data[:, [0, 1]], load_iris().target, 13),
        "breast_cancer": (bc.data[:, :10], bc.target, 14),  # the 10 'mean ...' features come first
    }


def _noisy(images):
    rng = np.random.default_rng(1234)
    angles = rng.uniform(-15, 15, size=len(images))
    noise = rng.normal(0, 1, size=images.shape)
    turned = np.array(
        [
            rotate(im.reshape(8, 8), a, reshape=False, order=1, mode="constant", cval=0).ravel()
            for im, a in zip(images, angles)
        ]
    )
    return np.clip(turned + noise, 0, 16)


@pytest.fixture(scope="module")
def refit():
    """(dataset, model) -> (held-out original rows, split per row, max proba, argmax class, label)."""
    out = {}
    with threadpool_limits(limits=1):  # as the script: one BLAS thread, so the MLP's training is the same
        for name, (X, y, seed) in _recipe_data().items():
            train, held = train_test_split(np.arange(len(y)), train_size=0.5, stratify=y, random_state=seed)
            held = np.sort(held)
            val, _ = train_test_split(held, train_size=0.4, stratify=y[held], random_state=seed)
            split = np.where(np.isin(held, val), "val", "test")
            sets = {name: X[held]} | ({"digits_noisy": _noisy(X[held])} if name == "digits" else {})
            for m, model in _recipe_models(seed).items():
                model.fit(X[np.sort(train)], y[np.sort(train)])
                for d, Xd in sets.items():
                    proba = model.predict_proba(Xd)
                    out[d, m] = (held, split, proba.max(axis=1), model.classes_[proba.argmax(axis=1)], y[held])
    return out


# -- the file ------------------------------------------------------------------------------------------------------


def test_file_is_small():
    assert PATH.stat().st_size < 300 * 1024


def test_regeneration_is_byte_identical(tmp_path):
    out = tmp_path / "answers.csv.gz"
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)], check=True, cwd=REPO_ROOT, capture_output=True, timeout=300
    )
    assert out.read_bytes() == PATH.read_bytes()


def test_long_form(long):
    assert list(long.columns) == COLUMNS
    assert not long.isna().any().any()
    assert tuple(pd.unique(long["dataset"])) == DATASETS
    assert tuple(pd.unique(long["model"])) == MODELS
    assert long.groupby("dataset")["domain"].agg(lambda s: set(s)).to_dict() == {d: {v} for d, v in DOMAINS.items()}
    assert set(long["split"]) == {"val", "test"}
    assert (long["correct"] == (long["prediction"] == long["label"]).astype(int)).all()
    assert not long.duplicated(["dataset", "id", "model"]).any()
    # every model answers the same examples, with the same label and split
    per_model = long.groupby(["dataset", "model"])["id"].apply(frozenset).unstack()
    assert (per_model.nunique(axis=1) == 1).all()
    assert (long.groupby(["dataset", "id"])[["label", "split"]].nunique() == 1).all().all()
    for d, k in N_CLASSES.items():
        rows = long[long["dataset"] == d]
        assert set(rows["label"]) == set(range(k)), d
        assert rows["prediction"].between(0, k - 1).all(), d


def test_confidence_is_a_max_probability(long):
    k = long["dataset"].map(N_CLASSES)
    # written with 6 significant digits: a tie of k classes at 1/k may read 5e-7 below it
    assert (long["confidence"] >= 1 / k - 5e-7).all()
    assert (long["confidence"] <= 1).all()


# -- the Benchmark ---------------------------------------------------------------------------------------------------


def test_benchmark_shape(bench, long):
    assert bench.kind == "answers" and bench.source == "beyondauc answers demo benchmark"
    assert bench.datasets == DATASETS and bench.models == MODELS
    assert bench.domains == DOMAINS
    assert list(bench.frame.columns) == ["dataset", "domain", "split", "id", *MODELS]
    assert all(bench.frame[m].dtype == np.float64 for m in MODELS)
    assert bench.correct.dtype == np.int8 and bench.correct.shape == (len(bench), len(MODELS))
    # half of each dataset is held out (stratified), 40 % of it in `val`
    n = {"digits": 1797, "wine": 178, "iris": 150, "breast_cancer": 569, "digits_noisy": 1797}
    assert bench.dataset_sizes().tolist() == [n[d] - round(n[d] / 2) for d in DATASETS]
    for d in DATASETS:
        split = bench.frame.loc[bench.frame["dataset"] == d, "split"]
        assert set(split) == {"val", "test"} and abs((split == "val").mean() - 0.4) < 0.02, d
    # the OOD dataset holds the same images (ids) in the same cohorts as digits
    digits, noisy = (bench.frame[bench.frame["dataset"] == d] for d in ("digits", "digits_noisy"))
    assert digits["id"].str[len("digits-") :].tolist() == noisy["id"].str[len("digits_noisy-") :].tolist()
    assert digits["split"].tolist() == noisy["split"].tolist()


def test_benchmark_matches_the_long_rows(bench, long):
    """Every (dataset, id, model) of the file is where the Benchmark puts it, by a merge independent of the pivot."""
    j = {m: i for i, m in enumerate(bench.models)}
    rows = pd.DataFrame({"dataset": bench.frame["dataset"], "id": bench.frame["id"], "row": np.arange(len(bench))})
    merged = long.merge(rows, on=["dataset", "id"], validate="many_to_one")
    assert len(merged) == len(long) == len(bench) * len(MODELS)
    col = merged["model"].map(j).to_numpy()
    assert np.array_equal(bench.correct[merged["row"], col], merged["correct"])
    assert np.array_equal(bench.frame[list(MODELS)].to_numpy()[merged["row"], col], merged["confidence"])
    assert np.array_equal(bench.frame.loc[merged["row"], "split"], merged["split"])
    view = bench.model_view("knn")
    assert np.array_equal(view.labels("iris"), long.query("dataset == 'iris' and model == 'knn'")["correct"])


def test_demo_name_opens_it(bench):
    opened = open_benchmark(DEMO_ANSWERS, datasets=["iris", "digits_noisy"], models=["deep_tree"])
    assert DEMO_ANSWERS == "demo:answers"
    assert opened.kind == "answers" and opened.datasets == ("iris", "digits_noisy")
    assert np.array_equal(
        opened.labels(model="deep_tree"), bench.subset(datasets=["iris", "digits_noisy"]).labels(model="deep_tree")
    )
    assert data_fingerprint(DEMO_ANSWERS) == (
        "beyondauc answers demo benchmark",
        hashlib.sha256(PATH.read_bytes()).hexdigest(),
    )


def test_scores_demo_stays_the_default():
    assert load_demo().kind == "scores"
    with pytest.raises(ValueError, match="`kind` must be one of 'scores', 'answers', got 'answer'"):
        load_demo(kind="answer")


# -- against scikit-learn ------------------------------------------------------------------------------------------


def test_answers_match_a_scikit_learn_refit(long, refit):
    """Per dataset, cohort and model: the same correct answers, predictions and confidences as a refit."""
    for (d, m), (held, split, conf, pred, y) in refit.items():
        rows = long[(long["dataset"] == d) & (long["model"] == m)]
        assert rows["id"].tolist() == [f"{d}-{i:04d}" for i in held], (d, m)
        assert rows["split"].tolist() == split.tolist(), (d, m)
        assert rows["label"].tolist() == y.tolist(), (d, m)
        assert rows["prediction"].tolist() == pred.tolist(), (d, m)
        np.testing.assert_allclose(rows["confidence"], conf, rtol=5e-6, err_msg=f"{d}/{m}")
        for s in ("val", "test"):
            assert rows.loc[rows["split"] == s, "correct"].sum() == (pred == y)[split == s].sum(), (d, m, s)
    assert len(refit) == len(DATASETS) * len(MODELS)


def test_accuracies_are_varied_and_the_shift_hurts(long):
    acc = long.groupby(["dataset", "model"])["correct"].mean().unstack()
    assert (acc.loc["digits"] > acc.loc["digits_noisy"] + 0.1).all()
    for d in DATASETS:
        assert acc.loc[d].max() - acc.loc[d].min() > 0.03, d  # models of varied quality everywhere
    # every cohort has wrong answers for every model, so each has an accuracy curve to read
    wrong = long.assign(wrong=1 - long["correct"]).groupby(["dataset", "split", "model"])["wrong"].sum()
    assert (wrong > 0).all()


def test_deep_tree_is_overconfident_with_few_confidences(long):
    g = long.groupby(["dataset", "model"])
    distinct = g["confidence"].nunique().unstack()
    gap = (g["confidence"].mean() - g["correct"].mean()).unstack()
    assert (distinct["deep_tree"] <= 5).all()
    assert (distinct.loc["digits", ["logreg", "random_forest", "mlp"]] > 500).all()
    assert (gap["deep_tree"] > 0.05).all()  # mean confidence far above accuracy on every dataset
    tree = long[long["model"] == "deep_tree"]
    assert (tree["confidence"] == 1).mean() > 0.75
