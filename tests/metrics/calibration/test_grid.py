"""Tests of :mod:`beyondauc.metrics.calibration.grid`: expected accuracy and ScoreCalibrator.

The fast implementation (scores sorted once, vectorised fits on the distinct
scores) is checked against ``tests/helpers/reference_impl.py``, which fits one
scikit-learn estimator per cell.

The default calibrators are scale-free: logistic is
``make_pipeline(StandardScaler(), LogisticRegression())`` and the stump
scikit-learn's split search without float32 rounding
(``reference_impl.ScaleFreeStump``); ``reference="opitz2024"`` fits
scikit-learn's estimators on the raw scores.

Two facts shape the exact comparisons, both computed below rather than assumed:

* scikit-learn's ``LogisticRegression`` (lbfgs) stops before the optimum.
  With the default ``tol=1e-4`` a decision may differ by an example or two;
  with ``tol=1e-10`` it is converged on standardised scores.  (On raw scores
  around 1e6 -- the ``opitz2024`` mode -- lbfgs stops after a few iterations
  far from its optimum whatever the tolerance:
  :func:`test_raw_lbfgs_misses_its_optimum_on_badly_scaled_scores`.)
* Where the calibrated decision is an exact tie in exact arithmetic (a
  class-balanced leaf or isotonic block at exactly 0.5, a logistic decision
  value of exactly 0), scikit-learn's answer is decided by floating-point
  rounding of its own summation order, and so is the package's.  Only there
  may they differ: :func:`fit_ties` finds those examples independently (exact
  rational arithmetic for isotonic and stump), and a cell may differ by no
  more than its tied evaluation examples.
"""

from __future__ import annotations

import functools
import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal
from scipy.special import expit
from scipy.stats import rankdata
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
    roc_auc_score,
)
from sklearn.model_selection import ShuffleSplit
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight
from threadpoolctl import threadpool_limits

import beyondauc
from beyondauc import (
    METHODS,
    PROTOCOLS,
    ScoreCalibrator,
    UndefinedMetricWarning,
    expected_accuracy,
    expected_accuracy_grid,
    load_benchmark,
)
from helpers.reference_impl import ScaleFreeStump, fit_predict, reference_expected_accuracy, standardized_logistic

N_REPEATS = 5  # indata repeats in the reference comparisons (the reference refits every repeat)
CLASS_WEIGHTS = (None, "balanced")


# -- generated benchmarks ---------------------------------------------------------
# Each returns (DataFrame, domains).  Small, seeded, and each stresses one thing.


def _signal(rng, y, strength):
    """A noisy score that is higher for positives."""
    return strength * (2 * y - 1) + rng.normal(size=len(y))


def _labels(rng, n, rate):
    return (rng.random(n) < rate).astype(int)


def bench_scales(seed=0):
    """(a) Continuous scores on very different scales: probabilities, logits, NLLs near -1000, values near 1e6, 1e-7."""
    rng = np.random.default_rng(seed)
    parts = []
    for i, (d, n, rate) in enumerate([("a", 120, 0.5), ("b", 80, 0.3), ("c", 200, 0.6), ("d", 60, 0.45)]):
        y = _labels(rng, n, rate)
        z = _signal(rng, y, 0.8 + 0.2 * i) + 0.3 * i  # a shift per dataset
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "prob": expit(z),
                    "logit": 1.7 * z - 0.4,
                    "nll": -1000 + 10 * _signal(rng, y, 0.5),
                    "big": 1e6 + 1e3 * _signal(rng, y, 0.7),  # also collapses in float32 (spacing 0.0625)
                    # distinct in float32 but steps of 3e-8: a tree splits only between values > 1e-7 apart
                    "micro": np.round(expit(_signal(rng, y, 0.8)) * 20) * 3e-8,
                }
            )
        )
    return pd.concat(parts, ignore_index=True), {"a": "news", "b": "news", "c": "chat", "d": "chat"}


def bench_ties(seed=1):
    """(b) Heavy ties: scores rounded to one decimal, integers 0..4, a BLEU-like score with many exact zeros."""
    rng = np.random.default_rng(seed)
    parts = []
    for d, n, rate in [("a", 100, 0.5), ("b", 150, 0.35), ("c", 70, 0.6), ("d", 40, 0.5)]:
        y = _labels(rng, n, rate)
        z = _signal(rng, y, 0.9)
        zero = rng.random(n) < 0.55 - 0.3 * y
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "round1": np.round(expit(z), 1),
                    "int04": np.clip(np.round(z + 2), 0, 4),
                    "bleu": np.where(zero, 0.0, np.round(rng.random(n) * (0.5 + 0.3 * y), 3)),
                }
            )
        )
    return pd.concat(parts, ignore_index=True), {"a": "x", "b": "x", "c": "y", "d": "y"}


def bench_constant(seed=2):
    """(c) A model whose score is the same on every example, next to an informative one."""
    rng = np.random.default_rng(seed)
    parts = []
    for d, n, rate in [("a", 60, 0.5), ("b", 90, 0.3), ("c", 50, 0.7)]:
        y = _labels(rng, n, rate)
        parts.append(pd.DataFrame({"dataset": d, "label": y, "const": 0.7, "signal": _signal(rng, y, 1.0)}))
    return pd.concat(parts, ignore_index=True), {"a": "x", "b": "y", "c": "y"}


def bench_skewed(seed=3):
    """(d) About 5% positives; dataset "rare" has 20 rows and one positive, so an 80% split can be all negative."""
    rng = np.random.default_rng(seed)
    parts = []
    for d, n in [("a", 300), ("b", 200), ("rare", 20), ("c", 100)]:
        y = _labels(rng, n, 0.05)
        if d == "rare":
            y = np.zeros(n, dtype=int)
            y[rng.integers(n)] = 1
        y[0] = max(y[0], int(y.sum() == 0))
        parts.append(
            pd.DataFrame(
                {"dataset": d, "label": y, "s1": _signal(rng, y, 1.5), "s2": np.round(_signal(rng, y, 0.7), 1)}
            )
        )
    return pd.concat(parts, ignore_index=True), {"a": "x", "b": "x", "rare": "y", "c": "y"}


def bench_lone_domain(seed=4):
    """(e) Domain "y" holds exactly one dataset: indomain falls back to indata for it."""
    rng = np.random.default_rng(seed)
    parts = []
    for d, n, rate in [("a", 80, 0.5), ("b", 60, 0.4), ("lone", 50, 0.5)]:
        y = _labels(rng, n, rate)
        parts.append(
            pd.DataFrame(
                {"dataset": d, "label": y, "m1": _signal(rng, y, 1.0), "m2": np.round(_signal(rng, y, 0.5), 1)}
            )
        )
    return pd.concat(parts, ignore_index=True), {"a": "x", "b": "x", "lone": "y"}


def bench_tiny(seed=5):
    """(f) Datasets of 3, 4 and 5 rows (indata evaluates one row per repeat) next to a normal one."""
    rng = np.random.default_rng(seed)
    parts = []
    for d, n in [("t3", 3), ("t4", 4), ("t5", 5), ("big", 60)]:
        y = np.resize([0, 1], n)
        rng.shuffle(y)
        parts.append(
            pd.DataFrame(
                {"dataset": d, "label": y, "m1": _signal(rng, y, 1.0), "m2": rng.integers(0, 3, n).astype(float)}
            )
        )
    return pd.concat(parts, ignore_index=True), {"t3": "x", "t4": "x", "t5": "y", "big": "y"}


BENCHES = {
    "scales": bench_scales,
    "ties": bench_ties,
    "constant": bench_constant,
    "skewed": bench_skewed,
    "lone_domain": bench_lone_domain,
    "tiny": bench_tiny,
}


def load_quiet(df, domains=None, **kw):
    """load_benchmark without its single-class UserWarning (tested in tests/data/test_benchmark.py)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load_benchmark(df, domains=domains, **kw)


@functools.cache
def get_bench(name):
    df, domains = BENCHES[name]()
    return df, domains, load_quiet(df, domains)


def run(bench, **kw):
    """expected_accuracy without the single-class warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return expected_accuracy(bench, **kw)


# -- reference ----------------------------------------------------------------------


class RawPenaltyLogisticRegression:
    """``LogisticRegression(C=1)`` on *raw* scores (the opitz2024 objective), solved on standardised scores.

    With ``x' = (x - mu) / sd`` and ``coef' = coef * sd`` the penalty
    ``coef**2 / 2`` is ``coef'**2 / (2 sd**2)``: ``C = sd**2`` on ``x'`` is the
    same objective, which lbfgs can solve when the raw scale defeats it.
    """

    def __init__(self, class_weight=None, tol=1e-4, max_iter=100):
        self.kw = dict(class_weight=class_weight, tol=tol, max_iter=max_iter)

    def fit(self, X, y):
        x = np.asarray(X, dtype=float)[:, 0]
        self.mu_, self.sd_ = x.mean(), x.std() or 1.0
        self.est_ = LogisticRegression(C=self.sd_**2, **self.kw).fit(((x - self.mu_) / self.sd_)[:, None], y)
        return self

    def predict(self, X):
        return self.est_.predict((np.asarray(X, dtype=float) - self.mu_) / self.sd_)

    def raw_params(self):
        b1 = self.est_.coef_[0, 0] / self.sd_
        return self.est_.intercept_[0] - b1 * self.mu_, b1


def reference(df, domains, *, protocol, method, class_weight, logistic_tol=None):
    return reference_expected_accuracy(
        df,
        domains,
        protocol=protocol,
        method=method,
        class_weight=class_weight,
        n_repeats=N_REPEATS,
        random_state=0,
        logistic_tol=logistic_tol,
    )


@functools.cache
def bench_reference(name, protocol, method, class_weight, logistic_tol):
    """Reference frame of a named benchmark: one scikit-learn fit per cell (logistic: the standardised pipeline)."""
    df, domains, _ = get_bench(name)
    return reference(
        df, domains, protocol=protocol, method=method, class_weight=class_weight, logistic_tol=logistic_tol
    )


# -- exact ties ---------------------------------------------------------------------


def _exact_weights(y, class_weight):
    if class_weight is None:
        return [Fraction(1)] * len(y)
    n, n_pos = len(y), int(np.sum(y))
    w = {1: Fraction(n, 2 * n_pos), 0: Fraction(n, 2 * (n - n_pos))}  # scikit-learn's n / (2 n_class)
    return [w[int(v)] for v in y]


def _pava(values, weights):
    blocks = []  # [mean, weight, count]
    for v, w in zip(values, weights):
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] >= blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    return [v for v, _, c in blocks for _ in range(c)]


def _isotonic_ties(s_cal, y_cal, s_ev, class_weight):
    """Evaluation examples whose exact isotonic value is exactly 0.5."""
    xs = sorted(set(s_cal.tolist()))
    W = dict.fromkeys(xs, Fraction(0))
    P = dict.fromkeys(xs, Fraction(0))
    for x, y, w in zip(s_cal.tolist(), y_cal, _exact_weights(y_cal, class_weight)):
        W[x] += w
        P[x] += w * int(y)
    fit = _pava([P[x] / W[x] for x in xs], [W[x] for x in xs])
    X = [Fraction(x) for x in xs]
    out = []
    for t in s_ev.tolist():
        t = min(max(Fraction(t), X[0]), X[-1])
        k = next(i for i in range(len(X)) if X[i] >= t)
        v = fit[k] if X[k] == t else fit[k - 1] + (fit[k] - fit[k - 1]) * (t - X[k - 1]) / (X[k] - X[k - 1])
        out.append(v == Fraction(1, 2))
    return np.array(out, dtype=bool)


def _stump_ties(s_cal, y_cal, s_ev, class_weight, float32=False):
    """Evaluation examples a depth-1 Gini tree decides by an exact tie.

    Exact Gini over the splits considered -- between any two distinct scores, or with
    ``float32`` those scikit-learn considers on raw scores (float32 values ``lo < hi``
    with ``hi > lo + 1e-7`` evaluated in float32, as its splitter does): a tie between
    best splits that disagree on an example, or a leaf whose weighted classes are
    exactly equal.
    """

    def as_tree_sees(s):
        return np.asarray(s, dtype=np.float32).astype(np.float64) if float32 else np.asarray(s, dtype=np.float64)

    x32 = as_tree_sees(s_cal)
    xs = sorted(set(x32.tolist()))
    P = dict.fromkeys(xs, Fraction(0))
    N = dict.fromkeys(xs, Fraction(0))
    for x, y, w in zip(x32.tolist(), y_cal, _exact_weights(y_cal, class_weight)):
        (P if y else N)[x] += w
    tp, tn = sum(P.values()), sum(N.values())
    ev = as_tree_sees(s_ev)

    def leaf(p, n):
        return -1 if p == n else int(p > n)

    cands, cp, cn = [], Fraction(0), Fraction(0)
    for lo, hi in zip(xs[:-1], xs[1:]):
        cp += P[lo]
        cn += N[lo]
        if not float32 or np.float32(hi) > np.float32(lo) + np.float32(1e-7):  # float32 sum, as in the Cython splitter
            rp, rn = tp - cp, tn - cn
            gain = (cp * cp + cn * cn) / (cp + cn) + (rp * rp + rn * rn) / (rp + rn)
            cands.append((gain, lo, hi, leaf(cp, cn), leaf(rp, rn)))
    if not cands:
        return np.full(len(ev), leaf(tp, tn) == -1)
    best = max(c[0] for c in cands)
    preds = []
    for gain, lo, hi, lc, rc in cands:
        if gain == best:
            thr = lo / 2.0 + hi / 2.0  # scikit-learn's mid-point; both implementations round it alike
            thr = lo if (thr == hi or np.isinf(thr)) else thr
            preds.append(np.where(ev <= thr, lc, rc))
    preds = np.array(preds)
    return (preds == -1).any(axis=0) | (preds != preds[0]).any(axis=0)


def _logistic_ties(s_cal, y_cal, s_ev, class_weight, rel=1e-6):
    """Evaluation examples whose converged decision value is zero to solver precision.

    No exact arithmetic exists for the logistic optimum; a decision value
    within ``rel`` of zero (relative to its terms) cannot be decided by any
    iterative solver's answer, scikit-learn's included.
    """
    est = standardized_logistic(class_weight, tol=1e-12, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(s_cal[:, None], y_cal)
    scaler, lr = est[0], est[-1]
    b0, b1 = lr.intercept_[0], lr.coef_[0, 0]
    xs = (s_ev - scaler.mean_[0]) / scaler.scale_[0]
    return np.abs(b0 + b1 * xs) <= rel * (1 + abs(b0) + np.abs(b1 * xs))


def fit_ties(method, s_cal, y_cal, s_ev, class_weight, *, reference=None):
    """Boolean mask of evaluation examples whose decision is an exact tie."""
    s_cal, s_ev, y_cal = np.asarray(s_cal, float), np.asarray(s_ev, float), np.asarray(y_cal, int)
    if len(np.unique(y_cal)) < 2:
        return np.zeros(len(s_ev), dtype=bool)
    if method == "stump":
        return _stump_ties(s_cal, y_cal, s_ev, class_weight, float32=reference == "opitz2024")
    f = {"isotonic": _isotonic_ties, "logistic": _logistic_ties}[method]
    return f(s_cal, y_cal, s_ev, class_weight)


def cell_tie_fraction(
    df, domains, *, protocol, method, class_weight, dataset, model, n_repeats=N_REPEATS, reference=None
):
    """Fraction of a cell's evaluation examples decided by an exact tie (mean over indata repeats)."""
    datasets = list(dict.fromkeys(df["dataset"]))
    in_d = (df["dataset"] == dataset).to_numpy()
    s, y = df[model].to_numpy(float), df["label"].to_numpy().astype(int)
    same = [o for o in datasets if o != dataset and domains.get(o) == domains.get(dataset)]
    if protocol == "indata" or (protocol == "indomain" and not same):
        sd, yd = s[in_d], y[in_d]
        splits = ShuffleSplit(n_splits=n_repeats, test_size=0.2, random_state=0).split(sd[:, None])
        return float(
            np.mean(
                [
                    fit_ties(method, sd[tr], yd[tr], sd[te], class_weight, reference=reference).mean()
                    for tr, te in splits
                ]
            )
        )
    dom = df["dataset"].map(domains).to_numpy()
    cal, ev = {
        "xdomain": (~in_d, in_d),
        "outdomain": (dom != domains.get(dataset), in_d),
        "indomain": (df["dataset"].isin(same).to_numpy(), in_d),
        "outdata": (in_d, ~in_d),
    }[protocol]
    if not cal.any() or not ev.any():
        return 0.0
    return float(fit_ties(method, s[cal], y[cal], s[ev], class_weight, reference=reference).mean())


def nan_equal(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return (a == b) | (np.isnan(a) & np.isnan(b))


def assert_matches(got, ref, df, domains, *, protocol, method, class_weight, slack_examples=0, reference=None):
    """Accuracy identical (or within ``slack_examples`` per cell) and kappa identical, except at exact ties."""
    merged = got.merge(ref, on=["dataset", "model"], suffixes=("", "_ref"), validate="one_to_one")
    assert len(merged) == len(got) == len(ref)
    diff = (merged["accuracy"] - merged["accuracy_ref"]).abs()
    exact = nan_equal(merged["accuracy"], merged["accuracy_ref"])
    if slack_examples:
        exact |= (diff * merged["n_evaluation"]).to_numpy() <= slack_examples + 1e-9
    else:
        exact &= nan_equal(merged["kappa"], merged["kappa_ref"])
    problems = []
    for _, r in merged[~exact].iterrows():
        ties = cell_tie_fraction(
            df,
            domains,
            protocol=protocol,
            method=method,
            class_weight=class_weight,
            dataset=r["dataset"],
            model=r["model"],
            reference=reference,
        )
        # a tied example may flip either way: accuracy moves by at most the tied fraction
        allowed = ties + slack_examples / r["n_evaluation"] + 1e-12
        if not (ties > 0 and abs(r["accuracy"] - r["accuracy_ref"]) <= allowed):
            problems.append(
                f"{r['dataset']}/{r['model']}: accuracy {r['accuracy']!r} vs reference "
                f"{r['accuracy_ref']!r}, kappa {r['kappa']!r} vs {r['kappa_ref']!r}, "
                f"n_evaluation {r['n_evaluation']}, tied fraction {ties}"
            )
    assert not problems, "\n".join(problems)


# -- 1. every protocol x method x class_weight against the per-fit reference ---------


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", list(BENCHES))
def test_matches_reference_exactly(name, protocol, method, class_weight):
    df, domains, bench = get_bench(name)
    got = run(bench, protocol=protocol, method=method, class_weight=class_weight, n_repeats=N_REPEATS)
    # logistic: against a converged sklearn fit; isotonic and stump: against the default estimators
    ref = bench_reference(name, protocol, method, class_weight, 1e-10 if method == "logistic" else None)
    assert_matches(got, ref, df, domains, protocol=protocol, method=method, class_weight=class_weight)
    assert (got["protocol"] == protocol).all() and (got["method"] == method).all()
    assert got["auc"].equals(run(bench, protocol="xdomain", method="stump")["auc"])


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", list(BENCHES))
def test_logistic_within_two_examples_of_default_sklearn(name, protocol, class_weight):
    """The pipeline's default LogisticRegression() (tol=1e-4) stops early: at most two examples per cell move.

    On every model: standardised, even the scores near 1e6 are well scaled for lbfgs.
    """
    df, domains, bench = get_bench(name)
    models = list(bench.models)
    got = run(
        bench.subset(models=models),
        protocol=protocol,
        method="logistic",
        class_weight=class_weight,
        n_repeats=N_REPEATS,
    )
    ref = reference(
        df[["dataset", "label", *models]], domains, protocol=protocol, method="logistic", class_weight=class_weight
    )
    assert_matches(
        got, ref, df, domains, protocol=protocol, method="logistic", class_weight=class_weight, slack_examples=2
    )


def _logistic_objective(x, y, b0, b1, class_weight=None, sd=1.0):
    """Log-loss at raw (intercept, coef) plus ``(coef * sd)**2 / 2``: with the scores' sd, the pipeline's objective."""
    w = np.ones(len(y)) if class_weight is None else compute_sample_weight(class_weight, y)
    z = b0 + b1 * x
    return float(np.sum(w * (np.logaddexp(0, z) - y * z)) + 0.5 * (b1 * sd) ** 2)


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("model", ["prob", "logit", "nll", "big", "micro"])
def test_logistic_reaches_the_pipelines_optimum(model, class_weight):
    """Ours minimises the objective of make_pipeline(StandardScaler(), LogisticRegression()) at least as well
    as a converged lbfgs, with the same decision values, on every scale (1e-7 to 1e6)."""
    df, _, _ = get_bench("scales")
    cal = df[df["dataset"] != "a"]
    x, y = cal[model].to_numpy(), cal["label"].to_numpy()
    ours = ScoreCalibrator("logistic", class_weight=class_weight).fit(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = standardized_logistic(class_weight, tol=1e-10, max_iter=10_000).fit(x[:, None], y)
    scaler, lr = sk[0], sk[-1]
    b1 = lr.coef_[0, 0] / scaler.scale_[0]
    b0 = lr.intercept_[0] - b1 * scaler.mean_[0]
    sd = x.std()  # StandardScaler's scale: the population standard deviation
    f_ours = _logistic_objective(x, y, ours.intercept_, ours.coef_, class_weight, sd)
    f_sk = _logistic_objective(x, y, b0, b1, class_weight, sd)
    assert f_ours <= f_sk + 1e-9 * abs(f_sk)
    assert np.allclose(ours.intercept_ + ours.coef_ * x, b0 + b1 * x, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
def test_raw_lbfgs_misses_its_optimum_on_badly_scaled_scores(class_weight):
    """Documented fact behind the opitz2024 mode's numbers: on raw scores near 1e6, scikit-learn's lbfgs
    stops far from the optimum of its own (raw-penalty) objective, whatever its tol."""
    df, _, _ = get_bench("scales")
    cal = df[df["dataset"] != "a"]
    x, y = cal["big"].to_numpy(), cal["label"].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(tol=1e-10, max_iter=10_000, class_weight=class_weight).fit(x[:, None], y)
        raw = RawPenaltyLogisticRegression(class_weight=class_weight, tol=1e-12, max_iter=100_000).fit(x[:, None], y)
    f_sk = _logistic_objective(x, y, sk.intercept_[0], sk.coef_[0, 0], class_weight)
    f_raw = _logistic_objective(x, y, *raw.raw_params(), class_weight)
    assert f_sk > f_raw + 1.0


def test_lone_domain_falls_back_to_indata():
    df, domains, bench = get_bench("lone_domain")
    got = run(bench, protocol="indomain", method="stump", n_repeats=N_REPEATS)
    fallback = got["dataset"] == "lone"
    assert (got.loc[fallback, "calibration"] == "indata").all()
    assert (got.loc[~fallback, "calibration"] == "indomain").all()
    indata = run(bench, protocol="indata", method="stump", n_repeats=N_REPEATS)
    cols = ["dataset", "model", "auc", *beyondauc.SCORES, "n_calibration", "n_evaluation", "calibration"]
    assert_frame_equal(
        got.loc[fallback, cols].reset_index(drop=True),
        indata.loc[indata["dataset"] == "lone", cols].reset_index(drop=True),
    )
    # the others calibrate on the rest of their domain: a on b, b on a
    sizes = df["dataset"].value_counts()
    for d, other in (("a", "b"), ("b", "a")):
        rows = got[got["dataset"] == d]
        assert (rows["n_calibration"] == sizes[other]).all() and (rows["n_evaluation"] == sizes[d]).all()
    n_test = int(np.ceil(0.2 * sizes["lone"]))
    assert (got.loc[fallback, "n_evaluation"] == n_test).all()
    assert (got.loc[fallback, "n_calibration"] == sizes["lone"] - n_test).all()


def test_skewed_benchmark_has_single_class_training_splits():
    """Precondition of the skewed benchmark: some 80% split of "rare" has no positive."""
    df, _, _ = get_bench("skewed")
    y = df.loc[df["dataset"] == "rare", "label"].to_numpy()
    splits = ShuffleSplit(n_splits=N_REPEATS, test_size=0.2, random_state=0).split(y[:, None])
    assert any(y[train].sum() == 0 for train, _ in splits)


# -- 2. indata reproducibility ---------------------------------------------------------


def _indata_grid(bench, random_state=0, n_repeats=N_REPEATS):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return expected_accuracy_grid(
            bench, protocols=["indata"], class_weight=None, n_repeats=n_repeats, random_state=random_state
        )


@pytest.mark.parametrize("name", ["scales", "ties", "skewed"])
def test_indata_same_seed_same_frame(name):
    _, _, bench = get_bench(name)
    assert_frame_equal(_indata_grid(bench, 7), _indata_grid(bench, 7))


@pytest.mark.parametrize("name", ["scales", "ties", "skewed"])
def test_indata_other_seed_other_numbers(name):
    _, _, bench = get_bench(name)
    a, b = _indata_grid(bench, 0), _indata_grid(bench, 1)
    assert not nan_equal(a["accuracy"], b["accuracy"]).all()


@pytest.mark.parametrize("name", ["scales", "tiny", "skewed"])
def test_indata_does_not_depend_on_other_datasets(name):
    df, domains, bench = get_bench(name)
    full = _indata_grid(bench)
    for keep in ([bench.datasets[-1]], list(bench.datasets[1:3]), list(reversed(bench.datasets))):
        alone = load_quiet(df[df["dataset"].isin(keep)], domains={d: domains[d] for d in keep})
        sub = _indata_grid(alone)
        expect = full[full["dataset"].isin(keep)]
        key = ["method", "dataset", "model"]
        assert_frame_equal(sub.sort_values(key).reset_index(drop=True), expect.sort_values(key).reset_index(drop=True))


def test_grid_equals_single_calls():
    _, _, bench = get_bench("lone_domain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        grid = expected_accuracy_grid(bench, class_weight="balanced", n_repeats=N_REPEATS)
    singles = pd.concat(
        [
            run(bench, protocol=p, method=m, class_weight="balanced", n_repeats=N_REPEATS)
            for p in PROTOCOLS
            for m in METHODS
        ],
        ignore_index=True,
    )
    assert_frame_equal(grid, singles)


# -- 3. invariances ----------------------------------------------------------------------


def _grid_all(bench, protocols=PROTOCOLS, class_weight=None):
    """The full grid, rows sorted by name (dataset order follows first appearance in the input)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        grid = expected_accuracy_grid(bench, protocols=protocols, class_weight=class_weight, n_repeats=N_REPEATS)
    return grid.sort_values(["protocol", "method", "dataset", "model"]).reset_index(drop=True)


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("name", ["ties", "skewed", "tiny"])
def test_interleaving_rows_keeps_results(name, class_weight):
    """Rows shuffled across datasets, each dataset's own order kept: identical for every protocol."""
    df, domains, bench = get_bench(name)
    rng = np.random.default_rng(11)
    key = rng.random(len(df))
    # give each dataset's rows increasing keys, then interleave by key
    key = df.assign(k=key).groupby("dataset")["k"].transform(lambda k: np.sort(k.to_numpy())).to_numpy()
    shuffled = df.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)
    assert not shuffled["dataset"].equals(df["dataset"])
    assert_frame_equal(
        _grid_all(load_quiet(shuffled, domains), class_weight=class_weight), _grid_all(bench, class_weight=class_weight)
    )


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("name", ["scales", "ties", "constant", "tiny"])
def test_any_row_permutation_keeps_cross_dataset_results(name, class_weight):
    """Calibration on other data does not depend on row order, even within a dataset."""
    df, domains, bench = get_bench(name)
    perm = np.random.default_rng(3).permutation(len(df))
    protocols = ["xdomain", "outdomain", "outdata"]
    assert_frame_equal(
        _grid_all(load_quiet(df.iloc[perm], domains), protocols, class_weight),
        _grid_all(bench, protocols, class_weight),
    )


def _same_ranks(a, b):
    return np.array_equal(rankdata(a, method="dense"), rankdata(b, method="dense"))


@pytest.mark.parametrize(
    "transform", [lambda x: x**3 + 5 * x, np.exp, lambda x: np.arctan(x / 50)], ids=["cubic", "exp", "arctan"]
)
def test_auc_invariant_under_increasing_transform(transform):
    df, domains, bench = get_bench("ties")
    tdf = df.copy()
    for m in bench.models:
        tdf[m] = transform(df[m].to_numpy())
        for d in bench.datasets:  # the transform must keep order and ties in float64: check, don't assume
            rows = df["dataset"] == d
            assert _same_ranks(df.loc[rows, m], tdf.loc[rows, m])
    a = beyondauc.auc_table(bench)
    b = beyondauc.auc_table(load_quiet(tdf, domains))
    assert_frame_equal(a, b)


def _dyadic_bench(seed=8):
    """Scores k/8 (exact in binary), so 2x+1 keeps every sum, mid-point and ratio exact."""
    rng = np.random.default_rng(seed)
    parts = []
    for d, n in [("a", 60), ("b", 45), ("c", 70)]:
        y = _labels(rng, n, 0.45)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "m1": np.round(_signal(rng, y, 1.0) * 8) / 8,
                    "m2": np.round(_signal(rng, y, 0.4) * 4) / 8,
                }
            )
        )
    return pd.concat(parts, ignore_index=True), {"a": "x", "b": "x", "c": "y"}


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("method", ["stump", "isotonic"])
def test_stump_and_isotonic_invariant_under_positive_affine_map(method, class_weight):
    df, domains = _dyadic_bench()
    tdf = df.copy()
    for m in ("m1", "m2"):
        tdf[m] = 2 * df[m] + 1
        # preconditions: exact in float64, distinct and > 1e-7 apart in float32
        assert np.array_equal((tdf[m] - 1) / 2, df[m])
        u = np.unique(tdf[m].to_numpy().astype(np.float32))
        assert len(u) == df[m].nunique() and np.diff(u).min() > 1e-7
    a = _grid_all(load_quiet(df, domains), class_weight=class_weight)
    b = _grid_all(load_quiet(tdf, domains), class_weight=class_weight)
    a, b = a[a["method"] == method], b[b["method"] == method]
    assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


# -- 4. AUC and the other scores against scikit-learn -------------------------------------


@pytest.mark.parametrize("name", list(BENCHES))
def test_auc_matches_sklearn(name):
    df, _, bench = get_bench(name)
    got = run(bench, protocol="xdomain", method="stump")
    for _, r in got.iterrows():
        rows = df["dataset"] == r["dataset"]
        expected = roc_auc_score(df.loc[rows, "label"], df.loc[rows, r["model"]])
        assert np.isclose(r["auc"], expected, rtol=1e-12, atol=0), (r["dataset"], r["model"])
    table = beyondauc.auc_table(bench).merge(got, on=["dataset", "model"], suffixes=("", "_ea"))
    assert len(table) == len(got) and (table["auc"] == table["auc_ea"]).all()


def test_single_class_dataset_auc_is_nan_and_warns():
    df = pd.DataFrame(
        {
            "dataset": ["a"] * 6 + ["b"] * 5,
            "label": [0, 1, 0, 1, 1, 0] + [1] * 5,
            "m": [0.1, 0.8, 0.3, 0.6, 0.9, 0.2, 0.5, 0.4, 0.7, 0.1, 0.3],
        }
    )
    bench = load_quiet(df, {"a": "x", "b": "y"})
    with pytest.warns(UndefinedMetricWarning, match="'b'"):
        got = expected_accuracy(bench, protocol="xdomain", method="stump")
    b = got[got["dataset"] == "b"].iloc[0]
    assert np.isnan(b["auc"]) and np.isnan(b["balanced_accuracy"]) and np.isnan(b["mcc"])
    # kappa on single-class truth is 0 unless the predictions are single-class too (then NaN), as in sklearn
    pred = fit_predict("stump", df["m"].to_numpy()[:6], df["label"].to_numpy()[:6], df["m"].to_numpy()[6:])
    assert 0 < pred.sum() < 5
    assert b["kappa"] == _sklearn_scores(np.ones(5, int), pred)["kappa"] == 0.0
    assert got.loc[got["dataset"] == "a", "auc"].iloc[0] == 1.0
    assert np.isnan(beyondauc.auc_table(bench).set_index("dataset").loc["b", "auc"])


def _sklearn_scores(y, pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "accuracy": float(np.mean(y == pred)),
            "kappa": cohen_kappa_score(y, pred),
            "balanced_accuracy": balanced_accuracy_score(y, pred),
            "mcc": matthews_corrcoef(y, pred),
            "f1": f1_score(y, pred, zero_division=np.nan),
        }


@pytest.mark.parametrize("protocol", ["xdomain", "outdomain", "outdata"])
@pytest.mark.parametrize("method", ["stump", "isotonic"])
@pytest.mark.parametrize("name", ["ties", "constant", "skewed", "tiny"])
def test_scores_match_sklearn_metrics(name, method, protocol):
    """Kappa exactly, balanced accuracy / MCC / F1 closely, from the reference's own predictions.

    Undefined metrics are NaN in the package: balanced accuracy and MCC when
    the evaluation data has one class (scikit-learn: a warning and a number),
    F1 without any positive truth or prediction.  A constant prediction on
    two-class data has MCC 0, as in scikit-learn.
    """
    df, domains, bench = get_bench(name)
    got = run(bench, protocol=protocol, method=method).set_index(["dataset", "model"])
    dom = df["dataset"].map(domains).to_numpy()
    y_all = df["label"].to_numpy()
    for (d, m), r in got.iterrows():
        in_d = (df["dataset"] == d).to_numpy()
        cal, ev = {"xdomain": (~in_d, in_d), "outdomain": (dom != domains[d], in_d), "outdata": (in_d, ~in_d)}[protocol]
        if not cal.any():
            assert np.isnan(r["accuracy"])
            continue
        s = df[m].to_numpy()
        pred = fit_predict(method, s[cal], y_all[cal], s[ev])
        y = y_all[ev]
        sk = _sklearn_scores(y, pred)
        assert r["accuracy"] == sk["accuracy"] or np.isclose(r["accuracy"], sk["accuracy"], rtol=1e-15)
        assert nan_equal(r["kappa"], sk["kappa"]), (d, m, r["kappa"], sk["kappa"])
        two_classes = 0 < y.sum() < len(y)
        if two_classes:
            assert np.isclose(r["balanced_accuracy"], sk["balanced_accuracy"], rtol=1e-12)
            assert np.isclose(r["mcc"], sk["mcc"], rtol=1e-12, atol=1e-15)
            if len(np.unique(pred)) == 1:
                assert r["mcc"] == 0.0
        else:
            assert np.isnan(r["balanced_accuracy"]) and np.isnan(r["mcc"])
        if (y == 1).any() or (pred == 1).any():
            assert np.isclose(r["f1"], sk["f1"], rtol=1e-12)
        else:
            assert np.isnan(r["f1"])


def test_scores_on_a_hand_made_case():
    # calibrate on a (stump threshold between 0.4 and 0.6), evaluate on b
    df = pd.DataFrame(
        {
            "dataset": ["a"] * 6 + ["b"] * 6,
            "label": [0, 0, 0, 1, 1, 1] + [0, 1, 0, 1, 1, 0],
            "m": [0.1, 0.2, 0.4, 0.6, 0.7, 0.9] + [0.3, 0.55, 0.65, 0.8, 0.2, 0.1],
            "const": [1.0] * 12,
        }
    )
    bench = load_quiet(df, {"a": "x", "b": "y"})
    got = run(bench, protocol="outdata", method="stump").set_index(["dataset", "model"])
    r = got.loc[("a", "m")]
    y, pred = np.array([0, 1, 0, 1, 1, 0]), np.array([0, 1, 1, 1, 0, 0])
    sk = _sklearn_scores(y, pred)
    assert r["accuracy"] == 4 / 6 and r["kappa"] == sk["kappa"]
    for k in ("balanced_accuracy", "mcc", "f1"):
        assert np.isclose(r[k], sk[k], rtol=1e-12)
    # a constant score predicts the majority of a (tie 3/3: negative) on two-class b
    c = got.loc[("a", "const")]
    assert c["accuracy"] == 0.5 and c["kappa"] == 0.0 and c["mcc"] == 0.0 and c["balanced_accuracy"] == 0.5
    assert c["f1"] == 0.0  # no positive prediction but positive truth: defined, 0
    # evaluation data without positives and no positive prediction: F1 undefined (NaN)
    neg = load_quiet(
        pd.DataFrame(
            {"dataset": ["a"] * 4 + ["b"] * 3, "label": [0, 0, 0, 1, 0, 0, 0], "m": [0.1, 0.2, 0.3, 0.9, 0.1, 0.2, 0.3]}
        ),
        {"a": "x", "b": "y"},
    )
    r = run(neg, protocol="outdata", method="stump").set_index("dataset").loc["a"]
    assert r["accuracy"] == 1.0 and np.isnan(r["f1"]) and np.isnan(r["kappa"]) and np.isnan(r["mcc"])


# -- 5. ScoreCalibrator ---------------------------------------------------------------------


def _calibrator_data(kind, seed):
    rng = np.random.default_rng(seed)
    y = _labels(rng, 150, 0.4)
    s = _signal(rng, y, 0.8)
    if kind == "tied":
        s = np.round(s * 2) / 2
    elif kind == "int":
        s = np.clip(np.round(s + 2), 0, 4)
    return s, y, np.concatenate([s, np.linspace(s.min() - 1, s.max() + 1, 41)])


def _sklearn_estimator(method, class_weight):
    """The default calibrators in scikit-learn: the standardised pipeline, isotonic, the tree on the ranks."""
    if method == "logistic":
        return standardized_logistic(class_weight, tol=1e-10, max_iter=10_000)
    if method == "isotonic":
        return IsotonicRegression(out_of_bounds="clip")
    return ScaleFreeStump(class_weight)


def _sklearn_fit(method, class_weight, s, y):
    est = _sklearn_estimator(method, class_weight)
    if method == "isotonic":
        sw = None if class_weight is None else compute_sample_weight(class_weight, y)
        return est.fit(s, y, sample_weight=sw)
    return est.fit(s[:, None], y)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind", ["random", "tied", "int"])
@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("method", METHODS)
def test_calibrator_matches_sklearn(method, class_weight, kind, seed):
    s, y, grid = _calibrator_data(kind, seed)
    cal = ScoreCalibrator(method, class_weight=class_weight).fit(s, y)
    est = _sklearn_fit(method, class_weight, s, y)
    if method == "isotonic":
        sk_pred = (est.predict(grid) > 0.5).astype(int)
        sk_proba = est.predict(grid)
    else:
        sk_pred = est.predict(grid[:, None])
        sk_proba = est.predict_proba(grid[:, None])[:, 1]
    ties = fit_ties(method, s, y, grid, class_weight)
    assert np.array_equal(cal.predict(grid)[~ties], sk_pred[~ties])
    assert ties.mean() < 0.5
    atol = 1e-6 if method == "logistic" else 1e-12
    assert np.allclose(cal.predict_proba(grid), sk_proba, rtol=0, atol=atol)


def _check_threshold(cal, grid):
    """``threshold_``: decisions are ``score > threshold_`` (away from rounding at the threshold itself)."""
    t = cal.threshold_
    float32 = cal.method == "stump" and cal.reference == "opitz2024"  # scikit-learn's tree on raw scores
    score = grid.astype(np.float32).astype(np.float64) if float32 else grid
    far = ~np.isclose(score, t, rtol=1e-9, atol=1e-12) if np.isfinite(t) else np.ones(len(grid), bool)
    assert np.array_equal(cal.predict(grid)[far].astype(bool), (score > t)[far])


@pytest.mark.parametrize("kind", ["random", "tied", "int"])
@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("method", METHODS)
def test_calibrator_threshold_matches_decisions(method, class_weight, kind):
    s, y, grid = _calibrator_data(kind, 0)
    cal = ScoreCalibrator(method, class_weight=class_weight).fit(s, y)
    _check_threshold(cal, grid)
    if method == "logistic":
        assert cal.coef_ > 0 and np.isclose(cal.intercept_ + cal.coef_ * cal.threshold_, 0, atol=1e-12)


def test_calibrator_stump_threshold_when_both_leaves_agree():
    """Regression: threshold_ was the split point though the stump never predicts 1 (must be inf)."""
    # skewed labels: the best Gini split leaves both sides majority-negative, so the stump never predicts 1
    rng = np.random.default_rng(0)
    y = _labels(rng, 200, 0.05)
    s = y + rng.normal(size=200)
    cal = ScoreCalibrator("stump").fit(s, y)
    grid = np.linspace(-5, 5, 101)
    tree = DecisionTreeClassifier(max_depth=1).fit(s[:, None], y)
    assert tree.tree_.node_count == 3 and not tree.predict(grid[:, None]).any()  # precondition: split, never 1
    assert not cal.predict(grid).any()
    assert cal.threshold_ == np.inf


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("cls", [0, 1])
def test_calibrator_single_class_predicts_it(method, cls):
    cal = ScoreCalibrator(method)
    with pytest.warns(UndefinedMetricWarning, match=f"always predicts {cls}"):
        cal.fit([0.1, 0.5, 0.9, 0.3], [cls] * 4)
    x = [-5.0, 0.2, 0.7, 100.0]
    assert cal.predict(x).tolist() == [cls] * 4
    assert cal.predict_proba(x).tolist() == [float(cls)] * 4


@pytest.mark.parametrize("method", METHODS)
def test_calibrator_unfitted_raises(method):
    cal = ScoreCalibrator(method)
    with pytest.raises(ValueError, match="not fitted"):
        cal.predict([0.5])
    with pytest.raises(ValueError, match="not fitted"):
        cal.predict_proba([0.5])


@pytest.mark.parametrize(
    "kw, param",
    [
        ({"method": "platt"}, "method"),
        ({"class_weight": "auto"}, "class_weight"),
        ({"class_weight": {0: 1, 1: 2}}, "class_weight"),
    ],
)
def test_calibrator_bad_options_name_the_parameter(kw, param):
    with pytest.raises(ValueError, match=f"`{param}`"):
        ScoreCalibrator(**kw).fit([0.1, 0.9], [0, 1])


# -- 6. property test -------------------------------------------------------------------------

VALUES = (-1.0, 0.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.5)


@st.composite
def small_benchmarks(draw):
    n_ds = draw(st.integers(2, 3))
    n_models = draw(st.integers(1, 2))
    domains = {f"d{i}": ("x" if i == 0 else draw(st.sampled_from(["x", "y"]))) for i in range(n_ds)}
    domains[f"d{n_ds - 1}"] = "y"  # two domains
    parts = []
    for d in domains:
        n = draw(st.integers(5, 30))
        cols = {"dataset": [d] * n, "label": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))}
        for j in range(n_models):
            cols[f"m{j}"] = draw(st.lists(st.sampled_from(VALUES), min_size=n, max_size=n))
        parts.append(pd.DataFrame(cols))
    df = pd.concat(parts, ignore_index=True)
    df["label"] = df["label"].astype(int)
    return df, domains


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(small_benchmarks(), st.sampled_from(CLASS_WEIGHTS))
def test_property_matches_reference(data, class_weight):
    df, domains = data
    bench = load_quiet(df, domains)
    for protocol in ("xdomain", "outdata"):
        for method in METHODS:
            got = run(bench, protocol=protocol, method=method, class_weight=class_weight)
            ref = reference(
                df,
                domains,
                protocol=protocol,
                method=method,
                class_weight=class_weight,
                logistic_tol=1e-10 if method == "logistic" else None,
            )
            if method != "logistic" and class_weight is None:
                # unit weights: every sum is an exact integer, no rounding can decide a tie
                merged = got.merge(ref, on=["dataset", "model"], suffixes=("", "_ref"))
                assert nan_equal(merged["accuracy"], merged["accuracy_ref"]).all(), (protocol, method)
                assert nan_equal(merged["kappa"], merged["kappa_ref"]).all(), (protocol, method)
            else:
                assert_matches(got, ref, df, domains, protocol=protocol, method=method, class_weight=class_weight)


# -- 6a. reference="opitz2024": the settings of the code behind the paper's tables -----------


@functools.cache
def opitz_reference(name, protocol, method, class_weight):
    df, domains, _ = get_bench(name)
    with threadpool_limits(limits=1):  # one feature: threads only oversubscribe the cores
        return reference_expected_accuracy(
            df,
            domains,
            protocol=protocol,
            method=method,
            class_weight=class_weight,
            n_repeats=N_REPEATS,
            reference="opitz2024",
        )


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
@pytest.mark.parametrize("method", ["logistic", "isotonic"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", list(BENCHES))
def test_opitz2024_matches_per_fit_sklearn_loop(name, protocol, method, class_weight):
    """Cell for cell against default LogisticRegression() / IsotonicRegression() fitted per cell and repeat."""
    df, domains, bench = get_bench(name)
    got = run(
        bench, protocol=protocol, method=method, class_weight=class_weight, n_repeats=N_REPEATS, reference="opitz2024"
    )
    ref = opitz_reference(name, protocol, method, class_weight)
    merged = got.merge(ref, on=["dataset", "model"], suffixes=("", "_ref"), validate="one_to_one")
    assert len(merged) == len(ref)
    # the AUC: on d, except outdata (pooled other datasets, the evaluation data)
    assert np.allclose(merged["auc"], merged["auc_ref"], rtol=0, atol=1e-12, equal_nan=True)
    if method == "logistic":
        # the same scikit-learn fits on the same rows in the same order: bit for bit
        assert nan_equal(merged["accuracy"], merged["accuracy_ref"]).all()
        assert nan_equal(merged["kappa"], merged["kappa_ref"]).all()
    else:
        assert_matches(got, ref, df, domains, protocol=protocol, method=method, class_weight=class_weight)


def test_opitz2024_differs_where_it_should():
    """Isotonic out of range is negative; the stump changes only where float32 decides; outdata AUC is pooled."""
    df, domains, bench = get_bench("scales")
    kw = dict(n_repeats=N_REPEATS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        a = expected_accuracy_grid(bench, **kw)
        b = expected_accuracy_grid(bench, reference="opitz2024", **kw)
    # scores more than 1e-7 apart in float32 (one pair of "big" merges, deciding nothing): the same stumps
    same = (a["method"] == "stump") & (a["model"] != "micro")
    assert_frame_equal(a[same].drop(columns="auc"), b[same].drop(columns="auc"))
    # "micro" moves in steps of 3e-8: scikit-learn's float32 tree cannot split them, the scale-free stump can
    micro = (a["method"] == "stump") & (a["model"] == "micro")
    assert (a.loc[micro, "accuracy"] != b.loc[micro, "accuracy"]).any()
    assert b.loc[micro & (b["protocol"] != "indata"), "kappa"].fillna(0).eq(0).all()  # no split: a constant answer
    other = a["protocol"] != "outdata"
    assert a.loc[other, "auc"].equals(b.loc[other, "auc"])
    assert not np.allclose(a.loc[~other, "auc"], b.loc[~other, "auc"])
    iso = ScoreCalibrator("isotonic", reference="opitz2024").fit([0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1])
    assert iso.predict([0.1, 0.7, 0.8, 0.9]).tolist() == [0, 1, 1, 0]
    p = iso.predict_proba([0.1, 0.7, 0.9])
    assert np.isnan(p[0]) and np.isnan(p[2]) and p[1] == 1.0
    assert ScoreCalibrator("isotonic").fit([0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1]).predict([0.9]).tolist() == [1]


@pytest.mark.parametrize("class_weight", CLASS_WEIGHTS)
def test_opitz2024_calibrator_is_default_sklearn(class_weight):
    s, y, grid = _calibrator_data("random", 0)
    s = s * 300 + 1e4  # badly scaled: lbfgs stops far from the optimum
    grid = grid * 300 + 1e4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = LogisticRegression(class_weight=class_weight).fit(s[:, None], y)
    cal = ScoreCalibrator("logistic", class_weight=class_weight, reference="opitz2024").fit(s, y)
    assert (cal.intercept_, cal.coef_) == (est.intercept_[0], est.coef_[0, 0])
    assert np.array_equal(cal.predict(grid), est.predict(grid[:, None]))
    assert np.array_equal(cal.predict_proba(grid), est.predict_proba(grid[:, None])[:, 1])
    sw = None if class_weight is None else compute_sample_weight(class_weight, y)
    iso = IsotonicRegression().fit(s, y, sample_weight=sw)
    cal = ScoreCalibrator("isotonic", class_weight=class_weight, reference="opitz2024").fit(s, y)
    assert np.allclose(cal.predict_proba(grid), iso.predict(grid), rtol=0, atol=1e-12, equal_nan=True)
    ties = fit_ties("isotonic", s, y, grid, class_weight)
    assert np.array_equal(cal.predict(grid)[~ties], (iso.predict(grid) > 0.5)[~ties])
    tree = DecisionTreeClassifier(max_depth=1, class_weight=class_weight).fit(s[:, None], y)
    cal = ScoreCalibrator("stump", class_weight=class_weight, reference="opitz2024").fit(s, y)
    ties = fit_ties("stump", s, y, grid, class_weight, reference="opitz2024")
    assert np.array_equal(cal.predict(grid)[~ties], tree.predict(grid[:, None])[~ties])
    assert np.allclose(cal.predict_proba(grid), tree.predict_proba(grid[:, None])[:, 1], rtol=0, atol=1e-12)


def test_opitz2024_reference_validated():
    with pytest.raises(ValueError, match="`reference`"):
        expected_accuracy(_plain_bench(), reference="opitz")
    with pytest.raises(ValueError, match="`reference`"):
        ScoreCalibrator(reference="paper").fit([0.1, 0.9], [0, 1])


# -- 6b. stumps on scores within float32 rounding of each other ------------------------------


def _float32_steps(base, steps):
    """float32 ``base`` moved by integer numbers of float32 ulps (as float64)."""
    b = np.asarray(base, dtype=np.float32).view(np.int32)
    return (b + np.asarray(steps, dtype=np.int32)).view(np.float32).astype(np.float64)


def test_stump_float32_tie_reproducer():
    """Issue 12: 1 and 1 + 2**-23 are 1.19e-7 apart, yet tied for scikit-learn's tree (1 + 1e-7 rounds up in
    float32): so for the opitz2024 stump; the default stump is scale-free and splits any two distinct scores."""
    s, y = np.array([1, 1, 1 + 2**-23, 1 + 2**-23]), [0, 0, 1, 1]
    tree = DecisionTreeClassifier(max_depth=1).fit(s[:, None], y)
    assert tree.tree_.node_count == 1 and tree.predict(s[:, None]).tolist() == [0, 0, 0, 0]  # precondition
    cal = ScoreCalibrator("stump", reference="opitz2024").fit(s, y)
    assert cal.predict(s).tolist() == [0, 0, 0, 0]
    assert cal.threshold_ == np.inf
    assert cal.predict_proba(s).tolist() == [0.5] * 4
    # two ulps apart at 1 the tree splits; so do we
    s2 = _float32_steps(1.0, [0, 0, 2, 2])
    assert ScoreCalibrator("stump", reference="opitz2024").fit(s2, y).predict(s2).tolist() == [0, 0, 1, 1]
    # the default stump splits any two distinct scores, at any scale or shift
    cal = ScoreCalibrator("stump").fit(s, y)
    assert cal.predict(s).tolist() == [0, 0, 1, 1] and cal.threshold_ == 1 + 2**-24
    shifted = 1e9 + (s - 1) * 2**23 * 1e-3  # 1e9 and 1e9 + 0.001: distinct in float64, one value in float32
    assert ScoreCalibrator("stump").fit(shifted, y).predict(shifted).tolist() == [0, 0, 1, 1]
    assert DecisionTreeClassifier(max_depth=1).fit(shifted[:, None], y).tree_.node_count == 1
    assert ScoreCalibrator("stump", reference="opitz2024").fit(shifted, y).predict(shifted).tolist() == [0, 0, 0, 0]


@st.composite
def near_tied_float32(draw):
    """Scores a few float32 ulps apart around a base (steps of ~1e-7 near 1), some off the float32 grid."""
    base = draw(st.sampled_from([1.0, 0.75, 1.5, 0.999, 3.0, 0.1]))
    n = draw(st.integers(4, 40))
    steps = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    s = _float32_steps(base, steps)
    jitter = draw(st.lists(st.sampled_from([0.0, 0.0, 1e-10, -1e-10]), min_size=n, max_size=n))
    s = s + np.array(jitter)  # float64 values that round to the same float32
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    return s, y


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(near_tied_float32(), st.sampled_from(CLASS_WEIGHTS))
@pytest.mark.parametrize("reference", [None, "opitz2024"])
def test_stump_near_tied_float32_matches_sklearn(reference, data, class_weight):
    """opitz2024: scikit-learn's tree on the raw scores, float32 ties and all; default: the tree on the ranks."""
    s, y = data
    if len(np.unique(y)) < 2:
        return
    grid = np.concatenate([s, _float32_steps(s.min(), np.arange(-2, 10))])
    tree = (
        DecisionTreeClassifier(max_depth=1, class_weight=class_weight) if reference else ScaleFreeStump(class_weight)
    ).fit(s[:, None], y)
    cal = ScoreCalibrator("stump", class_weight=class_weight, reference=reference).fit(s, y)
    ties = fit_ties("stump", s, y, grid, class_weight, reference=reference)
    assert np.array_equal(cal.predict(grid)[~ties], tree.predict(grid[:, None])[~ties])
    assert np.allclose(cal.predict_proba(grid), tree.predict_proba(grid[:, None])[:, 1], rtol=0, atol=1e-12)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(near_tied_float32(), min_size=3, max_size=3), st.sampled_from(CLASS_WEIGHTS))
@pytest.mark.parametrize("reference", [None, "opitz2024"])
def test_stump_grid_near_tied_float32_matches_reference(reference, parts, class_weight):
    """The batched grid (expected_accuracy_grid, stump) against a per-fit DecisionTreeClassifier loop."""
    df = pd.concat(
        [pd.DataFrame({"dataset": f"d{i}", "label": y, "m": s}) for i, (s, y) in enumerate(parts)], ignore_index=True
    )
    domains = {"d0": "x", "d1": "x", "d2": "y"}
    bench = load_quiet(df, domains)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        grid = expected_accuracy_grid(
            bench, methods=["stump"], class_weight=class_weight, n_repeats=N_REPEATS, reference=reference
        )
    for protocol in PROTOCOLS:
        got = grid[grid["protocol"] == protocol].drop(columns="auc")  # (outdata's AUC differs under opitz2024)
        ref = reference_expected_accuracy(
            df,
            domains,
            protocol=protocol,
            method="stump",
            class_weight=class_weight,
            n_repeats=N_REPEATS,
            reference=reference,
        )
        if class_weight is None:  # integer counts: no rounding can decide a tie
            merged = got.merge(ref, on=["dataset", "model"], suffixes=("", "_ref"))
            assert nan_equal(merged["accuracy"], merged["accuracy_ref"]).all(), protocol
            assert nan_equal(merged["kappa"], merged["kappa_ref"]).all(), protocol
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)
                assert_matches(
                    got,
                    ref,
                    df,
                    domains,
                    protocol=protocol,
                    method="stump",
                    class_weight=class_weight,
                    reference=reference,
                )


# -- 7. errors ----------------------------------------------------------------------------------


def _plain_bench(domains=None):
    df = pd.DataFrame({"dataset": ["p"] * 4 + ["q"] * 4 + ["r"] * 4, "label": [0, 1] * 6, "m": np.linspace(0, 1, 12)})
    return load_quiet(df, domains)


@pytest.mark.parametrize("func", ["single", "grid"])
@pytest.mark.parametrize(
    "kw, param",
    [
        ({"protocol": "crossdomain"}, "protocol"),
        ({"method": "platt"}, "method"),
        ({"class_weight": "auto"}, "class_weight"),
        ({"class_weight": {0: 1.0, 1: 2.0}}, "class_weight"),
    ],
)
def test_bad_options_name_the_parameter(func, kw, param):
    bench = _plain_bench({"p": "x", "q": "x", "r": "y"})
    if func == "grid":  # protocols=[...], methods=[...]
        kw = {
            (k + "s" if k in ("protocol", "method") else k): ([v] if k in ("protocol", "method") else v)
            for k, v in kw.items()
        }
    with pytest.raises(ValueError, match=f"`{param}`"):
        (expected_accuracy_grid if func == "grid" else expected_accuracy)(bench, **kw)


@pytest.mark.parametrize("func", [expected_accuracy, expected_accuracy_grid])
def test_n_repeats_zero(func):
    with pytest.raises(ValueError, match=re.escape("`n_repeats` must be an int >= 1, got 0")):
        func(_plain_bench(), n_repeats=0)


@pytest.mark.parametrize("random_state", [1.5, np.random.RandomState(0), np.random.default_rng(0), "0", -1])
def test_bad_random_state(random_state):
    with pytest.raises(ValueError, match="`random_state`"):
        expected_accuracy(_plain_bench(), protocol="indata", random_state=random_state)


@pytest.mark.parametrize("protocol", ["outdomain", "indomain"])
@pytest.mark.parametrize("domains, missing", [(None, ["p", "q", "r"]), ({"q": "x"}, ["p", "r"])])
def test_domain_protocols_need_domains(protocol, domains, missing):
    bench = _plain_bench(domains)
    with pytest.raises(ValueError, match=protocol) as info:
        expected_accuracy(bench, protocol=protocol)
    assert str(missing) in str(info.value)
    for d in {"p", "q", "r"} - set(missing):
        assert repr(d) not in str(info.value)
    # protocols that ignore domains still work
    assert len(expected_accuracy(bench, protocol="xdomain")) == 3


@pytest.mark.parametrize("method", METHODS)
def test_no_calibration_data_is_nan(method):
    bench = _plain_bench({"p": "x", "q": "x", "r": "x"})
    got = run(bench, protocol="outdomain", method=method)
    assert got[list(beyondauc.SCORES)].isna().all().all()
    assert (got["n_calibration"] == 0).all() and (got["n_evaluation"] == 4).all()
    assert got["auc"].notna().all()
    ref = reference_expected_accuracy(
        bench.frame.drop(columns="domain"), bench.domains, protocol="outdomain", method=method
    )
    assert ref["accuracy"].isna().all()


# --- parallel models ------------------------------------------------------------


def test_n_jobs_gives_identical_results():
    bench = get_bench("scales")[2]
    serial = beyondauc.expected_accuracy_grid(bench, n_repeats=5)
    parallel = beyondauc.expected_accuracy_grid(bench, n_repeats=5, n_jobs=2)
    assert_frame_equal(serial, parallel)


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, "2", True])
def test_n_jobs_validated(n_jobs):
    with pytest.raises(ValueError, match="`n_jobs` must be an int >= 1 or -1"):
        beyondauc.expected_accuracy(get_bench("scales")[2], n_jobs=n_jobs)


def test_fit_columns_match_dense_counts_on_the_fits_rows():
    """A fit's own grid holds exactly the model-grid columns of its calibration or evaluation rows,
    with the counts the dense (datasets x grid) matrices give there, for every protocol's fits."""
    from beyondauc.metrics.calibration.grid_cells import dataset_columns, fit_columns, fit_matrices
    from beyondauc.metrics.calibration.protocol_plans import protocol_plan
    from beyondauc.metrics.core.kernel import grid_counts, stacked_counts

    rng = np.random.default_rng(3)
    D, n = 4, 300
    codes = np.repeat(np.arange(D), n)
    y = (rng.random(D * n) < 0.4).astype(np.int64)
    s = np.round(rng.normal(y + codes * 0.3, 1.0), 1)  # ties, datasets overlapping in part
    x, inv, _, _ = grid_counts(y, s)
    pos_ds, neg_ds = stacked_counts(inv, y, codes, len(x), D)
    parts = dataset_columns(inv, y, codes, len(x), D)
    from beyondauc import load_benchmark

    bench = load_benchmark(
        pd.DataFrame(
            {"dataset": [f"d{c}" for c in codes], "label": y, "m": s, "domain": [f"dom{c // 2}" for c in codes]}
        )
    )
    for protocol in ("xdomain", "outdomain", "indomain", "outdata"):
        fits, _ = protocol_plan(bench, protocol)
        G_cal, G_ev = fit_matrices(fits, D)
        for k, f in enumerate(fits):
            dense = [G_cal[k] @ pos_ds, G_cal[k] @ neg_ds, G_ev[k] @ pos_ds, G_ev[k] @ neg_ds]
            touched = np.flatnonzero(sum(dense) > 0)
            for m in (None, len(x)):  # the grid's size given, or taken from the columns
                u, cp, cn, ep, en = fit_columns(parts, f, m)
                np.testing.assert_array_equal(u, touched)
                for got, want in zip((cp, cn, ep, en), dense):
                    np.testing.assert_array_equal(got[0], want[touched])
