"""Command line: ``beyondauc calibrate|diagnose|selective|report|demo|evaluate|table ...``.

A thin layer over the package: read the benchmark, compute, print.  Errors
exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from ..data.benchmark import load_benchmark
from ..data.demo import load_demo
from ..data.readers import domain_pairs, read_domains
from ..evaluation.parameters import LOG_PARAMETERS, NAN_POLICIES, PARAMETERS, cli_flag
from ..metrics import METHODS, PROTOCOLS, expected_accuracy_grid
from ..metrics.calibration.grid_bootstrap import bootstrap_grid
from ..metrics.calibration.ranking import (
    best_of_methods,
    calibration_modes,
    kendall_tau,
    rank_changes,
    rank_table,
)
from ..metrics.diagnostics.benchmark import DIAGNOSTIC_INTERVALS, cohort_diagnostics
from ..metrics.diagnostics.cohorts import NOISE_METHODS
from ..metrics.selective.benchmark import INTERVAL_NAMES, selective_answering
from ..utils.formatting import comment, plain_table, score_table
from ..utils.interrupts import Interrupted, signals_stop_the_run
from ..utils.validation import check_random_state, own_warning
from ..utils.version import __version__
from .table import add_table_command, table_command
from .wording import cli_message, spelling_of

__all__ = ["main"]

FORMATS = ("table", "json", "csv", "markdown", "latex")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise _CliError(f"{self.prog}: {message}")


class _CliError(Exception):
    pass


def build_parser() -> _Parser:
    """The ``beyondauc`` parser: one subcommand per job, each added by its own function."""
    parser = _Parser(prog="beyondauc", description="What the ROC AUC hides about scoring models.")
    parser.add_argument("--version", action="version", version=f"beyondauc {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    _add_calibrate(sub)
    _add_diagnose(sub)
    _add_selective(sub)
    _add_report(sub)
    _add_demo(sub)
    _add_evaluate(sub)
    add_table_command(sub)
    parser.commands = sub.choices  # name -> subparser, for messages in the subcommand's words
    return parser


def _add_calibrate(sub):
    """``beyondauc calibrate``: AUC vs expected accuracy (Opitz)."""
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
    _domains_option(cal)
    cal.add_argument("--class-weight", choices=["balanced"], default=None, help="weight classes by n / (2 n_class)")
    cal.add_argument("--reference", choices=["opitz2024"], default=None,
                     help="reproduce the settings of the code behind the Opitz paper's tables instead of its text: "
                     "scikit-learn's default lbfgs logistic, isotonic negative outside the calibration range, "
                     "outdata AUC on the pooled other datasets (slower)")
    cal.add_argument("--n-repeats", "--repeats", dest="repeats", type=int, default=100,
                     help="indata 80/20 repeats (default: 100)")
    cal.add_argument("--random-state", "--seed", dest="seed", type=int, default=0, help="indata random seed (default: 0)")
    cal.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    cal.add_argument("--models", default=None, help="comma-separated model columns (default: all numeric columns)")
    _nan_policy(cal)
    cal.add_argument("--jobs", type=int, default=1, help="models computed in parallel processes; -1 = all cores (default: 1)")
    cal.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    cal.add_argument("--n-bootstrap", "--bootstrap", dest="bootstrap", type=int, default=0, metavar="B",
                     help="bootstrap replicates (stratified, paired, refitting the calibrators) for intervals, rank "
                          "intervals and p_change (default: 0 = none)")
    cal.add_argument("--confidence-level", type=float, default=0.95, help="of the bootstrap intervals (default: 0.95)")


def _add_diagnose(sub):
    """``beyondauc diagnose``: test-set AUROC diagnostics (Roberts)."""
    diag = sub.add_parser(
        "diagnose",
        help="test-set AUROC diagnostics between validation and test cohorts (Roberts)",
        description="Bias and noise robustness of both cohorts, sensitivity/specificity drift and the "
        "Wasserstein matrix between them.  Cohorts: the 'split' column (val/test), or with --protocol "
        "the protocol's calibration data (V) and the dataset (T).  json: one object with --dataset, "
        "else a list with one object per dataset; 'bias_robustness', 'noise_robustness' and 'auc' "
        "are the test cohort's, the *_val keys the validation cohort's.  'wasserstein' and "
        "'wasserstein_matrix' are at --p; 'wasserstein_p1'/'wasserstein_matrix_p1' and "
        "'wasserstein_p2'/'wasserstein_matrix_p2' at p = 1 (the paper's Figure 4) and p = 2 (its text).",
    )
    _common(diag)
    diag.add_argument("--protocol", choices=("split",) + PROTOCOLS, default=None,
                      help="how V and T are formed (default: the split column if there is one, else xdomain; indata for one dataset)")
    diag.add_argument("--val-split", default="val", help="split value of the validation cohort (default: val)")
    diag.add_argument("--test-split", default="test", help="split value of the test cohort (default: test)")
    diag.add_argument("--noise-method", choices=NOISE_METHODS, default="exact",
                      help="noise robustness: exact (default) or seeded Monte Carlo draws, as testAUC")
    diag.add_argument("--noise-repeats", "--repeats", dest="repeats", type=int, default=20,
                      help="noise robustness Monte Carlo repeats with --noise-method monte_carlo (default: 20)")
    diag.add_argument("--n-points", "--points", dest="points", type=int, default=21,
                      help="sigma grid points of the robustness curves (default: 21)")
    diag.add_argument("--p", type=float, default=2,
                      help="Wasserstein order of 'wasserstein' (default: 2); p = 1 and 2 are reported too")
    diag.add_argument("--random-state", "--seed", dest="seed", type=int, default=0,
                      help="random seed (noise, indata split, bootstrap; default: 0)")
    _interval_options(diag, "the AUCs, bias robustness, drift and W (stratified by cohort and class)")


def _add_selective(sub):
    """``beyondauc selective``: selective answering (Mishra)."""
    sel = sub.add_parser(
        "selective",
        help="selective answering: DiSCA, a, b, fluctuations, AURC (Mishra)",
        description="Calibrate the model's scores into probabilities (protocol x method), answer by "
        "confidence max(p, 1 - p), and score when it should abstain.  json: one object with "
        "--dataset, else a list with one object per dataset.",
    )
    _common(sel)
    sel.add_argument("--ood-dataset", default=None, help="out-of-distribution dataset for DiSCA(OOD) and NiDMA")
    sel.add_argument("--protocol", choices=PROTOCOLS, default="indata",
                     help="calibration protocol (default: indata, so the dataset is in distribution)")
    sel.add_argument("--method", choices=METHODS, default="logistic", help="calibration method (default: logistic)")
    sel.add_argument("--tolerance", type=float, default=0.9, help="worst admissible accuracy for b (default: 0.9)")
    sel.add_argument("--resolution", type=float, default=0.01, help="confidence grid step (default: 0.01)")
    sel.add_argument("--computation-score", type=float, default=None,
                     help="1/energy or reference_parameters/parameters; enables DiDMA and NiDMA")
    sel.add_argument("--random-state", "--seed", dest="seed", type=int, default=0,
                     help="indata split and bootstrap seed (default: 0)")
    _interval_options(sel, "accuracy, area, AURC, DiSCA, a and b (the calibrator refitted per replicate)")


def _add_report(sub):
    """``beyondauc report``: the notebooks per model, rendered as HTML with an index."""
    rep = sub.add_parser(
        "report",
        help="run the notebooks per model and write HTML reports with an index.html leaderboard",
        description="Execute the analysis notebooks with papermill for every model, in parallel, and "
        "render one self-contained HTML report per model (optionally PDF) plus index.html. Exits 1 "
        "when a report failed (the others are still written).",
    )
    rep.add_argument("data", help="TRUE-format directory, CSV or Parquet file, or 'demo'")
    _report_options(rep, out_default=None)


def _add_demo(sub):
    """``beyondauc demo``: ``report`` on the embedded demo benchmark."""
    demo = sub.add_parser(
        "demo",
        help="`report` on the embedded demo benchmark into reports/demo/",
        description="The main job on the embedded demo benchmark: every model's report and the "
        "leaderboard in reports/demo/index.html. So that every analysis appears, it sets --ood-dataset wine "
        "(digits_noisy with --kind answers), --computation-score 1 (the same for every model) and --baseline "
        "logreg unless given.",
    )
    _report_options(demo, out_default="reports/demo")
    demo.add_argument("--kind", choices=("scores", "answers", "llm"), default="scores",
                      help="which embedded demo: 'scores' (8 models' scores on 8 binary datasets), 'answers' "
                      "(6 classifiers' answers with confidence on 4 multi-class datasets, the out-of-distribution "
                      "digits_noisy as --ood-dataset, into reports/demo-answers unless --out) or 'llm' "
                      "(lm-evaluation-harness logs of 3 simulated LLMs on 2 multiple-choice tasks, read as they are "
                      "written, into reports/demo-llm unless --out)")


def _add_evaluate(sub):
    """``beyondauc evaluate``: compute the evaluation and save it."""
    ev = sub.add_parser(
        "evaluate",
        help="compute the evaluation every report reads, and save it (Parquet tables + manifest.json)",
        description="One pass over the benchmark computing everything the reports and the index show, "
        "saved as a folder of Parquet tables with a JSON manifest (read it back with "
        "beyondauc.load_evaluation, pandas or DuckDB). No notebook runs.",
    )
    ev.add_argument("data", nargs="?", default="demo", help="TRUE-format directory, CSV or Parquet file, or 'demo'")
    ev.add_argument("--out", required=True, help="folder to write (new, empty, or an earlier evaluation)")
    ev.add_argument("--models", default=None, help="comma-separated models (default: all)")
    ev.add_argument("--datasets", default=None, help="comma-separated datasets (default: all)")
    ev.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    _domains_option(ev)
    _nan_policy(ev)
    ev.add_argument("--jobs", type=int, default=-1, help="local processes that run the evaluation's tasks "
                    "(default: -1, the cores; 1: none)")
    ev.add_argument("--dask", default=None, metavar="ADDRESS",
                    help="run the tasks on a Dask distributed scheduler, e.g. tcp://127.0.0.1:8786 (extra: dask)")
    ev.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                    help="an evaluation parameter, e.g. -p protocol=indata -p n_bootstrap=1000 (repeatable)")
    ev.add_argument("--quiet", action="store_true", help="no progress lines")
    _verbose_option(ev)
    _table_options(ev, notebooks=False)


def _report_options(p, *, out_default):
    p.add_argument("--models", default=None, help="comma-separated models to report on (default: all)")
    p.add_argument("--datasets", default=None, help="comma-separated datasets to analyse (default: all)")
    p.add_argument("--out", default=out_default,
                   help=f"output folder (default: {out_default or 'reports/<name of DATA>'})")
    p.add_argument("--pdf", action="store_true", help="also write each report as PDF (WeasyPrint)")
    p.add_argument("--jobs", type=int, default=None, help="parallel local processes (default: the cores)")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run the evaluation and the reports on a Dask distributed scheduler, e.g. "
                   "tcp://127.0.0.1:8786 (extra: dask; no shared file system needed)")
    p.add_argument("--include-code", action="store_true", help="show code and parameters in the HTML")
    p.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    _domains_option(p)
    _nan_policy(p)
    p.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                   help="a notebook parameter, e.g. -p protocol=indata -p tolerance=0.8 (repeatable; "
                   "VALUE is read as JSON when it can be, else as text)")
    _table_options(p, notebooks=True)
    p.add_argument("--recompute", action="store_true",
                   help="compute the evaluation again even if the output folder holds one of the same data and "
                   "parameters (default: reuse it)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _verbose_option(p)


def _verbose_option(p):
    p.add_argument("--verbose", action="store_true",
                   help="print every warning of the run in full (default: one line counting them; each is kept "
                   "in full in the evaluation, and the reports show it)")


#: Table parameters with an option of their own on report, demo and evaluate (not generated from the table).
#: (``overrides`` is how a notebook opened by hand takes what these options give.)
_OWN_OPTIONS = ("data", "evaluation", "model", "models", "datasets", "pos_label", "domains", "nan_policy",
                "overrides")


def _table_options(parser, *, notebooks):
    """One option per parameter of the table, spelled as the API name (``--n-bootstrap``), VALUE as with -p."""
    group = parser.add_argument_group("analysis parameters (the same names as the API; also -p NAME=VALUE)")
    for param in PARAMETERS.values():
        if param.name in _OWN_OPTIONS or not (param.evaluation or notebooks):
            continue
        group.add_argument(param.flag, dest=f"table_{param.name}", default=None, metavar="VALUE",
                           help=f"{param.help} (default: {param.default})")


def _table_values(args):
    """name -> value of the table options given on the command line (read as -p reads a VALUE)."""
    return {name[len("table_"):]: _value(text) for name, text in vars(args).items()
            if name.startswith("table_") and text is not None}


def _common(p):
    p.add_argument("data", nargs="?", default=None,
                   help="TRUE-format directory, CSV or Parquet file (default: the embedded demo benchmark)")
    p.add_argument("--model", required=True, help="the model column to analyse")
    p.add_argument("--dataset", default=None, help="one dataset (default: every dataset)")
    _domains_option(p)
    p.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    _nan_policy(p)
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")


def _nan_policy(p):
    """``--nan-policy``, from the parameter table."""
    param = PARAMETERS["nan_policy"]
    p.add_argument(param.flag, choices=NAN_POLICIES, default=param.default,
                   help=f"{param.help} (default: {param.default})")


def _domains_option(p):
    """``--domains FILE`` or ``--domains NAME=DOMAIN[,NAME=DOMAIN...]`` (repeatable), from the parameter table."""
    param = PARAMETERS["domains"]
    p.add_argument(param.flag, action="append", default=None, metavar="FILE|NAME=DOMAIN,...",
                   help=f"{param.help}. Here: a JSON or CSV file (columns dataset, domain), or NAME=DOMAIN pairs "
                   "separated by commas, e.g. --domains begin=dialogue,q2=dialogue; repeatable, later values "
                   "adding to earlier ones")


def _domains(args):
    """The ``--domains`` values as one dataset -> domain mapping (None without any): files read, pairs parsed."""
    values = getattr(args, "domains", None)
    if not values:
        return None
    flag = PARAMETERS["domains"].flag
    out = {}
    for value in values:
        if Path(value).expanduser().is_file():
            mapping = read_domains(Path(value).expanduser())
        elif "=" in value:
            mapping = domain_pairs(value, name=flag)
        else:
            raise ValueError(f"{flag} {value!r} is neither a file nor NAME=DOMAIN pairs (e.g. "
                             f"{flag} begin=dialogue,q2=dialogue)")
        for dataset, domain in mapping.items():
            if out.get(dataset, domain) != domain:
                raise ValueError(f"{flag} gives dataset {dataset!r} two domains: {out[dataset]!r} and {domain!r}")
            out[dataset] = domain
    return out


def _label_value(text):
    """A --pos-label as the file's readers see labels: an int or float if it reads as one, else text."""
    if text is None:
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _load(args):
    models = getattr(args, "models", None)
    models = [m.strip() for m in models.split(",") if m.strip()] if models else None
    domains = _domains(args)
    if args.data is None:
        bench = load_demo()
        if models is not None or domains:
            bench = load_benchmark(bench.frame, models=models, domains=domains, nan_policy=args.nan_policy)
    else:
        bench = load_benchmark(args.data, domains=domains, pos_label=_label_value(args.pos_label), models=models,
                               nan_policy=args.nan_policy)
    return bench


def _records(grid):
    keys = ["protocol", "method", "dataset", "domain", "model", "auc", "accuracy", "kappa",
            "balanced_accuracy", "mcc", "f1", "n_calibration", "n_evaluation", "calibration"]
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
            text = "n/a" if not np.isfinite(rec["estimate"]) else (
                f"{100 * rec['estimate']:.1f} [{100 * rec['low']:.1f}, {100 * rec['high']:.1f}]")
            wide.setdefault(rec["model"], {"model": rec["model"]})[rec["score"]] = text
    return pd.DataFrame(list(wide.values()), columns=["model", "auc", "accuracy", "kappa"])


def _calibrate(args, out):
    """``beyondauc calibrate``: the grid of every protocol x method, as json, csv or the paper's tables."""
    _check_calibrate_options(args)
    bench = _load(args)
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


def _check_calibrate_options(args):
    """Refuse calibrate's numeric options out of range, naming the flag."""
    if args.repeats < 1:
        raise ValueError(f"--n-repeats must be an int >= 1, got {args.repeats}")
    check_random_state(args.seed)  # the range in the message, in this command's spelling
    if args.jobs < 1 and args.jobs != -1:
        raise ValueError(f"--jobs must be an int >= 1 or -1 (all cores), got {args.jobs}")
    _check_interval_options(args)


def _calibrate_grid(bench, protocols, methods, args):
    """(the grid, its bootstrap or None): with --n-bootstrap the grid carries the intervals."""
    if not args.bootstrap:
        grid = expected_accuracy_grid(bench, protocols=protocols, methods=methods, class_weight=args.class_weight,
                                      n_repeats=args.repeats, random_state=args.seed, n_jobs=args.jobs,
                                      reference=args.reference)
        return grid, None
    if args.reference is not None:
        raise _CliError("--n-bootstrap is not available with --reference opitz2024 (a reproduction mode)")
    bs = bootstrap_grid(bench, protocols=protocols, methods=methods, class_weight=args.class_weight,
                        n_repeats=args.repeats, random_state=args.seed, n_jobs=args.jobs,
                        n_bootstrap=args.bootstrap, confidence_level=args.confidence_level)
    return bs.grid, bs


def _setting_blocks(grid, bs, p, m, args):
    """The text tables of one protocol x method: expected scores, intervals, rank changes, Kendall's tau."""
    fmt = args.format
    res = grid[(grid["protocol"] == p) & (grid["method"] == m)]
    blocks = [score_table(rank_table(res, score=score), fmt=fmt, title=f"Expected {score}: protocol={p}, method={m}")
              for score in ("accuracy", "kappa")]
    if bs is not None:
        blocks.append(plain_table(_grid_interval_table(bs, p, m), fmt=fmt, title=(
            f"Mean over datasets, {args.confidence_level:.0%} bootstrap intervals "
            f"({args.bootstrap} replicates, calibrators refitted) ({p}, {m})")))
    blocks.append(plain_table(_rank_change_table(res, bs), fmt=fmt, title=f"Rank changes AUC -> accuracy ({p}, {m})"))
    tau = kendall_tau(res, score="accuracy", bootstrap=bs)
    blocks.append(plain_table(tau, fmt=fmt, title=f"Kendall's tau, AUC vs accuracy ranking ({p}, {m})"))
    return blocks


def _rank_change_table(res, bs):
    """The mean rank changes AUC -> accuracy of one setting, in readers' column names (with rank intervals)."""
    ch = rank_changes(res, score="accuracy", bootstrap=bs).query("dataset == 'mean'")
    cols = ["model", "auc", "auc_rank", "value", "rank", "change"]
    ch = ch[cols + (["auc_rank_low", "auc_rank_high", "rank_low", "rank_high", "sign_share", "p_value", "significant"]
                    if bs is not None else [])].rename(
        columns={"auc": "mean AUC", "auc_rank": "AUC rank", "value": "mean accuracy",
                 "rank": "accuracy rank", "change": "rank change"})
    for c in ("AUC rank", "accuracy rank", "rank change"):
        ch[c] = ch[c].astype("Int64")
    if bs is not None:
        for c in ("AUC rank", "accuracy rank"):
            lo, hi = ("auc_rank_low", "auc_rank_high") if c == "AUC rank" else ("rank_low", "rank_high")
            ch[f"{c} interval"] = [f"[{a:g}, {b:g}]" for a, b in zip(ch.pop(lo), ch.pop(hi))]
        alpha = 1 - bs.confidence_level
        ch["significant"] = np.where(ch["significant"], f"yes (p <= {alpha:g})",
                                     np.where(ch["rank change"] == 0, "no change", f"no (p > {alpha:g})"))
        ch = ch.rename(columns={"sign_share": "sign kept in (share)", "p_value": "p-value"})
    return ch


def _mode_blocks(grid, fmt):
    """The paper's Tables 4 and 5 over several protocols x methods."""
    modes = calibration_modes(grid, score="accuracy")
    modes["mode"] = [p if not m else f"{p}-{m}" for p, m in zip(modes["protocol"], modes["method"])]
    blocks = [score_table(modes, fmt=fmt, title="Calibration modes: mean accuracy over datasets (Table 4); "
                          "best mode per model marked", row_key="mode", col_key="model", unmarked_rows=("auc",))]
    best = best_of_methods(grid, score="kappa")
    blocks.append(score_table(best, fmt=fmt, title="Kappa, best of the calibration methods (Table 5); best protocol per "
                              "model marked", row_key="protocol", col_key="model"))
    return blocks


def _clean(value):
    """JSON-safe: NaN -> None, inf stays a string, numpy scalars -> Python."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _interval_options(parser, what):
    parser.add_argument("--n-bootstrap", "--bootstrap", dest="bootstrap", type=int, default=0, metavar="B",
                        help=f"bootstrap replicates for percentile intervals of {what}; adds <name>_low/_high "
                        "(default: 0, no intervals)")
    parser.add_argument("--confidence-level", type=float, default=0.95,
                        help="interval confidence level in (0, 1) (default: 0.95)")


def _check_interval_options(args):
    if args.bootstrap < 0:
        raise ValueError(f"--n-bootstrap must be an int >= 0, got {args.bootstrap}")
    if not 0 < args.confidence_level < 1:
        raise ValueError(f"--confidence-level must be in (0, 1), got {args.confidence_level}")


def _interval_table(records, names, args):
    """Per dataset, each number's bootstrap interval as 'low - high' (text formats)."""
    rows = []
    for rec in records:
        row = {"dataset": rec["dataset"]}
        for name in names:
            if f"{name}_low" in rec:
                row[name] = f"{rec[name]:.4f} [{rec[name + '_low']:.4f}, {rec[name + '_high']:.4f}]"
        rows.append(row)
    level = f"{100 * args.confidence_level:g}%"
    return plain_table(pd.DataFrame(rows), fmt=args.format,
                       title=f"Estimate [{level} bootstrap percentile interval], {args.bootstrap} replicates")


def _emit(records, single, args, out, tables):
    """Write records as json/csv, or the text tables ``tables()`` renders."""
    if args.format == "json":
        json.dump(_clean(records[0] if single else records), out, indent=1)
        out.write("\n")
        return
    if args.format == "csv":  # flat columns only (the Wasserstein matrix is in json and the tables)
        frame = pd.DataFrame(records)
        frame[[c for c in frame.columns if not isinstance(frame[c].iloc[0], dict)]].to_csv(out, index=False)
        return
    blocks = tables()
    if args.format == "latex":  # the introduction is prose (names, a path): a comment, like the titles
        blocks[0] = comment(blocks[0])
    out.write("\n\n".join(blocks) + "\n")


def _datasets(bench, args):
    if args.dataset is not None:
        bench._slice(args.dataset)
        return [args.dataset]
    return [d for d in bench.datasets if d != getattr(args, "ood_dataset", None)]


def _diagnose(args, out):
    for name, value, low in (("--noise-repeats", args.repeats, 1), ("--n-points", args.points, 2)):
        if value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value}")
    check_random_state(args.seed)  # the range in the message, in this command's spelling
    _check_interval_options(args)
    bench = _load(args)
    bench._check_model(args.model)
    records, results = [], []
    for d in _datasets(bench, args):
        r = cohort_diagnostics(bench, args.model, d, protocol=args.protocol, val_split=args.val_split,
                               test_split=args.test_split, n_points=args.points, n_repeats=args.repeats,
                               noise_method=args.noise_method,
                               p=args.p, random_state=args.seed, n_bootstrap=args.bootstrap,
                               confidence_level=args.confidence_level)
        rec = r.to_dict()
        rec = {"model": rec["model"], "dataset": rec["dataset"], "cohorts": rec["cohorts"],
               "auc": r.auc_test, "bias_robustness": r.bias_test.score, "noise_robustness": r.noise_test.score,
               "drift": r.drift.score, "wasserstein": r.wasserstein.score, **rec}
        rec["wasserstein_matrix"] = r.wasserstein.to_frame().to_dict(orient="index")
        rec["wasserstein_note"] = r.wasserstein.note
        for order, w in ((1, r.wasserstein_p1), (2, r.wasserstein_p2)):
            rec[f"wasserstein_matrix_p{order}"] = w.to_frame().to_dict(orient="index")
        records.append(rec)
        results.append(r)

    def tables():
        cols = ["dataset", "cohorts", "n_val", "n_test", "auc_val", "auc_test", "bias_robustness_val",
                "bias_robustness_test", "noise_robustness_val", "noise_robustness_test", "drift", "wasserstein",
                "wasserstein_p1", "wasserstein_p2"]
        head = pd.DataFrame(records)[cols].rename(columns=lambda c: c.replace("_robustness", ""))
        matrices = [
            plain_table(w.to_frame().reset_index(names=""), fmt=args.format, floatfmt=".4g",
                        title=f"{w.p:g}-Wasserstein matrix, {r.dataset} (W = {w.score:.3f})")
            for r in results
            for w in _orders(r)
        ]
        return [
            f"beyondauc {__version__} -- {bench.source}: test-set AUROC diagnostics of {args.model!r}. "
            "bias/noise: robustness of the AUC (1 = never drops); drift: sensitivity/specificity drift "
            f"(0 = none); wasserstein: W at p = {args.p:g} (higher = classes apart, cohorts alike); "
            "wasserstein_p1, _p2: W at p = 1 (the paper's Figure 4) and p = 2 (its text).",
            plain_table(head, fmt=args.format, floatfmt=".4f", title="Diagnostics per dataset"),
            *([_interval_table(records, DIAGNOSTIC_INTERVALS, args)] if args.bootstrap else []),
            *matrices,
        ]

    _emit(records, args.dataset is not None, args, out, tables)


def _orders(result):
    """The Wasserstein matrices of a result at --p, then p = 1 and p = 2, each order once."""
    out = [result.wasserstein]
    for w in (result.wasserstein_p1, result.wasserstein_p2):
        if all(w.p != seen.p for seen in out):
            out.append(w)
    return out


def _selective(args, out):
    check_random_state(args.seed)  # the range in the message, in this command's spelling
    _check_interval_options(args)
    bench = _load(args)
    bench._check_model(args.model)
    records, b_rows = [], []
    for d in _datasets(bench, args):
        r = selective_answering(bench, args.model, d, ood_dataset=args.ood_dataset, protocol=args.protocol,
                                method=args.method, tolerance=args.tolerance, resolution=args.resolution,
                                computation_score=args.computation_score, random_state=args.seed,
                                n_bootstrap=args.bootstrap, confidence_level=args.confidence_level)
        records.append(r.to_dict())
        b_rows.append({"dataset": d, **{f"<{t:g}": b for t, b in zip(r.disca.b_table["tolerance"], r.disca.b_table["b"])}})
    cols = ["dataset", "n", "accuracy", "disca", "a", "b", "n_fluctuations", "penalty", "area", "aurc", "e_aurc",
            "augrc"]
    if args.ood_dataset is not None:
        cols += ["disca_ood", "n_fluctuations_ood"]
    if args.computation_score is not None:
        cols += ["didma"] + (["nidma"] if args.ood_dataset is not None else [])

    def tables():
        return [
            f"beyondauc {__version__} -- {bench.source}: selective answering of {args.model!r} "
            f"(calibrated: {args.protocol}/{args.method}; tolerance {args.tolerance:g}; confidence grid step "
            f"{args.resolution:g}, which DiSCA depends on). a, b: confidence where "
            "accuracy first drops below 100% / the tolerance (lower is better); DiSCA higher is better.",
            plain_table(pd.DataFrame(records)[cols], fmt=args.format, floatfmt=".4f",
                        title="Selective answering per dataset"),
            *([_interval_table(records, INTERVAL_NAMES + ("disca_ood",), args)] if args.bootstrap else []),
            plain_table(pd.DataFrame(b_rows), fmt=args.format, floatfmt=".3f",
                        title="b over tolerance (the paper's Table 2 layout)"),
        ]

    _emit(records, args.dataset is not None, args, out, tables)


def _value(text):
    """A VALUE of -p NAME=VALUE or of a parameter's option: JSON when it reads as JSON, else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parameters(items, args=None):
    """-p NAME=VALUE items, then the parameters' own options (an option and a -p of one name must agree)."""
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise _CliError(f"beyondauc: error: --parameter must be NAME=VALUE, got {item!r}")
        params[name.strip()] = _value(value)
    for name, value in (_table_values(args) if args is not None else {}).items():
        if name in params and params[name] != value:
            raise _CliError(f"beyondauc: error: {cli_flag(name)} {value!r} and -p {name}={params[name]!r} disagree")
        params[name] = value
    return params


#: What ``beyondauc demo`` sets unless given, so every analysis appears: an out-of-distribution dataset (DiSCA(OOD),
#: NiDMA), a computation score (DiDMA; one for every model, so DiDMA ranks as DiSCA does) and a baseline.
DEMO_PARAMETERS = {
    "scores": {"ood_dataset": "wine", "computation_score": 1.0, "baseline": "logreg"},
    "answers": {"ood_dataset": "digits_noisy", "computation_score": 1.0, "baseline": "logreg"},
    "llm": {"computation_score": 1.0, "baseline": "qwen-small"},
}


def _report(args, out):
    from ..report import DEMO, run_report

    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs must be an int >= 1, got {args.jobs}")
    data, out_dir, parameters = getattr(args, "data", DEMO), args.out, _parameters(args.parameter, args)
    if getattr(args, "kind", "scores") == "answers":  # beyondauc demo --kind answers
        data = "demo:answers"
        out_dir = "reports/demo-answers" if out_dir == "reports/demo" else out_dir
    if getattr(args, "kind", "scores") == "llm":  # beyondauc demo --kind llm: a folder of harness logs
        from ..data.logs import llm_demo

        data = str(llm_demo())
        out_dir = "reports/demo-llm" if out_dir == "reports/demo" else out_dir
    if hasattr(args, "kind"):  # beyondauc demo: every analysis (docs/getting_started.md says why these values)
        for name, value in DEMO_PARAMETERS[args.kind].items():
            parameters.setdefault(name, value)
    result = run_report(
        data, models=args.models, datasets=args.datasets, out=out_dir, pdf=args.pdf, jobs=args.jobs,
        dask=args.dask, include_code=args.include_code, pos_label=_label_value(args.pos_label),
        domains=_domains(args), nan_policy=args.nan_policy, baseline=parameters.pop("baseline", None),
        log_options={name: parameters.pop(name, None) for name in LOG_PARAMETERS}, parameters=parameters,
        progress=not args.quiet, recompute=args.recompute,
    )
    print(result.summary(), file=out)
    if not result.ok:
        raise _ReportFailed()


def _evaluate(args, out):
    from ..evaluation.container import evaluation_folder
    from ..evaluation.pipeline import evaluate

    if args.jobs < 1 and args.jobs != -1:
        raise ValueError(f"--jobs must be an int >= 1 or -1 (all cores), got {args.jobs}")
    params = _parameters(args.parameter, args)
    for name, value in (("models", args.models), ("datasets", args.datasets),
                        ("pos_label", _label_value(args.pos_label)), ("domains", _domains(args))):
        if value is not None:
            params[name] = value
    params.setdefault("nan_policy", args.nan_policy)  # -p nan_policy=... or the flag (default: raise)
    # refused here, before computing: a folder that is not an evaluation, a file of the user's where a table
    # goes, a folder in use or not writable
    with evaluation_folder(args.out) as folder:
        ev = evaluate(args.data, n_jobs=args.jobs, dask=args.dask, progress=not args.quiet, **params)
        path = ev.save(folder)
    print(f"{ev!r}: {len(ev.tables)} tables written to {path} in {ev.timing.get('total', float('nan')):.1f} s",
          file=out)


class _ReportFailed(Exception):
    """Some reports failed; the summary has been printed."""


#: The commands that write an output folder: a signal stops them by :mod:`beyondauc.utils.interrupts`' policy.
_WRITERS = ("report", "demo", "evaluate")

_COMMANDS = {"calibrate": _calibrate, "diagnose": _diagnose, "selective": _selective,
             "report": _report, "demo": _report, "evaluate": _evaluate, "table": table_command}


#: Where a run that keeps its warnings says they are (the commands whose output holds them).
_KEPT = {"report": "the reports (What this report shows)", "demo": "the reports (What this report shows)",
         "evaluate": "the evaluation (its manifest's data.notes)"}


def _say_warnings(caught, args, spelling):
    """Print the run's own warnings on stderr, each once, in this command's spelling: every one for a command
    that keeps none (calibrate, diagnose, selective) or with --verbose, else one line counting them.

    Other libraries' warnings (numpy's RuntimeWarnings, an unclosed event loop) are dropped: what they mean
    for a number, the run says itself.
    """
    said = list(dict.fromkeys(str(w.message) for w in caught if own_warning(w.category)))  # a report reads twice
    kept = _KEPT.get(args.command)
    if kept is None or getattr(args, "verbose", False):
        for message in said:
            print(f"beyondauc: warning: {cli_message(message, spelling)}", file=sys.stderr)
    elif said:
        n = len(said)
        print(f"beyondauc: {n} warning{'s' if n > 1 else ''}, each kept in full in {kept}; --verbose prints "
              f"{'them' if n > 1 else 'it'}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``beyondauc`` console script; returns the exit status."""
    out = out or sys.stdout
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(out)
            return 0
        stoppable = signals_stop_the_run() if args.command in _WRITERS else contextlib.nullcontext()
        with warnings.catch_warnings(record=True) as caught, stoppable:
            warnings.simplefilter("always")
            _COMMANDS[args.command](args, out)
        _say_warnings(caught, args, spelling_of(parser.commands.get(args.command)))
        return 0
    except BrokenPipeError:  # output piped into e.g. `head`
        return 0
    except _ReportFailed:
        return 1
    except _CliError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, KeyError, ImportError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        command = getattr(args, "command", None)
        msg = cli_message(msg, spelling_of(parser.commands.get(command)))
        print(f"beyondauc: error: {msg}", file=sys.stderr)
        return 2
    except Interrupted as exc:  # SIGINT, SIGTERM or SIGHUP: workers stopped, the output folder as it was
        print(f"beyondauc: {exc.message()}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
