"""Files a person posts through the control API (``POST /_emulator/channels/{id}/messages``).

The message body may carry ``"attachments": [{"filename", "data_base64", "content_type"?,
"description"?, "duration_secs"?, "waveform"?, "is_spoiler"?}]`` (up to 10, each at most 10
MiB, as Discord's client allows a person without Nitro) and ``"voice_message": true``, which
sets the IS_VOICE_MESSAGE flag (``1 << 13``): then the message is exactly one ``audio/*``
file with ``duration_secs`` and no content; ``waveform`` (base64, at most 400 characters)
defaults to a flat line. The files become ``files[n]`` uploads and the entries the body's
``attachments``, so the message goes through the same checks as one the bot sends.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from discord_mcp.emulator.models import FLAG_IS_VOICE_MESSAGE
from discord_mcp.emulator.uploads import FILE_SIZE_MAX, FILES_MAX, Upload

ATTACHMENT_FIELDS = frozenset(
    {
        "filename",
        "data_base64",
        "content_type",
        "description",
        "duration_secs",
        "waveform",
        "is_spoiler",
    }
)
FLAT_WAVEFORM = base64.b64encode(bytes([128] * 32)).decode()


def with_files(data: dict[str, Any], body: dict[str, Any]) -> list[Upload]:
    """Add the control request's files to the message ``body``; returns the uploads.

    Raises ``ValueError`` with a sentence for the control API's 400.
    """
    files = data.get("attachments", [])
    voice = data.get("voice_message", False)
    if not isinstance(voice, bool):
        raise ValueError("'voice_message' must be true or false")
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise ValueError("'attachments' must be a list of objects")
    if len(files) > FILES_MAX:
        raise ValueError(f"Discord takes at most {FILES_MAX} files in a message")
    uploads: list[Upload] = []
    entries: list[dict[str, Any]] = []
    for index, item in enumerate(files):
        unknown = sorted(set(item) - ATTACHMENT_FIELDS)
        if unknown:
            raise ValueError(
                f"unknown attachment field(s) {unknown}; allowed: {sorted(ATTACHMENT_FIELDS)}"
            )
        filename, encoded = item.get("filename"), item.get("data_base64")
        if not isinstance(filename, str) or not filename:
            raise ValueError("each attachment needs a 'filename'")
        if not isinstance(encoded, str):
            raise ValueError("each attachment needs its bytes as 'data_base64'")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"the 'data_base64' of {filename!r} is not base64") from None
        if len(raw) > FILE_SIZE_MAX:
            raise ValueError(f"{filename!r} is over Discord's 10 MiB limit for a file")
        declared = item.get("content_type")
        if declared is not None and not isinstance(declared, str):
            raise ValueError("'content_type' must be a string")
        uploads.append(Upload(str(index), filename, declared, raw))
        entry = {"id": index, "filename": filename}
        for key in ("description", "duration_secs", "waveform", "is_spoiler"):
            if item.get(key) is not None:
                entry[key] = item[key]
        if voice:
            entry.setdefault("waveform", FLAT_WAVEFORM)
        entries.append(entry)
    if entries:
        body["attachments"] = entries
    if voice:
        body["flags"] = FLAG_IS_VOICE_MESSAGE
    return uploads
