"""The calibration of the confidence as given, on a benchmark: the batched replicates equal the public functions
(on the data, and on the data each replicate's counts repeat), the table's intervals hold their estimates, and
the evaluation's table, curves and verdict rule."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import relplot

import beyondauc as ba
from beyondauc.metrics.selective.given_calibration import (
    GIVEN_ECE_TOLERANCE,
    GIVEN_METRICS,
    given_calibration_table,
    given_curves,
    given_replicates,
)
from beyondauc.metrics.selective.smooth_replicates import smooth_ece_replicates
from beyondauc.plots import RejectionCurveDisplay


def _data(seed, n, *, graded, ties):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(size=n)
    if ties:
        conf = np.round(conf * 8) / 8
    quality = rng.uniform(size=n) if graded else (rng.uniform(size=n) < conf**1.3).astype(float)
    return quality, conf


def _public(q, c):
    b = ba.brier_score(q, c)
    return {
        "brier": b.score,
        "reliability": b.reliability,
        "resolution": b.resolution,
        "uncertainty": b.uncertainty,
        "nll": ba.negative_log_likelihood(q, c),
        "ece_uniform": ba.expected_calibration_error(q, c, n_bins=15, strategy="uniform"),
        "ece_quantile": ba.expected_calibration_error(q, c, n_bins=15, strategy="quantile"),
        "smooth_ece": ba.smooth_ece(q, c),
        "prr": ba.prediction_rejection_ratio(q, c),
        "prr_half": ba.prediction_rejection_ratio(q, c, max_rejection=0.5),
    }


#: The smooth ECE of a replicate convolves by FFT where relplot convolves directly: equal to rounding, far inside
#: the 1e-6 to which it must equal relplot's.
SMOOTH_TOL = 1e-9


CASES = [dict(graded=g, ties=t) for g in (False, True) for t in (False, True)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"graded={c['graded']}-ties={c['ties']}")
def test_replicates_of_unit_counts_are_the_point_estimates(case):
    q, c = _data(1, 300, **case)
    reps = given_replicates(q, c, np.ones((1, len(q))))
    expected = _public(q, c)
    for name, value in expected.items():
        assert reps[name][0] == pytest.approx(value, abs=SMOOTH_TOL if name == "smooth_ece" else 1e-12), name


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"graded={c['graded']}-ties={c['ties']}")
def test_each_replicate_is_the_statistic_of_the_answers_its_counts_repeat(case):
    q, c = _data(2, 120, **case)
    counts = np.random.default_rng(3).multinomial(len(q), np.full(len(q), 1 / len(q)), size=5)
    reps = given_replicates(q, c, counts)
    for r, w in enumerate(counts):  # a loop over five replicates, as the reference
        rows = np.repeat(np.arange(len(q)), w)
        expected = _public(q[rows], c[rows])
        for name in ("brier", "reliability", "resolution", "uncertainty", "nll", "ece_uniform", "prr", "prr_half"):
            assert reps[name][r] == pytest.approx(expected[name], abs=1e-12), (name, r)
        assert reps["smooth_ece"][r] == pytest.approx(relplot.smECE(c[rows], q[rows]), abs=SMOOTH_TOL), r


@pytest.mark.parametrize("n", [2, 7, 40])
def test_smooth_ece_replicates_of_small_samples_are_relplots_one_at_a_time(n):
    # few answers: large bandwidths, replicates whose bisections part early; a replicate of one answer is NaN
    q, c = _data(n, n, graded=False, ties=False)
    counts = np.random.default_rng(n).multinomial(n, np.full(n, 1 / n), size=12)
    counts[0] = 0
    counts[0, 0] = 1
    got = smooth_ece_replicates(q, c, counts)
    assert np.isnan(got[0])
    for r, w in enumerate(counts[1:], start=1):  # a loop over replicates, as the reference
        rows = np.repeat(np.arange(n), w)
        assert got[r] == pytest.approx(relplot.smECE(c[rows], q[rows]), abs=SMOOTH_TOL), r


def test_smooth_ece_replicates_with_bandwidths_under_one_hundredth_are_relplots():
    # a calibrated confidence on many answers: bandwidths under 0.01, where relplot's grid grows with 1 / sigma
    rng = np.random.default_rng(7)
    c = rng.uniform(size=120_000)
    q = (rng.uniform(size=len(c)) < c).astype(float)
    counts = rng.multinomial(len(c), np.full(len(c), 1 / len(c)), size=2)
    got = smooth_ece_replicates(q, c, counts)
    for r, w in enumerate(counts):  # a loop over two replicates, as the reference
        rows = np.repeat(np.arange(len(c)), w)
        value, sigma = relplot.smECE(c[rows], q[rows], return_width=True)
        assert sigma < 0.01 and got[r] == pytest.approx(value, abs=SMOOTH_TOL), r


def _answers(seed=0, n=600):
    rng = np.random.default_rng(seed)
    parts = []
    for d in ("qa", "nli"):
        for m, shrink in (("honest", 1.0), ("overconfident", 0.4)):
            p = rng.uniform(0.3, 1.0, n)
            conf = 1 - (1 - p) * shrink  # the overconfident model says more than it knows
            parts.append(
                pd.DataFrame(
                    {
                        "dataset": d,
                        "id": np.arange(n),
                        "model": m,
                        "confidence": conf,
                        "correct": (rng.uniform(size=n) < p).astype(int),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def test_table_intervals_hold_their_estimates_and_the_rule_flags_the_overconfident_model():
    bench = ba.load_benchmark(_answers())
    t = given_calibration_table(bench, n_bootstrap=200, random_state=1)
    assert set(GIVEN_METRICS) <= set(t.columns) and len(t) == 4
    assert t["smooth_ece_low"].notna().any()
    for name in GIVEN_METRICS:
        shown = t[f"{name}_low"].notna()
        assert (t.loc[shown, f"{name}_low"] <= t.loc[shown, name]).all()
        assert (t.loc[shown, name] <= t.loc[shown, f"{name}_high"]).all()
    flagged = t.set_index(["model", "dataset"])["miscalibrated"]
    assert flagged.loc["overconfident"].all() and not flagged.loc["honest"].any()
    assert (t["miscalibrated"] == (t["ece_uniform_low"] > GIVEN_ECE_TOLERANCE)).all()


def test_curves_are_the_reliability_band_and_the_rejection_curve():
    bench = ba.load_benchmark(_answers())
    bands, curves = given_curves(bench)
    q, c = bench.quality("qa", model="honest"), bench.scores("honest", "qa")
    band = ba.reliability_band(q, c)
    mine = bands[(bands["model"] == "honest") & (bands["dataset"] == "qa")]
    assert np.allclose(mine["accuracy"], band["accuracy"], atol=1e-12)
    rc = ba.rejection_curve(q, c)
    cur = curves[(curves["model"] == "honest") & (curves["dataset"] == "qa")]
    keep = np.unique(np.rint(np.linspace(0, len(q) - 1, 201)).astype(int))
    assert len(cur) == 201 and np.allclose(cur["loss"], rc.model[keep], atol=1e-12)
    disp = RejectionCurveDisplay(rc, prr=0.5, name="m").plot()
    assert disp.prr == 0.5 and disp.ax_.get_legend().get_texts()[0].get_text() == "m (PRR = 0.500)"


def test_an_evaluation_has_the_table_and_warns_of_a_miscalibrated_confidence():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(_answers(), n_bootstrap=100, noise_repeats=2, n_jobs=1)
    t = ev.table("given_calibration")
    assert len(t) == 4 and len(ev.table("given_reliability")) and len(ev.table("rejection_curves"))
    f = ev.table("findings")
    rule = f[f["rule"].str.contains("miscalibrated confidence")]
    assert set(rule["model"]) == {"overconfident"} and (rule["status"] == "warn").all()
    assert (
        "confidence as given miscalibrated" in ev.table("verdicts").set_index("model").loc["overconfident", "verdict"]
    )


def test_the_baseline_comparison_has_the_given_confidence_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(_answers(n=300), n_bootstrap=60, noise_repeats=2, n_jobs=1, baseline="honest")
    t = ev.table("comparison").query("model == 'overconfident'")
    given = ev.table("given_calibration").set_index(["model", "dataset"])
    for value in ("brier", "nll", "ece_uniform", "prr"):
        rows = t[t["value"] == value].set_index("dataset")
        assert (rows["test"] == "paired bootstrap").all(), value
        for d in ("qa", "nli"):
            diff = given.loc[("overconfident", d), value] - given.loc[("honest", d), value]
            assert rows.loc[d, "difference"] == pytest.approx(diff, abs=1e-12)
    ece = t[(t["value"] == "ece_uniform") & (t["dataset"] != "mean")]
    assert (ece["low"] > 0).all()  # the overconfident model's ECE is worse on every dataset, with evidence
