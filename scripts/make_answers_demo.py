#!/usr/bin/env python
"""Build the embedded answers demo ``toolkit/beyondauc/datasets/answers.csv.gz``.

Real multi-class answers: scikit-learn classifiers trained on data that
scikit-learn ships inside the wheel (``load_*``, never ``fetch_*``, so no
network), each answering held-out examples with a prediction (the argmax of
``predict_proba``) and a confidence (its probability).  Everything is
deterministic (fixed seeds, single-threaded BLAS, 6-significant-digit
confidences, gzip with ``mtime=0``): two runs give byte-identical files.

For every dataset:

1. a stratified half (seeded per dataset) is the *training part*, not shipped;
   the other half is *held out* and split, stratified and seeded, into a
   ``val`` cohort (40 %) and a ``test`` cohort (60 %);
2. every model is fitted once on the training part and answers every held-out
   example;
3. the out-of-distribution dataset ``digits_noisy`` holds the held-out digits
   images rotated and noised; the digits models answer it (same ids, same
   cohorts as ``digits``).

The file is in the long answers form, one row per example and model:
``dataset, domain, split, id, model, confidence, correct, prediction, label``.
See ``toolkit/beyondauc/datasets/README.md`` for the full description.

Usage::

    python scripts/make_answers_demo.py            # writes the shipped file
    python scripts/make_answers_demo.py --out X    # writes somewhere else
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
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.ndimage import rotate  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "toolkit" / "beyondauc" / "datasets" / "answers.csv.gz"

TRAIN_FRACTION = 0.5  # share of each dataset used for training (not shipped)
VAL_FRACTION = 0.4  # share of the held-out part in the `val` cohort (the rest is `test`)
SIG_DIGITS = 6  # significant digits of every confidence
OOD_MAX_ANGLE = 15.0  # digits_noisy: rotation angle uniform in [-15, 15] degrees
OOD_NOISE_SD = 1.0  # digits_noisy: Gaussian pixel noise (pixels are ink 0..16)
OOD_SEED = 1234  # digits_noisy: seed of the angles and the noise

COLUMNS = ("dataset", "domain", "split", "id", "model", "confidence", "correct", "prediction", "label")


def _models(seed: int) -> dict:
    """The models, fresh and unfitted; ``seed`` is the dataset's seed."""
    return {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000)),
        "naive_bayes": GaussianNB(),
        "random_forest": RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=seed),
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=10)),
        "mlp": make_pipeline(
            StandardScaler(), MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-3, max_iter=2000, random_state=seed)
        ),
        "deep_tree": DecisionTreeClassifier(min_samples_leaf=2, random_state=seed),
    }


MODELS = tuple(_models(0))


@dataclass(frozen=True)
class Task:
    """One multi-class dataset: features, integer labels 0..k-1, and its seed."""

    name: str
    domain: str
    X: np.ndarray
    y: np.ndarray
    seed: int


def build_tasks() -> list[Task]:
    """The in-distribution datasets, in file order."""
    digits = load_digits()
    wine = load_wine()
    wine_cols = [
        list(wine.feature_names).index(c)
        for c in ("malic_acid", "ash", "alcalinity_of_ash", "magnesium", "color_intensity", "hue")
    ]
    iris = load_iris()
    bc = load_breast_cancer()
    bc_cols = [i for i, n in enumerate(bc.feature_names) if n.startswith("mean ")]
    return [
        Task("digits", "vision", digits.data, digits.target, 11),
        Task("wine", "chemistry", wine.data[:, wine_cols], wine.target, 12),
        Task("iris", "botany", iris.data[:, :2], iris.target, 13),  # sepal length and width only
        Task("breast_cancer", "medical", bc.data[:, bc_cols], bc.target, 14),
    ]


def split_task(task: Task) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(training rows, held-out rows in original order, True where a held-out row is in `val`)."""
    rows = np.arange(len(task.y))
    train, held = train_test_split(rows, train_size=TRAIN_FRACTION, stratify=task.y, random_state=task.seed)
    held = np.sort(held)
    val, _ = train_test_split(held, train_size=VAL_FRACTION, stratify=task.y[held], random_state=task.seed)
    return np.sort(train), held, np.isin(held, val)


def noisy_digits(images: np.ndarray) -> np.ndarray:
    """Rotate each 8x8 image (angle uniform in +-OOD_MAX_ANGLE) and add Gaussian noise, clipped to [0, 16]."""
    rng = np.random.default_rng(OOD_SEED)
    angles = rng.uniform(-OOD_MAX_ANGLE, OOD_MAX_ANGLE, size=len(images))
    noise = rng.normal(0.0, OOD_NOISE_SD, size=images.shape)
    out = np.stack(
        [
            rotate(img.reshape(8, 8), a, reshape=False, order=1, mode="constant", cval=0.0).ravel()
            for img, a in zip(images, angles)
        ]
    )
    return np.clip(out + noise, 0.0, 16.0)


def _fmt(x: float) -> str:
    return f"{float(x):.{SIG_DIGITS}g}"


def answer_rows(name, domain, fitted, X, y, index, is_val) -> list[str]:
    """CSV lines of every model's answers to (X, y): model by model, examples in order."""
    lines = []
    split = np.where(is_val, "val", "test")
    ids = [f"{name}-{i:04d}" for i in index]
    for m, model in fitted.items():
        proba = model.predict_proba(X)
        pred = model.classes_[np.argmax(proba, axis=1)]
        conf = proba.max(axis=1)
        if not np.all(np.isfinite(conf)):
            raise RuntimeError(f"{name}/{m}: non-finite confidence")
        for j in range(len(y)):
            lines.append(
                f"{name},{domain},{split[j]},{ids[j]},{m},{_fmt(conf[j])},{int(pred[j] == y[j])},"
                f"{int(pred[j])},{int(y[j])}"
            )
    return lines


def build_csv() -> str:
    lines = [",".join(COLUMNS)]
    ood = None
    for task in build_tasks():
        train, held, is_val = split_task(task)
        fitted = {}
        for m, model in _models(task.seed).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fitted[m] = model.fit(task.X[train], task.y[train])
        lines += answer_rows(task.name, task.domain, fitted, task.X[held], task.y[held], held, is_val)
        if task.name == "digits":
            ood = (fitted, noisy_digits(task.X[held]), task.y[held], held, is_val)
    fitted, X, y, held, is_val = ood
    lines += answer_rows("digits_noisy", "vision", fitted, X, y, held, is_val)
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
