"""Answers benchmarks through the benchmark-level functions: one model's view at a time.

An answers benchmark has a label per model (whether its answer is right), so
a function that reads every model's labels at once reads each model's view
(:meth:`~beyondauc.Benchmark.model_view`) and concatenates the tables, in
the order one pass over a scores benchmark gives; a function of one model
reads that model's view.  On a scores benchmark, or an answers benchmark of
one model, both are the function itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["each_model_view", "model_view_of", "sort_like"]

_KEYS = ("protocol", "method", "dataset", "model")


def sort_like(frame: pd.DataFrame, bench: Any, keys: tuple[str, ...] = _KEYS) -> pd.DataFrame:
    """``frame`` sorted by ``keys`` (datasets and models in the benchmark's order; others by first appearance).

    The sort is stable, so rows with equal keys keep their order.
    """
    order = {
        "dataset": {d: i for i, d in enumerate(bench.datasets)},
        "model": {m: i for i, m in enumerate(bench.models)},
    }
    cols = [k for k in keys if k in frame.columns]
    if not cols:
        return frame.reset_index(drop=True)
    rank = [
        frame[k].map(order[k]) if k in order else frame[k].map({v: i for i, v in enumerate(pd.unique(frame[k]))})
        for k in cols
    ]
    return frame.iloc[np.lexsort([r.to_numpy() for r in reversed(rank)])].reset_index(drop=True)


def each_model_view(keys: tuple[str, ...] = _KEYS, combine: Callable | None = None) -> Callable:
    """Decorate ``func(bench, ...)`` to run on each model's view of an answers benchmark.

    The views' results are combined by ``combine(results, bench)``; by
    default they are DataFrames, concatenated and sorted by ``keys``
    (:func:`sort_like`).  A ``models`` keyword, where the function takes
    one, first narrows the benchmark.
    """

    def decorate(func):
        @functools.wraps(func)
        def wrapper(bench, *args, **kwargs):
            if getattr(bench, "kind", "scores") != "answers":
                return func(bench, *args, **kwargs)
            models = kwargs.pop("models", None)
            if models is not None:
                bench = bench.subset(models=[models] if isinstance(models, str) else list(models))
            if len(bench.models) == 1:
                return func(bench.model_view(bench.models[0]), *args, **kwargs)
            parts = [func(bench.model_view(m), *args, **kwargs) for m in bench.models]
            if combine is not None:
                return combine(parts, bench)
            return sort_like(pd.concat(parts, ignore_index=True), bench, keys)

        return wrapper

    return decorate


def model_view_of(func: Callable) -> Callable:
    """Decorate ``func(bench, model, ...)`` to read that model's view of an answers benchmark."""

    @functools.wraps(func)
    def wrapper(bench, model, *args, **kwargs):
        if getattr(bench, "kind", "scores") == "answers":
            bench = bench.model_view(model)
        return func(bench, model, *args, **kwargs)

    return wrapper
