"""Conventions of the selective-classification literature beside Mishra et al.'s.

* AURC with step (default) or linear (trapezoid) integration over the exact
  risk-coverage curve (one point per distinct confidence, ties together);
* E-AURC against the exact finite-n optimum (default) or the analytic
  ``r + (1 - r) ln(1 - r)`` (CRL, fd-shifts);
* AUGRC (Traub et al. 2024): the area under the generalized risk
  ``wrong and answered / n``;
* DiSCA over several grid resolutions.

References below loop over thresholds in plain Python with exact fractions
and share no code with the package; the peers' conventions (fd-shifts'
``RiskCoverageStats``, torch-uncertainty's ``AURC``/``AUGRC``) are re-written
here from their published definitions.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from beyondauc import (
    RESOLUTIONS,
    augrc,
    aurc,
    calibrated_confidence,
    disca,
    disca_resolution_sensitivity,
    e_aurc,
    load_demo,
    selective_answering,
    selective_table,
)

# -- references -------------------------------------------------------------------


def ref_points(conf, ok):
    """(coverage, selective risk, generalized risk) per distinct confidence, highest first, as Fractions."""
    n = len(conf)
    pts = []
    for t in sorted(set(conf), reverse=True):  # loop over thresholds
        answered = [i for i in range(n) if conf[i] >= t]
        wrong = sum(1 for i in answered if not ok[i])
        pts.append((Fraction(len(answered), n), Fraction(wrong, len(answered)), Fraction(wrong, n)))
    return pts


def ref_area(conf, ok, *, kind, interpolation):
    pts = ref_points(conf, ok)
    col = 1 if kind == "risk" else 2
    prev_cov = Fraction(0)
    prev_val = pts[0][1] if kind == "risk" else Fraction(0)  # the value at coverage 0
    area = Fraction(0)
    for p in pts:
        width = p[0] - prev_cov
        area += width * (p[col] if interpolation == "step" else (prev_val + p[col]) / 2)
        prev_cov, prev_val = p[0], p[col]
    return area


def ref_optimal(n, n_correct, interpolation):
    """AURC of the best ranking: correct answers first, every confidence distinct."""
    conf = list(range(n, 0, -1))
    ok = [True] * n_correct + [False] * (n - n_correct)
    return ref_area(conf, ok, kind="risk", interpolation=interpolation)


def fdshifts_areas(conf, ok):
    """fd-shifts' RiskCoverageStats (aurc, augrc) / 1000, re-written from its description.

    Sort ascending by confidence, drop the least confident example one at a
    time and record a point (coverage, risk) whenever the confidence changes;
    close the curve at coverage 0 with the last selective risk (AURC) or 0
    (AUGRC); integrate with the trapezoid rule.
    """
    conf, res = np.asarray(conf, float), 1.0 - np.asarray(ok, float)
    order = np.argsort(conf, kind="stable")
    conf, res = conf[order], res[order]
    n = len(res)
    errors = res.sum()
    cov, sel, gen = [1.0], [errors / n], [errors / n]
    for i in range(n - 1):
        errors -= res[i]
        if conf[i] != conf[i + 1]:
            cov.append((n - 1 - i) / n)
            sel.append(errors / (n - 1 - i))
            gen.append(errors / n)
    cov.append(0.0)
    sel.append(sel[-1])
    gen.append(0.0)
    return -np.trapezoid(sel, cov), -np.trapezoid(gen, cov)


def torch_uncertainty_areas(conf, ok):
    """torch-uncertainty's AURC and AUGRC, re-written from their definition (distinct confidences only).

    Error rate of the k most confident, k = 1..n, at coverage k/n; the
    trapezoid rule from 1/n to 1, divided by 1 - 1/n.
    """
    order = np.argsort(-np.asarray(conf, float), kind="stable")
    err = 1.0 - np.asarray(ok, float)[order]
    n = len(err)
    k = np.arange(1, n + 1)
    rate = np.cumsum(err) / k
    cov = k / n
    return np.trapezoid(rate, cov) / (1 - 1 / n), np.trapezoid(rate * cov, cov) / (1 - 1 / n)


answers = st.lists(
    st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0]), st.booleans()), min_size=1, max_size=25
)
distinct_answers = st.lists(st.booleans(), min_size=2, max_size=25).flatmap(
    lambda ok: st.permutations(list(range(len(ok)))).map(lambda conf: ([c / 10 for c in conf], ok))
)


# -- hand-worked ----------------------------------------------------------------------


def test_hand_worked_three_answers():
    # confidences 0.9 (right), 0.8 (wrong), 0.7 (right): points at coverage 1/3, 2/3, 1
    # with risk 0, 1/2, 1/3 and generalized risk 0, 1/3, 1/3.
    conf, ok = [0.9, 0.8, 0.7], [True, False, True]
    assert aurc(conf, ok) == pytest.approx(5 / 18, abs=1e-15)  # (0 + 1/2 + 1/3) / 3
    assert aurc(conf, ok, interpolation="linear") == pytest.approx(2 / 9, abs=1e-15)  # (0 + 1/4 + 5/12) / 3
    assert augrc(conf, ok) == pytest.approx(2 / 9, abs=1e-15)  # (0 + 1/3 + 1/3) / 3
    assert augrc(conf, ok, interpolation="linear") == pytest.approx(1 / 6, abs=1e-15)  # (0 + 1/6 + 1/3) / 3


def test_e_aurc_tied_wrong_answers_are_not_a_perfect_score():
    # The correct answer is ranked first, but the two wrong answers are tied:
    # they enter together, so coverage 1/3 -> 1 is charged the risk 2/3 at its end,
    # while the optimum ranks them one by one (risk 1/2 at 2/3, 2/3 at 1).
    conf, ok = [1, 0, 0], [True, False, False]
    assert aurc(conf, ok) == pytest.approx(4 / 9, abs=1e-15)
    assert e_aurc(conf, ok) == pytest.approx(Fraction(4, 9) - Fraction(7, 18), abs=1e-15)
    assert e_aurc(conf, ok) == pytest.approx(1 / 18, abs=1e-15)
    # untied, the same ranking is perfect
    assert e_aurc([1, 0.5, 0], ok) == 0.0


def test_e_aurc_analytic_hand_worked():
    # [0.9, 0.8] right/wrong: AURC (step) = (0 + 1/2) / 2; r = 1/2: r + (1 - r) ln(1 - r)
    want = 0.25 - (0.5 + 0.5 * math.log(0.5))
    assert e_aurc([0.9, 0.8], [True, False], optimum="analytic") == pytest.approx(want, abs=1e-15)
    # every answer wrong: r = 1, the optimum is 1 (no 0 * log 0 NaN)
    assert e_aurc([0.9, 0.8], [False, False], optimum="analytic") == pytest.approx(0.0, abs=1e-15)
    # every answer right: r = 0, the optimum 0
    assert e_aurc([0.9, 0.8], [True, True], optimum="analytic") == 0.0


# -- brute force -------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(answers)
def test_areas_match_brute_force(pairs):
    conf, ok = [c for c, _ in pairs], [o for _, o in pairs]
    for interpolation in ("step", "linear"):
        assert aurc(conf, ok, interpolation=interpolation) == pytest.approx(
            float(ref_area(conf, ok, kind="risk", interpolation=interpolation)), abs=1e-12
        )
        assert augrc(conf, ok, interpolation=interpolation) == pytest.approx(
            float(ref_area(conf, ok, kind="generalized", interpolation=interpolation)), abs=1e-12
        )
        best = ref_optimal(len(ok), sum(ok), interpolation)
        want = ref_area(conf, ok, kind="risk", interpolation=interpolation) - best
        assert e_aurc(conf, ok, interpolation=interpolation) == pytest.approx(float(want), abs=1e-12)
        r = 1 - sum(ok) / len(ok)
        analytic = r + ((1 - r) * math.log(1 - r) if r < 1 else 0.0)
        want = float(ref_area(conf, ok, kind="risk", interpolation=interpolation)) - analytic
        assert e_aurc(conf, ok, optimum="analytic", interpolation=interpolation) == pytest.approx(want, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(answers)
def test_augrc_is_a_pair_probability(pairs):
    """Step: P(i wrong, c_i >= c_j); linear: ties count one half -- Traub et al.'s closed form."""
    conf, ok = np.array([c for c, _ in pairs]), np.array([o for _, o in pairs])
    n = len(ok)
    ge = sum(1 for i in range(n) if not ok[i] for j in range(n) if conf[i] >= conf[j])
    assert augrc(conf, ok) == pytest.approx(ge / n**2, abs=1e-12)
    acc = ok.mean()
    if 0 < acc < 1:
        auroc_f = roc_auc_score(ok, conf)  # confidence telling right from wrong, ties one half
        want = (1 - auroc_f) * acc * (1 - acc) + 0.5 * (1 - acc) ** 2
    else:
        want = 0.5 * (1 - acc) ** 2
    assert augrc(conf, ok, interpolation="linear") == pytest.approx(want, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(answers)
def test_linear_areas_equal_fd_shifts(pairs):
    conf, ok = [c for c, _ in pairs], [o for _, o in pairs]
    want_aurc, want_augrc = fdshifts_areas(conf, ok)
    assert aurc(conf, ok, interpolation="linear") == pytest.approx(want_aurc, abs=1e-14)
    assert augrc(conf, ok, interpolation="linear") == pytest.approx(want_augrc, abs=1e-14)
    r = 1 - np.mean(ok)
    fd_eaurc = want_aurc - (r + (1 - r) * np.log(1 - r + np.finfo(float).eps))  # fd-shifts adds eps in the log
    assert e_aurc(conf, ok, optimum="analytic", interpolation="linear") == pytest.approx(fd_eaurc, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(distinct_answers)
def test_linear_areas_against_torch_uncertainty(data):
    """Without ties: ours integrates from coverage 0, torch-uncertainty from 1/n and rescales by 1 - 1/n."""
    conf, ok = data
    n = len(ok)
    tu_aurc, tu_augrc = torch_uncertainty_areas(conf, ok)
    first_risk = 0.0 if ok[int(np.argmax(conf))] else 1.0
    assert aurc(conf, ok, interpolation="linear") == pytest.approx(first_risk / n + tu_aurc * (1 - 1 / n), abs=1e-12)
    assert augrc(conf, ok, interpolation="linear") == pytest.approx(
        first_risk / (2 * n * n) + tu_augrc * (1 - 1 / n), abs=1e-12
    )
    # and without ties step AURC is the mean selective risk over the n prefixes (Geifman et al., CRL)
    order = np.argsort(-np.asarray(conf))
    err = 1.0 - np.asarray(ok, float)[order]
    assert aurc(conf, ok) == pytest.approx(np.mean(np.cumsum(err) / np.arange(1, n + 1)), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(answers)
def test_exact_step_e_aurc_is_never_negative(pairs):
    conf, ok = [c for c, _ in pairs], [o for _, o in pairs]
    assert e_aurc(conf, ok) >= -1e-12


def test_analytic_optimum_is_the_large_n_limit():
    # exact step optimum - analytic = (c/n) (ln(n/c) - (H_n - H_c)) ~ r / (2n)
    for n, c in ((100, 80), (10_000, 9_000), (1_000, 10)):
        ok = np.arange(n) < c
        conf = np.linspace(1, 0, n)  # the best ranking: E-AURC exact = 0
        assert e_aurc(conf, ok) == pytest.approx(0.0, abs=1e-12)
        gap = e_aurc(conf, ok, optimum="analytic")
        r = 1 - c / n
        assert gap > 0 and gap == pytest.approx(r / (2 * n), rel=0.02)


def test_invariant_to_order_and_monotone_maps():
    rng = np.random.default_rng(0)
    conf = rng.integers(0, 8, 60) / 8
    ok = rng.random(60) < 0.7
    perm = rng.permutation(60)
    for f in (aurc, augrc, e_aurc):
        for interpolation in ("step", "linear"):
            v = f(conf, ok, interpolation=interpolation)
            assert f(conf[perm], ok[perm], interpolation=interpolation) == pytest.approx(v, abs=1e-14)
            assert f(np.exp(3 * conf) - 7, ok, interpolation=interpolation) == pytest.approx(v, abs=1e-14)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: aurc([0.9], [True], interpolation="trapezoid"), "interpolation"),
        (lambda: augrc([0.9], [True], interpolation=None), "interpolation"),
        (lambda: e_aurc([0.9], [True], optimum="asymptotic"), "optimum"),
        (lambda: e_aurc([0.9], [True], interpolation="spline"), "interpolation"),
        (lambda: augrc([0.9, np.nan], [True, False]), "confidence"),
        (lambda: augrc([0.9, 0.8], [True]), "correct"),
    ],
)
def test_bad_options(call, name):
    with pytest.raises(ValueError, match=re.escape(f"`{name}`")):
        call()


# -- DiSCA over resolutions ----------------------------------------------------------------


def test_disca_reports_its_resolution():
    d = disca([0.95, 0.9, 0.8, 0.7], [True, False, True, True], resolution=0.05)
    assert d.resolution == 0.05 and d.to_dict()["resolution"] == 0.05


@settings(max_examples=50, deadline=None)
@given(answers)
def test_resolution_sensitivity_rows_equal_disca(pairs):
    conf, ok = [c for c, _ in pairs], [o for _, o in pairs]
    t = disca_resolution_sensitivity(conf, ok, resolutions=(0.3, 0.1, 0.01), tolerance=0.8)
    assert list(t.columns) == [
        "resolution",
        "disca",
        "a",
        "b",
        "n_fluctuations",
        "fluctuation_magnitude",
        "penalty",
        "n_points",
    ]
    for row in t.itertuples():
        d = disca(conf, ok, tolerance=0.8, resolution=row.resolution)
        assert (row.disca, row.a, row.b, row.n_fluctuations, row.penalty) == (
            d.score,
            d.a,
            d.b,
            d.n_fluctuations,
            d.penalty,
        )
        assert row.fluctuation_magnitude == d.fluctuation_magnitude and row.n_points == len(d.curve.coverage)


def test_resolution_sensitivity_on_demo():
    conf, ok, _, _ = calibrated_confidence(load_demo(), "svm", "breast_cancer")
    t = disca_resolution_sensitivity(conf, ok)
    assert t["resolution"].tolist() == list(RESOLUTIONS)
    assert t["n_points"].iloc[-1] > t["n_points"].iloc[0]  # the finest grid separates more points than the coarsest
    # the finest grid reaches the exact curve: one point per distinct confidence
    assert t["n_points"].iloc[-1] <= len(np.unique(conf))
    assert t["disca"].nunique() > 1  # DiSCA depends on the grid


@pytest.mark.parametrize("resolutions, bad", [((), "none"), ((0.1, 0), "0.0"), ((0.1, 1.5), "1.5"), ("fine", "fine")])
def test_resolution_sensitivity_bad_resolutions(resolutions, bad):
    with pytest.raises(ValueError, match=re.escape("`resolutions`")):
        disca_resolution_sensitivity([0.9, 0.8], [True, False], resolutions=resolutions)


# -- benchmark level ----------------------------------------------------------------------------


def test_selective_table_carries_the_conventions_and_the_resolution():
    bench = load_demo()
    t = selective_table(
        bench,
        models=["svm"],
        datasets=["wine", "breast_cancer"],
        protocol="xdomain",
        resolution=0.02,
        ood_dataset="diabetes",
    )
    for col in ("aurc", "aurc_linear", "e_aurc", "e_aurc_analytic", "augrc", "augrc_linear", "resolution"):
        assert col in t.columns
    assert "resolution_ood" not in t.columns and (t["resolution"] == 0.02).all()
    for row in t.itertuples():
        conf, ok, _, _ = calibrated_confidence(bench, "svm", row.dataset, protocol="xdomain", ood_dataset="diabetes")
        assert row.aurc == aurc(conf, ok) and row.e_aurc == e_aurc(conf, ok)
        assert row.aurc_linear == aurc(conf, ok, interpolation="linear")
        assert row.e_aurc_analytic == e_aurc(conf, ok, optimum="analytic")
        assert row.augrc == augrc(conf, ok) and row.augrc_linear == augrc(conf, ok, interpolation="linear")
        assert row.disca == disca(conf, ok, resolution=0.02).score


def test_selective_answering_defaults_unchanged():
    r = selective_answering(load_demo(), "logreg", "wine")
    assert r.aurc == aurc(r.confidence, r.correct) and r.e_aurc == e_aurc(r.confidence, r.correct)
    assert isinstance(pd.DataFrame([r.to_dict()]), pd.DataFrame)
