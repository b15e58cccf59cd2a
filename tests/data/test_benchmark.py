"""End-to-end tests of :mod:`beyondauc.data`: reading benchmarks and the Benchmark accessors."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beyondauc.data import TRUE_DOMAINS, Benchmark, load_benchmark, read_domains

TEXT_COLUMNS = ("generated_text", "grounding")


# -- helpers ------------------------------------------------------------------


def true_frame(n=6, *, seed=0, models=("m1", "m2"), id_start=100):
    """A frame in the TRUE per-dataset layout: id, text columns, label, models."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(id_start, id_start + n),
            "generated_text": [f"claim {seed}-{i}" for i in range(n)],
            "grounding": [f"source text {seed}-{i}" for i in range(n)],
            "label": np.tile([0, 1], n)[:n],
        }
    )
    for m in models:
        frame[m] = rng.random(n).round(6)
    return frame


def write_true_dir(root, specs):
    """Write one TRUE-format CSV per ``(file name, frame)`` into ``root``."""
    root.mkdir(exist_ok=True)
    for fname, frame in specs:
        frame.to_csv(root / fname, index=False)
    return root


def long_frame():
    """A long-wide frame with all optional columns and interleaved datasets."""
    return pd.DataFrame(
        {
            "dataset": ["alpha", "beta", "alpha", "gamma", "beta", "alpha", "gamma", "beta"],
            "domain": ["news", "chat", "news", "news", "chat", "news", "news", "chat"],
            "split": ["dev", "dev", "test", "dev", "test", "dev", "test", "dev"],
            "id": [10, 20, 11, 30, 21, 12, 31, 22],
            "label": [1, 0, 0, 1, 1, 1, 0, 0],
            "m1": [0.9, 0.2, 0.4, 0.7, 0.6, 0.8, 0.1, 0.3],
            "m2": [0.5, 0.5, 0.25, 1.5, -2.0, 3.0, 0.0, 7.0],
        }
    )


def two_dataset_frame():
    return pd.DataFrame(
        {
            "dataset": ["a", "a", "a", "b", "b", "b"],
            "label": [0, 1, 1, 1, 0, 0],
            "m1": [0.1, 0.9, 0.8, 0.7, 0.2, 0.3],
            "m2": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        }
    )


def path_re(path):
    """Regex for a path as messages show it (its repr, quoted)."""
    return re.escape(repr(str(path)))


# -- TRUE directory -------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["_dev_true_scores.csv", "_true_scores.csv", "_dev_true_scores.csv.gz", ".csv"])
@pytest.mark.parametrize(
    "name, domain",
    [
        (d, TRUE_DOMAINS[d])
        for d in ("mnbm", "frank", "summeval", "qags_xsum", "qags_cnndm", "begin", "q2", "dialfact", "paws_wiki")
    ]
    + [("my_corpus", None)],
)
def test_true_dir_dataset_name_and_builtin_domain(tmp_path, suffix, name, domain):
    root = tmp_path / "true"
    root.mkdir()
    true_frame(seed=1).to_csv(root / f"{name}{suffix}", index=False)
    true_frame(seed=2).to_csv(root / "zzz_other_true_scores.csv", index=False)
    bench = load_benchmark(root)
    assert bench.datasets == (name, "zzz_other")
    assert bench.domains == {name: domain, "zzz_other": None}
    assert bench.domain_of(name) == domain
    assert bench.source == str(root)


def test_true_builtin_domain_groups():
    summarization = {d for d, v in TRUE_DOMAINS.items() if v == "summarization"}
    assert summarization == {"mnbm", "frank", "summeval", "qags_xsum", "qags_cnndm"}
    assert {d for d, v in TRUE_DOMAINS.items() if v == "dialogue"} == {"begin", "q2", "dialfact"}
    assert TRUE_DOMAINS["paws_wiki"] == "paraphrase"


def test_true_dir_text_columns_are_not_models(tmp_path):
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(4, seed=1)),
            ("q2_dev_true_scores.csv", true_frame(5, seed=2)),
        ],
    )
    bench = load_benchmark(root)
    assert bench.models == ("m1", "m2")
    for col in TEXT_COLUMNS:
        assert col not in bench.frame.columns
    assert list(bench.frame.columns) == ["dataset", "domain", "label", "id", "m1", "m2"]
    assert bench.frame["label"].dtype == np.int8
    assert bench.frame["m1"].dtype == np.float64


@pytest.mark.parametrize("models, expected", [(["m2"], ("m2",)), ("m2", ("m2",)), (["m3", "m1"], ("m3", "m1"))])
def test_true_dir_models_restriction(tmp_path, models, expected):
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(4, seed=1, models=("m1", "m2", "m3"))),
            ("frank_dev_true_scores.csv", true_frame(3, seed=2, models=("m1", "m2", "m3"))),
        ],
    )
    bench = load_benchmark(root, models=models)
    assert bench.models == expected
    model_cols = [c for c in bench.frame.columns if c not in ("dataset", "domain", "label", "id")]
    assert model_cols == list(expected)


def test_true_dir_models_restriction_allows_models_missing_elsewhere(tmp_path):
    # m_extra exists in one file only; restricting to m1 must not complain about it.
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(4, seed=1, models=("m1", "m_extra"))),
            ("frank_dev_true_scores.csv", true_frame(3, seed=2, models=("m1",))),
        ],
    )
    assert load_benchmark(root, models=["m1"]).models == ("m1",)


def test_true_dir_rows_contiguous_in_file_order_with_ids(tmp_path):
    f_begin = true_frame(7, seed=1, id_start=500)
    f_begin["id"] = [506, 500, 503, 501, 505, 502, 504]  # ids not sorted: file order must win
    f_frank = true_frame(5, seed=2, id_start=0)
    f_q2 = true_frame(3, seed=3, id_start=900)
    root = write_true_dir(
        tmp_path / "t",
        [
            ("q2_true_scores.csv", f_q2),
            ("begin_dev_true_scores.csv", f_begin),
            ("frank_dev_true_scores.csv", f_frank),
        ],
    )
    bench = load_benchmark(root)
    assert bench.datasets == ("begin", "frank", "q2")  # sorted file names
    codes = bench.dataset_codes()
    assert np.all(np.diff(codes) >= 0)
    assert list(bench.dataset_sizes()) == [7, 5, 3]
    for name, src in (("begin", f_begin), ("frank", f_frank), ("q2", f_q2)):
        rows = bench.frame[bench.frame["dataset"] == name]
        assert list(rows["id"]) == list(src["id"])
        np.testing.assert_array_equal(bench.labels(name), src["label"].to_numpy())
        for m in ("m1", "m2"):
            np.testing.assert_allclose(bench.scores(m, name), src[m].to_numpy())


def test_true_dir_dataset_column_is_an_error(tmp_path):
    frame = true_frame(3)
    frame.insert(0, "dataset", "x")
    root = write_true_dir(tmp_path / "t", [("begin_true_scores.csv", frame)])
    with pytest.raises(ValueError, match=path_re(root / "begin_true_scores.csv") + r".*'dataset' column"):
        load_benchmark(root)


def test_true_dir_two_files_same_dataset_name(tmp_path):
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(3, seed=1)),
            ("begin_true_scores.csv", true_frame(3, seed=2)),
        ],
    )
    with pytest.raises(ValueError, match=path_re(root) + r".*same dataset name"):
        load_benchmark(root)


def test_true_dir_without_csv_files(tmp_path):
    root = tmp_path / "empty_dir"
    root.mkdir()
    (root / "notes.txt").write_text("nothing here")
    with pytest.raises(ValueError, match=path_re(root) + r".*no \.csv files"):
        load_benchmark(root)


# -- single file versus DataFrame -------------------------------------------------


def write_table(frame, path):
    if path.name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)  # pandas gzips by the .gz extension
    return path


def assert_same_benchmark(a: Benchmark, b: Benchmark):
    assert a.models == b.models
    assert a.datasets == b.datasets
    assert a.domains == b.domains
    pd.testing.assert_frame_equal(a.frame, b.frame, check_dtype=True)


@pytest.mark.parametrize("fname", ["scores.csv", "scores.csv.gz", "scores.parquet"])
def test_file_formats_match_dataframe(tmp_path, fname):
    df = long_frame()
    path = write_table(df, tmp_path / fname)
    from_file = load_benchmark(path)
    from_frame = load_benchmark(df)
    assert_same_benchmark(from_file, from_frame)
    assert from_file.source == str(path)
    assert from_frame.source == "<DataFrame>"
    assert from_file.datasets == ("alpha", "beta", "gamma")  # order of first appearance
    assert from_file.has_split


@pytest.mark.parametrize(
    "fname, stem", [("scores.csv", "scores"), ("my_set.csv.gz", "my_set"), ("results.parquet", "results")]
)
def test_file_without_dataset_column_is_one_dataset_named_by_stem(tmp_path, fname, stem):
    df = pd.DataFrame({"label": [0, 1, 1, 0], "m1": [0.1, 0.8, 0.7, 0.2]})
    bench = load_benchmark(write_table(df, tmp_path / fname))
    assert bench.datasets == (stem,)
    np.testing.assert_array_equal(bench.labels(stem), [0, 1, 1, 0])


def test_dataframe_without_dataset_column_is_named_data():
    bench = load_benchmark(pd.DataFrame({"label": [0, 1], "m1": [0.1, 0.8]}))
    assert bench.datasets == ("data",)


def test_dataframe_input_is_not_modified():
    df = long_frame()
    before = df.copy()
    load_benchmark(df, pos_label=1)
    pd.testing.assert_frame_equal(df, before)


# -- labels -------------------------------------------------------------------------


@pytest.mark.parametrize("via", ["frame", "csv"])
@pytest.mark.parametrize(
    "labels, pos_label, expected",
    [
        ([0, 1, 1, 0], None, [0, 1, 1, 0]),
        ([0.0, 1.0, 1.0, 0.0], None, [0, 1, 1, 0]),
        ([-1, 1, 1, -1], None, [0, 1, 1, 0]),
        ([False, True, True, False], None, [0, 1, 1, 0]),
        (["no", "yes", "yes", "no"], "yes", [0, 1, 1, 0]),
        (["no", "yes", "yes", "no"], "no", [1, 0, 0, 1]),
        ([0, 1, 1, 0], 0, [1, 0, 0, 1]),
    ],
)
def test_binary_label_encodings(tmp_path, via, labels, pos_label, expected):
    df = pd.DataFrame({"dataset": ["d"] * 4, "label": labels, "m1": [0.1, 0.9, 0.6, 0.4]})
    source = df if via == "frame" else write_table(df, tmp_path / "labels.csv")
    bench = load_benchmark(source, pos_label=pos_label)
    assert bench.labels("d").dtype == np.int8
    np.testing.assert_array_equal(bench.labels("d"), expected)


@pytest.mark.parametrize("via", ["frame", "csv"])
def test_string_labels_need_pos_label(tmp_path, via):
    df = pd.DataFrame({"dataset": ["d"] * 4, "label": ["no", "yes", "yes", "no"], "m1": [0.1, 0.9, 0.6, 0.4]})
    source = df if via == "frame" else write_table(df, tmp_path / "labels.csv")
    with pytest.raises(ValueError, match=r"column 'label'.*\['no', 'yes'\].*`pos_label`"):
        load_benchmark(source)


def test_pos_label_not_among_labels():
    df = pd.DataFrame({"dataset": ["d"] * 4, "label": ["no", "yes", "yes", "no"], "m1": [0.1, 0.9, 0.6, 0.4]})
    with pytest.raises(ValueError, match=r"`pos_label`='maybe' is not one of the labels in DataFrame: \['no', 'yes'\]"):
        load_benchmark(df, pos_label="maybe")


# -- domains ------------------------------------------------------------------------


def domains_frame():
    return pd.DataFrame(
        {
            "dataset": ["begin", "begin", "summeval", "summeval", "x", "x", "frank", "frank"],
            "domain": ["col_begin", "col_begin", None, None, "col_x", "col_x", "col_frank", None],
            "label": [0, 1] * 4,
            "m1": np.linspace(0, 1, 8),
        }
    )


@pytest.mark.parametrize("kind", ["dict", "json", "csv"])
def test_domain_precedence_mapping_then_column_then_builtin(tmp_path, kind):
    mapping = {"begin": "map_begin"}
    if kind == "json":
        path = tmp_path / "domains.json"
        path.write_text(json.dumps(mapping))
        mapping = path
    elif kind == "csv":
        path = tmp_path / "domains.csv"
        pd.DataFrame({"dataset": list(mapping), "domain": list(mapping.values())}).to_csv(path, index=False)
        mapping = str(path)
    bench = load_benchmark(domains_frame(), domains=mapping)
    assert bench.domains == {
        "begin": "map_begin",  # mapping beats the column and the built-in 'dialogue'
        "summeval": "summarization",  # no column value: built-in TRUE domain
        "x": "col_x",  # column
        "frank": "col_frank",  # column (one missing value ignored) beats built-in
    }
    assert list(bench.frame["domain"]) == ["map_begin"] * 2 + ["summarization"] * 2 + ["col_x"] * 2 + ["col_frank"] * 2


def test_domains_mapping_for_true_dir(tmp_path):
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(3, seed=1)),
            ("custom_true_scores.csv", true_frame(3, seed=2)),
        ],
    )
    bench = load_benchmark(root, domains={"custom": "medical"})
    assert bench.domains == {"begin": "dialogue", "custom": "medical"}


def test_domains_mapping_with_unknown_dataset_warns():
    with pytest.warns(UserWarning, match=r"`domains` names dataset\(s\) not in the data: \['nope'\]"):
        bench = load_benchmark(two_dataset_frame(), domains={"a": "news", "nope": "x"})
    assert bench.domains == {"a": "news", "b": None}


def test_read_domains_json_and_csv(tmp_path):
    js = tmp_path / "d.json"
    js.write_text(json.dumps({"a": "news", "b": "chat"}))
    cs = tmp_path / "d.csv"
    cs.write_text("dataset,domain\na,news\nb,chat\n")
    assert read_domains(js) == {"a": "news", "b": "chat"}
    assert read_domains(str(cs)) == {"a": "news", "b": "chat"}


@pytest.mark.parametrize(
    "fname, content, message",
    [
        ("bad.json", "{not json", r"is not valid JSON"),
        ("list.json", json.dumps(["a", "b"]), r"must hold a JSON object"),
        ("nums.json", json.dumps({"a": 1}), r"must hold a JSON object"),
        ("cols.csv", "name,domain\na,news\n", r"needs columns 'dataset' and 'domain'; missing \['dataset'\]"),
    ],
)
def test_read_domains_errors(tmp_path, fname, content, message):
    path = tmp_path / fname
    path.write_text(content)
    with pytest.raises(ValueError, match=path_re(path) + r".*" + message):
        read_domains(path)


def test_read_domains_missing_file(tmp_path):
    path = tmp_path / "missing.json"
    with pytest.raises(ValueError, match=path_re(path) + r".*does not exist"):
        read_domains(path)


def test_domains_argument_of_wrong_type():
    with pytest.raises(ValueError, match=r"`domains` must be a mapping.*got list"):
        load_benchmark(two_dataset_frame(), domains=["a", "b"])


def test_dataset_with_two_domain_values_is_an_error():
    df = two_dataset_frame()
    df["domain"] = ["news", "news", "news", "chat", "chat", "legal"]
    with pytest.raises(ValueError, match=r"dataset 'b' has several values in column 'domain': \['chat', 'legal'\]"):
        load_benchmark(df)


# -- bad inputs -----------------------------------------------------------------------


@pytest.mark.parametrize("via", ["frame", "csv", "parquet"])
def test_missing_label_column(tmp_path, via):
    df = two_dataset_frame().rename(columns={"label": "target"})
    if via == "frame":
        source, where = df, r"DataFrame"
    else:
        source = write_table(df, tmp_path / f"nolabel.{via}")
        where = path_re(source)
    with pytest.raises(ValueError, match=where + r": missing the 'label' column; columns are \['dataset', 'target'"):
        load_benchmark(source)


def test_missing_label_column_in_one_true_file(tmp_path):
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(3, seed=1)),
            ("q2_dev_true_scores.csv", true_frame(3, seed=2).drop(columns="label")),
        ],
    )
    with pytest.raises(ValueError, match=path_re(root / "q2_dev_true_scores.csv") + r".*missing the 'label' column"):
        load_benchmark(root)


@pytest.mark.parametrize("via", ["frame", "csv"])
def test_non_binary_labels(tmp_path, via):
    df = two_dataset_frame()
    df["label"] = [0, 1, 2, 0, 1, 2]
    source = df if via == "frame" else write_table(df, tmp_path / "three.csv")
    where = "DataFrame" if via == "frame" else "file " + path_re(source)
    with pytest.raises(ValueError, match=r"column 'label' in " + where + r" must be binary, got 3 classes: 0, 1, 2"):
        load_benchmark(source)


@pytest.mark.parametrize("bad_value", ["nan", "NaN", "", "inf", "-inf"])
@pytest.mark.parametrize("row", [0, 4])
def test_non_finite_score_names_column_and_csv_line(tmp_path, bad_value, row):
    df = two_dataset_frame().astype({"m2": object})
    df.loc[row, "m2"] = bad_value
    path = write_table(df, tmp_path / "scores.csv")
    line = row + 2  # header is line 1
    with pytest.raises(
        ValueError,
        match=r"model column 'm2' has a non-finite score .* at file "
        + path_re(path)
        + rf", line {line};.*nan_policy=\"drop\"",
    ):
        load_benchmark(path)


def test_non_finite_score_in_true_dir_names_file_and_line(tmp_path):
    bad = true_frame(5, seed=2)
    bad.loc[3, "m1"] = np.inf
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(4, seed=1)),
            ("q2_dev_true_scores.csv", bad),
        ],
    )
    with pytest.raises(
        ValueError,
        match=r"model column 'm1' has a non-finite score \(inf\) at file "
        + path_re(root / "q2_dev_true_scores.csv")
        + r", line 5",
    ):
        load_benchmark(root)


MULTILINE_TRUE_FILE = (
    "id,generated_text,grounding,label,m1\n"  # line 1
    '1,"a claim\nover two lines",g,0,0.1\n'  # lines 2-3
    '2,x,"a source\n\nwith a blank line",1,0.2\n'  # lines 4-6
    "\n"  # line 7: blank, skipped
    "3,y,z,{label},{score}\n"  # line 8
)


@pytest.mark.parametrize(
    "label, score, match",
    [
        ("0", "", r"model column 'm1' has a non-finite score \(nan\) at file {path}, line 8"),
        ("0", "-inf", r"model column 'm1' has a non-finite score \(-inf\) at file {path}, line 8"),
        ("0", "big", r"model column 'm1' must be numeric: 'big' at file {path}, line 8"),
        ("", "0.3", r"column 'label' has a missing value at file {path}, line 8"),
    ],
)
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_line_numbers_count_quoted_multiline_text(tmp_path, label, score, match, suffix):
    # TRUE groundings are whole documents: quoted fields span several lines
    root = tmp_path / "t"
    root.mkdir()
    path = root / f"summeval_true_scores{suffix}"
    text = MULTILINE_TRUE_FILE.format(label=label, score=score)
    if suffix.endswith(".gz"):
        with gzip.open(path, "wt", newline="") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    with pytest.raises(ValueError, match=match.format(path=path_re(path))):
        load_benchmark(root)
    with pytest.raises(ValueError, match=match.format(path=path_re(path))):
        load_benchmark(path, models=["m1"])  # the same file read as a single table


def test_non_finite_score_in_dataframe_names_row():
    df = two_dataset_frame()
    df.index = [10, 11, 12, 13, 14, 15]
    df.loc[13, "m1"] = np.nan
    with pytest.raises(ValueError, match=r"model column 'm1' has a non-finite score \(nan\) at DataFrame row 13"):
        load_benchmark(df)


@pytest.mark.parametrize("via", ["frame", "csv"])
def test_nan_policy_drop_drops_rows_with_warning(tmp_path, via):
    df = two_dataset_frame()
    df.loc[2, "m1"] = np.nan
    df.loc[5, "m2"] = np.inf
    df.loc[5, "m1"] = -np.inf
    source = df if via == "frame" else write_table(df, tmp_path / "scores.csv")
    with pytest.warns(UserWarning, match=r"dropped 2 row\(s\) with NaN/inf scores .*\{'m1': 2, 'm2': 1\}"):
        bench = load_benchmark(source, nan_policy="drop")
    assert len(bench) == len(df) - 2
    assert list(bench.dataset_sizes()) == [2, 2]
    np.testing.assert_array_equal(bench.scores("m1", "a"), [0.1, 0.9])
    np.testing.assert_array_equal(bench.labels("a"), [0, 1])
    np.testing.assert_array_equal(bench.scores("m2", "b"), [4.0, 5.0])
    np.testing.assert_array_equal(bench.labels("b"), [1, 0])
    assert np.isfinite(bench.frame[["m1", "m2"]].to_numpy()).all()


def test_duplicate_columns_in_csv_header(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("dataset,label,m1,m2,m1\na,0,0.1,0.2,0.3\na,1,0.4,0.5,0.6\n")
    with pytest.raises(ValueError, match=path_re(path) + r": duplicate column\(s\) \['m1'\]"):
        load_benchmark(path)


def test_duplicate_columns_in_gzipped_csv_header(tmp_path):
    path = tmp_path / "dup.csv.gz"
    pd.DataFrame([["a", 0, 0.1, 0.2], ["a", 1, 0.3, 0.4]], columns=["dataset", "label", "m2", "m2"]).to_csv(
        path, index=False
    )
    with pytest.raises(ValueError, match=path_re(path) + r": duplicate column\(s\) \['m2'\]"):
        load_benchmark(path)


def test_duplicate_columns_in_true_file(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    (root / "begin_true_scores.csv").write_text("id,generated_text,grounding,label,m1,m1\n1,a,b,0,0.1,0.2\n")
    with pytest.raises(ValueError, match=path_re(root / "begin_true_scores.csv") + r": duplicate column\(s\) \['m1'\]"):
        load_benchmark(root)


def test_duplicate_columns_in_dataframe():
    df = pd.DataFrame([["a", 0, 0.1, 0.2], ["a", 1, 0.3, 0.4]], columns=["dataset", "label", "m1", "m1"])
    with pytest.raises(ValueError, match=r"DataFrame: duplicate column\(s\) \['m1'\]"):
        load_benchmark(df)


def test_header_only_csv_in_true_dir_names_file(tmp_path):
    root = write_true_dir(tmp_path / "t", [("begin_dev_true_scores.csv", true_frame(3))])
    empty = root / "q2_dev_true_scores.csv"
    empty.write_text("id,generated_text,grounding,label,m1,m2\n")
    with pytest.raises(ValueError, match=path_re(empty) + r" \(dataset 'q2'\) has no rows"):
        load_benchmark(root)


@pytest.mark.parametrize("content", ["dataset,label,m1\n", ""])
def test_empty_single_csv(tmp_path, content):
    path = tmp_path / "empty.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=path_re(path) + r".*(has no rows|is empty)"):
        load_benchmark(path)


def test_dataset_left_without_rows_after_drop_is_an_error():
    # every row of 'b' has a non-finite score in some model, but no model is all-NaN on 'b'
    df = two_dataset_frame()
    df.loc[3, "m1"] = np.nan
    df.loc[4, "m2"] = np.nan
    df.loc[5, "m1"] = np.inf
    with pytest.warns(UserWarning, match=r"dropped 3 row"):
        with pytest.raises(ValueError, match=r"dataset 'b' in DataFrame has no rows left after nan_policy=\"drop\""):
            load_benchmark(df, nan_policy="drop")


def test_model_missing_from_one_true_file(tmp_path):
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(3, seed=1, models=("m1", "m2"))),
            ("q2_dev_true_scores.csv", true_frame(3, seed=2, models=("m1",))),
        ],
    )
    with pytest.raises(
        ValueError,
        match=r"model 'm2' is missing from file " + path_re(root / "q2_dev_true_scores.csv") + r" \(dataset 'q2'\)",
    ):
        load_benchmark(root)
    with pytest.raises(
        ValueError, match=r"model 'm2' is missing from file " + path_re(root / "q2_dev_true_scores.csv")
    ):
        load_benchmark(root, models=["m2"])


@pytest.mark.parametrize("nan_policy", ["raise", "drop"])
@pytest.mark.parametrize("via", ["frame", "csv"])
def test_model_all_nan_for_one_dataset(tmp_path, nan_policy, via):
    df = two_dataset_frame()
    df.loc[df["dataset"] == "b", "m2"] = np.nan
    source = df if via == "frame" else write_table(df, tmp_path / "scores.csv")
    with pytest.raises(ValueError, match=r"model 'm2' is missing from dataset\(s\) \['b'\] \(no scores\)"):
        load_benchmark(source, nan_policy=nan_policy)


def test_single_class_dataset_warns_not_errors():
    df = two_dataset_frame()
    df.loc[df["dataset"] == "b", "label"] = 1
    with pytest.warns(UserWarning, match=r"dataset 'b' has a single class \(all labels positive\)"):
        bench = load_benchmark(df)
    assert bench.datasets == ("a", "b")
    np.testing.assert_array_equal(bench.labels("b"), [1, 1, 1])


@pytest.mark.parametrize("models", [["m1", "nope"], "nope"])
@pytest.mark.parametrize("via", ["frame", "csv", "true_dir"])
def test_unknown_models_name(tmp_path, models, via):
    if via == "true_dir":
        source = write_true_dir(tmp_path / "t", [("begin_true_scores.csv", true_frame(3))])
        match = r"model 'nope' is missing from file " + path_re(source / "begin_true_scores.csv")
    else:
        df = two_dataset_frame()
        source = df if via == "frame" else write_table(df, tmp_path / "scores.csv")
        where = "DataFrame" if via == "frame" else path_re(source)
        match = where + r": `models` names column\(s\) \['nope'\] not found"
    with pytest.raises(ValueError, match=match) as info:
        load_benchmark(source, models=models)
    assert "_file" not in str(info.value) and "_line" not in str(info.value)  # our bookkeeping stays hidden


def test_empty_models_list():
    with pytest.raises(ValueError, match=r"`models` must name at least one model column"):
        load_benchmark(two_dataset_frame(), models=[])


def test_no_model_columns():
    df = pd.DataFrame({"dataset": ["a", "a"], "label": [0, 1], "note": ["x", "y"]})
    with pytest.raises(ValueError, match=r"DataFrame: no numeric model columns found"):
        load_benchmark(df)


@pytest.mark.parametrize("datasets", [["a", "zz"], "zz"])
@pytest.mark.parametrize("via", ["frame", "csv"])
def test_unknown_datasets_name(tmp_path, datasets, via):
    df = two_dataset_frame()
    source = df if via == "frame" else write_table(df, tmp_path / "scores.csv")
    where = "DataFrame" if via == "frame" else "file " + path_re(source)
    with pytest.raises(
        ValueError, match=r"`datasets` names \['zz'\], not in " + where + r"; datasets are \['a', 'b'\]"
    ):
        load_benchmark(source, datasets=datasets)


@pytest.mark.parametrize("models", [None, ["m1", "m2"]])
def test_non_numeric_model_value_names_column_and_line(tmp_path, models):
    df = two_dataset_frame().astype({"m2": object})
    df.loc[4, "m2"] = "0.5x"
    path = write_table(df, tmp_path / "scores.csv")
    with pytest.raises(
        ValueError, match=r"model column 'm2' must be numeric: '0.5x' at file " + path_re(path) + r", line 6"
    ):
        load_benchmark(path, models=models)


@pytest.mark.parametrize("models", [None, ["m1"]])
def test_non_numeric_model_value_in_true_file_names_file_and_line(tmp_path, models):
    bad = true_frame(6, seed=2).astype({"m1": object})
    bad.loc[2, "m1"] = "oops"
    root = write_true_dir(
        tmp_path / "t",
        [
            ("begin_dev_true_scores.csv", true_frame(4, seed=1)),
            ("q2_dev_true_scores.csv", bad),
        ],
    )
    with pytest.raises(
        ValueError,
        match=r"model column 'm1' must be numeric: 'oops' at file "
        + path_re(root / "q2_dev_true_scores.csv")
        + r", line 4",
    ):
        load_benchmark(root, models=models)


def test_non_numeric_model_value_in_dataframe_names_row():
    df = two_dataset_frame().astype({"m1": object})
    df.loc[2, "m1"] = "high"
    with pytest.raises(ValueError, match=r"model column 'm1' must be numeric: 'high' at DataFrame row 2"):
        load_benchmark(df, models=["m1"])


@pytest.mark.parametrize("via", ["frame", "csv"])
def test_missing_label_value_names_line(tmp_path, via):
    df = two_dataset_frame().astype({"label": object})
    df.loc[3, "label"] = None
    if via == "frame":
        source, match = df, r"column 'label' has a missing value at DataFrame row 3"
    else:
        source = write_table(df, tmp_path / "scores.csv")
        match = r"column 'label' has a missing value at file " + path_re(source) + r", line 5"
    with pytest.raises(ValueError, match=match):
        load_benchmark(source)


def test_nonexistent_path(tmp_path):
    path = tmp_path / "nowhere" / "scores.csv"
    with pytest.raises(ValueError, match=r"`source` " + path_re(path) + r" does not exist"):
        load_benchmark(path)


@pytest.mark.parametrize("fname", ["scores.json", "scores.xlsx", "scores"])
def test_unsupported_file_extension(tmp_path, fname):
    path = tmp_path / fname
    path.write_text("{}")
    with pytest.raises(
        ValueError, match=r"`source` " + path_re(path) + r": expected a directory, a \.csv\(\.gz\) or a \.parquet file"
    ):
        load_benchmark(path)


@pytest.mark.parametrize("policy", ["bogus", "omit", None])
def test_bad_nan_policy(policy):
    with pytest.raises(
        ValueError, match=r"`nan_policy` must be one of 'raise', 'drop', got " + re.escape(repr(policy))
    ):
        load_benchmark(two_dataset_frame(), nan_policy=policy)


# -- Benchmark accessors ------------------------------------------------------------------


@pytest.fixture
def bench():
    return load_benchmark(long_frame())


def test_scores_and_labels_per_dataset_match_input(bench):
    df = long_frame()
    for d in ("alpha", "beta", "gamma"):
        rows = df[df["dataset"] == d]
        np.testing.assert_array_equal(bench.labels(d), rows["label"].to_numpy())
        for m in ("m1", "m2"):
            np.testing.assert_array_equal(bench.scores(m, d), rows[m].to_numpy())
    # whole-frame access follows the grouped row order
    grouped = pd.concat([df[df["dataset"] == d] for d in bench.datasets])
    np.testing.assert_array_equal(bench.labels(), grouped["label"].to_numpy())
    np.testing.assert_array_equal(bench.scores("m2"), grouped["m2"].to_numpy())
    assert list(bench.frame["id"]) == list(grouped["id"])
    assert list(bench.frame["split"]) == list(grouped["split"])


def test_dataset_codes_and_sizes(bench):
    assert list(bench.dataset_sizes()) == [3, 3, 2]
    assert list(bench.dataset_codes()) == [0, 0, 0, 1, 1, 1, 2, 2]
    assert len(bench) == 8
    assert repr(bench) == "Benchmark(3 datasets, 2 models, 8 rows, source='<DataFrame>')"


def test_benchmark_is_frozen(bench):
    with pytest.raises(dataclasses.FrozenInstanceError):
        bench.models = ("x",)


@pytest.mark.parametrize(
    "call, param",
    [
        (lambda b: b.scores("nope"), "model"),
        (lambda b: b.scores("nope", "alpha"), "model"),
        (lambda b: b.scores("m1", "nope"), "dataset"),
        (lambda b: b.labels("nope"), "dataset"),
        (lambda b: b.domain_of("nope"), "dataset"),
        (lambda b: b.subset(models=["nope"]), "model"),
        (lambda b: b.subset(datasets=["alpha", "nope"]), "dataset"),
    ],
)
def test_unknown_names_in_accessors(bench, call, param):
    with pytest.raises(ValueError, match=rf"`{param}` must be one of \[.*\], got 'nope'"):
        call(bench)


@pytest.mark.parametrize("datasets", [None, ("gamma", "alpha"), ("beta",)])
@pytest.mark.parametrize("models", [None, ("m2",), ("m2", "m1")])
def test_subset_keeps_order_and_domains(bench, datasets, models):
    sub = bench.subset(models=models, datasets=datasets)
    exp_datasets = bench.datasets if datasets is None else datasets
    exp_models = bench.models if models is None else models
    assert sub.datasets == exp_datasets
    assert sub.models == exp_models
    assert sub.domains == {d: bench.domains[d] for d in exp_datasets}
    assert list(sub.frame.columns) == ["dataset", "domain", "label", "split", "id", *exp_models]
    assert np.all(np.diff(sub.dataset_codes()) >= 0)
    for d in exp_datasets:
        np.testing.assert_array_equal(sub.labels(d), bench.labels(d))
        for m in exp_models:
            np.testing.assert_array_equal(sub.scores(m, d), bench.scores(m, d))
    assert sub.source == bench.source


def test_load_with_datasets_argument_keeps_requested_order():
    b = load_benchmark(long_frame(), datasets=["gamma", "alpha"])
    assert b.datasets == ("gamma", "alpha")
    assert list(b.frame["dataset"]) == ["gamma", "gamma", "alpha", "alpha", "alpha"]
    assert b.domains == {"gamma": "news", "alpha": "news"}


def test_summary_counts(bench):
    s = bench.summary()
    assert list(s.columns) == ["dataset", "domain", "n", "n_positive", "positive_rate", "splits"]
    assert list(s["dataset"]) == ["alpha", "beta", "gamma"]
    assert list(s["domain"]) == ["news", "chat", "news"]
    assert list(s["n"]) == [3, 3, 2]
    assert list(s["n_positive"]) == [2, 1, 1]
    np.testing.assert_allclose(s["positive_rate"], [2 / 3, 1 / 3, 1 / 2])
    assert list(s["splits"]) == ["dev,test", "dev,test", "dev,test"]


def test_summary_without_split():
    s = load_benchmark(two_dataset_frame()).summary()
    assert "splits" not in s.columns
    assert list(s["n"]) == [3, 3]
    assert list(s["n_positive"]) == [2, 1]
    assert list(s["domain"]) == [None, None]


# -- property test ----------------------------------------------------------------------


@st.composite
def benchmark_frames(draw):
    n_datasets = draw(st.integers(2, 4))
    n_models = draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(1, 20), min_size=n_datasets, max_size=n_datasets))
    names = [f"ds{i}" for i in range(n_datasets)]
    dataset_col = [name for name, size in zip(names, sizes) for _ in range(size)]
    n = len(dataset_col)
    # interleave the datasets' rows in a random order
    order = draw(st.permutations(range(n)))
    dataset_col = [dataset_col[i] for i in order]
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    frame = pd.DataFrame({"dataset": dataset_col, "label": labels})
    finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    for j in range(n_models):
        frame[f"model_{j}"] = draw(st.lists(finite, min_size=n, max_size=n))
    return frame


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=benchmark_frames())
def test_property_scores_and_labels_follow_input_rows(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # single-class datasets warn
        b = load_benchmark(frame)
    models = [c for c in frame.columns if c.startswith("model_")]
    assert b.models == tuple(models)
    assert b.datasets == tuple(pd.unique(frame["dataset"]))
    assert len(b) == len(frame)
    for d in b.datasets:
        rows = frame[frame["dataset"] == d]
        np.testing.assert_array_equal(b.labels(d), rows["label"].to_numpy())
        for m in models:
            np.testing.assert_array_equal(b.scores(m, d), rows[m].to_numpy())


# -- misspelled reserved columns ---------------------------------------------------


@pytest.mark.parametrize("misspelled", ["datset", "Dataset", "DATASET", "datasets", " dataset"])
@pytest.mark.parametrize("via", ["frame", "csv"])
def test_misspelled_dataset_column_names_expected_columns(tmp_path, via, misspelled):
    """A misspelled `dataset` column would make the whole file one dataset (and, with a
    domain column, fail with a message about `domain`): the error names the column, the
    closest reserved name and the expected columns instead."""
    df = two_dataset_frame()
    df["domain"] = ["news"] * 3 + ["chat"] * 3
    df = df.rename(columns={"dataset": misspelled})
    source = df if via == "frame" else write_table(df, tmp_path / "scores.csv")
    with pytest.raises(ValueError) as info:
        load_benchmark(source)
    msg = str(info.value)
    assert "\n" not in msg
    assert f"no column 'dataset' but a column {misspelled!r}: did you mean 'dataset'?" in msg
    for name in ("'dataset'", "'label'", "'domain'", "'split'", "'id'"):
        assert name in msg
    assert "several values" not in msg


@pytest.mark.parametrize(
    "reserved, misspelled",
    [
        ("split", "Split"),
        ("split", "splt"),
        ("domain", "Domain"),
        ("domain", "domian"),
        ("id", "ID"),
    ],
)
def test_misspelled_optional_column_is_an_error(reserved, misspelled):
    """`Split`/`ID` would otherwise be silently ignored or (numeric) read as a model."""
    df = two_dataset_frame()
    df[misspelled] = [1, 2, 3, 4, 5, 6] if reserved == "id" else ["x"] * 6
    with pytest.raises(
        ValueError, match=rf"no column {reserved!r} but a column {misspelled!r}: did you mean {reserved!r}\?"
    ):
        load_benchmark(df)


@pytest.mark.parametrize("column", ["data", "idx", "domain_name", "split_seed", "model_a"])
def test_columns_that_only_resemble_reserved_names_are_kept(column):
    df = two_dataset_frame()
    df[column] = np.arange(6.0)
    bench = load_benchmark(df)
    assert column in bench.models


def test_missing_label_suggests_the_closest_column():
    df = two_dataset_frame().rename(columns={"label": "lable"})
    with pytest.raises(ValueError, match=r"no column 'label' but a column 'lable': did you mean 'label'\?"):
        load_benchmark(df)
    df = two_dataset_frame().rename(columns={"label": "target"})
    with pytest.raises(ValueError, match=r"missing the 'label' column; columns are"):
        load_benchmark(df)
