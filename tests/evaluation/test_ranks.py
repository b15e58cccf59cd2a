"""The rank columns of the evaluation's tables (``beyondauc.evaluation.ranks``), against a brute-force count."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.evaluation.ranks import DIAGNOSTIC_RANKS, add_ranks


def _brute(values, higher_is_better):
    """1 + how many defined values are strictly better; None where the value is undefined."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        better = [
            w
            for w in values
            if w is not None and not (isinstance(w, float) and math.isnan(w)) and (w > v if higher_is_better else w < v)
        ]
        out.append(1 + len(better))
    return out


@pytest.fixture(scope="module")
def ev():
    return ba.evaluate(
        "demo",
        datasets=["wine", "diabetes", "breast_cancer"],
        models=["svm", "knn", "naive_bayes"],
        n_bootstrap=0,
        n_permutations=0,
        n_repeats=2,
    )


def test_diagnostic_ranks_are_a_brute_force_count(ev):
    diag = ev.table("diagnostics")
    for rank, (column, higher) in DIAGNOSTIC_RANKS.items():
        for _, group in diag.groupby("dataset"):
            want = _brute(group[column].tolist(), higher)
            got = [None if pd.isna(r) else int(r) for r in group[rank]]
            assert got == want, (rank, group["dataset"].iloc[0])


def test_disca_rank_skips_unrankable_answers():
    sel = pd.DataFrame(
        {"model": list("abcd"), "dataset": "d", "disca": [0.5, 0.5, 0.9, np.nan], "rankable": [True, True, False, True]}
    )
    tol = pd.DataFrame(
        {
            "model": list("abcd") * 2,
            "dataset": "d",
            "where": ["in"] * 4 + ["ood"] * 4,
            "tolerance": 0.9,
            "disca": [0.1, 0.3, 0.9, 0.2] * 2,
        }
    )
    out = add_ranks({"selective": sel, "tolerance": tol})
    assert [None if pd.isna(r) else int(r) for r in out["selective"]["disca_rank"]] == [1, 1, None, None]
    tol_rank = [None if pd.isna(r) else int(r) for r in out["tolerance"]["disca_rank"]]
    assert tol_rank == [3, 1, None, 2] + [None] * 4  # c unrankable; no rank on the OOD rows


def test_calibration_error_ranks_are_mean_and_rank(ev):
    ece, ranks = ev.table("calibration_error"), ev.table("calibration_error_ranks")
    for (protocol, method), group in ranks.groupby(["protocol", "method"]):
        sub = ece[(ece["protocol"] == protocol) & (ece["method"] == method)]
        for _, row in group.iterrows():
            assert row["ece"] == pytest.approx(sub.loc[sub["model"] == row["model"], "ece"].mean(), abs=1e-15)
        assert [int(r) for r in group["rank"]] == _brute(group["ece"].tolist(), False)


def test_a_saved_evaluation_without_ranks_gets_them_on_loading(ev, tmp_path):
    tables = {
        k: v.drop(columns=[c for c in v.columns if c.endswith("_rank")])
        for k, v in ev.tables.items()
        if k != "calibration_error_ranks"
    }
    back = add_ranks(tables)
    for name in ("selective", "diagnostics", "tolerance", "calibration_error_ranks"):
        pd.testing.assert_frame_equal(back[name], ev.table(name))
    loaded = ba.load_evaluation(ev.save(tmp_path / "ev"))
    pd.testing.assert_frame_equal(loaded.table("diagnostics"), ev.table("diagnostics"))
