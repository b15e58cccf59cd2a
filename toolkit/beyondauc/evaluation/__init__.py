"""Layer 3: the parameter table, :func:`evaluate` and the :class:`Evaluation` every view reads."""

from .comparison import (  # noqa: F401
    ComparisonSummary,
    comparison_summary,
)
from .container import (  # noqa: F401
    SCHEMA_VERSION,
    TABLES,
    Evaluation,
    evaluation_folder,
    load_evaluation,
)
from .model_summary import ModelSummary, model_summary  # noqa: F401
from .paper import (  # noqa: F401
    PAPER_FORMATS,
    PAPER_TABLES,
    PaperTable,
    paper_table,
)
from .parameters import (  # noqa: F401
    EVALUATION_PARAMETERS,
    PARAMETERS,
    Parameter,
    check_evaluation_parameters,
    cli_flag,
    parameters_markdown,
)
from .pipeline import (  # noqa: F401
    evaluate,
    open_evaluation,
)
from .scope import (  # noqa: F401
    analyses_table,
    kind_text,
    scope_markdown,
)
from .settings import EvaluationParameters  # noqa: F401
from .summary import THRESHOLDS  # noqa: F401

__all__ = [
    "ComparisonSummary",
    "comparison_summary",
    "analyses_table",
    "kind_text",
    "scope_markdown",
    "Evaluation",
    "evaluation_folder",
    "load_evaluation",
    "SCHEMA_VERSION",
    "TABLES",
    "PAPER_FORMATS",
    "PAPER_TABLES",
    "PaperTable",
    "paper_table",
    "EVALUATION_PARAMETERS",
    "PARAMETERS",
    "Parameter",
    "check_evaluation_parameters",
    "EvaluationParameters",
    "cli_flag",
    "parameters_markdown",
    "evaluate",
    "open_evaluation",
    "ModelSummary",
    "model_summary",
    "THRESHOLDS",
]
