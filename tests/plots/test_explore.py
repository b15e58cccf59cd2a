"""The explorer (``ba.explore``) driven through its widgets' Python side: each control changes what a pane
shows, and the numbers shown are the evaluation's tables for that selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.plots.explore import TABS, b_at_tolerance

pytest.importorskip("ipywidgets")

MODELS = ["svm", "knn", "logreg"]
DATASETS = ["wine", "diabetes", "iris_versicolor"]


@pytest.fixture(scope="module")
def ev():
    return ba.evaluate(
        "demo", models=MODELS, datasets=DATASETS, noise_repeats=2, n_bootstrap=20, baseline="logreg", progress=False
    )


@pytest.fixture()
def app(ev):
    return ba.explore(ev)


def _png(out):
    (o,) = out.outputs
    return o["data"]["image/png"]


def test_the_verdict_is_the_evaluations_for_each_model(app, ev):
    for m in MODELS:
        app.controls["model"].value = m
        v = ev.table("verdicts").set_index("model").loc[m]
        f = ev.table("findings")
        f = f[f["model"] == m].sort_values("order")
        assert app.shown["verdict"]["verdict"] == v["verdict"]
        assert app.shown["verdict"]["findings"] == list(f["sentence"])
        import html

        assert html.escape(str(v["verdict"])) in app.panes["verdict"].value


def test_each_control_changes_the_figure_it_drives(app):
    drives = {
        "model": ("accuracy", "knn"),
        "protocol": ("accuracy", "indata"),
        "method": ("accuracy", "isotonic"),
        "dataset": ("dashboard", "diabetes"),
    }
    for control, (tab, value) in drives.items():
        app.show(tab)
        before = _png(app.panes[tab])
        assert value in app.controls[control].options and app.controls[control].value != value
        app.controls[control].value = value
        assert _png(app.panes[tab]) != before, control


def test_a_tab_out_of_view_is_drawn_when_opened(app):
    app.show("accuracy")
    app.controls["model"].value = "knn"
    assert "dashboard" in app.stale
    app.show("dashboard")
    assert "dashboard" not in app.stale and app.panes["dashboard"].outputs
    with pytest.raises(ValueError, match="`tab` must be one of"):
        app.show("nope")


def test_the_table_is_the_grid_of_the_protocol_and_method(app, ev):
    app.show("table")
    for protocol, method in [("xdomain", "logistic"), ("indata", "isotonic")]:
        app.controls["protocol"].value, app.controls["method"].value = protocol, method
        numbers = app.shown["table"].numbers
        g = ev.table("grid")
        g = g[(g["protocol"] == protocol) & (g["method"] == method)]
        for m in MODELS:
            for d in DATASETS:
                shown = numbers[(numbers["model"] == m) & (numbers["dataset"] == d)]["accuracy"].item()
                assert shown == g[(g["model"] == m) & (g["dataset"] == d)]["accuracy"].item()
        row = [text for text, _ in app.shown["table"].rows[0]]
        assert all(t in app.panes["table"].value for t in row)
    # the exports are the paper table's
    app.controls["export_format"].value = "LaTeX"
    tex = app.export()
    assert "\\toprule" in tex and "\\bottomrule" in tex and tex == app.panes["export_text"].value
    app.controls["export_format"].value = "CSV"
    assert app.export().splitlines()[0].startswith("model,dataset,accuracy")


def test_tolerance_reads_b_from_the_stored_curve_and_agrees_at_grid_points(app, ev):
    app.show("selective")
    tol = ev.table("tolerance")
    for m, d in [("svm", "wine"), ("knn", "diabetes")]:
        app.controls["model"].value, app.controls["dataset"].value = m, d
        stored = tol[(tol["model"] == m) & (tol["dataset"] == d) & (tol["where"] == "in")]
        for t, b in zip(stored["tolerance"], stored["b"]):
            app.controls["tolerance"].value = float(t)
            assert app.shown["selective"]["b"] == pytest.approx(b)
            row = stored[stored["tolerance"] == t]
            assert app.shown["selective"]["disca"] == pytest.approx(row["disca"].item())
    before = _png(app.panes["selective"])
    app.controls["tolerance"].value = 0.62  # between grid points: read from the curve
    assert _png(app.panes["selective"]) != before


def test_b_at_tolerance_by_hand():
    conf = np.array([0.9, 0.8, 0.6, 0.4])
    acc = np.array([1.0, 0.9, 0.85, 0.7])
    assert b_at_tolerance(conf, acc, 0.95) == 0.8
    assert b_at_tolerance(conf, acc, 0.88) == 0.6
    assert b_at_tolerance(conf, acc, 0.5) == 0.4  # never below: the lowest confidence
    assert b_at_tolerance(np.array([0.0]), np.array([0.0]), 0.9) == 0.001  # floored as DiSCA floors it


def test_the_comparison_is_the_evaluations(app, ev):
    app.show("comparison")
    app.controls["model"].value = "svm"
    pd.testing.assert_frame_equal(app.shown["comparison"], ba.comparison_summary(ev, "svm").table)
    app.controls["baseline"].value = "knn"  # not svm's reference: the stored pairwise difference
    pw = ev.table("pairwise")
    expect = pw[(pw["model"] == "svm") & (pw["other"] == "knn")].reset_index(drop=True)
    pd.testing.assert_frame_equal(app.shown["comparison"], expect)
    app.controls["baseline"].value = "svm"
    assert "is the baseline" in app.panes["comparison"].value


def test_a_protocol_not_evaluated_says_why(ev):
    tables = dict(ev.tables)
    g = tables["grid"]
    tables["grid"] = g[g["protocol"] != "indata"].reset_index(drop=True)
    small = ba.Evaluation(tables, ev.parameters, ev.data, ev.versions)
    app = ba.explore(small)
    assert "indata" not in app.controls["protocol"].options
    app.controls["protocol"].options = [*app.controls["protocol"].options, "indata"]
    app.controls["protocol"].value = "indata"
    assert "not evaluated" in app.panes["accuracy"].outputs[0]["data"]["text/plain"]


def test_it_opens_a_saved_evaluation(ev, tmp_path):
    path = ev.save(tmp_path / "ev")
    app = ba.explore(path)
    assert app.evaluation.models == tuple(MODELS) and set(TABS) >= {"accuracy", "table"}


# -- the notebook ------------------------------------------------------------------------------------------------


def _notebook():
    import nbformat

    return nbformat.read(ba.__path__[0] + "/notebooks/explore.ipynb", as_version=4)


def test_the_notebook_has_one_parameters_cell_of_typed_defaults():
    import papermill

    nb = _notebook()
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    got = papermill.inspect_notebook(ba.__path__[0] + "/notebooks/explore.ipynb")
    assert set(got) == {"evaluation", "data", "overrides"}  # the report notebooks' convention
    assert all(p["inferred_type_name"] != "None" and p["help"] for p in got.values())


def test_papermill_runs_the_notebook_on_a_saved_evaluation(ev, tmp_path):
    import papermill

    path = ev.save(tmp_path / "ev")
    out = papermill.execute_notebook(
        ba.__path__[0] + "/notebooks/explore.ipynb",
        str(tmp_path / "out.ipynb"),
        parameters={"evaluation": str(path)},
        progress_bar=False,
        kernel_name="python3",
    )
    (last,) = out.cells[-1].outputs
    assert "application/vnd.jupyter.widget-view+json" in last["data"]
    assert not [o for c in out.cells if c.cell_type == "code" for o in c.outputs if o["output_type"] == "error"]
