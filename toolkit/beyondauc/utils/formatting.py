"""Paper-style text tables (plain, Markdown, LaTeX) of tidy results."""

from __future__ import annotations

import re
import string

import numpy as np
import pandas as pd
from tabulate import tabulate

__all__ = ["markdown_text"]

_MARK = {"table": ("*", ""), "markdown": ("**", "**"), "latex": ("\\textbf{", "}")}
_TABLEFMT = {"table": "simple", "markdown": "pipe", "latex": "latex_raw"}


def _cell(value, rank, scale):
    if value is None or pd.isna(value):
        return "n/a"
    r = "" if rank is None or pd.isna(rank) else f" ({int(rank)})"
    return f"{value * scale:.1f}{r}"


#: LaTeX's special characters as text (one pass: the replacements hold braces and backslashes).
_LATEX = str.maketrans({
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}",
})
# Markdown: characters that can start markup inside a table cell (CommonMark lets any ASCII punctuation be
# backslash-escaped); "_" only where it could emphasise, i.e. not between two letters or digits (naive_bayes).
_MARKDOWN = re.compile(r"([\\`*\[\]<>|~$&!#^])|(?<![^\W_])_|_(?![^\W_])")


def _escape(text, fmt):
    """``text`` as literal text in ``fmt``: a name with ``&``, ``%``, ``_``, ``|``, ``$``... shows as itself."""
    text = str(text)
    if fmt == "latex":
        return text.translate(_LATEX)
    if fmt == "markdown":
        return _MARKDOWN.sub(lambda m: "\\" + m.group(0), text)
    return text


def score_table(ranked, *, fmt="table", title=None, scale=100.0, row_key="model", col_key="dataset",
                unmarked_rows=()):
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
        line = [_escape(r, fmt)]
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
    headers = [_escape(row_key, fmt)] + [_escape(c, fmt) for c in cols]
    return _titled(tabulate(body, headers=headers, tablefmt=_TABLEFMT[fmt], disable_numparse=True), title, fmt)


def comment(text):
    """``text`` as LaTeX comment lines (every line, so a newline in a name or path cannot end the comment)."""
    return "\n".join(f"% {line}" for line in str(text).splitlines() or [""])


def _titled(out, title, fmt):
    if not title:
        return out
    if fmt == "markdown":
        return f"### {title}\n\n{out}"
    if fmt == "latex":
        return f"{comment(title)}\n{out}"
    return f"{title}\n{'=' * len(title)}\n{out}"


def plain_table(frame, *, fmt="table", title=None, floatfmt=".3f"):
    """Render an ordinary DataFrame in the chosen text format."""
    body = [[_escape(v, fmt) if isinstance(v, str) else None if v is pd.NA else v for v in row]
            for row in frame.itertuples(index=False)]
    out = tabulate(body, headers=[_escape(c, fmt) for c in frame.columns], tablefmt=_TABLEFMT[fmt],
                   floatfmt=floatfmt, missingval="n/a")
    return _titled(out, title, fmt)


_MARKDOWN_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")  # CommonMark escapes them all


def markdown_text(value):
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
