"""Shared plumbing below every layer: argument checks, number and HTML formatting, process pools, safe output folders."""

from .formatting import (  # noqa: F401
    markdown_text,
)
from .html import (  # noqa: F401
    styled,
)
from .validation import (  # noqa: F401
    UndefinedMetricWarning,
    check_names,
)

__all__ = [
    "markdown_text",
    "styled",
    "UndefinedMetricWarning",
    "check_names",
]
