"""The table of analysis parameters (``beyondauc.evaluation.parameters``): in step with the notebooks, strict."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import papermill
import pytest

import beyondauc
from beyondauc import load_demo
from beyondauc.evaluation.benchmark_checks import check_against_benchmark
from beyondauc.evaluation.parameters import PARAMETERS, check_parameters, unknown_message

NOTEBOOKS = Path(beyondauc.__file__).resolve().parent / "notebooks"
NAMES = ["auc_vs_accuracy", "test_auroc", "selective_answering", "overview"]


def declared():
    """name -> papermill's description, over the four notebooks (a name declared twice must agree)."""
    out = {}
    for name in NAMES:
        for pname, info in papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb")).items():
            if pname in out:
                assert out[pname] == info, (name, pname)
            out[pname] = info
    return out


def test_every_declared_parameter_has_a_check_with_the_notebooks_default_and_help():
    for pname, info in declared().items():
        assert pname in PARAMETERS, f"{pname} has no entry in parameter_items.PARAMETERS"
        param = PARAMETERS[pname]
        assert param.default == ast.literal_eval(info["default"]), pname
        assert param.help == info["help"], pname
        assert check_parameters({pname: param.default}) == {pname: param.default}  # the default passes


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("tolerance", 1.5, "a number in (0, 1]"),
        ("tolerance", 0, "a number in (0, 1]"),
        ("tolerance", "0.8", "a number in (0, 1]"),
        ("tolerance", math.nan, "a number in (0, 1]"),
        ("resolution", 2, "a number in (0, 1]"),
        ("protocol", "nope", "one of 'xdomain'"),
        ("method", "platt", "one of"),
        ("selective_protocol", 1, "one of"),
        ("cohort_protocol", "val", "one of"),
        ("n_repeats", 0, "an int >= 1"),
        ("n_repeats", 2.5, "an int"),
        ("n_repeats", True, "an int"),
        ("n_points", 1, "an int >= 2"),
        ("noise_repeats", -1, "an int >= 1"),
        ("random_state", -1, "an int in [0, 4294967295]"),  # numpy's seeds: the whole range, either end
        ("random_state", 2**32, "an int in [0, 4294967295]"),
        ("p", 0.5, "one of 1, 2"),
        ("sigma_max", 0, "> 0"),
        ("computation_score", -1, ">= 0"),
        ("model", 3, "a str"),
        ("val_split", None, "a split value (str)"),
        ("ood_dataset", 1, "a dataset name (str) or None"),
        ("datasets", ["wine", 2], "a list of str"),  # (a str is a comma-separated list, as on the CLI)
        ("datasets", [1], "a list of str"),
        ("pos_label", [1], "a str, int or bool"),
    ],
)
def test_bad_value_one_line_naming_the_parameter(name, value, expected):
    with pytest.raises(ValueError) as info:
        check_parameters({name: value})
    message = str(info.value)
    assert f"`{name}`" in message and expected in message and "\n" not in message


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tolerance", 1),
        ("tolerance", 0.5),
        ("resolution", 0.001),
        ("cohort_protocol", "split"),
        ("cohort_protocol", None),
        ("cohort_protocol", "indata"),
        ("sigma_max", 0.3),
        ("p", 1),
        ("computation_score", 0),
        ("datasets", ["wine"]),
        ("pos_label", "yes"),
        ("pos_label", 1),
        ("pos_label", True),
        ("random_state", 7),
        ("data", "scores.csv"),
        ("evaluation", None),
    ],
)
def test_good_value_passes_unchanged(name, value):
    assert check_parameters({name: value}) == {name: value}


def test_unknown_name_names_the_closest():
    known = ["tolerance", "protocol", "selective_protocol", "method"]
    with pytest.raises(ValueError) as info:
        check_parameters({"tolerence": 0.8}, known=known)
    message = str(info.value)
    assert message.startswith("unknown parameter 'tolerence'; did you mean 'tolerance'?")
    assert "valid: method, protocol, selective_protocol, tolerance" in message
    assert "did you mean 'protocol'?" in unknown_message("protocl", known)
    assert "did you mean" not in unknown_message("zzz", known)
    with pytest.raises(ValueError, match="unknown parameter 'model'"):  # known= narrows the table
        check_parameters({"model": "svm"}, known=known)


def test_checks_against_the_data():
    bench = load_demo()
    small = bench.subset(datasets=["wine", "diabetes"])
    check_against_benchmark({}, small)  # the defaults fit the demo (split val/test)
    check_against_benchmark({"ood_dataset": "iris_virginica"}, small, available=bench.datasets)
    with pytest.raises(ValueError, match="`ood_dataset` 'nope' is not a dataset"):
        check_against_benchmark({"ood_dataset": "nope"}, small, available=bench.datasets)
    with pytest.raises(
        ValueError,
        match=r"`val_split`='dev' names no rows of dataset 'wine'; its split values "
        r"are \['test', 'val'\]",
    ):
        check_against_benchmark({"val_split": "dev"}, small)
    check_against_benchmark({"val_split": "dev", "cohort_protocol": "xdomain"}, small)  # not used then
    frame = small.frame.assign(split=small.frame["split"].map({"val": "dev", "test": "test"}))
    dev = beyondauc.load_benchmark(frame)
    with pytest.raises(ValueError, match="`val_split`='val'"):
        check_against_benchmark({}, dev)
    check_against_benchmark({"val_split": "dev"}, dev)
    nosplit = beyondauc.load_benchmark(small.frame.drop(columns="split"))
    check_against_benchmark({"val_split": "dev"}, nosplit)  # no split column: xdomain cohorts
    with pytest.raises(ValueError, match="`cohort_protocol`='split' needs a benchmark with a 'split' column"):
        check_against_benchmark({"cohort_protocol": "split"}, nosplit)


# -- one table: everything else derives from it ------------------------------------------


def test_each_notebook_declares_exactly_the_parameters_the_table_gives_it():
    from beyondauc.evaluation.parameters import ALL_NOTEBOOKS

    for name in ALL_NOTEBOOKS:
        declared_here = set(papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb")))
        expected = {p.name for p in PARAMETERS.values() if name in p.notebooks}
        assert declared_here == expected, name


def test_evaluation_parameters_are_the_keywords_evaluate_checks():
    from beyondauc.evaluation.parameters import check_evaluation_parameters

    assert {p.name: p.default for p in PARAMETERS.values() if p.evaluation} == beyondauc.EVALUATION_PARAMETERS
    assert set(check_evaluation_parameters({})) == set(beyondauc.EVALUATION_PARAMETERS)
    with pytest.raises(ValueError, match="unknown parameter 'model'"):
        check_evaluation_parameters({"model": "svm"})  # a notebook's own, not the evaluation's


def test_notebooks_readme_table_is_the_parameter_table():
    from beyondauc.evaluation.parameters import parameters_markdown

    readme = (Path(__file__).resolve().parents[2] / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert parameters_markdown() in readme


@pytest.mark.parametrize("command", ["report", "demo", "evaluate"])
def test_every_parameter_has_its_api_name_as_a_cli_flag(command):
    from beyondauc.cli.commands import build_parser

    sub = build_parser().commands[command]
    flags = {flag for action in sub.options for flag in action.option_strings}
    for p in PARAMETERS.values():
        if p.name in ("data", "evaluation", "model", "overrides") or (command == "evaluate" and not p.evaluation):
            continue
        assert p.flag in flags, (command, p.flag)


def test_a_flag_reads_its_value_as_a_parameter_does(monkeypatch):
    from beyondauc.cli.commands import build_parser, parameter_items

    args = build_parser().parse_args(
        [
            "report",
            "demo",
            "--n-bootstrap",
            "50",
            "--protocol",
            "indata",
            "--computation-score",
            "null",
            "-p",
            "tolerance=0.8",
        ]
    )
    assert parameter_items(args.parameter, args) == {
        "tolerance": 0.8,
        "n_bootstrap": 50,
        "protocol": "indata",
        "computation_score": None,
    }


def test_old_cli_spellings_stay_as_aliases():
    from beyondauc.cli.commands import build_parser

    parser = build_parser()
    old = parser.parse_args(["calibrate", "--repeats", "3", "--seed", "2", "--bootstrap", "5"])
    new = parser.parse_args(["calibrate", "--n-repeats", "3", "--random-state", "2", "--n-bootstrap", "5"])
    assert (old.repeats, old.seed, old.bootstrap) == (new.repeats, new.seed, new.bootstrap) == (3, 2, 5)
    old = parser.parse_args(["diagnose", "--model", "m", "--repeats", "4", "--points", "9"])
    new = parser.parse_args(["diagnose", "--model", "m", "--noise-repeats", "4", "--n-points", "9"])
    assert (old.repeats, old.points) == (new.repeats, new.points) == (4, 9)
