"""The permutation null of drift and W, against brute force: every assignment of the cohort labels
enumerated on tiny cohorts (the null's exact law), and explicit row permutations with numpy's
``permutation``; then its calibration: with no drift the drift finding fires in at most 5% of
seeded benchmarks (plus Monte Carlo slack), with a real shift in most."""

from itertools import combinations, product

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from beyondauc.evaluation import drift_findings, summary
from beyondauc.metrics.diagnostics import null as diagnostics_null
from beyondauc.metrics.diagnostics.benchmark import diagnostics_intervals
from beyondauc.metrics.diagnostics.cohorts import sens_spec_drift, wasserstein_matrix
from beyondauc.metrics.diagnostics.null import NullDesign, permutation_null, permutation_pvalue, permutation_replicates

# tiny cohorts with ties inside and across them
YV = np.array([0, 0, 0, 1, 1])
SV = np.array([0.1, 0.3, 0.3, 0.5, 0.9])
YT = np.array([0, 0, 1, 1, 1])
ST = np.array([0.2, 0.4, 0.3, 0.6, 0.9])


def _numbers(yv, sv, yt, st, p=2):
    """Drift and W by the point-estimate functions (NaN where a cohort lacks a class)."""
    if len(set(yv.tolist())) < 2 or len(set(yt.tolist())) < 2:
        return np.nan, np.nan
    return (sens_spec_drift(yv, sv, yt, st).score, wasserstein_matrix(yv, sv, yt, st, p=p).score)


def _exact_law(by_class, p=2):
    """Drift and W of every equally likely assignment of the pooled rows to V (and the rest to T)."""
    y, s = np.concatenate([YV, YT]), np.concatenate([SV, ST])
    if by_class:
        neg, pos = np.flatnonzero(y == 0), np.flatnonzero(y == 1)
        picks = [
            np.r_[a, b]
            for a, b in product(combinations(neg, int((YV == 0).sum())), combinations(pos, int((YV == 1).sum())))
        ]
    else:
        picks = [np.array(c) for c in combinations(range(len(y)), len(YV))]
    rows = []
    for v in picks:  # brute force: one assignment at a time
        t = np.setdiff1d(np.arange(len(y)), v)
        rows.append(_numbers(y[v], s[v], y[t], s[t], p))
    return pd.DataFrame(rows, columns=["drift", "wasserstein"])


def _dkw(n, alpha=1e-6):
    """Dvoretzky-Kiefer-Wolfowitz: sup |empirical CDF - CDF| exceeds this with probability <= alpha."""
    return np.sqrt(np.log(2 / alpha) / (2 * n))


@pytest.mark.parametrize("by_class", [True, False])
@pytest.mark.parametrize("p", [1, 2])
def test_the_null_has_the_exact_law_of_every_assignment(by_class, p):
    exact = _exact_law(by_class, p)
    B = 20_000
    null = permutation_replicates(YV, SV, YT, ST, n_permutations=B, p=p, random_state=3, design=NullDesign(by_class))
    for name in ("drift", "wasserstein"):
        law = exact[name].to_numpy()
        got = null[name].to_numpy()
        # undefined (a cohort without a class) as often as in the exact law, NaN counted as +inf
        law, got = np.where(np.isnan(law), np.inf, law), np.where(np.isnan(got), np.inf, got)
        support = np.unique(law)
        # every permutation's number is one the brute force gives (the kernels match it exactly)
        nearest = support[np.clip(np.searchsorted(support, got), 0, len(support) - 1)]
        below = support[np.clip(np.searchsorted(support, got) - 1, 0, len(support) - 1)]
        close = np.isclose(got, nearest, rtol=1e-12, atol=1e-15) | np.isclose(got, below, rtol=1e-12, atol=1e-15)
        assert close.all(), name
        # and as often: the empirical CDF within the DKW band of the exact CDF at every support point
        cdf_exact = np.searchsorted(np.sort(law), support + 1e-12 * np.abs(support), side="right") / len(law)
        cdf_mc = np.searchsorted(np.sort(got), support + 1e-12 * np.abs(support), side="right") / len(got)
        assert np.max(np.abs(cdf_mc - cdf_exact)) < _dkw(B), name


def test_the_pvalues_match_the_exact_permutation_pvalue():
    exact = _exact_law(True)
    obs_drift, obs_w = _numbers(YV, SV, YT, ST)
    B = 20_000
    res = permutation_null(YV, SV, YT, ST, n_permutations=B, random_state=5)
    assert res.drift == pytest.approx(obs_drift, rel=1e-12) and res.wasserstein == pytest.approx(obs_w, rel=1e-12)
    p_drift = np.mean(exact["drift"] >= obs_drift - 1e-12)  # the law's tail, the ties counted in
    p_w = np.mean(exact["wasserstein"] <= obs_w + 1e-12)
    assert abs(res.drift_pvalue - p_drift) < _dkw(B)
    assert abs(res.wasserstein_pvalue - p_w) < _dkw(B)
    assert res.n_permutations == B and res.null.shape == (B, 2)


def _brute_force_null(yv, sv, yt, st, B, seed, by_class=True):
    """Drift and W of B explicit permutations of the rows' cohort labels (numpy's permutation)."""
    rng = np.random.default_rng(seed)
    y, s = np.concatenate([yv, yt]), np.concatenate([sv, st])
    cohort = np.repeat([0, 1], [len(yv), len(yt)])
    groups = [np.flatnonzero(y == c) for c in (0, 1)] if by_class else [np.arange(len(y))]
    rows = []
    for _ in range(B):  # brute force: one permutation at a time
        c = cohort.copy()
        for g in groups:
            c[g] = rng.permutation(cohort[g])
        rows.append(_numbers(y[c == 0], s[c == 0], y[c == 1], s[c == 1]))
    return pd.DataFrame(rows, columns=["drift", "wasserstein"])


@pytest.mark.parametrize("by_class", [True, False])
def test_the_null_matches_explicit_row_permutations(by_class):
    rng = np.random.default_rng(11)
    yv, yt = rng.integers(0, 2, 40), rng.integers(0, 2, 30)
    sv, st = np.round(rng.normal(yv, 1.0), 1), np.round(rng.normal(yt, 1.0) + 0.3, 1)  # ties
    B = 1500
    brute = _brute_force_null(yv, sv, yt, st, B, seed=1, by_class=by_class)
    null = permutation_replicates(yv, sv, yt, st, n_permutations=B, random_state=1, design=NullDesign(by_class))
    for name in ("drift", "wasserstein"):
        a, b = brute[name].dropna().to_numpy(), null[name].dropna().to_numpy()
        se = np.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 5 * se, name
        for q in (0.1, 0.5, 0.9, 0.95):  # quantiles within a few of their Monte Carlo standard errors
            dens = np.mean(np.abs(a - np.quantile(a, q)) < a.std() / 4) / (a.std() / 2)
            se_q = np.sqrt(q * (1 - q) * (1 / len(a) + 1 / len(b))) / dens
            assert abs(np.quantile(a, q) - np.quantile(b, q)) < 5 * se_q, (name, q)
        assert stats.ks_2samp(a, b).pvalue > 1e-4, name


def test_permutation_pvalue_counts_the_observed_as_one_more_permutation():
    null = np.array([0.3, 0.1, np.nan, 0.5, 0.3])
    assert permutation_pvalue(null, 0.3) == (1 + 3) / (4 + 1)
    assert permutation_pvalue(null, 0.3, alternative="less") == (1 + 3) / (4 + 1)
    assert permutation_pvalue(null, 0.6) == 1 / 5 and permutation_pvalue(null, 0.0, alternative="less") == 1 / 5
    assert np.isnan(permutation_pvalue(null, np.nan)) and np.isnan(permutation_pvalue([np.nan], 0.2))


def test_the_permutations_depend_on_the_seed_only(monkeypatch):
    a = permutation_replicates(YV, SV, YT, ST, n_permutations=300, random_state=7)
    pd.testing.assert_frame_equal(a, permutation_replicates(YV, SV, YT, ST, n_permutations=300, random_state=7))
    assert not a.equals(permutation_replicates(YV, SV, YT, ST, n_permutations=300, random_state=8))
    monkeypatch.setattr(diagnostics_null, "_NULL_CELLS", 40)  # chunks of two permutations: the same draws
    pd.testing.assert_frame_equal(a, permutation_replicates(YV, SV, YT, ST, n_permutations=300, random_state=7))
    # the first permutations do not depend on how many are drawn
    pd.testing.assert_frame_equal(
        a.iloc[:100], permutation_replicates(YV, SV, YT, ST, n_permutations=100, random_state=7)
    )


def test_bad_input_is_a_one_line_error():
    with pytest.raises(ValueError, match="`n_permutations` must be an int >= 1"):
        permutation_null(YV, SV, YT, ST, n_permutations=0)
    with pytest.raises(ValueError, match="`s_test`"):
        permutation_null(YV, SV, YT, ST[:3])


# -- calibration: how often the drift finding fires --------------------------------------------

N_BENCHMARKS, N_VAL, N_TEST = 400, 20, 20
# a binomial 99.9% upper bound on the share of 400 benchmarks that fire when the true rate is 5%
SLACK = stats.binom.ppf(0.999, N_BENCHMARKS, 0.05) / N_BENCHMARKS


def _finding_rate(shift, seed):
    """Share of seeded benchmarks (V and T of N_VAL / N_TEST examples) whose drift finding fires."""
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(N_BENCHMARKS):  # the benchmarks, each one vectorised inside
        yv, yt = np.repeat([0, 1], N_VAL // 2), np.repeat([0, 1], N_TEST // 2)
        sv, st = rng.normal(1.5 * yv), rng.normal(1.5 * yt) + shift
        ci = diagnostics_intervals(yv, sv, yt, st, n_bootstrap=100, random_state=b)
        null = permutation_null(yv, sv, yt, st, n_permutations=99, random_state=b)
        row = {"model": "m", "dataset": f"d{b}", "cohorts": "split", **null.to_dict()}
        for name in ("drift", "wasserstein"):
            row.update(
                {
                    name: ci.loc[name, "estimate"],
                    f"{name}_low": ci.loc[name, "low"],
                    f"{name}_high": ci.loc[name, "high"],
                }
            )
        rows.append(row)
    table = pd.DataFrame(rows)
    judged = drift_findings.drift_judged(table, 0.05)
    fired = {d for j, rule, d, *_ in judged if j == "flag" and rule in ("cohort drift", "Wasserstein")}
    past = np.mean(table["drift"] >= summary.THRESHOLDS["drift"])
    return len(fired) / N_BENCHMARKS, past


@pytest.mark.filterwarnings("ignore::beyondauc.utils.validation.UndefinedMetricWarning")
def test_without_drift_the_finding_fires_rarely_and_with_a_shift_mostly():
    rate, past = _finding_rate(0.0, seed=2024)
    # the threshold alone would fire often: sampling noise puts many drifts of 20 + 20 examples past it
    assert past > 0.2
    assert rate <= SLACK, (rate, SLACK)
    shifted, _ = _finding_rate(1.5, seed=2025)
    assert shifted >= 0.8, shifted
    print(f"\ndrift finding fires: no drift {rate:.4f} (threshold alone {past:.3f}), shift 1.5 sd {shifted:.4f}")


# -- in the cohort diagnostics ----------------------------------------------------------------


def test_cohort_diagnostics_carry_the_null_of_their_cohorts_seeded_as_the_bootstrap():
    import beyondauc as ba
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed

    bench = ba.load_demo()
    d = ba.cohort_diagnostics(bench, "knn", "iris_versicolor", n_repeats=2, n_permutations=199, random_state=4)
    seed = dataset_seed(4, list(bench.datasets).index("iris_versicolor"))
    ref = permutation_null(d.y_val, d.s_val, d.y_test, d.s_test, n_permutations=199, random_state=seed)
    row = d.to_dict()
    assert (row["drift_pvalue"], row["wasserstein_pvalue"]) == (ref.drift_pvalue, ref.wasserstein_pvalue)
    assert ref.drift == pytest.approx(d.drift.score, rel=1e-12)
    assert "drift_pvalue" not in ba.cohort_diagnostics(bench, "knn", "iris_versicolor", n_repeats=2).to_dict()


def test_answers_shuffle_the_whole_pool_as_their_bootstrap_resamples_it():
    import beyondauc as ba
    from beyondauc.metrics.uncertainty.bootstrap import dataset_seed

    bench = ba.load_demo(kind="answers")
    model, dataset = bench.models[0], bench.datasets[0]
    d = ba.cohort_diagnostics(bench, model, dataset, n_repeats=2, n_permutations=99)
    seed = dataset_seed(0, 0)
    pooled = permutation_null(
        d.y_val, d.s_val, d.y_test, d.s_test, n_permutations=99, random_state=seed, design=NullDesign(by_class=False)
    )
    assert d.drift_pvalue == pooled.drift_pvalue and d.wasserstein_pvalue == pooled.wasserstein_pvalue


def test_the_null_answers_the_question_an_interval_of_drift_cannot():
    import warnings

    import beyondauc as ba

    bench = ba.load_demo()  # logreg on digits_even: drift about 0, every replicate above it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        without = ba.cohort_diagnostics(bench, "logreg", "digits_even", n_repeats=2, n_bootstrap=200)
    assert any("no bootstrap interval contains the estimate of drift" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = ba.cohort_diagnostics(bench, "logreg", "digits_even", n_repeats=2, n_bootstrap=200, n_permutations=99)
    assert not [w for w in caught if "no bootstrap interval contains" in str(w.message)]
    # the interval is still not shown, and the table still says why
    assert np.isnan(d.intervals["drift"][0]) and d.interval_note == without.interval_note != ""
    assert d.drift_pvalue > 0.05
