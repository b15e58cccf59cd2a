"""The permutation null of drift and W: how much of them sampling alone explains.

Drift and the Wasserstein summary W compare the validation cohort V with the
test cohort T.  Even when both are drawn from one distribution, two finite
samples differ, so the drift of two samples is above 0 and W below its
population value: a bootstrap interval of drift lies above the estimate and
cannot say whether there is drift at all.  The question "is there drift?" is
a test of "V and T are exchangeable": shuffle the cohort labels within class
(the class sizes of each cohort stay fixed), recompute drift and W, and see
how often the shuffled cohorts differ as much as the observed ones.

In counts form a shuffle within class is a multivariate hypergeometric draw:
V's per-value counts of a class are ``|V of that class|`` values drawn without
replacement from the pooled per-value counts of that class (V and T
together), and T's are the pooled counts minus V's.  The draws of many
permutations are one call of :meth:`numpy.random.Generator.multivariate_hypergeometric`,
and drift and W of every permutation come from the batched kernels of the
diagnostics' bootstrap (:func:`~beyondauc.metrics.diagnostics.rows.drift_rows`,
:func:`~beyondauc.metrics.diagnostics.rows.wasserstein_rows`) on those rows of
counts: no loop over permutations or examples, only over chunks of
permutations that bound memory.

The p-values are one-sided, counting the observed cohorts as one more
permutation: ``(1 + #{null >= observed}) / (B + 1)`` for drift (large is
drift) and ``(1 + #{null <= observed}) / (B + 1)`` for W (small is drift).
They are valid (never below their level under exchangeability) for any B.

Repeated samples of one item (the epochs of an LLM run) are not exchangeable
one by one: with ``items_val`` / ``items_test`` (:class:`NullDesign`) a
permutation moves whole items.  On scores it shuffles the cohort labels of the
items of each class (each cohort keeps its number of items of each class); on
answers, whose class varies between an item's samples, it shuffles the cohort
labels of all items.  Each permutation picks V's items as those with the
smallest of a row of seeded uniform keys, and the per-value counts are the
picked items' rows counted at once
(:func:`~beyondauc.metrics.uncertainty.bootstrap.grid_weights`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...utils.validation import check_int, check_number, check_random_state
from ..uncertainty.bootstrap import BLOCK, grid_weights
from ..uncertainty.replicates import replicate_chunks
from .cohorts import check_cohort
from .items import cohort_items, stratified_by_class
from .rows import drift_rows, wasserstein_rows

__all__ = ["NullDesign", "PermutationNull", "permutation_null", "permutation_replicates", "permutation_pvalue"]

#: The numbers that get a permutation p-value, and the side of the null that counts as drift.
NULL_SIDES = {"drift": "greater", "wasserstein": "less"}

# permutation x value cells per chunk: each kernel holds a few (permutations, 2 x values) buffers
_NULL_CELLS = 1 << 19
# mixed into the seed, so the permutations read a stream of their own, not the bootstrap's
_STREAM = 0x6E756C6C


@dataclass(frozen=True)
class NullDesign:
    """What the permutation null holds exchangeable, and how the labels are read.

    Attributes
    ----------
    by_class : bool, default=True
        Shuffle within class (each cohort keeps its class sizes); False
        shuffles the whole pool (each cohort keeps its size), as an answers
        benchmark's bootstrap stratifies by cohort alone.  Items holding
        samples of both classes are shuffled in the whole pool either way.
    items_val, items_test : array-like or None
        Each row's item (an id) when rows repeat items: whole items are
        shuffled (:func:`~beyondauc.metrics.diagnostics.items.cohort_items`
        checks them).  None: every row is an item.
    pos_label : scalar, default=None
    """

    by_class: bool = True
    items_val: ArrayLike | None = field(default=None, repr=False)
    items_test: ArrayLike | None = field(default=None, repr=False)
    pos_label: object = None


@dataclass(frozen=True)
class PermutationNull:
    """Drift and W of two cohorts beside their permutation null.

    Attributes
    ----------
    drift, wasserstein : float
        The observed numbers (W at order ``p``).
    drift_pvalue, wasserstein_pvalue : float
        One-sided permutation p-values (:func:`permutation_pvalue`).
    n_permutations : int
        B, the permutations drawn (a permutation whose number is undefined
        is left out of its p-value).
    null : DataFrame
        The null's drift and W, one row per permutation.
    """

    drift: float
    wasserstein: float
    drift_pvalue: float
    wasserstein_pvalue: float
    n_permutations: int
    null: pd.DataFrame

    def to_dict(self) -> dict[str, float]:
        """``drift_pvalue`` and ``wasserstein_pvalue`` by name."""
        return {"drift_pvalue": self.drift_pvalue, "wasserstein_pvalue": self.wasserstein_pvalue}


def permutation_pvalue(null: ArrayLike, observed: float, *, alternative: str = "greater") -> float:
    """One-sided permutation p-value, the observed value counted as one more permutation.

    ``(1 + #{null >= observed}) / (B + 1)`` for ``alternative="greater"``,
    ``(1 + #{null <= observed}) / (B + 1)`` for ``"less"``; B counts the
    defined (non-NaN) null values.  NaN when ``observed`` is NaN or no null
    value is defined.

    Examples
    --------
    >>> from beyondauc.metrics.diagnostics.null import permutation_pvalue
    >>> permutation_pvalue([0.1, 0.2, 0.3, 0.5], 0.3)
    0.6
    >>> permutation_pvalue([0.1, 0.2, 0.3, 0.5], 0.3, alternative="less")
    0.8
    """
    null = np.asarray(null, dtype=np.float64)
    null = null[~np.isnan(null)]
    if np.isnan(observed) or not len(null):
        return float("nan")
    hits = (null >= observed) if alternative == "greater" else (null <= observed)
    return float((1 + np.count_nonzero(hits)) / (len(null) + 1))


def _grid_counts(yv, sv, yt, st):
    """The score grid of V and T and their per-value positive and negative counts, (2, m) int64 each."""
    x, inv = np.unique(np.concatenate([sv, st]), return_inverse=True)
    inv = inv.ravel()
    cohort = np.repeat([0, 1], [len(sv), len(st)])
    y = np.concatenate([yv, yt]).astype(bool)
    m = len(x)
    pos = np.bincount(cohort[y] * m + inv[y], minlength=2 * m).reshape(2, m)
    neg = np.bincount(cohort[~y] * m + inv[~y], minlength=2 * m).reshape(2, m)
    return x, pos, neg


def _pools(pos, neg, by_class):
    """(pooled counts, V's sample size) of each stratum: each class, or the whole pool of both classes."""
    if by_class:
        return [(neg.sum(axis=0), int(neg[0].sum())), (pos.sum(axis=0), int(pos[0].sum()))]
    return [(np.concatenate([neg.sum(axis=0), pos.sum(axis=0)]), int(neg[0].sum() + pos[0].sum()))]


def _stream_seed(random_state):
    seed = check_random_state(random_state)
    entropy = np.random.SeedSequence().entropy if seed is None else seed  # None: fresh entropy, drawn once
    return np.random.SeedSequence([int(entropy), _STREAM])


def _permuted_v(pools, n_permutations, chunks, root):
    """Yield V's permuted counts of each stratum, chunk by chunk: a list of (R, colors) arrays.

    Permutation r is drawn from block ``r // BLOCK``'s generator of each stratum (child seeds of
    ``root``), its rows in order ('marginals' draws row after row from the stream), so a
    permutation does not depend on the chunks.
    """
    children = root.spawn((n_permutations + BLOCK - 1) // BLOCK)
    gens, block = None, -1
    for lo, hi in chunks:  # a loop over chunks of permutations, and the seed blocks in each
        parts, r = [], lo
        while r < hi:
            if r // BLOCK != block:
                block = r // BLOCK
                gens = [np.random.default_rng(g) for g in children[block].spawn(len(pools))]
            take = min(hi, (block + 1) * BLOCK) - r
            parts.append(
                [
                    g.multivariate_hypergeometric(colors, n, size=take, method="marginals")
                    for g, (colors, n) in zip(gens, pools)
                ]
            )
            r += take
        yield [np.concatenate([p[k] for p in parts]) for k in range(len(pools))]


def _item_pools(codes, y, n_val, by_class):
    """(the items of each stratum, how many of them V holds): each class, or every item."""
    first = np.unique(codes, return_index=True)[1]  # codes number the items in order of their first row
    in_v = first < n_val
    strata = np.asarray(y)[first].astype(np.int64) if by_class else np.zeros(len(first), np.int64)
    groups = [np.flatnonzero(strata == k) for k in np.unique(strata)]
    return [(g, int(in_v[g].sum())) for g in groups]


def _permuted_items(pools, n_items, n_permutations, chunks, root):
    """Yield V's items of each permutation, chunk by chunk: (R, n_items) booleans.

    Permutation r draws one uniform key per item of each stratum from block ``r // BLOCK``'s generator of
    that stratum (child seeds of ``root``), rows in order, so a permutation does not depend on the chunks;
    V holds the stratum's items with the smallest keys, as many as V has.
    """
    children = root.spawn((n_permutations + BLOCK - 1) // BLOCK)
    gens, block = None, -1
    for lo, hi in chunks:  # a loop over chunks of permutations, and the seed blocks in each
        out, r = np.zeros((hi - lo, n_items), dtype=bool), lo
        while r < hi:
            if r // BLOCK != block:
                block = r // BLOCK
                gens = [np.random.default_rng(g) for g in children[block].spawn(len(pools))]
            take = min(hi, (block + 1) * BLOCK) - r
            rows = np.arange(r - lo, r - lo + take)[:, None]
            for g, (members, size) in zip(gens, pools):  # a loop over the strata (one or two)
                picked = np.argsort(g.random((take, len(members))), axis=1, kind="stable")[:, :size]
                out[rows, members[picked]] = True
            r += take
        yield out


def _item_rows(in_v, codes, inv, y, pos, neg):
    """(pos, neg) counts (R, 2, m) of V (0) and T (1) when V holds the items marked in ``in_v`` (R, n_items)."""
    m = pos.shape[1]
    v_pos, v_neg = grid_weights(in_v[:, codes], inv, y, m)
    return [
        np.stack([v[:, 0], pooled.sum(axis=0)[None, :] - v[:, 0]], axis=1) for v, pooled in ((v_pos, pos), (v_neg, neg))
    ]


def _cohort_rows(draws, pos, neg, by_class):
    """(pos, neg) counts (R, 2, m) of V (0) and T (1) from V's permuted counts of each stratum."""
    m = pos.shape[1]
    v_neg, v_pos = (draws[0], draws[1]) if by_class else (draws[0][:, :m], draws[0][:, m:])
    rows = []
    for v, pooled in ((v_pos, pos.sum(axis=0)), (v_neg, neg.sum(axis=0))):
        rows.append(np.stack([v, pooled[None, :] - v], axis=1).astype(np.float64))
    return rows


def permutation_replicates(
    y_val: ArrayLike,
    s_val: ArrayLike,
    y_test: ArrayLike,
    s_test: ArrayLike,
    *,
    n_permutations: int = 999,
    p: float = 2,
    random_state: int | None = 0,
    design: NullDesign = NullDesign(),
) -> pd.DataFrame:
    """Drift and W of V and T with the cohort labels shuffled, one row per permutation.

    Parameters
    ----------
    y_val, s_val, y_test, s_test : array-like
    n_permutations : int >= 1, default=999
    p : float >= 1, default=2
        Wasserstein order of W.
    random_state : int or None, default=0
    design : NullDesign, default=NullDesign()
        Within class or the whole pool, rows or whole items, and ``pos_label``.

    Returns
    -------
    pandas.DataFrame
        Columns ``drift`` and ``wasserstein``.

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.null import permutation_replicates
    >>> y = np.array([0, 0, 1, 1])
    >>> null = permutation_replicates(y, [0.1, 0.4, 0.5, 0.9], y, [0.2, 0.3, 0.6, 0.8], n_permutations=50)
    >>> null.shape, bool((null["drift"] >= 0).all())
    ((50, 2), True)
    """
    n_permutations = check_int(n_permutations, "n_permutations", minimum=1)
    p = check_number(p, "p", low=1)
    yv, sv, yt, st = _checked(y_val, s_val, y_test, s_test, design)
    x, pos, neg = _grid_counts(yv, sv, yt, st)
    y = np.concatenate([yv, yt])
    codes = cohort_items(design.items_val, design.items_test, y)
    by_class = stratified_by_class(design.by_class, codes, y)
    root = _stream_seed(random_state)
    if codes is None:
        chunks = replicate_chunks(n_permutations, 2 * len(x), cells=_NULL_CELLS)
        draws = _permuted_v(_pools(pos, neg, by_class), n_permutations, chunks, root)
        counted = (_cohort_rows(d, pos, neg, by_class) for d in draws)
    else:
        chunks = replicate_chunks(n_permutations, max(2 * len(x), len(y)), cells=_NULL_CELLS)
        inv = np.unique(np.concatenate([sv, st]), return_inverse=True)[1].ravel()
        pools = _item_pools(codes, y, len(yv), by_class)
        draws = _permuted_items(pools, int(codes.max()) + 1, n_permutations, chunks, root)
        counted = (_item_rows(d, codes, inv, y, pos, neg) for d in draws)
    out = {"drift": [], "wasserstein": []}
    for cp, cn in counted:
        out["drift"].append(drift_rows(x, cp, cn))
        out["wasserstein"].append(wasserstein_rows(x, cp, cn, p, counts=True)[0])
    return pd.DataFrame({k: np.concatenate(v) for k, v in out.items()})


def _checked(y_val, s_val, y_test, s_test, design):
    """Both cohorts checked: labels 0/1 (with the design's ``pos_label``), finite scores."""
    yv, sv = check_cohort(y_val, s_val, pos_label=design.pos_label, names=("y_val", "s_val"))
    yt, st = check_cohort(y_test, s_test, pos_label=design.pos_label, names=("y_test", "s_test"))
    return yv, sv, yt, st


def permutation_null(
    y_val: ArrayLike,
    s_val: ArrayLike,
    y_test: ArrayLike,
    s_test: ArrayLike,
    *,
    n_permutations: int = 999,
    p: float = 2,
    random_state: int | None = 0,
    design: NullDesign = NullDesign(),
) -> PermutationNull:
    """Permutation p-values of drift and W under "V and T are exchangeable".

    The cohort labels are shuffled within class (``design.by_class=False``:
    within the whole pool; with ``design.items_val`` / ``items_test``, the
    labels of whole items) ``n_permutations`` times, seeded by
    ``random_state`` (:func:`permutation_replicates`); the observed drift and
    W are computed by the same kernels on the observed counts, so a
    permutation that reproduces the cohorts ties with them exactly.  The
    drift p-value is ``(1 + #{null >= observed}) / (B + 1)``, W's ``(1 +
    #{null <= observed}) / (B + 1)`` (:func:`permutation_pvalue`): small
    means the cohorts differ more than sampling alone explains.

    Parameters
    ----------
    y_val, s_val, y_test, s_test : array-like
    n_permutations : int >= 1, default=999
    p : float >= 1, default=2
    random_state : int or None, default=0
    design : NullDesign, default=NullDesign()

    Returns
    -------
    PermutationNull

    Examples
    --------
    >>> import numpy as np
    >>> from beyondauc.metrics.diagnostics.null import permutation_null
    >>> rng = np.random.default_rng(0)
    >>> yv, yt = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    >>> same = permutation_null(yv, rng.normal(yv), yt, rng.normal(yt), n_permutations=199)
    >>> shifted = permutation_null(yv, rng.normal(yv), yt, rng.normal(yt) + 1.0, n_permutations=199)
    >>> bool(same.drift_pvalue > 0.05), shifted.drift_pvalue, shifted.wasserstein_pvalue
    (True, 0.005, 0.005)
    """
    null = permutation_replicates(
        y_val, s_val, y_test, s_test, n_permutations=n_permutations, p=p, random_state=random_state, design=design
    )
    x, pos, neg = _grid_counts(*_checked(y_val, s_val, y_test, s_test, design))
    pos, neg = pos[None].astype(np.float64), neg[None].astype(np.float64)
    observed = {
        "drift": float(drift_rows(x, pos, neg)[0]),
        "wasserstein": float(wasserstein_rows(x, pos, neg, check_number(p, "p", low=1), counts=True)[0][0]),
    }
    pvalues = {k: permutation_pvalue(null[k], observed[k], alternative=side) for k, side in NULL_SIDES.items()}
    return PermutationNull(
        drift=observed["drift"],
        wasserstein=observed["wasserstein"],
        drift_pvalue=pvalues["drift"],
        wasserstein_pvalue=pvalues["wasserstein"],
        n_permutations=len(null),
        null=null,
    )
