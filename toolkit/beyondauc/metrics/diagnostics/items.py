"""The item of each row of two cohorts: repeated samples of one item are drawn together.

An LLM run with several epochs (or several sampled answers per question)
gives several rows per item.  The diagnostics' bootstrap and their
permutation null take the *item* as the unit of every draw: a bootstrap
replicate draws whole items with replacement, a permutation moves whole items
between the cohorts.  On scores the class is usually the item's label, the
same in every sample, and the draws are stratified by class; where an item
holds samples of both classes (answers: each sample's correctness; scores of
clustered units, as in Obuchowski's clustered ROC) they are not: items are
drawn within their cohort only (:func:`stratified_by_class`).  Either way an
item's samples must lie in one cohort.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["cohort_items", "first_split_item", "stratified_by_class"]


def first_split_item(codes: np.ndarray, values: np.ndarray) -> int | None:
    """The first row whose item holds more than one of ``values`` (0/1 per row), or None when none does.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.items import first_split_item
    >>> first_split_item(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 1]))
    2
    >>> first_split_item(np.array([0, 0, 1]), np.array([1, 1, 0])) is None
    True
    """
    n = np.bincount(codes)
    ones = np.bincount(codes, weights=values.astype(np.float64), minlength=len(n))
    mixed = (ones > 0) & (ones < n)
    rows = np.flatnonzero(mixed[codes])
    return int(rows[0]) if len(rows) else None


def cohort_items(
    items_val: ArrayLike | None,
    items_test: ArrayLike | None,
    y: np.ndarray,
    *,
    where: str = "",
) -> np.ndarray | None:
    """Each row's item (0 .. n_items - 1), V's rows then T's; None when no item is given.

    ``items_val`` and ``items_test`` name each row's item (an id: the rows
    sharing it are the samples of one item); ``y`` is the 0/1 class of V's
    rows then T's.  An item with samples in both cohorts is refused;
    ``where`` starts the message (e.g. ``"dataset 'qa': "``).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.items import cohort_items
    >>> cohort_items([7, 7, 8], [9, 9], np.array([0, 0, 1, 1, 1])).tolist()
    [0, 0, 1, 2, 2]
    >>> cohort_items([7, 9], [9], np.array([0, 1, 1]))
    Traceback (most recent call last):
    ...
    ValueError: item 9 has samples in both the validation and the test cohort: an item is drawn whole, so its samples must lie in one cohort
    """
    if items_val is None and items_test is None:
        return None
    if items_val is None or items_test is None:
        raise ValueError("`items_val` and `items_test` go together: give both or neither")
    iv, it = np.asarray(items_val).ravel(), np.asarray(items_test).ravel()
    if len(iv) + len(it) != len(y):
        raise ValueError(
            f"`items_val` and `items_test` must name the item of every row: got {len(iv)} + {len(it)} ids "
            f"for {len(y)} rows"
        )
    ids = pd.Series(np.concatenate([iv.astype(object), it.astype(object)]))
    if ids.isna().any():
        raise ValueError(f"{where}`items_val` / `items_test` hold a missing id (row {int(ids.isna().argmax())})")
    codes = pd.factorize(ids, sort=False)[0].astype(np.int64)
    row = first_split_item(codes, np.repeat([0, 1], [len(iv), len(it)]))
    if row is not None:
        raise ValueError(
            f"{where}item {ids[row]!r} has samples in both the validation and the test cohort: an item is drawn "
            "whole, so its samples must lie in one cohort"
        )
    return codes


def stratified_by_class(by_class: bool, codes: np.ndarray | None, y: np.ndarray) -> bool:
    """Whether draws of whole items can be stratified by class: asked (``by_class``), and no item holds
    samples of both classes (rows without items, ``codes`` None, always can).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.items import stratified_by_class
    >>> stratified_by_class(True, np.array([0, 0, 1]), np.array([1, 1, 0]))
    True
    >>> stratified_by_class(True, np.array([0, 0, 1]), np.array([1, 0, 0]))
    False
    """
    return bool(by_class) and (codes is None or first_split_item(codes, np.asarray(y)) is None)
