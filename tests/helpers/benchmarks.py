"""Small benchmarks with a known structure, built by several test files.

Each is seeded and small enough for a brute-force reference; a test file imports the one it needs
instead of copying it (or importing another test file).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.special import expit

from beyondauc import load_benchmark
from beyondauc.data.benchmark import Benchmark

DOMAINS = {"a": "x", "b": "x", "c": "y", "d": "y"}


def small_frame(seed=0, sizes=(40, 55, 35, 30)):
    rng = np.random.default_rng(seed)
    parts = []
    for d, n in zip("abcd", sizes):
        y = (rng.random(n) < 0.5).astype(int)
        y[:2] = [0, 1]
        shift = rng.normal(0, 0.5)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "cont": rng.normal(size=n) + 1.2 * y + shift,
                    "tied": np.round(rng.normal(size=n) + 0.8 * y + shift, 1),
                    "prob": 1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * y))),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def answers_benchmark(
    n=240, models=("sharp", "coin", "tied"), datasets=("d1", "d2", "d3"), seed=0, domains=("x", "x", "y"), copies=()
):
    """Answers with a known structure: 'sharp' is right as often as it is confident, 'coin' half the time,
    'tied' has confidences rounded to one decimal; ``copies`` adds exact copies of the first model."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "dataset": np.repeat(datasets, n),
            "domain": np.repeat(domains, n),
            "split": np.tile(np.where(np.arange(n) < n // 2, "val", "test"), len(datasets)),
            "id": np.tile(np.arange(n), len(datasets)),
        }
    )
    conf, correct = {}, {}
    for m in models:
        q = rng.uniform(0.34, 1.0, len(frame))
        q = np.round(q, 1) if m == "tied" else q
        conf[m] = q
        correct[m] = rng.uniform(size=len(frame)) < (0.5 if m == "coin" else q)
    for c in copies:
        conf[c], correct[c] = conf[models[0]], correct[models[0]]
    names = (*models, *copies)
    frame = pd.concat([frame, pd.DataFrame({m: conf[m] for m in names})], axis=1)
    C = np.column_stack([correct[m] for m in names]).astype(np.int8)
    return Benchmark(frame, names, tuple(datasets), dict(zip(datasets, domains)), "<answers>", "answers", C)


def small_bench(seed=0):
    rng = np.random.default_rng(seed)
    parts = []
    for i, (d, n, rate) in enumerate([("a", 90, 0.5), ("b", 60, 0.3), ("c", 120, 0.6), ("lone", 40, 0.45)]):
        y = (rng.random(n) < rate).astype(int)
        z = (0.8 + 0.3 * i) * (2 * y - 1) + rng.normal(size=n) + 0.4 * i
        parts.append(
            pd.DataFrame(
                {
                    "dataset": d,
                    "label": y,
                    "prob": expit(z),
                    "logit": 2 * z - 1,
                    "tied": np.round(z),
                    "big": 1e4 + 300 * z,
                }
            )
        )
    df = pd.concat(parts, ignore_index=True)
    domains = {"a": "x", "b": "x", "c": "y", "lone": "z"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return df, domains, load_benchmark(df, domains=domains)
