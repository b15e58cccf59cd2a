"""``beyondauc diagnose``: the test-set AUROC diagnostics of one model per dataset (robustness, drift,
the Wasserstein matrices), as JSON, CSV or tables."""

from __future__ import annotations

import pandas as pd

from ..metrics.diagnostics.benchmark import DIAGNOSTIC_INTERVALS, cohort_diagnostics
from ..utils.formatting import plain_table
from ..utils.validation import check_random_state
from ..utils.version import __version__
from .data_options import analysed_datasets, load_data
from .results import check_interval_options, emit_results, interval_table

__all__ = ["diagnose_command"]


def diagnose_command(args, out):
    """``beyondauc diagnose``: the cohort diagnostics of ``--model`` on each dataset (or ``--dataset``)."""
    _check_options(args)
    bench = load_data(args)
    bench.check_model(args.model)
    results = [_diagnostics(bench, d, args) for d in analysed_datasets(bench, args)]
    records = [_record(r) for r in results]
    emit_results(records, args.dataset is not None, args, out, lambda: _tables(bench, records, results, args))


def _check_options(args):
    """Refuse diagnose's numeric options out of range, naming the flag."""
    for name, value, low in (("--noise-repeats", args.repeats, 1), ("--n-points", args.points, 2)):
        if value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value}")
    check_random_state(args.seed)  # the range in the message, in this command's spelling
    check_interval_options(args)


def _diagnostics(bench, dataset, args):
    """The cohort diagnostics of ``args.model`` on one dataset, with the command's options."""
    return cohort_diagnostics(
        bench,
        args.model,
        dataset,
        protocol=args.protocol,
        val_split=args.val_split,
        test_split=args.test_split,
        n_points=args.points,
        n_repeats=args.repeats,
        noise_method=args.noise_method,
        p=args.p,
        random_state=args.seed,
        n_bootstrap=args.bootstrap,
        confidence_level=args.confidence_level,
    )


def _record(r):
    """One dataset's JSON/CSV record: the headline numbers first, then every number and the matrices."""
    rec = r.to_dict()
    rec = {
        "model": rec["model"],
        "dataset": rec["dataset"],
        "cohorts": rec["cohorts"],
        "auc": r.auc_test,
        "bias_robustness": r.bias_test.score,
        "noise_robustness": r.noise_test.score,
        "drift": r.drift.score,
        "wasserstein": r.wasserstein.score,
        **rec,
    }
    rec["wasserstein_matrix"] = r.wasserstein.to_frame().to_dict(orient="index")
    rec["wasserstein_note"] = r.wasserstein.note
    for order, w in ((1, r.wasserstein_p1), (2, r.wasserstein_p2)):
        rec[f"wasserstein_matrix_p{order}"] = w.to_frame().to_dict(orient="index")
    return rec


#: The columns of the table "Diagnostics per dataset".
_COLUMNS = [
    "dataset",
    "cohorts",
    "n_val",
    "n_test",
    "auc_val",
    "auc_test",
    "bias_robustness_val",
    "bias_robustness_test",
    "noise_robustness_val",
    "noise_robustness_test",
    "drift",
    "wasserstein",
    "wasserstein_p1",
    "wasserstein_p2",
]


def _tables(bench, records, results, args):
    """The text blocks: the introduction, the numbers per dataset, their intervals, the Wasserstein matrices."""
    head = pd.DataFrame(records)[_COLUMNS].rename(columns=lambda c: c.replace("_robustness", ""))
    matrices = [
        plain_table(
            w.to_frame().reset_index(names=""),
            fmt=args.format,
            floatfmt=".4g",
            title=f"{w.p:g}-Wasserstein matrix, {r.dataset} (W = {w.score:.3f})",
        )
        for r in results
        for w in _orders(r)
    ]
    return [
        f"beyondauc {__version__} -- {bench.source}: test-set AUROC diagnostics of {args.model!r}. "
        "bias/noise: robustness of the AUC (1 = never drops); drift: sensitivity/specificity drift "
        f"(0 = none); wasserstein: W at p = {args.p:g} (higher = classes apart, cohorts alike); "
        "wasserstein_p1, _p2: W at p = 1 (the paper's Figure 4) and p = 2 (its text).",
        plain_table(head, fmt=args.format, floatfmt=".4f", title="Diagnostics per dataset"),
        *([interval_table(records, DIAGNOSTIC_INTERVALS, args)] if args.bootstrap else []),
        *matrices,
    ]


def _orders(result):
    """The Wasserstein matrices of a result at --p, then p = 1 and p = 2, each order once."""
    out = [result.wasserstein]
    for w in (result.wasserstein_p1, result.wasserstein_p2):
        if all(w.p != seen.p for seen in out):
            out.append(w)
    return out
