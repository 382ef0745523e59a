"""The daemon's own settings from the environment (beside :class:`~discord_mcp.config.Settings`).

- ``DISCORD_WATCH_DEBOUNCE_SECONDS`` (default 2): messages the owner sends this close together
  in one run thread become one job; ``0`` turns it off.
- ``DISCORD_WATCH_MENTION`` (default ``failures``): mention the owners when a job fails or is
  lost in a crash; ``all``: also when a job is done; ``none``: never.
- ``DISCORD_WATCH_COMMANDS_FOR`` (default ``admins``): who Discord offers the slash commands to.
  ``admins``: the server's administrators (and its owner); ``everyone``: every member, for
  owners who are not administrators. Either way only the owners' commands are obeyed.
- ``DISCORD_WATCH_ACP_IDLE_MINUTES`` (default 30): an ACP agent's turn with no
  ``session/update`` for this long is taken as hung (the watchdog): its agent is ended, its
  session closed, the owners told, the thread archived.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from discord_mcp.errors import ConfigError
from discord_mcp.watch.control.spec import VISIBLE_TO
from discord_mcp.watch.notifier import Mention

DEBOUNCE_MAX_S = 60.0
ACP_IDLE_MAX_MIN = 7 * 24 * 60.0


@dataclass(frozen=True)
class WatchOptions:
    debounce: float = 2.0
    mention: Mention = "failures"
    commands_for: str = "admins"
    acp_idle: float = 1800.0  # seconds (DISCORD_WATCH_ACP_IDLE_MINUTES)


def watch_options(environ: Mapping[str, str] | None = None) -> WatchOptions:
    """Read the options; a bad value stops startup with what to fix.

    Raises:
        ConfigError: a value out of range.
    """
    env = os.environ if environ is None else environ
    options = WatchOptions()
    raw = env.get("DISCORD_WATCH_DEBOUNCE_SECONDS", "").strip()
    debounce = options.debounce
    if raw:
        try:
            debounce = float(raw)
        except ValueError:
            debounce = -1.0
        if not 0 <= debounce <= DEBOUNCE_MAX_S:
            raise ConfigError(
                "DISCORD_WATCH_DEBOUNCE_SECONDS",
                f"{raw!r} is not a number of seconds from 0 to {DEBOUNCE_MAX_S:g}",
                "Use e.g. 2, or 0 to start every message as its own job at once",
            )
    mention = env.get("DISCORD_WATCH_MENTION", "").strip().lower() or options.mention
    if mention not in ("failures", "all", "none"):
        raise ConfigError(
            "DISCORD_WATCH_MENTION",
            f"{mention!r} is not one of failures, all, none",
            "Use failures (the default), all or none",
        )
    commands_for = env.get("DISCORD_WATCH_COMMANDS_FOR", "").strip().lower() or "admins"
    if commands_for not in VISIBLE_TO:
        raise ConfigError(
            "DISCORD_WATCH_COMMANDS_FOR",
            f"{commands_for!r} is not one of {', '.join(VISIBLE_TO)}",
            "Use admins (the default: only the server's administrators see the slash commands) "
            "or everyone (every member sees them; only the owners are obeyed)",
        )
    return WatchOptions(
        debounce=debounce,
        mention=cast(Mention, mention),
        commands_for=commands_for,
        acp_idle=_acp_idle(env, options.acp_idle),
    )


def _acp_idle(env: Mapping[str, str], default: float) -> float:
    raw = env.get("DISCORD_WATCH_ACP_IDLE_MINUTES", "").strip()
    if not raw:
        return default
    try:
        minutes = float(raw)
    except ValueError:
        minutes = -1.0
    if not 0 < minutes <= ACP_IDLE_MAX_MIN:
        raise ConfigError(
            "DISCORD_WATCH_ACP_IDLE_MINUTES",
            f"{raw!r} is not a number of minutes above 0 and at most {ACP_IDLE_MAX_MIN:g}",
            "Use e.g. 30 (the default): an ACP turn silent this long is ended",
        )
    return minutes * 60.0
