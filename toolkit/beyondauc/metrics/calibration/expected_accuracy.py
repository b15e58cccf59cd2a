"""The public entry points of AUC vs expected accuracy: point estimates or bootstrap intervals.

:func:`expected_accuracy_grid` computes the grid with
:func:`~beyondauc.metrics.calibration.grid.point_grid`, or with
:func:`~beyondauc.bootstrap_grid` when intervals are asked for; keeping this
dispatch here lets the bootstrap build on the point grid without an import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...utils.validation import check_option
from ..core.views import each_model_view
from ..uncertainty.bootstrap import check_bootstrap
from .grid import METHODS, PROTOCOLS, check_grid_args, check_n_jobs, point_grid
from .grid_bootstrap import bootstrap_grid
from .protocols import grid_choices

if TYPE_CHECKING:  # names in annotations only
    from collections.abc import Sequence

    import pandas as pd

    from ...data.benchmark import Benchmark

__all__ = ["expected_accuracy", "expected_accuracy_grid"]


@each_model_view()
def expected_accuracy_grid(
    bench: Benchmark,
    *,
    protocols: str | Sequence[str] | None = None,
    methods: str | Sequence[str] = METHODS,
    class_weight: str | None = None,
    n_repeats: int = 100,
    random_state: int | None = 0,
    n_jobs: int = 1,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    reference: str | None = None,
) -> pd.DataFrame:
    """Expected accuracy for several protocols x methods in one pass.

    Equivalent to concatenating :func:`expected_accuracy` over the grid, but
    each model's scores are sorted once for all of it.

    Parameters
    ----------
    bench : Benchmark
    protocols : sequence of str, optional
        Default: all five; without a domain for every dataset all but
        ``outdomain`` and ``indomain``, with one warning (asked for by name,
        they are an error).
    methods : sequence of str, default: all three
    class_weight, n_repeats, random_state, n_jobs, n_bootstrap, confidence_level, reference
        As in :func:`expected_accuracy`.

    Returns
    -------
    pandas.DataFrame
        One row per protocol x method x dataset x model; columns as in
        :func:`expected_accuracy`.  To keep the replicates (rank stability,
        pairwise comparisons), call :func:`~beyondauc.bootstrap_grid`.

    Examples
    --------
    >>> from beyondauc import load_demo, expected_accuracy_grid
    >>> grid = expected_accuracy_grid(load_demo(), protocols=["xdomain", "outdata"],
    ...                               methods=["logistic", "stump"])
    >>> sorted(grid["protocol"].unique()), sorted(grid["method"].unique())
    (['outdata', 'xdomain'], ['logistic', 'stump'])
    """
    protocols, methods = grid_choices(bench, protocols, methods)
    seed = check_grid_args(bench, protocols, methods, class_weight, n_repeats, random_state, reference)
    n_jobs = check_n_jobs(n_jobs)
    n_bootstrap, confidence_level = check_bootstrap(n_bootstrap, confidence_level)
    if n_bootstrap > 0 and reference is not None:
        raise ValueError(
            "`n_bootstrap` > 0 is not available with `reference`='opitz2024' (a reproduction mode that "
            "fits scikit-learn per cell); use reference=None for intervals"
        )
    if n_bootstrap > 0:
        return bootstrap_grid(
            bench,
            protocols=protocols,
            methods=methods,
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            class_weight=class_weight,
            n_repeats=n_repeats,
            random_state=seed,
            n_jobs=n_jobs,
        ).grid
    return point_grid(
        bench,
        protocols,
        methods,
        class_weight=class_weight,
        n_repeats=n_repeats,
        seed=seed,
        n_jobs=n_jobs,
        reference=reference,
    )


@each_model_view()
def expected_accuracy(
    bench: Benchmark,
    *,
    protocol: str = "xdomain",
    method: str = "logistic",
    class_weight: str | None = None,
    n_repeats: int = 100,
    random_state: int | None = 0,
    n_jobs: int = 1,
    n_bootstrap: int = 0,
    confidence_level: float = 0.95,
    reference: str | None = None,
) -> pd.DataFrame:
    """AUC and the accuracy a model really reaches once calibrated on other data.

    For every dataset d and model m: m's AUC on d, and its accuracy (and
    Cohen's kappa, balanced accuracy, MCC, F1) after calibrating its raw score
    into a decision under ``protocol``:

    ==========  ===============================================  ===========================
    protocol    calibrate on                                     evaluate on
    ==========  ===============================================  ===========================
    xdomain     all other datasets, pooled                       d
    outdomain   datasets of other domains                        d
    indomain    other datasets of d's domain (if none: indata)   d
    indata      a random 80% of d, ``n_repeats`` times (seeded)  the other 20%, mean
    outdata     d                                                all other datasets, pooled
    ==========  ===============================================  ===========================

    Parameters
    ----------
    bench : Benchmark
        From :func:`load_benchmark` or :func:`load_demo`.
    protocol : {"xdomain", "outdomain", "indomain", "indata", "outdata"}
    method : {"logistic", "isotonic", "stump"}
        See :class:`ScoreCalibrator`.
    class_weight : {None, "balanced"}
    n_repeats : int, default=100
        Repeats of the ``indata`` 80/20 split (scikit-learn ``ShuffleSplit``,
        test size 20%; the same splits for every model and method).
    random_state : int, default=0
        Seed of the ``indata`` splits and of the bootstrap; same inputs and
        seed give the same numbers.
    n_jobs : int, default=1
        Models computed in parallel processes (-1: all cores).  The numbers do
        not depend on it.
    n_bootstrap : int, default=0
        With ``n_bootstrap > 0``, a stratified, paired bootstrap that refits
        the calibrator on each replicate (:func:`~beyondauc.bootstrap_grid`)
        adds percentile intervals ``<value>_low`` / ``<value>_high`` after
        ``auc`` and each score.
    confidence_level : float, default=0.95
        Of those intervals.
    reference : {None, "opitz2024"}, default=None
        ``None``: the paper's text, with scale-free calibrators (the numbers
        do not change when a model's scores are multiplied by 1e300 or
        1e-300).  ``"opitz2024"``: the settings of the code behind the paper's
        tables (see :class:`ScoreCalibrator`): logistic fitted on the raw
        scores by scikit-learn's default lbfgs, one fit per cell and repeat
        (slower: a reproduction mode; its penalty on the raw coefficient
        makes it depend on the scores' scale), the stump on float32 raw
        scores, isotonic predicting negative outside the calibration range,
        and for ``outdata`` the ``auc`` column is the AUC on the pooled other
        datasets (the evaluation data) instead of on d.

    Returns
    -------
    pandas.DataFrame
        One row per dataset x model: ``protocol``, ``method``, ``dataset``,
        ``domain``, ``model``, ``auc`` (on d, all rows), ``accuracy``,
        ``kappa``, ``balanced_accuracy``, ``mcc``, ``f1``, ``n_calibration``,
        ``n_evaluation`` and ``calibration`` (the protocol really used:
        ``indata`` where ``indomain`` fell back).  For ``outdata`` the row of
        d holds the scores on the *other* datasets after calibrating on d.
        For ``indata`` the scores are means over repeats (a repeat where a
        score is undefined, e.g. kappa, is left out of that score's mean).  A cell with no
        calibration or no evaluation data is NaN.

    Notes
    -----
    Calibration data with a single class predicts that class.  Numbers are
    identical to fitting scikit-learn's estimators per cell (see
    :class:`ScoreCalibrator`), but each model's scores are sorted once and
    every fit is a vectorised operation on the distinct scores.

    Examples
    --------
    >>> from beyondauc import load_demo, expected_accuracy
    >>> res = expected_accuracy(load_demo(), protocol="xdomain", method="logistic")
    >>> list(res.columns[:8])
    ['protocol', 'method', 'dataset', 'domain', 'model', 'auc', 'accuracy', 'kappa']
    >>> bool((res["accuracy"] <= 1).all())
    True
    >>> two = load_demo().subset(datasets=["breast_cancer", "wine"])
    >>> ci = expected_accuracy(two, n_bootstrap=20)
    >>> bool(((ci["accuracy_low"] <= ci["accuracy"]) & (ci["accuracy"] <= ci["accuracy_high"])).all())
    True
    """
    check_option(protocol, "protocol", PROTOCOLS)
    check_option(method, "method", METHODS)
    return expected_accuracy_grid(
        bench,
        protocols=[protocol],
        methods=[method],
        class_weight=class_weight,
        n_repeats=n_repeats,
        random_state=random_state,
        n_jobs=n_jobs,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        reference=reference,
    )
