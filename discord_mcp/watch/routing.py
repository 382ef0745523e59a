"""Where each message the watch daemon reads goes (pure: no side effects).

===============================  ===========================================================
where, what                      becomes
===============================  ===========================================================
a bot's message (ours too)       nothing
someone else's ``!command``      a short refusal (E_OWNER_ONLY); the attempt is logged
the owner's ``!command``         the command (:mod:`discord_mcp.watch.control`, the same
                                 dispatcher as the slash commands)
channel, anything else           an inbox item for every agent
run thread, anything else        a job for that thread's agent session
thread with a pending decision   left to the decision (an answer, even in a run thread)
decision thread, answered        an inbox item for that decision's project
other thread under the channel   an inbox item
the owner's, without any text    said once per run, in that channel and the log: Discord
                                 withholds text (the Message Content intent is off)
===============================  ===========================================================

A forwarded message is read from its snapshot (the text it forwards) as a note or a job, never
as a command: a command is only ever the owner's own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.inbox import InboxItem
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import content_withheld, text_of
from discord_mcp.watch.commands import Command, parse_command
from discord_mcp.watch.recovery import INBOX_MAX_PAGES

ENABLE_INTENT = (
    "developer portal > your application > Bot > Privileged Gateway Intents > Message Content "
    "Intent > Save"
)
CONTENT_HIDDEN_TEXT = (
    "I cannot read what you write here: Discord withholds the text of messages from this bot "
    "because its **Message Content intent** is off. Turn it on in the " + ENABLE_INTENT + ", "
    "restart `discord-watch`, then write it again (`discord-mcp doctor` checks it)."
)
"""Said once per run, in the channel or thread where an owner's message came without text."""


@dataclass(frozen=True, slots=True)
class Route:
    """Where one message goes: ``ignore``, ``refuse`` (a stranger's command),
    ``channel_command``, ``thread_command``, ``job``, ``inbox`` (for ``project``), or
    ``content_hidden`` (an owner's message whose text Discord withheld)."""

    kind: str
    command: Command | None = None
    project: str | None = None
    project_key: str | None = None
    """The identity of ``project`` (None: unknown, or a decision written before keys)."""


def destination(
    message: dict[str, Any],
    channel_id: str,
    decisions: list[Decision],
    *,
    channel: str,
    owners: Set[str],
    run_thread: bool,
) -> Route:
    """Where ``message`` (in ``channel_id``) goes, by the table above.

    Args:
        decisions: the decisions of ``channel_id`` when it is a thread, open and done (others
            are not looked at).
        channel: the configured channel.
        owners: the owners' user ids.
        run_thread: ``channel_id`` is a run session's thread.
    """
    author = message.get("author") or {}
    if author.get("bot") or message.get("webhook_id"):
        return Route("ignore")
    if message.get("type", 0) not in (0, 19):
        return Route("ignore")
    command = parse_command(str(message.get("content") or ""))
    if str(author.get("id") or "") not in owners:
        return Route("refuse" if command is not None else "ignore", command)
    said = bool(text_of(message).strip() or message.get("attachments"))
    unseen = Route("content_hidden" if content_withheld(message) else "ignore")
    if channel_id == channel:
        if command is not None:
            return Route("channel_command", command)
        return Route("inbox") if said else unseen
    mine = [d for d in decisions if d.thread_id == channel_id]
    if command is None and any(
        (d.status == "pending" and not d.gave_up_at) or d.handled(str(message["id"])) for d in mine
    ):
        # An answer to a question (a run's agent asks in its own thread too): the decision
        # service judges it; it is not a new job or an inbox note.
        return Route("ignore")
    if run_thread:
        if command is not None:
            return Route("thread_command", command)
        return Route("job") if said else unseen
    if not said:
        return unseen
    if not mine:
        return Route("inbox")
    return Route("inbox", project=mine[-1].project, project_key=mine[-1].project_key)


def author_name(author: dict[str, Any]) -> str:
    return str(author.get("global_name") or author.get("username") or author.get("id") or "?")


def inbox_item(
    message: dict[str, Any],
    project: str | None,
    attachments: Sequence[Mapping[str, Any]] = (),
    *,
    channel: str,
    project_key: str | None = None,
) -> InboxItem:
    """The inbox note a message of the owner's becomes (``channel``: the configured one)."""
    author = message.get("author") or {}
    channel_id = str(message["channel_id"])
    return InboxItem(
        message_id=str(message["id"]),
        channel_id=channel_id,
        thread_id=None if channel_id == channel else channel_id,
        author_id=str(author.get("id") or ""),
        author=author_name(author),
        content=text_of(message),
        timestamp=str(message.get("timestamp") or ""),
        project=project,
        attachments=tuple(dict(a) for a in attachments),  # the owner's files, kept locally
        project_key=project_key,
    )


async def history(rest: RestClient, channel_id: str, after: str) -> list[dict[str, Any]]:
    """Up to :data:`~.recovery.INBOX_MAX_PAGES` pages of a channel's messages after ``after``,
    oldest first."""
    found: list[dict[str, Any]] = []
    for _ in range(INBOX_MAX_PAGES):
        page = await rest.list_messages(channel_id, after=after, limit=100)
        found.extend(dict(m) for m in page)
        if len(page) < 100:
            break
        after = max((str(m["id"]) for m in page), key=int)
    return sorted(found, key=lambda m: int(m["id"]))
