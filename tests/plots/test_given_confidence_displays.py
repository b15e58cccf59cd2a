"""Tests of :mod:`beyondauc.plots.given_confidence`: what is drawn is what the metric functions compute.

The reliability diagram's points and band against :func:`reliability_band`
(itself checked against the Wilson formula in ``tests/metrics/selective/test_given_confidence.py``),
its legend against :func:`expected_calibration_error` with the same bins and
:func:`smooth_ece`; the rejection curve's three lines against
:func:`rejection_curve`, its legend against :func:`prediction_rejection_ratio`.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import beyondauc as ba  # noqa: E402
from beyondauc.plots import ConfidenceReliabilityDisplay, RejectionCurveDisplay  # noqa: E402
from beyondauc.utils.formatting import format_number  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _data(n=400, seed=0, graded=False):
    rng = np.random.default_rng(seed)
    conf = rng.beta(5, 2, size=n)
    correct = np.clip(conf**2 + rng.normal(0, 0.2, size=n), 0, 1) if graded else (rng.uniform(size=n) < conf**2)
    return correct, conf


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("graded", [False, True])
def test_reliability_display_draws_the_band_and_both_eces(strategy, graded):
    correct, conf = _data(graded=graded)
    before = dict(matplotlib.rcParams)
    fig, ax = plt.subplots()
    disp = ConfidenceReliabilityDisplay.from_predictions(correct, conf, n_bins=8, strategy=strategy, name="m", ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    band = ba.reliability_band(correct, conf, n_bins=8, strategy=strategy)
    np.testing.assert_allclose(disp.line_.get_xdata(), band["mean_confidence"], atol=1e-12)
    np.testing.assert_allclose(disp.line_.get_ydata(), band["accuracy"], atol=1e-12)
    segments = next(c for c in ax.collections if "band" in c.get_label()).get_segments()
    np.testing.assert_allclose([s[0][1] for s in segments], band["low"], atol=1e-12)
    np.testing.assert_allclose([s[1][1] for s in segments], band["high"], atol=1e-12)
    ece = ba.expected_calibration_error(correct.astype(float), conf, n_bins=8, strategy=strategy)
    assert disp.ece == pytest.approx(ece, abs=1e-12)
    assert disp.smooth_ece == pytest.approx(ba.smooth_ece(correct, conf), abs=1e-12)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"m (ECE = {ece:.3f}, smooth ECE = {disp.smooth_ece:.3f})" in texts
    assert "Wilson 95% band (per bin)" in texts
    expected_bins = "equal-mass" if strategy == "quantile" else "equal-width"
    assert expected_bins in ax.get_xlabel()
    assert dict(matplotlib.rcParams) == before


def test_reliability_display_from_its_parts():
    band = ba.reliability_band([1, 0, 1, 1], [0.9, 0.2, 0.7, 0.6], n_bins=2)
    disp = ConfidenceReliabilityDisplay(band).plot()
    assert disp.ax_.get_legend().get_texts()[1].get_text() == "given confidence"
    with pytest.raises(ValueError, match="`band` must be a DataFrame with columns"):
        ConfidenceReliabilityDisplay(band.drop(columns="low"))


@pytest.mark.parametrize("max_rejection", [1.0, 0.5])
def test_rejection_display_draws_the_three_curves(max_rejection):
    correct, conf = _data(graded=True, seed=3)
    fig, ax = plt.subplots()
    disp = RejectionCurveDisplay.from_predictions(correct, conf, max_rejection=max_rejection, name="m", ax=ax)
    curve = ba.rejection_curve(correct, conf)
    lines = {line.get_label(): line for line in ax.get_lines()}
    prr = ba.prediction_rejection_ratio(correct, conf, max_rejection=max_rejection)
    part = "" if max_rejection == 1 else " over the first 50%"
    label = f"m (PRR{part} = {format_number(prr, 3)})"  # a true minus sign, as every number drawn
    assert disp.prr == pytest.approx(prr, abs=1e-12)
    for name, values in ((label, curve.model), ("oracle (by true loss)", curve.oracle), ("random", curve.random)):
        np.testing.assert_allclose(lines[name].get_xdata(), curve.rejection, atol=0)
        np.testing.assert_allclose(lines[name].get_ydata(), values, atol=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == label
    assert sum(1 for line in ax.get_lines() if list(line.get_xdata()) == [max_rejection] * 2) == (max_rejection < 1)


def test_rejection_display_checks_its_input():
    with pytest.raises(ValueError, match="`curve` must be a RejectionCurve"):
        RejectionCurveDisplay([0.1, 0.2])
    curve = ba.rejection_curve([1, 0, 1], [0.9, 0.2, 0.5])
    with pytest.raises(ValueError, match="`max_rejection` must be a number in \\(0, 1\\]"):
        RejectionCurveDisplay(curve, max_rejection=2)


def test_rejection_display_of_an_undefined_prr_says_so():
    with pytest.warns(ba.utils.validation.UndefinedMetricWarning, match="PRR is undefined"):
        disp = RejectionCurveDisplay.from_predictions([1, 1, 1], [0.2, 0.5, 0.9], name="m")
    assert np.isnan(disp.prr)
    assert disp.ax_.get_legend().get_texts()[0].get_text() == f"m (PRR = {format_number(float('nan'), 3)})"
