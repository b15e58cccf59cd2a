"""Test-set AUROC diagnostics (Roberts et al., "The curious case of the test set AUROC").

A good test AUROC says the scores *rank* well; it says nothing about where
they lie.  These scores look at the class-conditional score distributions of a
validation cohort V and a test cohort T:

* :func:`bias_robustness` / :func:`noise_robustness` -- how much shift or
  noise the positives can take before the AUC drops (one cohort);
* :func:`sens_spec_drift` -- how far sensitivity and specificity move between
  V and T at the same threshold, integrated over all thresholds;
* :func:`wasserstein_matrix` -- transport distances between the four
  class-conditional distributions V-, V+, T-, T+.

All four accept any label type (with ``pos_label``) and any score scale:
logits, log-likelihoods, margins, negative values.  Convention: predict
positive when score >= threshold.  :func:`cohort_diagnostics` and
:func:`diagnostics_table` run them on a :class:`~beyondauc.Benchmark`.
"""

from __future__ import annotations

from .cohort_checks import check_cohort, check_range, check_sigma_max  # noqa: F401
from .drift import (  # noqa: F401
    SensSpecDrift,
    WassersteinMatrix,
    check_p,
    sens_spec_drift,
    two_cohorts,
    wasserstein_matrix,
)
from .robustness import NOISE_METHODS, BiasRobustness, NoiseRobustness, bias_robustness, noise_robustness  # noqa: F401

# the batched twins live beside: re-exported here, where their callers and tests have read them
from .rows import bias_rows, drift_rows, sigma_units, wasserstein_rows  # noqa: F401

__all__ = [
    "NOISE_METHODS",
    "BiasRobustness",
    "NoiseRobustness",
    "SensSpecDrift",
    "WassersteinMatrix",
    "bias_robustness",
    "noise_robustness",
    "sens_spec_drift",
    "wasserstein_matrix",
]
