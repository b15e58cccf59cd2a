"""Layer 3: the parameter table, :func:`evaluate` and the :class:`Evaluation` every view reads.
"""

from .pipeline import (  # noqa: F401
    Evaluation,
    evaluate,
    load_evaluation,
    open_evaluation,
    EVALUATION_PARAMETERS,
    SCHEMA_VERSION,
)
from .summary import (  # noqa: F401
    ModelSummary,
    model_summary,
    THRESHOLDS,
)

__all__ = [
    "Evaluation",
    "evaluate",
    "load_evaluation",
    "open_evaluation",
    "EVALUATION_PARAMETERS",
    "SCHEMA_VERSION",
    "ModelSummary",
    "model_summary",
    "THRESHOLDS",
]
