"""The forms a benchmark is read in (docs/user_guide/data.md), and the long form made one row per example.

A table's columns say its form; a table that fits none, or two at once, is refused with the list of
forms, never guessed:

- **wide**: ``dataset``, ``label``, one numeric column per model (kind ``"scores"``);
- **long**, one row per example and model: ``dataset``, ``model`` and

  * ``score`` + ``label``: kind ``"scores"``;
  * ``confidence`` + ``correct``: kind ``"answers"`` (``prediction`` and ``label`` may stand beside
    them; ``correct`` is what counts, as a judge or a normalised match may have set it);
  * ``prediction`` + ``label`` + ``confidence``: ``"answers"``, correct = prediction == label;
  * class probabilities + ``label``: ``"answers"``, the prediction is the most probable class (ties:
    the first column), the confidence its probability.  Class probabilities are two or more columns
    named with one prefix, ``p_``, ``prob_`` or ``proba_``, the rest of the name being the class (it
    must match the ``label`` values as text), or one list column ``probabilities`` / ``proba`` whose
    positions are the classes (``label`` is then a position, 0 to k - 1).  A class column empty on
    a whole dataset is not one of that dataset's classes, so datasets may have different classes.

Examples are matched across models by ``id``, or, without an ``id`` column, by their order within
dataset and model.  ``split`` and ``label`` belong to the example: the models must agree on them.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..utils.formatting import quoted_name
from .readers import BOOKKEEPING, check_names, closest

__all__: list[str] = []

_VALUES = ("score", "confidence", "correct", "prediction")
_LISTS = ("probabilities", "proba")
_PREFIXES = ("proba_", "prob_", "p_")
#: Columns of the long form besides the values: each example's own.
_EXAMPLE = ("dataset", "domain", "split", "id", "model", "label")
#: Columns that number repeated samples of one item (e.g. the epochs of an LLM run): rows sharing
#: (dataset, model, id) are then samples of one item, told apart by this column.
SAMPLE_COLUMNS = ("epoch", "sample")
FORMS = (
    "the forms read are wide ('dataset', 'label', one numeric column per model) and long, one row per example "
    "and model: 'dataset', 'model', then 'score' + 'label', or 'confidence' + 'correct', or 'prediction' + "
    "'label' + 'confidence', or class probabilities ('p_<class>' columns or a 'probabilities' list) + 'label'"
)


@dataclass(frozen=True)
class Form:
    """A table's form: its name, the kind of benchmark it gives, its class-probability columns."""

    name: str  # "wide", "long scores", "long answers", "long predictions", "long probabilities"
    kind: str = "scores"
    probabilities: tuple[str, ...] = ()  # the p_<class> columns, or the one list column
    classes: tuple[str, ...] = ()  # the classes of the p_<class> columns; () for a list column

    @property
    def long(self) -> bool:
        """True for the long forms (one row per example and model)."""
        return self.name != "wide"


WIDE = Form("wide")


# -- which form -------------------------------------------------------------------


def recognise_form(columns, where):
    """The form ``columns`` say; refuse columns that say none, or two."""
    cols = [c for c in columns if c not in BOOKKEEPING]
    if "model" not in cols:
        found = [c for c in (*_VALUES, *_LISTS) if c in cols]
        if found:
            raise ValueError(
                f"{where}: column(s) {', '.join(map(repr, found))} belong to the long form, which "
                f"needs a 'model' column naming each row's model{closest('model', cols)}; {FORMS}"
            )
        return WIDE
    probabilities, classes = _probability_columns(cols, where)
    has = set(cols)
    given = [repr(c) for c in _VALUES if c in has] + ([_described(probabilities, classes)] if probabilities else [])

    def need(name, *columns):
        missing = [c for c in columns if c not in has]
        if missing:
            near = "".join(closest(c, cols) for c in missing)
            raise ValueError(
                f"{where}: the long form with {name} needs column(s) {', '.join(map(repr, missing))}{near}; {FORMS}"
            )

    def alone(*allowed):
        extra = [g for g in given if g not in allowed]
        if extra:
            own = [g for g in given if g in allowed]
            raise ValueError(
                f"{where}: {', '.join(own)} and {', '.join(extra)} are two forms at once; keep the "
                f"columns of one ({FORMS})"
            )

    if "score" in has:
        alone("'score'")
        need("'score'", "label")
        return Form("long scores")
    if "correct" in has:
        alone("'confidence'", "'correct'", "'prediction'")
        need("'correct'", "confidence")
        return Form("long answers", "answers")
    if "prediction" in has:
        alone("'confidence'", "'prediction'")
        need("'prediction'", "label", "confidence")
        return Form("long predictions", "answers")
    if probabilities:
        alone(given[-1])
        need("class probabilities", "label")
        return Form("long probabilities", "answers", probabilities, classes)
    if "confidence" in has:
        need("'confidence'", "correct")
    raise ValueError(
        f"{where}: a 'model' column, but no 'score', 'confidence', 'correct', 'prediction' or "
        f"class-probability columns; {FORMS}"
    )


def _probability_columns(cols, where):
    """(the class-probability columns, their classes): 2+ columns of one prefix, or a list column."""
    lists = [c for c in _LISTS if c in cols]
    groups = {p: [c for c in cols if isinstance(c, str) and c.startswith(p) and len(c) > len(p)] for p in _PREFIXES}
    groups = {p: g for p, g in groups.items() if len(g) >= 2}
    sets = [f"'{p}<class>' columns" for p in groups] + [repr(c) for c in lists]
    if len(sets) > 1:
        raise ValueError(f"{where}: {' and '.join(sets)} both look like class probabilities: keep one set")
    if lists:
        return (lists[0],), ()
    for prefix, group in groups.items():
        return tuple(group), tuple(c[len(prefix) :] for c in group)
    return (), ()


def probabilities_hint(columns):
    """For a wide table whose labels are not binary: '' or a clause saying the long form reads class
    probabilities (columns that look like them, and no 'model' column)."""
    if "model" in columns:
        return ""
    try:
        probabilities, classes = _probability_columns([c for c in columns if c not in BOOKKEEPING], "")
    except ValueError:
        return ""
    if not classes:
        return ""
    return (
        f"; columns {', '.join(map(repr, probabilities))} look like class probabilities: add a 'model' column "
        "(the long form, one row per example and model) to read them as that model's answers"
    )


def _described(probabilities, classes):
    if not classes:
        return f"the list column {probabilities[0]!r}"
    return f"class probabilities ({', '.join(map(repr, probabilities[:3]))}{' ...' if len(classes) > 3 else ''})"


def _plain(value):
    """``value`` as Python writes it: ``7``, not ``np.int64(7)``."""
    return value.item() if isinstance(value, np.generic) else value


def long_ignored(columns, form):
    """The columns of a long table that none of its form's columns is: listed in one warning."""
    used = {*_EXAMPLE, *SAMPLE_COLUMNS, *_VALUES, *form.probabilities, *BOOKKEEPING}
    return [c for c in columns if c not in used]


# -- the long form, read ------------------------------------------------------------


def long_models(table, models, origin):
    """(the rows of the models asked for, the models in order): the ``model`` column checked and made text."""
    missing = pd.isna(table["model"]).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(f"column 'model' has a missing value at {origin.locate(table, pos)}")
    table["model"] = table["model"].astype(str).to_numpy(dtype=object)
    present = list(pd.unique(table["model"]))
    check_names(
        present,
        "column 'model' value",
        origin.where,
        lambda m: origin.locate(table, int(np.flatnonzero((table["model"] == m).to_numpy())[0])),
    )
    if models is None:
        return table, present
    unknown = [m for m in models if m not in present]
    if unknown:
        raise ValueError(f"`models` names {unknown}, not in column 'model' of {origin.where}; models are {present}")
    return table[table["model"].isin(models).to_numpy()], list(dict.fromkeys(models))


def long_to_wide(table, form, models, origin, nan_policy):
    """(one row per example, values (n_examples, n_models), correct (same shape) or None).

    The long rows are matched into examples (by ``id``, or by order within
    dataset and model) and every example is checked to have one row per model
    and one ``split`` and ``label``.  A NaN/inf value is an error naming its file,
    column and line, or, with ``nan_policy="drop"``, drops its example (for every
    model) with one warning.
    """
    value, correct, describe = _values(table, form, origin)
    example, first = _examples(table, models, origin)
    for column in ("split", "label"):
        if column in table.columns:
            _check_agree(table, example, first, origin, column)
    m = pd.Index(models).get_indexer(table["model"].to_numpy(dtype=object))
    n_examples = len(first)
    keep = np.ones(n_examples, dtype=bool)
    bad = ~np.isfinite(value)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        if nan_policy == "raise":
            raise ValueError(
                f"{describe(pos)} at {origin.locate(table, pos)} (model {table['model'].iloc[pos]!r}); "
                f'{int(bad.sum())} such value(s) in all. Fix the data or pass nan_policy="drop"'
            )
        keep[example[bad]] = False
        per_model = {models[j]: int(c) for j, c in enumerate(np.bincount(m[bad], minlength=len(models))) if c}
        what = {"scores": "scores", "answers": "confidences"}[form.kind]
        warnings.warn(
            f"dropped {int((~keep).sum())} example(s) with NaN/inf {what} from {origin.where}: {per_model}",
            UserWarning,
            stacklevel=3,
        )
    values = np.full((n_examples, len(models)), np.nan)
    values[example, m] = value
    grid = None
    if correct is not None:
        grid = np.zeros((n_examples, len(models)), dtype=correct.dtype)  # float64: graded correctness
        grid[example, m] = correct
        grid = grid[keep]
    label = ("label",) if form.kind == "scores" else ()  # an answers benchmark's labels are its `correct`
    columns = [c for c in ("dataset", *label, "split", "id", *SAMPLE_COLUMNS, *BOOKKEEPING) if c in table.columns]
    rows = table.iloc[first[keep]][columns]
    return rows, values[keep], grid


def _values(table, form, origin):
    """(each row's value: score or confidence, whether it is correct (or None), what names a non-finite value)."""
    if form.name == "long probabilities":
        return _from_probabilities(table, form, origin)
    column = "score" if form.kind == "scores" else "confidence"
    value = _numeric(table, column, origin)
    if form.name == "long scores":
        correct = None
    elif form.name == "long answers":
        correct = _correct_column(table, origin)
    else:
        correct = (
            _class_text(_present(table, "prediction", origin)) == _class_text(_present(table, "label", origin))
        ).astype(np.int8)
    return value, correct, lambda pos: f"column {column!r} has a non-finite value ({value[pos]})"


def _present(table, column, origin):
    """``table[column]``, refused where a value is missing."""
    missing = pd.isna(table[column]).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(f"column {column!r} has a missing value at {origin.locate(table, pos)}")
    return table[column]


def _numeric(table, column, origin):
    """Column ``column`` as float64; a value that is no number (or a boolean) is an error naming its row."""
    col = table[column]
    kind = col.dtype.kind
    if kind in "iuf":
        return col.to_numpy(dtype=np.float64)
    if kind == "b":
        raise ValueError(f"column {column!r} in {origin.where} holds booleans, not numbers")
    values = pd.to_numeric(col, errors="coerce")
    bad = (values.isna() & col.notna()).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"column {column!r} must be numeric: {_plain(col.iloc[pos])!r} at {origin.locate(table, pos)}")
    return values.to_numpy(dtype=np.float64)


_TRUTH = {"1": 1, "0": 0, "1.0": 1, "0.0": 0, "true": 1, "false": 0}


def _correct_column(table, origin):
    """The ``correct`` column: 0/1 (int8) from 0/1, booleans or the words true/false (any case), or a graded
    quality in [0, 1] (float64) when some value lies strictly between 0 and 1."""
    col = _present(table, "correct", origin)
    if col.dtype.kind == "b":
        return col.to_numpy().astype(np.int8)
    if col.dtype.kind in "iuf":
        v = col.to_numpy(dtype=np.float64)
        v = np.where((v >= 0) & (v <= 1), v, np.nan)
    else:
        v = col.astype(str).str.strip().str.lower().map(_TRUTH).to_numpy(dtype=np.float64)
    bad = np.isnan(v)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"column 'correct' must say whether the answer is right (1/0, true/false), got "
            f"{_plain(col.iloc[pos])!r} at {origin.locate(table, pos)} (or how good it is: a quality "
            f"in [0, 1])"
        )
    return v if ((v != 0) & (v != 1)).any() else v.astype(np.int8)


def _class_text(values):
    """Class values as text, to compare predictions, labels and class names: 2.0 is '2'."""
    if values.dtype.kind == "f":
        v = values.to_numpy(dtype=np.float64)
        out = values.astype(str).to_numpy(dtype=object)
        whole = np.isfinite(v) & (np.round(v) == v) & (np.abs(v) < 2.0**53)
        out[whole] = v[whole].astype(np.int64).astype(str)
        return out
    return values.astype(str).to_numpy(dtype=object)


def _from_probabilities(table, form, origin):
    """(confidence, correct, what names a missing one) from class probabilities and the gold label."""
    if form.classes:
        p = np.column_stack([_numeric(table, c, origin) for c in form.probabilities])
        classes, names = list(form.classes), list(form.probabilities)
    else:
        p = _probability_lists(table, form.probabilities[0], origin)
        classes = [str(k) for k in range(p.shape[1])]
        names = [f"{form.probabilities[0]}[{k}]" for k in range(p.shape[1])]
    codes, datasets = pd.factorize(table["dataset"])
    # a class whose column is empty on a whole dataset is not one of that dataset's classes
    available = pd.DataFrame(~np.isnan(p)).groupby(codes).any().to_numpy()[codes]
    finite = np.isfinite(p)
    outside = finite & ((p < 0) | (p > 1))
    if outside.any():
        r, k = (int(i) for i in np.argwhere(outside)[0])
        raise ValueError(
            f"column {names[k]!r} must hold probabilities in [0, 1], got {_plain(p[r, k])!r} at "
            f"{origin.locate(table, r)}"
        )
    gold = _gold_classes(table, classes, names, available, origin, list_column=not form.classes)
    ranked = np.where(available & finite, p, -np.inf)
    predicted = ranked.argmax(axis=1)
    missing = available & ~finite
    confidence = np.where(missing.any(axis=1), np.nan, ranked[np.arange(len(p)), predicted])
    correct = (predicted == gold).astype(np.int8)

    def describe(pos):
        k = int(np.argmax(missing[pos]))
        return f"column {names[k]!r} has a non-finite value ({p[pos, k]})"

    return confidence, correct, describe


def _gold_classes(table, classes, names, available, origin, *, list_column):
    """Each row's gold class as a column position; a label that is none of its dataset's classes is an error."""
    labels = _present(table, "label", origin)
    gold = pd.Index(classes).get_indexer(_class_text(labels))
    unknown = gold < 0
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        what = (
            f"a position in the {names[0][:-3]!r} lists (0 to {len(classes) - 1})"
            if list_column
            else f"one of the classes of the probability columns {classes}"
        )
        raise ValueError(
            f"column 'label' value {_plain(labels.iloc[pos])!r} at {origin.locate(table, pos)} is not {what}"
        )
    absent = ~available[np.arange(len(gold)), gold]
    if absent.any():
        pos = int(np.flatnonzero(absent)[0])
        raise ValueError(
            f"column 'label' value {_plain(labels.iloc[pos])!r} at {origin.locate(table, pos)}: column "
            f"{names[gold[pos]]!r} is empty on dataset {table['dataset'].iloc[pos]!r}, so that class is "
            "not one of its classes"
        )
    return gold


def _probability_lists(table, column, origin):
    """A list column of class probabilities as an (n, k) array, NaN beyond a row's list."""
    col = _present(table, column, origin)
    cells = list(col)
    if pd.api.types.infer_dtype(col, skipna=False) == "string":  # lists written as text, e.g. in a CSV file:
        inner = col.str.strip().str.removeprefix("[").str.removesuffix("]").str.strip()  # "[0.1, 0.9]", "[0.1 0.9]"
        cells = list(
            inner.str.split(r"[\s,]+", regex=True).where(inner != "", pd.Series([[]] * len(inner), index=inner.index))
        )
    try:
        lengths = np.fromiter(map(len, cells), dtype=np.int64, count=len(cells))
        flat = np.array(list(itertools.chain.from_iterable(cells)), dtype=np.float64)
    except (TypeError, ValueError):
        pos = next(i for i, c in enumerate(cells) if not _is_numbers(c))
        raise ValueError(
            f"column {column!r} must hold lists of class probabilities, got {quoted_name(col.iloc[pos])} at "
            f"{origin.locate(table, pos)}"
        ) from None
    codes = pd.factorize(table["dataset"])[0]
    _, firsts = np.unique(codes, return_index=True)
    other = lengths != lengths[firsts[codes]]
    if other.any():
        pos = int(np.flatnonzero(other)[0])
        ref = int(firsts[codes[pos]])
        raise ValueError(
            f"column {column!r}: the rows of dataset {table['dataset'].iloc[pos]!r} hold lists of "
            f"{lengths[ref]} ({origin.locate(table, ref)}) and {lengths[pos]} class probabilities "
            f"({origin.locate(table, pos)}); a dataset's rows share their classes"
        )
    p = np.full((len(cells), int(lengths.max(initial=0))), np.nan)
    starts = np.cumsum(lengths) - lengths
    p[np.repeat(np.arange(len(cells)), lengths), np.arange(len(flat)) - np.repeat(starts, lengths)] = flat
    return p


def _is_numbers(cell):
    try:
        np.asarray(cell, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return False
    return not isinstance(cell, (str, bytes)) and np.ndim(cell) == 1


# -- matching the models' rows into examples ------------------------------------------


def _examples(table, models, origin):
    """(each row's example, each example's first row): by ``id``, or by order within dataset and model."""
    datasets = table["dataset"].to_numpy(dtype=object)
    m = pd.Index(models).get_indexer(table["model"].to_numpy(dtype=object))
    counts, names = _models_everywhere(datasets, m, models, origin)
    sample = sample_column(table.columns)
    if sample is not None and "id" not in table.columns:
        raise ValueError(
            f"{origin.where}: column {sample!r} numbers repeated samples of an item, but there is no "
            "'id' column to say which item; add one"
        )
    if "id" in table.columns:
        _present(table, "id", origin)
        _no_duplicates(table, origin, sample)
        key = table["id"].to_numpy() if sample is None else _id_and_sample(table, sample, origin)
    else:
        uneven = counts != counts[:, :1]
        if uneven.any():
            i, j = (int(v) for v in np.argwhere(uneven)[0])
            name = names[i]
            raise ValueError(
                f"{origin.where}: without an 'id' column, examples are matched by their order within "
                f"dataset and model, so each model needs as many rows in a dataset: dataset {name!r} "
                f"has {counts[i, 0]} rows of model {models[0]!r} and {counts[i, j]} of model "
                f"{models[j]!r}; add an 'id' column"
            )
        key = table.groupby(["dataset", "model"], sort=False).cumcount().to_numpy()
    example = pd.DataFrame({"d": datasets, "k": key}).groupby(["d", "k"], sort=False, dropna=False).ngroup().to_numpy()
    _, first = np.unique(example, return_index=True)
    filled = np.zeros((len(first), len(models)), dtype=bool)
    filled[example, m] = True
    if not filled.all():
        e, j = (int(v) for v in np.argwhere(~filled)[0])
        pos = int(first[e])
        raise ValueError(
            f"{origin.where}: model {models[j]!r} has no row for dataset {datasets[pos]!r}, "
            f"{_example_name(table, pos)}, which model {table['model'].iloc[pos]!r} answers at "
            f"{origin.locate(table, pos)}; every model needs a row for every example"
        )
    return example, first


def _models_everywhere(datasets, m, models, origin):
    """Rows per (dataset, model); a model with none in a dataset is an error."""
    d, names = pd.factorize(datasets)
    counts = np.bincount(d * len(models) + m, minlength=len(names) * len(models)).reshape(len(names), len(models))
    if (counts == 0).any():
        i, j = (int(v) for v in np.argwhere(counts == 0)[0])
        there = [models[k] for k in np.flatnonzero(counts[i])]
        raise ValueError(
            f"model {models[j]!r} is missing from dataset {names[i]!r} in {origin.where} (no rows; "
            f"models there: {there})"
        )
    return counts, names


def sample_column(columns) -> str | None:
    """The column numbering repeated samples (:data:`SAMPLE_COLUMNS`), or None; two of them is an error."""
    found = [c for c in SAMPLE_COLUMNS if c in columns]
    if len(found) > 1:
        raise ValueError(f"columns {found[0]!r} and {found[1]!r} both number repeated samples; keep one")
    return found[0] if found else None


def _id_and_sample(table, sample, origin):
    """Each row's example key when rows repeat an item: its (id, sample number), as one value."""
    _present(table, sample, origin)
    return pd.MultiIndex.from_arrays([table["id"].to_numpy(), table[sample].to_numpy()]).to_numpy()


def _no_duplicates(table, origin, sample=None):
    """Refuse two rows of one (dataset, id, model) -- of one (dataset, id, sample, model) with a sample column."""
    key = ["dataset", "id", *([sample] if sample else []), "model"]
    dup = table.duplicated(key).to_numpy()
    if dup.any():
        pos = int(np.flatnonzero(dup)[0])
        same = np.logical_and.reduce([(table[k] == table[k].iloc[pos]).to_numpy() for k in key])
        earlier = int(np.flatnonzero(same)[0])
        what = f", {sample} {_plain(table[sample].iloc[pos])!r}" if sample else ""
        hint = (
            f"each ({', '.join(key)}) has one row"
            if sample
            else "each (dataset, id, model) has one row (repeated samples of an item, e.g. epochs, are told apart "
            f"by a column {' or '.join(map(repr, SAMPLE_COLUMNS))})"
        )
        raise ValueError(
            f"{origin.where}: two rows for model {table['model'].iloc[pos]!r} on dataset "
            f"{table['dataset'].iloc[pos]!r}, id {_plain(table['id'].iloc[pos])!r}{what}: at "
            f"{origin.locate(table, earlier)} and at {origin.locate(table, pos)}; {hint}"
        )


def _example_name(table, pos):
    """'id 7', or the example's place in its dataset when there is no ``id`` column."""
    if "id" in table.columns:
        return f"id {_plain(table['id'].iloc[pos])!r}"
    same = (table["dataset"].to_numpy()[:pos] == table["dataset"].iloc[pos]) & (
        table["model"].to_numpy()[:pos] == table["model"].iloc[pos]
    )
    return f"example {int(same.sum()) + 1} (matched by order: no 'id' column)"


def _check_agree(table, example, first, origin, column):
    """Refuse an example whose models give it two values of ``column`` (its split or label)."""
    col = table[column]
    values = col.to_numpy() if column == "label" and col.dtype.kind in "iub" else _class_text(col)
    ref = first[example]
    bad = values != values[ref]
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        p0 = int(ref[pos])
        model = table["model"]
        raise ValueError(
            f"{origin.where}: the models disagree on the {column} of dataset "
            f"{table['dataset'].iloc[pos]!r}, {_example_name(table, p0)}: {_plain(col.iloc[p0])!r} for "
            f"model {model.iloc[p0]!r} at {origin.locate(table, p0)}, {_plain(col.iloc[pos])!r} for model "
            f"{model.iloc[pos]!r} at {origin.locate(table, pos)}; an example has one {column}"
        )
