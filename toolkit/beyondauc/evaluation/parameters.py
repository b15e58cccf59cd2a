"""The analysis parameters of the reports: one table of checks, defaults and help.

Private. The report runner validates ``-p NAME=VALUE`` against it before any
kernel starts, and the notebooks' ``parameters`` cells declare the same names
with the same defaults (a test keeps them in step). Every check takes the value
and returns it (normalised) or raises a one-line ``ValueError`` naming the
parameter, what was expected and what was got.
"""

from __future__ import annotations

import difflib
import functools
import numbers
import os
from dataclasses import dataclass
from pathlib import Path

from ..utils.validation import check_int, check_number, check_option
from ..metrics.calibration import PROTOCOLS

__all__: list[str] = []


@dataclass(frozen=True)
class Parameter:
    """One analysis parameter: ``check(value, name)`` returns the value or raises."""

    check: object
    default: object
    help: str


def _str(value, name):
    if not isinstance(value, str):
        raise ValueError(f"`{name}` must be a str, got {value!r}")
    return value


def _optional(check):
    def optional(value, name):
        return None if value is None else check(value, name)

    return optional


def _str_list(value, name):
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"`{name}` must be a list of str or None, got {value!r}")
    return list(value)


def _label(value, name):
    if isinstance(value, (str, numbers.Real)):  # bool is a Real too
        return value
    raise ValueError(f"`{name}` must be a str, int, bool or None, got {value!r}")


def _option(options):
    return lambda value, name: check_option(value, name, options)


def _int(minimum):
    return lambda value, name: check_int(value, name, minimum=minimum)


def _number(**bounds):
    return lambda value, name: check_number(value, name, **bounds)


def _cohort_protocol(value, name):
    return check_option(value, name, (*PROTOCOLS, "split"))


def _data(value, name):
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"`{name}` must be 'demo' or a path, got {value!r}")
    return value


def _evaluation_check(value, name):
    """An evaluation parameter is checked where the evaluation checks it (one set of rules)."""
    from .pipeline import check_parameters as check_evaluation

    return check_evaluation({name: value})[name]


def _dashboards(value, name):
    value = check_int(value, name, minimum=-1)
    return value


_HELP = {
    "datasets": "datasets to analyse (None: all)",
    "pos_label": "positive label when labels are not 0/1, -1/1 or booleans",
    "protocol": "calibration protocol of the headline expected accuracy",
    "method": "calibration method of the headline expected accuracy",
    "class_weight": 'None or "balanced" for every calibrator',
    "n_repeats": "repeats of the indata protocol",
    "random_state": "seed for every random choice",
    "ood_dataset": "out-of-distribution dataset for DiSCA(OOD) and NiDMA (None: none)",
    "tolerance": "worst admissible accuracy t of b(t)",
    "computation_score": "DiDMA's computation score, e.g. 1/energy (None: no DiDMA/NiDMA)",
    "selective_protocol": "calibration protocol of the selective-answering confidences",
    "selective_method": "calibration method of the selective-answering confidences",
    "resolution": "confidence step of the coverage-accuracy grid",
    "cohort_protocol": "cohorts: None: the split column if present, else xdomain; or a protocol",
    "val_split": "split value of the validation cohort V",
    "test_split": "split value of the test cohort T",
    "sigma_max": "largest bias/noise sigma (None: the score range of V and T together)",
    "n_points": "sigma grid points of the robustness curves",
    "noise_repeats": "Monte Carlo draws per sigma for the noise robustness",
    "p": "order of the Wasserstein distance (1 or 2)",
    "bins": "histogram bins",
    "n_bootstrap": "bootstrap replicates behind every interval (0: none)",
    "confidence_level": "confidence level of every interval",
}


def _table():
    from .pipeline import EVALUATION_PARAMETERS

    table = {
        "evaluation": Parameter(_optional(_data), None, "a saved evaluation to display (None: compute it here)"),
        "data": Parameter(_data, "demo", 'benchmark: "demo", a CSV/Parquet file or a TRUE directory'),
    }
    for name, default in EVALUATION_PARAMETERS.items():
        if name != "models":
            table[name] = Parameter(_evaluation_check, default, _HELP[name])
    table["model"] = Parameter(_str, "svm", "the model this notebook is about")
    table["n_dashboards"] = Parameter(_dashboards, 1, "full dashboards for the datasets with the largest drift (-1: all)")
    return table


#: name -> Parameter: the evaluation's parameters (checked by :func:`beyondauc.evaluation.pipeline.check_parameters`)
#: and the notebooks' own (``evaluation``, ``data``, ``model``, ``n_dashboards``).
PARAMETERS = _table()


def check_parameters(values, *, known=None, what="parameter"):
    """Validate ``values`` (name -> value); return them in a new dict.

    ``known`` are the names allowed (default: every name of the table); an
    unknown name raises naming the closest valid ones. Names without a check
    in the table are only checked to be known.
    """
    known = tuple(PARAMETERS) if known is None else tuple(known)
    out = {}
    for name, value in values.items():
        if name not in known:
            raise ValueError(unknown_message(name, known, what=what))
        param = PARAMETERS.get(name)
        if param is not None:
            try:
                param.check(value, name)
            except TypeError as exc:  # a check met a value of an unexpected kind
                raise ValueError(f"`{name}` got {value!r}: {exc}") from None
        out[name] = value
    return out


def unknown_message(name, known, *, what="parameter"):
    """``unknown parameter 'x'; did you mean 'y'? (valid: ...)``."""
    close = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {what} {name!r}{hint} (no notebook declares it; valid: {', '.join(sorted(known))})"


def declared_parameters(notebook):
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


def check_against_benchmark(values, bench, *, available=None):
    """Checks that need the data, before any work: raise a one-line ``ValueError``.

    ``values`` are the parameters given (defaults fill the rest), ``bench`` the
    benchmark analysed and ``available`` the datasets of the whole file (an
    ``ood_dataset`` may lie outside ``bench``).
    """
    get = lambda name: values.get(name, PARAMETERS[name].default)  # noqa: E731
    available = tuple(bench.datasets if available is None else available)
    ood = get("ood_dataset")
    if ood is not None and ood not in available:
        raise ValueError(f"`ood_dataset` {ood!r} is not a dataset of {bench.source}; it has {list(available)}")
    kind = get("cohort_protocol")
    if kind == "split" and not bench.has_split:
        raise ValueError("`cohort_protocol`='split' needs a benchmark with a 'split' column; this one has none")
    if kind in (None, "split") and bench.has_split:
        frame = bench.frame
        values_of = frame.assign(split=frame["split"].astype(str)).groupby("dataset", sort=False)["split"].unique()
        for name in ("val_split", "test_split"):
            value = str(get(name))
            for dataset in bench.datasets:
                seen = sorted(values_of.get(dataset, ()))
                if value not in seen:
                    raise ValueError(f"`{name}`={value!r} names no rows of dataset {dataset!r}; its split values "
                                     f"are {seen}")
