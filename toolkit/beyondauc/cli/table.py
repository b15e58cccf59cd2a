"""``beyondauc table EVALUATION``: a table of a saved evaluation for a paper (LaTeX, Markdown or CSV).

Reads the folder with :func:`~beyondauc.load_evaluation` and prints
:func:`~beyondauc.evaluation.paper_table`'s table; nothing is recomputed.
"""

from __future__ import annotations

from ..evaluation.container import load_evaluation
from ..evaluation.paper import PAPER_FORMATS, PAPER_TABLES, paper_table

__all__ = ["add_table_command", "table_command"]


def add_table_command(sub):
    """``beyondauc table``: a table of a saved evaluation for a paper."""
    tab = sub.add_parser(
        "table",
        help="a table of a saved evaluation for a paper: LaTeX (booktabs), Markdown or CSV",
        description="Print the leaderboard, each model against its reference, or one score per model and dataset "
        "of an evaluation folder (or a report folder holding evaluation/): numbers as the report prints them, "
        "intervals in brackets, ranks; bold where the interval separates the best. Nothing is recomputed.",
    )
    tab.add_argument("evaluation", help="a folder written by `beyondauc evaluate`, or a report folder")
    tab.add_argument("--table", choices=PAPER_TABLES, default="leaderboard", help="which table (default: leaderboard)")
    tab.add_argument("--format", choices=PAPER_FORMATS, default="latex", help="output format (default: latex)")
    tab.add_argument(
        "--score",
        default=None,
        help="--table grid: auc, accuracy, kappa, balanced_accuracy, mcc or f1 (default: accuracy)",
    )
    tab.add_argument("--protocol", default=None, help="--table grid: the protocol (default: the headline's)")
    tab.add_argument("--method", default=None, help="--table grid: the method (default: the headline's)")
    tab.add_argument("--dataset", default=None, help="--table comparison: a dataset, or mean (default: mean)")
    tab.add_argument(
        "--values",
        default=None,
        help="--table comparison: comma-separated among auc, accuracy, kappa, disca, drift (default: auc,accuracy)",
    )
    tab.add_argument("--caption", default=None, help="--format latex: a caption (LaTeX), in a table float")
    tab.add_argument("--label", default=None, help="--format latex: a \\label (LaTeX), in a table float")


#: The options of ``beyondauc table`` that only some of its tables take.
_TABLE_ONLY = {"score": "grid", "protocol": "grid", "method": "grid", "dataset": "comparison", "values": "comparison"}


def table_command(args, out):
    """Print the table ``args`` asks for into ``out``; a bad option is a one-line ValueError in the flags' words."""
    options = {}
    for name, table in _TABLE_ONLY.items():
        value = getattr(args, name)
        if value is None:
            continue
        if table != args.table:
            raise ValueError(f"--{name} applies to --table {table} only (this is --table {args.table})")
        options[name] = tuple(v.strip() for v in value.split(",") if v.strip()) if name == "values" else value
    if args.format != "latex" and (args.caption is not None or args.label is not None):
        raise ValueError(f"--caption and --label apply to --format latex only (this is --format {args.format})")
    try:
        result = paper_table(load_evaluation(args.evaluation), args.table, **options)
    except (ValueError, FileNotFoundError) as exc:  # in the command's words: --score, not `score`
        message = str(exc).replace("`path`", "EVALUATION")
        for name in _TABLE_ONLY:
            message = message.replace(f"`{name}`", f"--{name}")
        raise type(exc)(message) from None
    text = result.to_latex(caption=args.caption, label=args.label) if args.format == "latex" else result.to(args.format)
    out.write(text)
