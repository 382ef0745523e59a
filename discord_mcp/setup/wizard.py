"""``discord-mcp setup``: the Discord side, step by step, ending in a private ``.env``.

It prints what to do in the developer portal, checks the token with Discord (never echoing it),
prints the invite URL with the exact permissions, asks for the channel and the owner ids, and
writes ``.env`` with mode 0600 (keeping any other lines already in it).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from discord_mcp.config import DEFAULT_API_BASE, Secret, is_snowflake, parse_token
from discord_mcp.errors import ConfigError, DiscordError, NotFound, Unauthorized
from discord_mcp.setup.channel_kinds import POSTS_ONLY, posts_only_reason
from discord_mcp.setup.permissions import NEEDED, invite_url
from discord_mcp.transport.rest import RestClient

PORTAL_STEPS = """\
Discord side, once (https://discord.com/developers/applications):
  1. New Application: any name (e.g. "agents").
  2. Bot > Reset Token > copy the token (you will paste it here; it is not shown).
  3. Bot > Privileged Gateway Intents > turn on "Message Content Intent" > Save.
  4. In Discord: User Settings > Advanced > Developer Mode on (to copy ids with right-click).
"""

Ask = Callable[[str], str]
ChannelKind = Callable[[Secret, str, str], Awaitable[int | None]]
"""(token, API base, channel id) -> the channel's type, or None when the bot cannot see it."""


@dataclass(frozen=True, slots=True)
class Answers:
    token: Secret
    channel_id: str
    owner_ids: tuple[str, ...]


def _ask_id(ask: Ask, out: TextIO, prompt: str, *, many: bool = False) -> tuple[str, ...]:
    while True:
        raw = ask(prompt).strip()
        ids = tuple(p.strip() for p in raw.split(",") if p.strip()) if many else (raw,)
        if ids and all(is_snowflake(i) for i in ids):
            return ids
        out.write("  That is not a Discord id (17-20 digits). Right-click > Copy ID.\n")


EMULATOR_STEPS = """\
Setting up against the emulator at {api_base} (a local Discord: no developer portal, no
invite). Its first lines printed the bot token, the channel id and the owner's id.
"""


def is_local(api_base: str) -> bool:
    """Whether ``api_base`` is this machine (the emulator), not Discord."""
    host = urlsplit(api_base).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


async def run_setup(
    *,
    ask: Ask,
    ask_secret: Ask,
    out: TextIO,
    env_file: Path,
    api_base: str = DEFAULT_API_BASE,
    check: Callable[[Secret, str], Awaitable[str]] | None = None,
    channel_kind: ChannelKind | None = None,
    program: str = "discord-mcp",
    default_env: Path | None = None,
) -> Answers:
    """Walk through setup and write ``env_file``; returns what was entered.

    ``check`` verifies a token and returns the application id (default: ask Discord);
    ``channel_kind`` says a channel's type, or None when the bot cannot see it (default: ask
    Discord): a forum or media channel is refused, since questions, notifications and notes
    need a channel that holds messages.
    ``program`` is how this person runs discord-mcp (the "Next:" lines are run as printed);
    ``default_env`` is where the programs look without ``--env-file``.
    """
    local = is_local(api_base)
    out.write(EMULATOR_STEPS.format(api_base=api_base) if local else PORTAL_STEPS)
    verify = check or _verify_token
    while True:
        try:
            token = parse_token(ask_secret("Bot token (hidden): "))
        except ConfigError as exc:
            out.write(f"  {exc.problem}. {exc.fix}.\n")
            continue
        try:
            application_id = await verify(token, api_base)
        except Unauthorized:
            out.write("  Discord rejected that token: copy it again (Bot > Reset Token).\n")
            continue
        except DiscordError as exc:
            out.write(f"  Could not reach Discord to check the token ({exc}); saving it anyway.\n")
            application_id = ""
        break
    out.write("  Token accepted.\n")
    if application_id and not local:
        out.write(
            "\n  5. Invite the bot to your server with exactly the permissions it needs ("
            + ", ".join(NEEDED)
            + "):\n     "
            + invite_url(application_id)
            + "\n\n"
        )
    kind_of = channel_kind or _channel_kind
    where = "the emulator's channel id" if local else "right-click channel > Copy ID"
    while True:
        (channel_id,) = _ask_id(ask, out, f"Channel id for questions ({where}): ")
        kind = await kind_of(token, api_base, channel_id) if application_id else None
        if kind in POSTS_ONLY:
            out.write(
                f"  That channel will not do: {posts_only_reason(POSTS_ONLY[kind])}. Pick a "
                "text channel (or an announcement channel).\n"
            )
            continue
        if kind is None and application_id and not local:
            out.write(
                "  (The bot cannot see that channel yet: invite it with the URL above; "
                "`discord-mcp doctor` checks it afterwards.)\n"
            )
        break
    who = "the emulator's owner id" if local else "right-click your name > Copy User ID"
    owners = _ask_id(ask, out, f"Your user id(s), comma-separated ({who}): ", many=True)
    answers = Answers(token, channel_id, owners)
    write_env_file(
        env_file,
        {
            "DISCORD_BOT_TOKEN": token.reveal(),
            "DISCORD_CHANNEL_ID": channel_id,
            "DISCORD_OWNER_IDS": ",".join(owners),
            # Discord itself: no line (an old emulator address is removed).
            "DISCORD_API_BASE": api_base if api_base != DEFAULT_API_BASE else None,
        },
    )
    named = "" if default_env is not None and env_file == default_env else f" --env-file {env_file}"
    out.write(
        f"\nWrote {env_file} (mode 0600; the token is only there).\n"
        "Next:\n"
        f"  {program} install claude{named}   (or codex, gemini)\n"
        f"  {program} doctor{named}\n"
    )
    return answers


async def _verify_token(token: Secret, api_base: str) -> str:
    async with RestClient(token, api_base=api_base) as rest:
        me = await rest.get_current_user()
        try:
            application = await rest.get_current_application()
            return str(application.get("id") or me["id"])
        except NotFound:
            return me["id"]


async def _channel_kind(token: Secret, api_base: str, channel_id: str) -> int | None:
    try:
        async with RestClient(token, api_base=api_base) as rest:
            channel = await rest.get_channel(channel_id)
    except DiscordError:
        return None  # not invited yet, or no access: doctor checks it later
    kind = channel.get("type")
    return kind if isinstance(kind, int) else None


def write_env_file(path: Path, values: Mapping[str, str | None]) -> None:
    """Set ``values`` in a ``.env`` (other lines kept; a None value removes its line), private to
    the user, atomically; its directory is made (private) when missing."""
    lines: list[str] = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            key = line.split("=", 1)[0].strip().removeprefix("export ").strip()
            if key not in values:
                lines.append(line)
    lines.extend(f"{key}={value}" for key, value in values.items() if value is not None)
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True)
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
