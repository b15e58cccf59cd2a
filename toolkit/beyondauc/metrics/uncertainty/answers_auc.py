"""ΔAUC between models that answer the same items: the paired bootstrap.

On an answers benchmark the AUROC of a model's confidence tells its own right
answers from its own wrong ones: two models have different labels on the same
items, so the paired DeLong test (which needs one set of labels) does not
apply.  The paired bootstrap does: each replicate resamples the *items* of a
dataset once (whole, when rows repeat an item), and every model's AUC is
computed on that same resample, so replicate ``b`` of the difference is the
difference of the two models' replicates ``b``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.kernel import auc_from_counts
from .bootstrap import dataset_seed
from .replicates import GridSample, ReplicatePlan, bootstrap_replicates

if TYPE_CHECKING:
    from ...data.benchmark import Benchmark

__all__ = ["paired_auc_replicates"]


def paired_auc_replicates(bench: Benchmark, *, n_bootstrap: int, random_state: int | None = 0) -> dict[str, np.ndarray]:
    """Each model's AUC (of its confidence, for its own correctness) on every replicate: model -> (n_bootstrap, datasets).

    Replicate ``b`` of dataset ``i`` is drawn from ``random_state``'s child
    for ``i`` (:func:`~beyondauc.metrics.uncertainty.bootstrap.dataset_seed`) over the
    dataset's items, the same draw for every model (paired); NaN where a
    resample holds only right or only wrong answers of a model.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> from beyondauc.metrics.uncertainty.answers_auc import paired_auc_replicates
    >>> reps = paired_auc_replicates(load_demo(kind="answers").subset(models=["logreg", "knn"]), n_bootstrap=20)
    >>> reps["logreg"].shape
    (20, 5)
    """
    out = {m: np.full((n_bootstrap, len(bench.datasets)), np.nan) for m in bench.models}
    items_all = bench.items() if bench.repeated else None
    for i, d in enumerate(bench.datasets):  # a loop over datasets and models, each vectorised over replicates
        sl = bench.rows_of(d)
        items = None if items_all is None else np.unique(items_all[sl], return_inverse=True)[1]
        for m in bench.models:
            y = bench.labels(d, model=m)
            values, inverse = np.unique(bench.scores(m, d), return_inverse=True)
            sample = GridSample(np.zeros(len(y), dtype=np.int64), inverse.ravel(), y, len(values), clusters=items)
            plan = ReplicatePlan(n_bootstrap, dataset_seed(random_state, i), chunk_width=len(y))
            out[m][:, i] = bootstrap_replicates(sample, auc_from_counts, plan)
    return out
