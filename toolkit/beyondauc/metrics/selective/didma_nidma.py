"""DiDMA and NiDMA (Mishra et al.): DiSCA weighed against what the model costs and where it is deployed.

DiDMA = p * DiSCA + q * a computation score (:func:`computation_score`:
``1 / energy`` or a reference size over the model's size); NiDMA = u * DiDMA
+ v * DiSCA on out-of-distribution data.  DiSCA itself is
:func:`~beyondauc.metrics.selective.scores.disca`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ...utils.html import result_html
from ...utils.validation import check_number
from .curves import check_inputs, check_weights
from .scores import DiSCA, disca

__all__ = ["DiDMA", "NiDMA", "computation_score", "didma", "nidma"]


def computation_score(
    *, energy: float | None = None, parameters: float | None = None, reference_parameters: float | None = None
) -> float:
    """The computation score of DiDMA: ``1 / energy`` or ``reference_parameters / parameters``.

    Give either ``energy`` (in any unit, e.g. kWh per 1,000 answers) or both
    ``parameters`` and ``reference_parameters`` (the size the deployment
    device handles well).

    Examples
    --------
    >>> from beyondauc import computation_score
    >>> computation_score(parameters=2_000_000, reference_parameters=1_000_000)
    0.5
    """

    def positive(v, name):
        return check_number(v, name, low=0, low_open=True)

    if energy is not None and (parameters is not None or reference_parameters is not None):
        raise ValueError("give either `energy` or `parameters` with `reference_parameters`, not both")
    if energy is not None:
        return 1.0 / positive(energy, "energy")
    if parameters is None or reference_parameters is None:
        raise ValueError("give `energy`, or both `parameters` and `reference_parameters`")
    return positive(reference_parameters, "reference_parameters") / positive(parameters, "parameters")


@dataclass(frozen=True)
class DiDMA:
    """DiDMA = p * DiSCA + q * computation_score.

    Attributes
    ----------
    score : float
    disca : DiSCA
    computation_score : float
    weights : tuple
        (p, q).
    """

    score: float
    disca: DiSCA = field(repr=False)
    computation_score: float = np.nan
    weights: tuple = (0.5, 0.5)

    def _repr_html_(self):
        return result_html(
            "DiDMA",
            [
                ("score", self.score),
                ("DiSCA", self.disca.score),
                ("computation_score", self.computation_score),
                ("weights (p, q)", ", ".join(f"{w:.3g}" for w in self.weights)),
            ],
        )


def check_computation(value: float) -> float:
    """``value`` as a computation score (a number >= 0), or a one-line error naming ``computation_score``."""
    return check_number(value, "computation_score", low=0, hint=" (see computation_score())")


def didma(
    confidence: ArrayLike,
    correct: ArrayLike,
    *,
    computation_score: float,
    weights: tuple[float, float] = (0.5, 0.5),
    tolerance: float = 0.9,
    disca_weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    resolution: float = 0.01,
) -> DiDMA:
    """DiDMA (Deployment in Disaster Management Applications).

    ``DiDMA = p * DiSCA + q * computation_score`` with ``weights=(p, q)``
    summing to 1.  The computation score depends on the deployment device,
    so it is given, not measured: see :func:`computation_score`.

    Examples
    --------
    >>> from beyondauc import didma, disca
    >>> conf, ok = [0.95, 0.9, 0.8, 0.7], [True, False, True, True]
    >>> d = didma(conf, ok, computation_score=2.0, weights=(0.5, 0.5))
    >>> d.score == 0.5 * disca(conf, ok).score + 0.5 * 2.0
    True
    """
    p, q = check_weights(weights, "weights", 2)
    check_weights(disca_weights, "disca_weights", 3)
    comp = check_computation(computation_score)
    d = disca(confidence, correct, tolerance=tolerance, weights=disca_weights, resolution=resolution)
    return DiDMA(p * d.score + q * comp, d, comp, (p, q))


@dataclass(frozen=True)
class NiDMA:
    """NiDMA = u * DiDMA + v * DiSCA(OOD).

    Attributes
    ----------
    score : float
    didma : DiDMA
        On the in-distribution data.
    disca_ood : DiSCA
        On the out-of-distribution data.
    weights : tuple
        (u, v).
    """

    score: float
    didma: DiDMA = field(repr=False)
    disca_ood: DiSCA = field(repr=False)
    weights: tuple = (0.5, 0.5)

    def _repr_html_(self):
        return result_html(
            "NiDMA",
            [
                ("score", self.score),
                ("DiDMA", self.didma.score),
                ("DiSCA (in distribution)", self.didma.disca.score),
                ("DiSCA (OOD)", self.disca_ood.score),
                ("weights (u, v)", ", ".join(f"{w:.3g}" for w in self.weights)),
            ],
        )


def nidma(
    confidence: ArrayLike,
    correct: ArrayLike,
    confidence_ood: ArrayLike,
    correct_ood: ArrayLike,
    *,
    computation_score: float,
    weights: tuple[float, float] = (0.5, 0.5),
    didma_weights: tuple[float, float] = (0.5, 0.5),
    tolerance: float = 0.9,
    disca_weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    resolution: float = 0.01,
) -> NiDMA:
    """NiDMA (NLP in Disaster Management Applications).

    ``NiDMA = u * DiDMA(IID) + v * DiSCA(OOD)`` with ``weights=(u, v)``
    summing to 1: the in-distribution data give DiDMA, an
    out-of-distribution dataset gives the second DiSCA with the same
    tolerance, weights and resolution.

    Examples
    --------
    >>> from beyondauc import nidma
    >>> n = nidma([0.9, 0.8], [True, False], [0.9, 0.6], [False, True], computation_score=1.0)
    >>> round(n.score, 4)
    0.5509
    """
    u, v = check_weights(weights, "weights", 2)
    check_weights(didma_weights, "didma_weights", 2)
    check_inputs(confidence_ood, correct_ood, probability=True, names=("confidence_ood", "correct_ood"))
    iid = didma(
        confidence,
        correct,
        computation_score=computation_score,
        weights=didma_weights,
        tolerance=tolerance,
        disca_weights=disca_weights,
        resolution=resolution,
    )
    ood = disca(confidence_ood, correct_ood, tolerance=tolerance, weights=disca_weights, resolution=resolution)
    return NiDMA(u * iid.score + v * ood.score, iid, ood, (u, v))
