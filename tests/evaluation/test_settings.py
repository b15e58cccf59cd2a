"""The evaluation's parameters as one frozen, typed object: the same names, order, defaults and checks as the table."""

from __future__ import annotations

import dataclasses
import typing

import pytest

import beyondauc as ba
from beyondauc.evaluation import EVALUATION_PARAMETERS, PARAMETERS, check_evaluation_parameters
from beyondauc.evaluation.settings import EvaluationParameters, one_dataset_defaults, resolve_auto


def test_the_fields_are_the_tables_evaluation_parameters_in_order_with_its_defaults():
    fields = dataclasses.fields(EvaluationParameters)
    assert [f.name for f in fields] == list(EVALUATION_PARAMETERS)
    assert {f.name: f.default for f in fields} == EVALUATION_PARAMETERS


def _accepts(hint, value):
    """Whether ``value`` is of the annotated type ``hint`` (unions, containers by their origin)."""
    if hint is typing.Any:
        return True
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, type(int | None)) else (hint,)
    return any(value is None if o is type(None) else isinstance(value, typing.get_origin(o) or o) for o in options)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {
            "models": "svm,knn",
            "datasets": ["wine"],
            "domains": {"wine": "a"},
            "computation_score": 2,
            "sigma_max": 1.5,
            "cells": 64,
            "class_weight": "balanced",
            "target_risks": [0.1],
            "random_state": None,
        },
    ],
    ids=["defaults", "given"],
)
def test_every_checked_value_has_its_fields_type(values):
    params = EvaluationParameters.checked(values)
    hints = typing.get_type_hints(EvaluationParameters)
    wrong = {name: (value, hints[name]) for name, value in params.as_dict().items() if not _accepts(hints[name], value)}
    assert not wrong


def test_it_checks_as_the_table_does_and_reads_as_a_mapping():
    given = {"tolerance": 0.8, "models": "svm,knn", "n_bootstrap": 0}
    params = EvaluationParameters.checked(given)
    assert params.as_dict() == check_evaluation_parameters(given)
    assert dict(params) == params.as_dict() and params["tolerance"] == params.tolerance == 0.8
    assert "tolerance" in params and "model" not in params and len(params) == len(EVALUATION_PARAMETERS)
    with pytest.raises(KeyError):
        params["model"]  # a notebook's own parameter, not an evaluation's
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.tolerance = 0.5  # type: ignore[misc]
    assert params.replaced(tolerance=0.7).tolerance == 0.7 and params.tolerance == 0.8
    with pytest.raises(ValueError, match="`tolerance` must be a number in"):
        params.replaced(tolerance=7)
    with pytest.raises(ValueError, match="unknown parameter 'tolerence'; did you mean 'tolerance'"):
        EvaluationParameters.checked({"tolerence": 0.8})
    assert repr(params) == "EvaluationParameters(models=['svm', 'knn'], tolerance=0.8, n_bootstrap=0)"


def test_auto_and_one_dataset_fallbacks():
    answers = ba.load_demo(kind="answers")
    scores = ba.load_demo()
    params = EvaluationParameters.checked({})
    assert resolve_auto(params, answers).selective_protocol == "none"
    assert resolve_auto(params, scores).selective_protocol == "indata"
    one = scores.subset(datasets=["wine"])
    used, replaced = one_dataset_defaults(params, {}, one)
    assert used.protocol == "indata" and replaced["protocol"]["default"] == PARAMETERS["protocol"].default
    kept, replaced = one_dataset_defaults(params.replaced(protocol="xdomain"), {"protocol": "xdomain"}, one)
    assert kept.protocol == "xdomain" and "protocol" not in replaced
    assert one_dataset_defaults(params, {}, scores) == (params, {})


def test_the_evaluation_stores_the_checked_parameters():
    ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "knn"], n_bootstrap=0, noise_repeats=2)
    expected = EvaluationParameters.checked(
        {
            "datasets": ["wine", "diabetes"],
            "models": ["svm", "knn"],
            "n_bootstrap": 0,
            "noise_repeats": 2,
            "selective_protocol": "indata",
        }
    ).as_dict()
    assert ev.parameters == {k: list(v) if isinstance(v, tuple) else v for k, v in expected.items()}
