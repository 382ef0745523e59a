"""``/chat add|list|remove``: channels where an agent lives and answers (issue 25; the same as
``discord-watch chat ...``, :mod:`discord_mcp.watch.chat.cli`)."""

from __future__ import annotations

from discord_mcp.errors import RunError
from discord_mcp.setup.channel_kinds import chat_kind_problem
from discord_mcp.state.files import off_loop
from discord_mcp.watch.chat.channels import DEFAULT_HISTORY, ChatChannel
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import cmd, fit


async def add(c: Controls, r: Request) -> Reply:
    channel = _channel(r)
    if channel == c.settings.channel_id:
        raise RunError(
            "E_BAD_ARGUMENTS",
            "the bot's own channel is where you command runs and leave notes: make another "
            "channel a chat channel",
        )
    history = r.get("history")
    if history is not None and not history.isdigit():
        raise RunError("E_BAD_ARGUMENTS", f"history {history!r} is not a number of messages")
    if c.chat is None:
        raise RunError("E_CHAT_NOT_FOUND", "this daemon runs no chat channels")
    try:
        found = await c.rest.get_channel(channel)
    except Exception as exc:  # a channel the bot cannot see answers nothing
        raise RunError(
            "E_BAD_ARGUMENTS", f"the bot cannot see channel {channel} ({exc}): check the id"
        ) from None
    problem = chat_kind_problem(dict(found))
    if problem is not None:
        raise RunError("E_BAD_ARGUMENTS", problem)
    chat = await off_loop(
        c.chat.store.add,
        channel,
        tool=r.get("tool") or "",
        projects=c.projects,
        project=r.get("project"),
        persona=r.get("persona"),
        history=int(history) if history is not None else DEFAULT_HISTORY,
        who=r.get("who") or "owners",
        keep_session=(r.get("keep_session") or "no").lower() == "yes",
        on_failure=(r.get("on_failure") or "notice").lower(),
        now=c.wall(),
    )
    await c.chat.refresh()
    c.chats_changed()
    return Reply(f"<#{chat.channel_id}> is a chat channel now: {describe(c, chat)}.")


async def list_(c: Controls, r: Request) -> Reply:
    chats = await c.chat.refresh() if c.chat is not None else {}
    if not chats:
        return Reply("No chat channels: add one with " + cmd(r, "chat add") + ".")
    lines = [f"**Chat channels** ({len(chats)})"]
    lines += [f"• <#{chat.channel_id}>: {describe(c, chat)}" for chat in chats.values()]
    return Reply(fit(lines))


async def remove(c: Controls, r: Request) -> Reply:
    if c.chat is None:
        raise RunError("E_CHAT_NOT_FOUND", "this daemon runs no chat channels")
    removed = await off_loop(c.chat.store.remove, _channel(r))
    await c.chat.refresh()
    c.chats_changed()
    return Reply(f"<#{removed.channel_id}> is no longer a chat channel (its persona files stay).")


def describe(c: Controls, chat: ChatChannel) -> str:
    where = f"project **{chat.project}**" if chat.project else "its own folder"
    kept = ", keeps its session" if chat.keep_session else ""
    kept += ", silent when it fails" if chat.on_failure == "silent" else ""
    return (
        f"`{chat.tool}` in {where}, answers {chat.who_text()}, reads {chat.history} messages"
        f"{kept}; persona `{chat.persona_dir(c.settings.home)}`"
    )


def _channel(r: Request) -> str:
    given = (r.get("channel") or r.channel_id).strip()
    return given.removeprefix("<#").removesuffix(">")
