"""Attachments: files on messages, their metadata, and the URLs that serve their bytes.

A message create or edit carries files as ``files[n]`` parts (``uploads.py``) and describes
them in its body's ``attachments``: entries ``{"id": n, "filename"?, "description"?,
"title"?, "duration_secs"?, "waveform"?, "is_spoiler"?}``, where ``id`` is the ``n`` of a new
file or the id of an attachment the message already has. Discord's rules, as applied here:

- On create every uploaded file is attached; an entry names a file's metadata.
- On edit without ``attachments`` the new files are appended; with ``attachments`` the message
  keeps exactly the listed ones (existing ones by id, with ``description`` and ``is_spoiler``
  updated; new ones by their ``n``) and drops the rest.
- An entry whose id is neither is 50035 (field code ``ATTACHMENT_NOT_FOUND``, this emulator's
  choice); more than 10 attachments is 30015.
- A voice message (flag IS_VOICE_MESSAGE, ``1 << 13``) has exactly one ``audio/*`` file and
  nothing else (50160), with ``duration_secs`` (50192 without a valid one) and ``waveform``.

The attachment object's ``url`` and ``proxy_url`` point at the emulator itself, shaped like
Discord's CDN (``/attachments/{channel_id}/{attachment_id}/{filename}`` and the same under
``/media``), signed the way Discord signs them (``ex`` expiry and ``is`` issue time in hex,
``hm`` a signature) so a client must use the URL it was given; ``media.py`` serves them.
``content_type`` is the part's declared type, or guessed from the file name when the client
declared none or ``application/octet-stream`` (Discord detects it), with ``; charset=utf-8``
for UTF-8 text as Discord adds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from discord_mcp.emulator import errors
from discord_mcp.emulator.errors import FormErrors
from discord_mcp.emulator.models import Attachment
from discord_mcp.emulator.uploads import FILES_MAX, Upload, too_many_files
from discord_mcp.emulator.validation import (
    Path,
    array,
    boolean,
    is_snowflake,
    json_object,
    required_error,
    string,
)

ATTACHMENT_SPOILER = 1 << 3
URL_LIFETIME_SECONDS = 24 * 3600
_OCTET_STREAM = "application/octet-stream"
# Python's built-in table (not the machine's mime.types, so guesses are the same everywhere)
# and the kinds of file an agent and its owner trade that it lacks.
_TYPES = mimetypes.MimeTypes()
for _extension, _kind in (
    (".log", "text/plain"),
    (".md", "text/markdown"),
    (".diff", "text/x-diff"),
    (".patch", "text/x-diff"),
    (".ogg", "audio/ogg"),
    (".oga", "audio/ogg"),
    (".m4a", "audio/mp4"),
    (".webp", "image/webp"),
):
    _TYPES.add_type(_kind, _extension)


@dataclass(frozen=True)
class AttachmentRequest:
    """One entry of a request body's ``attachments``; None means "not given"."""

    id: str
    filename: str | None = None
    description: str | None = None
    title: str | None = None
    duration_secs: float | None = None
    waveform: str | None = None
    is_spoiler: bool | None = None


def parse_requests(errors_: FormErrors, value: Any) -> list[AttachmentRequest]:
    """A body's ``attachments`` list, checked field by field into ``errors_``."""
    items = array(errors_, ("attachments",), value)
    if items is None:
        return []
    result: list[AttachmentRequest] = []
    for index, item in enumerate(items):
        path: Path = ("attachments", index)
        entry = json_object(errors_, path, item)
        if entry is None:
            continue
        raw_id = entry.get("id")
        if raw_id is None:
            required_error(errors_, (*path, "id"))
            continue
        if not is_snowflake(raw_id):
            errors_.add((*path, "id"), "NUMBER_TYPE_COERCE", f'Value "{raw_id}" is not snowflake.')
            continue
        texts: dict[str, str | None] = {}
        for key, low, high in (
            ("filename", 1, 1024),
            ("description", 0, 1024),
            ("title", 0, 1024),
            ("waveform", 0, 400),
        ):
            raw = entry.get(key)
            texts[key] = (
                None
                if raw is None
                else string(errors_, (*path, key), raw, min_length=low, max_length=high)
            )
        duration = entry.get("duration_secs")
        if duration is not None and (
            isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0
        ):
            errors_.add(
                (*path, "duration_secs"), "NUMBER_TYPE_COERCE", f'Value "{duration}" is not float.'
            )
            duration = None
        spoiler = entry.get("is_spoiler")
        if spoiler is not None:
            spoiler = boolean(errors_, (*path, "is_spoiler"), spoiler)
        result.append(
            AttachmentRequest(
                id=str(raw_id),
                filename=texts["filename"],
                description=texts["description"],
                title=texts["title"],
                duration_secs=None if duration is None else float(duration),
                waveform=texts["waveform"],
                is_spoiler=spoiler,
            )
        )
    return result


def assemble(
    new_id: Callable[[], str],
    channel_id: str,
    uploads: list[Upload],
    requests: list[AttachmentRequest] | None,
    existing: list[Attachment] | None = None,
) -> list[Attachment]:
    """The attachments a create (``existing`` None) or an edit leaves on the message."""
    by_index = {upload.index: upload for upload in uploads}
    kept = {attachment.id: attachment for attachment in existing or []}
    used: set[str] = set()
    result: list[Attachment] = []
    problems = FormErrors()
    for position, request in enumerate(requests or []):
        if request.id in by_index and request.id not in used:
            used.add(request.id)
            result.append(_new(new_id(), channel_id, by_index[request.id], request))
        elif request.id in kept:
            # A copy: the message keeps its attachments as they were if the edit fails.
            result.append(_updated(dataclasses.replace(kept.pop(request.id)), request))
        else:
            problems.add(
                ("attachments", position, "id"),
                "ATTACHMENT_NOT_FOUND",
                f"No files[{request.id}] and no attachment {request.id} on this message.",
            )
    problems.raise_if_any()
    if requests is None and existing is not None:
        result = list(existing)
    if requests is None or existing is None:
        # Files a create does not describe are attached anyway; an edit without a list appends.
        result += [_new(new_id(), channel_id, u, None) for u in uploads if u.index not in used]
    if len(result) > FILES_MAX:
        raise too_many_files()
    return result


def _new(
    attachment_id: str, channel_id: str, upload: Upload, request: AttachmentRequest | None
) -> Attachment:
    filename = clean_filename((request and request.filename) or upload.filename)
    attachment = Attachment(
        id=attachment_id,
        channel_id=channel_id,
        filename=filename,
        data=upload.data,
        content_type=content_type(filename, upload.content_type, upload.data),
    )
    return _updated(attachment, request) if request is not None else attachment


def _updated(attachment: Attachment, request: AttachmentRequest) -> Attachment:
    if request.description is not None:
        attachment.description = request.description
    if request.title is not None:
        attachment.title = request.title
    if request.duration_secs is not None:
        attachment.duration_secs = request.duration_secs
    if request.waveform is not None:
        attachment.waveform = request.waveform
    if request.is_spoiler is not None:
        if request.is_spoiler:
            attachment.flags |= ATTACHMENT_SPOILER
        else:
            attachment.flags &= ~ATTACHMENT_SPOILER
    return attachment


def clean_filename(name: str) -> str:
    """The name Discord keeps: no directories, whitespace as underscores."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "_".join(base.split())
    return cleaned or "unknown"


def content_type(filename: str, declared: str | None, data: bytes) -> str | None:
    """The attachment's media type: as declared, else guessed from the name (or None)."""
    kind = (declared or "").split(";", 1)[0].strip().lower()
    if not kind or kind == _OCTET_STREAM:
        kind = _TYPES.guess_type(filename, strict=False)[0] or ""
    if not kind:
        return None
    if kind.startswith("text/") and _is_utf8(data):
        return f"{kind}; charset=utf-8"
    return kind


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_voice_message(attachments: list[Attachment], has_other_content: bool) -> None:
    """A voice message: one audio file with a duration and nothing else."""
    audio = len(attachments) == 1 and (attachments[0].content_type or "").startswith("audio/")
    if not audio or has_other_content:
        raise errors.DiscordError(400, 50160, "Voice messages must have a single audio attachment.")
    voice = attachments[0]
    if voice.duration_secs is None or voice.duration_secs <= 0:
        raise errors.DiscordError(400, 50192, "The provided file does not have a valid duration.")
    if voice.waveform is None:
        raise errors.invalid_form(
            ("attachments", 0, "waveform"), "BASE_TYPE_REQUIRED", "This field is required"
        )


# -- URLs -----------------------------------------------------------------------------------


def path_of(attachment: Attachment) -> str:
    """The CDN path of an attachment (``/attachments/{channel_id}/{id}/{filename}``)."""
    return f"/attachments/{attachment.channel_id}/{attachment.id}/{quote(attachment.filename)}"


def signature(secret: bytes, path: str, expires: str, issued: str) -> str:
    message = f"{path}|{expires}|{issued}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def signed_query(secret: bytes, path: str, now: float) -> str:
    issued = f"{int(now):x}"
    expires = f"{int(now) + URL_LIFETIME_SECONDS:x}"
    return f"ex={expires}&is={issued}&hm={signature(secret, path, expires, issued)}&"


def attachment_json(attachment: Attachment, base: str, secret: bytes, now: float) -> dict[str, Any]:
    """Discord's attachment object, with URLs to ``base`` (the emulator) valid for a day."""
    path = path_of(attachment)
    query = signed_query(secret, path, now)
    data: dict[str, Any] = {
        "id": attachment.id,
        "filename": attachment.filename,
        "size": attachment.size,
        "url": f"{base}{path}?{query}",
        "proxy_url": f"{base}/media{path}?{query}",
    }
    if attachment.content_type is not None:
        data["content_type"] = attachment.content_type
    for key in ("description", "title", "duration_secs", "waveform"):
        value = getattr(attachment, key)
        if value is not None:
            data[key] = value
    if attachment.flags:
        data["flags"] = attachment.flags
    if attachment.ephemeral:
        data["ephemeral"] = True
    return data
