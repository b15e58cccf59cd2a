"""Which rows each calibration protocol calibrates on and evaluates, for AUC vs expected accuracy.

A protocol's plan (:func:`protocol_plan`) lists its fits (calibrate on some
datasets, evaluate on others) and the datasets it calibrates within by
repeated 80/20 splits (``indata``, and ``indomain`` where a dataset has no
other of its domain); :func:`splits` gives those splits, the same in every
process.  :class:`Context` is what every model's cells of the grid share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# scikit-learn is imported inside the functions that split with it: a report kernel only
# reads a saved evaluation and draws, and skips its import (see utils.parallel.FITTING_MODULES).

__all__ = ["PROTOCOLS", "SCORES", "Context", "protocol_masks", "protocol_plan", "splits", "indata_train"]

PROTOCOLS = ("xdomain", "outdomain", "indomain", "indata", "outdata")
SCORES = ("accuracy", "kappa", "balanced_accuracy", "mcc", "f1")
_INDATA_TEST_SIZE = 0.2

# -- protocols --------------------------------------------------------------------


@dataclass(frozen=True)
class _Fit:
    """One calibration: calibrate on datasets ``cal``, evaluate on ``evl``."""

    protocol: str
    dataset: int
    cal: tuple
    evl: tuple


def _check_domains(bench, protocol):
    missing = [d for d in bench.datasets if bench.domains.get(d) is None]
    if missing:
        raise ValueError(
            f"protocol {protocol!r} needs a domain for every dataset; none for {missing}. "
            "Give `domains=` (dataset -> domain), a 'domain' column, or use TRUE dataset names"
        )


def protocol_plan(bench, protocol):
    """Return (fits, indata_datasets) for a protocol."""
    n = len(bench.datasets)
    dom = [bench.domains.get(d) for d in bench.datasets]
    allidx = range(n)
    fits, indata = [], []
    if protocol in ("outdomain", "indomain"):
        _check_domains(bench, protocol)
    for i in allidx:
        others = tuple(j for j in allidx if j != i)
        if protocol == "xdomain":
            fits.append(_Fit(protocol, i, others, (i,)))
        elif protocol == "outdomain":
            fits.append(_Fit(protocol, i, tuple(j for j in others if dom[j] != dom[i]), (i,)))
        elif protocol == "indomain":
            same = tuple(j for j in others if dom[j] == dom[i])
            if same:
                fits.append(_Fit(protocol, i, same, (i,)))
            else:
                indata.append(i)
        elif protocol == "outdata":
            fits.append(_Fit(protocol, i, (i,), others))
        else:  # indata
            indata.append(i)
    return fits, indata


def _indata_splits(n, n_repeats, random_state, *, dtype=np.int64):
    """Evaluation rows of each repeat's 80/20 split, (R, n_test) ints of ``dtype``; None if n < 2.

    Written into one array as the splits come (never a list of them and then its stack).
    """
    from sklearn.model_selection import ShuffleSplit

    if n < 2:
        return None
    ss = ShuffleSplit(n_splits=n_repeats, test_size=_INDATA_TEST_SIZE, random_state=random_state)
    out = None
    for r, (_, test) in enumerate(ss.split(np.zeros((n, 1)))):  # a loop over repeats
        if out is None:
            out = np.empty((n_repeats, len(test)), dtype=dtype)
        out[r] = test
    return out


def protocol_masks(bench, dataset, protocol, random_state):
    """Boolean masks over all rows: a protocol's calibration and evaluation data for ``dataset``.

    For ``indata`` (and ``indomain`` without a same-domain dataset) these
    are the first seeded 80/20 split of :func:`expected_accuracy`.
    """
    sl = bench.rows_of(dataset)
    fits, _ = protocol_plan(bench, protocol)
    i = bench.datasets.index(dataset)
    fit = next((f for f in fits if f.dataset == i), None)
    if fit is not None:
        codes = bench.dataset_codes()
        cal, ev = np.isin(codes, fit.cal), np.isin(codes, fit.evl)
        if not cal.any() or not ev.any():
            raise ValueError(
                f"`protocol`={protocol!r} leaves dataset {dataset!r} no {'calibration' if not cal.any() else 'evaluation'} "
                "data (no other dataset qualifies); choose another protocol"
            )
        return cal, ev
    test = _indata_splits(sl.stop - sl.start, 1, random_state)
    if test is None:
        raise ValueError(
            f"dataset {dataset!r} has {sl.stop - sl.start} example(s); the indata protocol needs at least 2"
        )
    cal = np.zeros(len(bench), dtype=bool)
    cal[sl] = True
    ev = np.zeros(len(bench), dtype=bool)
    ev[sl.start + test[0]] = True
    return cal & ~ev, ev


@dataclass(frozen=True)
class Context:
    """What every model's cells share (sent once to each worker process)."""

    y: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray
    datasets: tuple
    domains: dict
    protocols: tuple
    methods: tuple
    plans: dict
    class_weight: object
    n_repeats: int
    seed: object
    reference: object = None


_SPLITS: dict[tuple, np.ndarray | None] = {}  # (n, n_repeats, seed) -> indata evaluation rows; per process


def splits(n, n_repeats, seed):
    key = (n, n_repeats, seed)
    if key not in _SPLITS:
        if len(_SPLITS) > 64:
            _SPLITS.clear()
        # held for the process's next models: int32 (half of int64) where the rows allow
        _SPLITS[key] = _indata_splits(n, n_repeats, seed, dtype=np.int32 if n <= np.iinfo(np.int32).max else np.int64)
    return _SPLITS[key]


def indata_train(n, n_repeats, seed):
    """Calibration rows of each repeat's split, in ShuffleSplit's order, (R, n_train) ints."""
    from sklearn.model_selection import ShuffleSplit

    ss = ShuffleSplit(n_splits=n_repeats, test_size=_INDATA_TEST_SIZE, random_state=seed)
    return np.stack([train for train, _ in ss.split(np.zeros((n, 1)))])
