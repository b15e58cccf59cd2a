#!/usr/bin/env python
"""Build the embedded demo benchmark ``toolkit/beyondauc/datasets/demo.csv.gz``.

Real model outputs on real data, shipped with the package so that a demo needs
no download and no training at run time.  Everything below is deterministic
(fixed seeds, single-threaded BLAS, 6-significant-digit formatting, gzip with
``mtime=0``): running the script twice gives byte-identical output.

Only data that scikit-learn ships inside the wheel is used (``load_*``, never
``fetch_*``), so the script needs no network.

For every binary task:

1. the examples are split (stratified, seeded) into a *training pool* (40 %)
   that is NOT shipped and the *benchmark rows* (60 %) that are shipped;
2. each model family is fitted once on the training pool, with fixed,
   deliberately modest hyperparameters, and scores the benchmark rows with its
   RAW output (margins, log-odds, probabilities, log-probabilities ...);
3. ``single_feature`` is an untrained score: one documented raw feature
   (negated when it correlates negatively with the label), like BLEU;
4. the benchmark rows are split into a ``val`` and a ``test`` cohort that
   differ by a shifted subpopulation: rows above the 60th percentile of a
   documented covariate go to ``test`` with probability 0.75, all others with
   probability 0.25.

See ``toolkit/beyondauc/datasets/README.md`` for the full description.

Usage::

    python scripts/make_demo_data.py            # writes the shipped file
    python scripts/make_demo_data.py --out X    # writes somewhere else
"""

from __future__ import annotations

import os

# Single-threaded numerics, set before numpy is imported: reductions in a
# multi-threaded BLAS may differ in the last bits between machines/thread counts.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gzip  # noqa: E402
import io  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import (  # noqa: E402
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_wine,
)
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "toolkit" / "beyondauc" / "datasets" / "demo.csv.gz"

TRAIN_FRACTION = 0.40  # share of each dataset kept aside for training
SHIFT_QUANTILE = 0.60  # covariate quantile that defines the shifted subgroup
P_TEST_HIGH = 0.75  # P(test) for rows above the quantile
P_TEST_LOW = 0.25  # P(test) for the other rows
SIG_DIGITS = 6  # significant digits written for every score

MODEL_COLUMNS = (
    "logreg",
    "svm",
    "naive_bayes",
    "random_forest",
    "knn",
    "grad_boost",
    "mlp",
    "single_feature",
)


# --------------------------------------------------------------------------- #
# Datasets
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Task:
    """One binary benchmark dataset.

    Attributes
    ----------
    name, domain : identifiers written to the ``dataset`` / ``domain`` columns.
    X : (n, p) feature matrix given to the trained models.
    y : (n,) 0/1 labels.
    single_feature : (n,) untrained raw score (already sign-oriented).
    covariate : (n,) covariate that defines the val/test cohort shift.
    index : (n,) row index in the original scikit-learn dataset (used in ``id``).
    seed : dataset-specific seed for the train split, label noise and cohorts.
    label_noise : fraction of TRAINING labels flipped (0 for none).
    """

    name: str
    domain: str
    X: np.ndarray
    y: np.ndarray
    single_feature: np.ndarray
    covariate: np.ndarray
    index: np.ndarray
    seed: int
    label_noise: float = 0.0


def _col(names, wanted: str) -> int:
    return list(names).index(wanted)


# 16 of the 64 digits pixels: a 4x4 lattice (rows 1,3,5,7 x cols 1,3,5,7 of the
# 8x8 image).  Restricting the input keeps the digit tasks from being trivial.
DIGIT_PIXELS = np.array([8 * r + c for r in (1, 3, 5, 7) for c in (1, 3, 5, 7)])


def build_tasks() -> list[Task]:
    tasks: list[Task] = []

    # ---- medical ---------------------------------------------------------- #
    bc = load_breast_cancer()
    names = list(bc.feature_names)
    mean_cols = [i for i, n in enumerate(names) if n.startswith("mean ")]
    radius = bc.data[:, _col(names, "mean radius")]
    tasks.append(
        Task(
            name="breast_cancer",
            domain="medical",
            X=bc.data[:, mean_cols],  # the 10 "mean ..." features
            y=(bc.target == 0).astype(int),  # target 0 = malignant -> 1
            single_feature=radius,  # mean radius (raw units)
            covariate=radius,  # large tumours over-represented in test
            index=np.arange(len(bc.target)),
            seed=101,
        )
    )

    db = load_diabetes(scaled=False)  # raw units: age in years, BMI kg/m^2
    names = list(db.feature_names)
    tasks.append(
        Task(
            name="diabetes",
            domain="medical",
            X=db.data,
            y=(db.target > np.median(db.target)).astype(int),  # progression above median -> 1
            single_feature=db.data[:, _col(names, "bmi")],  # body-mass index
            covariate=db.data[:, _col(names, "age")],  # older patients over-represented in test
            index=np.arange(len(db.target)),
            seed=102,
        )
    )

    # ---- vision ----------------------------------------------------------- #
    dg = load_digits()
    ink = dg.data.sum(axis=1)  # total ink of the 8x8 image
    digit = dg.target
    all_idx = np.arange(len(digit))
    tasks.append(
        Task(
            name="digits_even",
            domain="vision",
            X=dg.data[:, DIGIT_PIXELS],
            y=(digit % 2 == 0).astype(int),  # even digit -> 1
            single_feature=dg.data[:, 42],  # pixel (row 5, col 2)
            covariate=ink,
            index=all_idx,
            seed=201,
            label_noise=0.10,
        )
    )
    tasks.append(
        Task(
            name="digits_large",
            domain="vision",
            X=dg.data[:, DIGIT_PIXELS],
            y=(digit >= 5).astype(int),  # digit 5..9 -> 1
            single_feature=-dg.data[:, 52],  # minus pixel (row 6, col 4)
            covariate=ink,
            index=all_idx,
            seed=202,
            label_noise=0.10,
        )
    )
    m38 = (digit == 3) | (digit == 8)
    tasks.append(
        Task(
            name="digits_3v8",
            domain="vision",
            X=dg.data[m38][:, DIGIT_PIXELS],
            y=(digit[m38] == 8).astype(int),  # 8 -> 1, 3 -> 0
            single_feature=dg.data[m38, 34],  # pixel (row 4, col 2)
            covariate=ink[m38],
            index=all_idx[m38],
            seed=203,
            label_noise=0.10,
        )
    )

    # ---- chemistry -------------------------------------------------------- #
    wn = load_wine()
    names = list(wn.feature_names)
    weak = ["malic_acid", "ash", "alcalinity_of_ash", "magnesium", "color_intensity", "hue"]
    tasks.append(
        Task(
            name="wine",
            domain="chemistry",
            X=wn.data[:, [_col(names, n) for n in weak]],
            y=(wn.target == 0).astype(int),  # cultivar 0 -> 1, cultivars 1,2 -> 0
            single_feature=wn.data[:, _col(names, "magnesium")],
            covariate=wn.data[:, _col(names, "alcohol")],  # strong wines over-represented in test
            index=np.arange(len(wn.target)),
            seed=301,
        )
    )

    # ---- botany ----------------------------------------------------------- #
    ir = load_iris()
    names = list(ir.feature_names)
    petal_len = ir.data[:, _col(names, "petal length (cm)")]
    sepal_cols = [_col(names, "sepal length (cm)"), _col(names, "sepal width (cm)")]
    tasks.append(
        Task(
            name="iris_virginica",
            domain="botany",
            X=ir.data[:, sepal_cols],  # sepal measurements only
            y=(ir.target == 2).astype(int),  # virginica -> 1
            single_feature=ir.data[:, _col(names, "sepal length (cm)")],
            covariate=petal_len,
            index=np.arange(len(ir.target)),
            seed=401,
        )
    )
    tasks.append(
        Task(
            name="iris_versicolor",
            domain="botany",
            X=ir.data,  # all four measurements
            y=(ir.target == 1).astype(int),  # versicolor -> 1 (middle class)
            single_feature=-ir.data[:, _col(names, "sepal width (cm)")],
            covariate=petal_len,
            index=np.arange(len(ir.target)),
            seed=402,
        )
    )
    return tasks


# --------------------------------------------------------------------------- #
# Models
# --------------------------------------------------------------------------- #
def _scaled(est):
    return make_pipeline(StandardScaler(), est)


# name -> (factory(seed), raw-score function(fitted_model, X))
MODELS: dict[str, tuple[Callable[[int], object], Callable[[object, np.ndarray], np.ndarray]]] = {
    "logreg": (
        lambda s: _scaled(LogisticRegression(C=0.1, max_iter=2000)),
        lambda m, X: m.decision_function(X),  # logit margin
    ),
    "svm": (
        lambda s: _scaled(SVC(kernel="rbf", C=0.5, gamma="scale")),
        lambda m, X: m.decision_function(X),  # signed distance-like margin
    ),
    "naive_bayes": (
        lambda s: GaussianNB(),
        lambda m, X: m.predict_proba(X)[:, 1],  # very peaked near 0/1
    ),
    "random_forest": (
        lambda s: RandomForestClassifier(
            n_estimators=200, max_depth=3, min_samples_leaf=5, max_features="sqrt", random_state=s, n_jobs=1
        ),
        lambda m, X: m.predict_proba(X)[:, 1],  # shrunk towards the base rate
    ),
    "knn": (
        lambda s: _scaled(KNeighborsClassifier(n_neighbors=9)),
        lambda m, X: m.predict_proba(X)[:, 1],  # multiples of 1/9 -> ties
    ),
    "grad_boost": (
        lambda s: GradientBoostingClassifier(
            n_estimators=150, max_depth=2, learning_rate=0.1, subsample=0.7, random_state=s
        ),
        lambda m, X: m.decision_function(X),  # log-odds
    ),
    "mlp": (
        lambda s: _scaled(MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-2, max_iter=600, random_state=s)),
        lambda m, X: m.predict_log_proba(X)[:, 1],  # log P(y=1), <= 0
    ),
}
assert tuple(MODELS) + ("single_feature",) == MODEL_COLUMNS


# --------------------------------------------------------------------------- #
# Assembly
# --------------------------------------------------------------------------- #
def _fmt(x: float) -> str:
    s = f"{float(x):.{SIG_DIGITS}g}"
    return "0" if s == "-0" else s


def score_task(task: Task) -> list[list[str]]:
    idx = np.arange(len(task.y))
    train_idx, bench_idx = train_test_split(idx, train_size=TRAIN_FRACTION, stratify=task.y, random_state=task.seed)
    train_idx = np.sort(train_idx)
    bench_idx = np.sort(bench_idx)
    rng = np.random.default_rng(task.seed)

    # Training labels, optionally with a fixed fraction flipped (label noise).
    y_train = task.y[train_idx].copy()
    if task.label_noise > 0:
        n_flip = int(round(task.label_noise * len(y_train)))
        flip = rng.choice(len(y_train), size=n_flip, replace=False)
        y_train[flip] = 1 - y_train[flip]

    X_train, X_bench = task.X[train_idx], task.X[bench_idx]
    scores: dict[str, np.ndarray] = {}
    for name, (factory, raw) in MODELS.items():
        model = factory(task.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X_train, y_train)
        scores[name] = np.asarray(raw(model, X_bench), dtype=float)
    scores["single_feature"] = np.asarray(task.single_feature[bench_idx], dtype=float)

    # Cohorts: shifted subpopulation along a documented covariate.
    cov = task.covariate[bench_idx]
    high = cov > np.quantile(cov, SHIFT_QUANTILE)
    p_test = np.where(high, P_TEST_HIGH, P_TEST_LOW)
    is_test = rng.random(len(bench_idx)) < p_test

    y_bench = task.y[bench_idx]
    for split_mask in (is_test, ~is_test):
        if len(np.unique(y_bench[split_mask])) != 2:
            raise RuntimeError(f"{task.name}: a cohort lacks one class")
    for name, s in scores.items():
        if not np.all(np.isfinite(s)):
            raise RuntimeError(f"{task.name}/{name}: non-finite scores")

    rows = []
    for j, i in enumerate(bench_idx):
        rows.append(
            [
                task.name,
                task.domain,
                "test" if is_test[j] else "val",
                f"{task.name}-{task.index[i]:04d}",
                str(int(y_bench[j])),
            ]
            + [_fmt(scores[m][j]) for m in MODEL_COLUMNS]
        )
    return rows


def build_csv() -> str:
    header = ["dataset", "domain", "split", "id", "label", *MODEL_COLUMNS]
    lines = [",".join(header)]
    for task in build_tasks():
        lines.extend(",".join(r) for r in score_task(task))
    return "\n".join(lines) + "\n"


def write_gz(text: str, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    # filename="" and mtime=0 keep the gzip header free of run-specific data.
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))
    out.write_bytes(buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output path (default: {DEFAULT_OUT.relative_to(REPO_ROOT)})"
    )
    args = parser.parse_args(argv)
    text = build_csv()
    write_gz(text, args.out)
    n_rows = text.count("\n") - 1
    print(f"wrote {args.out} ({n_rows} rows, {args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
