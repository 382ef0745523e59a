"""``discord-watch submit|logs|stop|resume``: driving runs from a shell (seed 001), so a script
or another agent can do what the owner does in Discord.

::

    discord-watch submit PROJECT PROMPT [--tool T] [--model M] [--wait] [--timeout S] [--json]
    discord-watch resume THREAD PROMPT [--wait] [--timeout S] [--json]
    discord-watch stop JOB|THREAD [--json]
    discord-watch logs JOB|THREAD [--lines N] [--json]

``submit``, ``resume`` and ``stop`` ask the running daemon (:mod:`.request_files`); ``logs``
reads the state directory itself, so it works with or without a daemon. Without ``--wait`` a
submit returns once the job is queued (a new run thread in Discord shows it); with it, once
the job is over, following an automatic retry or a usage-limit hold to the end.

Output: one line of text, or with ``--json`` one JSON object (``"ok": true`` and the job:
``job_id``, ``thread_id``, ``thread_url``, ``project``, ``tool``, ``state``, ``attempt``,
``retried_by``, ``error_code``, ``error_message``, ``final_text``, ``duration``, ``usage``,
``cost_usd``; or ``"ok": false``, ``code``, ``message``). Exit codes:

====  ===========================================================================
0     done: queued, stopped, logs shown; with ``--wait``, the job succeeded
1     with ``--wait``: the job failed, was cancelled, or was lost in a crash
2     refused: bad arguments or an engine error code (E_PROJECT_NOT_FOUND, ...)
3     no daemon answered (it is not running): start ``discord-watch`` first
4     with ``--wait --timeout``: the time ran out; the job goes on (its state is printed)
====  ===========================================================================
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError, StateError
from discord_mcp.watch.request_files import ANSWER_WITHIN_S, RequestBox

COMMANDS = ("submit", "resume", "stop", "logs")
FINISHED = frozenset({"success", "failed", "unknown_after_crash", "cancelled"})
ALIVE_WITHIN_S = 90.0
"""A daemon that has not noted it is alive for this long is not running (it notes every 20 s)."""
WAIT_POLL_S = 0.5
OK, FAILED, REFUSED, NO_DAEMON, TIMED_OUT = 0, 1, 2, 3, 4


class ShellError(Exception):
    def __init__(self, code: str, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code


def add_commands(sub: Any) -> None:
    """Add the shell commands to ``discord-watch``'s subcommands."""
    submit = sub.add_parser("submit", help="start a run in a new thread of a project")
    submit.add_argument("project")
    submit.add_argument("prompt")
    submit.add_argument("--tool", help="claude, codex or gemini (default: the project's)")
    submit.add_argument("--model", help="the model (default: the CLI's)")
    resume = sub.add_parser("resume", help="give a run thread its next job")
    resume.add_argument("thread", help="the run thread's id")
    resume.add_argument("prompt")
    for parser in (submit, resume):
        parser.add_argument("--wait", action="store_true", help="return when the job is over")
        parser.add_argument(
            "--timeout", type=float, default=0.0, help="with --wait: at most this many seconds"
        )
    stop = sub.add_parser("stop", help="stop a running job (or cancel a waiting one)")
    stop.add_argument("target", metavar="JOB|THREAD")
    logs = sub.add_parser("logs", help="the tail of a job's log (a thread: its latest job)")
    logs.add_argument("target", metavar="JOB|THREAD")
    logs.add_argument("--lines", type=int, default=40, help="stdout lines to show (default 40)")
    for parser in (submit, resume, stop, logs):
        parser.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace, home: Path) -> int:
    """Run one shell command; print its result; return the exit code."""
    try:
        if args.command == "logs":
            result, code = _logs(home, args.target, args.lines), OK
        elif args.command == "stop":
            result, code = _ask(home, "stop", {"target": args.target}), OK
        else:
            result, code = _run(home, args)
    except ShellError as exc:
        if args.json:
            _print({"ok": False, "code": exc.code, "message": exc.message})
        else:
            sys.stderr.write(f"discord-watch: {exc.code}: {exc.message}\n")
        return exc.exit_code
    if args.json:
        _print({"ok": True, **result})
    else:
        sys.stdout.write(_text(args.command, result) + "\n")
        if code == TIMED_OUT:
            sys.stderr.write(
                f"discord-watch: --timeout {args.timeout:g} s ran out before the job ended; "
                f"it goes on ({result.get('state')}): discord-watch logs {result.get('job_id')}\n"
            )
    return code


def _run(home: Path, args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    if args.command == "submit":
        request = {"project": args.project, "prompt": args.prompt}
        request |= {k: v for k in ("tool", "model") if (v := getattr(args, k))}
        job = _ask(home, "submit", request)
    else:
        job = _ask(home, "resume", {"thread": args.thread, "prompt": args.prompt})
    if not args.wait:
        return job, OK
    deadline = time.monotonic() + args.timeout if args.timeout > 0 else None
    while True:
        if job["state"] in FINISHED and not job.get("retried_by"):
            return job, OK if job["state"] == "success" else FAILED
        if job["state"] in FINISHED:  # retried on its own: follow the retry
            job = _ask(home, "job", {"job_id": job["retried_by"]})
            continue
        if deadline is not None and time.monotonic() >= deadline:
            return job, TIMED_OUT
        time.sleep(WAIT_POLL_S)
        job = _ask(home, "job", {"job_id": job["job_id"]})


def _ask(home: Path, command: str, args: dict[str, Any]) -> dict[str, Any]:
    """Ask the daemon; its result, or a ShellError."""
    _check_alive(home)
    box = RequestBox(home)
    request_id = box.send(command, args)
    limit = time.monotonic() + ANSWER_WITHIN_S
    while time.monotonic() < limit:
        reply = box.reply(request_id)
        if reply is not None:
            if reply.get("ok"):
                return dict(reply.get("result") or {})
            raise ShellError(str(reply.get("code")), str(reply.get("message")), REFUSED)
        time.sleep(0.05)
    if box.withdraw(request_id):
        raise _no_daemon(f"it did not answer within {ANSWER_WITHIN_S:g} s")
    raise ShellError("E_NO_ANSWER", "the daemon took the request but did not answer", NO_DAEMON)


def _check_alive(home: Path) -> None:
    from discord_mcp.watch.downtime import Downtime

    last = Downtime(home, wall=time.time).down_since  # its last note that it was alive
    if last is None or time.time() - last > ALIVE_WITHIN_S:
        raise _no_daemon("no recent sign of life in the state directory")


def _no_daemon(why: str) -> ShellError:
    return ShellError(
        "E_DAEMON_NOT_RUNNING",
        f"discord-watch is not running ({why}): start it first (discord-watch run)",
        NO_DAEMON,
    )


def _logs(home: Path, target: str, lines: int) -> dict[str, Any]:
    from discord_mcp.runs.journal import load
    from discord_mcp.runs.runner import JobPaths

    try:
        state = load(home / "runs").state
    except (RunError, StateError) as exc:
        raise ShellError("E_STATE", str(exc), REFUSED) from None
    job = state.jobs.get(target)
    if job is None:
        ran = [j for j in state.jobs.values() if j.thread_id == target and j.state != "queued"]
        job = max(ran, key=lambda j: j.number, default=None)
    if job is None:
        raise ShellError(
            "E_JOB_NOT_FOUND", f"{target!r} is neither a job nor a thread with a job", REFUSED
        )
    paths = JobPaths.for_job(home, job.job_id)
    stdout = _tail(paths.stdout, max(1, lines))
    return {
        "job_id": job.job_id,
        "thread_id": job.thread_id,
        "state": job.state,
        "tool": job.tool,
        "stdout": stdout,
        "stderr": _tail(paths.stderr, 20),
        "text": readable(job.tool, stdout),
    }


def readable(tool: str | None, lines: list[str]) -> list[str]:
    """A CLI's JSON event lines as a person reads them: what the agent said, each tool call;
    lines that are not events are kept as they are."""
    from discord_mcp.runs.adapters import adapter_for

    if not tool:
        return list(lines)
    adapter = adapter_for(tool)  # an ACP agent's transcript reads the same way
    decoder = adapter.decoder()
    shown: list[str] = []
    for line in lines:
        calls, said = decoder.tool_call_count, decoder.last_text
        if not line.lstrip().startswith("{"):
            shown.append(line)
            continue
        decoder.feed(line)
        new = decoder.tool_call_count - calls
        if new > 0:
            shown += [f"→ {c.name} {c.summary}".rstrip() for c in decoder.tool_calls[-new:]]
        if decoder.last_text and decoder.last_text != said:
            shown.append(f"{tool}: {decoder.last_text}")
    if decoder.final_text and f"{tool}: {decoder.final_text}" not in shown[-1:]:
        shown.append(f"{tool} (final): {decoder.final_text}")
    return shown


def _tail(path: Path, lines: int) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - 256 * 1024))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


def _text(command: str, result: dict[str, Any]) -> str:
    if command == "logs":
        head = f"# {result['job_id']} ({result['state']}) in thread {result['thread_id']}"
        body = "\n".join(result["text"]) or "(no output)"
        err = "\n".join(result["stderr"])
        return head + "\n" + body + (f"\n# stderr\n{err}" if err else "")
    if command == "stop":
        if result.get("stopped") is None:
            return f"nothing is running in thread {result['thread_id']}"
        return f"stopped {result['stopped']} ({result.get('was', 'running')})"
    if result["state"] in FINISHED:
        if result["state"] == "success":
            return str(result.get("final_text") or "(the agent gave no text)")
        failure = f"{result['error_code']}: {result['error_message']}"
        return f"{result['job_id']} {result['state']}: {failure}"
    return (
        f"{result['job_id']} {result['state']} in thread {result['thread_id']} "
        f"({result['project']}, {result['tool'] or 'its tool'}): {result['thread_url']}"
    )


def _print(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
