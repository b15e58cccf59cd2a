"""What the log readers share: the rows they return, JSON read safely, the soft-max of log-likelihoods."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "LOG_OPTIONS",
    "REPEAT",
    "answers_frame",
    "json_lines",
    "json_object",
    "number",
    "option",
    "softmax_max",
]

#: The columns every log reader returns: the long answers form, one row per item (and repeat).
COLUMNS = ("dataset", "model", "id", "confidence", "correct")
#: The column numbering the repeated samples of one item (Inspect epochs, HELM train trials), from 1; a log
#: without repeats has none.
REPEAT = "epoch"

#: The options a log reader may take, with what each says (the parameter table shows them on the CLI).
LOG_OPTIONS = {
    "correct_metric": "lm-evaluation-harness and HELM: the per-sample metric that says whether the answer is "
    "correct (default: 'acc', HELM 'exact_match')",
    "scorer": "Inspect AI: the scorer whose value says whether the answer is correct (default: the log's first)",
    "confidence_field": "Inspect AI: a sample metadata field holding the confidence (default: the probability of "
    "the output from its token log-probs)",
}


def option(options: Mapping[str, Any] | None, name: str, default: Any = None) -> Any:
    """``options[name]``, or ``default`` where it is not given (None)."""
    value = (options or {}).get(name)
    return default if value is None else value


def json_object(text: str | bytes, where: str) -> dict:
    """The JSON object in ``text``; anything else (no JSON, a list, a number) is a one-line error."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{where} is not valid JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where} holds a JSON {type(value).__name__}, not an object")
    return value


def json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-blank line of a JSON Lines file; a line that is not an object is refused."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                yield number, json_object(line, f"file {str(path)!r}, line {number}")


def softmax_max(loglikelihoods: Sequence[Sequence[float]]) -> np.ndarray:
    """Per row, the largest probability of the soft-max over its log-likelihoods (rows of any lengths).

    One pass over all rows at once: the rows padded with -inf into one array, each shifted by its
    maximum (stable for any scale).

    Examples
    --------
    >>> softmax_max([[0.0, 0.0], [0.0, -1e9, -1e9]]).round(12).tolist()
    [0.5, 1.0]
    """
    lengths = np.fromiter(map(len, loglikelihoods), dtype=np.int64, count=len(loglikelihoods))
    width = int(lengths.max()) if len(lengths) else 0
    ll = np.full((len(lengths), width), -np.inf)
    ll[np.arange(width) < lengths[:, None]] = np.fromiter(
        itertools.chain.from_iterable(loglikelihoods), dtype=np.float64, count=int(lengths.sum())
    )
    top = ll.max(axis=1, keepdims=True) if width else ll[:, :0]
    return 1.0 / np.exp(ll - top).sum(axis=1)


def number(value: Any, what: str, where: str) -> float:
    """``value`` (a number, or a number written as text, as the harnesses store them) as a finite float."""
    if isinstance(value, bool):
        return float(value)
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {what} is not a number: {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{where}: {what} is not finite: {value!r}")
    return out


def answers_frame(rows: dict[str, list], where: str) -> pd.DataFrame:
    """The long answers frame of the reader's columns (plus ``epoch`` and bookkeeping when given)."""
    if not rows["id"]:
        raise ValueError(f"{where} holds no samples")
    frame = pd.DataFrame(rows)
    frame["confidence"] = frame["confidence"].astype(np.float64)
    frame["correct"] = frame["correct"].astype(np.float64)
    return frame
