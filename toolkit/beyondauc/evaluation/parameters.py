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
    benchmark analysed and ``available`` the whole data (a Benchmark) or the
    names of its datasets (an ``ood_dataset`` may lie outside ``bench``).

    Besides the parameters, it refuses what would otherwise fail only after
    the calibration grid: a dataset too small for a protocol, a protocol that
    leaves a dataset no calibration or evaluation data, missing domains, and
    scores whose range the robustness curves cannot compute with.
    """
    get = lambda name: values.get(name, PARAMETERS[name].default)  # noqa: E731
    full = available if hasattr(available, "datasets") else None
    available = tuple(bench.datasets if available is None else full.datasets if full is not None else available)
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
    _check_sizes_and_protocols(get, bench, full)
    _check_score_ranges(get, bench)


_SOURCES = {  # where a protocol takes a dataset's calibration (validation) data from
    "xdomain": "the other datasets",
    "outdomain": "the datasets of other domains",
    "indomain": "the other datasets of its domain",
    "outdata": "the dataset itself",
}


def _uses(get, bench, full):
    """The parts of the evaluation that select a calibration and an evaluation part of the data per dataset:
    (what, parameter, protocol, note, benchmark, datasets, ood_dataset) each."""
    from ..metrics.diagnostics_benchmark import _check_protocol

    cohort = get("cohort_protocol")
    kind = _check_protocol(bench, cohort)
    ood = get("ood_dataset")
    uses = []
    if kind != "split":
        note = ", the default without a 'split' column" if cohort is None else ""
        uses.append(("the cohort diagnostics", "cohort_protocol", kind, note, bench, bench.datasets, None))
    sel = bench  # selective answering reads the out-of-distribution dataset too, as evaluate does
    if ood is not None and ood not in bench.datasets and full is not None and ood in full.datasets:
        sel = full.subset(datasets=[*bench.datasets, ood])
    in_datasets = tuple(d for d in bench.datasets if d != ood)
    uses.append(("selective answering", "selective_protocol", get("selective_protocol"), "", sel, in_datasets, ood))
    return uses


def _needs(what, verb="need"):
    """``verb`` agreeing with ``what``: the cohort diagnostics need, selective answering needs."""
    return verb if what.startswith("the cohort") else verb + "s"


def _check_sizes_and_protocols(get, bench, full):
    """Refuse, before any work, a dataset a protocol of the evaluation leaves without data.

    The calibration grid computes every protocol and needs a domain for each
    dataset; the cohort diagnostics and selective answering each take a
    calibration (validation) and an evaluation (test) part of the data per
    dataset, and would fail on the first dataset where one is empty, after
    the grid.
    """
    from ..metrics.calibration import _plan

    uses = _uses(get, bench, full)
    for what, name, kind, note, data, datasets, ood in uses:  # sizes first: the plainest cause
        if kind in ("outdomain", "indomain") and any(data.domains.get(d) is None for d in data.datasets):
            continue  # refused below
        sizes = dict(zip(data.datasets, data.dataset_sizes().tolist()))
        for i in _plan(data, kind)[1]:
            d = data.datasets[i]
            if d in datasets and sizes[d] < 2:
                why = " (no other dataset has its domain)" if kind == "indomain" else ""
                raise ValueError(
                    f"dataset {d!r} has {sizes[d]} example, and {what} {_needs(what)} at least 2 there: "
                    f"`{name}`={kind!r}{note}{why} splits each dataset 80/20; leave the dataset out with "
                    f"`datasets`, or choose another `{name}`")
    missing = [d for d in bench.datasets if bench.domains.get(d) is None]
    if missing:
        raise ValueError(
            f"the calibration grid compares every protocol, and 'outdomain' and 'indomain' need the domain of "
            f"every dataset; none for {missing}: add a 'domain' column, give `domains=` to load_benchmark, or use "
            "TRUE dataset names")
    for what, name, kind, note, data, datasets, ood in uses:
        if kind in ("outdomain", "indomain") and any(data.domains.get(d) is None for d in data.datasets):
            raise ValueError(f"`{name}`={kind!r} needs the domain of every dataset, and the out-of-distribution "
                             f"dataset {ood!r} has none")
        for fit in _plan(data, kind)[0]:
            d = data.datasets[fit.dataset]
            cal = [j for j in fit.cal if data.datasets[j] != ood]
            evl = [j for j in fit.evl if data.datasets[j] != ood]
            if d not in datasets or (cal and evl):
                continue
            cohorts = what.startswith("the cohort")
            part = ("validation cohort" if cohorts else "calibration data") if not cal else \
                ("test cohort" if cohorts else "answers to score")
            source = _SOURCES[kind] if not cal else "the other datasets"
            left = f" once the out-of-distribution dataset {ood!r} is left out" if ood is not None else ""
            one = " (the data has one dataset)" if len(data.datasets) == 1 else ""
            fix = "add a 'split' column with 'val' and 'test' rows, or set `cohort_protocol`='indata'" if cohorts \
                else f"set `{name}`='indata'"
            raise ValueError(f"{what} of dataset {d!r} {_needs(what, 'take')} the {part} from {source} "
                             f"(`{name}`={kind!r}{note}), and there is none{left}{one}: {fix}")


#: Headroom the robustness curves need: noise draws reach several sigma, sums run over pairs of examples.
_NOISE_SIGMAS = 8.0


def _fits(low, high, spread, sigma, pairs):
    """Whether the noisy scores and the bias robustness's sums over ``pairs`` of examples stay finite."""
    import numpy as np

    big = np.finfo(np.float64).max
    reach = np.maximum(np.abs(low), np.abs(high)) + _NOISE_SIGMAS * sigma
    return np.isfinite(spread) & (reach < big) & (np.maximum(sigma, spread) < big / (4 * pairs))


def _check_score_ranges(get, bench):
    """Refuse, before any work, scores whose range the robustness curves cannot compute with.

    The cohort diagnostics perturb the scores of a model on a dataset by up
    to ``sigma_max`` -- by default the range of the scores of both cohorts --
    and sum over pairs of examples: with scores near the largest float the
    perturbed scores and the sums overflow, and the curves would be inf or
    NaN.  The message names the model and the dataset.
    """
    import numpy as np

    from ..metrics.calibration import _plan
    from ..metrics.diagnostics_benchmark import _check_protocol

    kind = _check_protocol(bench, get("cohort_protocol"))
    sigma_max = get("sigma_max")
    frame = bench.frame
    models = list(bench.models)
    labels = bench.labels()
    codes = bench.dataset_codes()
    keep = slice(None)
    if kind == "split":  # each dataset's validation and test rows
        split = frame["split"].astype(str).to_numpy()
        keep = (split == str(get("val_split"))) | (split == str(get("test_split")))
        labels, codes = labels[keep], codes[keep]
    n = len(bench.datasets)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])  # rows of a dataset are contiguous
    lo = np.full((n, len(models)), np.inf)
    hi = np.full((n, len(models)), -np.inf)
    for j, m in enumerate(models):  # one column at a time: no copy of the whole score matrix
        s = bench.scores(m)[keep]
        lo[codes[starts], j] = np.minimum.reduceat(s, starts)
        hi[codes[starts], j] = np.maximum.reduceat(s, starts)
    pos = np.bincount(codes, weights=labels, minlength=n)
    neg = np.bincount(codes, minlength=n) - pos
    union = {i: (i,) for i in range(n)}  # the datasets whose rows make up the two cohorts of dataset i
    if kind != "split":
        fits, _ = _plan(bench, kind)
        union.update({f.dataset: tuple(sorted({*f.cal, *f.evl})) for f in fits})
    with np.errstate(over="ignore", invalid="ignore"):
        for i, rows in union.items():
            rows = list(rows)
            low, high = lo[rows].min(axis=0), hi[rows].max(axis=0)
            spread = high - low
            pairs = max(float(pos[rows].sum() * neg[rows].sum()), 1.0)
            own = _fits(low, high, spread, spread, pairs)
            ok = own if sigma_max is None else _fits(low, high, spread, np.full_like(spread, float(sigma_max)), pairs)
            if ok.all():
                continue
            j = int(np.flatnonzero(~ok)[0])
            d = bench.datasets[i]
            if own[j]:  # the scores would do; the sigma_max given is what overflows
                raise ValueError(f"`sigma_max`={sigma_max!r} is too large for the robustness curves of model "
                                 f"{models[j]!r} on dataset {d!r} (its scores range from {low[j]:.3g} to "
                                 f"{high[j]:.3g}): give a smaller one, or None for that range")
            wide = "wider than floating point can hold" if not np.isfinite(spread[j]) else "too wide"
            raise ValueError(f"model {models[j]!r} on dataset {d!r}: the scores range from {low[j]:.3g} to "
                             f"{high[j]:.3g}, a range {wide} for the robustness curves to compute with (they would "
                             "overflow); rescale the model's scores, e.g. divide them by a power of 10")
