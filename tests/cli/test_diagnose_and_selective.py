"""Tests of the ``beyondauc diagnose`` and ``beyondauc selective`` commands, in-process.

Every number printed is compared with the API (:func:`beyondauc.cohort_diagnostics`,
:func:`beyondauc.selective_answering`) called with the same arguments, on the
embedded demo benchmark and on small CSV files written for the test.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from beyondauc import cohort_diagnostics, load_benchmark, selective_answering
from helpers.cli import check_single_error, run

DIAGNOSE_KEYS = ("bias_robustness", "noise_robustness", "drift", "wasserstein", "auc")
SELECTIVE_KEYS = ("disca", "a", "b", "n_fluctuations", "aurc", "e_aurc")
REPEATS = 2


# -- helpers ----------------------------------------------------------------------------


def run_ok(capsys, argv):
    code, text = run(argv)
    err = capsys.readouterr().err
    assert code == 0, (argv, err)
    assert "Traceback" not in err and "error" not in err, err
    return text


def run_json(capsys, argv):
    text = run_ok(capsys, [*argv, "--format", "json"])
    assert "NaN" not in text and "Infinity" not in text
    return json.loads(text)


def assert_diagnose_equals_api(rec, bench, model, dataset, **options):
    r = cohort_diagnostics(bench, model, dataset, **options)
    for key in DIAGNOSE_KEYS:
        assert key in rec, key
    assert rec["model"] == model and rec["dataset"] == dataset
    assert rec["auc"] == r.auc_test
    assert rec["bias_robustness"] == r.bias_test.score
    assert rec["noise_robustness"] == r.noise_test.score
    assert rec["drift"] == r.drift.score
    assert rec["wasserstein"] == r.wasserstein.score
    for key, value in r.to_dict().items():  # every headline number, val and test
        assert rec[key] == value, key
    m = r.wasserstein.to_frame()
    for row in m.index:
        for col in m.columns:
            assert rec["wasserstein_matrix"][row][col] == m.loc[row, col], (row, col)
    return r


def assert_selective_equals_api(rec, bench, model, dataset, **options):
    r = selective_answering(bench, model, dataset, **options)
    for key in SELECTIVE_KEYS:
        assert key in rec, key
    assert rec["model"] == model and rec["dataset"] == dataset
    assert rec["disca"] == r.disca.score == r.score
    assert rec["a"] == r.disca.a and rec["b"] == r.disca.b
    assert rec["n_fluctuations"] == r.disca.n_fluctuations
    assert rec["aurc"] == r.aurc and rec["e_aurc"] == r.e_aurc
    want = r.to_dict()
    assert set(rec) == set(want)
    for key, value in want.items():  # every headline number, exactly
        assert rec[key] == value, key
    return r


def csv_frame(n=60, seed=0, datasets=("x", "y", "z")):
    """Three datasets; a strong and a weak model; half the rows 'val', the rest 'test'."""
    rng = np.random.default_rng(seed)
    k = len(datasets)
    y = np.tile([0, 1], k * n // 2)
    return pd.DataFrame(
        {
            "dataset": np.repeat(list(datasets), n),
            "label": y,
            "split": np.tile(np.repeat(["val", "test"], [n // 2 + 6, n // 2 - 6]), k),
            "strong": rng.normal(size=k * n) + 2.0 * y + np.repeat(np.arange(k) * 0.7, n),
            "weak": 10.0 * rng.normal(size=k * n) - 3.0 + 4.0 * y,
        }
    )


@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    """Paths of the small CSV variants: with split, without, string labels, custom split names."""
    root = tmp_path_factory.mktemp("cli_diagnose")
    df = csv_frame()
    paths = {}
    paths["split"] = root / "scores.csv"
    df.to_csv(paths["split"], index=False)
    paths["nosplit"] = root / "nosplit.csv"
    df.drop(columns="split").to_csv(paths["nosplit"], index=False)
    strings = df.copy()
    strings["label"] = np.where(df["label"] == 1, "spam", "ham")
    paths["strings"] = root / "strings.csv"
    strings.to_csv(paths["strings"], index=False)
    renamed = df.copy()
    renamed["split"] = renamed["split"].map({"val": "dev", "test": "holdout"})
    paths["renamed"] = root / "renamed.csv"
    renamed.to_csv(paths["renamed"], index=False)
    return paths


# source -> (argv prefix, how to load the same benchmark, a model, two datasets, protocol to pass)
def _source(name, demo, csvs):
    if name == "demo":
        return [], demo, "logreg", ["wine", "iris_versicolor"], []
    if name == "csv":
        return [str(csvs["split"])], load_benchmark(csvs["split"]), "strong", ["x", "z"], []
    if name == "csv-xdomain":
        return (
            [str(csvs["nosplit"]), "--protocol", "xdomain"],
            load_benchmark(csvs["nosplit"]),
            "weak",
            ["y", "z"],
            ["xdomain"],
        )
    if name == "csv-strings":
        return (
            [str(csvs["strings"]), "--pos-label", "spam"],
            load_benchmark(csvs["strings"], pos_label="spam"),
            "strong",
            ["x", "y"],
            [],
        )
    raise AssertionError(name)


SOURCES = ["demo", "csv", "csv-xdomain", "csv-strings"]


# -- diagnose: json equals the API --------------------------------------------------------


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("source", SOURCES)
def test_diagnose_json_one_dataset_equals_api(capsys, demo, csvs, source, which):
    prefix, bench, model, datasets, protocol = _source(source, demo, csvs)
    dataset = datasets[which]
    rec = run_json(capsys, ["diagnose", *prefix, "--model", model, "--dataset", dataset, "--repeats", str(REPEATS)])
    assert isinstance(rec, dict)
    r = assert_diagnose_equals_api(
        rec, bench, model, dataset, n_repeats=REPEATS, protocol=protocol[0] if protocol else None
    )
    assert rec["cohorts"] == (protocol[0] if protocol else "split")
    assert rec["n_val"] == len(r.y_val) and rec["n_test"] == len(r.y_test)
    assert all(isinstance(rec[k], float) for k in DIAGNOSE_KEYS)


def test_diagnose_without_split_defaults_to_xdomain(capsys, csvs):
    """A CSV without a split column needs no --protocol: the default is xdomain."""
    bench = load_benchmark(csvs["nosplit"])
    rec = run_json(
        capsys, ["diagnose", str(csvs["nosplit"]), "--model", "strong", "--dataset", "y", "--repeats", str(REPEATS)]
    )
    assert rec["cohorts"] == "xdomain"
    assert_diagnose_equals_api(rec, bench, "strong", "y", n_repeats=REPEATS)
    # V = the other datasets pooled, T = the dataset
    assert rec["n_test"] == (bench.frame["dataset"] == "y").sum() and rec["n_val"] == len(bench) - rec["n_test"]


def test_diagnose_string_labels_equal_numeric_labels(capsys, csvs):
    argv = ["--model", "strong", "--dataset", "x", "--repeats", str(REPEATS)]
    numeric = run_json(capsys, ["diagnose", str(csvs["split"]), *argv])
    strings = run_json(capsys, ["diagnose", str(csvs["strings"]), "--pos-label", "spam", *argv])
    assert strings == numeric
    # with the other label positive, the AUC flips
    flipped = run_json(capsys, ["diagnose", str(csvs["strings"]), "--pos-label", "ham", *argv])
    assert flipped["auc"] == pytest.approx(1 - numeric["auc"], abs=1e-12)


@pytest.mark.parametrize("protocol", ["split", "xdomain", "outdomain", "indata", "outdata"])
def test_diagnose_options_are_honoured(capsys, demo, protocol):
    argv = [
        "diagnose",
        "--model",
        "svm",
        "--dataset",
        "diabetes",
        "--protocol",
        protocol,
        "--repeats",
        "3",
        "--points",
        "5",
        "--p",
        "1",
        "--seed",
        "7",
    ]
    rec = run_json(capsys, argv)
    assert rec["cohorts"] == protocol
    r = assert_diagnose_equals_api(
        rec, demo, "svm", "diabetes", protocol=protocol, n_repeats=3, n_points=5, p=1, random_state=7
    )
    assert len(r.bias_test.sigmas) == 5 and r.wasserstein.p == 1
    default = cohort_diagnostics(demo, "svm", "diabetes", protocol=protocol, n_repeats=3)
    assert rec["wasserstein"] != default.wasserstein.score  # p = 1, not 2


@pytest.mark.parametrize("method", [None, "exact", "monte_carlo"])
def test_diagnose_noise_method(capsys, demo, method):
    argv = ["diagnose", "--model", "svm", "--dataset", "wine", "--noise-repeats", "4", "--seed", "3"]
    rec = run_json(capsys, argv + ([] if method is None else ["--noise-method", method]))
    r = assert_diagnose_equals_api(
        rec, demo, "svm", "wine", n_repeats=4, random_state=3, noise_method=method or "exact"
    )
    assert r.noise_test.method == (method or "exact")
    other = cohort_diagnostics(
        demo,
        "svm",
        "wine",
        n_repeats=4,
        random_state=3,
        noise_method="exact" if method == "monte_carlo" else "monte_carlo",
    )
    assert rec["noise_robustness"] != other.noise_test.score
    assert rec["bias_robustness"] == other.bias_test.score  # nothing else moves


def test_diagnose_custom_split_names(capsys, csvs):
    bench = load_benchmark(csvs["renamed"])
    rec = run_json(
        capsys,
        [
            "diagnose",
            str(csvs["renamed"]),
            "--model",
            "weak",
            "--dataset",
            "z",
            "--val-split",
            "dev",
            "--test-split",
            "holdout",
            "--repeats",
            str(REPEATS),
        ],
    )
    assert_diagnose_equals_api(rec, bench, "weak", "z", val_split="dev", test_split="holdout", n_repeats=REPEATS)
    original = run_json(
        capsys, ["diagnose", str(csvs["split"]), "--model", "weak", "--dataset", "z", "--repeats", str(REPEATS)]
    )
    assert rec == original


@pytest.mark.parametrize("source", SOURCES)
def test_diagnose_json_every_dataset_is_a_list(capsys, demo, csvs, source):
    prefix, bench, model, _, protocol = _source(source, demo, csvs)
    recs = run_json(capsys, ["diagnose", *prefix, "--model", model, "--repeats", str(REPEATS)])
    assert isinstance(recs, list)
    assert [r["dataset"] for r in recs] == list(bench.datasets)
    for rec in recs[:: max(1, len(recs) // 3)]:
        assert_diagnose_equals_api(
            rec, bench, model, rec["dataset"], n_repeats=REPEATS, protocol=protocol[0] if protocol else None
        )


# -- selective: json equals the API --------------------------------------------------------


@pytest.mark.parametrize("score", [None, 0.25])
@pytest.mark.parametrize("ood", [False, True])
@pytest.mark.parametrize("source", SOURCES)
def test_selective_json_one_dataset_equals_api(capsys, demo, csvs, source, ood, score):
    prefix, bench, model, datasets, _ = _source(source, demo, csvs)
    prefix = [a for a in prefix if a not in ("--protocol", "xdomain")]  # selective has its own default
    dataset, other = datasets
    argv = ["selective", *prefix, "--model", model, "--dataset", dataset]
    options = {}
    if ood:
        argv += ["--ood-dataset", other]
        options["ood_dataset"] = other
    if score is not None:
        argv += ["--computation-score", str(score)]
        options["computation_score"] = score
    rec = run_json(capsys, argv)
    assert isinstance(rec, dict)
    r = assert_selective_equals_api(rec, bench, model, dataset, **options)
    if ood:
        assert rec["disca_ood"] == r.disca_ood.score and rec["ood_dataset"] == other
        assert rec["n_fluctuations_ood"] == r.disca_ood.n_fluctuations
    else:
        assert "disca_ood" not in rec and rec["ood_dataset"] is None
    if score is None:
        assert rec["didma"] is None and rec["nidma"] is None
    else:
        assert isinstance(rec["didma"], float) and rec["didma"] == r.didma
        assert rec["didma"] == pytest.approx(0.5 * r.disca.score + 0.5 * score, abs=1e-12)
        if ood:
            assert isinstance(rec["nidma"], float) and rec["nidma"] == r.nidma
            assert rec["nidma"] == pytest.approx(0.5 * r.didma + 0.5 * r.disca_ood.score, abs=1e-12)
        else:
            assert rec["nidma"] is None


@pytest.mark.parametrize("protocol, method", [("indata", "stump"), ("xdomain", "isotonic"), ("outdata", "logistic")])
def test_selective_options_are_honoured(capsys, demo, protocol, method):
    argv = [
        "selective",
        "--model",
        "knn",
        "--dataset",
        "breast_cancer",
        "--protocol",
        protocol,
        "--method",
        method,
        "--tolerance",
        "0.8",
        "--resolution",
        "0.05",
        "--seed",
        "3",
    ]
    rec = run_json(capsys, argv)
    assert rec["protocol"] == protocol and rec["method"] == method and rec["tolerance"] == 0.8
    assert_selective_equals_api(
        rec,
        demo,
        "knn",
        "breast_cancer",
        protocol=protocol,
        method=method,
        tolerance=0.8,
        resolution=0.05,
        random_state=3,
    )


@pytest.mark.parametrize("source", SOURCES)
def test_selective_json_every_dataset_excludes_the_ood_dataset(capsys, demo, csvs, source):
    prefix, bench, model, datasets, _ = _source(source, demo, csvs)
    prefix = [a for a in prefix if a not in ("--protocol", "xdomain")]
    ood = datasets[1]
    recs = run_json(capsys, ["selective", *prefix, "--model", model, "--ood-dataset", ood])
    assert isinstance(recs, list)
    assert [r["dataset"] for r in recs] == [d for d in bench.datasets if d != ood]
    for rec in recs:
        assert rec["ood_dataset"] == ood and "disca_ood" in rec
    for rec in recs[:2]:
        assert_selective_equals_api(rec, bench, model, rec["dataset"], ood_dataset=ood)
    plain = run_json(capsys, ["selective", *prefix, "--model", model])
    assert [r["dataset"] for r in plain] == list(bench.datasets)


def test_selective_string_labels_equal_numeric_labels(capsys, csvs):
    numeric = run_json(
        capsys,
        [
            "selective",
            str(csvs["split"]),
            "--model",
            "weak",
            "--dataset",
            "y",
            "--ood-dataset",
            "x",
            "--computation-score",
            "1",
        ],
    )
    strings = run_json(
        capsys,
        [
            "selective",
            str(csvs["strings"]),
            "--pos-label",
            "spam",
            "--model",
            "weak",
            "--dataset",
            "y",
            "--ood-dataset",
            "x",
            "--computation-score",
            "1",
        ],
    )
    assert strings == numeric


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_numeric_labels_with_pos_label(capsys, tmp_path, command):
    """Labels {1, 2} need --pos-label (they are not 0/1, -1/1 or booleans), so --pos-label 2 must work."""
    df = csv_frame().drop(columns="split")
    df["label"] = df["label"] + 1
    path = tmp_path / "one_two.csv"
    df.to_csv(path, index=False)
    bench = load_benchmark(path, pos_label=2)
    argv = [command, str(path), "--pos-label", "2", "--model", "strong", "--dataset", "x"]
    if command == "diagnose":
        rec = run_json(capsys, [*argv, "--repeats", str(REPEATS)])
        assert_diagnose_equals_api(rec, bench, "strong", "x", n_repeats=REPEATS)
    else:
        rec = run_json(capsys, argv)
        assert_selective_equals_api(rec, bench, "strong", "x")


# -- text formats and csv -----------------------------------------------------------------


def _argv(command, prefix, model, extra=()):
    argv = [command, *prefix, "--model", model, *extra]
    return argv + (["--repeats", str(REPEATS)] if command == "diagnose" else [])


@pytest.mark.parametrize("source", ["demo", "csv", "csv-strings"])
@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_csv_format_one_row_per_dataset(capsys, demo, csvs, command, source):
    prefix, bench, model, _, _ = _source(source, demo, csvs)
    text = run_ok(capsys, [*_argv(command, prefix, model), "--format", "csv"])
    got = pd.read_csv(io.StringIO(text))
    assert len(got) == len(bench.datasets)
    assert list(got["dataset"]) == list(bench.datasets)
    assert set(got["model"]) == {model}
    keys = DIAGNOSE_KEYS if command == "diagnose" else SELECTIVE_KEYS
    assert set(keys) <= set(got.columns)
    assert "wasserstein_matrix" not in got.columns  # nested values stay out of csv
    records = run_json(capsys, _argv(command, prefix, model))
    for key in keys:
        want = np.array([r[key] for r in records], dtype=float)
        np.testing.assert_allclose(got[key].to_numpy(float), want, rtol=1e-15, atol=0, err_msg=key)


@pytest.mark.parametrize("source", ["demo", "csv"])
@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_table_format_renders(capsys, demo, csvs, command, source):
    prefix, bench, model, _, _ = _source(source, demo, csvs)
    text = run_ok(capsys, _argv(command, prefix, model))
    assert text.startswith("beyondauc ") and repr(model) in text
    title = "Diagnostics per dataset" if command == "diagnose" else "Selective answering per dataset"
    assert f"{title}\n{'=' * len(title)}\n" in text
    for d in bench.datasets:
        assert d in text
    if command == "diagnose":
        # at the default p = 2 and at p = 1 (the paper's Figure 4)
        assert text.count("2-Wasserstein matrix, ") == text.count("1-Wasserstein matrix, ") == len(bench.datasets)
        for col in ("bias_test", "noise_test", "drift", "wasserstein", "wasserstein_p1", "wasserstein_p2"):
            assert col in text
    else:
        assert "b over tolerance" in text and "<0.95" in text and "<0.55" in text
        for col in ("disca", "n_fluctuations", "aurc", "e_aurc"):
            assert col in text
    assert "{" not in text  # no dict dumped into a table


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_markdown_format_renders(capsys, csvs, command):
    text = run_ok(capsys, [*_argv(command, [str(csvs["split"])], "strong"), "--format", "markdown"])
    assert "### " in text
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table_lines) >= 2 + 3  # header, rule, one row per dataset at least
    assert all(line.rstrip().endswith("|") for line in table_lines)
    for d in ("x", "y", "z"):
        assert any(line.startswith(f"| {d} ") for line in table_lines), d


@pytest.mark.parametrize("ood", [False, True])
def test_selective_table_has_ood_and_didma_columns_when_asked(capsys, ood):
    extra = ["--computation-score", "0.5"] + (["--ood-dataset", "diabetes"] if ood else [])
    text = run_ok(capsys, ["selective", "--model", "mlp", *extra])
    head = text.split("Selective answering per dataset")[1].splitlines()[2]
    assert "didma" in head
    assert ("disca_ood" in head) == ood and ("nidma" in head) == ood


# -- errors: exit 2, one line on stderr, no traceback ---------------------------------------


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_error_unknown_model(capsys, command):
    check_single_error(capsys, [command, "--model", "oracle"], "model", "'oracle'")


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_error_unknown_dataset(capsys, command):
    check_single_error(capsys, [command, "--model", "logreg", "--dataset", "mnist"], "dataset", "'mnist'")


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_error_missing_model(capsys, command):
    check_single_error(capsys, [command], "--model")
    check_single_error(capsys, [command, "--dataset", "wine"], "--model")


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_error_unknown_protocol(capsys, command):
    check_single_error(capsys, [command, "--model", "logreg", "--protocol", "sideways"], "--protocol", "sideways")


def test_error_selective_protocol_split(capsys):
    check_single_error(capsys, ["selective", "--model", "logreg", "--protocol", "split"], "--protocol", "split")


@pytest.mark.parametrize("tolerance", ["2", "0", "-0.5"])
def test_error_selective_tolerance(capsys, tolerance):
    check_single_error(capsys, ["selective", "--model", "logreg", "--tolerance", tolerance], "tolerance")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--repeats", "0"], "--noise-repeats"),  # the old spelling still works; messages name the API's
        (["--noise-repeats", "-3"], "--noise-repeats"),
        (["--points", "1"], "--n-points"),
        (["--n-points", "0"], "--n-points"),
        (["--seed", "-1"], "--random-state"),
        (["--p", "0.5"], "--p must be a finite number >= 1"),  # the command line's spelling, not Python's `p`
        (["--repeats", "many"], "--repeats"),
        (["--noise-method", "mc"], "--noise-method"),
    ],
)
def test_error_diagnose_bad_numbers(capsys, args, needle):
    check_single_error(capsys, ["diagnose", "--model", "logreg", *args], needle)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--resolution", "0"], "resolution"),
        (["--seed", "-1"], "--random-state"),
        (["--computation-score", "-1"], "computation_score"),
        (["--dataset", "wine", "--ood-dataset", "wine"], "--ood-dataset must differ from --dataset"),
        (["--ood-dataset", "mnist"], "mnist"),
    ],
)
def test_error_selective_bad_options(capsys, args, needle):
    check_single_error(capsys, ["selective", "--model", "logreg", *args], needle)


@pytest.mark.parametrize("flag", ["--val-split", "--test-split"])
@pytest.mark.parametrize("source", ["demo", "csv"])
def test_error_split_naming_no_rows(capsys, csvs, source, flag):
    prefix, model = ([], "logreg") if source == "demo" else ([str(csvs["split"])], "strong")
    line = check_single_error(
        capsys, ["diagnose", *prefix, "--model", model, flag, "train"], f"{flag} train names no rows"
    )  # the command line's spelling
    assert flag.lstrip("-").replace("-", "_") not in line


def test_error_split_message_lists_the_split_values(capsys):
    """The message lists the split values as the user wrote them, not as numpy reprs."""
    line = check_single_error(capsys, ["diagnose", "--model", "logreg", "--dataset", "wine", "--val-split", "train"])
    assert "np.str_" not in line, line
    assert "['test', 'val']" in line, line


def test_error_protocol_split_without_split_column(capsys, csvs):
    check_single_error(capsys, ["diagnose", str(csvs["nosplit"]), "--model", "strong", "--protocol", "split"], "split")


@pytest.mark.parametrize("command", ["diagnose", "selective"])
@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_error_csv_with_nonfinite_score(capsys, tmp_path, command, bad):
    df = csv_frame()
    df["weak"] = df["weak"].astype(object)
    df.loc[7, "weak"] = bad
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    check_single_error(capsys, [command, str(path), "--model", "strong"], "'weak'", "line 9")


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_error_string_labels_without_pos_label(capsys, csvs, command):
    line = check_single_error(capsys, [command, str(csvs["strings"]), "--model", "strong"], "--pos-label")
    assert "`pos_label`" not in line


@pytest.mark.parametrize("command", ["diagnose", "selective"])
def test_error_missing_file(capsys, tmp_path, command):
    check_single_error(capsys, [command, str(tmp_path / "missing.csv"), "--model", "m"], "does not exist")
