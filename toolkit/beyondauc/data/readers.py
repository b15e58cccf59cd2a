"""The readers' shared parts (:mod:`beyondauc.data.sources` registers the readers): TRUE folders, folders
of tables, a file's dataset name, the model columns, domain mappings. Every read error names the file
(and the line where there is one) and suggests the likely delimiter or encoding; every column is
accounted for.
"""

from __future__ import annotations

import csv
import difflib
import json
import os
import sys
import unicodedata
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils.formatting import quoted_name
from .table_formats import folder_suffixes, read_table, table_format
from .text_files import (
    GZIP_ERRORS,
    csv_header,
    gzip_fault,
    open_text,
    parser_error,
    sniff,
    undecodable,
)

__all__ = ["domain_pairs", "read_domains", "TRUE_DOMAINS"]


#: Domains of the TRUE benchmark's datasets, as the paper groups them.  The
#: paper leaves ``fever`` and ``vitaminc`` out of its tables; they are mapped
#: to TRUE's own ``fact_verification`` group so they stay usable.
TRUE_DOMAINS: dict[str, str] = {
    "mnbm": "summarization",
    "frank": "summarization",
    "summeval": "summarization",
    "qags_xsum": "summarization",
    "qags_cnndm": "summarization",
    "begin": "dialogue",
    "q2": "dialogue",
    "dialfact": "dialogue",
    "paws_wiki": "paraphrase",
    "paws": "paraphrase",
    "fever": "fact_verification",
    "vitaminc": "fact_verification",
}

RESERVED = ("dataset", "domain", "label", "split", "id")
#: Bidirectional embedding, override and isolate controls: they reorder the text that follows them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
BOOKKEEPING = ("_file", "_line")  # where each row came from, for messages; never a model
_EXPECTED = (
    "expected columns 'dataset', 'label', one numeric column per model, optionally 'domain', 'split', 'id' "
    "(or the long form: 'dataset', 'model', then 'score' + 'label', or the model's answers)"
)
_TRUE_SUFFIXES = ("_dev_true_scores", "_true_scores")
_TRUE_TEXT = ("generated_text", "grounding")  # the TRUE format's own text columns: known, never models


@dataclass(frozen=True)
class Origin:
    """Where the rows came from, for messages."""

    where: str  # "DataFrame", "file '...'" or "directory '...'"
    source: str  # the Benchmark's source: the path as given, or "<DataFrame>"
    one_dataset: bool  # no 'dataset' column: the whole file (frame) is one dataset

    def locate(self, frame: pd.DataFrame, pos: int) -> str:
        """Name row ``pos`` of ``frame``: its file and line, or its DataFrame row."""
        f = frame["_file"].iloc[pos] if "_file" in frame.columns else None
        row = _row_name(frame, pos)
        return f"file {f!r}, {row}" if f else f"DataFrame {row}"


# -- reading ------------------------------------------------------------------


def read_domains(path: str | os.PathLike) -> dict[str, str]:
    """Read a dataset -> domain mapping from a JSON object or a CSV file.

    The CSV needs columns ``dataset`` and ``domain``.

    Examples
    --------
    >>> import json, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "domains.json")
    >>> _ = open(p, "w").write(json.dumps({"a": "news", "b": "chat"}))
    >>> read_domains(p)
    {'a': 'news', 'b': 'chat'}
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"domains file {str(path)!r} does not exist")
    if path.suffix.lower() == ".json":
        try:
            mapping = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"domains file {str(path)!r} is not valid JSON: {exc}") from None
        except UnicodeDecodeError:
            raise undecodable(path, f"domains file {str(path)!r}") from None
        if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
            raise ValueError(f"domains file {str(path)!r} must hold a JSON object of dataset -> domain strings")
        return {str(k): v for k, v in mapping.items()}
    compression = sniff(path)
    try:  # names as written: "None", "NA" are names
        table = pd.read_csv(path, dtype=str, keep_default_na=False, compression=compression, encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise ValueError(f"domains file {str(path)!r} is empty") from None
    except UnicodeDecodeError:
        raise undecodable(path, f"domains file {str(path)!r}") from None
    except (pd.errors.ParserError, csv.Error) as exc:
        raise parser_error(path, ",", exc, f"domains file {str(path)!r}") from None
    except GZIP_ERRORS as exc:
        raise gzip_fault(path, exc, f"domains file {str(path)!r}") from None
    missing = {"dataset", "domain"} - set(table.columns)
    if missing:
        raise ValueError(f"domains file {str(path)!r} needs columns 'dataset' and 'domain'; missing {sorted(missing)}")
    return {d: v for d, v in zip(table["dataset"], table["domain"]) if v != ""}


def domain_pairs(text: str, *, name: str = "`domains`") -> dict[str, str]:
    """Read a dataset -> domain mapping from ``NAME=DOMAIN`` pairs separated by commas.

    The command line's short form of a domains file: ``begin=dialogue,q2=dialogue``.
    Spaces around names are dropped; a name holding ``=`` or ``,`` needs a
    file (:func:`read_domains`).  ``name`` is how messages call the text.

    Examples
    --------
    >>> domain_pairs("begin=dialogue, q2=dialogue,mnbm=summarization")
    {'begin': 'dialogue', 'q2': 'dialogue', 'mnbm': 'summarization'}
    >>> domain_pairs("begin")
    Traceback (most recent call last):
    ...
    ValueError: `domains` 'begin' must be NAME=DOMAIN pairs separated by commas, e.g. begin=dialogue,q2=dialogue; got 'begin'
    """
    out: dict[str, str] = {}
    for item in text.split(","):
        dataset, sep, domain = (part.strip() for part in item.partition("="))
        if not sep or not dataset or not domain or "=" in domain:
            raise ValueError(
                f"{name} {text!r} must be NAME=DOMAIN pairs separated by commas, e.g. "
                f"begin=dialogue,q2=dialogue; got {item.strip()!r}"
            )
        if out.get(dataset, domain) != domain:
            raise ValueError(f"{name} {text!r} gives dataset {dataset!r} two domains: {out[dataset]!r} and {domain!r}")
        out[dataset] = domain
    return out


def check_names(names, what, where, locate=None):
    """Refuse names that cannot be shown as one line of text, or that Unicode calls the same name.

    ``what`` says what the names are (``"model column"``, ``"column 'dataset' value"``);
    ``locate(name)`` may say where a name first occurs.
    """
    seen = {}
    for name in names:
        name = str(name)
        bad = next(
            (ch for ch in name if ch in _BIDI_CONTROLS or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")), None
        )
        if bad is not None:
            at = f" at {locate(name)}" if locate is not None else ""  # found only for the message: a scan
            kind = unicodedata.name(bad, "control character").lower()
            raise ValueError(
                f"{where}: {what} {quoted_name(name)}{at} holds a {kind} ({ascii(bad)}); names are shown as one line "
                "of text in tables, figures and reports, so control, line-break and bidirectional-override "
                "characters are refused: rename it"
            )
        key = unicodedata.normalize("NFC", name)
        other = seen.setdefault(key, name)
        if other != name:
            at = f" at {locate(name)}" if locate is not None else ""
            raise ValueError(
                f"{where}: {what}s {ascii(other)} and {ascii(name)}{at} are the same name in two Unicode "
                "normalisation forms (they look identical in every table and figure): rename one"
            )


def release_arrow_memory():
    """Give back to the system the memory Arrow freed (its pool otherwise keeps it), if Arrow was used."""
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def annotate(frame, path, offset, dataset=None):
    """``frame`` with where each row came from (``_file``, ``_line``) and, given, a first ``dataset`` column.

    ``offset`` is the line of the first row (rows follow one a line), or each row's line.
    Added at once: a frame read from a file of many models holds a block per
    column, and inserting into it column by column fragments it further.
    """
    lines = offset if isinstance(offset, np.ndarray) else np.arange(len(frame)) + offset
    file = pd.Categorical.from_codes(
        np.zeros(len(frame), dtype=np.int8), categories=pd.Index([str(path)], dtype=object)
    )
    parts = [frame, pd.DataFrame({"_file": file, "_line": lines}, index=frame.index)]  # the path held once
    if dataset is not None:
        parts.insert(0, pd.DataFrame({"dataset": dataset}, index=frame.index))
    return pd.concat(parts, axis=1)


def _file_stem(path):
    """The file name without its table extension (``.csv.gz``, ``.jsonl`` ...)."""
    stem = path.name
    fmt = table_format(path)
    ext = next((e for e in fmt.suffixes if stem.lower().endswith(e)), "") if fmt is not None else ""
    return stem[: len(stem) - len(ext)]


def true_dataset_name(path):
    """The dataset a file without a ``dataset`` column holds: its stem without TRUE's suffixes."""
    stem = _file_stem(path)
    for suffix in _TRUE_SUFFIXES:
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _row_name(frame, pos):
    """Describe row ``pos`` of ``frame`` for a message: the line of its file (the row of a Parquet file),
    or its DataFrame row."""
    if "_file" in frame.columns:
        path, line = str(frame["_file"].iloc[pos]), int(frame["_line"].iloc[pos])
        fmt = table_format(path)
        if fmt is not None and fmt.name == "JSON Lines":
            return f"line {line}"
        if fmt is not None and fmt.name == "Parquet":
            return f"row {line}"
        if path.lower().endswith((".eval", ".json")):  # an LLM harness's log: its samples, counted from 1
            return f"sample {line}"
        return f"line {_csv_line(path, line - 2)}"
    label = frame.index[pos]
    return f"row {label.item() if isinstance(label, np.generic) else label!r}"


def _csv_line(path, record):
    """Line of ``path`` where data record ``record`` (0-based) starts, header =
    line 1.  Quoted fields may span lines, so this is not always ``record + 2``."""
    name = str(path).lower()
    with open_text(path) as fh:
        reader = csv.reader(fh, delimiter="\t" if name.endswith((".tsv", ".tsv.gz")) else ",")
        index, prev = -1, 0  # the header is record -1; blank lines are skipped
        for row in reader:
            if row:
                if index == record:
                    return prev + 1
                index += 1
            prev = reader.line_num
    return record + 2


def table_files(path):
    """The files of directory ``path`` that hold tables, sorted by name (hidden files left out)."""
    files = sorted(
        p
        for p in path.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.name.lower().endswith(folder_suffixes())
    )
    if not files:
        raise ValueError(f"directory {str(path)!r} holds no .csv files (nor .tsv, .parquet, .jsonl or .ndjson ones)")
    return files


def is_true_dir(files):
    """True when a directory's table files are in the TRUE format: one is named like TRUE's
    (``*_true_scores.csv``), or all are CSV without a ``dataset`` or ``model`` column."""
    csvs = [f for f in files if f.name.lower().endswith((".csv", ".csv.gz"))]
    if any(_file_stem(f).endswith(_TRUE_SUFFIXES) for f in csvs):
        return True
    if len(csvs) < len(files):
        return False
    try:
        return all({"dataset", "model"}.isdisjoint(csv_header(f)) for f in files)
    except (*GZIP_ERRORS, OSError, UnicodeDecodeError, csv.Error):  # the TRUE reader says what is wrong with it
        return True


def read_tables_dir(path):
    """Each table file of directory ``path``, read and annotated; a file without a ``dataset`` column is
    the dataset of its stem (as a single file is)."""
    parts = []
    for f in table_files(path):
        frame, offset = read_table(f)
        where = f"file {str(f)!r}"
        if len(frame) == 0:
            raise ValueError(f"{where} has no rows")
        check_misspelled_columns(frame.columns, where)
        one_dataset = "dataset" not in frame.columns
        parts.append(annotate(frame, f, offset, dataset=true_dataset_name(f) if one_dataset else None))
    return parts


def read_true_dir(path, models, ignored=None):
    files = [f for f in table_files(path) if f.name.lower().endswith((".csv", ".csv.gz"))]
    parts = []
    model_sets = {}
    for f in files:
        frame, offset = read_table(f)
        name = true_dataset_name(f)
        if "dataset" in frame.columns:
            raise ValueError(
                f"file {str(f)!r}: a TRUE-format file must not have a 'dataset' column (the file name is the dataset)"
            )
        if len(frame) == 0:
            raise ValueError(f"file {str(f)!r} (dataset {name!r}) has no rows")
        if "label" not in frame.columns:
            raise ValueError(
                f"file {str(f)!r} (dataset {name!r}): missing the 'label' column"
                f"{closest('label', frame.columns)}; columns are {list(frame.columns)}"
            )
        frame = annotate(frame, f, offset, dataset=name)
        found = model_columns(frame, None, f"file {str(f)!r}", ignored, _TRUE_TEXT) if models is None else frame.columns
        model_sets[name] = (f, set(found))
        parts.append(frame)
    names = [p["dataset"].iloc[0] for p in parts]
    if len(set(names)) != len(names):
        raise ValueError(f"directory {str(path)!r}: two files give the same dataset name")
    wanted = models if models is not None else sorted(set().union(*(s for _, s in model_sets.values())))
    for m in wanted:
        for name, (f, cols) in model_sets.items():
            if m not in cols:
                raise ValueError(
                    f"model {m!r} is missing from file {str(f)!r} (dataset {name!r})"
                    + ("" if models is not None else "; give `models=` to choose models every file has")
                )
    frame = pd.concat(parts, ignore_index=True, sort=False)
    return frame, 2, list(wanted)


def model_columns(frame, models, where, ignored=None, known=()):
    """The model columns: ``models``, or every numeric column that is not a reserved one.

    Without ``models``, a column of booleans or dates is refused (it looks like
    a model but holds no scores), and a text column is left out and listed in
    ``ignored`` (column -> where), unless it is one of ``known`` (the TRUE
    format's own text columns).
    """
    if models is not None:
        missing = [m for m in models if m not in frame.columns]
        if missing:
            columns = [c for c in frame.columns if c not in BOOKKEEPING]  # our bookkeeping, not the file's
            raise ValueError(f"{where}: `models` names column(s) {missing} not found; columns are {columns}")
        return list(models)
    cols = []
    for c in frame.columns:
        if c in RESERVED or c in BOOKKEEPING:  # a model may be called "_x_"
            continue
        column = frame[c]
        kind = column.dtype.kind
        if kind in "iuf":
            cols.append(c)
            continue
        what = _not_scores(column)
        if what is not None:
            raise ValueError(
                f"{where}: column {quoted_name(c)} holds {what}, not scores: convert it to numbers if it is a model, "
                "or give `models=` to name the model columns"
            )
        if kind == "O" and _mostly_numeric(column):
            cols.append(c)
        elif ignored is not None and c not in known:
            ignored.setdefault(c, where)
    return cols


def _not_scores(column):
    """'booleans' or 'dates' for a column that looks like a model's but holds no scores, else None."""
    kind = column.dtype.kind
    if kind == "b":
        return "booleans"
    if kind in "mM":
        return "dates" if kind == "M" else "time spans"
    if kind != "O":
        return None
    values = column.dropna()
    if not len(values):
        return None
    sample = values.iloc[:1000]
    if all(isinstance(v, (bool, np.bool_)) for v in sample):
        return "booleans"
    if (
        all(isinstance(v, (str, pd.Timestamp, np.datetime64)) for v in sample)
        and not pd.to_numeric(sample, errors="coerce").notna().any()
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(sample.astype(str), format="ISO8601", errors="coerce")
        if dates.notna().all():
            return "dates"
    return None


def _near(name, column):
    """True when ``column`` looks like a misspelling of the reserved ``name``:
    the same letters in another case, or (for names of 4+ letters) one typo."""
    text = str(column).strip().lower()
    if text == name:
        return True
    return len(name) >= 4 and difflib.SequenceMatcher(None, name, text).ratio() >= 0.8


def closest(name, columns):
    """'' or a clause suggesting the column of ``columns`` that looks like ``name``."""
    near = [c for c in columns if c != name and _near(name, c)]
    return f" (is {str(near[0])!r} meant to be {name!r}?)" if near else ""


def check_misspelled_columns(columns, where):
    """Error on a column that looks like a reserved one (``Dataset``, ``datset``,
    ``Split``, ``ID``) while the reserved one is absent: it would silently be
    ignored or read as a model, e.g. a whole benchmark as one dataset."""
    present = set(map(str, columns))
    for name in RESERVED:
        if name in present:
            continue
        near = [c for c in columns if str(c) not in RESERVED and _near(name, c)]
        if near:
            raise ValueError(
                f"{where}: no column {name!r} but a column {str(near[0])!r}: did you mean {name!r}? "
                f"Rename it; {_EXPECTED}"
            )


def _mostly_numeric(column):
    """True for a text column whose values are mostly numbers (a model column
    with a stray non-number, reported later), False for real text columns."""
    values = column.dropna()
    return len(values) > 0 and pd.to_numeric(values, errors="coerce").notna().mean() >= 0.5
