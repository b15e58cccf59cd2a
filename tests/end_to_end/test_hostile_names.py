"""Hostile model, dataset and domain names through the whole path.

Every name of ``hostile_names.ACCEPTED`` is loaded, analysed, drawn, printed
by the CLI in every format, run through the notebooks into HTML (and PDF) and
shown verbatim; every name of ``REFUSED`` (and the ``NORMALISATION`` pair) is
refused at load time with a one-line error naming the column. Names are inert:
renaming models, datasets and domains changes no number, and hostile
neighbours change no other model's numbers.

The real report run (notebooks, HTML and PDF) is in ``tests/end_to_end/test_hostile_names_report.py``.
"""

from __future__ import annotations

import csv
import io
import json
import re

import matplotlib
import matplotlib.pyplot as plt
import mistune
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import RendererAgg

import beyondauc
from beyondauc import (
    auc_table,
    best_of_methods,
    calibration_modes,
    diagnostics_table,
    expected_accuracy,
    expected_accuracy_grid,
    kendall_tau,
    leaderboard,
    load_benchmark,
    plots,
    rank_changes,
    rank_table,
    score_histograms,
    score_variance,
    selective_table,
    tolerance_table,
)
from beyondauc.plots import (
    AUCAccuracyDisplay,
    ClassHistogramDisplay,
    ConfidenceReliabilityDisplay,
    CoverageAccuracyDisplay,
    CoverageAccuracyGridDisplay,
    CriticalDifferenceDisplay,
    DiagnosticsDashboard,
    DriftDisplay,
    PairwiseDifferenceDisplay,
    RankSlopeDisplay,
    RejectionCurveDisplay,
    ReliabilityDisplay,
    RiskControlDisplay,
    RobustnessDisplay,
    ScoreHistogramsDisplay,
    ThresholdROCDisplay,
    ToleranceDisplay,
    WassersteinDisplay,
)
from helpers.cli import run
from helpers.hostile_names import (
    LONG,
    NAMES,
    NORMALISATION,
    REFUSED,
    name_map,
    plain_frame,
    random_scores,
    rename_values,
    renamed,
)
from helpers.report import parse_html


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _one_line(message):
    assert message and "\n" not in message and "\r" not in message, message
    return message


# -- load ------------------------------------------------------------------------------------


def _wide_frame(datasets=NAMES):
    """Every accepted name as a model column, as a dataset (6 rows each) and as a domain."""
    rng = np.random.default_rng(0)
    rows = []
    for d in datasets:
        for k in range(6):
            rows.append({"dataset": d, "domain": d, "label": k % 2})
    frame = pd.DataFrame(rows)
    for m in NAMES:
        frame[m] = rng.normal(size=len(frame)) + frame["label"]
    return frame


@pytest.mark.parametrize("kind", ["csv", "parquet", "frame"])
def test_accepted_names_load_verbatim(tmp_path, kind):
    frame = _wide_frame()
    source = frame
    if kind != "frame":
        source = tmp_path / f"scores.{kind}"
        frame.to_csv(source, index=False) if kind == "csv" else frame.to_parquet(source)
    bench = load_benchmark(source)
    assert bench.models == NAMES
    assert bench.datasets == NAMES
    assert bench.domains == {n: n for n in NAMES}
    assert all(bench.scores(m).tolist() == frame[m].tolist() for m in NAMES)


def _refusal(tmp_path, kind, where, name, other="ok"):
    frame = pd.DataFrame(
        {"dataset": ["a"] * 4 + ["b"] * 4, "domain": "g", "label": [0, 1] * 4, "m": np.linspace(0, 1, 8)}
    )
    if where == "model":
        frame[name] = frame["m"]
        if other != "ok":
            frame[other] = frame["m"]
    elif where == "dataset":
        frame["dataset"] = [name] * 4 + [other if other != "ok" else "b"] * 4
    else:
        frame["domain"] = [name] * 4 + [other if other != "ok" else "g"] * 4
    source = frame
    if kind == "csv":
        source = tmp_path / "scores.csv"
        frame.to_csv(source, index=False, quoting=csv.QUOTE_ALL)  # pandas leaves a lone \r unquoted
    with pytest.raises(ValueError) as info:
        load_benchmark(source)
    return _one_line(str(info.value))


@pytest.mark.parametrize("kind", ["csv", "frame"])
@pytest.mark.parametrize("where", ["model", "dataset", "domain"])
@pytest.mark.parametrize("name", list(REFUSED.values()), ids=list(REFUSED))
def test_refused_names_one_line_error_naming_the_column(tmp_path, kind, where, name):
    message = _refusal(tmp_path, kind, where, name)
    assert {"model": "model column", "dataset": "column 'dataset'", "domain": "column 'domain'"}[where] in message
    assert repr(name) in message
    assert "rename" in message
    if where == "dataset" and kind == "csv":
        assert "line 2" in message


def test_refused_domain_from_a_mapping():
    frame = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "label": [0, 1, 0, 1], "m": [0.1, 0.9, 0.2, 0.8]})
    with pytest.raises(ValueError) as info:
        load_benchmark(frame, domains={"a": "x\ny"})
    assert "`domains` value 'x\\ny'" in _one_line(str(info.value))


@pytest.mark.parametrize("kind", ["csv", "frame"])
@pytest.mark.parametrize("where", ["model", "dataset", "domain"])
def test_names_equal_under_unicode_normalisation_are_refused(tmp_path, kind, where):
    message = _refusal(tmp_path, kind, where, *NORMALISATION)
    assert "normalisation" in message
    assert ascii(NORMALISATION[0]) in message and ascii(NORMALISATION[1]) in message
    assert {"model": "model columns", "dataset": "column 'dataset' values", "domain": "domain"}[where] in message


@pytest.mark.parametrize("name", NORMALISATION)
def test_one_normalisation_form_alone_is_fine(name):
    bench = load_benchmark(pd.DataFrame({"dataset": name, "label": [0, 1], name: [0.1, 0.9]}))
    assert bench.models == (name,) and bench.datasets == (name,)


def test_missing_dataset_name_is_refused(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("dataset,label,m\na,0,0.1\n,1,0.9\n")
    with pytest.raises(ValueError, match="column 'dataset' has a missing value at .*line 3"):
        load_benchmark(path)


def test_model_names_starting_with_underscore_are_models():
    bench = load_benchmark(pd.DataFrame({"dataset": "a", "label": [0, 1], "_x_": [0.1, 0.9], "m": [0.2, 0.3]}))
    assert bench.models == ("_x_", "m")


# -- analyses: names are inert -------------------------------------------------------------------

MODELS = tuple(n for n in NAMES if n != "svm")[:8] + (LONG,)  # plain p0.. -> these (9 models)
DATASETS = ("None", "<script>alert(1)</script> $x^2$ %s")
DOMAINS = ("NA", "_*#&%~^ {}")


def _analyses(bench):
    """Every analysis of the package on ``bench`` (small repeats)."""
    res = expected_accuracy(bench, protocol="xdomain")
    grid = expected_accuracy_grid(bench, n_repeats=2)
    return {
        "auc_table": auc_table(bench),
        "expected_accuracy": res,
        "grid": grid,
        "rank_table": rank_table(res),
        "rank_changes": rank_changes(res, score="kappa"),
        "kendall_tau": kendall_tau(res),
        "calibration_modes": calibration_modes(grid),
        "best_of_methods": best_of_methods(grid),
        "score_variance": score_variance(bench, res),
        "score_histograms": score_histograms(bench, bins=5),
        "diagnostics_table": diagnostics_table(bench, n_repeats=2, n_points=5),
        "selective_table": selective_table(bench),
        "tolerance_table": tolerance_table(bench, bench.datasets[1]),
        "leaderboard": leaderboard(bench, n_repeats=2),
    }


@pytest.fixture(scope="module")
def analyses():
    plain = plain_frame(len(MODELS), rows=60)
    mapping = name_map(MODELS, DATASETS, DOMAINS)
    return {
        "mapping": mapping,
        "plain": _analyses(load_benchmark(plain)),
        "hostile": _analyses(load_benchmark(renamed(plain, MODELS, DATASETS, DOMAINS))),
        "alone": _analyses(load_benchmark(plain[["dataset", "domain", "label", "split", "p0", "p1"]])),
    }


@pytest.mark.parametrize(
    "name",
    [
        "auc_table",
        "expected_accuracy",
        "grid",
        "rank_table",
        "rank_changes",
        "kendall_tau",
        "calibration_modes",
        "best_of_methods",
        "score_variance",
        "score_histograms",
        "diagnostics_table",
        "selective_table",
        "tolerance_table",
        "leaderboard",
    ],
)
def test_every_analysis_gives_the_same_numbers_under_hostile_names(analyses, name):
    expected = rename_values(analyses["plain"][name], analyses["mapping"])
    got = analyses["hostile"][name]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)
    for col in ("model", "dataset", "domain"):
        if col in got.columns:
            shown = set(got[col].dropna()) - {"mean", "all"}
            assert shown <= set(MODELS) | set(DATASETS) | set(DOMAINS), shown


PER_MODEL = {  # analysis -> (columns that identify a row, numbers of the model itself)
    "auc_table": (["dataset", "model"], ["auc"]),
    "expected_accuracy": (["dataset", "model"], ["auc", "accuracy", "kappa", "mcc", "f1"]),
    "grid": (["protocol", "method", "dataset", "model"], ["auc", "accuracy", "kappa"]),
    "score_histograms": (["model", "dataset", "label", "bin"], ["count", "density"]),
    "diagnostics_table": (
        ["model", "dataset"],
        ["auc_val", "auc_test", "bias_robustness_test", "noise_robustness_test", "drift", "wasserstein"],
    ),
    "selective_table": (["model", "dataset"], ["disca", "a", "b", "area", "aurc"]),
}


@pytest.mark.parametrize("name", list(PER_MODEL))
def test_hostile_neighbours_change_no_other_models_numbers(analyses, name):
    keys, values = PER_MODEL[name]
    alone = analyses["alone"][name]
    mapping = analyses["mapping"]
    with_neighbours = analyses["hostile"][name]
    with_neighbours = with_neighbours[with_neighbours["model"].isin([mapping["p0"], mapping["p1"]])]
    expected = rename_values(alone, mapping)
    values = [v for v in values if v in expected.columns]
    assert values
    a = expected.set_index(keys)[values].sort_index()
    b = with_neighbours.set_index(keys)[values].sort_index()
    pd.testing.assert_frame_equal(b, a, check_dtype=False)


# -- figures: drawn literally --------------------------------------------------------------------


@pytest.fixture
def drawn(monkeypatch):
    """Record every string the Agg renderer draws as (text, ismath); TeX must never be called."""
    calls = []
    draw_text = RendererAgg.draw_text

    def record(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        calls.append((s, ismath))
        return draw_text(self, gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    def no_tex(self, gc, x, y, s, *args, **kwargs):
        raise AssertionError(f"drawn with TeX: {s!r}")

    monkeypatch.setattr(RendererAgg, "draw_text", record)
    monkeypatch.setattr(RendererAgg, "draw_tex", no_tex)
    return calls


@pytest.fixture(scope="module")
def wide():
    """Every accepted name as a model; four of them as datasets (a figure per dataset would be slow)."""
    bench = load_benchmark(_wide_frame(("_x_", "$x^2$", "None", LONG)))
    return bench, expected_accuracy(bench, protocol="xdomain")


def _pairwise(res):
    """A pairwise table (as GridBootstrap.pairwise) of the results' mean accuracies, intervals 0.01 either side."""
    acc = res.groupby("model", sort=False)["accuracy"].mean()
    rows = [("mean", m, o, acc[m] - acc[o]) for m in acc.index for o in acc.index if m != o]
    table = pd.DataFrame(rows, columns=["dataset", "model", "other", "difference"])
    return table.assign(low=table["difference"] - 0.01, high=table["difference"] + 0.01)


def _figures(wide):
    """Every Display, drawn with hostile names where it shows names: name -> (Display, names it shows)."""
    bench, res = wide
    y, s = random_scores(40)
    y2, s2 = random_scores(40, seed=1)
    conf = np.linspace(0.99, 0.5, 40)
    ok = np.arange(40) % 3 != 1
    a, b = "m$\\foo$", "$x^2$ <script>"
    table = ToleranceDisplay.from_predictions(conf, ok).tables["model"]
    return {
        "roc": (ThresholdROCDisplay.from_predictions(y, s, y2, s2, names=(a, b)), (a, b)),
        "hist": (ClassHistogramDisplay.from_predictions(y, s, name=a), (a,)),
        "robustness": (RobustnessDisplay.from_predictions(y, s, name=b), (b,)),
        "drift": (DriftDisplay.from_predictions(y, s, y2, s2), ()),
        "wasserstein": (WassersteinDisplay.from_predictions(y, s, y2, s2), ()),
        "dashboard": (DiagnosticsDashboard.from_predictions(y, s, y2, s2, model=a, dataset=b, n_repeats=2), (a, b)),
        "coverage": (CoverageAccuracyDisplay.from_predictions(conf, ok, name=a), (a,)),
        "coverage_grid": (
            CoverageAccuracyGridDisplay(
                {
                    name: CoverageAccuracyDisplay(d.curve, disca=d, name=a)
                    for name, d in ((b, beyondauc.disca(conf, ok)), ("None", beyondauc.disca(conf, ~ok)))
                },
                model=a,
            ).plot(),
            (a, b),
        ),
        "tolerance": (ToleranceDisplay({n: table for n in NAMES}).plot(), NAMES),
        "auc_accuracy": (AUCAccuracyDisplay.from_results(res, model=a), (a, *bench.datasets)),
        "auc_accuracy_all": (AUCAccuracyDisplay.from_results(res), NAMES),
        "rank_slope": (RankSlopeDisplay.from_results(res, highlight=b), NAMES),
        "score_histograms": (ScoreHistogramsDisplay.from_benchmark(bench, a, bins=5), (a, *bench.datasets)),
        "critical_difference": (CriticalDifferenceDisplay.from_results(res), NAMES),
        "pairwise": (PairwiseDifferenceDisplay.from_table(_pairwise(res)).plot(), NAMES),
        "reliability": (ReliabilityDisplay.from_predictions(y, conf, name=a), (a,)),
        "given_reliability": (ConfidenceReliabilityDisplay.from_predictions(ok, conf, n_bins=5, name=a), (a,)),
        "rejection": (RejectionCurveDisplay.from_predictions(ok, conf, max_rejection=0.5, name=b), (b,)),
        "risk_control": (
            RiskControlDisplay(
                pd.DataFrame(
                    {
                        "dataset": [a, b],
                        "protocol": ["xdomain", "indata"],
                        "certified": [True, False],
                        "calibration_coverage": [0.5, 0.0],
                        "calibration_risk": [0.05, np.nan],
                        "target_coverage": [0.4, 0.0],
                        "realised_risk": [0.12, np.nan],
                        "held": pd.array([False, pd.NA], dtype="boolean"),
                    }
                ),
                target_risk=0.1,
                model=a,
            ).plot(),
            (a, b),
        ),
    }


DRAWN = (
    ThresholdROCDisplay,
    ClassHistogramDisplay,
    RobustnessDisplay,
    DriftDisplay,
    WassersteinDisplay,
    DiagnosticsDashboard,
    CoverageAccuracyDisplay,
    CoverageAccuracyGridDisplay,
    ToleranceDisplay,
    AUCAccuracyDisplay,
    RankSlopeDisplay,
    ScoreHistogramsDisplay,
    CriticalDifferenceDisplay,
    PairwiseDifferenceDisplay,
    ReliabilityDisplay,
    ConfidenceReliabilityDisplay,
    RejectionCurveDisplay,
    RiskControlDisplay,
)  # what _figures draws


def test_every_display_is_covered():
    # every class of plots but the Explorer, an app over the Displays, not one itself (not report_layout either)
    displays = [name for name in plots.__all__ if isinstance(getattr(plots, name), type) and name != "Explorer"]
    assert {cls.__name__ for cls in DRAWN} == set(displays)
    for name in displays:
        assert getattr(getattr(plots, name).plot, "_draws_literal_text", False), f"{name}.plot needs @_literal_plot"


MATH_NUMBER = re.compile(r"\$\\mathdefault\{[^$]*\}\$")  # a numeric tick label as matplotlib formats it for TeX


def _check_drawn(key, drawn, names):
    texts = [t for t, _ in drawn]
    assert not [t for t, math in drawn if math and not MATH_NUMBER.fullmatch(t)], key  # mathtext: numbers only
    for name in names:
        if len(name) <= 100:
            assert any(name in t for t, math in drawn if not math), (key, name, texts[:20])
        else:  # shortened in the middle, in figures only
            assert any("x" * 59 + "…" in t for t in texts), key
    assert max(map(len, texts)) <= 120


@pytest.mark.parametrize(
    "rc",
    [{}, {"text.usetex": True}, {"text.parse_math": True, "axes.formatter.use_mathtext": True}],
    ids=["default", "usetex", "mathtext"],
)
def test_every_display_draws_names_literally(wide, drawn, rc):
    """Every string drawn is the name itself, not mathtext and not TeX (there is no TeX here: usetex would
    fail to draw), with the user's rcParams in force and unchanged; ticks re-created at draw time included."""
    before = dict(matplotlib.rcParams)
    with matplotlib.rc_context(rc):
        figures = _figures(wide)
        assert {type(disp) for disp, _ in figures.values()} == set(DRAWN)
        for key, (disp, names) in figures.items():
            fig = disp.figure_
            drawn.clear()
            fig.canvas.draw()
            _check_drawn(key, drawn, names)
            if not rc:  # a new size re-creates ticks at draw time; the inline backend saves with a tight box
                fig.set_size_inches(13, 9)
                drawn.clear()
                buffer = io.BytesIO()
                fig.savefig(buffer, format="png", bbox_inches="tight")
                assert buffer.getvalue()[:4] == b"\x89PNG"
                _check_drawn(key, drawn, names)
            plt.close(fig)
    assert dict(matplotlib.rcParams) == before


def test_literal_text_keeps_the_users_other_axes_alone():
    fig, (mine, theirs) = plt.subplots(1, 2)
    theirs.set_title("$x^2$")
    RankSlopeDisplay(["$x^2$", "b"], [1, 2], [2, 1]).plot(mine)
    assert all(not t.get_parse_math() for t in mine.texts)
    assert theirs.title.get_parse_math()


# -- CLI -----------------------------------------------------------------------------------------

CLI_MODELS = (
    "a & b % c_d \\ {x} ~^ $x^2$ #1",
    "_x_ *y* |p| <script>alert(1)</script>",
    "naive_bayes",
    "“q” «g» 'it''s' `b` e\u0301 نموذج",
)
CLI_DATASETS = ("None", "w_1&% [l](javascript:x) \\")
CLI_DOMAINS = ("NA", "dom $")


@pytest.fixture(scope="module")
def cli_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "scores.csv"
    renamed(plain_frame(len(CLI_MODELS), rows=80), CLI_MODELS, CLI_DATASETS, CLI_DOMAINS).to_csv(path, index=False)
    return path


def _calibrate(cli_csv, fmt):
    code, out = run(["calibrate", str(cli_csv), "--format", fmt])
    assert code == 0
    return out


def test_cli_json_and_csv_keep_names(cli_csv):
    records = json.loads(_calibrate(cli_csv, "json"))
    assert {r["model"] for r in records} == set(CLI_MODELS)
    assert {r["dataset"] for r in records} == set(CLI_DATASETS)
    assert {r["domain"] for r in records} == set(CLI_DOMAINS)
    frame = pd.read_csv(io.StringIO(_calibrate(cli_csv, "csv")), keep_default_na=False)
    assert set(frame["model"]) == set(CLI_MODELS) and set(frame["dataset"]) == set(CLI_DATASETS)


def test_cli_table_shows_names_verbatim(cli_csv):
    out = _calibrate(cli_csv, "table")
    for name in (*CLI_MODELS, *CLI_DATASETS):
        assert name in out


def _cells(html):
    root = parse_html(html)
    return [[c.text.strip() for c in row.iter() if c.tag in ("td", "th")] for row in root.find_all("tr")]


def test_cli_markdown_renders_names_verbatim(cli_csv):
    """Rendered as Markdown (mistune, GFM tables), every cell is the name itself, and no markup appears."""
    out = _calibrate(cli_csv, "markdown")
    html = mistune.create_markdown(plugins=["table"])(out)
    root = parse_html(html)
    assert root.find_all("script") == [] and root.find_all("a") == [] and root.find_all("em") == []
    rows = _cells(html)
    first = {row[0] for row in rows if row}
    assert set(CLI_MODELS) <= first
    headers = {c for row in rows for c in row}
    assert set(CLI_DATASETS) <= headers
    assert "naive_bayes" in out  # an underscore between letters cannot emphasise: left as it is


_LATEX_TEXT = [
    (r"\textbackslash{}", "\\"),
    (r"\textasciitilde{}", "~"),
    (r"\textasciicircum{}", "^"),
    (r"\textless{}", "<"),
    (r"\textgreater{}", ">"),
    (r"\textbar{}", "|"),
]


def _latex_cells(line):
    """Decode one tabular row: cells as text; fails on any special character that is not escaped."""
    assert line.endswith(r"\\"), line
    cells, cell, i, body = [], [], 0, line[:-2]
    while i < len(body):
        for code, char in _LATEX_TEXT:
            if body.startswith(code, i):
                cell.append(char)
                i += len(code)
                break
        else:
            c = body[i]
            if c == "\\" and i + 1 < len(body) and body[i + 1] in "{}&%$#_":
                cell.append(body[i + 1])
                i += 2
            elif body.startswith(r"\textbf{", i):
                end = body.index("}", i)
                cell.append(body[i + 8 : end])
                i = end + 1
            elif c == "&":
                cells.append("".join(cell).strip())
                cell = []
                i += 1
            else:
                assert c not in "\\{}%$#_~^", (c, line)
                cell.append(c)
                i += 1
    cells.append("".join(cell).strip())
    return cells


def test_cli_latex_escapes_every_name(cli_csv):
    out = _calibrate(cli_csv, "latex")
    tables = re.findall(r"\\begin\{tabular\}\{(\w+)\}\n(.*?)\\end\{tabular\}", out, flags=re.S)
    assert len(tables) >= 4
    first = set()
    for spec, body in tables:
        for line in body.splitlines():
            if line.strip() == r"\hline":
                continue
            cells = _latex_cells(line.strip())
            assert len(cells) == len(spec), line  # no stray & splits a row
            first.add(cells[0])
            if cells[0] == "model":
                assert set(CLI_DATASETS) <= set(cells) or "mean AUC" in cells
    assert set(CLI_MODELS) <= first
    outside = re.sub(r"\\begin\{tabular\}.*?\\end\{tabular\}", "", out, flags=re.S)
    assert all(line.startswith("% ") for line in outside.splitlines() if line.strip()), outside  # prose = comments


@pytest.mark.parametrize("command", ["diagnose", "selective"])
@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown", "latex"])
def test_cli_diagnose_and_selective_take_hostile_names(cli_csv, command, fmt):
    model = CLI_MODELS[1]
    extra = ["--repeats", "2", "--points", "5"] if command == "diagnose" else []
    code, out = run(
        [command, str(cli_csv), f"--model={model}", f"--dataset={CLI_DATASETS[1]}", "--format", fmt, *extra]
    )
    assert code == 0
    if fmt == "json":
        record = json.loads(out)
        assert record["model"] == model and record["dataset"] == CLI_DATASETS[1]
    elif fmt == "latex":
        for line in out.splitlines():
            if line.strip().endswith(r"\\"):
                _latex_cells(line.strip())
        outside = re.sub(r"\\begin\{tabular\}.*?\\end\{tabular\}", "", out, flags=re.S)
        assert all(line.startswith("% ") for line in outside.splitlines() if line.strip())
    elif fmt == "table":
        assert model in out
