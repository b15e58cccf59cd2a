"""The parameters of one evaluation as one frozen, typed object, made from the parameter table once.

:func:`~beyondauc.evaluate` checks the keywords it was given against the table
(:mod:`beyondauc.evaluation.parameters`) once, at the boundary, and every stage
after that takes an :class:`EvaluationParameters`: attributes with types, no
strings to look up, nothing to change by mistake (a stage that needs another
value makes a new object with :meth:`EvaluationParameters.replaced`, checked
again).  The evaluation stores it as a plain dict (:meth:`~EvaluationParameters.as_dict`),
the form its manifest and its readers use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .parameters import EVALUATION_PARAMETERS, PARAMETERS, check_evaluation_parameters

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark

__all__ = ["EvaluationParameters", "one_dataset_defaults", "resolve_auto"]


def _default(name: str) -> Any:
    return dataclasses.field(default=PARAMETERS[name].default)


@dataclass(frozen=True)
class EvaluationParameters(Mapping[str, Any]):
    """Every parameter of an evaluation, checked and complete (defaults filled in).

    The fields are the evaluation parameters of the parameter table, in its
    order and with its defaults (a test keeps them equal); see the table for
    what each means.  Make one with :meth:`checked`; it reads as a mapping too
    (``params["tolerance"]``), so the views that read a stored evaluation's
    parameters take either.

    Examples
    --------
    >>> from beyondauc.evaluation.settings import EvaluationParameters
    >>> params = EvaluationParameters.checked({"tolerance": 0.8, "models": "svm,knn"})
    >>> params.tolerance, params.models, params.protocol
    (0.8, ['svm', 'knn'], 'xdomain')
    >>> params.replaced(n_bootstrap=0).n_bootstrap
    0
    >>> EvaluationParameters.checked({"tolerance": 1.5})
    Traceback (most recent call last):
    ...
    ValueError: `tolerance` must be a number in (0, 1], got 1.5
    """

    models: list[str] | None = _default("models")
    datasets: list[str] | None = _default("datasets")
    pos_label: str | int | float | bool | None = _default("pos_label")
    domains: dict[str, str] | None = _default("domains")
    nan_policy: str = _default("nan_policy")
    correct_metric: str | None = _default("correct_metric")
    scorer: str | None = _default("scorer")
    confidence_field: str | None = _default("confidence_field")
    correct_threshold: float = _default("correct_threshold")
    protocol: str = _default("protocol")
    method: str = _default("method")
    class_weight: str | None = _default("class_weight")
    n_repeats: int = _default("n_repeats")
    random_state: int | None = _default("random_state")
    baseline: str | None = _default("baseline")
    ood_dataset: str | None = _default("ood_dataset")
    tolerance: float = _default("tolerance")
    computation_score: float | None = _default("computation_score")
    selective_protocol: str = _default("selective_protocol")
    selective_method: str = _default("selective_method")
    resolution: float = _default("resolution")
    cohort_protocol: str | None = _default("cohort_protocol")
    val_split: str = _default("val_split")
    test_split: str = _default("test_split")
    sigma_max: float | None = _default("sigma_max")
    n_points: int = _default("n_points")
    noise_method: str = _default("noise_method")
    noise_repeats: int = _default("noise_repeats")
    p: int = _default("p")
    bins: int = _default("bins")
    n_bootstrap: int = _default("n_bootstrap")
    cells: int | None = _default("cells")
    confidence_level: float = _default("confidence_level")
    n_permutations: int = _default("n_permutations")
    target_risks: tuple[float, ...] = _default("target_risks")
    risk_delta: float = _default("risk_delta")
    risk_method: str = _default("risk_method")

    @classmethod
    def checked(cls, values: Mapping[str, object]) -> EvaluationParameters:
        """The parameters ``values`` (name -> value, the others at their defaults), checked against the table.

        Raises a one-line ``ValueError`` naming an unknown or invalid parameter.
        """
        checked: dict[str, Any] = check_evaluation_parameters(values)
        return cls(**checked)

    def replaced(self, **changes: object) -> EvaluationParameters:
        """A copy with ``changes``, checked again."""
        return type(self).checked({**self.as_dict(), **changes})

    def as_dict(self) -> dict[str, Any]:
        """Name -> value, in the table's order: what an evaluation stores."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __getitem__(self, name: str) -> Any:
        if name not in EVALUATION_PARAMETERS:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(EVALUATION_PARAMETERS)

    def __len__(self) -> int:
        return len(EVALUATION_PARAMETERS)

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.as_dict().items() if v != PARAMETERS[k].default}
        return f"EvaluationParameters({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


def resolve_auto(params: EvaluationParameters, bench: Benchmark) -> EvaluationParameters:
    """The parameters with ``"auto"`` resolved for the benchmark's kind.

    ``selective_protocol="auto"``: ``"none"`` for answers (the model's own
    confidence, as Mishra et al. use it), ``"indata"`` for scores.  The
    evaluation stores the resolved value.
    """
    if params.selective_protocol != "auto":
        return params
    return dataclasses.replace(params, selective_protocol="none" if bench.kind == "answers" else "indata")


def one_dataset_defaults(
    params: EvaluationParameters, given: Mapping[str, object], bench: Benchmark
) -> tuple[EvaluationParameters, dict[str, dict[str, object]]]:
    """(parameters, what was replaced): on a benchmark of one dataset, defaults that need others fall back.

    The headline ``protocol`` (``xdomain`` by default) becomes ``indata``;
    the cohorts (``cohort_protocol`` None: the ``split`` column, else
    ``xdomain``) become the ``indata`` split when there is no ``split``
    column.  A value the caller gave (a name in ``given``) is kept, and
    refused later where it cannot run.  ``replaced`` maps each name to
    {"default", "used", "why"}.
    """
    if len(bench.datasets) > 1:
        return params, {}
    why = f"the data has one dataset ({bench.datasets[0]!r}): no other dataset to calibrate on"
    replaced: dict[str, dict[str, object]] = {}
    if "protocol" not in given and params.protocol != "indata":
        replaced["protocol"] = {"default": params.protocol, "used": "indata", "why": why}
        params = dataclasses.replace(params, protocol="indata")
    if "cohort_protocol" not in given and params.cohort_protocol is None and not bench.has_split:
        replaced["cohort_protocol"] = {"default": None, "used": "indata", "why": why + " (and no 'split' column)"}
        params = dataclasses.replace(params, cohort_protocol="indata")
    return params, replaced
