"""``beyondauc selective``: selective answering of one model per dataset (DiSCA, the coverage-accuracy
numbers, b over tolerance), as JSON, CSV or tables."""

from __future__ import annotations

import pandas as pd

from ..metrics.selective.benchmark import selective_answering
from ..metrics.selective.benchmark_intervals import INTERVAL_NAMES
from ..utils.formatting import plain_table
from ..utils.validation import check_random_state
from ..utils.version import __version__
from .data_options import analysed_datasets, load_data
from .results import check_interval_options, emit_results, interval_table

__all__ = ["selective_command"]


def selective_command(args, out):
    """``beyondauc selective``: selective answering of ``--model`` on each dataset (or ``--dataset``)."""
    check_random_state(args.seed)  # the range in the message, in this command's spelling
    check_interval_options(args)
    bench = load_data(args)
    bench.check_model(args.model)
    results = [(d, _selective(bench, d, args)) for d in analysed_datasets(bench, args)]
    records = [r.to_dict() for _, r in results]
    b_rows = [
        {"dataset": d, **{f"<{t:g}": b for t, b in zip(r.disca.b_table["tolerance"], r.disca.b_table["b"])}}
        for d, r in results
    ]
    emit_results(records, args.dataset is not None, args, out, lambda: _tables(bench, records, b_rows, args))


def _selective(bench, dataset, args):
    """Selective answering of ``args.model`` on one dataset, with the command's options."""
    return selective_answering(
        bench,
        args.model,
        dataset,
        ood_dataset=args.ood_dataset,
        protocol=args.protocol,
        method=args.method,
        tolerance=args.tolerance,
        resolution=args.resolution,
        computation_score=args.computation_score,
        random_state=args.seed,
        n_bootstrap=args.bootstrap,
        confidence_level=args.confidence_level,
    )


def _columns(args):
    """The columns of the table "Selective answering per dataset": the OOD and computation ones when given."""
    cols = [
        "dataset",
        "n",
        "accuracy",
        "disca",
        "a",
        "b",
        "n_fluctuations",
        "penalty",
        "area",
        "aurc",
        "e_aurc",
        "augrc",
    ]
    if args.ood_dataset is not None:
        cols += ["disca_ood", "n_fluctuations_ood"]
    if args.computation_score is not None:
        cols += ["didma"] + (["nidma"] if args.ood_dataset is not None else [])
    return cols


def _tables(bench, records, b_rows, args):
    """The text blocks: the introduction, the numbers per dataset, their intervals, b over tolerance."""
    return [
        f"beyondauc {__version__} -- {bench.source}: selective answering of {args.model!r} "
        f"(calibrated: {args.protocol}/{args.method}; tolerance {args.tolerance:g}; confidence grid step "
        f"{args.resolution:g}, which DiSCA depends on). a, b: confidence where "
        "accuracy first drops below 100% / the tolerance (lower is better); DiSCA higher is better.",
        plain_table(
            pd.DataFrame(records)[_columns(args)],
            fmt=args.format,
            floatfmt=".4f",
            title="Selective answering per dataset",
        ),
        *([interval_table(records, INTERVAL_NAMES + ("disca_ood",), args)] if args.bootstrap else []),
        plain_table(
            pd.DataFrame(b_rows),
            fmt=args.format,
            floatfmt=".3f",
            title="b over tolerance (the paper's Table 2 layout)",
        ),
    ]
