"""Request bodies with files: ``multipart/form-data`` as Discord reads it.

A message (or interaction response, or webhook message) with files is sent as
``multipart/form-data`` instead of JSON: the JSON body goes in a ``payload_json`` part (or,
without one, each field is its own part), and each file in a part named ``files[n]`` with a
``filename``; the ``n`` is the placeholder id an entry of the body's ``attachments`` refers to.

Discord's limits, as the docs state them (reference "Uploading Files", message "Create Message"):

- each file at most :data:`FILE_SIZE_MAX` (10 MiB, the default for all users; boosts and Nitro
  raise it, bots in an unboosted guild do not get more) and the whole request at most
  :data:`REQUEST_SIZE_MAX` (25 MiB): over either, HTTP 413 with 40005 "Request entity too
  large";
- at most :data:`FILES_MAX` (10) files in a message: 30015 "Maximum number of attachments in a
  message reached (10)";
- ``payload_json`` that is not JSON: 50035 with the error under ``payload_json`` (the field
  error code is this emulator's choice; Discord's is not documented).

The parser splits the body on its boundary itself, so a file's bytes come back exactly as sent.
"""

from __future__ import annotations

import email.policy
import re
from dataclasses import dataclass
from email.message import Message
from email.parser import HeaderParser
from typing import Any

from discord_mcp.emulator import errors, json_body

FILE_SIZE_MAX = 10 * 1024 * 1024
REQUEST_SIZE_MAX = 25 * 1024 * 1024
FILES_MAX = 10

_FILE_FIELD = re.compile(r"files\[(\d{1,20})\]\Z")


@dataclass(frozen=True)
class Upload:
    """One ``files[n]`` part: ``index`` is the ``n``, ``content_type`` what the part declared."""

    index: str
    filename: str
    content_type: str | None
    data: bytes


@dataclass(frozen=True)
class Form:
    """A parsed multipart body: the JSON body it carries and its files, in request order."""

    body: Any | None
    uploads: list[Upload]


def too_large() -> errors.DiscordError:
    return errors.DiscordError(413, 40005, "Request entity too large")


def too_many_files() -> errors.DiscordError:
    return errors.DiscordError(
        400, 30015, f"Maximum number of attachments in a message reached ({FILES_MAX})"
    )


def is_multipart(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "multipart/form-data"


def parse_form(content_type: str, body: bytes) -> Form:
    """Read a ``multipart/form-data`` body; raises Discord's errors for what it refuses."""
    if len(body) > REQUEST_SIZE_MAX:
        raise too_large()
    boundary = _param(_headers(f"Content-Type: {content_type}"), "Content-Type", "boundary")
    if not boundary:
        raise errors.invalid_form(
            (), "CONTENT_TYPE_INVALID", "multipart/form-data needs a boundary parameter."
        )
    fields: dict[str, str] = {}
    uploads: list[Upload] = []
    for text, data in _parts(body, boundary.encode("latin-1")):
        headers = _headers(text)
        name = _param(headers, "Content-Disposition", "name")
        if name is None:
            continue
        filename = _param(headers, "Content-Disposition", "filename")
        match = _FILE_FIELD.match(name)
        if match is not None and filename is not None:
            if len(data) > FILE_SIZE_MAX:
                raise too_large()
            declared = headers["Content-Type"]
            kind = None if declared is None else str(declared)
            uploads.append(Upload(match.group(1), filename, kind, data))
        elif filename is None:
            fields[name] = data.decode("utf-8", "replace")
    if len(uploads) > FILES_MAX:
        raise too_many_files()
    if len({u.index for u in uploads}) != len(uploads):
        raise errors.invalid_form(
            ("files",), "BASE_TYPE_INVALID", "Each files[n] part must have its own n."
        )
    return Form(_body(fields), uploads)


def _body(fields: dict[str, str]) -> Any | None:
    if "payload_json" in fields:
        try:
            return json_body.loads(fields["payload_json"])
        except ValueError:
            raise errors.invalid_form(
                ("payload_json",), "BASE_TYPE_INVALID_JSON", "Must be valid JSON."
            ) from None
    if not fields:
        return None
    # Without payload_json every field is its own part: text stays text, the rest is JSON.
    body: dict[str, Any] = {}
    for name, value in fields.items():
        if name in ("content", "nonce", "username"):
            body[name] = value
            continue
        try:
            body[name] = json_body.loads(value)
        except ValueError:
            body[name] = value
    return body


def _parts(body: bytes, boundary: bytes) -> list[tuple[str, bytes]]:
    """Each part's header block (as text) and its exact bytes."""
    delimiter = b"\r\n--" + boundary
    chunks = (b"\r\n" + body).split(delimiter)
    if len(chunks) < 2:
        raise errors.invalid_form((), "CONTENT_TYPE_INVALID", "The multipart body is malformed.")
    parts: list[tuple[str, bytes]] = []
    for chunk in chunks[1:]:
        if chunk.startswith(b"--"):
            break  # the closing delimiter; what follows is the epilogue
        head, separator, data = chunk.partition(b"\r\n\r\n")
        if not separator:
            raise errors.invalid_form(
                (), "CONTENT_TYPE_INVALID", "The multipart body is malformed."
            )
        # The rest of the delimiter line (transport padding) ends at the first CRLF.
        headers = head.split(b"\r\n", 1)[1] if b"\r\n" in head else b""
        parts.append((headers.decode("utf-8", "replace"), data))
    return parts


def _headers(text: str) -> Message:
    """A header block, parsed as HTTP headers."""
    return HeaderParser(policy=email.policy.HTTP).parsestr(text + "\r\n\r\n")


def _param(headers: Message, header: str, name: str) -> str | None:
    """A parameter of a header (RFC 2231 and quoted forms decoded), or None."""
    field = headers[header]
    if field is None:
        return None
    params = getattr(field, "params", {})
    value = params.get(name)
    return None if value is None else str(value)
