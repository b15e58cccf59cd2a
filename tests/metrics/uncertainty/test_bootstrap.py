"""The bootstrap's draws and counts against numpy's own generator and the plain algorithm.

The replicates are a fixed stream (paired comparisons and every stored result depend on
it): each test rebuilds them with the straightforward code -- ``rng.integers`` over the
stratum sizes of the stable sorted order, ``np.add.at`` into the grid columns -- and asks
for equality to the last bit.
"""

import numpy as np
import pytest

from beyondauc.metrics.uncertainty import bootstrap, uniform_draws
from beyondauc.metrics.uncertainty.bootstrap import (
    BLOCK,
    CountGrid,
    bootstrap_counts,
    bootstrap_grid_counts,
    grid_count_chunks,
    grid_weights,
    strata_of,
)
from beyondauc.metrics.uncertainty.uniform_draws import Uniforms, uniforms

# bounds near 2**31 reject about half the words, near 3e9 about a third: every path of the
# rejection handling is exercised, next to the bounds of real strata (1 draws no word)
BOUNDS = np.array([1, 2, 3, 5, 7, 1000, 65537, 2**31 + 1, 2**32 - 1, 3_000_000_017, 4_000_000_000])


def _reference_counts(strata, n_bootstrap, random_state, start=0, stop=None):
    """The stream as documented, written plainly: per block a child seed, rows of ``rng.integers``."""
    stop = n_bootstrap if stop is None else stop
    n = len(strata)
    order = np.argsort(strata, kind="stable")
    ss = strata[order]
    first = np.searchsorted(ss, ss, side="left")
    size = np.searchsorted(ss, ss, side="right") - first
    n_blocks = (stop + BLOCK - 1) // BLOCK
    children = np.random.SeedSequence(random_state).spawn(n_blocks)
    rows = []
    for k in range(n_blocks):
        rng = np.random.default_rng(children[k])
        rows.append(order[first + rng.integers(0, size, size=(min(stop, (k + 1) * BLOCK) - k * BLOCK, n))])
    picks = np.concatenate(rows)[start:stop]
    out = np.zeros((stop - start, n), dtype=np.int32)
    np.add.at(out, (np.arange(stop - start)[:, None], picks), 1)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_uniforms_are_numpy_integers_call_after_call(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    size = np.repeat(rng.choice(BOUNDS, 30), rng.integers(1, 9, size=30))[:n]
    ref, fast = np.random.default_rng(seed + 100), Uniforms(np.random.default_rng(seed + 100), size)
    for rows in rng.integers(1, 7, size=5):  # odd and even word counts: the half-used 64-bit output carries over
        assert np.array_equal(fast(int(rows)), ref.integers(0, size, size=(int(rows), len(size))))


def test_uniforms_with_many_rejections_in_long_rows():
    size = np.repeat(np.array([2**31 + 1, 5, 3_000_000_017, 1, 2**31 + 1]), [700, 300, 500, 3, 200])
    ref, fast = np.random.default_rng(7), Uniforms(np.random.default_rng(7), size)
    for rows in (9, 4, 11):
        assert np.array_equal(fast(rows), ref.integers(0, size, size=(rows, len(size))))


def test_uniforms_fall_back_to_numpy_past_32_bits():
    size = np.array([3, 2**33, 5])
    draw = uniforms(np.random.default_rng(0), size)
    assert not isinstance(draw, Uniforms)
    assert np.array_equal(draw(4), np.random.default_rng(0).integers(0, size, size=(4, 3)))


def test_uniforms_fall_back_when_numpy_draws_otherwise(monkeypatch):
    monkeypatch.setattr(uniform_draws, "_fast_matches_numpy", lambda: False)
    assert not isinstance(uniforms(np.random.default_rng(0), np.array([3, 4])), Uniforms)


def test_uniforms_skip_rows_as_numpy_draws_them():
    size = np.repeat(np.array([2**31 + 1, 5, 1, 3_000_000_017]), [40, 30, 2, 25])
    ref, fast = np.random.default_rng(3), Uniforms(np.random.default_rng(3), size)
    for skip, rows in ((3, 2), (1, 5), (4, 1)):
        ref.integers(0, size, size=(skip, len(size)))
        fast.skip(skip)
        assert np.array_equal(fast(rows), ref.integers(0, size, size=(rows, len(size))))


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("n, strata_kind", [(1, "one"), (9, "tiny"), (500, "mixed"), (3000, "sorted")])
@pytest.mark.parametrize("R, start, stop", [(5, 0, None), (150, 0, None), (150, 37, 140), (130, 64, 130)])
def test_counts_are_the_documented_stream(n, strata_kind, R, start, stop, fast, monkeypatch):
    monkeypatch.setattr(bootstrap, "_DRAW_CELLS", 700)  # several row blocks per replicate block
    if not fast:
        # numpy's own integers, rows skipped in steps too
        monkeypatch.setattr(uniform_draws, "_fast_matches_numpy", lambda: False)
    rng = np.random.default_rng(n)
    make = {
        "one": lambda: np.zeros(n, int),
        "tiny": lambda: rng.integers(0, 5, n),
        "sorted": lambda: np.sort(rng.integers(0, 3, n)),
        "mixed": lambda: np.r_[rng.integers(0, 4, n - 4), 9, 8, 8, 8],
    }  # a stratum of one, one of three
    strata = make[strata_kind]()
    got = bootstrap_counts(strata, R, random_state=3, start=start, stop=stop)
    assert np.array_equal(got, _reference_counts(strata, R, 3, start, stop))


@pytest.mark.parametrize("n_values", [1, 4, 250])
def test_grid_counts_are_add_at_of_the_counts(n_values, monkeypatch):
    monkeypatch.setattr(bootstrap, "_COUNT_CELLS", 64)  # several bincounts per row block
    rng = np.random.default_rng(n_values)
    n, R = 400, 70
    strata, y = rng.integers(0, 3, n), rng.integers(0, 2, n)
    inverse, groups = rng.integers(0, n_values, n), rng.integers(-1, 3, n)
    pos, neg = bootstrap_grid_counts(
        strata, CountGrid(inverse, y, n_values, groups=groups, n_groups=3), R, random_state=5, start=3, stop=R
    )
    counts = _reference_counts(strata, R, 5, 3, R)
    ref = np.zeros((R - 3, 2, 3, n_values))
    kept = groups >= 0
    for r in range(R - 3):  # the reference: plain add.at, one replicate at a time
        np.add.at(ref[r], (1 - y[kept], groups[kept], inverse[kept]), counts[r, kept])
    assert np.array_equal(pos, ref[:, 0]) and np.array_equal(neg, ref[:, 1])


def test_grid_weights_add_fractional_weights_in_add_at_order():
    rng = np.random.default_rng(1)
    n, m = 3000, 40
    weights = rng.random((6, n)) * 1e3 + rng.random((6, n)) * 1e-9  # sums that depend on their order
    inverse, y = rng.integers(0, m, n), rng.integers(0, 2, n)
    pos, neg = grid_weights(weights, inverse, y, m)
    ref = np.zeros((6, 2, m))
    for r in range(6):
        np.add.at(ref[r], (1 - y, inverse), weights[r])
    assert np.array_equal(pos[:, 0], ref[:, 0]) and np.array_equal(neg[:, 0], ref[:, 1])


def test_chunks_drawn_in_one_pass_are_the_chunks_drawn_alone(monkeypatch):
    monkeypatch.setattr(bootstrap, "_DRAW_CELLS", 900)  # row blocks that straddle the chunks
    rng = np.random.default_rng(4)
    n, m = 300, 30
    strata, y, inverse = rng.integers(0, 4, n), rng.integers(0, 2, n), rng.integers(0, m, n)
    chunks = [(5, 41), (41, 82), (82, 123), (123, 190)]  # inside the blocks of 64 replicates, as the engine's are
    parts = list(grid_count_chunks(strata, CountGrid(inverse, y, m), 200, chunks, random_state=9))
    assert len(parts) == len(chunks)
    for (lo, hi), (pos, neg) in zip(chunks, parts):
        ref = bootstrap_grid_counts(strata, CountGrid(inverse, y, m), 200, random_state=9, start=lo, stop=hi)
        assert np.array_equal(pos, ref[0]) and np.array_equal(neg, ref[1])
    with pytest.raises(ValueError, match="follow each other"):
        next(grid_count_chunks(strata, CountGrid(inverse, y, m), 200, [(0, 10), (20, 30)], random_state=9))


@pytest.mark.parametrize("kinds", [("int",), ("int", "bool"), ("int", "int", "bool"), ("float", "int"), ("str", "int")])
def test_strata_are_numbered_as_unique_rows_number_them(kinds):
    rng = np.random.default_rng(len(kinds))
    n = 2000
    make = {
        "int": lambda: rng.integers(-3, 40, n),
        "bool": lambda: rng.random(n) < 0.3,
        "float": lambda: np.round(rng.normal(size=n), 1),
        "str": lambda: rng.choice(["b", "a", "10", "9"], n),
    }
    keys = [make[k]() for k in kinds]
    ref = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)[1].ravel()
    assert np.array_equal(strata_of(*keys), ref)
    assert strata_of(*[k[:0] for k in keys]).shape == (0,)


def test_strata_of_many_keys_past_one_integer_are_the_unique_rows():
    rng = np.random.default_rng(0)
    keys = [rng.permutation(3000) % 2500 for _ in range(7)]  # 2500**7 combinations: more than an int64 holds
    ref = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)[1].ravel()
    assert np.array_equal(strata_of(*keys), ref)
