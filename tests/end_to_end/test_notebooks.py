"""Tests of the parameterized analysis notebooks in ``notebooks/``.

Structure (fast, no kernel): each notebook is valid nbformat 4, committed
clean, has exactly one ``parameters`` cell of typed, commented defaults with
the names the report runner injects, imports nothing but beyondauc,
matplotlib and IPython, opens with a ``# Title`` and explains every table and
figure in a Markdown cell before it.

Execution: papermill runs every notebook once on a small CSV benchmark cut
from the demo (module-scoped), then once more for the variants that matter
(an out-of-distribution dataset for selective answering, a CSV without a
``split`` column for the cohort diagnostics).  The outputs must hold no
error, at least one HTML table and one PNG figure, and name the model.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

import nbformat
import papermill
import pytest

import beyondauc
from beyondauc.report import markdown_text

NOTEBOOKS = Path(beyondauc.__file__).resolve().parent / "notebooks"
NAMES = ["summary", "auc_vs_accuracy", "test_auroc", "selective_answering", "overview"]
INTERACTIVE = ["explore"]  # not a report notebook: tests/plots/test_explore.py runs it
PER_MODEL = ["summary", "auc_vs_accuracy", "test_auroc", "selective_answering"]
# every notebook declares the same few names: `evaluation`, `data` and `overrides` (every evaluation parameter,
# as a dict), `model` in the per-model ones; then its own view options
COMMON = ["evaluation", "data", "overrides"]
EXTRA = {  # notebook-specific parameters and their defaults
    "summary": {"model": "svm"},
    "auc_vs_accuracy": {"model": "svm"},
    "test_auroc": {"model": "svm", "n_dashboards": 1},
    "selective_answering": {"model": "svm"},
    "overview": {},
}
ALLOWED_IMPORTS = {"beyondauc", "matplotlib", "IPython", "typing"}
ALLOWED_MAGICS = {"%matplotlib inline"}

# the small benchmark the notebooks run on
MODELS = ["svm", "knn", "naive_bayes"]
DATASETS = ["wine", "iris_versicolor", "breast_cancer"]
MODEL = "knn"  # not the default, so the outputs show that the parameter was injected


def _read(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def _code(cell):
    """A code cell's Python, without its IPython magics."""
    return "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith("%"))


def _parameters_cell(nb):
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{len(cells)} cells tagged 'parameters'"
    return cells[0]


def _parameters(nb):
    """name -> (annotation source, default value) of the parameters cell."""
    out = {}
    for node in ast.parse(_parameters_cell(nb).source).body:
        if isinstance(node, ast.ImportFrom) and node.module == "typing":  # for Optional[...] annotations
            continue
        assert isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None, (
            ast.unparse(node)
        )
        out[node.target.id] = (ast.unparse(node.annotation), ast.literal_eval(node.value))
    return out


# -- structure ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_valid_nbformat4_with_python3_kernel(name):
    nb = _read(name)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name):
    for cell in _read(name).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.parametrize("name", NAMES)
def test_first_cell_is_a_markdown_title(name):
    first = _read(name).cells[0]
    assert first.cell_type == "markdown"
    assert re.match(r"# \S", first.source.splitlines()[0])


@pytest.mark.parametrize("name", NAMES)
def test_one_parameters_cell_of_typed_commented_defaults(name):
    nb = _read(name)
    cell = _parameters_cell(nb)
    assert cell.cell_type == "code"
    assert nb.cells.index(cell) < min(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c is not cell)
    lines = [line for line in cell.source.splitlines() if line.strip()]
    assert lines[0] == "from typing import Optional"
    for line in lines[1:]:
        assert re.match(r"^[a-z_]+: [^=|]+ = .+  # \S", line), line  # no `X | None`: papermill cannot read it
    for pname, (annotation, default) in _parameters(nb).items():
        # the default has the declared type
        assert isinstance(default, eval(annotation, {"Optional": Optional})), (pname, annotation, default)


def _comments(source):
    """line number -> text of the comment on that line."""
    return {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }


@pytest.mark.parametrize("name", NAMES)
def test_papermill_lists_every_parameter(name):
    """What `papermill --help-notebook` shows: every declared name with its type, default and help."""
    source = _parameters_cell(_read(name)).source
    comments = _comments(source)
    expected = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign):
            expected[node.target.id] = {
                "inferred_type_name": ast.unparse(node.annotation),
                "default": ast.literal_eval(node.value),
                "help": comments[node.lineno],
            }
    got = papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb"))
    assert list(got) == list(expected)
    for pname, want in expected.items():
        info = got[pname]
        assert info["name"] == pname
        assert {
            "inferred_type_name": info["inferred_type_name"],
            "default": ast.literal_eval(info["default"]),
            "help": info["help"],
        } == want, pname


@pytest.mark.parametrize("name", NAMES)
def test_parameter_names_the_runner_injects(name):
    params = _parameters(_read(name))
    assert sorted(params) == sorted([*COMMON, *EXTRA[name]])
    assert ("model" in params) == (name in PER_MODEL)
    defaults = {"evaluation": None, "data": "demo", "overrides": None, **EXTRA[name]}
    assert {p: params[p][1] for p in defaults} == defaults
    assert not set(params) & set(beyondauc.EVALUATION_PARAMETERS)  # those go through `overrides`
    if "model" in params:  # the defaults run on the demo benchmark
        assert params["model"][1] in beyondauc.load_demo().models


@pytest.mark.parametrize("name", NAMES)
def test_code_imports_only_the_package_matplotlib_and_ipython(name):
    for cell in _read(name).cells:
        if cell.cell_type != "code":
            continue
        for line in cell.source.splitlines():
            if line.lstrip().startswith("%"):
                assert line.strip() in ALLOWED_MAGICS, line
        for node in ast.walk(ast.parse(_code(cell))):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= ALLOWED_IMPORTS, ast.unparse(node)


@pytest.mark.parametrize("name", NAMES)
def test_no_metric_code_or_paths_in_code_cells(name):
    for cell in _read(name).cells:
        if cell.cell_type == "code":
            for word in ("numpy", "np.", "sklearn", "scipy", "print(", "open(", "/work", "Path("):
                assert word not in cell.source, (word, cell.source[:60])


def _shows_something(cell):
    return any(k in cell.source for k in ("display(", "show_figure(", ".plot(", "Display."))


@pytest.mark.parametrize("name", NAMES)
def test_every_table_and_figure_follows_a_markdown_explanation(name):
    cells = _read(name).cells
    showing = [i for i, c in enumerate(cells) if c.cell_type == "code" and _shows_something(c)]
    assert len(showing) >= 3
    for i in showing:
        assert cells[i - 1].cell_type == "markdown" and len(cells[i - 1].source.split()) >= 5, cells[i].source[:60]
    assert any("show_figure(" in cells[i].source for i in showing)  # figures with alt text, not plt.show()


@pytest.mark.parametrize("name", NAMES)
def test_markdown_cites_the_paper(name):
    text = " ".join(c.source for c in _read(name).cells if c.cell_type == "markdown")
    papers = {
        "auc_vs_accuracy": ["Opitz"],
        "test_auroc": ["Roberts"],
        "selective_answering": ["Mishra"],
        "overview": ["Opitz", "Roberts", "Mishra"],
        "summary": ["Opitz", "Roberts", "Mishra"],
    }
    for author in papers[name]:
        assert author in text


def test_the_notebooks_directory_holds_exactly_these():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES + INTERACTIVE)


# -- execution --------------------------------------------------------------------------------


def _small_benchmark_frame():
    return beyondauc.load_demo().subset(models=MODELS, datasets=DATASETS).frame


def _small_benchmark(path, *, split=True):
    frame = _small_benchmark_frame()
    if not split:
        frame = frame.drop(columns="split")
    frame.to_csv(path, index=False)
    return str(path)


def _execute(name, out, parameters):
    return papermill.execute_notebook(
        str(NOTEBOOKS / f"{name}.ipynb"), str(out), parameters=parameters, kernel_name="python3", progress_bar=False
    )


def _outputs(nb):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _texts(nb):
    """Every text an output shows (streams, Markdown, plain-text and HTML reprs)."""
    out = []
    for o in _outputs(nb):
        if o.get("output_type") == "stream":
            out.append(o["text"])
        for mime in ("text/plain", "text/markdown", "text/html"):
            if mime in o.get("data", {}):
                out.append(o["data"][mime])
    return out


def _errors(nb):
    return [f"{o['ename']}: {o['evalue']}" for o in _outputs(nb) if o.get("output_type") == "error"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every notebook executed once on the small benchmark, plus the two variants, in parallel.

    Keys: the notebook names, ``"selective_ood"`` (an out-of-distribution
    dataset left out of ``datasets``, and a computation score) and
    ``"test_auroc_nosplit"`` (a CSV without a ``split`` column).
    """
    tmp = tmp_path_factory.mktemp("notebooks")
    data = _small_benchmark(tmp / "small.csv")
    common = {"data": data, "overrides": {"n_repeats": 3, "random_state": 1}}
    jobs = {name: (name, dict(common, model=MODEL) if name in PER_MODEL else common) for name in NAMES}
    jobs["selective_ood"] = (
        "selective_answering",
        dict(
            common,
            model=MODEL,
            overrides=dict(
                common["overrides"],
                datasets=["wine", "iris_versicolor"],
                ood_dataset="breast_cancer",
                computation_score=0.5,
            ),
        ),
    )
    jobs["test_auroc_nosplit"] = (
        "test_auroc",
        dict(
            common,
            data=_small_benchmark(tmp / "nosplit.csv", split=False),
            model=MODEL,
            overrides=dict(common["overrides"], noise_repeats=2),
            n_dashboards=2,
        ),
    )
    # given a saved evaluation, a notebook reads it and computes nothing: its `data` does not even exist
    evaluation = beyondauc.evaluate(data, n_repeats=3, random_state=1, tolerance=0.8).save(tmp / "evaluation")
    for name in NAMES:
        params = {"evaluation": str(evaluation), "data": str(tmp / "absent.csv"), "overrides": {"tolerance": 0.5}}
        jobs[f"{name}_evaluation"] = (name, dict(params, model=MODEL) if name in PER_MODEL else params)
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            key: pool.submit(_execute, name, tmp / f"{key}.ipynb", params) for key, (name, params) in jobs.items()
        }
        return {key: f.result() for key, f in futures.items()}


@pytest.mark.parametrize("name", NAMES)
def test_executes_without_error(runs, name):
    assert _errors(runs[name]) == []
    injected = [c for c in runs[name].cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "small.csv" in injected[0].source


@pytest.mark.parametrize("mime, marker", [("text/html", "<table"), ("image/png", "")])
@pytest.mark.parametrize("name", NAMES)
def test_outputs_hold_html_tables_and_png_figures(runs, name, mime, marker):
    found = [o["data"][mime] for o in _outputs(runs[name]) if mime in o.get("data", {})]
    assert any(marker in f for f in found), f"no {mime} output"


@pytest.mark.parametrize("name", PER_MODEL)
def test_per_model_outputs_name_the_model_and_its_datasets(runs, name):
    text = "\n".join(_texts(runs[name]))
    assert MODEL in text
    for dataset in DATASETS:
        assert dataset in text


@pytest.mark.parametrize("name", NAMES)
def test_outputs_show_no_object_reprs(runs, name):
    """A Display left as a cell's last value would print ``<beyondauc.plots... at 0x...>``.

    What a reader sees of an output is its richest representation (a table's HTML, a
    figure's PNG); the plain-text fallback counts only when it is all there is.
    """
    for o in _outputs(runs[name]):
        data = o.get("data", {})
        shown = [data[m] for m in ("text/html", "text/markdown", "image/png") if m in data]
        texts = shown or [data.get("text/plain", ""), o.get("text", "")]
        for text in texts:
            assert " at 0x" not in text, text[:200]


@pytest.mark.parametrize("name", NAMES)
def test_reads_a_saved_evaluation_and_computes_nothing(runs, name):
    nb = runs[f"{name}_evaluation"]
    assert _errors(nb) == []
    text = "\n".join(_texts(nb))
    for model in (MODEL,) if name in PER_MODEL else MODELS:
        assert model in text
    if name == "selective_answering":  # the evaluation's own tolerance, not the notebook's parameter
        assert "tolerance t = 0.8" in text


def test_overview_shows_every_model(runs):
    text = "\n".join(_texts(runs["overview"]))
    for model in MODELS:
        assert model in text


def test_overview_shows_the_pairwise_matrix_and_the_friedman_test(runs):
    """The evaluation's pairwise differences and Friedman tests are shown, with the statistic and p-value its
    table holds; the model reports give the DeLong interval of the AUC on every dataset."""
    for key in ("overview", "overview_evaluation"):
        alts = _figure_alts(runs[key])
        assert sum(a.startswith("Accuracy difference of every pair of models") for a in alts) == 1
        assert sum(a.startswith("Critical-difference diagram") for a in alts) == 1
    injected = next(c for c in runs["overview_evaluation"].cells if "injected-parameters" in c.metadata.get("tags", []))
    evaluation = beyondauc.open_evaluation(re.search(r'^evaluation = "(.*)"$', injected.source, re.M).group(1))
    test = evaluation.table("friedman").drop_duplicates("value").set_index("value")
    said = next(t for t in _texts(runs["overview_evaluation"]) if t.startswith("Friedman test over"))
    assert (
        f"by accuracy, chi-square = {test.loc['accuracy', 'statistic']:.2f}, "
        f"p = {test.loc['accuracy', 'pvalue']:.2g}" in said
    )
    assert f"CD = {test.loc['accuracy', 'critical_difference']:.2f}" in said
    html = "\n".join(_texts(runs["auc_vs_accuracy_evaluation"]))
    delong = evaluation.table("auc_intervals").query("model == @MODEL")
    assert "DeLong confidence interval" in html
    for value in delong["auc_low"].round(3):
        assert f"{value:.3f}" in html


def _figure_alts(nb):
    return [o["metadata"]["image/png"].get("alt", "") for o in _outputs(nb) if "image/png" in o.get("data", {})]


def test_every_model_figure_is_drawn_once_in_the_overview(runs):
    """A figure that is the same in every model's report (b over tolerance for every model) is
    drawn once, in the overview, not once per model."""
    every = "b over the tolerance grid for every model, one panel per dataset"
    assert _figure_alts(runs["overview"]).count(every) == 1
    for name in ("summary", "auc_vs_accuracy", "test_auroc", "selective_answering"):
        assert every not in _figure_alts(runs[name])


def test_selective_with_ood_dataset_computes_nidma(runs):
    nb = runs["selective_ood"]
    assert _errors(nb) == []
    bench = beyondauc.load_benchmark(_small_benchmark_frame())
    tables = [t for t in _texts(nb) if "NiDMA" in t and "<table" not in t]  # the plain-text repr of the table
    assert len(tables) == 1 and "None" not in tables[0] and "NaN" not in tables[0]
    shown = [float(x.replace("\u2212", "-")) for x in re.findall(r"[-\u2212]?\d+\.\d+", tables[0])]
    for dataset in ("wine", "iris_versicolor"):
        r = beyondauc.selective_answering(
            bench, MODEL, dataset, ood_dataset="breast_cancer", computation_score=0.5, random_state=1
        )
        for value in (r.nidma, r.didma, r.disca_ood.score):
            assert any(abs(x - value) < 6e-4 for x in shown), (dataset, value, tables[0])
    # the OOD dataset is not analysed as an in-distribution one
    assert not any(t.startswith("### breast_cancer") for t in _texts(nb))
    # the coverage curves of the two datasets, the calibration of the given confidence (this model's scores are
    # probabilities), the OOD curves (b over tolerance is in the overview) and the certified thresholds of
    # abstention with a guarantee
    assert sum("image/png" in o.get("data", {}) for o in _outputs(nb)) == 4
    summary = [t for t in _texts(nb) if "DiSCA rank" in t and "<table" not in t]
    assert summary and "breast_cancer" not in summary[0]


def test_selective_shows_abstention_with_a_guarantee_from_the_evaluation(runs):
    nb = runs["selective_answering_evaluation"]
    cells = nb.cells
    at = next(
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and c.source.startswith("## Abstaining with a guarantee")
    )
    figure = [o for o in cells[at + 1].get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(figure) == 1
    table = [o["data"]["text/plain"] for o in cells[at + 3].get("outputs", []) if "text/html" in o.get("data", {})]
    assert len(table) == 1 and "realised risk" in table[0]
    rc = beyondauc.load_evaluation(_evaluation_folder(nb)).table("risk_control")
    from beyondauc.evaluation.abstention import headline_risk

    headline = headline_risk(rc["target_risk"].unique())
    mine = rc[(rc["model"] == MODEL) & (rc["target_risk"] == headline)]  # the report shows the headline risk
    assert len(mine)
    for value in mine["realised_risk"].dropna():  # every realised risk of the evaluation's table, as shown
        assert f"{value:.3f}" in table[0]
    assert set(mine["dataset"]) == set(DATASETS)


def _evaluation_folder(nb):
    """The ``evaluation`` papermill injected into an executed notebook."""
    return nb.metadata.papermill.parameters["evaluation"]


def test_test_auroc_without_split_column_falls_back_to_xdomain(runs):
    nb = runs["test_auroc_nosplit"]
    assert _errors(nb) == []
    tables = [t for t in _texts(nb) if "Wasserstein W" in t and "<table" not in t]
    assert tables and "xdomain" in tables[0] and "split" not in tables[0]
    # full dashboards for the two datasets with the largest drift (n_dashboards=2), largest first
    assert sum("image/png" in o.get("data", {}) for o in _outputs(nb)) == 2
    mine = [t for t in _texts(nb) if t.startswith("Dashboards for ")]
    assert len(mine) == 1 and mine[0].endswith("(largest drift first).")


def test_test_auroc_draws_one_dashboard_by_default(runs):
    """By default the one dashboard is of the dataset where the model drifts most."""
    nb = runs["test_auroc_evaluation"]
    assert sum("image/png" in o.get("data", {}) for o in _outputs(nb)) == 1
    said = [t for t in _texts(nb) if t.startswith("Dashboard")]
    assert len(said) == 1 and "largest drift first" not in said[0]
    diag = beyondauc.load_evaluation(nb.metadata.papermill.parameters["evaluation"]).table("diagnostics")
    worst = diag[diag["model"] == MODEL].sort_values("drift", ascending=False).iloc[0]["dataset"]
    assert said[0] == f"Dashboard for {markdown_text(worst)}."


def test_a_report_kernel_skips_the_fitting_libraries():
    """What a report kernel imports to read an evaluation and draw leaves out scikit-learn and
    scipy.stats/optimize/sparse (about 0.8 s per kernel and report worker); the functions that
    fit or test import them when they run."""
    import subprocess
    import sys

    code = (
        "import sys, beyondauc, beyondauc.plots, beyondauc.report, beyondauc.report.notebook; "
        "print(sorted(m for m in ('sklearn', 'scipy.stats', 'scipy.optimize', 'scipy.sparse') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = (
        "import sys, beyondauc as ba; ba.auc_ci([0, 1, 1, 0], [0.1, 0.8, 0.7, 0.3]); "
        "print('scipy.stats' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "True"
    )


def test_a_computation_pool_forks_with_the_fitting_libraries_imported():
    """The pools fork after importing what their workers fit with, so no worker imports it again."""
    import subprocess
    import sys

    code = (
        "import sys, beyondauc.utils.parallel as p; p.pool_context(); "
        "print(all(m in sys.modules for m in p.FITTING_MODULES))"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "True"
    )


@pytest.mark.parametrize("name", NAMES)
def test_the_runner_reads_the_parameters_papermill_lists(name):
    from beyondauc.evaluation.parameters import declared_parameters

    path = NOTEBOOKS / f"{name}.ipynb"
    assert list(declared_parameters(path)) == list(papermill.inspect_notebook(str(path)))
