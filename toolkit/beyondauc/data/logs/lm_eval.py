"""lm-evaluation-harness sample logs: ``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``.

A run with ``--log_samples`` writes, per model, one folder holding ``results_<date>.json`` (its ``model_name``
names the model) and one ``samples_<task>_<date>.jsonl`` per task.  Each line is one document under one
filter: its ``doc_id``, the ``filter``, ``filtered_resps`` (for a multiple-choice task one
``[log-likelihood, is_greedy]`` pair per choice, every value written as a string) and one number per metric
(``acc``, ``acc_norm``, ...).

A row per document and filter: confidence = the largest probability of the soft-max over the choices'
log-likelihoods (the probability of the choice ``acc`` scores), correct = the sample's ``correct_metric``
(default ``acc``).  The dataset is the task; a task logged under several filters gives one dataset per
filter, named ``<task>:<filter>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .common import answers_frame, json_lines, json_object, number, option, softmax_max

__all__ = ["read", "recognise"]

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_NEEDS = "confidence needs the choices' log-likelihoods: run a multiple-choice (loglikelihood) task with --log_samples"


def recognise(path: Path) -> bool:
    """True for a ``samples_<task>_<date>.jsonl`` file of lm-evaluation-harness."""
    return path.is_file() and _SAMPLES.match(path.name) is not None


def read(path: Path, *, options: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The answers of one samples file: dataset (task), model, id (``doc_id``), confidence, correct.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> date = "2024-01-01T00-00-00.000001"
    >>> _ = (folder / f"results_{date}.json").write_text(json.dumps({"model_name": "m", "config": {}}))
    >>> line = {"doc_id": 0, "filter": "none", "acc": 1.0,
    ...         "filtered_resps": [["-0.1", "False"], ["-2.0", "False"]]}
    >>> _ = (folder / f"samples_qa_{date}.jsonl").write_text(json.dumps(line) + "\\n")
    >>> read(folder / f"samples_qa_{date}.jsonl")[["dataset", "model", "id", "correct"]]
      dataset model  id  correct
    0      qa     m   0      1.0
    """
    match = _SAMPLES.match(path.name)
    where = f"file {str(path)!r}"
    if match is None:
        raise ValueError(f"{where} is not named samples_<task>_<date>.jsonl")
    model = _model_name(path.parent / f"results_{match['date']}.json", where)
    metric = option(options, "correct_metric", "acc")
    rows: dict[str, list] = {k: [] for k in ("dataset", "model", "id", "filter", "correct", "_file", "_line")}
    lls = []
    for line, sample in json_lines(path):
        at = f"{where}, line {line}"
        rows["id"].append(_doc_id(sample, at))
        rows["filter"].append(str(sample.get("filter", "none")))
        lls.append(_loglikelihoods(sample, at))
        rows["correct"].append(_correct(sample, metric, at))
        rows["_line"].append(line)
    n = len(rows["id"])
    rows.update(
        dataset=[match["task"]] * n,
        model=[model] * n,
        _file=[str(path)] * n,
        confidence=list(softmax_max(lls)) if n else [],
    )
    frame = answers_frame(rows, where)
    if frame["filter"].nunique() > 1:  # one dataset per filter: a document is one row under each
        frame["dataset"] = frame["dataset"] + ":" + frame["filter"]
    return frame.drop(columns="filter")


def _model_name(results: Path, where: str) -> str:
    """The model of a run: ``model_name`` of its results file (else its ``config.model``)."""
    if not results.is_file():
        raise ValueError(
            f"{where}: no {results.name} beside it, which names the model; keep the run's folder "
            "as lm-evaluation-harness wrote it"
        )
    info = json_object(results.read_bytes(), f"file {str(results)!r}")
    name = info.get("model_name") or (info.get("config") or {}).get("model")
    if not isinstance(name, str) or not name:
        raise ValueError(f"file {str(results)!r} names no model (no 'model_name' or 'config.model')")
    return name


def _doc_id(sample: dict, at: str) -> int | str:
    doc_id = sample.get("doc_id")
    if doc_id is None or isinstance(doc_id, (dict, list, bool)):
        raise ValueError(f"{at}: no 'doc_id' (an lm-evaluation-harness sample has one)")
    return doc_id


def _loglikelihoods(sample: dict, at: str) -> list[float]:
    """The choices' log-likelihoods in ``filtered_resps`` (written as strings), each a finite number."""
    resps = sample.get("filtered_resps")
    if not isinstance(resps, list) or not resps:
        raise ValueError(f"{at}: no 'filtered_resps'; {_NEEDS}")
    lls = []
    for r in resps:
        if isinstance(r, str) and r.startswith("("):  # a (log-likelihood, is_greedy) tuple written as text
            r = r.strip("()").split(",")
        if not isinstance(r, (list, tuple)) or len(r) != 2:
            raise ValueError(
                f"{at}: 'filtered_resps' holds {json.dumps(r)[:60]}, not a [log-likelihood, "
                f"is_greedy] pair: a generation task has no confidence; {_NEEDS}"
            )
        lls.append(number(r[0], "a log-likelihood in 'filtered_resps'", at))
    if len(lls) < 2:
        raise ValueError(f"{at}: 'filtered_resps' has one choice, so no soft-max over choices; {_NEEDS}")
    return lls


def _correct(sample: dict, metric: str, at: str) -> float:
    if metric not in sample:
        known = [k for k in sample.get("metrics", []) if isinstance(k, str)]
        raise ValueError(f"{at}: no metric {metric!r} (this task logs {known}); name one with --correct-metric")
    value = number(sample[metric], f"metric {metric!r}", at)
    if not 0 <= value <= 1:
        raise ValueError(f"{at}: metric {metric!r} is {value}, not a correctness in [0, 1]")
    return value
