"""The evaluation's tables of the confidence as given, and what it says of repeated samples."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.selective.given_calibration import given_calibration_replicates, given_calibration_table, given_curves

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark
    from .settings import EvaluationParameters

__all__ = ["REPEATED_NOTE", "given_tables"]

#: What an evaluation of repeated samples (rows sharing dataset, model and ``id``) says once.
REPEATED_NOTE = ("repeated samples of items (an 'epoch' or 'sample' column): the bootstrap intervals of the "
                 "expected accuracy, kappa, ranks, selective answering, the given confidence and ΔAUC resample "
                 "items, keeping each item's samples together; the DeLong intervals of single AUCs and the cohort "
                 "diagnostics still treat every sample as an item, so theirs are too narrow for correlated samples")


def given_tables(bench: Benchmark, p: EvaluationParameters) -> tuple[dict[str, pd.DataFrame],
                                                                     dict[str, dict[str, np.ndarray]] | None]:
    """(``given_calibration``, ``given_reliability`` and ``rejection_curves`` tables, their paired replicates).

    The replicates (None without ``n_bootstrap``) also give the baseline
    comparison's rows of the confidence as given.
    """
    reps = given_calibration_replicates(bench, n_bootstrap=p.n_bootstrap, random_state=p.random_state) \
        if p.n_bootstrap else None
    tables = {"given_calibration": given_calibration_table(bench, n_bootstrap=p.n_bootstrap,
                                                           confidence_level=p.confidence_level,
                                                           random_state=p.random_state, replicates=reps)}
    tables["given_reliability"], tables["rejection_curves"] = given_curves(bench)
    return tables, reps
