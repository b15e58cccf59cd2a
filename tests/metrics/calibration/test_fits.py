"""The calibration grid and the calibration errors from one set of fits (:mod:`beyondauc.metrics.calibration.fits`).

* :func:`grid_and_calibration_errors` against :func:`expected_accuracy_grid` and
  :func:`calibration_error_table` called apart: the same frames, bit for bit,
  over every protocol, method, class weight and reference, with indata
  repeats fitted one by one and several at once, on scores and answers;
* the shared logistic fits against :func:`_logistic_rows` from each start,
  bit for bit;
* the combined path fits each shared calibrator once (the separate fitters
  are never called there).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from beyondauc import (
    METHODS,
    UndefinedMetricWarning,
    calibration_error_table,
    expected_accuracy_grid,
    load_demo,
)
from beyondauc.metrics.calibration import fits as calibration_fits
from beyondauc.metrics.calibration import grid_cells
from beyondauc.metrics.calibration.fits import logistic_rows, logistic_starts
from beyondauc.metrics.calibration.reliability import grid_and_calibration_errors
from helpers.benchmarks import small_bench


def bench_of(seed=0):
    """Four datasets (one alone in its domain: indomain falls back to indata), scores with ties and a large offset."""
    return small_bench(seed)[2]


def apart(bench, **kw):
    n_bins = kw.pop("n_bins", 15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        grid = expected_accuracy_grid(bench, **kw)
    return grid, calibration_error_table(bench, n_bins=n_bins, **kw)


def assert_same(combined, separate):
    (grid, errors), (grid_ref, errors_ref) = combined, separate
    pd.testing.assert_frame_equal(grid, grid_ref, check_exact=True)
    pd.testing.assert_frame_equal(errors.ece, errors_ref.ece, check_exact=True)
    pd.testing.assert_frame_equal(errors.reliability, errors_ref.reliability, check_exact=True)
    assert errors.n_bins == errors_ref.n_bins


@pytest.mark.parametrize(
    "class_weight, reference, one_repeat_per_chunk",
    [
        (None, None, False),
        (None, None, True),
        ("balanced", None, False),
        ("balanced", None, True),
        ("balanced", "opitz2024", True),  # the reproduction mode: the two computed apart
    ],
)
def test_combined_tables_are_the_two_functions_apart(class_weight, reference, one_repeat_per_chunk, monkeypatch):
    if one_repeat_per_chunk:  # the indata repeats fitted one by one (lone fits), as on large datasets
        monkeypatch.setattr(grid_cells, "_CHUNK", 1)
    bench = bench_of()
    kw = dict(methods=list(METHODS), class_weight=class_weight, n_repeats=3, reference=reference, n_bins=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        combined = grid_and_calibration_errors(bench, **kw)
    assert_same(combined, apart(bench, **kw))
    assert set(combined[0]["protocol"]) == {"xdomain", "outdomain", "indomain", "indata", "outdata"}
    assert len(combined[0]) == len(combined[1].ece) > 0


def test_combined_tables_on_the_demos_and_in_processes():
    kw = dict(protocols=["xdomain", "indata", "outdata"], methods=["stump", "logistic"], n_repeats=2, n_bins=12)
    demo = load_demo()
    assert_same(grid_and_calibration_errors(demo, n_jobs=2, **kw), apart(demo, **kw))
    answers = load_demo(kind="answers")  # a label per model: each model's view, the tables concatenated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        combined = grid_and_calibration_errors(answers, **kw)
    assert_same(combined, apart(answers, **kw))
    assert list(dict.fromkeys(combined[1].ece["model"])) == list(answers.models)


@pytest.mark.parametrize("F", [1, 3])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_shared_logistic_is_each_start_alone_bit_for_bit(F, class_weight):
    rng = np.random.default_rng(F)
    x = np.sort(rng.normal(size=200)) * 40 + 7
    cal_pos = rng.integers(0, 3, size=(F, 200)).astype(float)
    cal_neg = rng.integers(0, 3, size=(F, 200)).astype(float)
    cal_pos[:, :30] = cal_neg[:, :30] = 0  # grid values without calibration weight (a lone fit drops them)
    counts = cal_pos + cal_neg
    wpos, wneg = calibration_fits.class_weighted(cal_pos, cal_neg, class_weight)
    warm = (np.array(-0.3), np.array(0.02))
    got = logistic_starts(x, wpos, wneg, counts=counts, inits=(warm, None))
    for start, (b0, b1) in zip((warm, None), got):
        r0, r1 = logistic_rows(x, wpos, wneg, init=start, counts=counts)
        assert np.array_equal(b0, r0) and np.array_equal(b1, r1)
    assert not np.array_equal(got[0][1], got[1][1]) or F > 1  # the starts differ: two Newton runs


def test_combined_path_fits_the_shared_calibrators_once(monkeypatch):
    """Every block a lone fit: its logistic and stump come from the shared fits, never refitted per table."""
    monkeypatch.setattr(grid_cells, "_CHUNK", 1)
    calls = {"logistic": 0, "stump": 0, "stump_params": 0}

    def counting(name, func):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return func(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(calibration_fits, "logistic_rows", counting("logistic", calibration_fits.logistic_rows))
    monkeypatch.setattr(calibration_fits, "stump_rows", counting("stump", calibration_fits.stump_rows))
    monkeypatch.setattr(calibration_fits, "stump_params", counting("stump_params", calibration_fits.stump_params))
    bench = bench_of().subset(models=["logit"])
    kw = dict(protocols=["xdomain", "indata"], methods=["logistic", "stump"], n_repeats=2)
    apart(bench, **kw)
    n_blocks = len(bench.datasets) * (1 + 2)  # xdomain fits and indata repeats
    # precondition: apart, each table fits each block's logistic, and the grid its stump
    assert calls["logistic"] == 2 * n_blocks and calls["stump"] == n_blocks
    calls.update(logistic=0, stump=0, stump_params=0)
    grid_and_calibration_errors(bench, **kw)
    assert calls == {"logistic": 0, "stump": 0, "stump_params": n_blocks}
