"""Loading as one pass: each kind of source has one reader in one registry (``SOURCES``), each table file
format one line in ``TABLE_FORMATS``; a format added there is read everywhere a table is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.data import sources, table_formats
from beyondauc.data.logs import llm_demo
from beyondauc.data.sources import SOURCES, SourceRequest, read_source
from beyondauc.data.table_formats import TABLE_FORMATS, TableFormat, folder_suffixes, read_table, table_format


def _frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.tile([0, 1], n // 2)
    return pd.DataFrame({"label": y, "m1": (rng.normal(size=n) + y).round(3), "m2": rng.random(n).round(3)})


def _reader_of(source):
    """The name of the first registered reader that recognises ``source`` (as read_source tries them)."""
    return next(r.name for r in SOURCES if r.recognise(source))


def test_each_kind_of_source_is_read_by_its_one_reader(tmp_path):
    wide = _frame()
    csv = tmp_path / "wine.csv"
    wide.to_csv(csv, index=False)
    true = tmp_path / "true"
    true.mkdir()
    for name in ("summeval", "q2"):
        wide.to_csv(true / f"{name}.csv", index=False)
    tables = tmp_path / "tables"
    tables.mkdir()
    wide.assign(dataset="a").to_csv(tables / "a.csv", index=False)
    wide.assign(dataset="b").to_parquet(tables / "b.parquet")
    seen = {
        "DataFrame": wide,
        "table file": csv,
        "TRUE folder": true,
        "folder of tables": tables,
        "LLM harness logs": llm_demo(),
    }
    assert {r.name for r in SOURCES} == set(seen)
    for name, source in seen.items():
        assert _reader_of(source) == name
    rows = read_source(csv)
    assert rows.origin.where == f"file {str(csv)!r}" and set(rows.frame["dataset"]) == {"wine"}
    assert read_source(str(true)).model_columns == ["m1", "m2"]
    assert sorted(set(read_source(tables).frame["dataset"])) == ["a", "b"]
    assert set(read_source(llm_demo()).frame.columns) >= {"dataset", "model", "id", "confidence", "correct"}


def test_the_source_is_named_as_given_and_a_missing_one_in_one_line(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    _frame().assign(dataset="d").to_csv(folder / "d.csv", index=False)
    given = str(folder) + "/"
    assert read_source(given).origin.where == f"directory {given!r}"
    with pytest.raises(ValueError, match=r"^`source` '.*nothing' does not exist$"):
        read_source(tmp_path / "nothing")


def test_log_options_are_checked_whatever_the_source(tmp_path):
    csv = tmp_path / "d.csv"
    _frame().to_csv(csv, index=False)
    with pytest.raises(ValueError, match=r"unknown log option\(s\) \['scorr'\]"):
        read_source(csv, SourceRequest(log_options={"scorr": "x"}))


def test_every_table_suffix_has_one_format_and_folders_skip_notes():
    suffixes = [s for f in TABLE_FORMATS for s in f.suffixes]
    assert len(suffixes) == len(set(suffixes))
    for fmt in TABLE_FORMATS:
        for s in fmt.suffixes:
            assert table_format(f"x{s.upper()}") is fmt
    assert ".txt" not in folder_suffixes() and ".csv.gz" in folder_suffixes()
    assert table_format("scores.json") is None


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".tsv", ".txt", ".parquet", ".jsonl", ".ndjson.gz"])
def test_every_format_reads_the_same_rows(tmp_path, suffix):
    frame = _frame().assign(dataset=["d"] * 40)
    path = tmp_path / f"t{suffix}"
    if "parquet" in suffix:
        frame.to_parquet(path)
    elif "json" in suffix:
        frame.to_json(path, orient="records", lines=True, compression="gzip" if suffix.endswith(".gz") else None)
    else:
        frame.to_csv(path, sep="\t" if ".tsv" in suffix else ",", index=False)
    read, _ = read_table(path)
    pd.testing.assert_frame_equal(read[frame.columns].reset_index(drop=True), frame, check_dtype=False)


def test_a_format_added_to_the_registry_is_read_as_a_file_and_in_a_folder(tmp_path, monkeypatch):
    """One line in TABLE_FORMATS: a file, and a folder of such files, load like a CSV."""
    feather = TableFormat("Feather", (".feather",), lambda path: (pd.read_feather(path), 0))
    monkeypatch.setattr(table_formats, "TABLE_FORMATS", (*TABLE_FORMATS, feather))
    frame = _frame(seed=1)
    frame.to_feather(tmp_path / "wine.feather")
    frame.to_csv(tmp_path / "wine.csv", index=False)
    bench = ba.load_benchmark(tmp_path / "wine.feather")
    reference = ba.load_benchmark(tmp_path / "wine.csv")
    assert bench.datasets == reference.datasets == ("wine",)
    np.testing.assert_array_equal(bench.scores("m1"), reference.scores("m1"))
    folder = tmp_path / "folder"
    folder.mkdir()
    frame.assign(dataset="a").to_feather(folder / "a.feather")
    frame.assign(dataset="b").to_feather(folder / "b.feather")
    assert ba.load_benchmark(folder).datasets == ("a", "b")
    assert sources.SOURCES[-1].name == "table file"


def test_a_folder_of_logs_is_searched_once(monkeypatch):
    """The logs recognise found are the ones read: the folder is not searched again."""
    import beyondauc.data.logs as logs

    calls = []
    found = logs.find_logs
    for module in (sources, logs):  # wherever the search is called from
        monkeypatch.setattr(module, "find_logs", lambda path: calls.append(path) or found(path))
    rows = read_source(llm_demo())
    assert len(calls) == 1 and len(rows.frame) > 0
