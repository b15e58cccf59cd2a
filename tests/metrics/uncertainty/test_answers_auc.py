"""ΔAUC on answers: the paired bootstrap resamples the same items for both models, and each replicate's AUC is
scikit-learn's on the rows its counts repeat."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from beyondauc.metrics.uncertainty.answers_auc import paired_auc_replicates
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, dataset_seed
from beyondauc.metrics.uncertainty.clusters import cluster_counts


def _frame(epochs=None, n=80, seed=0):
    rng = np.random.default_rng(seed)
    parts = []
    for d in ("qa", "nli"):
        p = rng.uniform(0.2, 0.9, n)
        for m, noise in (("sharp", 0.1), ("blunt", 0.4)):
            for e in range(epochs or 1):
                conf = np.clip(p + rng.normal(0, noise, n), 0, 1)
                rows = pd.DataFrame(
                    {
                        "dataset": d,
                        "id": np.arange(n),
                        "model": m,
                        "confidence": conf,
                        "correct": (rng.uniform(size=n) < p).astype(int),
                    }
                )
                parts.append(rows.assign(epoch=e) if epochs else rows)
    return pd.concat(parts, ignore_index=True)


def _reference(bench, model, d, counts):
    y, s = bench.labels(d, model=model), bench.scores(model, d)
    return [roc_auc_score(np.repeat(y, w), np.repeat(s, w)) for w in counts]


def test_replicates_are_sklearn_aucs_of_the_same_resampled_rows_for_both_models():
    bench = ba.load_benchmark(_frame())
    reps = paired_auc_replicates(bench, n_bootstrap=12, random_state=3)
    for i, d in enumerate(bench.datasets):
        counts = bootstrap_counts(np.zeros(80, dtype=np.int64), 12, random_state=dataset_seed(3, i))
        for m in bench.models:  # the same counts for both models: paired
            assert np.allclose(reps[m][:, i], _reference(bench, m, d, counts), atol=1e-12)


def test_repeated_samples_are_resampled_by_item():
    bench = ba.load_benchmark(_frame(epochs=3))
    reps = paired_auc_replicates(bench, n_bootstrap=8, random_state=1)
    i, d = 1, bench.datasets[1]
    items = np.unique(bench.items()[bench.rows_of(d)], return_inverse=True)[1]
    counts = cluster_counts(items, np.zeros(len(items), dtype=np.int64), 8, random_state=dataset_seed(1, i))
    assert np.allclose(reps["blunt"][:, i], _reference(bench, "blunt", d, counts), atol=1e-12)


def test_the_comparison_reads_the_paired_bootstrap_for_answers():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(_frame(), n_bootstrap=50, noise_repeats=2, n_jobs=1, baseline="sharp")
    auc = ev.table("comparison").query("value == 'auc' and model == 'blunt'").set_index("dataset")
    assert (auc["test"] == "paired bootstrap").all()
    assert (auc["low"] <= auc["difference"]).all() and (auc["difference"] <= auc["high"]).all()
    grid = ev.table("grid")
    head = grid[(grid["protocol"] == ev.parameters["protocol"]) & (grid["method"] == ev.parameters["method"])]
    for d in ("qa", "nli"):
        a = head.set_index(["dataset", "model"])["auc"]
        assert auc.loc[d, "difference"] == a[(d, "blunt")] - a[(d, "sharp")]
