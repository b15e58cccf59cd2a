"""Tests of :mod:`beyondauc.metrics.selective.given_confidence` and the equal-mass ECE.

Every metric is checked against a brute-force definition written as plain
Python loops over the examples (the Brier score and Murphy's groups, the
NLL, both ECEs, the rejection curves and PRR), on random binary and graded
inputs, to 1e-12; the equal-mass ECE against
``sklearn.calibration.calibration_curve(strategy="quantile")``; the smooth
ECE against the authors' ``relplot.smECE``; PRR against LM-Polygraph's
formula (its areas on the quality, oracle- and random-normalised) written
out here.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

import beyondauc as ba
from beyondauc.utils.validation import UndefinedMetricWarning

TOL = 1e-12


def _data(seed, n, *, graded=False, ties=False):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(size=n)
    if ties:
        conf = np.round(conf * 4) / 4
    correct = rng.uniform(size=n) if graded else (rng.uniform(size=n) < conf**1.5).astype(int)
    return correct, conf


CASES = [dict(graded=g, ties=t) for g in (False, True) for t in (False, True)]


# -- brute force --------------------------------------------------------------------------


def brute_brier(correct, conf):
    n = len(conf)
    score = sum((c - q) ** 2 for q, c in zip(correct, conf)) / n
    mean = sum(correct) / n
    groups = {}
    for q, c in zip(correct, conf):
        groups.setdefault(c, []).append(q)
    rel = sum(len(g) * (c - sum(g) / len(g)) ** 2 for c, g in groups.items()) / n
    res = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values()) / n
    unc = sum((q - mean) ** 2 for q in correct) / n
    return score, rel, res, unc


def brute_nll(correct, conf, eps=1e-15):
    total = 0.0
    for q, c in zip(correct, conf):
        total -= (q * math.log(max(c, eps)) if q else 0.0) + ((1 - q) * math.log(max(1 - c, eps)) if q != 1 else 0.0)
    return total / len(conf)


def brute_ece(correct, conf, edges):
    """ECE over bins whose inner edges are ``edges``: a value on an edge goes to the bin below it."""
    bins = {}
    for q, c in zip(correct, conf):
        b = sum(1 for e in edges if c > e)
        bins.setdefault(b, []).append((q, c))
    n = len(conf)
    return sum(len(v) / n * abs(sum(q for q, _ in v) / len(v) - sum(c for _, c in v) / len(v)) for v in bins.values())


def brute_rejection(correct, conf):
    """The model's curve averaged over every order of tied confidences, the oracle's and random's."""
    n = len(conf)
    loss = [1 - q for q in correct]
    model, oracle = [], []
    by_loss = sorted(loss)
    for j in range(n):
        keep = n - j
        kept = 0.0  # the expected loss of the `keep` most confident, ties drawn at random
        for c in sorted(set(conf), reverse=True):
            tied = [lo for lo, cc in zip(loss, conf) if cc == c]
            take = min(len(tied), keep - 0)
            kept += take * sum(tied) / len(tied)
            keep -= take
            if keep == 0:
                break
        model.append(kept / (n - j))
        oracle.append(sum(by_loss[: n - j]) / (n - j))
    return model, oracle, [sum(loss) / n] * n


def brute_prr(correct, conf, max_rejection=1.0):
    model, oracle, random = brute_rejection(correct, conf)
    k = int(max_rejection * len(conf))
    a_model, a_oracle, a_random = (sum(x[:k]) / k for x in (model, oracle, random))
    return (a_random - a_model) / (a_random - a_oracle)


# -- Brier and NLL ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(3))
def test_brier_and_decomposition_equal_the_loops(case, seed):
    correct, conf = _data(seed, 60, **case)
    b = ba.brier_score(correct, conf)
    score, rel, res, unc = brute_brier(correct.tolist(), conf.tolist())
    assert b.score == pytest.approx(score, abs=TOL)
    assert b.reliability == pytest.approx(rel, abs=TOL)
    assert b.resolution == pytest.approx(res, abs=TOL)
    assert b.uncertainty == pytest.approx(unc, abs=TOL)
    assert b.reliability - b.resolution + b.uncertainty == pytest.approx(b.score, abs=TOL)
    assert b.n == 60 and b.n_groups == len(set(conf.tolist()))


def test_brier_matches_sklearn_and_binary_uncertainty():
    correct, conf = _data(7, 200, ties=True)
    b = ba.brier_score(correct.astype(bool), conf)
    assert b.score == pytest.approx(brier_score_loss(correct, conf), abs=TOL)
    mean = correct.mean()
    assert b.uncertainty == pytest.approx(mean * (1 - mean), abs=TOL)


def test_brier_hand_worked():
    # groups 0.9: {1, 1, 0} (mean 2/3), 0.5: {1}; overall mean 3/4
    b = ba.brier_score([1, 1, 0, 1], [0.9, 0.9, 0.9, 0.5])
    assert b.score == pytest.approx((0.01 + 0.01 + 0.81 + 0.25) / 4, abs=TOL)
    assert b.reliability == pytest.approx((3 * (0.9 - 2 / 3) ** 2 + 0.25) / 4, abs=TOL)
    assert b.resolution == pytest.approx((3 * (2 / 3 - 0.75) ** 2 + 0.25**2) / 4, abs=TOL)
    assert "BrierScore(score=0.27" in repr(b) and "reliability" in b._repr_html_()


@pytest.mark.parametrize("case", CASES)
def test_nll_equals_the_loop(case):
    correct, conf = _data(3, 80, **case)
    conf[:3] = [0.0, 1.0, 0.5]
    assert ba.negative_log_likelihood(correct, conf) == pytest.approx(
        brute_nll(correct.tolist(), conf.tolist()), abs=TOL
    )


def test_nll_matches_sklearn_log_loss_inside_the_clip():
    correct, conf = _data(4, 300)
    assert ba.negative_log_likelihood(correct, conf) == pytest.approx(log_loss(correct, conf, labels=[0, 1]), abs=TOL)


def test_nll_clips_a_certain_wrong_answer():
    assert ba.negative_log_likelihood([0, 1], [1.0, 1.0]) == pytest.approx(-math.log(1e-15) / 2, rel=1e-9)
    assert ba.negative_log_likelihood([0], [1.0], eps=1e-3) == pytest.approx(-math.log(1e-3), rel=1e-9)
    with pytest.raises(ValueError, match="`eps`"):
        ba.negative_log_likelihood([0], [1.0], eps=0)


def test_graded_nll_is_minimal_at_the_quality():
    q = np.array([0.2, 0.7, 0.5])
    best = ba.negative_log_likelihood(q, q)
    entropy = -np.mean(q * np.log(q) + (1 - q) * np.log(1 - q))
    assert best == pytest.approx(entropy, abs=TOL)
    assert ba.negative_log_likelihood(q, np.clip(q + 0.1, 0, 1)) > best


# -- ECE ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n_bins", [1, 4, 15])
def test_both_eces_equal_the_loops(case, n_bins):
    correct, conf = _data(n_bins, 90, **case)
    uniform = np.linspace(0, 1, n_bins + 1)[1:-1].tolist()
    quantile = np.percentile(conf, np.linspace(0, 1, n_bins + 1) * 100)[1:-1].tolist()
    for strategy, edges in (("uniform", uniform), ("quantile", quantile)):
        got = ba.expected_calibration_error(correct, conf, n_bins=n_bins, strategy=strategy)
        assert got == pytest.approx(brute_ece(correct.tolist(), conf.tolist(), edges), abs=TOL), strategy


@pytest.mark.parametrize("seed", range(4))
def test_quantile_ece_equals_sklearn_calibration_curve(seed):
    correct, conf = _data(seed, 500, ties=seed % 2 == 1)
    for n_bins in (5, 10):
        prob_true, prob_pred = calibration_curve(correct, conf, n_bins=n_bins, strategy="quantile")
        edges = np.percentile(conf, np.linspace(0, 1, n_bins + 1) * 100)
        counts = np.bincount(np.searchsorted(edges[1:-1], conf), minlength=n_bins)
        counts = counts[counts > 0]
        expected = np.sum(counts * np.abs(prob_true - prob_pred)) / len(conf)
        got = ba.expected_calibration_error(correct, conf, n_bins=n_bins, strategy="quantile")
        assert got == pytest.approx(expected, abs=TOL)
        _, mean_predicted, fraction_positive, _ = ba.reliability_bins(correct, conf, n_bins=n_bins, strategy="quantile")
        np.testing.assert_allclose(mean_predicted, prob_pred, atol=TOL)
        np.testing.assert_allclose(fraction_positive, prob_true, atol=TOL)


def test_uniform_default_is_sklearns_uniform_bins_and_strategy_checked():
    correct, conf = _data(1, 200)
    prob_true, prob_pred = calibration_curve(correct, conf, n_bins=15, strategy="uniform")
    counts = np.bincount(np.searchsorted(np.linspace(0, 1, 16)[1:-1], conf), minlength=15)
    expected = np.sum(counts[counts > 0] * np.abs(prob_true - prob_pred)) / len(conf)
    assert ba.expected_calibration_error(correct, conf) == pytest.approx(expected, abs=TOL)
    assert ba.expected_calibration_error(correct, conf, strategy="uniform") == ba.expected_calibration_error(
        correct, conf
    )
    with pytest.raises(ValueError, match="`strategy` must be one of 'uniform', 'quantile'"):
        ba.expected_calibration_error(correct, conf, strategy="equal")


def test_ece_labels_keep_their_meaning():
    # {-1, 1} labels and booleans are still labels, not qualities
    y = np.array([-1.0, 1.0, 1.0, -1.0])
    p = [0.2, 0.8, 0.6, 0.4]
    assert ba.expected_calibration_error(y, p, n_bins=2) == ba.expected_calibration_error(y > 0, p, n_bins=2)


# -- smooth ECE ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(2))
def test_smooth_ece_equals_relplot(case, seed):
    relplot = pytest.importorskip("relplot")
    correct, conf = _data(seed, 400, **case)
    expected = relplot.smECE(conf.astype(float), correct.astype(float))
    assert ba.smooth_ece(correct, conf) == pytest.approx(expected, abs=1e-6)


def test_smooth_ece_orders_calibrated_below_overconfident():
    rng = np.random.default_rng(5)
    conf = rng.uniform(size=3000)
    calibrated = ba.smooth_ece(rng.uniform(size=3000) < conf, conf)
    overconfident = ba.smooth_ece(rng.uniform(size=3000) < conf**3, conf)
    assert calibrated < 0.03 < 0.1 < overconfident


def test_smooth_ece_of_one_answer_warns():
    with pytest.warns(UndefinedMetricWarning, match="single answer"):
        assert math.isnan(ba.smooth_ece([1], [0.4]))


# -- rejection curve and PRR --------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(3))
def test_rejection_curves_equal_the_loops(case, seed):
    correct, conf = _data(seed, 40, **case)
    rc = ba.rejection_curve(correct, conf)
    model, oracle, random = brute_rejection(correct.tolist(), conf.tolist())
    np.testing.assert_allclose(rc.model, model, atol=TOL)
    np.testing.assert_allclose(rc.oracle, oracle, atol=TOL)
    np.testing.assert_allclose(rc.random, random, atol=TOL)
    np.testing.assert_allclose(rc.rejection, np.arange(40) / 40, atol=0)
    for max_rejection in (1.0, 0.5, 0.3):
        assert ba.prediction_rejection_ratio(correct, conf, max_rejection=max_rejection) == pytest.approx(
            brute_prr(correct.tolist(), conf.tolist(), max_rejection), abs=TOL
        )


def lm_polygraph_prr(quality, confidence, max_rejection=1.0):
    """LM-Polygraph's PRR (ue_metrics/pred_rej_area.py, normalised as in utils/manager.py), written out:
    the area under the kept mean quality, uncertainty = -confidence, oracle uncertainty = -quality,
    random = the mean over shuffles (here its exact value: the mean quality)."""

    def area(uncertainty):
        order = np.argsort(uncertainty, kind="stable")
        n = len(order)
        k = int(max_rejection * n)
        cumsum = np.cumsum(np.asarray(quality, dtype=float)[order])[-k:]
        return np.sum((cumsum / np.arange(n - k + 1, n + 1))[::-1]) / k

    model, oracle, random = area(-np.asarray(confidence)), area(-np.asarray(quality)), float(np.mean(quality))
    return (model - random) / (oracle - random)


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("max_rejection", [1.0, 0.5])
def test_prr_equals_lm_polygraphs_formula_without_ties(graded, max_rejection):
    correct, conf = _data(11, 300, graded=graded)
    assert ba.prediction_rejection_ratio(correct, conf, max_rejection=max_rejection) == pytest.approx(
        lm_polygraph_prr(correct, conf, max_rejection), abs=1e-12
    )


def test_ties_are_the_average_over_every_order():
    correct = np.array([1, 0, 1, 1, 0, 0])
    conf = np.array([0.9, 0.5, 0.5, 0.5, 0.2, 0.9])
    tied = (1, 2, 3)
    values = []
    for perm in itertools.permutations(range(3)):  # break the 0.5 ties every way by a tiny offset
        c = conf.astype(float).copy()
        for rank, i in enumerate(tied):
            c[i] += 1e-6 * perm[rank]
        values.append(ba.rejection_curve(correct, c).model)
    np.testing.assert_allclose(ba.rejection_curve(correct, conf).model, np.mean(values, axis=0), atol=TOL)


@pytest.mark.parametrize("graded", [False, True])
def test_prr_perfect_reversed_and_random(graded):
    correct, _ = _data(2, 2000, graded=graded)
    assert ba.prediction_rejection_ratio(correct, correct + 0.0) == pytest.approx(1.0, abs=TOL)
    assert ba.prediction_rejection_ratio(correct, -correct) < 0
    rng = np.random.default_rng(0)
    values = [ba.prediction_rejection_ratio(correct, rng.uniform(size=2000)) for _ in range(20)]
    assert abs(np.mean(values)) < 0.05


def test_prr_scale_free_and_order_invariant():
    correct, conf = _data(8, 200, graded=True, ties=True)
    prr = ba.prediction_rejection_ratio(correct, conf)
    assert ba.prediction_rejection_ratio(correct, 3 * conf - 7) == pytest.approx(prr, abs=TOL)
    perm = np.random.default_rng(1).permutation(200)
    assert ba.prediction_rejection_ratio(correct[perm], conf[perm]) == pytest.approx(prr, abs=TOL)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([0.0, 0.25, 1.0]), st.integers(0, 4)), min_size=2, max_size=12),
    st.sampled_from([1.0, 0.5]),
)
def test_prr_property_equals_the_loops(rows, max_rejection):
    correct = [q for q, _ in rows]
    conf = [c / 4 for _, c in rows]
    if min(correct) == max(correct) or int(max_rejection * len(rows)) < 2:
        with pytest.warns(UndefinedMetricWarning, match="PRR is undefined"):
            assert math.isnan(ba.prediction_rejection_ratio(correct, conf, max_rejection=max_rejection))
        return
    assert ba.prediction_rejection_ratio(correct, conf, max_rejection=max_rejection) == pytest.approx(
        brute_prr(correct, conf, max_rejection), abs=TOL
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.sampled_from([0.0, 0.5, 0.8, 1.0])), min_size=1, max_size=15))
def test_brier_nll_ece_properties(rows):
    conf = [c for c, _ in rows]
    correct = [q for _, q in rows]
    b = ba.brier_score(correct, conf)
    for got, expected in zip((b.score, b.reliability, b.resolution, b.uncertainty), brute_brier(correct, conf)):
        assert got == pytest.approx(expected, abs=TOL)
    assert ba.negative_log_likelihood(correct, conf) == pytest.approx(brute_nll(correct, conf), abs=1e-9)
    perm = np.random.default_rng(len(rows)).permutation(len(rows))
    for strategy in ("uniform", "quantile"):
        ece = ba.expected_calibration_error(correct, conf, n_bins=5, strategy=strategy)
        shuffled = ba.expected_calibration_error(
            np.array(correct)[perm], np.array(conf)[perm], n_bins=5, strategy=strategy
        )
        assert shuffled == pytest.approx(ece, abs=TOL)


def test_prr_undefined_cases_warn():
    with pytest.warns(UndefinedMetricWarning, match="PRR is undefined"):
        assert math.isnan(ba.prediction_rejection_ratio([1, 1, 1], [0.1, 0.5, 0.9]))
    with pytest.warns(UndefinedMetricWarning, match="PRR is undefined"):
        assert math.isnan(ba.prediction_rejection_ratio([1, 0, 1], [0.1, 0.5, 0.9], max_rejection=0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ba.prediction_rejection_ratio([1, 0, 1, 0], [0.1, 0.5, 0.9, 0.3], max_rejection=0.5)


def test_reliability_band_is_wilson():
    correct, conf = _data(9, 300)
    band = ba.reliability_band(correct, conf, n_bins=5, level=0.9)
    z = 1.6448536269514722
    for row in band.itertuples():
        in_bin = (conf > row.bin / 5) & (conf <= (row.bin + 1) / 5) if row.bin else conf <= 0.2
        k, n = correct[in_bin].sum(), in_bin.sum()
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert (row.count, row.accuracy) == (n, pytest.approx(p, abs=TOL))
        assert row.low == pytest.approx(max(centre - half, 0), abs=TOL)
        assert row.high == pytest.approx(min(centre + half, 1), abs=TOL)


@pytest.mark.parametrize(
    "call", [ba.brier_score, ba.negative_log_likelihood, ba.smooth_ece, ba.prediction_rejection_ratio]
)
def test_bad_inputs_are_one_line_errors(call):
    cases = [
        (([1, 0], [0.5]), "one length"),
        (([], []), "empty"),
        (([1, 2], [0.5, 0.5]), "`correct` must be"),
        (([1, np.nan], [0.5, 0.5]), "`correct` must be finite"),
        ((["a", "b"], [0.5, 0.5]), "`correct`"),
        (([1, 0], [0.5, np.inf]), "`confidence` must be finite"),
    ]
    if call is not ba.prediction_rejection_ratio:
        cases.append((([1, 0], [0.5, 1.5]), "`confidence` must be a probability"))
    for args, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            call(*args)
        assert "\n" not in str(info.value)


def test_prr_max_rejection_checked():
    with pytest.raises(ValueError, match="`max_rejection` must be a number in \\(0, 1\\]"):
        ba.prediction_rejection_ratio([1, 0], [0.5, 0.2], max_rejection=0)


@pytest.mark.parametrize("graded", [False, True])
def test_every_metric_ignores_the_order_of_the_examples(graded):
    correct, conf = _data(12, 300, graded=graded, ties=True)
    perm = np.random.default_rng(2).permutation(300)
    b, bp = ba.brier_score(correct, conf), ba.brier_score(correct[perm], conf[perm])
    for name in ("score", "reliability", "resolution", "uncertainty"):
        assert getattr(bp, name) == pytest.approx(getattr(b, name), abs=TOL)
    for metric in (ba.negative_log_likelihood, ba.smooth_ece, ba.prediction_rejection_ratio):
        assert metric(correct[perm], conf[perm]) == pytest.approx(metric(correct, conf), abs=TOL), metric.__name__
