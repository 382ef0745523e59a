"""The guard hooks' rule: every path ends in an explicit answer, before the CLI's hook timeout.

Theory. A guard hook (``permission-request``, ``before-tool``, ``pre-tool-use``) stands between
an agent and a tool call, and the three CLIs read a hook that fails, prints nothing useful or
is killed at its timeout as "no opinion": the call goes on (Gemini CLI 0.61.0 even reads a failed
hook's plain-text stderr with exit code 1 as an *allow*). So a guard answers on every path, in
the form its CLI honours:

- on any failure (Discord unreachable, a refused token, a rate limit past the wait, a state
  directory that cannot be written, settings missing or invalid, an event that cannot be read,
  any exception): exit code 2, one sentence on stderr, and the CLI's own JSON denial with the
  same sentence on stdout (:func:`blocked`). Each CLI takes the part it honours best (seen with
  the pinned CLIs, headless): Claude Code's ``PreToolUse`` and Codex's hooks block on exit code
  2 with stderr as the reason (Codex ignores stdout then); Claude Code's ``PermissionRequest``
  denies on exit code 2 but tells the model the reason of its JSON; Gemini CLI reads stdout
  first. Exit code 1 or a timeout, by contrast, lets the call run in Gemini CLI and in both
  CLIs' ``PreToolUse``, and leaves Codex's ``PermissionRequest`` to its automatic reviewer.
  The one exception is Claude Code's ``permission-request`` in an attended session: no
  decision, so the terminal's dialog, already on screen, asks the person there.
- before one deadline per process, counted from its start: the CLI's hook timeout
  (``--timeout``; without it the CLI's default: 600 s for Claude Code and Codex, 60 s for Gemini
  CLI) less :func:`margin`. Posting, the owner's wait and the answer all fit before it: the wait
  is cut to what is left once the card is posted (:data:`TEARDOWN_S` kept for closing the
  card), an async deadline :data:`SETTLE_S` earlier ends whatever still runs (a rate-limited
  thread, a Discord that hangs), and a watchdog thread answers at the deadline itself if the
  process is stuck anywhere else (a lock, a blocking read).

The answer is written once (whichever thread comes first; :class:`HookProcess`), and the process
ends at once with ``os._exit``: the CLI waits for the process, not for its output, and nothing
left to close may delay it. What must last is on disk already; what must not outlive the process
(its lease) is removed first.

The reason is one sentence for the agent: what happened, never a traceback, never the token.

A hook that is killed answers nothing (``kill -9``, the OOM killer: no code of ours runs), so the
command each CLI is configured with is a small shell wrapper around the hook (:func:`command`):
the hook's own answer (exit code 0, or 2 with its reason) passes through, and any other end (a
signal, exit code 1 from a Python that cannot even start, 127 for a program that is gone) becomes
exit code 2 with a sentence on stderr, which every CLI reads as a block. The wrapper is the
shell's compound command ``<hook> || { ...; exit 2; }``: no shell can ``exec`` the hook in its
place, so a parent always sees its death (with ``uvx`` between, uv passes the hook's exit code
on, 128 + the signal's number for a signal). How the pinned CLIs run a hook and read its end
(seen with each, headless, on Linux)::

    CLI / event                 shell             exit 2          exit 1, 3..   signal     timeout
    Claude PreToolUse           /bin/sh -c        block (stderr)  runs          runs       runs
      with onFailure "block"                      block           block         block      block
    Claude PermissionRequest    /bin/sh -c        deny            no decision   no dec.    no dec.
    Codex PreToolUse            login shell -c    block (stderr)  runs          runs       runs
    Codex PermissionRequest     login shell -c    deny (stderr)   no decision   no dec.    no dec.
    Gemini BeforeTool           bash -c           deny (stderr)   1: ALLOWS     runs       runs

"Login shell" is the user's shell from the password database when it is bash or zsh, else bash
(Codex 0.169.0 ignores ``$SHELL``; it runs ``-c``, not ``-lc``); the wrapper is POSIX shell, the
same in all of them. Codex and Gemini CLI take exit code 2 as a block only with a reason: Codex
needs it on stderr (without it, a failed hook: the call runs), and Gemini CLI reads no exit code
at all, only a JSON decision on stdout or, failing that, stderr's text, which with an exit code
of 2 or more is a deny (and with 1 an allow). Hence the sentence. "No decision" for Claude
Code's ``PermissionRequest`` is its own permission flow (the terminal's dialog; headless, a
denial or the permission-prompt tool), so the call never runs unasked there; the wrapper makes a
dead hook a denial all the same, one rule for every guard. At the CLI's timeout the CLI kills
the wrapper and ignores whatever comes after, so the wrapper cannot help there: the hook's own
deadline (above) answers first, and Claude Code runs' hooks also carry ``onFailure: "block"``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

from discord_mcp.errors import (
    CloudflareBanned,
    ConfigError,
    DiscordError,
    DiscordHTTPError,
    DiscordServerError,
    DiscordTransportError,
    Forbidden,
    GatewayError,
    RateLimited,
    StateError,
    StateFull,
    Unauthorized,
)

log = logging.getLogger(__name__)

GUARD_EVENTS = frozenset({"permission-request", "before-tool", "pre-tool-use", "network"})
DEFAULT_TIMEOUT_S = {"claude": 600.0, "codex": 600.0, "gemini": 60.0}
"""Each CLI's hook timeout when the hook's configuration names none, in seconds (Claude Code
2.1.330 and Codex 0.169.0: 600; Gemini CLI 0.61.0: 60 000 ms)."""
SETTLE_S = 3.0
"""Between the async deadline (the work still running is cancelled) and the process's deadline."""
TEARDOWN_S = 5.0
"""Kept after the owner's wait for closing the card ("no one answered") and marking it."""
MAX_EVENT_CHARS = 64 * 1024 * 1024
"""A larger event is not read (its tool call is blocked): no hook holds the agent up to parse
it, and no card could show it."""


KILLED = "The guard hook ended without an answer (exit status $s), so this tool call was not run."
"""What the wrapper says when the hook ended any other way than with its answer (``$s``: the
shell fills in the exit status, 137 for ``kill -9``)."""
FAIL_CLOSED = f' || {{ s=$?; [ "$s" -eq 2 ] || echo "{KILLED}" >&2; exit 2; }}'
"""What follows the hook's words in the shell command a CLI runs (see the module doc)."""


def command(argv: Sequence[str]) -> str:
    """The shell command a CLI runs for the guard hook ``argv``: a hook that ends without its
    answer (killed, or a Python that cannot start) blocks the call (see the module doc)."""
    return shlex.join(argv) + FAIL_CLOSED


def fails_closed(line: str) -> bool:
    """Whether the hook command ``line`` (from a CLI's configuration) blocks the call when the
    hook is killed (it was written by :func:`command`)."""
    return line.rstrip().endswith(FAIL_CLOSED)


def hook_words(line: str) -> list[str]:
    """The hook's own words in the command ``line`` (without the wrapper); [] when unreadable."""
    try:
        return shlex.split(line.rstrip().removesuffix(FAIL_CLOSED))
    except ValueError:
        return []


def margin(timeout: float) -> float:
    """How long before the CLI's timeout a hook gives its answer: Python's start, the CLI's own
    reading, a loaded machine (10 %, at least 5 s and at most 15 s)."""
    return min(max(timeout * 0.1, 5.0), 15.0)


def budget(timeout: float | None, client: str) -> float:
    """Seconds from the process's start to its deadline, for a CLI hook ``timeout``."""
    limit = timeout if timeout is not None else DEFAULT_TIMEOUT_S.get(client, 60.0)
    return max(0.0, limit - margin(limit))


class Unreadable(ValueError):
    """The hook's event cannot be read as the call it should describe (the message says why)."""


class OutOfTime(Exception):
    """The hook's deadline came before an answer."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"no answer within {_duration(seconds)}")


class BadCommandLine(ValueError):
    """The hook's own arguments are invalid (the message says which)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What the hook process prints, and its exit code."""

    stdout: dict[str, Any] | None = None
    stderr: str = ""
    code: int = 0


def blocked(event: str, client: str, reason: str, *, attended: bool) -> Reply:
    """The answer that keeps the call from running, in every form ``client`` honours."""
    if event == "permission-request" and client == "claude" and attended:
        return Reply(None, reason + "\n", 0)  # no decision: the terminal's dialog asks
    denial: dict[str, Any]
    if event == "before-tool" or (event == "network" and client == "gemini"):
        denial = {"decision": "deny", "reason": reason}
    elif event == "permission-request":
        decision = {"behavior": "deny", "message": reason}
        denial = {
            "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
        }
    else:
        denial = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    return Reply(denial, reason + "\n", 2)


def read_event(stdin: TextIO, *, guard: bool) -> dict[str, Any]:
    """The event's JSON object; a guard's must name its tool and give its input as an object.

    Raises:
        Unreadable: what is wrong with it.
    """
    try:
        raw = stdin.read(MAX_EVENT_CHARS + 1)
    except UnicodeDecodeError:
        raise Unreadable("the event is not UTF-8 text") from None
    if len(raw) > MAX_EVENT_CHARS:
        raise Unreadable(f"the event is larger than {MAX_EVENT_CHARS // (1024 * 1024)} MiB")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise Unreadable("the event is not JSON") from None
    if not isinstance(payload, dict):
        raise Unreadable("the event is not a JSON object")
    if guard:
        name = payload.get("tool_name")
        if not isinstance(name, str) or not name.strip():
            raise Unreadable("the event's tool_name is missing or not text")
        if not isinstance(payload.get("tool_input"), dict):
            raise Unreadable("the event's tool_input is missing or not an object")
    return payload


def _duration(seconds: float) -> str:
    """A hook's time in words: whole seconds, never "0 s" (less than one is said so)."""
    if not seconds >= 1:  # NaN too
        return "less than a second"
    whole = round(seconds)
    return "1 second" if whole == 1 else f"{whole} seconds"


def reason_for(exc: BaseException) -> str:
    """One sentence for the agent: why its call was not run."""
    if isinstance(exc, Unreadable):
        return f"This tool call was not run: the approval hook could not read it ({exc})."
    if isinstance(exc, BadCommandLine):
        return f"This tool call was not run: the approval hook's command line is invalid ({exc})."
    if isinstance(exc, OutOfTime):
        return (
            "The owner could not be asked in time, so this tool call was not run: Discord did "
            f"not answer in the time this hook may take ({_duration(exc.seconds)})."
        )
    return f"The owner could not be asked, so this tool call was not run: {_cause(exc)}."


def _cause(exc: BaseException) -> str:
    if isinstance(exc, ConfigError):
        return f"discord-mcp is not set up for this hook ({exc.variable} {exc.problem})"
    if isinstance(exc, Unauthorized):
        return "Discord rejected the bot token (HTTP 401)"
    if isinstance(exc, RateLimited):
        return (
            f"Discord's rate limit holds the bot for another {exc.retry_after:.0f} s, longer "
            "than this hook may wait"
        )
    if isinstance(exc, CloudflareBanned):
        return "Discord's edge refused the bot (a temporary ban of this address after a rate limit)"
    if isinstance(exc, Forbidden):
        return f"Discord refused the bot (HTTP 403 on {exc.method} {exc.route}: {exc.message})"
    if isinstance(exc, DiscordServerError):
        return f"Discord is failing (HTTP {exc.status} on {exc.method} {exc.route})"
    if isinstance(exc, DiscordHTTPError):
        return f"Discord refused the request (HTTP {exc.status} on {exc.method} {exc.route})"
    if isinstance(exc, DiscordTransportError):
        return f"Discord is unreachable ({_first_sentence(exc)})"
    if isinstance(exc, GatewayError):
        return f"Discord's gateway refused the bot ({_first_sentence(exc)})"
    if isinstance(exc, DiscordError):
        return f"Discord failed ({_first_sentence(exc)})"
    if isinstance(exc, StateFull):
        return f"the state directory's disk is full ({_first_sentence(exc)})"
    if isinstance(exc, StateError):
        return f"the state directory cannot be used ({_first_sentence(exc)})"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"the state directory cannot be used ({exc.strerror or type(exc).__name__}{where})"
    return (
        f"the approval hook failed with an unexpected {type(exc).__name__} (details in its log "
        "file when it could write one)"
    )


def _first_sentence(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return re.split(r"\.\s+(?=[A-Z])", text, maxsplit=1)[0].rstrip(".")


def scrub(reason: str, secrets: Iterable[str]) -> str:
    """``reason`` on one line, without any secret (the token, known or by its shape)."""
    from discord_mcp.outbound.redaction import redact

    line = " ".join(redact(reason, [s for s in secrets if s]).text.split())
    return line if len(line) <= 1000 else line[:997] + "..."


def secrets_of(environ: Mapping[str, str], env_file: str | None) -> list[str]:
    """The token values this hook may know of (to keep them out of what it prints)."""
    found = [environ.get("DISCORD_BOT_TOKEN", "")]
    path = env_file or environ.get("DISCORD_MCP_ENV_FILE", "")
    if path:
        with contextlib.suppress(Exception):
            from dotenv import dotenv_values

            found.append(str(dotenv_values(path, encoding="utf-8").get("DISCORD_BOT_TOKEN") or ""))
    for token in list(found):
        if token.lower().startswith("bot "):
            found.append(token[4:].strip())
    return [t for t in found if t]


def emit(reply: Reply, stdout: TextIO, stderr: TextIO) -> int:
    """Write ``reply``; its exit code."""
    if reply.stdout is not None:
        stdout.write(json.dumps(reply.stdout) + "\n")
    stdout.flush()
    if reply.stderr:
        stderr.write(reply.stderr)
    stderr.flush()
    return reply.code


class HookProcess:
    """The one way a hook process answers and ends: once, from whichever thread comes first.

    Args:
        failure: the reply for a failure, given its reason.
        secrets: values never to print (more with :meth:`keep_secret`).
    """

    def __init__(
        self,
        failure: Callable[[str], Reply],
        *,
        secrets: Iterable[str] = (),
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self._failure = failure
        self._secrets = list(secrets)
        self._stdout = stdout or sys.stdout
        self._stderr = stderr or sys.stderr
        self._ending = threading.Lock()
        self._cleanups: list[Callable[[], None]] = []
        self.deadline: float | None = None
        """When the process answers at the latest (``time.monotonic``; set by :meth:`watch`)."""
        self.allowed = 0.0
        """Seconds the process had in all."""

    def keep_secret(self, value: str) -> None:
        if value:
            self._secrets.append(value)

    def on_exit(self, cleanup: Callable[[], None]) -> None:
        """Run ``cleanup`` just before the process ends (say, removing its lease file)."""
        self._cleanups.append(cleanup)

    def failure(self, exc: BaseException) -> Reply:
        """The reply for ``exc``, its reason scrubbed."""
        return self._failure(scrub(reason_for(exc), self._secrets))

    def watch(self, deadline: float, allowed: float) -> None:
        """Answer with :class:`OutOfTime` (``allowed`` seconds were not enough) at ``deadline``
        (``time.monotonic``), whatever else the process is doing then."""
        self.deadline, self.allowed = deadline, allowed
        seconds = max(0.0, deadline - time.monotonic())
        timer = threading.Timer(seconds, lambda: self.end(self.failure(OutOfTime(allowed))))
        timer.daemon = True
        timer.name = "hook-deadline"
        timer.start()

    def answer(self, answer: dict[str, Any] | None) -> NoReturn:
        self.end(Reply(answer))

    def fail(self, exc: BaseException) -> NoReturn:
        self.end(self.failure(exc))

    def end(self, reply: Reply) -> NoReturn:
        """Print ``reply`` and end the process now (a second caller waits for that)."""
        if not self._ending.acquire(blocking=False):
            threading.Event().wait()  # another thread is ending the process
        for cleanup in self._cleanups:
            with contextlib.suppress(Exception):
                cleanup()
        files = sys.modules.get("discord_mcp.state.files")  # loaded: state was written to
        if files is not None:
            with contextlib.suppress(Exception):
                files.remove_unfinished_writes()  # a write cut short leaves no temporary file
        code = reply.code
        try:
            code = emit(reply, self._stdout, self._stderr)
        except Exception:  # nothing to tell it with: the exit code still blocks
            code = reply.code
        os._exit(code)
