"""Tables made once from their parts' columns, not from many small frames.

A task of an evaluation returns its rows as parts ``(n, {column: n values or
one value for all n})``; :func:`concat_parts` joins each column over the parts and
makes the table once.  Small frames per model x dataset, each with its string
key columns, were most of the time of an evaluation of many models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def typed_columns(frame):
    """``frame``'s columns by name, each with its type (numpy arrays, or pandas' arrays for pandas' types)."""
    return {c: col.to_numpy() if isinstance(col.dtype, np.dtype) else col.array for c, col in frame.items()}


def concat_parts(parts, columns=None):
    """One table of ``parts``, each ``(n, {column: n values or one value for all n})``, in order.

    The same table as concatenating each part's frame (``pd.concat(...,
    ignore_index=True)``, parts without rows left out; ``columns`` when none
    has rows): it is built once from the joined columns, and from the parts'
    frames when a column's types differ between parts (there pandas decides
    the type).
    """
    parts = [x for x in parts if x[0]]
    if not parts:
        return pd.DataFrame(columns=columns or [])
    names = list(parts[0][1])
    if all(list(c) == names for _, c in parts):
        joined = {name: _joined([(n, c[name]) for n, c in parts]) for name in names}
        if all(v is not None for v in joined.values()):
            return pd.DataFrame(joined)
    return pd.concat([pd.DataFrame(c, index=pd.RangeIndex(n)) for n, c in parts], ignore_index=True)


def _joined(column):
    """One column's values over the parts ``[(n, values or one value)]`` (None when their types differ).

    A text value (one for all rows, or an object array of text only) joins
    as objects, which the table's constructor reads as text, as it reads each
    part's; pandas' own arrays join only with arrays of the same type.
    """
    arrays, strings = [], True
    for n, v in column:
        if isinstance(v, str):
            arrays.append(np.full(n, v, dtype=object))
        elif isinstance(v, pd.api.extensions.ExtensionArray):
            arrays.append(v)
        else:
            arrays.append(np.full(n, v) if np.ndim(v) == 0 else np.asarray(v))
            strings = strings and (arrays[-1].dtype != object or all(type(x) is str for x in arrays[-1]))
    if any(a.dtype != arrays[0].dtype for a in arrays) or not strings:
        return None  # mixed types (or an object column not all text): pandas concatenates the frames
    if isinstance(arrays[0], pd.api.extensions.ExtensionArray):
        return type(arrays[0])._concat_same_type(arrays)
    return np.concatenate(arrays)
