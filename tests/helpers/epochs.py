"""A benchmark of answers with repeated samples (epochs) of each item, for the tests of clustered intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd


def epochs_frame(seed=0, items=60, epochs=5):
    """Two models answering ``items`` items of two datasets ``epochs`` times each (long form, with 'epoch').

    An item's correctness probability is shared by its epochs; each epoch draws its own confidence
    and correctness, so the samples of one item are correlated.
    """
    rng = np.random.default_rng(seed)
    parts = []
    for d in ("qa", "nli"):
        p = rng.beta(1.2, 0.8, items)
        for m, shift in (("a", 0.0), ("b", 0.1)):
            for e in range(epochs):
                conf = np.clip(p + shift + rng.normal(0, 0.2, items), 0.01, 0.99)
                parts.append(
                    pd.DataFrame(
                        {
                            "dataset": d,
                            "id": np.arange(items),
                            "epoch": e,
                            "model": m,
                            "confidence": conf,
                            "correct": (rng.uniform(size=items) < p).astype(int),
                        }
                    )
                )
    return pd.concat(parts, ignore_index=True)
