"""Open the benchmark a notebook or a report is about: the demo, a path, or a Benchmark."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..utils.validation import check_names
from .benchmark import Benchmark, load_benchmark, load_demo

__all__ = ["DEMO", "open_benchmark"]

DEMO: str = "demo"


def open_benchmark(
    data: str | os.PathLike | Benchmark | pd.DataFrame = DEMO,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    pos_label: Any = None,
    domains: Mapping[str, str] | str | os.PathLike | None = None,
    nan_policy: str = "raise",
) -> Benchmark:
    """Load the benchmark a notebook or report is about.

    Parameters
    ----------
    data : str, path, Benchmark or pandas.DataFrame, default="demo"
        ``"demo"`` for the embedded demo benchmark, else anything
        :func:`~beyondauc.load_benchmark` reads (a TRUE directory, a CSV or
        Parquet file, a DataFrame).
    models, datasets : list of str, optional
        Keep only these models / datasets (all when None).
    pos_label : str, int or bool, optional
        The positive label, when the labels are not {0, 1}, {-1, 1} or booleans.
    domains : mapping or path, optional
        Dataset -> domain, over the data's own (see
        :func:`~beyondauc.load_benchmark`); also for the demo or a Benchmark.
    nan_policy : {"raise", "drop"}, default="raise"
        What a file or DataFrame with NaN/inf scores gets (a Benchmark has none).

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
    else:
        bench = None
    if bench is None:
        if isinstance(data, (str, os.PathLike)) and not Path(data).expanduser().exists():
            raise FileNotFoundError(f"`data` {str(data)!r} does not exist (give 'demo', a file or a TRUE directory)")
        bench = load_benchmark(data, pos_label=pos_label, domains=domains, nan_policy=nan_policy)
    elif domains is not None:  # the demo or a Benchmark, with domains of the caller's
        named = load_benchmark(bench.frame, domains=domains, models=list(bench.models))
        bench = Benchmark(named.frame, named.models, named.datasets, named.domains, bench.source)
    _check_subset(models, bench.models, "models", bench.source)
    _check_subset(datasets, bench.datasets, "datasets", bench.source)
    return bench.subset(models=models, datasets=datasets)


def _check_subset(values, known, name, source):
    if values is None:
        return
    missing = [v for v in values if v not in known]
    if missing:
        raise ValueError(f"`{name}` names {missing} not in {source}; it has {list(known)}")
