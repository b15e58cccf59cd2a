"""The one parameter table: every evaluation and notebook parameter with its default, check,
help and CLI flag, and the few parameters of the notebooks themselves.

Everything else derives from it: :data:`EVALUATION_PARAMETERS` (the keywords of
:func:`~beyondauc.evaluate`), the evaluation's checks
(:func:`check_evaluation_parameters`), the runner's check of ``-p NAME=VALUE``
before any Jupyter kernel starts (:func:`check_parameters`), the CLI's options and
``--help`` (:func:`cli_flag`), and the table in ``notebooks/README.md``
(:func:`parameters_markdown`); the checks that need the data are in
:mod:`beyondauc.evaluation.benchmark_checks`. A test keeps the notebooks' ``parameters`` cells
equal to it.  Adding an evaluation parameter is one entry here: the notebooks
take every evaluation parameter through one ``overrides`` dict, so no notebook
changes.

Every check takes ``(value, name)`` and returns the value (normalised) or raises
a one-line ``ValueError`` naming the parameter, what was expected and what was got.
"""

from __future__ import annotations

import difflib
import functools
import numbers
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..data.readers import read_domains
from ..metrics import METHODS, PROTOCOLS
from ..metrics.diagnostics.cohorts import NOISE_METHODS
from ..metrics.selective.benchmark_confidence import SELECTIVE_PROTOCOLS
from ..metrics.selective.risk_control import RISK_CONTROL_METHODS
from ..metrics.uncertainty.bootstrap import check_bootstrap
from ..metrics.uncertainty.cells import check_cells
from ..utils.validation import check_int, check_names, check_number, check_option, check_random_state

__all__ = [
    "EVALUATION_PARAMETERS",
    "PARAMETERS",
    "Parameter",
    "check_evaluation_parameters",
    "cli_flag",
    "parameters_markdown",
]

#: What ``nan_policy`` may be: stop at a NaN/inf score, or drop its row.
NAN_POLICIES = ("raise", "drop")

#: The parameters that say how to read an LLM harness's logs (:mod:`beyondauc.data.logs`).
LOG_PARAMETERS = ("correct_metric", "scorer", "confidence_field")

#: The notebooks that run per model, and the one about the whole benchmark.
MODEL_NOTEBOOKS = ("summary", "auc_vs_accuracy", "test_auroc", "selective_answering")
ALL_NOTEBOOKS = (*MODEL_NOTEBOOKS, "overview")


@dataclass(frozen=True)
class Parameter:
    """One parameter: ``check(value, name)`` returns the value (normalised) or raises.

    ``evaluation`` marks a keyword of :func:`~beyondauc.evaluate` (the others are
    the notebooks' own); ``notebooks`` lists the notebooks whose ``parameters``
    cell declares it: only the notebooks' own parameters (``evaluation``,
    ``data``, ``model``, ``overrides`` and view options), since a notebook
    takes every evaluation parameter through ``overrides``; ``aliases`` are
    older CLI spellings that still work.
    """

    name: str
    default: object
    check: Callable[[object, str], object]
    help: str
    evaluation: bool = True
    notebooks: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        """The CLI option: the name with dashes (``n_bootstrap`` -> ``--n-bootstrap``)."""
        return cli_flag(self.name)


def cli_flag(name: str) -> str:
    """``--`` and the API name with dashes: the CLI spells every parameter as the API does."""
    return "--" + name.replace("_", "-")


def _str(value, name):
    if not isinstance(value, str):
        raise ValueError(f"`{name}` must be a str, got {value!r}")
    return value


def _optional(check):
    def optional(value, name):
        return None if value is None else check(value, name)

    return optional


def _names(value, name):
    if isinstance(value, (list, tuple)) and not all(isinstance(v, str) for v in value):
        raise ValueError(f"`{name}` must be a list of str or None, got {value!r}")
    try:
        return check_names(value, name)
    except TypeError as exc:
        raise ValueError(f"`{name}` must be a list of str or None, got {value!r}") from exc


def _label(value, name):
    if value is None or isinstance(value, (str, numbers.Integral, np.integer)):  # bool is an Integral too
        return value
    raise ValueError(f"`{name}` must be a str, int or bool, got {value!r}")


def _option(options):
    return lambda value, name: check_option(value, name, options)


def _int(minimum):
    return lambda value, name: check_int(value, name, minimum=minimum)


def _number(**bounds):
    return lambda value, name: check_number(value, name, **bounds)


def _seed(value, name):
    check_random_state(value)
    return value


def _replicates(value, name):
    return check_bootstrap(value, 0.95)[0]  # the bound, and what more would cost, before any work


def _dataset_name(value, name):
    if value is not None and not isinstance(value, str):
        raise ValueError(f"`{name}` must be a dataset name (str) or None, got {value!r}")
    return value


def _split(value, name):
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise ValueError(f"`{name}` must be a split value (str), got {value!r}")
    return str(value)


def _domain_map(value, name):
    """None, or dataset -> domain (str -> str); a path is read with :func:`~beyondauc.data.readers.read_domains`."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        return read_domains(value)
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(
            f"`{name}` must be a mapping dataset -> domain (str -> str), a JSON or CSV file of one, "
            f"or None, got {value!r}"
        )
    return dict(value)


def _data(value, name):
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"`{name}` must be 'demo' or a path, got {value!r}")
    return value


def _risks(value, name):
    """One or more target risks in (0, 1), as a tuple in the order given (a CLI VALUE may be '0.05,0.1')."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
        try:
            value = [float(v) for v in value]
        except ValueError:
            raise ValueError(f"`{name}` must be numbers in (0, 1) such as 0.05,0.1,0.2, got {value!r}") from None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"`{name}` must be one or more numbers in (0, 1), got {value!r}")
    out = tuple(check_number(v, name, low=0, high=1, low_open=True, high_open=True) for v in value)
    if len(set(out)) < len(out):
        raise ValueError(f"`{name}` must not repeat a risk, got {value!r}")
    return out


def _overrides(value, name):
    """None, or evaluation parameter -> value (each checked as the table says)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"`{name}` must be a dict of evaluation parameters or None, got {value!r}")
    return check_parameters(value, known=EVALUATION_PARAMETERS, what="evaluation parameter")


def _cells(value, name):
    """None, or an int >= 2 (a CLI VALUE may be 'None')."""
    if isinstance(value, str):
        if value.strip().lower() == "none":
            return None
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f"`{name}` must be an int >= 2 or None, got {value!r}") from None
    return check_cells(value, name)


_UNIT = dict(low=0, high=1, low_open=True)
_P = Parameter
_TABLE = (
    _P(
        "evaluation",
        None,
        _optional(_data),
        "a saved evaluation to display (None: compute it here from `data`)",
        False,
        ALL_NOTEBOOKS,
    ),
    _P(
        "data",
        "demo",
        _data,
        'the benchmark to evaluate when `evaluation` is None: "demo", a file or a folder',
        False,
        ALL_NOTEBOOKS,
    ),
    _P("models", None, _names, "models to evaluate (None: all)"),
    _P("datasets", None, _names, "datasets to analyse (None: all)"),
    _P("pos_label", None, _label, "positive label when labels are not 0/1, -1/1 or booleans"),
    _P(
        "domains",
        None,
        _domain_map,
        "dataset -> domain, as a mapping or a JSON/CSV file (None: the 'domain' column "
        "or the TRUE names; without a domain per dataset, outdomain and indomain are left out)",
    ),
    _P(
        "nan_policy",
        "raise",
        _option(NAN_POLICIES),
        "NaN/inf scores: 'raise' an error naming the row, or 'drop' those rows with a warning",
    ),
    _P(
        "correct_metric",
        None,
        _optional(_str),
        "LLM logs: the per-sample metric saying whether an answer is "
        "correct (None: 'acc' for lm-evaluation-harness, 'exact_match' for HELM)",
    ),
    _P(
        "scorer",
        None,
        _optional(_str),
        "Inspect AI logs: the scorer saying whether an answer is correct (None: the log's first)",
    ),
    _P(
        "confidence_field",
        None,
        _optional(_str),
        "Inspect AI logs: the sample metadata field holding the "
        "confidence (None: the output's probability from its token log-probs)",
    ),
    _P(
        "correct_threshold",
        0.5,
        _number(**_UNIT),
        "graded answers (correct a quality in [0, 1]) count as right at a "
        "quality of at least it wherever a yes/no answer is needed; AURC, E-AURC, AUGRC and PRR use 1 - quality",
    ),
    _P("protocol", "xdomain", _option(PROTOCOLS), "calibration protocol of the headline expected accuracy"),
    _P("method", "logistic", _option(METHODS), "calibration method of the headline expected accuracy"),
    _P("class_weight", None, _option((None, "balanced")), 'None or "balanced" for every calibrator'),
    _P("n_repeats", 20, _int(1), "repeats of the indata protocol", aliases=("--repeats",)),
    _P("random_state", 0, _seed, "seed for every random choice", aliases=("--seed",)),
    _P(
        "baseline",
        None,
        _optional(_str),
        "model every report compares with: ΔAUC (paired DeLong), Δ accuracy, "
        "kappa, DiSCA and drift (paired bootstrap) per dataset (None: the best other model by mean AUC)",
    ),
    _P("ood_dataset", None, _dataset_name, "out-of-distribution dataset for DiSCA(OOD) and NiDMA (None: none)"),
    _P("tolerance", 0.9, _number(**_UNIT), "worst admissible accuracy t of b(t)"),
    _P(
        "computation_score",
        None,
        _optional(_number(low=0)),
        "DiDMA's computation score, e.g. 1/energy (None: no DiDMA/NiDMA)",
    ),
    _P(
        "selective_protocol",
        "auto",
        _option(("auto", *SELECTIVE_PROTOCOLS)),
        "where the selective-answering confidences come from: a calibration protocol, 'none' (as given) or 'auto' "
        "('none' for answers, 'indata' for scores)",
    ),
    _P("selective_method", "logistic", _option(METHODS), "calibration method of the selective-answering confidences"),
    _P("resolution", 0.01, _number(**_UNIT), "confidence step of the coverage-accuracy grid"),
    _P(
        "cohort_protocol",
        None,
        _option((None, "split", *PROTOCOLS)),
        "cohorts: None: the split column if present, else xdomain (indata for one dataset); or a protocol",
    ),
    _P("val_split", "val", _split, "split value of the validation cohort V"),
    _P("test_split", "test", _split, "split value of the test cohort T"),
    _P(
        "sigma_max",
        None,
        _optional(_number(low=0, low_open=True)),
        "largest bias/noise sigma (None: the score range of V and T together)",
    ),
    _P("n_points", 21, _int(2), "sigma grid points of the robustness curves", aliases=("--points",)),
    _P(
        "noise_method",
        "exact",
        _option(NOISE_METHODS),
        "noise robustness: 'exact' (no draws) or 'monte_carlo' (seeded draws, as testAUC)",
    ),
    _P("noise_repeats", 20, _int(1), "Monte Carlo draws per sigma for the noise robustness (monte_carlo method only)"),
    _P("p", 2, _option((1, 2)), "order of the Wasserstein distance (1 or 2)"),
    _P("bins", 20, _int(1), "histogram bins"),
    _P(
        "n_bootstrap",
        200,
        _replicates,
        "bootstrap replicates behind every interval (0: none)",
        aliases=("--bootstrap",),
    ),
    _P(
        "cells",
        None,
        _cells,
        "cells per model, dataset and class the bootstrap, its jackknife and the drift "
        "permutations run on: the distinct scores when fewer, else quantile cells (None: every distinct score); "
        "point estimates stay exact",
    ),
    _P(
        "confidence_level",
        0.95,
        _number(low=0, high=1, low_open=True, high_open=True),
        "confidence level of every interval",
    ),
    _P(
        "n_permutations",
        199,
        _int(0),
        "permutations behind the p-values of drift and W: cohorts shuffled within "
        "class, is there drift at all? (0: none; the interval alone then decides a drift finding)",
    ),
    _P("target_risks", (0.05, 0.1, 0.2), _risks, "target risks of abstention with a guarantee (risk_control table)"),
    _P(
        "risk_delta",
        0.05,
        _number(low=0, high=1, low_open=True, high_open=True),
        "admissible probability delta that a certified risk is exceeded",
    ),
    _P(
        "risk_method",
        "ltt",
        _option(RISK_CONTROL_METHODS),
        "how thresholds are certified: 'ltt' (Learn-then-Test) or 'sgr' (Selection with Guaranteed Risk)",
    ),
    _P("model", "svm", _str, "the model this notebook is about", False, MODEL_NOTEBOOKS),
    _P(
        "n_dashboards",
        1,
        _int(-1),
        "full dashboards for the datasets with the largest drift (-1: all)",
        False,
        ("test_auroc",),
    ),
    _P(
        "overrides",
        None,
        _overrides,
        "evaluation parameters other than their defaults when computing here, "
        'e.g. {"datasets": ["wine"], "n_bootstrap": 0} (the table in notebooks/README.md)',
        False,
        ALL_NOTEBOOKS,
    ),
)

#: name -> Parameter: every parameter of an evaluation and of the notebooks.
PARAMETERS = {p.name: p for p in _TABLE}

#: Every parameter of an evaluation with its default (the notebooks declare the same names).
EVALUATION_PARAMETERS = {p.name: p.default for p in _TABLE if p.evaluation}


def _check_one(param, value):
    try:
        return param.check(value, param.name)
    except TypeError as exc:  # a check met a value of an unexpected kind
        raise ValueError(f"`{param.name}` got {value!r}: {exc}") from None


def check_evaluation_parameters(parameters: Mapping[str, object]) -> dict[str, object]:
    """Validate evaluation parameters; return them complete (defaults filled) and normalised.

    Unknown names are errors naming the closest valid ones; each value is
    checked against what it must be, with a one-line message naming it.

    Examples
    --------
    >>> from beyondauc.evaluation.parameters import check_evaluation_parameters
    >>> check_evaluation_parameters({"tolerance": 0.8})["tolerance"]
    0.8
    >>> check_evaluation_parameters({"tolerance": 1.5})
    Traceback (most recent call last):
    ...
    ValueError: `tolerance` must be a number in (0, 1], got 1.5
    """
    unknown = [k for k in parameters if k not in EVALUATION_PARAMETERS]
    if unknown:
        k = unknown[0]
        close = difflib.get_close_matches(str(k), list(EVALUATION_PARAMETERS), n=3)
        hint = (
            f"; did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else f"; known: {', '.join(EVALUATION_PARAMETERS)}"
        )
        raise ValueError(f"unknown parameter {k!r}{hint}")
    p: dict[str, Any] = {**EVALUATION_PARAMETERS, **parameters}
    for name in EVALUATION_PARAMETERS:
        p[name] = _check_one(PARAMETERS[name], p[name])
    p["n_bootstrap"], p["confidence_level"] = check_bootstrap(p["n_bootstrap"], p["confidence_level"])
    return p


def check_parameters(
    values: Mapping[str, object], *, known: Iterable[str] | None = None, what: str = "parameter"
) -> dict[str, object]:
    """Validate ``values`` (name -> value) against the table; return them in a new dict.

    ``known`` are the names allowed (default: every name of the table); an
    unknown name raises naming the closest valid ones. Names without an entry
    in the table are only checked to be known.
    """
    known = tuple(PARAMETERS) if known is None else tuple(known)
    out = {}
    for name, value in values.items():
        if name not in known:
            raise ValueError(unknown_message(name, known, what=what))
        if name in PARAMETERS:
            _check_one(PARAMETERS[name], value)
        out[name] = value
    return out


def parameters_markdown() -> str:
    """The table of ``notebooks/README.md``: name, default, meaning (a test keeps the file equal to it)."""
    rows = ["| name | default | meaning | set in |", "|---|---|---|---|"]
    own = [p for p in _TABLE if p.notebooks]
    for p in [*own, *(p for p in _TABLE if p.evaluation)]:
        default = f'"{p.default}"' if isinstance(p.default, str) else repr(p.default)
        where = "the `parameters` cell" if p.notebooks else "`overrides`"
        if p.notebooks and set(p.notebooks) != set(ALL_NOTEBOOKS):
            where += " of " + ", ".join(f"`{n}`" for n in p.notebooks)
        rows.append(f"| `{p.name}` | `{default}` | {p.help} | {where} |")
    return "\n".join(rows)


def unknown_message(name: object, known: Iterable[str], *, what: str = "parameter") -> str:
    """``unknown parameter 'x'; did you mean 'y'? (valid: ...)``."""
    close = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {what} {name!r}{hint} (valid: {', '.join(sorted(known))})"


def declared_parameters(notebook: str | os.PathLike) -> tuple[str, ...]:
    """The names of the parameters a notebook declares, in order (cached by file state).

    They are the names its ``parameters`` cell assigns at top level: the cell
    papermill injects after, and whose assignments ``papermill
    --help-notebook`` lists (a test keeps the two equal).  Read with ``ast``
    rather than ``papermill.inspect_notebook``, whose import (about 0.7 s)
    would come before any check of a run's parameters.
    """
    path = Path(notebook).resolve()
    stat = path.stat()
    return _inspect(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _inspect(path, mtime_ns, size):
    import ast
    import json

    with open(path, encoding="utf-8") as f:
        cells = json.load(f).get("cells", [])
    names = []
    for cell in cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            for node in ast.parse(source).body:
                targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
                names += [t.id for t in targets if isinstance(t, ast.Name)]
            break
    return tuple(dict.fromkeys(names))
