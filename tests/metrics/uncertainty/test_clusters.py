"""Repeated samples of one item: the cluster bootstrap (items resampled whole) keeps its intervals' coverage.

The simulation: items of varying difficulty, each answered in 5 epochs whose correctness is correlated
through the item (the same chance of being right in every epoch). The cluster bootstrap's 95% intervals of the
accuracy cover the population accuracy within 2 points of 95%; a bootstrap of rows, which takes 5 correlated
samples for 5 items, covers measurably less.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, percentile_interval
from beyondauc.metrics.uncertainty.clusters import cluster_counts, clusters_of, item_strata
from beyondauc.metrics.uncertainty.replicates import GridSample, ReplicatePlan, bootstrap_replicates
from helpers.epochs import epochs_frame

EPOCHS, ITEMS, B = 5, 100, 1000
A, BETA = 1.2, 0.8  # the items' chance of a right answer ~ Beta(A, BETA): population accuracy A / (A + BETA)


def _coverage(clustered, simulations, chunk, seed):
    """Share of simulated runs whose 95% percentile interval of the accuracy holds the population accuracy.

    ``chunk`` runs at a time, each its own stratum: one draw of counts serves them all (no loop over replicates).
    """
    rng = np.random.default_rng(seed)
    covered = 0
    rows = ITEMS * EPOCHS
    for start in range(0, simulations, chunk):  # a loop over blocks of simulated runs
        p = rng.beta(A, BETA, size=(chunk, ITEMS))
        y = (rng.uniform(size=(chunk, ITEMS, EPOCHS)) < p[..., None]).reshape(chunk, rows)
        run = np.repeat(np.arange(chunk), rows)
        if clustered:
            w = cluster_counts(np.repeat(np.arange(chunk * ITEMS), EPOCHS), run, B, random_state=start)
        else:
            w = bootstrap_counts(run, B, random_state=start)
        accuracy = (w.reshape(B, chunk, rows) * y).sum(axis=2) / rows
        low, high = percentile_interval(accuracy, 0.95, axis=0)
        covered += int(((low <= A / (A + BETA)) & (high >= A / (A + BETA))).sum())
    return covered / simulations


def test_cluster_bootstrap_keeps_coverage_where_the_row_bootstrap_undercovers():
    cluster = _coverage(True, 1000, 20, seed=1)
    rows = _coverage(False, 200, 20, seed=2)
    assert abs(cluster - 0.95) <= 0.02, cluster
    assert rows < 0.95 - 0.08, rows  # too narrow: 5 correlated samples counted as 5 items


def test_the_engine_draws_the_cluster_counts():
    """bootstrap_replicates(clusters=...) reads exactly the counts of cluster_counts."""
    rng = np.random.default_rng(5)
    items = np.repeat(np.arange(30), 3)
    y = (rng.uniform(size=90) < 0.6).astype(np.int8)
    strata = np.repeat(rng.integers(2, size=30), 3)
    reps = bootstrap_replicates(
        GridSample(strata, np.zeros(90, dtype=np.int64), y, 1, clusters=items),
        lambda pos, neg: pos[:, 0] / (pos[:, 0] + neg[:, 0]),
        ReplicatePlan(50, random_state=3),
    )
    w = cluster_counts(items, strata, 50, random_state=3)
    assert np.allclose(reps, (w @ y) / w.sum(axis=1), rtol=0, atol=1e-12)


def test_cluster_counts_draw_items_whole_with_the_item_draws_of_the_bootstrap():
    items = np.array([0, 0, 0, 1, 2, 2, 3, 3, 4])
    strata = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1])
    w = cluster_counts(items, strata, 30, random_state=4)
    per_item = bootstrap_counts(np.array([0, 0, 0, 1, 1]), 30, random_state=4)  # the same draws, over items
    assert (w == per_item[:, items]).all()
    assert (np.bincount(items[:6], minlength=3) @ per_item[:, :3].T == w[:, :6].sum(axis=1)).all()
    with pytest.raises(ValueError, match="the repeated samples of one item fall in different strata"):
        item_strata(items, np.arange(9))


def test_clusters_of_and_a_benchmark_with_epochs(tmp_path):
    assert clusters_of(["a", "a", "b", "a"], [1, 2, 1, 1]).tolist() == [0, 1, 2, 0]
    rng = np.random.default_rng(0)
    rows = [
        {"dataset": d, "id": i, "epoch": e, "model": m, "confidence": rng.uniform(), "correct": int(rng.integers(2))}
        for d in ("qa", "nli")
        for i in range(6)
        for e in (1, 2, 3)
        for m in ("a", "b")
    ]
    frame = pd.DataFrame(rows)
    frame.to_csv(tmp_path / "epochs.csv", index=False)
    bench = ba.load_benchmark(tmp_path / "epochs.csv")
    assert bench.repeated and len(bench) == 36
    assert bench.item_counts().tolist() == [6, 6]
    summary = bench.summary().set_index("dataset")
    assert summary.loc["qa", "n_items"] == 6 and summary.loc["qa", "n"] == 18
    items = bench.items()
    ids = bench.frame["id"].to_numpy()
    codes = bench.dataset_codes()
    assert len(np.unique(items)) == 12 and all(
        len(set(zip(codes[items == k], ids[items == k]))) == 1 for k in range(12)
    )
    dup = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"two rows for model 'b' on dataset 'qa', id 0, epoch 2: at DataFrame "):
        ba.load_benchmark(dup)
    with pytest.raises(ValueError, match=r"told apart by a column 'epoch' or 'sample'"):
        ba.load_benchmark(frame.drop(columns="epoch"))
    with pytest.raises(ValueError, match=r"column 'epoch' numbers repeated samples of an item, but there is no 'id'"):
        ba.load_benchmark(frame.drop(columns="id"))


def test_an_evaluation_of_epochs_counts_items_and_resamples_them():
    frame = epochs_frame()
    with pytest.warns(UserWarning, match="repeated samples of items"):
        ev = ba.evaluate(frame, n_bootstrap=60, noise_repeats=2, n_jobs=1)
    assert ev.data["n_items"] == 120 and ev.data["n_rows"] == 600
    assert ev.table("datasets")["n_items"].tolist() == [60, 60]
    flat = frame.assign(id=frame["id"].astype(str) + "-" + frame["epoch"].astype(str)).drop(columns="epoch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = ba.evaluate(flat, n_bootstrap=60, noise_repeats=2, n_jobs=1)
    assert "n_items" not in rows.data
    a, b = ev.table("selective"), rows.table("selective")
    assert np.allclose(a["aurc"], b["aurc"], atol=1e-12)  # the same numbers ...
    width = (a["aurc_high"] - a["aurc_low"]).to_numpy(), (b["aurc_high"] - b["aurc_low"]).to_numpy()
    assert (width[0] != width[1]).all()  # ... with intervals from other draws: items, not rows
