"""Command line: ``beyondauc calibrate|diagnose|selective|report|demo|evaluate|table ...``.

A thin layer over the package: read the benchmark, compute, print.  Errors
exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

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

from ..data.demo import load_demo
from ..data.load import load_benchmark
from ..data.readers import domain_pairs, read_domains
from ..evaluation.parameters import LOG_PARAMETERS, PARAMETERS, cli_flag
from ..metrics import expected_accuracy_grid
from ..metrics.calibration.grid_bootstrap import bootstrap_grid
from ..metrics.calibration.ranking import (
    best_of_methods,
    calibration_modes,
    kendall_tau,
    rank_changes,
    rank_table,
)
from ..metrics.diagnostics.benchmark import DIAGNOSTIC_INTERVALS, cohort_diagnostics
from ..metrics.selective.benchmark import selective_answering
from ..metrics.selective.benchmark_intervals import INTERVAL_NAMES
from ..utils.formatting import comment, plain_table, score_table
from ..utils.interrupts import Interrupted, signals_stop_the_run
from ..utils.validation import check_random_state, own_warning
from ..utils.version import __version__
from .parser import CliError, build_parser, label_value
from .table import table_command
from .wording import cli_message, spelling_of

__all__ = ["main"]


def _table_values(args):
    """name -> value of the table options given on the command line (read as -p reads a VALUE)."""
    return {
        name[len("table_") :]: _value(text)
        for name, text in vars(args).items()
        if name.startswith("table_") and text is not None
    }


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
            raise ValueError(
                f"{flag} {value!r} is neither a file nor NAME=DOMAIN pairs (e.g. {flag} begin=dialogue,q2=dialogue)"
            )
        for dataset, domain in mapping.items():
            if out.get(dataset, domain) != domain:
                raise ValueError(f"{flag} gives dataset {dataset!r} two domains: {out[dataset]!r} and {domain!r}")
            out[dataset] = domain
    return out


def _load(args):
    models = getattr(args, "models", None)
    models = [m.strip() for m in models.split(",") if m.strip()] if models else None
    domains = _domains(args)
    if args.data is None:
        bench = load_demo()
        if models is not None or domains:
            bench = load_benchmark(bench.frame, models=models, domains=domains, nan_policy=args.nan_policy)
    else:
        bench = load_benchmark(
            args.data, domains=domains, pos_label=label_value(args.pos_label), models=models, nan_policy=args.nan_policy
        )
    return bench


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
    return plain_table(
        pd.DataFrame(rows),
        fmt=args.format,
        title=f"Estimate [{level} bootstrap percentile interval], {args.bootstrap} replicates",
    )


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
        r = cohort_diagnostics(
            bench,
            args.model,
            d,
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
        records.append(rec)
        results.append(r)

    def tables():
        cols = [
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
        head = pd.DataFrame(records)[cols].rename(columns=lambda c: c.replace("_robustness", ""))
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
        r = selective_answering(
            bench,
            args.model,
            d,
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
        records.append(r.to_dict())
        b_rows.append(
            {"dataset": d, **{f"<{t:g}": b for t, b in zip(r.disca.b_table["tolerance"], r.disca.b_table["b"])}}
        )
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

    def tables():
        return [
            f"beyondauc {__version__} -- {bench.source}: selective answering of {args.model!r} "
            f"(calibrated: {args.protocol}/{args.method}; tolerance {args.tolerance:g}; confidence grid step "
            f"{args.resolution:g}, which DiSCA depends on). a, b: confidence where "
            "accuracy first drops below 100% / the tolerance (lower is better); DiSCA higher is better.",
            plain_table(
                pd.DataFrame(records)[cols], fmt=args.format, floatfmt=".4f", title="Selective answering per dataset"
            ),
            *([_interval_table(records, INTERVAL_NAMES + ("disca_ood",), args)] if args.bootstrap else []),
            plain_table(
                pd.DataFrame(b_rows),
                fmt=args.format,
                floatfmt=".3f",
                title="b over tolerance (the paper's Table 2 layout)",
            ),
        ]

    _emit(records, args.dataset is not None, args, out, tables)


def _value(text):
    """A VALUE of -p NAME=VALUE or of a parameter's option: JSON when it reads as JSON, else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parameter_items(items, args=None):
    """-p NAME=VALUE items, then the parameters' own options (an option and a -p of one name must agree)."""
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CliError(f"beyondauc: error: --parameter must be NAME=VALUE, got {item!r}")
        params[name.strip()] = _value(value)
    for name, value in (_table_values(args) if args is not None else {}).items():
        if name in params and params[name] != value:
            raise CliError(f"beyondauc: error: {cli_flag(name)} {value!r} and -p {name}={params[name]!r} disagree")
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
    data, out_dir, parameters = getattr(args, "data", DEMO), args.out, parameter_items(args.parameter, args)
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
        data,
        models=args.models,
        datasets=args.datasets,
        out=out_dir,
        pdf=args.pdf,
        jobs=args.jobs,
        dask=args.dask,
        include_code=args.include_code,
        pos_label=label_value(args.pos_label),
        domains=_domains(args),
        nan_policy=args.nan_policy,
        baseline=parameters.pop("baseline", None),
        log_options={name: parameters.pop(name, None) for name in LOG_PARAMETERS},
        parameters=parameters,
        progress=not args.quiet,
        recompute=args.recompute,
    )
    print(result.summary(), file=out)
    if not result.ok:
        raise _ReportFailed()


def _evaluate(args, out):
    from ..evaluation.container import evaluation_folder
    from ..evaluation.pipeline import evaluate

    if args.jobs < 1 and args.jobs != -1:
        raise ValueError(f"--jobs must be an int >= 1 or -1 (all cores), got {args.jobs}")
    params = parameter_items(args.parameter, args)
    for name, value in (
        ("models", args.models),
        ("datasets", args.datasets),
        ("pos_label", label_value(args.pos_label)),
        ("domains", _domains(args)),
    ):
        if value is not None:
            params[name] = value
    params.setdefault("nan_policy", args.nan_policy)  # -p nan_policy=... or the flag (default: raise)
    # refused here, before computing: a folder that is not an evaluation, a file of the user's where a table
    # goes, a folder in use or not writable
    with evaluation_folder(args.out) as folder:
        ev = evaluate(args.data, n_jobs=args.jobs, dask=args.dask, progress=not args.quiet, **params)
        path = ev.save(folder)
    print(
        f"{ev!r}: {len(ev.tables)} tables written to {path} in {ev.timing.get('total', float('nan')):.1f} s", file=out
    )


class _ReportFailed(Exception):
    """Some reports failed; the summary has been printed."""


#: The commands that write an output folder: a signal stops them by :mod:`beyondauc.utils.interrupts`' policy.
_WRITERS = ("report", "demo", "evaluate")

_COMMANDS = {
    "calibrate": _calibrate,
    "diagnose": _diagnose,
    "selective": _selective,
    "report": _report,
    "demo": _report,
    "evaluate": _evaluate,
    "table": table_command,
}


#: Where a run that keeps its warnings says they are (the commands whose output holds them).
_KEPT = {
    "report": "the reports (What this report shows)",
    "demo": "the reports (What this report shows)",
    "evaluate": "the evaluation (its manifest's data.notes)",
}


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
        print(
            f"beyondauc: {n} warning{'s' if n > 1 else ''}, each kept in full in {kept}; --verbose prints "
            f"{'them' if n > 1 else 'it'}",
            file=sys.stderr,
        )


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
    except CliError as exc:
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
