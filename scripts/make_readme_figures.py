#!/usr/bin/env python
"""Draw the docs' figures (docs/images) from the embedded demo benchmark.

Every number in them comes from the package (no metric code here), so the
figures follow the code: re-run after a change to a metric or a Display.

Usage::

    python scripts/make_readme_figures.py            # writes docs/images/*.png
    python scripts/make_readme_figures.py --out DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from beyondauc import load_demo  # noqa: E402
from beyondauc.plots import CoverageAccuracyDisplay, DiagnosticsDashboard, ToleranceDisplay  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        default=str(Path(__file__).resolve().parents[1] / "docs" / "images"),
        help="output folder (default: docs/images/ of this repository)",
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bench = load_demo()

    dash = DiagnosticsDashboard.from_benchmark(bench, "svm", "iris_versicolor")
    dash.figure_.savefig(out / "dashboard.png", dpi=60)

    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5), layout="constrained")
    CoverageAccuracyDisplay.from_benchmark(bench, "logreg", "digits_even", ax=left)
    ToleranceDisplay.from_benchmark(bench, "digits_even", ax=right)
    fig.savefig(out / "selective.png", dpi=60)
    plt.close("all")
    print(f"wrote {out / 'dashboard.png'} and {out / 'selective.png'}")


if __name__ == "__main__":
    main()
