"""beyondauc: what the ROC AUC hides about a scoring model.

* :func:`expected_accuracy` -- the accuracy a model really reaches once its
  raw score is calibrated on other data (Opitz, "Schroedinger's Threshold").
* :func:`calibration_error_table` -- how calibrated the probabilities of
  those transferred calibrators are (ECE, reliability diagrams).
* :func:`bias_robustness`, :func:`noise_robustness`, :func:`sens_spec_drift`,
  :func:`wasserstein_matrix` -- test-set AUROC diagnostics between a
  validation and a test cohort (Roberts et al.).
* :func:`coverage_accuracy_curve`, :func:`disca`, :func:`didma`,
  :func:`nidma` -- selective answering (Mishra et al.).
* :func:`load_benchmark` / :func:`load_demo` / :func:`from_estimators` -- what
  several models said per example (scores, or answers with their confidence) on
  several datasets, validated.
* :func:`auc_ci`, :func:`compare_auc`, :func:`auc_intervals`, :func:`friedman_test` --
  intervals of the AUC, the paired DeLong test, and Friedman + Nemenyi over datasets.
* :func:`explore` -- one evaluation explored in Jupyter (ipywidgets): pick a
  model, a dataset, a protocol and method, and the panes redraw.
* :func:`run_report` -- the parameterized notebooks executed per model and
  rendered as self-contained HTML (and PDF) reports with a leaderboard.
"""

from .data import TRUE_DOMAINS, Benchmark, from_estimators, load_benchmark, load_demo, read_domains
from .evaluation import (
    EVALUATION_PARAMETERS,
    THRESHOLDS,
    ComparisonSummary,
    Evaluation,
    ModelSummary,
    analyses_table,
    comparison_summary,
    evaluate,
    kind_text,
    load_evaluation,
    model_summary,
    open_evaluation,
    scope_markdown,
)
from .metrics import (
    METHODS,
    PROTOCOLS,
    RESOLUTIONS,
    SCORES,
    TOLERANCES,
    AUCComparison,
    AUCInterval,
    BiasRobustness,
    BrierScore,
    CalibrationErrors,
    CohortDiagnostics,
    CoverageAccuracyCurve,
    DiDMA,
    DiSCA,
    FriedmanResult,
    GridBootstrap,
    NiDMA,
    NoiseRobustness,
    Plateau,
    RejectionCurve,
    RiskControl,
    ScoreCalibrator,
    SelectiveAnswering,
    SensSpecDrift,
    WassersteinMatrix,
    accuracy_at_coverage,
    auc_ci,
    auc_intervals,
    auc_table,
    auc_tail,
    augrc,
    aurc,
    best_of_methods,
    bias_robustness,
    bootstrap_grid,
    brier_score,
    calibrated_confidence,
    calibration_error_table,
    calibration_modes,
    cohort_diagnostics,
    cohorts,
    compare_auc,
    computation_score,
    coverage_accuracy_curve,
    coverage_at_accuracy,
    diagnostics_frame,
    diagnostics_intervals,
    diagnostics_table,
    didma,
    disca,
    disca_resolution_sensitivity,
    e_aurc,
    expected_accuracy,
    expected_accuracy_grid,
    expected_calibration_error,
    friedman_test,
    kendall_tau,
    negative_log_likelihood,
    nidma,
    noise_robustness,
    plateau,
    prediction_rejection_ratio,
    rank_changes,
    rank_table,
    rejection_curve,
    reliability_band,
    reliability_bins,
    risk_controlled_threshold,
    score_histograms,
    score_variance,
    selective_answering,
    selective_intervals,
    selective_table,
    sens_spec_drift,
    smooth_ece,
    tolerance_table,
    wasserstein_matrix,
)
from .report import (
    ModelReport,
    NotebookRun,
    ReportResult,
    leaderboard,
    open_benchmark,
    readable_table,
    run_report,
    safe_name,
)
from .report import show as show_figure
from .utils import UndefinedMetricWarning, styled
from .utils.version import __version__  # noqa: F401

__all__ = [
    "EVALUATION_PARAMETERS",
    "METHODS",
    "PROTOCOLS",
    "RESOLUTIONS",
    "SCORES",
    "THRESHOLDS",
    "TOLERANCES",
    "TRUE_DOMAINS",
    "AUCComparison",
    "AUCInterval",
    "Benchmark",
    "BiasRobustness",
    "CalibrationErrors",
    "CohortDiagnostics",
    "CoverageAccuracyCurve",
    "DiDMA",
    "DiSCA",
    "Evaluation",
    "FriedmanResult",
    "GridBootstrap",
    "ModelReport",
    "ModelSummary",
    "NiDMA",
    "NoiseRobustness",
    "NotebookRun",
    "Plateau",
    "ReportResult",
    "ScoreCalibrator",
    "SelectiveAnswering",
    "SensSpecDrift",
    "UndefinedMetricWarning",
    "WassersteinMatrix",
    "__version__",
    "accuracy_at_coverage",
    "auc_ci",
    "auc_intervals",
    "auc_table",
    "auc_tail",
    "augrc",
    "aurc",
    "best_of_methods",
    "bias_robustness",
    "bootstrap_grid",
    "calibrated_confidence",
    "calibration_error_table",
    "calibration_modes",
    "cohort_diagnostics",
    "cohorts",
    "compare_auc",
    "comparison_summary",
    "ComparisonSummary",
    "computation_score",
    "coverage_accuracy_curve",
    "coverage_at_accuracy",
    "diagnostics_frame",
    "diagnostics_intervals",
    "diagnostics_table",
    "didma",
    "disca",
    "disca_resolution_sensitivity",
    "e_aurc",
    "evaluate",
    "expected_accuracy",
    "expected_accuracy_grid",
    "friedman_test",
    "from_estimators",
    "expected_calibration_error",
    "explore",
    "kendall_tau",
    "leaderboard",
    "load_benchmark",
    "load_demo",
    "load_evaluation",
    "analyses_table",
    "kind_text",
    "model_summary",
    "scope_markdown",
    "nidma",
    "noise_robustness",
    "open_benchmark",
    "open_evaluation",
    "plateau",
    "rank_changes",
    "rank_table",
    "read_domains",
    "reliability_bins",
    "BrierScore",
    "RejectionCurve",
    "brier_score",
    "negative_log_likelihood",
    "prediction_rejection_ratio",
    "rejection_curve",
    "reliability_band",
    "smooth_ece",
    "RiskControl",
    "risk_controlled_threshold",
    "run_report",
    "safe_name",
    "score_histograms",
    "score_variance",
    "selective_answering",
    "selective_intervals",
    "selective_table",
    "sens_spec_drift",
    "show_figure",
    "readable_table",
    "styled",
    "tolerance_table",
    "wasserstein_matrix",
]

#: The subpackages, one per layer; ``beyondauc.plots`` and the others load on first use.
_SUBPACKAGES = ("utils", "data", "metrics", "evaluation", "plots", "report", "cli")


def __getattr__(name: str) -> object:
    if name == "explore":  # the Jupyter explorer loads matplotlib and ipywidgets: only when asked for
        from .plots.explore import explore

        return explore
    if name in _SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBPACKAGES))
