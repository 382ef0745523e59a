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
JSON denial, both, a timeout).

The verdicts: ``block`` (the call does not run; ``reason`` goes to the agent), ``run``,
``ask`` (Claude's ``PreToolUse`` "ask": the permission prompt decides), and ``none``: a
``PermissionRequest`` hook with no decision (the CLI asks its own way: the terminal, Codex's
reviewer, or, for headless Claude Code, a denial without a reason).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

HOOK = [sys.executable, "-m", "discord_mcp", "hook"]
Verdict = Literal["block", "run", "ask", "none"]


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
