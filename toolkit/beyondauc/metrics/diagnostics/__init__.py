"""Test-set AUROC diagnostics (Roberts et al.): bias and noise robustness, drift, the Wasserstein matrix, their replicate kernels and permutation nulls, and the cohort curves."""
