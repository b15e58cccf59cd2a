"""Obuchowski's clustered DeLong variance for repeated samples of items: equal to its definition computed by brute
force (every pair of a positive and a negative row), DeLong's exactly with one row per item, and, in a seeded
simulation of items answered in 5 correlated epochs, an interval that keeps its coverage where DeLong's over the
rows undercovers. The evaluation's AUC intervals and the baseline comparison's ΔAUC use it when rows repeat items."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from beyondauc.evaluation.comparison import CLUSTERED_DELONG
from beyondauc.metrics.uncertainty.clustered_delong import (
    clustered_auc_variance,
    clustered_difference_variance,
    obuchowski_variance,
)
from beyondauc.metrics.uncertainty.paired import delong_differences
from helpers.epochs import epochs_frame


def _brute(y, s, clusters):
    """(AUC, variance) from Obuchowski's formulas, every pair of rows spelled out (O(n^2))."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    psi = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
    M, N = len(pos), len(neg)
    auc = psi.mean()
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    items = np.unique(clusters)
    a = np.array([v10[clusters[pos] == i].sum() - (clusters[pos] == i).sum() * auc for i in items])
    b = np.array([v01[clusters[neg] == i].sum() - (clusters[neg] == i).sum() * auc for i in items])
    i10 = len(np.unique(clusters[pos]))
    i01 = len(np.unique(clusters[neg]))
    i_all = len(items)
    s10 = i10 / ((i10 - 1) * M) * (a**2).sum()
    s01 = i01 / ((i01 - 1) * N) * (b**2).sum()
    s11 = i_all / (i_all - 1) * (a * b).sum()
    return auc, s10 / M + s01 / N + 2 * s11 / (M * N), v10, v01


def _data(seed, items=40, ties=False):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=items)  # 1 to 5 samples per item
    clusters = np.repeat(np.arange(items), sizes)
    u = rng.normal(size=items)[clusters]
    y = (u + rng.normal(0, 0.8, len(clusters)) > 0).astype(int)
    s = u + rng.normal(0, 0.7, len(clusters))
    return y, (np.round(s * 2) / 2 if ties else s), clusters


@pytest.mark.parametrize("ties", [False, True])
def test_clustered_variance_is_obuchowskis_formula_by_brute_force(ties):
    for seed in range(5):  # a loop over five data sets
        y, s, clusters = _data(seed, ties=ties)
        auc, var = clustered_auc_variance(y, s, clusters)
        ref_auc, ref_var, _, _ = _brute(y, s, clusters)
        assert auc == pytest.approx(ref_auc, abs=1e-12) and var == pytest.approx(ref_var, abs=1e-12)


def test_the_paired_difference_is_the_formula_on_the_differences_of_the_components():
    y, s, clusters = _data(11, ties=True)
    t = s + np.random.default_rng(12).normal(0, 1, len(s))
    auc_a, auc_b, var = clustered_difference_variance(y, s, t, clusters)
    ra, _, v10a, v01a = _brute(y, s, clusters)
    rb, _, v10b, v01b = _brute(y, t, clusters)
    comp = np.empty(len(y))
    comp[y == 1], comp[y == 0] = v10a - v10b, v01a - v01b
    assert auc_a - auc_b == pytest.approx(ra - rb, abs=1e-12)
    assert var == pytest.approx(obuchowski_variance(comp, y, clusters, ra - rb), abs=1e-12)
    # the formula on differences by brute force: S10, S01, S11 of the components' differences
    items = np.unique(clusters)
    a = np.array(
        [comp[(clusters == i) & (y == 1)].sum() - ((clusters == i) & (y == 1)).sum() * (ra - rb) for i in items]
    )
    b = np.array(
        [comp[(clusters == i) & (y == 0)].sum() - ((clusters == i) & (y == 0)).sum() * (ra - rb) for i in items]
    )
    M, N = (y == 1).sum(), (y == 0).sum()
    i10, i01, i_all = len(np.unique(clusters[y == 1])), len(np.unique(clusters[y == 0])), len(items)
    ref = (
        i10 / ((i10 - 1) * M) * (a**2).sum() / M
        + i01 / ((i01 - 1) * N) * (b**2).sum() / N
        + 2 * i_all / (i_all - 1) * (a * b).sum() / (M * N)
    )
    assert var == pytest.approx(ref, abs=1e-12)


def test_one_row_per_item_is_delongs_variance():
    y, s, _ = _data(3)
    ci = ba.auc_ci(y, s)
    auc, var = clustered_auc_variance(y, s, np.arange(len(y)))
    assert auc == pytest.approx(ci.estimate, abs=1e-12) and np.sqrt(var) == pytest.approx(ci.standard_error, abs=1e-12)
    t = s + np.random.default_rng(4).normal(0, 1, len(s))
    row = delong_differences(y, s, t, np.zeros(len(y)), clusters=np.arange(len(y))).iloc[0]
    plain = delong_differences(y, s, t, np.zeros(len(y))).iloc[0]
    assert row["standard_error"] == pytest.approx(plain["standard_error"], abs=1e-12)
    assert row["pvalue"] == pytest.approx(plain["pvalue"], abs=1e-12)


EPOCHS, ITEMS = 5, 60


def _epochs(rng, items):
    u = np.repeat(rng.normal(size=items), EPOCHS)  # the item's difficulty, shared by its 5 epochs
    y = (u + rng.normal(0, 0.5, len(u)) > 0).astype(int)
    return y, u + rng.normal(0, 0.5, len(u))


def test_clustered_interval_keeps_coverage_where_rows_undercover():
    rng = np.random.default_rng(0)
    y, s = _epochs(rng, 200_000)
    truth = roc_auc_score(y, s)  # the population AUC, from 10^6 rows
    z = 1.959963984540054
    hits = np.zeros(2)
    n_sim = 600
    clusters = np.repeat(np.arange(ITEMS), EPOCHS)
    for _ in range(n_sim):  # a loop over simulated runs, each O(n log n)
        y, s = _epochs(rng, ITEMS)
        auc, var = clustered_auc_variance(y, s, clusters)
        _, var_rows = clustered_auc_variance(y, s, np.arange(len(y)))
        hits += [abs(auc - truth) <= z * np.sqrt(var), abs(auc - truth) <= z * np.sqrt(var_rows)]
    clustered, rows = hits / n_sim
    assert abs(clustered - 0.95) <= 0.025, clustered
    assert rows < 0.95 - 0.08, rows  # five correlated samples counted as five items


def test_the_auc_intervals_of_repeated_samples_are_clustered():
    bench = ba.load_benchmark(epochs_frame(items=40, epochs=EPOCHS))
    t = ba.auc_intervals(bench).set_index(["model", "dataset"])
    frame = epochs_frame(items=40, epochs=EPOCHS)
    for (m, d), row in t.iterrows():  # a loop over four rows, as the reference
        rows = frame[(frame["model"] == m) & (frame["dataset"] == d)]
        auc, var = clustered_auc_variance(
            rows["correct"].to_numpy(), rows["confidence"].to_numpy(), rows["id"].to_numpy()
        )
        assert row["auc"] == pytest.approx(auc, abs=1e-12)
        assert row["auc_se"] == pytest.approx(np.sqrt(var), abs=1e-12)


def test_the_comparison_of_repeated_scores_uses_the_clustered_test():
    rng = np.random.default_rng(5)
    y, s = _epochs(rng, 80)
    frame = pd.DataFrame(
        {
            "dataset": "qa",
            "id": np.repeat(np.arange(80), EPOCHS),
            "epoch": np.tile(np.arange(EPOCHS), 80),
            "label": y,
            "a": s,
            "b": s + rng.normal(0, 1, len(s)),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(frame, n_bootstrap=0, noise_repeats=2, n_jobs=1, baseline="b")
    row = ev.table("comparison").query("model == 'a' and value == 'auc' and dataset == 'qa'").iloc[0]
    assert row["test"] == CLUSTERED_DELONG
    _, _, var = clustered_difference_variance(y, frame["a"], frame["b"], frame["id"])
    half = row["high"] - row["difference"]
    assert half == pytest.approx(1.959963984540054 * np.sqrt(var), rel=1e-9)
