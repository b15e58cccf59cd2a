"""Tests of :mod:`beyondauc.plots`: the Display objects and the diagnostics dashboard.

Every axes-level Display is checked for the scikit-learn Display contract
(draws on the given ax, returns itself with ``ax_`` / ``figure_``, makes one
figure of its own when given no ax) and for leaving global state alone
(``rcParams``, the pyplot figure list, ``plt.show``).  The data drawn is
compared with the package's metric functions and with scikit-learn.
"""

from __future__ import annotations

import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from sklearn.metrics import roc_curve

import beyondauc
from beyondauc import TOLERANCES, bias_robustness, disca, noise_robustness, sens_spec_drift, wasserstein_matrix
from beyondauc.plots import (
    AUCAccuracyDisplay,
    ClassHistogramDisplay,
    CoverageAccuracyDisplay,
    DiagnosticsDashboard,
    DriftDisplay,
    RankSlopeDisplay,
    RobustnessDisplay,
    ScoreHistogramsDisplay,
    ThresholdROCDisplay,
    ToleranceDisplay,
    WassersteinDisplay,
)
from beyondauc.utils.formatting import format_range

# -- data -------------------------------------------------------------------------------


def _cohorts(seed=0, n_val=60, n_test=50):
    """Two cohorts whose score ranges differ (the test cohort is shifted and wider)."""
    rng = np.random.default_rng(seed)
    yv = np.tile([0, 1], n_val // 2)
    yt = np.tile([1, 0], n_test // 2)
    sv = rng.normal(size=n_val) + 1.5 * yv
    st = 2.5 * rng.normal(size=n_test) + 1.5 * yt + 3.0
    return yv, sv, yt, st


YV, SV, YT, ST = _cohorts()


def _selective(seed=0, n=80):
    """Confidences in [0.5, 1] and correctness that mostly follows them."""
    rng = np.random.default_rng(seed)
    conf = np.sort(rng.uniform(0.5, 1.0, n))[::-1]
    ok = rng.random(n) < conf
    return conf, ok


CONF, OK = _selective()
# a perfectly ordered answer sheet: right answers first, then wrong -> no fluctuation
CONF_CLEAN = np.linspace(0.99, 0.5, 50)
OK_CLEAN = np.r_[np.ones(35, bool), np.zeros(15, bool)]


# -- registry of the axes-level Displays ------------------------------------------------------


def _roc(ax):
    return ThresholdROCDisplay.from_predictions(YV, SV, YT, ST, ax=ax)


def _hist(ax):
    return ClassHistogramDisplay.from_predictions(YV, SV, bins=12, name="validation", ax=ax)


def _bias(ax):
    return RobustnessDisplay.from_predictions(YV, SV, kind="bias", ax=ax)


def _noise(ax):
    # the Monte Carlo draws: their spread is the band counted in ARTISTS (the exact default draws none)
    return RobustnessDisplay.from_predictions(YV, SV, kind="noise", noise_method="monte_carlo", n_repeats=3, ax=ax)


def _drift(ax):
    return DriftDisplay.from_predictions(YV, SV, YT, ST, ax=ax)


def _wasser(ax):
    return WassersteinDisplay.from_predictions(YV, SV, YT, ST, ax=ax)


def _coverage(ax):
    return CoverageAccuracyDisplay.from_predictions(CONF, OK, tolerance=0.8, ax=ax)


def _tolerance(ax):
    return ToleranceDisplay.from_predictions(CONF, OK, name="m", ax=ax)


DISPLAYS = {
    "roc": (_roc, ThresholdROCDisplay),
    "hist": (_hist, ClassHistogramDisplay),
    "bias": (_bias, RobustnessDisplay),
    "noise": (_noise, RobustnessDisplay),
    "drift": (_drift, DriftDisplay),
    "wasserstein": (_wasser, WassersteinDisplay),
    "coverage": (_coverage, CoverageAccuracyDisplay),
    "tolerance": (_tolerance, ToleranceDisplay),
}

# artists each display must add to its axes: attribute -> minimum count
ARTISTS = {
    "roc": {"collections": 2, "lines": 3},
    "hist": {"patches": 2 * 12},
    "bias": {"lines": 1},
    "noise": {"lines": 1, "collections": 1},
    "drift": {"lines": 4},
    "wasserstein": {"images": 1, "texts": 4},
    "coverage": {"lines": 3},
    "tolerance": {"lines": 1},
}


# the AUC vs expected accuracy Displays, on a hand-made results table (3 models x 3 datasets)
RESULTS = pd.DataFrame(
    {
        "protocol": "xdomain",
        "method": "logistic",
        "dataset": np.repeat(["d1", "d2", "d3"], 3),
        "model": ["m1", "m2", "m3"] * 3,
        "auc": [0.90, 0.80, 0.70, 0.85, 0.95, 0.60, 0.99, 0.75, 0.70],
        "accuracy": [0.70, 0.78, 0.65, 0.80, 0.90, 0.55, 0.60, 0.74, 0.66],
        "kappa": [0.40, 0.55, 0.30, 0.60, 0.80, 0.10, 0.20, 0.48, 0.32],
    }
)


def _auc_accuracy(ax):
    return AUCAccuracyDisplay.from_results(RESULTS, model="m1", ax=ax)


def _rank_slope(ax):
    return RankSlopeDisplay.from_results(RESULTS, ax=ax)


DISPLAYS.update(
    {
        "auc_accuracy": (_auc_accuracy, AUCAccuracyDisplay),
        "rank_slope": (_rank_slope, RankSlopeDisplay),
    }
)
ARTISTS.update(
    {
        "auc_accuracy": {"collections": 2, "texts": 3, "lines": 1},
        "rank_slope": {"lines": 3, "texts": 2},
    }
)


def _counts(ax):
    return {k: len(getattr(ax, k)) for k in ("lines", "collections", "patches", "images", "texts")}


def _rc_snapshot():
    return dict(matplotlib.rcParams.copy())


@pytest.fixture(autouse=True)
def no_leaked_figures():
    """Every test starts without open figures: none leaked from an earlier one."""
    assert plt.get_fignums() == []
    yield


@pytest.fixture
def no_show(monkeypatch):
    """Make any call of ``plt.show`` (or ``Figure.show``) fail the test."""

    def boom(*args, **kwargs):
        raise AssertionError("plt.show() must never be called by the package")

    monkeypatch.setattr(plt, "show", boom)
    monkeypatch.setattr(Figure, "show", boom)


# -- the Display contract ---------------------------------------------------------------------


@pytest.mark.parametrize("name", list(DISPLAYS))
def test_from_predictions_draws_on_given_ax_and_returns_itself(name):
    make, cls = DISPLAYS[name]
    fig, ax = plt.subplots()
    before = _counts(ax)
    disp = make(ax)
    assert isinstance(disp, cls)
    assert disp.ax_ is ax
    assert disp.figure_ is ax.figure is fig
    after = _counts(ax)
    for attr, minimum in ARTISTS[name].items():
        assert after[attr] - before[attr] >= minimum, (name, attr, before, after)


@pytest.mark.parametrize("name", list(DISPLAYS))
def test_plot_without_ax_creates_exactly_one_figure(name):
    make, _ = DISPLAYS[name]
    _, ax = plt.subplots()
    disp = make(ax)
    before = set(plt.get_fignums())
    again = disp.plot()
    new = set(plt.get_fignums()) - before
    assert again is disp
    assert len(new) == 1 and len(plt.get_fignums()) == len(before) + 1
    assert disp.ax_ is not ax
    assert disp.figure_ is disp.ax_.figure
    assert disp.figure_.number in new
    assert disp.ax_ in disp.figure_.axes


@pytest.mark.parametrize("name", list(DISPLAYS))
def test_from_predictions_without_ax_creates_exactly_one_figure(name):
    make, _ = DISPLAYS[name]
    disp = make(None)
    assert plt.get_fignums() == [disp.figure_.number]
    assert disp.ax_ in disp.figure_.axes


@pytest.mark.parametrize("name", list(DISPLAYS))
def test_global_state_untouched_with_given_ax(name, no_show):
    make, _ = DISPLAYS[name]
    fig, ax = plt.subplots()
    fignums = plt.get_fignums()
    rc = _rc_snapshot()
    disp = make(ax)
    fig.canvas.draw()  # rendering must not touch global state either
    assert plt.get_fignums() == fignums
    assert _rc_snapshot() == rc
    assert disp.figure_ is fig


@pytest.mark.parametrize("name", list(DISPLAYS))
def test_global_state_untouched_without_ax(name, no_show):
    make, _ = DISPLAYS[name]
    rc = _rc_snapshot()
    disp = make(None)
    disp.figure_.canvas.draw()
    assert _rc_snapshot() == rc
    assert len(plt.get_fignums()) == 1


# -- ThresholdROCDisplay --------------------------------------------------------------------


def _points(x, y, decimals=12):
    return set(zip(np.round(np.asarray(x, float), decimals), np.round(np.asarray(y, float), decimals)))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("shift", [0.0, -7.0, 40.0])
def test_roc_shares_color_limits_over_both_cohorts(seed, shift):
    yv, sv, yt, st = _cohorts(seed)
    # overlapping but different ranges: the minimum is V's, the maximum T's
    sv, st = sv + shift, 3.0 * (st - st.min()) + sv.min() + 1.0 + shift
    _, ax = plt.subplots()
    disp = ThresholdROCDisplay.from_predictions(yv, sv, yt, st, ax=ax)
    lo, hi = min(sv.min(), st.min()), max(sv.max(), st.max())
    assert disp.color_lim == (lo, hi)
    assert disp.color_lim != (sv.min(), sv.max()) and disp.color_lim != (st.min(), st.max())
    lcs = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(lcs) == 2
    for lc in lcs:
        assert (lc.norm.vmin, lc.norm.vmax) == (lo, hi)
    # the colour arrays are thresholds, i.e. observed scores of that cohort
    for lc, s in zip(lcs, (sv, st)):
        assert set(np.asarray(lc.get_array())) <= set(s)
    assert disp.colorbar_.mappable.norm.vmin == lo and disp.colorbar_.mappable.norm.vmax == hi


@pytest.mark.parametrize("labels", ["01", "pm1", "strings"])
@pytest.mark.parametrize("ties", [False, True])
def test_roc_black_lines_are_sklearn_roc_points(labels, ties):
    yv, sv, yt, st = _cohorts(3, 120, 90)
    if ties:
        sv, st = np.round(sv, 0), np.round(st, 0)
    kw = {}
    if labels == "pm1":
        yv, yt = 2 * yv - 1, 2 * yt - 1
    elif labels == "strings":
        yv, yt = np.where(yv == 1, "sick", "well"), np.where(yt == 1, "sick", "well")
        kw["pos_label"] = "sick"
    _, ax = plt.subplots()
    disp = ThresholdROCDisplay.from_predictions(yv, sv, yt, st, ax=ax, **kw)
    black = [ln for ln in ax.lines if ln.get_color() == "black"]
    assert len(black) == 2
    pos = kw.get("pos_label", 1)
    for line, y, s, (_fpr_d, _tpr_d, _, name, auc) in zip(black, (yv, yt), (sv, st), disp.curves):
        fpr, tpr, _ = roc_curve(y, s, pos_label=pos, drop_intermediate=False)
        assert _points(line.get_xdata(), line.get_ydata()) == _points(fpr, tpr)
        assert len(line.get_xdata()) == len(fpr)
        assert auc == pytest.approx(np.trapezoid(tpr, fpr), abs=1e-12)
        assert f"AUC {auc:.3f}" in line.get_label() and name in line.get_label()


def test_roc_segment_colours_are_the_thresholds():
    _, ax = plt.subplots()
    disp = ThresholdROCDisplay.from_predictions(YV, SV, YT, ST, ax=ax)
    for lc, (fpr, _tpr, thr, _, _) in zip(ax.collections, disp.curves):
        np.testing.assert_array_equal(np.asarray(lc.get_array()), thr[1:])
        assert len(lc.get_segments()) == len(fpr) - 1
        assert np.all(np.diff(thr[1:]) < 0)  # thresholds descend along the curve


def test_roc_without_colorbar_adds_no_axes():
    fig, ax = plt.subplots()
    ThresholdROCDisplay.from_predictions(YV, SV, YT, ST, ax=ax, colorbar=False)
    assert fig.axes == [ax]


# -- ClassHistogramDisplay ------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 100.0])
@pytest.mark.parametrize("offset", [0.0, -1e4])
def test_histogram_counts_per_class(scale, offset):
    s = scale * SV + offset
    _, ax = plt.subplots()
    disp = ClassHistogramDisplay.from_predictions(YV, s, bins=10, ax=ax)
    np.testing.assert_array_equal(disp.neg, s[YV == 0])
    np.testing.assert_array_equal(disp.pos, s[YV == 1])
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 20
    assert sum(heights[:10]) == (YV == 0).sum() and sum(heights[10:]) == (YV == 1).sum()
    left = min(p.get_x() for p in ax.patches)
    right = max(p.get_x() + p.get_width() for p in ax.patches)
    assert left >= s.min() - 1e-9 * abs(s).max() and right <= s.max() + 1e-9 * abs(s).max()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [f"negative (n={(YV == 0).sum()})", f"positive (n={(YV == 1).sum()})"]


def test_histogram_outlier_is_clipped_into_the_last_bin_and_said():
    s = SV.astype(float).copy()
    s[np.argmax(s)] = s.max() + 1000 * np.ptp(SV)
    _, ax = plt.subplots()
    disp = ClassHistogramDisplay.from_predictions(YV, s, bins=10, ax=ax)
    assert disp.n_clipped_ == 1
    assert disp.edges_[-1] < SV.max() + 0.1 * np.ptp(SV)
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == len(s)  # nothing dropped
    assert f"{disp.n_clipped_} outside [" in ax.get_xlabel() and "end bins" in ax.get_xlabel()
    full = ClassHistogramDisplay.from_predictions(YV, s, bins=10, clip_quantiles=None, ax=plt.subplots()[1])
    assert full.n_clipped_ == 0 and full.edges_[-1] == s.max() and full.ax_.get_xlabel() == "score"


def test_dashboard_histograms_share_robust_edges():
    rng = np.random.default_rng(1)
    yv, yt = np.tile([0, 1], 100), np.tile([0, 1], 100)
    sv, st = yv + rng.normal(0, 0.5, 200), yt + rng.normal(0.2, 0.5, 200)
    st[3] = 500.0
    dash = DiagnosticsDashboard.from_predictions(yv, sv, yt, st, n_repeats=2, figure=Figure())
    hv, ht = dash.axes_[1], dash.axes_[2]
    edges_v = sorted({round(p.get_x(), 12) for p in hv.patches})
    edges_t = sorted({round(p.get_x(), 12) for p in ht.patches})
    assert edges_v == edges_t and max(p.get_x() + p.get_width() for p in ht.patches) < 10
    assert re.search(r"\b[123] outside \[", ht.get_xlabel()), ht.get_xlabel()


def test_histogram_string_labels_with_pos_label():
    y = np.where(YV == 1, "yes", "no")
    disp = ClassHistogramDisplay.from_predictions(y, SV, pos_label="yes", ax=plt.subplots()[1])
    np.testing.assert_array_equal(disp.pos, SV[YV == 1])


# -- RobustnessDisplay ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, opts", [("bias", {}), ("noise", {"n_repeats": 3, "noise_method": "monte_carlo"}), ("noise", {})]
)
def test_robustness_curve_is_the_metric_curve(kind, opts):
    _, ax = plt.subplots()
    RobustnessDisplay.from_predictions(YV, SV, kind=kind, name="val", ax=ax, **opts)
    fn = bias_robustness if kind == "bias" else noise_robustness
    r = fn(YV, SV, **opts)
    (line,) = ax.lines
    np.testing.assert_allclose(line.get_xdata(), r.sigmas)
    np.testing.assert_allclose(line.get_ydata(), 100 * r.relative_curve)
    assert line.get_label() == f"val: R = {r.score:.3f}"
    assert kind in ax.get_title()
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == (1 if opts.get("noise_method") == "monte_carlo" else 0)  # a band: the draws' spread


# -- DriftDisplay ---------------------------------------------------------------------------


@pytest.mark.parametrize("labels", ["01", "strings"])
@pytest.mark.parametrize("seed", [0, 5])
def test_drift_lines_are_sens_spec_drift(labels, seed):
    yv, sv, yt, st = _cohorts(seed)
    kw = {}
    if labels == "strings":
        yv, yt = np.where(yv == 1, "P", "N"), np.where(yt == 1, "P", "N")
        kw["pos_label"] = "P"
    _, ax = plt.subplots()
    disp = DriftDisplay.from_predictions(yv, sv, yt, st, ax=ax, **kw)
    d = sens_spec_drift(yv, sv, yt, st, **kw)
    sens, spec, dist = ax.lines[:3]
    for line, want in ((sens, d.sensitivity_drift), (spec, d.specificity_drift), (dist, d.distance)):
        np.testing.assert_array_equal(line.get_xdata(), d.thresholds)
        np.testing.assert_array_equal(line.get_ydata(), want)
    assert "sensitivity" in sens.get_label() and "specificity" in spec.get_label()
    assert disp.drift.score == d.score
    assert f"{d.score:.4f}" in ax.get_title()


# -- WassersteinDisplay ---------------------------------------------------------------------


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("scale", [1.0, 1000.0])
def test_wasserstein_texts_show_the_matrix(p, scale):
    _, ax = plt.subplots()
    WassersteinDisplay.from_predictions(YV, scale * SV, YT, scale * ST, p=p, ax=ax)
    w = wasserstein_matrix(YV, scale * SV, YT, scale * ST, p=p)
    assert len(ax.texts) == 4
    shown = {}
    for t in ax.texts:
        x, y = t.get_position()
        shown[(round(y), round(x))] = float(t.get_text().split("\n")[0])
    assert set(shown) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    for (i, j), v in shown.items():
        assert v == pytest.approx(w.matrix[i, j], rel=1e-3)
    np.testing.assert_allclose(ax.images[0].get_array(), w.matrix)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(w.col_labels)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(w.row_labels)
    assert f"W = {w.score:.3f}" in ax.get_title()


# -- CoverageAccuracyDisplay ----------------------------------------------------------------


@pytest.mark.parametrize("data", ["noisy", "clean"])
@pytest.mark.parametrize("tolerance", [0.9, 0.7])
def test_coverage_marks_a_b_and_every_fluctuation(data, tolerance):
    conf, ok = (CONF, OK) if data == "noisy" else (CONF_CLEAN, OK_CLEAN)
    _, ax = plt.subplots()
    disp = CoverageAccuracyDisplay.from_predictions(conf, ok, tolerance=tolerance, ax=ax)
    d = disca(conf, ok, tolerance=tolerance)
    assert (disp.disca.a, disp.disca.b, disp.disca.n_fluctuations) == (d.a, d.b, d.n_fluctuations)
    c = d.curve
    by_label = {ln.get_label(): ln for ln in ax.lines}
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    a_label = next(lbl for lbl in legend if lbl.startswith("a = "))
    b_label = next(lbl for lbl in legend if lbl.startswith("b = "))
    assert f"{d.a:.3f}" in a_label and f"{d.b:.3f}" in b_label and f"{tolerance:g}" in b_label
    for conf_mark, label in ((d.a, a_label), (d.b, b_label)):
        k = int(np.argmin(np.abs(c.confidence - conf_mark)))
        line = by_label[label]
        assert list(line.get_xdata()) == [c.coverage[k]] and list(line.get_ydata()) == [c.accuracy[k]]
    # the tolerance is drawn as a horizontal line
    assert any(list(ln.get_ydata()) == [tolerance, tolerance] for ln in ax.lines)
    fl = [ln for lbl, ln in by_label.items() if "fluctuation" in lbl]
    if d.n_fluctuations:
        (line,) = fl
        assert len(line.get_xdata()) == d.n_fluctuations
        assert line.get_label() == f"{d.n_fluctuations} fluctuation(s)"
        np.testing.assert_array_equal(line.get_xdata(), d.fluctuations["coverage_2"])
        np.testing.assert_array_equal(line.get_ydata(), d.fluctuations["d2"])
        assert set(line.get_xdata()) <= set(c.coverage)
    else:
        assert fl == [] and data == "clean"
    # grid curve and the exact curve behind it
    grid = by_label[f"area {c.score:.3f}"]
    np.testing.assert_array_equal(grid.get_xdata(), c.coverage)
    np.testing.assert_array_equal(grid.get_ydata(), c.accuracy)
    assert len(by_label["exact (every confidence)"].get_xdata()) == len(np.unique(conf))
    assert f"{d.score:.3f}" in ax.get_title()


def test_coverage_without_legend_draws_the_same_lines():
    _, (ax, bare) = plt.subplots(1, 2)
    with_legend = CoverageAccuracyDisplay.from_predictions(CONF, OK, ax=ax)
    without = CoverageAccuracyDisplay(with_legend.curve, disca=with_legend.disca, exact=with_legend.exact).plot(
        bare, legend=False
    )
    assert ax.get_legend() is not None and bare.get_legend() is None
    assert [(ln.get_label(), list(ln.get_xdata())) for ln in ax.lines] == [
        (ln.get_label(), list(ln.get_xdata())) for ln in bare.lines
    ]
    assert without.line_.get_label() == with_legend.line_.get_label() == f"area {with_legend.curve.score:.3f}"
    plt.close("all")


def test_coverage_grid_titles_each_panel_with_the_evaluations_numbers_and_has_one_legend():
    """One panel per in-distribution dataset, titled with the saved DiSCA, area, a, b and number of
    fluctuations; no panel has a legend of its own; one legend, in its own panel, names every mark."""
    from beyondauc.plots import CoverageAccuracyGridDisplay

    ev = beyondauc.evaluate(
        "demo",
        models=["svm", "knn"],
        datasets=["wine", "diabetes", "iris_virginica"],
        ood_dataset="iris_virginica",
        noise_repeats=2,
        n_bootstrap=0,
    )
    disp = CoverageAccuracyGridDisplay.from_evaluation(ev, "knn")
    sel = ev.table("selective").set_index(["model", "dataset"])
    assert [ax.get_title().split(":")[0] for ax in disp.axes_] == ["wine", "diabetes"]  # not the OOD dataset
    for ax in disp.axes_:
        dataset = ax.get_title().split(":")[0]
        row = sel.loc[("knn", dataset)]
        n = int(row["n_fluctuations"])
        assert ax.get_title() == (
            f"{dataset}: DiSCA = {row['disca']:.3f}\narea {row['area']:.3f} · "
            f"a = {row['a']:.3f} · b = {row['b']:.3f} · {n} fluctuation{'' if n == 1 else 's'}"
        )
        assert ax.get_legend() is None
        curve = ev.disca("knn", dataset).curve
        np.testing.assert_array_equal(disp.displays[dataset].line_.get_xdata(), curve.coverage)
    legend_ax = disp.legend_.axes
    assert legend_ax not in disp.axes_ and not legend_ax.axison
    labels = [t.get_text() for t in disp.legend_.get_texts()]
    assert labels == [
        "exact curve (every confidence)",
        "knn on the resolution grid",
        "tolerance 0.9",
        "b: accuracy falls below 0.9",
        "a: the first error",
        "fluctuation: accuracy rises again",
    ]
    assert len(disp.figure_.axes) == 3  # 2 panels and the legend's, in one row
    with pytest.raises(ValueError, match="`ncols`"):
        CoverageAccuracyGridDisplay.from_evaluation(ev, "knn", ncols=0)
    plt.close("all")


def test_coverage_from_benchmark_marks_a_and_b():
    bench = beyondauc.load_demo()
    _, ax = plt.subplots()
    disp = CoverageAccuracyDisplay.from_benchmark(bench, "logreg", "diabetes", ax=ax)
    r = beyondauc.selective_answering(bench, "logreg", "diabetes")
    assert disp.ax_ is ax and disp.disca.score == r.disca.score
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith(f"a = {r.disca.a:.3f}") for t in legend)
    assert any(t.startswith(f"b = {r.disca.b:.3f}") for t in legend)
    assert f"{r.disca.n_fluctuations} fluctuation(s)" in legend


# -- ToleranceDisplay -----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["b", "disca"])
def test_tolerance_one_line_of_nine_points(value):
    _, ax = plt.subplots()
    ToleranceDisplay.from_predictions(CONF, OK, name="m", value=value, ax=ax)
    (line,) = ax.lines
    tab = disca(CONF, OK).b_table
    np.testing.assert_allclose(line.get_xdata(), [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55])
    np.testing.assert_allclose(line.get_xdata(), TOLERANCES)
    np.testing.assert_allclose(line.get_ydata(), tab[value])
    assert line.get_label() == "m"
    assert ax.get_xlim()[0] > ax.get_xlim()[1]  # strict tolerances on the left


@pytest.mark.parametrize("value", ["b", "disca"])
def test_tolerance_from_benchmark_one_line_per_model(value):
    bench = beyondauc.load_demo()
    _, ax = plt.subplots()
    ToleranceDisplay.from_benchmark(bench, "wine", value=value, ax=ax)
    assert [ln.get_label() for ln in ax.lines] == list(bench.models)
    for line in ax.lines:
        assert len(line.get_xdata()) == len(line.get_ydata()) == 9
        np.testing.assert_allclose(line.get_xdata(), TOLERANCES)
    r = beyondauc.selective_answering(bench, "svm", "wine")
    np.testing.assert_allclose(ax.lines[list(bench.models).index("svm")].get_ydata(), r.disca.b_table[value])


def test_tolerance_several_models():
    tables = {"first": disca(CONF, OK).b_table, "second": disca(CONF_CLEAN, OK_CLEAN).b_table}
    disp = ToleranceDisplay(tables).plot(plt.subplots()[1])
    assert [ln.get_label() for ln in disp.ax_.lines] == ["first", "second"]
    assert all(len(ln.get_xdata()) == 9 for ln in disp.ax_.lines)


# -- DiagnosticsDashboard -------------------------------------------------------------------


def test_dashboard_from_benchmark_has_eight_axes(no_show):
    rc = _rc_snapshot()
    dash = DiagnosticsDashboard.from_benchmark(beyondauc.load_demo(), "logreg", "wine", n_repeats=2)
    assert len(dash.axes_) == 8
    assert plt.get_fignums() == [dash.figure_.number]
    assert all(ax in dash.figure_.axes for ax in dash.axes_)
    assert _rc_snapshot() == rc
    d = dash.diagnostics
    assert d.model == "logreg" and d.dataset == "wine"
    assert "logreg on wine" in dash.figure_._suptitle.get_text()
    summary = dash.axes_[7].texts[0].get_text()
    assert f"drift: {d.drift.score:.4f}" in summary and f"wasserstein: {d.wasserstein.score:.4f}" in summary


@pytest.mark.parametrize("model, dataset", [("svm", "iris_versicolor"), ("knn", "wine")])
def test_dashboard_roc_legend_stays_inside_its_narrow_panel(model, dataset):
    """The ROC panel shares its slot with the colour bar; its legend once reached over the y label."""
    from beyondauc.plots import report_layout
    from beyondauc.report.notebook import raster

    fig = plt.figure(figsize=(12, 7.2), layout=report_layout())
    dash = DiagnosticsDashboard.from_benchmark(beyondauc.load_demo(), model, dataset, n_repeats=2, figure=fig)
    raster(fig, 100)  # the report's size and layout
    fig.dpi = 100
    renderer = fig.canvas.get_renderer()
    roc = dash.axes_[3]
    legend, panel = roc.get_legend().get_window_extent(renderer), roc.get_window_extent(renderer)
    assert panel.x0 <= legend.x0 and legend.x1 <= panel.x1 and panel.y0 <= legend.y0
    plt.close(fig)


SCALES = {
    "prob": lambda s: 1 / (1 + np.exp(-s)),  # probabilities in (0, 1)
    "logit": lambda s: np.clip(12 * s - 5, -50, 50),  # logits in [-50, 50]
    "nll": lambda s: -1e4 + 3 * s,  # negative log-likelihoods around -1e4
}


def _scaled(kind):
    yv, sv, yt, st = _cohorts(11, 80, 70)
    return yv, SCALES[kind](sv), yt, SCALES[kind](st)


@pytest.mark.parametrize("labels", ["01", "strings"])
@pytest.mark.parametrize("scale", ["prob", "logit", "nll"])
def test_dashboard_follows_the_real_score_range(scale, labels, no_show):
    yv, sv, yt, st = _scaled(scale)
    kw = {}
    if labels == "strings":
        yv, yt = np.where(yv == 1, "pos", "neg"), np.where(yt == 1, "pos", "neg")
        kw["pos_label"] = "pos"
    rc = _rc_snapshot()
    dash = DiagnosticsDashboard.from_predictions(yv, sv, yt, st, n_repeats=2, **kw)
    assert len(dash.axes_) == 8 and plt.get_fignums() == [dash.figure_.number]
    assert _rc_snapshot() == rc
    lo, hi = min(sv.min(), st.min()), max(sv.max(), st.max())
    span = hi - lo
    tol = 1e-9 * max(abs(lo), abs(hi))
    # both histograms: shared bins spanning exactly the scores' range, x axis around it
    for ax in dash.axes_[1:3]:
        assert ax.patches
        left = min(p.get_x() for p in ax.patches)
        right = max(p.get_x() + p.get_width() for p in ax.patches)
        assert left == pytest.approx(lo, abs=tol) and right == pytest.approx(hi, abs=tol)
        x0, x1 = ax.get_xlim()
        assert x0 <= lo and x1 >= hi and (x1 - x0) < 1.5 * span
    widths = {round(p.get_width() / span, 9) for ax in dash.axes_[1:3] for p in ax.patches}
    assert len(widths) == 1  # the same edges in both cohorts
    # the validation histogram counts each class once, with the classes mapped by pos_label
    n_pos = int((np.asarray(yv) == kw.get("pos_label", 1)).sum())
    heights = [p.get_height() for p in dash.axes_[1].patches]
    assert sum(heights[:30]) == len(yv) - n_pos and sum(heights[30:]) == n_pos
    # ROC colour limits are the real range of both cohorts
    lcs = [c for c in dash.axes_[3].collections if isinstance(c, LineCollection)]
    assert len(lcs) == 2
    for lc in lcs:
        assert (lc.norm.vmin, lc.norm.vmax) == (lo, hi)
    # robustness sigma grid reaches the scores' range; drift thresholds are the scores
    for ax in dash.axes_[4:6]:
        for line in ax.lines:
            assert max(line.get_xdata()) == pytest.approx(span, rel=1e-12)
    thresholds = dash.axes_[6].lines[0].get_xdata()
    assert thresholds.min() == lo and thresholds.max() == hi
    # labels were mapped with pos_label: the AUCs match sklearn
    d = dash.diagnostics
    fpr, tpr, _ = roc_curve(yt, st, pos_label=kw.get("pos_label", 1), drop_intermediate=False)
    assert d.auc_test == pytest.approx(np.trapezoid(tpr, fpr), abs=1e-12)
    assert d.auc_test > 0.6


@pytest.mark.parametrize("scale", ["logit", "nll"])
def test_dashboard_not_stuck_on_unit_interval(scale):
    """testAUC's dashboard assumed scores in [0, 1]; these are far outside."""
    yv, sv, yt, st = _scaled(scale)
    dash = DiagnosticsDashboard.from_predictions(yv, sv, yt, st, n_repeats=2)
    x0, x1 = dash.axes_[1].get_xlim()
    assert not (x0 >= 0 and x1 <= 1.05)
    assert (x0, x1) != (0.0, 1.0)
    lc = dash.axes_[3].collections[0]
    assert (lc.norm.vmin, lc.norm.vmax) != (0.0, 1.0)


@pytest.mark.parametrize("pyplot_figure", [True, False])
def test_dashboard_draws_on_given_figure(pyplot_figure, no_show):
    fig = plt.figure(figsize=(20, 9)) if pyplot_figure else Figure(figsize=(20, 9))
    fignums = plt.get_fignums()
    rc = _rc_snapshot()
    dash = DiagnosticsDashboard.from_predictions(YV, SV, YT, ST, n_repeats=2, figure=fig)
    assert dash.figure_ is fig
    assert plt.get_fignums() == fignums
    assert _rc_snapshot() == rc
    assert len(dash.axes_) == 8 and all(ax.figure is fig and ax in fig.axes for ax in dash.axes_)


def test_dashboard_plot_without_figure_creates_one():
    dash = DiagnosticsDashboard.from_predictions(YV, SV, YT, ST, n_repeats=2, figure=Figure(figsize=(20, 9)))
    assert plt.get_fignums() == []
    first = dash.figure_
    again = dash.plot()
    assert again is dash and dash.figure_ is not first
    assert plt.get_fignums() == [dash.figure_.number]
    assert len(dash.axes_) == 8


def test_dashboard_numbers_are_the_metrics():
    dash = DiagnosticsDashboard.from_predictions(
        YV, SV, YT, ST, n_repeats=3, random_state=4, figure=Figure(figsize=(20, 9))
    )
    d = dash.diagnostics
    sigma = max(SV.max(), ST.max()) - min(SV.min(), ST.min())
    assert d.bias_val.score == bias_robustness(YV, SV, sigma_max=sigma).score
    assert d.noise_test.score == noise_robustness(YT, ST, sigma_max=sigma, n_repeats=3, random_state=4).score
    assert d.drift.score == sens_spec_drift(YV, SV, YT, ST).score
    assert d.wasserstein.score == wasserstein_matrix(YV, SV, YT, ST).score


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("where", ["s_val", "s_test"])
def test_roc_nonfinite_scores_name_the_parameter(where, bad):
    sv, st = SV.copy(), ST.copy()
    (sv if where == "s_val" else st)[3] = bad
    with pytest.raises(ValueError, match=f"`{where}`"):
        ThresholdROCDisplay.from_predictions(YV, sv, YT, st)
    assert plt.get_fignums() == []


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_histogram_nonfinite_scores_name_the_parameter(bad):
    s = SV.copy()
    s[0] = bad
    with pytest.raises(ValueError, match="`y_score`"):
        ClassHistogramDisplay.from_predictions(YV, s)
    assert plt.get_fignums() == []


@pytest.mark.parametrize("where", ["s_val", "s_test"])
def test_dashboard_nan_scores_name_the_parameter(where):
    sv, st = SV.copy(), ST.copy()
    (sv if where == "s_val" else st)[0] = np.nan
    with pytest.raises(ValueError, match=f"`{where}`"):
        DiagnosticsDashboard.from_predictions(YV, sv, YT, st, n_repeats=2)
    assert plt.get_fignums() == []


@pytest.mark.parametrize("kind", ["other", "Bias", ""])
def test_robustness_unknown_kind(kind):
    with pytest.raises(ValueError, match="`kind`"):
        RobustnessDisplay.from_predictions(YV, SV, kind=kind)
    assert plt.get_fignums() == []


@pytest.mark.parametrize("value", ["x", "B", "auc"])
def test_tolerance_unknown_value(value):
    with pytest.raises(ValueError, match=re.escape(repr(value))):
        ToleranceDisplay({"m": disca(CONF, OK).b_table}, value=value)
    with pytest.raises(ValueError, match="`value`"):
        ToleranceDisplay.from_predictions(CONF, OK, value=value)
    assert plt.get_fignums() == []


# -- AUCAccuracyDisplay ------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["m1", "m3"])
@pytest.mark.parametrize("score", ["accuracy", "kappa"])
def test_auc_accuracy_highlights_the_model_points(score, model):
    disp = AUCAccuracyDisplay.from_results(RESULTS, model=model, score=score, ax=plt.subplots()[1])
    others, mine = disp.ax_.collections[:2]
    rows = RESULTS[RESULTS["model"] == model]
    rest = RESULTS[RESULTS["model"] != model]
    np.testing.assert_array_equal(mine.get_offsets(), rows[["auc", score]].to_numpy())
    np.testing.assert_array_equal(others.get_offsets(), rest[["auc", score]].to_numpy())
    assert [t.get_text() for t in disp.ax_.texts] == rows["dataset"].tolist()
    assert disp.ax_.get_ylabel() == f"expected {score}"
    assert "(xdomain, logistic)" in disp.ax_.get_title()
    # the accuracy = AUC line only where the two share a scale
    assert (len(disp.ax_.lines) == 1) == (score == "accuracy")


@pytest.mark.parametrize("model", ["svm", "knn", "logreg"])
@pytest.mark.parametrize("score", ["accuracy", "kappa"])
def test_auc_accuracy_labels_do_not_overlap(model, score):
    """On the demo the model's points crowd the top right; its dataset labels are spread so no two boxes
    meet (as drawn, after the layout), and a label moved off its point has a line to it."""
    from matplotlib.text import Text

    from beyondauc.plots import report_layout
    from beyondauc.report.notebook import raster

    results = beyondauc.expected_accuracy(beyondauc.load_demo(), protocol="xdomain")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), layout=report_layout())
    disp = AUCAccuracyDisplay.from_results(results, model=model, score=score, ax=axes[0])
    raster(fig, 100)
    fig.dpi = 100
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in disp.ax_.texts]  # the text, not its leader line
    assert [t.get_text() for t in disp.ax_.texts] == results.loc[results["model"] == model, "dataset"].tolist()
    for i in range(len(boxes)):
        for j in range(i):
            assert not boxes[i].overlaps(boxes[j]), (disp.ax_.texts[i].get_text(), disp.ax_.texts[j].get_text())
    for t in disp.ax_.texts:  # a label left in place is 3 points above its point
        assert (t.arrow_patch is not None) == (t.get_position()[1] < 2.5)
    plt.close(fig)


def test_auc_accuracy_without_model_one_scatter_per_model():
    disp = AUCAccuracyDisplay.from_results(RESULTS, ax=plt.subplots()[1])
    assert [c.get_label() for c in disp.ax_.collections] == ["m1", "m2", "m3"]
    assert len(disp.ax_.texts) == 0
    for c, m in zip(disp.ax_.collections, ["m1", "m2", "m3"]):
        np.testing.assert_array_equal(c.get_offsets()[:, 1], RESULTS.loc[RESULTS["model"] == m, "accuracy"])


def test_auc_accuracy_nan_point_has_no_label():
    res = RESULTS.copy()
    res.loc[0, "accuracy"] = np.nan  # m1 on d1
    disp = AUCAccuracyDisplay.from_results(res, model="m1", ax=plt.subplots()[1])
    assert [t.get_text() for t in disp.ax_.texts] == ["d2", "d3"]


def test_auc_accuracy_from_demo_results():
    res = beyondauc.expected_accuracy(beyondauc.load_demo(), protocol="outdata", method="stump")
    disp = AUCAccuracyDisplay.from_results(res, model="svm", score="kappa")
    assert plt.get_fignums() == [disp.figure_.number]
    assert len(disp.ax_.texts) == 8 and "(outdata, stump)" in disp.ax_.get_title()


@pytest.mark.parametrize("model", ["m4", "M1", ""])
def test_auc_accuracy_unknown_model(model):
    with pytest.raises(ValueError, match="`model`.*" + re.escape(repr(model))):
        AUCAccuracyDisplay.from_results(RESULTS, model=model)
    assert plt.get_fignums() == []


def test_auc_accuracy_rejects_several_protocols():
    both = pd.concat([RESULTS, RESULTS.assign(protocol="indata")])
    with pytest.raises(ValueError, match="protocol x method"):
        AUCAccuracyDisplay.from_results(both)
    with pytest.raises(ValueError, match="`score`"):
        AUCAccuracyDisplay.from_results(RESULTS, score="precision")
    assert plt.get_fignums() == []


# -- RankSlopeDisplay -----------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", ["mean", "d1", "d3"])
@pytest.mark.parametrize("score", ["accuracy", "kappa"])
def test_rank_slope_lines_are_the_rank_changes(score, dataset):
    disp = RankSlopeDisplay.from_results(RESULTS, score=score, dataset=dataset, ax=plt.subplots()[1])
    ch = beyondauc.rank_changes(RESULTS, score=score).query("dataset == @dataset")
    lines = disp.ax_.lines
    assert len(lines) == len(ch)
    colors = {1: "tab:green", -1: "tab:red", 0: "grey"}
    for line, (_, row) in zip(lines, ch.iterrows()):
        assert list(line.get_ydata()) == [row["auc_rank"], row["rank"]]
        assert line.get_color() == colors[int(np.sign(row["change"]))]
    labels = {(t.get_position(), t.get_text()) for t in disp.ax_.texts}
    for _, row in ch.iterrows():
        assert any(text == row["model"] and pos[1] == row["rank"] and pos[0] > 1 for pos, text in labels)
    assert disp.ax_.yaxis_inverted()
    assert score in disp.ax_.get_xticklabels()[1].get_text()


def test_rank_slope_ties_share_a_label_and_nan_is_not_drawn():
    disp = RankSlopeDisplay(["a", "b", "c", "d"], [1, 2, 3, np.nan], [1, 1, 3, 2], highlight="b").plot()
    assert len(disp.ax_.lines) == 3
    right = [t for t in disp.ax_.texts if t.get_position()[0] > 1]
    assert sorted(t.get_text() for t in right) == ["a, b", "c"]
    bold = [t.get_text() for t in disp.ax_.texts if t.get_fontweight() == "bold"]
    assert bold == ["b", "a, b"]
    widths = [line.get_linewidth() for line in disp.ax_.lines]
    assert widths[1] > widths[0] == widths[2]


def test_rank_slope_unknown_dataset():
    with pytest.raises(ValueError, match="`dataset`.*'d9'"):
        RankSlopeDisplay.from_results(RESULTS, dataset="d9")
    assert plt.get_fignums() == []


# -- ScoreHistogramsDisplay -----------------------------------------------------------------------


@pytest.mark.parametrize("density", [True, False])
@pytest.mark.parametrize("model", ["knn", "single_feature"])
def test_score_histograms_panels_are_the_table(model, density, no_show):
    bench = beyondauc.load_demo()
    rc = _rc_snapshot()
    disp = ScoreHistogramsDisplay.from_benchmark(bench, model, bins=10, density=density)
    assert plt.get_fignums() == [disp.figure_.number]
    assert _rc_snapshot() == rc
    table = beyondauc.score_histograms(bench, bins=10, models=[model])
    names = list(bench.datasets) + ["all"]
    assert [ax.get_title() for ax in disp.axes_] == names
    column = "density" if density else "count"
    for ax, name in zip(disp.axes_, names):
        stairs = ax.patches
        assert len(stairs) == 2
        for patch, label in zip(stairs, (0, 1)):
            part = table[(table["dataset"] == name) & (table["label"] == label)]
            values, edges, _ = patch.get_data()
            np.testing.assert_allclose(values, part[column])
            np.testing.assert_allclose(edges[:-1], part["left"])
    # one set of edges for every panel: the model's (robust) range on the whole benchmark
    s = bench.scores(model)
    lo, hi = table["left"].min(), table["right"].max()
    assert s.min() <= lo < hi <= s.max()
    for ax in disp.axes_:
        edges = ax.patches[0].get_data()[1]
        assert edges[0] == lo and edges[-1] == pytest.approx(hi)
    title = disp.figure_._suptitle.get_text()
    assert model in title
    clipped = int(table.loc[table["dataset"] == "all", "clipped"].sum())
    assert (f"{clipped} of {len(s)} scores outside" in title) == (clipped > 0)
    if clipped:  # the range as a reader reads it: both ends to the decimals of its width, no 5.98e-11
        assert format_range(lo, hi) in title and "e-" not in title
    for ax, name in zip(disp.axes_, names):
        k = int(table.loc[table["dataset"] == name, "clipped"].sum())
        notes = [t.get_text() for t in ax.texts]
        assert notes == ([f"{k} clipped"] if k else []), (name, notes)


@pytest.mark.parametrize("ncols", [1, 3, 4, 20])
def test_score_histograms_layout_hides_unused_panels(ncols):
    disp = ScoreHistogramsDisplay.from_benchmark(beyondauc.load_demo(), "svm", figure=Figure(), ncols=ncols)
    n = len(disp.axes_)
    cols = min(ncols, n)
    rows = -(-n // cols)
    assert len(disp.figure_.axes) == rows * cols
    hidden = [ax for ax in disp.figure_.axes if ax not in disp.axes_]
    assert len(hidden) == rows * cols - n and all(not ax.axison for ax in hidden)
    assert plt.get_fignums() == []


def test_score_histograms_draws_on_given_figure_and_plot_makes_a_new_one():
    fig = Figure()
    disp = ScoreHistogramsDisplay.from_benchmark(beyondauc.load_demo(), "mlp", figure=fig)
    assert disp.figure_ is fig and plt.get_fignums() == []
    again = disp.plot()
    assert again is disp and disp.figure_ is not fig
    assert plt.get_fignums() == [disp.figure_.number]


def test_score_histograms_bad_input():
    bench = beyondauc.load_demo()
    with pytest.raises(ValueError, match="`model`"):
        ScoreHistogramsDisplay.from_benchmark(bench, "nope")
    with pytest.raises(ValueError, match="one model"):
        ScoreHistogramsDisplay(beyondauc.score_histograms(bench, models=["knn", "svm"]))
    with pytest.raises(ValueError, match="`ncols`"):
        ScoreHistogramsDisplay.from_benchmark(bench, "knn", ncols=0)
    assert plt.get_fignums() == []


@pytest.mark.parametrize("kind", ["dashboard", "histograms"])
def test_report_layout_places_panels_where_two_pass_tight_layout_does(kind):
    """report_layout() measures once; layout="tight" measures twice: same positions, same pixels."""
    from matplotlib.layout_engine import TightLayoutEngine

    from beyondauc.plots import report_layout
    from beyondauc.report.notebook import raster

    rng = np.random.default_rng(3)
    yv, yt = rng.integers(0, 2, 120), rng.integers(0, 2, 90)
    sv, st = rng.normal(yv * 1.5, 1.0), rng.normal(yt * 1.2, 1.3)
    drawn = []
    for layout in ("tight", report_layout()):
        fig = Figure(figsize=(12, 7.2), layout=layout)
        if kind == "dashboard":
            DiagnosticsDashboard.from_predictions(yv, sv, yt, st, n_repeats=2, figure=fig)
        else:
            ScoreHistogramsDisplay.from_benchmark(beyondauc.load_demo(), "svm", figure=fig)
        drawn.append((np.array([ax.get_position().bounds for ax in fig.axes]), np.asarray(raster(fig, 100))))
    assert isinstance(report_layout(), TightLayoutEngine)
    np.testing.assert_array_equal(drawn[0][0], drawn[1][0])
    np.testing.assert_array_equal(drawn[0][1], drawn[1][1])


def test_the_displays_import_no_private_name_from_metrics():
    """Every number a Display draws comes from a public metric function, not a private copy."""
    import ast
    from pathlib import Path

    import beyondauc.plots

    private = []
    for path in Path(beyondauc.plots.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and "metrics" in (node.module or ""):
                private += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []
