"""The settings: every value the programs need, read once from the environment (over the
``.env`` files, :mod:`.sources`), validated, then passed down.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from discord_mcp.config.machine import machine_from_host, read_machine
from discord_mcp.config.reminders import ReminderSettings, read_reminders
from discord_mcp.config.sources import merged_env, read_home
from discord_mcp.config.values import (
    Secret,
    describe_value,
    id_problem,
    is_snowflake,
    parse_flag,
    parse_token,
    read_flag,
    read_seconds,
    read_snowflake,
    read_url,
    value_of,
)
from discord_mcp.errors import ConfigError
from discord_mcp.i18n import CHOICES

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_POLL_INTERVAL_S = 5.0
"""Discord allows about five reads per channel every five seconds; one poll per interval fits."""

GATEWAY_MODES = ("auto", "follow", "off")
DEFAULT_APPROVAL_WAIT_S = 600.0
"""How long a tool approval waits for the owner before the agent is told no one answered."""


class Asked(Protocol):
    """Something asked in a project (a decision): its project's key and name."""

    @property
    def project_key(self) -> str | None: ...

    @property
    def project(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the programs need to know, validated.

    Attributes:
        token: the bot token, without the ``Bot `` prefix.
        channel_id: the default channel for questions and notifications.
        owner_ids: the Discord user ids allowed to answer decisions and command runs.
        project_name: names threads and cards (default: the working directory's name).
        project_key: what identifies the project: ``name:<PROJECT_NAME>`` when that is set,
            else the working directory's resolved path, so two repositories that share a
            directory name (``ws1/app``, ``ws2/app``) never share answers.
        home: the state directory (decisions, inbox, spool, logs).
        poll_interval: seconds between REST polls when no gateway event arrives.
        api_base: Discord's REST base URL, ending in ``/api/v10``.
        gateway_url: the gateway URL, or None to ask ``GET /gateway/bot``.
        max_block_seconds: overrides how long a blocking tool call may wait before ``pending``.
        thread_id: a default thread for questions and notices instead of new threads (the
            watch daemon sets it for the agents it runs, so they talk in their run thread).
        gateway: ``auto`` (hold the machine's gateway or follow its holder), ``follow`` (only
            follow another process's gateway, e.g. the watch daemon's) or ``off`` (REST polling).
        project_dir: the session's project (the working directory): agents send files from it.
        file_roots: more directories agents may send files from (``DISCORD_MCP_FILE_ROOTS``).
        reminders: when unanswered questions are brought back to the owner
            (``DISCORD_MCP_REMINDERS``, ``DISCORD_MCP_QUIET_HOURS``, ``DISCORD_MCP_ESCALATE_DM``).
        tmux_nudge: type a short notice into the asking agent's tmux pane when an answer
            arrives while it sits idle (``DISCORD_MCP_TMUX_NUDGE``).
        approval_wait_seconds: how long a tool approval waits for the owner.
        in_run: this process serves a ``discord-watch`` run (``DISCORD_MCP_RUN=1``): a late
            answer to one of its questions, or a late Allow of one of its approvals, resumes
            the run.
        language: what the bot writes in (``DISCORD_MCP_LANGUAGE``): ``en``, ``ko``, ``ja``,
            ``zh``, or ``auto`` (the language of each question; see :mod:`discord_mcp.i18n`).
        tools: which tools the server serves (``DISCORD_MCP_TOOLS``): ``all``, or ``chat``
            (a stranger's turn in a chat channel: only ``send_message``, ``add_reaction`` and
            ``read_history``, pinned to ``thread_id``, without files).
        tool_names: ``ours``, or ``seed`` (``DISCORD_MCP_TOOL_NAMES``): the Decision MCP
            seed's tool names are served too (:mod:`discord_mcp.server.seed_tools`).
        chat_mark: a file the server records in whenever its agent posts or reacts
            (``DISCORD_MCP_CHAT_MARK``, set by discord-watch for a chat channel's turns).
        machine: this machine's name among the machines that share the bot
            (``DISCORD_MCP_MACHINE``, default: from the host name; :mod:`discord_mcp.team`).
    """

    token: Secret
    channel_id: str
    owner_ids: frozenset[str]
    project_name: str
    home: Path
    poll_interval: float = DEFAULT_POLL_INTERVAL_S
    api_base: str = DEFAULT_API_BASE
    gateway_url: str | None = None
    max_block_seconds: float | None = None
    thread_id: str | None = None
    gateway: str = "auto"
    project_dir: Path = field(default_factory=Path.cwd)
    file_roots: tuple[Path, ...] = ()
    reminders: ReminderSettings = field(default_factory=ReminderSettings)
    tmux_nudge: bool = False
    approval_wait_seconds: float = DEFAULT_APPROVAL_WAIT_S
    in_run: bool = False
    language: str = "auto"
    project_key: str = ""
    tools: str = "all"
    tool_names: str = "ours"
    chat_mark: Path | None = None
    machine: str = ""

    def __post_init__(self) -> None:
        if not self.project_key:  # built by hand (tests, tools): the directory identifies it
            object.__setattr__(self, "project_key", project_key_for(None, self.project_dir))
        if not self.machine:
            object.__setattr__(self, "machine", machine_from_host())

    def owns(self, decision: Asked) -> bool:
        """Whether ``decision`` was asked in this project (the same key; a decision written
        before keys existed is matched by the project's name)."""
        if decision.project_key:
            return decision.project_key == self.project_key
        return decision.project == self.project_name

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        cwd: Path | None = None,
        read_dotenv: bool = True,
    ) -> Settings:
        """Build settings from ``environ`` (default ``os.environ``) over ``cwd/.env``.

        Variables already in the environment win over the ``.env`` file.

        Raises:
            ConfigError: the first missing or invalid variable, with how to fix it.
        """
        cwd = cwd or Path.cwd()
        return _parse(merged_env(environ, cwd, read_dotenv=read_dotenv), cwd)


def _file_roots(env: Mapping[str, str]) -> tuple[Path, ...]:
    raw = value_of(env, "DISCORD_MCP_FILE_ROOTS")
    roots = tuple(Path(part).expanduser() for part in raw.split(os.pathsep) if part.strip())
    bad = [str(r) for r in roots if not r.is_absolute()]
    if bad:
        raise ConfigError(
            "DISCORD_MCP_FILE_ROOTS",
            f"contains the relative path {bad[0]!r}",
            "Use absolute directories separated by ':' (agents may send files from them)",
        )
    return roots


def project_key_for(name: str | None, directory: Path) -> str:
    """A project's identity (:attr:`Settings.project_key`)."""
    if name:
        return f"name:{name}"
    try:
        return str(directory.resolve())
    except (OSError, RuntimeError):
        return str(directory.absolute())


def _parse(env: Mapping[str, str], cwd: Path) -> Settings:
    token = parse_token(value_of(env, "DISCORD_BOT_TOKEN"))
    channel_id = read_snowflake(env, "DISCORD_CHANNEL_ID", "the channel where questions are posted")
    owner_ids = _owner_ids(env)
    named = value_of(env, "PROJECT_NAME")
    project = named or cwd.name or "project"
    if len(project) > 60:
        raise ConfigError(
            "PROJECT_NAME", f"is {len(project)} characters long", "Use at most 60 characters"
        )
    home = read_home(env, cwd)
    poll = read_seconds(env, "POLL_INTERVAL_SECONDS", DEFAULT_POLL_INTERVAL_S, low=0.05)
    api_base = read_url(env, "DISCORD_API_BASE", DEFAULT_API_BASE, ("http://", "https://"))
    gateway_url = read_url(env, "DISCORD_GATEWAY_URL", "", ("ws://", "wss://")) or None
    max_block = None
    if value_of(env, "DISCORD_MCP_MAX_BLOCK_SECONDS"):
        max_block = read_seconds(env, "DISCORD_MCP_MAX_BLOCK_SECONDS", 0.0, low=0.1)
    thread_id = None
    if value_of(env, "DISCORD_THREAD_ID"):
        thread_id = read_snowflake(env, "DISCORD_THREAD_ID", "the thread to talk in")
    channel_mode(env)  # refused here, at start, rather than silently taken as off
    gateway_mode = value_of(env, "DISCORD_MCP_GATEWAY").lower() or "auto"
    if gateway_mode not in GATEWAY_MODES:
        raise ConfigError(
            "DISCORD_MCP_GATEWAY",
            f"is not one of {', '.join(GATEWAY_MODES)} ({describe_value(gateway_mode)})",
            "Use auto (hold or follow the gateway), follow (never hold it) or off (polling only)",
        )
    approval_wait = read_seconds(
        env, "DISCORD_MCP_APPROVAL_WAIT_SECONDS", DEFAULT_APPROVAL_WAIT_S, low=1.0
    )
    tools = _tools(env, thread_id)
    mark = value_of(env, "DISCORD_MCP_CHAT_MARK")
    if mark and not Path(mark).is_absolute():
        raise ConfigError(
            "DISCORD_MCP_CHAT_MARK", "is not an absolute path", "Leave it to discord-watch"
        )
    return Settings(
        tools=tools,
        tool_names=_tool_names(env),
        chat_mark=Path(mark) if mark else None,
        machine=read_machine(env),
        language=_language(env),
        reminders=read_reminders(env),
        tmux_nudge=read_flag(env, "DISCORD_MCP_TMUX_NUDGE"),
        approval_wait_seconds=approval_wait,
        in_run=read_flag(env, "DISCORD_MCP_RUN"),
        gateway=gateway_mode,
        thread_id=thread_id,
        token=token,
        channel_id=channel_id,
        owner_ids=owner_ids,
        project_name=project,
        home=home,
        poll_interval=poll,
        api_base=api_base,
        gateway_url=gateway_url,
        max_block_seconds=max_block,
        project_dir=cwd,
        file_roots=_file_roots(env),
        project_key=project_key_for(named or None, cwd),
    )


def _owner_ids(env: Mapping[str, str]) -> frozenset[str]:
    raw = value_of(env, "DISCORD_OWNER_IDS")
    if not raw:
        raise ConfigError(
            "DISCORD_OWNER_IDS",
            "is not set",
            "Set it to your own Discord user id (comma-separated for several people): only "
            "these users may answer decisions and start runs",
        )
    ids = [part.strip() for part in raw.split(",") if part.strip()]
    bad = [part for part in ids if not is_snowflake(part)]
    if bad or not ids:
        problem = id_problem(bad[0]) if bad else None
        if problem is not None and problem.startswith("must be"):
            problem = (
                f"must be Discord user ids (digits); entry {ids.index(bad[0]) + 1} is not: "
                + describe_value(bad[0])
            )
        elif problem is not None:
            problem = f"entry {ids.index(bad[0]) + 1} {problem}"
        raise ConfigError(
            "DISCORD_OWNER_IDS",
            problem or "is empty",
            "Use comma-separated numeric user ids (17 to 20 digits each), e.g. "
            "123456789012345678,234567890123456789",
        )
    return frozenset(ids)


def _language(env: Mapping[str, str]) -> str:
    raw = value_of(env, "DISCORD_MCP_LANGUAGE")
    value = raw.lower() or "auto"
    if value not in CHOICES:
        raise ConfigError(
            "DISCORD_MCP_LANGUAGE",
            f"is not one of {', '.join(CHOICES)} ({describe_value(raw)})",
            "Use en, ko, ja or zh for one language, or auto (the default) to answer each "
            "question in its own language",
        )
    return value


TOOL_SETS = ("all", "chat")
TOOL_NAMES = ("ours", "seed")


def _tool_names(env: Mapping[str, str]) -> str:
    """``DISCORD_MCP_TOOL_NAMES``: ``ours`` (the default), or ``seed`` to serve the Decision MCP
    seed's names too. Anything else stops the server."""
    raw = value_of(env, "DISCORD_MCP_TOOL_NAMES").strip().lower() or "ours"
    if raw not in TOOL_NAMES:
        raise ConfigError(
            "DISCORD_MCP_TOOL_NAMES",
            f"is not one of {', '.join(TOOL_NAMES)} ({describe_value(raw)})",
            "Use seed to serve discord_ask_decision and the other Decision MCP names too, or "
            "leave it unset",
        )
    return raw


def _tools(env: Mapping[str, str], thread_id: str | None) -> str:
    """``DISCORD_MCP_TOOLS``: ``all`` (the default) or ``chat``, which needs the thread it is
    pinned to. Anything else stops the server: a doubt never serves more tools."""
    raw = value_of(env, "DISCORD_MCP_TOOLS").strip().lower() or "all"
    if raw not in TOOL_SETS:
        raise ConfigError(
            "DISCORD_MCP_TOOLS",
            f"is not one of {', '.join(TOOL_SETS)} ({describe_value(raw)})",
            "Use all, or chat (set by discord-watch for a stranger's turn)",
        )
    if raw == "chat" and thread_id is None:
        raise ConfigError(
            "DISCORD_MCP_TOOLS",
            "is chat without DISCORD_THREAD_ID",
            "The chat tools are pinned to one channel: set DISCORD_THREAD_ID",
        )
    return raw


def channel_mode(env: Mapping[str, str]) -> bool | None:
    """``DISCORD_MCP_CHANNEL``: True (on), False (off) or None (auto, the default).

    Raises:
        ConfigError: neither a yes-or-no nor auto.
    """
    raw = env.get("DISCORD_MCP_CHANNEL", "").strip()
    if raw.lower() in ("", "auto"):
        return None
    try:
        return parse_flag("DISCORD_MCP_CHANNEL", raw)
    except ConfigError:
        raise ConfigError(
            "DISCORD_MCP_CHANNEL",
            f"is not on, off or auto ({describe_value(raw)})",
            "Use on (1, true, yes), off (0, false, no) or auto (the default)",
        ) from None
