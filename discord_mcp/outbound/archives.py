"""Compressed files and archives an agent sends: looked inside before they go.

Theory. A text file is redacted before it is sent (:mod:`.files`), but a compressed one would
carry its secrets past unread: ``gzip -c .env > notes.gz`` is a ``.env`` with another name. So
a file is recognised by its bytes, not its name (gzip, bzip2, xz, zip and tar by their magic
numbers), unpacked in memory within :data:`UNPACKED_MAX` bytes in all and
:data:`DEPTH_MAX` levels of nesting, and refused when:

- a name inside is one that usually holds secrets (a zip or tar member's path, the original
  name a gzip header keeps), judged as :mod:`.files` judges a path;
- what it unpacks to holds the bot token, in any of its forms (:mod:`.redaction`). Nothing is
  redacted inside an archive: it goes out exactly as it is, or not at all. Other credentials
  are not searched for inside (the shapes cost seconds per megabyte, an archive may unpack to
  tens): an agent that sends logs uncompressed has them redacted;
- it cannot be checked: corrupt or cut short, encrypted, larger than the cap once unpacked,
  nested deeper than the cap, or packed in a way this module cannot read (zstd, 7z, rar).

Any other binary file is searched for the token (in its forms) before it goes.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import Protocol

from discord_mcp.errors import FileRefused
from discord_mcp.outbound.redaction import find_known

UNPACKED_MAX = 64 * 1024 * 1024
"""Bytes a file may unpack to, all levels and members together."""
DEPTH_MAX = 4
"""Levels of packing looked through (``a.tar.gz`` is two)."""
MEMBERS_MAX = 10_000
_CHUNK = 1024 * 1024

Denied = Callable[[str], str | None]
"""A path inside an archive -> the part of it that usually holds secrets, or None."""


class _Stream(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _gzip(source: io.BytesIO) -> gzip.GzipFile:
    return gzip.GzipFile(fileobj=source)


_STREAMS: dict[str, Callable[[io.BytesIO], gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile]] = {
    "gzip": _gzip,
    "bzip2": bz2.BZ2File,
    "xz": lzma.LZMAFile,
}
"""Single-stream packings, and how to read one."""

_UNREADABLE = {
    b"\x28\xb5\x2f\xfd": "zstd",
    b"7z\xbc\xaf\x27\x1c": "7z",
    b"Rar!\x1a\x07": "rar",
}


def packing(data: bytes) -> str | None:
    """How ``data`` is packed, by its first bytes: ``gzip``, ``bzip2``, ``xz``, ``zip``,
    ``tar``, one of :data:`_UNREADABLE`'s, or None (not packed)."""
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[:3] == b"BZh" and data[3:4].isdigit():
        return "bzip2"
    if data[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[257:262] == b"ustar":
        return "tar"
    return next((kind for magic, kind in _UNREADABLE.items() if data.startswith(magic)), None)


def check_packed(data: bytes, raw: str, known: Iterable[str], denied: Denied) -> None:
    """Refuse ``data`` (the file ``raw``, not text) if it is packed and holds a secret file or a
    secret, or cannot be checked; if it is not packed, if it holds a known secret (the token).

    Raises:
        FileRefused: with the reason, never the secret.
    """
    secrets = tuple(known)
    if packing(data) is None:
        kind = find_known(_as_text(data), secrets)
        if kind is not None:
            raise FileRefused(_holds(raw, kind))
        return
    _Unpacker(raw, secrets, denied).look(data, depth=0)


def _as_text(data: bytes) -> str:
    """Bytes as text to search: UTF-8 where it is, else one character per byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _holds(raw: str, kind: str) -> str:
    return (
        f"{raw} holds a secret ({kind}), so it is never sent to Discord. Send the parts the "
        "owner needs, without credentials, as a text file (secrets in text files are redacted)"
    )


class _Unpacker:
    def __init__(self, raw: str, secrets: tuple[str, ...], denied: Denied) -> None:
        self._raw = raw
        self._secrets = secrets
        self._denied = denied
        self._left = UNPACKED_MAX
        self._members = 0

    def refuse(self, why: str) -> FileRefused:
        return FileRefused(f"{self._raw} {why}")

    def unchecked(self, why: str) -> FileRefused:
        return self.refuse(
            f"cannot be checked for secrets ({why}), so it is never sent to Discord. Send the "
            "files inside it one by one, or pack them as a plain zip or tar.gz"
        )

    def look(self, data: bytes, *, depth: int) -> None:
        kind = packing(data)
        if kind is None:
            self.scan(data)
            return
        if depth >= DEPTH_MAX:
            raise self.unchecked(f"packed more than {DEPTH_MAX} levels deep: nested too far")
        try:
            if kind in _STREAMS:
                if kind == "gzip":
                    self.name(_gzip_name(data))
                with _STREAMS[kind](io.BytesIO(data)) as stream:
                    self.look(self.unpack(stream), depth=depth + 1)
            elif kind == "zip":
                self.zip(data, depth)
            elif kind == "tar":
                self.tar(data, depth)
            else:
                raise self.unchecked(f"{kind} is not a packing discord-mcp can read")
        except FileRefused:
            raise
        except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
            raise self.refuse(
                f"cannot be read as {kind} ({type(exc).__name__}), so it cannot be checked for "
                "secrets and is never sent to Discord"
            ) from None
        except (zipfile.BadZipFile, tarfile.TarError, NotImplementedError, RuntimeError) as exc:
            raise self.refuse(
                f"cannot be read as {kind} ({type(exc).__name__}), so it cannot be checked for "
                "secrets and is never sent to Discord"
            ) from None

    def unpack(self, stream: _Stream) -> bytes:
        """What ``stream`` unpacks to, within what is left of the cap."""
        out = bytearray()
        while chunk := stream.read(min(_CHUNK, self._left + 1)):
            out += chunk
            if len(out) > self._left:
                raise self.unchecked(
                    f"too large once unpacked: more than {UNPACKED_MAX // (1024 * 1024)} MiB"
                )
        self._left -= len(out)
        return bytes(out)

    def name(self, path: str | None) -> None:
        if not path:
            return
        self._members += 1
        if self._members > MEMBERS_MAX:
            raise self.unchecked(f"more than {MEMBERS_MAX} files inside")
        secret = self._denied(path)
        if secret is not None:
            raise self.refuse(
                f"holds {path!r}: {secret} usually holds secrets, so the archive is never sent "
                "to Discord. Pack the files the owner needs without it"
            )

    def zip(self, data: bytes, depth: int) -> None:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                self.name(info.filename)
                if info.flag_bits & 0x1:
                    raise self.unchecked(f"{info.filename!r} inside is encrypted")
                if info.is_dir():
                    continue
                with archive.open(info) as member:
                    self.look(self.unpack(member), depth=depth + 1)

    def tar(self, data: bytes, depth: int) -> None:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for member in archive:
                self.name(member.name)
                if member.issym() or member.islnk():
                    self.name(member.linkname)
                if not member.isfile():
                    continue
                handle = archive.extractfile(member)
                if handle is not None:
                    with handle:
                        self.look(self.unpack(handle), depth=depth + 1)

    def scan(self, data: bytes) -> None:
        """Refuse unpacked content that holds the token."""
        kind = find_known(_as_text(data), self._secrets)
        if kind is not None:
            raise FileRefused(_holds(self._raw, kind))


def _gzip_name(data: bytes) -> str | None:
    """The original file name a gzip header keeps (``FNAME``), if any (RFC 1952)."""
    if len(data) < 10 or not data[3] & 0x08:
        return None
    pos = 10
    if data[3] & 0x04:  # FEXTRA: two length bytes, then that much
        if len(data) < 12:
            return None
        pos += 2 + int.from_bytes(data[10:12], "little")
    end = data.find(b"\0", pos)
    if end < 0:
        return None
    return data[pos:end].decode("latin-1")


def member_parts(path: str) -> list[str]:
    """A path inside an archive, as its parts (``./a/../b`` and ``C:\\x`` alike)."""
    return [p for p in PurePosixPath(path.replace("\\", "/")).parts if p not in ("/", ".", "..")]
