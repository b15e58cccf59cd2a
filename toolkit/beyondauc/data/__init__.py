"""Layer 1: readers of every input form, validation, the :class:`Benchmark`."""

from .benchmark import Benchmark  # noqa: F401
from .demo import load_demo  # noqa: F401
from .estimators import (  # noqa: F401
    estimator_answers,
    estimator_scores,
    from_estimators,
)
from .load import load_benchmark  # noqa: F401
from .logs import (  # noqa: F401
    find_logs,
    llm_demo,
    read_logs,
)
from .open import (  # noqa: F401
    DEMO,
    open_benchmark,
)
from .readers import (  # noqa: F401
    TRUE_DOMAINS,
    read_domains,
)

__all__ = [
    "Benchmark",
    "load_benchmark",
    "load_demo",
    "from_estimators",
    "estimator_scores",
    "estimator_answers",
    "DEMO",
    "open_benchmark",
    "read_logs",
    "find_logs",
    "llm_demo",
    "read_domains",
    "TRUE_DOMAINS",
]
