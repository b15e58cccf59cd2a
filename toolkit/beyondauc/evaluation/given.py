"""The evaluation's tables of the confidence as given, and what it says of repeated samples."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics.selective.given_calibration import given_calibration_replicates, given_calibration_table, given_curves

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark
    from .settings import EvaluationParameters

__all__ = ["DIAGNOSTICS_REPEATED", "REPEATED_NOTE", "given_tables"]

#: What the cohort diagnostics' report says of repeated samples: their intervals and nulls draw whole items.
DIAGNOSTICS_REPEATED = (
    "the cohort diagnostics' bootstrap intervals and permutation p-values (drift, W) draw whole items: "
    "a replicate resamples items with replacement within each cohort (and within class on scores, whose "
    "class is the item's label), and the null shuffles the cohorts of whole items"
)
#: What an evaluation of repeated samples (rows sharing dataset, model and ``id``) says once.
REPEATED_NOTE = (
    "repeated samples of items (an 'epoch' or 'sample' column): the bootstrap intervals of the "
    "expected accuracy, kappa, ranks, selective answering, the given confidence and ΔAUC resample "
    "items, keeping each item's samples together, and the AUC intervals and the paired DeLong test use "
    "the clustered DeLong variance (Obuchowski) over items; " + DIAGNOSTICS_REPEATED
)


def given_tables(
    bench: Benchmark, p: EvaluationParameters
) -> tuple[dict[str, pd.DataFrame], dict[str, dict[str, np.ndarray]] | None]:
    """(``given_calibration``, ``given_reliability`` and ``rejection_curves`` tables, their paired replicates).

    The replicates (None without ``n_bootstrap``) also give the baseline
    comparison's rows of the confidence as given.
    """
    reps = (
        given_calibration_replicates(bench, n_bootstrap=p.n_bootstrap, random_state=p.random_state)
        if p.n_bootstrap
        else None
    )
    tables = {
        "given_calibration": given_calibration_table(
            bench,
            n_bootstrap=p.n_bootstrap,
            confidence_level=p.confidence_level,
            random_state=p.random_state,
            replicates=reps,
        )
    }
    tables["given_reliability"], tables["rejection_curves"] = given_curves(bench)
    return tables, reps
