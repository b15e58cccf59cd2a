"""Benchmarks from fitted scikit-learn classifiers, and the scores or answers of one on (X, y).

Scores are taken as scikit-learn's displays take them (``RocCurveDisplay.from_estimator``): the
positive class's column of ``predict_proba``, else ``decision_function`` (negated when the positive
class is the first of ``classes_``).  The answers of a classifier of any number of classes: the
confidence is its largest ``predict_proba``, and the answer is right when that class is the true one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..utils.validation import check_option
from .benchmark import Benchmark
from .load import load_benchmark

__all__ = ["estimator_answers", "estimator_scores", "from_estimators"]

#: How a binary classifier's score is read: "auto" is predict_proba, else decision_function.
RESPONSE_METHODS = ("auto", "predict_proba", "decision_function")


def estimator_scores(
    estimator: Any, X: Any, y: Any, *, response_method: str = "auto", pos_label: Any = None, name: str = "estimator"
) -> tuple[np.ndarray, np.ndarray]:
    """Labels (0/1) and scores of a fitted binary classifier on ``(X, y)``.

    Parameters
    ----------
    estimator : fitted scikit-learn classifier with two classes
    X : array-like or DataFrame of shape (n, n_features)
    y : array-like of shape (n,)
        True classes, each one of ``estimator.classes_``.
    response_method : {"auto", "predict_proba", "decision_function"}, default="auto"
        "auto" uses ``predict_proba`` where the estimator has it, else ``decision_function``.
    pos_label : scalar, optional
        The positive class; default the second of ``estimator.classes_``, as scikit-learn.
    name : str, default="estimator"
        How messages name the estimator.

    Returns
    -------
    labels : ndarray of int8, shape (n,)
        1 where ``y`` is ``pos_label``.
    scores : ndarray of float64, shape (n,)
        Higher means more likely ``pos_label``.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], ["no", "no", "yes", "yes"]
    >>> labels, scores = estimator_scores(LogisticRegression().fit(X, y), X, y)
    >>> labels.tolist(), bool(scores[3] > scores[0])
    ([0, 0, 1, 1], True)
    """
    check_option(response_method, "response_method", RESPONSE_METHODS)
    classes = _classes(estimator, name)
    if len(classes) != 2:
        raise ValueError(
            f"{name} has {len(classes)} classes {classes.tolist()}: scores need a binary classifier "
            '(the answers of any classifier: estimator_answers, or kind="answers")'
        )
    pos = classes[1] if pos_label is None else pos_label
    idx = np.flatnonzero(classes == pos)
    if not len(idx):
        raise ValueError(f"`pos_label` must be one of the classes of {name} {classes.tolist()}, got {pos_label!r}")
    y = _check_y(y, X, classes, name)
    method = response_method
    if method == "auto":
        method = "predict_proba" if hasattr(estimator, "predict_proba") else "decision_function"
    if not hasattr(estimator, method):
        raise ValueError(f"{name} ({type(estimator).__name__}) has no {method}")
    if method == "predict_proba":
        scores = np.asarray(estimator.predict_proba(X))[:, idx[0]]
    else:
        scores = np.asarray(estimator.decision_function(X)).reshape(-1)
        scores = scores if idx[0] == 1 else -scores
    return (y == pos).astype(np.int8), scores.astype(np.float64)


def estimator_answers(estimator: Any, X: Any, y: Any, *, name: str = "estimator") -> tuple[np.ndarray, np.ndarray]:
    """Confidence and correctness of a fitted classifier's answers on ``(X, y)``, any number of classes.

    The answer is the most probable class of ``predict_proba`` (ties: the
    first of ``classes_``, as ``predict`` does), the confidence its probability.

    Parameters
    ----------
    estimator : fitted scikit-learn classifier with ``predict_proba``
    X : array-like or DataFrame of shape (n, n_features)
    y : array-like of shape (n,)
        True classes, each one of ``estimator.classes_``.
    name : str, default="estimator"
        How messages name the estimator.

    Returns
    -------
    confidence : ndarray of float64, shape (n,)
    correct : ndarray of int8, shape (n,)
        1 where the answer is ``y``.

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = [[0], [1], [2], [3]], ["a", "b", "c", "c"]
    >>> confidence, correct = estimator_answers(DecisionTreeClassifier().fit(X, y), X, ["a", "b", "c", "a"])
    >>> confidence.tolist(), correct.tolist()
    ([1.0, 1.0, 1.0, 1.0], [1, 1, 1, 0])
    """
    classes = _classes(estimator, name)
    if not hasattr(estimator, "predict_proba"):
        raise ValueError(
            f"{name} ({type(estimator).__name__}) has no predict_proba: an answer's confidence is its "
            "largest class probability"
        )
    y = _check_y(y, X, classes, name)
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    k = proba.argmax(axis=1)
    return proba[np.arange(len(k)), k], (classes[k] == y).astype(np.int8)


def from_estimators(
    estimators: Mapping[str, Any],
    data: Mapping[str, Any],
    *,
    kind: str | None = None,
    response_method: str = "auto",
    pos_label: Any = None,
    domains: Mapping[str, str] | None = None,
) -> Benchmark:
    """A :class:`~beyondauc.Benchmark` of fitted classifiers on (X, y) per dataset.

    Parameters
    ----------
    estimators : mapping of str to estimator
        Model name -> a fitted classifier, or a mapping dataset -> the
        classifier fitted for that dataset (when datasets differ in features).
    data : mapping of str to tuple or mapping
        Dataset name -> ``(X, y)``; ``(X_val, y_val, X_test, y_test)`` for a
        validation and a test cohort (``split`` "val" and "test", as the
        diagnostics expect); or a mapping split -> ``(X, y)``.  Either every
        dataset has splits or none has.
    kind : {"scores", "answers"}, optional
        Default: "scores" when every classifier is binary (:func:`estimator_scores`),
        else "answers" (:func:`estimator_answers`).
    response_method : {"auto", "predict_proba", "decision_function"}, default="auto"
        How binary scores are read (kind "scores").
    pos_label : scalar, optional
        The positive class (kind "scores"); default the second of ``classes_``.
    domains : mapping, optional
        Dataset -> domain, as for :func:`~beyondauc.load_benchmark`.

    Returns
    -------
    Benchmark
        Its ``source`` is ``"<estimators>"``; examples in the order given.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> est = LogisticRegression(max_iter=500).fit(X[::2], y[::2])
    >>> bench = from_estimators({"logreg": est}, {"iris": (X[1::2], y[1::2])})
    >>> bench.kind, bench.models, len(bench)
    ('answers', ('logreg',), 75)
    """
    if kind is not None:
        check_option(kind, "kind", ("scores", "answers"))
    check_option(response_method, "response_method", RESPONSE_METHODS)
    cohorts = _cohorts(data)
    per_dataset = _estimators_per_dataset(estimators, list(cohorts))
    if kind is None:
        binary = all(
            len(_classes(e, f"estimator {m!r}")) == 2 for m, ests in per_dataset.items() for e in ests.values()
        )
        kind = "scores" if binary else "answers"
    parts = []
    for dataset, splits in cohorts.items():
        for split, X, y in splits:
            for model, ests in per_dataset.items():
                name = f"estimator {model!r} on dataset {dataset!r}" + (f" ({split})" if split is not None else "")
                if kind == "scores":
                    label, score = estimator_scores(
                        ests[dataset], X, y, response_method=response_method, pos_label=pos_label, name=name
                    )
                    values = {"score": score, "label": label}
                else:
                    confidence, correct = estimator_answers(ests[dataset], X, y, name=name)
                    values = {"confidence": confidence, "correct": correct}
                split_column = {} if split is None else {"split": split}
                parts.append(pd.DataFrame({"dataset": dataset, **split_column, "model": model, **values}))
    bench = load_benchmark(pd.concat(parts, ignore_index=True), domains=domains)
    return Benchmark(
        bench.frame, bench.models, bench.datasets, bench.domains, "<estimators>", bench.kind, bench.correct
    )


def _classes(estimator, name):
    """The fitted classifier's ``classes_``; an estimator that is no fitted classifier is an error."""
    from sklearn.exceptions import NotFittedError  # here: scikit-learn loads only when estimators are given
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise ValueError(f"{name} ({type(estimator).__name__}) is not fitted: fit it first") from None
    except TypeError as exc:  # not an estimator at all
        raise ValueError(
            f"{name} must be a fitted scikit-learn classifier, got {type(estimator).__name__} ({exc})"
        ) from None
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        raise ValueError(f"{name} ({type(estimator).__name__}) is not a classifier: it has no classes_")
    return np.asarray(classes)


def _check_y(y, X, classes, name):
    """``y`` as a 1-D array, one value per row of ``X``, each one of ``classes``."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y for {name} must be 1-D, got shape {y.shape}")
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if len(y) != n:
        raise ValueError(f"y for {name} has {len(y)} values for {n} rows of X")
    unknown = ~np.isin(y, classes)
    if unknown.any():
        raise ValueError(
            f"y for {name} holds {y[np.flatnonzero(unknown)[0]].item()!r}, not one of the estimator's "
            f"classes {classes.tolist()}"
        )
    return y


def _cohorts(data):
    """Dataset -> [(split or None, X, y)]: every dataset with splits, or none."""
    if not isinstance(data, Mapping) or not data:
        raise ValueError(f"`data` must be a non-empty mapping dataset -> (X, y), got {type(data).__name__}")
    cohorts = {}
    for dataset, value in data.items():
        if isinstance(value, Mapping):
            cohorts[str(dataset)] = [(str(s), *_pair(xy, f"`data[{dataset!r}][{s!r}]`")) for s, xy in value.items()]
        elif isinstance(value, (tuple, list)) and len(value) == 4:
            cohorts[str(dataset)] = [("val", value[0], value[1]), ("test", value[2], value[3])]
        else:
            cohorts[str(dataset)] = [(None, *_pair(value, f"`data[{dataset!r}]`"))]
    with_splits = {d for d, parts in cohorts.items() if parts[0][0] is not None}
    if with_splits and len(with_splits) < len(cohorts):
        raise ValueError(
            f"`data`: datasets {sorted(with_splits)} have splits and "
            f"{sorted(set(cohorts) - with_splits)} none; give every dataset splits, or none"
        )
    return cohorts


def _pair(value, what):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(
            f"{what} must be (X, y), (X_val, y_val, X_test, y_test) or a mapping split -> (X, y), got "
            f"{type(value).__name__}" + (f" of {len(value)}" if isinstance(value, (tuple, list)) else "")
        )
    return value


def _estimators_per_dataset(estimators, datasets):
    """Model -> {dataset: estimator}: one estimator for every dataset, or one per dataset."""
    if not isinstance(estimators, Mapping) or not estimators:
        raise ValueError(
            "`estimators` must be a non-empty mapping model name -> fitted estimator (or -> a mapping "
            f"dataset -> fitted estimator), got {type(estimators).__name__}"
        )
    out = {}
    for model, est in estimators.items():
        if isinstance(est, Mapping):
            missing = [d for d in datasets if d not in est]
            if missing:
                raise ValueError(f"`estimators[{model!r}]` has no estimator for dataset(s) {missing}")
            out[str(model)] = {d: est[d] for d in datasets}
        else:
            out[str(model)] = dict.fromkeys(datasets, est)
    return out
