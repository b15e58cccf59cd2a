"""The embedded demo benchmarks."""

from __future__ import annotations

from importlib import resources

from ..utils.validation import check_option
from .benchmark import KINDS, Benchmark
from .load import load_benchmark

__all__ = ["load_demo"]


def load_demo(*, kind: str = "scores") -> Benchmark:
    """Load an embedded demo benchmark (real models on scikit-learn's bundled data).

    See ``beyondauc/datasets/README.md`` for how each was made; the scripts
    ``scripts/make_demo_data.py`` and ``scripts/make_answers_demo.py``
    regenerate them.

    Parameters
    ----------
    kind : {"scores", "answers"}, default="scores"
        ``"scores"``: raw scores of 8 models on 8 binary datasets
        (``demo.csv.gz``).  ``"answers"``: the answers (confidence, correct)
        of 6 multi-class classifiers on 4 datasets and one
        out-of-distribution dataset, ``digits_noisy`` (``answers.csv.gz``).

    Returns
    -------
    Benchmark
        Of kind ``kind``.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> bench = load_demo()
    >>> len(bench.datasets) >= 6 and len(bench.models) >= 6
    True
    >>> answers = load_demo(kind="answers")
    >>> answers.kind, answers.datasets[-1]
    ('answers', 'digits_noisy')
    """
    check_option(kind, "kind", KINDS)
    ref = resources.files("beyondauc") / "datasets" / ("demo.csv.gz" if kind == "scores" else "answers.csv.gz")
    with resources.as_file(ref) as path:
        bench = load_benchmark(path)  # the answers demo is in the long form
    source = "beyondauc demo benchmark" if kind == "scores" else "beyondauc answers demo benchmark"
    return Benchmark(bench.frame, bench.models, bench.datasets, bench.domains, source, bench.kind, bench.correct)
