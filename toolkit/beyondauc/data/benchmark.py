"""Read what models said per example into a validated :class:`Benchmark`.

A benchmark holds, per model and example, a score (kind ``"scores"``: a
shared binary ``label``) or an answer's confidence and whether it is correct
(kind ``"answers"``).  It is read in the wide form (one row per example, one
column per model) or the long form (one row per example and model; the forms
are in :mod:`beyondauc.data.forms`), from a directory in the TRUE format or of
tables, one CSV, TSV, Parquet or JSON Lines file, or a
:class:`pandas.DataFrame` (the readers are in :mod:`beyondauc.data.readers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..utils.validation import check_number, check_option
from .forms import (
    sample_column,
)

__all__ = ["KINDS", "Benchmark"]

#: The kinds of benchmark: binary scores, or answers with their confidence (docs/user_guide/data.md).
KINDS = ("scores", "answers")


@dataclass(frozen=True, eq=False)
class Benchmark:
    """Validated per-example scores of several models on several datasets.

    Build one with :func:`load_benchmark`; the constructor trusts its inputs.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per example, grouped by dataset (rows of a dataset are
        contiguous, in the order of ``datasets``).  Columns ``dataset``,
        ``domain``, ``label`` (int8, 1 = positive), optional ``split`` and
        ``id``, then one float64 column per model.  Read by
        :func:`load_benchmark`, ``dataset``, ``domain`` and ``split`` are
        object columns whose rows refer to each name held once (not a
        string per row).
    models : tuple of str
        The model columns.
    datasets : tuple of str
        Dataset names in the order they were read.
    domains : dict
        Dataset name -> domain name (``None`` where unknown).
    source : str
        Where the data came from (a path or ``"<DataFrame>"``).
    kind : {"scores", "answers"}
        ``"scores"``: a shared binary ``label`` and one score per model.
        ``"answers"``: per model and example a ``confidence`` (the model
        columns) and whether the answer is correct (:meth:`labels` with
        ``model=``); the AUROC is then that of confidence for telling right
        from wrong, and selective answering uses the confidence as given.
    correct : ndarray of int8 or float64, shape (n_rows, n_models), or None
        For ``"answers"``: 1 where the model's answer is right (int8), or
        the answer's graded quality in [0, 1] (float64: a ROUGE or judge
        score).  :meth:`quality` reads it as it is; :meth:`labels` reads it
        as right/wrong, graded answers thresholded at ``correct_threshold``.
    correct_threshold : float, default=0.5
        Graded answers of quality at or above it count as right wherever a
        yes/no answer is needed (:meth:`labels`); 0/1 answers ignore it.

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark
    >>> df = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "label": [0, 1, 1, 0],
    ...                    "m1": [0.1, 0.9, 0.8, 0.3]})
    >>> bench = load_benchmark(df)
    >>> bench.models, bench.datasets
    (('m1',), ('a', 'b'))
    >>> bench.scores("m1", "b")
    array([0.8, 0.3])
    """

    frame: pd.DataFrame
    models: tuple[str, ...]
    datasets: tuple[str, ...]
    domains: dict[str, str | None]
    source: str = "<DataFrame>"
    kind: str = "scores"
    correct: np.ndarray | None = field(default=None, repr=False)
    correct_threshold: float = 0.5
    _offsets: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_option(self.kind, "kind", KINDS)
        if (self.kind == "answers") != (self.correct is not None):
            raise ValueError("`correct` must be given for kind='answers' and only then")
        counts = self.frame["dataset"].value_counts().reindex(list(self.datasets)).to_numpy()
        object.__setattr__(self, "_offsets", np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    # -- access -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        kind = ", kind='answers'" if self.kind == "answers" else ""
        return (
            f"Benchmark({len(self.datasets)} datasets, {len(self.models)} models, "
            f"{len(self.frame)} rows{kind}, source={self.source!r})"
        )

    @property
    def graded(self) -> bool:
        """True for answers whose ``correct`` is a graded quality in [0, 1] rather than 0/1."""
        return self.correct is not None and self.correct.dtype.kind == "f"

    def with_correct_threshold(self, threshold: float) -> Benchmark:
        """The same benchmark, graded answers counting as right at quality >= ``threshold``.

        Examples
        --------
        >>> import pandas as pd
        >>> from beyondauc import load_benchmark
        >>> long = pd.DataFrame({"dataset": "qa", "id": [1, 2, 3], "model": "a",
        ...                      "confidence": [0.9, 0.6, 0.8], "correct": [0.9, 0.4, 0.6]})
        >>> bench = load_benchmark(long)
        >>> bench.graded, bench.labels().tolist(), bench.with_correct_threshold(0.7).labels().tolist()
        (True, [1, 0, 1], [1, 0, 0])
        """
        threshold = check_number(threshold, "correct_threshold", low=0, high=1, low_open=True)
        return dataclasses.replace(self, correct_threshold=threshold)

    def quality(self, dataset: str | None = None, *, model: str | None = None) -> np.ndarray:
        """Return each answer's quality in [0, 1] as float64 (1/0 for right/wrong answers), as :meth:`labels` does.

        The loss of an answer is ``1 - quality``: what risk-coverage curves,
        AURC, E-AURC, AUGRC and PRR use.  A scores benchmark's quality is its 0/1 label.
        """
        if self.kind == "answers" and self.graded:
            y = self._correctness()[:, self.models.index(self._answer_model(model))]
            return y if dataset is None else y[self.rows_of(dataset)]
        return self.labels(dataset, model=model).astype(np.float64)

    def _answer_model(self, model):
        if model is None:
            if len(self.models) != 1:
                raise ValueError(
                    "an answers benchmark has a label per model (whether its answer is correct): "
                    f"give `model`, one of {list(self.models)}"
                )
            return self.models[0]
        self.check_model(model)
        return model

    @property
    def repeated(self) -> bool:
        """True when rows repeat items: a column numbering samples (``epoch`` or ``sample``) beside ``id``."""
        return "id" in self.frame.columns and sample_column(self.frame.columns) is not None

    def items(self) -> np.ndarray:
        """Each row's item (0 .. n_items - 1): rows sharing dataset and ``id`` when :attr:`repeated`, else the row.

        Every interval resamples items, so the repeated samples of one item
        (e.g. the epochs of an LLM run) are drawn together.

        Examples
        --------
        >>> import pandas as pd
        >>> from beyondauc import load_benchmark
        >>> long = pd.DataFrame({"dataset": "qa", "id": [1, 1, 2, 2], "epoch": [1, 2, 1, 2], "model": "a",
        ...                      "confidence": [0.9, 0.8, 0.6, 0.7], "correct": [1, 1, 0, 1]})
        >>> bench = load_benchmark(long)
        >>> bench.repeated, bench.items().tolist(), bench.item_counts().tolist()
        (True, [0, 0, 1, 1], [2])
        """
        if not self.repeated:
            return np.arange(len(self.frame), dtype=np.int64)
        key = pd.DataFrame({"d": self.dataset_codes(), "i": self.frame["id"].to_numpy()})
        return key.groupby(["d", "i"], sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)

    def item_counts(self) -> np.ndarray:
        """The number of items of each dataset, in ``datasets`` order (its rows when nothing repeats)."""
        if not self.repeated:
            return self.dataset_sizes()
        items = self.items()
        first = np.unique(items, return_index=True)[1]
        return np.bincount(self.dataset_codes()[first], minlength=len(self.datasets))

    @property
    def has_split(self) -> bool:
        """True when the data has a ``split`` (cohort) column."""
        return "split" in self.frame.columns

    def _correctness(self) -> np.ndarray:
        """``correct`` of an answers benchmark (rows by models); a scores benchmark has none."""
        if self.correct is None:
            raise ValueError(f"the benchmark {self.source!r} holds scores, not answers: it has no correctness")
        return self.correct

    def rows_of(self, dataset: str) -> slice:
        """Return the rows of ``dataset`` (its datasets' rows are consecutive), refusing an unknown name."""
        try:
            i = self.datasets.index(dataset)
        except ValueError:
            raise ValueError(f"`dataset` must be one of {list(self.datasets)}, got {dataset!r}") from None
        return slice(int(self._offsets[i]), int(self._offsets[i + 1]))

    def check_model(self, model: str) -> None:
        """Refuse, in one line naming the models there are, a model the benchmark does not have."""
        if model not in self.models:
            raise ValueError(f"`model` must be one of {list(self.models)}, got {model!r}")

    def labels(self, dataset: str | None = None, *, model: str | None = None) -> np.ndarray:
        """Return the 0/1 labels, of one dataset or of all rows.

        For ``kind="answers"`` the label is whether ``model``'s answer is
        correct, so ``model`` is needed unless the benchmark has one model;
        for ``"scores"`` every model shares the labels and ``model`` only
        has to be one of them.
        """
        if model is not None:
            self.check_model(model)
        if self.kind == "answers":
            y = self._correctness()[:, self.models.index(self._answer_model(model))]
            if self.graded:
                y = (y >= self.correct_threshold).astype(np.int8)
        else:
            y = self.frame["label"].to_numpy()
        return y if dataset is None else y[self.rows_of(dataset)]

    def model_view(self, model: str) -> Benchmark:
        """Return the benchmark of one model, its labels in the ``label`` column.

        For ``"scores"`` this is :meth:`subset`; for ``"answers"`` an
        answers benchmark of that model alone whose ``label`` column is
        whether its answer is correct, so every analysis of one model reads
        it as it reads scores.

        Examples
        --------
        >>> import pandas as pd
        >>> from beyondauc import load_benchmark
        >>> long = pd.DataFrame({"dataset": "qa", "id": [1, 2, 1, 2], "model": ["a", "a", "b", "b"],
        ...                      "confidence": [0.9, 0.6, 0.8, 0.7], "correct": [1, 0, 0, 1]})
        >>> view = load_benchmark(long).model_view("b")
        >>> view.models, view.labels().tolist()
        (('b',), [0, 1])
        """
        if self.kind == "scores":
            return self.subset(models=[model])
        self.check_model(model)
        j = self.models.index(model)
        keep = [c for c in self.frame.columns if c not in self.models]
        frame = self.frame[keep].assign(**{"label": self.labels(model=model), model: self.frame[model].to_numpy()})
        return Benchmark(
            frame,
            (model,),
            self.datasets,
            dict(self.domains),
            self.source,
            "answers",
            self._correctness()[:, [j]].copy(),
            self.correct_threshold,
        )

    def scores(self, model: str, dataset: str | None = None) -> np.ndarray:
        """Return the raw scores of ``model``, of one dataset or of all rows."""
        self.check_model(model)
        s = self.frame[model].to_numpy()
        return s if dataset is None else s[self.rows_of(dataset)]

    def dataset_codes(self) -> np.ndarray:
        """Return each row's dataset index into ``datasets`` (int64)."""
        return np.repeat(np.arange(len(self.datasets)), np.diff(self._offsets))

    def dataset_offsets(self) -> np.ndarray:
        """Return the row where each dataset starts, then the number of rows (int64, one more than datasets)."""
        return self._offsets.copy()

    def dataset_sizes(self) -> np.ndarray:
        """Return the number of rows of each dataset, in ``datasets`` order."""
        return np.diff(self._offsets)

    def domain_of(self, dataset: str) -> str | None:
        """Return the domain of ``dataset`` (None where unknown)."""
        self.rows_of(dataset)
        return self.domains.get(dataset)

    def subset(self, *, models: Sequence[str] | None = None, datasets: Sequence[str] | None = None) -> Benchmark:
        """Return a benchmark restricted to some models and/or datasets.

        The rows are the datasets' blocks (:attr:`frame` holds each dataset's
        rows together), so datasets kept in their order, or all of them, are
        one run of rows: the subset's frame then shares the columns it keeps
        with this one (pandas' copy-on-write copies a column only when one of
        the two frames writes to it), and a model's subset costs no copy of
        the data.
        """
        models = self.models if models is None else tuple(models)
        datasets = self.datasets if datasets is None else tuple(datasets)
        for m in models:
            self.check_model(m)
        blocks = [self.rows_of(d) for d in datasets]
        keep = [c for c in self.frame.columns if c not in self.models] + list(models)
        if all(a.stop == b.start for a, b in zip(blocks, blocks[1:])):  # one run of rows: a view
            rows: slice | np.ndarray = slice(blocks[0].start, blocks[-1].stop) if blocks else slice(0, 0)
        else:
            rows = np.concatenate([np.arange(b.start, b.stop) for b in blocks])
        frame = self.frame[keep].iloc[rows]
        correct = None
        if self.kind == "answers":
            correct = self._correctness()[rows][:, [self.models.index(m) for m in models]]
        return Benchmark(
            frame.reset_index(drop=True),
            models,
            datasets,
            {d: self.domains.get(d) for d in datasets},
            self.source,
            self.kind,
            correct,
            self.correct_threshold,
        )

    def summary(self) -> pd.DataFrame:
        """Return one row per dataset: domain, examples, positives, positive rate.

        For ``kind="answers"`` a positive is a correct answer: ``n_positive``
        is the mean over models of the correct answers (rounded) and
        ``positive_rate`` the mean accuracy.
        """
        codes = self.dataset_codes()
        if self.kind == "answers":
            per_model = np.stack(
                [np.bincount(codes, weights=self.labels(model=m), minlength=len(self.datasets)) for m in self.models]
            )
            positives = per_model.mean(axis=0)
        else:
            positives = np.bincount(codes, weights=self.labels(), minlength=len(self.datasets))
        out = pd.DataFrame(
            {
                "dataset": list(self.datasets),
                "domain": [self.domains.get(d) for d in self.datasets],
                "n": self.dataset_sizes(),
                "n_positive": np.rint(positives).astype(int),
            }
        )
        out["positive_rate"] = positives / out["n"]
        if self.repeated:  # repeated samples: the rows are samples of fewer items
            out.insert(out.columns.get_loc("n"), "n_items", self.item_counts())
        if self.has_split:
            splits = self.frame.groupby("dataset", sort=False)["split"].agg(
                lambda s: ",".join(sorted(map(str, s.unique())))
            )
            out["splits"] = splits.reindex(list(self.datasets)).to_numpy()
        return out
