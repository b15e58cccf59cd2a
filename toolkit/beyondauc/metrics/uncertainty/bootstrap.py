"""The shared bootstrap machinery: stratified, paired resampling as count weights.

A bootstrap replicate is a vector of non-negative integer counts, one per
example (how often the example is drawn), never a re-sorted copy of the data.
Every model reads the *same* replicates (a paired bootstrap), and each
stratum (dataset x class) is resampled to its own size, so every replicate
keeps each dataset's size and class balance.  Per-value counts on a model's
score grid (:mod:`beyondauc.metrics.core.kernel`) are then one sparse product,
:func:`grid_weights`, after which every fit and metric is the same vectorised
operation on counts that the point estimate uses, with replicates as rows.

Replicates are drawn in fixed blocks of :data:`BLOCK` from child seeds of
``random_state``, so replicate ``b`` is the same whatever ``n_bootstrap``
beyond it, and however the work is split into chunks or processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.typing import ArrayLike

from ...utils.validation import check_int, check_number

# the intervals made from the replicates live beside: re-exported here, where their callers have read them
from .bootstrap_intervals import (  # noqa: F401
    bca_interval,
    honest_interval,
    jackknife_acceleration,
    nanquantile_slices,
    percentile_interval,
)
from .uniform_draws import uniforms

__all__ = ["CountGrid"]

BLOCK = 64  # replicates per independently seeded block


#: The most replicates a bootstrap takes.  At 10,000 the Monte Carlo error of a 95% percentile interval's end
#: is under 3% of a standard error (sqrt(0.025 * 0.975 / B) / phi(1.96)), below what the reports print, while
#: each replicate costs memory and time (:data:`REPLICATE_COST`): more is refused up front, never run for days.
MAX_BOOTSTRAP = 10_000
#: What one replicate of ``evaluate`` costs on the demo (8 models x 8 datasets, one process), measured from
#: 0 to 3,000 replicates: (CPU seconds, bytes of peak memory).  It grows with the benchmark's models x datasets.
REPLICATE_COST = (0.014, 59_000)


def _cost(n_bootstrap):
    """``n_bootstrap`` replicates of the demo's evaluation in words: about how much memory and time."""
    seconds, size = (n_bootstrap * c for c in REPLICATE_COST)
    units = ((86400, "days"), (3600, "hours"), (60, "minutes"), (1, "seconds"))
    span, unit = next((seconds / u, name) for u, name in units if seconds >= u or u == 1)
    gib = size / 2**30
    memory = f"{gib / 1024:.1f} TiB" if gib >= 1024 else f"{gib:.1f} GiB"
    return f"about {memory} and {span:.0f} {unit} of CPU on the 8 x 8 demo"


def check_bootstrap(n_bootstrap: int, confidence_level: float) -> tuple[int, float]:
    """Validate ``n_bootstrap`` (int in [0, :data:`MAX_BOOTSTRAP`]; 0 = no intervals) and ``confidence_level``
    in (0, 1).

    Examples
    --------
    >>> check_bootstrap(200, 0.95)
    (200, 0.95)
    >>> check_bootstrap(10**8, 0.95)
    Traceback (most recent call last):
    ...
    ValueError: `n_bootstrap` must be an int in [0, 10000] ...
    """
    if isinstance(n_bootstrap, (int, np.integer)) and not isinstance(n_bootstrap, bool) and n_bootstrap > MAX_BOOTSTRAP:
        raise ValueError(
            f"`n_bootstrap` must be an int in [0, {MAX_BOOTSTRAP}] (more replicates move an "
            f"interval's ends by under 3% of a standard error), got {n_bootstrap}, which would need "
            f"{_cost(int(n_bootstrap))}"
        )
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=0)
    confidence_level = check_number(confidence_level, "confidence_level", low=0, high=1, low_open=True, high_open=True)
    return n_bootstrap, float(confidence_level)


def strata_of(*keys: ArrayLike) -> np.ndarray:
    """One integer stratum per example from several key arrays (e.g. dataset code and label).

    The strata are numbered in the lexicographic order of the keys (as
    ``np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)`` numbers
    them): each key's own codes, combined as the digits of one integer, whose
    unique values are then numbered.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import strata_of
    >>> strata_of(np.array([1, 0, 1, 0]), np.array([5, 5, 7, 5])).tolist()
    [1, 0, 2, 0]
    """
    stacked = np.stack([np.asarray(k) for k in keys], axis=1)
    combined = np.zeros(len(stacked), dtype=np.int64)
    radix = 1
    for column in stacked.T:  # a loop over the (few) keys
        values, codes = np.unique(column, return_inverse=True)
        radix *= max(len(values), 1)
        if radix >= 2**62:  # too many combinations for one integer: the rows themselves
            _, codes = np.unique(stacked, axis=0, return_inverse=True)
            return codes.ravel()
        combined = combined * len(values) + codes.ravel()
    return np.unique(combined, return_inverse=True)[1].ravel()


def int_seed(random_state: int | np.random.RandomState | None) -> int | None:
    if isinstance(random_state, np.random.RandomState):  # a legacy generator: draw a seed from it
        return int(random_state.randint(0, 2**31 - 1))
    if random_state is None:
        return None
    return int(random_state)


def dataset_seed(random_state: int | None, position: int) -> int | None:
    """The bootstrap seed of a benchmark's dataset: ``random_state``'s child stream number ``position``.

    ``position`` is the dataset's place among the benchmark's datasets, so every
    model reads the same replicates of a dataset (paired), two datasets draw
    independent ones (even when they hold rows in the same order), and renaming
    a dataset changes nothing.  ``None`` stays ``None`` (fresh entropy).

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.bootstrap import dataset_seed
    >>> dataset_seed(0, 1) == dataset_seed(0, 1) != dataset_seed(0, 2)
    True
    """
    seed = int_seed(random_state)
    if seed is None:
        return None
    return int(np.random.SeedSequence([seed, int(position)]).generate_state(1)[0])


def bootstrap_counts(
    strata: ArrayLike, n_bootstrap: int, *, random_state: int | None = 0, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """Replicates ``start:stop`` of a stratified bootstrap, as counts (n_replicates, n_examples).

    Parameters
    ----------
    strata : ndarray of int, shape (n,)
        Stratum of each example; each stratum is resampled with replacement
        to its own size (a multinomial draw over its examples, drawn as
        uniform picks and counted with one ``bincount`` per block).
    n_bootstrap : int
        Total number of replicates (the seed layout depends only on it
        through ``stop``).
    random_state : int or None
        Seed of replicate block k is ``SeedSequence(random_state).spawn`` child k.
    start, stop : int
        The replicates to draw (default: all), so callers can work in chunks
        and still get the same replicates.

    Returns
    -------
    ndarray of int32, shape (stop - start, n)

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts
    >>> w = bootstrap_counts(np.array([0, 0, 0, 1, 1]), 3, random_state=0)
    >>> w.shape, w[:, :3].sum(axis=1).tolist(), w[:, 3:].sum(axis=1).tolist()
    ((3, 5), [3, 3, 3], [2, 2, 2])
    >>> bool((bootstrap_counts(np.array([0, 0, 0, 1, 1]), 3, random_state=0, start=1) == w[1:]).all())
    True
    """
    strata = np.asarray(strata)
    stop = n_bootstrap if stop is None else stop
    n = len(strata)
    out = np.zeros((stop - start, n), dtype=np.int32)
    for lo, picks in _draws(strata, n_bootstrap, random_state, start, stop):  # picks: fresh arrays, counted in place
        _count_rows(out[lo : lo + len(picks)], picks, n)
    return out


_DRAW_CELLS = 1 << 21  # replicate x example picks held at once while drawing
_COUNT_CELLS = 1 << 18  # replicate x grid-column counts made at once (a cache's worth)


def _draws(strata, n_bootstrap, random_state, start, stop, *, order=None, sorted_positions=False):
    """Yield ``(row, picks)``: the examples drawn by replicates ``start + row ...`` (rows x n), row block by row block.

    Each example position j of a replicate draws one example of its own
    stratum, uniformly: ``first + an integer in [0, size)`` over the stratum's
    block of the stable sorted order ``order`` (``np.argsort(strata,
    kind="stable")``, computed when not given).  Block k of :data:`BLOCK`
    replicates reads its own child seed; its draws are taken a few rows at a
    time from the same generator (the same stream as one call: the integers
    come in row-major order), so memory stays at about :data:`_DRAW_CELLS`
    picks.  With ``sorted_positions`` the picks are positions in ``order``
    (the caller maps them through a table of its own, one gather instead of
    two); otherwise examples (``order[pick]``, no gather when the strata are
    already sorted).
    """
    n = len(strata)
    order = np.argsort(strata, kind="stable") if order is None else order
    sorted_strata = strata[order]
    first = np.searchsorted(sorted_strata, sorted_strata, side="left")
    size = np.searchsorted(sorted_strata, sorted_strata, side="right") - first
    identity = sorted_positions or bool(np.array_equal(order, np.arange(n)))
    n_blocks = (stop + BLOCK - 1) // BLOCK if stop else 0
    children = np.random.SeedSequence(int_seed(random_state)).spawn(n_blocks) if n_blocks else []
    step = max(1, min(BLOCK, _DRAW_CELLS // max(n, 1)))
    for k in range(start // BLOCK, n_blocks):  # a loop over fixed blocks of replicates, and row blocks in each
        draw = uniforms(np.random.default_rng(children[k]), size)
        last = min(stop, (k + 1) * BLOCK) - k * BLOCK  # rows of this block past it are never needed
        skip = max(start - k * BLOCK, 0)  # rows before ``start``: the stream passes them, no integers are made
        for r0 in range(0, skip, step):
            draw.skip(min(r0 + step, skip) - r0)
        for r0 in range(skip, last, step):
            r1 = min(r0 + step, last)
            pick = draw(r1 - r0)
            pick += first
            yield k * BLOCK + r0 - start, pick if identity else order[pick]


def _grid_columns(inverse, y, n_values, groups, n_groups):
    """Each example's column of the (positive | negative | left out) per-value counts, and the row width."""
    n = len(inverse)
    groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    width = n_groups * n_values
    yk = np.asarray(y).astype(bool)
    col = np.where(yk, 0, width) + groups * n_values + np.asarray(inverse, dtype=np.int64)
    return np.where(groups >= 0, col, 2 * width), width


def grid_weights(
    counts: ArrayLike,
    inverse: ArrayLike,
    y: ArrayLike,
    n_values: int,
    *,
    groups: ArrayLike | None = None,
    n_groups: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-value positive and negative counts of each replicate: (R, n_groups, n_values) each.

    ``counts`` (R, n) are replicate counts per example, ``inverse`` each
    example's index on the score grid, ``y`` its 0/1 label and ``groups`` its
    row (e.g. dataset code; -1 leaves it out).  Each example's count is added
    to its column with one ``bincount`` on flat (replicate, column) indices,
    block of replicates by block (the additions in the order ``np.add.at``
    makes them, so even fractional counts give the same sums).
    """
    counts, inverse = np.asarray(counts), np.asarray(inverse)
    R, n = counts.shape[0], len(inverse)
    col, width = _grid_columns(inverse, y, n_values, groups, n_groups)
    out = np.empty((R, 2 * width + 1))
    step = max(1, _DRAW_CELLS // max(n, 1))
    for r0 in range(0, R, step):  # blocks of replicates, to bound the flat index arrays
        r1 = min(R, r0 + step)
        flat = (np.arange(r1 - r0, dtype=np.int64)[:, None] * (2 * width + 1) + col).ravel()
        # ``bincount`` adds the weights in the order given, as ``np.add.at`` did: the same sums, bit for bit
        out[r0:r1] = np.bincount(
            flat, weights=counts[r0:r1].ravel().astype(np.float64), minlength=(r1 - r0) * (2 * width + 1)
        ).reshape(r1 - r0, -1)
    return (out[:, :width].reshape(R, n_groups, n_values), out[:, width : 2 * width].reshape(R, n_groups, n_values))


def jackknife_count_chunks(
    member: ArrayLike,
    inverse: ArrayLike,
    y: ArrayLike,
    n_values: int,
    chunks: list[tuple[int, int]],
    *,
    groups: ArrayLike | None = None,
    n_groups: int = 1,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per-value positive and negative counts with each jackknife group left out, chunk ``(lo, hi)`` of groups by chunk.

    Row g is ``grid_weights`` of the counts that are 1, and 0 for the examples
    of group g (``member``, :func:`jackknife_groups`): here the counts of all
    examples, made once, less those of group g, one ``bincount`` per chunk
    instead of a (groups x examples) count matrix.  The counts are integers,
    so the rows are the same, exactly.  Yields (R, n_groups, n_values) each.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import grid_weights, jackknife_count_chunks
    >>> member, y = np.array([0, 1, 0, 1, 2]), np.array([0, 0, 1, 1, 1])
    >>> inverse = np.array([0, 1, 1, 2, 2])
    >>> parts = list(jackknife_count_chunks(member, inverse, y, 3, [(0, 2), (2, 3)]))
    >>> pos = np.concatenate([p for p, _ in parts])
    >>> ref = grid_weights((member[None, :] != np.arange(3)[:, None]).astype(np.int32), inverse, y, 3)
    >>> bool((pos == ref[0]).all()), pos[:, 0].tolist()
    (True, [[0.0, 0.0, 2.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    """
    col, width = _grid_columns(inverse, y, n_values, groups, n_groups)
    C = 2 * width + 1
    member = np.asarray(member, dtype=np.int64)
    full = np.bincount(col, minlength=C)
    for lo, hi in chunks:  # a loop over the chunks of groups
        R = hi - lo
        inside = (member >= lo) & (member < hi)
        left_out = np.bincount((member[inside] - lo) * C + col[inside], minlength=R * C).reshape(R, C)
        out = (full - left_out).astype(np.float64)
        yield out[:, :width].reshape(R, n_groups, n_values), out[:, width : 2 * width].reshape(R, n_groups, n_values)


@dataclass(frozen=True)
class CountGrid:
    """Where each example of a replicate is counted: its value on the score grid, its class and its group.

    Attributes
    ----------
    inverse : ndarray of int, shape (n,)
        Each example's index on the score grid (``np.unique(s, return_inverse=True)``).
    y : ndarray of {0, 1}, shape (n,)
        The class each example counts in.
    n_values : int
        Size of the score grid.
    groups : ndarray of int, shape (n,), optional
        Each example's group (e.g. cohort, role or dataset code; -1 leaves it out).
    n_groups : int, default=1
    """

    inverse: ArrayLike
    y: ArrayLike
    n_values: int
    groups: ArrayLike | None = None
    n_groups: int = 1

    def weights(self, counts: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """:func:`grid_weights` of per-example ``counts`` (R, n) on this grid."""
        return grid_weights(counts, self.inverse, self.y, self.n_values, groups=self.groups, n_groups=self.n_groups)


def bootstrap_grid_counts(
    strata: ArrayLike,
    grid: CountGrid,
    n_bootstrap: int,
    *,
    random_state: int | None = 0,
    start: int = 0,
    stop: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``grid.weights(bootstrap_counts(strata, ...))`` without the (R, n) counts.

    The same replicates (the same draws, the same per-value counts, exactly):
    the draws of a few replicates at a time are mapped to their examples'
    grid columns and counted with one ``bincount`` (integer counts: exact),
    so the work and memory are O(replicates x (n + grid)) and no
    replicate x example array is kept.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import CountGrid, bootstrap_counts, bootstrap_grid_counts
    >>> strata = y = np.array([0, 0, 1, 1, 1])
    >>> grid = CountGrid(np.array([0, 1, 1, 2, 2]), y, 3)
    >>> pos, neg = bootstrap_grid_counts(strata, grid, 4, random_state=0)
    >>> ref = grid.weights(bootstrap_counts(strata, 4, random_state=0))
    >>> bool((pos == ref[0]).all() and (neg == ref[1]).all()), pos.shape
    (True, (4, 1, 3))
    """
    stop = n_bootstrap if stop is None else stop
    return next(grid_count_chunks(strata, grid, n_bootstrap, [(start, stop)], random_state=random_state))


def grid_count_chunks(
    strata: ArrayLike,
    grid: CountGrid,
    n_bootstrap: int,
    chunks: list[tuple[int, int]],
    *,
    random_state: int | None = 0,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`bootstrap_grid_counts` of each chunk ``(start, stop)`` of replicates in turn, from one pass of the draws.

    The chunks follow each other (each starts where the one before stops).
    A chunk that starts inside a block of :data:`BLOCK` replicates would
    have to draw that block's earlier rows again on its own (the stream needs
    them); here every row is drawn once.  Yields (R, n_groups, n_values) each.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import CountGrid, bootstrap_grid_counts, grid_count_chunks
    >>> strata = y = np.array([0, 0, 1, 1, 1])
    >>> grid = CountGrid(np.array([0, 1, 1, 2, 2]), y, 3)
    >>> parts = list(grid_count_chunks(strata, grid, 100, [(0, 40), (40, 80), (80, 100)], random_state=0))
    >>> whole = bootstrap_grid_counts(strata, grid, 100, random_state=0)
    >>> bool((np.concatenate([pos for pos, _ in parts]) == whole[0]).all())
    True
    """
    strata = np.asarray(strata)
    if any(b[0] != a[1] for a, b in pairwise(chunks)):
        raise ValueError(f"`chunks` must follow each other, got {chunks}")
    col, width = _grid_columns(grid.inverse, grid.y, grid.n_values, grid.groups, grid.n_groups)
    order = np.argsort(strata, kind="stable")
    col = col[order]  # the column of each position of the sorted order: one gather per draw, not two
    C = 2 * width + 1
    draws = _draws(strata, n_bootstrap, random_state, chunks[0][0], chunks[-1][1], order=order, sorted_positions=True)
    pending = np.zeros((0, len(strata)), dtype=np.int64)  # drawn rows not yet counted
    shape = (grid.n_groups, grid.n_values)
    for lo, hi in chunks:  # a loop over the chunks, each filled from the draws' row blocks
        out = np.empty((hi - lo, C))
        done = 0
        while done < hi - lo:
            if not len(pending):
                pending = next(draws)[1]
            take = min(len(pending), hi - lo - done)
            _count_rows(out[done : done + take], col[pending[:take]], C)
            pending, done = pending[take:], done + take
        yield out[:, :width].reshape(hi - lo, *shape), out[:, width : 2 * width].reshape(hi - lo, *shape)


def _count_rows(out, flat, C):
    """``out[r]`` = the counts of the columns ``flat[r]`` (R, k) over ``C`` columns, a few rows per ``bincount``.

    ``flat`` is overwritten (each row offset by its row's first column).
    """
    per = max(1, _COUNT_CELLS // max(C, 1))  # rows counted by one bincount: its counts stay in cache until copied out
    for r0 in range(0, len(flat), per):  # a loop over small blocks of replicates
        r1 = min(r0 + per, len(flat))
        idx = flat[r0:r1]
        if r1 - r0 > 1:
            idx += np.arange(r1 - r0, dtype=np.int64)[:, None] * C
        out[r0:r1] = np.bincount(idx.ravel(), minlength=(r1 - r0) * C).reshape(r1 - r0, C)


# -- BCa for the statistics the bootstrap biases -------------------------------------------

#: Groups of the delete-a-group jackknife behind every BCa acceleration but the AUC's (closed form).
N_JACKKNIFE = 20


def jackknife_groups(strata: ArrayLike, n_groups: int = N_JACKKNIFE, *, random_state: int | None = 0) -> np.ndarray:
    """Each example's group (0 .. n_groups - 1) of a stratified delete-a-group jackknife.

    Within each stratum the examples are put in a seeded random order and
    dealt to the groups in turn, so every group holds about ``1/n_groups`` of
    every stratum (a stratum smaller than ``n_groups`` leaves some groups
    without it).  The order is drawn from a stream of ``random_state`` of its
    own, independent of the bootstrap's replicates (``None`` seeds it with 0:
    the acceleration needs no fresh randomness, and the same data then get
    the same groups).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import jackknife_groups
    >>> g = jackknife_groups(np.array([0] * 6 + [1] * 4), 2, random_state=0)
    >>> np.bincount(g[:6]).tolist(), np.bincount(g[6:]).tolist()
    ([3, 3], [2, 2])
    """
    strata = np.asarray(strata)
    seed = int_seed(random_state)
    key = np.random.default_rng(np.random.SeedSequence([0 if seed is None else seed, 0x6A61636B])).random(len(strata))
    order = np.lexsort((key, strata))  # by stratum, randomly within it
    sorted_strata = strata[order]
    rank = np.arange(len(strata)) - np.searchsorted(sorted_strata, sorted_strata, side="left")
    groups = np.empty(len(strata), dtype=np.int64)
    groups[order] = rank % n_groups
    return groups
