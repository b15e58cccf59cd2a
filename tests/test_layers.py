"""The package's structure is its architecture: layers that import only downward, no cycles,
modules and functions of one job each (issue 22; docs/design.md).

The layers contract itself lives in pyproject.toml (``[tool.importlinter]``); these tests run
import-linter on it, and check with grimp (import-linter's graph) what a layers contract
cannot see: cycles inside a layer, function-level imports included.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import beyondauc

PACKAGE = Path(beyondauc.__file__).resolve().parent
REPO = PACKAGE.parents[1]
SUBPACKAGES = ("utils", "data", "metrics", "evaluation", "plots", "report", "cli")


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py"))


def test_import_linter_contract_is_kept():
    """`lint-imports` on pyproject.toml's layers contract (cli > plots | report > evaluation > metrics > data > utils)."""
    pytest.importorskip("importlinter")
    proc = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout


def test_the_contract_names_every_subpackage():
    import tomllib

    conf = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    contract, analyses = conf["contracts"]
    named = {name.strip() for layer in contract["layers"] for name in layer.split("|")}
    assert named == set(SUBPACKAGES) and contract["type"] == "layers" and contract["exhaustive"] is True
    # inside metrics, one subpackage per analysis, ordered by the second contract; no module left loose
    named = {name.strip() for layer in analyses["layers"] for name in layer.split("|")}
    folders = {p.parent.name for p in (PACKAGE / "metrics").glob("*/__init__.py")}
    assert analyses["containers"] == ["beyondauc.metrics"] and analyses["exhaustive"] is True
    assert named == folders == {"core", "uncertainty", "calibration", "diagnostics", "selective"}
    assert [p.name for p in (PACKAGE / "metrics").glob("*.py")] == ["__init__.py"]


def _graph():
    grimp = pytest.importorskip("grimp")
    return grimp.build_graph("beyondauc")  # every import statement, function-level ones included


def test_no_import_cycles_function_level_imports_included():
    graph = _graph()
    modules = sorted(m for m in graph.modules if m.startswith("beyondauc"))
    edges = {
        m: sorted(d for d in graph.find_modules_directly_imported_by(m) if d.startswith("beyondauc")) for m in modules
    }
    cycles = [(a, b) for a in modules for b in edges[a] if a != b and graph.chain_exists(importer=b, imported=a)]
    assert cycles == []


def test_a_layer_never_imports_one_above_it():
    """The same rule as the contract, checked on grimp's graph: a failure names the import."""
    graph = _graph()
    rank = {"utils": 0, "data": 1, "metrics": 2, "evaluation": 3, "plots": 4, "report": 4, "cli": 5}
    wrong = []
    for module in graph.modules:
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in rank:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            other = imported.split(".")
            if (
                other[0] == "beyondauc"
                and len(other) > 1
                and other[1] in rank
                and other[1] != parts[1]
                and rank[other[1]] >= rank[parts[1]]
            ):
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def _code_lines(source_lines, node):
    lines = source_lines[node.lineno - 1 : node.end_lineno]
    body = node.body
    doc = 0
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        doc = body[0].end_lineno - body[0].lineno + 1
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#")) - doc


MAX_MODULE_LINES = 600
MAX_FUNCTION_CODE_LINES = 60
MAX_PARAMETERS = 8
MAX_POSITIONAL_OF_ENTRY_POINT = 4


def long_modules_and_functions():
    """Modules over 600 lines and functions over 60 lines of code (docstring, comments, blank lines left out)."""
    long_modules, long_functions = [], []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(PACKAGE)
        if text.count("\n") > MAX_MODULE_LINES:
            long_modules.append(str(rel))
        lines = text.split("\n")
        for node in ast.walk(ast.parse(text)):
            is_function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            if is_function and _code_lines(lines, node) > MAX_FUNCTION_CODE_LINES:
                long_functions.append(f"{rel}:{node.lineno} {node.name}")
    return long_modules, long_functions


def test_no_module_over_600_lines_and_no_function_over_60_lines_of_code():
    assert long_modules_and_functions() == ([], [])


def _entry_points():
    """Qualified names whose keyword options may be many: the public functions of the package and of its
    layers, and the constructors of their public classes (a Display's ``__init__``, ``from_predictions``)."""
    names = set()
    spaces = [beyondauc] + [importlib.import_module(f"beyondauc.{sub}") for sub in SUBPACKAGES]
    for namespace, name in [(space, name) for space in spaces for name in getattr(space, "__all__", ())]:
        obj = getattr(namespace, name)
        if isinstance(obj, type):
            names |= {
                f"{obj.__module__}.{obj.__qualname__}.{m}"
                for m in vars(obj)
                if not m.startswith("_") or m == "__init__"
            }
        elif callable(obj):
            names.add(f"{obj.__module__}.{obj.__qualname__}")
    return names


def _functions_with_qualnames(tree, module):
    """(qualified name, node) of every function: module level, methods, and nested ones by their own name."""
    named = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            named.append((f"{module}.{node.name}", node))
        elif isinstance(node, ast.ClassDef):
            named += [
                (f"{module}.{node.name}.{item.name}", item)
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
    seen = {id(node) for _, node in named}
    nested = [
        (f"{module}.<nested>.{node.name}", node)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in seen
    ]
    return named + nested


def functions_with_too_many_parameters():
    """Functions with more than 8 parameters (``self``/``cls`` not counted), unless they are a public entry
    point whose parameters past the first four positional ones are keyword-only options."""
    entry = _entry_points()
    wrong = set()
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        module = ".".join(("beyondauc", *rel.with_suffix("").parts)).removesuffix(".__init__")
        for qualname, node in _functions_with_qualnames(ast.parse(path.read_text(encoding="utf-8")), module):
            a = node.args
            positional = [x for x in a.posonlyargs + a.args if x.arg not in ("self", "cls")]
            count = len(positional) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            if count <= MAX_PARAMETERS:
                continue
            if qualname in entry and len(positional) <= MAX_POSITIONAL_OF_ENTRY_POINT:
                continue
            wrong.add(f"{rel}:{node.lineno} {node.name} ({count} parameters)")
    return sorted(wrong)


def test_no_function_over_8_parameters_but_the_public_entry_points_keyword_options():
    assert functions_with_too_many_parameters() == []


def private_names_imported_from_another_module():
    """``from beyondauc... import _name`` (or a relative one) anywhere in the package, tests, benchmarks and scripts.

    A name another module needs is public in its subpackage; a leading underscore means "this module only"."""
    found = []
    for folder in ("toolkit", "tests", "benchmarks", "scripts"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                ours = isinstance(node, ast.ImportFrom) and (
                    node.level > 0 or (node.module or "").startswith("beyondauc")
                )
                found += [
                    f"{path.relative_to(REPO)}: {alias.name}"
                    for alias in (node.names if ours else ())
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    return found


def test_no_private_name_is_imported_from_another_module():
    assert private_names_imported_from_another_module() == []


def _private_imports_across_subpackages():
    names = set()
    for path in _modules():
        rel = path.relative_to(PACKAGE).parts
        here = rel[0] if len(rel) > 1 else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 0:
                if not (node.module or "").startswith("beyondauc."):
                    continue
                there = node.module.split(".")[1]
            else:
                base = list(rel[:-1])[: len(rel) - 1 - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                there = target[0] if target else None
            if there == here or there is None:
                continue
            names.update(a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__"))
    return names


def test_no_private_name_crosses_subpackages():
    """A layer uses another only through names it means to share (the issue allows 15; none remain)."""
    assert sorted(_private_imports_across_subpackages()) == []


def test_every_subpackage_is_an_attribute_of_the_package():
    """`ba.plots` and the other layers tab-complete in Jupyter and import on first use."""
    code = (
        "import beyondauc as ba; names = dir(ba); "
        f"assert all(s in names for s in {SUBPACKAGES!r}), names; "
        "assert ba.plots.DriftDisplay.__module__ == 'beyondauc.plots.diagnostics'; print('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr


def test_the_public_api_is_the_layers_public_names():
    """Every name of ``beyondauc.__all__`` is the object its layer exports (one public surface, grouped by layer)."""
    import importlib

    exported = {}
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"beyondauc.{sub}")
        for name in getattr(module, "__all__", ()):
            exported[id(getattr(module, name))] = f"{sub}.{name}"
    constants = (str, int, float, tuple, dict)  # equal values may be distinct objects; check those by name
    missing = [
        n
        for n in beyondauc.__all__
        if n != "__version__"
        and id(getattr(beyondauc, n)) not in exported
        and not isinstance(getattr(beyondauc, n), constants)
    ]
    assert missing == []  # e.g. show_figure is beyondauc.report.show under a clearer name


def _unannotated(func, owner):
    import inspect

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    missing = [
        f"{owner}({p.name})"
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    if sig.return_annotation is inspect.Signature.empty and getattr(func, "__name__", "") != "__init__":
        missing.append(f"{owner} -> return")
    return missing


def test_every_public_function_and_method_has_type_hints():
    """The public API (each layer's ``__all__``) is typed, and ``py.typed`` says so (PEP 561)."""
    import importlib
    import inspect

    assert (PACKAGE / "py.typed").is_file()
    missing = []
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"beyondauc.{sub}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                missing += _unannotated(obj, f"{sub}.{name}")
            elif inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if (
                        inspect.isfunction(member)
                        and (not attr.startswith("_") or attr == "__init__")
                        and member.__qualname__.startswith(obj.__qualname__)
                    ):
                        missing += _unannotated(member, f"{sub}.{name}.{attr}")
    assert missing == []
