"""Logging setup: stderr and a rotating file in the state directory, never stdout.

stdout belongs to the MCP protocol (DESIGN §2.6). Every record passes through a formatter that
replaces the bot token (and anything else registered as secret) before it is written anywhere.
:func:`configure` is the one place every program of the package sets its logging up: the
human-readable log (stderr for a tmux pane, ``logs/<program>.log``) and the structured one
(``logs/app.ndjson``, :mod:`discord_mcp.app_log`).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from discord_mcp.app_log import Clock, DailyFile, JsonFormatter, settings_from
from discord_mcp.errors import StateError
from discord_mcp.state.files import ensure_dir

_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"
_REDACTED = "[redacted]"


class RedactingFormatter(logging.Formatter):
    """A formatter that scrubs secrets from the whole formatted record, tracebacks included."""

    def __init__(self, secrets: Iterable[str], fmt: str = _FORMAT) -> None:
        super().__init__(fmt)
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self._secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret in ``text``."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, _REDACTED)
    return text


def configure(
    *,
    program: str,
    home: Path | None,
    secrets: Iterable[str] = (),
    level: int = logging.INFO,
    stderr: bool = True,
    environ: Mapping[str, str] | None = None,
    clock: Clock = time.time,
) -> Path | None:
    """Send the package's logs to stderr, to ``home/logs/<program>.log`` and, one JSON object
    per line, to ``app.ndjson`` (``DISCORD_MCP_LOG_DIR``, default ``home/logs``; a file per day,
    ``DISCORD_MCP_LOG_KEEP`` past days kept). ``DISCORD_MCP_LOG_LEVEL`` (read from ``environ``,
    default this process's) sets the level of all three, over ``level``.

    Returns the log file's path, or None when no state directory is given or it is not writable
    (logging then goes to stderr only, which is said on stderr). ``stderr=False``: to the files
    alone (a hook, whose stderr is its answer), and nowhere when they cannot be written.
    """
    secrets = list(secrets)
    formatter = RedactingFormatter(secrets)
    chosen, json_dir, keep, problems = settings_from(
        os.environ if environ is None else environ, home
    )
    if (environ if environ is not None else os.environ).get("DISCORD_MCP_LOG_LEVEL", "").strip():
        level = chosen
    root = logging.getLogger("discord_mcp")
    root.setLevel(level)
    root.propagate = False
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()

    if stderr:
        stderr_handler = logging.StreamHandler(sys.stderr)
        stderr_handler.setFormatter(formatter)
        root.addHandler(stderr_handler)
    else:
        root.addHandler(logging.NullHandler())  # not Python's last resort, which is stderr

    log_path: Path | None = None
    if home is not None:
        try:
            log_dir = home / "logs"
            ensure_dir(log_dir)
            log_path = log_dir / f"{program}.log"
            file_handler = logging.handlers.RotatingFileHandler(
                log_path, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
            )
            os.chmod(log_path, 0o600)
            file_handler.setFormatter(formatter)
            root.addHandler(file_handler)
        except (OSError, StateError) as exc:
            root.warning("cannot write logs under %s (%s); logging to stderr only", home, exc)
            log_path = None
    if json_dir is not None:
        structured = DailyFile(json_dir, keep=keep, clock=clock)
        structured.setFormatter(JsonFormatter(program=program, secrets=secrets))
        root.addHandler(structured)
    for problem in problems:
        root.warning("%s", problem)
    return log_path
