"""Messages and reactions an agent posts: ``send_message``, ``add_reaction``, and the files that
go with a question.

Everything passes the outbound checks first (:mod:`discord_mcp.outbound.guard`): texts are
redacted and files checked before anything reaches Discord. Messages go where the agent says,
else to the session's thread (``DISCORD_THREAD_ID``), else to the main channel; they ping
nobody.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from discord_mcp.chat import said
from discord_mcp.config import Settings
from discord_mcp.errors import BadRequest, DiscordError, MessageError, NotFound, StateError
from discord_mcp.outbound.files import Prepared
from discord_mcp.outbound.guard import Scrubber
from discord_mcp.state.files import off_loop, write_bytes
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)
QUIET: dict[str, Any] = {"parse": []}
_CUSTOM_EMOJI = re.compile(r"^<a?:(?P<name>\w{2,32}):(?P<id>\d{15,21})>$")
UNKNOWN_EMOJI = 10014
UNKNOWN_MESSAGE = 10008


def target(settings: Settings, thread_id: str | None) -> str:
    """Where a message goes: the given thread, the session's thread, or the main channel."""
    return (thread_id or "").strip() or settings.thread_id or settings.channel_id


async def send_message(
    rest: RestClient,
    settings: Settings,
    content: str,
    *,
    thread_id: str | None = None,
    files: Sequence[str] | None = None,
    reply_to: str | None = None,
) -> dict[str, Any]:
    """Post ``content`` (split if long) with ``files`` on its last part; what ``send_message``
    returns."""
    scrub = Scrubber(settings)
    text = scrub.text("content", content.strip())
    prepared = await scrub.files(settings, files)
    if not text and not prepared.uploads:
        raise MessageError("content is empty and no files were given: say something or send a file")
    channel = target(settings, thread_id)
    try:
        sent = await rest.send_text(
            channel,
            text,
            allowed_mentions=QUIET,
            reply_to=(reply_to or "").strip() or None,
            files=prepared.uploads,
        )
    except NotFound as exc:
        raise MessageError(
            f"cannot post in {channel}: no such channel or thread the bot can see "
            f"(Discord error {exc.code}). Use a thread_id from ask_decision or read_history, or "
            "omit it"
        ) from exc
    if prepared.uploads:
        await off_loop(keep_in_run, prepared)
    await off_loop(said.record, settings.chat_mark, "message")
    return scrub.noted(
        {
            "ok": True,
            "channel_id": channel,
            "message_ids": [m["id"] for m in sent],
            "parts": len(sent),
            "files": _files(prepared, sent[-1] if sent else None),
        }
    )


RUN_ARTIFACTS = "DISCORD_MCP_RUN_ARTIFACTS"
"""Set by ``discord-watch`` for a run's server: the run folder's ``artifacts/``."""


def keep_in_run(prepared: Prepared, environ: Mapping[str, str] | None = None) -> None:
    """In a ``discord-watch`` run, a copy of every file sent (as sent: redacted) goes to the run
    folder's ``artifacts/`` (issue 23); a name already there gets a number. Never fails the
    message: a copy that cannot be made is logged."""
    directory = (os.environ if environ is None else environ).get(RUN_ARTIFACTS, "").strip()
    if not directory or not Path(directory).is_dir():
        return
    for upload in prepared.uploads:
        name = Path(upload.filename).name or "file"
        target = Path(directory) / name
        number = 1
        while target.exists():
            number += 1
            target = Path(directory) / f"{Path(name).stem}-{number}{Path(name).suffix}"
        try:
            write_bytes(target, upload.data)
        except StateError as exc:
            log.warning("could not keep %s in the run's artifacts: %s", name, exc)


def _files(prepared: Prepared, last: Any) -> list[dict[str, Any]]:
    """The files as sent: name, size, type, and Discord's attachment id."""
    attached = list((last or {}).get("attachments") or [])
    out = []
    for n, described in enumerate(prepared.described):
        entry = {k: described[k] for k in ("filename", "size", "content_type")}
        if n < len(attached):
            entry["attachment_id"] = attached[n].get("id")
        out.append(entry)
    return out


async def post_question_files(
    rest: RestClient, thread_id: str, prepared: Prepared
) -> dict[str, Any] | None:
    """Post a question's files in its thread, after the card; a warning for the result if it
    failed (the question stands either way)."""
    if not prepared.uploads:
        return None
    names = ", ".join(f"`{d['filename']}`" for d in prepared.described)
    try:
        sent = await rest.create_message(
            thread_id,
            f"\U0001f4ce For the question above: {names}",
            allowed_mentions=QUIET,
            files=prepared.uploads,
        )
    except DiscordError as exc:
        return {
            "files_warning": f"the question was asked, but its files could not be posted: {exc}"
        }
    return {"files": _files(prepared, sent)}


def emoji_for_discord(emoji: str) -> str:
    """A unicode emoji as is; a custom one (``<:name:id>`` or ``name:id``) as ``name:id``."""
    text = emoji.strip()
    custom = _CUSTOM_EMOJI.match(text)
    if custom:
        return f"{custom['name']}:{custom['id']}"
    if not text or len(text) > 64 or any(c.isspace() for c in text):
        raise MessageError(
            f"{emoji[:40]!r} is not an emoji: give one unicode emoji such as \U0001f44d, or "
            "name:id for a custom one"
        )
    return text.strip(":") if re.fullmatch(r":?\w{2,32}:\d{15,21}:?", text) else text


async def add_reaction(
    rest: RestClient,
    settings: Settings,
    message_id: str,
    emoji: str,
    *,
    thread_id: str | None = None,
) -> dict[str, Any]:
    """React to a message as the bot; what ``add_reaction`` returns."""
    channel = target(settings, thread_id)
    wire = emoji_for_discord(emoji)
    message = message_id.strip()
    try:
        await rest.add_reaction(channel, message, wire)
    except BadRequest as exc:
        if exc.code == UNKNOWN_EMOJI:
            raise MessageError(
                f"Discord does not know the emoji {emoji[:40]!r}: use a unicode emoji such as "
                "\U0001f44d, or name:id of a custom emoji of this server"
            ) from exc
        raise
    except NotFound as exc:
        raise MessageError(
            f"no message {message} in {channel} (Discord error {exc.code}): take the id from "
            "read_history, and pass the thread_id it came from"
        ) from exc
    await off_loop(said.record, settings.chat_mark, "reaction")
    return {"ok": True, "channel_id": channel, "message_id": message, "emoji": wire}
