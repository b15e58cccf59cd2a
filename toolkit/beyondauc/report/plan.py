"""What a report run will do, settled before any Jupyter kernel starts.

:func:`~beyondauc.report.run_report` checks its arguments into three frozen objects:
:class:`DataOptions` (how to read the data, and the baseline), :class:`ReportOptions` (how the
reports are made: PDF, workers, kernel) and :class:`ReportPlan` (the benchmark read, the notebooks,
the parameters, the folder of each model). This module holds them and the checks that make them:
the notebooks folder, the ``parameters`` a notebook may take, the file names of the models, and the
files and disk space a report will take (checked when the output folder is entered).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..evaluation.parameters import EVALUATION_PARAMETERS, check_parameters, declared_parameters
from ..utils.output import HASHED, safe_name
from ..utils.validation import check_int

if TYPE_CHECKING:
    from ..data.benchmark import Benchmark

__all__ = [
    "NOTEBOOKS",
    "OVERVIEW",
    "RUNNER_PARAMETERS",
    "DataOptions",
    "ReportOptions",
    "ReportPlan",
    "check_notebooks",
    "check_report_parameters",
    "estimated_size",
    "folder_names",
    "notebook_parameters",
    "planned_files",
]

#: The per-model notebooks, in report order (file stems in ``notebooks/``).
NOTEBOOKS = ("summary", "auc_vs_accuracy", "test_auroc", "selective_answering")
#: The benchmark-wide notebook, run once per report.
OVERVIEW = "overview"
#: Parameters the runner sets itself (the notebooks' ``evaluation`` and ``model``; how the data is read).
RUNNER_PARAMETERS = ("evaluation", "overrides", "data", "model", "datasets", "pos_label")


@dataclasses.dataclass(frozen=True)
class DataOptions:
    """How a report run reads the data, and the baseline: the evaluation parameters that are arguments of
    :func:`~beyondauc.report.run_report` of their own. ``log_options`` holds those given (not None)."""

    datasets: list[str] | None
    pos_label: object
    domains: object
    nan_policy: str
    baseline: str | None
    log_options: dict[str, str]

    def evaluation_parameters(self) -> dict[str, object]:
        """The options as evaluation parameters (those given).

        Examples
        --------
        >>> from beyondauc.report.plan import DataOptions
        >>> DataOptions(None, None, None, "raise", "logreg", {}).evaluation_parameters()
        {'nan_policy': 'raise', 'baseline': 'logreg'}
        """
        given = {
            "datasets": self.datasets,
            "pos_label": self.pos_label,
            "domains": self.domains,
            "nan_policy": self.nan_policy,
            "baseline": self.baseline,
            **self.log_options,
        }
        return {k: v for k, v in given.items() if v is not None}


@dataclasses.dataclass(frozen=True)
class ReportOptions:
    """How the reports are made: PDF or not, the workers (local processes or a Dask scheduler), the Jupyter
    kernel and its cell timeout, code shown, progress shown, the evaluation computed again or reused."""

    pdf: bool
    jobs: int
    dask: str | None
    include_code: bool
    progress: bool
    kernel_name: str
    timeout: float | None
    recompute: bool

    @classmethod
    def checked(
        cls,
        *,
        jobs: int | None,
        dask: str | None,
        timeout: float | None,
        pdf: bool,
        include_code: bool,
        progress: bool,
        kernel_name: str,
        recompute: bool,
    ) -> ReportOptions:
        """The options validated: ``jobs`` (default: the cores), ``dask`` an address, ``timeout`` seconds."""
        jobs = check_int((os.cpu_count() or 1) if jobs is None else jobs, "jobs", minimum=1)
        if dask is not None and not isinstance(dask, str):
            raise TypeError(f"`dask` must be a scheduler address such as 'tcp://127.0.0.1:8786', got {dask!r}")
        timeout = None if timeout is None else float(timeout)
        return cls(pdf, jobs, dask, include_code, progress, kernel_name, timeout, recompute)


@dataclasses.dataclass(frozen=True)
class ReportPlan:
    """What a report run reports on, checked: the data as given, the benchmark evaluated (every model, the
    datasets asked for), the one reported on (the models asked for), the notebooks' folder, each model's
    folder name, the ``parameters`` given (evaluation parameters and notebook options) and the data options."""

    data: object
    evaluated: Benchmark
    bench: Benchmark
    notebooks_dir: Path
    slugs: dict[str, str]
    parameters: dict[str, object]
    data_options: DataOptions

    def evaluation_parameters(self) -> dict[str, object]:
        """The parameters of the one evaluation every report reads."""
        given = {k: v for k, v in self.parameters.items() if k in EVALUATION_PARAMETERS}
        return {**given, **self.data_options.evaluation_parameters()}

    def notebook_options(self) -> dict[str, object]:
        """The ``parameters`` that are no evaluation parameter: view options some notebook declares."""
        return {k: v for k, v in self.parameters.items() if k not in EVALUATION_PARAMETERS}


def check_notebooks(notebooks_dir: str | os.PathLike) -> Path:
    """The folder of the notebooks, refused (naming the files missing) unless it holds every one."""
    folder = Path(notebooks_dir)
    missing = [n for n in (*NOTEBOOKS, OVERVIEW) if not (folder / f"{n}.ipynb").is_file()]
    if missing:
        raise FileNotFoundError(f"`notebooks_dir` {str(folder)!r} lacks {', '.join(m + '.ipynb' for m in missing)}")
    return folder


def folder_names(names: Iterable[str]) -> dict[str, str]:
    """:func:`safe_name` of each name, distinct even on a file system that ignores case (macOS, Windows).

    Names whose file names differ only by case (``SVM``, ``svm``) get their hash appended as well.

    Examples
    --------
    >>> from beyondauc.report.plan import folder_names
    >>> folder_names(["svm", "SVM", "a/b"])
    {'svm': 'svm-5f6c1d82', 'SVM': 'SVM-6b4a8910', 'a/b': 'a_b-3ec69c85'}
    """
    slugs = {n: safe_name(n) for n in names}
    folded: dict[str, int] = {}
    for slug in slugs.values():
        folded[slug.casefold()] = folded.get(slug.casefold(), 0) + 1
    for name, slug in slugs.items():
        if folded[slug.casefold()] > 1 and not HASHED.search(slug):
            slugs[name] = f"{slug}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"
    if len({s.casefold() for s in slugs.values()}) < len(slugs):  # two SHA-1s sharing 8 hex digits
        raise ValueError("two model names map to the same file name; rename one of them")
    return slugs


#: Bytes a report takes, measured on the demo (rounded up): per report (each model's and the overview) and per
#: dataset in it; a PDF doubles a report.
_REPORT_BYTES, _DATASET_BYTES = 500_000, 400_000


def estimated_size(n_models: int, n_datasets: int, pdf: bool) -> int:
    """About how many bytes a report of ``n_models`` models on ``n_datasets`` datasets takes (the space checked)."""
    return (n_models + 1) * (_REPORT_BYTES + _DATASET_BYTES * n_datasets) * (2 if pdf else 1)


def planned_files(slugs: Iterable[str], pdf: bool) -> list[str]:
    """Every file a report run may write (relative to ``out``), for the check before the computation."""
    from ..evaluation.container import evaluation_files

    pdfs = ("pdf",) if pdf else ()
    files = [
        "index.html",
        *(f"{OVERVIEW}/{OVERVIEW}.{ext}" for ext in ("html", "ipynb", *pdfs)),
        *(f"evaluation/{f}" for f in evaluation_files()),
    ]
    for slug in slugs:
        files += [f"models/{slug}/report.{ext}" for ext in ("html", *pdfs)]
        files += [f"models/{slug}/{n}.ipynb" for n in NOTEBOOKS]
    return files


def check_report_parameters(parameters: object, folder: Path) -> dict[str, object]:
    """The ``parameters`` of a run, validated: evaluation parameters, or view options a notebook declares."""
    if parameters is not None and not isinstance(parameters, dict):
        raise TypeError(f"`parameters` must be a dict, got {type(parameters).__name__}")
    extra = dict(parameters or {})
    clash = sorted(set(extra) & {*RUNNER_PARAMETERS, "domains", "nan_policy", "baseline"})
    if clash:
        raise ValueError(f"`parameters` may not set {clash}; use the arguments of the same name")
    bad = [k for k in extra if not isinstance(k, str) or not k.isidentifier()]
    if bad:
        raise ValueError(f"`parameters` keys must be Python identifiers, got {bad}")
    for key, value in extra.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f"`parameters`[{key!r}] must be a plain value (str, finite number, bool, None, list), "
                f"got {type(value).__name__}"
            ) from None
    declared = set().union(*(notebook_parameters(folder, n) for n in (*NOTEBOOKS, OVERVIEW)))
    known = (declared | set(EVALUATION_PARAMETERS)) - set(RUNNER_PARAMETERS)
    return check_parameters(extra, known=sorted(known))


def notebook_parameters(folder: str | os.PathLike, name: str) -> set[str]:
    """Names of the parameters notebook ``name`` (of ``folder``) declares."""
    return set(declared_parameters(Path(folder) / f"{name}.ipynb"))
