"""Repeated samples of one item in the cohort diagnostics: the item is the unit of every draw.

Against brute force: the bootstrap replicates equal the point-estimate functions on the rows of the items a
replicate draws (the cluster bootstrap's counts, the same seeds), and every permutation of the null equals the
point-estimate functions on the cohorts a loop builds by picking items with the same seeded keys.  Then two
simulations with 5 correlated samples per item: the clustered intervals keep their coverage where the row
bootstrap's fall short, and the clustered null keeps its size where the row null rejects far too often.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import ndtr

import beyondauc as ba
from beyondauc.metrics.diagnostics.null import NullDesign, permutation_null, permutation_replicates
from beyondauc.metrics.diagnostics.resampling import DiagnosticsBootstrap, diagnostics_replicates
from beyondauc.metrics.uncertainty.bootstrap import BLOCK, percentile_interval, strata_of
from beyondauc.metrics.uncertainty.clusters import cluster_counts

EPOCHS = 5
NULL_STREAM = 0x6E756C6C  # the permutations' own stream of the seed (null.py)


def _cohort(rng, n_items, epochs=EPOCHS, mu=1.0, noise=0.5, answers=False, ties=True):
    """Labels, scores and items of one cohort: an item's samples share its label (scores) and its effect."""
    effect = rng.normal(size=n_items)
    if answers:  # correctness varies between an item's samples, through the item's chance of being right
        p = np.repeat(ndtr(effect), epochs)
        y = (rng.uniform(size=n_items * epochs) < p).astype(int)
    else:
        y = np.repeat(rng.integers(0, 2, n_items), epochs)
    s = np.repeat(effect, epochs) + mu * y + noise * rng.normal(size=n_items * epochs)
    s = np.round(s, 1) if ties else s  # rounded: ties within and across cohorts
    return y, s, np.repeat(np.arange(n_items), epochs)


def _numbers(yv, sv, yt, st, sigma_max, p=2):
    """The diagnostics by the point-estimate functions; NaN where a cohort lacks a class."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bv = ba.bias_robustness(yv, sv, sigma_max=sigma_max)
        bt = ba.bias_robustness(yt, st, sigma_max=sigma_max)
        return {
            "auc_val": bv.auc,
            "auc_test": bt.auc,
            "bias_robustness_val": bv.score,
            "bias_robustness_test": bt.score,
            "drift": ba.sens_spec_drift(yv, sv, yt, st).score,
            "wasserstein": ba.wasserstein_matrix(yv, sv, yt, st, p=p).score,
        }


def _close(got, want):
    return np.isnan(got) == np.isnan(want) and (np.isnan(want) or got == pytest.approx(want, rel=1e-12, abs=1e-12))


# -- the bootstrap against a loop over replicates ------------------------------------------------


@pytest.mark.parametrize("answers", [False, True])
def test_bootstrap_replicates_are_the_rows_of_the_items_each_replicate_draws(answers):
    rng = np.random.default_rng(3)
    yv, sv, iv = _cohort(rng, 12, epochs=3, answers=answers)
    yt, st, it = _cohort(rng, 9, epochs=3, answers=answers)
    items = np.r_[iv, it + 12]
    B, sigma_max = 40, 4.0
    options = DiagnosticsBootstrap(B, sigma_max, 2, random_state=7, by_class=not answers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reps = diagnostics_replicates(yv, sv, yt, st, options, items=items)
    y, s = np.r_[yv, yt], np.r_[sv, st]
    cohort = np.repeat([0, 1], [len(yv), len(yt)])
    strata = strata_of(cohort) if answers else strata_of(cohort, y)  # answers: within cohort, not by class
    counts = cluster_counts(items, strata, B, random_state=7)
    nan_rows = 0
    for r in range(B):  # the straightforward way: every row of every drawn item, as often as it is drawn
        v, t = (
            np.repeat(np.flatnonzero(cohort == 0), counts[r, cohort == 0]),
            np.repeat(np.flatnonzero(cohort == 1), counts[r, cohort == 1]),
        )
        assert len(np.unique(items[v])) <= 12 and len(v) == len(yv)  # whole items: every cohort keeps its rows
        want = _numbers(y[v], s[v], y[t], s[t], sigma_max)
        nan_rows += np.isnan(want["drift"])
        for k, value in want.items():
            assert _close(reps[k].iloc[r], value), (k, r, reps[k].iloc[r], value)
    if not answers:
        assert nan_rows == 0  # stratified by class: every replicate keeps both classes in both cohorts


def test_an_answers_replicate_without_a_class_is_left_out_of_the_interval_as_every_engine_does():
    rng = np.random.default_rng(0)
    yv, sv, iv = _cohort(rng, 6, epochs=2, answers=True)
    yt, st, it = _cohort(rng, 6, epochs=2, answers=True)
    yv[:] = 1
    yv[0] = 0  # one wrong answer in V: many replicates miss it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reps = diagnostics_replicates(
            yv, sv, yt, st, DiagnosticsBootstrap(200, 4.0, random_state=1, by_class=False), items=np.r_[iv, it + 6]
        )
    undefined = reps["auc_val"].isna()
    assert 0 < undefined.sum() < 200  # counted as drawn, NaN where the cohort lacks a class
    assert reps.loc[undefined, "drift"].isna().all() and reps.loc[~undefined, "auc_val"].notna().all()
    low, high = percentile_interval(reps["auc_val"].to_numpy(), 0.95)
    want = np.quantile(reps["auc_val"].dropna(), [0.025, 0.975])  # the defined replicates
    assert (float(low), float(high)) == pytest.approx(tuple(want), rel=1e-12)


# -- the permutation null against a loop over permutations ----------------------------------------


def _brute_null(yv, sv, yt, st, items, B, seed, by_class):
    """Each permutation built by hand: the items of each stratum with the smallest seeded keys go to V."""
    y, s = np.r_[yv, yt], np.r_[sv, st]
    n_items = int(items.max()) + 1
    first = np.unique(items, return_index=True)[1]
    in_v = first < len(yv)
    item_class = y[first] if by_class else np.zeros(n_items, int)
    strata = [np.flatnonzero(item_class == k) for k in np.unique(item_class)]
    blocks = np.random.SeedSequence([seed, NULL_STREAM]).spawn((B + BLOCK - 1) // BLOCK)
    rows = []
    for r in range(B):  # one permutation at a time
        if r % BLOCK == 0:
            gens = [np.random.default_rng(g) for g in blocks[r // BLOCK].spawn(len(strata))]
        v_items = []
        for g, members in zip(gens, strata):
            keys = g.random(len(members))
            v_items += members[np.argsort(keys, kind="stable")[: int(in_v[members].sum())]].tolist()
        v = np.isin(items, v_items)
        rows.append(_numbers(y[v], s[v], y[~v], s[~v], None))
    return pd.DataFrame(rows)[["drift", "wasserstein"]]


@pytest.mark.parametrize("by_class", [True, False])
def test_every_permutation_moves_whole_items_as_a_loop_does(by_class):
    rng = np.random.default_rng(5)
    yv, sv, iv = _cohort(rng, 10, epochs=3, answers=not by_class)
    yt, st, it = _cohort(rng, 8, epochs=3, answers=not by_class)
    items = np.r_[iv, it + 10]
    B = 150  # three seed blocks, the last one partly used
    design = NullDesign(by_class=by_class, items_val=iv, items_test=it + 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        null = permutation_replicates(yv, sv, yt, st, n_permutations=B, random_state=9, design=design)
        brute = _brute_null(yv, sv, yt, st, items, B, 9, by_class)
    for k in ("drift", "wasserstein"):
        assert all(_close(a, b) for a, b in zip(null[k], brute[k])), k


def test_the_item_null_does_not_depend_on_the_chunks(monkeypatch):
    from beyondauc.metrics.diagnostics import null as diagnostics_null

    rng = np.random.default_rng(2)
    yv, sv, iv = _cohort(rng, 10, epochs=3)
    yt, st, it = _cohort(rng, 10, epochs=3)
    design = NullDesign(items_val=iv, items_test=it + 10)
    a = permutation_replicates(yv, sv, yt, st, n_permutations=200, random_state=4, design=design)
    monkeypatch.setattr(diagnostics_null, "_NULL_CELLS", 400)  # a few permutations per chunk, mid-block
    pd.testing.assert_frame_equal(
        a, permutation_replicates(yv, sv, yt, st, n_permutations=200, random_state=4, design=design)
    )


# -- bad input and the benchmark ---------------------------------------------------------------------


def test_item_ids_are_checked_in_one_line():
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="item 'q0' has samples in both the validation and the test cohort"):
        ba.diagnostics_intervals(
            y, [1, 2, 3, 4], y, [1, 2, 3, 5], items_val=["q0"] * 2 + ["q1"] * 2, items_test=["q0"] * 2 + ["q2"] * 2
        )
    with pytest.raises(ValueError, match="give both or neither"):
        permutation_null(y, [1, 2, 3, 4], y, [1, 2, 3, 5], design=NullDesign(items_val=[0, 0, 1, 1]))


def _scores_frame(seed=0, n=24, epochs=3):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.tile([0, 1], n // 2), epochs)
    return pd.DataFrame(
        {
            "dataset": "qa",
            "id": np.repeat(np.arange(n), epochs),
            "epoch": np.tile(np.arange(epochs), n),
            "label": y,
            "split": np.repeat(np.where(np.arange(n) % 4 < 2, "val", "test"), epochs),
            "m": np.repeat(rng.normal(size=n), epochs) + y + 0.3 * rng.normal(size=n * epochs),
        }
    )


def test_cohort_diagnostics_of_repeated_samples_draw_the_benchmark_items():
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed

    frame = _scores_frame()
    bench = ba.load_benchmark(frame)
    d = ba.cohort_diagnostics(bench, "m", "qa", n_repeats=2, n_bootstrap=60, n_permutations=49, random_state=3)
    v, t = (frame["split"] == "val").to_numpy(), (frame["split"] == "test").to_numpy()
    ids = frame["id"].to_numpy()
    items = np.unique(np.r_[ids[v], ids[t]], return_inverse=True)[1]
    seed = dataset_seed(3, 0)
    sigma_max = float(np.ptp(frame["m"]))
    direct = diagnostics_replicates(
        d.y_val, d.s_val, d.y_test, d.s_test, DiagnosticsBootstrap(60, sigma_max, 2, random_state=seed), items=items
    )
    pd.testing.assert_frame_equal(d.replicates, direct)
    null = permutation_null(
        d.y_val,
        d.s_val,
        d.y_test,
        d.s_test,
        n_permutations=49,
        random_state=seed,
        design=NullDesign(items_val=ids[v], items_test=ids[t]),
    )
    assert (d.drift_pvalue, d.wasserstein_pvalue) == (null.drift_pvalue, null.wasserstein_pvalue)
    rows = ba.cohort_diagnostics(
        ba.load_benchmark(frame.drop(columns="epoch")), "m", "qa", n_repeats=2, n_bootstrap=60, random_state=3
    )
    assert not d.replicates.equals(rows.replicates)  # without the epoch column every row is an item


def test_items_of_both_classes_are_drawn_within_their_cohort_not_by_class():
    """Scores whose items hold both classes (clustered units, as in Obuchowski's clustered ROC) cannot be
    stratified by class: whole items are drawn within their cohort, as answers are, by the bootstrap and the
    null alike, and the benchmark path gives what the array functions give with by_class=False."""
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed

    frame = _scores_frame()
    frame.loc[(frame["id"] == 5) & (frame["epoch"] == 1), "label"] = 0
    bench = ba.load_benchmark(frame)
    d = ba.cohort_diagnostics(bench, "m", "qa", n_repeats=2, n_bootstrap=60, n_permutations=49, random_state=3)
    v, t = (frame["split"] == "val").to_numpy(), (frame["split"] == "test").to_numpy()
    ids = frame["id"].to_numpy()
    items = np.unique(np.r_[ids[v], ids[t]], return_inverse=True)[1]
    seed, sigma_max = dataset_seed(3, 0), float(np.ptp(frame["m"]))
    for asked in (True, False):  # asked to stratify or not: an item of both classes decides
        options = DiagnosticsBootstrap(60, sigma_max, 2, random_state=seed, by_class=asked)
        direct = diagnostics_replicates(d.y_val, d.s_val, d.y_test, d.s_test, options, items=items)
        pd.testing.assert_frame_equal(d.replicates, direct)
        design = NullDesign(by_class=asked, items_val=ids[v], items_test=ids[t])
        null = permutation_null(
            d.y_val, d.s_val, d.y_test, d.s_test, n_permutations=49, random_state=seed, design=design
        )
        assert (d.drift_pvalue, d.wasserstein_pvalue) == (null.drift_pvalue, null.wasserstein_pvalue)
    whole = np.r_[frame.loc[v, "label"], frame.loc[t, "label"]]
    strata = DiagnosticsBootstrap(60, sigma_max, 2, random_state=seed)
    stratified = diagnostics_replicates(d.y_val, d.s_val, d.y_test, d.s_test, strata, items=None)
    assert not d.replicates.equals(stratified) and whole.min() == 0


def test_cohorts_that_split_an_item_fall_back_to_rows_with_a_warning():
    bench = ba.load_benchmark(_scores_frame().drop(columns="split"))
    with pytest.warns(UserWarning, match="split the repeated samples of some items"):
        d = ba.cohort_diagnostics(bench, "m", "qa", protocol="indata", n_repeats=2, n_bootstrap=20)
    assert len(d.replicates) == 20


def test_answers_epochs_draw_items_within_cohort():
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed
    from helpers.epochs import epochs_frame

    bench = ba.load_benchmark(epochs_frame(items=20))
    d = ba.cohort_diagnostics(bench, "a", "qa", n_repeats=2, n_bootstrap=40)  # xdomain: V = nli, T = qa
    codes, items = bench.dataset_codes(), bench.items()
    cohort_items = np.unique(np.r_[items[codes == 1], items[codes == 0]], return_inverse=True)[1]
    assert len(np.unique(cohort_items)) == 40 and len(cohort_items) == 200  # 20 items a dataset, 5 epochs each
    options = DiagnosticsBootstrap(
        40, float(np.ptp(np.r_[d.s_val, d.s_test])), 2, random_state=dataset_seed(0, 0), by_class=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = diagnostics_replicates(d.y_val, d.s_val, d.y_test, d.s_test, options, items=cohort_items)
    pd.testing.assert_frame_equal(d.replicates, direct)


# -- coverage and size with 5 correlated samples per item ---------------------------------------------

MU, NOISE = 1.0, 0.5
TRUE_AUC = float(ndtr(MU / np.sqrt(2 * (1 + NOISE**2))))  # a positive's sample against a negative's, other items


def _coverage(runs, clustered, n_items=120, B=150):
    """Share of the seeded runs' 95% intervals of auc_val and auc_test (independent cohorts) that hold TRUE_AUC."""
    rng = np.random.default_rng(1)
    hits = 0
    for r in range(runs):  # simulated runs, each vectorised over its replicates
        yv, sv, iv = _cohort(rng, n_items, ties=False)
        yt, st, it = _cohort(rng, n_items, ties=False)
        items = np.r_[iv, it + n_items] if clustered else None
        reps = diagnostics_replicates(yv, sv, yt, st, DiagnosticsBootstrap(B, None, random_state=r), items=items)
        low, high = percentile_interval(reps[["auc_val", "auc_test"]].to_numpy(), 0.95)
        hits += int(((low <= TRUE_AUC) & (high >= TRUE_AUC)).sum())
    return hits / (2 * runs)


def test_clustered_intervals_keep_their_coverage_where_the_row_bootstrap_undercovers():
    # 400 intervals: a Monte Carlo standard error of about 1.1 points.  (With 60 items a cohort both bootstraps
    # fall short by a few points more: the percentile interval of an AUC of 30 items a class is itself narrow.)
    clustered = _coverage(200, True)
    rows = _coverage(60, False)
    assert abs(clustered - 0.95) <= 0.02, clustered
    assert rows < 0.95 - 0.10, rows  # 5 correlated samples counted as 5 items: far too narrow


N_NULL = 300
# binomial 99.9% bounds on the share of N_NULL runs whose p-value is <= 0.05 when the true rate is 5%
SIZE_LOW, SIZE_HIGH = (stats.binom.ppf(q, N_NULL, 0.05) / N_NULL for q in (0.001, 0.999))


def _rejections(runs, clustered, n_items=30):
    """Share of seeded runs under exchangeable items (V and T drawn alike) whose drift p-value is <= 0.05."""
    rng = np.random.default_rng(2)
    rejected = 0
    for r in range(runs):
        yv, sv, iv = _cohort(rng, n_items)
        yt, st, it = _cohort(rng, n_items)
        design = NullDesign(items_val=iv, items_test=it + n_items) if clustered else NullDesign()
        rejected += (
            permutation_null(yv, sv, yt, st, n_permutations=99, random_state=r, design=design).drift_pvalue <= 0.05
        )
    return rejected / runs


def test_the_clustered_null_holds_its_size_where_the_row_null_is_inflated():
    clustered = _rejections(N_NULL, True)
    assert SIZE_LOW <= clustered <= SIZE_HIGH, (clustered, SIZE_LOW, SIZE_HIGH)  # about 2.7% to 8%
    rows = _rejections(100, False)
    assert rows > 3 * SIZE_HIGH, rows  # the row null: its p-values far too small
