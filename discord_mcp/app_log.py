"""The structured log: one JSON object per line in ``logs/app.ndjson``, a file per day.

Theory. Every process of the package (``discord-watch``, each ``discord-mcp`` server, the
hooks) logs through :func:`discord_mcp.log.configure`, which adds this handler beside the
human-readable log (stderr, for a tmux pane, and ``logs/<program>.log``). Each record becomes
one line::

    {"time": "2026-11-28T13:00:00.123Z", "level": "WARNING", "logger": "discord_mcp.runs...",
     "event": "the message", "error_code": "E_CLI_TIMEOUT", "run_id": "run_...",
     "decision_id": null, "job_id": null, "thread_id": null, "program": "discord-watch",
     "pid": 4242}

Every key is there on every line (null when unknown). ``error_code``, ``run_id``,
``decision_id``, ``job_id`` and ``thread_id`` come from the call's ``extra`` when it gives them;
else ``error_code`` from the exception logged (its ``code``) or an ``E_...`` word in the
message, and ``run_id`` / ``decision_id`` from an id of theirs in the message. An exception's
traceback is in ``exception``.

Secrets: each text of the line goes through the redaction every text the bot posts goes through
(:func:`discord_mcp.outbound.redaction.redact`): the token in any of its forms (split, hex,
base64) and the shapes of known secrets, then the literal secrets once more, in the JSON text.

Rotation, safe with several processes appending to one file: the file's day is the UTC day of
its first line. A process about to write on a later day than its file's renames the file to
``app.ndjson.YYYY-MM-DD`` (by a hard link that fails when that name exists, so two processes
rolling at once never overwrite a day), opens a fresh ``app.ndjson``, and removes the oldest
days beyond the kept count. The clock is injected (``clock``), so a test can turn the days.

Standard library, no structlog: the package's logging is the standard library's everywhere
already (``logging.getLogger(__name__)`` in every module), a JSON formatter is forty lines, and
nothing new has to be installed where the hooks run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

NAME = "app.ndjson"
DEFAULT_KEEP = 14
IDS = ("error_code", "run_id", "decision_id", "job_id", "thread_id")
_RUN_ID = re.compile(r"\brun_\d{8}_\d{6}_[0-9a-f]{6}\b")
_DECISION_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
_ERROR_CODE = re.compile(r"\bE_[A-Z][A-Z0-9_]+\b")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")

Clock = Callable[[], float]


def day_of(timestamp: float) -> str:
    """The UTC day of a time, ``YYYY-MM-DD``."""
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%d")


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON, its texts redacted (see the module doc)."""

    def __init__(self, *, program: str, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._program = program
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        stamp = dt.datetime.fromtimestamp(record.created, dt.UTC)
        fields: dict[str, Any] = {
            "time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "event": self._clean(message),
        }
        for key in IDS:
            given = getattr(record, key, None)
            fields[key] = self._clean(str(given)) if given is not None else None
        if fields["error_code"] is None:
            error = record.exc_info[1] if record.exc_info else None
            code = getattr(error, "code", None)
            found = _ERROR_CODE.search(message)
            fields["error_code"] = (
                code if isinstance(code, str) else (found.group(0) if found else None)
            )
        for key, pattern in (("run_id", _RUN_ID), ("decision_id", _DECISION_ID)):
            if fields[key] is None:
                found = pattern.search(message)
                fields[key] = found.group(0) if found else None
        fields["program"] = self._program
        fields["pid"] = record.process
        if record.exc_info:
            fields["exception"] = self._clean(self.formatException(record.exc_info))
        line = json.dumps(fields, ensure_ascii=False, default=str)
        for secret in self._secrets:  # once more, in the JSON text itself
            line = line.replace(secret, "[redacted]")
        return line

    def _clean(self, text: str) -> str:
        from discord_mcp.outbound.redaction import redact

        return redact(text, self._secrets).text


class DailyFile(logging.Handler):
    """Appends lines to ``directory/app.ndjson``, a file per UTC day, ``keep`` past days kept."""

    def __init__(
        self, directory: Path, *, keep: int = DEFAULT_KEEP, clock: Clock = time.time
    ) -> None:
        super().__init__()
        self.directory = directory
        self.path = directory / NAME
        self.keep = max(1, keep)
        self._clock = clock
        self._fd: int | None = None
        self._day: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            now = self._clock()  # the line's time and its file's day are of one clock
            stamped = logging.makeLogRecord({**record.__dict__, "created": now})
            line = (self.format(stamped) + "\n").encode("utf-8", errors="replace")
            today = day_of(now)
            if self._fd is None or self._day != today:
                self._open(today)
            assert self._fd is not None
            os.write(self._fd, line)
        except Exception:  # logging must never raise into the caller
            self.handleError(record)

    def close(self) -> None:
        self.acquire()
        try:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None
        finally:
            self.release()
        super().close()

    # -- rolling

    def _open(self, today: str) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        started = self._file_day()
        if started is not None and started < today:
            self._retire(started)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._day = today
        self._prune()

    def _file_day(self) -> str | None:
        """The day of ``app.ndjson``'s first line (else of its last change); None: no file."""
        try:
            with self.path.open("rb") as file:
                first = file.readline(4096)
            stat = self.path.stat()
        except OSError:
            return None
        try:
            found = _DAY.match(str(json.loads(first).get("time", "")))
        except (ValueError, AttributeError):
            found = None
        return found.group(0) if found else day_of(stat.st_mtime)

    def _retire(self, day: str) -> None:
        target = self.path.with_name(f"{NAME}.{day}")
        try:
            os.link(self.path, target)  # fails when the day is kept already: never overwritten
        except FileExistsError:
            return  # another process rolled it first
        except OSError:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def _prune(self) -> None:
        days = sorted(
            p for p in self.directory.glob(f"{NAME}.*") if _DAY.fullmatch(p.name[len(NAME) + 1 :])
        )
        for old in days[: -self.keep]:
            with contextlib.suppress(OSError):
                old.unlink()


def settings_from(
    environ: Mapping[str, str], home: Path | None
) -> tuple[int, Path | None, int, list[str]]:
    """``DISCORD_MCP_LOG_LEVEL``, ``DISCORD_MCP_LOG_DIR`` (default ``home/logs``) and
    ``DISCORD_MCP_LOG_KEEP``, with what was wrong in them (a wrong value falls back to its
    default: logging never stops a program from starting)."""
    problems: list[str] = []
    level = logging.INFO
    named = environ.get("DISCORD_MCP_LOG_LEVEL", "").strip().upper()
    if named:
        value = logging.getLevelName(named)
        if isinstance(value, int) and named in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            level = value
        else:
            problems.append(
                f"DISCORD_MCP_LOG_LEVEL={named!r} is not DEBUG, INFO, WARNING, ERROR or "
                "CRITICAL; INFO is used"
            )
    given = environ.get("DISCORD_MCP_LOG_DIR", "").strip()
    directory = Path(given).expanduser() if given else (home / "logs" if home else None)
    if directory is not None and not directory.is_absolute():
        problems.append(f"DISCORD_MCP_LOG_DIR={given!r} is not an absolute path; ignored")
        directory = home / "logs" if home else None
    keep = DEFAULT_KEEP
    text = environ.get("DISCORD_MCP_LOG_KEEP", "").strip()
    if text:
        try:
            keep = int(text)
            if keep < 1:
                raise ValueError(text)
        except ValueError:
            keep = DEFAULT_KEEP
            problems.append(
                f"DISCORD_MCP_LOG_KEEP={text!r} is not a whole number of days >= 1; "
                f"{DEFAULT_KEEP} is used"
            )
    return level, directory, keep, problems
