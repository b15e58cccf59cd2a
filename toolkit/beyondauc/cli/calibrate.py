"""``beyondauc calibrate``: the expected-accuracy grid of every protocol x method, as JSON, CSV or the
paper's tables (scores, intervals, rank changes, Kendall's tau, calibration modes)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..metrics import expected_accuracy_grid
from ..metrics.calibration.grid_bootstrap import bootstrap_grid
from ..metrics.calibration.ranking import (
    best_of_methods,
    calibration_modes,
    kendall_tau,
    rank_changes,
    rank_table,
)
from ..utils.formatting import comment, plain_table, score_table
from ..utils.validation import check_random_state
from ..utils.version import __version__
from .data_options import load_data
from .parser import CliError
from .results import check_interval_options

__all__ = ["calibrate_command"]


def calibrate_command(args, out):
    """``beyondauc calibrate``: the grid of every protocol x method, as json, csv or the paper's tables."""
    _check_calibrate_options(args)
    bench = load_data(args)
    protocols = list(dict.fromkeys(args.protocol or ["xdomain"]))
    methods = list(dict.fromkeys(args.method or ["logistic"]))
    grid, bs = _calibrate_grid(bench, protocols, methods, args)
    if args.format == "json":
        json.dump(_records(grid), out, indent=1)
        out.write("\n")
        return
    if args.format == "csv":
        grid.to_csv(out, index=False)
        return
    fmt = args.format
    blocks = [
        f"beyondauc {__version__} -- {bench.source}: {len(bench.datasets)} datasets, {len(bench.models)} models, "
        f"{len(bench)} examples. Cells: score x100 (rank among models); best per column marked."
        + (" Settings of the code behind the paper's tables (--reference opitz2024)." if args.reference else ""),
    ]
    if fmt == "latex":  # unescaped text (a path with '_', ...) would break LaTeX; a comment, like the titles
        blocks[0] = comment(blocks[0])
    first = grid[(grid["protocol"] == protocols[0]) & (grid["method"] == methods[0])]
    blocks.append(score_table(rank_table(first, score="auc"), fmt=fmt, title="AUC"))
    for p in protocols:
        for m in methods:
            blocks += _setting_blocks(grid, bs, p, m, args)
    if len(protocols) * len(methods) > 1:
        blocks += _mode_blocks(grid, fmt)
    out.write("\n\n".join(blocks) + "\n")


def _records(grid):
    keys = [
        "protocol",
        "method",
        "dataset",
        "domain",
        "model",
        "auc",
        "accuracy",
        "kappa",
        "balanced_accuracy",
        "mcc",
        "f1",
        "n_calibration",
        "n_evaluation",
        "calibration",
    ]
    keys = [c for c in grid.columns if c in keys or (c.endswith(("_low", "_high")) and c.rsplit("_", 1)[0] in keys)]
    out = []
    for rec in grid[keys].to_dict("records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()})
    return out


def _grid_interval_table(bs, protocol, method):
    """Model x (AUC, accuracy, kappa) of the mean over datasets, each as 'estimate [low, high]' (x100)."""
    iv = bs.intervals()
    iv = iv[(iv["protocol"] == protocol) & (iv["method"] == method) & (iv["dataset"] == "mean")]
    wide = {}
    for rec in iv.to_dict("records"):
        if rec["score"] in ("auc", "accuracy", "kappa"):
            text = (
                "n/a"
                if not np.isfinite(rec["estimate"])
                else (f"{100 * rec['estimate']:.1f} [{100 * rec['low']:.1f}, {100 * rec['high']:.1f}]")
            )
            wide.setdefault(rec["model"], {"model": rec["model"]})[rec["score"]] = text
    return pd.DataFrame(list(wide.values()), columns=["model", "auc", "accuracy", "kappa"])


def _check_calibrate_options(args):
    """Refuse calibrate's numeric options out of range, naming the flag."""
    if args.repeats < 1:
        raise ValueError(f"--n-repeats must be an int >= 1, got {args.repeats}")
    check_random_state(args.seed)  # the range in the message, in this command's spelling
    if args.jobs < 1 and args.jobs != -1:
        raise ValueError(f"--jobs must be an int >= 1 or -1 (all cores), got {args.jobs}")
    check_interval_options(args)


def _calibrate_grid(bench, protocols, methods, args):
    """(the grid, its bootstrap or None): with --n-bootstrap the grid carries the intervals."""
    if not args.bootstrap:
        grid = expected_accuracy_grid(
            bench,
            protocols=protocols,
            methods=methods,
            class_weight=args.class_weight,
            n_repeats=args.repeats,
            random_state=args.seed,
            n_jobs=args.jobs,
            reference=args.reference,
        )
        return grid, None
    if args.reference is not None:
        raise CliError("--n-bootstrap is not available with --reference opitz2024 (a reproduction mode)")
    bs = bootstrap_grid(
        bench,
        protocols=protocols,
        methods=methods,
        class_weight=args.class_weight,
        n_repeats=args.repeats,
        random_state=args.seed,
        n_jobs=args.jobs,
        n_bootstrap=args.bootstrap,
        confidence_level=args.confidence_level,
    )
    return bs.grid, bs


def _setting_blocks(grid, bs, p, m, args):
    """The text tables of one protocol x method: expected scores, intervals, rank changes, Kendall's tau."""
    fmt = args.format
    res = grid[(grid["protocol"] == p) & (grid["method"] == m)]
    blocks = [
        score_table(rank_table(res, score=score), fmt=fmt, title=f"Expected {score}: protocol={p}, method={m}")
        for score in ("accuracy", "kappa")
    ]
    if bs is not None:
        blocks.append(
            plain_table(
                _grid_interval_table(bs, p, m),
                fmt=fmt,
                title=(
                    f"Mean over datasets, {args.confidence_level:.0%} bootstrap intervals "
                    f"({args.bootstrap} replicates, calibrators refitted) ({p}, {m})"
                ),
            )
        )
    blocks.append(plain_table(_rank_change_table(res, bs), fmt=fmt, title=f"Rank changes AUC -> accuracy ({p}, {m})"))
    tau = kendall_tau(res, score="accuracy", bootstrap=bs)
    blocks.append(plain_table(tau, fmt=fmt, title=f"Kendall's tau, AUC vs accuracy ranking ({p}, {m})"))
    return blocks


def _rank_change_table(res, bs):
    """The mean rank changes AUC -> accuracy of one setting, in readers' column names (with rank intervals)."""
    ch = rank_changes(res, score="accuracy", bootstrap=bs).query("dataset == 'mean'")
    cols = ["model", "auc", "auc_rank", "value", "rank", "change"]
    ch = ch[
        cols
        + (
            ["auc_rank_low", "auc_rank_high", "rank_low", "rank_high", "sign_share", "p_value", "significant"]
            if bs is not None
            else []
        )
    ].rename(
        columns={
            "auc": "mean AUC",
            "auc_rank": "AUC rank",
            "value": "mean accuracy",
            "rank": "accuracy rank",
            "change": "rank change",
        }
    )
    for c in ("AUC rank", "accuracy rank", "rank change"):
        ch[c] = ch[c].astype("Int64")
    if bs is not None:
        for c in ("AUC rank", "accuracy rank"):
            lo, hi = ("auc_rank_low", "auc_rank_high") if c == "AUC rank" else ("rank_low", "rank_high")
            ch[f"{c} interval"] = [f"[{a:g}, {b:g}]" for a, b in zip(ch.pop(lo), ch.pop(hi))]
        alpha = 1 - bs.confidence_level
        ch["significant"] = np.where(
            ch["significant"],
            f"yes (p <= {alpha:g})",
            np.where(ch["rank change"] == 0, "no change", f"no (p > {alpha:g})"),
        )
        ch = ch.rename(columns={"sign_share": "sign kept in (share)", "p_value": "p-value"})
    return ch


def _mode_blocks(grid, fmt):
    """The paper's Tables 4 and 5 over several protocols x methods."""
    modes = calibration_modes(grid, score="accuracy")
    modes["mode"] = [p if not m else f"{p}-{m}" for p, m in zip(modes["protocol"], modes["method"])]
    blocks = [
        score_table(
            modes,
            fmt=fmt,
            title="Calibration modes: mean accuracy over datasets (Table 4); best mode per model marked",
            row_key="mode",
            col_key="model",
            unmarked_rows=("auc",),
        )
    ]
    best = best_of_methods(grid, score="kappa")
    blocks.append(
        score_table(
            best,
            fmt=fmt,
            title="Kappa, best of the calibration methods (Table 5); best protocol per model marked",
            row_key="protocol",
            col_key="model",
        )
    )
    return blocks
