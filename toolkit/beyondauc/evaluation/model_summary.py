"""The verdict on one model as an object: its findings, each one sentence, shown in text, Markdown and HTML.

:func:`model_summary` reads the ``findings`` and ``verdicts`` tables an
evaluation stores (:mod:`beyondauc.evaluation.summary` writes them); nothing is
recomputed.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from ..utils.formatting import markdown_text
from .summary import THRESHOLD_TEXT

if TYPE_CHECKING:
    from .container import Evaluation

__all__ = ["ModelSummary", "model_summary"]


_LABELS = {"good": "good", "warn": "warning", "bad": "problem", "info": "note"}
_COLORS = {"good": "#1a7f37", "warn": "#9a6700", "bad": "#b00020", "info": "#57606a"}
_BADGE_STYLE = (
    "display: inline-block; min-width: 4.6em; text-align: center; color: white; border-radius: 3px; "
    "font-size: 0.8em; font-weight: bold; padding: 0 0.3em;"
)
_REASON_STYLE = "display: block; color: #555; font-size: 0.85em;"


def _label(status, reason=""):
    """The badge's word: a note whose rule could not decide says 'inconclusive' or 'unchecked'."""
    if status == "info" and isinstance(reason, str):
        for word in ("inconclusive", "unchecked"):
            if f"{word}:" in reason:
                return word
    return _LABELS.get(status, status)


@dataclass(frozen=True)
class ModelSummary:
    """The verdict on one model: its findings, each one sentence, the reason for its status and the thresholds."""

    model: str
    verdict: str
    status: str
    findings: pd.DataFrame = field(repr=False)
    note: str = field(default="", repr=False)
    reason: str = field(default="", repr=False)

    def _reasons(self):
        return self.findings["reason"] if "reason" in self.findings else [""] * len(self.findings)

    def __repr__(self) -> str:
        lines = [f"ModelSummary({self.model!r}, {self.status}): {self.verdict}"]
        if self.reason:
            lines.append(f"  ({_label(self.status, self.reason)}: {self.reason})")
        lines += [
            f"  [{s}] {t}" + (f" [{r}]" if r else "")
            for s, t, r in zip(self.findings["status"], self.findings["sentence"], self._reasons())
        ]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The findings as a Markdown list, names escaped, for notebooks."""
        return "\n".join(
            f"- **{_label(s, r)}**: {markdown_text(t)}" + (f" *({markdown_text(r)})*" if r else "")
            for s, t, r in zip(self.findings["status"], self.findings["sentence"], self._reasons())
        )

    def _repr_html_(self) -> str:
        items = "".join(
            f'<li class="ba-finding ba-{html.escape(s)}" style="margin: 0.25em 0">'
            f'<span style="{_BADGE_STYLE} background: {_COLORS.get(s, "#666")}">{_label(s, r)}</span> '
            f"{html.escape(t)}"
            + (f'<span class="ba-reason" style="{_REASON_STYLE}">{html.escape(r)}</span>' if r else "")
            + "</li>"
            for s, t, r in zip(self.findings["status"], self.findings["sentence"], self._reasons())
        )
        reason = (
            f'<span class="ba-reason" style="{_REASON_STYLE}">{html.escape(self.reason)}</span>' if self.reason else ""
        )
        return (
            f'<div class="ba-summary"><p class="ba-verdict" style="font-size: 1.15em; margin: 0.2em 0 0.4em 0">'
            f'<span style="{_BADGE_STYLE} background: {_COLORS.get(self.status, "#666")}">'
            f"{_label(self.status, self.reason)}</span> <strong>{html.escape(self.model)}</strong>: "
            f'{html.escape(self.verdict)}{reason}</p><ul class="ba-findings" style="list-style: none; '
            f'padding-left: 0">{items}</ul><p class="ba-thresholds" style="color: #555"><small>'
            f"{html.escape(self.note)}</small></p></div>"
        )


def model_summary(evaluation: Evaluation, model: str) -> ModelSummary:
    """The verdict on ``model`` read from an :class:`~beyondauc.Evaluation` (nothing recomputed).

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes", "digits_even"], models=["svm", "naive_bayes"],
    ...                  noise_repeats=2, n_bootstrap=20)
    >>> s = ba.model_summary(ev, "naive_bayes")
    >>> list(s.findings["topic"])
    ['ranking', 'threshold', 'drift', 'selective']
    >>> s.status in ("good", "info") or bool(s.reason)  # a warning or problem names its rule and number
    True
    """
    evaluation.check_model(model)
    f = evaluation.table("findings")
    f = f[f["model"] == model].sort_values("order").reset_index(drop=True)
    v = evaluation.table("verdicts").set_index("model").loc[model]
    p = evaluation.parameters
    level = p.get("confidence_level", 0.95)
    note = THRESHOLD_TEXT.replace("*", "").format(
        level=level, alpha=round(1 - level, 6), n_bootstrap=p.get("n_bootstrap", 0)
    )
    return ModelSummary(model, str(v["verdict"]), str(v["status"]), f, note, str(v.get("reason", "") or ""))
