"""The command line's parser: every command and option of ``beyondauc``, and ``--help``.

The options of the evaluation parameters come from the parameter table
(:mod:`beyondauc.evaluation.parameters`); a parse error raises
:class:`CliError`, which :func:`beyondauc.cli.commands.main` prints as one line.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from ..evaluation.parameters import NAN_POLICIES, PARAMETERS
from ..metrics import METHODS, PROTOCOLS
from ..metrics.diagnostics.cohorts import NOISE_METHODS
from ..utils.version import __version__
from .table import add_table_command

__all__ = ["FORMATS", "CliError", "build_parser", "label_value"]

FORMATS = ("table", "json", "csv", "markdown", "latex")


class CliError(Exception):
    """A command line the parser refuses: its message is the one line the user sees."""


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are one line (no usage dump), which keeps the options added to it (``options``,
    those of its :meth:`option_group` too: argparse has no public list of them); ``commands`` maps each
    subcommand to its parser."""

    commands: Mapping[str, _Parser]

    def __init__(self, *args, **kwargs) -> None:
        self.options: list[argparse.Action] = []
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.options.append(action)
        return action

    def option_group(self, title: str) -> _Group:
        """``add_argument_group(title)`` whose options are kept in ``options`` too."""
        return _Group(self.add_argument_group(title), self.options)

    def error(self, message):  # one line, no usage dump
        raise CliError(f"{self.prog}: {message}")


class _Group:
    """An argument group whose options are kept in its parser's ``options``."""

    def __init__(self, group, options: list[argparse.Action]) -> None:
        self._group, self._options = group, options

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self._group.add_argument(*args, **kwargs)
        self._options.append(action)
        return action


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
    cal.add_argument(
        "data",
        nargs="?",
        default=None,
        help="TRUE-format directory, CSV or Parquet file (default: the embedded demo benchmark)",
    )
    cal.add_argument(
        "--protocol",
        action="append",
        choices=PROTOCOLS,
        help="calibration protocol; repeat for several (default: xdomain)",
    )
    cal.add_argument(
        "--method", action="append", choices=METHODS, help="calibration method; repeat for several (default: logistic)"
    )
    _domains_option(cal)
    cal.add_argument("--class-weight", choices=["balanced"], default=None, help="weight classes by n / (2 n_class)")
    cal.add_argument(
        "--reference",
        choices=["opitz2024"],
        default=None,
        help="reproduce the settings of the code behind the Opitz paper's tables instead of its text: "
        "scikit-learn's default lbfgs logistic, isotonic negative outside the calibration range, "
        "outdata AUC on the pooled other datasets (slower)",
    )
    cal.add_argument(
        "--n-repeats", "--repeats", dest="repeats", type=int, default=100, help="indata 80/20 repeats (default: 100)"
    )
    cal.add_argument(
        "--random-state", "--seed", dest="seed", type=int, default=0, help="indata random seed (default: 0)"
    )
    cal.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    cal.add_argument("--models", default=None, help="comma-separated model columns (default: all numeric columns)")
    _nan_policy(cal)
    cal.add_argument(
        "--jobs", type=int, default=1, help="models computed in parallel processes; -1 = all cores (default: 1)"
    )
    cal.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    cal.add_argument(
        "--n-bootstrap",
        "--bootstrap",
        dest="bootstrap",
        type=int,
        default=0,
        metavar="B",
        help="bootstrap replicates (stratified, paired, refitting the calibrators) for intervals, rank "
        "intervals and p_change (default: 0 = none)",
    )
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
    diag.add_argument(
        "--protocol",
        choices=("split",) + PROTOCOLS,
        default=None,
        help="how V and T are formed (default: the split column if there is one, else xdomain; indata for one dataset)",
    )
    diag.add_argument("--val-split", default="val", help="split value of the validation cohort (default: val)")
    diag.add_argument("--test-split", default="test", help="split value of the test cohort (default: test)")
    diag.add_argument(
        "--noise-method",
        choices=NOISE_METHODS,
        default="exact",
        help="noise robustness: exact (default) or seeded Monte Carlo draws, as testAUC",
    )
    diag.add_argument(
        "--noise-repeats",
        "--repeats",
        dest="repeats",
        type=int,
        default=20,
        help="noise robustness Monte Carlo repeats with --noise-method monte_carlo (default: 20)",
    )
    diag.add_argument(
        "--n-points",
        "--points",
        dest="points",
        type=int,
        default=21,
        help="sigma grid points of the robustness curves (default: 21)",
    )
    diag.add_argument(
        "--p",
        type=float,
        default=2,
        help="Wasserstein order of 'wasserstein' (default: 2); p = 1 and 2 are reported too",
    )
    diag.add_argument(
        "--random-state",
        "--seed",
        dest="seed",
        type=int,
        default=0,
        help="random seed (noise, indata split, bootstrap; default: 0)",
    )
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
    sel.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="indata",
        help="calibration protocol (default: indata, so the dataset is in distribution)",
    )
    sel.add_argument("--method", choices=METHODS, default="logistic", help="calibration method (default: logistic)")
    sel.add_argument("--tolerance", type=float, default=0.9, help="worst admissible accuracy for b (default: 0.9)")
    sel.add_argument("--resolution", type=float, default=0.01, help="confidence grid step (default: 0.01)")
    sel.add_argument(
        "--computation-score",
        type=float,
        default=None,
        help="1/energy or reference_parameters/parameters; enables DiDMA and NiDMA",
    )
    sel.add_argument(
        "--random-state",
        "--seed",
        dest="seed",
        type=int,
        default=0,
        help="indata split and bootstrap seed (default: 0)",
    )
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
    demo.add_argument(
        "--kind",
        choices=("scores", "answers", "llm"),
        default="scores",
        help="which embedded demo: 'scores' (8 models' scores on 8 binary datasets), 'answers' "
        "(6 classifiers' answers with confidence on 4 multi-class datasets, the out-of-distribution "
        "digits_noisy as --ood-dataset, into reports/demo-answers unless --out) or 'llm' "
        "(lm-evaluation-harness logs of 3 simulated LLMs on 2 multiple-choice tasks, read as they are "
        "written, into reports/demo-llm unless --out)",
    )


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
    ev.add_argument(
        "--jobs",
        type=int,
        default=-1,
        help="local processes that run the evaluation's tasks (default: -1, the cores; 1: none)",
    )
    ev.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="run the tasks on a Dask distributed scheduler, e.g. tcp://127.0.0.1:8786 (extra: dask)",
    )
    ev.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an evaluation parameter, e.g. -p protocol=indata -p n_bootstrap=1000 (repeatable)",
    )
    ev.add_argument("--quiet", action="store_true", help="no progress lines")
    _verbose_option(ev)
    _table_options(ev, notebooks=False)


def _report_options(p, *, out_default):
    p.add_argument("--models", default=None, help="comma-separated models to report on (default: all)")
    p.add_argument("--datasets", default=None, help="comma-separated datasets to analyse (default: all)")
    p.add_argument(
        "--out", default=out_default, help=f"output folder (default: {out_default or 'reports/<name of DATA>'})"
    )
    p.add_argument("--pdf", action="store_true", help="also write each report as PDF (WeasyPrint)")
    p.add_argument("--jobs", type=int, default=None, help="parallel local processes (default: the cores)")
    p.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="run the evaluation and the reports on a Dask distributed scheduler, e.g. "
        "tcp://127.0.0.1:8786 (extra: dask; no shared file system needed)",
    )
    p.add_argument("--include-code", action="store_true", help="show code and parameters in the HTML")
    p.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    _domains_option(p)
    _nan_policy(p)
    p.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a notebook parameter, e.g. -p protocol=indata -p tolerance=0.8 (repeatable; "
        "VALUE is read as JSON when it can be, else as text)",
    )
    _table_options(p, notebooks=True)
    p.add_argument(
        "--recompute",
        action="store_true",
        help="compute the evaluation again even if the output folder holds one of the same data and "
        "parameters (default: reuse it)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _verbose_option(p)


def _verbose_option(p):
    p.add_argument(
        "--verbose",
        action="store_true",
        help="print every warning of the run in full (default: one line counting them; each is kept "
        "in full in the evaluation, and the reports show it)",
    )


#: Table parameters with an option of their own on report, demo and evaluate (not generated from the table).
#: (``overrides`` is how a notebook opened by hand takes what these options give.)
_OWN_OPTIONS = ("data", "evaluation", "model", "models", "datasets", "pos_label", "domains", "nan_policy", "overrides")


def _table_options(parser, *, notebooks):
    """One option per parameter of the table, spelled as the API name (``--n-bootstrap``), VALUE as with -p."""
    group = parser.option_group("analysis parameters (the same names as the API; also -p NAME=VALUE)")
    for param in PARAMETERS.values():
        if param.name in _OWN_OPTIONS or not (param.evaluation or notebooks):
            continue
        group.add_argument(
            param.flag,
            dest=f"table_{param.name}",
            default=None,
            metavar="VALUE",
            help=f"{param.help} (default: {param.default})",
        )


def _common(p):
    p.add_argument(
        "data",
        nargs="?",
        default=None,
        help="TRUE-format directory, CSV or Parquet file (default: the embedded demo benchmark)",
    )
    p.add_argument("--model", required=True, help="the model column to analyse")
    p.add_argument("--dataset", default=None, help="one dataset (default: every dataset)")
    _domains_option(p)
    p.add_argument("--pos-label", default=None, help="the positive label, if labels are not 0/1, -1/1 or booleans")
    _nan_policy(p)
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")


def _nan_policy(p):
    """``--nan-policy``, from the parameter table."""
    param = PARAMETERS["nan_policy"]
    p.add_argument(
        param.flag, choices=NAN_POLICIES, default=param.default, help=f"{param.help} (default: {param.default})"
    )


def _domains_option(p):
    """``--domains FILE`` or ``--domains NAME=DOMAIN[,NAME=DOMAIN...]`` (repeatable), from the parameter table."""
    param = PARAMETERS["domains"]
    p.add_argument(
        param.flag,
        action="append",
        default=None,
        metavar="FILE|NAME=DOMAIN,...",
        help=f"{param.help}. Here: a JSON or CSV file (columns dataset, domain), or NAME=DOMAIN pairs "
        "separated by commas, e.g. --domains begin=dialogue,q2=dialogue; repeatable, later values "
        "adding to earlier ones",
    )


def label_value(text):
    """A --pos-label as the file's readers see labels: an int or float if it reads as one, else text."""
    if text is None:
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _interval_options(parser, what):
    parser.add_argument(
        "--n-bootstrap",
        "--bootstrap",
        dest="bootstrap",
        type=int,
        default=0,
        metavar="B",
        help=f"bootstrap replicates for percentile intervals of {what}; adds <name>_low/_high "
        "(default: 0, no intervals)",
    )
    parser.add_argument(
        "--confidence-level", type=float, default=0.95, help="interval confidence level in (0, 1) (default: 0.95)"
    )
