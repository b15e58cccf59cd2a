"""Tests of :mod:`beyondauc.metrics.calibration.reliability` (ECE, calibration_error_table) and ReliabilityDisplay.

* :func:`expected_calibration_error` against a loop over the bins of
  ``sklearn.calibration.calibration_curve`` (bin membership decided example
  by example, checked against calibration_curve's own per-bin means);
* :func:`calibration_error_table` against :class:`ScoreCalibrator` fitted per
  cell (and per indata split), its probabilities binned by the loop above.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.calibration import calibration_curve  # noqa: E402
from sklearn.model_selection import ShuffleSplit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from beyondauc import (  # noqa: E402
    METHODS,
    PROTOCOLS,
    CalibrationErrors,
    ScoreCalibrator,
    UndefinedMetricWarning,
    calibration_error_table,
    expected_calibration_error,
    reliability_bins,
)
from beyondauc.plots import ReliabilityDisplay  # noqa: E402
from helpers.benchmarks import small_bench  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """The per-fit scikit-learn loops: threads only oversubscribe the cores on one feature."""
    with threadpool_limits(limits=1):
        yield


# -- the independent reference ------------------------------------------------------------


def loop_bins(y, p, n_bins):
    """Per-bin (count, positives, sum of p), bin membership decided example by example.

    calibration_curve's uniform bins: edges linspace(0, 1, n_bins + 1); an
    example belongs to the first bin whose upper edge is >= p (the last bin
    takes everything above the last inner edge).
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    count, pos, psum = np.zeros(n_bins), np.zeros(n_bins), np.zeros(n_bins)
    for yi, pi in zip(y, p):
        b = next((k for k in range(n_bins - 1) if pi <= edges[k + 1]), n_bins - 1)
        count[b] += 1
        pos[b] += yi
        psum[b] += pi
    return count, pos, psum


def loop_ece(y, p, n_bins):
    count, pos, psum = loop_bins(y, p, n_bins)
    nz = count > 0
    ece = sum(count[b] / count.sum() * abs(pos[b] / count[b] - psum[b] / count[b]) for b in np.flatnonzero(nz))
    # the loop's bins are calibration_curve's
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins)
    assert np.allclose(prob_true, pos[nz] / count[nz], rtol=0, atol=1e-12)
    assert np.allclose(prob_pred, psum[nz] / count[nz], rtol=0, atol=1e-12)
    return ece


@st.composite
def labelled_probabilities(draw):
    n_bins = draw(st.integers(1, 20))
    n = draw(st.integers(1, 60))
    edges = [k / n_bins for k in range(n_bins + 1)] + [0.5, 0.1, 0.7]  # probabilities on bin edges
    p = draw(st.lists(st.one_of(st.floats(0, 1), st.sampled_from(edges)), min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return np.array(y), np.array(p, dtype=float), n_bins


@settings(max_examples=80, deadline=None, derandomize=True)
@given(labelled_probabilities())
def test_ece_matches_loop_over_calibration_curve_bins(data):
    y, p, n_bins = data
    got = expected_calibration_error(y, p, n_bins=n_bins)
    assert got == pytest.approx(loop_ece(y, p, n_bins), abs=1e-12)
    bins, mean_predicted, fraction_positive, count = reliability_bins(y, p, n_bins=n_bins)
    ref_count, _, _ = loop_bins(y, p, n_bins)
    assert bins.tolist() == np.flatnonzero(ref_count).tolist()
    assert count.tolist() == ref_count[ref_count > 0].astype(int).tolist()


def test_ece_hand_worked():
    # bins [0, .5] and (.5, 1]: |0 - .2| * 2/4 + |1 - .75| * 2/4
    assert expected_calibration_error([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], n_bins=2) == pytest.approx(0.225)
    # 0.5 lies on the inner edge: it belongs to the lower bin, like calibration_curve
    assert expected_calibration_error([1, 0], [0.5, 0.6], n_bins=2) == pytest.approx(0.5 * 0.5 + 0.5 * 0.6)
    # perfectly calibrated bins
    assert expected_calibration_error([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == 0.0
    # labels by pos_label; one bin = |mean(y) - mean(p)|
    assert expected_calibration_error(["a", "b", "b"], [0.2, 0.9, 0.4], n_bins=1, pos_label="b") == pytest.approx(
        abs(2 / 3 - 0.5)
    )


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(y_true=[0, 1], y_prob=[0.2, 1.5]), "`y_prob` must be probabilities in \\[0, 1\\], got 1.5 at position 1"),
        (dict(y_true=[0, 1], y_prob=[0.2]), "same length"),
        (dict(y_true=[0, 1], y_prob=[0.2, 0.3], n_bins=0), "`n_bins` must be an int >= 1"),
        (dict(y_true=[0, 1], y_prob=[0.2, np.nan]), "`y_prob` must be finite"),
        (dict(y_true=[0, 1, 2], y_prob=[0.2, 0.3, 0.4]), "`y_true` must be binary"),
        (dict(y_true=[], y_prob=[]), "empty"),
    ],
)
def test_ece_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        expected_calibration_error(**kw)


# -- calibration_error_table against ScoreCalibrator per cell ----------------------------------


N_REPEATS = 4


def reference_cell(df, domains, protocol, method, class_weight, reference, dataset, model, n_bins):
    """(count, positives, psum, n_nan) of one cell from ScoreCalibrator fitted per calibration."""
    in_d = (df["dataset"] == dataset).to_numpy()
    s, y = df[model].to_numpy(float), df["label"].to_numpy(int)
    same = [o for o in domains if o != dataset and domains[o] == domains[dataset]]
    pairs = []
    if protocol == "indata" or (protocol == "indomain" and not same):
        sd, yd = s[in_d], y[in_d]
        for tr, te in ShuffleSplit(n_splits=N_REPEATS, test_size=0.2, random_state=0).split(sd[:, None]):
            pairs.append((sd[tr], yd[tr], sd[te], yd[te]))
    else:
        dom = df["dataset"].map(domains).to_numpy()
        cal, ev = {
            "xdomain": (~in_d, in_d),
            "outdomain": (dom != domains[dataset], in_d),
            "indomain": (df["dataset"].isin(same).to_numpy(), in_d),
            "outdata": (in_d, ~in_d),
        }[protocol]
        if cal.any() and ev.any():
            pairs.append((s[cal], y[cal], s[ev], y[ev]))
    ys, ps, n_nan = [], [], 0
    for sc, yc, se, ye in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            cal = ScoreCalibrator(method, class_weight=class_weight, reference=reference).fit(sc, yc)
        p = cal.predict_proba(se)
        ok = ~np.isnan(p)
        n_nan += int((~ok).sum())
        ys.append(ye[ok])
        ps.append(p[ok])
    y_all, p_all = (np.concatenate(ys), np.concatenate(ps)) if ys else (np.zeros(0), np.zeros(0))
    return loop_bins(y_all, p_all, n_bins) + (n_nan,)


@pytest.mark.parametrize("reference", [None, "opitz2024"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("method", METHODS)
def test_table_matches_score_calibrator_per_cell(method, class_weight, reference):
    df, domains, bench = small_bench()
    n_bins = 15 if method == "logistic" else 10  # 10 bins put 0.5 (a balanced leaf) on an edge
    res = calibration_error_table(
        bench, methods=[method], class_weight=class_weight, n_repeats=N_REPEATS, n_bins=n_bins, reference=reference
    )
    assert isinstance(res, CalibrationErrors) and res.n_bins == n_bins
    assert len(res.ece) == len(PROTOCOLS) * len(bench.datasets) * len(bench.models)
    rel = res.reliability.set_index(["protocol", "method", "dataset", "model"]).sort_index()
    for row in res.ece.itertuples():
        count, pos, psum, n_nan = reference_cell(
            df, domains, row.protocol, method, class_weight, reference, row.dataset, row.model, n_bins
        )
        where = (row.protocol, row.dataset, row.model)
        assert row.n_evaluation == count.sum() and row.n_nan == n_nan, where
        if count.sum() == 0:
            assert np.isnan(row.ece), where
            continue
        nz = count > 0
        ref_ece = float(np.sum(np.abs(pos[nz] - psum[nz])) / count.sum())
        assert row.ece == pytest.approx(ref_ece, abs=1e-12), where
        cell = rel.loc[(row.protocol, method, row.dataset, row.model)]
        assert cell["bin"].tolist() == np.flatnonzero(nz).tolist(), where
        assert cell["count"].tolist() == count[nz].astype(int).tolist(), where
        assert np.allclose(cell["fraction_positive"], pos[nz] / count[nz], rtol=0, atol=1e-12), where
        assert np.allclose(cell["mean_predicted"], psum[nz] / count[nz], rtol=0, atol=1e-12), where
        assert np.allclose(cell["bin_low"], np.flatnonzero(nz) / n_bins) and np.allclose(
            cell["bin_high"], (np.flatnonzero(nz) + 1) / n_bins
        )
    if reference == "opitz2024" and method == "isotonic":
        assert res.ece["n_nan"].sum() > 0  # precondition: some scores fall outside a calibration range
    else:
        assert (res.ece["n_nan"] == 0).all()


def test_table_frames_are_tidy_and_ordered():
    _, _, bench = small_bench()
    res = calibration_error_table(bench, protocols=["outdata", "xdomain"], methods=["stump", "logistic"], n_repeats=2)
    ece = res.ece
    assert list(ece.columns) == [
        "protocol",
        "method",
        "dataset",
        "domain",
        "model",
        "calibration",
        "ece",
        "n_evaluation",
        "n_nan",
    ]
    assert list(dict.fromkeys(ece["protocol"])) == ["outdata", "xdomain"]
    assert list(dict.fromkeys(ece["method"])) == ["stump", "logistic"]
    assert list(res.reliability.columns) == [
        "protocol",
        "method",
        "dataset",
        "model",
        "bin",
        "bin_low",
        "bin_high",
        "mean_predicted",
        "fraction_positive",
        "count",
    ]
    # bins of a cell sum to its evaluation examples
    sums = res.reliability.groupby(["protocol", "method", "dataset", "model"], sort=False)["count"].sum()
    merged = ece.set_index(["protocol", "method", "dataset", "model"])["n_evaluation"]
    assert (sums.reindex(merged.index) == merged).all()
    assert "CalibrationErrors(n_bins=15" in repr(res) and "<table" in res._repr_html_()
    # same seed, same numbers
    again = calibration_error_table(bench, protocols=["outdata", "xdomain"], methods=["stump", "logistic"], n_repeats=2)
    pd.testing.assert_frame_equal(res.ece, again.ece)
    # models in parallel processes: the same frames
    par = calibration_error_table(
        bench, protocols=["outdata", "xdomain"], methods=["stump", "logistic"], n_repeats=2, n_jobs=2
    )
    pd.testing.assert_frame_equal(res.ece, par.ece)
    pd.testing.assert_frame_equal(res.reliability, par.reliability)


def test_indomain_fallback_is_labelled_indata():
    _, _, bench = small_bench()
    res = calibration_error_table(bench, protocols=["indomain", "indata"], methods=["stump"], n_repeats=3)
    lone = res.ece[res.ece["dataset"] == "lone"]
    assert (lone["calibration"] == "indata").all()
    a = lone[lone["protocol"] == "indomain"]["ece"].to_numpy()
    b = lone[lone["protocol"] == "indata"]["ece"].to_numpy()
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "kw, param",
    [
        ({"n_bins": 0}, "n_bins"),
        ({"reference": "paper"}, "reference"),
        ({"methods": ["platt"]}, "method"),
        ({"protocols": ["x"]}, "protocol"),
    ],
)
def test_table_bad_options(kw, param):
    _, _, bench = small_bench()
    with pytest.raises(ValueError, match=f"`{param}`"):
        calibration_error_table(bench, **kw)


# -- the display -------------------------------------------------------------------------------


def test_display_from_predictions_draws_bins_diagonal_and_ece():
    rng = np.random.default_rng(0)
    p = rng.random(300)
    y = (rng.random(300) < p**2).astype(int)
    disp = ReliabilityDisplay.from_predictions(y, p, n_bins=10, name="m")
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10)
    x, yy = disp.line_.get_data()
    assert np.allclose(x, prob_pred) and np.allclose(yy, prob_true)
    assert disp.ece == pytest.approx(expected_calibration_error(y, p, n_bins=10), abs=1e-12)
    texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert texts == ["perfectly calibrated", f"m (ECE = {disp.ece:.3f})"]
    assert disp.figure_ is disp.ax_.figure
    plt.close("all")


def test_display_plot_returns_self_on_given_axes():
    disp = ReliabilityDisplay([0.2, 0.8], [0.0, 1.0], [3, 3], name="x")
    fig, ax = plt.subplots()
    assert disp.plot(ax=ax, ref_line=False) is disp and disp.ax_ is ax
    assert len(ax.lines) == 1
    plt.close("all")


def test_display_from_table():
    _, _, bench = small_bench()
    res = calibration_error_table(bench, protocols=["xdomain"], methods=["isotonic"])
    disp = ReliabilityDisplay.from_table(res, model="logit", dataset="b", protocol="xdomain", method="isotonic")
    row = res.ece.query("model == 'logit' and dataset == 'b'")
    assert disp.ece == pytest.approx(row["ece"].item(), abs=1e-12)
    assert disp.count.sum() == row["n_evaluation"].item()
    with pytest.raises(ValueError, match="`dataset` must be one of"):
        ReliabilityDisplay.from_table(
            res.reliability, model="logit", dataset="zz", protocol="xdomain", method="isotonic"
        )
    with pytest.raises(ValueError, match="`table` must be"):
        ReliabilityDisplay.from_table(res.ece, model="logit", dataset="b", protocol="xdomain", method="isotonic")
    plt.close("all")
