"""beyondauc: what the ROC AUC hides about a scoring model.

* :func:`expected_accuracy` -- the accuracy a model really reaches once its
  raw score is calibrated on other data (Opitz, "Schroedinger's Threshold").
* :func:`load_benchmark` / :func:`load_demo` -- per-example scores of several
  models on several datasets, validated.
"""

from ._validation import UndefinedMetricWarning
from .calibration import (
    METHODS,
    PROTOCOLS,
    SCORES,
    ScoreCalibrator,
    auc_table,
    expected_accuracy,
    expected_accuracy_grid,
)
from .data import TRUE_DOMAINS, Benchmark, load_benchmark, load_demo, read_domains
from .ranking import (
    best_of_methods,
    calibration_modes,
    kendall_tau,
    rank_changes,
    rank_table,
    score_histograms,
    score_variance,
)

__version__ = "0.1.0"

__all__ = [
    "Benchmark",
    "METHODS",
    "PROTOCOLS",
    "SCORES",
    "ScoreCalibrator",
    "TRUE_DOMAINS",
    "UndefinedMetricWarning",
    "auc_table",
    "best_of_methods",
    "calibration_modes",
    "kendall_tau",
    "rank_changes",
    "rank_table",
    "score_histograms",
    "score_variance",
    "expected_accuracy",
    "expected_accuracy_grid",
    "load_benchmark",
    "load_demo",
    "read_domains",
    "__version__",
]
