"""Views: scikit-learn-style Displays, one module per analysis.

``__init__`` stores computed data, ``plot(ax=None)`` draws and returns ``self``
with ``ax_`` and ``figure_`` set, and the ``from_predictions`` /
``from_estimator`` / ``from_evaluation`` class methods compute (from public
metric functions; ``from_estimator`` scores a fitted scikit-learn classifier
first), then plot.  Nothing here calls ``plt.show()`` or changes ``rcParams``.

* :mod:`~beyondauc.plots.diagnostics` -- :class:`ThresholdROCDisplay`,
  :class:`ClassHistogramDisplay`, :class:`RobustnessDisplay`,
  :class:`DriftDisplay` (Roberts et al.); :mod:`~beyondauc.plots.wasserstein` --
  :class:`WassersteinDisplay`; :mod:`~beyondauc.plots.dashboard` -- the
  :class:`DiagnosticsDashboard` of all five;
* :mod:`~beyondauc.plots.selective` -- :class:`CoverageAccuracyDisplay`,
  :class:`CoverageAccuracyGridDisplay`, :class:`ToleranceDisplay` (Mishra et al.);
* :mod:`~beyondauc.plots.risk_control` -- :class:`RiskControlDisplay` (abstention with a guarantee);
* :mod:`~beyondauc.plots.accuracy` -- :class:`AUCAccuracyDisplay`,
  :class:`RankSlopeDisplay`, :class:`ScoreHistogramsDisplay` (Opitz);
* :mod:`~beyondauc.plots.comparison` -- :class:`CriticalDifferenceDisplay` (Demšar 2006),
  :class:`PairwiseDifferenceDisplay`;
* :mod:`~beyondauc.plots.reliability` -- :class:`ReliabilityDisplay`;
* :mod:`~beyondauc.plots.given_confidence` -- :class:`ConfidenceReliabilityDisplay`,
  :class:`RejectionCurveDisplay` (the confidence as given);
* :mod:`~beyondauc.plots.explore` -- :func:`explore`, one evaluation explored in
  Jupyter (ipywidgets), drawn with the Displays above;
* :func:`report_layout` -- the layout every report figure uses.
"""

from ._base import (  # noqa: F401
    report_layout,
)
from .accuracy import (  # noqa: F401
    AUCAccuracyDisplay,
    RankSlopeDisplay,
    ScoreHistogramsDisplay,
)
from .comparison import (  # noqa: F401
    CriticalDifferenceDisplay,
    PairwiseDifferenceDisplay,
)
from .dashboard import DiagnosticsDashboard  # noqa: F401
from .diagnostics import (  # noqa: F401
    ClassHistogramDisplay,
    DriftDisplay,
    RobustnessDisplay,
    ThresholdROCDisplay,
)
from .explore import (  # noqa: F401
    Explorer,
    explore,
)
from .given_confidence import (  # noqa: F401
    ConfidenceReliabilityDisplay,
    RejectionCurveDisplay,
)
from .reliability import (  # noqa: F401
    ReliabilityDisplay,
)
from .risk_control import (  # noqa: F401
    RiskControlDisplay,
)
from .selective import (  # noqa: F401
    CoverageAccuracyDisplay,
    CoverageAccuracyGridDisplay,
    ToleranceDisplay,
)
from .wasserstein import WassersteinDisplay  # noqa: F401

__all__ = [
    "report_layout",
    "AUCAccuracyDisplay",
    "RankSlopeDisplay",
    "ScoreHistogramsDisplay",
    "CriticalDifferenceDisplay",
    "PairwiseDifferenceDisplay",
    "ThresholdROCDisplay",
    "ClassHistogramDisplay",
    "RobustnessDisplay",
    "DriftDisplay",
    "WassersteinDisplay",
    "DiagnosticsDashboard",
    "ReliabilityDisplay",
    "ConfidenceReliabilityDisplay",
    "RejectionCurveDisplay",
    "CoverageAccuracyDisplay",
    "CoverageAccuracyGridDisplay",
    "ToleranceDisplay",
    "RiskControlDisplay",
    "Explorer",
    "explore",
]
