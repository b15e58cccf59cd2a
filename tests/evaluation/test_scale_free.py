"""Scale-free results: a positive affine map of one model's scores changes none of its unitless numbers.

The design: "scores are used as the user gave them: results do not change when a model's scores
are multiplied by 1e300 or 1e-300 (fits standardise internally)".  The logistic calibrator is
``make_pipeline(StandardScaler(), LogisticRegression())`` (checked against scikit-learn here),
the stump splits the float64 scores (only their order matters), isotonic is rank-based, and the
robustness curves, drift and Wasserstein matrix compute in units of the score range (or of a
power of two near the largest score), so nothing overflows at 1e300 or underflows at 1e-300.

Numbers in the scores' own units move with the scores by definition (``SCORE_UNITS``); every
other number of the evaluation must stay put, to 1e-9.  ``reference="opitz2024"`` fits
scikit-learn on the raw scores and depends on the scale, as the published code does.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

import beyondauc as ba
from beyondauc import ScoreCalibrator, expected_accuracy_grid, load_benchmark
from beyondauc.metrics.core.fitting import class_weighted
from beyondauc.metrics.core.kernel import grid_counts
from beyondauc.metrics.uncertainty.replicates import calibrated_rows
from helpers.reference_impl import ScaleFreeStump, standardized_logistic

MODEL = "logreg"
TRANSFORMS = {"x1e300": (1e300, 0.0), "x1e-300": (1e-300, 0.0), "3.7s-12": (3.7, -12.0)}
EVALUATION = dict(
    n_bootstrap=20, n_repeats=2, noise_repeats=2, n_permutations=19
)  # few draws: every number is compared

#: The evaluation's columns in the scores' own units and how they move under s -> a s + b
#: (documented in the user guide's note on scale); every other number is unitless.
SCORE_UNITS = {
    ("histograms", "left"): "affine",
    ("histograms", "right"): "affine",
    ("cohort_histograms", "left"): "affine",
    ("cohort_histograms", "right"): "affine",
    ("roc", "threshold"): "affine",
    ("drift_curves", "threshold"): "affine",
    ("robustness", "sigma"): "scale",
    ("robustness", "sigma_max"): "scale",
    ("wasserstein", "distance"): "scale",
    ("variance", "variance"): "square",  # 1e600 at x1e300: beyond float64, inf
}


def _moved(values, how, a, b):
    with np.errstate(over="ignore", invalid="ignore"):
        return {"affine": a * values + b, "scale": a * values, "square": a * a * values}[how]


def _transformed(df, a, b):
    out = df.copy()
    out[MODEL] = a * df[MODEL] + b
    return out


@functools.cache
def _evaluation(name):
    df = ba.load_demo().frame
    if name != "original":
        df = _transformed(df, *TRANSFORMS[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the score variance's overflow at 1e300 (reported as inf)
        return ba.evaluate(df, **EVALUATION)


def _rows(table):
    return table[table["model"] == MODEL].reset_index(drop=True) if "model" in table.columns else table


def _assert_same_numbers(name, col, got, want, how, a, b):
    if how is not None:
        want = _moved(want, how, a, b)
        finite = np.isfinite(want)
        scale = float(np.abs(want[finite]).max()) if finite.any() else 1.0
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * scale, equal_nan=True, err_msg=f"{name}.{col}")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=f"{name}.{col}")


def test_the_transforms_keep_the_order_and_ties_of_the_scores():
    """Precondition: in float64, every transform keeps each dataset's ranks and ties (else it is other data)."""
    df = ba.load_demo().frame
    for a, b in TRANSFORMS.values():
        moved = a * df[MODEL] + b
        for rows in df.groupby("dataset").groups.values():
            np.testing.assert_array_equal(
                rankdata(df.loc[rows, MODEL], method="dense"), rankdata(moved.loc[rows], method="dense")
            )


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_evaluation_tables_do_not_change_when_one_models_scores_are_rescaled(transform):
    a, b = TRANSFORMS[transform]
    base, moved = _evaluation("original"), _evaluation(transform)
    assert base.tables.keys() == moved.tables.keys()
    for name, table in base.tables.items():
        want, got = _rows(table), _rows(moved.tables[name])
        assert list(got.columns) == list(want.columns) and len(got) == len(want), name
        for col in want.columns:
            w, g = want[col], got[col]
            if pd.api.types.is_numeric_dtype(w) and not pd.api.types.is_bool_dtype(w):
                _assert_same_numbers(
                    name, col, g.to_numpy(dtype=float), w.to_numpy(dtype=float), SCORE_UNITS.get((name, col)), a, b
                )
            else:
                pd.testing.assert_series_equal(g.astype(str), w.astype(str), obj=f"{name}.{col}")
    # the score-unit columns really move (else the list above would hide nothing)
    for name, col in SCORE_UNITS:
        if a != 1.0 and np.isfinite(_rows(base.tables[name])[col]).any():
            assert not np.allclose(_rows(moved.tables[name])[col], _rows(base.tables[name])[col], equal_nan=True), (
                name,
                col,
            )


def test_the_headline_numbers_of_the_rescaled_model_are_its_own():
    """The evaluation above is not trivially equal: the model's cells are real numbers, kappa > 0."""
    grid = _rows(_evaluation("x1e-300").tables["grid"])
    logistic = grid[grid["method"] == "logistic"]
    assert len(logistic["protocol"].unique()) == 5
    # (with the raw-score fit, x1e-6 already made a constant predictor: kappa 0 on all five protocols)
    assert (logistic.groupby("protocol")["kappa"].mean() > 0.3).all()


# -- the reference mode keeps the published code's scale dependence ---------------------------------


def _demo_grid(scale, shift=0.0, **kw):
    df = ba.load_demo().frame[["dataset", "domain", "label", MODEL]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return expected_accuracy_grid(load_benchmark(_transformed(df, scale, shift)), n_repeats=2, **kw)


@pytest.mark.parametrize("method, scale, shift", [("logistic", 1e-6, 0.0), ("stump", 1e50, 0.0), ("stump", 1.0, 1e9)])
def test_reference_mode_depends_on_the_scale_and_the_default_does_not(method, scale, shift):
    kw = dict(methods=[method])  # all five protocols
    base = _demo_grid(1.0, reference="opitz2024", **kw)
    moved = _demo_grid(scale, shift, reference="opitz2024", **kw)
    assert set(moved["protocol"]) == set(ba.PROTOCOLS)
    assert not np.allclose(moved["accuracy"], base["accuracy"])
    # there the fit collapses: the penalty on the raw coefficient (x1e-6) or float32 (beyond its range, or
    # every score one float32 value at 1e9) leaves a constant answer, kappa 0 (NaN where the evaluation data
    # has one class)
    assert moved["kappa"].fillna(0.0).abs().max() < 1e-12
    assert base["kappa"].mean() > 0.5
    default, default_moved = _demo_grid(1.0, **kw), _demo_grid(scale, shift, **kw)
    pd.testing.assert_frame_equal(default_moved, default, rtol=1e-9, atol=1e-9)


# -- the fits against scikit-learn, at any scale ----------------------------------------------------


def _random_scores(seed, n=300):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.35).astype(int)
    z = rng.normal(size=n) + 1.1 * y
    return y, z


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scale, shift", [(1.0, 0.0), (1e-7, 3.0), (1e3, 1e6), (0.02, -40.0)])
def test_logistic_is_the_standard_scaler_pipeline(seed, class_weight, scale, shift):
    """ScoreCalibrator("logistic") = make_pipeline(StandardScaler(), LogisticRegression()), converged."""
    y, z = _random_scores(seed)
    s = scale * z + shift
    cal, ev = s[:200], s[200:]
    pipe = standardized_logistic(class_weight, tol=1e-12, max_iter=100_000).fit(cal[:, None], y[:200])
    ours = ScoreCalibrator("logistic", class_weight=class_weight).fit(cal, y[:200])
    np.testing.assert_allclose(ours.predict_proba(ev), pipe.predict_proba(ev[:, None])[:, 1], rtol=0, atol=1e-7)
    decision = pipe.decision_function(ev[:, None])
    clear = np.abs(decision) > 1e-6
    np.testing.assert_array_equal(ours.predict(ev)[clear], pipe.predict(ev[:, None])[clear])
    # the same standardised coefficient
    scaler, lr = pipe[0], pipe[-1]
    assert ours.coef_ * scaler.scale_[0] == pytest.approx(lr.coef_[0, 0], rel=1e-6)


@pytest.mark.parametrize("method", ["logistic", "isotonic", "stump"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("a, b", [(1e300, 0.0), (1e-300, 0.0), (3.7, -12.0), (1e9, 0.0), (1e50, 0.0), (1.0, 1e3)])
def test_calibrator_decisions_and_probabilities_do_not_depend_on_the_scale(method, class_weight, a, b):
    y, z = _random_scores(5)
    z = np.round(z, 4)  # 4 decimals: every map above keeps the order and the ties in float64
    cal, ev = z[:200], z[200:]
    base = ScoreCalibrator(method, class_weight=class_weight).fit(cal, y[:200])
    moved = ScoreCalibrator(method, class_weight=class_weight).fit(a * cal + b, y[:200])
    np.testing.assert_array_equal(moved.predict(a * ev + b), base.predict(ev))
    np.testing.assert_allclose(moved.predict_proba(a * ev + b), base.predict_proba(ev), rtol=0, atol=1e-9)
    assert moved.threshold_ == pytest.approx(a * base.threshold_ + b, rel=1e-9)


@pytest.mark.parametrize("a, b, float32_collapses", [(1e9, 0.0, False), (1e50, 0.0, True), (1.0, 1e9, True)])
def test_stump_splits_the_same_as_at_scale_one(a, b, float32_collapses):
    """scikit-learn's float32 tree merges every score at 1e50 (beyond float32) and, shifted by 1e9, all
    scores within 64 of each other; the default stump splits where it splits at scale one."""
    y, z = _random_scores(7)
    z = np.round(z, 4)
    base = ScoreCalibrator("stump").fit(z, y)
    moved = ScoreCalibrator("stump").fit(a * z + b, y)
    assert moved.threshold_ == pytest.approx(a * base.threshold_ + b, rel=1e-12)
    np.testing.assert_array_equal(moved.predict(a * z + b), base.predict(z))
    # ... as scikit-learn's tree on the ranks (no float32 rounding at all)
    ref = ScaleFreeStump().fit((a * z + b)[:, None], y)
    np.testing.assert_array_equal(moved.predict(a * z + b), ref.predict((a * z + b)[:, None]))
    reference = ScoreCalibrator("stump", reference="opitz2024").fit(a * z + b, y)
    # the raw float32 tree: one value, no split, where float32 cannot hold the scores apart
    assert (len(np.unique(reference.predict(a * z + b))) == 1) == float32_collapses


@pytest.mark.parametrize("method", ["logistic", "isotonic", "stump"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_bootstrap_refits_standardise_as_the_point_fit(method, class_weight):
    """calibrated_rows (every replicate's refit) at 1e300 and 1e-300 gives the point fits' answers."""
    rng = np.random.default_rng(9)
    y, z = _random_scores(9, 120)
    z = np.round(z, 3)
    counts = rng.poisson(1.0, size=(6, len(z))).astype(float)

    def rows(s):
        x, inv, _, _ = grid_counts(y, s)
        pos = np.stack([np.bincount(inv, weights=c * y, minlength=len(x)) for c in counts])
        neg = np.stack([np.bincount(inv, weights=c * (1 - y), minlength=len(x)) for c in counts])
        return calibrated_rows(method, x, *class_weighted(pos, neg, class_weight), counts=pos + neg)

    proba, pred = rows(z)
    for a in (1e300, 1e-300):
        p2, d2 = rows(a * z)
        np.testing.assert_array_equal(d2, pred)
        np.testing.assert_allclose(p2, proba, rtol=0, atol=1e-9)
    for r in range(len(counts)):  # and each replicate is the calibrator fitted on its rows
        keep = np.repeat(np.arange(len(z)), counts[r].astype(int))
        cal = ScoreCalibrator(method, class_weight=class_weight).fit(1e300 * z[keep], y[keep])
        x = np.unique(1e300 * z)
        np.testing.assert_array_equal(cal.predict(x).astype(bool), pred[r])


def test_logistic_does_not_overflow_or_lose_the_scores_at_the_ends_of_float64():
    y, z = _random_scores(3)
    base = ScoreCalibrator("logistic").fit(z, y)
    for a in (1e300, 1e-300, 2.0**1000, 2.0**-1000):
        cal = ScoreCalibrator("logistic").fit(a * z, y)
        assert np.isfinite([cal.coef_, cal.intercept_]).all()
        np.testing.assert_allclose(cal.predict_proba(a * z), base.predict_proba(z), rtol=0, atol=1e-9)
    # one score near the largest float among ordinary ones: standardised, it dwarfs the others (as
    # StandardScaler would), but nothing overflows
    s = z.copy()
    s[0] = 1.7e308
    cal = ScoreCalibrator("logistic").fit(s, y)
    assert np.isfinite([cal.coef_, cal.intercept_]).all() and np.isfinite(cal.predict_proba(s)).all()


def test_diagnostics_are_scale_free_functions():
    """Robustness (curve and score), drift and W at 1e300, 1e-300 and 3.7 s - 12: what they are at scale one."""
    y, z = _random_scores(11, 200)
    z = np.round(z, 3)
    yv, sv, yt, st = y[:100], z[:100], y[100:], z[100:] + 0.3
    for a, b in TRANSFORMS.values():
        for f in (ba.bias_robustness, ba.noise_robustness):
            r0, r1 = f(yv, sv), f(yv, a * sv + b)
            assert r1.score == pytest.approx(r0.score, rel=1e-12)
            np.testing.assert_allclose(r1.auc_curve, r0.auc_curve, rtol=0, atol=1e-12)
            assert r1.sigma_max == pytest.approx(a * r0.sigma_max, rel=1e-12)
        w0, w1 = ba.wasserstein_matrix(yv, sv, yt, st), ba.wasserstein_matrix(yv, a * sv + b, yt, a * st + b)
        assert w1.score == pytest.approx(w0.score, rel=1e-12)
        np.testing.assert_allclose(w1.matrix, a * w0.matrix, rtol=1e-12)
        d0, d1 = ba.sens_spec_drift(yv, sv, yt, st), ba.sens_spec_drift(yv, a * sv + b, yt, a * st + b)
        assert d1.score == pytest.approx(d0.score, rel=1e-12)
