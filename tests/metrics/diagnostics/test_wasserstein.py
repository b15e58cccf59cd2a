"""Wasserstein matrices at p = 1 and p = 2 side by side.

Roberts et al.'s text says 2-Wasserstein, but their Figure 4 was computed
with p = 1 (``scipy.stats.wasserstein_distance``) on the example data of the
testAUC notebook.  The example data are re-drawn here from their description
(seed 2023; 10,000 negatives N(0.48, 0.02) and positives N(0.52, 0.02), kept
inside (0, 1); the test cohort maps each score s to
``0.5 + sign(s - 0.5) * |s - 0.5|^0.05 / 2``), and the figure's matrix
comes out at p = 1, not at p = 2.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from beyondauc import UndefinedMetricWarning, cohort_diagnostics, diagnostics_frame, load_demo, wasserstein_matrix
from beyondauc.plots import DiagnosticsDashboard, WassersteinDisplay
from helpers.cli import run


def figure4_cohorts():
    rng = np.random.RandomState(2023)

    def draw(mean):
        s = rng.normal(mean, 0.02, 10_000)
        return s[(s > 0) & (s < 1)]

    neg, pos = draw(0.48), draw(0.52)
    s_val = np.concatenate([neg, pos])
    y = np.concatenate([np.zeros(len(neg)), np.ones(len(pos))])
    centred = s_val - 0.5
    s_test = 0.5 + np.sign(centred) * np.abs(centred) ** 0.05 / 2
    return y, s_val, y, s_test


def brute_w2(a, b):
    """2-Wasserstein of two empirical distributions: both quantile functions on a common fine grid of levels."""
    a, b = np.sort(a), np.sort(b)
    n, m = len(a), len(b)
    lcm = n * m // np.gcd(n, m)
    u = (np.arange(lcm) + 0.5) / lcm  # one level inside every step of both quantile functions
    qa, qb = a[np.floor(u * n).astype(int)], b[np.floor(u * m).astype(int)]
    return float(np.sqrt(np.mean((qa - qb) ** 2)))


def test_figure4_is_the_one_wasserstein():
    yv, sv, yt, st = figure4_cohorts()
    w1 = wasserstein_matrix(yv, sv, yt, st, p=1)
    np.testing.assert_array_equal(w1.matrix.round(3), [[0.040, 0.384], [0.384, 0.562]])
    np.testing.assert_array_equal(w1.matrix.round(2), [[0.04, 0.38], [0.38, 0.56]])  # the published figure
    # scipy's earth mover's distance, entry by entry
    vneg, vpos, tneg, tpos = sv[yv == 0], sv[yv == 1], st[yt == 0], st[yt == 1]
    want = [
        [wasserstein_distance(vneg, vpos), wasserstein_distance(vneg, tneg)],
        [wasserstein_distance(tpos, vpos), wasserstein_distance(tpos, tneg)],
    ]
    np.testing.assert_allclose(w1.matrix, want, rtol=1e-10)
    # at p = 2 the test cohort's between-class entry is not the figure's 0.56
    w2 = wasserstein_matrix(yv, sv, yt, st, p=2)
    assert round(w2.matrix[1, 1], 3) == 0.668 and round(w2.matrix[1, 1], 2) != 0.56


def test_p2_against_common_grid_quantiles():
    rng = np.random.default_rng(1)
    yv, sv = np.r_[np.zeros(6), np.ones(9)], rng.normal(size=15)
    yt, st = np.r_[np.zeros(4), np.ones(10)], rng.normal(size=14) + 0.5
    w = wasserstein_matrix(yv, sv, yt, st, p=2)
    pairs = [
        [(sv[yv == 0], sv[yv == 1]), (sv[yv == 0], st[yt == 0])],
        [(st[yt == 1], sv[yv == 1]), (st[yt == 1], st[yt == 0])],
    ]
    for i in range(2):
        for j in range(2):
            assert w.matrix[i, j] == pytest.approx(brute_w2(*pairs[i][j]), rel=1e-12)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_cohort_diagnostics_carries_both_orders(p):
    bench = load_demo()
    d = cohort_diagnostics(bench, "svm", "wine", p=p, n_repeats=2, n_points=5)
    args = (d.y_val, d.s_val, d.y_test, d.s_test)
    assert d.wasserstein.p == p
    np.testing.assert_array_equal(d.wasserstein.matrix, wasserstein_matrix(*args, p=p).matrix)
    assert d.wasserstein_p1.p == 1 and d.wasserstein_p2.p == 2
    np.testing.assert_array_equal(d.wasserstein_p1.matrix, wasserstein_matrix(*args, p=1).matrix)
    np.testing.assert_array_equal(d.wasserstein_p2.matrix, wasserstein_matrix(*args, p=2).matrix)
    if p in (1, 2):  # computed once
        assert d.wasserstein is (d.wasserstein_p1 if p == 1 else d.wasserstein_p2)
    out = d.to_dict()
    assert (out["wasserstein"], out["wasserstein_p"]) == (d.wasserstein.score, p)
    assert (out["wasserstein_p1"], out["wasserstein_p2"]) == (d.wasserstein_p1.score, d.wasserstein_p2.score)
    assert out["wasserstein_p1"] != out["wasserstein_p2"]
    frame = diagnostics_frame([d])
    for key in ("wasserstein_p1", "wasserstein_p2"):
        assert frame.loc[0, key] == out[key]


def test_single_class_warns_once():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = DiagnosticsDashboard.from_predictions(
            [0, 0, 0], [0.1, 0.2, 0.3], [0, 1, 1], [0.1, 0.5, 0.6], n_repeats=1, n_points=3
        ).figure_
    import matplotlib.pyplot as plt

    plt.close(d)
    wasser = [w for w in caught if issubclass(w.category, UndefinedMetricWarning) and "Wasserstein" in str(w.message)]
    assert len(wasser) == 1


def test_dashboard_shows_both_orders():
    import matplotlib.pyplot as plt

    yv, sv, yt, st = figure4_cohorts()
    dash = DiagnosticsDashboard.from_predictions(yv, sv, yt, st, n_repeats=1, n_points=3)
    ax = dash.axes_[0]
    assert "2-Wasserstein" in ax.get_title() and "[p=1: W = " in ax.get_title()
    cells = [t.get_text() for t in ax.texts]
    assert any("[p=1: 0.5619]" in c for c in cells) and any(c.startswith("0.6682") for c in cells)
    plt.close(dash.figure_)
    disp = WassersteinDisplay(wasserstein_matrix(yv, sv, yt, st, p=1)).plot()
    assert "[p=" not in disp.ax_.get_title()
    plt.close(disp.figure_)


def test_cli_json_names_p(capsys):
    code, text = run(
        ["diagnose", "--model", "svm", "--dataset", "wine", "--repeats", "2", "--points", "5", "--format", "json"]
    )
    assert code == 0, capsys.readouterr().err
    rec = json.loads(text)
    d = cohort_diagnostics(load_demo(), "svm", "wine", n_repeats=2, n_points=5)
    assert rec["wasserstein_p"] == 2 and rec["wasserstein"] == rec["wasserstein_p2"] == d.wasserstein_p2.score
    assert rec["wasserstein_p1"] == d.wasserstein_p1.score
    for order, w in ((1, d.wasserstein_p1), (2, d.wasserstein_p2)):
        m = w.to_frame()
        got = rec[f"wasserstein_matrix_p{order}"]
        want = {(r, c): m.loc[r, c] for r in m.index for c in m.columns}
        assert {(r, c): got[r][c] for r in got for c in got[r]} == want
    code, text = run(["diagnose", "--model", "svm", "--dataset", "wine", "--repeats", "2", "--points", "5", "--p", "1"])
    assert code == 0
    assert text.count("Wasserstein matrix, wine") == 2  # p = 1 (asked for) and p = 2, each once
