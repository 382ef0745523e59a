"""``discord-watch chat ...`` and ``discord-watch schedule ...`` (issue 25): the same as ``/chat``
and ``/schedule`` in Discord, from a shell. A running daemon picks the changes up by itself
(it reads the files again at its next look: every message, and at least every 30 seconds).

::

    discord-watch chat add CHANNEL_ID --tool claude|codex|gemini|<acp agent> [--project NAME]
                           [--persona DIR] [--history 10] [--who owners|everyone|ROLE_ID,...]
                           [--keep-session] [--on-failure notice|silent]
    discord-watch chat list
    discord-watch chat remove CHANNEL_ID
    discord-watch schedule add WHEN [PROMPT] (--project NAME | --session THREAD_ID |
                                              --chat CHANNEL_ID)
    discord-watch schedule list
    discord-watch schedule remove SCHEDULE_ID

Next run times are shown in this machine's time zone (and a cron schedule's in its own zone).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
import time
from typing import Any

from discord_mcp.watch.chat.channels import DEFAULT_HISTORY


def add_chat_commands(sub: Any) -> None:
    chat = sub.add_parser("chat", help="channels where an agent lives and answers")
    actions = chat.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="make a channel a chat channel")
    add.add_argument("channel_id", metavar="CHANNEL_ID")
    add.add_argument("--tool", required=True, help="claude, codex, gemini or an ACP agent")
    add.add_argument("--project", help="work in this project (default: the chat's own folder)")
    add.add_argument(
        "--persona", metavar="DIR", help="persona files (default: <state>/chat/<channel id>/)"
    )
    add.add_argument(
        "--history",
        type=int,
        default=DEFAULT_HISTORY,
        help=f"recent messages each turn reads (default {DEFAULT_HISTORY})",
    )
    add.add_argument(
        "--who",
        default="owners",
        help="who it answers: owners (default), everyone, or role ids separated by commas "
        "(anyone but the owners talks to a restricted agent: only the chat tools)",
    )
    add.add_argument(
        "--keep-session",
        action="store_true",
        help="keep the agent's session from one turn to the next (default: each turn is new)",
    )
    add.add_argument(
        "--on-failure",
        choices=("notice", "silent"),
        default="notice",
        help="when a turn fails: say so in one short line (notice, the default) or say "
        "nothing (silent; the daemon's log still has it)",
    )
    actions.add_parser("list", help="list chat channels")
    remove = actions.add_parser("remove", help="stop answering in a chat channel")
    remove.add_argument("channel_id", metavar="CHANNEL_ID")

    schedule = sub.add_parser("schedule", help="prompts that run on a schedule, and heartbeats")
    acts = schedule.add_subparsers(dest="action", metavar="ACTION", required=True)
    sadd = acts.add_parser(
        "add",
        help='add a schedule: every 30m, daily 09:00 (UTC), or cron:"0,30 * * * *" tz:Asia/Tokyo',
    )
    sadd.add_argument("when", metavar="WHEN")
    sadd.add_argument("prompt", nargs="?", default="", metavar="PROMPT")
    where = sadd.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", help="run in a new thread of this project")
    where.add_argument("--session", metavar="THREAD_ID", help="run in this run thread")
    where.add_argument("--chat", metavar="CHANNEL_ID", help="a chat channel's heartbeat")
    sadd.add_argument("--tz", help="the time zone of a cron expression (instead of tz:ZONE)")
    acts.add_parser("list", help="list schedules")
    sremove = acts.add_parser("remove", help="remove a schedule")
    sremove.add_argument("schedule_id", metavar="SCHEDULE_ID")


def chat_main(args: argparse.Namespace) -> int:
    from discord_mcp.config import state_home, watch_roots
    from discord_mcp.errors import RunError
    from discord_mcp.runs.projects import ProjectRegistry
    from discord_mcp.watch.chat.channels import ChatStore

    home = state_home()
    store = ChatStore(home)
    if args.action == "list":
        chats = store.list()
        if not chats:
            sys.stdout.write("no chat channels yet: discord-watch chat add CHANNEL_ID --tool ...\n")
        for c in chats:
            sys.stdout.write(
                f"{c.channel_id}\ttool={c.tool}\tproject={c.project or '(its own folder)'}"
                f"\twho={c.who_text()}\thistory={c.history}"
                + ("\tkeep-session" if c.keep_session else "")
                + ("\ton-failure=silent" if c.on_failure == "silent" else "")
                + f"\tpersona={c.persona_dir(home)}\n"
            )
        return 0
    if args.action == "remove":
        removed = store.remove(args.channel_id)
        sys.stdout.write(f"removed chat channel {removed.channel_id} (its persona files stay)\n")
        return 0
    main_channel = _main_channel()
    if main_channel is not None and args.channel_id.strip() == main_channel:
        raise RunError(
            "E_BAD_ARGUMENTS",
            "that is the bot's own channel (DISCORD_CHANNEL_ID): make another channel a chat "
            "channel",
        )
    checked = _check_kind(args.channel_id.strip())
    chat = store.add(
        args.channel_id,
        tool=args.tool,
        projects=ProjectRegistry(home, allowed_roots=watch_roots()),
        project=args.project,
        persona=args.persona,
        history=args.history,
        who=args.who,
        keep_session=args.keep_session,
        on_failure=args.on_failure,
        now=time.time(),
    )
    sys.stdout.write(
        f"chat channel {chat.channel_id}: {chat.tool} in "
        f"{'project ' + chat.project if chat.project else 'its own folder'}, answers "
        f"{chat.who_text()}, reads {chat.history} messages; persona files in "
        f"{chat.persona_dir(home)} (every *.md, in name order; HEARTBEAT.md is the heartbeat's "
        "checklist)\n"
    )
    if not checked:
        sys.stdout.write(
            "(its kind was not checked: no bot token is configured here; forum, media and "
            "category channels cannot be chat channels)\n"
        )
    return 0


def _check_kind(channel_id: str) -> bool:
    """Refuse a channel where an agent cannot answer (a forum, media or category channel), as
    ``setup`` does; False when it could not be asked (no token configured here).

    Raises:
        RunError: E_BAD_ARGUMENTS, the channel's kind, or the bot cannot see it.
    """
    from discord_mcp.config import Settings, has_token
    from discord_mcp.errors import ConfigError, DiscordError, RunError
    from discord_mcp.setup.channel_kinds import chat_kind_problem

    if not channel_id.isdigit() or not has_token():
        return False
    try:
        settings = Settings.from_env()
    except ConfigError:
        return False  # the rest of the configuration is missing: nothing to ask Discord with

    async def look() -> dict[str, Any]:
        from discord_mcp.transport.rest import RestClient
        from discord_mcp.transport.shared_ledger import shared_limiter

        async with RestClient(
            settings.token,
            api_base=settings.api_base,
            limiter=shared_limiter(settings.home, settings.token),
        ) as rest:
            return dict(await rest.get_channel(channel_id))

    try:
        channel = asyncio.run(look())
    except DiscordError as exc:
        raise RunError(
            "E_BAD_ARGUMENTS", f"the bot cannot see channel {channel_id} ({exc}): check the id"
        ) from None
    problem = chat_kind_problem(channel)
    if problem is not None:
        raise RunError("E_BAD_ARGUMENTS", problem)
    return True


def schedule_main(args: argparse.Namespace) -> int:
    from discord_mcp.config import state_home
    from discord_mcp.errors import RunError
    from discord_mcp.runs.engine.schedules import ScheduleStore
    from discord_mcp.watch.chat.channels import ChatStore

    home = state_home()
    store = ScheduleStore(home)
    if args.action == "list":
        schedules = store.list()
        if not schedules:
            sys.stdout.write("no schedules yet: discord-watch schedule add WHEN ...\n")
        for s in schedules:
            target = (
                f"chat={s.channel_id}"
                if s.channel_id
                else f"session={s.thread_id}"
                if s.thread_id
                else f"project={s.project}"
            )
            sys.stdout.write(
                f"{s.id}\t{s.when}\t{target}\tnext={local_time(s.next_time)}\truns={s.runs}"
                f"\t{s.prompt or '(heartbeat: HEARTBEAT.md)'}\n"
            )
        return 0
    if args.action == "remove":
        removed = store.remove(args.schedule_id)
        sys.stdout.write(f"removed schedule {removed.id} ({removed.when})\n")
        return 0
    when = args.when
    if args.tz and "tz" not in when.lower():
        when = f"{when} tz:{args.tz}"
    if when.lower().startswith("cron") and '"' not in when and "'" not in when:
        # a shell already took the quotes: cron:0,30 * * * * comes as cron:... plus words
        head, _, expression = when.partition(":")
        zone = ""
        if " tz:" in expression:
            expression, _, zone = expression.partition(" tz:")
        when = f'{head}:"{expression.strip()}"' + (f" tz:{zone.strip()}" if zone else "")
    if args.chat and ChatStore(home).get(args.chat) is None:
        raise RunError(
            "E_CHAT_NOT_FOUND", f"{args.chat} is not a chat channel: discord-watch chat add first"
        )
    schedule = store.add(
        when,
        args.prompt,
        project=args.project,
        thread_id=args.session,
        channel_id=args.chat,
        now=time.time(),
    )
    sys.stdout.write(
        f"added schedule {schedule.id} ({schedule.when}): first run "
        f"{local_time(schedule.next_time)}\n"
    )
    return 0


def local_time(seconds: float) -> str:
    """A time in this machine's time zone, with the zone's name."""
    moment = dt.datetime.fromtimestamp(seconds).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z")


def _main_channel() -> str | None:
    from discord_mcp.config import main_channel

    return main_channel()
