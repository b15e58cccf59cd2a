"""Layer 3: the parameter table, :func:`evaluate` and the :class:`Evaluation` every view reads.
"""

from .parameters import (  # noqa: F401
    EVALUATION_PARAMETERS,
    PARAMETERS,
    Parameter,
    check_evaluation_parameters,
    cli_flag,
    parameters_markdown,
)
from .pipeline import (  # noqa: F401
    Evaluation,
    evaluate,
    evaluation_folder,
    load_evaluation,
    open_evaluation,
    SCHEMA_VERSION,
)
from .summary import (  # noqa: F401
    ModelSummary,
    model_summary,
    THRESHOLDS,
)

__all__ = [
    "EVALUATION_PARAMETERS",
    "PARAMETERS",
    "Parameter",
    "check_evaluation_parameters",
    "cli_flag",
    "parameters_markdown",
    "Evaluation",
    "evaluate",
    "evaluation_folder",
    "load_evaluation",
    "open_evaluation",
    "SCHEMA_VERSION",
    "ModelSummary",
    "model_summary",
    "THRESHOLDS",
]
