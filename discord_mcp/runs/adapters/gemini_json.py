"""Gemini CLI's ``--output-format json`` mode (seed 000, issue 34), where stream-json is not
available: an older Gemini CLI, or the owner's setting.

Which mode a run uses (:func:`output_format`): the project's Gemini arguments when they name
one (``--output-format json``, ``--output-format=json``, ``-o json``; the adapter then adds no
``--output-format`` of its own), else ``DISCORD_WATCH_GEMINI_OUTPUT`` (``stream-json``, the
default, or ``json``). Any other value (``text``) is refused: a run whose output we cannot read
is not started.

In json mode Gemini writes ONE JSON object when the turn ends, pretty-printed over many lines
(captured from the pinned Gemini CLI 0.61)::

    {
      "session_id": "7cce638e-…",
      "response": "Hello from json.",
      "stats": {"models": {"gemini-2.5-flash": {"tokens": {"input": 10, "candidates": 5,
                "total": 15, "cached": 0, …}, …}}, "tools": {…}, "files": {…}}
    }

On an error it exits non-zero and writes ``{"session_id", "error": {"type", "message",
"code"}}`` to stderr instead (the engine shows stderr's tail). :class:`JsonResult` gathers the
lines of that object (lines outside it are diagnostics, counted and never fatal) and reads it:
the answer, the session id and the usage, summed over the models the turn used (the router's
included). Nothing streams in this mode: the answer arrives whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.base import as_int
from discord_mcp.runs.journal.views import Usage

OUTPUT_VARIABLE = "DISCORD_WATCH_GEMINI_OUTPUT"
OutputFormat = Literal["stream-json", "json"]
FORMATS: tuple[OutputFormat, ...] = ("stream-json", "json")
_FLAGS = ("--output-format", "-o")
_MAX_CHARS = 4_000_000


def output_format(default_args: Sequence[str], env: Mapping[str, str]) -> tuple[OutputFormat, bool]:
    """The run's output format, and whether the project's arguments name it already.

    Raises:
        RunError: E_INVALID_ARGS (a format we cannot read in the project's arguments) or
            E_BAD_ARGUMENTS (in ``DISCORD_WATCH_GEMINI_OUTPUT``).
    """
    named = _named(default_args)
    if named is not None:
        if named not in FORMATS:
            raise RunError(
                "E_INVALID_ARGS",
                f"the project's gemini arguments ask for --output-format {named!r}; "
                "discord-watch reads only stream-json or json",
            )
        return named, True
    raw = (env.get(OUTPUT_VARIABLE) or "stream-json").strip()
    if raw not in FORMATS:
        raise RunError(
            "E_BAD_ARGUMENTS",
            f"{OUTPUT_VARIABLE}={raw!r}: use stream-json (the default) or json",
        )
    return raw, False


def _named(args: Sequence[str]) -> str | None:
    found: str | None = None
    for index, arg in enumerate(args):
        for flag in _FLAGS:
            if arg == flag:
                found = args[index + 1] if index + 1 < len(args) else ""
            elif arg.startswith(flag + "="):
                found = arg[len(flag) + 1 :]
    return found


@dataclass(frozen=True)
class GeminiResult:
    """What the json mode's single object says."""

    session_id: str | None
    response: str | None
    usage: Usage | None
    error: str | None


class JsonResult:
    """Gathers the lines of json mode's one object; :attr:`result` once it is whole."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._size = 0
        self.result: GeminiResult | None = None
        self.diagnostics = 0  # lines outside the object (credentials notes, retries)
        self.unreadable = 0  # an object that closed but would not parse

    @property
    def gathering(self) -> bool:
        return bool(self._lines)

    def feed(self, line: str) -> bool:
        """Take one stdout line; True when it completed the object."""
        text = line.rstrip("\r\n")
        stripped = text.strip()
        if not self._lines and not stripped.startswith("{"):
            self.diagnostics += 1
            return False
        self._lines.append(text)
        self._size += len(text)
        if self._size > _MAX_CHARS:  # not the object we know: never held without bound
            self.unreadable += 1
            self._lines, self._size = [], 0
            return False
        if not stripped.endswith("}"):
            return False
        if len(self._lines) > 1 and text[:1].isspace():
            return False  # an inner object closed (the object is pretty-printed)
        joined = "\n".join(self._lines)
        self._lines, self._size = [], 0
        try:
            document = json.loads(joined)
        except ValueError:
            self.unreadable += 1
            return False
        self.result = parse(document)
        if self.result is None:
            self.unreadable += 1
        return self.result is not None


def parse(document: Any) -> GeminiResult | None:
    """Read json mode's object; None when it is not one (no response, no error)."""
    if not isinstance(document, Mapping):
        return None
    session = document.get("session_id")
    response = document.get("response")
    error = document.get("error")
    if not isinstance(response, str) and not isinstance(error, Mapping):
        return None
    message = None
    if isinstance(error, Mapping):
        message = str(error.get("message") or error.get("type") or "an error without a message")
    return GeminiResult(
        session_id=session if isinstance(session, str) and session else None,
        response=response if isinstance(response, str) else None,
        usage=usage_of(document.get("stats")),
        error=message,
    )


def usage_of(stats: Any) -> Usage | None:
    """The turn's tokens, summed over every model it used; None when it names none."""
    models = stats.get("models") if isinstance(stats, Mapping) else None
    if not isinstance(models, Mapping):
        return None
    sums: dict[str, int | None] = {}
    for model in models.values():
        tokens = model.get("tokens") if isinstance(model, Mapping) else None
        if not isinstance(tokens, Mapping):
            continue
        for ours, theirs in (
            ("input", "input"),
            ("output", "candidates"),
            ("cached", "cached"),
            ("total", "total"),
        ):
            value = as_int(tokens.get(theirs))
            if value is not None:
                sums[ours] = (sums.get(ours) or 0) + value
    if not sums:
        return None
    return Usage(
        input_tokens=sums.get("input"),
        output_tokens=sums.get("output"),
        cached_input_tokens=sums.get("cached"),
        total_tokens=sums.get("total"),
    )


def error_in(stderr_tail: str) -> str | None:
    """The message of json mode's error object, which Gemini writes to stderr last (None: none
    there, or its start fell out of the tail)."""
    start = stderr_tail.rfind("\n{\n")
    if start < 0:
        start = 0 if stderr_tail.startswith("{\n") else -1
    if start < 0:
        return None
    try:
        document = json.loads(stderr_tail[start:])
    except ValueError:
        return None
    found = parse(document)
    return found.error if found is not None else None
