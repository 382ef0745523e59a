"""Settings: read once from the environment and a ``.env`` file, validated, then passed down.

The variable names are a public contract (README, CHANGELOG). A missing or invalid value raises
:class:`~discord_mcp.errors.ConfigError` naming the variable and the fix. No message ever repeats
the value it refuses: a token pasted into the wrong variable would land in stderr, which MCP
clients keep in their logs. Messages describe the value's shape instead (:func:`describe_value`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dotenv import dotenv_values

from discord_mcp.decisions.reminder_policy import (
    ReminderPolicy,
    parse_delays,
    parse_quiet_hours,
)
from discord_mcp.errors import ConfigError
from discord_mcp.i18n import CHOICES
from discord_mcp.team.identity import machine_from_host, parse_machine

if TYPE_CHECKING:
    from discord_mcp.decisions.model import Decision

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_POLL_INTERVAL_S = 5.0
"""Discord allows about five reads per channel every five seconds; one poll per interval fits."""

GATEWAY_MODES = ("auto", "follow", "off")
DEFAULT_APPROVAL_WAIT_S = 600.0
"""How long a tool approval waits for the owner before the agent is told no one answered."""
_SNOWFLAKE = re.compile(r"[0-9]{17,20}")
"""A Discord id (snowflake): 17 to 20 ASCII digits."""


class Secret:
    """A string that never shows itself in ``repr``, ``str``, f-strings or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The real value, for the one place that must send it (the Authorization header)."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


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
    reminders: ReminderPolicy = field(default_factory=ReminderPolicy)
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

    def owns(self, decision: Decision) -> bool:
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
        return _parse(_merged_env(environ, cwd, read_dotenv=read_dotenv), cwd)


def state_home(environ: Mapping[str, str] | None = None, *, cwd: Path | None = None) -> Path:
    """The state directory alone (for commands that need nothing else, like project setup)."""
    cwd = cwd or Path.cwd()
    return _home(_merged_env(environ, cwd, read_dotenv=True), cwd)


def main_channel(environ: Mapping[str, str] | None = None) -> str | None:
    """The configured channel (``DISCORD_CHANNEL_ID``) as the settings would find it, or None
    (for commands that must not touch it, like ``chat add``)."""
    try:
        merged = _merged_env(environ, Path.cwd(), read_dotenv=True)
    except ConfigError:
        return None
    return merged.get("DISCORD_CHANNEL_ID", "").strip() or None


def _merged_env(
    environ: Mapping[str, str] | None, cwd: Path, *, read_dotenv: bool
) -> dict[str, str]:
    """The settings' sources, weakest first: ``cwd/.env``, ``DISCORD_MCP_ENV_FILE`` (when unset:
    :func:`default_env_file`, if it exists), environment.

    ``DISCORD_MCP_ENV_FILE`` is how ``discord-mcp install`` points an agent's client at the
    ``.env`` that ``discord-mcp setup`` wrote, so no client config ever holds the token.
    """
    env = os.environ if environ is None else environ
    merged: dict[str, str] = {}
    if read_dotenv:
        files = [cwd / ".env"]
        explicit = env.get("DISCORD_MCP_ENV_FILE", "").strip()
        if explicit:
            path = Path(explicit).expanduser()
            if not path.is_file():
                raise ConfigError(
                    "DISCORD_MCP_ENV_FILE",
                    f"does not name a readable file ({describe_value(explicit)})",
                    "Point it at the .env written by `discord-mcp setup`, or unset it",
                )
            files.append(path)
        else:
            default = default_env_file(env)
            if default is not None:
                files.append(default)
        for env_file in files:
            if env_file.is_file():
                values = dotenv_values(env_file, encoding="utf-8")
                merged.update({k: v for k, v in values.items() if v is not None})
    merged.update(env)
    return merged


def default_env_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where ``discord-mcp setup`` writes by default, and what is read when
    ``DISCORD_MCP_ENV_FILE`` is unset: ``$XDG_CONFIG_HOME/discord-mcp/.env``, else
    ``~/.config/discord-mcp/.env``.

    It is how a client that starts us without our variables (a Claude Code plugin, a Gemini CLI
    extension, ``uvx``) still finds the bot's settings. Computed from ``environ`` alone (None
    when it names neither directory), so a test's made-up environment never reads the
    developer's own file.
    """
    env = os.environ if environ is None else environ
    config = env.get("XDG_CONFIG_HOME", "").strip()
    if config and Path(config).is_absolute():
        return Path(config) / "discord-mcp" / ".env"
    home = env.get("HOME", "").strip()
    return Path(home) / ".config" / "discord-mcp" / ".env" if home else None


def _home(env: Mapping[str, str], cwd: Path) -> Path:
    raw = _get(env, "DISCORD_MCP_HOME")
    if not raw:
        return Path.home() / ".discord-mcp"
    home = Path(raw).expanduser()
    problem = home_problem(home)
    if problem is not None:
        raise ConfigError(
            "DISCORD_MCP_HOME",
            problem,
            "Use an absolute path to a directory of your own that can be created, e.g. "
            "~/.discord-mcp (the default; one state directory per bot token)",
        )
    return home


_KERNEL_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))


def home_problem(home: Path) -> str | None:
    """Why ``home`` cannot be a state directory (None: it can): it must be absolute, not ``/``
    nor under /proc, /sys or /dev, and a directory this user can create or write."""
    if not home.is_absolute():
        return "is a relative path; the state directory must not depend on where a program starts"
    real = Path(os.path.realpath(home))
    if real == Path("/"):
        return "is the root directory /"
    for seen in (Path(os.path.normpath(home)), real):  # as written, and where links lead
        for tree in _KERNEL_TREES:
            if seen == tree or tree in seen.parents:
                return f"is under {tree}, a kernel file system where no state can be kept"
    existing = real
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot be the state directory: {existing} is a file, not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == real else f" ({existing} is not writable)"
        return f"cannot be the state directory: this user cannot write there{where}"
    return None


def watch_roots(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Directories project paths must be inside: ``DISCORD_WATCH_ROOTS`` (``:``-separated).

    Default: the user's home directory.
    """
    env = os.environ if environ is None else environ
    raw = env.get("DISCORD_WATCH_ROOTS", "").strip()
    if not raw:
        return [Path.home()]
    roots = [Path(part).expanduser() for part in raw.split(os.pathsep) if part.strip()]
    bad = [str(r) for r in roots if not r.is_absolute()]
    if bad:
        raise ConfigError(
            "DISCORD_WATCH_ROOTS",
            f"contains a relative path ({describe_value(bad[0])})",
            "Use absolute directories separated by ':'",
        )
    return roots


def _file_roots(env: Mapping[str, str]) -> tuple[Path, ...]:
    raw = _get(env, "DISCORD_MCP_FILE_ROOTS")
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


def _get(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _parse(env: Mapping[str, str], cwd: Path) -> Settings:
    token = parse_token(_get(env, "DISCORD_BOT_TOKEN"))
    channel_id = _snowflake(env, "DISCORD_CHANNEL_ID", "the channel where questions are posted")
    owner_ids = _owner_ids(env)
    named = _get(env, "PROJECT_NAME")
    project = named or cwd.name or "project"
    if len(project) > 60:
        raise ConfigError(
            "PROJECT_NAME", f"is {len(project)} characters long", "Use at most 60 characters"
        )
    home = _home(env, cwd)
    poll = _positive_float(env, "POLL_INTERVAL_SECONDS", DEFAULT_POLL_INTERVAL_S, low=0.05)
    api_base = _url(env, "DISCORD_API_BASE", DEFAULT_API_BASE, ("http://", "https://"))
    gateway_url = _url(env, "DISCORD_GATEWAY_URL", "", ("ws://", "wss://")) or None
    max_block = None
    if _get(env, "DISCORD_MCP_MAX_BLOCK_SECONDS"):
        max_block = _positive_float(env, "DISCORD_MCP_MAX_BLOCK_SECONDS", 0.0, low=0.1)
    thread_id = None
    if _get(env, "DISCORD_THREAD_ID"):
        thread_id = _snowflake(env, "DISCORD_THREAD_ID", "the thread to talk in")
    channel_mode(env)  # refused here, at start, rather than silently taken as off
    gateway_mode = _get(env, "DISCORD_MCP_GATEWAY").lower() or "auto"
    if gateway_mode not in GATEWAY_MODES:
        raise ConfigError(
            "DISCORD_MCP_GATEWAY",
            f"is not one of {', '.join(GATEWAY_MODES)} ({describe_value(gateway_mode)})",
            "Use auto (hold or follow the gateway), follow (never hold it) or off (polling only)",
        )
    approval_wait = _positive_float(
        env, "DISCORD_MCP_APPROVAL_WAIT_SECONDS", DEFAULT_APPROVAL_WAIT_S, low=1.0
    )
    tools = _tools(env, thread_id)
    mark = _get(env, "DISCORD_MCP_CHAT_MARK")
    if mark and not Path(mark).is_absolute():
        raise ConfigError(
            "DISCORD_MCP_CHAT_MARK", "is not an absolute path", "Leave it to discord-watch"
        )
    return Settings(
        tools=tools,
        tool_names=_tool_names(env),
        chat_mark=Path(mark) if mark else None,
        machine=_machine(env),
        language=_language(env),
        reminders=_reminders(env),
        tmux_nudge=_flag(env, "DISCORD_MCP_TMUX_NUDGE"),
        approval_wait_seconds=approval_wait,
        in_run=_flag(env, "DISCORD_MCP_RUN"),
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


def parse_token(raw: str) -> Secret:
    """Accept a bot token with or without its ``Bot `` prefix (a common setup slip).

    Raises:
        ConfigError: the token is missing or malformed (the message never contains it).
    """
    value = raw.strip()
    if value.lower() == "bot" or value[:4].lower() == "bot ":
        value = value[3:].strip()
    if not value:
        raise ConfigError(
            "DISCORD_BOT_TOKEN",
            "is not set",
            "Copy the bot token from the Discord developer portal (your application > Bot > "
            "Reset Token) into .env as DISCORD_BOT_TOKEN=... (with or without 'Bot ')",
        )
    if any(ch.isspace() for ch in value) or not value.isascii():
        raise ConfigError(
            "DISCORD_BOT_TOKEN",
            "contains spaces or non-ASCII characters",
            "Paste the token exactly as the developer portal shows it, on one line",
        )
    return Secret(value)


def _snowflake(env: Mapping[str, str], name: str, what: str) -> str:
    value = _get(env, name)
    if not value:
        raise ConfigError(
            name,
            "is not set",
            f"Set it to the id of {what}: enable Developer Mode in Discord (Settings > Advanced), "
            "then right-click it > Copy ID",
        )
    problem = id_problem(value)
    if problem is not None:
        raise ConfigError(
            name,
            problem,
            "A Discord id is 17 to 20 digits; right-click > Copy ID with Developer Mode on",
        )
    return value


def is_snowflake(value: str) -> bool:
    """Whether ``value`` is a Discord id: 17 to 20 ASCII digits, nothing else."""
    return _SNOWFLAKE.fullmatch(value) is not None


def id_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a Discord id, in words (None: nothing)."""
    if is_snowflake(value):
        return None
    if value.isascii() and value.isdigit():
        if len(value) < 17:
            return (
                f"is {len(value)} digits: too short for a Discord id, which is 17 to 20 digits "
                "(part of it may be missing)"
            )
        return f"is {len(value)} digits: too long for a Discord id, which is 17 to 20 digits"
    return f"must be a Discord id (digits); {describe_value(value)}"


def _owner_ids(env: Mapping[str, str]) -> frozenset[str]:
    raw = _get(env, "DISCORD_OWNER_IDS")
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


def _positive_float(env: Mapping[str, str], name: str, default: float, *, low: float) -> float:
    raw = _get(env, name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(
            name, f"must be a number of seconds; {describe_value(raw)}", "Use seconds, e.g. 5"
        ) from None
    if not (low <= value <= 86_400) or value != value:
        raise ConfigError(name, f"is {value}", f"Use a number of seconds between {low} and 86400")
    return value


def _reminders(env: Mapping[str, str]) -> ReminderPolicy:
    raw = _get(env, "DISCORD_MCP_REMINDERS")
    try:
        delays = parse_delays(raw)
    except ValueError as exc:
        raise ConfigError(
            "DISCORD_MCP_REMINDERS",
            f"{exc} ({describe_value(raw)})",
            "Use delays such as 15m,1h,4h (units s, m, h; the last one repeats, at least every "
            "5m), or off",
        ) from None
    raw = _get(env, "DISCORD_MCP_QUIET_HOURS")
    try:
        quiet = parse_quiet_hours(raw)
    except ValueError as exc:
        raise ConfigError(
            "DISCORD_MCP_QUIET_HOURS",
            f"{exc} ({describe_value(raw)})",
            "Use a daily window such as 22:00-08:00, optionally followed by a time zone such as "
            "Europe/Berlin",
        ) from None
    return ReminderPolicy(
        delays=delays, quiet=quiet, escalate_dm=_flag(env, "DISCORD_MCP_ESCALATE_DM")
    )


def _machine(env: Mapping[str, str]) -> str:
    raw = _get(env, "DISCORD_MCP_MACHINE")
    if not raw:
        return machine_from_host()
    try:
        return parse_machine(raw)
    except ValueError as exc:
        raise ConfigError(
            "DISCORD_MCP_MACHINE",
            f"{exc} ({describe_value(raw)})",
            "Use a short name such as laptop or build-server (a-z, 0-9, - and _, at most 32), "
            "the same in every program of this machine",
        ) from None


def _language(env: Mapping[str, str]) -> str:
    raw = _get(env, "DISCORD_MCP_LANGUAGE")
    value = raw.lower() or "auto"
    if value not in CHOICES:
        raise ConfigError(
            "DISCORD_MCP_LANGUAGE",
            f"is not one of {', '.join(CHOICES)} ({describe_value(raw)})",
            "Use en, ko, ja or zh for one language, or auto (the default) to answer each "
            "question in its own language",
        )
    return value


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


TOOL_SETS = ("all", "chat")
TOOL_NAMES = ("ours", "seed")


def _tool_names(env: Mapping[str, str]) -> str:
    """``DISCORD_MCP_TOOL_NAMES``: ``ours`` (the default), or ``seed`` to serve the Decision MCP
    seed's names too. Anything else stops the server."""
    raw = _get(env, "DISCORD_MCP_TOOL_NAMES").strip().lower() or "ours"
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
    raw = _get(env, "DISCORD_MCP_TOOLS").strip().lower() or "all"
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


def _flag(env: Mapping[str, str], name: str) -> bool:
    return parse_flag(name, _get(env, name))


def parse_flag(name: str, raw: str) -> bool:
    """A yes-or-no setting: 1/0, true/false, yes/no, on/off in any case (empty is no).

    Raises:
        ConfigError: anything else, naming the variable.
    """
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ConfigError(
        name,
        f"is not a yes or no ({describe_value(raw)})",
        "Use 1, true, yes or on to turn it on; 0, false, no or off to turn it off",
    )


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


def _url(env: Mapping[str, str], name: str, default: str, schemes: tuple[str, ...]) -> str:
    value = _get(env, name)
    if not value:
        return default
    if not value.startswith(schemes):
        raise ConfigError(
            name,
            f"must be a URL starting with {' or '.join(schemes)}; {describe_value(value)}",
            f"Use a URL starting with {' or '.join(schemes)}",
        )
    return value.rstrip("/")


def describe_value(value: str) -> str:
    """What a refused value looks like, without any of it: its length and the kinds of
    characters in it (a token pasted into the wrong variable must not reach a log)."""
    kinds = []
    if any(ch.isascii() and ch.isalpha() for ch in value):
        kinds.append("letters")
    if any(ch.isdigit() for ch in value):
        kinds.append("digits")
    if any(ch.isspace() for ch in value):
        kinds.append("spaces")
    if any(not ch.isascii() for ch in value):
        kinds.append("non-ASCII characters")
    if any(ch.isascii() and not ch.isalnum() and not ch.isspace() for ch in value):
        kinds.append("punctuation")
    what = ", ".join(kinds[:-1]) + (" and " if len(kinds) > 1 else "") + kinds[-1] if kinds else ""
    return f"the value given has {len(value)} characters" + (f": {what}" if what else "")


def has_token(environ: Mapping[str, str] | None = None, *, cwd: Path | None = None) -> bool:
    """Whether a bot token is configured at all (``discord-watch`` runs local-only without)."""
    cwd = cwd or Path.cwd()
    return bool(_get(_merged_env(environ, cwd, read_dotenv=True), "DISCORD_BOT_TOKEN"))
