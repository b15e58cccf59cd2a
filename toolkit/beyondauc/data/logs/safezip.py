"""Members of a zip archive read in memory, never extracted, with every member checked before any is read.

Refused, each in one line naming the archive and the member: a member whose name is a path out of the
archive (absolute, ``..``, a drive or a backslash), a member that inflates past :data:`MAX_MEMBER_BYTES`
(or all of them past :data:`MAX_TOTAL_BYTES`), a compression method other than stored, deflate and zstd
(method 93, which the standard library reads only from Python 3.14), and a truncated archive.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path, PurePosixPath

__all__ = ["MAX_MEMBER_BYTES", "MAX_TOTAL_BYTES", "SafeZip"]

#: The most bytes one member may inflate to (256 MiB).
MAX_MEMBER_BYTES = 256 * 2**20
#: The most bytes all the members read from one archive may inflate to (2 GiB).
MAX_TOTAL_BYTES = 2 * 2**30

_STORED, _DEFLATE, _ZSTD = 0, 8, 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # signature .. file name length, extra field length


class SafeZip:
    """A zip archive held in memory whose members are all checked when it is opened.

    Examples
    --------
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    ...     z.writestr("header.json", '{"a": 1}')
    >>> SafeZip(buf.getvalue(), "log.eval").read("header.json")
    b'{"a": 1}'
    """

    def __init__(self, data: bytes, where: str) -> None:
        self.data, self.where = data, where
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{where} is not a complete zip archive ({exc}); it may be truncated") from None
        self.members = {info.filename: info for info in archive.infolist()}
        total = 0
        for info in archive.infolist():
            self._check(info)
            total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise ValueError(f"{where}: its members inflate to {total} bytes, past the limit of {MAX_TOTAL_BYTES}")

    @classmethod
    def open(cls, path: Path) -> SafeZip:
        """The archive at ``path``, read into memory."""
        return cls(Path(path).read_bytes(), f"file {str(path)!r}")

    def _check(self, info: zipfile.ZipInfo) -> None:
        name = info.filename
        parts = PurePosixPath(name).parts
        if name.startswith(("/", "\\")) or "\\" in name or ".." in parts or (len(name) > 1 and name[1] == ":"):
            raise ValueError(f"{self.where}: member {name!r} is a path out of the archive; refused")
        if info.compress_type not in (_STORED, _DEFLATE, _ZSTD):
            raise ValueError(
                f"{self.where}: member {name!r} uses zip compression method {info.compress_type}; "
                "stored, deflate and zstd (93) are read"
            )
        if info.file_size > MAX_MEMBER_BYTES:
            raise ValueError(
                f"{self.where}: member {name!r} inflates to {info.file_size} bytes, past the limit "
                f"of {MAX_MEMBER_BYTES}"
            )
        if info.header_offset + _LOCAL_HEADER.size + info.compress_size > len(self.data):
            raise ValueError(f"{self.where}: member {name!r} runs past the end of the archive; it is truncated")

    def names(self) -> list[str]:
        """The members' names, in the archive's order."""
        return list(self.members)

    def read(self, name: str) -> bytes:
        """Member ``name`` inflated (at most :data:`MAX_MEMBER_BYTES`), its size and CRC-32 checked."""
        info = self.members[name]
        raw = self._raw(info)
        if info.compress_type == _STORED:
            out = raw[: MAX_MEMBER_BYTES + 1]
        elif info.compress_type == _DEFLATE:
            out = zlib.decompressobj(-15).decompress(raw, MAX_MEMBER_BYTES + 1)
        else:
            import zstandard  # the one compression the standard library lacks before Python 3.14

            try:
                out = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read(MAX_MEMBER_BYTES + 1)
            except zstandard.ZstdError as exc:
                raise ValueError(f"{self.where}: member {name!r} is not valid zstd data ({exc})") from None
        if len(out) > MAX_MEMBER_BYTES:
            raise ValueError(f"{self.where}: member {name!r} inflates past the limit of {MAX_MEMBER_BYTES} bytes")
        if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
            raise ValueError(f"{self.where}: member {name!r} is damaged (its size or CRC-32 does not match)")
        return out

    def _raw(self, info: zipfile.ZipInfo) -> bytes:
        """The compressed bytes of a member, located through its local header."""
        start = info.header_offset
        head = self.data[start : start + _LOCAL_HEADER.size]
        if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise ValueError(f"{self.where}: member {info.filename!r} has no local header; the archive is damaged")
        fields = _LOCAL_HEADER.unpack(head)
        begin = start + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        raw = self.data[begin : begin + info.compress_size]
        if len(raw) < info.compress_size:
            raise ValueError(
                f"{self.where}: member {info.filename!r} runs past the end of the archive; it is truncated"
            )
        return raw
