"""The owner's control surface: slash commands and ``!`` text commands, one handler each,
behind one dispatcher.

- ``spec``: the commands, declared once (names, options; Discord's definitions and the text
  parser both come from it). The names are a public contract.
- ``dispatch``: the dispatcher (owner-only, errors as codes with a sentence) and the table of
  handlers; ``base``: the request, the reply and the daemon's parts a handler gets.
- One module per command group: ``projects`` (/project), ``start`` (/start), ``sessions``
  (/status, /session), ``steering`` (/tool, /model, /retry, /stop, /cancel), ``logs``,
  ``usage``, ``pending``, ``schedules`` (/schedule), ``help``.
- ``slash``: INTERACTION_CREATE (answering within Discord's 3 seconds); ``suggest``:
  autocomplete; ``registration``: the guild's commands at startup.
"""

from __future__ import annotations

from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.dispatch import Dispatcher
from discord_mcp.watch.control.slash import SlashCommands

__all__ = ["Controls", "Dispatcher", "Reply", "Request", "SlashCommands"]
