"""HELM run folders: ``per_instance_stats.json`` beside ``run_spec.json``.

HELM's runner writes ``per_instance_stats.json`` as a JSON list, one object per instance (and train
trial): ``instance_id``, ``train_trial_index``, optionally ``perturbation``, and ``stats``, each stat
``{"name": {"name": ..., "split": ...}, "count", "sum", ..., "mean"}``.  ``run_spec.json`` names the
model (``adapter_spec.model``) and the run (``name``).

A row per instance (instances with a ``perturbation`` are robustness variants and left out): confidence =
the mean of stat ``max_prob``, correct = the mean of ``correct_metric`` (default ``exact_match``); the
dataset is the run's name without its ``model=`` argument; several train trials are repeated samples
(``epoch`` = trial + 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .common import REPEAT, answers_frame, json_object, number, option

__all__ = ["read", "recognise"]

STATS_FILE = "per_instance_stats.json"
_NEEDS = (
    "HELM logs the confidence as the stat 'max_prob' for multiple-choice runs whose model returns "
    "log-probs; run a multiple_choice_joint scenario"
)


def recognise(path: Path) -> bool:
    """True for a file named ``per_instance_stats.json``."""
    return path.is_file() and path.name == STATS_FILE


def read(path: Path, *, options: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The answers of one HELM run: dataset (run), model, id (``instance_id``), confidence, correct.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> spec = {"name": "mmlu:subject=anatomy,model=openai_gpt2", "adapter_spec": {"model": "openai/gpt2"}}
    >>> _ = (run / "run_spec.json").write_text(json.dumps(spec))
    >>> stat = lambda name, v: {"name": {"name": name, "split": "test"}, "count": 1, "mean": v}
    >>> stats = [{"instance_id": "id1", "train_trial_index": 0,
    ...           "stats": [stat("exact_match", 1.0), stat("max_prob", 0.7)]}]
    >>> _ = (run / "per_instance_stats.json").write_text(json.dumps(stats))
    >>> read(run / "per_instance_stats.json")[["dataset", "model", "id", "confidence", "correct"]]
                  dataset        model   id  confidence  correct
    0  mmlu:subject=anatomy  openai/gpt2  id1         0.7      1.0
    """
    where = f"file {str(path)!r}"
    model, dataset = _run_spec(path.parent / "run_spec.json", where)
    metric = option(options, "correct_metric", "exact_match")
    try:
        entries = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{where} is not valid JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(entries, list):
        raise ValueError(f"{where} holds a JSON {type(entries).__name__}, not HELM's list of instances")
    rows: dict[str, list] = {k: [] for k in ("id", REPEAT, "confidence", "correct", "_line")}
    for k, entry in enumerate(entries, start=1):
        at = f"{where}, instance {k}"
        if not isinstance(entry, dict):
            raise ValueError(f"{at} is a JSON {type(entry).__name__}, not an object")
        if entry.get("perturbation"):
            continue
        stats = _stats(entry, at)
        if not isinstance(entry.get("instance_id"), (str, int)):
            raise ValueError(f"{at}: no 'instance_id'")
        rows["id"].append(str(entry["instance_id"]))
        rows[REPEAT].append(int(number(entry.get("train_trial_index", 0), "'train_trial_index'", at)) + 1)
        rows["confidence"].append(_stat(stats, "max_prob", at, _NEEDS))
        rows["correct"].append(_stat(stats, metric, at, "name another with --correct-metric"))
        rows["_line"].append(k)
    n = len(rows["id"])
    frame = answers_frame({"dataset": [dataset] * n, "model": [model] * n, **rows, "_file": [str(path)] * n}, where)
    return frame.drop(columns=REPEAT) if frame[REPEAT].nunique() == 1 else frame


def _run_spec(path: Path, where: str) -> tuple[str, str]:
    """(model, dataset) of a run: ``adapter_spec.model``, and ``name`` without its ``model=`` argument."""
    if not path.is_file():
        raise ValueError(f"{where}: no run_spec.json beside it, which names the model; keep HELM's run folder whole")
    spec = json_object(path.read_bytes(), f"file {str(path)!r}")
    model = (spec.get("adapter_spec") or {}).get("model")
    name = spec.get("name")
    if not isinstance(model, str) or not isinstance(name, str):
        raise ValueError(f"file {str(path)!r} has no 'name' and 'adapter_spec.model'")
    scenario, _, args = name.partition(":")
    kept = [a for a in args.split(",") if a and not a.startswith("model=")]
    return model, scenario + (":" + ",".join(kept) if kept else "")


def _stats(entry: dict, at: str) -> dict[str, Any]:
    """Stat name -> its mean (a stat without a mean: None)."""
    stats = entry.get("stats")
    if not isinstance(stats, list):
        raise ValueError(f"{at}: no 'stats' list")
    out = {}
    for stat in stats:
        name = (stat.get("name") or {}).get("name") if isinstance(stat, dict) else None
        if isinstance(name, str):
            out[name] = stat.get("mean")
    return out


def _stat(stats: dict[str, Any], name: str, at: str, hint: str) -> float:
    if stats.get(name) is None:
        raise ValueError(f"{at}: no stat {name!r} (stats: {sorted(stats)[:12]}); {hint}")
    return number(stats[name], f"stat {name!r}", at)
