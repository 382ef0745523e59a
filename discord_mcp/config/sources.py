"""Where the settings come from: ``cwd/.env``, the ``.env`` that ``discord-mcp setup`` wrote,
and the environment; and the state directory they name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values

from discord_mcp.config.values import describe_value, value_of
from discord_mcp.errors import ConfigError


def state_home(environ: Mapping[str, str] | None = None, *, cwd: Path | None = None) -> Path:
    """The state directory alone (for commands that need nothing else, like project setup)."""
    cwd = cwd or Path.cwd()
    return read_home(merged_env(environ, cwd, read_dotenv=True), cwd)


def main_channel(environ: Mapping[str, str] | None = None) -> str | None:
    """The configured channel (``DISCORD_CHANNEL_ID``) as the settings would find it, or None
    (for commands that must not touch it, like ``chat add``)."""
    try:
        merged = merged_env(environ, Path.cwd(), read_dotenv=True)
    except ConfigError:
        return None
    return merged.get("DISCORD_CHANNEL_ID", "").strip() or None


def merged_env(
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


def read_home(env: Mapping[str, str], cwd: Path) -> Path:
    raw = value_of(env, "DISCORD_MCP_HOME")
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


def has_token(environ: Mapping[str, str] | None = None, *, cwd: Path | None = None) -> bool:
    """Whether a bot token is configured at all (``discord-watch`` runs local-only without)."""
    cwd = cwd or Path.cwd()
    return bool(value_of(merged_env(environ, cwd, read_dotenv=True), "DISCORD_BOT_TOKEN"))
