"""The input forms (docs/user_guide/data.md): wide and long tables, scores and answers, CSV / Parquet /
JSON Lines files and directories of them, fitted scikit-learn estimators.  Each form is checked against
a benchmark built by hand from the same numbers; each bad input against its one-line message."""

from __future__ import annotations

import gzip
import json
import re
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

from beyondauc import Benchmark, from_estimators, load_benchmark, open_benchmark
from beyondauc.data import estimator_answers, estimator_scores

matplotlib.use("Agg")

CLASSES = ["entailment", "neutral", "contradiction"]


# -- helpers ----------------------------------------------------------------------------


def wide_scores(n=6, seed=0, *, with_id=True):
    """A wide scores frame: two datasets (interleaved rows), domains, splits, ids, two models."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "dataset": np.tile(["alpha", "beta"], n),
            "domain": np.tile(["news", "chat"], n),
            "split": np.repeat(["val", "test"], n),
            "id": np.arange(100, 100 + 2 * n),
            "label": np.tile([0, 0, 1, 1], n)[: 2 * n],  # both classes in both datasets
            "m1": rng.normal(size=2 * n).round(6),
            "m2": rng.random(2 * n).round(6),
        }
    )
    return df if with_id else df.drop(columns="id")


def melt(wide, models=("m1", "m2"), value="score"):
    """The long form of ``wide``, model-major, by hand (one block of rows per model)."""
    keep = [c for c in wide.columns if c not in models]
    blocks = [wide[keep].assign(model=m, **{value: wide[m].to_numpy()}) for m in models]
    return pd.concat(blocks, ignore_index=True)


def assert_same(a: Benchmark, b: Benchmark):
    assert (a.kind, a.models, a.datasets, a.domains) == (b.kind, b.models, b.datasets, b.domains)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    if a.kind == "answers":
        assert a.correct.dtype == b.correct.dtype == np.int8
        np.testing.assert_array_equal(a.correct, b.correct)


def write(frame, path):
    """Write ``frame`` in the form ``path``'s name says: CSV (.gz), Parquet, JSON Lines (.gz)."""
    name = path.name
    if name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    elif name.endswith((".jsonl", ".ndjson", ".jsonl.gz")):
        text = frame.to_json(orient="records", lines=True)
        if name.endswith(".gz"):
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text)
    else:
        frame.to_csv(path, index=False)
    return path


def answers_reference(long, models, correct_of):
    """The answers benchmark of a long frame with ids, by hand: examples in first-appearance order."""
    examples = long.drop_duplicates(["dataset", "id"])[["dataset", "id"]].reset_index(drop=True)
    order = list(pd.unique(long["dataset"]))
    examples = examples.iloc[np.argsort(examples["dataset"].map(order.index).to_numpy(), kind="stable")]
    examples = examples.reset_index(drop=True)
    conf = np.empty((len(examples), len(models)))
    correct = np.empty((len(examples), len(models)), dtype=np.int8)
    for j, m in enumerate(models):
        rows = long[long["model"] == m].set_index(["dataset", "id"]).loc[list(zip(examples["dataset"], examples["id"]))]
        conf[:, j] = rows["confidence"].to_numpy()
        correct[:, j] = correct_of(rows)
    frame = pd.DataFrame(
        {
            "dataset": pd.Series(examples["dataset"].to_numpy(dtype=object), dtype=object),
            "domain": pd.Series(np.full(len(examples), np.nan, dtype=object), dtype=object),
            "id": examples["id"].to_numpy(),
        }
    )  # the text columns hold Python objects
    for j, m in enumerate(models):
        frame[m] = conf[:, j]
    return Benchmark(frame, tuple(models), tuple(order), dict.fromkeys(order), "<DataFrame>", "answers", correct)


def qa_long(n=5, seed=1):
    """Long answers of two models on two datasets, ids shared across models, models interleaved."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in ("qa1", "qa2"):
        for i in range(n):
            for m in ("gpt", "llama"):
                rows.append(
                    {
                        "dataset": d,
                        "id": f"{d}-{i}",
                        "model": m,
                        "confidence": round(float(rng.random()), 6),
                        "correct": int(rng.random() < 0.6),
                    }
                )
    return pd.DataFrame(rows)


def nli_probabilities(n=8, seed=2):
    """3-class NLI: per model and example class probabilities; the gold label shared by the models."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(3), size=(2, n)).round(6)  # (models, examples, classes)
    gold = rng.integers(0, 3, n)
    long = pd.DataFrame(
        {
            "dataset": "mnli",
            "id": np.tile(np.arange(n), 2),
            "model": np.repeat(["bert", "roberta"], n),
            "label": np.tile(np.asarray(CLASSES)[gold], 2),
        }
    )
    for k, c in enumerate(CLASSES):
        long[f"p_{c}"] = p[:, :, k].reshape(-1)
    return long, p, gold


def error_of(source, **kwargs):
    with pytest.raises(ValueError) as info:
        load_benchmark(source, **kwargs)
    message = str(info.value)
    assert "\n" not in message, message
    return message


# -- long scores ---------------------------------------------------------------------------


def test_long_scores_equal_wide():
    wide = wide_scores()
    assert_same(load_benchmark(melt(wide)), load_benchmark(wide))


def test_long_scores_interleaved_rows_equal_wide():
    """Example-major rows (each example's models together) give the same benchmark as model-major ones."""
    wide = wide_scores()
    long = melt(wide)
    interleaved = long.iloc[np.argsort(np.tile(np.arange(len(wide)), 2), kind="stable")]
    assert_same(load_benchmark(interleaved), load_benchmark(wide))


def test_long_scores_shuffled_rows_match_by_id():
    wide = wide_scores()
    long = melt(wide).sample(frac=1.0, random_state=3)
    bench = load_benchmark(long)
    by_id = bench.frame.set_index("id").loc[wide["id"]]
    for m in ("m1", "m2"):
        np.testing.assert_array_equal(by_id[m].to_numpy(), wide[m].to_numpy())
    np.testing.assert_array_equal(by_id["label"].to_numpy(), wide["label"].to_numpy())
    np.testing.assert_array_equal(by_id["split"].to_numpy(), wide["split"].to_numpy())


def test_long_scores_without_id_match_by_order():
    wide = wide_scores(with_id=False)
    assert_same(load_benchmark(melt(wide)), load_benchmark(wide))


@pytest.mark.parametrize(
    "fname", ["long.csv", "long.csv.gz", "long.parquet", "long.jsonl", "long.jsonl.gz", "long.ndjson"]
)
def test_long_scores_files_equal_the_wide_frame(tmp_path, fname):
    wide = wide_scores()
    bench = load_benchmark(write(melt(wide), tmp_path / fname))
    assert bench.source == str(tmp_path / fname)
    assert_same(bench, load_benchmark(wide))


def test_wide_jsonl_equals_wide_csv(tmp_path):
    wide = wide_scores()
    assert_same(load_benchmark(write(wide, tmp_path / "w.jsonl")), load_benchmark(write(wide, tmp_path / "w.csv")))


def test_long_scores_string_labels_with_pos_label():
    wide = wide_scores()
    long = melt(wide).assign(label=lambda d: d["label"].map({0: "no", 1: "yes"}))
    assert_same(load_benchmark(long, pos_label="yes"), load_benchmark(wide))


def test_long_models_and_datasets_selection():
    wide = wide_scores()
    got = load_benchmark(melt(wide), models=["m2"], datasets=["beta"])
    assert_same(got, load_benchmark(wide, models=["m2"], datasets=["beta"]))


def test_long_nan_drop_equals_wide_nan_drop():
    wide = wide_scores()
    wide.loc[3, "m2"] = np.nan
    with pytest.warns(UserWarning, match=r"dropped 1 example\(s\) with NaN/inf scores from DataFrame: \{'m2': 1\}"):
        from_long = load_benchmark(melt(wide), nan_policy="drop")
    with pytest.warns(UserWarning, match="dropped 1 row"):
        from_wide = load_benchmark(wide, nan_policy="drop")
    assert_same(from_long, from_wide)
    assert 103 not in from_long.frame["id"].to_numpy()


# -- long answers ---------------------------------------------------------------------------


def test_confidence_correct_against_hand_built_benchmark():
    long = qa_long()
    expected = answers_reference(long, ["gpt", "llama"], lambda rows: rows["correct"].to_numpy())
    bench = load_benchmark(long)
    assert_same(bench, expected)
    np.testing.assert_array_equal(
        bench.labels("qa2", model="llama"), long.query("dataset == 'qa2' and model == 'llama'")["correct"].to_numpy()
    )


@pytest.mark.parametrize(
    "encode",
    [
        lambda c: c.astype(bool),
        lambda c: c.map({1: "true", 0: "false"}),
        lambda c: c.map({1: "TRUE", 0: "False"}),
        lambda c: c.astype(float),
        lambda c: c.map({1: "1", 0: "0"}),
    ],
)
def test_correct_encodings_are_the_same(encode):
    long = qa_long()
    reference = load_benchmark(long)
    assert_same(load_benchmark(long.assign(correct=encode(long["correct"]))), reference)


@pytest.mark.parametrize("fname", ["qa.csv", "qa.jsonl", "qa.parquet", "qa.csv.gz"])
def test_answers_files_equal_the_frame(tmp_path, fname):
    long = qa_long()
    long["correct"] = long["correct"].astype(bool)
    bench = load_benchmark(write(long, tmp_path / fname))
    assert bench.kind == "answers"
    assert_same(bench, load_benchmark(long))


def test_prediction_label_confidence_gives_correct_as_equality():
    rng = np.random.default_rng(4)
    n = 10
    gold = rng.choice(["paris", "rome", "oslo"], n)
    long = pd.DataFrame(
        {
            "dataset": "capitals",
            "id": np.tile(np.arange(n), 2),
            "model": np.repeat(["a", "b"], n),
            "prediction": rng.choice(["paris", "rome", "oslo"], 2 * n),
            "label": np.tile(gold, 2),
            "confidence": rng.random(2 * n).round(6),
        }
    )
    expected = answers_reference(long, ["a", "b"], lambda rows: (rows["prediction"] == rows["label"]).to_numpy())
    assert_same(load_benchmark(long), expected)


def test_prediction_numbers_compare_as_classes():
    """A label read as 2.0 (a float column) and a prediction 2 (int) are the same class."""
    long = pd.DataFrame(
        {
            "dataset": "d",
            "id": [1, 2, 1, 2],
            "model": ["a", "a", "b", "b"],
            "prediction": [2, 1, 1, 1],
            "label": [2.0, 1.0, 2.0, 1.0],
            "confidence": [0.9, 0.6, 0.7, 0.8],
        }
    )
    with pytest.warns(UserWarning, match=r"model 'a' on 'd' \(all right\)"):
        np.testing.assert_array_equal(load_benchmark(long).correct, [[1, 0], [1, 1]])


def test_correct_column_wins_over_prediction_and_label():
    """With 'correct' given (a judge, a normalised match), prediction and label are only carried along."""
    long = pd.DataFrame(
        {
            "dataset": "d",
            "id": [1, 2, 1, 2],
            "model": ["a", "a", "b", "b"],
            "prediction": ["Paris.", "Rome", "paris", "x"],
            "label": ["Paris"] * 2 + ["Paris"] * 2,
            "confidence": [0.9, 0.6, 0.7, 0.8],
            "correct": [1, 0, 1, 0],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = load_benchmark(long)
    np.testing.assert_array_equal(bench.correct, [[1, 1], [0, 0]])


def test_nli_probability_columns_against_numpy_argmax():
    long, p, gold = nli_probabilities()
    bench = load_benchmark(long)
    assert bench.kind == "answers" and bench.models == ("bert", "roberta")
    np.testing.assert_array_equal(bench.frame[["bert", "roberta"]].to_numpy(), p.max(axis=2).T)
    np.testing.assert_array_equal(bench.correct, (p.argmax(axis=2) == gold).T.astype(np.int8))
    assert list(bench.frame.columns) == ["dataset", "domain", "id", "bert", "roberta"]


@pytest.mark.parametrize("prefix", ["proba_", "prob_"])
def test_other_probability_prefixes(prefix):
    long, _, _ = nli_probabilities()
    renamed = long.rename(columns={f"p_{c}": f"{prefix}{c}" for c in CLASSES})
    assert_same(load_benchmark(renamed), load_benchmark(long))


@pytest.mark.parametrize("fname", ["nli.jsonl", "nli.csv", "nli.parquet"])
def test_probability_list_column_equals_probability_columns(tmp_path, fname):
    long, p, gold = nli_probabilities()
    listed = long[["dataset", "id", "model"]].assign(label=np.tile(gold, 2), probabilities=list(p.reshape(-1, 3)))
    if fname.endswith(".csv"):  # as text, the way a list column reaches a CSV file
        listed["probabilities"] = [json.dumps(row.tolist()) for row in p.reshape(-1, 3)]
    listed_bench = load_benchmark(write(listed, tmp_path / fname))
    assert_same(listed_bench, load_benchmark(long))


def test_probability_lists_written_by_numpy_in_a_csv(tmp_path):
    long, p, gold = nli_probabilities()
    listed = long[["dataset", "id", "model"]].assign(label=np.tile(gold, 2), proba=list(p.reshape(-1, 3)))
    path = tmp_path / "np.csv"
    listed.to_csv(path, index=False)  # numpy writes "[0.1 0.2 0.7]"
    assert "[" in path.read_text().splitlines()[1] and "," not in path.read_text().splitlines()[1].split("[")[1]
    assert_same(load_benchmark(path), load_benchmark(long))


@pytest.mark.filterwarnings("ignore:.*all right or all wrong")
def test_datasets_with_different_classes():
    """A class column empty on a whole dataset is not one of its classes: a 2-class dataset beside a 3-class one."""
    long, p, gold = nli_probabilities(n=4)
    two = pd.DataFrame(
        {
            "dataset": "rte",
            "id": np.tile([0, 1, 2], 2),
            "model": np.repeat(["bert", "roberta"], 3),
            "label": ["entailment", "neutral", "neutral"] * 2,
            "p_entailment": [0.9, 0.2, 0.55, 0.3, 0.4, 0.5],
            "p_neutral": [0.1, 0.8, 0.45, 0.7, 0.6, 0.5],
        }
    )
    bench = load_benchmark(pd.concat([long, two], ignore_index=True))
    np.testing.assert_array_equal(bench.scores("bert", "rte"), [0.9, 0.8, 0.55])
    np.testing.assert_array_equal(bench.scores("roberta", "rte"), [0.7, 0.6, 0.5])  # a tie: the first column wins
    np.testing.assert_array_equal(bench.labels("rte", model="bert"), [1, 1, 0])
    np.testing.assert_array_equal(bench.labels("rte", model="roberta"), [0, 1, 0])
    np.testing.assert_array_equal(bench.labels("mnli", model="roberta"), (p[1].argmax(axis=1) == gold).astype(int))


def test_long_dataframe_is_not_modified():
    long = qa_long().assign(model=lambda d: d["model"].astype("category"))
    before = long.copy()
    load_benchmark(long, models=["llama"], datasets=["qa2"])
    pd.testing.assert_frame_equal(long, before)


def test_answers_split_domain_and_view():
    long = qa_long()
    long["domain"] = long["dataset"].map({"qa1": "trivia", "qa2": "science"})
    long["split"] = np.where(long["id"].str.endswith(("0", "1")), "val", "test")
    bench = load_benchmark(long)
    assert bench.domains == {"qa1": "trivia", "qa2": "science"} and bench.has_split
    view = bench.model_view("llama")
    assert view.models == ("llama",)
    np.testing.assert_array_equal(view.frame["label"].to_numpy(), bench.labels(model="llama"))
    sub = bench.subset(datasets=["qa2"], models=["llama"])
    np.testing.assert_array_equal(sub.correct[:, 0], bench.labels("qa2", model="llama"))


def test_answers_all_right_is_warned_once():
    long = qa_long()
    long.loc[long["model"] == "gpt", "correct"] = 1
    with pytest.warns(UserWarning) as record:
        load_benchmark(long)
    texts = [str(w.message) for w in record]
    assert len(texts) == 1 and "model 'gpt' on 'qa1' (all right)" in texts[0] and "'qa2'" in texts[0], texts


def test_long_extra_columns_are_listed_in_one_warning():
    long = qa_long().assign(question="q?", latency=1.5)
    with pytest.warns(UserWarning) as record:
        load_benchmark(long)
    texts = [str(w.message) for w in record]
    assert len(texts) == 1 and "ignored column(s) 'question', 'latency'" in texts[0], texts


def test_open_benchmark_routes_long_files(tmp_path):
    long = qa_long()
    path = write(long, tmp_path / "answers.jsonl")
    assert_same(open_benchmark(str(path)), load_benchmark(long))
    assert open_benchmark(long, models=["llama"]).models == ("llama",)


# -- directories -------------------------------------------------------------------------------


def test_directory_of_jsonl_files_one_dataset_each(tmp_path):
    long = qa_long()
    root = tmp_path / "runs"
    root.mkdir()
    for d, part in long.groupby("dataset", sort=False):
        write(part.drop(columns="dataset"), root / f"{d}.jsonl")
    (root / "README.md").write_text("notes, not data")
    bench = load_benchmark(root)
    assert bench.source == str(root)
    assert_same(bench, load_benchmark(long))


def test_directory_of_mixed_file_types_is_concatenated(tmp_path):
    wide = wide_scores()
    root = tmp_path / "mixed"
    root.mkdir()
    write(wide[wide["dataset"] == "alpha"], root / "a.parquet")
    write(wide[wide["dataset"] == "beta"], root / "b.csv")
    assert_same(load_benchmark(root), load_benchmark(wide.sort_values("dataset", kind="stable")))


def test_true_directory_stays_true(tmp_path):
    root = tmp_path / "true"
    root.mkdir()
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "generated_text": list("abcd"),
            "grounding": list("wxyz"),
            "label": [0, 1, 0, 1],
            "m1": [0.1, 0.9, 0.2, 0.8],
        }
    )
    frame.to_csv(root / "begin_dev_true_scores.csv", index=False)
    frame.to_csv(root / "qags_xsum_dev_true_scores.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # TRUE's own text columns are known: no 'ignored column' warning
        bench = load_benchmark(root)
    assert bench.datasets == ("begin", "qags_xsum")
    assert bench.domains == {"begin": "dialogue", "qags_xsum": "summarization"}


def test_directory_files_of_two_forms_are_refused(tmp_path):
    root = tmp_path / "two"
    root.mkdir()
    wide = wide_scores()
    write(wide, root / "a.csv")
    write(melt(wide), root / "b.jsonl")
    message = error_of(root)
    assert re.search(r"file '.*a\.csv' is in the wide form and file '.*b\.jsonl' in the long scores form", message)
    assert "the forms read are" in message


# -- fitted estimators -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)  # standardised: the solvers converge at once
    return X[::2], y[::2], X[1::2], y[1::2]


def test_from_estimators_binary_scores_as_sklearn(cancer):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    Xf, yf, X, y = cancer
    lr = LogisticRegression(max_iter=1000).fit(Xf, yf)
    svm = LinearSVC().fit(Xf, yf)
    bench = from_estimators(
        {"lr": lr, "svm": svm}, {"a": (X[:120], y[:120]), "b": (X[120:], y[120:])}, domains={"a": "x", "b": "x"}
    )
    assert bench.kind == "scores" and bench.source == "<estimators>" and bench.datasets == ("a", "b")
    np.testing.assert_array_equal(bench.scores("lr"), lr.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(bench.scores("svm"), svm.decision_function(X))
    np.testing.assert_array_equal(bench.labels(), y)
    swapped = from_estimators({"lr": lr, "svm": svm}, {"a": (X, y)}, pos_label=0)
    np.testing.assert_array_equal(swapped.scores("lr"), lr.predict_proba(X)[:, 0])
    np.testing.assert_array_equal(swapped.scores("svm"), -svm.decision_function(X))
    np.testing.assert_array_equal(swapped.labels(), 1 - y)


def test_from_estimators_cohorts_and_per_dataset_estimators(cancer):
    from sklearn.linear_model import LogisticRegression

    Xf, yf, X, y = cancer
    lr1 = LogisticRegression(max_iter=1000).fit(Xf, yf)
    lr2 = LogisticRegression(max_iter=1000, C=0.01).fit(Xf, yf)
    bench = from_estimators(
        {"lr": {"a": lr1, "b": lr2}},
        {
            "a": (X[:50], y[:50], X[50:100], y[50:100]),
            "b": {"val": (X[100:150], y[100:150]), "test": (X[150:], y[150:])},
        },
    )
    assert list(bench.frame["split"]) == ["val"] * 50 + ["test"] * 50 + ["val"] * 50 + ["test"] * (len(y) - 150)
    for d, est, cuts in (("a", lr1, (0, 50, 100)), ("b", lr2, (100, 150, len(y)))):  # scored cohort by cohort
        expected = np.concatenate([est.predict_proba(X[lo:hi])[:, 1] for lo, hi in zip(cuts[:-1], cuts[1:])])
        np.testing.assert_array_equal(bench.scores("lr", d), expected)


def test_from_estimators_multiclass_answers_by_hand():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_iris(return_X_y=True)
    names = np.asarray(["setosa", "versicolor", "virginica"])[y]
    lr = LogisticRegression(max_iter=1000).fit(X[::2], names[::2])
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[::2], names[::2])
    bench = from_estimators({"lr": lr, "tree": tree}, {"iris": (X[1::2], names[1::2])})
    assert bench.kind == "answers"
    for j, est in enumerate((lr, tree)):
        proba = est.predict_proba(X[1::2])
        np.testing.assert_array_equal(bench.frame[bench.models[j]].to_numpy(), proba.max(axis=1))
        np.testing.assert_array_equal(bench.correct[:, j], est.classes_[proba.argmax(axis=1)] == names[1::2])
    confidence, correct = estimator_answers(lr, X[1::2], names[1::2])
    np.testing.assert_array_equal(correct, lr.predict(X[1::2]) == names[1::2])


def test_from_estimators_binary_forced_to_answers(cancer):
    from sklearn.linear_model import LogisticRegression

    Xf, yf, X, y = cancer
    lr = LogisticRegression(max_iter=1000).fit(Xf, yf)
    bench = from_estimators({"lr": lr}, {"a": (X, y)}, kind="answers")
    p = lr.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(bench.scores("lr"), np.maximum(p, 1 - p))
    np.testing.assert_array_equal(bench.labels(model="lr"), lr.predict(X) == y)


def test_from_estimators_bad_input(cancer):
    from sklearn.linear_model import LinearRegression, LogisticRegression

    Xf, yf, X, y = cancer
    lr = LogisticRegression(max_iter=1000).fit(Xf, yf)
    with pytest.raises(ValueError, match=r"estimator 'new' \(LogisticRegression\) is not fitted: fit it first"):
        from_estimators({"new": LogisticRegression()}, {"a": (X, y)})
    with pytest.raises(ValueError, match=r"is not a classifier: it has no classes_"):
        from_estimators({"ols": LinearRegression().fit(Xf, yf)}, {"a": (X, y)})
    with pytest.raises(
        ValueError,
        match=r"y for estimator 'lr' on dataset 'a' holds 7, not one of the estimator's "
        r"classes \[0, 1\]",
    ):
        from_estimators({"lr": lr}, {"a": (X, np.where(y == 1, 7, 0))})
    with pytest.raises(ValueError, match=r"datasets \['b'\] have splits and \['a'\] none"):
        from_estimators({"lr": lr}, {"a": (X, y), "b": (X, y, X, y)})
    with pytest.raises(ValueError, match=r"`estimators\['lr'\]` has no estimator for dataset\(s\) \['b'\]"):
        from_estimators({"lr": {"a": lr}}, {"a": (X, y), "b": (X, y)})
    with pytest.raises(ValueError, match=r"`data\['a'\]` must be \(X, y\)"):
        from_estimators({"lr": lr}, {"a": (X, y, X)})


def test_display_from_estimator_equals_from_predictions(cancer):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    from beyondauc.plots import (
        ClassHistogramDisplay,
        CoverageAccuracyDisplay,
        ReliabilityDisplay,
        ThresholdROCDisplay,
        WassersteinDisplay,
    )

    Xf, yf, X, y = cancer
    svm, lr = LinearSVC().fit(Xf, yf), LogisticRegression(max_iter=1000).fit(Xf, yf)
    Xv, yv, Xt, yt = X[:140], y[:140], X[140:], y[140:]
    a = ThresholdROCDisplay.from_estimator(svm, Xv, yv, Xt, yt)
    b = ThresholdROCDisplay.from_predictions(yv, svm.decision_function(Xv), yt, svm.decision_function(Xt))
    for ca, cb in zip(a.curves, b.curves):
        for u, v in zip(ca[:3], cb[:3]):
            np.testing.assert_array_equal(u, v)
    w = WassersteinDisplay.from_estimator(svm, Xv, yv, Xt, yt)
    w2 = WassersteinDisplay.from_predictions(yv, svm.decision_function(Xv), yt, svm.decision_function(Xt))
    np.testing.assert_array_equal(w.result.matrix, w2.result.matrix)
    h = ClassHistogramDisplay.from_estimator(lr, Xt, yt)
    np.testing.assert_array_equal(h.pos, lr.predict_proba(Xt)[yt == 1, 1])
    r = ReliabilityDisplay.from_estimator(lr, Xt, yt, n_bins=5)
    r2 = ReliabilityDisplay.from_predictions(yt, lr.predict_proba(Xt)[:, 1], n_bins=5)
    np.testing.assert_array_equal(r.fraction_positive, r2.fraction_positive)
    assert r.name == "LogisticRegression"
    c = CoverageAccuracyDisplay.from_estimator(lr, Xt, yt)
    p = lr.predict_proba(Xt)
    c2 = CoverageAccuracyDisplay.from_predictions(p.max(axis=1), p.argmax(axis=1) == yt)
    assert c.disca.score == c2.disca.score
    labels, scores = estimator_scores(svm, Xt, yt, response_method="decision_function")
    np.testing.assert_array_equal(scores, svm.decision_function(Xt))


# -- forms that cannot be recognised ---------------------------------------------------------------


@pytest.mark.parametrize(
    "columns, pattern",
    [
        (
            {"dataset": ["a"], "score": [0.1], "label": [1]},
            r"DataFrame: column\(s\) 'score' belong to the long form, which needs a 'model' column",
        ),
        (
            {"dataset": ["a"], "Model": ["x"], "score": [0.1], "label": [1]},
            r"needs a 'model' column naming each row's model \(is 'Model' meant to be 'model'\?\)",
        ),
        (
            {"dataset": ["a"], "model": ["x"], "score": [0.1], "confidence": [0.5], "label": [1]},
            r"'score' and 'confidence' are two forms at once",
        ),
        (
            {"dataset": ["a"], "model": ["x"], "confidence": [0.5], "correct": [1], "p_a": [0.5], "p_b": [0.5]},
            r"'confidence', 'correct' and class probabilities \('p_a', 'p_b'\) are two forms at once",
        ),
        ({"dataset": ["a"], "model": ["x"], "label": [1]}, r"a 'model' column, but no 'score', 'confidence'"),
        (
            {"dataset": ["a"], "model": ["x"], "confidence": [0.5]},
            r"the long form with 'confidence' needs column\(s\) 'correct'",
        ),
        ({"dataset": ["a"], "model": ["x"], "score": [0.5]}, r"the long form with 'score' needs column\(s\) 'label'"),
        (
            {"dataset": ["a"], "model": ["x"], "prediction": ["y"], "label": ["y"]},
            r"the long form with 'prediction' needs column\(s\) 'confidence'",
        ),
        (
            {
                "dataset": ["a"],
                "model": ["x"],
                "label": [1],
                "p_a": [0.5],
                "p_b": [0.5],
                "proba_a": [0.5],
                "proba_b": [0.5],
            },
            r"'proba_<class>' columns and 'p_<class>' columns both look like class probabilities: keep one set",
        ),
    ],
)
def test_unrecognised_forms_are_refused_naming_the_forms(columns, pattern):
    message = error_of(pd.DataFrame(columns))
    assert re.search(pattern, message), message
    if "both look like" not in message:
        assert "the forms read are wide" in message


def test_pooled_long_table_is_not_read_as_one_model_named_score(tmp_path):
    """The old silent reading: a long table whose 'model' column was text and 'score' a model."""
    bench = load_benchmark(write(melt(wide_scores()), tmp_path / "long.csv"))
    assert bench.models == ("m1", "m2") and "score" not in bench.frame.columns


def test_three_class_wide_table_still_names_its_label():
    df = pd.DataFrame({"dataset": "nli", "label": ["entailment", "neutral", "contradiction"], "m": [0.1, 0.5, 0.9]})
    message = error_of(df)
    assert "must be binary, got 3 classes" in message and "class probabilities" not in message


def test_one_model_probabilities_without_model_column_get_a_hint():
    long, _, _ = nli_probabilities()
    one = long[long["model"] == "bert"].drop(columns="model")
    message = error_of(one)
    assert message.endswith(
        "must be binary, got 3 classes: 'contradiction', 'entailment', 'neutral'; columns "
        "'p_entailment', 'p_neutral', 'p_contradiction' look like class probabilities: add a "
        "'model' column (the long form, one row per example and model) to read them as that "
        "model's answers"
    ), message


# -- bad long input ------------------------------------------------------------------------------------


def test_labels_disagreeing_across_models(tmp_path):
    long = melt(wide_scores())
    long.loc[(long["model"] == "m2") & (long["id"] == 104), "label"] = 1 - long.loc[long["id"] == 104, "label"].iloc[0]
    path = write(long, tmp_path / "long.csv")
    message = error_of(path)
    assert re.search(
        r"the models disagree on the label of dataset 'alpha', id 104: .* for model 'm1' at file "
        r"'.*long\.csv', line 6, .* for model 'm2' at file '.*long\.csv', line 18; an example has one "
        r"label",
        message,
    ), message


def test_split_disagreeing_across_models():
    long = qa_long().assign(split="val")
    long.loc[3, "split"] = "test"
    assert re.search(
        r"disagree on the split of dataset 'qa1', id 'qa1-1': 'val' for model 'gpt' at DataFrame row 2, "
        r"'test' for model 'llama' at DataFrame row 3",
        error_of(long),
    )


def test_duplicate_rows_name_both_lines(tmp_path):
    long = qa_long()
    long = pd.concat([long, long.iloc[[4]]], ignore_index=True)
    path = write(long, tmp_path / "dup.jsonl")
    assert re.search(
        r"two rows for model 'gpt' on dataset 'qa1', id 'qa1-2': at file '.*dup\.jsonl', line 5 and at "
        r"file '.*dup\.jsonl', line 21; each \(dataset, id, model\) has one row",
        error_of(path),
    )


def test_model_missing_from_a_dataset():
    long = qa_long()
    long = long[~((long["model"] == "llama") & (long["dataset"] == "qa2"))]
    assert re.search(
        r"model 'llama' is missing from dataset 'qa2' in DataFrame \(no rows; models there: \['gpt'\]\)", error_of(long)
    )


def test_model_missing_one_example():
    long = qa_long().drop(index=5)
    assert re.search(
        r"model 'llama' has no row for dataset 'qa1', id 'qa1-2', which model 'gpt' answers at "
        r"DataFrame row 4",
        error_of(long),
    )


def test_without_id_models_need_as_many_rows():
    long = melt(wide_scores(with_id=False)).drop(index=0)
    assert re.search(
        r"without an 'id' column, examples are matched by their order within dataset and model, so each "
        r"model needs as many rows in a dataset: dataset 'alpha' has 5 rows of model 'm1' and 6 of model "
        r"'m2'; add an 'id' column",
        error_of(long),
    )


def test_nan_confidence_names_file_column_line_and_drop_drops_the_example(tmp_path):
    long = qa_long()
    long["confidence"] = long["confidence"].astype(object)
    long.loc[6, "confidence"] = None
    path = tmp_path / "nan.jsonl"
    lines = long.to_json(orient="records", lines=True).splitlines()
    path.write_text("\n".join(lines[:3] + [""] + lines[3:]) + "\n")  # a blank line: line numbers count it
    message = error_of(path)
    assert re.search(
        r"column 'confidence' has a non-finite value \(nan\) at file '.*nan\.jsonl', line 8 \(model "
        r"'gpt'\); 1 such value\(s\) in all\. Fix the data or pass nan_policy=\"drop\"",
        message,
    ), message
    with pytest.warns(UserWarning, match=r"dropped 1 example\(s\) with NaN/inf confidences from file .*: \{'gpt': 1\}"):
        bench = load_benchmark(path, nan_policy="drop")
    assert "qa1-3" not in set(bench.frame["id"]) and len(bench) == 9


def test_probability_outside_unit_interval(tmp_path):
    long, _, _ = nli_probabilities()
    long.loc[3, "p_neutral"] = 1.5
    path = write(long, tmp_path / "nli.csv")
    assert re.search(
        r"column 'p_neutral' must hold probabilities in \[0, 1\], got 1\.5 at file '.*nli\.csv', "
        r"line 5",
        error_of(path),
    )


def test_nan_probability_follows_nan_policy():
    long, p, gold = nli_probabilities()
    long.loc[2, "p_contradiction"] = np.nan
    assert re.search(
        r"column 'p_contradiction' has a non-finite value \(nan\) at DataFrame row 2 \(model 'bert'\)", error_of(long)
    )
    with pytest.warns(UserWarning, match="dropped 1 example"):
        bench = load_benchmark(long, nan_policy="drop")
    keep = np.arange(len(gold)) != 2
    np.testing.assert_array_equal(bench.correct, (p.argmax(axis=2) == gold).T[keep].astype(np.int8))


def test_label_not_among_the_probability_classes():
    long, _, _ = nli_probabilities()
    long.loc[4, "label"] = "unknown"
    assert re.search(
        r"column 'label' value 'unknown' at DataFrame row 4 is not one of the classes of the probability "
        r"columns \['entailment', 'neutral', 'contradiction'\]",
        error_of(long),
    )


def test_list_column_labels_must_be_positions():
    long, p, gold = nli_probabilities()
    listed = long[["dataset", "id", "model", "label"]].assign(probabilities=list(p.reshape(-1, 3)))
    assert re.search(
        r"column 'label' value 'entailment' at DataFrame row \d+ is not a position in the "
        r"'probabilities' lists \(0 to 2\)",
        error_of(listed),
    )


@pytest.mark.parametrize("value", ["maybe", 2])
def test_bad_correct_value(tmp_path, value):
    long = qa_long()
    long["correct"] = long["correct"].astype(object)
    long.loc[7, "correct"] = value
    path = write(long, tmp_path / "bad.csv")
    assert re.search(
        r"column 'correct' must say whether the answer is right \(1/0, true/false\), got .* at file "
        r"'.*bad\.csv', line 9",
        error_of(path),
    )


def test_missing_model_value(tmp_path):
    long = qa_long()
    long.loc[2, "model"] = None
    assert re.search(
        r"column 'model' has a missing value at file '.*m\.jsonl', line 3", error_of(write(long, tmp_path / "m.jsonl"))
    )


def test_unknown_model_selection():
    assert "`models` names ['gemini'], not in column 'model' of DataFrame; models are ['gpt', 'llama']" in error_of(
        qa_long(), models=["gemini"]
    )


# -- JSON Lines -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, pattern",
    [
        ('{"dataset": "a", "model": "x"}\n{"dataset": "a", \n', r"line 2: not valid JSON"),
        ('{"a": 1}\n[1, 2]\n', r"line 2: a JSON Lines row must be an object"),
        ('{"a": 1} {"a": 2}\n', r"line 1: not valid JSON \(one JSON object per line\)"),
        ("\n\n", r"is empty"),
    ],
)
def test_bad_json_lines(tmp_path, text, pattern):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    message = error_of(path)
    assert re.search(r"file '.*bad\.jsonl'.*" + pattern, message), message


def test_json_array_file_is_refused_with_a_hint(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text('[{"a": 1}]')
    assert "a .json file is read as JSON Lines when named .jsonl" in error_of(path)
