"""Rich display in Jupyter: small escaped HTML for result objects, and Stylers.

Every result class's ``_repr_html_`` is built from :func:`result_html` (a
titled key/value table, optionally followed by tables), so they look alike
and every name is escaped.  :func:`styled` is the public table styler: the
best value of each column in bold, as the command line marks it.
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .formatting import MISSING, format_number, is_missing

if TYPE_CHECKING:  # pandas' Styler imports jinja2: only for the annotation
    from pandas.io.formats.style import Styler

__all__ = ["styled"]

_BOX = "max-width:100%;overflow-x:auto"
_TH = "text-align:left;padding:0 1em 0 0;font-weight:normal"
_TD = "text-align:right;padding:0"
BEST = "font-weight: bold"


def fmt(value: object, digits: int = 4) -> str:
    """A value as short text: numbers by :func:`~beyondauc.utils.formatting.format_number` to ``digits``
    significant digits (missing as ``–``, a true minus sign), booleans as ``yes``/``no``, anything else
    as ``str``."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if is_missing(value):
        return format_number(None, digits, significant=True)
    if isinstance(value, numbers.Real):
        return format_number(value, digits, significant=True)
    return str(value)


def repr_number(value: float, digits: int = 4) -> str:
    """A number in a result's ``repr``: ``digits`` significant digits, missing as ``–``, an ASCII minus.

    Examples
    --------
    >>> from beyondauc.utils.html import repr_number
    >>> repr_number(-0.123456), repr_number(float("nan"))
    ('-0.1235', '–')
    """
    return format_number(value, digits, significant=True, minus="-")


def caption_table(title: str, rows: Iterable[tuple[object, object]]) -> str:
    """A small two-column HTML table (name, value) under a bold caption; names and values escaped.

    Examples
    --------
    >>> from beyondauc.utils.html import caption_table
    >>> caption_table("AUC", [("n", 3)])
    "<table><caption style='text-align:left'><b>AUC</b></caption><tr><th style='text-align:left'>n</th><td>3</td></tr></table>"
    """
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
        for k, v in rows
    )
    return f"<table><caption style='text-align:left'><b>{html.escape(title)}</b></caption>{body}</table>"


def esc(value: object, digits: int = 4) -> str:
    """:func:`fmt`, HTML-escaped."""
    return html.escape(fmt(value, digits), quote=True)


def kv_table(rows: Iterable[tuple[object, object]]) -> str:
    """``<table>`` of (name, value) rows; values formatted and escaped, names escaped."""
    body = "".join(
        f'<tr><th style="{_TH}">{html.escape(str(k))}</th><td style="{_TD}">{esc(v)}</td></tr>' for k, v in rows
    )
    return f'<table style="border-collapse:collapse">{body}</table>'


def frame_html(frame: pd.DataFrame, *, max_rows: int = 30, index: bool = True, caption: str | None = None) -> str:
    """A DataFrame as escaped HTML (numbers as :func:`fmt`, missing as ``–``), at most ``max_rows`` rows."""
    shown = frame.head(max_rows)
    out = shown.to_html(escape=True, index=index, border=0, na_rep=MISSING, max_cols=30, float_format=fmt)
    if caption:
        out = f'<div style="margin-top: 4px; color: #555">{html.escape(caption)}</div>' + out
    if len(frame) > max_rows:
        out += f'<div style="color: #555">… {len(frame) - max_rows} more rows</div>'
    return out


def result_html(
    title: object,
    rows: Sequence[tuple[object, object]],
    *,
    subtitle: str | None = None,
    parts: Iterable[str] = (),
    note: str | None = None,
) -> str:
    """The HTML of one result: a bold title, a key/value table, optional parts (HTML)."""
    head = f"<strong>{html.escape(str(title))}</strong>"
    if subtitle:
        head += f' <span style="color: #555">{html.escape(str(subtitle))}</span>'
    body = [f"<div>{head}</div>"]
    if rows:
        body.append(kv_table(rows))
    body.extend(parts)
    if note:
        body.append(f'<div style="color: #555">{html.escape(str(note))}</div>')
    return f'<div class="beyondauc-result" style="{_BOX}">{"".join(body)}</div>'


def _columns(spec: object, frame: pd.DataFrame, name: str) -> list:
    if spec is None or spec is False:
        return []
    numeric = [
        c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    ]
    if spec is True:
        return numeric
    cols = [spec] if isinstance(spec, str) or not hasattr(spec, "__iter__") else list(spec)
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(f"`{name}` names column(s) {missing} not in the frame; columns are {list(frame.columns)}")
    bad = [c for c in cols if c not in numeric]
    if bad:
        raise ValueError(f"`{name}` must name numeric columns, got non-numeric {bad}")
    return cols


def styled(
    frame: pd.DataFrame,
    *,
    higher_is_better: str | Sequence[str] | bool | None = None,
    lower_is_better: str | Sequence[str] | bool | None = None,
    precision: int = 3,
    na_rep: str = MISSING,
) -> Styler:
    """A :class:`pandas.io.formats.style.Styler` with the best value of each column in bold.

    As the command line marks its tables: in each column of
    ``higher_is_better`` the largest value, in each column of
    ``lower_is_better`` the smallest, is bold (every tie too; NaN is never
    best).  Floats show ``precision`` decimals, integer columns (ranks) as
    integers, missing values as ``na_rep``; every cell and label is
    HTML-escaped.

    Parameters
    ----------
    frame : pandas.DataFrame
    higher_is_better, lower_is_better : str, list of str or True, optional
        Columns whose best value is the largest / the smallest.  ``True``:
        every numeric column not named by the other argument.
    precision : int, default=3
    na_rep : str, default="–"

    Returns
    -------
    pandas.io.formats.style.Styler

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import styled
    >>> t = pd.DataFrame({"model": ["a", "<b>"], "auc": [0.91, 0.87], "rank": [1, 2]})
    >>> html = styled(t, higher_is_better="auc", lower_is_better="rank").to_html()
    >>> "font-weight: bold" in html, "&lt;b&gt;" in html, "0.910" in html
    (True, True, True)
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(precision, bool) or not isinstance(precision, numbers.Integral) or precision < 0:
        raise ValueError(f"`precision` must be an int >= 0, got {precision!r}")
    if higher_is_better is True and lower_is_better is True:
        raise ValueError("`higher_is_better` and `lower_is_better` cannot both be True")
    low = _columns(lower_is_better, frame, "lower_is_better") if lower_is_better is not True else None
    high = _columns(higher_is_better, frame, "higher_is_better") if higher_is_better is not True else None
    if high is None:
        high = [c for c in _columns(True, frame, "higher_is_better") if c not in low]
    if low is None:
        low = [c for c in _columns(True, frame, "lower_is_better") if c not in high]
    both = sorted(set(high) & set(low), key=str)
    if both:
        raise ValueError(f"column(s) {both} are in both `higher_is_better` and `lower_is_better`")

    def best(column, largest):
        values = pd.to_numeric(column, errors="coerce").astype(float)
        target = values.max() if largest else values.min()
        mark = values.eq(target) & values.notna() if pd.notna(target) else values.isna() & False
        return [BEST if m else "" for m in mark]

    styler = frame.style.format(precision=precision, na_rep=na_rep, escape="html")
    styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
    for c in high:
        styler = styler.apply(best, largest=True, subset=[c])
    for c in low:
        styler = styler.apply(best, largest=False, subset=[c])
    return styler
