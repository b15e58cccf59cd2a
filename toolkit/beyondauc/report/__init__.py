"""Views: the notebooks run with papermill, rendered with nbconvert, the index.

:func:`run_report` is the entry point; :mod:`beyondauc.report.notebook` holds the helpers
the notebooks call to show figures.
"""

from ..data.open import DEMO, open_benchmark  # noqa: F401  (the notebooks' entry point, re-exported)
from ..utils.formatting import markdown_text  # noqa: F401
from ..utils.output import safe_name  # noqa: F401
from ..utils.tables import readable_table  # noqa: F401
from .jobs import ModelReport, NotebookRun, ReportResult  # noqa: F401
from .notebook import FORMATS, displayed, figure_alt, setup_figures, show  # noqa: F401
from .runner import leaderboard, run_report  # noqa: F401

__all__ = [
    "DEMO",
    "FORMATS",
    "ModelReport",
    "NotebookRun",
    "ReportResult",
    "displayed",
    "figure_alt",
    "leaderboard",
    "markdown_text",
    "open_benchmark",
    "readable_table",
    "run_report",
    "safe_name",
    "setup_figures",
    "show",
]
