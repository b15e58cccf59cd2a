"""Uncertainty: the replicate engine (stratified, paired bootstrap as count weights), DeLong's intervals and tests, rank tests, and paired differences against a reference model."""
