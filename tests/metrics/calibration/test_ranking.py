"""Tests of :mod:`beyondauc.metrics.calibration.ranking` against hand-computed / independently computed references.

Conventions under test: rank 1 = best, ties share the minimum rank, a NaN
value has a NaN rank, and the ``"mean"`` row ranks the mean over datasets
(NaN values skipped).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import beyondauc
from beyondauc import (
    best_of_methods,
    calibration_modes,
    expected_accuracy,
    expected_accuracy_grid,
    kendall_tau,
    load_benchmark,
    rank_changes,
    rank_table,
    score_histograms,
    score_variance,
)

NAN = np.nan


# -- fixtures -------------------------------------------------------------------


def hand_results():
    """3 datasets x 4 models; dyadic values so every mean is exact.

    accuracy        A      B      C      D
      d1          .750   .625   .625   .500    (B, C tie)
      d2          .500   .875   NaN    .625    (C has no accuracy)
      d3          .625   .500   .750   .375
    auc
      d1          .875   .8125  .9375  .6875
      d2          .8125  .625   .75    .9375
      d3          .75    .6875  .875   .5625
    """
    acc = {"d1": [0.750, 0.625, 0.625, 0.500], "d2": [0.500, 0.875, NAN, 0.625], "d3": [0.625, 0.500, 0.750, 0.375]}
    auc = {
        "d1": [0.875, 0.8125, 0.9375, 0.6875],
        "d2": [0.8125, 0.625, 0.75, 0.9375],
        "d3": [0.75, 0.6875, 0.875, 0.5625],
    }
    rows = []
    for d in ("d1", "d2", "d3"):
        for j, m in enumerate("ABCD"):
            rows.append(dict(dataset=d, model=m, auc=auc[d][j], accuracy=acc[d][j], kappa=2 * acc[d][j] - 1))
    return pd.DataFrame(rows)


# Hand-computed ranks of hand_results() (rank 1 = best, ties -> minimum rank).
HAND_ACC_RANKS = {
    "d1": {"A": 1, "B": 2, "C": 2, "D": 4},
    "d2": {"A": 3, "B": 1, "C": NAN, "D": 2},
    "d3": {"A": 2, "B": 3, "C": 1, "D": 4},
    # means: A (.75+.5+.625)/3 = .625, B 2/3, C (.625+.75)/2 = .6875, D 1.5/3 = .5
    "mean": {"A": 3, "B": 2, "C": 1, "D": 4},
}
HAND_ACC_MEANS = {"A": 0.625, "B": 2 / 3, "C": 0.6875, "D": 0.5}
HAND_AUC_RANKS = {
    "d1": {"A": 2, "B": 3, "C": 1, "D": 4},
    "d2": {"A": 2, "B": 4, "C": 3, "D": 1},
    "d3": {"A": 2, "B": 3, "C": 1, "D": 4},
    # means: A 2.4375/3 = .8125, B 2.125/3, C 2.5625/3, D 2.1875/3
    "mean": {"A": 2, "B": 4, "C": 1, "D": 3},
}


@pytest.fixture(scope="module")
def demo_results(demo):
    return expected_accuracy(demo, protocol="xdomain", method="logistic")


@pytest.fixture(scope="module")
def generated():
    """A small generated benchmark: 4 datasets in 2 domains, 3 models of different strength and scale."""
    rng = np.random.default_rng(7)
    parts = []
    for k, (d, n) in enumerate({"alpha": 40, "beta": 55, "gamma": 35, "delta": 50}.items()):
        y = (rng.random(n) < 0.45).astype(int)
        y[:2] = [0, 1]
        shift = rng.normal(0, 0.8)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "domain": "news" if k < 2 else "chat",
                    "label": y,
                    "strong": rng.normal(size=n) + 2.0 * y + shift,
                    "weak": 1 / (1 + np.exp(-(rng.normal(size=n) + 0.7 * y + 0.3 * shift))),
                    "coarse": np.round(np.clip(rng.normal(size=n) + 1.2 * y + 2, 0, 5)),
                }
            )
        )
    return load_benchmark(pd.concat(parts, ignore_index=True))


@pytest.fixture(scope="module")
def generated_grid(generated):
    return expected_accuracy_grid(
        generated,
        protocols=["xdomain", "outdata", "indata"],
        methods=["logistic", "isotonic", "stump"],
        n_repeats=5,
        random_state=3,
    )


def as_lookup(frame, key="rank"):
    return {(d, m): v for d, m, v in zip(frame["dataset"], frame["model"], frame[key])}


def same(a, b):
    """Equality that treats NaN/<NA> as equal to NaN/<NA>."""
    return bool(pd.isna(b)) if pd.isna(a) else (not pd.isna(b) and a == b)


# -- rank_table -----------------------------------------------------------------


def test_rank_table_hand_computed_ranks_ties_nan_and_mean_row():
    t = rank_table(hand_results(), score="accuracy")
    assert list(t.columns) == ["dataset", "model", "value", "rank"]
    assert list(t["dataset"]) == ["d1"] * 4 + ["d2"] * 4 + ["d3"] * 4 + ["mean"] * 4
    assert list(t["model"]) == list("ABCD") * 4
    ranks = as_lookup(t)
    for d, expected in HAND_ACC_RANKS.items():
        for m, r in expected.items():
            assert same(ranks[(d, m)], float(r)), (d, m, ranks[(d, m)], r)
    values = as_lookup(t, "value")
    assert values[("d1", "B")] == 0.625 and np.isnan(values[("d2", "C")])
    for m, v in HAND_ACC_MEANS.items():
        assert values[("mean", m)] == pytest.approx(v, rel=1e-15)


def test_rank_table_auc_and_other_score_columns():
    res = hand_results()
    ranks = as_lookup(rank_table(res, score="auc"))
    for d, expected in HAND_AUC_RANKS.items():
        for m, r in expected.items():
            assert ranks[(d, m)] == r, (d, m)
    # kappa = 2 * accuracy - 1 is a monotone transform: identical ranks
    k = rank_table(res, score="kappa")
    a = rank_table(res, score="accuracy")
    np.testing.assert_array_equal(k["rank"].to_numpy(), a["rank"].to_numpy())


def test_rank_table_all_nan_model_has_nan_mean_and_rank():
    res = hand_results()
    res.loc[res["model"] == "D", "accuracy"] = NAN
    t = rank_table(res, score="accuracy")
    mean = t[t["dataset"] == "mean"].set_index("model")
    assert np.isnan(mean.loc["D", "value"]) and pd.isna(mean.loc["D", "rank"])
    assert mean.loc[["C", "B", "A"], "rank"].tolist() == [1.0, 2.0, 3.0]
    assert t.loc[t["model"] == "D", "rank"].isna().all()


def test_rank_table_tie_in_mean_shares_minimum_rank():
    res = pd.DataFrame(
        {
            "dataset": ["a", "a", "a", "b", "b", "b"],
            "model": ["x", "y", "z"] * 2,
            "auc": [0.5] * 6,
            "accuracy": [0.75, 0.5, 0.25, 0.25, 0.5, 0.25],
        }
    )
    mean = rank_table(res).query("dataset == 'mean'").set_index("model")
    # means: x .5, y .5, z .25
    assert mean["rank"].to_dict() == {"x": 1.0, "y": 1.0, "z": 3.0}


def test_rank_table_demo_matches_pivot_and_scipy_rankdata(demo, demo_results):
    for score in ("auc", "accuracy", "kappa"):
        t = rank_table(demo_results, score=score)
        wide = demo_results.pivot(index="dataset", columns="model", values=score)
        assert len(t) == (len(demo.datasets) + 1) * len(demo.models)
        for d in demo.datasets:
            row = wide.loc[d, list(demo.models)].to_numpy()
            expected = stats.rankdata(-row, method="min")
            got = t.loc[t["dataset"] == d, "rank"].to_numpy()
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(t.loc[t["dataset"] == d, "value"].to_numpy(), row)
        means = wide[list(demo.models)].mean(axis=0).to_numpy()
        got = t[t["dataset"] == "mean"]
        np.testing.assert_allclose(got["value"].to_numpy(), means, rtol=1e-14)
        np.testing.assert_array_equal(got["rank"].to_numpy(), stats.rankdata(-means, method="min"))


def test_rank_table_invariant_to_row_order(demo_results):
    def canon(t):
        return t.sort_values(["dataset", "model"]).reset_index(drop=True)

    for res in (hand_results(), demo_results):
        base = canon(rank_table(res))
        for seed in (0, 1, 2):
            shuffled = res.sample(frac=1.0, random_state=seed).reset_index(drop=True)
            got = canon(rank_table(shuffled))
            pd.testing.assert_frame_equal(got[["dataset", "model"]], base[["dataset", "model"]])
            np.testing.assert_allclose(got["value"], base["value"], rtol=1e-14, equal_nan=True)
            np.testing.assert_array_equal(got["rank"].to_numpy(), base["rank"].to_numpy())
            ch_base = canon(rank_changes(res))
            ch = canon(rank_changes(shuffled))
            np.testing.assert_array_equal(ch["change"].to_numpy(), ch_base["change"].to_numpy())
            tau_base = kendall_tau(res).sort_values("dataset").reset_index(drop=True)
            tau = kendall_tau(shuffled).sort_values("dataset").reset_index(drop=True)
            np.testing.assert_allclose(tau["tau"], tau_base["tau"], rtol=1e-12, equal_nan=True)


# -- rank_changes ---------------------------------------------------------------


def test_rank_changes_hand_checked_and_sign_convention():
    ch = rank_changes(hand_results(), score="accuracy")
    assert list(ch.columns) == ["dataset", "model", "auc", "auc_rank", "value", "rank", "change"]
    for d in ("d1", "d2", "d3", "mean"):
        for m in "ABCD":
            row = ch[(ch["dataset"] == d) & (ch["model"] == m)].iloc[0]
            assert row["auc_rank"] == HAND_AUC_RANKS[d][m]
            assert same(row["rank"], float(HAND_ACC_RANKS[d][m]))
            assert same(row["change"], float(HAND_AUC_RANKS[d][m] - HAND_ACC_RANKS[d][m]))
    mean = ch[ch["dataset"] == "mean"].set_index("model")
    # B is 4th by AUC but 2nd by accuracy: it climbs, so its change is positive
    assert mean.loc["B", "change"] == 2.0
    assert mean.loc["A", "change"] == -1.0 and mean.loc["D", "change"] == -1.0 and mean.loc["C", "change"] == 0.0
    # a NaN accuracy rank gives a NaN change
    assert pd.isna(ch[(ch["dataset"] == "d2") & (ch["model"] == "C")]["change"].iloc[0])


# -- kendall_tau ----------------------------------------------------------------


def reference_tau(res, score):
    rows = {}
    for d, g in res.groupby("dataset", sort=False):
        rows[d] = (g["auc"].to_numpy(float), g[score].to_numpy(float))
    means = res.groupby("model", sort=False)[["auc", score]].mean()
    rows["mean"] = (means["auc"].to_numpy(float), means[score].to_numpy(float))
    out = {}
    for d, (x, y) in rows.items():
        ok = np.isfinite(x) & np.isfinite(y)
        x, y = x[ok], y[ok]
        if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
            out[d] = (NAN, NAN, int(ok.sum()))
        else:
            r = stats.kendalltau(x, y)
            out[d] = (r.statistic, r.pvalue, int(ok.sum()))
    return out


@pytest.mark.parametrize("score", ["accuracy", "kappa"])
def test_kendall_tau_matches_scipy_hand_frame(score):
    res = hand_results()
    got = kendall_tau(res, score=score)
    assert list(got.columns) == ["dataset", "tau", "p_value", "n_models"]
    assert list(got["dataset"]) == ["d1", "d2", "d3", "mean"]
    ref = reference_tau(res, score)
    for d, tau, p, n in got.itertuples(index=False):
        assert tau == pytest.approx(ref[d][0], rel=1e-12)
        assert p == pytest.approx(ref[d][1], rel=1e-12)
        assert n == ref[d][2]
    assert got.set_index("dataset").loc["d2", "n_models"] == 3  # C's NaN accuracy is left out


def test_kendall_tau_matches_scipy_on_demo(demo_results):
    got = kendall_tau(demo_results, score="accuracy").set_index("dataset")
    ref = reference_tau(demo_results, "accuracy")
    assert set(got.index) == set(ref)
    for d, (tau, p, n) in ref.items():
        assert got.loc[d, "tau"] == pytest.approx(tau, rel=1e-12)
        assert got.loc[d, "p_value"] == pytest.approx(p, rel=1e-12)
        assert got.loc[d, "n_models"] == n


def test_kendall_tau_nan_for_fewer_than_two_models_or_constant_values():
    res = pd.DataFrame(
        {
            "dataset": ["one"] * 3 + ["flat"] * 3 + ["flatauc"] * 3 + ["ok"] * 3,
            "model": ["x", "y", "z"] * 4,
            "auc": [0.9, 0.8, 0.7, 0.9, 0.8, 0.7, 0.6, 0.6, 0.6, 0.9, 0.8, 0.7],
            "accuracy": [0.7, NAN, NAN, 0.5, 0.5, 0.5, 0.9, 0.8, 0.7, 0.7, 0.8, 0.6],
        }
    )
    got = kendall_tau(res).set_index("dataset")
    for d, n in (("one", 1), ("flat", 3), ("flatauc", 3)):
        assert np.isnan(got.loc[d, "tau"]) and np.isnan(got.loc[d, "p_value"]), d
        assert got.loc[d, "n_models"] == n
    assert got.loc["ok", "tau"] == pytest.approx(stats.kendalltau([0.9, 0.8, 0.7], [0.7, 0.8, 0.6]).statistic)
    # a single model: NaN for every row, including the mean
    single = kendall_tau(res[res["model"] == "x"])
    assert single["tau"].isna().all() and (single["n_models"] <= 1).all()


# -- calibration_modes / best_of_methods ---------------------------------------------


def test_calibration_modes_matches_groupby_means(generated, generated_grid):
    grid = generated_grid
    for score in ("accuracy", "kappa"):
        modes = calibration_modes(grid, score=score)
        assert list(modes.columns) == ["protocol", "method", "model", "value", "rank"]
        # the AUC comparison group comes first
        auc_part = modes.iloc[: len(generated.models)]
        assert (auc_part["protocol"] == "auc").all() and (auc_part["method"] == "").all()
        first = grid[(grid["protocol"] == "xdomain") & (grid["method"] == "logistic")]
        auc_means = first.groupby("model")["auc"].mean()
        for m, v, _r in zip(auc_part["model"], auc_part["value"], auc_part["rank"]):
            assert v == pytest.approx(auc_means[m], rel=1e-14)
        exp_auc_rank = stats.rankdata(-auc_means[list(auc_part["model"])].to_numpy(), method="min")
        np.testing.assert_array_equal(auc_part["rank"].to_numpy(), exp_auc_rank)

        ref = grid.groupby(["protocol", "method", "model"])[score].mean()
        rest = modes.iloc[len(generated.models) :]
        assert len(rest) == 3 * 3 * len(generated.models)
        assert set(zip(rest["protocol"], rest["method"])) == {
            (p, m) for p in ("xdomain", "outdata", "indata") for m in ("logistic", "isotonic", "stump")
        }
        for (p, meth), g in rest.groupby(["protocol", "method"]):
            expected = np.array([ref[(p, meth, m)] for m in g["model"]])
            np.testing.assert_allclose(g["value"].to_numpy(), expected, rtol=1e-13)
            np.testing.assert_array_equal(g["rank"].to_numpy(), stats.rankdata(-expected, method="min"))


def test_best_of_methods_picks_the_max_over_methods(generated, generated_grid):
    grid = generated_grid
    for score in ("kappa", "accuracy"):
        best = best_of_methods(grid, score=score)
        assert list(best.columns) == ["protocol", "model", "value", "method", "rank"]
        assert len(best) == 3 * len(generated.models)
        means = grid.groupby(["protocol", "model", "method"])[score].mean()
        for p, g in best.groupby("protocol"):
            for m, v, meth in zip(g["model"], g["value"], g["method"]):
                per_method = means.loc[(p, m)]
                assert v == pytest.approx(per_method.max(), rel=1e-13)
                assert per_method[meth] == pytest.approx(per_method.max(), rel=1e-13)  # names the winner
                assert (per_method <= v + 1e-12).all()
            np.testing.assert_array_equal(g["rank"].to_numpy(), stats.rankdata(-g["value"].to_numpy(), method="min"))


def test_best_of_methods_hand_grid_names_method_and_handles_all_nan():
    rows = []
    vals = {
        ("p", "m1", "logistic"): [0.2, 0.4],
        ("p", "m1", "stump"): [0.5, 0.5],
        ("p", "m2", "logistic"): [0.9, 0.7],
        ("p", "m2", "stump"): [0.1, 0.1],
        ("p", "m3", "logistic"): [NAN, NAN],
        ("p", "m3", "stump"): [NAN, NAN],
    }
    for (p, model, meth), ks in vals.items():
        for d, k in zip(("a", "b"), ks):
            rows.append(dict(protocol=p, method=meth, dataset=d, model=model, auc=0.8, accuracy=0.7, kappa=k))
    best = best_of_methods(pd.DataFrame(rows), score="kappa").set_index("model")
    assert best.loc["m1", "method"] == "stump" and best.loc["m1", "value"] == pytest.approx(0.5)
    assert best.loc["m2", "method"] == "logistic" and best.loc["m2", "value"] == pytest.approx(0.8)
    # no method has a defined score: no value, no winner, no rank
    assert np.isnan(best.loc["m3", "value"]) and pd.isna(best.loc["m3", "method"])
    assert best.loc["m1", "rank"] == 2.0 and best.loc["m2", "rank"] == 1.0 and pd.isna(best.loc["m3", "rank"])


# -- score_variance -------------------------------------------------------------------


def test_score_variance_raw_and_scaled(demo):
    v = score_variance(demo).set_index("model")
    assert list(v.index) == list(demo.models)
    assert "group" not in v.columns
    codes = demo.dataset_codes()
    for m in demo.models:
        s = demo.scores(m)
        scaled = (s - s.min()) / (s.max() - s.min())
        assert v.loc[m, "variance"] == pytest.approx(np.var(s), rel=1e-12)
        assert v.loc[m, "scaled_variance"] == pytest.approx(np.var(scaled), rel=1e-12)
        per_ds = np.mean([np.var(scaled[codes == i]) for i in range(len(demo.datasets))])
        assert v.loc[m, "mean_dataset_variance"] == pytest.approx(per_ds, rel=1e-12)
    assert (v["scaled_variance"] <= 0.25).all()


@pytest.mark.parametrize("score", ["accuracy", "kappa"])
def test_score_variance_groups_agree_with_rank_changes(demo, demo_results, score):
    v = score_variance(demo, demo_results, score=score).set_index("model")
    ch = rank_changes(demo_results, score=score).query("dataset == 'mean'").set_index("model")
    for m in demo.models:
        c = ch.loc[m, "change"]
        assert v.loc[m, "change"] == c
        assert v.loc[m, "auc_rank"] == ch.loc[m, "auc_rank"] and v.loc[m, "rank"] == ch.loc[m, "rank"]
        assert v.loc[m, "group"] == ("better" if c > 0 else "worse" if c < 0 else "same")
    if score == "accuracy":  # the demo's point: the groups are not all "same"
        assert {"better", "worse"} <= set(v["group"])


# -- score_histograms -----------------------------------------------------------------


def test_score_histograms_counts_density_edges_vs_numpy(demo):
    bins = 7
    h = score_histograms(demo, bins=bins, clip_quantiles=None)
    assert list(h.columns) == [
        "model",
        "dataset",
        "label",
        "bin",
        "left",
        "right",
        "scaled_left",
        "scaled_right",
        "count",
        "density",
        "clipped",
    ]
    assert (h["clipped"] == 0).all()
    assert set(h["model"]) == set(demo.models)
    assert list(pd.unique(h["dataset"])) == list(demo.datasets) + ["all"]
    y, codes = demo.labels(), demo.dataset_codes()
    for m in demo.models:
        s = demo.scores(m)
        hm = h[h["model"] == m]
        edges = np.append(hm["left"].to_numpy()[:bins], hm["right"].to_numpy()[bins - 1])
        assert edges[0] == s.min() and edges[-1] == s.max()
        np.testing.assert_allclose(np.diff(edges), (s.max() - s.min()) / bins, rtol=1e-9)
        for (d, label), g in hm.groupby(["dataset", "label"]):
            assert list(g["bin"]) == list(range(bins))
            # every dataset of one model shares the same edges
            np.testing.assert_array_equal(g["left"].to_numpy(), edges[:-1])
            np.testing.assert_array_equal(g["right"].to_numpy(), edges[1:])
            np.testing.assert_allclose(g["scaled_left"].to_numpy(), np.arange(bins) / bins, atol=1e-12)
            np.testing.assert_allclose(g["scaled_right"].to_numpy(), np.arange(1, bins + 1) / bins, atol=1e-12)
            sel = y == label if d == "all" else (y == label) & (codes == demo.datasets.index(d))
            assert g["count"].sum() == sel.sum()
            expected, _ = np.histogram(s[sel], bins=edges)
            np.testing.assert_array_equal(g["count"].to_numpy(), expected)
            assert g["density"].sum() == pytest.approx(1.0)
            np.testing.assert_allclose(g["density"].to_numpy(), g["count"].to_numpy() / sel.sum())
        for label in (0, 1):
            hl = hm[hm["label"] == label]
            per_ds = hl[hl["dataset"] != "all"].groupby("bin")["count"].sum().to_numpy()
            np.testing.assert_array_equal(hl[hl["dataset"] == "all"]["count"].to_numpy(), per_ds)


def test_score_histograms_one_model_and_constant_scores():
    df = pd.DataFrame(
        {
            "dataset": ["a"] * 4 + ["b"] * 4,
            "label": [0, 1] * 4,
            "m": [0.0, 1.0, 0.5, 0.25, 0.75, 1.0, 0.0, 0.5],
            "flat": [3.0] * 8,
        }
    )
    bench = load_benchmark(df)
    h = score_histograms(bench, bins=4, models="m")
    assert set(h["model"]) == {"m"}
    a0 = h[(h["dataset"] == "a") & (h["label"] == 0)]
    # a's negatives: 0.0, 0.5 -> bins [0, .25) and [.5, .75)
    assert a0["count"].tolist() == [1, 0, 1, 0]
    all1 = h[(h["dataset"] == "all") & (h["label"] == 1)]
    # positives: 1.0, 0.25, 1.0, 0.5 -> max value falls in the last (closed) bin
    assert all1["count"].tolist() == [0, 1, 1, 2]
    flat = score_histograms(bench, bins=3, models=["flat"])
    g = flat[(flat["dataset"] == "all") & (flat["label"] == 1)]
    assert g["count"].sum() == 4 and g["count"].tolist() == [0, 4, 0]
    assert g["left"].iloc[0] < 3.0 < g["right"].iloc[-1]


def test_score_histograms_robust_range_vs_numpy(demo):
    """Default range: [min, max], but a side whose extreme lies further beyond the 0.5% /
    99.5% quantile than twice the distance between them ends at the quantile + 5% of their
    distance; scores beyond are counted in the end bins and reported as clipped."""
    bins = 9
    h = score_histograms(demo, bins=bins)
    y, codes = demo.labels(), demo.dataset_codes()
    total_clipped = 0
    for m in demo.models:
        s = demo.scores(m)
        q_lo, q_hi = np.quantile(s, 0.005, method="higher"), np.quantile(s, 0.995, method="lower")
        w = q_hi - q_lo
        lo = q_lo - 0.05 * w if q_lo - s.min() > 2 * w else s.min()
        hi = q_hi + 0.05 * w if s.max() - q_hi > 2 * w else s.max()
        hm = h[h["model"] == m]
        edges = np.append(hm["left"].to_numpy()[:bins], hm["right"].to_numpy()[bins - 1])
        np.testing.assert_allclose(edges, np.linspace(lo, hi, bins + 1), rtol=0, atol=1e-12 * max(1, abs(s).max()))
        for (d, label), g in hm.groupby(["dataset", "label"]):
            sel = y == label if d == "all" else (y == label) & (codes == demo.datasets.index(d))
            expected, _ = np.histogram(np.clip(s[sel], lo, hi), bins=edges)
            np.testing.assert_array_equal(g["count"].to_numpy(), expected)
            below, above = (s[sel] < lo).sum(), (s[sel] > hi).sum()
            assert g["clipped"].tolist() == [below] + [0] * (bins - 2) + [above], (m, d, label)
            assert g["count"].sum() == sel.sum()
        total_clipped += int(hm.loc[hm["dataset"] == "all", "clipped"].sum())
    assert total_clipped > 0  # the demo's MLP has far outliers
    clean = h[h["model"].isin(["knn", "random_forest", "naive_bayes"])]  # probabilities: nothing to cut
    assert (clean["clipped"] == 0).all()


def test_score_histograms_outlier_does_not_crush_the_rest():
    """One score 1000x beyond the others: with the full range every other score sits in
    one bin; the quantile range spreads them and reports the one clipped score."""
    rng = np.random.default_rng(0)
    n = 400
    y = np.tile([0, 1], n // 2)
    s = y + rng.normal(0, 0.5, n)
    s[7] = 1000.0
    bench = load_benchmark(pd.DataFrame({"dataset": "a", "label": y, "m": s}))
    full = score_histograms(bench, bins=20, clip_quantiles=None).query("dataset == 'all'")
    robust = score_histograms(bench, bins=20).query("dataset == 'all'")
    assert full.groupby("bin")["count"].sum().max() == n - 1  # all but the outlier in bin 0
    per_bin = robust.groupby("bin")["count"].sum()
    assert (per_bin > 0).sum() >= 15 and per_bin.max() < n / 4
    assert 1 <= robust["clipped"].sum() <= 3  # the outlier and at most the tail beyond the 99.5% quantile
    last = robust[(robust["label"] == y[7]) & (robust["bin"] == 19)]
    assert last["clipped"].iloc[0] == robust["clipped"].sum()
    assert robust["left"].min() == s.min()  # the low side has no outlier: not cut
    assert robust["right"].max() < 5


@pytest.mark.parametrize("bad", [(0.5, 0.5), (0.9, 0.1), (-0.1, 0.9), (0.1, 1.5), (0.1,), "ab", 3])
def test_score_histograms_invalid_clip_quantiles(demo, bad):
    with pytest.raises(ValueError, match="`clip_quantiles`"):
        score_histograms(demo, clip_quantiles=bad)


@pytest.mark.parametrize("bins", [0, -1, 2.5, True])
def test_score_histograms_invalid_bins(demo, bins):
    with pytest.raises(ValueError, match="`bins`"):
        score_histograms(demo, bins=bins)


def test_score_histograms_unknown_model(demo):
    with pytest.raises(ValueError, match="`model`"):
        score_histograms(demo, models=["nope"])


# -- errors -----------------------------------------------------------------------------


def test_several_protocol_method_combinations_are_refused(generated_grid):
    for fn in (rank_table, rank_changes, kendall_tau):
        with pytest.raises(ValueError, match="protocol x method"):
            fn(generated_grid)
    one = generated_grid[(generated_grid["protocol"] == "outdata") & (generated_grid["method"] == "stump")]
    assert len(rank_table(one)) == (4 + 1) * 3


@pytest.mark.parametrize("fn", [rank_table, rank_changes, kendall_tau])
def test_unknown_score_is_named(fn):
    with pytest.raises(ValueError, match="`score`"):
        fn(hand_results(), score="precision")


def test_unknown_score_is_named_for_grid_views(demo, demo_results, generated_grid):
    for fn in (calibration_modes, best_of_methods):
        with pytest.raises(ValueError, match="`score`"):
            fn(generated_grid, score="roc")
    with pytest.raises(ValueError, match="`score`"):
        score_variance(demo, demo_results, score="roc")


def test_bad_inputs():
    with pytest.raises(ValueError, match="`results`"):
        rank_table(hand_results().to_dict("records"))
    with pytest.raises(ValueError, match="`results`"):
        rank_table(hand_results().drop(columns="auc"))
    with pytest.raises(ValueError, match="`grid`"):
        calibration_modes(hand_results())
    with pytest.raises(ValueError, match="`grid`"):
        best_of_methods(hand_results())
    with pytest.raises(ValueError, match="`bench`"):
        score_variance(hand_results())


def test_all_exported():
    for name in (
        "rank_table",
        "rank_changes",
        "kendall_tau",
        "calibration_modes",
        "best_of_methods",
        "score_variance",
        "score_histograms",
    ):
        assert name in beyondauc.__all__ and callable(getattr(beyondauc, name))


# -- ranks are integers -----------------------------------------------------------------


def test_rank_columns_are_nullable_integers_everywhere():
    """Every rank and rank change is Int64 (prints 2, not 2.0); a NaN score's rank is <NA>."""
    res = hand_results()
    grid = pd.concat([res.assign(protocol="xdomain", method=m) for m in ("logistic", "stump")], ignore_index=True)
    grid.loc[grid["method"] == "stump", "accuracy"] = grid.loc[grid["method"] == "stump", "accuracy"] * 0.9
    frames = {
        "rank_table": (rank_table(res, score="accuracy"), ["rank"]),
        "rank_changes": (rank_changes(res, score="accuracy"), ["auc_rank", "rank", "change"]),
        "calibration_modes": (calibration_modes(grid), ["rank"]),
        "best_of_methods": (best_of_methods(grid, score="accuracy"), ["rank"]),
    }
    for name, (frame, columns) in frames.items():
        for c in columns:
            assert str(frame[c].dtype) == "Int64", (name, c, frame[c].dtype)
        text = frame[columns].to_string()
        assert not re.search(r"\d\.\d", text) and re.search(r"\b1\b", text), (name, text)
    t = frames["rank_table"][0]
    nan_value = t["value"].isna()
    assert nan_value.any() and t.loc[nan_value, "rank"].isna().all()
    assert (t.loc[~nan_value, "rank"] >= 1).all()
    ch = frames["rank_changes"][0]
    ok = ch["rank"].notna()
    assert (ch.loc[ok, "change"] == ch.loc[ok, "auc_rank"] - ch.loc[ok, "rank"]).all()


def test_score_variance_groups_with_a_missing_rank(demo, demo_results):
    res = demo_results.copy()
    res.loc[res["model"] == "mlp", "accuracy"] = np.nan  # no mean accuracy: no rank, no change
    v = score_variance(demo, res).set_index("model")
    assert str(v["change"].dtype) == "Int64" and str(v["rank"].dtype) == "Int64"
    assert pd.isna(v.loc["mlp", "rank"]) and pd.isna(v.loc["mlp", "change"]) and v.loc["mlp", "group"] == "same"
    others = v.drop(index="mlp")
    expected = np.where(others["change"] > 0, "better", np.where(others["change"] < 0, "worse", "same"))
    assert list(others["group"]) == list(expected)
