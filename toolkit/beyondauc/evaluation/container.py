"""The :class:`Evaluation`: tidy tables, parameters, the data's SHA-256 and the package versions.

:meth:`Evaluation.save` writes it as a folder of Parquet tables with a JSON
manifest through the package's one safe-output mechanism
(:mod:`beyondauc.utils.output`); :func:`load_evaluation` reads it back
identically.  Each table's meaning is in :data:`TABLES` (and in every manifest).
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..utils.formatting import MISSING, format_number
from ..utils.output import EVALUATION, EVALUATION_SCHEMA_VERSION, OutputFolder, outside
from .ranks import add_ranks

if TYPE_CHECKING:  # names in annotations only
    from ..metrics.selective.curves import CoverageAccuracyCurve
    from ..metrics.selective.scores import DiSCA


__all__ = ["Evaluation", "evaluation_folder", "load_evaluation", "SCHEMA_VERSION", "TABLES"]

#: Version of the saved layout (manifest + Parquet tables); bumped on any incompatible change.
SCHEMA_VERSION: int = EVALUATION_SCHEMA_VERSION
MANIFEST = "manifest.json"

#: What each table holds (written into the manifest).
TABLES: dict[str, str] = {
    "datasets": "one row per dataset: domain, examples, positives, positive rate (and the split values)",
    "grid": "AUC and every score (accuracy, kappa, balanced accuracy, MCC, F1) per protocol x method x dataset x model",
    "rank_changes": "rank by AUC vs rank by the score per dataset and for the mean (headline protocol and method), "
    "for score = accuracy and kappa",
    "rank_table": "value and rank of every model per dataset and mean, for score = auc, accuracy and kappa",
    "kendall": "Kendall's tau between the AUC ranking and the score ranking, per dataset and mean",
    "calibration_modes": "the paper's Table 4: mean score and rank per protocol x method (score = accuracy, kappa)",
    "best_of_methods": "the paper's Table 5: the best method per protocol and model (score = kappa)",
    "variance": "the paper's Table 3: score variance per model, raw and min-max scaled",
    "histograms": "class-conditional score histograms per model and dataset (and 'all'), shared bins per model",
    "diagnostics": "test-set AUROC diagnostics per model x dataset: AUCs, bias and noise robustness, drift, W "
    "(and a note saying why any of them is undefined); drift_pvalue / wasserstein_pvalue: their "
    "permutation p-values (cohorts shuffled within class); drift_rank, wasserstein_rank, "
    "bias_robustness_rank: the model's rank per dataset",
    "roc": "ROC curves of the validation and test cohorts per model x dataset (thinned, see docs/evaluation.md)",
    "cohort_histograms": "class histograms of the validation and test cohorts on shared bins, per model x dataset",
    "robustness": "bias and noise robustness curves per model x dataset x cohort",
    "drift_curves": "sensitivity and specificity of both cohorts per threshold (thinned, see docs/evaluation.md)",
    "wasserstein": "the 2x2 Wasserstein matrices (p = 1 and p = 2; `chosen` marks parameter p) per model x dataset",
    "selective": "selective answering per model x dataset: accuracy, area, AURC, E-AURC, a, b, fluctuations, "
    "DiSCA (and on the OOD dataset, DiDMA, NiDMA); n_confidences, top_share and rankable: whether the "
    "answers have enough distinct confidences for DiSCA to rank them; disca_rank: its rank per dataset",
    "tolerance": "b and DiSCA over the tolerance grid per model x dataset (and on the OOD dataset); disca_rank: the "
    "rank per dataset and tolerance",
    "coverage_curves": "coverage-accuracy curves per model x dataset: the grid curve DiSCA reads, the exact curve "
    "(thinned) and the grid curve on the OOD dataset",
    "fluctuations": "every fluctuation of the grid curve per model x dataset (and on the OOD dataset)",
    "leaderboard": "one row per model: mean AUC and accuracy, their ranks and the change, kappa, DiSCA (over the "
    "datasets where its answers are rankable), drift, with intervals, sign_share and p_value",
    "calibration_error": "expected calibration error (15 equal-width bins) of the probabilities a calibrator learnt "
    "under each protocol x method gives on the evaluation data, per dataset x model",
    "calibration_error_ranks": "the mean over datasets of that expected calibration error per protocol x method x "
    "model, and its rank among the models (1 = the lowest)",
    "reliability": "the reliability bins behind each ECE: mean predicted probability, fraction of positives, count",
    "resolution_sensitivity": "DiSCA and its parts on the same answers over grid steps 0.1 ... 1e-4, per model x "
    "dataset (DiSCA depends on the step through the 0.001 floor)",
    "mean_intervals": "the mean over datasets of every score with its bootstrap interval (headline setting)",
    "findings": "the verdict on each model: one sentence per finding (ranking, threshold, drift, selective, and "
    "first, where part of it is undefined, analysis) with its status (good, warn, bad, info), the rule "
    "that set it and the number behind it (reason), generated from the tables above",
    "verdicts": "one line per model for the index, from its findings, with the reason for its status",
    "risk_control": "abstention with a guarantee per model x dataset x protocol x target risk: the threshold "
    "certified on the protocol's calibration data (coverage and risk there) and, on the dataset, "
    "the realised risk, the coverage and whether the guarantee held",
    "risk_control_curves": "the risk-coverage curve of each dataset's answers under each protocol's calibrator (the "
    "one that certified the thresholds of risk_control), at most 101 points per model x dataset x protocol",
    "given_calibration": "calibration of the confidence as given (answers, and scores that are probabilities) per "
    "model x dataset: Brier score with Murphy's reliability, resolution and uncertainty, NLL, "
    "ECE over equal-width and equal-mass bins, smooth ECE, PRR and PRR over the first half of "
    "the rejection curve, each with its bootstrap interval, and whether the ECE flags it",
    "given_reliability": "reliability diagram of the confidence as given per model x dataset: per equal-width "
    "bin the mean confidence, the mean correctness, the count and its Wilson band",
    "rejection_curves": "prediction rejection curves per model x dataset: the mean loss of the kept answers as "
    "the least confident are rejected (loss), the oracle's and random, at up to 201 shares",
    "auc_intervals": "DeLong confidence interval of the AUC per model x dataset",
    "pairwise": "per dataset and mean, for each ordered pair of models: the accuracy difference, its interval and "
    "the bootstrap probability that the first beats the second (headline protocol and method)",
    "comparison": "each model against its reference (the baseline, or the best other model by mean AUC) per "
    "dataset and mean: the difference of AUC (paired DeLong test), deployed accuracy and kappa "
    "(headline protocol and method), DiSCA and drift (paired bootstrap), with interval and p-value",
    "friedman": "Friedman test and Nemenyi critical difference over datasets, for the AUC and the deployed "
    "accuracy: average rank per model, statistic, p-value, critical difference",
}


# ---------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------


def package_versions() -> dict[str, str | None]:
    """The installed versions of beyondauc and of the libraries its numbers depend on (the manifest records them)."""
    out: dict[str, str | None] = {}
    for pkg in ("beyondauc", "numpy", "scipy", "pandas", "scikit-learn", "matplotlib", "pyarrow"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


@dataclass(frozen=True)
class Evaluation:
    """Everything the reports show about one benchmark, computed once.

    Attributes
    ----------
    tables : dict of str -> pandas.DataFrame
        Tidy tables by name (see ``TABLES`` and the schema in ``docs/evaluation.md``).
    parameters : dict
        The analysis parameters, complete (defaults filled in).
    data : dict
        ``source``, ``sha256``, ``kind``, ``graded`` (answers' correctness a
        quality in [0, 1]), ``n_rows``, ``n_items`` (only when rows repeat
        items: the items they are samples of), ``models``, ``datasets``, ``domains``.
    versions : dict
        Versions of beyondauc and the libraries that computed it.
    created : str
        UTC time of the computation (ISO 8601).
    timing : dict
        Seconds per stage.
    """

    tables: dict[str, pd.DataFrame] = field(repr=False)
    parameters: dict[str, Any] = field(repr=False)
    data: dict[str, Any] = field(repr=False)
    versions: dict[str, str | None] = field(repr=False)
    created: str = ""
    timing: dict[str, float] = field(default_factory=dict, repr=False)

    # -- access ---------------------------------------------------------------------

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name`` (a DataFrame); a one-line error lists the names there are."""
        if name not in self.tables:
            raise KeyError(f"the evaluation has no table {name!r}; it has {', '.join(self.tables)}")
        return self.tables[name]

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.table(name)

    @property
    def models(self) -> tuple[str, ...]:
        """The models evaluated, in the benchmark's order."""
        return tuple(self.data["models"])

    @property
    def datasets(self) -> tuple[str, ...]:
        """The datasets evaluated, in the benchmark's order."""
        return tuple(self.data["datasets"])

    def headline(self) -> pd.DataFrame:
        """The grid rows of the headline protocol and method (what ``expected_accuracy`` returns)."""
        g = self.table("grid")
        p = self.parameters
        return g[(g["protocol"] == p["protocol"]) & (g["method"] == p["method"])].reset_index(drop=True)

    def check_model(self, model: str) -> str:
        """Raise a one-line error unless ``model`` is one of the evaluation's models."""
        if model not in self.models:
            raise ValueError(f"`model` {model!r} is not in the evaluation; it has {list(self.models)}")
        return model

    def same_inputs(self, sha256: str, parameters: dict[str, Any]) -> bool:
        """Whether this evaluation was computed from data ``sha256`` with ``parameters`` (complete), by the
        versions of beyondauc and of the libraries its numbers depend on that are installed now."""
        return (
            self.data.get("sha256") == sha256
            and _jsonable(self.parameters) == _jsonable(parameters)
            and self.versions == package_versions()
        )

    def _rows(self, name, **where):
        t = self.table(name)
        mask = np.ones(len(t), dtype=bool)
        for k, v in where.items():
            mask &= (t[k] == v).to_numpy()
        return t[mask]

    def coverage_curve(
        self, model: str, dataset: str, *, curve: str = "exact", where: str = "in"
    ) -> CoverageAccuracyCurve:
        """A stored coverage-accuracy curve as a :class:`~beyondauc.CoverageAccuracyCurve`.

        ``curve="grid"`` is the curve DiSCA reads (step ``resolution``),
        ``"exact"`` the per-confidence curve (thinned for large data);
        ``where="ood"`` the grid curve on the out-of-distribution dataset.
        """
        from ..metrics.selective.curves import CoverageAccuracyCurve

        self.check_model(model)
        c = self._rows("coverage_curves", model=model, dataset=dataset, curve=curve, where=where)
        if not len(c):
            raise ValueError(f"the evaluation has no {curve} curve of {model!r} on {dataset!r} ({where})")
        sel = self._rows("selective", model=model, dataset=dataset).iloc[0]
        area = float(sel["area"]) if curve == "exact" and where == "in" else None  # None: from the points
        return CoverageAccuracyCurve.from_frame(
            c, score=area, resolution=self.parameters["resolution"] if curve == "grid" else None
        )

    def disca(self, model: str, dataset: str, *, where: str = "in") -> DiSCA:
        """The stored :class:`~beyondauc.DiSCA` of ``model`` on ``dataset`` (``where="ood"``: on the OOD data)."""
        from ..metrics.selective.scores import DiSCA

        row = self._rows("selective", model=model, dataset=dataset)
        if not len(row):
            raise ValueError(f"the evaluation has no selective answering of {model!r} on {dataset!r}")
        row = row.iloc[0]
        sfx = "" if where == "in" else "_ood"
        fl = self._rows("fluctuations", model=model, dataset=dataset, where=where)
        tab = self._rows("tolerance", model=model, dataset=dataset, where=where)
        numbers = {
            name: row[name + sfx] for name in ("disca", "a", "b", "n_fluctuations", "fluctuation_magnitude", "penalty")
        }
        curve = self._rows("coverage_curves", model=model, dataset=dataset, curve="grid", where=where)
        tables = {"fluctuations": fl, "tolerance": tab, "curve": curve}
        tables = {
            k: v.drop(columns=[c for c in ("model", "dataset", "where", "curve") if c in v.columns])
            for k, v in tables.items()
        }
        return DiSCA.from_tables(
            numbers,
            tables,
            tolerance=float(self.parameters["tolerance"]),
            resolution=float(self.parameters["resolution"]),
        )

    def cohort_panels(self, model: str, dataset: str) -> dict[str, Any]:
        """What the diagnostics dashboard of ``model`` on ``dataset`` draws, rebuilt from the stored tables."""
        from ..metrics.diagnostics.cohorts import BiasRobustness, NoiseRobustness, SensSpecDrift, WassersteinMatrix

        self.check_model(model)
        key = dict(model=model, dataset=dataset)
        row = self._rows("diagnostics", **key)
        if not len(row):
            raise ValueError(f"the evaluation has no diagnostics of {model!r} on {dataset!r}")
        row = row.iloc[0]
        matrices = {
            bool(w["chosen"].iloc[0]): WassersteinMatrix.from_rows(w)
            for _, w in self._rows("wasserstein", **key).groupby("p", sort=True)
        }
        n_repeats, seed = int(self.parameters["noise_repeats"]), self.parameters["random_state"]
        method = self.parameters.get("noise_method", "monte_carlo")  # evaluations from before the exact method
        robust: dict[tuple[str, str], BiasRobustness | NoiseRobustness] = {}
        for cohort in ("val", "test"):  # an undefined curve (constant scores, one class) has no rows: NaN
            empty = np.array([])
            auc = float(row[f"auc_{cohort}"])
            robust[(cohort, "bias")] = BiasRobustness(np.nan, auc, np.nan, empty, empty)
            robust[(cohort, "noise")] = NoiseRobustness(
                np.nan, auc, np.nan, empty, empty, empty, n_repeats, seed, method
            )
        for (cohort, kind), r in self._rows("robustness", **key).groupby(["cohort", "kind"], sort=False):
            robust[(cohort, kind)] = (
                BiasRobustness.from_frame(r)
                if kind == "bias"
                else NoiseRobustness.from_frame(r, n_repeats=n_repeats, random_state=seed, method=method)
            )
        drift = SensSpecDrift.from_frame(self._rows("drift_curves", **key), score=float(row["drift"]))
        roc = {c: r for c, r in self._rows("roc", **key).groupby("cohort", sort=False)}
        hist = {c: r for c, r in self._rows("cohort_histograms", **key).groupby("cohort", sort=False)}
        return dict(
            model=model,
            dataset=dataset,
            cohorts=str(row["cohorts"]),
            summary=row.to_dict(),
            wasserstein=matrices[True],
            wasserstein_other=matrices.get(False),
            bias=(robust[("val", "bias")], robust[("test", "bias")]),
            noise=(robust[("val", "noise")], robust[("test", "noise")]),
            drift=drift,
            roc={c: (r["fpr"].to_numpy(), r["tpr"].to_numpy(), r["threshold"].to_numpy()) for c, r in roc.items()},
            auc={"val": float(row["auc_val"]), "test": float(row["auc_test"])},
            histograms={
                c: (
                    np.r_[r["left"].to_numpy(), r["right"].to_numpy()[-1:]],
                    r["negative"].to_numpy(),
                    r["positive"].to_numpy(),
                    int(r["clipped"].iloc[0]),
                )
                for c, r in hist.items()
            },
        )

    # -- tables for papers ------------------------------------------------------------

    def to_latex(
        self, table: str = "leaderboard", *, caption: str | None = None, label: str | None = None, **options: Any
    ) -> str:
        """A table of the evaluation as LaTeX for a paper: a booktabs ``tabular`` (``\\usepackage{booktabs}``).

        Parameters
        ----------
        table : {"leaderboard", "comparison", "grid"}, default="leaderboard"
            The index's leaderboard; every model against its reference; or
            one score per model and dataset with its rank
            (:func:`~beyondauc.evaluation.paper.paper_table`).
        caption, label : str, optional
            LaTeX source put in as given; with either, the tabular goes in a
            centred ``table`` float.
        **options
            ``score``, ``protocol``, ``method`` (grid); ``dataset``,
            ``values`` (comparison).

        Returns
        -------
        str
            Numbers as the report prints them, an interval in brackets after
            its estimate, names escaped; bold where the interval separates
            the best (the rule is a comment above the table).

        Examples
        --------
        >>> import beyondauc as ba
        >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "naive_bayes"], noise_repeats=2,
        ...                  n_bootstrap=0)
        >>> print(ev.to_latex().splitlines()[2])
        \\begin{tabular}{lrrrrrrrr}
        >>> "naive\\\\_bayes" in ev.to_latex()
        True
        """
        from .paper import paper_table

        return paper_table(self, table, **options).to_latex(caption=caption, label=label)

    # -- display ---------------------------------------------------------------------

    def __repr__(self) -> str:
        return (
            f"Evaluation({len(self.models)} models, {len(self.datasets)} datasets, {len(self.tables)} tables, "
            f"source={self.data.get('source')!r}, sha256={str(self.data.get('sha256'))[:12]}...)"
        )

    def _repr_html_(self) -> str:
        esc = html.escape
        board = self.tables.get("leaderboard")
        rows = "".join(
            f"<tr><td>{esc(k)}</td><td>{esc(str(v))}</td></tr>"
            for k, v in (
                ("source", self.data.get("source")),
                ("sha256", self.data.get("sha256")),
                ("models", len(self.models)),
                ("datasets", len(self.datasets)),
                ("created", self.created),
                ("headline", f"{self.parameters.get('protocol')}, {self.parameters.get('method')}"),
            )
        )
        tables = ", ".join(f"<code>{esc(k)}</code> ({len(v)})" for k, v in self.tables.items())
        lb = board.to_html(index=False, float_format=format_number, na_rep=MISSING) if board is not None else ""
        return (
            f"<div><strong>beyondauc Evaluation</strong><table>{rows}</table><p>Tables (rows): {tables}</p>{lb}</div>"
        )

    # -- saving -----------------------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        """The JSON manifest written beside the tables."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "beyondauc-evaluation",
            "created": self.created,
            "parameters": _jsonable(self.parameters),
            "data": _jsonable(self.data),
            "versions": self.versions,
            "timing": self.timing,
            "tables": {
                name: {
                    "file": f"{name}.parquet",
                    "rows": int(len(t)),
                    "description": TABLES.get(name, ""),
                    "columns": {str(c): str(t[c].dtype) for c in t.columns},
                }
                for name, t in self.tables.items()
            },
        }

    def save(self, path: str | os.PathLike | OutputFolder) -> Path:
        """Write the tables as Parquet files and ``manifest.json`` into the folder ``path``.

        ``path`` must be new, empty or an evaluation folder (its ``manifest.json``
        of kind ``beyondauc-evaluation``); anything else is refused. Only the
        files of the evaluation the manifest lists are replaced or deleted
        (a ``NOTES.md`` of yours in the folder stays), and the files are
        written aside inside the folder and moved in with renames, so a crash
        never leaves half an evaluation (see :mod:`beyondauc.utils.output`).
        ``path`` may also be the entered :func:`evaluation_folder` a caller
        opened before computing the evaluation.

        Returns
        -------
        pathlib.Path
        """
        if isinstance(path, OutputFolder):
            self._write(path.staging)
            path.commit()
            return path.out
        with evaluation_folder(path, label="`path`") as folder:
            self._write(folder.staging)
            folder.commit()
        return Path(path)

    def _write(self, folder):
        """The tables and the manifest, into the (staging) folder ``folder``."""
        folder = Path(folder)
        for name, t in self.tables.items():
            path = folder / f"{name}.parquet"
            try:
                _parquet_safe(t).to_parquet(path, index=False)
            except OSError as exc:  # pyarrow names no file: say which (the folder says what it keeps)
                if exc.filename is not None or exc.errno is None:
                    raise
                raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from None
        (folder / MANIFEST).write_text(json.dumps(self.manifest(), indent=1, allow_nan=True), encoding="utf-8")


def evaluation_folder(path: str | os.PathLike, *, label: str = "`out`") -> OutputFolder:
    """The output folder of an evaluation at ``path``, to enter before computing it.

    Entering refuses at once a folder that is not an evaluation (nor new or
    empty), a file of the user's where a table goes, a folder in use or not
    writable; :meth:`Evaluation.save` then writes into it.

    Examples
    --------
    >>> import tempfile, beyondauc as ba
    >>> from beyondauc.evaluation import evaluation_folder
    >>> with tempfile.TemporaryDirectory() as tmp, evaluation_folder(tmp + "/ev") as folder:
    ...     ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm"], noise_repeats=2, n_bootstrap=0)
    ...     ev.save(folder).name
    'ev'
    """
    return OutputFolder(Path(path).expanduser(), EVALUATION, planned=evaluation_files(), label=label)


def evaluation_files() -> list[str]:
    """Every file an evaluation folder may hold: ``manifest.json`` and one Parquet file per table."""
    return [MANIFEST, *(f"{name}.parquet" for name in TABLES)]


def _jsonable(value):
    """Parameters and data info as JSON would give them back (tuples as lists, numpy scalars as Python)."""
    return json.loads(json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def _parquet_safe(frame):
    """Object columns holding numbers and text alike become text columns Parquet can store."""
    out = frame
    for c in frame.columns:
        col = frame[c]
        if col.dtype == object:
            kinds = {type(v) for v in col if v is not None and not (isinstance(v, float) and np.isnan(v))}
            if len(kinds) > 1:
                out = out.copy() if out is frame else out
                out[c] = col.map(lambda v: None if v is None else str(v))
    return out


_CACHE: dict[
    tuple, Evaluation
] = {}  # (folder, manifest mtime and size) -> Evaluation: a Jupyter kernel that runs several notebooks reads it once


def load_evaluation(path: str | os.PathLike) -> Evaluation:
    """Read an evaluation saved by :meth:`Evaluation.save` (or a report folder holding one).

    Parameters
    ----------
    path : str or path
        The evaluation folder, or a report folder with ``evaluation/`` in it.

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> import tempfile, beyondauc as ba
    >>> ev = ba.evaluate("demo", datasets=["wine", "diabetes"], models=["svm", "knn"], noise_repeats=2, n_bootstrap=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     back = ba.load_evaluation(ev.save(tmp + "/ev"))
    >>> back.table("leaderboard").equals(ev.table("leaderboard"))
    True
    """
    path = Path(path).expanduser()
    if not (path / MANIFEST).is_file() and (path / "evaluation" / MANIFEST).is_file():
        path = path / "evaluation"
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"`path` {str(path)!r} holds no beyondauc evaluation ({MANIFEST} missing)")
    stat = manifest_path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, stat.st_ino)
    if key in _CACHE:
        return _CACHE[key]
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{manifest_path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if manifest.get("kind") != "beyondauc-evaluation":
        raise ValueError(f"{manifest_path}: not a beyondauc evaluation manifest")
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"{manifest_path}: schema version {version!r}, this beyondauc reads version {SCHEMA_VERSION}; "
            "recompute the evaluation"
        )
    tables = {}
    for name, spec in manifest["tables"].items():
        reason = outside(os.path.realpath(path), spec["file"])
        if reason:  # a manifest is untrusted: it may only name files in its folder
            raise ValueError(f"{manifest_path}: table {name!r} names {spec['file']!r}, which {reason}")
        file = path / spec["file"]
        if not file.is_file():
            raise FileNotFoundError(f"{file}: table {name!r} of the evaluation is missing")
        tables[name] = pd.read_parquet(file)
    ev = Evaluation(
        tables=add_ranks(tables),
        parameters=manifest["parameters"],
        data=manifest["data"],
        versions=manifest.get("versions", {}),
        created=manifest.get("created", ""),
        timing=manifest.get("timing", {}),
    )
    _CACHE.clear()  # one evaluation at a time: a report's
    _CACHE[key] = ev
    return ev
