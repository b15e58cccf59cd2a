"""The checks of the evaluation parameters that need the data, run before any work.

:func:`check_against_benchmark` refuses, with one line naming the parameter,
the dataset or the model, what would otherwise fail only after the
calibration grid: a baseline or out-of-distribution dataset the data lacks, a
split value that names no rows, a dataset too small for a protocol, a
protocol that leaves a dataset no calibration or evaluation data, a domain
protocol on data without domains, and scores whose range the robustness
curves cannot compute with.  The checks of each value alone are in the
parameter table (:mod:`beyondauc.evaluation.parameters`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, cast

import numpy as np

from ..metrics.calibration.protocols import DOMAIN_HINT, DOMAIN_PROTOCOLS, datasets_without_domain
from .parameters import PARAMETERS

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark

__all__ = ["check_against_benchmark"]


def check_against_benchmark(
    values: Mapping[str, object], bench: Benchmark, *, available: Benchmark | Iterable[str] | None = None
) -> None:
    """Checks that need the data, before any work: raise a one-line ``ValueError``.

    ``values`` are the parameters given (defaults fill the rest), ``bench`` the
    benchmark analysed and ``available`` the whole data (a Benchmark) or the
    names of its datasets (an ``ood_dataset`` may lie outside ``bench``).

    Besides the parameters, it refuses what would otherwise fail only after
    the calibration grid: a dataset too small for a protocol, a protocol that
    leaves a dataset no calibration or evaluation data, a domain protocol
    asked for on data without a domain for every dataset, and scores whose
    range the robustness curves cannot compute with.
    """
    get = lambda name: values.get(name, PARAMETERS[name].default)  # noqa: E731
    full = cast("Benchmark", available) if hasattr(available, "datasets") else None
    if full is not None or available is None:
        available = tuple((full or bench).datasets)
    else:
        available = tuple(cast("Iterable[str]", available))
    baseline = get("baseline")
    if baseline is not None and baseline not in bench.models:
        raise ValueError(f"`baseline` {baseline!r} is not a model of {bench.source}; it has {list(bench.models)}")
    ood = get("ood_dataset")
    if ood is not None and ood not in available:
        raise ValueError(f"`ood_dataset` {ood!r} is not a dataset of {bench.source}; it has {list(available)}")
    kind = get("cohort_protocol")
    if kind == "split" and not bench.has_split:
        raise ValueError("`cohort_protocol`='split' needs a benchmark with a 'split' column; this one has none")
    if kind in (None, "split") and bench.has_split:
        codes, names = _split_values(bench.frame)
        per_dataset = np.split(codes, np.cumsum(bench.dataset_sizes())[:-1])
        values_of = {d: names[np.unique(c)].tolist() for d, c in zip(bench.datasets, per_dataset)}
        for name in ("val_split", "test_split"):
            value = str(get(name))
            for dataset in bench.datasets:
                seen = sorted(values_of.get(dataset, ()))
                if value not in seen:
                    raise ValueError(
                        f"`{name}`={value!r} names no rows of dataset {dataset!r}; its split values are {seen}"
                    )
    _check_sizes_and_protocols(get, bench, full)
    _check_score_ranges(get, bench)


_SOURCES = {  # where a protocol takes a dataset's calibration (validation) data from
    "xdomain": "the other datasets",
    "outdomain": "the datasets of other domains",
    "indomain": "the other datasets of its domain",
    "outdata": "the dataset itself",
}


def _uses(get, bench, full):
    """The parts of the evaluation that select a calibration and an evaluation part of the data per dataset:
    (what, parameter, protocol, note, benchmark, datasets, ood_dataset) each."""
    from ..metrics.diagnostics.benchmark import check_cohort_protocol

    cohort = get("cohort_protocol")
    kind = check_cohort_protocol(bench, cohort)
    ood = get("ood_dataset")
    uses = []
    if kind != "split":
        note = ", the default without a 'split' column" if cohort is None else ""
        uses.append(("the cohort diagnostics", "cohort_protocol", kind, note, bench, bench.datasets, None))
    sel = bench  # selective answering reads the out-of-distribution dataset too, as evaluate does
    if ood is not None and ood not in bench.datasets and full is not None and ood in full.datasets:
        sel = full.subset(datasets=[*bench.datasets, ood])
    in_datasets = tuple(d for d in bench.datasets if d != ood)
    protocol = get("selective_protocol")
    if protocol == "auto":
        protocol = "none" if bench.kind == "answers" else "indata"
    if protocol != "none":  # confidences as given: no calibration data to take
        uses.append(("selective answering", "selective_protocol", protocol, "", sel, in_datasets, ood))
    return uses


def _needs(what, verb="need"):
    """``verb`` agreeing with ``what``: the cohort diagnostics need, selective answering needs."""
    return verb if what.startswith("the cohort") else verb + "s"


def _split_values(frame):
    """(each row's code, the split values as text): the ``split`` column factorized once and its few values
    made text, never a string per row."""
    import pandas as pd

    codes, uniques = pd.factorize(frame["split"], use_na_sentinel=False)
    return codes, pd.Series(uniques).astype(str).to_numpy()


def _check_sizes_and_protocols(get, bench, full):
    """Refuse, before any work, a dataset a protocol of the evaluation leaves without data.

    A domain protocol asked for by name needs a domain for each dataset;
    the cohort diagnostics and selective answering each take a
    calibration (validation) and an evaluation (test) part of the data per
    dataset, and would fail on the first dataset where one is empty, after
    the grid.
    """
    from ..metrics.calibration.grid import protocol_plan

    uses = _uses(get, bench, full)
    _check_domain_protocols(get, bench, uses)
    for what, name, kind, note, data, datasets, _ood in uses:  # sizes first: the plainest cause
        sizes = dict(zip(data.datasets, data.dataset_sizes().tolist()))
        for i in protocol_plan(data, kind)[1]:
            d = data.datasets[i]
            if d in datasets and sizes[d] < 2:
                why = " (no other dataset has its domain)" if kind == "indomain" else ""
                raise ValueError(
                    f"dataset {d!r} has {sizes[d]} example, and {what} {_needs(what)} at least 2 there: "
                    f"`{name}`={kind!r}{note}{why} splits each dataset 80/20; leave the dataset out with "
                    f"`datasets`, or choose another `{name}`"
                )
    for what, name, kind, note, data, datasets, ood in uses:
        for fit in protocol_plan(data, kind)[0]:
            d = data.datasets[fit.dataset]
            cal = [j for j in fit.cal if data.datasets[j] != ood]
            evl = [j for j in fit.evl if data.datasets[j] != ood]
            if d not in datasets or (cal and evl):
                continue
            cohorts = what.startswith("the cohort")
            part = (
                ("validation cohort" if cohorts else "calibration data")
                if not cal
                else ("test cohort" if cohorts else "answers to score")
            )
            source = _SOURCES[kind] if not cal else "the other datasets"
            left = f" once the out-of-distribution dataset {ood!r} is left out" if ood is not None else ""
            one = " (the data has one dataset)" if len(data.datasets) == 1 else ""
            fix = (
                "add a 'split' column with 'val' and 'test' rows, or set `cohort_protocol`='indata'"
                if cohorts
                else f"set `{name}`='indata'"
            )
            raise ValueError(
                f"{what} of dataset {d!r} {_needs(what, 'take')} the {part} from {source} "
                f"(`{name}`={kind!r}{note}), and there is none{left}{one}: {fix}"
            )


def _check_domain_protocols(get, bench, uses):
    """Refuse a domain protocol asked for by name on data without a domain for every dataset it reads.

    The parameters never default to one (the calibration grid, which
    computes every protocol, leaves them out by itself, with a warning), so
    ``protocol``, ``cohort_protocol`` or ``selective_protocol`` set to
    ``outdomain`` or ``indomain`` is an explicit request that cannot be met.
    """
    asked = [("protocol", get("protocol"), bench)] + [(name, kind, data) for _, name, kind, _, data, _, _ in uses]
    for name, kind, data in asked:
        missing = datasets_without_domain(data)
        if kind in DOMAIN_PROTOCOLS and missing:
            have = "has" if len(missing) == 1 else "have"
            raise ValueError(
                f"`{name}`={kind!r} needs the domain of every dataset, and {missing} {have} none: "
                f"{DOMAIN_HINT}, or choose another `{name}`"
            )


#: Headroom the robustness curves need: noise draws reach several sigma, sums run over pairs of examples.
_NOISE_SIGMAS = 8.0


def _fits(low, high, spread, sigma, pairs):
    """Whether the robustness curves can compute with a range ``spread`` and a largest shift ``sigma``.

    They work in units of ``sigma`` (overflow-free at any scale), so the range
    must be a float (``max - min`` finite) and, in those units, its sums over
    ``pairs`` of examples must stay finite.
    """
    import numpy as np

    big = np.finfo(np.float64).max
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(spread > 0, spread / sigma, 0.0)
    return np.isfinite(spread) & np.isfinite(sigma) & (ratio < big / (4 * pairs))


def _check_score_ranges(get, bench):
    """Refuse, before any work, scores whose range the robustness curves cannot compute with.

    The cohort diagnostics perturb the scores of a model on a dataset by up
    to ``sigma_max`` -- by default the range of the scores of both cohorts --
    and sum over pairs of examples, in units of ``sigma_max``: any scale works
    (1e300, 1e-300), but the range itself must be a float (scores from -1e308
    to 1e308 are not: max - min overflows), and a ``sigma_max`` given must not
    be so small that the range in its units overflows the sums.  The message
    names the model and the dataset.
    """
    import numpy as np

    from ..metrics.calibration.grid import protocol_plan
    from ..metrics.diagnostics.benchmark import check_cohort_protocol

    kind = check_cohort_protocol(bench, get("cohort_protocol"))
    sigma_max = get("sigma_max")
    frame = bench.frame
    models = list(bench.models)
    # answers: the classes differ by model; half of each dataset per class bounds every model's pairs
    labels = bench.labels() if bench.kind == "scores" else np.full(len(bench), 0.5)
    codes = bench.dataset_codes()
    keep = slice(None)
    if kind == "split":  # each dataset's validation and test rows
        split, names = _split_values(frame)
        keep = np.isin(split, np.flatnonzero((names == str(get("val_split"))) | (names == str(get("test_split")))))
        labels, codes = labels[keep], codes[keep]
    n = len(bench.datasets)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])  # rows of a dataset are contiguous
    lo = np.full((n, len(models)), np.inf)
    hi = np.full((n, len(models)), -np.inf)
    for j, m in enumerate(models):  # one column at a time: no copy of the whole score matrix
        s = bench.scores(m)[keep]
        lo[codes[starts], j] = np.minimum.reduceat(s, starts)
        hi[codes[starts], j] = np.maximum.reduceat(s, starts)
    pos = np.bincount(codes, weights=labels, minlength=n)
    neg = np.bincount(codes, minlength=n) - pos
    union = {i: (i,) for i in range(n)}  # the datasets whose rows make up the two cohorts of dataset i
    if kind != "split":
        fits, _ = protocol_plan(bench, kind)
        union.update({f.dataset: tuple(sorted({*f.cal, *f.evl})) for f in fits})
    with np.errstate(over="ignore", invalid="ignore"):
        for i, rows in union.items():
            rows = list(rows)
            low, high = lo[rows].min(axis=0), hi[rows].max(axis=0)
            spread = high - low
            pairs = max(float(pos[rows].sum() * neg[rows].sum()), 1.0)
            own = _fits(low, high, spread, spread, pairs)
            ok = own if sigma_max is None else _fits(low, high, spread, np.full_like(spread, float(sigma_max)), pairs)
            if ok.all():
                continue
            j = int(np.flatnonzero(~ok)[0])
            d = bench.datasets[i]
            if own[j]:  # the scores would do; the sigma_max given is what overflows
                raise ValueError(
                    f"`sigma_max`={sigma_max!r} is too small for the robustness curves of model "
                    f"{models[j]!r} on dataset {d!r} (its scores range from {low[j]:.3g} to "
                    f"{high[j]:.3g}): give a larger one, or None for that range"
                )
            wide = "wider than floating point can hold" if not np.isfinite(spread[j]) else "too wide"
            raise ValueError(
                f"model {models[j]!r} on dataset {d!r}: the scores range from {low[j]:.3g} to "
                f"{high[j]:.3g}, a range {wide} for the robustness curves to compute with (they would "
                "overflow); rescale the model's scores, e.g. divide them by a power of 10"
            )
