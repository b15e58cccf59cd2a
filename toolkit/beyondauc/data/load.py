"""Loading a benchmark: a source (a file, a folder, a DataFrame, a harness's logs) read, checked and
turned into a :class:`~beyondauc.data.benchmark.Benchmark`, step by step.

:func:`load_benchmark` reads the source with the reader of its form
(:mod:`beyondauc.data.readers`, :mod:`beyondauc.data.forms`,
:mod:`beyondauc.data.logs`), then checks the columns, converts the scores,
selects the datasets, binarizes the labels and keeps the finite scores, each
check once, each refusal one line naming the file, column or line.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..utils.formatting import quoted_name
from ..utils.validation import binarize_labels, check_option
from .domains import dataset_domains
from .forms import (
    WIDE,
    long_ignored,
    long_models,
    long_to_wide,
    probabilities_hint,
    recognise_form,
    sample_column,
)
from .notices import warn_ignored, warn_single_answer_class, warn_single_class
from .readers import (
    BOOKKEEPING,
    RESERVED,
    check_names,
    closest,
    model_columns,
    read_domains,
    release_arrow_memory,
)
from .sources import SourceRequest, read_source

__all__ = ["Benchmark", "load_benchmark"]

#: The kinds of benchmark: binary scores, or answers with their confidence (docs/user_guide/data.md).
from .benchmark import Benchmark

__all__ = ["domains_argument", "explain_missing_models", "load_benchmark"]


def load_benchmark(
    source: str | os.PathLike | pd.DataFrame,
    *,
    domains: Mapping[str, str] | str | os.PathLike | None = None,
    pos_label: Any = None,
    models: Sequence[str] | str | None = None,
    datasets: Sequence[str] | str | None = None,
    nan_policy: str = "raise",
    log_options: Mapping[str, Any] | None = None,
) -> Benchmark:
    """Read what models said per example into a validated :class:`Benchmark`.

    The columns say the form and the kind (:mod:`beyondauc.data.forms`):
    wide (``dataset``, ``label``, one numeric column per model) gives
    scores; long (one row per example and model: ``dataset``, ``model``, then
    ``score`` + ``label``, or ``confidence`` + ``correct``, or ``prediction``
    + ``label`` + ``confidence``, or class probabilities + ``label``) gives
    scores or answers.  A table that fits no form, or two, is refused.

    Parameters
    ----------
    source : str, path or pandas.DataFrame
        A directory in the TRUE format (CSV files without ``dataset`` or
        ``model`` columns, one per dataset; the dataset name is the file stem
        without ``_dev_true_scores`` / ``_true_scores``), another directory
        (its CSV, TSV, Parquet and JSON Lines files read as one table), one
        such file (CSV gzipped or not, told by its bytes; JSON Lines as
        ``.jsonl``, ``.ndjson``, also gzipped), or a DataFrame.  A file or
        frame without a ``dataset`` column is one dataset named after the
        file stem (``"data"`` for a frame).
    domains : mapping or path, optional
        Dataset -> domain.  Takes precedence over a ``domain`` column, which
        takes precedence over the built-in TRUE domains (:data:`TRUE_DOMAINS`).
        A path is read with :func:`read_domains`.
    pos_label : scalar, optional
        The positive label.  Needed unless labels are {0, 1}, {-1, 1} or booleans.
    models : sequence of str, optional
        Models to use: columns of the wide form (default: every numeric
        column other than ``label``, ``id``, ``split``, ``dataset`` and
        ``domain``), values of the long form's ``model`` column (default: all,
        in order of appearance).
    datasets : sequence of str, optional
        Keep only these datasets, in this order.
    nan_policy : {"raise", "drop"}, default="raise"
        What to do with NaN/inf scores (confidences, class probabilities):
        raise an error naming the file, column and row, or drop those
        examples, for every model, with a warning.
    log_options : mapping, optional
        How to read the LLM harnesses' logs (lm-evaluation-harness sample
        files, Inspect AI ``.eval``/``.json`` logs, HELM run folders), which
        are recognised from the files themselves (:mod:`beyondauc.data.logs`):
        ``correct_metric``, ``scorer``, ``confidence_field``.

    Returns
    -------
    Benchmark

    Raises
    ------
    ValueError
        On a table of no form, a missing ``label`` column, non-binary labels
        (kind "scores"), NaN/inf scores, duplicate columns or (dataset, id,
        model) rows, an empty dataset, a model missing from a dataset or an
        example, models disagreeing on an example's label or split, a class
        probability outside [0, 1], or an unknown model/dataset name.  A
        dataset with a single class (for answers: a model all right or all
        wrong on it) only warns: metrics that need both classes are NaN there.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dataset": ["x"] * 4 + ["y"] * 4,
    ...                    "label": ["yes", "no"] * 4,
    ...                    "bleu": [0.9, 0.2, 0.7, 0.4, 0.3, 0.1, 0.8, 0.6]})
    >>> bench = load_benchmark(df, pos_label="yes", domains={"x": "news", "y": "news"})
    >>> bench.labels("x")
    array([1, 0, 1, 0], dtype=int8)
    >>> bench.summary()[["dataset", "domain", "n", "n_positive"]]
      dataset domain  n  n_positive
    0       x   news  4           2
    1       y   news  4           2

    The long form of answers, one row per example and model:

    >>> long = pd.DataFrame({"dataset": "qa", "id": [1, 2, 1, 2], "model": ["a", "a", "b", "b"],
    ...                      "confidence": [0.9, 0.6, 0.8, 0.7], "correct": [True, False, False, True]})
    >>> answers = load_benchmark(long)
    >>> answers.kind, answers.models, answers.labels(model="a").tolist()
    ('answers', ('a', 'b'), [1, 0])
    """
    check_option(nan_policy, "nan_policy", ("raise", "drop"))
    models = _models_argument(models)
    domains = domains_argument(domains)
    ignored: dict[str, str] = {}  # columns left out (column -> where): listed in one warning once the data is read
    frame, model_cols, origin, form = _read_source(source, models, ignored, log_options)
    if form.long:
        frame, model_cols = long_models(frame, models, origin)
    else:
        _check_columns(frame, model_cols, origin.where, ignored)
        _convert_model_columns(frame, model_cols, origin)
    frame, order = _select_datasets(frame, datasets, origin)
    if form.kind == "scores":
        _binarize_label_column(frame, pos_label, origin)
    correct = None
    if form.long:  # one row per example and model, matched into one row per example
        rows, scores, correct = long_to_wide(frame, form, model_cols, origin, nan_policy)
    else:
        rows, scores = _finite_scores(frame, model_cols, nan_policy, origin)
    _check_datasets_have_rows(rows, order, nan_policy, origin.where)
    dom = dataset_domains(frame if form.long else rows, order, domains, origin)
    bench = _benchmark_of(rows, scores, model_cols, order, dom, origin.source, correct)
    del frame, rows, scores
    release_arrow_memory()  # what reading a file took and the benchmark does not hold
    if correct is None:
        warn_single_class(bench)
    else:
        warn_single_answer_class(bench)
    warn_ignored(ignored, origin.where, form)
    return bench


def explain_missing_models(source: str | os.PathLike | pd.DataFrame, names: Sequence[str]) -> None:
    """Raise the reader's own error for columns ``names`` of ``source`` asked for as models but not loaded.

    A column that is there but not numeric (a text column) gets the error
    naming its first value that is no number and where it is; a column that
    is not there, the error listing the columns.  It reads the source again:
    call it only on the way to an error.  Nothing is raised for the long form
    (its models are values of the ``model`` column) or when every name loads.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dataset": ["a"] * 4, "label": [0, 1, 0, 1], "m": [0.1, 0.9, 0.2, 0.8],
    ...                    "prompt": ["hi", "yo", "hey", "ok"]})
    >>> explain_missing_models(df, ["prompt"])
    Traceback (most recent call last):
    ...
    ValueError: model column 'prompt' must be numeric: 'hi' at DataFrame row 0
    """
    frame, model_cols, origin, form = _read_source(source, list(names), {})
    if not form.long:
        _convert_model_columns(frame, model_cols, origin)


# -- the steps of load_benchmark -----------------------------------------------
# Each step is called by load_benchmark itself: its warnings (stacklevel=3) point at load_benchmark's caller.


def _models_argument(models):
    """``models`` as a non-empty list (or None)."""
    if models is not None:
        if isinstance(models, str):
            models = [models]
        models = list(models)
        if not models:
            raise ValueError("`models` must name at least one model column, got an empty list")
    return models


def domains_argument(domains):
    """``domains`` as a mapping (a path read with :func:`read_domains`), or None."""
    if isinstance(domains, (str, Path)):
        domains = read_domains(domains)
    elif domains is not None and not isinstance(domains, Mapping):
        raise ValueError(f"`domains` must be a mapping dataset -> domain or a path, got {type(domains).__name__}")
    return domains


def _read_source(source, models, ignored, log_options=None):
    """(rows, model columns (None in the long form), origin, form) of a source, read by its reader
    (:data:`~beyondauc.data.sources.SOURCES`); the columns say the form
    (:func:`~beyondauc.data.forms.recognise_form`), and the wide form's model columns are its numeric ones
    (or ``models``) unless the reader knows them (a TRUE folder).
    """
    rows = read_source(source, SourceRequest(models=models, ignored=ignored, log_options=log_options))
    frame, origin = rows.frame, rows.origin
    if rows.model_columns is not None:
        return frame, rows.model_columns, origin, WIDE
    form = recognise_form(frame.columns, origin.where)
    if form.long:
        ignored.update(dict.fromkeys(long_ignored(frame.columns, form), origin.where))
        return frame, None, origin, form
    return frame, model_columns(frame, models, origin.where, ignored), origin, form


def _check_columns(frame, model_cols, where, ignored):
    """Refuse data without a 'label' column or model columns, and model names that cannot be shown."""
    if "label" not in frame.columns:
        columns = [c for c in frame.columns if c not in BOOKKEEPING]
        raise ValueError(f"{where}: missing the 'label' column{closest('label', columns)}; columns are {columns}")
    if not model_cols:
        text = f"; not numeric: {', '.join(map(quoted_name, ignored))}" if ignored else ""
        raise ValueError(f"{where}: no numeric model columns found (columns other than {list(RESERVED)}){text}")
    check_names(model_cols, "model column", where)


def _convert_model_columns(frame, model_cols, origin):
    """Make the model columns that are not numbers numeric, in place; a value that is no number is an error."""
    converted = {}
    for m in model_cols:
        if frame[m].dtype.kind not in "iuf" or frame[m].dtype.kind == "b":
            values = pd.to_numeric(frame[m], errors="coerce")
            bad = values.isna() & frame[m].notna()
            if bad.any():
                pos = int(np.flatnonzero(bad.to_numpy())[0])
                raise ValueError(
                    f"model column {m!r} must be numeric: {frame[m].iloc[pos]!r} at {origin.locate(frame, pos)}"
                )
            converted[m] = values
    if converted:  # at once (column by column fragments a frame of many models); by position, not index
        frame[list(converted)] = np.column_stack([v.to_numpy(dtype=np.float64) for v in converted.values()])


def _select_datasets(frame, datasets, origin):
    """(the rows of the datasets asked for, the datasets' order); dataset names checked and made text."""
    where = origin.where
    missing = pd.isna(frame["dataset"]).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(f"column 'dataset' has a missing value at {origin.locate(frame, pos)}")
    frame["dataset"] = frame["dataset"].astype(str)
    first = frame["dataset"].drop_duplicates()
    check_names(
        first,
        "column 'dataset' value",
        where,
        lambda d: origin.locate(frame, int(np.flatnonzero((frame["dataset"] == d).to_numpy())[0])),
    )
    if datasets is not None:
        datasets = [datasets] if isinstance(datasets, str) else list(datasets)
        present = list(pd.unique(frame["dataset"]))
        unknown = [d for d in datasets if d not in present]
        if unknown:
            raise ValueError(f"`datasets` names {unknown}, not in {where}; datasets are {present}")
        frame = frame[frame["dataset"].isin(datasets)]
    order = list(pd.unique(frame["dataset"])) if datasets is None else datasets
    return frame, order


def _binarize_label_column(frame, pos_label, origin):
    """Make the 'label' column 0/1, in place; a missing or non-binary label is an error."""
    labels = frame["label"].to_numpy()
    missing = pd.isna(frame["label"]).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(f"column 'label' has a missing value at {origin.locate(frame, pos)}")
    try:
        y = binarize_labels(labels, "label", pos_label=pos_label, where=origin.where)
    except ValueError as exc:
        raise ValueError(str(exc).replace("`label`", "column 'label'") + probabilities_hint(frame.columns)) from None
    frame["label"] = y


def _finite_scores(frame, model_cols, nan_policy, origin):
    """(frame, scores as float64) with every score finite: NaN/inf is an error, or its rows dropped with a warning."""
    where = origin.where
    scores = frame[model_cols].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(scores)
    if not bad.any():
        return frame, scores
    _check_models_present(frame, model_cols, bad, where)
    if nan_policy == "raise":
        rows, cols = np.nonzero(bad)
        pos, j = int(rows[0]), int(cols[0])
        raise ValueError(
            f"model column {model_cols[j]!r} has a non-finite score ({scores[pos, j]}) at "
            f"{origin.locate(frame, pos)}; {int(bad.sum())} such value(s) in all. Fix the data or pass "
            'nan_policy="drop"'
        )
    drop = bad.any(axis=1)
    per_col = {m: int(bad[:, j].sum()) for j, m in enumerate(model_cols) if bad[:, j].any()}
    warnings.warn(
        f"dropped {int(drop.sum())} row(s) with NaN/inf scores from {where}: {per_col}", UserWarning, stacklevel=3
    )
    return frame.loc[~drop], scores[~drop]


def _check_models_present(frame, model_cols, bad, where):
    """Refuse a model with no finite score on a whole dataset: it is missing from that dataset."""
    dset = frame["dataset"].to_numpy()
    for j, m in enumerate(model_cols):
        per_ds = pd.Series(bad[:, j]).groupby(dset).all()
        all_bad = per_ds[per_ds].index.tolist()
        if all_bad:
            raise ValueError(f"model {m!r} is missing from dataset(s) {all_bad} (no scores) in {where}")


def _check_datasets_have_rows(frame, order, nan_policy, where):
    """Refuse data with no rows, or a dataset with none (left)."""
    if not order:
        raise ValueError(f"{where} has no rows")
    sizes = frame["dataset"].value_counts()
    for d in order:
        if sizes.get(d, 0) == 0:
            why = ' left after nan_policy="drop" removed rows with NaN/inf scores' if nan_policy == "drop" else ""
            raise ValueError(f"dataset {d!r} in {where} has no rows{why}")


def _benchmark_of(frame, scores, model_cols, order, dom, src, correct=None):
    """The Benchmark of the checked rows: its columns built at once, rows grouped by dataset in ``order``.

    With ``correct`` (one 0/1 column per model) an answers benchmark: no ``label`` column, the scores are the
    confidences.  ``dataset``, ``domain`` and ``split`` hold each name once, every row referring to it (text
    stored per row costs about 60 bytes a row each time it is read as an array); the model columns are the
    columns of ``scores``, not copied again; rows already grouped in ``order`` are not copied at all.
    """
    code = pd.Categorical(frame["dataset"], categories=order).codes
    perm = None if (code[1:] >= code[:-1]).all() else np.argsort(code, kind="stable")
    code = code if perm is None else code[perm]

    def take(values):
        return values if perm is None else values[perm]

    domains = list(dict.fromkeys(v for v in dom.values() if v is not None))
    dom_code = np.array([domains.index(dom[d]) if dom[d] is not None else -1 for d in order], dtype=np.int64)
    columns = {
        "dataset": _text_column(code, order),
        "domain": _text_column(dom_code[code] if len(order) else code, domains),
    }
    if correct is None:
        columns["label"] = take(frame["label"].to_numpy().astype(np.int8))
    if "split" in frame.columns:
        split = pd.Categorical(frame["split"].astype(str))
        columns["split"] = _text_column(take(split.codes), list(split.categories))
    if "id" in frame.columns:
        columns["id"] = take(frame["id"].to_numpy())
    sample = sample_column(frame.columns)
    if sample is not None:  # repeated samples of an item, numbered
        columns[sample] = take(frame[sample].to_numpy())
    scores = np.asfortranarray(take(scores))  # each model's column contiguous
    columns.update((str(m), scores[:, j]) for j, m in enumerate(model_cols))
    out = pd.DataFrame(columns, copy=False)  # at once: column by column fragments a frame of many models
    models = tuple(str(m) for m in model_cols)
    if correct is None:
        return Benchmark(out, models, tuple(order), dom, src)
    return Benchmark(out, models, tuple(order), dom, src, "answers", take(correct))


def _text_column(codes, names):
    """The column of ``names[code]`` per row (-1: missing, NaN) as Python objects: every row refers to one of
    the few ``names`` (8 bytes a row), and reading it back as an array is that array, not a string per row."""
    values = np.array([*names, np.nan], dtype=object)[np.asarray(codes, dtype=np.int64)]
    return pd.Series(values, dtype=object, copy=False)
