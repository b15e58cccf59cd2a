"""The warnings a benchmark's reader gives once: datasets of a single class, answers all right or all wrong,
columns left out."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..utils.formatting import quoted_name
from .forms import FORMS
from .readers import RESERVED

__all__ = ["single_class_message", "warn_ignored", "warn_single_answer_class", "warn_single_class"]


def warn_single_class(bench):
    """One warning for all the datasets with a single class (from the benchmark's labels: no per-row text)."""
    positives = np.add.reduceat(bench.labels().astype(np.int64), bench.dataset_offsets()[:-1]) if len(bench) else []
    single = [
        (d, "positive" if s else "negative")
        for d, s, n in zip(bench.datasets, positives, bench.dataset_sizes())
        if s == 0 or s == n
    ]
    if single:
        warnings.warn(single_class_message(single), UserWarning, stacklevel=3)


def warn_single_answer_class(bench):
    """One warning for the (model, dataset) pairs whose answers are all right, or all wrong."""
    starts = bench.dataset_offsets()[:-1]
    right = np.add.reduceat(
        np.stack([bench.labels(model=m) for m in bench.models], axis=1).astype(np.int64), starts, axis=0
    )  # (n_datasets, n_models), graded answers thresholded
    sizes = bench.dataset_sizes()[:, None]
    pairs = [
        (bench.models[j], bench.datasets[i], "right" if right[i, j] else "wrong")
        for i, j in np.argwhere((right == 0) | (right == sizes))
    ]
    if pairs:
        shown = "; ".join(f"model {m!r} on {d!r} (all {what})" for m, d, what in pairs[:10])
        more = f" and {len(pairs) - 10} more" if len(pairs) > 10 else ""
        warnings.warn(
            f"{len(pairs)} model(s) answer a dataset all right or all wrong: {shown}{more}; the AUROC of "
            "their confidence there, and every other number that needs right and wrong answers, is NaN",
            UserWarning,
            stacklevel=3,
        )


def warn_ignored(ignored, where, form):
    """One warning listing the columns left out (the wide form: text columns, neither a model nor reserved)."""
    if ignored:
        shown = ", ".join(quoted_name(c) for c in list(ignored)[:10]) + (
            f" and {len(ignored) - 10} more" if len(ignored) > 10 else ""
        )
        if form.long:
            warnings.warn(
                f"{where}: ignored column(s) {shown}: not a column of the {form.name} form ({FORMS})",
                UserWarning,
                stacklevel=3,
            )
            return
        warnings.warn(
            f"{where}: ignored column(s) {shown}: not numeric, so not a model, and not one of "
            f"{', '.join(map(repr, RESERVED))} (give `models=` to name the model columns)",
            UserWarning,
            stacklevel=3,
        )


def single_class_message(datasets: Sequence[tuple[str, str]]) -> str:
    """The one warning about the datasets with a single class, given as (name, "positive" or "negative")."""
    if len(datasets) == 1:
        ((d, kind),) = datasets
        return (
            f"dataset {d!r} has a single class (all labels {kind}); its AUC, and every other number that "
            "needs both classes, is NaN (kappa too where all decisions are that class)"
        )
    shown = ", ".join(f"{d!r} (all labels {kind})" for d, kind in datasets[:10])
    more = f" and {len(datasets) - 10} more" if len(datasets) > 10 else ""
    return (
        f"{len(datasets)} datasets have a single class: {shown}{more}; their AUC, and every other number that "
        "needs both classes, is NaN (kappa too where all decisions are that class)"
    )
