"""Inspect AI evaluation logs: ``.eval`` (a zip of JSON members, read in memory) and ``.json``.

A log is one task run by one model: ``eval.task`` is the dataset, ``eval.model`` the model.  A row per
sample and epoch: ``id`` the sample's id, ``epoch`` its epoch (repeated samples of one item), correct =
the value of one scorer (``scorer``; default the log's first, as the task lists them): ``C``/``I``/``P``/
``N`` as 1/0/0.5/0, or a number in [0, 1]; confidence = the probability of the output from its token
log-probs (the exponential of their sum, the model's probability of the whole answer), or the sample
metadata field ``confidence_field``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .common import REPEAT, answers_frame, json_object, number, option
from .safezip import SafeZip

__all__ = ["read", "recognise"]

_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_SAMPLE_MEMBER = re.compile(r"^samples/[^/]+\.json$")
_NEEDS = (
    "run the model with logprobs=True (GenerateConfig) so the outputs carry token log-probs, or name a "
    "metadata field holding a confidence with --confidence-field"
)


def recognise(path: Path) -> bool:
    """True for an ``.eval`` zip, or a ``.json`` file that opens as an Inspect log (``version`` then ``status``,
    ``eval``)."""
    if not path.is_file():
        return False
    suffix = path.suffix.lower()
    with open(path, "rb") as f:
        head = f.read(4096)
    if suffix == ".eval":  # any .eval file: one that is no zip is refused by the reader, in one line
        return True
    if suffix == ".json":
        text = head.decode("utf-8", "replace").lstrip()
        return text.startswith("{") and '"eval"' in text and re.match(r'\{\s*"version"\s*:', text) is not None
    return False


def read(path: Path, *, options: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The answers of one Inspect log: dataset (task), model, id, epoch, confidence, correct.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> log = {"version": 2, "status": "success", "eval": {"task": "qa", "model": "m"}, "samples": [
    ...     {"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}, "metadata": {"conf": 0.8},
    ...      "output": {"choices": []}}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.json"
    >>> _ = path.write_text(json.dumps(log))
    >>> read(path, options={"confidence_field": "conf"})[["dataset", "model", "id", "confidence", "correct"]]
      dataset model  id  confidence  correct
    0      qa     m   1         0.8      1.0
    """
    where = f"file {str(path)!r}"
    header, samples = _open(path, where)
    spec = header.get("eval")
    if not isinstance(spec, dict) or not isinstance(spec.get("task"), str) or not isinstance(spec.get("model"), str):
        raise ValueError(f"{where}: no 'eval' with its 'task' and 'model'; is it an Inspect AI log?")
    scorer, field = option(options, "scorer"), option(options, "confidence_field")
    rows: dict[str, list] = {k: [] for k in ("id", REPEAT, "confidence", "correct", "_line")}
    for k, (at, sample) in enumerate(samples, start=1):
        if scorer is None:
            scorer = _first_scorer(sample, at)
        rows["id"].append(_sample_id(sample, at))
        rows[REPEAT].append(int(number(sample.get("epoch", 1), "'epoch'", at)))
        rows["correct"].append(_correct(sample, scorer, at))
        rows["confidence"].append(_confidence(sample, field, at))
        rows["_line"].append(k)
    n = len(rows["id"])
    frame = answers_frame(
        {"dataset": [spec["task"]] * n, "model": [spec["model"]] * n, **rows, "_file": [str(path)] * n}, where
    )
    if frame[REPEAT].nunique() == 1:  # one epoch: no repeats to say
        frame = frame.drop(columns=REPEAT)
    return frame


def _open(path: Path, where: str) -> tuple[dict, Iterator[tuple[str, dict]]]:
    """(the log's header, its samples as (where, object)): every zip member checked before any is read."""
    if path.suffix.lower() == ".json":
        log = json_object(path.read_bytes(), where)
        samples = log.get("samples") or []
        if not isinstance(samples, list):
            raise ValueError(f"{where}: 'samples' is not a list")
        return log, ((f"{where}, sample {i}", _object(s, f"{where}, sample {i}")) for i, s in enumerate(samples, 1))
    archive = SafeZip.open(path)
    if "header.json" not in archive.members:
        raise ValueError(f"{where} has no header.json member; is it an Inspect AI .eval log?")
    header = json_object(archive.read("header.json"), f"{where}, member 'header.json'")
    names = [n for n in archive.names() if _SAMPLE_MEMBER.match(n)]
    return header, ((f"{where}, member {n!r}", json_object(archive.read(n), f"{where}, member {n!r}")) for n in names)


def _object(value: Any, at: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{at} is a JSON {type(value).__name__}, not an object")
    return value


def _sample_id(sample: dict, at: str) -> int | str:
    sid = sample.get("id")
    if sid is None or isinstance(sid, (dict, list, bool)):
        raise ValueError(f"{at}: no sample 'id'")
    return sid


def _first_scorer(sample: dict, at: str) -> str:
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        raise ValueError(f"{at}: the sample has no scores; score the log (inspect score) before reading it")
    return next(iter(scores))


def _correct(sample: dict, scorer: str, at: str) -> float:
    """The scorer's value: C/I/P/N as 1/0/0.5/0, or a number in [0, 1]."""
    scores = sample.get("scores") or {}
    if scorer not in scores:
        raise ValueError(f"{at}: no scorer {scorer!r}; the sample has {list(scores)} (choose with --scorer)")
    value = (scores[scorer] or {}).get("value") if isinstance(scores[scorer], dict) else None
    if isinstance(value, str) and value in _VALUES:
        return _VALUES[value]
    if isinstance(value, (dict, list)) or value is None:
        raise ValueError(f"{at}: scorer {scorer!r} gives {str(value)[:60]}, not one value (C/I/P/N or a number)")
    out = number(value, f"the value of scorer {scorer!r}", at)
    if not 0 <= out <= 1:
        raise ValueError(f"{at}: scorer {scorer!r} gives {out}, not a correctness in [0, 1]")
    return out


def _confidence(sample: dict, field: str | None, at: str) -> float:
    """The metadata field ``field``, else the probability of the output from its token log-probs."""
    if field is not None:
        metadata = sample.get("metadata") or {}
        if field not in metadata:
            raise ValueError(f"{at}: no metadata field {field!r} (fields: {list(metadata)[:10]})")
        value = number(metadata[field], f"metadata field {field!r}", at)
        if not 0 <= value <= 1:
            raise ValueError(f"{at}: metadata field {field!r} is {value}, not a confidence in [0, 1]")
        return value
    choices = (sample.get("output") or {}).get("choices") or []
    logprobs = (choices[0].get("logprobs") or {}).get("content") if choices and isinstance(choices[0], dict) else None
    if not logprobs:
        raise ValueError(f"{at}: the output has no token log-probs, so no confidence; {_NEEDS}")
    total = math.fsum(number(t.get("logprob"), "a token log-prob", at) for t in logprobs)
    return math.exp(total)
