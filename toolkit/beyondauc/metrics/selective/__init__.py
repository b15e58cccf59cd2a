"""Selective answering (Mishra et al.): coverage-accuracy curves, a, b(t), DiSCA / DiDMA / NiDMA, the calibration of the given confidence, and abstention with a certified risk."""
