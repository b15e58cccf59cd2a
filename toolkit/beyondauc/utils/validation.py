"""Input validation shared by every public entry point.

Validation happens once, at the public boundary; private kernels trust their
inputs.  Every message names the parameter, what was expected and what was got.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings
from collections.abc import Iterable, Iterator

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["UndefinedMetricWarning", "check_names"]


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the given input (for example one class only)."""


def check_int(
    value: object, name: str, *, minimum: int | None = None, maximum: int | None = None, hint: str = ""
) -> int:
    """Return ``value`` as an int, or raise naming ``name`` and the range expected (``hint`` appended)."""
    if minimum is not None and maximum is not None:
        expected = f"an int in [{minimum}, {maximum}]"
    else:
        expected = (
            "an int"
            + (f" >= {minimum}" if minimum is not None else "")
            + (f" <= {maximum}" if maximum is not None else "")
        )
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"`{name}` must be {expected}{hint}, got {value!r}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"`{name}` must be {expected}{hint}, got {value!r}")
    return value


#: The largest seed: numpy's generators take seeds in [0, 2**32 - 1].
MAX_SEED = 2**32 - 1


def check_number(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    hint: str = "",
) -> float:
    """Return ``value`` as a float, or raise naming ``name`` and the range expected.

    ``low``/``high`` bound the range (open ends with ``low_open``/``high_open``);
    ``hint`` is appended to the message.
    """
    if low is not None and high is not None:
        expected = f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    elif low is not None:
        expected = f"a finite number {'>' if low_open else '>='} {low:g}"
    elif high is not None:
        expected = f"a finite number {'<' if high_open else '<='} {high:g}"
    else:
        expected = "a finite number"
    real = not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)
    number = float(value) if real else math.nan  # type: ignore[arg-type]  # a numbers.Real
    ok = real and math.isfinite(number)
    if ok and low is not None:
        ok = number > low if low_open else number >= low
    if ok and high is not None:
        ok = number < high if high_open else number <= high
    if not ok:
        raise ValueError(f"`{name}` must be {expected}{hint}, got {value!r}")
    return number


def check_option(value: object, name: str, options: Iterable[object]) -> object:
    """Raise unless ``value`` is one of ``options``."""
    if value not in options:
        opts = ", ".join(repr(o) for o in options)
        raise ValueError(f"`{name}` must be one of {opts}, got {value!r}")
    return value


def check_random_state(random_state: object, name: str = "random_state") -> int | None:
    """Return an int seed (or None) for reproducible randomness."""
    if random_state is None:
        return None
    if isinstance(random_state, (np.random.RandomState, np.random.Generator)):
        raise ValueError(
            f"`{name}` must be an int or None so results are reproducible, got {type(random_state).__name__}"
        )
    return check_int(random_state, name, minimum=0, maximum=MAX_SEED, hint=" (numpy's seeds)")


def check_scores(y_score: ArrayLike, name: str = "y_score", *, allow_nonfinite: bool = False) -> np.ndarray:
    """Return ``y_score`` as a 1-D float64 array of finite values."""
    try:
        arr = np.asarray(y_score)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise ValueError(f"`{name}` must be a 1-D array of numbers: {exc}") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got an array of shape {arr.shape}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        try:
            if arr.dtype.kind == "b":
                raise TypeError
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"`{name}` must hold numbers, got dtype {arr.dtype}") from None
    arr = arr.astype(np.float64, copy=False)
    if not allow_nonfinite:
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`{name}` must be finite: {int(bad.sum())} NaN/inf value(s), the first at position {i} ({arr[i]})"
            )
    return arr


def binarize_labels(
    y: ArrayLike,
    name: str = "y_true",
    *,
    pos_label: object = None,
    where: str | None = None,
) -> np.ndarray:
    """Map binary labels to a 0/1 int8 array.

    Accepts {0, 1}, {-1, 1}, booleans, or any two values with an explicit
    ``pos_label``.  A single class is allowed here (callers decide whether a
    metric is then undefined); more than two classes is an error.
    """
    where = f" in {where}" if where else ""
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"`{name}`{where} must be 1-D, got an array of shape {arr.shape}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        i = int(np.flatnonzero(np.isnan(arr))[0])
        raise ValueError(f"`{name}`{where} has missing labels (NaN), the first at position {i}")
    if arr.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in arr])
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise ValueError(f"`{name}`{where} has missing labels, the first at position {i}")
    classes = np.unique(arr)
    if len(classes) > 2:
        shown = ", ".join(repr(c.item() if hasattr(c, "item") else c) for c in classes[:5])
        raise ValueError(
            f"`{name}`{where} must be binary, got {len(classes)} classes: {shown}{', ...' if len(classes) > 5 else ''}"
        )
    if pos_label is not None:
        if pos_label not in set(classes.tolist()) and len(classes) == 2:
            raise ValueError(f"`pos_label`={pos_label!r} is not one of the labels{where}: {classes.tolist()}")
        return (arr == pos_label).astype(np.int8)
    if arr.dtype.kind == "b":
        return arr.astype(np.int8)
    values = set(classes.tolist())
    if arr.dtype.kind in "iuf" and values <= {0, 1}:
        return (arr == 1).astype(np.int8)
    if arr.dtype.kind in "iuf" and values <= {-1, 1}:
        return (arr == 1).astype(np.int8)
    raise ValueError(
        f"`{name}`{where} has labels {sorted(values, key=str)}; give `pos_label` to say which one is positive "
        "(labels {0, 1}, {-1, 1} and booleans need none)"
    )


def warn_undefined(message: str) -> None:
    """Warn that a metric is undefined and will be NaN."""
    warnings.warn(message, UndefinedMetricWarning, stacklevel=3)


def check_names(values: str | Iterable[str] | None, name: str) -> list[str] | None:
    """A comma-separated string or a list of str as a list (None when empty); else a TypeError naming `name`."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",") if v.strip()]
    values = list(values)
    if not values:
        return None
    for v in values:
        if not isinstance(v, str):
            raise TypeError(f"`{name}` must be a list of str, got an element {v!r}")
    return values


class WarningLog:
    """The warnings of one run, each said once.

    A warning repeated for several models and datasets (the same message from
    the same computation) becomes one warning that lists them.  Warnings about
    a dataset in ``explained`` (its datasets with a single class, already
    reported when the data was read) whose category is
    :class:`UndefinedMetricWarning` are consequences of that one warning and
    are not repeated.
    """

    def __init__(self, *, explained: Iterable[str] = (), models: Iterable[str] = ()) -> None:
        self.records: list[
            tuple[type[Warning], str, str | None, str | None]
        ] = []  # (category, message, model or None, dataset or None), in order
        self.said: list[dict] = []  # what emit said (its notes), once the block of warnings_once has ended
        self.explained = frozenset(explained)
        self.models = tuple(models)

    def record(
        self, caught: Iterable[warnings.WarningMessage], *, model: str | None = None, dataset: str | None = None
    ) -> None:
        """Add warnings caught by :func:`warnings.catch_warnings` (``record=True``), from ``model`` on ``dataset``."""
        self.records.extend((w.category, str(w.message), model, dataset) for w in caught)

    def notes(self) -> list[dict]:
        """Each distinct warning of the run's own once: ``text`` (with the models and datasets it came from),
        ``category``, ``models`` and ``datasets``.

        Warnings of other libraries (numpy's "invalid value encountered in
        divide", an unclosed event loop) are left out: what they mean for a
        number, the run says itself (an undefined metric, a NaN interval).
        """
        groups: dict[tuple[type[Warning], str], tuple[list[str], list[str]]] = {}
        for category, message, model, dataset in self.records:
            if not own_warning(category):
                continue
            models, datasets = groups.setdefault((category, message), ([], []))
            if model is not None and model not in models:
                models.append(model)
            if dataset is not None and dataset not in datasets:
                datasets.append(dataset)
        out = []
        for (category, message), (models, datasets) in groups.items():
            if datasets and issubclass(category, UndefinedMetricWarning) and set(datasets) <= self.explained:
                continue
            where = []
            if datasets:
                where.append(_listed("dataset", datasets))
            if models:
                every = len(self.models) > 1 and set(models) == set(self.models)
                where.append("every model" if every else _listed("model", models))
            out.append(
                {
                    "text": message + (f" ({'; '.join(where)})" if where else ""),
                    "category": category,
                    "models": list(models),
                    "datasets": list(datasets),
                }
            )
        return out

    def emit(self) -> list[dict]:
        """Re-emit each distinct warning of the run's own once, with the models and datasets it came from;
        return them (:meth:`notes`)."""
        notes = self.notes()
        for note in notes:
            warnings.warn(note["text"], note["category"], stacklevel=2)
        return notes


def own_warning(category: type[Warning]) -> bool:
    """True for a warning beyondauc says itself (a UserWarning, or a category of its own), False for
    another library's (RuntimeWarning, ResourceWarning, DeprecationWarning, scikit-learn's ...).

    Examples
    --------
    >>> own_warning(UserWarning), own_warning(UndefinedMetricWarning), own_warning(RuntimeWarning)
    (True, True, False)
    """
    return category is UserWarning or category.__module__.split(".")[0] == "beyondauc"


def _listed(noun, names, limit=6):
    """``dataset 'a'`` or ``datasets 'a', 'b' and 3 more``."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    shown = ", ".join(repr(n) for n in names[:limit]) + more
    return f"{noun}{'s' if len(names) > 1 else ''} {shown}"


@contextlib.contextmanager
def warnings_once(
    *, explained: Iterable[str] = (), models: Iterable[str] = (), ignore: Iterable[tuple[str, type[Warning]]] = ()
) -> Iterator[WarningLog]:
    """Collect the warnings of the block and re-emit each once (see :class:`WarningLog`) when it ends.

    Yields the :class:`WarningLog`, for warnings caught elsewhere (in worker
    processes) with the model and dataset they came from.  ``ignore`` are
    ``(message regex, category)`` pairs of warnings already said.
    """
    log = WarningLog(explained=explained, models=models)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for message, category in ignore:
            warnings.filterwarnings("ignore", message, category)
        try:
            yield log
        finally:
            log.records[:0] = [(w.category, str(w.message), None, None) for w in caught]
    log.said = log.emit()
