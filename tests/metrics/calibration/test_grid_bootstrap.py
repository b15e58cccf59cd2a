"""Tests of the bootstrap of the expected-accuracy grid and of rank stability.

The vectorised replicates are checked cell for cell against a straightforward
loop: the same replicate's rows materialised with ``np.repeat``, one
scikit-learn estimator refitted per cell (``tests/helpers/reference_impl.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import ShuffleSplit

import beyondauc.metrics.calibration.grid_bootstrap as gb
import beyondauc.metrics.calibration.grid_bootstrap_result as gbr
import beyondauc.metrics.calibration.grid_replicates as engine
import beyondauc.metrics.calibration.xdomain_fast_path as fits
from beyondauc import (
    GridBootstrap,
    bootstrap_grid,
    expected_accuracy,
    expected_accuracy_grid,
    load_benchmark,
    rank_changes,
)
from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, strata_of
from helpers.benchmarks import DOMAINS, small_frame
from helpers.reference_impl import accuracy_and_kappa as _ref_scores
from helpers.reference_impl import fit_predict


def reference_replicate(df, counts, protocol, method, model, n_repeats, seed):
    """One replicate by brute force: repeat rows by their counts, refit sklearn per cell."""
    datasets = list(pd.unique(df["dataset"]))
    s_all, y_all = df[model].to_numpy(float), df["label"].to_numpy(int)
    ds = df["dataset"].to_numpy()
    out = {}
    for d in datasets:
        in_d = ds == d
        rep = np.repeat(np.arange(len(df)), counts)
        auc = roc_auc_score(y_all[rep][in_d[rep]], s_all[rep][in_d[rep]])
        if protocol == "indata":
            idx = np.flatnonzero(in_d)
            ss = ShuffleSplit(n_splits=n_repeats, test_size=0.2, random_state=seed)
            acc, kap = [], []
            for _, test in list(ss.split(np.zeros((len(idx), 1))))[: min(n_repeats, engine.BOOTSTRAP_REPEATS)]:
                is_test = np.zeros(len(idx), bool)
                is_test[test] = True
                tr = np.repeat(idx[~is_test], counts[idx[~is_test]])
                te = np.repeat(idx[is_test], counts[idx[is_test]])
                pred = fit_predict(method, s_all[tr], y_all[tr], s_all[te], logistic_tol=1e-12)
                a, k = _ref_scores(y_all[te], pred)
                acc.append(a)
                kap.append(k)
            out[d] = (auc, np.nanmean(acc), np.nanmean(np.array(kap, float)))
            continue
        if protocol == "xdomain":
            cal, ev = ~in_d, in_d
        elif protocol == "outdomain":
            cal, ev = np.array([DOMAINS[o] != DOMAINS[d] for o in ds]), in_d
        else:  # outdata
            cal, ev = in_d, ~in_d
        tr = np.repeat(np.flatnonzero(cal), counts[cal])
        te = np.repeat(np.flatnonzero(ev), counts[ev])
        pred = fit_predict(method, s_all[tr], y_all[tr], s_all[te], logistic_tol=1e-12)
        out[d] = (auc, *_ref_scores(y_all[te], pred))
    return out


@pytest.fixture(scope="module")
def small():
    df = small_frame()
    bench = load_benchmark(df, domains=DOMAINS)
    bs = bootstrap_grid(
        bench, protocols=["xdomain", "outdomain", "indata", "outdata"], n_bootstrap=3, n_repeats=3, random_state=7
    )
    return df, bench, bs


@pytest.mark.parametrize("protocol", ["xdomain", "outdomain", "indata", "outdata"])
@pytest.mark.parametrize("method", ["isotonic", "stump", "logistic"])
def test_replicates_equal_refitting_sklearn_on_repeated_rows(small, protocol, method):
    df, bench, bs = small
    counts = bootstrap_counts(strata_of(bench.dataset_codes(), bench.labels()), 3, random_state=7)
    g = bs.grid
    for b in range(2 if method == "logistic" else 3):  # sklearn's lbfgs is the slow part
        for model in bench.models:
            ref = reference_replicate(df, counts[b], protocol, method, model, 3, 7)
            for d, (auc, acc, kap) in ref.items():
                row = np.flatnonzero(
                    (
                        (g["protocol"] == protocol)
                        & (g["method"] == method)
                        & (g["dataset"] == d)
                        & (g["model"] == model)
                    ).to_numpy()
                )[0]
                got = bs.replicates[b, row]
                assert got[0] == pytest.approx(auc, abs=1e-12)
                if method == "logistic":  # lbfgs vs Newton: a decision may flip at the threshold
                    assert got[1] == pytest.approx(acc, abs=0.03)
                else:
                    assert got[1] == pytest.approx(acc, abs=1e-12), (b, model, d)
                    np.testing.assert_allclose(got[2], kap, atol=1e-12)


def test_point_grid_is_unchanged_and_intervals_bracket(small):
    _, bench, bs = small
    plain = expected_accuracy_grid(
        bench, protocols=["xdomain", "outdomain", "indata", "outdata"], n_repeats=3, random_state=7
    )
    pd.testing.assert_frame_equal(bs.grid[plain.columns], plain)
    for v in engine.VALUES:
        ok = bs.grid[f"{v}_low"].notna()
        assert (bs.grid.loc[ok, f"{v}_low"] <= bs.grid.loc[ok, f"{v}_high"]).all()


def test_reproducible_and_independent_of_jobs_chunks_and_length(monkeypatch):
    bench = load_benchmark(small_frame(1), domains=DOMAINS)
    kw = dict(protocols=["xdomain", "indata", "outdata"], n_repeats=4, random_state=3)
    a = bootstrap_grid(bench, n_bootstrap=70, **kw)
    b = bootstrap_grid(bench, n_bootstrap=70, n_jobs=2, **kw)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    monkeypatch.setattr(engine, "_CELLS", 500)  # one replicate per batch
    c = bootstrap_grid(bench, n_bootstrap=70, **kw)
    np.testing.assert_array_equal(a.replicates, c.replicates)
    monkeypatch.undo()
    # tasks of one block each (two per model), counts drawn again for every task
    monkeypatch.setattr(gb, "_TASK_REPLICATES", gb.BLOCK)
    monkeypatch.setattr(gb, "COUNTS_CACHE_BYTES", 0)
    for jobs in (1, 2):
        np.testing.assert_array_equal(a.replicates, bootstrap_grid(bench, n_bootstrap=70, n_jobs=jobs, **kw).replicates)
    monkeypatch.undo()
    d = bootstrap_grid(bench, n_bootstrap=10, **kw)
    np.testing.assert_array_equal(a.replicates[:10], d.replicates)
    e = bootstrap_grid(bench, n_bootstrap=70, **{**kw, "random_state": 4})
    assert not np.array_equal(a.replicates, e.replicates, equal_nan=True)


def test_replicates_drawn_on_each_grid_are_those_of_the_per_example_counts(monkeypatch):
    """A range of replicates drawn grid by grid gives the per-value counts of its per-example counts, and the
    bootstrap run from the per-example counts (what it ran on before) is the same, bit for bit."""
    strata = np.repeat([0, 1, 2], [40, 25, 35])
    rng = np.random.default_rng(5)
    inverse, y, groups = rng.integers(0, 30, 100), (rng.random(100) < 0.4).astype(int), rng.integers(-1, 3, 100)
    drawn = engine.ReplicateCounts(strata, 150, 7, 37, 141)  # starts and ends inside blocks of replicates
    W = bootstrap_counts(strata, 150, random_state=7, start=37, stop=141)
    for per in (1, 13, 200):
        for kw in ({}, {"groups": groups, "n_groups": 3}):
            got = list(drawn.grids(per, inverse, y, 30, **kw))
            want = list(engine.ReplicateCounts.of(W).grids(per, inverse, y, 30, **kw))
            assert [len(p) for p, _ in got] == [len(p) for p, _ in want]
            for (p, n), (q, m) in zip(got, want):
                np.testing.assert_array_equal(p, q)
                np.testing.assert_array_equal(n, m)
    np.testing.assert_array_equal(drawn.examples(), W)

    bench = load_benchmark(small_frame(1), domains=DOMAINS)
    kw = dict(protocols=["xdomain", "indomain", "indata"], n_repeats=4, n_bootstrap=70, random_state=3)
    a = bootstrap_grid(bench, **kw)
    grids = engine.ReplicateCounts.grids
    monkeypatch.setattr(
        engine.ReplicateCounts,
        "grids",
        lambda self, *args, **kws: grids(engine.ReplicateCounts.of(self.examples()), *args, **kws),
    )
    np.testing.assert_array_equal(a.replicates, bootstrap_grid(bench, **kw).replicates)


def test_paired_a_models_replicates_do_not_depend_on_the_other_models():
    df = small_frame(2)
    bench = load_benchmark(df, domains=DOMAINS)
    alone = load_benchmark(df[["dataset", "label", "cont"]], domains=DOMAINS)
    kw = dict(protocols=["xdomain"], methods=["stump"], n_bootstrap=30, random_state=1)
    full, one = bootstrap_grid(bench, **kw), bootstrap_grid(alone, **kw)
    rows = (full.grid["model"] == "cont").to_numpy()
    np.testing.assert_array_equal(full.replicates[:, rows], one.replicates)


def test_expected_accuracy_adds_interval_columns():
    bench = load_benchmark(small_frame(3), domains=DOMAINS)
    res = expected_accuracy(bench, n_bootstrap=25, confidence_level=0.9)
    for v in ("auc", "accuracy", "kappa", "balanced_accuracy", "mcc", "f1"):
        assert list(res.columns).index(f"{v}_low") == list(res.columns).index(v) + 1
        assert (res[f"{v}_low"] <= res[f"{v}_high"]).all()
    assert "accuracy_low" not in expected_accuracy(bench).columns


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(n_bootstrap=-1), "n_bootstrap"),
        (dict(n_bootstrap=1.5), "n_bootstrap"),
        (dict(n_bootstrap=5, confidence_level=1.0), "confidence_level"),
    ],
)
def test_bad_arguments(kw, match):
    bench = load_benchmark(small_frame(4), domains=DOMAINS)
    with pytest.raises(ValueError, match=match):
        expected_accuracy(bench, **kw)


# -- rank stability on hand-made replicates ----------------------------------------------


def hand_bootstrap(auc_reps, acc_reps, auc, acc, datasets=("d1",)):
    """A GridBootstrap over one protocol x method from given replicate arrays (B, D, M)."""
    B, D, M = acc_reps.shape
    models = [f"m{j}" for j in range(M)]
    grid = pd.DataFrame(
        [
            dict(
                protocol="xdomain",
                method="logistic",
                dataset=datasets[i],
                model=models[j],
                auc=auc[i][j],
                accuracy=acc[i][j],
                kappa=np.nan,
                balanced_accuracy=np.nan,
                mcc=np.nan,
                f1=np.nan,
            )
            for i in range(D)
            for j in range(M)
        ]
    )
    reps = np.full((B, D * M, len(engine.VALUES)), np.nan)
    reps[:, :, 0] = auc_reps.reshape(B, D * M)
    reps[:, :, 1] = acc_reps.reshape(B, D * M)
    return GridBootstrap(grid=grid, replicates=reps, n_bootstrap=B, confidence_level=0.95, random_state=0)


def test_rank_change_p_value_is_the_bootstrap_tail_by_hand():
    """Two models whose accuracy ranks swap in a chosen number of 40 replicates; the AUC ranks never move.
    m0 is first by AUC and second by accuracy as reported (change -1); in k replicates it is first by accuracy
    too (change 0).  share of replicates keeping the sign = 1 - k/40; p = 2 * min(P(change <= 0), P(change >= 0))
    = 2 * k/40 (capped at 1); significant at 95% exactly when p <= 0.05."""
    B = 40
    auc_reps = np.tile([0.9, 0.8], (B, 1))[:, None]
    for k, share, p, significant in [
        (0, 1.0, 0.0, True),
        (1, 0.975, 0.05, True),
        (2, 0.95, 0.1, False),
        (30, 0.25, 1.0, False),
    ]:
        acc = np.tile([0.6, 0.7], (B, 1))
        acc[:k] = [0.7, 0.6]
        bs = hand_bootstrap(auc_reps, acc[:, None], [[0.9, 0.8]], [[0.6, 0.7]])
        rs = bs.rank_stability("xdomain", "logistic").query("dataset == 'd1'").set_index("model")
        assert rs.loc["m0", "change"] == -1
        assert rs.loc["m0", "sign_share"] == pytest.approx(share) and rs.loc["m0", "p_value"] == pytest.approx(p)
        assert bool(rs.loc["m0", "significant"]) is significant, k


def test_rank_stability_dominated_and_exchangeable():
    rng = np.random.default_rng(0)
    B = 4000
    # m0 has the higher AUC but a clearly lower accuracy; m1 and m2 are exchangeable
    auc_reps = np.stack(
        [0.9 + 0.005 * rng.normal(size=B), 0.8 + 0.005 * rng.normal(size=B), 0.7 + 0.005 * rng.normal(size=B)], axis=1
    )[:, None]
    acc_reps = np.stack(
        [0.6 + 0.005 * rng.normal(size=B), 0.8 + 0.02 * rng.normal(size=B), 0.8 + 0.02 * rng.normal(size=B)], axis=1
    )[:, None]
    bs = hand_bootstrap(auc_reps, acc_reps, [[0.9, 0.8, 0.7]], [[0.6, 0.81, 0.8]])
    rs = bs.rank_stability("xdomain", "logistic").query("dataset == 'd1'").set_index("model")
    assert rs.loc["m0", "change"] == -2 and rs.loc["m0", "sign_share"] == 1.0 and rs.loc["m0", "significant"]
    assert rs.loc["m0", "p_value"] == 0.0 and (rs["p_change"] == rs["sign_share"]).all()  # the former name
    assert rs.loc["m0", "rank_low"] == rs.loc["m0", "rank_high"] == 3
    # m1 climbs from 2 to 1 by a hair over its exchangeable twin m2: it does so in about half the replicates
    assert rs.loc["m1", "change"] == 1
    assert 0.45 < rs.loc["m1", "sign_share"] < 0.55 and not rs.loc["m1", "significant"]
    assert rs.loc["m1", "p_value"] == pytest.approx(2 * (1 - rs.loc["m1", "sign_share"]))  # no replicate ties
    # m2 climbs from AUC rank 3 (to 2 as reported, to 1 or 2 in replicates): always up
    assert rs.loc["m2", "change"] == 1 and rs.loc["m2", "sign_share"] == 1.0 and rs.loc["m2", "significant"]
    pw = bs.pairwise("xdomain", "logistic").query("dataset == 'd1'").set_index(["model", "other"])
    assert pw.loc[("m1", "m0"), "p_better"] == 1.0
    assert 0.45 < pw.loc[("m1", "m2"), "p_better"] < 0.55
    assert pw.loc[("m1", "m2"), "p_better"] + pw.loc[("m2", "m1"), "p_better"] == pytest.approx(1.0)
    kt = bs.kendall("xdomain", "logistic").set_index("dataset")
    assert kt.loc["d1", "tau_low"] <= kt.loc["d1", "tau"] <= kt.loc["d1", "tau_high"]


def test_ranks_and_kendall_match_ranking_module_on_each_replicate():
    from scipy.stats import kendalltau

    from beyondauc.metrics.calibration.ranking import rank

    rng = np.random.default_rng(1)
    vals = np.round(rng.random((50, 6)), 1)  # ties
    vals[3, 2] = np.nan
    r = gbr.ranks(vals)
    for b in range(50):
        np.testing.assert_array_equal(r[b], rank(vals[b]))
    a, c = np.round(rng.random((50, 6)), 1), np.round(rng.random((50, 6)), 1)
    tau = gbr.kendall_b(a, c)
    for b in range(50):
        np.testing.assert_allclose(tau[b], kendalltau(a[b], c[b]).statistic, atol=1e-12)


def test_identical_models_tie_in_every_replicate():
    df = small_frame(5)
    df["copy"] = df["cont"]
    bench = load_benchmark(df[["dataset", "label", "cont", "copy", "prob"]], domains=DOMAINS)
    bs = bootstrap_grid(bench, protocols=["xdomain"], methods=["logistic"], n_bootstrap=40, random_state=2)
    pw = bs.pairwise("xdomain", "logistic").set_index(["dataset", "model", "other"])
    assert (pw.xs(("cont", "copy"), level=("model", "other"))["p_tie"] == 1.0).all()
    rs = bs.rank_stability("xdomain", "logistic").set_index(["dataset", "model"])
    np.testing.assert_array_equal(rs.xs("cont", level="model")["rank"], rs.xs("copy", level="model")["rank"])


def test_rank_changes_takes_the_bootstrap():
    bench = load_benchmark(small_frame(6), domains=DOMAINS)
    bs = bootstrap_grid(bench, protocols=["xdomain"], methods=["stump"], n_bootstrap=30)
    res = bs.grid
    out = rank_changes(res, bootstrap=bs)
    plain = rank_changes(res)
    pd.testing.assert_frame_equal(out[plain.columns], plain)
    assert {"rank_low", "rank_high", "auc_rank_low", "p_change", "significant"} <= set(out.columns)
    with pytest.raises(ValueError, match="bootstrap"):
        rank_changes(res, bootstrap="nope")


# -- displays and command line ---------------------------------------------------------------


def test_displays_draw_intervals_and_mark_non_significant_changes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from beyondauc.plots import AUCAccuracyDisplay, RankSlopeDisplay

    bench = load_benchmark(small_frame(7), domains=DOMAINS)
    bs = bootstrap_grid(bench, protocols=["xdomain"], methods=["isotonic"], n_bootstrap=30)
    disp = AUCAccuracyDisplay.from_results(bs.grid)
    segments = disp.errorbars_.lines[2]  # (x bars, y bars)
    assert len(segments) == 2 and all(len(s.get_segments()) == len(bs.grid) for s in segments)
    assert (
        AUCAccuracyDisplay.from_results(
            expected_accuracy_grid(bench, protocols=["xdomain"], methods=["isotonic"])
        ).errorbars_
        is None
    )
    ch = rank_changes(bs.grid, bootstrap=bs).query("dataset == 'mean'")
    disp = RankSlopeDisplay.from_results(bs.grid, bootstrap=bs)
    styles = [ln.get_linestyle() for ln in disp.ax_.lines[: len(ch)]]
    expect = ["-" if s or c == 0 else "--" for s, c in zip(ch["significant"], ch["change"])]
    assert styles == expect
    plt.close("all")


def test_cli_calibrate_bootstrap(tmp_path):
    import io
    import json

    from beyondauc.cli import main

    path = tmp_path / "b.csv"
    small_frame(8).to_csv(path, index=False)
    out = io.StringIO()
    main(["calibrate", str(path), "--bootstrap", "20", "--format", "json"], out=out)
    recs = json.loads(out.getvalue())
    assert all(r["accuracy_low"] <= r["accuracy_high"] for r in recs) and "auc_high" in recs[0]
    out = io.StringIO()
    main(["calibrate", str(path), "--bootstrap", "20", "--confidence-level", "0.9"], out=out)
    text = out.getvalue()
    assert "90% bootstrap intervals" in text and "p-value" in text and "tau_low" in text
    assert "p_change" not in text and any(w in text for w in ("no (p > 0.1)", "yes (p <= 0.1)", "no change"))


def test_intervals_of_the_mean_are_percentiles_of_the_replicates_means(small):
    from beyondauc import rank_table

    _, bench, bs = small
    iv = bs.intervals().query("protocol == 'xdomain' and method == 'stump' and score == 'accuracy'")
    sel = ((bs.grid["protocol"] == "xdomain") & (bs.grid["method"] == "stump")).to_numpy()
    res = bs.grid[sel]
    means = rank_table(res, score="accuracy").query("dataset == 'mean'").set_index("model")["value"]
    got = iv.query("dataset == 'mean'").set_index("model")
    for model in bench.models:
        rows = (res["model"] == model).to_numpy()
        rep_means = bs.replicates[:, np.flatnonzero(sel)[rows], 1].mean(axis=1)
        assert got.loc[model, "estimate"] == pytest.approx(means[model])
        assert got.loc[model, "low"] == pytest.approx(np.quantile(rep_means, 0.025))
        assert got.loc[model, "high"] == pytest.approx(np.quantile(rep_means, 0.975))


def test_auc_replicates_invariant_to_a_monotone_transform_of_the_scores():
    df = small_frame(9)
    moved = df.assign(cont=np.exp(2 * df["cont"]) - 3)
    kw = dict(protocols=["xdomain"], methods=["stump"], n_bootstrap=25, random_state=5)
    a = bootstrap_grid(load_benchmark(df, domains=DOMAINS), **kw)
    b = bootstrap_grid(load_benchmark(moved, domains=DOMAINS), **kw)
    np.testing.assert_allclose(a.replicates[..., 0], b.replicates[..., 0], atol=1e-12)


def _xdomain_parts(bench, n_bootstrap, seed):
    """Per model, the fast xdomain path's inputs on ``n_bootstrap`` replicates:
    (model, its set-up, its grid layout, local counts Pl and Nl, totals Tp and Tn)."""
    from beyondauc.metrics.calibration.protocol_plans import Context, protocol_plan
    from beyondauc.metrics.uncertainty.bootstrap import grid_weights

    ctx = Context(
        y=bench.labels(),
        codes=bench.dataset_codes(),
        offsets=bench.dataset_offsets(),
        datasets=bench.datasets,
        domains=dict(bench.domains),
        protocols=("xdomain",),
        methods=("logistic",),
        plans={"xdomain": protocol_plan(bench, "xdomain")},
        class_weight=None,
        n_repeats=3,
        seed=0,
    )
    bctx = engine.BootContext(base=ctx, strata=strata_of(ctx.codes, ctx.y), n_bootstrap=n_bootstrap, boot_seed=0)
    W = bootstrap_counts(bctx.strata, n_bootstrap, random_state=seed)
    for model in bench.models:
        mb = engine.ModelBoot(bctx, bench.scores(model))
        xg = mb.xg
        Pl, Nl = (a[:, 0] for a in grid_weights(W, mb.local_col, ctx.y, mb.n_local))
        yield model, mb, xg, Pl, Nl, xg.total(Pl), xg.total(Nl)


@pytest.mark.parametrize("sizes", [(40, 55, 35, 30), (600, 900, 400, 700)])
def test_xdomain_logistic_second_step_is_as_close_to_the_optimum_as_an_exact_newton_step(sizes):
    """The fast path's second Newton step (a Taylor expansion of the gradient around the
    point fit) lands as close to the converged fit as the exact second step does; with
    calibration sets of a thousand rows, within 3e-4 (measured: 2e-5 to 2.5e-4, the largest
    on the well-separated "prob" model, whose standardised slope is steep) and with the same
    decisions at every evaluated score."""
    from beyondauc.metrics.core.logistic import NewtonStop, logistic_params

    bench = load_benchmark(small_frame(3, sizes), domains=DOMAINS)
    for model, mb, xg, Pl, Nl, Tp, Tn in _xdomain_parts(bench, 40, 0):
        cal = fits.xdomain_cal_rows(xg, Pl, Nl, Tp, Tn)
        a_t, c_t, _, _ = fits.xdomain_logistic_params(
            xg, Pl, Nl, lambda rows: (cal[0][rows], cal[1][rows]), mb.init_ds, mb.std
        )
        R, D = a_t.shape
        k = np.tile(np.arange(D), R)
        init = (mb.init_ds[0][k], mb.init_ds[1][k])
        a_e, c_e = logistic_params(xg.x, *cal, init=init, standardize=mb.std, stop=NewtonStop(max_iter=2))
        a_c, c_c = logistic_params(xg.x, *cal, init=init, standardize=mb.std, stop=NewtonStop(100, 1e-14))
        mu, sd = mb.std

        def standardised(a, c):
            return np.stack([np.ravel(a) + np.ravel(c) * mu, np.ravel(c) * sd], axis=1)

        best = standardised(a_c, c_c)
        err_taylor = np.abs(standardised(a_t, c_t) - best).max()
        err_exact = np.abs(standardised(a_e, c_e) - best).max()
        assert err_taylor <= 2 * err_exact + 1e-12, (model, err_taylor, err_exact)
        if sizes[0] < 100:  # calibration sets of ~100 rows: two steps of either kind are ~1e-2 from the optimum
            continue
        assert err_taylor < 3e-4, (model, err_taylor)
        xl, code = xg.x_loc, xg.code

        def decide(a, c):
            return xl[None, :] * np.reshape(c, (R, D))[:, code] + np.reshape(a, (R, D))[:, code] > 0

        np.testing.assert_array_equal(decide(a_t, c_t), decide(a_c, c_c))


def test_xdomain_partial_calibration_rows_and_the_general_solvers_rows():
    """The fast path's pieces agree with their dense versions: calibration rows built only for
    some fits, and fits whose first Newton step is long (here forced by a far-off start)
    solved by the general solver on their own rows."""
    from beyondauc.metrics.core.logistic import NewtonStop, logistic_params

    bench = load_benchmark(small_frame(4, (60, 80, 50, 70)), domains=DOMAINS)
    for _, mb, xg, Pl, Nl, Tp, Tn in _xdomain_parts(bench, 12, 5):
        full = fits.xdomain_cal_rows(xg, Pl, Nl, Tp, Tn)
        rows = np.array([0, 3, 5, 17, 18, 40, len(full[0]) - 1])
        part = fits.xdomain_cal_rows(xg, Pl, Nl, Tp, Tn, rows=rows)
        for a, b in zip(part, full):
            np.testing.assert_array_equal(a, b[rows])
        far = (mb.init_ds[0] + 40.0, mb.init_ds[1] * 0.0)  # a start ~40 logits off: every first step is long
        asked = []

        def cal_rows(r):
            asked.append(r)
            return full[0][r], full[1][r]

        a_t, c_t, _, _ = fits.xdomain_logistic_params(xg, Pl, Nl, cal_rows, far, mb.std)
        R, D = a_t.shape
        (r1,) = asked
        assert len(r1) == R * D
        a_g, c_g = logistic_params(
            xg.x,
            full[0][r1],
            full[1][r1],
            init=(far[0][r1 % D], far[1][r1 % D]),
            standardize=mb.std,
            stop=NewtonStop(max_iter=fits.LOGISTIC_STEPS),
        )
        np.testing.assert_array_equal(a_t.ravel()[r1], a_g)
        np.testing.assert_array_equal(c_t.ravel()[r1], c_g)


@pytest.mark.parametrize("block", [3, 2048])
@pytest.mark.parametrize("own", [False, True])
def test_taylor_sums_equal_the_moments_summed_term_by_term(monkeypatch, block, own):
    """The logistic fast path's moments, sum_j n_rj xs_j^e expit^(c)(b0_k + b1_k xs_j) (with ``own``:
    column j left out of fit code_j's sums), blocked over columns and one matrix product per power,
    equal the sums written out term by term with expit's derivatives as polynomials in p (an
    independent form), to 1e-12."""
    monkeypatch.setattr(fits, "_MOMENT_COLUMNS", block)
    rng = np.random.default_rng(3)
    xs = np.sort(rng.normal(size=37))
    beta0 = rng.normal(size=(4, 2))
    counts = rng.integers(0, 4, size=(5, 37)).astype(float)
    code = np.sort(rng.integers(0, 4, size=37)) if own else None
    got = fits.taylor_sums(counts, xs, beta0, code)
    z = beta0[:, :1] + beta0[:, 1:] * xs[None, :]  # (K, m)
    p = 1.0 / (1.0 + np.exp(-z))
    polys = [np.poly1d([1.0, 0.0])]  # d^c expit / dz^c as a polynomial in p: P_{c+1} = P_c' * p (1 - p)
    for _ in range(4):
        polys.append(np.polyder(polys[-1]) * np.poly1d([-1.0, 1.0, 0.0]))
    keep = np.ones((4, 37)) if code is None else (code[None, :] != np.arange(4)[:, None]).astype(float)
    for c in range(5):
        for e in range(6):
            want = np.einsum("rj,kj->rk", counts * xs[None, :] ** e, polys[c](p) * keep)
            if e <= c + 1:
                np.testing.assert_allclose(got[:, c, :, e], want, rtol=1e-12, atol=1e-12)
            else:
                assert (got[:, c, :, e] == 0).all()
