"""How an analysis command (calibrate, diagnose, selective) prints its results: JSON or CSV records, or
text tables with their bootstrap intervals, and the checks of its interval options."""

from __future__ import annotations

import json
import math

import pandas as pd

from ..utils.formatting import comment, plain_table

__all__ = ["json_safe", "check_interval_options", "interval_table", "emit_results"]


def json_safe(value):
    """JSON-safe: NaN -> None, inf stays a string, numpy scalars -> Python."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def check_interval_options(args):
    """Refuse ``--n-bootstrap`` below 0 and a ``--confidence-level`` outside (0, 1), naming the flag."""
    if args.bootstrap < 0:
        raise ValueError(f"--n-bootstrap must be an int >= 0, got {args.bootstrap}")
    if not 0 < args.confidence_level < 1:
        raise ValueError(f"--confidence-level must be in (0, 1), got {args.confidence_level}")


def interval_table(records, names, args):
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


def emit_results(records, single, args, out, tables):
    """Write records as json/csv, or the text tables ``tables()`` renders."""
    if args.format == "json":
        json.dump(json_safe(records[0] if single else records), out, indent=1)
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
