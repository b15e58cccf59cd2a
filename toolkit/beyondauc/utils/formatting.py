"""Numbers as text, and paper-style text tables (plain, Markdown, LaTeX) of tidy results.

:func:`format_number` and :func:`format_interval` are the one number
formatter of the package: the HTML reprs, the findings, the report index and
the command line's tables all call them, so a missing value is spelled one
way (:data:`MISSING`, an en dash) and a negative number carries a true minus
sign (:data:`MINUS`) wherever the text is read rather than parsed.
"""

from __future__ import annotations

import math
import numbers
import re
import string
from collections.abc import Collection
from typing import SupportsFloat

import numpy as np
import pandas as pd
from tabulate import tabulate

__all__ = [
    "MINUS",
    "MISSING",
    "escape_text",
    "format_interval",
    "format_number",
    "format_range",
    "is_missing",
    "markdown_text",
    "quoted_name",
]

#: How a missing value (None, NaN, pandas' NA) is spelled: an en dash, as the report index shows it.
MISSING = "\u2013"
#: The minus sign of numbers in HTML and the reports (U+2212): no reader takes it for a hyphen or a dash.
MINUS = "\u2212"
#: What the command line's text tables (plain, Markdown, LaTeX) print for a missing value. They keep
#: ``n/a``: their output is ASCII throughout (a terminal of any encoding, a LaTeX source without Unicode
#: set-up), and the command line's tests read it; its json and csv formats write null and an empty field.
TEXT_MISSING = "n/a"
_INFINITY = "\u221e"

_MARK = {"table": ("*", ""), "markdown": ("**", "**"), "latex": ("\\textbf{", "}")}
_TABLEFMT = {"table": "simple", "markdown": "pipe", "latex": "latex_raw"}


def is_missing(value: object) -> bool:
    """Whether ``value`` is missing: None, pandas' NA or a float NaN (an infinity is a number).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from beyondauc.utils.formatting import is_missing
    >>> [is_missing(v) for v in (None, pd.NA, np.nan, np.inf, 0.0, "x")]
    [True, True, True, False, False, False]
    """
    if value is None or value is pd.NA:
        return True
    return isinstance(value, numbers.Real) and math.isnan(value)


def format_number(
    x: SupportsFloat | None,
    digits: int = 3,
    *,
    significant: bool = False,
    signed: bool = False,
    missing: str = MISSING,
    minus: str = MINUS,
) -> str:
    """``x`` as text: ``digits`` decimals (or significant digits), a true minus sign, one spelling of missing.

    Parameters
    ----------
    x : float, int or None
        A real number (Python or NumPy); None, NaN and pandas' NA are missing.
    digits : int, default=3
        Decimals (``f"{x:.{digits}f}"``), or with ``significant=True``
        significant digits (``f"{x:.{digits}g}"``; a whole number shows as
        an integer, ``2.0`` as ``2``).
    significant : bool, default=False
        Count significant digits instead of decimals (the HTML reprs).
    signed : bool, default=False
        Prefix ``+`` to a positive number (a rank change: ``+2``, ``0``, ``−1``).
    missing : str, default="–"
        The text of a missing value (:data:`MISSING`). The command line's
        text tables pass :data:`TEXT_MISSING`.
    minus : str, default="−"
        The minus sign (:data:`MINUS`, U+2212). Text that must stay as it was
        stored or be read back as Python (the findings' sentences, reprs, the
        command line) passes ``"-"``.

    Returns
    -------
    str
        Infinities are ``∞`` and ``−∞``.

    Examples
    --------
    >>> from beyondauc.utils.formatting import format_number
    >>> format_number(0.85812), format_number(-0.0423), format_number(None), format_number(float("nan"))
    ('0.858', '−0.042', '–', '–')
    >>> format_number(2, 0, signed=True), format_number(0, 0, signed=True), format_number(-1, 0, signed=True)
    ('+2', '0', '−1')
    >>> format_number(0.123456, 4, significant=True), format_number(2.0, 4, significant=True)
    ('0.1235', '2')
    >>> format_number(-0.25, 2, minus="-"), format_number(float("-inf")), format_number(-0.0004)
    ('-0.25', '−∞', '0.000')
    """
    if is_missing(x):
        return missing
    if not isinstance(x, numbers.Real):
        raise TypeError(f"format_number needs a real number or None, got {type(x).__name__}")
    value = float(x)
    if math.isinf(value):
        text = _INFINITY if value > 0 else "-" + _INFINITY
    elif significant and isinstance(x, numbers.Integral):
        text = str(int(x))
    elif significant and value == int(value) and abs(value) < 1e15:
        text = str(int(value))
    elif significant:
        text = f"{value:.{digits}g}"
    else:
        text = f"{x:.{digits}f}"
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]  # a negative number that rounds to zero is zero: 0.000, never −0.000
    if signed and value > 0:
        text = "+" + text
    return text.replace("-", minus)


def format_interval(low: float | None, high: float | None, digits: int = 3, *, minus: str = MINUS) -> str:
    """``low–high`` (an en dash between the two ends, each as :func:`format_number`), or ``""`` without one.

    An interval with a negative end reads ``low to high`` (``−0.20 to 0.10``,
    not ``−0.20–0.10``, which reads as two negative numbers), as the tables'
    intervals do. An interval with a missing end is no interval: it shows as
    nothing, its estimate alone.

    Examples
    --------
    >>> from beyondauc.utils.formatting import format_interval
    >>> format_interval(0.8404, 0.8712), format_interval(-0.2, 0.1, 2), format_interval(0.8, None)
    ('0.840–0.871', '−0.20 to 0.10', '')
    """
    if is_missing(low) or is_missing(high):
        return ""
    ends = format_number(low, digits, minus=minus), format_number(high, digits, minus=minus)
    negative = any(e.startswith((minus, MINUS, "-")) for e in ends)
    return f"{ends[0]} to {ends[1]}" if negative else f"{ends[0]}\u2013{ends[1]}"


def format_range(low: float, high: float, digits: int = 3, *, minus: str = MINUS) -> str:
    """``[low, high]`` to the decimals that give the range's width ``digits`` significant digits.

    Both ends get the same decimals, so an end that is zero but for rounding
    noise reads as zero (``-5.98e-11`` beside ``-10.7`` is ``0.0``), never in
    scientific notation.

    Examples
    --------
    >>> from beyondauc.utils.formatting import format_range
    >>> format_range(-10.7, -5.98e-11), format_range(0.0123, 0.9871), format_range(3, 3)
    ('[−10.7, 0.0]', '[0.012, 0.987]', '[3.000, 3.000]')
    """
    span = abs(float(high) - float(low))
    decimals = digits
    if math.isfinite(span) and span > 0:
        decimals = max(0, digits - 1 - math.floor(math.log10(span)))
    ends = [format_number(round(float(v), decimals) + 0.0, decimals, minus=minus) for v in (low, high)]
    return f"[{ends[0]}, {ends[1]}]"


def _cell(value: float | None, rank: float | None, scale: float) -> str:
    """``score (rank)`` of a text table, the score times ``scale`` to one decimal."""
    if value is None or is_missing(value):
        return TEXT_MISSING
    r = "" if rank is None or is_missing(rank) else f" ({int(rank)})"
    return format_number(value * scale, 1, minus="-") + r


#: LaTeX's special characters as text (one pass: the replacements hold braces and backslashes).
_LATEX = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\{",
        "}": r"\}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
        "|": r"\textbar{}",
    }
)
# Markdown: characters that can start markup inside a table cell (CommonMark lets any ASCII punctuation be
# backslash-escaped); "_" only where it could emphasise, i.e. not between two letters or digits (naive_bayes).
_MARKDOWN = re.compile(r"([\\`*\[\]<>|~$&!#^])|(?<![^\W_])_|_(?![^\W_])")


def escape_text(text: object, fmt: str) -> str:
    r"""``text`` as literal text in ``fmt`` (``"latex"`` or ``"markdown"``; any other: unchanged).

    A name with ``&``, ``%``, ``_``, ``|``, ``$``... shows as itself.

    Examples
    --------
    >>> from beyondauc.utils.formatting import escape_text
    >>> print(escape_text("50%_a&b {x}", "latex"))
    50\%\_a\&b \{x\}
    >>> print(escape_text("naive_bayes|_x", "markdown"))
    naive_bayes\|\_x
    """
    text = str(text)
    if fmt == "latex":
        return text.translate(_LATEX)
    if fmt == "markdown":
        return _MARKDOWN.sub(lambda m: "\\" + m.group(0), text)
    return text


def score_table(
    ranked: pd.DataFrame,
    *,
    fmt: str = "table",
    title: str | None = None,
    scale: float = 100.0,
    row_key: str = "model",
    col_key: str = "dataset",
    unmarked_rows: Collection[str] = (),
) -> str:
    """Render a tidy (row, column, value, rank) frame as a paper-style table.

    Rows are models, columns datasets (and the mean); each cell is
    ``score (rank)`` with scores x100 as in the paper, and the best cell of
    each column is marked (``*`` / bold), ignoring ``unmarked_rows``.
    """
    rows = list(pd.unique(ranked[row_key]))
    cols = list(pd.unique(ranked[col_key]))
    start, end = _MARK[fmt]
    body = []
    lookup = {(r[row_key], r[col_key]): r for r in ranked.to_dict("records")}
    best = {}
    for c in cols:
        sel = (ranked[col_key] == c) & ~ranked[row_key].isin(list(unmarked_rows))
        vals = ranked.loc[sel, "value"].to_numpy(dtype=float)
        best[c] = np.nanmax(vals) if np.isfinite(vals).any() else None
    for r in rows:
        line = [escape_text(r, fmt)]
        for c in cols:
            rec = lookup.get((r, c))
            if rec is None:
                line.append("")
                continue
            text = _cell(rec["value"], rec.get("rank"), scale)
            if best[c] is not None and rec["value"] == best[c] and r not in unmarked_rows:
                text = f"{start}{text}{end}"
            line.append(text)
        body.append(line)
    headers = [escape_text(row_key, fmt)] + [escape_text(c, fmt) for c in cols]
    return _titled(tabulate(body, headers=headers, tablefmt=_TABLEFMT[fmt], disable_numparse=True), title, fmt)


def comment(text: object) -> str:
    """``text`` as LaTeX comment lines (every line, so a newline in a name or path cannot end the comment)."""
    return "\n".join(f"% {line}" for line in str(text).splitlines() or [""])


def _titled(out: str, title: str | None, fmt: str) -> str:
    if not title:
        return out
    if fmt == "markdown":
        return f"### {title}\n\n{out}"
    if fmt == "latex":
        return f"{comment(title)}\n{out}"
    return f"{title}\n{'=' * len(title)}\n{out}"


def plain_table(frame: pd.DataFrame, *, fmt: str = "table", title: str | None = None, floatfmt: str = ".3f") -> str:
    """Render an ordinary DataFrame in the chosen text format."""
    body = [
        [escape_text(v, fmt) if isinstance(v, str) else None if v is pd.NA else v for v in row]
        for row in frame.itertuples(index=False)
    ]
    out = tabulate(
        body,
        headers=[escape_text(c, fmt) for c in frame.columns],
        tablefmt=_TABLEFMT[fmt],
        floatfmt=floatfmt,
        missingval=TEXT_MISSING,
    )
    return _titled(out, title, fmt)


_MARKDOWN_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")  # CommonMark escapes them all


def markdown_text(value: object) -> str:
    """``str(value)`` with every ASCII punctuation character backslash-escaped.

    For names from the data (models, datasets) that notebooks put into
    Markdown: the name then shows verbatim, in Jupyter and in the reports,
    whatever characters it has.

    Examples
    --------
    >>> from beyondauc.report import markdown_text
    >>> markdown_text("svm")
    'svm'
    >>> print(markdown_text("a_b [x]"))
    a\\_b \\[x\\]
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(value))


def quoted_name(name: object, limit: int = 60) -> str:
    """``repr(name)`` for a one-line message, shortened in the middle when long."""
    text = repr(name)
    return text if len(text) <= limit else f"{text[: limit - 20]}…{text[-19:]}"
