"""The data path at scale: no text per row, subsets that share the data, a hash read in chunks, curves
thinned before their tables exist.  Each behaviour is checked against a brute-force reference."""

import hashlib

import numpy as np
import pandas as pd
import pytest

from beyondauc import load_benchmark, load_demo
from beyondauc.evaluation import fingerprint, per_dataset


def grouped_frame(n=40, seed=0):
    """Three datasets, rows interleaved (so loading sorts them), a split, an id, two models."""
    rng = np.random.default_rng(seed)
    names = np.array(["gamma", "alpha", "beta"])
    return pd.DataFrame(
        {
            "dataset": names[rng.integers(0, 3, n)],
            "split": rng.choice(["val", "test"], n),
            "id": np.arange(n),
            "label": rng.integers(0, 2, n),
            "m1": rng.normal(size=n),
            "m2": rng.normal(size=n),
        }
    )


def test_text_columns_refer_to_each_name_once_and_read_back_without_a_string_per_row():
    df = grouped_frame()
    bench = load_benchmark(df, domains={"gamma": "news", "alpha": "news"})
    frame = bench.frame
    for c in ("dataset", "domain", "split"):
        assert frame[c].dtype == object, c
    values = frame["dataset"].to_numpy()
    assert len({id(v) for v in values}) == 3  # each name once, whatever the rows
    assert np.shares_memory(values, frame["dataset"].to_numpy())  # read back: the column itself, no copy
    # the same rows as grouping the input by dataset in order of appearance (a stable sort, by hand)
    order = list(dict.fromkeys(df["dataset"]))
    ref = df.iloc[np.argsort(df["dataset"].map(order.index).to_numpy(), kind="stable")].reset_index(drop=True)
    assert values.tolist() == ref["dataset"].tolist()
    assert frame["split"].astype(str).tolist() == ref["split"].tolist()
    domains = frame["domain"].astype(object)
    assert domains.where(domains.notna(), None).tolist() == [
        {"gamma": "news", "alpha": "news"}.get(d) for d in ref["dataset"]
    ]
    np.testing.assert_array_equal(frame["m2"].to_numpy(), ref["m2"].to_numpy())
    np.testing.assert_array_equal(frame["label"].to_numpy(), ref["label"].to_numpy())
    assert frame["m1"].to_numpy().flags.c_contiguous  # each model's column contiguous for the kernels


def test_single_class_warning_names_the_datasets_in_order():
    df = grouped_frame()
    df.loc[df["dataset"] == "beta", "label"] = 1
    df.loc[df["dataset"] == "gamma", "label"] = 0
    kind = {"beta": "positive", "gamma": "negative"}
    shown = ", ".join(f"'{d}' \\(all labels {kind[d]}\\)" for d in dict.fromkeys(df["dataset"]) if d in kind)
    with pytest.warns(UserWarning, match=f"2 datasets have a single class: {shown};"):
        load_benchmark(df)


@pytest.mark.parametrize(
    "datasets",
    [None, ("gamma",), ("gamma", "alpha"), ("alpha", "beta"), ("beta", "gamma"), ("beta", "alpha", "gamma"), ()],
)
def test_subset_equals_rows_filtered_by_hand(datasets):
    bench = load_benchmark(grouped_frame())
    sub = bench.subset(models=["m2"], datasets=datasets)
    wanted = bench.datasets if datasets is None else datasets
    ref = pd.concat([bench.frame[bench.frame["dataset"] == d] for d in wanted] or [bench.frame.iloc[:0]])
    assert sub.datasets == tuple(wanted) and sub.models == ("m2",)
    assert list(sub.frame.columns) == ["dataset", "domain", "label", "split", "id", "m2"]
    for c in ("dataset", "split"):
        assert sub.frame[c].dtype == object and sub.frame[c].tolist() == ref[c].tolist()
    np.testing.assert_array_equal(sub.frame["m2"].to_numpy(), ref["m2"].to_numpy())
    for d in wanted:
        np.testing.assert_array_equal(sub.scores("m2", d), bench.scores("m2", d))


def test_subset_of_whole_datasets_in_order_shares_the_data_and_stays_independent():
    bench = load_benchmark(grouped_frame())
    for sub in (bench.subset(models=["m1"]), bench.subset(datasets=bench.datasets[1:])):
        assert np.shares_memory(sub.frame["m1"].to_numpy(), bench.frame["m1"].to_numpy())
    sub = bench.subset(models=["m1"])
    before = bench.frame["m1"].to_numpy().copy()
    sub.frame.loc[0, "m1"] = 99.0  # copy-on-write: writing to the subset leaves the benchmark alone
    np.testing.assert_array_equal(bench.frame["m1"].to_numpy(), before)
    far = bench.subset(datasets=[bench.datasets[2], bench.datasets[0]])  # not one run of rows: a copy
    assert not np.shares_memory(far.frame["m1"].to_numpy(), bench.frame["m1"].to_numpy())


def test_answers_subset_keeps_each_models_correct_column():
    bench = load_demo(kind="answers")
    models, datasets = [bench.models[2], bench.models[0]], [bench.datasets[1], bench.datasets[2]]
    sub = bench.subset(models=models, datasets=datasets)
    rows = np.concatenate([np.arange(len(bench))[bench.rows_of(d)] for d in datasets])
    np.testing.assert_array_equal(sub.correct, bench.correct[rows][:, [bench.models.index(m) for m in models]])
    for m in models:
        np.testing.assert_array_equal(sub.labels(datasets[1], model=m), bench.labels(datasets[1], model=m))


def one_join_sha256(frame):
    """The fingerprint as it was defined: every column read whole, text joined at once (the reference)."""
    h = hashlib.sha256()
    for c in frame.columns:
        values = frame[c].to_numpy()
        h.update(f"{c}\0{values.dtype.str}\0{len(values)}\0".encode())
        if values.dtype.kind in "biufcM":
            h.update(np.ascontiguousarray(values).tobytes())
        else:
            h.update("\x1f".join(map(str, values)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def test_fingerprint_read_in_chunks_equals_one_join_of_each_column(monkeypatch):
    monkeypatch.setattr(fingerprint, "_HASH_ROWS", 7)  # many chunks, one cut inside every run of equal values
    rng = np.random.default_rng(3)
    n = 50
    frame = pd.DataFrame(
        {
            "text": pd.Series(rng.choice(["a", "bé", "", "x\x1fy"], n), dtype="str"),
            "object": pd.Series(rng.choice(["u", "v"], n).tolist(), dtype=object),
            "category": pd.Categorical(rng.choice(["p", "q"], n)),
            "codes": pd.Categorical(rng.integers(0, 3, n)),  # numbers in categories: not text
            "missing": pd.Series(rng.choice(["k", None], n), dtype="str"),
            "number": rng.normal(size=n),
            "int": rng.integers(0, 9, n),
        }
    )
    assert fingerprint.frame_sha256(frame) == one_join_sha256(frame)
    assert fingerprint.frame_sha256(frame.iloc[:0]) == one_join_sha256(frame.iloc[:0])
    assert fingerprint.frame_sha256(frame.iloc[:1]) == one_join_sha256(frame.iloc[:1])
    assert fingerprint.frame_sha256(frame) != fingerprint.frame_sha256(frame.assign(text=frame["text"].shift(1)))


def test_thinned_curve_gives_the_rows_of_the_whole_table():
    from beyondauc.metrics.diagnostics.cohorts import sens_spec_drift

    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 5000), rng.normal(size=5000)
    curve = sens_spec_drift(y[:2500], s[:2500], y[2500:], s[2500:])
    rows = per_dataset.thin(curve.sensitivity_val, curve.specificity_val)
    assert 2 < len(rows) < len(curve.thresholds)
    pd.testing.assert_frame_equal(
        per_dataset.thinned(curve, rows).to_frame(),
        curve.to_frame().iloc[rows].reset_index(drop=True),
        check_exact=True,
    )
    assert per_dataset.thinned(curve, np.arange(len(curve.thresholds))) is curve


def test_a_frame_read_back_can_be_edited_and_loaded_again():
    frame = load_demo().frame.copy()
    frame["split"] = frame["split"].replace({"val": "dev"})  # a user's edit of the text columns
    frame.loc[frame["dataset"] == "wine", "domain"] = "chemistry"
    bench = load_benchmark(frame)
    assert sorted(bench.frame["split"].unique()) == ["dev", "test"]
    assert bench.domains["wine"] == "chemistry"
