"""Graded correctness (a quality in [0, 1]): read, thresholded where a yes/no answer is needed, and the
risk-coverage family (AURC, E-AURC, AUGRC, the risk-controlled threshold) on the loss 1 - quality.

References are brute-force loops over the definitions on small random inputs.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.metrics.selective.benchmark_confidence import ConfidenceSource
from beyondauc.metrics.selective.benchmark_intervals import DiscaReading, benchmark_replicates
from beyondauc.metrics.selective.curves import loss_points


def _data(seed, n, *, ties):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(size=n)
    if ties:
        conf = np.round(conf * 6) / 6
    quality = np.clip(conf + rng.normal(0, 0.3, n), 0, 1)
    quality[rng.uniform(size=n) < 0.2] = 1.0
    return conf, quality


def _groups(conf):
    """Brute force: each example's tie group end when ranked by confidence, descending (answered count there)."""
    return np.array([np.sum(conf >= c) for c in conf])


def _brute_aurc(conf, quality):
    loss = 1 - quality
    n = len(conf)
    return sum(sum(loss[conf >= c]) / np.sum(conf >= c) for c in conf) / n


def _brute_augrc(conf, quality):
    loss = 1 - quality
    n = len(conf)
    return sum(sum(loss[conf >= c]) / n for c in conf) / n


def _brute_best_aurc(quality):
    losses = sorted(1 - quality)
    n = len(losses)
    return sum(sum(losses[:k]) / k for k in range(1, n + 1)) / n


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_aurc_family_on_graded_loss_equals_the_brute_force_definitions(seed, ties):
    conf, quality = _data(seed, 40, ties=ties)
    assert ba.aurc(conf, quality) == pytest.approx(_brute_aurc(conf, quality), abs=1e-12)
    assert ba.augrc(conf, quality) == pytest.approx(_brute_augrc(conf, quality), abs=1e-12)
    assert ba.e_aurc(conf, quality) == pytest.approx(_brute_aurc(conf, quality) - _brute_best_aurc(quality), abs=1e-12)
    r = np.mean(1 - quality)
    assert ba.e_aurc(conf, quality, optimum="analytic") == pytest.approx(
        _brute_aurc(conf, quality) - (r + (1 - r) * np.log(1 - r)), abs=1e-12
    )


def test_graded_e_aurc_of_0_1_qualities_is_the_binary_one():
    conf, quality = _data(7, 60, ties=True)
    right = quality > 0.5
    for interpolation in ("step", "linear"):
        graded = ba.metrics.selective.risk_coverage.graded_excess(
            ba.coverage_accuracy_curve(conf, right.astype(float)), right.astype(float), "exact", interpolation
        )
        assert graded == pytest.approx(ba.e_aurc(conf, right, interpolation=interpolation), abs=1e-12)


def test_loss_points_equal_brute_force_and_feed_the_risk_controlled_threshold():
    conf, quality = _data(3, 50, ties=True)
    c, answered, loss = loss_points(conf, quality)
    assert c.tolist() == sorted(set(conf.tolist()), reverse=True)
    for ci, ni, li in zip(c, answered, loss):
        assert ni == np.sum(conf >= ci) and li == pytest.approx(np.sum(1 - quality[conf >= ci]), abs=1e-12)
    rc = ba.risk_controlled_threshold(quality, conf, risk=0.3, delta=0.1)
    if rc.certified:  # the certified threshold's risk is its answers' mean loss
        assert rc.risk == pytest.approx(np.mean(1 - quality[conf >= rc.threshold]), abs=1e-12)


def test_quality_outside_the_unit_interval_is_refused():
    with pytest.raises(
        ValueError,
        match=r"`correct` must be boolean \(True/False or 0/1\) or a quality in \[0, 1\], "
        r"got 1.5 at position 1",
    ):
        ba.aurc([0.9, 0.8], [0.5, 1.5])


def _graded_frame(seed=0, n=80):
    rng = np.random.default_rng(seed)
    rows = []
    for d in ("qa", "nli"):
        for m, skill in (("good", 0.4), ("weak", 0.1)):
            conf = rng.uniform(size=n)
            quality = np.clip(skill + conf * 0.6 + rng.normal(0, 0.2, n), 0, 1)
            rows.append(
                pd.DataFrame({"dataset": d, "id": np.arange(n), "model": m, "confidence": conf, "correct": quality})
            )
    return pd.concat(rows, ignore_index=True)


def test_loader_reads_graded_correct_and_thresholds_it_for_labels(tmp_path):
    frame = _graded_frame()
    frame.to_csv(tmp_path / "graded.csv", index=False)
    bench = ba.load_benchmark(tmp_path / "graded.csv")
    q = frame[frame.model == "good"]["correct"].to_numpy()
    assert bench.graded and np.allclose(bench.quality(model="good"), q, atol=1e-12)
    assert bench.labels(model="good").tolist() == (q >= 0.5).astype(int).tolist()
    assert bench.with_correct_threshold(0.8).labels(model="good").tolist() == (q >= 0.8).astype(int).tolist()
    binary = ba.load_benchmark(frame.assign(correct=(frame["correct"] > 0.5).astype(int)))
    assert not binary.graded and binary.correct.dtype == np.int8
    bad = frame.assign(correct=frame["correct"].where(frame.index != 5, 1.2))
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(
        ValueError,
        match=r"column 'correct' must say whether the answer is right \(1/0, true/false\), "
        r"got 1.2 at file '.*bad\.csv', line 7 \(or how good it is",
    ):
        ba.load_benchmark(tmp_path / "bad.csv")


def test_evaluation_uses_quality_for_aurc_and_the_threshold_elsewhere():
    frame = _graded_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(frame, n_bootstrap=40, noise_repeats=2, n_jobs=1, correct_threshold=0.6)
    assert ev.data["graded"] and ev.parameters["correct_threshold"] == 0.6
    sel = ev.table("selective").set_index(["model", "dataset"])
    for (m, d), row in sel.iterrows():
        one = frame[(frame.model == m) & (frame.dataset == d)]
        c, q = one["confidence"].to_numpy(), one["correct"].to_numpy()
        assert row["aurc"] == pytest.approx(_brute_aurc(c, q), abs=1e-12)
        assert row["e_aurc"] == pytest.approx(_brute_aurc(c, q) - _brute_best_aurc(q), abs=1e-12)
        assert row["augrc"] == pytest.approx(_brute_augrc(c, q), abs=1e-12)
        assert row["accuracy"] == pytest.approx(np.mean(q >= 0.6), abs=1e-12)
        assert row["aurc_low"] <= row["aurc"] <= row["aurc_high"]


def test_graded_bootstrap_of_0_1_qualities_equals_the_binary_bootstrap():
    """The (confidence, quality) pair grid gives, on 0/1 qualities, the replicates of the right/wrong grid."""
    frame = _graded_frame().assign(correct=lambda f: (f["correct"] >= 0.5).astype(int))
    binary = ba.load_benchmark(frame)
    graded = dataclasses.replace(binary, correct=binary.correct.astype(np.float64))
    assert graded.graded and not binary.graded
    opts = dict(
        source=ConfidenceSource(
            protocol="none", method="logistic", class_weight=None, random_state=0, ood_dataset="nli"
        ),
        reading=DiscaReading(tolerance=0.9, weights=(1 / 3, 1 / 3, 1 / 3), resolution=0.01),
        n_bootstrap=30,
    )
    a = benchmark_replicates(binary, "good", "qa", **opts)
    b = benchmark_replicates(graded, "good", "qa", **opts)
    pd.testing.assert_frame_equal(a, b, atol=1e-12, rtol=0)
