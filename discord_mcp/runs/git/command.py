"""The one place discord-mcp starts git (and ``gh``): argv lists, bounded waits, no prompts.

Theory. Every call is ``git --no-pager -c core.fsmonitor=false -c core.quotepath=false -c
color.ui=false <args>`` started from an argv list (never a shell) in the directory given, with
stdin from /dev/null, in a session of its own (no controlling terminal, so an ssh or a
credential helper cannot stop to ask on the daemon's terminal), and waited for at most
``within`` seconds off the event loop; a command that takes longer is killed with its whole
process group. The environment is the caller's less every ``GIT_*`` variable (a daemon started
from a git hook must not act on another repository), except the few that say how to reach a
remote or which configuration to read (:data:`KEPT`), plus ``GIT_TERMINAL_PROMPT=0``, no
pager, ``LC_ALL=C`` (git's messages are read in English) and what the caller adds.

Names that come from a repository (a branch, a remote) are checked before they reach an argv
(:func:`check_name`): a name that could read as an option or a revision expression is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 120.0
"""A local git command (status, commit, merge-tree, worktree add)."""
REMOTE_TIMEOUT_S = 180.0
"""A command that talks to a remote (push, ``gh pr create``)."""
_CONFIG = (
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotepath=false",
    "-c",
    "color.ui=false",
)
KEPT = frozenset(
    {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"}
)
"""``GIT_*`` variables of the caller's environment that are kept (how to reach a remote, which
configuration files to read)."""
QUIET = {
    "GIT_TERMINAL_PROMPT": "0",
    "GCM_INTERACTIVE": "never",
    "SSH_ASKPASS_REQUIRE": "never",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "LC_ALL": "C",
    "GH_PROMPT_DISABLED": "1",
    "GH_NO_UPDATE_NOTIFIER": "1",
    "NO_COLOR": "1",
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,199}$")


class GitFailed(Exception):
    """A git (or gh) command could not be run, failed, or took too long.

    Attributes:
        message: what failed and why, in a sentence (git's own last words included).
        code: its exit code (None: it did not run, or was killed).
        stderr: what it wrote on stderr.
    """

    def __init__(self, message: str, *, code: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.stderr = stderr


@dataclass(frozen=True)
class Result:
    """A finished command: its exit code, stdout (bytes) and stderr (text)."""

    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", errors="replace")

    @property
    def line(self) -> str:
        """The first line of stdout, stripped."""
        return (self.text.splitlines() or [""])[0].strip()


def available(env: Mapping[str, str] | None = None) -> bool:
    """Whether git is on the PATH."""
    return _which("git", env) is not None


def available_program(program: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``program`` (``gh``) is on the PATH."""
    return _which(program, env) is not None


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every command gets (see the module doc)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT}
    return {**base, **QUIET, **(extra or {})}


def check_name(name: str, what: str = "branch") -> str:
    """``name`` if it is a plain branch or remote name (letters, digits, ``._/+-``, not
    starting with ``-`` and without ``..``, ``//``, ``@{`` or a ``.lock`` end).

    Raises:
        ValueError: with a sentence naming it.
    """
    bad = (
        not _NAME.match(name)
        or ".." in name
        or "//" in name
        or name.endswith((".lock", "/", "."))
        or "/." in name
    )
    if bad:
        raise ValueError(f"the {what} name {name!r} is not one discord-watch acts on")
    return name


async def git(
    args: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    within: float = GIT_TIMEOUT_S,
    check: bool = True,
) -> Result:
    """Run ``git <args>`` in ``cwd`` (see the module doc).

    Raises:
        GitFailed: git is missing, took longer than ``within`` seconds, or (``check``) ended
            with a non-zero code.
    """
    return await run(["git", *_CONFIG, *args], cwd, env=env, within=within, check=check)


async def run(
    argv: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    within: float = GIT_TIMEOUT_S,
    check: bool = True,
) -> Result:
    """Run a helper program (git, gh) to its end, bounded (see the module doc).

    Raises:
        GitFailed: as :func:`git`.
    """
    environ = environment(env)
    executable = _which(argv[0], environ)
    if executable is None:
        raise GitFailed(f"{argv[0]} is not installed (not on the PATH)")
    try:
        process = await asyncio.create_subprocess_exec(
            executable,
            *argv[1:],
            cwd=cwd,
            env=environ,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise GitFailed(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    what = _what(argv)
    try:
        async with asyncio.timeout(within):
            out, err = await process.communicate()
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise GitFailed(f"{what} took longer than {within:g} s and was stopped") from None
    errors = err.decode("utf-8", errors="replace")
    code = process.returncode if process.returncode is not None else -1
    if check and code != 0:
        last = " ".join(errors.strip().splitlines()[-3:])[-300:]
        raise GitFailed(f"{what} failed ({code}): {last or 'no message'}", code=code, stderr=errors)
    return Result(code, out, errors)


def _what(argv: Sequence[str]) -> str:
    words = [a for a in argv[1:] if not a.startswith("-") and "=" not in a]
    return f"{Path(argv[0]).name} {words[0]}" if words else Path(argv[0]).name


def _which(program: str, env: Mapping[str, str] | None) -> str | None:
    path = (env or os.environ).get("PATH", os.defpath)
    return shutil.which(program, path=path)
