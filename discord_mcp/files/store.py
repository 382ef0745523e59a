"""Files the owner sent: local copies in the state directory, for agents to open.

Attachments on an owner's message (a note in the channel, a job in a run thread, a reply to a
question) are downloaded once, through :func:`discord_mcp.transport.cdn.download`, into::

    <home>/files/<message_id>/<attachment_id>-<safe name>     the bytes (0600, never executable)
    <home>/files/<message_id>/<attachment_id>.json            what it is (version 1)

The safe name keeps letters, digits, ``.``, ``-`` and ``_`` of the file's own name (no
directories, no leading dot, at most 100 characters). The record holds the original name, the
content type (the attachment's, else the CDN's, else guessed from the name), the size, and
whether it is a voice message (Discord's IS_VOICE_MESSAGE flag: an audio file, kept as it came,
with its ``duration_secs``). A second call for the same attachment finds the record and
downloads nothing. Files larger than :data:`MAX_DOWNLOAD_BYTES`, and failed downloads, are
listed without a ``path`` and with an ``error`` saying why.

An entry (what inbox items, decision answers, ``read_history`` and run prompts carry):
``attachment_id``, ``filename``, ``content_type``, ``size``, ``voice_message``, ``path`` (or
None), and ``error`` only when there is no path.
"""

from __future__ import annotations

import logging
import mimetypes
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from discord_mcp.errors import DownloadFailed, StateCorrupt, StateError
from discord_mcp.state.files import off_loop, read_json, write_bytes, write_json
from discord_mcp.transport.cdn import Downloaded, download

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAX_DOWNLOAD_BYTES = 25 * 1024 * 1024
"""The largest file kept (an owner with Nitro may send more; such files stay in Discord)."""
VOICE_MESSAGE = 1 << 13
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_ID = re.compile(r"^[0-9]{1,25}$")

Download = Callable[..., Awaitable[Downloaded]]


def safe_name(filename: str) -> str:
    """A file name that is safe on disk: no directories, no leading dot, a short ASCII name."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1].lstrip(".")
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = base, ""
    stem = _UNSAFE.sub("_", stem).strip("._-")[:80] or "file"
    ext = _UNSAFE.sub("", ext)[:16]
    return f"{stem}.{ext}" if ext else stem


def is_voice_message(message: Mapping[str, Any]) -> bool:
    return bool(int(message.get("flags") or 0) & VOICE_MESSAGE)


class OwnerFiles:
    """``<home>/files/``: the owner's attachments, downloaded once each.

    Args:
        home: the state directory.
        max_bytes: the largest file downloaded.
        fetch: the download function (the CDN's; tests may inject another).
        root: keep the files there instead of ``<home>/files`` (a chat's strangers' files,
            :mod:`discord_mcp.watch.chat.attachments`).
    """

    def __init__(
        self,
        home: Path,
        *,
        max_bytes: int = MAX_DOWNLOAD_BYTES,
        fetch: Download = download,
        root: Path | None = None,
    ) -> None:
        self.root = root if root is not None else home / "files"
        self._max = max_bytes
        self._fetch = fetch

    async def keep(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The message's attachments as entries, each downloaded if it was not yet."""
        entries = []
        for attachment in message.get("attachments") or []:
            if isinstance(attachment, Mapping):
                entries.append(await self._keep_one(message, attachment))
        return entries

    @staticmethod
    def listed(message: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The message's attachments as entries without paths (files not kept)."""
        return [
            _entry(a, message, None)
            for a in message.get("attachments") or []
            if isinstance(a, Mapping)
        ]

    async def _keep_one(
        self, message: Mapping[str, Any], attachment: Mapping[str, Any]
    ) -> dict[str, Any]:
        message_id, attachment_id = str(message.get("id")), str(attachment.get("id"))
        if not (_ID.match(message_id) and _ID.match(attachment_id)):
            return _entry(attachment, message, None, "not a Discord attachment")
        recorded = await off_loop(self.recorded, message_id, attachment)
        if recorded is not None:
            return recorded
        size = attachment.get("size")
        if isinstance(size, int) and size > self._max:
            return _entry(attachment, message, None, _too_big(self._max))
        try:
            got = await self._fetch(str(attachment.get("url") or ""), max_bytes=self._max)
        except DownloadFailed as exc:
            log.warning("attachment %s of message %s: %s", attachment_id, message_id, exc)
            return _entry(attachment, message, None, str(exc))
        entry = _entry(attachment, message, None)
        entry["size"] = len(got.data)
        entry["content_type"] = (
            entry["content_type"]
            or _bare(got.content_type)
            or mimetypes.guess_type(entry["filename"])[0]
        )
        folder = self.root / message_id
        path = folder / f"{attachment_id}-{safe_name(entry['filename'])}"
        try:
            await off_loop(self._write, folder, attachment_id, path, got.data, entry)
        except StateError as exc:
            log.warning("attachment %s could not be kept: %s", attachment_id, exc)
            return _entry(attachment, message, None, str(exc))
        return {**entry, "path": str(path)}

    def _write(
        self, folder: Path, attachment_id: str, path: Path, data: bytes, entry: dict[str, Any]
    ) -> None:
        write_bytes(path, data)
        record = {**entry, "path": str(path), "version": FORMAT_VERSION}
        write_json(folder / f"{attachment_id}.json", record)

    def recorded(self, message_id: str, attachment: Mapping[str, Any]) -> dict[str, Any] | None:
        """The entry of an attachment already kept (with its path), or None (blocking)."""
        record_path = self.root / message_id / f"{attachment.get('id')}.json"
        try:
            record = read_json(record_path, max_version=FORMAT_VERSION)
        except StateCorrupt:
            return None
        if record is None or not Path(str(record.get("path"))).is_file():
            return None
        record.pop("version", None)
        return record


def _entry(
    attachment: Mapping[str, Any],
    message: Mapping[str, Any],
    path: str | None,
    error: str | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "attachment_id": str(attachment.get("id") or ""),
        "filename": str(attachment.get("filename") or "file"),
        "content_type": _bare(attachment.get("content_type")),
        "size": attachment.get("size") if isinstance(attachment.get("size"), int) else None,
        "voice_message": is_voice_message(message),
        "path": path,
    }
    if entry["voice_message"] and isinstance(attachment.get("duration_secs"), int | float):
        entry["duration_secs"] = attachment["duration_secs"]
    if error is not None:
        entry["error"] = error
    return entry


def _bare(content_type: Any) -> str | None:
    """``text/plain`` from ``text/plain; charset=utf-8``."""
    if not isinstance(content_type, str) or not content_type.strip():
        return None
    return content_type.split(";", 1)[0].strip().lower()


def _too_big(max_bytes: int) -> str:
    return f"larger than {max_bytes / 1024 / 1024:.0f} MiB, so it was not downloaded"
