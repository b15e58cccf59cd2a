"""The data fingerprint an evaluation stores: it changes with any value, `correct` included, and is fast."""

import dataclasses

import numpy as np
import pandas as pd

import beyondauc as ba
from beyondauc.evaluation.pipeline import data_fingerprint, frame_sha256


def _frame(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "dataset": np.repeat(["a", "b"], n // 2),
            "label": rng.integers(0, 2, n),
            "m": rng.random(n),
            "n": rng.random(n),
        }
    )


def test_same_content_same_hash_any_change_another():
    f = _frame()
    assert frame_sha256(f) == frame_sha256(f.copy())
    for change in (
        lambda g: g.loc.__setitem__((5, "m"), g.loc[5, "m"] + 1e-12),
        lambda g: g.loc.__setitem__((0, "dataset"), "c"),
        lambda g: g.rename(columns={"n": "o"}, inplace=True),
        lambda g: g.__setitem__("label", g["label"].astype(float)),
    ):
        g = f.copy()
        change(g)
        assert frame_sha256(g) != frame_sha256(f)
    # a value moved across a column boundary is a change (names, dtypes and lengths are hashed too)
    assert frame_sha256(f[["m", "n"]]) != frame_sha256(f[["n", "m"]])


def test_answers_fingerprint_covers_correct():
    bench = ba.load_demo(kind="answers")
    correct = bench.correct.copy()
    correct[0, 0] ^= 1
    flipped = dataclasses.replace(bench, correct=correct)
    assert data_fingerprint(bench)[1] != data_fingerprint(flipped)[1]
    assert data_fingerprint(bench)[1] == data_fingerprint(dataclasses.replace(bench))[1]
