"""Abstention with a certified risk: ``risk_controlled_threshold`` (Learn-then-Test and SGR).

Checked against brute-force versions on small inputs (scipy's binomial tail
per threshold, the Hoeffding--Bentkus formula written out, the fixed sequence
and the binary search as loops transcribed from their papers), and by a
coverage simulation: over 1,000 seeded calibration draws from a known
distribution, the risk realised on a large test sample at the certified
threshold exceeds the target in at most delta of the draws (plus Monte Carlo
slack), for both methods and for 0/1 and graded losses; with a shifted target
distribution the guarantee fails, and the simulation sees it fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import beyondauc as ba
from beyondauc.metrics.selective.risk_control import RiskControl, risk_controlled_threshold, selective_risk_pvalues

DELTA, TARGET = 0.05, 0.1
DRAWS = 1000
#: Monte Carlo slack of a share of DRAWS draws whose true rate is DELTA: 3.1 standard errors (99.9% one-sided).
SLACK = 3.1 * math.sqrt(DELTA * (1 - DELTA) / DRAWS)


# -- brute force on small inputs ----------------------------------------------------------------


def _brute(correct, confidence, risk, delta, method):
    """The certified threshold by loops: each distinct confidence as a threshold, p-values one at a time."""
    q = np.asarray(correct, dtype=float)
    c = np.asarray(confidence, dtype=float)
    graded = bool(np.any((q != 0) & (q != 1)))
    levels = sorted(set(c.tolist()), reverse=True)
    n_, loss_, p_ = [], [], []
    for lam in levels:
        answered = c >= lam
        n, loss = int(answered.sum()), float((1 - q[answered]).sum())
        if not graded:
            p = stats.binom.cdf(round(loss), n, risk)
        else:
            mean = min(loss / n, risk)
            h = (mean * math.log(mean / risk) if mean > 0 else 0.0) + (1 - mean) * math.log((1 - mean) / (1 - risk))
            p = min(math.exp(-n * h), math.e * stats.binom.cdf(math.ceil(loss - 1e-9), n, risk), 1.0)
        n_.append(n), loss_.append(loss), p_.append(p)
    chosen = -1
    if method == "ltt":  # fixed sequence from the most confident end, from the first threshold with enough answers
        start = 1  # the fewest answers at which half the target risk would be certified
        while True:
            losses = start * risk / 2
            if graded:
                h = (risk / 2) * math.log(0.5) + (1 - risk / 2) * math.log((1 - risk / 2) / (1 - risk))
                p0 = min(math.exp(-start * h), math.e * stats.binom.cdf(math.ceil(losses - 1e-9), start, risk))
            else:
                p0 = stats.binom.cdf(math.floor(losses), start, risk)
            if p0 <= delta:
                break
            start += 1
        for i, (n, p) in enumerate(zip(n_, p_)):
            if n < start:
                continue
            if p > delta:
                break
            chosen = i
    else:  # Geifman & El-Yaniv's binary search, k = ceil(log2(m + 1)) tests at delta / k
        m = len(levels)
        k = max(1, math.ceil(math.log2(m + 1)))
        lo, hi = 0, m - 1
        for _ in range(k):
            if lo > hi:
                break
            z = (lo + hi + 1) // 2
            if p_[z] <= delta / k:
                chosen, lo = z, z + 1
            else:
                hi = z - 1
    if chosen < 0:
        return None
    return levels[chosen], n_[chosen] / len(c), loss_[chosen] / n_[chosen], p_[chosen]


@pytest.mark.parametrize("method", ["ltt", "sgr"])
@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_equals_the_brute_force_loops(method, graded, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    confidence = np.round(rng.uniform(size=n), int(rng.integers(1, 4)))  # ties
    p_right = np.clip(0.6 + 0.4 * confidence, 0.01, 0.99)
    correct = rng.beta(8 * p_right, 8 * (1 - p_right)) if graded else (rng.uniform(size=n) < p_right)
    risk = float(rng.choice([0.05, 0.1, 0.2]))
    got = risk_controlled_threshold(correct, confidence, risk=risk, delta=0.1, method=method)
    want = _brute(correct, confidence, risk, 0.1, method)
    assert got.graded == graded
    if want is None:
        assert not got.certified and got.threshold == np.inf and got.coverage == 0
    else:
        assert got.certified
        assert (got.threshold, got.coverage) == (want[0], want[1])
        assert got.risk == pytest.approx(want[2], abs=1e-12)
        assert got.pvalue == pytest.approx(want[3], rel=1e-9, abs=1e-15)
        assert got.pvalue <= 0.1


def test_pvalues_by_hand():
    # no error among 30 answered: P(Binom(30, 0.1) <= 0) = 0.9^30
    assert selective_risk_pvalues([0], [30], risk=0.1, graded=False)[0] == pytest.approx(0.9**30)
    assert selective_risk_pvalues([0], [0], risk=0.1, graded=False)[0] == 1.0  # nothing answered
    # graded: the Hoeffding bound exp(-n h(0, r)) = (1 - r)^n beside Bentkus' e * (1 - r)^n
    assert selective_risk_pvalues([0.0], [30], risk=0.1, graded=True)[0] == pytest.approx(0.9**30)
    # a mean loss above the target gives h = 0: p = 1
    assert selective_risk_pvalues([5.0], [10], risk=0.1, graded=True)[0] == 1.0


def test_invariant_to_the_scale_and_order_of_the_confidence():
    rng = np.random.default_rng(3)
    c = rng.uniform(size=3000)
    y = rng.uniform(size=3000) < 0.5 + 0.5 * c
    a = risk_controlled_threshold(y, c, risk=TARGET)
    b = risk_controlled_threshold(y[::-1], 1e300 * c[::-1], risk=TARGET)
    assert a.certified and (a.coverage, a.risk, a.n_answered) == (b.coverage, b.risk, b.n_answered)
    assert b.threshold == 1e300 * a.threshold


def test_nothing_certified_is_a_result_and_bad_input_one_line():
    r = risk_controlled_threshold([0, 1, 0, 1], [0.9, 0.8, 0.7, 0.6], risk=0.1)
    assert isinstance(r, RiskControl) and not r.certified and r.threshold == np.inf and np.isnan(r.risk)
    assert "no threshold certified" in repr(r) and "RiskControl" in r._repr_html_()
    for kwargs, message in [
        ({"risk": 0}, "`risk` must be"),
        ({"risk": 0.1, "delta": 1.5}, "`delta` must be"),
        ({"risk": 0.1, "method": "x"}, "`method` must be"),
    ]:
        with pytest.raises(ValueError, match=message):
            risk_controlled_threshold([1, 0], [0.2, 0.4], **kwargs)
    with pytest.raises(ValueError, match="`correct` must be 0/1 or a quality in"):
        risk_controlled_threshold([1.5, 0], [0.2, 0.4], risk=0.1)
    with pytest.raises(ValueError, match="one length"):
        risk_controlled_threshold([1, 0, 1], [0.2, 0.4], risk=0.1)
    assert ba.risk_controlled_threshold is risk_controlled_threshold


# -- the guarantee, simulated ---------------------------------------------------------------------


def _draw(rng, n, graded, shift=0.0):
    """Confidence ~ U(0, 1); P(right | c) = 0.5 + 0.5 c - shift; graded: a Beta quality with that mean."""
    c = rng.uniform(size=n)
    p_right = np.clip(0.5 + 0.5 * c - shift, 0.01, 0.99)
    q = rng.beta(8 * p_right, 8 * (1 - p_right)) if graded else (rng.uniform(size=n) < p_right).astype(float)
    return c, q


def _realised_risk(test, thresholds):
    """Mean loss among the test examples answered at each threshold (a large test sample)."""
    c, q = test
    order = np.argsort(-c)
    c_desc, loss = c[order], np.cumsum(1 - q[order])
    n = np.searchsorted(-c_desc, -np.asarray(thresholds), side="right")  # answered: c >= threshold
    return np.where(n > 0, loss[np.maximum(n, 1) - 1] / np.maximum(n, 1), 0.0)


def _simulate(method, graded, shift=0.0, n=1000):
    test = _draw(np.random.default_rng(10**6), 400_000, graded, shift)
    certified = []
    for seed in range(DRAWS):
        c, q = _draw(np.random.default_rng(seed), n, graded)
        r = risk_controlled_threshold(q, c, risk=TARGET, delta=DELTA, method=method)
        if r.certified:
            certified.append(r.threshold)
    realised = _realised_risk(test, certified)
    return len(certified), int((realised > TARGET).sum())


@pytest.mark.parametrize("method", ["ltt", "sgr"])
@pytest.mark.parametrize("graded", [False, True])
def test_the_guarantee_holds_in_at_least_1_minus_delta_of_draws(method, graded):
    n_certified, failed = _simulate(method, graded)
    assert failed / DRAWS <= DELTA + SLACK
    assert n_certified >= DRAWS // 10  # the test has power: thresholds are certified, not always refused


@pytest.mark.parametrize("method", ["ltt", "sgr"])
def test_a_shifted_target_breaks_the_guarantee_and_the_simulation_sees_it(method):
    n_certified, failed = _simulate(method, False, shift=0.2)
    assert n_certified >= DRAWS // 2
    assert failed >= 0.9 * n_certified
