"""AUC vs expected accuracy (Opitz, "Schroedinger's Threshold"): calibration protocols and methods, the expected-accuracy grid and its bootstrap, rank changes, calibration error."""
