"""Repeated samples of one item, resampled together: the cluster bootstrap.

An LLM run with several epochs (or several sampled answers per question)
gives several rows per (model, dataset, ``id``).  Those rows are not
independent: a question the model finds hard is answered wrongly in most of
its epochs.  A bootstrap that resamples rows treats five correlated answers
as five items and its intervals are too narrow; the cluster bootstrap
resamples *items* -- every row of a drawn item comes along, as many times as
the item is drawn -- so the intervals keep their coverage.

The draws are those of the stratified bootstrap
(:func:`~beyondauc.metrics.uncertainty.bootstrap.bootstrap_counts`) over the items, each
item in the stratum of its rows, with the same seeds; a row's count is its
item's.  Every model reads the same item counts: the bootstrap stays paired.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .bootstrap import CountGrid, bootstrap_counts, jackknife_groups

__all__ = ["cluster_counts", "cluster_grid_count_chunks", "cluster_jackknife_groups", "clusters_of", "item_strata"]


def clusters_of(*keys: ArrayLike) -> np.ndarray:
    """Each row's item (0 .. n_items - 1): the rows sharing every key (e.g. dataset and ``id``) are one item.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.clusters import clusters_of
    >>> clusters_of(["qa", "qa", "qa", "nli"], [1, 1, 2, 1]).tolist()
    [0, 0, 1, 2]
    """
    frame = pd.DataFrame({i: np.asarray(k) for i, k in enumerate(keys)})
    return frame.groupby(list(frame.columns), sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)


def item_strata(clusters: ArrayLike, strata: ArrayLike) -> np.ndarray:
    """The stratum of each item, from its rows' strata; an item whose rows disagree is an error.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.clusters import item_strata
    >>> item_strata([0, 0, 1, 2], [5, 5, 5, 7]).tolist()
    [5, 5, 7]
    """
    clusters, strata = np.asarray(clusters), np.asarray(strata)
    n_items = int(clusters.max()) + 1 if len(clusters) else 0
    first = np.full(n_items, -1, dtype=np.int64)
    first[clusters[::-1]] = np.arange(len(clusters))[::-1]  # the first row of each item
    out = strata[first]
    if (out[clusters] != strata).any():
        i = int(np.flatnonzero(out[clusters] != strata)[0])
        raise ValueError(
            f"the repeated samples of one item fall in different strata (row {i}): a cluster bootstrap "
            "resamples whole items, so stratify by what an item shares (dataset, role), not by row"
        )
    return out


def cluster_counts(
    clusters: ArrayLike,
    strata: ArrayLike,
    n_bootstrap: int,
    *,
    random_state: int | None = 0,
    start: int = 0,
    stop: int | None = None,
) -> np.ndarray:
    """Replicates ``start:stop`` of the cluster bootstrap as row counts, (n_replicates, n_rows).

    Items are drawn with replacement within their stratum (each stratum to
    its own number of items); every row counts as often as its item is drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.clusters import cluster_counts
    >>> w = cluster_counts([0, 0, 1, 1, 2, 2], np.zeros(6, dtype=int), 4, random_state=0)
    >>> bool((w[:, 0] == w[:, 1]).all() and (w.sum(axis=1) == 6).all())  # an item's rows come together
    True
    """
    clusters = np.asarray(clusters)
    per_item = bootstrap_counts(
        item_strata(clusters, strata), n_bootstrap, random_state=random_state, start=start, stop=stop
    )
    return per_item[:, clusters]


def cluster_grid_count_chunks(
    clusters: ArrayLike,
    strata: ArrayLike,
    grid: CountGrid,
    n_bootstrap: int,
    chunks: list[tuple[int, int]],
    *,
    random_state: int | None = 0,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per-value positive and negative counts of the cluster bootstrap, chunk ``(start, stop)`` by chunk.

    The twin of :func:`~beyondauc.metrics.uncertainty.bootstrap.grid_count_chunks` with
    items in place of rows: each chunk's item counts, every row counting as often as its item,
    counted on ``grid`` (R, n_groups, n_values) each.
    """
    for lo, hi in chunks:  # a loop over chunks of replicates, each counted at once
        yield grid.weights(cluster_counts(clusters, strata, n_bootstrap, random_state=random_state, start=lo, stop=hi))


def cluster_jackknife_groups(
    clusters: ArrayLike, strata: ArrayLike, n_groups: int, *, random_state: int | None = 0
) -> np.ndarray:
    """Each row's group of a delete-a-group jackknife that deals out items, not rows.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.clusters import cluster_jackknife_groups
    >>> g = cluster_jackknife_groups([0, 0, 1, 1, 2, 2, 3, 3], [0] * 8, 2)
    >>> bool((g[::2] == g[1::2]).all())
    True
    """
    clusters = np.asarray(clusters)
    return jackknife_groups(item_strata(clusters, strata), n_groups, random_state=random_state)[clusters]
