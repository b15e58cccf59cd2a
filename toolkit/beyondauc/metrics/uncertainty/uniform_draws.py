"""Uniform integers below per-position bounds, drawn as numpy draws them, several times faster.

The bootstrap's replicates are uniform picks within each stratum: for every
example position, an integer below its stratum's size.  :func:`uniforms`
gives the very integers ``rng.integers(0, size, size=(rows, n))`` would, call
after call (checked once against this numpy), by :class:`Uniforms`; where it
cannot (a bound of 2**32 or more, another numpy), numpy's own draws.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

__all__ = ["Uniforms", "uniforms"]

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
