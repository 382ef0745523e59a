"""Run ``discord-mcp hook ...`` as an agent CLI does, and read its answer as that CLI reads it.

:func:`run_hook` starts the hook process with the event's JSON on stdin and kills it when the
CLI would (its hook timeout), failing the test then: a hook that has not answered by then is
one the CLI ignores. :func:`cli_reading` says what the CLI makes of the exit code, stdout and
stderr, as read in the pinned CLIs' sources (scripts/install-agent-clis):

- Gemini CLI 0.61.0 (``hookRunner.ts``): it parses ``stdout`` or, when that is empty,
  ``stderr``; JSON is the answer, plain text is ``allow`` with exit code 0 or 1 and ``deny``
  (the text as reason) with any other code. ``decision`` ``deny``/``block`` stops the call;
  anything else, a timeout or a failure lets it run.
- Claude Code 2.1.330: exit code 2 blocks (``PreToolUse``, stderr as the reason) or denies
  (``PermissionRequest``, telling the model the message of the JSON denial on stdout, if any,
  else a message of its own); exit code 0 has the JSON answer on stdout (or none); any other
  code is a non-blocking error: the call goes on as without the hook.
- Codex 0.169.0 (``hooks/src/events``): exit code 2 blocks or denies with stderr as the reason
  (stdout is not read) unless stderr is empty, which is a failure (so the call goes on); exit
  code 0 has the JSON answer (JSON that does not parse is a failure too).

These readings were checked against the real CLIs with a scripted hook (exit codes 1 and 2, a
JSON denial, both, a timeout, a signal).

:func:`run_configured` runs a hook's whole configured command line through the shell its CLI
uses (:data:`SHELLS`; the table in :mod:`discord_mcp.hooks.guard`), and can kill the hook's
process while it runs, as ``kill -9`` or the OOM killer would.

The verdicts: ``block`` (the call does not run; ``reason`` goes to the agent), ``run``,
``ask`` (Claude's ``PreToolUse`` "ask": the permission prompt decides), and ``none``: a
``PermissionRequest`` hook with no decision (the CLI asks its own way: the terminal, Codex's
reviewer, or, for headless Claude Code, a denial without a reason).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

HOOK = [sys.executable, "-m", "discord_mcp", "hook"]
Verdict = Literal["block", "run", "ask", "none"]
SHELLS = {"claude": ["/bin/sh", "-c"], "codex": ["bash", "-c"], "gemini": ["bash", "-c"]}
"""How each CLI runs a hook's command (Codex: the user's bash or zsh; bash here)."""


@dataclass(frozen=True)
class HookRun:
    code: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"exit {self.code}\nstdout: {self.stdout!r}\nstderr: {self.stderr!r}"


@dataclass(frozen=True)
class Reading:
    verdict: Verdict
    reason: str = ""


def run_hook(
    args: Sequence[str],
    stdin: str | bytes | Mapping[str, Any],
    env: Mapping[str, str],
    *,
    within: float,
    cwd: str | None = None,
    preexec: Callable[[], None] | None = None,
) -> HookRun:
    """Run ``discord-mcp hook <args>`` with ``stdin`` (a payload is sent as JSON); fail the test
    when it has not ended within ``within`` seconds (where the CLI would kill it)."""
    if isinstance(stdin, Mapping):
        data = json.dumps(stdin).encode("utf-8")
    else:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    process = subprocess.Popen(
        [*HOOK, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
        cwd=cwd,
        preexec_fn=preexec,  # a resource limit for the child alone
    )
    try:
        out, err = process.communicate(data, timeout=within)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(
            f"the hook had not answered after {within:g}s, when the CLI kills it: "
            f"{HookRun(-9, out.decode(errors='replace'), err.decode(errors='replace'))}"
        ) from None
    return HookRun(
        process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    )


def run_configured(
    command: str,
    client: str,
    stdin: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    within: float,
    kill: bool = False,
) -> HookRun:
    """Run the configured hook ``command`` as ``client`` does (through its shell, the event on
    stdin). With ``kill``, the hook's own process (the shell's child, once it runs discord-mcp)
    is killed with SIGKILL before it could read the whole event."""
    from tests.support.waiting import until_sync

    process = subprocess.Popen(
        [*SHELLS[client], command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
    )
    assert process.stdin is not None
    try:
        if kill:  # stdin stays open: the hook waits for the rest of its event meanwhile
            hook = until_sync(
                lambda: _hook_child(process.pid), seconds=within, what="the hook's process"
            )
            os.kill(hook, signal.SIGKILL)
        out, err = process.communicate(json.dumps(stdin).encode("utf-8"), timeout=within)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"the hook command had not ended after {within:g}s") from None
    finally:
        process.kill()
        process.wait()
    return HookRun(
        process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    )


def _hook_child(shell: int) -> int | None:
    """The pid of the process that runs discord-mcp for ``shell``, once there is one."""
    with os.scandir("/proc") as entries:
        pids = [entry.name for entry in entries if entry.name.isdigit()]
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if shell in (parent, int(pid)) and b"hook" in argv and b"discord_mcp" in argv:
            return int(pid)  # the shell's child, or the shell itself once it exec'd the hook
    return None


def cli_reading(client: str, event: str, run: HookRun) -> Reading:
    """What ``client`` makes of ``run``, the answer of its ``event`` hook."""
    if client == "gemini":
        return _gemini(run)
    if run.code == 2:
        if client == "claude" and event == "permission-request":
            return Reading("block", _claude_denial(run.stdout))
        reason = run.stderr.strip()
        if client == "codex" and not reason:
            return _no_decision(event)
        return Reading("block", reason)
    if run.code != 0:
        return _no_decision(event)
    text = run.stdout.strip()
    if not text:
        return _no_decision(event)
    try:
        answer = json.loads(text)
    except ValueError:
        return _no_decision(event)
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    if not isinstance(specific, dict):
        return _no_decision(event)
    if event == "permission-request":
        decision = specific.get("decision") or {}
        if decision.get("behavior") == "deny":
            return Reading("block", str(decision.get("message") or ""))
        return Reading("run") if decision.get("behavior") == "allow" else Reading("none")
    verdict = specific.get("permissionDecision")
    reason = str(specific.get("permissionDecisionReason") or "")
    if verdict == "deny":
        return Reading("block", reason)
    return Reading("ask", reason) if verdict == "ask" else Reading("run")


def _claude_denial(stdout: str) -> str:
    """The message of a ``PermissionRequest`` JSON denial ("" when there is none)."""
    try:
        answer = json.loads(stdout.strip() or "null")
    except ValueError:
        return ""
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    decision = specific.get("decision") if isinstance(specific, dict) else None
    if isinstance(decision, dict) and decision.get("behavior") == "deny":
        return str(decision.get("message") or "")
    return ""


def _no_decision(event: str) -> Reading:
    return Reading("none") if event == "permission-request" else Reading("run")


def _gemini(run: HookRun) -> Reading:
    text = run.stdout.strip() or run.stderr.strip()
    if not text:
        return Reading("run")
    try:
        answer = json.loads(text)
        if isinstance(answer, str):
            answer = json.loads(answer)
    except ValueError:
        if run.code in (0, 1):
            return Reading("run")
        return Reading("block", text)
    if not isinstance(answer, dict):
        return Reading("run")
    if answer.get("continue") is False:
        return Reading("block", str(answer.get("stopReason") or answer.get("reason") or ""))
    if answer.get("decision") in ("deny", "block"):
        return Reading("block", str(answer.get("reason") or ""))
    return Reading("run")


def _processes() -> dict[int, tuple[int, list[bytes]]]:
    """Every live process: pid -> (parent pid, argv)."""
    with os.scandir("/proc") as entries:
        pids = [int(entry.name) for entry in entries if entry.name.isdigit()]
    found = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if fields[0] not in ("Z", "X"):
            found[pid] = (int(fields[1]), argv)
    return found


def hook_processes(event: str, *, under: int) -> list[int]:
    """The Python processes running ``discord-mcp hook <event>`` that descend from ``under``
    (a CLI this test started, or this test's own process): never another test's."""
    table = _processes()

    def descends(pid: int) -> bool:
        seen = set()
        while pid not in seen and pid > 1:
            if pid == under:
                return True
            seen.add(pid)
            pid = table.get(pid, (0, []))[0]
        return False

    found = []
    for pid, (_, argv) in table.items():
        words = [w.decode("utf-8", "replace") for w in argv]
        if "hook" not in words or event not in words or not descends(pid):
            continue
        try:
            program = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            continue
        if program.startswith("python"):  # not its shell, not uvx
            found.append(pid)
    return found


def kill_hook(event: str, *, under: int) -> int:
    """SIGKILL the one hook process for ``event`` under ``under`` (as the OOM killer would)."""
    [pid] = hook_processes(event, under=under)
    os.kill(pid, signal.SIGKILL)
    return pid
