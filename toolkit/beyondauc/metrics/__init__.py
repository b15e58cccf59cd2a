"""Layer 2: pure functions of arrays and benchmarks, one module per analysis, each point estimate beside
its batched bootstrap twin. They return frozen dataclasses or tidy DataFrames; they never print or plot.
"""

from .calibration.calibrator import ScoreCalibrator  # noqa: F401
from .calibration.expected_accuracy import (  # noqa: F401
    expected_accuracy,
    expected_accuracy_grid,
)
from .calibration.grid import (  # noqa: F401
    METHODS,
    PROTOCOLS,
    SCORES,
    auc_table,
    point_grid,
)
from .calibration.grid_bootstrap import (  # noqa: F401
    GridBootstrap,
    bootstrap_grid,
)
from .calibration.grid_chunks import bootstrap_grid_chunk  # noqa: F401
from .calibration.ranking import (  # noqa: F401
    best_of_methods,
    calibration_modes,
    kendall_tau,
    rank_changes,
    rank_table,
    score_histograms,
    score_variance,
)
from .calibration.reliability import (  # noqa: F401
    CalibrationErrors,
    calibration_error_table,
    expected_calibration_error,
    grid_and_calibration_errors,
    reliability_bins,
)
from .diagnostics.benchmark import (  # noqa: F401
    CohortDiagnostics,
    cohort_diagnostics,
    cohorts,
    diagnostics_frame,
    diagnostics_intervals,
    diagnostics_table,
)
from .diagnostics.cohorts import (  # noqa: F401
    BiasRobustness,
    NoiseRobustness,
    SensSpecDrift,
    WassersteinMatrix,
    bias_robustness,
    noise_robustness,
    sens_spec_drift,
    wasserstein_matrix,
)
from .diagnostics.curves import (  # noqa: F401
    ROC_BAND_FPR,
    class_histogram,
    histogram_edges,
    roc_band,
    roc_points,
)
from .selective.band import coverage_accuracy_band, selective_intervals  # noqa: F401
from .selective.benchmark import (  # noqa: F401
    MAX_TIE_SHARE,
    MIN_CONFIDENCES,
    SelectiveAnswering,
    selective_answering,
    selective_table,
    tolerance_table,
)
from .selective.benchmark_confidence import calibrated_confidence  # noqa: F401
from .selective.benchmark_intervals import BAND_COVERAGES  # noqa: F401
from .selective.curves import (  # noqa: F401
    TOLERANCES,
    CoverageAccuracyCurve,
    Plateau,
    accuracy_at_coverage,
    auc_tail,
    coverage_accuracy_curve,
    coverage_at_accuracy,
    plateau,
)
from .selective.didma_nidma import DiDMA, NiDMA, computation_score, didma, nidma  # noqa: F401
from .selective.given_confidence import (  # noqa: F401
    BrierScore,
    RejectionCurve,
    brier_score,
    negative_log_likelihood,
    prediction_rejection_ratio,
    rejection_curve,
    reliability_band,
    smooth_ece,
)
from .selective.risk_control import RISK_CONTROL_METHODS, RiskControl, risk_controlled_threshold  # noqa: F401
from .selective.risk_coverage import augrc, aurc, e_aurc  # noqa: F401
from .selective.scores import RESOLUTIONS, DiSCA, disca, disca_resolution_sensitivity  # noqa: F401
from .uncertainty.intervals import (  # noqa: F401
    AUCComparison,
    AUCInterval,
    auc_ci,
    auc_intervals,
    compare_auc,
)
from .uncertainty.rank_tests import FriedmanResult, friedman_test  # noqa: F401

__all__ = [
    "expected_accuracy",
    "expected_accuracy_grid",
    "PROTOCOLS",
    "METHODS",
    "SCORES",
    "ScoreCalibrator",
    "auc_table",
    "point_grid",
    "ROC_BAND_FPR",
    "class_histogram",
    "histogram_edges",
    "roc_band",
    "roc_points",
    "BiasRobustness",
    "NoiseRobustness",
    "SensSpecDrift",
    "WassersteinMatrix",
    "bias_robustness",
    "noise_robustness",
    "sens_spec_drift",
    "wasserstein_matrix",
    "CohortDiagnostics",
    "cohort_diagnostics",
    "cohorts",
    "diagnostics_intervals",
    "diagnostics_table",
    "diagnostics_frame",
    "GridBootstrap",
    "bootstrap_grid",
    "bootstrap_grid_chunk",
    "AUCComparison",
    "AUCInterval",
    "FriedmanResult",
    "auc_ci",
    "auc_intervals",
    "compare_auc",
    "friedman_test",
    "rank_table",
    "rank_changes",
    "kendall_tau",
    "calibration_modes",
    "best_of_methods",
    "score_variance",
    "score_histograms",
    "CalibrationErrors",
    "calibration_error_table",
    "grid_and_calibration_errors",
    "expected_calibration_error",
    "reliability_bins",
    "BrierScore",
    "RejectionCurve",
    "brier_score",
    "negative_log_likelihood",
    "prediction_rejection_ratio",
    "rejection_curve",
    "reliability_band",
    "smooth_ece",
    "TOLERANCES",
    "CoverageAccuracyCurve",
    "Plateau",
    "accuracy_at_coverage",
    "auc_tail",
    "augrc",
    "aurc",
    "coverage_accuracy_curve",
    "coverage_at_accuracy",
    "e_aurc",
    "plateau",
    "BAND_COVERAGES",
    "MAX_TIE_SHARE",
    "MIN_CONFIDENCES",
    "SelectiveAnswering",
    "calibrated_confidence",
    "coverage_accuracy_band",
    "selective_intervals",
    "selective_answering",
    "selective_table",
    "tolerance_table",
    "RESOLUTIONS",
    "DiDMA",
    "DiSCA",
    "NiDMA",
    "computation_score",
    "didma",
    "disca",
    "disca_resolution_sensitivity",
    "nidma",
    "RISK_CONTROL_METHODS",
    "RiskControl",
    "risk_controlled_threshold",
]
