"""The evaluation's ``risk_control`` table and the verdict rule "guarantee fails to transfer".

The table is checked against an independent computation on a small benchmark: scikit-learn's
logistic pipeline fitted on each protocol's calibration rows (chosen here from the dataset and domain
columns, and scikit-learn's ShuffleSplit for indata), ``risk_controlled_threshold`` on its calibration
answers, and the realised risk counted example by example.  A shifted target (one dataset whose
answers are right far less often at the same confidence) must break the transferred guarantee, and the
verdict must say so with the realised risk.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import beyondauc as ba
from beyondauc.metrics.selective.risk_control_benchmark import (
    RiskControlOptions,
    realised_risk,
    risk_control_table,
    risk_control_tables,
    risk_coverage_points,
)

MODELS = ["sharp", "blunt"]


def small_frame(seed=0, n=300, shifted=None, flip=0.35):
    """Four datasets in two domains, two models; ``shifted`` gets a share ``flip`` of its labels flipped."""
    rng = np.random.default_rng(seed)
    parts = []
    for d in range(4):
        name = f"d{d}"
        y = rng.permutation(np.repeat([0, 1], n // 2))
        truth = y.copy()
        if name == shifted:  # the same scores, far more wrong answers at every confidence
            noisy = rng.random(n) < flip
            y = np.where(noisy, 1 - y, y)
        sign = 2 * truth - 1
        parts.append(
            pd.DataFrame(
                {
                    "dataset": name,
                    "domain": f"dom{d % 2}",
                    "label": y,
                    "id": np.arange(n),
                    "sharp": 2.0 * sign + rng.normal(size=n),
                    "blunt": 0.8 * sign + rng.normal(size=n),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _brute_answers(frame, model, dataset, protocol):
    """(confidence, correct) on the protocol's calibration rows and on the target, without the package's code."""
    mine = frame[frame["dataset"] == dataset]
    domain = mine["domain"].iloc[0]
    if protocol == "xdomain":
        cal, target = frame[frame["dataset"] != dataset], mine
    elif protocol == "outdomain":
        cal, target = frame[frame["domain"] != domain], mine
    else:
        _, test = next(ShuffleSplit(n_splits=1, test_size=0.2, random_state=0).split(np.zeros((len(mine), 1))))
        held = np.zeros(len(mine), dtype=bool)
        held[test] = True
        cal, target = mine[~held], mine[held]
    fit = make_pipeline(StandardScaler(), LogisticRegression(tol=1e-12, max_iter=10_000))
    fit.fit(cal[[model]].to_numpy(), cal["label"])

    def answers(rows):
        p = fit.predict_proba(rows[[model]].to_numpy())[:, 1]
        return np.maximum(p, 1 - p), ((p > 0.5).astype(int) == rows["label"].to_numpy())

    return (*answers(cal), *answers(target))


def _brute_rows(frame, model, dataset, protocol, risks, delta, method):
    """The table's rows for one model x dataset x protocol, computed without the package's benchmark code."""
    conf_cal, ok_cal, conf, ok = _brute_answers(frame, model, dataset, protocol)
    cal, target = conf_cal, conf
    out = []
    for r in risks:
        rc = ba.risk_controlled_threshold(ok_cal, conf_cal, risk=r, delta=delta, method=method)
        n_answered, n_wrong = 0, 0
        for c, right in zip(conf, ok):  # the realised risk, one example at a time
            if c >= rc.threshold:
                n_answered += 1
                n_wrong += int(not right)
        realised = n_wrong / n_answered if n_answered else np.nan
        out.append(
            {
                "certified": rc.certified,
                "threshold": rc.threshold,
                "calibration_coverage": rc.coverage,
                "calibration_risk": rc.risk,
                "n_calibration": len(cal),
                "realised_risk": realised,
                "target_coverage": n_answered / len(target),
                "n_target": len(target),
                "held": (realised <= r) if rc.certified and n_answered else None,
            }
        )
    return out


@pytest.mark.parametrize("method", ["ltt", "sgr"])
def test_the_table_equals_a_brute_force_computation(method):
    frame = small_frame()
    risks = (0.05, 0.1, 0.2)
    table = risk_control_table(ba.load_benchmark(frame), RiskControlOptions(risks=risks, delta=0.1, method=method))
    assert len(table) == 2 * 4 * 3 * 3
    assert table["certified"].any() and (~table["certified"]).any()  # both outcomes are checked
    for (model, dataset, protocol), got in table.groupby(["model", "dataset", "protocol"], sort=False):
        want = _brute_rows(frame, model, dataset, protocol, risks, 0.1, method)
        assert got["target_risk"].tolist() == list(risks)
        for g, w in zip(got.to_dict("records"), want):
            where = (model, dataset, protocol, g["target_risk"])
            assert g["certified"] == w["certified"] and g["method"] == method and g["delta"] == 0.1, where
            assert g["n_calibration"] == w["n_calibration"] and g["n_target"] == w["n_target"], where
            for col in ("threshold", "calibration_coverage", "calibration_risk", "realised_risk", "target_coverage"):
                np.testing.assert_allclose(g[col], w[col], rtol=1e-6, err_msg=str((where, col)))
            assert (pd.isna(g["held"]) and w["held"] is None) or g["held"] == w["held"], where


def _brute_curve(correct, confidence, n_points):
    """The thinned risk-coverage curve by its definition: for each coverage k / (n_points - 1) of the grid, the most
    confident threshold answering at least that share (exact integer comparison), its risk counted one by one."""
    n = len(correct)
    points = []
    for k in range(n_points):
        for t in sorted(set(confidence), reverse=True):
            answered = [q for c, q in zip(confidence, correct) if c >= t]
            if len(answered) * (n_points - 1) >= k * n:
                point = (t, len(answered) / n, sum(1 - q for q in answered) / len(answered))
                if point not in points:
                    points.append(point)
                break
    return points


@pytest.mark.parametrize("seed", range(25))
def test_risk_coverage_points_equal_a_brute_force_computation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    confidence = rng.choice(np.round(rng.uniform(0.5, 1, size=8), 2), size=n)  # many ties
    correct = rng.random(n) < confidence if seed % 3 else rng.choice([0, 0.25, 0.5, 1], size=n)  # graded too
    n_points = int(rng.choice([2, 3, 5, 11, 101]))
    t, c, r = risk_coverage_points(correct, confidence, n_points=n_points)
    want = _brute_curve(list(np.asarray(correct, dtype=float)), list(confidence), n_points)
    assert len(t) == len(want) <= n_points
    np.testing.assert_allclose(np.column_stack([t, c, r]), np.array(want), rtol=0, atol=1e-12)
    assert c[-1] == 1.0 and np.all(np.diff(c) > 0) and np.all(np.diff(t) < 0)


def test_risk_coverage_points_by_hand_and_bad_input():
    # answered at 0.9: 1 of 4 (right); at 0.8: 2 (one wrong); at 0.7: 3; at 0.2: 4 (one wrong)
    t, c, r = risk_coverage_points([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.2], n_points=5)
    assert t.tolist() == [0.9, 0.8, 0.7, 0.2] and c.tolist() == [0.25, 0.5, 0.75, 1.0]
    assert r.tolist() == pytest.approx([0.0, 0.5, 1 / 3, 0.25])
    assert [len(x) for x in risk_coverage_points([], [])] == [0, 0, 0]
    with pytest.raises(ValueError, match="`n_points`"):
        risk_coverage_points([1, 0], [0.6, 0.7], n_points=1)


def test_the_curves_are_each_protocols_calibrator_on_the_target_and_hold_every_certified_point():
    frame = small_frame()
    options = RiskControlOptions(risks=(0.05, 0.1, 0.2), delta=0.1, n_points=11)
    table, curves = risk_control_tables(ba.load_benchmark(frame), options)
    assert list(curves.columns) == ["model", "dataset", "protocol", "threshold", "coverage", "risk"]
    assert len(curves.groupby(["model", "dataset", "protocol"])) == 2 * 4 * 3
    assert curves.groupby(["model", "dataset", "protocol"]).size().max() <= 11
    for (model, dataset, protocol), got in curves.groupby(["model", "dataset", "protocol"], sort=False):
        _, _, conf, ok = _brute_answers(frame, model, dataset, protocol)
        want = np.array(_brute_curve(list(ok.astype(float)), list(conf), 11))
        got_points = got[["threshold", "coverage", "risk"]].to_numpy()
        np.testing.assert_allclose(got_points, want, rtol=1e-6, err_msg=str((model, dataset, protocol)))
        # each certified threshold's point on the target is a point of the whole curve (every distinct confidence)
        whole = set()
        for t in set(conf):
            answered = ok[conf >= t]
            whole.add((round(len(answered) / len(ok), 9), round(float(np.mean(~answered)), 9)))
        rows = table[(table["model"] == model) & (table["dataset"] == dataset) & (table["protocol"] == protocol)]
        for row in rows[rows["certified"] & (rows["target_coverage"] > 0)].itertuples():
            assert (round(row.target_coverage, 9), round(row.realised_risk, 9)) in whole


def test_realised_risk_by_hand():
    # answered at 0.7: 0.9 (right), 0.8 (wrong), 0.7 (right): one wrong in three, three of four answered
    assert realised_risk([1, 0, 1, 1], [0.9, 0.8, 0.7, 0.2], 0.7) == (1 / 3, 0.75)
    risk, coverage = realised_risk([1, 0], [0.6, 0.7], np.inf)
    assert np.isnan(risk) and coverage == 0.0


@pytest.fixture(scope="module")
def shifted(tmp_path_factory):
    ev = ba.evaluate(small_frame(seed=1, n=400, shifted="d2"), n_bootstrap=20, noise_repeats=2, n_repeats=2)
    return ev, ev.save(tmp_path_factory.mktemp("rc") / "evaluation")


def test_a_shifted_target_breaks_the_transferred_guarantee_and_the_verdict_says_so(shifted):
    ev, _ = shifted
    rc = ev.table("risk_control")
    head = rc[(rc["model"] == "sharp") & (rc["protocol"] == "xdomain") & (rc["target_risk"] == 0.1)]
    row = head.set_index("dataset").loc["d2"]
    assert row["certified"] and row["realised_risk"] > 0.25 and not row["held"]  # a third of the labels flipped
    assert head.set_index("dataset").drop(index="d2")["held"].all()  # unshifted datasets keep the promise
    finding = ev.table("findings").query("model == 'sharp' and topic == 'selective'").iloc[0]
    worst = (
        rc[
            (rc["model"] == "sharp")
            & rc["protocol"].isin(["xdomain", "outdomain"])
            & (rc["target_risk"] == 0.1)
            & rc["certified"]
        ]
        .sort_values("realised_risk")
        .iloc[-1]
    )
    assert worst["dataset"] == "d2"
    assert finding["status"] == "warn" and "guarantee fails to transfer" in finding["rule"]
    where = {"xdomain": "the other datasets", "outdomain": "the datasets of other domains"}[worst["protocol"]]
    assert finding["sentence"].startswith(
        f"A guarantee fails to transfer: certified at risk \u2264 0.10 on {where} ({worst['protocol']}), its threshold "
        f"answered {100 * worst['target_coverage']:.0f}% of d2 at a realised risk of {worst['realised_risk']:.2f}"
    )
    assert "guarantee fails to transfer" in ev.table("verdicts").set_index("model").loc["sharp", "verdict"]
    # the realised risk's interval: Clopper-Pearson from the answered examples, wholly above the target
    n = round(worst["target_coverage"] * worst["n_target"])
    k = round(worst["realised_risk"] * n)
    low, high = beta.ppf(0.025, k, n - k + 1), beta.ppf(0.975, k + 1, n - k)
    assert low > 0.1 and f"(interval {low:.2f}\u2013{high:.2f}, wholly above the target)" in finding["sentence"]


def test_without_a_bootstrap_the_failed_guarantee_is_an_unchecked_note():
    ev = ba.evaluate(small_frame(seed=1, n=400, shifted="d2"), n_bootstrap=0, noise_repeats=2, n_repeats=2)
    finding = ev.table("findings").query("model == 'sharp' and topic == 'selective'").iloc[0]
    assert finding["status"] == "info" and finding["rule"] == "guarantee fails to transfer"
    assert finding["reason"].startswith("guarantee fails to transfer unchecked: realised risk ")
    assert "A guarantee may fail to transfer: certified at risk \u2264 0.10" in finding["sentence"]


def test_without_a_shift_no_guarantee_fails():
    ev = ba.evaluate(small_frame(seed=1, n=400), n_bootstrap=0, noise_repeats=2, n_repeats=2)
    rc = ev.table("risk_control")
    head = rc[(rc["target_risk"] == 0.1) & rc["protocol"].isin(["xdomain", "outdomain"]) & rc["certified"]]
    assert len(head) and (head["realised_risk"] <= 0.1).all()
    assert not ev.table("findings")["rule"].str.contains("guarantee").any()


def test_the_table_round_trips_through_the_saved_evaluation(shifted):
    ev, folder = shifted
    back = ba.load_evaluation(folder)
    pd.testing.assert_frame_equal(back.table("risk_control"), ev.table("risk_control"))
    pd.testing.assert_frame_equal(back.table("risk_control_curves"), ev.table("risk_control_curves"))
    assert ev.table("risk_control_curves").groupby(["model", "dataset", "protocol"]).size().max() <= 101
    assert set(back.table("risk_control")["protocol"]) == {"xdomain", "outdomain", "indata"}
    assert back.parameters["target_risks"] == [0.05, 0.1, 0.2] and back.parameters["risk_method"] == "ltt"


def test_bad_target_risks_are_one_line_errors():
    with pytest.raises(ValueError, match=r"`target_risks` must be a number in \(0, 1\), got 1.5"):
        ba.evaluate(small_frame(), target_risks=(0.1, 1.5))
    with pytest.raises(ValueError, match="`risk_method` must be one of"):
        ba.evaluate(small_frame(), risk_method="conformal")


def test_rows_at_risk_selects_as_a_brute_force_loop_does(shifted):
    from beyondauc.evaluation.abstention import rows_at_risk

    ev, _ = shifted
    rc = ev.table("risk_control")
    for risk in (*ev.parameters["target_risks"], None, 0.1 + 1e-17, 0.3):
        for model in (None, "sharp"):
            want = 0.1 if risk is None else risk  # the headline risk of (0.05, 0.1, 0.2)
            brute = [
                i
                for i, row in rc.iterrows()
                if abs(row["target_risk"] - want) <= 1e-9 and (model is None or row["model"] == model)
            ]
            assert rows_at_risk(rc, risk, model=model).index.tolist() == brute, (risk, model)
    assert len(rows_at_risk(rc)) == len(rc) // 3


def test_the_figure_draws_each_datasets_risk_coverage_curve_and_the_certified_points(shifted):
    """Each panel: per protocol the dataset's stored risk-coverage curve under that protocol's calibrator, with
    each certified threshold's point on the dataset lying on it, and the target line."""
    import matplotlib
    from matplotlib.colors import to_hex

    matplotlib.use("Agg")
    from beyondauc.evaluation.abstention import rows_at_risk
    from beyondauc.plots import RiskControlDisplay

    ev, _ = shifted
    disp = RiskControlDisplay.from_evaluation(ev, "sharp")
    rows = rows_at_risk(ev.table("risk_control"), 0.1, model="sharp")
    curves = ev.table("risk_control_curves")
    colors = {"xdomain": "tab:blue", "outdomain": "tab:purple", "indata": "tab:green"}
    for ax in disp.axes_:
        dataset = ax.get_title().split(":")[0]
        for protocol, color in colors.items():
            curve = curves[
                (curves["model"] == "sharp") & (curves["dataset"] == dataset) & (curves["protocol"] == protocol)
            ]
            lines = [
                line
                for line in ax.get_lines()
                if to_hex(line.get_color()) == to_hex(color)
                and line.get_marker() in ("None", "")
                and len(line.get_xdata()) > 2
            ]
            assert len(lines) == 1, (dataset, protocol)
            x, y = lines[0].get_data()
            np.testing.assert_allclose(x, curve["coverage"].to_numpy())
            np.testing.assert_allclose(y, curve["risk"].to_numpy())
            assert x[-1] == 1.0
        assert any(line.get_ydata()[0] == 0.1 and line.get_linestyle() == "--" for line in ax.get_lines())
        mine = rows[(rows["dataset"] == dataset) & rows["certified"].astype(bool)]
        filled = {
            (round(float(a), 9), round(float(b), 9))
            for line in ax.get_lines()
            if line.get_marker() == "o" and line.get_markerfacecolor() != "white"
            for a, b in zip(*line.get_data())
        }
        assert filled == {(round(a, 9), round(b, 9)) for a, b in zip(mine["target_coverage"], mine["realised_risk"])}


def separation_frame(seed=0, n=400, shifted=None):
    """Four datasets in two domains; scores ``separation * (2y - 1) + N(0, 1)``, separations 2.0 (sharp) and 0.8
    (blunt), and on the dataset ``shifted`` 0.5 and 0.2: the same models on a harder distribution."""
    rng = np.random.default_rng(seed)
    parts = []
    for d in range(4):
        name = f"d{d}"
        y = rng.permutation(np.repeat([0, 1], n // 2))
        sign = 2 * y - 1
        sharp, blunt = (0.5, 0.2) if name == shifted else (2.0, 0.8)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": name,
                    "domain": f"dom{d % 2}",
                    "label": y,
                    "id": np.arange(n),
                    "sharp": sharp * sign + rng.normal(size=n),
                    "blunt": blunt * sign + rng.normal(size=n),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _report_text(ev, model):
    """The model's findings as its report shows them (the summary's HTML, tags dropped, entities read)."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", " ", ba.model_summary(ev, model)._repr_html_()))


def test_a_target_from_a_shifted_distribution_fails_the_guarantee_and_its_unshifted_twin_does_not():
    """End to end through ``ba.evaluate``: d2's scores are drawn with a separation of 0.5 instead of 2, so a threshold
    certified on the other datasets answers nearly all of d2, wrong at the Bayes error of that distribution,
    Phi(-0.5) = 0.31; the report says the guarantee failed to transfer, with that realised risk and its interval. The
    same draw without the shift keeps every transferred guarantee, and the report says nothing of one failing."""
    from scipy.stats import norm

    kw = {"n_bootstrap": 20, "noise_repeats": 2, "n_repeats": 2, "n_permutations": 19}
    ev = ba.evaluate(separation_frame(shifted="d2"), **kw)
    rc = ev.table("risk_control")
    moved = rc[(rc["model"] == "sharp") & rc["protocol"].isin(["xdomain", "outdomain"]) & (rc["target_risk"] == 0.1)]
    assert set(moved.loc[~moved["held"].astype(bool), "dataset"]) == {"d2"}
    worst = moved[moved["certified"]].sort_values("realised_risk", kind="stable").iloc[-1]
    assert worst["dataset"] == "d2" and worst["target_coverage"] > 0.9
    assert abs(worst["realised_risk"] - norm.cdf(-0.5)) < 0.07
    n = round(worst["target_coverage"] * worst["n_target"])
    k = round(worst["realised_risk"] * n)
    low, high = beta.ppf(0.025, k, n - k + 1), beta.ppf(0.975, k + 1, n - k)
    text = _report_text(ev, "sharp")
    assert "A guarantee fails to transfer: certified at risk \u2264 0.10" in text
    assert (
        f"of d2 at a realised risk of {worst['realised_risk']:.2f} (interval {low:.2f}\u2013{high:.2f}, wholly " in text
    )
    assert "guarantee fails to transfer" in ev.table("verdicts").set_index("model").loc["sharp", "verdict"]

    twin = ba.evaluate(separation_frame(), **kw)
    rc = twin.table("risk_control")
    kept = rc[rc["protocol"].isin(["xdomain", "outdomain"]) & (rc["target_risk"] == 0.1) & rc["certified"]]
    assert len(kept) >= 8 and kept["held"].astype(bool).all()
    assert not twin.table("findings")["rule"].str.contains("guarantee").any()
    for model in MODELS:
        assert "A guarantee" not in _report_text(twin, model)  # (the rules' note names the rule for every model)
        assert "guarantee" not in twin.table("verdicts").set_index("model").loc[model, "verdict"]


def test_the_figure_from_predictions_draws_the_targets_curve_and_the_certified_threshold_on_it():
    import matplotlib

    matplotlib.use("Agg")
    from beyondauc.plots import RiskControlDisplay

    rng = np.random.default_rng(4)
    conf = np.round(rng.uniform(size=1500), 3)
    ok = rng.uniform(size=1500) < 0.5 + 0.5 * conf
    target_ok = ok[1000:] & (rng.uniform(size=500) < 0.9)  # a shifted target: more wrong answers
    disp = RiskControlDisplay.from_predictions(ok[:1000], conf[:1000], target_ok, conf[1000:], risk=0.1, name="t")
    rc = ba.risk_controlled_threshold(ok[:1000], conf[:1000], risk=0.1)
    answered = [q for c, q in zip(conf[1000:], target_ok) if c >= rc.threshold]  # one example at a time
    realised = sum(not q for q in answered) / len(answered)
    (ax,) = disp.axes_
    curve = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(curve) == 1
    want = np.array(_brute_curve(list(target_ok.astype(float)), list(conf[1000:]), 101))
    np.testing.assert_allclose(np.column_stack(curve[0].get_data()), want[:, 1:], rtol=0, atol=1e-12)
    filled = [line for line in ax.get_lines() if line.get_marker() == "o" and line.get_markerfacecolor() != "white"]
    assert [tuple(line.get_xydata()[0]) for line in filled] == [pytest.approx((len(answered) / 500, realised))]
    assert disp.table["held"].iloc[0] == (realised <= 0.1) and ax.get_title() == f"t: held {int(realised <= 0.1)}/1"
