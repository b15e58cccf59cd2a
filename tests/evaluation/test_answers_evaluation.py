"""An answers benchmark through the evaluation (issue 23; the design page, input data).

Per model and example a confidence and whether the answer is right: the AUC is the AUROC of
confidence for telling right from wrong, selective answering takes the confidence as given
(``selective_protocol="auto"`` -> ``"none"``), and models stay paired in the bootstrap.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from helpers.benchmarks import answers_benchmark

FAST = dict(n_bootstrap=40, noise_repeats=2, n_repeats=5)


@pytest.fixture(scope="module")
def evaluation():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return answers_benchmark(copies=("sharp_copy",)), ba.evaluate(
            answers_benchmark(copies=("sharp_copy",)), ood_dataset="d3", **FAST
        )


def test_selective_disca_is_disca_of_the_raw_answers(evaluation):
    bench, ev = evaluation
    sel = ev.table("selective").set_index(["model", "dataset"])
    assert ev.parameters["selective_protocol"] == "none"
    for m in bench.models:
        for d in ("d1", "d2"):
            ref = ba.disca(bench.scores(m, d), bench.labels(d, model=m) == 1)
            assert sel.loc[(m, d), "disca"] == pytest.approx(ref.score, abs=1e-12)
            ood = ba.disca(bench.scores(m, "d3"), bench.labels("d3", model=m) == 1)
            assert sel.loc[(m, d), "disca_ood"] == pytest.approx(ood.score, abs=1e-12)


def test_auc_is_the_auroc_of_confidence_for_right_vs_wrong(evaluation):
    bench, ev = evaluation
    grid = ev.table("grid").query("protocol == 'xdomain' and method == 'logistic'").set_index(["model", "dataset"])
    for m in bench.models:
        for d in bench.datasets:
            ref = roc_auc_score(bench.labels(d, model=m), bench.scores(m, d))
            assert grid.loc[(m, d), "auc"] == pytest.approx(ref, abs=1e-12)


def test_models_are_paired_in_the_bootstrap(evaluation, monkeypatch):
    """Every model's grid bootstrap resamples the same examples, although their classes differ.

    The strata of an answers benchmark are its datasets alone (stratifying by each model's own
    right/wrong would resample different examples per model and unpair the ranks); an exact copy of
    a model then never differs from it in any replicate.
    """
    from beyondauc.metrics.calibration import (
        grid_replicates,  # the evaluation's bootstrap tasks draw there, grid by grid
    )

    bench, ev = evaluation
    seen = []
    draw = grid_replicates.grid_count_chunks

    def spy(strata, *args, **kwargs):
        seen.append(np.asarray(strata).copy())
        return draw(strata, *args, **kwargs)

    monkeypatch.setattr(grid_replicates, "grid_count_chunks", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ba.evaluate(
            bench.subset(models=["sharp", "coin"]), n_bootstrap=5, noise_repeats=2, n_repeats=2, n_jobs=1
        )  # the spy sees this process only
    assert len(seen) >= 2 and not np.array_equal(bench.labels(model="sharp"), bench.labels(model="coin"))
    assert all(np.array_equal(seen[0], s) for s in seen)
    assert np.array_equal(seen[0], bench.dataset_codes())
    pw = ev.table("pairwise").query("model == 'sharp' and other == 'sharp_copy'")
    assert len(pw) == 4 and (pw[["difference", "low", "high"]] == 0).all().all() and (pw["p_tie"] == 1).all()


def test_each_model_is_its_own_single_model_evaluation(evaluation):
    """A model's numbers do not depend on the other models of the benchmark."""
    bench, ev = evaluation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = ba.evaluate(bench.subset(models=["coin"]), ood_dataset="d3", **FAST)
    for name, _keys in (("selective", ["dataset"]), ("diagnostics", ["dataset"]), ("calibration_error", None)):
        a = ev.table(name).query("model == 'coin'").reset_index(drop=True)
        b = alone.table(name).reset_index(drop=True)
        ranks = [c for c in a.columns if c.endswith("_rank")]  # ranks are among the models, by definition
        pd.testing.assert_frame_equal(a.drop(columns=ranks), b.drop(columns=ranks), check_exact=True)
    g = ev.table("grid").query("model == 'coin'").reset_index(drop=True)
    pd.testing.assert_frame_equal(
        g[["protocol", "method", "dataset", "auc", "accuracy", "kappa"]],
        alone.table("grid")[["protocol", "method", "dataset", "auc", "accuracy", "kappa"]],
        check_exact=True,
    )


def test_recalibrated_confidence_stays_available():
    bench = answers_benchmark(models=("sharp", "coin"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ba.evaluate(bench, selective_protocol="indata", n_bootstrap=0, noise_repeats=2, n_repeats=5)
    r = ba.selective_answering(bench.model_view("sharp"), "sharp", "d1", protocol="indata")
    sel = ev.table("selective").set_index(["model", "dataset"])
    assert sel.loc[("sharp", "d1"), "disca"] == pytest.approx(r.score, abs=1e-12)
    assert ev.parameters["selective_protocol"] == "indata"


def test_answers_need_a_model_for_their_labels():
    bench = answers_benchmark()
    with pytest.raises(ValueError, match="label per model"):
        bench.labels()
    assert np.array_equal(bench.model_view("coin").labels(), bench.labels(model="coin"))


def test_scores_protocol_none_reads_probabilities_as_given():
    bench = ba.load_demo()
    r = ba.selective_answering(bench, "naive_bayes", "wine", protocol="none")
    p, y = bench.scores("naive_bayes", "wine"), bench.labels("wine")
    ref = ba.disca(np.maximum(p, 1 - p), (p > 0.5) == (y == 1))
    assert r.score == pytest.approx(ref.score, abs=1e-12)
    with pytest.raises(ValueError, match=r"model 'svm'.*outside \[0, 1\].*'indata'"):
        ba.selective_answering(bench, "svm", "wine", protocol="none")


def test_the_report_says_what_answers_mean(evaluation):
    _, ev = evaluation
    text = ba.scope_markdown(ev)
    assert text.startswith("Answers:") and "right answers from wrong ones" in text
    assert "Paired DeLong test between models**: left out" in text
    table = ba.analyses_table(ev).set_index("analysis")
    assert table.loc["DiSCA out of distribution, NiDMA", "status"] == "shown"
    assert table.loc["DiDMA", "status"] == "left out"


def test_benchmark_functions_read_each_models_view():
    """The benchmark-level functions take an answers benchmark: each model on its own labels."""
    bench = answers_benchmark(models=("sharp", "coin"))
    views = [bench.model_view(m) for m in bench.models]
    both = ba.auc_table(bench)
    alone = pd.concat([ba.auc_table(v) for v in views], ignore_index=True)
    pd.testing.assert_frame_equal(
        both.sort_values(["model", "dataset"]).reset_index(drop=True),
        alone.sort_values(["model", "dataset"]).reset_index(drop=True),
    )
    for m in bench.models:
        for d in bench.datasets:
            row = both.query("model == @m and dataset == @d")
            assert row["auc"].item() == pytest.approx(roc_auc_score(bench.labels(d, model=m), bench.scores(m, d)))
    grid = ba.expected_accuracy_grid(bench, protocols=["indata"], methods=["stump"], n_repeats=3)
    assert list(grid["model"]) == ["sharp", "coin"] * 3  # the order one pass over a scores benchmark gives
    d = ba.cohort_diagnostics(bench, "coin", "d2", n_repeats=2)
    ref = ba.cohort_diagnostics(bench.model_view("coin"), "coin", "d2", n_repeats=2)
    assert d.drift.score == ref.drift.score


def test_calibration_errors_and_grid_bootstrap_read_each_models_view():
    bench = answers_benchmark(models=("sharp", "coin"))
    ce = ba.calibration_error_table(bench, protocols=["indata"], n_repeats=3)
    for m in bench.models:
        alone = ba.calibration_error_table(bench.model_view(m), protocols=["indata"], n_repeats=3)
        pd.testing.assert_frame_equal(ce.ece.query("model == @m").reset_index(drop=True), alone.ece)
    bs = ba.bootstrap_grid(bench, protocols=["xdomain"], methods=["logistic"], n_bootstrap=8)
    alone = ba.bootstrap_grid(bench.model_view("coin"), protocols=["xdomain"], methods=["logistic"], n_bootstrap=8)
    rows = np.flatnonzero((bs.grid["model"] == "coin").to_numpy())
    assert np.array_equal(bs.replicates[:, rows], alone.replicates, equal_nan=True)
