"""Bounded Monte Carlo: the cells the replicates run on (metrics.cells and the ``cells`` parameter)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.evaluation.parameters import check_evaluation_parameters
from beyondauc.metrics.uncertainty.cells import cell_scores


def _brute_cells(s, strata, cells):
    """The cells, one stratum and one example at a time: cuts per stratum, pooled, then each cell's value."""
    cuts = set()
    for k in np.unique(strata):
        v = np.sort(s[strata == k])
        if len(np.unique(v)) <= cells:
            cuts.update(v.tolist())
            continue
        for j in range(cells):  # bucket j holds ranks r with floor(r * cells / n) == j; its cut is its largest
            ranks = [r for r in range(len(v)) if (r * cells) // len(v) == j]
            cuts.add(float(v[ranks[-1]]))
    cuts = sorted(cuts)
    out = np.empty(len(s))
    for i, x in enumerate(s):
        k = next(j for j, c in enumerate(cuts) if x <= c)
        lo = cuts[k - 1] if k else -np.inf
        members = s[(s > lo) & (s <= cuts[k])]
        out[i] = members[0] if len(np.unique(members)) == 1 else members.mean()
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cell_scores_are_the_brute_force_cells(seed):
    rng = np.random.default_rng(seed)
    n = 300
    s = np.round(rng.normal(size=n), 2)  # ties
    strata = rng.integers(0, 3, n)
    for cells in (2, 7, 40, 500):
        got = cell_scores(s, strata, cells=cells)
        np.testing.assert_allclose(got, _brute_cells(s, strata, cells), rtol=0, atol=1e-12)


def test_cells_keep_the_order_and_count():
    rng = np.random.default_rng(3)
    s, y, d = rng.normal(size=5000), rng.integers(0, 2, 5000), rng.integers(0, 4, 5000)
    c = cell_scores(s, d, y, cells=16)
    order = np.argsort(s, kind="stable")
    assert (np.diff(c[order]) >= 0).all()  # a higher score never gets a lower cell
    assert len(np.unique(c)) <= 16 * 8  # at most `cells` cuts per stratum, pooled
    for k in range(4):  # each stratum sees at most its own cuts plus the others'
        assert len(np.unique(c[(d == k) & (y == 1)])) <= 16 * 8


def test_fewer_distinct_scores_than_cells_change_nothing():
    rng = np.random.default_rng(4)
    s = rng.integers(0, 30, 2000) / 7.0
    strata = rng.integers(0, 2, 2000)
    assert cell_scores(s, strata, cells=30) is s or (cell_scores(s, strata, cells=30) == s).all()
    assert cell_scores(s, strata, cells=None) is s


def _frame():
    rng = np.random.default_rng(7)
    parts = []
    for d in range(3):
        n = 1500
        y = (rng.random(n) < 0.4).astype(int)
        split = np.where(np.arange(n) % 2 == 0, "val", "test")
        lat = rng.normal(size=n) + 1.2 * y + (split == "test") * 0.3
        parts.append(
            pd.DataFrame(
                {
                    "dataset": f"d{d}",
                    "split": split,
                    "label": y,
                    "a": 1 / (1 + np.exp(-lat)),
                    "b": np.round(lat + rng.normal(size=n), 1),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def bench():
    return ba.load_benchmark(_frame())


@pytest.mark.parametrize("cells", [None, 10**6])
def test_per_value_intervals_are_reproduced_exactly(bench, cells):
    # the numbers of the per-value engine before cells existed (the same inputs, seeds and replicates)
    kw = dict(n_bootstrap=40, random_state=3, cells=cells)
    d = ba.cohort_diagnostics(bench, "a", "d1", n_permutations=19, **kw).to_dict()
    assert {k: d[k] for k in ("drift_low", "drift_high", "wasserstein_low", "auc_val_high", "drift_pvalue")} == {
        "drift_low": 0.004795615116123109,
        "drift_high": 0.019201495877551614,
        "wasserstein_low": 3.1524873589272433,
        "auc_val_high": 0.8449494409369838,
        "drift_pvalue": 0.05,
    }
    s = ba.selective_answering(bench, "a", "d1", protocol="xdomain", **kw).to_dict()
    assert {k: s[k] for k in ("accuracy_low", "disca_high", "aurc_low")} == {
        "accuracy_low": 0.71725,
        "disca_high": 0.7147528673276261,
        "aurc_low": 0.12322590764669254,
    }
    g = ba.bootstrap_grid(bench, protocols=["xdomain", "indata"], methods=["logistic", "isotonic"], n_repeats=5, **kw)
    np.testing.assert_array_equal(
        g.grid[["accuracy_low", "accuracy_high"]].to_numpy()[[0, 5, 9]].round(15),
        [[0.7066, 0.750716666666667], [0.66265, 0.718066666666667], [0.667316666666667, 0.705333333333333]],
    )


def _mc_se(reps, q):
    """Monte Carlo standard error of the q-quantile of ``reps``: half the spread of the order statistics one
    binomial standard deviation either side."""
    B = len(reps)
    h = np.sqrt(q * (1 - q) / B)
    lo, hi = np.nanquantile(reps, [max(q - h, 0), min(q + h, 1)], axis=0)
    return (hi - lo) / 2


def test_cells_move_every_bound_by_a_fraction_of_its_monte_carlo_error(bench):
    # 1500 examples per dataset, 600 to 900 per class (both cohorts): 256 cells coarsen every stratum of model "a"
    kw = dict(n_bootstrap=400, random_state=0)
    exact = ba.cohort_diagnostics(bench, "a", "d1", **kw)
    coarse = ba.cohort_diagnostics(bench, "a", "d1", cells=256, **kw)
    names = ["auc_val", "auc_test", "drift", "wasserstein", "bias_robustness_val"]
    se_low = _mc_se(exact.replicates[names].to_numpy(), 0.025)
    se_high = _mc_se(exact.replicates[names].to_numpy(), 0.975)
    e, c = exact.to_dict(), coarse.to_dict()
    for j, k in enumerate(names):
        assert e[k] == c[k]  # the point estimates are exact either way
        # the bound this test states: a tenth of the bound's own Monte Carlo standard error
        assert abs(e[k + "_low"] - c[k + "_low"]) <= 0.1 * se_low[j], k
        assert abs(e[k + "_high"] - c[k + "_high"]) <= 0.1 * se_high[j], k
    assert (coarse.replicates[names] != exact.replicates[names]).any().any()  # the cells did change the replicates


def test_cells_parameter_is_checked():
    assert check_evaluation_parameters({})["cells"] == ba.EVALUATION_PARAMETERS["cells"]
    assert check_evaluation_parameters({"cells": None})["cells"] is None
    assert check_evaluation_parameters({"cells": "None"})["cells"] is None
    assert check_evaluation_parameters({"cells": "512"})["cells"] == 512
    for bad in (1, 0, 2.5, "many", True):
        with pytest.raises(ValueError, match=r"^`cells` must be an int >= 2") as err:
            check_evaluation_parameters({"cells": bad})
        assert "\n" not in str(err.value)


def test_evaluate_passes_cells_to_every_bootstrap_and_keeps_the_point_estimates():
    kw = dict(datasets=["wine", "diabetes"], n_bootstrap=20, n_permutations=9, n_jobs=1, progress=False)
    per_value = ba.evaluate("demo", **kw)
    coarse = ba.evaluate("demo", cells=2, **kw)
    assert coarse.parameters["cells"] == 2 and per_value.parameters["cells"] is None
    for table, value in (("grid", "accuracy"), ("diagnostics", "drift"), ("selective", "disca")):
        a, b = per_value.tables[table], coarse.tables[table]
        pd.testing.assert_series_equal(a[value], b[value])  # exact either way
        assert not a[value + "_low"].equals(b[value + "_low"]), table  # the replicates ran on 2 cells
