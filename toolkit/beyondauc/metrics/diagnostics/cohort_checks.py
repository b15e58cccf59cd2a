"""Checks of the diagnostics' inputs: one cohort's labels and scores, the score range, ``sigma_max``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...utils.validation import (
    binarize_labels,
    check_number,
    check_scores,
)

__all__ = ["check_cohort", "check_range", "check_sigma_max"]


def check_cohort(
    y_true: ArrayLike, y_score: ArrayLike, *, pos_label: object = None, names: tuple[str, str] = ("y_true", "y_score")
) -> tuple[np.ndarray, np.ndarray]:
    """Validate one cohort's labels and scores; return ``(y, s)``, labels 0/1 (int8) and scores (float64).

    The labels are binarized (with ``pos_label``); the scores must be finite,
    as many as the labels, at least one, and their range (max - min) finite.
    ``names`` are the parameter names the error messages give.

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.cohorts import check_cohort
    >>> y, s = check_cohort(["a", "b", "b"], [0.2, 0.9, 0.4], pos_label="b")
    >>> y.tolist(), s.tolist()
    ([0, 1, 1], [0.2, 0.9, 0.4])
    """
    y_name, s_name = names
    s = check_scores(y_score, s_name)
    y = binarize_labels(y_true, y_name, pos_label=pos_label)
    if len(y) != len(s):
        raise ValueError(f"`{y_name}` and `{s_name}` must have the same length, got {len(y)} and {len(s)}")
    if len(s) == 0:
        raise ValueError(f"`{s_name}` is empty: the cohort has no examples")
    check_range(s, s_name)
    return y, s


def check_range(s, name):
    """Differences of scores must be finite: max - min must not overflow float64."""
    lo, hi = float(s.min()), float(s.max())
    with np.errstate(over="ignore"):
        spread = hi - lo
    if not np.isfinite(spread):
        raise ValueError(
            f"`{name}` spans more than float64 can subtract (max - min = inf, from {lo!r} to {hi!r}); rescale the scores"
        )


def check_sigma_max(sigma_max):
    if sigma_max is None:
        return None
    return check_number(sigma_max, "sigma_max", low=0, low_open=True, hint=" (or None for the score range)")
