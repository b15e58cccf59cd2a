"""Open the benchmark a notebook or a report is about: the demo, a path, or a Benchmark."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..utils.validation import check_names
from .benchmark import Benchmark
from .demo import load_demo
from .load import domains_argument, explain_missing_models, load_benchmark

__all__ = ["DEMO", "DEMO_ANSWERS", "open_benchmark"]

DEMO: str = "demo"
#: The name of the embedded answers demo (``load_demo(kind="answers")``) wherever a data argument is expected.
DEMO_ANSWERS: str = "demo:answers"


def open_benchmark(
    data: str | os.PathLike | Benchmark | pd.DataFrame = DEMO,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    pos_label: Any = None,
    domains: Mapping[str, str] | str | os.PathLike | None = None,
    nan_policy: str = "raise",
    log_options: Mapping[str, Any] | None = None,
) -> Benchmark:
    """Load the benchmark a notebook or report is about.

    Parameters
    ----------
    data : str, path, Benchmark or pandas.DataFrame, default="demo"
        ``"demo"`` for the embedded demo benchmark, ``"demo:answers"`` for
        the embedded answers demo, else anything
        :func:`~beyondauc.load_benchmark` reads, in the wide or the long form
        (a TRUE directory or a directory of tables, a CSV, TSV, Parquet or
        JSON Lines file, a DataFrame), or a Benchmark (e.g. of
        :func:`~beyondauc.from_estimators`).
    models, datasets : list of str, optional
        Keep only these models / datasets (all when None).
    pos_label : str, int or bool, optional
        The positive label, when the labels are not {0, 1}, {-1, 1} or booleans.
    domains : mapping or path, optional
        Dataset -> domain, over the data's own (see
        :func:`~beyondauc.load_benchmark`); also for the demo or a Benchmark.
    nan_policy : {"raise", "drop"}, default="raise"
        What a file or DataFrame with NaN/inf scores gets (a Benchmark has none).
    log_options : mapping, optional
        How to read LLM harness logs (``correct_metric``, ``scorer``,
        ``confidence_field``; see :func:`~beyondauc.load_benchmark`).

    Returns
    -------
    Benchmark

    Examples
    --------
    >>> from beyondauc.report import open_benchmark
    >>> bench = open_benchmark("demo", datasets=["wine", "diabetes"])
    >>> bench.datasets
    ('wine', 'diabetes')
    """
    models = check_names(models, "models")
    datasets = check_names(datasets, "datasets")
    if isinstance(data, Benchmark):
        bench = data
    elif isinstance(data, str) and data == DEMO:
        bench = load_demo()
    elif isinstance(data, str) and data == DEMO_ANSWERS:
        bench = load_demo(kind="answers")
    else:
        bench = None
    if bench is None:
        if isinstance(data, (str, os.PathLike)) and not Path(data).expanduser().exists():
            raise FileNotFoundError(
                f"`data` {str(data)!r} does not exist (give 'demo', 'demo:answers', a file or a directory)"
            )
        bench = load_benchmark(
            data, pos_label=pos_label, domains=domains, nan_policy=nan_policy, log_options=log_options
        )
    elif domains is not None:  # the demo or a Benchmark, with domains of the caller's
        bench = _with_domains(bench, domains)
    missing = _missing(models, bench.models)
    if missing:  # a text column is no model: say so, and where, rather than that it is not there
        _explain_models(data if isinstance(data, pd.DataFrame) else bench.source, missing)
    _check_subset(models, bench.models, "models", bench.source)
    _check_subset(datasets, bench.datasets, "datasets", bench.source)
    return bench.subset(models=models, datasets=datasets)


def _missing(values, known):
    return [v for v in values or () if v not in known]


def _explain_models(source, missing):
    """Raise the reader's error for model names the data has as columns that are not numeric (a file read again)."""
    if isinstance(source, pd.DataFrame) or Path(str(source)).exists():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # said when the data was read
            explain_missing_models(source, missing)


def _check_subset(values, known, name, source):
    missing = _missing(values, known)
    if missing:
        raise ValueError(f"`{name}` names {missing} not in {source}; it has {list(known)}")


def _with_domains(bench, domains):
    """``bench`` with the caller's domains (a mapping or a file), checked as :func:`load_benchmark` checks them."""
    if bench.kind == "scores":
        named = load_benchmark(bench.frame, domains=domains, models=list(bench.models))
        return Benchmark(named.frame, named.models, named.datasets, named.domains, bench.source)
    given = domains_argument(domains)
    unknown = [d for d in given if d not in bench.datasets]
    if unknown:
        warnings.warn(f"`domains` names dataset(s) not in the data: {unknown}", UserWarning, stacklevel=3)
    dom = {**bench.domains, **{d: str(v) for d, v in given.items() if d in bench.datasets}}
    frame = bench.frame.assign(domain=bench.frame["dataset"].map(dom).to_numpy())
    return Benchmark(frame, bench.models, bench.datasets, dom, bench.source, bench.kind, bench.correct)
