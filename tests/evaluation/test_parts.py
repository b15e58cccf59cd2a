"""Tables joined from column parts are the tables concatenating each part's frame makes."""

import numpy as np
import pandas as pd
import pytest

from beyondauc.evaluation.parts import concat_parts


def by_frames(parts, columns=None):
    """The reference: one frame per part (scalars broadcast by pandas), concatenated by pandas."""
    frames = [pd.DataFrame(c, index=pd.RangeIndex(n)) for n, c in parts if n]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns or [])


CASES = {
    "keys and numbers": [
        (3, {"model": "a", "x": np.arange(3.0), "k": np.arange(3), "flag": True}),
        (2, {"model": "b", "x": np.ones(2), "k": np.arange(2), "flag": False}),
    ],
    "int then float": [(2, {"m": "a", "v": np.arange(2)}), (2, {"m": "b", "v": np.ones(2)})],
    "text and numbers in one column": [(2, {"m": "a", "v": np.arange(2)}), (1, {"m": "b", "v": "mean"})],
    "object text with a missing value": [
        (2, {"note": np.array(["x", None], dtype=object)}),
        (1, {"note": np.array(["y"], dtype=object)}),
    ],
    "pandas text arrays": [
        (2, {"note": pd.array(["x", "y"], dtype="str")}),
        (1, {"note": pd.array([np.nan], dtype="str")}),
    ],
    "pandas text and plain text": [(2, {"note": pd.array(["x", "y"], dtype="str")}), (1, {"note": "z"})],
    "mixed object labels": [
        (2, {"dataset": np.array([1, "mean"], dtype=object)}),
        (2, {"dataset": np.array([2, "mean"], dtype=object)}),
    ],
    "empty parts left out": [
        (0, {"a": np.array([], dtype=object), "b": np.array([])}),
        (2, {"a": "x", "b": np.arange(2.0)}),
    ],
    "flags then counts": [(2, {"v": np.array([True, False])}), (1, {"v": np.array([3])})],
    "no text then text": [(2, {"note": np.array([None, None], dtype=object)}), (1, {"note": "x"})],
    "columns in another order": [(1, {"a": "x", "b": 1.0}), (1, {"b": 2.0, "a": "y"})],
}


@pytest.mark.parametrize("name", CASES)
def test_joined_columns_make_the_table_the_frames_make(name):
    parts = CASES[name]
    got, want = concat_parts(parts), by_frames(parts)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)


def test_no_rows_give_the_named_empty_table():
    got = concat_parts([(0, {"a": np.array([])})], ["a", "b"])
    assert list(got.columns) == ["a", "b"] and len(got) == 0
