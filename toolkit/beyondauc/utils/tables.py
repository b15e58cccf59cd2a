"""Tables for people: a tidy DataFrame laid out as a reader of a report wants it.

Every table of the reports goes through :func:`readable_table`, so they all
read alike: titled columns (``bias robustness (T)``, not
``bias_robustness_test``), ranks as integers (a rank interval too, clipped to
``1..n_models``), words for booleans (``yes``/``no``, never ``True``), an
estimate with its interval under it, every row and column shown (no ``...``),
and a table wider than a page split into parts that each fit it, the row
labels repeated in every part. The numbers come through
:func:`~beyondauc.utils.formatting.format_number` (a true minus sign, missing
as an en dash).
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd
from tabulate import tabulate

from .formatting import MINUS, MISSING, format_number, is_missing
from .validation import check_int, check_number

__all__ = ["TITLES", "ReadableTable", "column_title", "readable_table"]

#: Titles of the evaluation's column names (lower case as the report index's headers; acronyms as written).
TITLES = {
    "auc": "AUC",
    "auc_rank": "AUC rank",
    "auc_val": "AUC (V)",
    "auc_test": "AUC (T)",
    "accuracy": "accuracy",
    "accuracy_rank": "accuracy rank",
    "kappa": "kappa",
    "kappa_rank": "kappa rank",
    "balanced_accuracy": "balanced accuracy",
    "mcc": "MCC",
    "f1": "F1",
    "n": "examples",
    "n_positive": "positives",
    "positive_rate": "share of positives",
    "splits": "cohorts",
    "n_calibration": "calibration examples",
    "n_evaluation": "evaluation examples",
    "n_nan": "missing",
    "calibration": "calibrated on",
    "value": "score",
    "rank": "rank",
    "change": "rank change",
    "p_change": "share keeping the sign",
    "significant": "significant",
    "cohorts": "cohorts",
    "n_val": "examples (V)",
    "n_test": "examples (T)",
    "bias_robustness_val": "bias robustness (V)",
    "bias_robustness_test": "bias robustness (T)",
    "noise_robustness_val": "noise robustness (V)",
    "noise_robustness_test": "noise robustness (T)",
    "drift": "drift",
    "wasserstein": "Wasserstein W",
    "wasserstein_p": "W order",
    "drift_pvalue": "drift p",
    "wasserstein_pvalue": "W p",
    "wasserstein_p1": "W (order 1)",
    "wasserstein_p2": "W (order 2)",
    "drift_rank": "drift rank",
    "wasserstein_rank": "W rank",
    "bias_robustness_rank": "bias robustness rank",
    "n_confidences": "distinct confidences",
    "rankable": "rankable",
    "area": "area",
    "aurc": "AURC",
    "e_aurc": "excess AURC",
    "a": "a",
    "b": "b",
    "n_fluctuations": "fluctuations",
    "penalty": "penalty",
    "disca": "DiSCA",
    "disca_rank": "DiSCA rank",
    "disca_ood": "DiSCA (OOD)",
    "a_ood": "a (OOD)",
    "b_ood": "b (OOD)",
    "n_fluctuations_ood": "fluctuations (OOD)",
    "didma": "DiDMA",
    "nidma": "NiDMA",
    "ece": "ECE",
    "ece_rank": "ECE rank",
    "variance": "variance",
    "scaled_variance": "scaled variance",
    "mean_dataset_variance": "mean variance per dataset",
    "group": "by accuracy",
    "tolerance": "tolerance t",
    "resolution": "grid step",
    "coverage_1": "coverage 1",
    "coverage_2": "coverage 2",
    "i": "fluctuation",
    "d1": "d1",
    "d2": "d2",
    "c1": "c1",
    "c2": "c2",
    "c": "gap",
}
_PX_PER_CHAR, _PX_PADDING = 7.2, 16  # 13 px text (JupyterLab's tables), 0.5 em padding each side
# inline, so a table reads the same in Jupyter, the HTML report and its PDF: numbers never break
_TD = "white-space: nowrap"
_CI = "display: block; font-size: 0.8em; color: #666"
_CAPTION = "caption-side: top; text-align: left; font-size: 0.85em; color: #555"
_ROW_LABEL = "text-align: left"
_SPANNING = "text-align: center"


def column_title(name: object) -> str:
    """The title of an evaluation's column name: :data:`TITLES`, else the name with spaces for underscores.

    Examples
    --------
    >>> from beyondauc.utils.tables import column_title
    >>> column_title("bias_robustness_test"), column_title("auc_rank"), column_title("my_score")
    ('bias robustness (T)', 'AUC rank', 'my score')
    """
    if isinstance(name, str):
        return TITLES.get(name, name.replace("_", " "))
    return _label(name)


def _label(value: object) -> str:
    """A label that is data (a pivot's values: a protocol, a tolerance) as text, unchanged but for numbers."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if is_missing(value):
        return format_number(None, 4, significant=True)
    if isinstance(value, numbers.Real):
        return format_number(value, 4, significant=True)
    return str(value)


def _is_rank(name: object) -> bool:
    return isinstance(name, str) and (name == "rank" or name.endswith("_rank"))


def _is_change(name: object) -> bool:
    return isinstance(name, str) and name in ("change", "rank_change")


def _integer(value: float, low: float, high: float) -> str:
    """A rank (or rank change) as an integer, rounded half up and clipped to ``[low, high]``."""
    if is_missing(value):
        return MISSING
    return format_number(int(min(max(math.floor(float(value) + 0.5), low), high)), 0)


class _Column:
    """One column of a readable table: its title (as header levels) and its cells as text (estimate, interval)."""

    def __init__(self, header: tuple[str, ...], cells: list[str], intervals: list[str]) -> None:
        self.header, self.cells, self.intervals = header, cells, intervals

    def width(self) -> float:
        """Estimated CSS pixels: its widest cell, or the longest word of its own header (headers wrap; the
        upper levels of a header span several columns)."""
        chars = max(
            [len(c) for c in self.cells]
            + [len(i) * 0.8 for i in self.intervals]
            + [len(word) for word in self.header[-1].split()]
            + [1]
        )
        return chars * _PX_PER_CHAR + _PX_PADDING


def _format_cells(
    series: pd.Series, *, digits: int, bounds: tuple[float, float] | None, words: tuple[str, str]
) -> list[str]:
    """A column's cells as text: booleans as ``words``, ranks within ``bounds``, integers, numbers to ``digits``."""
    values = series.tolist()
    if pd.api.types.is_bool_dtype(series) or (
        series.dtype == object
        and all(isinstance(v, (bool, np.bool_)) or is_missing(v) for v in values)
        and any(isinstance(v, (bool, np.bool_)) for v in values)
    ):
        return [MISSING if is_missing(v) else words[0] if v else words[1] for v in values]
    numeric = pd.api.types.is_numeric_dtype(series)
    if bounds is not None and numeric:
        return [_integer(v, *bounds) for v in values]
    if numeric and pd.api.types.is_integer_dtype(series):
        return [format_number(v, 0) for v in values]
    out = []
    for v in values:
        if is_missing(v):
            out.append(MISSING)
        elif isinstance(v, (bool, np.bool_)):
            out.append(words[0] if v else words[1])
        elif isinstance(v, numbers.Integral):
            out.append(format_number(v, 0))
        elif isinstance(v, numbers.Real):
            out.append(format_number(v, digits))
        else:
            out.append(str(v))
    return out


def _interval(low: str, high: str) -> str:
    """``low–high``, or ``low to high`` when an end is negative (``−3 to 2``, not ``−3–2``); none without both ends."""
    if MISSING in (low, high):
        return ""
    return f"{low} to {high}" if low.startswith(MINUS) or high.startswith(MINUS) else f"{low}\u2013{high}"


def _bounds(name: object, n_models: int | None) -> tuple[float, float] | None:
    """Where a rank (``1..n_models``) or a rank change (``±(n_models - 1)``) column's integers may lie."""
    top = math.inf if n_models is None else n_models
    if _is_rank(name):
        return (1, top)
    if _is_change(name):
        return (-(top - 1), top - 1)
    return None


def _columns(
    frame: pd.DataFrame,
    *,
    titles: Mapping[object, str],
    digits: int | Mapping[object, int],
    n_models: int | None,
    words: Mapping[object, tuple[str, str]],
    data_labels: bool,
) -> list[_Column]:
    """The frame's columns as text; ``X_low``/``X_high`` beside ``X`` become X's interval (shown under it)."""
    names = list(frame.columns)
    out = []
    for name in names:
        if isinstance(name, str) and name.endswith(("_low", "_high")):
            base = name.rsplit("_", 1)[0]
            if base in names and f"{base}_low" in names and f"{base}_high" in names:
                continue  # shown as the interval of its estimate
        bounds = _bounds(name, n_models)
        places = digits.get(name, 3) if isinstance(digits, Mapping) else digits
        cells = _format_cells(frame[name], digits=places, bounds=bounds, words=words.get(name, ("yes", "no")))
        intervals = [""] * len(cells)
        if isinstance(name, str) and f"{name}_low" in names and f"{name}_high" in names:
            bounds = bounds if pd.api.types.is_numeric_dtype(frame[name]) else None
            lows, highs = frame[f"{name}_low"].tolist(), frame[f"{name}_high"].tolist()
            if bounds is not None:
                intervals = [_interval(_integer(lo, *bounds), _integer(hi, *bounds)) for lo, hi in zip(lows, highs)]
            else:
                intervals = [
                    _interval(format_number(lo, places), format_number(hi, places)) for lo, hi in zip(lows, highs)
                ]
        levels = name if isinstance(name, tuple) else (name,)
        header: tuple[str, ...]
        if name in titles:
            header = (titles[name],)
        elif data_labels:
            header = tuple(_label(level) for level in levels)
        else:
            header = tuple(column_title(level) for level in levels)
        out.append(_Column(header, cells, intervals))
    return out


def _split(columns: list[_Column], budget: float) -> list[list[_Column]]:
    """As few parts as fit ``budget`` pixels, as even as that allows: 8 columns of which 7 fit are cut 4 + 4,
    not 7 + 1 (a part of one column reads as a stray)."""
    parts = _greedy_split(columns, budget)
    if len(parts) < 2:
        return parts
    low, high = max(c.width() for c in columns), float(budget)  # the smallest budget that gives as few parts
    for _ in range(30):
        middle = (low + high) / 2
        if len(_greedy_split(columns, middle)) <= len(parts):
            high = middle
        else:
            low = middle
    even = _greedy_split(columns, high)
    return even if len(even) <= len(parts) else parts


def _greedy_split(columns: list[_Column], budget: float) -> list[list[_Column]]:
    """Consecutive groups of columns each within ``budget`` pixels, cut between top-level header groups if any."""
    parts: list[list[_Column]] = []
    current: list[_Column] = []
    used = 0.0
    for col in columns:
        w = col.width()
        if current and used + w > budget:
            # prefer a cut where the top header level changes, if it leaves the part at least half full
            cut = len(current)
            if len(col.header) > 1:
                while cut > 0 and current[cut - 1].header[0] == col.header[0]:
                    cut -= 1
                if sum(c.width() for c in current[:cut]) < budget / 2:
                    cut = len(current)
            parts.append(current[:cut])
            current = current[cut:]
            used = sum(c.width() for c in current)
        current.append(col)
        used += w
    if current:
        parts.append(current)
    return parts


class ReadableTable:
    """A table laid out for people (see :func:`readable_table`); shows as HTML in Jupyter and the reports."""

    def __init__(
        self, row_header: tuple[str, ...], rows: list[tuple[str, ...]], parts: list[list[_Column]], caption: str | None
    ) -> None:
        self.row_header, self.rows, self.parts, self.caption = row_header, rows, parts, caption

    @property
    def columns(self) -> list[tuple[str, ...]]:
        """The header of every column (its levels), in order over the parts."""
        return [c.header for part in self.parts for c in part]

    def _repr_html_(self) -> str:
        e = html.escape
        n = len(self.parts)
        out = ['<div class="ba-table" data-beyondauc="table">']
        if self.caption:
            out.append(f'<p style="{_CAPTION}">{e(self.caption)}</p>')
        for k, part in enumerate(self.parts, 1):
            depth = max([len(c.header) for c in part] + [1])
            out.append('<table data-beyondauc="table-part">')
            if n > 1:
                out.append(f'<caption style="{_CAPTION}">part {k} of {n}</caption>')
            out.append("<thead>")
            for level in range(depth):
                cells = []
                if level == 0:
                    cells += [
                        f'<th scope="col" rowspan="{depth}" style="{_ROW_LABEL}">{e(h)}</th>' for h in self.row_header
                    ]
                cells += _header_cells(part, level, depth)
                out.append(f"<tr>{''.join(cells)}</tr>")
            out.append("</thead><tbody>")
            for r, labels in enumerate(self.rows):
                # the first of several row labels is written once for its consecutive rows
                shown = ("",) + labels[1:] if len(labels) > 1 and r and self.rows[r - 1][0] == labels[0] else labels
                cells = [f'<th scope="row" style="{_ROW_LABEL}">{e(lab)}</th>' for lab in shown]
                for col in part:
                    ci = col.intervals[r]
                    cells.append(
                        f'<td style="{_TD}">{e(col.cells[r])}'
                        + (f' <span class="ci" style="{_CI}">{e(ci)}</span>' if ci else "")
                        + "</td>"
                    )  # value, interval: two words
                out.append(f"<tr>{''.join(cells)}</tr>")
            out.append("</tbody></table>")
        out.append("</div>")
        return "".join(out)

    def __repr__(self) -> str:
        texts = []
        for part in self.parts:
            headers = list(self.row_header) + [" / ".join(h for h in c.header if h) for c in part]
            body = [
                list(labels) + [c.cells[r] + (f" ({c.intervals[r]})" if c.intervals[r] else "") for c in part]
                for r, labels in enumerate(self.rows)
            ]
            texts.append(tabulate(body, headers=headers, disable_numparse=True))
        return "\n\n".join(([self.caption] if self.caption else []) + texts)


def _header_cells(part: list[_Column], level: int, depth: int) -> list[str]:
    """One header row: equal consecutive labels of an upper level merged into one spanning cell."""
    cells, i = [], 0
    while i < len(part):
        header = part[i].header
        if level >= len(header):
            i += 1
            continue
        if len(header) < depth and level == len(header) - 1:
            cells.append(f'<th scope="col" rowspan="{depth - level}">{html.escape(header[level])}</th>')
            i += 1
            continue
        j = i + 1
        if level < depth - 1:
            while j < len(part) and part[j].header[: level + 1] == header[: level + 1]:
                j += 1
        span = f' colspan="{j - i}" style="{_SPANNING}"' if j - i > 1 else ""
        cells.append(f'<th scope="col"{span}>{html.escape(header[level])}</th>')
        i = j
    return cells


def _check(
    frame: object, *, digits: object, n_models: object, words: Mapping[object, object] | None, width: object
) -> None:
    """One line naming the parameter for bad input, before any formatting."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    for value in digits.values() if isinstance(digits, Mapping) else [digits]:
        check_int(value, "digits", minimum=0)
    if n_models is not None:
        check_int(n_models, "n_models", minimum=1)
    for name, pair in dict(words or {}).items():
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(w, str) for w in pair)):
            raise ValueError(f"`words` must map a column to (word for true, word for false), got {pair!r} for {name!r}")
    check_number(width, "width", low=0, low_open=True)


def readable_table(
    frame: pd.DataFrame,
    *,
    titles: Mapping[object, str] | None = None,
    digits: int | Mapping[object, int] = 3,
    n_models: int | None = None,
    words: Mapping[object, tuple[str, str]] | None = None,
    caption: str | None = None,
    width: float = 720,
) -> ReadableTable:
    """``frame`` as a table for people: titled columns, integer ranks, words for booleans, nothing cut.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows to show; its index (one or more levels) labels the rows. A
        column ``X`` with columns ``X_low`` and ``X_high`` beside it shows
        that interval under each estimate.
    titles : mapping, optional
        Column name -> title, over :data:`TITLES` (names not in either show
        with spaces for underscores). Columns of a pivot (whose column index
        has a name, such as ``tolerance``) are data, not names: they show as
        they are (numbers formatted), their level's name titles the corner.
    digits : int or mapping, default=3
        Decimals of the numbers, or per column name.
    n_models : int, optional
        How many models are ranked: columns ``rank`` and ``*_rank`` (and
        their intervals) are integers in ``1..n_models``; ``change`` and
        ``*_change`` in ``±(n_models - 1)``. Ranks are integers in any case.
    words : mapping, optional
        Column name -> (word for true, word for false); default ``yes``/``no``.
    caption : str, optional
        A line above the table.
    width : float, default=720
        Most CSS pixels a part may take: wider tables are split into parts of
        consecutive columns, each repeating the row labels (720 fits a
        window of 800 px).

    Returns
    -------
    ReadableTable
        Shows as HTML in Jupyter and in the reports (plain text otherwise).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc.report import readable_table
    >>> t = pd.DataFrame({"dataset": ["wine", "iris"], "auc_rank": [1.0, 2.0], "auc_rank_low": [0.97, 1.2],
    ...                   "auc_rank_high": [2.4, 3.6], "significant": [True, False]}).set_index("dataset")
    >>> print(readable_table(t, n_models=3))
    dataset    AUC rank    significant
    ---------  ----------  -------------
    wine       1 (1–2)     yes
    iris       2 (1–3)     no
    """
    _check(frame, digits=digits, n_models=n_models, words=words, width=width)
    data_labels = isinstance(frame.columns, pd.MultiIndex) or frame.columns.name is not None  # a pivot
    row_header: tuple[str, ...]
    rows: list[tuple[str, ...]]
    if isinstance(frame.index, pd.RangeIndex) and frame.index.name is None:
        row_header, rows = (), [()] * len(frame)  # no row labels
    else:
        row_header = tuple(column_title(n) if n is not None else "" for n in frame.index.names)
        rows = [tuple(_label(v) for v in (i if isinstance(i, tuple) else (i,))) for i in frame.index.to_list()]
    columns = _columns(
        frame,
        titles=dict(titles or {}),
        digits=digits,
        n_models=n_models,
        words=dict(words or {}),
        data_labels=data_labels,
    )
    if data_labels and not isinstance(frame.columns, pd.MultiIndex):  # the pivot's level titles its columns
        for col in columns:
            col.header = (column_title(frame.columns.name),) + col.header
    label_width: float = sum(
        max([len(w) for r in rows for w in r[k].split()] + [len(w) for w in h.split()] + [1]) * _PX_PER_CHAR
        + _PX_PADDING
        for k, h in enumerate(row_header)
    )
    budget = max(float(width) - label_width, 1.0)
    return ReadableTable(row_header, rows, _split(columns, budget) if columns else [[]], caption)
