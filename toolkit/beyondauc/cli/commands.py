"""Command line: ``beyondauc calibrate|diagnose|selective|report|demo|evaluate|table ...``.

A thin layer over the package: read the benchmark, compute, print.  Errors
exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from ..evaluation.parameters import LOG_PARAMETERS, cli_flag
from ..utils.interrupts import Interrupted, signals_stop_the_run
from ..utils.validation import own_warning
from .calibrate import calibrate_command
from .data_options import domains_option
from .diagnose import diagnose_command
from .parser import CliError, build_parser, label_value
from .selective import selective_command
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
        domains=domains_option(args),
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
        ("domains", domains_option(args)),
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
    "calibrate": calibrate_command,
    "diagnose": diagnose_command,
    "selective": selective_command,
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
        msg = cli_message(msg, spelling_of(parser.commands.get(command) if command is not None else None))
        print(f"beyondauc: error: {msg}", file=sys.stderr)
        return 2
    except Interrupted as exc:  # SIGINT, SIGTERM or SIGHUP: workers stopped, the output folder as it was
        print(f"beyondauc: {exc.message()}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
