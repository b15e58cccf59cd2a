"""Command line: ``beyondauc calibrate DATA ...``.

A thin layer over the package: read the benchmark, compute, print.  Errors
exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

from . import __version__
from ._format import plain_table, score_table
from .calibration import METHODS, PROTOCOLS, expected_accuracy_grid
from .data import load_benchmark, load_demo
from .ranking import best_of_methods, calibration_modes, kendall_tau, rank_changes, rank_table

__all__ = ["main"]

FORMATS = ("table", "json", "csv", "markdown", "latex")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise _CliError(f"{self.prog}: {message}")


class _CliError(Exception):
    pass


def _build_parser():
    parser = _Parser(prog="beyondauc", description="What the ROC AUC hides about scoring models.")
    parser.add_argument("--version", action="version", version=f"beyondauc {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    cal = sub.add_parser(
        "calibrate",
        help="AUC vs expected accuracy after calibrating on other data (Opitz)",
        description="Calibrate every model on other datasets and report the accuracy and kappa it "
        "really reaches, next to its AUC, with ranks.",
    )
    cal.add_argument("data", nargs="?", default=None,
                     help="TRUE-format directory, CSV or Parquet file (default: the embedded demo benchmark)")
    cal.add_argument("--protocol", action="append", choices=PROTOCOLS,
                     help="calibration protocol; repeat for several (default: xdomain)")
    cal.add_argument("--method", action="append", choices=METHODS,
                     help="calibration method; repeat for several (default: logistic)")
    cal.add_argument("--domains", help="JSON or CSV file mapping dataset -> domain")
    cal.add_argument("--class-weight", choices=["balanced"], default=None, help="weight classes by n / (2 n_class)")
    cal.add_argument("--repeats", type=int, default=100, help="indata 80/20 repeats (default: 100)")
    cal.add_argument("--seed", type=int, default=0, help="indata random seed (default: 0)")
    cal.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    cal.add_argument("--models", default=None, help="comma-separated model columns (default: all numeric columns)")
    cal.add_argument("--jobs", type=int, default=1, help="models computed in parallel processes; -1 = all cores (default: 1)")
    cal.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    return parser


def _load(args):
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    if args.data is None:
        bench = load_demo()
        if models is not None or args.domains:
            bench = load_benchmark(bench.frame, models=models, domains=args.domains)
    else:
        bench = load_benchmark(args.data, domains=args.domains, pos_label=args.pos_label, models=models)
    return bench


def _records(grid):
    keys = ["protocol", "method", "dataset", "domain", "model", "auc", "accuracy", "kappa",
            "balanced_accuracy", "mcc", "f1", "n_calibration", "n_evaluation", "calibration"]
    out = []
    for rec in grid[keys].to_dict("records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()})
    return out


def _calibrate(args, out):
    if args.repeats < 1:
        raise ValueError(f"--repeats must be an int >= 1, got {args.repeats}")
    if args.seed < 0:
        raise ValueError(f"--seed must be an int >= 0, got {args.seed}")
    if args.jobs < 1 and args.jobs != -1:
        raise ValueError(f"--jobs must be an int >= 1 or -1 (all cores), got {args.jobs}")
    bench = _load(args)
    protocols = list(dict.fromkeys(args.protocol or ["xdomain"]))
    methods = list(dict.fromkeys(args.method or ["logistic"]))
    grid = expected_accuracy_grid(bench, protocols=protocols, methods=methods, class_weight=args.class_weight,
                                  n_repeats=args.repeats, random_state=args.seed, n_jobs=args.jobs)
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
        f"{len(bench)} examples. Cells: score x100 (rank among models); best per column marked.",
    ]
    if fmt == "latex":  # unescaped text (a path with '_', ...) would break LaTeX; a comment, like the titles
        blocks[0] = f"% {blocks[0]}"
    first = grid[(grid["protocol"] == protocols[0]) & (grid["method"] == methods[0])]
    blocks.append(score_table(rank_table(first, score="auc"), fmt=fmt, title="AUC"))
    for p in protocols:
        for m in methods:
            res = grid[(grid["protocol"] == p) & (grid["method"] == m)]
            for score in ("accuracy", "kappa"):
                blocks.append(score_table(rank_table(res, score=score), fmt=fmt,
                                          title=f"Expected {score}: protocol={p}, method={m}"))
            ch = rank_changes(res, score="accuracy").query("dataset == 'mean'")
            ch = ch[["model", "auc", "auc_rank", "value", "rank", "change"]].rename(
                columns={"auc": "mean AUC", "auc_rank": "AUC rank", "value": "mean accuracy",
                         "rank": "accuracy rank", "change": "rank change"})
            for c in ("AUC rank", "accuracy rank", "rank change"):
                ch[c] = ch[c].astype("Int64")
            blocks.append(plain_table(ch, fmt=fmt, title=f"Rank changes AUC -> accuracy ({p}, {m})"))
            tau = kendall_tau(res, score="accuracy")
            blocks.append(plain_table(tau, fmt=fmt, title=f"Kendall's tau, AUC vs accuracy ranking ({p}, {m})"))
    if len(protocols) * len(methods) > 1:
        modes = calibration_modes(grid, score="accuracy")
        modes["mode"] = [p if not m else f"{p}-{m}" for p, m in zip(modes["protocol"], modes["method"])]
        blocks.append(score_table(modes, fmt=fmt, title="Calibration modes: mean accuracy over datasets (Table 4); "
                                  "best mode per model marked", row_key="mode", col_key="model", unmarked_rows=("auc",)))
        best = best_of_methods(grid, score="kappa")
        blocks.append(score_table(best, fmt=fmt, title="Kappa, best of the calibration methods (Table 5); best protocol per model marked",
                                  row_key="protocol", col_key="model"))
    out.write("\n\n".join(blocks) + "\n")


def main(argv=None, out=None):
    """Entry point of the ``beyondauc`` console script; returns the exit status."""
    out = out or sys.stdout
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(out)
            return 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _calibrate(args, out)
        for w in caught:
            print(f"beyondauc: warning: {w.message}", file=sys.stderr)
        return 0
    except BrokenPipeError:  # output piped into e.g. `head`
        return 0
    except _CliError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, OSError, KeyError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"beyondauc: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
