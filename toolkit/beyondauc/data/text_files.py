"""Opening a text table and saying what is wrong with it: gzip, encodings, delimiters, parser errors.

Every message names the file (and the line where there is one) and suggests
the likely delimiter or encoding; :mod:`beyondauc.data.readers` reads through it.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import os
import sys
import zlib

from ..utils.formatting import quoted_name

__all__ = [
    "GZIP_ERRORS",
    "GZIP_MAGIC",
    "READS",
    "check_delimiter",
    "check_duplicate_columns",
    "csv_header",
    "gzip_fault",
    "open_text",
    "parser_error",
    "sniff",
    "undecodable",
]


GZIP_MAGIC = b"\x1f\x8b"
#: Bytes that text never holds (C0 controls but tab, line feed, carriage return, form feed; DEL).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13)) + b"\x7f"
READS = "beyondauc reads CSV (UTF-8, optionally gzip-compressed), TSV, Parquet and JSON Lines files"


def _is_gzip(path):
    """True when the file's bytes are gzip-compressed, whatever its name says."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


#: The csv module's field size limit while it reads a file: any text field (a prompt, a response) is a field.
_FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)  # a C long on every platform
#: What reading a gzip stream that is cut short or damaged raises (BadGzipFile: a wrong CRC, length or header).
GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


@contextlib.contextmanager
def open_text(path):
    """The file as UTF-8 text for the csv module, decompressed when its bytes are gzip, with fields of any size.

    The csv module refuses fields over 128 KB by default; the limit (global to
    the module) is lifted for the block and restored after it.
    """
    opener = gzip.open if _is_gzip(path) else open
    old = csv.field_size_limit()
    csv.field_size_limit(_FIELD_LIMIT)
    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
            yield fh
    finally:
        csv.field_size_limit(old)


def gzip_fault(path: str | os.PathLike, exc: BaseException, where: str) -> ValueError:
    """The one-line error of a gzip file cut short or damaged: what is wrong, and after which line.

    The lines are counted only here, for the message: the stream is read
    again up to where it fails.

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "cut.csv.gz")
    >>> data = gzip.compress(b"a,b\\n1,2\\n3,4\\n")
    >>> _ = open(p, "wb").write(data[:-12])
    >>> try:
    ...     with gzip.open(p) as fh:
    ...         fh.read()
    ... except EOFError as exc:
    ...     print(str(gzip_fault(p, exc, "file 'cut.csv.gz'")).split(":")[0])
    file 'cut.csv.gz' is cut short
    """
    lines = _lines_decompressed(path)
    after = f"after line {lines}" if lines else "before its first line ends"
    if isinstance(exc, EOFError):
        return ValueError(
            f"{where} is cut short: its gzip stream ends {after}, before the end-of-stream marker "
            "(a copy or download that did not finish?); copy or compress it again"
        )
    if isinstance(exc, gzip.BadGzipFile):  # a wrong CRC or length: damaged somewhere, the check cannot say where
        return ValueError(
            f"{where} is damaged: its gzip stream fails gzip's own check ({exc}); copy or compress it again"
        )
    return ValueError(
        f"{where} is damaged: its gzip stream cannot be decompressed {after} ({exc}); copy or compress it again"
    )


def _lines_decompressed(path):
    """The complete lines of a gzip file's stream before the point where it cannot be decompressed further."""
    unpack = [zlib.decompressobj(wbits=31)]  # 31: a gzip header and trailer; a list: members follow
    with open(path, "rb") as fh:
        return _feed(unpack, fh.read(), (1 << 16, 1 << 10, 1))[0]


def _feed(unpack, data, sizes):
    """(line ends, whether it failed) of ``data`` fed to ``unpack`` in pieces of ``sizes[0]``; a piece that
    fails is fed again in the next smaller pieces, so the lines before the fault count to the byte."""
    lines = 0
    for start in range(0, len(data), sizes[0]):
        piece = data[start : start + sizes[0]]
        saved = [unpack[0].copy()]
        try:
            lines += _count_lines(unpack, piece)
        except zlib.error:
            if len(sizes) > 1:
                lines += _feed(saved, piece, sizes[1:])[0]
            return lines, True
    return lines, False


def _count_lines(unpack, data):
    """Feed ``data`` to the decompressor ``unpack[0]`` (replaced by a new one for each next gzip member); the
    line ends it gives.  Raises ``zlib.error`` where the stream is damaged."""
    lines = unpack[0].decompress(data).count(b"\n")
    while unpack[0].eof and unpack[0].unused_data:  # the next member of a multi-member file
        rest, unpack[0] = unpack[0].unused_data, zlib.decompressobj(wbits=31)
        lines += unpack[0].decompress(rest).count(b"\n")
    return lines


def _gzip_damage(path, where):
    """None, or the error of a gzip file whose stream is cut short or damaged.

    Read whole: called only on the way to another error, which the damage
    explains (a parser meets garbage before gzip's check at the end does).
    """
    if not _is_gzip(path):
        return None
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
    except GZIP_ERRORS as exc:
        return gzip_fault(path, exc, where)
    return None


def sniff(path):
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
    except (*GZIP_ERRORS, OSError) as exc:  # a truncated or corrupt gzip stream
        raise gzip_fault(path, exc, where) from None
    unpacked = " (once decompressed)" if gz else ""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(
            f"{where} is UTF-16 text{unpacked} (it starts with a UTF-16 byte-order mark); re-save it as UTF-8"
        )
    if head.startswith(b"PAR1"):
        raise ValueError(f"{where} holds a Parquet file{unpacked} (it starts with 'PAR1'); give it a .parquet name")
    if head.startswith(b"PK\x03\x04"):
        raise ValueError(
            f"{where} is a ZIP archive{unpacked} (an .xlsx workbook is one), not a CSV file; "
            f"export the table as CSV. {READS}"
        )
    if b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if min(even.count(0), odd.count(0)) == 0 and max(even.count(0), odd.count(0)) > len(head) // 4:
            raise ValueError(
                f"{where} looks like UTF-16 text{unpacked} (every other byte is zero); re-save it as UTF-8"
            )
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if controls > len(head) // 20:  # text holds few (a stray one may sit in a quoted name); binary data ~1 in 9
        raise ValueError(
            f"{where} is not a CSV/Parquet file: it holds binary data{unpacked} ({controls} control "
            f"bytes in its first {len(head)}). {READS}"
        )
    return "gzip" if gz else None


def undecodable(path, where):
    """The one-line error for a file that is not UTF-8: the line and byte where decoding fails."""
    damage = _gzip_damage(path, where)
    if damage is not None:
        return damage
    with (gzip.open if _is_gzip(path) else open)(path, "rb") as fh:
        if fh.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            return ValueError(f"{where} is UTF-16 text (it starts with a UTF-16 byte-order mark); re-save it as UTF-8")
        fh.seek(0)
        for number, line in enumerate(fh, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = line[exc.start]
                return ValueError(
                    f"{where}, line {number}: byte 0x{byte:02x} is not UTF-8 text (the file may be "
                    "Latin-1 or Windows-1252); re-save it as UTF-8"
                )
    return ValueError(f"{where} is not UTF-8 text; re-save it as UTF-8")


def check_delimiter(header, sep, where):
    """Refuse a header that is one field holding another delimiter: the file is not delimited by ``sep``."""
    if len(header) != 1:
        return
    others = [d for d in (";", "\t", "|", ",") if d != sep and d in header[0]]
    if others:
        shown = {"\t": "tabs"}.get(others[0], repr(others[0]))
        told = "comma-separated" if sep == "," else "tab-separated"
        fix = (
            ("give it a .tsv name" if others[0] == "\t" else "re-save it with ',' between values")
            if sep == ","
            else "give it a .csv name"
            if others[0] == ","
            else "re-save it with tabs between values"
        )
        raise ValueError(
            f"{where} looks delimited by {shown}, not {told} (its header line is one field, "
            f"{quoted_name(header[0])}): {fix}"
        )


def parser_error(path, sep, exc, where):
    """The one-line error for a CSV the tokenizer refuses: the line of the first row with too many fields."""
    damage = _gzip_damage(path, where)
    if damage is not None:
        return damage
    with open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep, strict=True)
        header, start = None, 1
        try:
            for row in reader:
                if row and header is None:
                    header = row
                elif row and len(row) > len(header):
                    return ValueError(
                        f"{where}, line {start}: {len(row)} fields, but the header has {len(header)}; a value that "
                        f"holds {'a tab' if sep == chr(9) else repr(sep)} must be in double quotes"
                    )
                start = reader.line_num + 1
        except csv.Error as error:
            if "end of data" in str(error):
                return ValueError(
                    f"{where}, line {start}: a quoted value opens here and is never closed "
                    "(a '\"' inside a value must be doubled)"
                )
            return ValueError(f"{where}, line {start}: {error}")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text.replace("Error tokenizing data. C error: ", "")
    return ValueError(f"{where} cannot be read as {'TSV' if sep == chr(9) else 'CSV'}: {text}")


def csv_header(path, sep=","):
    """The fields of the header line.  A line without quotes is split as it is (the csv module would copy it
    into a buffer of four bytes a character: gigabytes for a file that is one long line)."""
    with open_text(path) as fh:
        line = fh.readline()
        if '"' not in line:
            line = line.rstrip("\r\n")
            return line.split(sep) if line else []
        fh.seek(0)
        return next(csv.reader(fh, delimiter=sep), [])


def check_duplicate_columns(columns, where):
    seen, dups = set(), []
    for c in columns:
        if c in seen and c not in dups:
            dups.append(c)
        seen.add(c)
    if dups:
        raise ValueError(f"{where}: duplicate column(s) {dups}")
