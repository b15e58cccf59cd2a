#!/usr/bin/env python
"""Build the embedded LLM demo ``toolkit/beyondauc/datasets/llm/``: lm-evaluation-harness logs of three models.

``beyondauc demo --kind llm`` reports on it. It is a folder as ``lm_eval --log_samples --output_path``
leaves it: one folder per model holding ``results_<date>.json`` and one
``samples_<task>_<date>.jsonl`` per task, each line a document with the keys, order and string-valued
``resps``/``filtered_resps`` of lm-evaluation-harness 0.4. The models are simulated, not run: each
gives every choice of a multiple-choice question a log-likelihood, the right one raised by the
model's skill, plus seeded noise, so the three differ in accuracy and in how well their confidence
(the soft-max over the choices) tells right answers from wrong ones. ``acc`` and ``acc_norm``
are computed as lm-evaluation-harness computes them (the argmax of the log-likelihoods, and of the
log-likelihoods over the choices' lengths in characters).

Deterministic byte for byte (fixed seeds, a fixed date, log-likelihoods rounded to six decimals): two runs write
identical files.

Usage::

    python scripts/make_llm_demo.py            # writes the shipped folder
    python scripts/make_llm_demo.py --out X    # writes somewhere else
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np

DATE = "2025-01-15T10-00-00.000000"
N_DOCS = 40
#: model -> (skill: how far the right choice's log-likelihood is raised, noise: spread of every choice's)
MODELS = {"llama-mini": (1.6, 1.0), "qwen-small": (1.0, 1.0), "phi-tiny": (0.5, 1.2)}
TASKS = {
    "capitals": ("Capital of country {i}?", ["Paris", "Lima", "Oslo", "Hanoi"]),
    "arithmetic": ("{a} + {b} =", None),  # choices are numbers near the answer
}


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _docs(task: str, rng: np.random.Generator) -> list[dict]:
    template, choices = TASKS[task]
    docs = []
    for i in range(N_DOCS):
        if choices is None:
            a, b = (int(v) for v in rng.integers(10, 99, size=2))
            offsets = rng.permutation([-10, -1, 0, 1])
            docs.append(
                {
                    "question": template.format(a=a, b=b),
                    "choices": [str(a + b + o) for o in offsets],
                    "answer": int(np.flatnonzero(offsets == 0)[0]),
                }
            )
        else:
            docs.append(
                {
                    "question": template.format(i=i + 1),
                    "choices": list(rng.permutation(choices)),
                    "answer": int(rng.integers(len(choices))),
                }
            )
    return docs


def _sample(k: int, doc: dict, skill: float, noise: float, rng: np.random.Generator) -> dict:
    """One line of a samples file, as lm-evaluation-harness writes it for a multiple-choice document."""
    n = len(doc["choices"])
    lls = -np.abs(rng.normal(1.5, noise, size=n))
    lls[doc["answer"]] += skill * rng.uniform(0.2, 1.0)
    lls = np.round(lls, 6)  # six decimals: a smaller file, the same analyses
    lengths = np.array([len(c) for c in doc["choices"]], dtype=float)
    pairs = [[repr(float(v)), "False"] for v in lls]
    return {
        "doc_id": k,
        "doc": doc,
        "target": str(doc["answer"]),
        "arguments": {
            f"gen_args_{j}": {"arg_0": doc["question"], "arg_1": " " + c} for j, c in enumerate(doc["choices"])
        },
        "resps": [[p] for p in pairs],
        "filtered_resps": pairs,
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": _hash(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": _hash(doc["question"]),
        "target_hash": _hash(str(doc["answer"])),
        "acc": float(np.argmax(lls) == doc["answer"]),
        "acc_norm": float(np.argmax(lls / lengths) == doc["answer"]),
    }


def _results(model: str, accs: dict[str, float]) -> dict:
    return {
        "results": {t: {"alias": t, "acc,none": a} for t, a in accs.items()},
        "config": {"model": "hf", "model_args": f"pretrained={model}", "batch_size": 1, "random_seed": 0},
        "date": 1736935200.0,
        "model_name": model,
        "model_name_sanitized": model,
    }


def main(out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    docs = {t: _docs(t, np.random.default_rng(100 + i)) for i, t in enumerate(TASKS)}
    for m, (model, (skill, noise)) in enumerate(MODELS.items()):
        folder = out / model
        folder.mkdir(parents=True)
        accs = {}
        for t, task in enumerate(TASKS):
            rng = np.random.default_rng(1000 * m + t)
            lines = [_sample(k, d, skill, noise, rng) for k, d in enumerate(docs[task])]
            accs[task] = float(np.mean([s["acc"] for s in lines]))
            text = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in lines)
            (folder / f"samples_{task}_{DATE}.jsonl").write_text(text, encoding="utf-8")
        (folder / f"results_{DATE}.json").write_text(json.dumps(_results(model, accs), indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "toolkit" / "beyondauc" / "datasets" / "llm"
    )
    main(parser.parse_args().out)
