"""AUC intervals, the paired DeLong test and Friedman/Nemenyi against independent references."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import bootstrap as scipy_bootstrap
from scipy.stats import friedmanchisquare, ks_2samp, norm
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from beyondauc.metrics.core.kernel import grid_counts
from beyondauc.metrics.uncertainty.intervals import acceleration, bootstrap_aucs
from beyondauc.metrics.uncertainty.rank_tests import nemenyi_q

# -- brute-force O(n^2) references -------------------------------------------------------------


def _psi(y, s):
    """psi(X_i, Y_j) for every positive i (rows) and negative j (columns); ties one half."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    x, z = s[y == 1], s[y == 0]
    return (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])


def _delong_brute(y, s):
    psi = _psi(y, s)
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), np.var(v10, ddof=1) / len(v10) + np.var(v01, ddof=1) / len(v01)


def _paired_brute(y, a, b):
    pa, pb = _psi(y, a), _psi(y, b)
    v10 = np.stack([pa.mean(axis=1), pb.mean(axis=1)])
    v01 = np.stack([pa.mean(axis=0), pb.mean(axis=0)])
    s = np.cov(v10) / v10.shape[1] + np.cov(v01) / v01.shape[1]  # DeLong's 2x2 covariance
    return pa.mean() - pb.mean(), s[0, 0] + s[1, 1] - 2 * s[0, 1]


# labels with at least two of each class; integer scores in a small range -> many ties
_labels = st.lists(st.integers(0, 1), min_size=4, max_size=60).filter(lambda v: 2 <= sum(v) <= len(v) - 2)


@st.composite
def _tied_case(draw, n_scores=1):
    y = draw(_labels)
    levels = draw(st.integers(1, 6))
    scores = [draw(st.lists(st.integers(0, levels), min_size=len(y), max_size=len(y))) for _ in range(n_scores)]
    return (np.array(y), *[np.array(s, dtype=float) for s in scores])


@settings(max_examples=150, deadline=None)
@given(_tied_case())
def test_delong_variance_equals_brute_force_with_ties(case):
    y, s = case
    auc, var = _delong_brute(y, s)
    ci = ba.auc_ci(y, s)
    assert ci.estimate == pytest.approx(auc, abs=1e-12)
    assert ci.standard_error**2 == pytest.approx(var, abs=1e-10)
    assert ci.estimate == pytest.approx(roc_auc_score(y, s), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(_tied_case(n_scores=2))
def test_paired_delong_equals_brute_force_with_ties(case):
    y, a, b = case
    diff, var = _paired_brute(y, a, b)
    res = ba.compare_auc(y, a, b)
    assert res.difference == pytest.approx(diff, abs=1e-12)
    assert res.standard_error**2 == pytest.approx(max(var, 0.0), abs=1e-10)
    if diff != 0 and var > 1e-20:
        z = diff / np.sqrt(var)
        assert res.statistic == pytest.approx(z, rel=1e-8)
        assert res.pvalue == pytest.approx(2 * norm.sf(abs(z)), rel=1e-7, abs=1e-12)


def test_delong_continuous_scores_and_interval_arithmetic():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    s = rng.normal(size=300) + y
    auc, var = _delong_brute(y, s)
    ci = ba.auc_ci(y, s, confidence_level=0.9)
    z = norm.ppf(0.95)
    assert ci.standard_error == pytest.approx(np.sqrt(var), rel=1e-10)
    assert (ci.low, ci.high) == pytest.approx((auc - z * np.sqrt(var), auc + z * np.sqrt(var)), abs=1e-12)
    assert (ci.n_pos, ci.n_neg) == (int(y.sum()), int((1 - y).sum()))
    # the logit interval: symmetric on the logit scale, inside (0, 1)
    lg = ba.auc_ci(y, s, confidence_level=0.9, method="logit")
    half = z * np.sqrt(var) / (auc * (1 - auc))
    logit = np.log(auc / (1 - auc))
    assert (lg.low, lg.high) == pytest.approx((1 / (1 + np.exp(-(logit - half))), 1 / (1 + np.exp(-(logit + half)))))


def test_interval_is_clipped_and_labels_are_mapped():
    y = np.array(["b", "b", "a", "b", "a", "a"])
    s = [0.1, 0.3, 0.35, 0.4, 0.8, 0.9]
    ci = ba.auc_ci(y, s, pos_label="a")
    assert ci.high == 1.0 and 0 <= ci.low < ci.estimate
    assert ci.estimate == pytest.approx(roc_auc_score(y == "a", s))
    # perfect separation: SE 0, the interval is the point (plain and logit)
    for method in ("delong", "logit"):
        perfect = ba.auc_ci([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4], method=method)
        assert (perfect.estimate, perfect.low, perfect.high, perfect.standard_error) == (1.0, 1.0, 1.0, 0.0)


def test_undefined_cases_warn_and_return_nan():
    with pytest.warns(ba.UndefinedMetricWarning, match="only negatives"):
        ci = ba.auc_ci([0, 0, 0], [0.1, 0.2, 0.3])
    assert np.isnan([ci.estimate, ci.low, ci.high, ci.standard_error]).all()
    with pytest.warns(ba.UndefinedMetricWarning, match="only positives"):
        assert np.isnan(ba.auc_ci([1, 1], [0.1, 0.2], method="bootstrap", n_bootstrap=10).estimate)
    with pytest.warns(ba.UndefinedMetricWarning, match="two examples of each class"):
        ci = ba.auc_ci([0, 0, 1], [0.1, 0.3, 0.2])
    assert ci.estimate == 0.5 and np.isnan(ci.low)
    with pytest.warns(ba.UndefinedMetricWarning, match="two examples of each class"):
        res = ba.compare_auc([0, 0, 1], [0.1, 0.3, 0.2], [0.1, 0.2, 0.3])
    assert (res.auc_a, res.auc_b) == (0.5, 1.0) and np.isnan(res.pvalue)


def test_compare_identical_and_one_sided():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    s = rng.normal(size=100) + y
    same = ba.compare_auc(y, s, 2 * s + 1)  # same ranking
    assert (same.difference, same.standard_error, same.statistic, same.pvalue) == (0.0, 0.0, 0.0, 1.0)
    labels = np.where(y == 1, "yes", "no")
    other = s + rng.normal(size=100)
    assert ba.compare_auc(labels, s, other, pos_label="yes") == ba.compare_auc(y, s, other)
    flipped = ba.compare_auc(y, s, -s)
    assert flipped.difference == pytest.approx(2 * roc_auc_score(y, s) - 1)
    assert flipped.pvalue < 1e-6 and flipped.low <= flipped.difference <= flipped.high


def test_bad_input_is_one_line_naming_the_parameter():
    with pytest.raises(ValueError, match="`method` must be one of"):
        ba.auc_ci([0, 1], [0.1, 0.2], method="hanley")
    with pytest.raises(ValueError, match="`confidence_level`"):
        ba.auc_ci([0, 1], [0.1, 0.2], confidence_level=95)
    with pytest.raises(ValueError, match="same length"):
        ba.compare_auc([0, 1, 1], [0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ValueError, match="`n_bootstrap`"):
        ba.auc_ci([0, 1], [0.1, 0.2], method="bootstrap", n_bootstrap=0)
    with pytest.raises(ValueError, match="`random_state`"):
        ba.auc_ci([0, 1], [0.1, 0.2], method="bootstrap", random_state=np.random.default_rng())


# -- bootstrap ----------------------------------------------------------------------------------


def _binormal(n_pos, n_neg, d, seed):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos, dtype=int), np.zeros(n_neg, dtype=int)]
    return y, np.r_[rng.normal(d, 1, n_pos), rng.normal(0, 1, n_neg)]


def test_bootstrap_is_reproducible_and_seeded():
    y, s = _binormal(40, 60, 1.0, 3)
    a = ba.auc_ci(y, s, method="bootstrap", n_bootstrap=300, random_state=7)
    b = ba.auc_ci(y, s, method="bootstrap", n_bootstrap=300, random_state=7)
    c = ba.auc_ci(y, s, method="bootstrap", n_bootstrap=300, random_state=8)
    assert a == b and (a.low, a.high) != (c.low, c.high)
    assert a.low <= a.estimate <= a.high and a.method == "bootstrap"
    # replicates are the same however they are chunked: the first 100 of 300 are the 100 of 100
    _, inverse, _, _ = grid_counts(y, s)
    r300 = bootstrap_aucs(y, inverse, inverse.max() + 1, 300, 7)
    r100 = bootstrap_aucs(y, inverse, inverse.max() + 1, 100, 7)
    np.testing.assert_array_equal(r300[:100], r100)


def test_bootstrap_replicates_are_aucs_of_stratified_resamples():
    y, s = _binormal(30, 50, 0.8, 4)
    from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts

    counts = bootstrap_counts(y, 20, random_state=5)
    _, inverse, _, _ = grid_counts(y, s)
    reps = bootstrap_aucs(y, inverse, inverse.max() + 1, 20, 5)
    for r in range(20):  # brute force: materialise each resample
        idx = np.repeat(np.arange(len(y)), counts[r])
        assert reps[r] == pytest.approx(roc_auc_score(y[idx], s[idx]), abs=1e-12)


def test_bootstrap_agrees_with_a_numpy_loop_in_distribution():
    y, s = _binormal(100, 150, 1.0, 11)
    pos, neg = s[y == 1], s[y == 0]
    rng = np.random.default_rng(12345)
    loop = np.array(
        [
            roc_auc_score(np.r_[np.ones(100), np.zeros(150)], np.r_[rng.choice(pos, 100), rng.choice(neg, 150)])
            for _ in range(1000)
        ]
    )
    _, inverse, _, _ = grid_counts(y, s)
    ours = bootstrap_aucs(y, inverse, inverse.max() + 1, 2000, 0)  # vs 1,000 loop replicates
    assert ks_2samp(ours, loop).pvalue > 0.01
    assert np.std(ours) == pytest.approx(np.std(loop), rel=0.1)
    ci = ba.auc_ci(y, s, method="bootstrap", n_bootstrap=2000)
    assert ci.low == pytest.approx(np.quantile(loop, 0.025), abs=0.01)
    assert ci.high == pytest.approx(np.quantile(loop, 0.975), abs=0.01)
    # and the bootstrap SE agrees with DeLong's
    assert ci.standard_error == pytest.approx(ba.auc_ci(y, s).standard_error, rel=0.1)


def test_acceleration_equals_brute_force_stratified_jackknife():
    y, s = _binormal(25, 40, 1.2, 8)
    s = np.round(s, 1)  # ties
    loo = []
    for cls in (1, 0):  # the jackknife: leave each example of each class out
        idx = np.flatnonzero(y == cls)
        th = np.array([roc_auc_score(np.delete(y, i), np.delete(s, i)) for i in idx])
        u = (len(idx) - 1) * (th.mean() - th)
        loo.append((u, len(idx)))
    num = sum((u**3).sum() / n**3 for u, n in loo)
    den = sum((u**2).sum() / n**2 for u, n in loo)
    _, _, pos, neg = grid_counts(y, s)
    assert acceleration(pos, neg) == pytest.approx(num / (6 * den**1.5), rel=1e-9, abs=1e-14)


def test_bca_agrees_with_scipy_bootstrap():
    y, s = _binormal(60, 80, 1.5, 21)
    pos, neg = s[y == 1], s[y == 0]

    def auc(p, q, axis=-1):
        return (p[..., :, None] > q[..., None, :]).mean(axis=(-2, -1)) + 0.5 * (
            p[..., :, None] == q[..., None, :]
        ).mean(axis=(-2, -1))

    ref = scipy_bootstrap(
        (pos, neg),
        auc,
        method="BCa",
        n_resamples=4000,
        vectorized=True,
        random_state=np.random.default_rng(0),
        batch=200,
    ).confidence_interval
    ours = ba.auc_ci(y, s, method="bca", n_bootstrap=4000)
    assert ours.method == "bca"
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high), abs=0.012)
    perc = ba.auc_ci(y, s, method="bootstrap", n_bootstrap=4000)
    assert ours.standard_error == perc.standard_error  # the same replicates


def test_bca_falls_back_to_percentile_when_undefined():
    with pytest.warns(UserWarning, match="BCa interval is not defined"):
        ci = ba.auc_ci([0, 0, 0, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], method="bca", n_bootstrap=50)
    assert ci.method == "bootstrap" and (ci.low, ci.high) == (1.0, 1.0)


def test_delong_coverage_binormal_small():
    """A fast version of benchmarks/bench_intervals.py: 300 seeded binormal samples, n = 100 per class."""
    d, n = 1.0, 100
    truth = norm.cdf(d / np.sqrt(2))
    hits = 0
    for seed in range(300):
        y, s = _binormal(n, n, d, seed)
        ci = ba.auc_ci(y, s)
        hits += ci.low <= truth <= ci.high
    # 95% nominal; a binomial(300, 0.95) lies in [275, 295] with probability > 0.998
    assert 275 <= hits <= 295


# -- benchmark level -----------------------------------------------------------------------------


def test_auc_intervals_match_auc_ci_per_cell():
    bench = ba.load_demo()
    t = ba.auc_intervals(bench, confidence_level=0.9)
    assert len(t) == len(bench.models) * len(bench.datasets)
    pd.testing.assert_series_equal(t["auc"], ba.auc_table(bench)["auc"], check_exact=False, rtol=1e-12)
    for row in t.sample(6, random_state=0).itertuples():
        ci = ba.auc_ci(bench.labels(row.dataset), bench.scores(row.model, row.dataset), confidence_level=0.9)
        assert (row.auc, row.auc_low, row.auc_high, row.auc_se) == pytest.approx(
            (ci.estimate, ci.low, ci.high, ci.standard_error), rel=1e-10
        )
    with pytest.raises(ValueError, match="`bench` must be a Benchmark"):
        ba.auc_intervals(pd.DataFrame())


def test_auc_intervals_one_class_dataset_warns():
    with pytest.warns(UserWarning, match="single class"):
        bench = ba.load_benchmark(
            pd.DataFrame(
                {
                    "dataset": ["a"] * 4 + ["b"] * 3,
                    "label": [0, 1, 0, 1, 1, 1, 1],
                    "m": [0.1, 0.9, 0.3, 0.5, 0.2, 0.4, 0.6],
                }
            )
        )
    with pytest.warns(ba.UndefinedMetricWarning, match=r"\['b'\]"):
        t = ba.auc_intervals(bench)
    assert np.isfinite(t.loc[0, "auc_se"]) and t.loc[1, ["auc", "auc_low", "auc_se"]].isna().all()


# -- Friedman and Nemenyi ------------------------------------------------------------------------


def test_nemenyi_q_matches_demsar_table():
    demsar = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]  # Table 5(a), alpha = 0.05
    assert [nemenyi_q(k) for k in range(2, 11)] == pytest.approx(demsar, abs=1.5e-3)
    demsar_10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]  # Table 5(a), alpha = 0.10
    assert [nemenyi_q(k, 0.10) for k in range(2, 11)] == pytest.approx(demsar_10, abs=1.5e-3)


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 6), st.integers(2, 8), st.integers(0, 10_000))
def test_friedman_equals_scipy_with_ties(k, n_data, seed):
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, 4, size=(n_data, k)) / 4  # coarse values: many ties
    t = pd.DataFrame(
        [{"dataset": f"d{i}", "model": f"m{j}", "accuracy": vals[i, j]} for i in range(n_data) for j in range(k)]
    )
    if (vals == vals[:, :1]).all():
        with pytest.warns(ba.UndefinedMetricWarning):
            res = ba.friedman_test(t)
        assert np.isnan(res.statistic)
        return
    res = ba.friedman_test(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = friedmanchisquare(*vals.T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
    # average ranks, 1 = best, ties averaged; by hand
    ranks = np.array([[1 + (row > v).sum() + 0.5 * ((row == v).sum() - 1) for v in row] for row in vals])
    expected = pd.Series(ranks.mean(axis=0), index=[f"m{j}" for j in range(k)])
    pd.testing.assert_series_equal(res.average_ranks.sort_index(), expected.sort_index(), check_names=False)
    assert res.critical_difference == pytest.approx(nemenyi_q(k) * np.sqrt(k * (k + 1) / (6 * n_data)))
    # groups = maximal windows of the sorted ranks spanning less than the CD (brute force over all windows)
    r = res.average_ranks.to_numpy()
    windows = [(i, j) for i in range(k) for j in range(i + 1, k) if r[j] - r[i] < res.critical_difference]
    maximal = [w for w in windows if not any(o != w and o[0] <= w[0] and w[1] <= o[1] for o in windows)]
    names = list(res.average_ranks.index)
    assert res.groups() == [tuple(names[i : j + 1]) for i, j in sorted(maximal)]
    # Iman-Davenport
    if np.isfinite(res.f_statistic):
        assert res.f_statistic == pytest.approx((n_data - 1) * res.statistic / (n_data * (k - 1) - res.statistic))


def test_friedman_critical_difference_and_groups():
    """Demšar (2006), sec. 3.2.2: k = 4 classifiers on N = 14 data sets give CD = 1.25 (alpha = 0.05)."""
    rng = np.random.default_rng(0)
    vals = rng.normal(size=(14, 4)) + np.array([0.0, 0.8, 0.2, 1.0])
    models = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
    t = pd.DataFrame([{"dataset": i, "model": m, "auc": vals[i, j]} for i in range(14) for j, m in enumerate(models)])
    res = ba.friedman_test(t, value="auc")
    assert res.critical_difference == pytest.approx(1.25, abs=0.005)
    # groups = maximal windows of the sorted ranks spanning less than the CD (brute force over all windows)
    r = res.average_ranks.to_numpy()
    windows = [(i, j) for i in range(4) for j in range(i + 1, 4) if r[j] - r[i] < res.critical_difference]
    maximal = [w for w in windows if not any(o != w and o[0] <= w[0] and w[1] <= o[1] for o in windows)]
    names = list(res.average_ranks.index)
    assert res.groups() == [tuple(names[i : j + 1]) for i, j in sorted(maximal)]
    # lower is better mirrors the ranks
    low = ba.friedman_test(t, value="auc", higher_is_better=False)
    assert low.average_ranks[models].to_numpy() == pytest.approx(5 - res.average_ranks[models].to_numpy())
    assert low.statistic == pytest.approx(res.statistic)


def test_friedman_on_expected_accuracy_results_and_errors():
    res = ba.expected_accuracy(ba.load_demo(), protocol="xdomain", method="logistic")
    acc = ba.friedman_test(res)
    auc = ba.friedman_test(res, value="auc")
    assert acc.n_models == auc.n_models == res["model"].nunique()
    assert set(acc.average_ranks.index) == set(res["model"])
    assert acc.average_ranks.is_monotonic_increasing
    assert "Friedman" in acc._repr_html_() and "FriedmanResult(" in repr(acc)
    grid = ba.expected_accuracy_grid(ba.load_demo(), protocols=["xdomain"], methods=["logistic", "stump"])
    with pytest.raises(ValueError, match="protocol x method"):
        ba.friedman_test(grid)
    with pytest.raises(ValueError, match="`value` must be a column"):
        ba.friedman_test(res, value="nope")
    with pytest.raises(ValueError, match="one row per"):
        ba.friedman_test(pd.concat([res, res]))
    nan = res.copy()
    nan.loc[0, "accuracy"] = np.nan
    with pytest.warns(UserWarning, match="left out"):
        assert ba.friedman_test(nan).n_datasets == acc.n_datasets - 1


def test_reprs_are_concise():
    ci = ba.auc_ci([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.2, 0.7])
    assert repr(ci).startswith("AUCInterval(estimate=") and len(repr(ci)) < 200
    assert "<table>" in ci._repr_html_()
    cmp_ = ba.compare_auc([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.2, 0.7], [0.2, 0.1, 0.3, 0.4, 0.5, 0.6])
    assert repr(cmp_).startswith("AUCComparison(") and "<table>" in cmp_._repr_html_()


# -- the critical-difference diagram -------------------------------------------------------------


def test_critical_difference_display():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from beyondauc.plots import CriticalDifferenceDisplay

    res = ba.expected_accuracy(ba.load_demo(), protocol="xdomain", method="logistic")
    fig, ax = plt.subplots()
    disp = CriticalDifferenceDisplay.from_results(res, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig and disp.labels == ["AUC", "accuracy"]
    by_auc, by_acc = ba.friedman_test(res, value="auc"), ba.friedman_test(res)
    assert disp.critical_difference == pytest.approx([by_auc.critical_difference, by_acc.critical_difference])
    texts = [t.get_text() for t in ax.texts]
    for r in (by_auc, by_acc):  # every model labelled with its average rank, in each row
        for m, v in r.average_ranks.items():
            assert f"{m} ({v:.2f})" in texts
    # thick lines are the group bars: as many as both results' groups
    bars = [ln for ln in ax.lines if ln.get_linewidth() == 3.5]
    assert len(bars) == len(by_auc.groups()) + len(by_acc.groups())
    plt.close(fig)


def test_critical_difference_display_literal_names_and_errors():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from beyondauc.plots import CriticalDifferenceDisplay

    ranks = pd.Series({"$x$ model": 1.2, "b_c": 2.0, "c": 2.8}, name="accuracy")
    disp = CriticalDifferenceDisplay(ranks, 0.9).plot()
    label = next(t for t in disp.ax_.texts if t.get_text().startswith("$x$"))
    assert label.get_parse_math() is False
    disp.figure_.canvas.draw()  # a `$` in a name must not break drawing
    assert [b.get_xdata().tolist() for b in disp.ax_.lines if b.get_linewidth() == 3.5] == [
        pytest.approx([1.17, 2.03]),
        pytest.approx([1.97, 2.83]),
    ]
    plt.close(disp.figure_)
    with pytest.raises(ValueError, match="`critical_difference` must give one value per ranking"):
        CriticalDifferenceDisplay([ranks, ranks], [1.0])
    with pytest.raises(ValueError, match="FriedmanResult"):
        CriticalDifferenceDisplay.from_friedman(ranks)
