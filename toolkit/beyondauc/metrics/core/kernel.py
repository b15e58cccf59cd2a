"""The private sort-and-threshold kernel every curve and calibrator reuses.

Scores are sorted once and collapsed onto their distinct values (the *grid*);
each grid value carries the (weighted) number of positives and negatives that
have it.  Everything downstream is a cumulative sum, a ``searchsorted`` or an
elementwise operation on that grid, so the cost is O(n log n) for the sort and
O(n) after it, with no Python loop over examples or thresholds.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = ["auc_from_counts"]


def grid_counts(y, s, *, sample_weight=None):
    """Collapse scores onto their distinct values.

    Parameters
    ----------
    y : ndarray of {0, 1}
    s : ndarray of float, same length
    sample_weight : ndarray, optional

    Returns
    -------
    values : ndarray, shape (n_distinct,)
        Distinct scores, ascending.
    inverse : ndarray of intp, shape (n,)
        Index of each example's score in ``values``.
    pos, neg : ndarray of float, shape (n_distinct,)
        (Weighted) number of positives and negatives at each distinct score.
    """
    values, inverse = np.unique(s, return_inverse=True)
    y = np.asarray(y, dtype=np.float64)
    if sample_weight is None:  # weights of 1 change no product: no array of ones, nor its products
        pos = np.bincount(inverse, weights=y, minlength=len(values))
        neg = np.bincount(inverse, weights=1.0 - y, minlength=len(values))
        return values, inverse.ravel(), pos, neg
    w = np.asarray(sample_weight, dtype=np.float64)
    pos = np.bincount(inverse, weights=y * w, minlength=len(values))
    neg = np.bincount(inverse, weights=(1.0 - y) * w, minlength=len(values))
    return values, inverse.ravel(), pos, neg


def stacked_counts(inverse, y, groups, n_values, n_groups, *, presorted=False):
    """Counts of positives/negatives per (group, grid value), as (n_groups, n_values).

    ``groups`` gives each example's row in the output (-1 to leave it out;
    with ``presorted=True`` there are none).
    """
    if presorted:
        flat = groups.astype(np.int64) * n_values + inverse
        yk = y.astype(np.float64)
    else:
        keep = groups >= 0
        flat = groups[keep].astype(np.int64) * n_values + inverse[keep]
        yk = y[keep].astype(np.float64)
    size = n_groups * n_values
    pos = np.bincount(flat, weights=yk, minlength=size).reshape(n_groups, n_values)
    tot = np.bincount(flat, minlength=size).reshape(n_groups, n_values).astype(np.float64)
    return pos, tot - pos


def auc_from_counts(pos, neg):
    """ROC AUC (ties count one half) from grid counts, along the last axis.

    Returns NaN where a row has only one class.
    """
    pos = np.asarray(pos, dtype=np.float64)
    neg = np.asarray(neg, dtype=np.float64)
    n_pos = pos.sum(axis=-1)
    n_neg = neg.sum(axis=-1)
    neg_below = np.cumsum(neg, axis=-1) - neg
    num = (pos * (neg_below + 0.5 * neg)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = num / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


def confusion(pred, pos, neg):
    """Confusion counts of grid predictions against grid counts.

    ``pred`` (bool, ``(..., n_values)``) is the decision at each grid value;
    ``pos``/``neg`` the examples to evaluate there.  Returns tp, fp, fn, tn.
    """
    tp = np.where(pred, pos, 0.0).sum(axis=-1)
    fp = np.where(pred, neg, 0.0).sum(axis=-1)
    fn = pos.sum(axis=-1) - tp
    tn = neg.sum(axis=-1) - fp
    return tp, fp, fn, tn


def scores_from_confusion(tp, fp, fn, tn):
    """Accuracy, Cohen's kappa, balanced accuracy, MCC and F1 from counts.

    Accuracy and kappa use exactly scikit-learn's arithmetic, so the numbers
    are bit-identical to ``accuracy_score`` / ``cohen_kappa_score``.
    Undefined values (one class only) are NaN.
    """
    tp, fp, fn, tn = (np.asarray(a, dtype=np.float64) for a in (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    true_pos, true_neg = tp + fn, tn + fp
    pred_pos, pred_neg = tp + fp, tn + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = (tp + tn) / n
        # sklearn: expected = outer(pred counts, true counts) / n; k = off-diagonal ratio
        expected_off = pred_neg * true_pos / n + pred_pos * true_neg / n
        kappa = 1.0 - (fp + fn) / expected_off
        kappa = np.where(expected_off > 0, kappa, np.nan)
        tpr = tp / true_pos
        tnr = tn / true_neg
        balanced = np.where((true_pos > 0) & (true_neg > 0), (tpr + tnr) / 2, np.nan)
        denom = np.sqrt(pred_pos * pred_neg * true_pos * true_neg)
        # a constant prediction on two-class data has MCC 0 (scikit-learn's convention)
        mcc = np.where(denom > 0, (tp * tn - fp * fn) / denom, np.where((true_pos > 0) & (true_neg > 0), 0.0, np.nan))
        f1_den = 2 * tp + fp + fn
        f1 = np.where(f1_den > 0, 2 * tp / f1_den, np.nan)
    return {
        "accuracy": accuracy,
        "kappa": kappa,
        "balanced_accuracy": balanced,
        "mcc": mcc,
        "f1": f1,
    }


def sorted_by_class(y, s):
    """Sorted scores of the positives and of the negatives."""
    return np.sort(s[y == 1]), np.sort(s[y == 0])


def merged_values(*sorted_arrays):
    """Distinct values of several sorted arrays, ascending.

    A stable sort of concatenated sorted runs is a merge (timsort finds the
    runs), so this is linear after the runs are sorted.
    """
    merged = np.sort(np.concatenate(sorted_arrays), kind="stable")
    keep = np.ones(len(merged), dtype=bool)
    keep[1:] = merged[1:] != merged[:-1]
    return merged[keep]


def rates(thresholds, pos_sorted, neg_sorted):
    """Sensitivity P(s+ >= t) and specificity P(s- < t) at each threshold t.

    The ROC curve is (1 - specificity, sensitivity) at descending
    thresholds; NaN where a class is absent.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = 1.0 - np.searchsorted(pos_sorted, thresholds, side="left") / len(pos_sorted)
        spec = np.searchsorted(neg_sorted, thresholds, side="left") / len(neg_sorted)
    return sens, spec


def auc_sorted(pos_sorted, neg_sorted, queries=None):
    """AUC (ties one half) of sorted positive and negative scores.

    ``queries`` (default ``pos_sorted``) replaces the positives, e.g. by the
    shifted positives ``pos_sorted - sigma``.  Ties are counted with a second
    search only for the positives that have one.
    """
    q = pos_sorted if queries is None else queries
    lt = np.searchsorted(neg_sorted, q, side="left")
    tied = neg_sorted[np.minimum(lt, len(neg_sorted) - 1)] == q
    ties = 0
    if tied.any():
        ties = (np.searchsorted(neg_sorted, q[tied], side="right") - lt[tied]).sum()
    return (lt.sum() + 0.5 * ties) / (len(q) * len(neg_sorted))


def auc_rows(pos, neg, *, in_place=False):
    """AUC (ties one half) of each row pair of positive (r, n+) and negative (r, n-) scores.

    All rows are sorted at once (``in_place``: in the arrays given, a
    caller's scratch); the loop runs over rows (noise repeats), never over
    examples.
    """
    if in_place:
        pos.sort(axis=1)
        neg.sort(axis=1)
    else:
        pos = np.sort(pos, axis=1)
        neg = np.sort(neg, axis=1)
    return np.array([auc_sorted(p, q) for p, q in zip(pos, neg)])


def exact_wasserstein(a_sorted, b_sorted, p):
    """p-Wasserstein distance of two sorted samples, from their quantile functions.

    Both quantile functions are step functions with breakpoints i/n and j/m;
    on the merged breakpoints (kept as integers over the denominator n*m, so
    no rounding decides which step is which) both are constant.
    """
    n, m = len(a_sorted), len(b_sorted)
    k = merged_values(np.arange(1, n + 1, dtype=np.int64) * m, np.arange(1, m + 1, dtype=np.int64) * n)
    width = np.diff(k, prepend=0) / (n * m)
    ia = (k + m - 1) // m - 1
    ib = (k + n - 1) // n - 1
    gap = np.abs(a_sorted[ia] - b_sorted[ib])
    if p == 1:
        return float(np.dot(width, gap))
    return float(np.dot(width, gap**p) ** (1.0 / p))


# -- merging sorted rows (the replicates' quantile functions) ------------------------------


def _after_zero(k):
    """Each row of ``k`` after a leading 0, (R, m + 1): column c is the breakpoint before index c."""
    out = np.empty((k.shape[0], k.shape[1] + 1))
    out[:, 0] = 0.0
    out[:, 1:] = k
    return out


def _before(kz, count):
    """``kz[r, count[r, j]]`` of each row (one flat gather): with ``kz = _after_zero(k)``, ``k[r, count - 1]`` or 0."""
    R, w = kz.shape
    return np.take(kz.reshape(-1), count + (np.arange(R) * w)[:, None])


def merge_ranks(ka, kb):
    """Per row of the sorted (R, m) ``ka`` and ``kb``: #{kb < ka_j}, #{ka <= kb_j} (R, m) and the merge's a mask (R, 2m).

    A stable sort of the two sorted runs side by side is one merge per row
    (a's first among equals).  Each run keeps its order in the merge, so the
    count of the other run's breakpoints before each element, read off in
    merged order, lists a's (and b's) in their own index order.
    """
    R, m = ka.shape
    from_a = np.argsort(np.concatenate([ka, kb], axis=1), axis=1, kind="stable") < m
    below = np.cumsum(~from_a, axis=1)[from_a].reshape(R, m)
    upto = np.cumsum(from_a, axis=1)[~from_a].reshape(R, m)
    return below, upto, from_a


def merge_counts(key, fb, ib):
    """Merge each row of two sorted runs of keys, in place: ``key`` (R, 2s) holds ``2 a_j`` then ``2 b_i + 1``.

    With a's and b's non-negative whole numbers, sorting a row's keys is the
    merge, a's first among equals, and a key's last bit says which run it
    came from.  The keys are distinct, so any sort gives the same row: int64
    keys are merged (a stable sort of two runs), int32 ones go to the
    vectorised quicksort, faster still.  On return ``key`` holds the merged
    values, ``fb`` (``key``'s dtype) 1 where a place is b's, and ``ib``
    (int64, (R, 2s)), at each merged place, how many of b's come before it.
    """
    key.sort(axis=1, kind="quicksort" if key.dtype == np.int32 else "stable")
    np.bitwise_and(key, 1, out=fb)
    key >>= 1
    ib[:, 0] = 0
    np.cumsum(fb[:, :-1], axis=1, out=ib[:, 1:])


def buffer_view(buffer, shape, dtype=np.float64):
    """The start of a work buffer (int64, as :func:`~beyondauc.metrics.diagnostics.rows.workspace` makes them)
    as a contiguous array of ``shape``."""
    return buffer[: int(np.prod(shape))].view(dtype).reshape(shape)


def wasserstein_counts(x, ca, cb, p, work, *, cols=None):
    """p-Wasserstein distance (p > 1) of each row pair of count distributions on grid x, from their cumulative sums.

    ``ca``/``cb`` (R, s): the rows' cumulative counts (whole numbers); the
    quantile functions have breakpoints ``Ca_j * nb`` and ``Cb_j * na`` over
    ``na * nb``, integers, merged as integer keys (:func:`_merge_counts`).  Q(u)
    is the value of the first breakpoint >= u, so at each merged place Q_a's
    index is the number of a's breakpoints before it (and Q_b's of b's); its
    width is its breakpoint minus the one before.  The terms are summed in
    merged order.  ``work``: five (or more) flat int64 buffers of at least R * 2s; ``cols``:
    the columns of ``ca``/``cb`` to read (gathered into the buffers), default all.
    Returns None when a denominator reaches 2**52 (the keys would not be exact in float64).

    The keys are distinct numbers, so any sort of a row gives the one merged
    row: below 2**31 (a denominator below 2**30) they are int32, sorted by
    the vectorised quicksort in about two thirds of the time of the int64
    merge; the terms are the same either way, to the bit.
    """
    R = len(ca)
    s = ca.shape[1] if cols is None else len(cols)
    fa, fb = (buffer_view(w, (R, s)) for w in work[3:5])
    if cols is not None:  # "wrap" (the columns are valid): take writes into the buffers unbuffered, unclipped
        ca = np.take(ca, cols, axis=1, out=fa, mode="wrap")
        cb = np.take(cb, cols, axis=1, out=fb, mode="wrap")
    na, nb = ca[:, -1].copy(), cb[:, -1].copy()
    den = (na * nb)[:, None]
    if R and not den.max() < 2.0**52:
        return None
    kind = np.int32 if not R or den.max() < 2.0**30 else np.int64  # keys below 2 den + 2
    key, flag = (w[: R * 2 * s].view(kind)[: R * 2 * s].reshape(R, 2 * s) for w in work[:2])
    ib, f, g = (w[: R * 2 * s].reshape(R, 2 * s) for w in work[2:5])
    # the keys 2 Ca_j nb and 2 Cb_i na + 1, products of whole numbers below 2**53: exact in float64
    np.multiply(ca, 2.0 * nb[:, None], out=fa)
    np.multiply(cb, 2.0 * na[:, None], out=fb)
    np.copyto(key[:, :s], fa, casting="unsafe")
    np.copyto(key[:, s:], fb, casting="unsafe")
    key[:, s:] |= 1
    merge_counts(key, flag, ib)
    ia = np.subtract(np.arange(2 * s), ib, out=work[1][: R * 2 * s].reshape(R, 2 * s))
    f, g = f.view(np.float64), g.view(np.float64)
    x = np.append(x, x[-1:])  # an index s (all of a run before the place) reads the last value
    np.take(x, ia, out=f, mode="wrap")  # indices 0..s: "wrap" changes none, in about 60% of "clip"'s time
    np.subtract(f, np.take(x, ib, out=g, mode="wrap"), out=f)
    if p == 2:  # |d| ** 2 is d * d, to the bit
        np.square(f, out=f)
    else:
        np.abs(f, out=f)
        np.power(f, p, out=f)
    width = flag  # the merged breakpoint minus the one before
    width[:, 0] = key[:, 0]
    np.subtract(key[:, 1:], key[:, :-1], out=width[:, 1:])
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty class: NaN
        np.divide(width, den, out=g)
        g *= f
        return g.sum(axis=1) ** (1.0 / p)


def wasserstein_merged(x, ka, kb, den, p):
    """``(sum of width / den * |Q_a - Q_b|**p in merged order) ** (1 / p)`` for any weights: a stable argsort merge."""
    m = ka.shape[1]
    below, upto, from_a = merge_ranks(ka, kb)  # per a: the b breakpoints < it; per b: the a breakpoints <= it
    kaz, kbz = _after_zero(ka), _after_zero(kb)
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty class: NaN
        # each breakpoint's width is its value minus the merged one before it: the larger of the
        # previous breakpoint of its own run and the last of the other run's below it
        term_a = (ka - np.maximum(kaz[:, :m], _before(kbz, below))) / den * np.abs(x - x[np.minimum(below, m - 1)]) ** p
        term_b = (kb - np.maximum(kbz[:, :m], _before(kaz, upto))) / den * np.abs(x[np.minimum(upto, m - 1)] - x) ** p
        # the terms in merged order, summed as the merged sequence
        terms = np.empty((len(ka), 2 * m))
        terms[from_a] = term_a.ravel()
        terms[~from_a] = term_b.ravel()
        return terms.sum(axis=1) ** (1.0 / p)


_STUMP_BLOCK = 1 << 16  # grid cells (fits x values) per block of the stump's split search


def stump_best(cpos, cneg, tpos, tneg, total, close):
    """(the best split of each row, the next present grid value after it), each (F,), block by block of values.

    The best split is the first maximum of scikit-learn's Gini proxy
    ``-n_r * gini_r - n_l * gini_l`` (same operation order) over the valid
    splits (both sides non-empty, and ``close`` where given): an absent grid
    value repeats the proxy of the present value before it, so the first
    maximum is always a present value, as in scikit-learn's scan.  The next
    present value is the first whose left count exceeds the best's (0 where
    none).  Each block's first maximum replaces the one so far only if
    larger (a NaN counts as largest, as :func:`numpy.argmax` takes it), so
    the result is the first maximum over the whole row.
    """
    F, m = cpos.shape
    rows = np.arange(F)
    width = max(1, _STUMP_BLOCK // max(F, 1))
    best, best_val = np.zeros(F, dtype=np.int64), np.full(F, np.nan)
    for start in range(0, m, width):  # a loop over blocks of grid values
        b = slice(start, min(start + width, m))
        cp, cn = cpos[:, b], cneg[:, b]
        n_left = cp + cn
        n_right = total[:, None] - n_left
        rp = tpos[:, None] - cp
        rn = tneg[:, None] - cn
        with np.errstate(divide="ignore", invalid="ignore"):
            gini_l = 1.0 - (cn * cn + cp * cp) / (n_left * n_left)
            gini_r = 1.0 - (rn * rn + rp * rp) / (n_right * n_right)
            proxy = -n_right * gini_r - n_left * gini_l
        valid = (n_left > 0) & (n_right > 0)
        if close is not None:
            valid &= close[:, b]
        proxy = np.where(valid, proxy, -np.inf)
        at = np.argmax(proxy, axis=1)
        val = proxy[rows, at]
        take = (start == 0) | (~np.isnan(best_val) & (np.isnan(val) | (val > best_val)))
        best, best_val = np.where(take, at + start, best), np.where(take, val, best_val)
    nl_best = cpos[rows, best] + cneg[rows, best]
    k = np.full(F, -1, dtype=np.int64)
    for start in range(0, m, width):
        b = slice(start, min(start + width, m))
        above = (cpos[:, b] + cneg[:, b]) > nl_best[:, None]
        first = (k < 0) & above.any(axis=1)
        k[first] = np.argmax(above[first], axis=1) + start
    return best, np.maximum(k, 0)


def run_means(ps, nn, pr, p_, k, idx):
    """Mean weight of positives over grid runs ending at ``p_`` and starting at ``k``, per row.

    (mean(s..p) for s <= p, -inf elsewhere; mean(k..t) for t >= k, inf elsewhere),
    each over weighted grid values only (``pr``), with ``k`` >= 0 and no
    weight before index 0.  A PAVA block ending at p has the largest of the
    first as its value, one starting at k the smallest of the second.
    """
    C, W = np.cumsum(ps, axis=1), np.cumsum(nn, axis=1)
    r = np.arange(len(k))
    km1 = k - 1
    ck = np.where(km1 >= 0, C[r, np.maximum(km1, 0)], 0.0)[:, None]
    wk = np.where(km1 >= 0, W[r, np.maximum(km1, 0)], 0.0)[:, None]
    cp, wp = C[r, p_][:, None], W[r, p_][:, None]
    # the same operations as (cp - (C - ps)) / (wp - (W - nn)) and (C - ck) / (W - wk), in place:
    # four arrays of the grid at most, not a temporary per operation
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_sp, den = np.subtract(C, ps), np.subtract(W, nn)
        np.subtract(cp, mean_sp, out=mean_sp)
        np.subtract(wp, den, out=den)
        mean_sp /= den
        del den
        mean_sp[~(pr & (idx <= p_[:, None]))] = -np.inf
        mean_kt = np.subtract(C, ck, out=C)
        mean_kt /= np.subtract(W, wk, out=W)
        mean_kt[~(pr & (idx >= k[:, None]))] = np.inf
    return mean_sp, mean_kt
