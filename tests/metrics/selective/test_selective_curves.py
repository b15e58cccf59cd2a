"""Tests of :mod:`beyondauc.metrics.selective.curves`: selective answering (Mishra et al.).

The definitions tested are those of the selective-answering user guide (they win over the
paper where the two differ):

* the coverage-accuracy curve ranks examples by confidence, descending, tied
  confidences entering together; the *exact* curve has one point per distinct
  confidence, the *grid* curve one per threshold ``c_max - j * resolution``
  (answered: confidence >= threshold), thresholds answering the same set
  merged, the last point answering everything; a point's confidence is the
  lowest confidence it answers;
* ``a`` / ``b(t)``: the confidence of the first grid point whose accuracy is
  below 1 / below t (the lowest confidence if none), floored at 0.001;
* a fluctuation is a grid step where accuracy rises (d1 < d2 at c1 >= c2),
  numbered i = 1..n by increasing coverage, ``c = max(c1 - c2, 0.001)``;
* ``DiSCA = x/a + y/b - z * sum_i (n-i+1)(d2-d1)/c / sum_i (n-i+1)`` (paper eq. 1),
  ``DiDMA = p*DiSCA + q*computation_score`` (eq. 2),
  ``NiDMA = u*DiDMA + v*DiSCA(OOD)`` (eq. 3).

Expected values are either worked by hand (literal fractions, derived in the
comments) or computed by the brute-force references below, which loop over
thresholds and examples in plain Python and share no code with the package.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.model_selection import ShuffleSplit

import beyondauc
from beyondauc import (
    METHODS,
    TOLERANCES,
    ScoreCalibrator,
    accuracy_at_coverage,
    auc_tail,
    aurc,
    calibrated_confidence,
    computation_score,
    coverage_accuracy_curve,
    coverage_at_accuracy,
    didma,
    disca,
    e_aurc,
    load_demo,
    nidma,
    plateau,
    selective_answering,
    selective_table,
    tolerance_table,
)

F = Fraction
THIRD = 1 / 3
SLACK = 1e-9  # documented: a confidence within 1e-9 grid steps of a threshold reaches it


# -- brute-force references ---------------------------------------------------------------


def ref_points(confidence, correct, resolution=None):
    """Curve points as (confidence, n_answered, n_correct), by looping over thresholds.

    Exact curve: every distinct confidence is a threshold.  Grid curve: the
    thresholds are c_max, c_max - resolution, c_max - 2 * resolution, ... until
    everything is answered.  A threshold answering the same set as the previous
    one adds no point.
    """
    conf = [float(c) for c in confidence]
    ok = [bool(v) for v in correct]
    n = len(conf)
    points, prev = [], None
    j = 0
    while True:
        if resolution is None:
            distinct = sorted(set(conf), reverse=True)
            if j == len(distinct):
                break
            thr = distinct[j]
            answered = [i for i in range(n) if conf[i] >= thr]
        else:
            thr = max(conf) - j * resolution
            answered = [i for i in range(n) if conf[i] >= thr - SLACK * resolution]
        j += 1
        key = frozenset(answered)
        if not answered or key == prev:
            continue
        prev = key
        points.append((min(conf[i] for i in answered), len(answered), sum(ok[i] for i in answered)))
        if len(answered) == n:
            break
    return points


def ref_coverage_accuracy(points, n):
    return [na / n for _, na, _ in points], [nc / na for _, na, nc in points]


def ref_area(points, n):
    """Area under the step curve: each point's accuracy over its own coverage span."""
    area, prev = 0.0, 0.0
    for _, na, nc in points:
        area += (na / n - prev) * (nc / na)
        prev = na / n
    return area


def ref_geifman_aurc(confidence, correct):
    """Mean over k of the selective risk of the top-k examples (ties broken arbitrarily)."""
    order = sorted(range(len(confidence)), key=lambda i: -confidence[i])
    wrong, total = 0, 0.0
    for k, i in enumerate(order, start=1):
        wrong += not correct[i]
        total += wrong / k
    return total / len(order)


def ref_optimal_aurc(correct):
    """AURC of the best ordering: every correct answer first."""
    ordered = sorted((bool(v) for v in correct), reverse=True)
    return ref_geifman_aurc(list(range(len(ordered), 0, -1)), ordered)


def ref_first_below(points, level):
    """(confidence of the first point with accuracy < level or the lowest one, floored; whether one exists)."""
    for conf, na, nc in points:
        if nc / na < level:
            return max(conf, 0.001), True
    return max(points[-1][0], 0.001), False


def ref_fluctuations(points):
    """(d1, d2, c1, c2, c) of every accuracy rise along the points, by increasing coverage."""
    out = []
    for (c1, na1, nc1), (c2, na2, nc2) in zip(points, points[1:]):
        d1, d2 = nc1 / na1, nc2 / na2
        if d2 > d1:
            out.append((d1, d2, c1, c2, max(c1 - c2, 0.001)))
    return out


def ref_disca(confidence, correct, tolerance=0.9, weights=(THIRD, THIRD, THIRD), resolution=0.01):
    x, y, z = weights
    pts = ref_points(confidence, correct, resolution)
    a = ref_first_below(pts, 1.0)[0]
    b = ref_first_below(pts, tolerance)[0]
    fl = ref_fluctuations(pts)
    n = len(fl)
    num = sum((n - i + 1) * (d2 - d1) / c for i, (d1, d2, _, _, c) in enumerate(fl, start=1))
    den = sum(n - i + 1 for i in range(1, n + 1))
    penalty = z * num / den if n else 0.0
    return x / a + y / b - penalty, a, b, fl, penalty


def curve_points(cur):
    return list(zip(cur.confidence.tolist(), cur.n_answered.tolist(), cur.n_correct.tolist()))


def assert_curve_matches(cur, points, n):
    assert curve_points(cur) == points
    cov, acc = ref_coverage_accuracy(points, n)
    np.testing.assert_allclose(cur.coverage, cov, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cur.accuracy, acc, rtol=0, atol=1e-12)
    assert cur.score == pytest.approx(ref_area(points, n), abs=1e-12)


def random_case(seed, n=None, *, ties=True):
    """Confidences in [0.5, 1] (some on a 0.05 grid, so tied and on grid thresholds) and correctness."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60)) if n is None else n
    conf = rng.uniform(0.5, 1.0, n)
    if ties:
        snap = rng.random(n) < 0.5
        conf[snap] = np.round(conf[snap] * 20) / 20
    ok = rng.random(n) < conf  # roughly calibrated
    return conf, ok


# -- 1. hand-worked DiSCA examples --------------------------------------------------------
# Each case: inputs, options, and the expected curve (confidence, n_answered,
# n_correct), a, b, fluctuations (d1, d2, c1, c2, c), penalty and DiSCA, all
# worked by hand.  Default weights are x = y = z = 1/3, so
# DiSCA = (1/3)/a + (1/3)/b - (1/3) * sum_i w_i (d2-d1)/c / sum_i w_i with w_i = n - i + 1.

HAND = {
    # Every answer right: accuracy never drops below 100%, so a = b = the lowest
    # confidence 0.55; no fluctuation (penalty 0).  DiSCA = (2/3)/0.55 = 40/33.
    "never_below_100": dict(
        conf=[0.9, 0.8, 0.7, 0.6, 0.55],
        ok=[1, 1, 1, 1, 1],
        kw={},
        curve=[(0.9, 1, 1), (0.8, 2, 2), (0.7, 3, 3), (0.6, 4, 4), (0.55, 5, 5)],
        a=0.55,
        b=0.55,
        flucts=[],
        penalty=0.0,
        score=F(40, 33),
    ),
    # Accuracies 1, 1, 2/3, 3/4, 4/5: first below 100% at 0.7 (a = 0.7); never below the
    # tolerance 0.6, so b = the lowest confidence 0.5.  Two rises: 2/3 -> 3/4 at 0.7 -> 0.6
    # and 3/4 -> 4/5 at 0.6 -> 0.5, (d2-d1)/c = (1/12)/0.1 = 5/6 and (1/20)/0.1 = 1/2,
    # weights 2, 1: (2*5/6 + 1/2) / 3 = 13/18, penalty 13/54.
    # DiSCA = (1/3)/0.7 + (1/3)/0.5 - 13/54 = 180/378 + 252/378 - 91/378 = 341/378.
    "never_below_tolerance": dict(
        conf=[0.9, 0.8, 0.7, 0.6, 0.5],
        ok=[1, 1, 0, 1, 1],
        kw=dict(tolerance=0.6),
        curve=[(0.9, 1, 1), (0.8, 2, 2), (0.7, 3, 2), (0.6, 4, 3), (0.5, 5, 4)],
        a=0.7,
        b=0.5,
        flucts=[(F(2, 3), F(3, 4), 0.7, 0.6, 0.1), (F(3, 4), F(4, 5), 0.6, 0.5, 0.1)],
        penalty=F(13, 54),
        score=F(341, 378),
    ),
    # Same data, weights (0.5, 0.2, 0.3): 0.5/0.7 + 0.2/0.5 - 0.3 * 13/18
    # = 5/7 + 2/5 - 13/60 = (300 + 168 - 91)/420 = 377/420.
    "weights_0.5_0.2_0.3": dict(
        conf=[0.9, 0.8, 0.7, 0.6, 0.5],
        ok=[1, 1, 0, 1, 1],
        kw=dict(tolerance=0.6, weights=(0.5, 0.2, 0.3)),
        curve=[(0.9, 1, 1), (0.8, 2, 2), (0.7, 3, 2), (0.6, 4, 3), (0.5, 5, 4)],
        a=0.7,
        b=0.5,
        flucts=[(F(2, 3), F(3, 4), 0.7, 0.6, 0.1), (F(3, 4), F(4, 5), 0.6, 0.5, 0.1)],
        penalty=F(13, 60),
        score=F(377, 420),
    ),
    # The most confident answer is wrong: accuracies 0, 1/2, 2/3, 3/4, so a = b = 0.9 (the
    # highest confidence).  Three rises, each c = 0.1: (d2-d1)/c = 5, 5/3, 5/6, weights 3, 2, 1:
    # (15 + 10/3 + 5/6) / 6 = 115/36, penalty 115/108.
    # DiSCA = (2/3)/0.9 - 115/108 = 80/108 - 115/108 = -35/108.
    "first_wrong": dict(
        conf=[0.9, 0.8, 0.7, 0.6],
        ok=[0, 1, 1, 1],
        kw={},
        curve=[(0.9, 1, 0), (0.8, 2, 1), (0.7, 3, 2), (0.6, 4, 3)],
        a=0.9,
        b=0.9,
        flucts=[(F(0), F(1, 2), 0.9, 0.8, 0.1), (F(1, 2), F(2, 3), 0.8, 0.7, 0.1), (F(2, 3), F(3, 4), 0.7, 0.6, 0.1)],
        penalty=F(115, 108),
        score=F(-35, 108),
    ),
    # Same data, weights (0, 0, 1): only the penalty, -115/36.
    "weights_penalty_only": dict(
        conf=[0.9, 0.8, 0.7, 0.6],
        ok=[0, 1, 1, 1],
        kw=dict(weights=(0, 0, 1)),
        curve=[(0.9, 1, 0), (0.8, 2, 1), (0.7, 3, 2), (0.6, 4, 3)],
        a=0.9,
        b=0.9,
        flucts=[(F(0), F(1, 2), 0.9, 0.8, 0.1), (F(1, 2), F(2, 3), 0.8, 0.7, 0.1), (F(2, 3), F(3, 4), 0.7, 0.6, 0.1)],
        penalty=F(115, 36),
        score=F(-115, 36),
    ),
    # Mistakes only at low confidence: accuracies 1, 1, 2/3, 1/2 never rise (penalty 0);
    # a = 0.7; b(0.6): 2/3 >= 0.6, 1/2 < 0.6, so b = 0.6.  DiSCA = (1/3)/0.7 + (1/3)/0.6 = 65/63.
    "monotone_no_fluctuation": dict(
        conf=[0.9, 0.8, 0.7, 0.6],
        ok=[1, 1, 0, 0],
        kw=dict(tolerance=0.6),
        curve=[(0.9, 1, 1), (0.8, 2, 2), (0.7, 3, 2), (0.6, 4, 2)],
        a=0.7,
        b=0.6,
        flucts=[],
        penalty=0.0,
        score=F(65, 63),
    ),
    # A tied group {0.8: right, wrong, right} enters at once: accuracies 1 (at 0.9), 3/4 (at 0.8),
    # 4/5 (at 0.6) -- no point with only part of the group.  a = 0.8; b(0.8) = 0.8 (3/4 < 0.8).
    # One rise 3/4 -> 4/5 at 0.8 -> 0.6: (1/20)/0.2 = 1/4, penalty 1/12.
    # DiSCA = (2/3)/0.8 - 1/12 = 5/6 - 1/12 = 3/4.
    "tied_group_with_wrong": dict(
        conf=[0.9, 0.8, 0.8, 0.8, 0.6],
        ok=[1, 1, 0, 1, 1],
        kw=dict(tolerance=0.8),
        curve=[(0.9, 1, 1), (0.8, 4, 3), (0.6, 5, 4)],
        a=0.8,
        b=0.8,
        flucts=[(F(3, 4), F(4, 5), 0.8, 0.6, 0.2)],
        penalty=F(1, 12),
        score=F(3, 4),
    ),
    # The same answers with the wrong one just below the group (0.79): now the group is all right
    # (accuracy 1 at 0.8), accuracy first drops at 0.79, so a = b = 0.79 instead of 0.8.
    # Rise 3/4 -> 4/5 at 0.79 -> 0.6: (1/20)/0.19 = 5/19, penalty 5/57.
    # DiSCA = (2/3)/0.79 - 5/57 = 200/237 - 5/57.
    "tie_broken": dict(
        conf=[0.9, 0.8, 0.79, 0.8, 0.6],
        ok=[1, 1, 0, 1, 1],
        kw=dict(tolerance=0.8),
        curve=[(0.9, 1, 1), (0.8, 3, 3), (0.79, 4, 3), (0.6, 5, 4)],
        a=0.79,
        b=0.79,
        flucts=[(F(3, 4), F(4, 5), 0.79, 0.6, 0.19)],
        penalty=F(5, 57),
        score=F(200, 237) - F(5, 57),
    ),
    # A tied group with a wrong answer at the top: accuracies 2/3 (0.7), 3/5 (0.5), 4/6 (0.3),
    # so a = b = 0.7 = the highest confidence.  Rise 3/5 -> 2/3 at 0.5 -> 0.3: (1/15)/0.2 = 1/3,
    # penalty 1/9.  DiSCA = (2/3)/0.7 - 1/9 = 60/63 - 7/63 = 53/63.
    "tied_top": dict(
        conf=[0.7, 0.5, 0.7, 0.3, 0.7, 0.5],
        ok=[1, 1, 0, 1, 1, 0],
        kw={},
        curve=[(0.7, 3, 2), (0.5, 5, 3), (0.3, 6, 4)],
        a=0.7,
        b=0.7,
        flucts=[(F(3, 5), F(2, 3), 0.5, 0.3, 0.2)],
        penalty=F(1, 9),
        score=F(53, 63),
    ),
    # resolution 0.1 from c_max 0.95: thresholds 0.95, 0.85, 0.75, 0.65.  0.93 and 0.91 first
    # answer at 0.85, 0.84 and 0.82 at 0.75, 0.7 at 0.65, so six distinct confidences give four
    # points: accuracies 1 (0.95), 2/3 (0.91), 4/5 (0.82), 4/6 (0.7).  a = b = 0.91 (the exact
    # curve would give 0.93).  One rise 2/3 -> 4/5 at 0.91 -> 0.82: (2/15)/0.09 = 40/27, penalty
    # 40/81 (the exact curve has three rises).  DiSCA = (2/3)/0.91 - 40/81 = 200/273 - 40/81.
    "grid_merges": dict(
        conf=[0.95, 0.93, 0.91, 0.84, 0.82, 0.7],
        ok=[1, 0, 1, 1, 1, 0],
        kw=dict(resolution=0.1),
        curve=[(0.95, 1, 1), (0.91, 3, 2), (0.82, 5, 4), (0.7, 6, 4)],
        a=0.91,
        b=0.91,
        flucts=[(F(2, 3), F(4, 5), 0.91, 0.82, 0.09)],
        penalty=F(40, 81),
        score=F(200, 273) - F(40, 81),
    ),
    # resolution 0.1 from c_max 1.0: 0.7 sits exactly on the threshold 1 - 3 * 0.1 and must be
    # answered there (in floats (1 - 0.7) / 0.1 = 3.0000000000000004), not merged with 0.65 at
    # the threshold 0.6.  Accuracies 1 (1.0), 1/2 (0.7), 2/3 (0.65), 3/4 (0.3); a = b = 0.7.
    # Rises: 1/2 -> 2/3 at 0.7 -> 0.65, (1/6)/0.05 = 10/3; 2/3 -> 3/4 at 0.65 -> 0.3,
    # (1/12)/0.35 = 5/21; weights 2, 1: (20/3 + 5/21)/3 = 145/63, penalty 145/189.
    # DiSCA = (2/3)/0.7 - 145/189 = 180/189 - 145/189 = 5/27.
    "on_grid_threshold": dict(
        conf=[1.0, 0.7, 0.65, 0.3],
        ok=[1, 0, 1, 1],
        kw=dict(resolution=0.1),
        curve=[(1.0, 1, 1), (0.7, 2, 1), (0.65, 3, 2), (0.3, 4, 3)],
        a=0.7,
        b=0.7,
        flucts=[(F(1, 2), F(2, 3), 0.7, 0.65, 0.05), (F(2, 3), F(3, 4), 0.65, 0.3, 0.35)],
        penalty=F(145, 189),
        score=F(5, 27),
    ),
    # resolution 0.0001 separates 0.5004 and 0.5; their gap 0.0004 is floored to c = 0.001.
    # Accuracies 1, 1/2 (0.5004), 2/3 (0.5), 3/4 (0.2); a = b = 0.5004.  Rises: (1/6)/0.001 = 500/3
    # and (1/12)/0.3 = 5/18; weights 2, 1: (1000/3 + 5/18)/3 = 6005/54, penalty 6005/162.
    # DiSCA = (2/3)/0.5004 - 6005/162.
    "c_floored": dict(
        conf=[0.9, 0.5004, 0.5, 0.2],
        ok=[1, 0, 1, 1],
        kw=dict(resolution=0.0001),
        curve=[(0.9, 1, 1), (0.5004, 2, 1), (0.5, 3, 2), (0.2, 4, 3)],
        a=0.5004,
        b=0.5004,
        flucts=[(F(1, 2), F(2, 3), 0.5004, 0.5, 0.001), (F(2, 3), F(3, 4), 0.5, 0.2, 0.3)],
        penalty=F(6005, 162),
        score=F(2, 3) / F("0.5004") - F(6005, 162),
    ),
    # Accuracy drops at confidence 0: a = b = max(0, 0.001) = 0.001, no rise.
    # DiSCA = (1/3)/0.001 + (1/3)/0.001 = 2000/3.
    "a_b_floored": dict(
        conf=[0.3, 0.0],
        ok=[1, 0],
        kw={},
        curve=[(0.3, 1, 1), (0.0, 2, 1)],
        a=0.001,
        b=0.001,
        flucts=[],
        penalty=0.0,
        score=F(2000, 3),
    ),
    # All right but all at confidence 0: a = b = the lowest confidence 0, floored to 0.001.
    "all_zero_confidence": dict(
        conf=[0.0, 0.0, 0.0],
        ok=[1, 1, 1],
        kw={},
        curve=[(0.0, 3, 3)],
        a=0.001,
        b=0.001,
        flucts=[],
        penalty=0.0,
        score=F(2000, 3),
    ),
}


@pytest.mark.parametrize("name", list(HAND))
def test_disca_hand_worked(name):
    case = HAND[name]
    conf, ok = case["conf"], [bool(v) for v in case["ok"]]
    d = disca(conf, ok, **case["kw"])
    n = len(conf)

    assert curve_points(d.curve) == case["curve"]
    np.testing.assert_allclose(d.curve.coverage, [na / n for _, na, _ in case["curve"]], rtol=1e-12)
    np.testing.assert_allclose(d.curve.accuracy, [nc / na for _, na, nc in case["curve"]], rtol=1e-12)
    assert d.a == pytest.approx(case["a"], rel=1e-12)
    assert d.b == pytest.approx(case["b"], rel=1e-12)
    assert d.n_fluctuations == len(case["flucts"])
    assert list(d.fluctuations["i"]) == list(range(1, len(case["flucts"]) + 1))
    for col, k in zip(["d1", "d2", "c1", "c2", "c"], range(5)):
        np.testing.assert_allclose(
            d.fluctuations[col].to_numpy(dtype=float),
            [float(f[k]) for f in case["flucts"]],
            rtol=1e-9,
            atol=1e-12,
            err_msg=col,
        )
    assert d.fluctuation_magnitude == pytest.approx(float(sum(f[1] - f[0] for f in case["flucts"])), abs=1e-12)
    assert d.penalty == pytest.approx(float(case["penalty"]), rel=1e-9, abs=1e-12)
    assert d.score == pytest.approx(float(case["score"]), rel=1e-9)
    # and the brute-force reference agrees with the hand numbers
    score, a, b, _, penalty = ref_disca(conf, ok, **case["kw"])
    assert (score, a, b, penalty) == pytest.approx(
        (float(case["score"]), case["a"], case["b"], float(case["penalty"])), rel=1e-9, abs=1e-12
    )


def test_hand_tie_changes_the_point():
    """The tied group with a wrong answer gives a = 0.8; breaking the tie downwards gives 0.79."""
    tied = disca(HAND["tied_group_with_wrong"]["conf"], [1, 1, 0, 1, 1])
    broken = disca(HAND["tie_broken"]["conf"], [1, 1, 0, 1, 1])
    assert (tied.a, broken.a) == (0.8, 0.79)
    # input order within a tied group does not matter (wrong answer first or last)
    for order in ([0, 2, 1, 3, 4], [0, 1, 3, 2, 4], [4, 3, 2, 1, 0]):
        conf = np.array([0.9, 0.8, 0.8, 0.8, 0.6])[order]
        ok = np.array([1, 1, 0, 1, 1], dtype=bool)[order]
        assert curve_points(coverage_accuracy_curve(conf, ok)) == [(0.9, 1, 1), (0.8, 4, 3), (0.6, 5, 4)]


def test_hand_grid_merge_versus_exact_curve():
    """The merged example's exact curve keeps every confidence: a = 0.93 and three rises."""
    conf, ok = HAND["grid_merges"]["conf"], [1, 0, 1, 1, 1, 0]
    exact = coverage_accuracy_curve(conf, ok)
    assert curve_points(exact) == [(0.95, 1, 1), (0.93, 2, 1), (0.91, 3, 2), (0.84, 4, 3), (0.82, 5, 4), (0.7, 6, 4)]
    fine = disca(conf, ok, resolution=0.01)  # 0.01 separates all six confidences
    assert fine.a == 0.93 and fine.n_fluctuations == 3


def test_hand_on_threshold_tolerance_at_grid_point():
    """0.7 reaches the threshold 0.7: with tolerance 0.5 nothing is below, b is the lowest, 0.3."""
    d = disca([1.0, 0.7, 0.65, 0.3], [1, 0, 1, 1], resolution=0.1, tolerance=0.5)
    assert d.b == 0.3
    assert d.a == 0.7
    # 0.69999999 is just below the threshold 0.7, so it is first answered at 0.6 with 0.65
    below = coverage_accuracy_curve([1.0, 0.69999999, 0.65, 0.3], [1, 0, 1, 1], resolution=0.1)
    assert curve_points(below) == [(1.0, 1, 1), (0.65, 3, 2), (0.3, 4, 3)]


def test_hand_b_table_tied_top():
    """tied_top: accuracies 2/3, 3/5, 2/3 at confidences 0.7, 0.5, 0.3.

    t in 0.95..0.7: 2/3 < t at the first point -> b = 0.7; t = 0.65: 2/3 >= 0.65 but
    3/5 < 0.65 -> b = 0.5; t = 0.6 and 0.55: no accuracy below t (3/5 equals 0.6,
    not below) -> b = the lowest confidence 0.3, falls_below False.  DiSCA per row:
    (1/3)/0.7 + (1/3)/b - 1/9.
    """
    case = HAND["tied_top"]
    d = disca(case["conf"], case["ok"])
    tab = d.b_table
    assert tab["tolerance"].tolist() == [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55]
    assert tab["b"].tolist() == [0.7] * 6 + [0.5, 0.3, 0.3]
    assert tab["falls_below"].tolist() == [True] * 7 + [False, False]
    expected = [F(1, 3) / F("0.7") + F(1, 3) / F(str(b)) - F(1, 9) for b in tab["b"]]
    np.testing.assert_allclose(tab["disca"], [float(v) for v in expected], rtol=1e-9)


def test_tolerance_one_gives_b_equal_a():
    case = HAND["never_below_tolerance"]
    d = disca(case["conf"], case["ok"], tolerance=1.0)
    assert d.b == d.a == 0.7


def test_weights_033_accepted():
    """The paper's x = y = z = 0.33 (sum 0.99) is documented as accepted (weights within 0.01 of 1).

    On never_below_tolerance: 0.33/0.7 + 0.33/0.5 - 0.33 * 13/18.
    """
    case = HAND["never_below_tolerance"]
    d = disca(case["conf"], case["ok"], tolerance=0.6, weights=(0.33, 0.33, 0.33))
    assert d.score == pytest.approx(0.33 / 0.7 + 0.33 / 0.5 - 0.33 * 13 / 18, rel=1e-9)


# -- 2. curves against the brute-force reference ---------------------------------------------


@pytest.mark.parametrize("resolution", [None, 0.01, 0.05, 0.1, 0.25, 0.3, 1.0])
@pytest.mark.parametrize("seed", range(8))
def test_curve_matches_reference(seed, resolution):
    conf, ok = random_case(seed)
    cur = coverage_accuracy_curve(conf, ok, resolution=resolution)
    assert cur.resolution == resolution
    assert_curve_matches(cur, ref_points(conf, ok, resolution), len(conf))
    frame = cur.to_frame()
    assert list(frame.columns) == ["confidence", "coverage", "accuracy", "n_answered", "n_correct"]
    assert curve_points(cur) == list(zip(frame["confidence"], frame["n_answered"], frame["n_correct"]))


def test_curve_docstring_example_by_hand():
    # 0.9 right; {0.8 right, 0.8 wrong} together; 0.6 right.
    # coverage 1/4, 3/4, 1; accuracy 1, 2/3, 3/4; area = 1/4*1 + 1/2*2/3 + 1/4*3/4 = 37/48.
    cur = coverage_accuracy_curve([0.9, 0.8, 0.8, 0.6], [True, True, False, True])
    np.testing.assert_allclose(cur.coverage, [0.25, 0.75, 1.0])
    np.testing.assert_allclose(cur.accuracy, [1, 2 / 3, 0.75])
    assert cur.score == pytest.approx(37 / 48)
    assert aurc([0.9, 0.8, 0.8, 0.6], [True, True, False, True]) == pytest.approx(11 / 48)


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_area_aurc_and_step_areas(seed, ties):
    conf, ok = random_case(100 + seed, ties=ties)
    n = len(conf)
    pts = ref_points(conf, ok)
    cur = coverage_accuracy_curve(conf, ok)
    area = ref_area(pts, n)
    assert cur.score == pytest.approx(area, abs=1e-12)
    assert cur.score == pytest.approx(1 - aurc(conf, ok), abs=1e-12)
    if not ties:
        assert len(set(conf.tolist())) == n
        assert aurc(conf, ok) == pytest.approx(ref_geifman_aurc(conf.tolist(), ok.tolist()), abs=1e-12)
        assert e_aurc(conf, ok) >= -1e-12
    assert e_aurc(conf, ok) == pytest.approx(aurc(conf, ok) - ref_optimal_aurc(ok), abs=1e-12)


@pytest.mark.parametrize("n_wrong", [0, 1, 3, 7])
@pytest.mark.parametrize("n_right", [0, 1, 4, 9])
def test_e_aurc_zero_for_perfect_ranking(n_right, n_wrong):
    if n_right + n_wrong == 0:
        return
    conf = np.linspace(1.0, 0.5, n_right + n_wrong)  # distinct, right answers first
    ok = np.array([True] * n_right + [False] * n_wrong)
    assert e_aurc(conf, ok) == pytest.approx(0.0, abs=1e-12)
    assert aurc(conf, ok) == pytest.approx(ref_optimal_aurc(ok), abs=1e-12)
    # the reverse ranking (wrong answers first) is strictly worse when both kinds exist
    if n_right and n_wrong:
        assert e_aurc(conf, ok[::-1]) > 0


def test_e_aurc_docstring_by_hand():
    # wrong first: risks 1, 1/2 -> aurc 3/4; optimal (right first): 0, 1/2 -> 1/4; excess 1/2
    assert e_aurc([0.9, 0.8], [False, True]) == pytest.approx(0.5)
    assert aurc([0.9, 0.8], [False, True]) == pytest.approx(0.75)


def ref_partial_area(points, n, low, high):
    area, prev = 0.0, 0.0
    for _, na, nc in points:
        cov = na / n
        area += max(0.0, min(cov, high) - max(prev, low)) * (nc / na)
        prev = cov
    return area


@pytest.mark.parametrize("seed", range(6))
def test_derived_readouts_match_reference(seed):
    conf, ok = random_case(200 + seed)
    n = len(conf)
    pts = ref_points(conf, ok)
    cov, acc = ref_coverage_accuracy(pts, n)
    for target in (0.0, 0.5, 0.8, 0.9, 1.0):
        reach = [c for c, a in zip(cov, acc) if a >= target]
        assert coverage_at_accuracy(conf, ok, target=target) == pytest.approx(max(reach) if reach else 0.0)
    for coverage in (0.05, 0.2, 0.5, 0.77, 1.0):
        first = next(a for c, a in zip(cov, acc) if c >= coverage - 1e-12)
        assert accuracy_at_coverage(conf, ok, coverage=coverage) == pytest.approx(first)
    for m in (0.1, 0.2, 0.5, 1.0):
        assert auc_tail(conf, ok, max_coverage=m) == pytest.approx(ref_partial_area(pts, n, 0.0, m) / m, abs=1e-12)
    cur = coverage_accuracy_curve(conf, ok)
    assert cur.partial_area(0.0, 1.0) == pytest.approx(cur.score, abs=1e-12)
    assert cur.partial_area(0.3, 0.6) == pytest.approx(ref_partial_area(pts, n, 0.3, 0.6), abs=1e-12)
    for band in (0.0, 0.02, 0.1):
        full = acc[-1]
        outside = [k for k, a in enumerate(acc) if abs(a - full) > band]
        start = outside[-1] + 1 if outside else 0
        p = plateau(conf, ok, band=band)
        assert p.score == pytest.approx(1.0 - (cov[start - 1] if start else 0.0), abs=1e-12)
        assert (p.accuracy_low, p.accuracy_high) == pytest.approx((min(acc[start:]), max(acc[start:])))
        assert (p.confidence_low, p.confidence_high) == (pts[-1][0], pts[start][0])


def test_readouts_by_hand():
    conf, ok = [0.9, 0.8, 0.7, 0.6], [True, False, True, True]
    # accuracies 1, 1/2, 2/3, 3/4 at coverages 1/4 .. 1
    assert accuracy_at_coverage(conf, ok, coverage=0.5) == 0.5
    assert accuracy_at_coverage(conf, ok, coverage=0.3) == 0.5  # 0.3 needs the second example
    assert coverage_at_accuracy(conf, ok, target=0.75) == 1.0
    assert coverage_at_accuracy(conf, ok, target=0.7) == 1.0
    assert coverage_at_accuracy(conf, [False] * 4, target=0.1) == 0.0
    assert auc_tail(conf, ok, max_coverage=0.5) == pytest.approx((0.25 * 1 + 0.25 * 0.5) / 0.5)
    # plateau: within 0.1 of 3/4 are 2/3 and 3/4 -> the last half of coverage, confidences 0.7..0.6
    p = plateau(conf, ok, band=0.1)
    assert (p.score, p.confidence_low, p.confidence_high) == (0.5, 0.6, 0.7)


# -- 3. b table ------------------------------------------------------------------------------


@pytest.mark.parametrize("resolution", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("seed", range(8))
def test_b_table_matches_reference(seed, resolution):
    conf, ok = random_case(300 + seed, n=40)
    pts = ref_points(conf, ok, resolution)
    d = disca(conf, ok, resolution=resolution)
    tab = d.b_table
    assert tab["tolerance"].tolist() == [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55]
    for _, row in tab.iterrows():
        t = row["tolerance"]
        b, falls = ref_first_below(pts, t)
        assert row["b"] == b, t
        assert row["falls_below"] == falls, t
        score = ref_disca(conf, ok, tolerance=t, resolution=resolution)[0]
        assert row["disca"] == pytest.approx(score, rel=1e-9), t
        single = disca(conf, ok, tolerance=t, resolution=resolution)
        assert single.b == row["b"]
        assert single.score == pytest.approx(row["disca"], rel=1e-12)


# -- 4. DiDMA, NiDMA, computation score -------------------------------------------------------


def test_didma_nidma_by_hand():
    # in distribution: tied_group_with_wrong at tolerance 0.8, DiSCA = 3/4 (see HAND)
    conf, ok = HAND["tied_group_with_wrong"]["conf"], [1, 1, 0, 1, 1]
    # out of distribution: never_below_100, DiSCA = 40/33 whatever the tolerance
    conf_ood, ok_ood = HAND["never_below_100"]["conf"], [1] * 5
    # DiDMA = 0.6 * 3/4 + 0.4 * 2 = 0.45 + 0.8 = 1.25
    dd = didma(conf, ok, computation_score=2.0, weights=(0.6, 0.4), tolerance=0.8)
    assert dd.score == pytest.approx(1.25)
    assert dd.disca.score == pytest.approx(0.75)
    assert (dd.computation_score, dd.weights) == (2.0, (0.6, 0.4))
    # default weights 1/2, 1/2: 3/8 + 1 = 11/8
    assert didma(conf, ok, computation_score=2.0, tolerance=0.8).score == pytest.approx(11 / 8)
    # NiDMA = 0.7 * 1.25 + 0.3 * 40/33 = 7/8 + 4/11 = 109/88
    nd = nidma(
        conf, ok, conf_ood, ok_ood, computation_score=2.0, weights=(0.7, 0.3), didma_weights=(0.6, 0.4), tolerance=0.8
    )
    assert nd.score == pytest.approx(109 / 88)
    assert nd.didma.score == pytest.approx(1.25)
    assert nd.disca_ood.score == pytest.approx(40 / 33)
    assert nd.disca_ood.tolerance == 0.8
    # defaults (1/2, 1/2) both: 1/2 * 11/8 + 1/2 * 40/33 = 11/16 + 20/33 = 683/528
    assert nidma(conf, ok, conf_ood, ok_ood, computation_score=2.0, tolerance=0.8).score == pytest.approx(683 / 528)


def test_didma_nidma_pass_options_through():
    conf, ok = random_case(5, n=30)
    conf_ood, ok_ood = random_case(6, n=25)
    opts = dict(tolerance=0.75, resolution=0.05)
    dw = (0.2, 0.3, 0.5)
    ref = disca(conf, ok, weights=dw, **opts).score
    ref_ood = disca(conf_ood, ok_ood, weights=dw, **opts).score
    dd = didma(conf, ok, computation_score=0.3, weights=(0.9, 0.1), disca_weights=dw, **opts)
    assert dd.score == pytest.approx(0.9 * ref + 0.1 * 0.3)
    nd = nidma(
        conf,
        ok,
        conf_ood,
        ok_ood,
        computation_score=0.3,
        weights=(0.25, 0.75),
        didma_weights=(0.9, 0.1),
        disca_weights=dw,
        **opts,
    )
    assert nd.score == pytest.approx(0.25 * (0.9 * ref + 0.1 * 0.3) + 0.75 * ref_ood)


def test_computation_score_values():
    assert computation_score(energy=4) == 0.25
    assert computation_score(parameters=2e6, reference_parameters=1e6) == 0.5
    assert computation_score(parameters=5e5, reference_parameters=1e6) == 2.0
    assert computation_score(energy=0.5) == 2.0


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(energy=1.0, parameters=1e6, reference_parameters=1e6), "energy"),
        (dict(energy=1.0, parameters=1e6), "energy"),
        (dict(), "energy"),
        (dict(parameters=1e6), "reference_parameters"),
        (dict(reference_parameters=1e6), "parameters"),
        (dict(energy=0), "energy"),
        (dict(energy=-2), "energy"),
        (dict(energy=float("nan")), "energy"),
        (dict(energy=True), "energy"),
        (dict(parameters=0, reference_parameters=1e6), "parameters"),
        (dict(parameters=1e6, reference_parameters=-1), "reference_parameters"),
    ],
)
def test_computation_score_errors(kw, name):
    with pytest.raises(ValueError, match=re.escape(f"`{name}`")):
        computation_score(**kw)


# -- 5. invariances --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_permutation_changes_nothing(seed):
    conf, ok = random_case(400 + seed, n=50)
    perm = np.random.default_rng(seed).permutation(len(conf))
    for res in (None, 0.01, 0.1):
        assert curve_points(coverage_accuracy_curve(conf, ok, resolution=res)) == curve_points(
            coverage_accuracy_curve(conf[perm], ok[perm], resolution=res)
        )
    d, dp = disca(conf, ok), disca(conf[perm], ok[perm])
    assert (d.score, d.a, d.b, d.n_fluctuations, d.penalty) == (dp.score, dp.a, dp.b, dp.n_fluctuations, dp.penalty)
    pd.testing.assert_frame_equal(d.b_table, dp.b_table)
    pd.testing.assert_frame_equal(d.fluctuations, dp.fluctuations)
    assert aurc(conf, ok) == aurc(conf[perm], ok[perm])
    assert e_aurc(conf, ok) == e_aurc(conf[perm], ok[perm])


TRANSFORMS = {
    "logit": lambda c: np.log(c / (1 - c + 1e-3)),
    "affine": lambda c: 100 * c - 40,
    "cube": lambda c: c**3 + 5 * c,
    "exp": lambda c: np.exp(3 * c),
}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("seed", range(4))
def test_order_only_metrics_invariant_under_increasing_map(seed, transform):
    conf, ok = random_case(500 + seed, n=50)
    g = TRANSFORMS[transform](conf)
    assert np.array_equal(np.argsort(conf, kind="stable"), np.argsort(g, kind="stable"))
    assert len(set(g.tolist())) == len(set(conf.tolist()))  # ties kept, none created
    a, b = coverage_accuracy_curve(conf, ok), coverage_accuracy_curve(g, ok)
    assert a.n_answered.tolist() == b.n_answered.tolist()
    assert a.n_correct.tolist() == b.n_correct.tolist()
    np.testing.assert_allclose(b.confidence, TRANSFORMS[transform](a.confidence))
    assert a.score == b.score
    assert aurc(conf, ok) == aurc(g, ok)
    assert e_aurc(conf, ok) == e_aurc(g, ok)
    assert auc_tail(conf, ok) == auc_tail(g, ok)
    assert coverage_at_accuracy(conf, ok, target=0.8) == coverage_at_accuracy(g, ok, target=0.8)
    assert accuracy_at_coverage(conf, ok, coverage=0.4) == accuracy_at_coverage(g, ok, coverage=0.4)
    assert plateau(conf, ok).score == plateau(g, ok).score
    # DiSCA reads the confidences themselves: these maps leave [0, 1], and it refuses
    assert g.max() > 1 or g.min() < 0
    with pytest.raises(ValueError, match=re.escape("`confidence`")):
        disca(g, ok)


def test_disca_reads_confidence_values_not_only_order():
    """Squaring keeps the order (and every curve but DiSCA's) yet moves a from 0.7 to 0.49."""
    conf, ok = np.array([0.9, 0.8, 0.7, 0.6, 0.5]), [1, 1, 0, 1, 1]
    assert aurc(conf, ok) == aurc(conf**2, ok)
    d, d2 = disca(conf, ok), disca(conf**2, ok)
    assert d.a == pytest.approx(0.7) and d2.a == pytest.approx(0.49)
    assert d.score != pytest.approx(d2.score)


# -- 6. bad input ----------------------------------------------------------------------------

OOD = ([0.9, 0.6, 0.8], [True, False, True])

ARRAY_FUNCS = {
    "curve": lambda c, k: coverage_accuracy_curve(c, k),
    "grid_curve": lambda c, k: coverage_accuracy_curve(c, k, resolution=0.1),
    "aurc": aurc,
    "e_aurc": e_aurc,
    "coverage_at_accuracy": lambda c, k: coverage_at_accuracy(c, k, target=0.8),
    "accuracy_at_coverage": lambda c, k: accuracy_at_coverage(c, k, coverage=0.5),
    "auc_tail": auc_tail,
    "plateau": plateau,
    "disca": disca,
    "didma": lambda c, k: didma(c, k, computation_score=1.0),
    "nidma": lambda c, k: nidma(c, k, *OOD, computation_score=1.0),
}
PROBABILITY_FUNCS = ["grid_curve", "disca", "didma", "nidma"]
GRADED_FUNCS = ["aurc", "e_aurc"]  # they take a graded quality (test_graded.py, beside this file, checks its values)
ORDER_FUNCS = [f for f in ARRAY_FUNCS if f not in PROBABILITY_FUNCS]


def _value(result):
    """A comparable summary of any array function's result."""
    if isinstance(result, float):
        return result
    if hasattr(result, "n_answered"):
        return (result.score, *result.n_answered.tolist(), *result.n_correct.tolist())
    return result.score


@pytest.mark.parametrize("bad", [-0.1, 1.2, 7.0])
@pytest.mark.parametrize("func", PROBABILITY_FUNCS)
def test_confidence_outside_unit_rejected(func, bad):
    with pytest.raises(ValueError, match=re.escape("`confidence`")):
        ARRAY_FUNCS[func]([0.9, bad, 0.6], [True, False, True])


@pytest.mark.parametrize("func", ORDER_FUNCS)
def test_confidence_outside_unit_accepted_by_order_functions(func):
    raw = np.array([-3.0, 12.0, 5.0, 5.0, 0.5, 40.0])
    ok = [True, False, True, False, True, True]
    scaled = (raw + 3) / 43  # same order, in [0, 1]
    assert _value(ARRAY_FUNCS[func](raw, ok)) == pytest.approx(_value(ARRAY_FUNCS[func](scaled, ok)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("func", list(ARRAY_FUNCS))
def test_nonfinite_confidence_rejected(func, bad):
    with pytest.raises(ValueError, match=re.escape("`confidence`")):
        ARRAY_FUNCS[func]([0.9, bad, 0.6], [True, False, True])


@pytest.mark.parametrize(
    "bad",
    [
        [0, 2, 1],
        [0.5, 1, 0],
        ["yes", "no", "yes"],
        ["True", "False", "True"],
        [None, True, False],
        [np.nan, 1, 0],
        [-1, 0, 1],
    ],
    ids=["two", "half", "words", "bool-strings", "none", "nan", "minus-one"],
)
@pytest.mark.parametrize("func", list(ARRAY_FUNCS))
def test_correct_not_boolean_rejected(func, bad):
    if func in GRADED_FUNCS and bad == [0.5, 1, 0]:  # a quality in [0, 1]: graded correctness, the loss 1 - q
        assert np.isfinite(ARRAY_FUNCS[func]([0.9, 0.7, 0.6], bad))
        return
    with pytest.raises(ValueError, match=re.escape("`correct`")):
        ARRAY_FUNCS[func]([0.9, 0.7, 0.6], bad)


@pytest.mark.parametrize("func", list(ARRAY_FUNCS))
def test_zero_one_accepted_as_boolean(func):
    conf = [0.9, 0.7, 0.7, 0.6, 0.55]
    bools = [True, False, True, True, False]
    expected = _value(ARRAY_FUNCS[func](conf, bools))
    for as_numbers in ([1, 0, 1, 1, 0], np.array([1, 0, 1, 1, 0], dtype=np.int8), [1.0, 0.0, 1.0, 1.0, 0.0]):
        assert _value(ARRAY_FUNCS[func](conf, as_numbers)) == expected


@pytest.mark.parametrize("func", list(ARRAY_FUNCS))
def test_empty_input_rejected(func):
    with pytest.raises(ValueError, match=re.escape("`confidence`")):
        ARRAY_FUNCS[func]([], [])


@pytest.mark.parametrize("ok", [[True, False], [True, False, True, True]])
@pytest.mark.parametrize("func", list(ARRAY_FUNCS))
def test_length_mismatch_rejected(func, ok):
    with pytest.raises(ValueError, match=re.escape("`correct`")):
        ARRAY_FUNCS[func]([0.9, 0.7, 0.6], ok)


@pytest.mark.parametrize("func", list(ARRAY_FUNCS))
def test_two_dimensional_confidence_rejected(func):
    with pytest.raises(ValueError, match=re.escape("`confidence`")):
        ARRAY_FUNCS[func]([[0.9, 0.7], [0.6, 0.5]], [True, False])


SCORE_FUNCS = {
    "disca": lambda **kw: disca([0.9, 0.7, 0.6], [1, 0, 1], **kw),
    "didma": lambda **kw: didma([0.9, 0.7, 0.6], [1, 0, 1], computation_score=1.0, **kw),
    "nidma": lambda **kw: nidma([0.9, 0.7, 0.6], [1, 0, 1], *OOD, computation_score=1.0, **kw),
}


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1.01, 2, np.nan, True, "0.9"])
@pytest.mark.parametrize("func", list(SCORE_FUNCS))
def test_tolerance_out_of_range_rejected(func, bad):
    with pytest.raises(ValueError, match=re.escape("`tolerance`")):
        SCORE_FUNCS[func](tolerance=bad)


@pytest.mark.parametrize("bad", [0, -0.01, 1.5, np.nan, np.inf, True])
@pytest.mark.parametrize("func", ["disca", "didma", "nidma", "grid_curve"])
def test_resolution_out_of_range_rejected(func, bad):
    with pytest.raises(ValueError, match=re.escape("`resolution`")):
        if func == "grid_curve":
            coverage_accuracy_curve([0.9, 0.7], [1, 0], resolution=bad)
        else:
            SCORE_FUNCS[func](resolution=bad)


def test_resolution_one_accepted():
    # threshold c_max, then c_max - 1 <= 0 answers everything: two points
    cur = coverage_accuracy_curve([0.9, 0.7, 0.2], [1, 0, 1], resolution=1.0)
    assert curve_points(cur) == [(0.9, 1, 1), (0.2, 3, 2)]
    assert disca([0.9, 0.7, 0.2], [1, 0, 1], resolution=1).a == 0.2


BAD_WEIGHTS_3 = [
    (-0.1, 0.6, 0.5),
    (0.5, 0.5),
    (0.25, 0.25, 0.25, 0.25),
    (0.5, 0.5, 0.5),
    (0.3, 0.3, 0.3),
    (np.nan, 0.5, 0.5),
    ("a", "b", "c"),
    1.0,
]
BAD_WEIGHTS_2 = [(-0.2, 1.2), (1.0,), (0.5, 0.5, 0.0), (0.6, 0.6), (np.inf, 0.0), None]


@pytest.mark.parametrize("bad", BAD_WEIGHTS_3, ids=repr)
def test_disca_weights_rejected(bad):
    with pytest.raises(ValueError, match=re.escape("`weights`")):
        disca([0.9, 0.7, 0.6], [1, 0, 1], weights=bad)


@pytest.mark.parametrize("bad", BAD_WEIGHTS_2, ids=repr)
@pytest.mark.parametrize("func", ["didma", "nidma"])
def test_didma_nidma_weights_rejected(func, bad):
    with pytest.raises(ValueError, match=re.escape("`weights`")):
        SCORE_FUNCS[func](weights=bad)


@pytest.mark.parametrize("bad", [(0.5, 0.5), (0.5, 0.5, 0.5)], ids=repr)
@pytest.mark.parametrize("func", ["didma", "nidma"])
def test_disca_weights_option_named(func, bad):
    """didma/nidma pass ``disca_weights`` on; an error must name that parameter, not their own `weights`."""
    with pytest.raises(ValueError, match=re.escape("`disca_weights`")):
        SCORE_FUNCS[func](disca_weights=bad)


@pytest.mark.parametrize("bad", [(0.6, 0.6), (1.0,)], ids=repr)
def test_nidma_didma_weights_option_named(bad):
    """nidma's ``didma_weights`` are (p, q); an error must name them, not nidma's own (u, v) `weights`."""
    with pytest.raises(ValueError, match=re.escape("`didma_weights`")):
        SCORE_FUNCS["nidma"](didma_weights=bad)


def test_weights_summing_within_001_accepted():
    for w in [(0.33, 0.33, 0.34), (0.5, 0.25, 0.25), (1, 0, 0), (0.334, 0.333, 0.333)]:
        disca([0.9, 0.7, 0.6], [1, 0, 1], weights=w)
    for w in [(0.5, 0.5), (0.999, 0.0), (0, 1)]:
        didma([0.9, 0.7, 0.6], [1, 0, 1], computation_score=1.0, weights=w)


@pytest.mark.parametrize("bad", [0, 0.0, -0.5, 1.2, np.nan, True])
def test_coverage_out_of_range_rejected(bad):
    with pytest.raises(ValueError, match=re.escape("`coverage`")):
        accuracy_at_coverage([0.9, 0.7, 0.6], [1, 0, 1], coverage=bad)


@pytest.mark.parametrize("bad", [1.2, -0.1, np.nan, np.inf])
def test_target_out_of_range_rejected(bad):
    with pytest.raises(ValueError, match=re.escape("`target`")):
        coverage_at_accuracy([0.9, 0.7, 0.6], [1, 0, 1], target=bad)


@pytest.mark.parametrize("bad", [0, -0.1, 1.5])
def test_max_coverage_out_of_range_rejected(bad):
    with pytest.raises(ValueError, match=re.escape("`max_coverage`")):
        auc_tail([0.9, 0.7, 0.6], [1, 0, 1], max_coverage=bad)


def test_boundary_options_accepted():
    conf, ok = [0.9, 0.7, 0.6], [1, 0, 1]
    assert accuracy_at_coverage(conf, ok, coverage=1) == pytest.approx(2 / 3)
    assert coverage_at_accuracy(conf, ok, target=0) == 1.0
    assert coverage_at_accuracy(conf, ok, target=1) == pytest.approx(1 / 3)
    assert auc_tail(conf, ok, max_coverage=1) == pytest.approx(coverage_accuracy_curve(conf, ok).score)


@pytest.mark.parametrize("bad", [-1.0, -1e-9, np.nan, np.inf, True, "1"])
@pytest.mark.parametrize("func", ["didma", "nidma"])
def test_computation_score_argument_rejected(func, bad):
    with pytest.raises(ValueError, match=re.escape("`computation_score`")):
        if func == "didma":
            didma([0.9, 0.7, 0.6], [1, 0, 1], computation_score=bad)
        else:
            nidma([0.9, 0.7, 0.6], [1, 0, 1], *OOD, computation_score=bad)


def test_computation_score_zero_accepted():
    d = didma([0.9, 0.7, 0.6], [1, 0, 1], computation_score=0, weights=(0.4, 0.6))
    assert d.score == pytest.approx(0.4 * disca([0.9, 0.7, 0.6], [1, 0, 1]).score)


@pytest.mark.parametrize(
    "conf_ood, ok_ood, name",
    [
        ([0.9, 1.5], [True, False], "confidence_ood"),
        ([0.9, -0.2], [True, False], "confidence_ood"),
        ([0.9, np.nan], [True, False], "confidence_ood"),
        ([0.9, np.inf], [True, False], "confidence_ood"),
        ([], [], "confidence_ood"),
        (["a", "b"], [True, False], "confidence_ood"),
        ([0.9, 0.8], [0, 2], "correct_ood"),
        ([0.9, 0.8], [0.5, 1], "correct_ood"),
        ([0.9, 0.8], ["yes", "no"], "correct_ood"),
        ([0.9, 0.8], [True], "correct_ood"),
        ([0.9, 0.8], [True, False, True], "correct_ood"),
    ],
    ids=lambda v: repr(v)[:20],
)
def test_nidma_ood_arguments_rejected(conf_ood, ok_ood, name):
    with pytest.raises(ValueError, match=re.escape(f"`{name}`")):
        nidma([0.9, 0.7, 0.6], [1, 0, 1], conf_ood, ok_ood, computation_score=1.0)


# -- 7. properties ---------------------------------------------------------------------------

GRID_VALUES = [k / 20 for k in range(21)]


@st.composite
def answers(draw, unique=False):
    n = draw(st.integers(1, 40))
    value = (
        st.floats(0.0, 1.0, allow_subnormal=False)
        if unique
        else st.one_of(st.sampled_from(GRID_VALUES), st.floats(0.0, 1.0, allow_subnormal=False))
    )
    conf = draw(st.lists(value, min_size=n, max_size=n, unique=unique))
    ok = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return np.array(conf), np.array(ok)


RESOLUTIONS = st.one_of(
    st.sampled_from([0.01, 0.05, 0.1, 0.25, 1 / 3, 1.0]), st.floats(0.002, 1.0, allow_subnormal=False)
)
PROPERTY = settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(answers(), RESOLUTIONS)
def test_property_curves(data, resolution):
    conf, ok = data
    n = len(conf)
    exact = coverage_accuracy_curve(conf, ok)
    grid = coverage_accuracy_curve(conf, ok, resolution=resolution)
    for cur in (exact, grid):
        assert np.all(np.diff(cur.coverage) > 0)
        assert cur.coverage[-1] == 1.0
        assert cur.n_answered[-1] == n and cur.n_correct[-1] == ok.sum()
        assert np.all(np.diff(cur.confidence) < 0)
        assert 0.0 <= cur.score <= 1.0
    assert set(curve_points(grid)) <= set(curve_points(exact))
    assert_curve_matches(exact, ref_points(conf, ok), n)
    assert_curve_matches(grid, ref_points(conf, ok, resolution), n)


@PROPERTY
@given(answers(), RESOLUTIONS, st.sampled_from(TOLERANCES + (1.0, 0.3)))
def test_property_disca(data, resolution, tolerance):
    conf, ok = data
    d = disca(conf, ok, resolution=resolution, tolerance=tolerance)
    pts = ref_points(conf, ok, resolution)
    acc = [nc / na for _, na, nc in pts]
    rises = sum(later > earlier for earlier, later in zip(acc, acc[1:]))
    assert d.n_fluctuations == rises
    assert math.isfinite(d.score)
    assert 0.001 <= d.a <= 1 and 0.001 <= d.b <= 1
    assert d.b <= d.a  # accuracy falls below t no earlier than below 1
    score, a, b, fl, penalty = ref_disca(conf, ok, tolerance=tolerance, resolution=resolution)
    assert (d.a, d.b) == (a, b)
    assert d.penalty == pytest.approx(penalty, rel=1e-9, abs=1e-12)
    assert d.score == pytest.approx(score, rel=1e-9, abs=1e-9)


@PROPERTY
@given(answers(unique=True))
def test_property_e_aurc_nonnegative_without_ties(data):
    conf, ok = data
    assert e_aurc(conf, ok) >= -1e-12
    assert aurc(conf, ok) == pytest.approx(ref_geifman_aurc(conf.tolist(), ok.tolist()), abs=1e-12)
    assert e_aurc(conf, ok) == pytest.approx(aurc(conf, ok) - ref_optimal_aurc(ok), abs=1e-12)


# -- 8. benchmark level ----------------------------------------------------------------------


@functools.cache
def demo():
    return load_demo()


def _rows(bench, dataset):
    codes = bench.dataset_codes()
    return codes == bench.datasets.index(dataset)


@pytest.mark.parametrize("protocol", ["indata", "xdomain", "outdomain", "outdata"])
@pytest.mark.parametrize("method", METHODS)
def test_calibrated_confidence_in_half_one(method, protocol):
    conf, ok, _, _ = calibrated_confidence(demo(), "knn", "diabetes", protocol=protocol, method=method)
    assert len(conf) == len(ok) > 0
    assert ok.dtype == bool
    assert np.all((conf >= 0.5) & (conf <= 1.0))


@pytest.mark.parametrize("model", ["logreg", "svm", "knn"])
@pytest.mark.parametrize("method", METHODS)
def test_calibrated_confidence_xdomain_reproduced(method, model):
    """xdomain: calibrate on every other dataset pooled but the OOD one, evaluate on the dataset."""
    bench = demo()
    y, s = bench.labels(), bench.scores(model)
    for dataset, ood in [("wine", "breast_cancer"), ("breast_cancer", "diabetes")]:
        ev = _rows(bench, dataset)
        pool = ~ev & ~_rows(bench, ood)  # the OOD dataset must stay unseen
        cal = ScoreCalibrator(method).fit(s[pool], y[pool])
        conf, ok, conf_ood, ok_ood = calibrated_confidence(
            bench, model, dataset, protocol="xdomain", method=method, ood_dataset=ood
        )
        assert np.array_equal(ok, cal.predict(s[ev]) == y[ev])
        p = cal.predict_proba(s[ev])
        np.testing.assert_allclose(conf, np.maximum(p, 1 - p), rtol=0, atol=1e-12)
        rows = _rows(bench, ood)
        assert len(conf_ood) == len(ok_ood) == rows.sum() == len(bench.labels(ood))
        assert np.array_equal(ok_ood, cal.predict(s[rows]) == y[rows])
        p = cal.predict_proba(s[rows])
        np.testing.assert_allclose(conf_ood, np.maximum(p, 1 - p), rtol=0, atol=1e-12)


@pytest.mark.parametrize("protocol", ["xdomain", "outdomain", "outdata"])
def test_calibrated_confidence_never_calibrates_on_the_ood_dataset(protocol):
    """Changing only the OOD dataset's scores leaves the in-distribution answers unchanged."""
    bench = demo()
    frame = bench.frame.copy()
    rows = frame["dataset"] == "breast_cancer"
    frame.loc[rows, "svm"] = -frame.loc[rows, "svm"] * 100.0  # an OOD dataset unlike anything else
    other = beyondauc.load_benchmark(frame)
    a = calibrated_confidence(bench, "svm", "wine", protocol=protocol, ood_dataset="breast_cancer")
    b = calibrated_confidence(other, "svm", "wine", protocol=protocol, ood_dataset="breast_cancer")
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("method", METHODS)
def test_calibrated_confidence_indata_reproduced(method):
    """indata: the first seeded 80/20 split of the dataset (calibrate on 80%, evaluate on 20%)."""
    bench = demo()
    s, y = bench.scores("svm", "wine"), bench.labels("wine")
    train, test = next(ShuffleSplit(n_splits=1, test_size=0.2, random_state=0).split(np.zeros((len(y), 1))))
    test = np.sort(test)  # answers come in row order
    cal = ScoreCalibrator(method).fit(s[train], y[train])
    conf, ok, none1, none2 = calibrated_confidence(bench, "svm", "wine", method=method)
    assert none1 is None and none2 is None
    assert np.array_equal(ok, cal.predict(s[test]) == y[test])
    p = cal.predict_proba(s[test])
    np.testing.assert_allclose(conf, np.maximum(p, 1 - p), rtol=0, atol=1e-12)


def test_calibrated_confidence_ood_same_as_dataset_raises():
    with pytest.raises(ValueError, match=re.escape("`ood_dataset`")):
        calibrated_confidence(demo(), "logreg", "wine", ood_dataset="wine")
    with pytest.raises(ValueError, match="dataset"):
        calibrated_confidence(demo(), "logreg", "wine", ood_dataset="no_such_dataset")


def test_selective_answering_to_dict():
    bench = demo()
    r = selective_answering(bench, "logreg", "breast_cancer", protocol="xdomain")
    out = r.to_dict()
    for key in ("disca", "a", "b", "n_fluctuations", "aurc", "e_aurc"):
        assert key in out
    assert "disca_ood" not in out
    assert out["didma"] is None and out["nidma"] is None
    conf, ok, _, _ = calibrated_confidence(bench, "logreg", "breast_cancer", protocol="xdomain")
    d = disca(conf, ok)
    assert (out["disca"], out["a"], out["b"], out["n_fluctuations"]) == (d.score, d.a, d.b, d.n_fluctuations)
    assert out["aurc"] == pytest.approx(aurc(conf, ok), abs=1e-12)
    assert out["e_aurc"] == pytest.approx(e_aurc(conf, ok), abs=1e-12)
    assert out["n"] == len(ok)
    assert out["accuracy"] == pytest.approx(ok.mean())

    # with an OOD dataset: DiSCA on it; NiDMA still needs a computation score
    r = selective_answering(bench, "logreg", "breast_cancer", ood_dataset="diabetes", protocol="xdomain")
    out = r.to_dict()
    assert "disca_ood" in out and out["nidma"] is None and out["didma"] is None
    # the OOD dataset is held out of calibration, so the in-distribution answers come from that run too
    conf, ok, conf_ood, ok_ood = calibrated_confidence(
        bench, "logreg", "breast_cancer", protocol="xdomain", ood_dataset="diabetes"
    )
    assert out["disca_ood"] == disca(conf_ood, ok_ood).score
    assert out["disca"] == disca(conf, ok).score

    # with a computation score: numbers equal to didma() and nidma()
    r = selective_answering(
        bench,
        "logreg",
        "breast_cancer",
        ood_dataset="diabetes",
        protocol="xdomain",
        computation_score=0.5,
        didma_weights=(0.7, 0.3),
        nidma_weights=(0.6, 0.4),
    )
    out = r.to_dict()
    assert isinstance(out["didma"], float) and isinstance(out["nidma"], float)
    assert out["didma"] == pytest.approx(didma(conf, ok, computation_score=0.5, weights=(0.7, 0.3)).score)
    assert out["nidma"] == pytest.approx(
        nidma(conf, ok, conf_ood, ok_ood, computation_score=0.5, weights=(0.6, 0.4), didma_weights=(0.7, 0.3)).score
    )
    # DiDMA without OOD data, NiDMA None
    out = selective_answering(bench, "logreg", "breast_cancer", protocol="xdomain", computation_score=0.5).to_dict()
    assert isinstance(out["didma"], float) and out["nidma"] is None


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(computation_score=-1.0), "computation_score"),
        (dict(computation_score=1.0, didma_weights=(0.9, 0.9)), "didma_weights"),
        (dict(computation_score=1.0, ood_dataset="diabetes", nidma_weights=(-1, 2)), "nidma_weights"),
        (dict(tolerance=0), "tolerance"),
        (dict(resolution=0), "resolution"),
        (dict(weights=(0.5, 0.5)), "weights"),
    ],
)
def test_selective_answering_bad_options(kw, name):
    with pytest.raises(ValueError, match=re.escape(f"`{name}`")):
        selective_answering(demo(), "logreg", "wine", **kw)


def test_selective_table_one_row_per_model_and_dataset():
    bench = demo()
    models, datasets = ["logreg", "svm", "knn"], ["wine", "breast_cancer"]
    t = selective_table(bench, models=models, datasets=datasets, protocol="xdomain")
    assert len(t) == 6
    assert sorted(zip(t["model"], t["dataset"])) == sorted((m, d) for m in models for d in datasets)
    for _, row in t.iterrows():
        one = selective_answering(bench, row["model"], row["dataset"], protocol="xdomain")
        assert row["disca"] == one.score
        assert row["aurc"] == one.aurc


@pytest.mark.parametrize("value", ["disca", "b"])
def test_tolerance_table(value):
    bench = demo()
    models = ["logreg", "svm", "knn"]
    t = tolerance_table(bench, "wine", models=models, value=value)
    assert list(t.columns) == [
        "<0.95",
        "<0.9",
        "<0.85",
        "<0.8",
        "<0.75",
        "<0.7",
        "<0.65",
        "<0.6",
        "<0.55",
        "resolution",
    ]
    assert (t["resolution"] == 0.01).all()  # the grid step every DiSCA/b was read at
    t = t.drop(columns="resolution")
    assert sorted(t.index) == sorted(models)
    assert t.index.name == "model"
    for m in models:
        conf, ok, _, _ = calibrated_confidence(bench, m, "wine")
        pts = ref_points(conf, ok, 0.01)
        for t_value, col in zip(TOLERANCES, t.columns):
            expected = ref_first_below(pts, t_value)[0] if value == "b" else ref_disca(conf, ok, tolerance=t_value)[0]
            assert t.loc[m, col] == pytest.approx(expected, rel=1e-9)
    first = t.iloc[:, 0].to_numpy()
    assert np.all(np.diff(first) >= 0) if value == "b" else np.all(np.diff(first) <= 0)


def test_tolerance_table_bad_value():
    with pytest.raises(ValueError, match=re.escape("`value`")):
        tolerance_table(demo(), "wine", models=["logreg"], value="auc")


def test_public_names_reexported():
    for name in (
        "coverage_accuracy_curve",
        "aurc",
        "e_aurc",
        "disca",
        "didma",
        "nidma",
        "computation_score",
        "calibrated_confidence",
        "selective_answering",
        "selective_table",
        "tolerance_table",
        "TOLERANCES",
    ):
        assert getattr(beyondauc, name) is getattr(beyondauc.metrics, name)
    assert TOLERANCES == (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55)


def test_protocol_without_calibration_data_is_a_clear_error():
    import pandas as pd

    from beyondauc import calibrated_confidence, load_benchmark

    frame = pd.DataFrame(
        {
            "dataset": ["a"] * 4 + ["b"] * 4,
            "domain": ["x"] * 8,
            "label": [0, 1] * 4,
            "m": [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6],
        }
    )
    with pytest.raises(ValueError, match="`protocol`='outdomain' leaves dataset 'a' no calibration data"):
        calibrated_confidence(load_benchmark(frame), "m", "a", protocol="outdomain")
