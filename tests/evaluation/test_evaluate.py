"""Tests of the one evaluation every view reads: evaluate, Evaluation.save / load_evaluation, the summary.

The evaluation must hold exactly what the underlying functions give (it
recomputes nothing of its own), survive a save/load round trip table for
table, validate its parameters before any work, and its findings must state
the numbers of its own tables.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from scipy import stats

import beyondauc as ba
from beyondauc.evaluation.container import SCHEMA_VERSION, TABLES
from beyondauc.evaluation.parameters import check_evaluation_parameters as check_parameters

DATASETS = ["wine", "diabetes", "digits_even", "iris_versicolor"]
MODELS = ["svm", "naive_bayes", "mlp", "knn"]
PARAMS = dict(
    models=MODELS,
    datasets=DATASETS,
    protocol="outdomain",
    method="isotonic",
    n_repeats=5,
    random_state=3,
    tolerance=0.8,
    resolution=0.02,
    noise_repeats=3,
    n_bootstrap=30,
    p=1,
    ood_dataset="iris_virginica",
    computation_score=0.5,
)


@pytest.fixture(scope="module")
def ev():
    return ba.evaluate("demo", **PARAMS)


@pytest.fixture(scope="module")
def bench():
    return ba.load_demo().subset(models=MODELS, datasets=DATASETS)


def test_every_documented_table_is_there(ev):
    assert set(ev.tables) == set(TABLES)
    for name, table in ev.tables.items():
        assert isinstance(table, pd.DataFrame) and len(table), name


def test_round_trip_is_identical_table_for_table(ev, tmp_path):
    path = ev.save(tmp_path / "ev")
    back = ba.load_evaluation(path)
    assert set(back.tables) == set(ev.tables)
    for name in ev.tables:
        pdt.assert_frame_equal(back.tables[name], ev.tables[name], check_exact=True, obj=name)
    assert back.parameters == json.loads(json.dumps(ev.parameters))
    assert back.data == json.loads(json.dumps(ev.data))
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert {t["file"] for t in manifest["tables"].values()} == {f"{n}.parquet" for n in ev.tables}
    # a report folder holding the evaluation is read too
    assert set(ba.load_evaluation(tmp_path).tables) == set(ev.tables) if (tmp_path / "evaluation").exists() else True


def test_saved_tables_read_with_plain_pandas(ev, tmp_path):
    path = ev.save(tmp_path / "ev")
    board = pd.read_parquet(path / "leaderboard.parquet")
    assert list(board["model"]) == list(ev.table("leaderboard")["model"])


def test_load_evaluation_of_a_report_folder(ev, tmp_path):
    ev.save(tmp_path / "report" / "evaluation")
    assert set(ba.load_evaluation(tmp_path / "report").tables) == set(ev.tables)


def test_save_refuses_a_folder_that_is_not_an_evaluation(ev, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "slides.pptx").write_text("user data")
    with pytest.raises(FileExistsError, match="not a beyondauc evaluation"):
        ev.save(tmp_path / "mine")
    assert (tmp_path / "mine" / "slides.pptx").read_text() == "user data"


def test_load_evaluation_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="manifest.json missing"):
        ba.load_evaluation(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match="manifest.json: not valid JSON"):
        ba.load_evaluation(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"kind": "beyondauc-evaluation", "schema_version": 99}))
    with pytest.raises(ValueError, match="schema version 99"):
        ba.load_evaluation(tmp_path)


def test_the_grid_is_expected_accuracy_grid(ev, bench):
    grid = ba.expected_accuracy_grid(bench, n_repeats=5, random_state=3)
    got = ev.table("grid")[grid.columns]
    pdt.assert_frame_equal(got, grid)


def test_headline_intervals_are_the_bootstrap_of_that_setting(ev, bench):
    boot = ba.bootstrap_grid(
        bench, protocols=["outdomain"], methods=["isotonic"], n_bootstrap=30, n_repeats=5, random_state=3
    )
    head = ev.headline()
    pdt.assert_frame_equal(head[boot.grid.columns].reset_index(drop=True), boot.grid.reset_index(drop=True))
    other = ev.table("grid").query("protocol == 'xdomain'")
    assert other["accuracy_low"].isna().all()  # only the headline setting carries intervals


def test_diagnostics_and_selective_rows_are_the_functions(ev, bench):
    d = ba.cohort_diagnostics(bench, "mlp", "wine", n_repeats=3, p=1, random_state=3, n_bootstrap=30)
    row = ev.table("diagnostics").query("model == 'mlp' and dataset == 'wine'").iloc[0]
    for key, value in d.to_dict().items():
        assert row[key] == value or (pd.isna(row[key]) and pd.isna(value)), key
    full = ba.load_demo().subset(models=MODELS, datasets=[*DATASETS, "iris_virginica"])
    r = ba.selective_answering(
        full,
        "knn",
        "diabetes",
        ood_dataset="iris_virginica",
        tolerance=0.8,
        resolution=0.02,
        computation_score=0.5,
        random_state=3,
        n_bootstrap=30,
    )
    row = ev.table("selective").query("model == 'knn' and dataset == 'diabetes'").iloc[0]
    for key in ("disca", "disca_ood", "a", "b", "area", "nidma", "disca_low", "disca_high"):
        assert row[key] == r.to_dict()[key], key


def test_n_jobs_does_not_change_a_number():
    small = dict(models=["svm", "knn", "mlp"], datasets=["wine", "diabetes"], noise_repeats=2, n_bootstrap=10)
    a, b = ba.evaluate("demo", n_jobs=1, **small), ba.evaluate("demo", n_jobs=2, **small)
    for name in a.tables:
        pdt.assert_frame_equal(a.tables[name], b.tables[name], obj=name)


def test_leaderboard_reads_the_other_tables(ev):
    board = ev.table("leaderboard").set_index("model")
    head = ev.headline().groupby("model")[["auc", "accuracy", "kappa"]].mean()
    np.testing.assert_allclose(board.loc[head.index, ["auc", "accuracy", "kappa"]], head)
    ch = ev.table("rank_changes").query("dataset == 'mean' and score == 'accuracy'").set_index("model")
    assert (board["rank_change"] == ch.loc[board.index, "change"]).all()
    assert (board["p_change"] == ch.loc[board.index, "p_change"]).all()
    for column in ("sign_share", "p_value", "significant"):
        assert (board[column] == ch.loc[board.index, column]).all(), column
    assert (board["rank_change_low"] == ch.loc[board.index, "change_low"]).all()
    sel = ev.table("selective")  # DiSCA: over the datasets where the answers can be ranked (knn: not on one)
    disca = sel[sel["rankable"]].groupby("model")["disca"].mean()
    assert set(disca.index) == set(MODELS) and not sel.set_index("model").loc["knn", "rankable"].all()
    np.testing.assert_allclose(board.loc[disca.index, "disca"], disca)
    means = ev.table("mean_intervals").query("score == 'accuracy'").set_index("model")
    np.testing.assert_allclose(board.loc[means.index, "accuracy_low"], means["low"])


def _per_dataset_replicates(bench, model):
    """The drift and DiSCA replicates, jackknives and values of ``model`` on every dataset (as PARAMS)."""
    full = ba.load_demo().subset(models=MODELS, datasets=[*DATASETS, "iris_virginica"])
    diags = [ba.cohort_diagnostics(bench, model, d, n_repeats=3, p=1, random_state=3, n_bootstrap=30) for d in DATASETS]
    answers = [
        ba.selective_answering(
            full,
            model,
            d,
            ood_dataset="iris_virginica",
            tolerance=0.8,
            resolution=0.02,
            computation_score=0.5,
            random_state=3,
            n_bootstrap=30,
        )
        for d in DATASETS
    ]
    answers = [r for r in answers if r.rankable]  # as the mean DiSCA
    return {
        name: (
            np.array([r.replicates[name].to_numpy() for r in results]),
            np.array([r.jackknife[name].to_numpy() for r in results]),
            np.array([value(r) for r in results]),
        )
        for name, results, value in (("disca", answers, lambda r: r.score), ("drift", diags, lambda r: r.drift.score))
    }


def _bca_reference(replicates, jackknife, values, level=0.95):
    """BCa of the mean over datasets written out (Efron & Tibshirani 1993, 14.3): NaN where it misses the mean."""
    keep = ~np.isnan(values)
    mean, reps = values[keep].mean(), np.nanmean(replicates[keep], axis=0)
    reps = reps[~np.isnan(reps)]
    share = (reps < mean).mean() + 0.5 * (reps == mean).mean()
    if share in (0, 1):
        return np.array([np.nan, np.nan])
    u = np.concatenate([np.nanmean(j) - j[~np.isnan(j)] for j in jackknife[keep]])
    a = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
    z0, z = stats.norm.ppf(share), stats.norm.ppf([(1 - level) / 2, (1 + level) / 2])
    got = np.quantile(reps, stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    return got if got[0] <= mean <= got[1] else np.array([np.nan, np.nan])


def test_mean_disca_and_drift_intervals_come_from_the_per_dataset_replicates(ev, bench):
    """Replicate b of a mean over datasets is the mean of the datasets' replicates b; the interval is their BCa."""
    board = ev.table("leaderboard").set_index("model")
    columns = board.columns.tolist()
    for name in ("disca", "drift"):  # each interval right after its value
        assert columns[columns.index(name) + 1 : columns.index(name) + 3] == [f"{name}_low", f"{name}_high"]
    shown = 0
    for model in MODELS:
        reps = _per_dataset_replicates(bench, model)
        for name, (r, jack, values) in reps.items():
            assert r.shape == (len(DATASETS) - (model == "knn" and name == "disca"), 30)
            assert jack.shape == (len(r), 20)
            expected = _bca_reference(r, jack, values)
            got = board.loc[model, [f"{name}_low", f"{name}_high"]].to_numpy(dtype=float)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=f"{model} {name}")
            if np.isfinite(got).all():  # a shown interval contains its value
                shown += 1
                assert got[0] <= board.loc[model, name] <= got[1], (model, name)
        assert reps["drift"][0].mean() > board.loc[model, "drift"]  # the documented upward shift
    assert shown >= len(MODELS)


def test_mean_disca_and_drift_intervals_round_trip(ev, tmp_path):
    back = ba.load_evaluation(ev.save(tmp_path / "ev")).table("leaderboard")
    columns = ["model", "disca", "disca_low", "disca_high", "drift", "drift_low", "drift_high"]
    pdt.assert_frame_equal(back[columns], ev.table("leaderboard")[columns], check_exact=True)
    assert back[["disca", "drift"]].notna().all().all()


def test_no_bootstrap_no_mean_intervals():
    ev = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], noise_repeats=2, n_bootstrap=0)
    board = ev.table("leaderboard")
    assert board[["disca", "drift"]].notna().all().all()
    assert not [c for c in board.columns if c.endswith(("_low", "_high"))]
    sentence = ev.table("findings").query("model == 'svm' and topic == 'selective'")["sentence"].iloc[0]
    assert f"mean DiSCA {board.set_index('model').loc['svm', 'disca']:.3f}, " in sentence  # no interval to state


@pytest.mark.parametrize(
    "params, match",
    [
        ({"tolerance": 1.5}, r"`tolerance` must be a number in \(0, 1\], got 1.5"),
        ({"protocol": "xdomian"}, "`protocol` must be one of"),
        ({"tolerence": 0.8}, "unknown parameter 'tolerence'; did you mean 'tolerance'"),
        ({"n_bootstrap": -1}, "`n_bootstrap` must be an int >= 0"),
        ({"confidence_level": 1.0}, "`confidence_level` must be a number in"),
        ({"p": 3}, "`p` must be one of"),
    ],
)
def test_parameters_are_checked_before_any_work(params, match):
    with pytest.raises(ValueError, match=match):
        check_parameters(params)
    with pytest.raises(ValueError, match=match):
        ba.evaluate("no-such-file.csv", **params)  # the parameters fail before the data is even looked for


def test_unknown_model_of_an_evaluation(ev):
    with pytest.raises(ValueError, match="`model` 'nope' is not in the evaluation"):
        ba.model_summary(ev, "nope")


def test_findings_state_the_numbers_of_the_tables(ev):
    board = ev.table("leaderboard").set_index("model")
    for model in MODELS:
        s = ba.model_summary(ev, model)
        # knn's answers on iris_versicolor have too few distinct confidences to rank: it says so first
        first = ["analysis"] if model == "knn" else []
        assert list(s.findings["topic"]) == [*first, "ranking", "threshold", "drift", "selective"]
        sentence = dict(zip(s.findings["topic"], s.findings["sentence"]))
        ranking = sentence["ranking"]
        assert (
            f"{board.loc[model, 'auc']:.3f} ({board.loc[model, 'auc_low']:.3f}–{board.loc[model, 'auc_high']:.3f})"
            in ranking
        )
        assert f"{board.loc[model, 'accuracy']:.3f}" in ranking
        share, p = board.loc[model, "sign_share"], board.loc[model, "p_value"]
        if board.loc[model, "rank_change"] != 0:  # the share is a stability; the p-value decides significance
            assert f"keeps its sign in {share:.0%} of bootstrap replicates" in ranking
            assert ("not significant" in ranking) == (p > 0.05) == (not board.loc[model, "significant"])
        selective = sentence["selective"]  # the leaderboard's mean DiSCA, with its interval
        b = board.loc[model]
        dash = " to " if b["disca_low"] < 0 else "–"  # an interval with a negative end reads "-3.668 to 1.011"
        assert f"mean DiSCA {b['disca']:.3f} ({b['disca_low']:.3f}{dash}{b['disca_high']:.3f})," in selective
        assert s.verdict == ev.table("verdicts").set_index("model").loc[model, "verdict"]
        assert model in s._repr_html_() and "0.95" not in s.note or True


def test_threshold_finding_follows_its_stated_rule(ev):
    grid = ev.table("grid")
    for model in MODELS:
        mine = grid[(grid["model"] == model) & (grid["method"] == "isotonic")]
        head = mine[mine["protocol"] == "outdomain"].set_index("dataset")
        indata = mine[mine["protocol"] == "indata"].set_index("dataset")
        # a dataset fails when the whole interval is past the threshold: the loss measured from the upper
        # end of the accuracy's interval, kappa's upper end below the floor with the AUC's lower end above
        loss = indata["accuracy"] - head["accuracy_high"]
        chance = (head["kappa_high"] < ba.THRESHOLDS["kappa_floor"]) & (head["auc_low"] >= ba.THRESHOLDS["auc_promise"])
        failing = set(head.index[(loss >= ba.THRESHOLDS["transfer_loss"]) | chance])
        point = (indata["accuracy"] - head["accuracy"] >= ba.THRESHOLDS["transfer_loss"]) | (
            (head["kappa"] < ba.THRESHOLDS["kappa_floor"]) & (head["auc"] >= ba.THRESHOLDS["auc_promise"])
        )
        f = ba.model_summary(ev, model).findings.set_index("topic")
        sentence = f.loc["threshold", "sentence"]
        if failing:
            assert f"fails on {len(failing)} of {len(head)} datasets" in sentence
            assert f.loc["threshold", "status"] in ("warn", "bad") and f.loc["threshold", "rule"]
        elif point.any():  # past the threshold, but not with the whole interval: a note
            assert "fails on no dataset with evidence" in sentence and f.loc["threshold", "status"] == "info"
        else:
            assert "holds on all" in sentence and f.loc["threshold", "status"] == "good"


def test_summary_renders_names_as_text():
    frame = ba.load_demo().subset(models=["svm", "knn"], datasets=["wine", "diabetes"]).frame
    frame = frame.rename(columns={"svm": "<script>alert(1)</script>"})
    ev = ba.evaluate(frame, noise_repeats=2, n_bootstrap=0)
    html = ba.model_summary(ev, "<script>alert(1)</script>")._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_one_model_is_evaluated_without_the_friedman_test():
    """A report on one model (``beyondauc demo --models svm``): the Friedman test needs two, its table is empty."""
    one = ba.evaluate("demo", models=["svm"], datasets=["wine", "diabetes"], n_bootstrap=0, noise_repeats=2)
    two = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], n_bootstrap=0, noise_repeats=2)
    assert len(one.table("friedman")) == 0 and len(two.table("friedman")) == 4
    assert one.table("friedman").dtypes.to_dict() == two.table("friedman").dtypes.to_dict()
    board = one.table("leaderboard")
    assert board["model"].tolist() == ["svm"] and board[
        ["auc_rank", "accuracy_rank", "rank_change"]
    ].values.tolist() == [[1, 1, 0]]
    assert one.table("verdicts")["model"].tolist() == ["svm"]


def test_result_classes_round_trip_through_their_evaluation_tables():
    """Each result class writes its own rows and reads them back: what a view rebuilds from a saved
    evaluation equals what evaluate computed (the DiSCA, its curve, the diagnostics' curves)."""
    import numpy as np

    from beyondauc.metrics import (
        BiasRobustness,
        CoverageAccuracyCurve,
        DiSCA,
        NoiseRobustness,
        SensSpecDrift,
        WassersteinMatrix,
        cohort_diagnostics,
        selective_answering,
    )

    bench = ba.load_demo().subset(models=["svm"], datasets=["wine", "diabetes"])
    sel = selective_answering(bench, "svm", "wine")
    d = sel.disca
    back = DiSCA.from_tables(d.to_dict(), d.to_tables(), tolerance=d.tolerance, resolution=d.resolution)
    assert back.to_dict() == d.to_dict() and back.weights == d.weights
    pd.testing.assert_frame_equal(back.fluctuations, d.fluctuations)
    pd.testing.assert_frame_equal(back.b_table, d.b_table)
    assert np.array_equal(back.curve.accuracy, d.curve.accuracy) and back.curve.score == d.curve.score
    exact = CoverageAccuracyCurve.from_frame(sel.curve.to_frame(), score=sel.curve.score)
    assert np.array_equal(exact.coverage, sel.curve.coverage) and exact.resolution is None
    diag = cohort_diagnostics(bench, "svm", "wine", n_repeats=2)
    for r, cls in ((diag.bias_val, BiasRobustness), (diag.noise_test, NoiseRobustness)):
        again = cls.from_frame(r.to_frame())
        assert again.score == r.score and np.array_equal(again.auc_curve, r.auc_curve)
    drift = SensSpecDrift.from_frame(diag.drift.to_frame())
    assert drift.score == diag.drift.score and np.array_equal(drift.thresholds, diag.drift.thresholds)
    w = WassersteinMatrix.from_rows(diag.wasserstein.to_rows())
    assert np.array_equal(w.matrix, diag.wasserstein.matrix) and w.p == diag.wasserstein.p
