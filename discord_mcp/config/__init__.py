"""Settings: read once from the environment and a ``.env`` file, validated, then passed down.

The variable names are a public contract (README, CHANGELOG). A missing or invalid value raises
:class:`~discord_mcp.errors.ConfigError` naming the variable and the fix. No message ever repeats
the value it refuses: a token pasted into the wrong variable would land in stderr, which MCP
clients keep in their logs. Messages describe the value's shape instead (:func:`describe_value`).

The package's rooms: :mod:`.settings` (the :class:`Settings` and how each is read),
:mod:`.values` (one value, checked and refused without echoing it), :mod:`.sources` (the
``.env`` files and the environment, the state directory), :mod:`.reminders` (when to remind, as
configured) and :mod:`.machine` (this machine's name). Everything imported from
``discord_mcp.config`` is re-exported here.
"""

from discord_mcp.config.machine import machine_from_host, parse_machine
from discord_mcp.config.reminders import QuietHours, ReminderSettings
from discord_mcp.config.settings import (
    DEFAULT_API_BASE,
    DEFAULT_APPROVAL_WAIT_S,
    DEFAULT_POLL_INTERVAL_S,
    GATEWAY_MODES,
    TOOL_SETS,
    Settings,
    channel_mode,
    project_key_for,
)
from discord_mcp.config.sources import (
    default_env_file,
    has_token,
    home_problem,
    main_channel,
    state_home,
    watch_roots,
)
from discord_mcp.config.values import (
    Secret,
    describe_value,
    id_problem,
    is_snowflake,
    parse_flag,
    parse_token,
)

__all__ = [
    "DEFAULT_API_BASE",
    "DEFAULT_APPROVAL_WAIT_S",
    "DEFAULT_POLL_INTERVAL_S",
    "GATEWAY_MODES",
    "TOOL_SETS",
    "QuietHours",
    "ReminderSettings",
    "Secret",
    "Settings",
    "channel_mode",
    "default_env_file",
    "describe_value",
    "has_token",
    "home_problem",
    "id_problem",
    "is_snowflake",
    "machine_from_host",
    "main_channel",
    "parse_flag",
    "parse_machine",
    "parse_token",
    "project_key_for",
    "state_home",
    "watch_roots",
]
