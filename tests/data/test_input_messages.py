"""Bad input is refused early, in one line that names the file, the column or the line; every column is
accounted for; and each warning is said once per run, listing the datasets (and models) it concerns."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc import load_benchmark
from helpers.cli import check_single_error, run


def frame(n=20, datasets=("a", "b", "c"), models=("m1", "m2"), seed=0):
    """A small benchmark: every dataset has both classes and a domain."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "dataset": np.repeat(list(datasets), n),
            "domain": np.repeat(
                ["news", "chat", "news", "chat"][: len(datasets)]
                if len(datasets) <= 4
                else [f"d{i % 2}" for i in range(len(datasets))],
                n,
            ),
            "label": np.tile([0, 1], n * len(datasets) // 2),
        }
    )
    for m in models:
        df[m] = df["label"] + rng.normal(0, 1, len(df))
    return df


def one_line(message):
    assert "\n" not in message, message
    return message


def error_of(source, **kwargs):
    with pytest.raises(ValueError) as info:
        load_benchmark(source, **kwargs)
    return one_line(str(info.value))


def cli(*args):
    """Run the console script in a subprocess: (exit status, stdout, stderr)."""
    script = Path(sys.executable).with_name("beyondauc")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "beyondauc.cli"]
    proc = subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, timeout=300, check=False)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def no_grid(monkeypatch):
    """Make the calibration grid (the first computation of `evaluate`) fail the test if it runs."""

    def grid(*args, **kwargs):
        raise AssertionError("the calibration grid ran before the input was refused")

    monkeypatch.setattr(sys.modules["beyondauc.evaluation.stages"], "grid_and_calibration_errors", grid)


# -- columns ------------------------------------------------------------------------------------------


def test_boolean_model_column_is_refused_naming_file_and_column(tmp_path):
    df = frame()
    df["flag"] = df["m1"] > 0.5
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    message = error_of(path)
    assert repr(str(path)) in message and "column 'flag' holds booleans" in message
    assert "`models=`" in message
    # named among the models on purpose, it is read as 0/1
    assert load_benchmark(path, models=["m1", "flag"]).scores("flag").tolist() == df["flag"].astype(float).tolist()


def test_boolean_column_in_the_cli_names_the_flag(capsys, tmp_path):
    df = frame()
    df["flag"] = df["m1"] > 0.5
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    check_single_error(capsys, ["calibrate", str(path)], "'flag' holds booleans", str(path), "--models")


@pytest.mark.parametrize(
    "values",
    [
        pd.Series(pd.date_range("2024-01-01", periods=60, freq="D")),
        pd.Series(pd.date_range("2024-01-01", periods=60, freq="D")).dt.strftime("%Y-%m-%d"),
    ],
    ids=["datetime64", "iso-text"],
)
def test_date_column_is_refused_naming_the_column(values):
    df = frame()
    df["when"] = values.to_numpy()
    message = error_of(df)
    assert message.startswith("DataFrame: column 'when' holds dates")


def test_text_columns_are_listed_in_one_warning(tmp_path):
    df = frame()
    df["note"] = "checked"
    df["annotator"] = np.where(df["label"] == 1, "ann", "bob")
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bench = load_benchmark(path)
    assert bench.models == ("m1", "m2")
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1, texts
    assert "ignored column(s) 'note', 'annotator'" in texts[0] and repr(str(path)) in texts[0]


def test_named_models_leave_other_columns_out_without_a_word():
    df = frame()
    df["note"] = "x"
    df["flag"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_benchmark(df, models=["m2"]).models == ("m2",)


def test_true_format_text_columns_are_known(tmp_path):
    root = tmp_path / "true"
    root.mkdir()
    df = frame(datasets=("a",)).drop(columns=["dataset", "domain"])
    df.insert(0, "generated_text", "claim")
    df.insert(1, "grounding", "source")
    df.to_csv(root / "begin_dev_true_scores.csv", index=False)
    df.assign(comment="c").to_csv(root / "q2_dev_true_scores.csv", index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_benchmark(root)
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1 and "ignored column(s) 'comment'" in texts[0], texts


# -- files the reader cannot read -----------------------------------------------------------------------


def test_utf16_file_one_line_in_the_cli(tmp_path):
    path = tmp_path / "utf16.csv"
    path.write_bytes(frame().to_csv(index=False).encode("utf-16"))
    code, out, err = cli("calibrate", path)
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert repr(str(path)) in lines[0] and "UTF-16" in lines[0] and "re-save it as UTF-8" in lines[0]


def test_gzip_bytes_without_a_gz_name_are_read(tmp_path):
    plain, packed = tmp_path / "plain.csv", tmp_path / "packed.csv"
    frame().to_csv(plain, index=False)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load_benchmark(plain), load_benchmark(packed)
    pd.testing.assert_frame_equal(a.frame, b.frame)


def test_gzip_bytes_named_parquet_name_the_file(tmp_path):
    path = tmp_path / "scores.parquet"
    path.write_bytes(gzip.compress(frame().to_csv(index=False).encode()))
    message = error_of(path)
    assert repr(str(path)) in message and "not a Parquet file" in message and "gzip" in message


def test_binary_file_names_the_file(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    message = error_of(path)
    assert message.startswith(f"file {str(path)!r} is not a CSV/Parquet file: it holds binary data")


def test_latin1_byte_names_file_and_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_bytes(b"dataset,label,m1\na,0,0.1\ncaf\xe9,1,0.2\n")
    message = error_of(path)
    assert message.startswith(f"file {str(path)!r}, line 3: byte 0xe9 is not UTF-8 text")


def test_ragged_row_names_the_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text('dataset,label,m1\na,0,0.1\na,1,"two\nlines"\na,0,0.3,7\n')
    message = error_of(path)
    assert message.startswith(f"file {str(path)!r}, line 5: 4 fields, but the header has 3")


def test_unclosed_quote_names_the_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text('dataset,label,m1\na,0,0.1\na,1,"0.2\na,0,0.3\n')
    message = error_of(path)
    assert message.startswith(f"file {str(path)!r}, line 3: a quoted value opens here and is never closed")


@pytest.mark.parametrize("sep, shown", [(";", "';'"), ("|", "'|'"), ("\t", "tabs")])
def test_other_delimiter_is_suggested(tmp_path, sep, shown):
    path = tmp_path / "scores.csv"
    frame().to_csv(path, index=False, sep=sep)
    message = error_of(path)
    assert message.startswith(f"file {str(path)!r} looks delimited by {shown}")
    assert "label" not in message.split(":")[-1]  # not "missing the 'label' column"


def test_comma_file_named_tsv(tmp_path):
    path = tmp_path / "scores.tsv"
    frame().to_csv(path, index=False)
    assert "looks delimited by ','" in error_of(path) and "give it a .csv name" in error_of(path)


def test_domain_column_without_dataset_column_says_the_dataset_column_is_missing(tmp_path):
    path = tmp_path / "scores.csv"
    frame().drop(columns="domain").rename(columns={"dataset": "domain"}).to_csv(path, index=False)
    message = error_of(path)
    assert message.startswith(f"file {str(path)!r} has no 'dataset' column, so all of it is one dataset ('scores')")
    assert "add a 'dataset' column" in message


# -- refused before the computation -------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:dataset .* has a single class:UserWarning")
def test_one_row_dataset_is_refused_before_the_grid(no_grid):
    df = pd.concat(
        [frame(), pd.DataFrame({"dataset": ["tiny"], "domain": ["news"], "label": [1], "m1": [0.3], "m2": [0.1]})],
        ignore_index=True,
    )
    with pytest.raises(ValueError) as info:
        ba.evaluate(df, n_bootstrap=0)
    message = one_line(str(info.value))
    assert message.startswith("dataset 'tiny' has 1 example, and selective answering needs at least 2")
    assert "`selective_protocol`='indata'" in message


@pytest.mark.filterwarnings("ignore:dataset .* has a single class:UserWarning")
def test_one_row_file_is_refused_before_the_grid(no_grid, tmp_path):
    path = tmp_path / "one.csv"
    frame().iloc[:1].to_csv(path, index=False)
    with pytest.raises(ValueError) as info:
        ba.evaluate(path, n_bootstrap=0)
    message = one_line(str(info.value))
    assert "dataset 'a' has 1 example" in message and "calibration data" not in message


def test_single_dataset_needs_a_split_for_the_cohorts(no_grid):
    # asked for by name: xdomain on one dataset has no validation cohort (the default falls back, below)
    with pytest.raises(ValueError) as info:
        ba.evaluate(frame(datasets=("a",)), n_bootstrap=0, cohort_protocol="xdomain")
    message = one_line(str(info.value))
    assert message.startswith(
        "the cohort diagnostics of dataset 'a' take the validation cohort from the other "
        "datasets (`cohort_protocol`='xdomain'), and there is none"
    )
    assert "(the data has one dataset)" in message


def test_single_dataset_cohorts_default_to_indata():
    """One task is a benchmark too: without a split column or another dataset the default cohorts are a split
    of the dataset itself (indata); with two datasets, still xdomain."""
    from beyondauc.metrics.diagnostics.benchmark import check_cohort_protocol

    assert check_cohort_protocol(ba.load_benchmark(frame(datasets=("a",))), None) == "indata"
    assert check_cohort_protocol(ba.load_benchmark(frame()), None) == "xdomain"


@pytest.mark.parametrize("name", ["protocol", "selective_protocol", "cohort_protocol"])
def test_a_domain_protocol_asked_for_without_domains_is_refused_before_the_grid(no_grid, name):
    """Without domains the grid leaves outdomain and indomain out (tests/evaluation/test_no_domains.py); asked for by name,
    one is an error naming the parameter and the datasets without a domain."""
    with pytest.raises(
        ValueError,
        match=rf"^`{name}`='indomain' needs the domain of every dataset, and "
        r"\['a', 'c'\] have none: add a 'domain' column",
    ):
        ba.evaluate(
            frame().assign(domain=lambda f: f["domain"].where(f["dataset"] == "b")), n_bootstrap=0, **{name: "indomain"}
        )


def test_a_range_that_overflows_is_refused_up_front_naming_model_and_dataset(no_grid):
    df = frame()
    df.loc[3, "m2"], df.loc[4, "m2"] = 1e308, -1e308  # dataset 'a': max - min is not a float
    with pytest.raises(ValueError) as info:
        ba.evaluate(df, n_bootstrap=0)
    message = one_line(str(info.value))
    assert "model 'm2'" in message and "dataset 'a'" in message
    assert "range" in message and "rescale" in message
    assert "sigma_max" not in message


@pytest.mark.parametrize("value", [1e308, -1e308])
def test_one_huge_score_among_ordinary_ones_just_works(value):
    """The fits standardise and the robustness curves work in units of the range: nothing overflows."""
    df = frame()
    df.loc[3, "m2"] = value  # dataset 'a'
    ev = ba.evaluate(df, n_bootstrap=0, noise_repeats=2)
    grid = ev.tables["grid"].query("model == 'm2'")
    assert grid[["auc", "accuracy", "kappa"]].notna().all().all()
    diag = ev.tables["diagnostics"].query("model == 'm2'")
    unitless = [
        "auc_val",
        "auc_test",
        "bias_robustness_val",
        "bias_robustness_test",
        "noise_robustness_val",
        "noise_robustness_test",
        "drift",
    ]
    assert np.isfinite(diag[unitless].to_numpy(dtype=float)).all()
    curves = ev.tables["robustness"].query("model == 'm2'")
    assert np.isfinite(curves[["auc", "score"]].to_numpy(dtype=float)).all()
    assert np.isfinite(ev.tables["selective"].query("model == 'm2'")["accuracy"].to_numpy(dtype=float)).all()


@pytest.mark.parametrize("scale", [1e250, 1e300])
def test_scores_at_a_large_but_safe_scale_are_accepted(scale):
    from beyondauc.evaluation.benchmark_checks import check_against_benchmark

    df = frame()
    df[["m1", "m2"]] *= scale
    check_against_benchmark({}, load_benchmark(df))


def test_a_too_small_sigma_max_is_named():
    from beyondauc.evaluation.benchmark_checks import check_against_benchmark

    with pytest.raises(
        ValueError,
        match=r"^`sigma_max`=1e-306 is too small for the robustness curves of model "
        r"'m1' on dataset 'a'",
    ):
        check_against_benchmark({"sigma_max": 1e-306}, load_benchmark(frame()))
    check_against_benchmark({"sigma_max": 1e307}, load_benchmark(frame()))  # curves in its units: a large one is fine


@pytest.mark.filterwarnings("ignore:dataset .* has a single class:UserWarning")
def test_report_refuses_a_one_row_dataset_before_making_its_folder(tmp_path):
    from beyondauc.report import run_report

    path = tmp_path / "one.csv"
    frame().iloc[:1].to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"dataset 'a' has 1 example"):
        run_report(path, out=tmp_path / "report", progress=False)
    assert not (tmp_path / "report").exists()


# -- each warning once --------------------------------------------------------------------------------


def test_single_class_datasets_are_warned_about_once(tmp_path):
    df = frame(datasets=("a", "b", "c", "d"), models=("m1", "m2", "m3"))
    df.loc[df["dataset"] == "b", "label"] = 1
    df.loc[df["dataset"] == "d", "label"] = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ba.evaluate(df, n_bootstrap=0, noise_repeats=2)
    texts = [str(w.message) for w in caught]
    assert len(texts) == len(set(texts)), texts  # no warning twice
    single = [t for t in texts if "single class" in t]
    assert single == [
        (
            "2 datasets have a single class: 'b' (all labels positive), 'd' (all labels negative); "
            "their AUC, and every other number that needs both classes, is NaN (kappa too where all "
            "decisions are that class)"
        )
    ], texts
    assert len(texts) <= 6, texts


def test_a_repeated_warning_lists_its_models_and_datasets():
    from beyondauc.utils.validation import UndefinedMetricWarning, warnings_once

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with warnings_once(explained=["x"], models=["m1", "m2"]) as log:
            for model in ("m1", "m2"):
                for dataset in ("a", "b", "x"):
                    with warnings.catch_warnings(record=True) as inner:
                        warnings.simplefilter("always")
                        warnings.warn("undefined here", UndefinedMetricWarning)
                    log.record(inner, model=model, dataset=dataset)
            warnings.warn("explained", UndefinedMetricWarning)
            warnings.warn("explained", UndefinedMetricWarning)
            with warnings.catch_warnings(record=True) as inner:
                warnings.simplefilter("always")
                warnings.warn("only x", UndefinedMetricWarning)
            log.record(inner, model="m1", dataset="x")
    assert [str(w.message) for w in caught] == ["explained", "undefined here (datasets 'a', 'b', 'x'; every model)"]


def test_the_cli_prints_each_warning_once(capsys, tmp_path):
    df = frame()
    df["note"] = "x"
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    code, _ = run(["calibrate", str(path), "--repeats", "2"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("ignored column(s) 'note'") == 1, err


def test_many_models_build_their_tables_without_fragmentation_warnings(tmp_path):
    rng = np.random.default_rng(0)
    base = pd.DataFrame(
        {"dataset": np.repeat(["a", "b"], 6), "domain": np.repeat(["x", "y"], 6), "label": np.tile([0, 1], 6)}
    )
    scores = pd.DataFrame({f"m{i}": base["label"] + rng.normal(0, 1, 12) for i in range(200)})
    df = pd.concat([base, scores], axis=1)
    path = tmp_path / "many.csv"
    df.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        assert len(load_benchmark(path).models) == 200
        assert len(load_benchmark(df.astype({c: object for c in scores})).models) == 200
        ev = ba.evaluate(path, n_bootstrap=0, noise_repeats=1, n_repeats=1, n_points=2)
    assert len(ev.table("leaderboard")) == 200


def test_the_line_of_a_bad_value_still_counts_quoted_lines(tmp_path):
    """Line numbers read the file as the reader does, gzip bytes included."""
    df = frame(datasets=("a",))
    df.insert(0, "text", ["one\ntwo"] + ["x"] * (len(df) - 1))
    df = df.astype({"m1": object})
    df.loc[2, "m1"] = "oops"
    path = tmp_path / "scores.csv"
    path.write_bytes(gzip.compress(df.to_csv(index=False).encode()))
    assert re.search(r"'oops' at file .*, line 5$", error_of(path, models=["m1"]))


def test_cohort_diagnostics_name_the_data_not_sigma_max_when_the_range_overflows():
    df = frame()
    df.loc[3, "m1"], df.loc[25, "m1"] = 1e308, -1e308  # datasets 'a' and 'b': their xdomain cohorts meet
    with pytest.raises(ValueError) as info:
        ba.cohort_diagnostics(load_benchmark(df), "m1", "a")
    message = one_line(str(info.value))
    assert message.startswith("model 'm1' on dataset 'a': the scores of the two cohorts range from -1e+308 to 1e+308")
    assert "sigma_max" not in message


@pytest.mark.parametrize("name", ["domains.json", "domains.csv"])
def test_a_utf16_domains_file_names_the_file(tmp_path, name):
    path = tmp_path / name
    text = '{"a": "news"}' if name.endswith(".json") else "dataset,domain\na,news\n"
    path.write_bytes(text.encode("utf-16"))
    with pytest.raises(ValueError) as info:
        ba.read_domains(path)
    message = one_line(str(info.value))
    assert repr(str(path)) in message and "UTF-16" in message and "re-save it as UTF-8" in message
