"""Read per-example scores into a validated :class:`Benchmark`.

A benchmark is a table with one row per example: ``dataset``, ``label``, one
numeric column per model and optionally ``domain``, ``split`` and ``id``.  It
is read from a directory in the TRUE format (one CSV per dataset), from one
CSV or Parquet file, or from a :class:`pandas.DataFrame`.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import json
import unicodedata
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils.validation import binarize_labels, check_option

__all__ = ["Benchmark", "load_benchmark", "load_demo", "read_domains", "TRUE_DOMAINS"]

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

_RESERVED = ("dataset", "domain", "label", "split", "id")
#: Columns whose values are names: read as the text in the file ("None", "NA", "01" stay names).
_NAME_COLUMNS = ("dataset", "domain")
#: Bidirectional embedding, override and isolate controls: they reorder the text that follows them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BOOKKEEPING = ("_file", "_line")  # where each row came from, for messages; never a model
_EXPECTED = "expected columns 'dataset', 'label', one numeric column per model, optionally 'domain', 'split', 'id'"
_TRUE_SUFFIXES = ("_dev_true_scores", "_true_scores")
_TRUE_TEXT = ("generated_text", "grounding")  # the TRUE format's own text columns: known, never models


@dataclass(frozen=True, eq=False)
class Benchmark:
    """Validated per-example scores of several models on several datasets.

    Build one with :func:`load_benchmark`; the constructor trusts its inputs.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per example, grouped by dataset (rows of a dataset are
        contiguous, in the order of ``datasets``).  Columns ``dataset``,
        ``domain``, ``label`` (int8, 1 = positive), optional ``split`` and
        ``id``, then one float64 column per model.
    models : tuple of str
        The model columns.
    datasets : tuple of str
        Dataset names in the order they were read.
    domains : dict
        Dataset name -> domain name (``None`` where unknown).
    source : str
        Where the data came from (a path or ``"<DataFrame>"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from beyondauc import load_benchmark
    >>> df = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "label": [0, 1, 1, 0],
    ...                    "m1": [0.1, 0.9, 0.8, 0.3]})
    >>> bench = load_benchmark(df)
    >>> bench.models, bench.datasets
    (('m1',), ('a', 'b'))
    >>> bench.scores("m1", "b")
    array([0.8, 0.3])
    """

    frame: pd.DataFrame
    models: tuple
    datasets: tuple
    domains: dict
    source: str = "<DataFrame>"
    _offsets: np.ndarray = field(default=None, repr=False)

    def __post_init__(self):
        counts = self.frame["dataset"].value_counts().reindex(list(self.datasets)).to_numpy()
        object.__setattr__(self, "_offsets", np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    # -- access -------------------------------------------------------------
    def __len__(self):
        return len(self.frame)

    def __repr__(self):
        return (
            f"Benchmark({len(self.datasets)} datasets, {len(self.models)} models, "
            f"{len(self.frame)} rows, source={self.source!r})"
        )

    @property
    def has_split(self):
        """True when the data has a ``split`` (cohort) column."""
        return "split" in self.frame.columns

    def _slice(self, dataset):
        try:
            i = self.datasets.index(dataset)
        except ValueError:
            raise ValueError(
                f"`dataset` must be one of {list(self.datasets)}, got {dataset!r}"
            ) from None
        return slice(int(self._offsets[i]), int(self._offsets[i + 1]))

    def _check_model(self, model):
        if model not in self.models:
            raise ValueError(f"`model` must be one of {list(self.models)}, got {model!r}")

    def labels(self, dataset=None):
        """Return the 0/1 labels, of one dataset or of all rows."""
        y = self.frame["label"].to_numpy()
        return y if dataset is None else y[self._slice(dataset)]

    def scores(self, model, dataset=None):
        """Return the raw scores of ``model``, of one dataset or of all rows."""
        self._check_model(model)
        s = self.frame[model].to_numpy()
        return s if dataset is None else s[self._slice(dataset)]

    def dataset_codes(self):
        """Return each row's dataset index into ``datasets`` (int64)."""
        return np.repeat(np.arange(len(self.datasets)), np.diff(self._offsets))

    def dataset_sizes(self):
        """Return the number of rows of each dataset, in ``datasets`` order."""
        return np.diff(self._offsets)

    def domain_of(self, dataset):
        """Return the domain of ``dataset`` (None where unknown)."""
        self._slice(dataset)
        return self.domains.get(dataset)

    def subset(self, *, models=None, datasets=None):
        """Return a benchmark restricted to some models and/or datasets."""
        models = self.models if models is None else tuple(models)
        datasets = self.datasets if datasets is None else tuple(datasets)
        for m in models:
            self._check_model(m)
        for d in datasets:
            self._slice(d)
        keep = [c for c in self.frame.columns if c not in self.models] + list(models)
        frame = self.frame.loc[self.frame["dataset"].isin(datasets), keep]
        order = {d: i for i, d in enumerate(datasets)}
        frame = frame.iloc[np.argsort(frame["dataset"].map(order).to_numpy(), kind="stable")]
        return Benchmark(
            frame.reset_index(drop=True),
            models,
            datasets,
            {d: self.domains.get(d) for d in datasets},
            self.source,
        )

    def summary(self):
        """Return one row per dataset: domain, examples, positives, positive rate."""
        g = self.frame.groupby("dataset", sort=False)["label"]
        out = pd.DataFrame(
            {
                "dataset": list(self.datasets),
                "domain": [self.domains.get(d) for d in self.datasets],
                "n": self.dataset_sizes(),
                "n_positive": g.sum().reindex(list(self.datasets)).to_numpy().astype(int),
            }
        )
        out["positive_rate"] = out["n_positive"] / out["n"]
        if self.has_split:
            splits = self.frame.groupby("dataset", sort=False)["split"].agg(
                lambda s: ",".join(sorted(map(str, s.unique())))
            )
            out["splits"] = splits.reindex(list(self.datasets)).to_numpy()
        return out


# -- reading ------------------------------------------------------------------

def read_domains(path):
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
            raise _undecodable(path, f"domains file {str(path)!r}") from None
        if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
            raise ValueError(f"domains file {str(path)!r} must hold a JSON object of dataset -> domain strings")
        return {str(k): v for k, v in mapping.items()}
    compression = _sniff(path)
    try:  # names as written: "None", "NA" are names
        table = pd.read_csv(path, dtype=str, keep_default_na=False, compression=compression, encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise ValueError(f"domains file {str(path)!r} is empty") from None
    except UnicodeDecodeError:
        raise _undecodable(path, f"domains file {str(path)!r}") from None
    except (pd.errors.ParserError, csv.Error) as exc:
        raise _parser_error(path, ",", exc, f"domains file {str(path)!r}") from None
    missing = {"dataset", "domain"} - set(table.columns)
    if missing:
        raise ValueError(f"domains file {str(path)!r} needs columns 'dataset' and 'domain'; missing {sorted(missing)}")
    return {d: v for d, v in zip(table["dataset"], table["domain"]) if v != ""}


def _shown(name, limit=60):
    """``repr(name)`` for a one-line message, shortened in the middle when long."""
    text = repr(name)
    return text if len(text) <= limit else f"{text[:limit - 20]}…{text[-19:]}"


def _check_names(names, what, where, locate=None):
    """Refuse names that cannot be shown as one line of text, or that Unicode calls the same name.

    ``what`` says what the names are (``"model column"``, ``"column 'dataset' value"``);
    ``locate(name)`` may say where a name first occurs.
    """
    seen = {}
    for name in names:
        name = str(name)
        bad = next((ch for ch in name if ch in _BIDI_CONTROLS
                    or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")), None)
        at = f" at {locate(name)}" if locate is not None else ""
        if bad is not None:
            kind = unicodedata.name(bad, "control character").lower()
            raise ValueError(
                f"{where}: {what} {_shown(name)}{at} holds a {kind} ({ascii(bad)}); names are shown as one line "
                "of text in tables, figures and reports, so control, line-break and bidirectional-override "
                "characters are refused: rename it")
        key = unicodedata.normalize("NFC", name)
        other = seen.setdefault(key, name)
        if other != name:
            raise ValueError(
                f"{where}: {what}s {ascii(other)} and {ascii(name)}{at} are the same name in two Unicode "
                "normalisation forms (they look identical in every table and figure): rename one")


_GZIP_MAGIC = b"\x1f\x8b"
#: Bytes that text never holds (C0 controls but tab, line feed, carriage return, form feed; DEL).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13)) + b"\x7f"
_READS = "beyondauc reads CSV (UTF-8, optionally gzip-compressed), TSV and Parquet files"


def _is_gzip(path):
    """True when the file's bytes are gzip-compressed, whatever its name says."""
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def _open_text(path):
    """The file as UTF-8 text for the csv module, decompressed when its bytes are gzip."""
    opener = gzip.open if _is_gzip(path) else open
    return opener(path, "rt", encoding="utf-8-sig", newline="")


def _sniff(path):
    """Refuse, naming the file, bytes no CSV reader can read; return pandas' ``compression``.

    Compression is read from the bytes (gzip's magic number), never from the
    name alone; the form (CSV or TSV) stays the name's.  UTF-16 text, binary
    data and a Parquet file or ZIP archive given a text name are refused with
    what to do instead.
    """
    where = f"file {str(path)!r}"
    gz = _is_gzip(path)
    try:
        with (gzip.open if gz else open)(path, "rb") as fh:
            head = fh.read(8192)
    except (OSError, EOFError) as exc:  # a truncated or corrupt gzip stream
        raise ValueError(f"{where} starts like gzip-compressed data but cannot be decompressed ({exc})") from None
    unpacked = " (once decompressed)" if gz else ""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(f"{where} is UTF-16 text{unpacked} (it starts with a UTF-16 byte-order mark); "
                         "re-save it as UTF-8")
    if head.startswith(b"PAR1"):
        raise ValueError(f"{where} holds a Parquet file{unpacked} (it starts with 'PAR1'); give it a .parquet name")
    if head.startswith(b"PK\x03\x04"):
        raise ValueError(f"{where} is a ZIP archive{unpacked} (an .xlsx workbook is one), not a CSV file; "
                         f"export the table as CSV. {_READS}")
    if b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if min(even.count(0), odd.count(0)) == 0 and max(even.count(0), odd.count(0)) > len(head) // 4:
            raise ValueError(f"{where} looks like UTF-16 text{unpacked} (every other byte is zero); "
                             "re-save it as UTF-8")
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if controls > len(head) // 20:  # text holds few (a stray one may sit in a quoted name); binary data ~1 in 9
        raise ValueError(f"{where} is not a CSV/Parquet file: it holds binary data{unpacked} ({controls} control "
                         f"bytes in its first {len(head)}). {_READS}")
    return "gzip" if gz else None


def _undecodable(path, where):
    """The one-line error for a file that is not UTF-8: the line and byte where decoding fails."""
    with (gzip.open if _is_gzip(path) else open)(path, "rb") as fh:
        if fh.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            return ValueError(f"{where} is UTF-16 text (it starts with a UTF-16 byte-order mark); re-save it as UTF-8")
        fh.seek(0)
        for number, line in enumerate(fh, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = line[exc.start]
                return ValueError(f"{where}, line {number}: byte 0x{byte:02x} is not UTF-8 text (the file may be "
                                  "Latin-1 or Windows-1252); re-save it as UTF-8")
    return ValueError(f"{where} is not UTF-8 text; re-save it as UTF-8")


def _check_delimiter(header, sep, where):
    """Refuse a header that is one field holding another delimiter: the file is not delimited by ``sep``."""
    if len(header) != 1:
        return
    others = [d for d in (";", "\t", "|", ",") if d != sep and d in header[0]]
    if others:
        shown = {"\t": "tabs"}.get(others[0], repr(others[0]))
        told = "comma-separated" if sep == "," else "tab-separated"
        fix = ("give it a .tsv name" if others[0] == "\t" else "re-save it with ',' between values") if sep == "," \
            else "give it a .csv name" if others[0] == "," else "re-save it with tabs between values"
        raise ValueError(f"{where} looks delimited by {shown}, not {told} (its header line is one field, "
                         f"{_shown(header[0])}): {fix}")


def _parser_error(path, sep, exc, where):
    """The one-line error for a CSV the tokenizer refuses: the line of the first row with too many fields."""
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep, strict=True)
        header, start = None, 1
        try:
            for row in reader:
                if row and header is None:
                    header = row
                elif row and len(row) > len(header):
                    return ValueError(
                        f"{where}, line {start}: {len(row)} fields, but the header has {len(header)}; a value that "
                        f"holds {'a tab' if sep == chr(9) else repr(sep)} must be in double quotes")
                start = reader.line_num + 1
        except csv.Error as error:
            if "end of data" in str(error):
                return ValueError(f"{where}, line {start}: a quoted value opens here and is never closed "
                                  "(a '\"' inside a value must be doubled)")
            return ValueError(f"{where}, line {start}: {error}")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text.replace("Error tokenizing data. C error: ", "")
    return ValueError(f"{where} cannot be read as {'TSV' if sep == chr(9) else 'CSV'}: {text}")


def _csv_header(path, sep=","):
    with _open_text(path) as fh:
        return next(csv.reader(fh, delimiter=sep), [])


def _check_duplicate_columns(columns, where):
    seen, dups = set(), []
    for c in columns:
        if c in seen and c not in dups:
            dups.append(c)
        seen.add(c)
    if dups:
        raise ValueError(f"{where}: duplicate column(s) {dups}")


def _read_table(path):
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic != b"PAR1":
            text = " (its bytes are gzip-compressed)" if magic[:2] == _GZIP_MAGIC else ""
            raise ValueError(f"file {str(path)!r} is not a Parquet file{text}: it does not start with 'PAR1'. "
                             f"{_READS}")
        try:
            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise ValueError(f"reading {str(path)!r} needs pyarrow: pip install 'beyondauc[parquet]' ({exc})") from None
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"file {str(path)!r} cannot be read as Parquet: {first}") from None
        _check_duplicate_columns(list(frame.columns), f"file {str(path)!r}")
        return frame, 0
    if name.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".txt.gz")):
        sep = "\t" if name.endswith((".tsv", ".tsv.gz")) else ","
        where = f"file {str(path)!r}"
        compression = _sniff(path)
        read = {"sep": sep, "compression": compression, "encoding": "utf-8", "low_memory": False}
        try:
            header = _csv_header(path, sep)
            _check_delimiter(header, sep, where)
            if sep == ",":
                _check_duplicate_columns(header, where)
            frame = pd.read_csv(path, **read)
        except pd.errors.EmptyDataError:
            raise ValueError(f"{where} is empty") from None
        except UnicodeDecodeError:
            raise _undecodable(path, where) from None
        except (pd.errors.ParserError, csv.Error) as exc:
            raise _parser_error(path, sep, exc, where) from None
        names = [c for c in _NAME_COLUMNS if c in frame.columns and c in header]
        if names:  # again, as written: pandas' NA markers ("None", "NA", "nan") and numbers ("01") are names here
            text = pd.read_csv(path, usecols=names, dtype=str, keep_default_na=False, na_values=[""], **read)
            if len(text) == len(frame):
                for c in names:
                    frame[c] = text[c].to_numpy(dtype=object)
        return frame, 2  # row numbers in messages are file line numbers (header = line 1)
    raise ValueError(f"`source` {str(path)!r}: expected a directory, a .csv(.gz) or a .parquet file")


def _annotate(frame, path, offset, dataset=None):
    """``frame`` with where each row came from (``_file``, ``_line``) and, given, a first ``dataset`` column.

    Added at once: a frame read from a file of many models holds a block per
    column, and inserting into it column by column fragments it further.
    """
    parts = [frame, pd.DataFrame({"_file": str(path), "_line": np.arange(len(frame)) + offset}, index=frame.index)]
    if dataset is not None:
        parts.insert(0, pd.DataFrame({"dataset": dataset}, index=frame.index))
    return pd.concat(parts, axis=1)


def _true_dataset_name(path):
    stem = path.name
    for ext in (".csv.gz", ".csv", ".parquet", ".pq", ".tsv", ".txt"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
            break
    for suffix in _TRUE_SUFFIXES:
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _row_name(frame, pos, line_offset):
    """Describe row ``pos`` of ``frame`` for a message."""
    if line_offset:
        record = int(frame["_line"].iloc[pos]) - line_offset
        return f"line {_csv_line(frame['_file'].iloc[pos], record)}"
    label = frame.index[pos]
    return f"row {label.item() if isinstance(label, np.generic) else label!r}"


def _csv_line(path, record):
    """Line of ``path`` where data record ``record`` (0-based) starts, header =
    line 1.  Quoted fields may span lines, so this is not always ``record + 2``."""
    name = str(path).lower()
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter="\t" if name.endswith((".tsv", ".tsv.gz")) else ",")
        index, prev = -1, 0  # the header is record -1; blank lines are skipped
        for row in reader:
            if row:
                if index == record:
                    return prev + 1
                index += 1
            prev = reader.line_num
    return record + 2


def _read_true_dir(path, models, ignored=None):
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith((".csv", ".csv.gz")))
    if not files:
        raise ValueError(f"directory {str(path)!r} holds no .csv files")
    parts = []
    model_sets = {}
    for f in files:
        frame, offset = _read_table(f)
        name = _true_dataset_name(f)
        if "dataset" in frame.columns:
            raise ValueError(f"file {str(f)!r}: a TRUE-format file must not have a 'dataset' column (the file name is the dataset)")
        if len(frame) == 0:
            raise ValueError(f"file {str(f)!r} (dataset {name!r}) has no rows")
        if "label" not in frame.columns:
            raise ValueError(
                f"file {str(f)!r} (dataset {name!r}): missing the 'label' column"
                f"{_closest('label', frame.columns)}; columns are {list(frame.columns)}"
            )
        frame = _annotate(frame, f, offset, dataset=name)
        found = _model_columns(frame, None, f"file {str(f)!r}", ignored, _TRUE_TEXT) if models is None \
            else frame.columns
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


def _model_columns(frame, models, where, ignored=None, known=()):
    """The model columns: ``models``, or every numeric column that is not a reserved one.

    Without ``models``, a column of booleans or dates is refused (it looks like
    a model but holds no scores), and a text column is left out and listed in
    ``ignored`` (column -> where), unless it is one of ``known`` (the TRUE
    format's own text columns).
    """
    if models is not None:
        missing = [m for m in models if m not in frame.columns]
        if missing:
            columns = [c for c in frame.columns if c not in _BOOKKEEPING]  # our bookkeeping, not the file's
            raise ValueError(f"{where}: `models` names column(s) {missing} not found; columns are {columns}")
        return list(models)
    cols = []
    for c in frame.columns:
        if c in _RESERVED or c in _BOOKKEEPING:  # a model may be called "_x_"
            continue
        column = frame[c]
        kind = column.dtype.kind
        if kind in "iuf":
            cols.append(c)
            continue
        what = _not_scores(column)
        if what is not None:
            raise ValueError(
                f"{where}: column {_shown(c)} holds {what}, not scores: convert it to numbers if it is a model, "
                "or give `models=` to name the model columns")
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
    if all(isinstance(v, (str, pd.Timestamp, np.datetime64)) for v in sample) \
            and not pd.to_numeric(sample, errors="coerce").notna().any():
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


def _closest(name, columns):
    """'' or a clause suggesting the column of ``columns`` that looks like ``name``."""
    near = [c for c in columns if c != name and _near(name, c)]
    return f" (is {str(near[0])!r} meant to be {name!r}?)" if near else ""


def _check_misspelled_columns(columns, where):
    """Error on a column that looks like a reserved one (``Dataset``, ``datset``,
    ``Split``, ``ID``) while the reserved one is absent: it would silently be
    ignored or read as a model, e.g. a whole benchmark as one dataset."""
    present = set(map(str, columns))
    for name in _RESERVED:
        if name in present:
            continue
        near = [c for c in columns if str(c) not in _RESERVED and _near(name, c)]
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


def load_benchmark(source, *, domains=None, pos_label=None, models=None, datasets=None, nan_policy="raise"):
    """Read per-example scores into a validated :class:`Benchmark`.

    Parameters
    ----------
    source : str, path or pandas.DataFrame
        A directory in the TRUE format (one CSV per dataset; the dataset name
        is the file stem without ``_dev_true_scores`` / ``_true_scores``), one
        CSV (optionally gzipped) or Parquet file in the long-wide form, or a
        DataFrame.  A file or frame without a ``dataset`` column is one
        dataset named after the file stem (``"data"`` for a frame).
    domains : mapping or path, optional
        Dataset -> domain.  Takes precedence over a ``domain`` column, which
        takes precedence over the built-in TRUE domains (:data:`TRUE_DOMAINS`).
        A path is read with :func:`read_domains`.
    pos_label : scalar, optional
        The positive label.  Needed unless labels are {0, 1}, {-1, 1} or booleans.
    models : sequence of str, optional
        Model columns to use.  Default: every numeric column other than
        ``label``, ``id``, ``split``, ``dataset`` and ``domain``.
    datasets : sequence of str, optional
        Keep only these datasets, in this order.
    nan_policy : {"raise", "drop"}, default="raise"
        What to do with NaN/inf scores: raise an error naming the file, column
        and row, or drop those rows with a warning.

    Returns
    -------
    Benchmark

    Raises
    ------
    ValueError
        On a missing ``label`` column, non-binary labels, NaN/inf scores,
        duplicate columns, an empty dataset, a model missing from a dataset or
        an unknown model/dataset name.  A dataset with a single class only
        warns: metrics that need both classes are NaN there.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dataset": ["x"] * 4 + ["y"] * 4,
    ...                    "label": ["yes", "no"] * 4,
    ...                    "bleu": [0.9, 0.2, 0.7, 0.4, 0.3, 0.1, 0.8, 0.6]})
    >>> bench = load_benchmark(df, pos_label="yes", domains={"x": "news", "y": "news"})
    >>> bench.labels("x")
    array([1, 0, 1, 0], dtype=int8)
    >>> bench.summary()[["dataset", "domain", "n", "n_positive"]]
      dataset domain  n  n_positive
    0       x   news  4           2
    1       y   news  4           2
    """
    check_option(nan_policy, "nan_policy", ("raise", "drop"))
    if models is not None:
        if isinstance(models, str):
            models = [models]
        models = list(models)
        if not models:
            raise ValueError("`models` must name at least one model column, got an empty list")
    if isinstance(domains, (str, Path)):
        domains = read_domains(domains)
    elif domains is not None and not isinstance(domains, Mapping):
        raise ValueError(f"`domains` must be a mapping dataset -> domain or a path, got {type(domains).__name__}")

    ignored = {}  # text columns left out (column -> where): listed in one warning once the data is read
    one_dataset = False  # no 'dataset' column: the whole file (frame) is one dataset
    if isinstance(source, pd.DataFrame):
        where = "DataFrame"
        _check_duplicate_columns(list(source.columns), "DataFrame")
        _check_misspelled_columns(source.columns, where)
        frame = source.copy()
        if "dataset" not in frame.columns:
            frame.insert(0, "dataset", "data")
            one_dataset = True
        line_offset = 0
        model_cols = _model_columns(frame, models, where, ignored)
        src = "<DataFrame>"
    else:
        path = Path(source)
        src = str(source)
        if not path.exists():
            raise ValueError(f"`source` {src!r} does not exist")
        if path.is_dir():
            frame, line_offset, model_cols = _read_true_dir(path, models, ignored)
            where = f"directory {src!r}"
        else:
            frame, line_offset = _read_table(path)
            where = f"file {src!r}"
            if len(frame) == 0:
                raise ValueError(f"{where} has no rows")
            _check_misspelled_columns(frame.columns, where)
            one_dataset = "dataset" not in frame.columns
            frame = _annotate(frame, src, line_offset, dataset=_true_dataset_name(path) if one_dataset else None)
            model_cols = _model_columns(frame, models, where, ignored)

    def locate(pos):
        f = frame["_file"].iloc[pos] if "_file" in frame.columns else None
        row = _row_name(frame, pos, line_offset)
        return f"file {f!r}, {row}" if f else f"DataFrame {row}"

    if "label" not in frame.columns:
        columns = [c for c in frame.columns if c not in _BOOKKEEPING]
        raise ValueError(f"{where}: missing the 'label' column{_closest('label', columns)}; columns are {columns}")
    if not model_cols:
        text = f"; not numeric: {', '.join(map(_shown, ignored))}" if ignored else ""
        raise ValueError(f"{where}: no numeric model columns found (columns other than {list(_RESERVED)}){text}")
    _check_names(model_cols, "model column", where)
    converted = {}
    for m in model_cols:
        if frame[m].dtype.kind not in "iuf" or frame[m].dtype.kind == "b":
            values = pd.to_numeric(frame[m], errors="coerce")
            bad = values.isna() & frame[m].notna()
            if bad.any():
                pos = int(np.flatnonzero(bad.to_numpy())[0])
                raise ValueError(f"model column {m!r} must be numeric: {frame[m].iloc[pos]!r} at {locate(pos)}")
            converted[m] = values
    if converted:  # at once (column by column fragments a frame of many models); by position, not index
        frame[list(converted)] = np.column_stack([v.to_numpy(dtype=np.float64) for v in converted.values()])

    missing = pd.isna(frame["dataset"]).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(f"column 'dataset' has a missing value at {locate(pos)}")
    frame["dataset"] = frame["dataset"].astype(str)
    first = frame["dataset"].drop_duplicates()
    _check_names(first, "column 'dataset' value", where,
                 lambda d: locate(int(np.flatnonzero((frame["dataset"] == d).to_numpy())[0])))
    if datasets is not None:
        datasets = [datasets] if isinstance(datasets, str) else list(datasets)
        present = list(pd.unique(frame["dataset"]))
        unknown = [d for d in datasets if d not in present]
        if unknown:
            raise ValueError(f"`datasets` names {unknown}, not in {where}; datasets are {present}")
        frame = frame[frame["dataset"].isin(datasets)]

    # labels
    labels = frame["label"].to_numpy()
    missing = pd.isna(frame["label"]).to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ValueError(f"column 'label' has a missing value at {locate(pos)}")
    try:
        y = binarize_labels(labels, "label", pos_label=pos_label, where=where)
    except ValueError as exc:
        raise ValueError(str(exc).replace("`label`", "column 'label'")) from None
    frame["label"] = y

    order = list(pd.unique(frame["dataset"])) if datasets is None else datasets

    # scores
    scores = frame[model_cols].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(scores)
    if bad.any():
        dset = frame["dataset"].to_numpy()
        for j, m in enumerate(model_cols):
            per_ds = pd.Series(bad[:, j]).groupby(dset).all()
            all_bad = per_ds[per_ds].index.tolist()
            if all_bad:
                raise ValueError(f"model {m!r} is missing from dataset(s) {all_bad} (no scores) in {where}")
        if nan_policy == "raise":
            rows, cols = np.nonzero(bad)
            pos, j = int(rows[0]), int(cols[0])
            raise ValueError(
                f"model column {model_cols[j]!r} has a non-finite score ({scores[pos, j]}) at {locate(pos)}; "
                f"{int(bad.sum())} such value(s) in all. Fix the data or pass nan_policy=\"drop\""
            )
        drop = bad.any(axis=1)
        per_col = {m: int(bad[:, j].sum()) for j, m in enumerate(model_cols) if bad[:, j].any()}
        warnings.warn(f"dropped {int(drop.sum())} row(s) with NaN/inf scores from {where}: {per_col}", UserWarning, stacklevel=2)
        frame = frame.loc[~drop]
        scores = scores[~drop]

    if not order:
        raise ValueError(f"{where} has no rows")
    sizes = frame["dataset"].value_counts()
    for d in order:
        if sizes.get(d, 0) == 0:
            why = " left after nan_policy=\"drop\" removed rows with NaN/inf scores" if nan_policy == "drop" else ""
            raise ValueError(f"dataset {d!r} in {where} has no rows{why}")

    # domains
    dom = {}
    column_domains = {}
    if "domain" in frame.columns:
        g = frame.groupby("dataset", sort=False)["domain"].agg(lambda s: s.dropna().astype(str).unique().tolist())
        for d, vals in g.items():
            if len(vals) > 1:
                if one_dataset:
                    raise ValueError(
                        f"{where} has no 'dataset' column, so all of it is one dataset ({d!r}), but its 'domain' "
                        f"column has several values {_shown(vals)}; a dataset has one domain: add a 'dataset' "
                        "column naming each row's dataset")
                files = frame.loc[frame["dataset"] == d, "_file"].unique() if "_file" in frame.columns else ()
                at = f"file {str(files[0])!r}" if len(files) == 1 and where.startswith("directory") else where
                raise ValueError(f"{at}: dataset {d!r} has several values in column 'domain': {_shown(vals)}; "
                                 "a dataset has one domain")
            column_domains[d] = vals[0] if vals else None
        _check_names(dict.fromkeys(v for v in column_domains.values() if v is not None), "column 'domain' value", where)
    for d in order:
        if domains is not None and d in domains:
            dom[d] = str(domains[d])
        elif column_domains.get(d) is not None:
            dom[d] = column_domains[d]
        else:
            dom[d] = TRUE_DOMAINS.get(d)
    if domains is not None:
        _check_names(dict.fromkeys(str(v) for v in domains.values()), "`domains` value", where)
    _check_names(dict.fromkeys(v for v in dom.values() if v is not None), "domain", where)
    if domains is not None:
        extra = [k for k in domains if k not in order]
        if extra:
            warnings.warn(f"`domains` names dataset(s) not in the data: {extra}", UserWarning, stacklevel=2)

    # single-class datasets: one warning for all of them
    pos_counts = pd.Series(frame["label"].to_numpy()).groupby(frame["dataset"].to_numpy()).agg(["sum", "count"])
    single = []
    for d in order:
        s, n = pos_counts.loc[d, "sum"], pos_counts.loc[d, "count"]
        if s == 0 or s == n:
            single.append((d, "positive" if s else "negative"))
    if single:
        warnings.warn(single_class_message(single), UserWarning, stacklevel=2)
    if ignored:
        shown = ", ".join(_shown(c) for c in list(ignored)[:10]) + (f" and {len(ignored) - 10} more"
                                                                   if len(ignored) > 10 else "")
        warnings.warn(f"{where}: ignored column(s) {shown}: not numeric, so not a model, and not one of "
                      f"{', '.join(map(repr, _RESERVED))} (give `models=` to name the model columns)", UserWarning,
                      stacklevel=2)

    columns = {"dataset": frame["dataset"].to_numpy()}
    columns["domain"] = pd.Series(columns["dataset"]).map(dom).to_numpy()
    columns["label"] = frame["label"].to_numpy().astype(np.int8)
    if "split" in frame.columns:
        columns["split"] = frame["split"].astype(str).to_numpy()
    if "id" in frame.columns:
        columns["id"] = frame["id"].to_numpy()
    columns.update((str(m), scores[:, j]) for j, m in enumerate(model_cols))
    out = pd.DataFrame(columns)  # at once: column by column fragments a frame of many models
    code = out["dataset"].map({d: i for i, d in enumerate(order)}).to_numpy()
    out = out.iloc[np.argsort(code, kind="stable")].reset_index(drop=True)
    return Benchmark(out, tuple(str(m) for m in model_cols), tuple(order), dom, src)


def single_class_message(datasets):
    """The one warning about the datasets with a single class, given as (name, "positive" or "negative")."""
    if len(datasets) == 1:
        (d, kind), = datasets
        return (f"dataset {d!r} has a single class (all labels {kind}); its AUC, and every other number that "
                "needs both classes, is NaN (kappa too where all decisions are that class)")
    shown = ", ".join(f"{d!r} (all labels {kind})" for d, kind in datasets[:10])
    more = f" and {len(datasets) - 10} more" if len(datasets) > 10 else ""
    return (f"{len(datasets)} datasets have a single class: {shown}{more}; their AUC, and every other number that "
            "needs both classes, is NaN (kappa too where all decisions are that class)")


def load_demo():
    """Load the embedded demo benchmark (real models on scikit-learn's bundled data).

    See ``beyondauc/datasets/README.md`` for how it was made; the script
    ``scripts/make_demo_data.py`` regenerates it.

    Examples
    --------
    >>> from beyondauc import load_demo
    >>> bench = load_demo()
    >>> len(bench.datasets) >= 6 and len(bench.models) >= 6
    True
    """
    ref = resources.files("beyondauc") / "datasets" / "demo.csv.gz"
    with resources.as_file(ref) as path:
        bench = load_benchmark(path)
    return Benchmark(bench.frame, bench.models, bench.datasets, bench.domains, "beyondauc demo benchmark")
