"""Generated benchmarks of realistic shape for the timing scripts.

TRUE-sized: the nine datasets of the paper with TRUE's sizes and domains
(23,858 rows), 11 models whose raw scores differ in scale, shape, ties and
strength, as the paper's metrics do.
"""

import numpy as np
import pandas as pd

TRUE_SIZES = {
    "frank": 671,
    "summeval": 1600,
    "mnbm": 2500,
    "qags_cnndm": 235,
    "qags_xsum": 239,
    "begin": 836,
    "q2": 1088,
    "dialfact": 8689,
    "paws_wiki": 8000,
}


def _model_score(rng, y, kind, strength):
    latent = rng.normal(size=len(y)) + strength * y
    if kind == "prob":  # NLI-style probability, peaked near 0 / 1
        return 1 / (1 + np.exp(-3 * latent + 1.0))
    if kind == "logit":  # unbounded margin
        return 2.5 * latent - 1.0
    if kind == "loglik":  # negative log-likelihood scale
        return -np.exp(-0.5 * latent) * 20
    if kind == "bleu":  # mostly small, many exact zeros (ties)
        return np.round(np.clip(0.1 * latent, 0, None), 3)
    if kind == "discrete":  # a few distinct values
        return np.round(np.clip((latent + 2) * 2, 0, 8))
    return 0.8 + 0.05 * latent  # bertscore-like: narrow range near 0.8


KINDS = ["bleu", "prob", "prob", "prob", "prob", "loglik", "narrow", "discrete", "prob", "narrow", "logit"]
NAMES = ["BLEU", "QuestE", "FactCC", "SummaCC", "SummacZS", "BARTSc", "RBERTSc", "Q2", "ANLI", "DBERTSc", "BLEURT"]


def true_like(*, n_rows=None, n_models=11, random_state=0):
    """A TRUE-like benchmark as a DataFrame (``dataset``, ``label``, models).

    ``n_rows`` rescales the dataset sizes (default: TRUE's 23,858 rows).
    """
    rng = np.random.default_rng(random_state)
    sizes = dict(TRUE_SIZES)
    if n_rows is not None:
        scale = n_rows / sum(sizes.values())
        sizes = {d: max(10, int(round(n * scale))) for d, n in sizes.items()}
    parts = []
    for d, n in sizes.items():
        rate = rng.uniform(0.3, 0.7)
        y = (rng.random(n) < rate).astype(np.int8)
        cols = {"dataset": np.full(n, d), "label": y}
        shift = rng.normal(0, 0.7)  # dataset-specific score shift: what breaks transfer
        for j in range(n_models):
            kind = KINDS[j % len(KINDS)]
            strength = rng.uniform(0.4, 2.0)
            cols[NAMES[j % len(NAMES)] + ("" if j < len(NAMES) else f"_{j}")] = _model_score(rng, y, kind, strength) + (
                shift * (0.1 if kind in ("prob", "narrow", "bleu") else 1.0)
            )
        parts.append(pd.DataFrame(cols))
    return pd.concat(parts, ignore_index=True)


SCALE_KINDS = ["prob", "logit", "loglik", "bleu", "discrete", "narrow"]
DOMAINS = ["news", "dialogue", "summaries", "paraphrase"]


def scale_like(n_per_dataset, *, n_datasets=8, n_models=8, random_state=0):
    """A benchmark of ``n_datasets`` datasets of ``n_per_dataset`` rows each, for scaling runs.

    Each dataset has a domain (two datasets per domain) and val/test cohorts
    (half each, the test cohort shifted: covariate drift); the models cycle
    through score kinds with ties (``bleu``, ``discrete``), log-likelihoods,
    probabilities, margins and a narrow range.  Columns: ``dataset``,
    ``domain``, ``split``, ``label`` and one column per model (``m00``, ...).
    """
    rng = np.random.default_rng(random_state)
    parts = []
    for i in range(n_datasets):
        n = n_per_dataset
        y = (rng.random(n) < rng.uniform(0.3, 0.7)).astype(np.int8)
        split = np.where(np.arange(n) < n // 2, "val", "test")
        cols = {
            "dataset": np.full(n, f"d{i}"),
            "domain": np.full(n, DOMAINS[(i // 2) % len(DOMAINS)]),
            "split": split,
            "label": y,
        }
        drift = np.where(split == "test", rng.normal(0, 0.5), 0.0)
        for j in range(n_models):
            kind = SCALE_KINDS[j % len(SCALE_KINDS)]
            cols[f"m{j:02d}"] = _model_score(rng, y, kind, rng.uniform(0.4, 2.0)) + drift * (
                0.1 if kind in ("prob", "narrow", "bleu") else 1.0
            )
        parts.append(pd.DataFrame(cols))
    return pd.concat(parts, ignore_index=True)
