"""Layer 1: readers of every input form, validation, the :class:`Benchmark`.
"""

from .benchmark import (  # noqa: F401
    Benchmark,
    load_benchmark,
    load_demo,
    read_domains,
    TRUE_DOMAINS,
)
from .open import (  # noqa: F401
    DEMO,
    open_benchmark,
)

__all__ = [
    "Benchmark",
    "load_benchmark",
    "load_demo",
    "read_domains",
    "TRUE_DOMAINS",
    "DEMO",
    "open_benchmark",
]
