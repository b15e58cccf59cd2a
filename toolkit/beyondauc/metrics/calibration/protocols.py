"""Which calibration protocols a benchmark allows.

``outdomain`` and ``indomain`` need the domain of every dataset: a dataset
whose domain is unknown could belong to any domain, so no dataset's
calibration data (the datasets of *other* domains, or of the *same* one) is
known once one domain is missing.  Those two protocols are then left out of
whatever computes "every protocol" (the default of
:func:`~beyondauc.expected_accuracy_grid`, :func:`~beyondauc.bootstrap_grid`,
:func:`~beyondauc.calibration_error_table` and the evaluation's grid), with
one warning saying why; asked for by name, they are an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .grid import PROTOCOLS

if TYPE_CHECKING:
    from ...data.benchmark import Benchmark

__all__ = [
    "DOMAIN_HINT",
    "DOMAIN_PROTOCOLS",
    "datasets_without_domain",
    "grid_protocols",
    "left_out_message",
    "left_out_protocols",
    "one_dataset_protocols",
    "CROSS_DATASET_PROTOCOLS",
    "ONE_DATASET_HINT",
]

#: The protocols that need the domain of every dataset.
DOMAIN_PROTOCOLS: tuple[str, ...] = ("outdomain", "indomain")

#: How to give the domains (the command line says ``--domains`` for ``domains=``).
DOMAIN_HINT = "add a 'domain' column to the data, or give `domains=` (dataset -> domain)"


def datasets_without_domain(bench: Benchmark) -> list[str]:
    """The datasets of ``bench`` whose domain is unknown, in order.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark
    >>> df = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "label": [0, 1, 1, 0], "m": [0.1, 0.9, 0.8, 0.3]})
    >>> datasets_without_domain(load_benchmark(df, domains={"a": "news"}))
    ['b']
    """
    return [d for d in bench.datasets if bench.domains.get(d) is None]


def left_out_protocols(bench: Benchmark) -> dict[str, str]:
    """Protocol -> why ``bench`` leaves it out (empty when every dataset has a domain).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark
    >>> df = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "label": [0, 1, 1, 0], "m": [0.1, 0.9, 0.8, 0.3]})
    >>> left_out_protocols(load_benchmark(df))["outdomain"]
    "needs the domain of every dataset, and ['a', 'b'] have none"
    """
    missing = datasets_without_domain(bench)
    if not missing:
        return {}
    why = f"needs the domain of every dataset, and {missing} {'has' if len(missing) == 1 else 'have'} none"
    return {p: why for p in DOMAIN_PROTOCOLS}


#: The protocols that calibrate on (or cohort by) other datasets than the one evaluated.
CROSS_DATASET_PROTOCOLS: tuple[str, ...] = ("xdomain", "outdomain", "indomain", "outdata")
#: What a benchmark of one dataset (one task) is told about them.
ONE_DATASET_HINT = "they run with two datasets or more (e.g. several tasks of one run)"


def one_dataset_protocols(bench: Benchmark) -> dict[str, str]:
    """Protocol -> why a benchmark of one dataset leaves it out (empty with two datasets or more).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark
    >>> df = pd.DataFrame({"dataset": "a", "label": [0, 1, 1, 0], "m": [0.1, 0.9, 0.8, 0.3]})
    >>> one_dataset_protocols(load_benchmark(df))["xdomain"]
    "needs other datasets than the one evaluated, and the data has one ('a')"
    """
    if len(bench.datasets) > 1:
        return {}
    why = f"needs other datasets than the one evaluated, and the data has one ({bench.datasets[0]!r})"
    return {p: why for p in CROSS_DATASET_PROTOCOLS}


def left_out_message(left_out: dict[str, str], *, hint: str = DOMAIN_HINT) -> str:
    """The one sentence (a warning, a note of a report) that says which protocols are left out, why, and ``hint``.

    Examples
    --------
    >>> left_out_message({"outdomain": "needs the domain of every dataset, and ['b'] has none",
    ...                   "indomain": "needs the domain of every dataset, and ['b'] has none"})  # doctest: +ELLIPSIS
    "protocols outdomain and indomain are left out: each needs the domain of every dataset, and ['b'] has none; ..."
    """
    names = list(left_out)
    shown = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    reasons = list(dict.fromkeys(left_out.values()))
    why = reasons[0] if len(reasons) == 1 else "; ".join(f"{p} {r}" for p, r in left_out.items())
    each = "each " if len(names) > 1 and len(reasons) == 1 else ""
    several = len(names) > 1
    return f"protocol{'s' if several else ''} {shown} {'are' if several else 'is'} left out: {each}{why}; {hint}"


def grid_protocols(bench: Benchmark, protocols: str | Sequence[str] | None = None, *, stacklevel: int = 3) -> list[str]:
    """The protocols to compute: ``protocols`` as given, or (None) every protocol ``bench`` allows.

    Without a domain for every dataset, None leaves out ``outdomain`` and
    ``indomain`` with one warning; protocols given by name are returned as
    given (a domain protocol without domains is refused where it is computed).

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark
    >>> df = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "label": [0, 1, 1, 0], "m": [0.1, 0.9, 0.8, 0.3]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     grid_protocols(load_benchmark(df))
    ['xdomain', 'indata', 'outdata']
    >>> grid_protocols(load_benchmark(df), "outdomain")
    ['outdomain']
    """
    if protocols is not None:
        return [protocols] if isinstance(protocols, str) else list(protocols)
    if not hasattr(bench, "domains"):  # not a Benchmark: the grid's own check says so
        return list(PROTOCOLS)
    left = left_out_protocols(bench)
    if left:
        warnings.warn(left_out_message(left), UserWarning, stacklevel=stacklevel)
    return [p for p in PROTOCOLS if p not in left]


def grid_choices(
    bench: Benchmark, protocols: str | Sequence[str] | None, methods: str | Sequence[str]
) -> tuple[list[str], list[str]]:
    """The protocols (:func:`grid_protocols`) and methods of a grid, each a list without repeats, in order.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> grid_choices(load_demo(), ["indata", "xdomain", "indata"], "stump")
    (['indata', 'xdomain'], ['stump'])
    """
    protocols = grid_protocols(bench, protocols, stacklevel=4)  # None: every protocol the data allows
    methods = [methods] if isinstance(methods, str) else methods
    return list(dict.fromkeys(protocols)), list(dict.fromkeys(methods))
