"""The verdict rules: a flag needs its interval past the threshold, and every badge names its rule and number.

Checked three ways: hand-made diagnostics rows at and around a threshold (the demo's svm on
iris_versicolor, drift 0.060 (0.019–0.166), is inconclusive, not a warning); a synthetic benchmark of
clearly good models (high AUC, the same scores in both cohorts and on every dataset) and clearly bad ones
(test cohort shifted by 2.5 standard deviations, each dataset offset by ±3 so no threshold transfers);
and every finding of the demo, whose sentence, badge and reason must agree and follow the rules
recomputed here from the evaluation's own tables.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.evaluation import drift_findings, summary
from beyondauc.evaluation.summary import THRESHOLDS

GOOD, BAD = ["good_a", "good_b"], ["bad_drift", "bad_shift"]


def synthetic_frame(seed=0, n=600, n_datasets=4):
    """Two good models and two bad ones on ``n_datasets`` datasets of ``n`` rows, half val, half test."""
    rng = np.random.default_rng(seed)
    parts = []
    for d in range(n_datasets):
        y = rng.permutation(np.repeat([0, 1], n // 2))
        split = np.where(rng.random(n) < 0.5, "val", "test")
        sign, test = 2 * y - 1, split == "test"
        cols = {"dataset": f"d{d}", "domain": f"dom{d % 2}", "label": y, "split": split, "id": np.arange(n)}
        for name in GOOD:  # AUC about 0.98, one score scale everywhere, no cohort shift
            cols[name] = 1.5 * sign + rng.normal(size=n)
        offset = 3.0 if d % 2 else -3.0  # a threshold learnt on the other datasets misses this one
        cols["bad_drift"] = 1.5 * sign + rng.normal(size=n) + offset + 2.5 * test
        cols["bad_shift"] = 1.5 * sign + rng.normal(size=n) - offset - 2.5 * test
        parts.append(pd.DataFrame(cols))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def synthetic():
    return ba.evaluate(synthetic_frame(), n_bootstrap=100, noise_repeats=2)


@pytest.fixture(scope="module")
def demo(demo_run):
    """The demo's evaluation as the README's first command saves it: the default parameters (the session's
    shared run, read only)."""
    return ba.load_evaluation(demo_run.out / "evaluation")


def diag(**values):
    row = {
        "model": "m",
        "dataset": "iris_versicolor",
        "cohorts": "split",
        "drift": 0.01,
        "wasserstein": 4.0,
        "bias_robustness_test": 0.3,
        "note": "",
    }
    row.update(values)
    return pd.DataFrame([row])


def test_a_drift_whose_interval_straddles_the_threshold_is_inconclusive():
    # the demo's svm on iris_versicolor (90 rows): 0.060 (0.019–0.166) straddles 0.05
    status, topic, sentence, rule, reason = drift_findings.drift_finding(
        "m", diag(drift=0.060, drift_low=0.019, drift_high=0.166)
    )
    assert (status, rule) == ("info", "cohort drift")
    assert reason == (
        "cohort drift inconclusive: drift 0.060 \u2265 0.05 on iris_versicolor, but its interval "
        "0.019\u20130.166 straddles 0.05"
    )
    assert sentence.startswith("No dataset shows cohort drift with evidence from its interval")
    assert "inconclusive on iris_versicolor (drift 0.060 (0.019\u20130.166) \u2265 0.05)" in sentence
    # the whole interval past the threshold: a warning that names its rule, number and interval
    status, _, sentence, rule, reason = drift_findings.drift_finding(
        "m", diag(drift=0.081, drift_low=0.062, drift_high=0.10)
    )
    assert (status, rule) == ("warn", "cohort drift")
    assert reason == "cohort drift: drift 0.081 \u2265 0.05 on iris_versicolor, interval 0.062\u20130.100"
    assert sentence.startswith("Validation and test cohorts (split) drift apart on 1 of 1 datasets")
    # the interval's lower end exactly at the threshold is evidence (the rule is drift >= 0.05)
    assert drift_findings.drift_finding("m", diag(drift=0.06, drift_low=0.05, drift_high=0.07))[0] == "warn"
    # below the threshold: good, whatever the interval's upper end
    assert drift_findings.drift_finding("m", diag(drift=0.049, drift_low=0.01, drift_high=0.3))[0] == "good"
    # no bootstrap, no interval: unchecked, a note
    status, _, sentence, _, reason = drift_findings.drift_finding("m", diag(drift=0.081))
    assert status == "info" and reason.startswith("cohort drift unchecked: drift 0.081") and "unchecked on" in sentence


def test_drift_needs_its_permutation_null_rejected_too():
    nan = float("nan")
    # interval past the threshold, null rejected: a warning that gives both numbers
    status, _, sentence, rule, reason = drift_findings.drift_finding(
        "m", diag(drift=0.081, drift_low=0.062, drift_high=0.10, drift_pvalue=0.004)
    )
    assert (status, rule) == ("warn", "cohort drift")
    assert reason == (
        "cohort drift: drift 0.081 \u2265 0.05 on iris_versicolor, interval 0.062\u20130.100, permutation p = 0.004"
    )
    assert "(drift 0.081 (0.062\u20130.100) \u2265 0.05; permutation p = 0.004)" in sentence
    # the same numbers, but sampling alone explains them: a note, never a warning
    status, _, sentence, rule, reason = drift_findings.drift_finding(
        "m", diag(drift=0.081, drift_low=0.062, drift_high=0.10, drift_pvalue=0.31)
    )
    assert (status, rule) == ("info", "cohort drift")
    assert reason == (
        "cohort drift inconclusive: drift 0.081 \u2265 0.05 on iris_versicolor, but permutation "
        "p = 0.31 \u2265 0.05: sampling alone can explain it"
    )
    assert "sampling alone can explain it" in sentence
    # no interval can contain the estimate (NaN): the estimate and the null decide, and the finding says so
    status, _, sentence, _, reason = drift_findings.drift_finding(
        "m", diag(drift=0.081, drift_low=nan, drift_high=nan, drift_pvalue=0.004)
    )
    assert status == "warn"
    assert reason == (
        "cohort drift: drift 0.081 \u2265 0.05 on iris_versicolor, permutation p = 0.004 "
        "(no interval can contain the estimate)"
    )
    assert "drift 0.081 \u2265 0.05; permutation p = 0.004 (no interval can contain it)" in sentence
    assert (
        drift_findings.drift_finding("m", diag(drift=0.081, drift_low=nan, drift_high=nan, drift_pvalue=0.2))[0]
        == "info"
    )
    # the level is 1 - confidence level: p = 0.02 is evidence at 0.05, not at 0.01
    row = diag(wasserstein=0.5, wasserstein_low=0.3, wasserstein_high=0.8, wasserstein_pvalue=0.02)
    assert (
        drift_findings.drift_finding("m", row, 0.05)[0] == "warn"
        and drift_findings.drift_finding("m", row, 0.01)[0] == "info"
    )
    # below the threshold the null changes nothing
    assert (
        drift_findings.drift_finding("m", diag(drift=0.03, drift_low=0.01, drift_high=0.05, drift_pvalue=0.001))[0]
        == "good"
    )


def test_wasserstein_and_fragile_auc_need_their_intervals_too():
    straddle = diag(wasserstein=0.77, wasserstein_low=0.31, wasserstein_high=1.73)
    assert drift_findings.drift_finding("m", straddle)[0] == "info"
    clear = diag(wasserstein=0.77, wasserstein_low=0.5, wasserstein_high=0.9)
    status, _, sentence, rule, reason = drift_findings.drift_finding("m", clear)
    assert (status, rule) == ("warn", "Wasserstein") and reason.startswith("Wasserstein: W 0.77 < 1 on")
    assert "drift apart" in sentence and "W 0.77 (0.50\u20130.90) < 1" in sentence
    # fragile alone: the sentence opens with what set the badge, not with "No dataset shows cohort drift"
    fragile = diag(bias_robustness_test=0.04, bias_robustness_test_low=0.03, bias_robustness_test_high=0.05)
    status, _, sentence, rule, reason = drift_findings.drift_finding("m", fragile)
    assert (status, rule) == ("warn", "fragile AUC")
    assert sentence.startswith(
        "Its AUC is fragile to a small shift of the positives on iris_versicolor "
        "(bias robustness 0.04 (0.03\u20130.05) < 0.1); no dataset shows cohort drift"
    )
    both = diag(
        drift=0.2,
        drift_low=0.1,
        drift_high=0.3,
        bias_robustness_test=0.04,
        bias_robustness_test_low=0.03,
        bias_robustness_test_high=0.05,
    )
    assert drift_findings.drift_finding("m", both)[:2] == ("bad", "drift")


def test_clearly_good_models_are_good_and_clearly_bad_ones_are_flagged_by_name(synthetic):
    verdicts = synthetic.table("verdicts").set_index("model")
    findings = synthetic.table("findings")
    for model in GOOD:
        assert verdicts.loc[model, "status"] == "good", verdicts.loc[model].to_dict()
        assert verdicts.loc[model, "reason"].startswith("no rule fires with evidence from its interval")
        mine = findings[findings["model"] == model]
        assert set(mine["status"]) <= {"good", "info"}
    for model in BAD:
        assert verdicts.loc[model, "status"] in ("warn", "bad")
        rules = dict(zip(*findings.query("model == @model")[["topic", "rule"]].T.values))
        assert rules["drift"] == "cohort drift" and rules["threshold"] == "threshold transfer"
        reason = verdicts.loc[model, "reason"]
        assert re.search(
            r"threshold transfer: accuracy lost 0\.\d\d \u2265 0\.05 on d\d, interval 0\.\d\d\u20130\.\d\d", reason
        ), reason
        assert re.search(r"cohort drift: drift 0\.\d{3} \u2265 0\.05 on d\d, interval 0\.\d{3}\u20130\.\d{3}", reason)


def test_without_a_bootstrap_a_rule_is_unchecked_never_a_warning():
    ev = ba.evaluate(synthetic_frame(), n_bootstrap=0, noise_repeats=2)
    findings, verdicts = ev.table("findings"), ev.table("verdicts").set_index("model")
    assert not set(findings["status"]) & {"warn", "bad"}
    ruled = findings[findings["rule"] != ""]
    assert len(ruled) and ruled["reason"].str.contains("unchecked: ", regex=False).all()
    for model in BAD:
        assert (
            verdicts.loc[model, "status"] == "info" and "threshold transfer unchecked" in verdicts.loc[model, "reason"]
        )
    s = ba.model_summary(ev, "bad_drift")
    assert "unchecked" in s._repr_html_() and "without a bootstrap a note (unchecked)" in s.note


#: What the sentence of a warning or problem opens with, per rule.
_OPENING = {
    "rank drop": "by mean AUC",
    "threshold transfer": "fails on",
    "decisions near chance": "fails on",
    "cohort drift": "drift apart",
    "Wasserstein": "drift apart",
    "fragile AUC": "fragile",
    "abstains worse": "abstains worse",
    "unrankable confidences": "not ranked by DiSCA",
    "undefined analysis": "",
    "guarantee fails to transfer": "guarantee fails to transfer",
    "miscalibrated confidence": "miscalibrated",
}


def _expected_drift(mine):
    """The drift finding's status recomputed from the diagnostics rows and the stated rules: drift and W need
    their permutation null rejected (p < 0.05) and their interval past the threshold, or no interval (one that
    cannot contain the estimate) and the estimate past it."""
    null_d, null_w = mine["drift_pvalue"] < 0.05, mine["wasserstein_pvalue"] < 0.05
    drift = (
        null_d
        & (mine["drift"] >= THRESHOLDS["drift"])
        & (mine["drift_low"].isna() | (mine["drift_low"] >= THRESHOLDS["drift"]))
    ) | (
        null_w
        & (mine["wasserstein"] < THRESHOLDS["wasserstein"])
        & (mine["wasserstein_high"].isna() | (mine["wasserstein_high"] < THRESHOLDS["wasserstein"]))
    )
    fragile = mine["bias_robustness_test_high"] < THRESHOLDS["bias_robustness"]
    past = (
        (mine["drift"] >= THRESHOLDS["drift"])
        | (mine["wasserstein"] < THRESHOLDS["wasserstein"])
        | (mine["bias_robustness_test"] < THRESHOLDS["bias_robustness"])
    )
    return (
        "bad"
        if drift.any() and fragile.any()
        else "warn"
        if (drift | fragile).any()
        else "info"
        if past.any()
        else "good"
    )


def test_every_demo_finding_agrees_with_its_badge_and_its_rule(demo):
    findings, verdicts = demo.table("findings"), demo.table("verdicts").set_index("model")
    diagnostics, board = demo.table("diagnostics"), demo.table("leaderboard").set_index("model")
    assert set(findings["status"]) <= {"good", "warn", "bad", "info"}
    for f in findings.to_dict("records"):
        where = f"{f['model']} {f['topic']}: {f['sentence']} || {f['reason']}"
        if f["status"] in ("warn", "bad"):
            assert f["rule"] and f["reason"].startswith(f["rule"].split(",")[0] + ":"), where
            assert not f["sentence"].startswith(("No ", "A threshold learnt on other data (xdomain) holds")), where
            first = re.split(r"[;.] ", f["sentence"])[0]
            assert all(_OPENING[r.strip()] in first for r in f["rule"].split(",")), where
            interval = re.search(r"interval (\S+\u2013\S+?)(,|$| \(and)", f["reason"])
            assert interval is None or interval.group(1) in f["sentence"].replace(" (", " ").replace(")", ""), where
        elif f["rule"]:  # a note from a rule: inconclusive with a bootstrap
            assert f["status"] == "info" and "inconclusive: " in f["reason"], where
        else:
            assert f["reason"] == "", where
        if f["topic"] == "drift":
            assert f["status"] == _expected_drift(diagnostics[diagnostics["model"] == f["model"]]), where
        if f["topic"] == "ranking" and f["rule"]:
            change, p = board.loc[f["model"], "rank_change"], board.loc[f["model"], "p_value"]
            assert change < 0 and (f["status"] == "warn") == (p <= 0.05), where
    for model, f in findings.groupby("model"):  # a model is good exactly when no finding warns
        worst = "bad" if (f["status"] == "bad").any() else "warn" if (f["status"] == "warn").any() else "good"
        assert verdicts.loc[model, "status"] == worst
        for reason in f.loc[f["status"].isin(["warn", "bad"]), "reason"][:1]:
            assert reason in verdicts.loc[model, "reason"]


def test_the_summary_shows_each_badge_with_its_reason(demo):
    verdicts = demo.table("verdicts").set_index("model")
    for model in verdicts.index:
        s = ba.model_summary(demo, model)
        assert s.reason == verdicts.loc[model, "reason"] and s.reason
        page = s._repr_html_()
        for reason in s.findings.loc[s.findings["reason"] != "", "reason"]:
            assert html.escape(reason) in page
        assert "p_change" not in page and "(significant)" not in page


def test_the_user_guide_lists_every_rule():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| ")}
    for rule, topic, *_ in summary.RULES:
        assert rule in rows and f"| {topic} |" in rows[rule], rule
    assert set(THRESHOLDS) == {"transfer_loss", "kappa_floor", "auc_promise", "drift", "wasserstein", "bias_robustness"}
    for value in (THRESHOLDS["transfer_loss"], THRESHOLDS["drift"], THRESHOLDS["bias_robustness"]):
        assert f"{value:g}" in page


def test_threshold_rules_need_the_accuracy_and_kappa_intervals():
    row = {
        "dataset": "iris_virginica",
        "auc": 0.921,
        "auc_low": 0.87,
        "auc_high": 0.96,
        "accuracy": 0.778,
        "accuracy_low": 0.711,
        "accuracy_high": 0.834,
        "kappa": 0.55,
        "kappa_low": 0.4,
        "kappa_high": 0.7,
    }
    # the demo's logreg: 0.07 lost against indata 0.848, but the accuracy's upper end loses only 0.014
    ((judged, rule, reason, _),) = summary.transfer(row, 0.848)
    assert (judged, rule) == ("inconclusive", "threshold transfer")
    assert reason == (
        "threshold transfer inconclusive: accuracy lost 0.07 \u2265 0.05 on iris_virginica, but its "
        "interval 0.01\u20130.14 straddles 0.05"
    )
    ((judged, _, reason, _),) = summary.transfer(dict(row, accuracy_high=0.79), 0.848)  # 0.058 lost at the upper end
    assert judged == "flag" and reason.endswith("interval 0.06\u20130.14")
    assert summary.transfer(dict(row, accuracy_high=None, accuracy_low=None), 0.848)[0][0] == "unchecked"
    assert summary.transfer(row, 0.82) == []  # 0.042 lost: clear
    # kappa near chance at an AUC of at least 0.8: both intervals must say so
    chance = dict(row, accuracy=0.5, accuracy_low=0.48, accuracy_high=0.52, kappa=0.05, kappa_low=0.01, kappa_high=0.11)
    found = {rule: (judged, reason) for judged, rule, reason, _ in summary.transfer(chance, None)}
    assert found["decisions near chance"] == (
        "flag",
        "decisions near chance: kappa 0.05 < 0.2 at AUC 0.921 on iris_virginica, interval 0.01\u20130.11",
    )
    low_auc = dict(chance, auc=0.801, auc_low=0.75)
    assert summary.transfer(low_auc, None)[0][0] == "inconclusive"
