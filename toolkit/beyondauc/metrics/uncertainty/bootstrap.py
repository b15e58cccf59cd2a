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

import functools
import sys
from collections.abc import Iterator
from itertools import pairwise

import numpy as np
from numpy.typing import ArrayLike

from ...utils.validation import check_int, check_number

__all__: list[str] = []

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


# -- uniform integers below per-position bounds, as numpy draws them -----------------------

_WORD = np.uint64(32)


class Uniforms:
    """``rng.integers(0, size, size=(rows, n))`` call after call: the same integers, several times faster.

    numpy draws an int64 below a bound ``e`` < 2**32 from the generator's
    32-bit words (``next_uint32``: the low, then the high half of each 64-bit
    output) by Lemire's method: ``m = word * e``; the word is rejected, and
    the next one read, while ``m mod 2**32 < (2**32 - e) mod e``; the integer
    is ``m >> 32``.  A bound of 1 reads no word.  Here the words come from
    ``bit_generator.random_raw`` and every product, test and shift is one
    array operation; the rare rejections (about ``e / 2**33`` per draw) shift
    the words of every later draw by one, so the set of rejected words is
    found as the fixed point of a few sparse passes (:meth:`_rejected`).
    """

    def __init__(self, rng, size):
        self.bitgen = rng.bit_generator
        size = np.asarray(size, dtype=np.int64)
        self.n = len(size)
        self.live = np.flatnonzero(size > 1)  # a stratum of one draws no word
        e = size[self.live].astype(np.uint64)
        self.e, self.c = e, len(e)
        self.e32 = e.astype(np.uint32)
        self.thr = ((np.uint64(1 << 32) - e) % np.maximum(e, np.uint64(1))).astype(np.uint32)
        self.p = float(self.thr.max()) / 2.0**32 if self.c else 0.0
        # live positions where the bound differs from the one before (cyclically: rows follow each other)
        self.bounds = np.flatnonzero(e != np.roll(e, 1))
        self.buf = np.zeros(0, dtype=np.uint32)

    def _words(self, count):
        """At least ``count`` words from the buffer on (drawing more as needed)."""
        if len(self.buf) < count:
            raw = self.bitgen.random_raw((count - len(self.buf) + 1) // 2)
            self.buf = np.concatenate([self.buf, raw.view(np.uint32)])
        return self.buf

    def _flags(self, w, j, elem):
        """Whether word j is rejected by the draw of element ``elem`` (an index into the rows' live positions)."""
        p = elem % self.c
        return (w[j].astype(np.uint64) * self.e[p]).astype(np.uint32) < self.thr[p]

    def _rejected(self, N, rejected):
        """The words the draws of N elements reject, from those rejected with no earlier rejection (sorted).

        Word j is read by element ``j - s(j)``, ``s(j)`` the rejections before
        it.  Away from a change of bound the element's bound is that of
        element j, so the first guess holds; words up to ``s`` past a change
        of bound, and past the N-th element, are tested against their actual
        element.  Each pass makes the first wrong word a later one, so the
        passes stop (after two or three: rejections are rare).
        """
        J = rejected
        while True:
            S = len(J)
            w = self._words(N + S + 1)
            rows = np.arange((N + S) // self.c + 1, dtype=np.int64)[:, None] * self.c
            starts = (rows + self.bounds[None, :]).ravel()
            zone = np.unique(
                np.concatenate(
                    [np.arange(N, N + S + 1), (starts[(starts > 0) & (starts < N)][:, None] + np.arange(S + 1)).ravel()]
                )
            )
            elem = zone - np.searchsorted(J, zone, side="left")
            hit = zone[(elem < N) & self._flags(w, zone, elem)]
            new = np.union1d(np.setdiff1d(rejected, zone, assume_unique=True), hit)
            if np.array_equal(new, J):
                return J
            J = new

    def _take(self, rows):
        """The accepted words of the next ``rows`` rows (rows x live positions), and past them in the stream."""
        N = rows * self.c
        w = self._words(N + 64 + int(4 * N * self.p))
        low = w[:N].reshape(rows, self.c) * self.e32  # wraps: the low 32 bits of word x bound
        rejected = np.flatnonzero(low < self.thr)
        del low
        if not len(rejected):
            words, self.buf = w[:N], w[N:].copy()
            return words
        J = self._rejected(N, rejected)
        words = _skip(self.buf, J, N)
        self.buf = self.buf[N + len(J) :].copy()
        return words

    def skip(self, rows):
        """Move the stream past ``rows`` rows without making their integers."""
        if self.c:
            self._take(rows)

    def __call__(self, rows):
        """The next ``rows`` rows, (rows, n) int64."""
        c = self.c
        if c == 0:
            return np.zeros((rows, self.n), dtype=np.int64)
        m = self._take(rows).astype(np.uint64).reshape(rows, c)
        m *= self.e
        m >>= _WORD
        if c == self.n:
            return m.view(np.int64)
        out = np.zeros((rows, self.n), dtype=np.int64)
        out[:, self.live] = m
        return out


def _skip(w, rejected, N):
    """The first N words of ``w`` that are not at the (sorted) positions ``rejected``: one slice copy per gap."""
    out = np.empty(N, dtype=w.dtype)
    ends = np.append(rejected, N + len(rejected))
    begin = 0
    for k, end in enumerate(ends.tolist()):  # a loop over the rare rejections, each gap one copy
        out[begin - k : end - k] = w[begin:end]
        begin = end + 1
    return out


class _NumpyIntegers:
    """The fallback: numpy's own ``rng.integers`` (a bound of 2**32 or more, or a numpy that draws otherwise)."""

    def __init__(self, rng, size):
        self.rng, self.size = rng, size

    def __call__(self, rows):
        if not len(self.size):
            return np.zeros((rows, 0), np.int64)
        return self.rng.integers(0, self.size, size=(rows, len(self.size)))

    def skip(self, rows):
        self(rows)


@functools.cache
def _fast_matches_numpy():
    """Whether :class:`_Uniforms` gives this numpy's ``integers``, checked once on a case with many rejections."""
    if sys.byteorder != "little":
        return False
    size = np.array([1] * 3 + [3] * 40 + [2**31 + 5] * 200 + [7] * 31 + [3_000_000_017] * 50 + [1, 2])
    ref, fast = np.random.default_rng(12345), Uniforms(np.random.default_rng(12345), size)
    return all(np.array_equal(ref.integers(0, size, size=(r, len(size))), fast(r)) for r in (3, 1, 5))


def uniforms(rng, size):
    """A callable ``rows -> rng.integers(0, size, size=(rows, n))``, the next rows of the same stream each call."""
    if len(size) and int(size.max()) < 2**32 and _fast_matches_numpy():
        return Uniforms(rng, size)
    return _NumpyIntegers(rng, size)


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
    counts = np.asarray(counts)
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


def bootstrap_grid_counts(
    strata: ArrayLike,
    inverse: ArrayLike,
    y: ArrayLike,
    n_values: int,
    n_bootstrap: int,
    *,
    random_state: int | None = 0,
    start: int = 0,
    stop: int | None = None,
    groups: ArrayLike | None = None,
    n_groups: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """``grid_weights(bootstrap_counts(strata, ...), inverse, y, ...)`` without the (R, n) counts.

    The same replicates (the same draws, the same per-value counts, exactly):
    the draws of a few replicates at a time are mapped to their examples'
    grid columns and counted with one ``bincount`` (integer counts: exact),
    so the work and memory are O(replicates x (n + grid)) and no
    replicate x example array is kept.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import bootstrap_counts, bootstrap_grid_counts, grid_weights
    >>> strata = y = np.array([0, 0, 1, 1, 1])
    >>> inverse = np.array([0, 1, 1, 2, 2])
    >>> pos, neg = bootstrap_grid_counts(strata, inverse, y, 3, 4, random_state=0)
    >>> ref = grid_weights(bootstrap_counts(strata, 4, random_state=0), inverse, y, 3)
    >>> bool((pos == ref[0]).all() and (neg == ref[1]).all()), pos.shape
    (True, (4, 1, 3))
    """
    stop = n_bootstrap if stop is None else stop
    return next(
        grid_count_chunks(
            strata,
            inverse,
            y,
            n_values,
            n_bootstrap,
            [(start, stop)],
            random_state=random_state,
            groups=groups,
            n_groups=n_groups,
        )
    )


def grid_count_chunks(
    strata: ArrayLike,
    inverse: ArrayLike,
    y: ArrayLike,
    n_values: int,
    n_bootstrap: int,
    chunks: list[tuple[int, int]],
    *,
    random_state: int | None = 0,
    groups: ArrayLike | None = None,
    n_groups: int = 1,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`bootstrap_grid_counts` of each chunk ``(start, stop)`` of replicates in turn, from one pass of the draws.

    The chunks follow each other (each starts where the one before stops).
    A chunk that starts inside a block of :data:`BLOCK` replicates would
    have to draw that block's earlier rows again on its own (the stream needs
    them); here every row is drawn once.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import bootstrap_grid_counts, grid_count_chunks
    >>> strata = y = np.array([0, 0, 1, 1, 1])
    >>> inverse = np.array([0, 1, 1, 2, 2])
    >>> parts = list(grid_count_chunks(strata, inverse, y, 3, 100, [(0, 40), (40, 80), (80, 100)], random_state=0))
    >>> whole = bootstrap_grid_counts(strata, inverse, y, 3, 100, random_state=0)
    >>> bool((np.concatenate([pos for pos, _ in parts]) == whole[0]).all())
    True
    """
    strata = np.asarray(strata)
    if any(b[0] != a[1] for a, b in pairwise(chunks)):
        raise ValueError(f"`chunks` must follow each other, got {chunks}")
    col, width = _grid_columns(inverse, y, n_values, groups, n_groups)
    order = np.argsort(strata, kind="stable")
    col = col[order]  # the column of each position of the sorted order: one gather per draw, not two
    C = 2 * width + 1
    draws = _draws(strata, n_bootstrap, random_state, chunks[0][0], chunks[-1][1], order=order, sorted_positions=True)
    pending = np.zeros((0, len(strata)), dtype=np.int64)  # drawn rows not yet counted
    for lo, hi in chunks:  # a loop over the chunks, each filled from the draws' row blocks
        out = np.empty((hi - lo, C))
        done = 0
        while done < hi - lo:
            if not len(pending):
                pending = next(draws)[1]
            take = min(len(pending), hi - lo - done)
            _count_rows(out[done : done + take], col[pending[:take]], C)
            pending, done = pending[take:], done + take
        R = hi - lo
        yield out[:, :width].reshape(R, n_groups, n_values), out[:, width : 2 * width].reshape(R, n_groups, n_values)


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


def nanquantile_slices(a, q, axis=0):
    """``np.nanquantile(a, q, axis=axis)`` (its default "linear" method), for all slices at once.

    numpy computes a quantile that ignores NaN one 1-d slice at a time
    (``apply_along_axis``), a Python loop over the slices; here every slice
    is sorted at once (NaN last), and the two order statistics around the
    virtual index ``q * (n - 1)`` of each slice (``n`` its non-NaN values)
    are interpolated as numpy's ``_lerp`` does, so the results are the same
    to the last bit (tested).  An all-NaN slice gives NaN.
    """
    s = np.sort(np.moveaxis(np.asarray(a, dtype=float), axis, -1), axis=-1)
    if s.shape[-1] == 0:
        return np.full(s.shape[:-1], np.nan)
    n = np.count_nonzero(~np.isnan(s), axis=-1)
    virtual = q * (n - 1).astype(float)
    lo = np.floor(virtual)
    t = virtual - lo
    lo = np.clip(lo.astype(np.intp), 0, s.shape[-1] - 1)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    a_lo = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    b_hi = np.take_along_axis(s, hi[..., None], axis=-1)[..., 0]
    diff = b_hi - a_lo
    out = np.asarray(a_lo + diff * t)
    np.subtract(b_hi, diff * (1 - t), out=out, where=t >= 0.5)
    out[n == 0] = np.nan
    return out[()] if out.ndim == 0 else out


def percentile_interval(replicates: ArrayLike, confidence_level: float, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval (low, high) of replicates along ``axis``, ignoring NaN replicates.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.bootstrap import percentile_interval
    >>> low, high = percentile_interval([0.6, 0.7, 0.8, float("nan")], 0.5)
    >>> float(low), float(high)
    (0.65, 0.75)
    """
    alpha = (1.0 - confidence_level) / 2.0
    with np.errstate(invalid="ignore"):
        return nanquantile_slices(replicates, alpha, axis=axis), nanquantile_slices(replicates, 1.0 - alpha, axis=axis)


def bca_interval(
    replicates: np.ndarray, estimate: float, acceleration: float, confidence_level: float
) -> tuple[float, float] | None:
    """BCa interval (Efron 1987) from replicates, or None where it is not defined.

    The bias correction z0 counts the replicates below the estimate (ties
    count one half, for a discrete statistic such as the AUC); the
    ``acceleration`` comes from the statistic's jackknife (for the AUC:
    :func:`beyondauc.metrics.uncertainty.intervals.auc_ci`).  None when every replicate
    lies on one side of the estimate, or the acceleration or the adjusted
    levels are not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import bca_interval
    >>> reps = np.linspace(0.5, 0.9, 101)
    >>> [round(v, 3) for v in bca_interval(reps, 0.7, 0.0, 0.9)]
    [0.52, 0.88]
    >>> bca_interval(reps, 1.0, 0.0, 0.9) is None
    True
    """
    from scipy.stats import norm

    below = np.mean(replicates < estimate) + 0.5 * np.mean(replicates == estimate)
    if not 0 < below < 1:
        return None
    z0 = norm.ppf(below)
    if not np.isfinite(acceleration):
        return None
    z = norm.ppf([0.5 - confidence_level / 2, 0.5 + confidence_level / 2])
    levels = norm.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    if not np.all(np.isfinite(levels)):
        return None
    return tuple(float(q) for q in np.quantile(replicates, levels))


# -- BCa for the statistics the bootstrap biases -------------------------------------------

_ROUNDING = 1e-12  # relative: replicates this close to the estimate are ties with it

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


def jackknife_acceleration(jackknife: ArrayLike) -> float:
    """BCa acceleration from delete-a-group jackknife values, pooled over independent samples.

    ``jackknife`` is (G,) -- the statistic with each group left out -- or
    (D, G) for a mean over D independently resampled datasets (row d: dataset
    d's jackknife; its influence on the mean is its own, scaled by 1/D, which
    cancels).  With ``U = mean_g(theta_(g)) - theta_(g)`` per row,
    ``a = sum U^3 / (6 (sum U^2)^1.5)`` over every defined value (Efron &
    Tibshirani 1993, eq. 14.15; a group's U sums the influence values of its
    members, whose cubes and squares add up as the members' do, so the ratio
    estimates the same skewness as the leave-one-out jackknife).  NaN
    values (a left-out group that makes the statistic undefined) are left
    out; NaN when no spread remains.

    Examples
    --------
    >>> from beyondauc.metrics.uncertainty.bootstrap import jackknife_acceleration
    >>> round(jackknife_acceleration([1.0, 1.0, 1.0, 0.0]), 4)  # one group pulls the statistic down
    0.0962
    """
    jk = np.atleast_2d(np.asarray(jackknife, dtype=float))
    defined = np.isfinite(jk)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(defined, jk, 0.0).sum(axis=1, keepdims=True) / defined.sum(axis=1, keepdims=True)
    u = (mean - jk)[defined & np.isfinite(mean)]
    ss = float(np.sum(u**2))
    if not ss > 0:
        return np.nan
    return float(np.sum(u**3) / (6.0 * ss**1.5))


def honest_interval(
    replicates: ArrayLike, estimate: float, confidence_level: float, *, acceleration: float | None = None
) -> tuple[float, float, str, str]:
    """(low, high, method, note): a bootstrap interval that contains its estimate, or NaN and why.

    With ``acceleration`` (a float, NaN read as 0: the bias-corrected
    percentile interval) the interval is BCa (Efron 1987): the bias
    correction z0 = Phi^-1(share of replicates below the estimate, ties one
    half); otherwise the percentile interval.  NaN replicates are left out.
    Where the interval would not contain the estimate -- every replicate on
    one side of it (z0 infinite), or so few on one side that BCa's adjusted
    levels pass the estimate (|z0| about Phi^-1(1 - alpha/2) or more), or a
    percentile interval that misses it -- no interval is given: (NaN, NaN)
    with ``note`` saying why.  The bootstrap distribution is then not
    centred enough on the estimate to describe its sampling error, and any
    interval drawn from it would either exclude the estimate or claim a
    coverage it does not have.

    Returns
    -------
    low, high : float
    method : {"BCa", "percentile"}
    note : str
        '' when the interval is given (or the estimate itself is undefined).

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.uncertainty.bootstrap import honest_interval
    >>> reps = np.linspace(0.5, 0.9, 101)
    >>> low, high, method, note = honest_interval(reps, 0.7, 0.9, acceleration=0.0)
    >>> round(low, 3), round(high, 3), method, note
    (0.52, 0.88, 'BCa', '')
    >>> honest_interval(reps + 0.3, 0.7, 0.9, acceleration=0.0)[3]
    'every bootstrap replicate lies above the estimate'
    """
    from scipy.special import ndtr, ndtri

    method = "percentile" if acceleration is None else "BCa"
    reps = np.asarray(replicates, dtype=float)
    reps = reps[~np.isnan(reps)]
    if np.isnan(estimate):
        return np.nan, np.nan, method, ""
    if not len(reps):
        return np.nan, np.nan, method, "every bootstrap replicate is undefined"
    # a replicate within rounding of the estimate is a tie (a refitted replicate of the same data can
    # differ from the point estimate in the last bits)
    tie = np.abs(reps - estimate) <= _ROUNDING * max(1.0, abs(estimate))
    below = np.mean((reps < estimate) & ~tie) + 0.5 * np.mean(tie)
    if acceleration is None:
        low, high = percentile_interval(reps, confidence_level)
    else:
        if below in (0.0, 1.0):
            side = "above" if below == 0 else "below"
            return np.nan, np.nan, method, f"every bootstrap replicate lies {side} the estimate"
        a = 0.0 if not np.isfinite(acceleration) else float(acceleration)
        z0 = ndtri(below)
        z = ndtri(np.array([0.5 - confidence_level / 2, 0.5 + confidence_level / 2]))
        denominator = 1.0 - a * (z0 + z)
        if not np.all(denominator > 0):
            return np.nan, np.nan, method, f"BCa is undefined (acceleration {a:.3g} too large)"
        low, high = np.quantile(reps, ndtr(z0 + (z0 + z) / denominator))
    slack = _ROUNDING * max(1.0, abs(estimate))
    low = min(low, estimate) if low - slack <= estimate else low  # an end within rounding of the estimate
    high = max(high, estimate) if estimate <= high + slack else high
    if not low <= estimate <= high:
        few = "below" if below < 0.5 else "above"
        return (
            np.nan,
            np.nan,
            method,
            (
                f"only {min(below, 1 - below):.1%} of the bootstrap replicates lie {few} "
                f"the estimate: too few for a {confidence_level:.0%} interval around it"
            ),
        )
    return float(low), float(high), method, ""
