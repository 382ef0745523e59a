"""``discord-watch submit|resume|stop|logs|status RUN_ID``: runs from a shell (seed 001, issue
23), so a script or another agent can hand a coding task to a CLI and read the result.

::

    discord-watch submit PROJECT MESSAGE [--tool T] [--model M] [--context FILE ...]
                         [--no-network] [--worktree | --no-worktree] [--timeout S]
                         [--intent WORD] [--allowed-root PATH ...]
                         [--wait [--wait-timeout S]] [--json]
    discord-watch submit --workspace PATH MESSAGE ...   (a folder without `project add`;
                         MESSAGE may be given as --message MESSAGE)
    discord-watch resume RUN_ID MESSAGE [--timeout S] [--wait [--wait-timeout S]] [--json]
    discord-watch stop RUN_ID|JOB|THREAD [--json]
    discord-watch logs RUN_ID [--raw] | JOB|THREAD [--lines N] [--json]
    discord-watch status RUN_ID [--json]

``submit`` and ``resume`` hand the request to the running daemon
(:mod:`.run_client`, :mod:`.run_desk`) and return as soon as it took it, printing
``{run_id, status, created_at, run_dir, thread_url}`` (with ``--json``, plus ``"ok": true``).
With ``--wait`` they return when the run is at rest and print its ``result.json``. ``--timeout
S`` limits the run (each of its turns; ``resume --timeout`` this turn): the CLI is stopped
after S seconds of its own time, not counting waits for the owner; with ``--wait``, the wait
ends S + 60 s after the request (``--wait-timeout S`` sets the wait alone). When the wait runs
out, the command prints the run's status (as ``status --json``), says so on stderr, and exits
4: the run goes on. ``stop RUN_ID`` ends a run as ``stopped``. ``status`` and ``logs`` read the
run's folder and change nothing, daemon or not. A ``resume``, ``stop`` or ``logs`` of a run
thread's id (the older form) works too.

Output: text, or with ``--json`` one JSON object; a refusal is ``{"ok": false, "code",
"message", "retryable"}``. Exit codes:

====  ===========================================================================
0     done: the request was taken, the run stopped, logs shown; with ``--wait``, the
      run completed
1     with ``--wait``: the run failed, and trying it again unchanged will not help
2     refused: bad arguments, an unknown project or run (not retryable)
3     no daemon answered: start ``discord-watch`` (or ``discord-watch --local``)
4     with ``--wait``: the wait ran out; the run goes on (its status is printed)
5     failed or refused, but retryable: a usage or rate limit, the model's server, a
      full queue (the result's ``error.retryable`` is true)
6     with ``--wait``: the run was stopped on request
====  ===========================================================================
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError, StateError
from discord_mcp.watch import run_client
from discord_mcp.watch.request_files import ANSWER_WITHIN_S, RequestBox
from discord_mcp.watch.run_client import (
    NO_DAEMON,
    OK,
    REFUSED,
    TIMED_OUT,
    WAIT_GRACE_S,
    ShellError,
    WaitRanOut,
    no_daemon,
)

COMMANDS = ("submit", "resume", "stop", "logs")
STOP_WITHIN_S = 90.0
"""How long ``stop`` waits for the daemon: a job's agent may take its cancel grace, then its
ending (SIGTERM, SIGKILL) before the stop is done (the engine's own bound is below this)."""
FINISHED = frozenset({"success", "failed", "unknown_after_crash", "cancelled"})


def add_commands(sub: Any) -> None:
    """Add the shell commands to ``discord-watch``'s subcommands."""
    submit = sub.add_parser("submit", help="start a run in a project (prints its run id)")
    submit.add_argument("project", nargs="?", help="a registered project (or --workspace)")
    submit.add_argument("prompt", nargs="?", metavar="MESSAGE", help="the task (or --message)")
    submit.add_argument("--message", help="the task, as an option (instead of MESSAGE)")
    submit.add_argument(
        "--workspace",
        metavar="PATH",
        help="run in this folder instead of a project: it must be inside DISCORD_WATCH_ROOTS; "
        "its project is found or made (ws-<folder>-<hash>) without `project add`",
    )
    submit.add_argument(
        "--intent", help="what kind of task (e.g. coding), recorded in the run's request.json"
    )
    submit.add_argument(
        "--allowed-root",
        dest="allowed_roots",
        action="append",
        default=[],
        metavar="PATH",
        help="this run's own allowed root (repeatable): the folder must be inside one of them "
        "as well as inside discord-watch's roots, which they can only narrow",
    )
    submit.add_argument("--tool", help="claude, codex or gemini (default: the project's)")
    submit.add_argument("--model", help="the model (default: the CLI's)")
    submit.add_argument(
        "--context",
        nargs="+",
        default=[],
        metavar="FILE",
        help="files for the agent (copied into the run's context/ folder)",
    )
    submit.add_argument(
        "--no-network",
        action="store_true",
        help="keep the CLI off the network (see the README for what each CLI enforces)",
    )
    trees = submit.add_mutually_exclusive_group()
    trees.add_argument(
        "--worktree",
        dest="worktree",
        action="store_const",
        const=True,
        default=None,
        help="work in a git worktree of its own (default: as the project says)",
    )
    trees.add_argument(
        "--no-worktree",
        dest="worktree",
        action="store_const",
        const=False,
        help="work in the project's folder, whatever the project says",
    )
    resume = sub.add_parser("resume", help="give a run its next turn (the same session)")
    resume.add_argument("thread", metavar="RUN_ID", help="the run (or, as before, its thread)")
    resume.add_argument("prompt", metavar="MESSAGE")
    for parser in (submit, resume):
        parser.add_argument(
            "--timeout",
            type=_seconds,
            default=None,
            metavar="S",
            help="stop the CLI after S seconds (its own time; waits for the owner not "
            "counted); with --wait, the wait ends S + 60 s after the request",
        )
        parser.add_argument("--wait", action="store_true", help="return with the run's result")
        parser.add_argument(
            "--wait-timeout",
            type=_seconds,
            default=None,
            metavar="S",
            help="with --wait: wait at most S seconds (exit 4; the run goes on)",
        )
    stop = sub.add_parser("stop", help="stop a run (or a job, or a thread's running job)")
    stop.add_argument("target", metavar="RUN_ID|JOB|THREAD")
    logs = sub.add_parser("logs", help="a run's transcript (or the tail of a job's log)")
    logs.add_argument("target", metavar="RUN_ID|JOB|THREAD")
    logs.add_argument("--raw", action="store_true", help="a run's raw CLI output (JSON lines)")
    logs.add_argument("--lines", type=int, default=40, help="a job's stdout lines (default 40)")
    for parser in (submit, resume, stop, logs):
        parser.add_argument("--json", action="store_true", help="print one JSON object")


def _seconds(text: str) -> float:
    from discord_mcp.watch.durations import parse_duration

    try:
        value = parse_duration(text)
    except RunError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    if value <= 0:
        raise argparse.ArgumentTypeError("a timeout must be more than 0 seconds")
    return value


def main(args: argparse.Namespace, home: Path) -> int:
    """Run one shell command; print its result; return the exit code."""
    try:
        if args.command == "logs":
            return _logs(home, args)
        if args.command == "stop":
            result, code = ask(home, "stop", {"target": args.target}, within=STOP_WITHIN_S), OK
        else:
            return _run(home, args)
    except ShellError as exc:
        return fail(exc, as_json=args.json)
    _out(args.json, {"ok": True, **_with_run_dir(home, result)}, _stop_text(result))
    return code


def status_main(home: Path, target: str, as_json: bool) -> int:
    """``discord-watch status RUN_ID [--json]``: read-only."""
    try:
        found = run_client.status(home, target)
    except ShellError as exc:
        return fail(exc, as_json=as_json)
    _out(as_json, found, _status_text(found))
    return OK


def fail(exc: ShellError, *, as_json: bool) -> int:
    if as_json:
        _print(exc.document())
    else:
        sys.stderr.write(f"discord-watch: {exc.code}: {exc.message}\n")
    return exc.exit_code


def _project_and_message(args: argparse.Namespace) -> tuple[str | None, str]:
    """``submit``'s project (None with --workspace) and message, from its positionals and
    options: ``submit PROJECT MESSAGE``, ``submit --workspace PATH MESSAGE``, or either with
    ``--message MESSAGE``."""
    given = [a for a in (args.project, args.prompt) if a is not None]
    wanted = (0 if args.workspace else 1) + (0 if args.message is not None else 1)
    if len(given) != wanted:
        raise ShellError(
            "E_BAD_ARGUMENTS",
            "give a PROJECT (or --workspace PATH) and a MESSAGE (or --message MESSAGE): "
            "`submit app 'fix it'`, `submit --workspace /path 'fix it'`",
            REFUSED,
        )
    project = None if args.workspace else given.pop(0)
    message = args.message if args.message is not None else given.pop(0)
    return project, message


def _run(home: Path, args: argparse.Namespace) -> int:
    if args.command == "submit":
        project, message = _project_and_message(args)
        receipt = run_client.submit(
            home,
            project,
            message,
            tool=args.tool,
            model=args.model,
            context=args.context,
            allow_network=not args.no_network,
            timeout_s=args.timeout,
            worktree=args.worktree,
            workspace=args.workspace,
            intent=args.intent,
            allowed_roots=args.allowed_roots,
        )
    else:
        receipt = run_client.resume(home, args.thread, args.prompt, timeout_s=args.timeout)
    if not args.wait:
        _out(args.json, {"ok": True, **receipt.document()}, _receipt_text(receipt.document()))
        return OK
    within = args.wait_timeout
    if within is None and args.timeout is not None:
        within = args.timeout + WAIT_GRACE_S
    try:
        result, code = run_client.wait(home, receipt, within=within)
    except WaitRanOut as out:
        _print(out.status) if args.json else sys.stdout.write(_status_text(out.status) + "\n")
        sys.stderr.write(
            f"discord-watch: the wait ran out after {out.waited:g} s; run {receipt.run_id} goes "
            f"on ({out.status['status']}): `discord-watch status {receipt.run_id}`\n"
        )
        return TIMED_OUT
    _out(args.json, {**result, "run_dir": receipt.run_dir}, _result_text(result))
    return code


def _with_run_dir(home: Path, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with its run's folder, when it names a run (every JSON answer about a run
    says where its folder is)."""
    from discord_mcp.runs.folders.folders import RunFolder

    if not result.get("run_id") or result.get("run_dir"):
        return result
    return {**result, "run_dir": str(RunFolder.of(home, str(result["run_id"])).root)}


def _logs(home: Path, args: argparse.Namespace) -> int:
    from discord_mcp.runs.folders.folders import names_a_run

    if names_a_run(args.target):
        text = run_client.logs(home, args.target, raw=args.raw)
        if args.json:
            key = "stdout" if args.raw else "events_md"
            found = {"ok": True, "run_id": run_client.run_of(home, args.target), key: text}
            _print(_with_run_dir(home, found))
        else:
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        return OK
    result = _job_logs(home, args.target, args.lines)
    _out(args.json, {"ok": True, **result}, _job_logs_text(result))
    return OK


def ask(
    home: Path, command: str, args: dict[str, Any], *, within: float = ANSWER_WITHIN_S
) -> dict[str, Any]:
    """Ask the daemon (``watch/requests/``); its result, or a ShellError. ``within``: how long
    to wait for its answer."""
    import time

    run_client.check_alive(home)
    box = RequestBox(home)
    request_id = box.send(command, args, within=within)
    limit = time.monotonic() + within
    while time.monotonic() < limit:
        reply = box.reply(request_id)
        if reply is not None:
            if reply.get("ok"):
                return dict(reply.get("result") or {})
            raise run_client.refused(str(reply.get("code")), str(reply.get("message")))
        time.sleep(0.05)
    if box.withdraw(request_id):
        raise no_daemon(f"it did not answer within {within:g} s")
    raise ShellError(
        "E_NO_ANSWER",
        f"the daemon took the request but did not answer within {within:g} s; it may still be "
        "doing it: see `discord-watch status`",
        NO_DAEMON,
    )


def _job_logs(home: Path, target: str, lines: int) -> dict[str, Any]:
    from discord_mcp.runs.journal.journal import load
    from discord_mcp.runs.processes.runner import JobPaths

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


# -- output


def _out(as_json: bool, document: dict[str, Any], text: str) -> None:
    if as_json:
        _print(document)
    else:
        sys.stdout.write(text + "\n")


def _print(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")


def _receipt_text(receipt: dict[str, Any]) -> str:
    where = f"; thread {receipt['thread_url']}" if receipt.get("thread_url") else ""
    return f"{receipt['run_id']} {receipt['status']}: {receipt['run_dir']}{where}"


def _result_text(result: dict[str, Any]) -> str:
    if result.get("status") == "completed":
        return str(result.get("summary") or "(the agent gave no text)")
    if result.get("status") == "stopped":
        return f"{result['run_id']} stopped on request"
    error = result.get("error") or {}
    again = " (retryable)" if error.get("retryable") else ""
    return f"{result['run_id']} failed: {error.get('code')}: {error.get('message')}{again}"


def _status_text(status: dict[str, Any]) -> str:
    head = f"{status['run_id']} {status['status']} ({status.get('engine')}, turn {status['turn']})"
    result = status.get("result") or {}
    tail = f"\n{_result_text(result)}" if result and status["status"] != "running" else ""
    return f"{head}: {status['run_dir']}{tail}"


def _stop_text(result: dict[str, Any]) -> str:
    if result.get("run_id"):
        return f"stopped run {result['run_id']}"
    if result.get("stopped") is None:
        return f"nothing is running in thread {result['thread_id']}"
    said = f"stopped {result['stopped']} ({result.get('was', 'running')})"
    return f"{said}: {result['message']}" if result.get("message") else said


def _job_logs_text(result: dict[str, Any]) -> str:
    head = f"# {result['job_id']} ({result['state']}) in thread {result['thread_id']}"
    body = "\n".join(result["text"]) or "(no output)"
    err = "\n".join(result["stderr"])
    return head + "\n" + body + (f"\n# stderr\n{err}" if err else "")
