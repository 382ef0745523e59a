"""The job wrapper: runs one agent CLI as its child and records how it ended.

    python -I -S wrap.py --status <status.json> --cwd <dir> -- <argv...>

Why it exists: the daemon may die (or be restarted) while a CLI runs. The CLI must survive that
(its stdout goes straight to the job's log file, not through a pipe), and the next daemon must
learn how it ended although it is not that daemon's child, so cannot ``wait()`` for it. The
wrapper is started in a new session (so it is the process-group leader, and the CLI and its MCP
servers are in its group), changes to ``--cwd``, starts the CLI with the inherited stdin
(/dev/null), stdout and stderr (the job's log files) and environment, and writes
``--status`` atomically twice: ``{"state": "running", ...}`` once the CLI is started, and
``{"state": "exited", "exit_code": N, "signal": S}`` when it ends. Its own exit code mirrors the
CLI's (128 + signal when the CLI was killed).

SIGTERM, SIGINT and SIGHUP sent to the wrapper alone are forwarded to the whole group, so
"stop the job" works whether the group or only the leader is signalled.

No shell is involved, and only the standard library is imported: the daemon starts this file
with ``-I -S`` (no site-packages, no PYTHON* variables from the CLI's environment), which keeps
the start fast and independent of the user's environment. Nothing is printed to stdout: that
is the CLI's event stream.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

STATUS_VERSION = 1
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def write_status(path: str, document: dict[str, Any]) -> None:
    """Atomically replace ``path`` with ``document`` (temp file, fsync, rename)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    data = json.dumps({"version": STATUS_VERSION, **document}).encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _parse(argv: Sequence[str]) -> tuple[str, str, list[str]]:
    args = list(argv)
    if "--" not in args:
        raise ValueError("missing '--' before the command")
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    values: dict[str, str] = {}
    while options:
        name = options.pop(0)
        if name not in ("--status", "--cwd") or not options:
            raise ValueError(f"unexpected argument {name!r}")
        values[name] = options.pop(0)
    if "--status" not in values or "--cwd" not in values or not command:
        raise ValueError("need --status <file> --cwd <dir> -- <command...>")
    return values["--status"], values["--cwd"], command


def _complain(message: str) -> None:
    # stderr is the job's .stderr log: say what happened where the owner will look.
    sys.stderr.write(f"discord-mcp job wrapper: {message}\n")
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        status_path, cwd, command = _parse(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        _complain(str(exc))
        return 2
    if os.getpgrp() != os.getpid():
        os.setsid()  # be the group leader, so one killpg reaches the CLI and its servers
    wrapper = {"wrapper_pid": os.getpid(), "pgid": os.getpgrp()}
    try:
        os.chdir(cwd)
        child = subprocess.Popen(command)  # inherits stdin, stdout, stderr and env as given
    except OSError as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        _complain(f"cannot start {command[0]!r} in {cwd}: {exc}")
        write_status(
            status_path,
            {**wrapper, "state": "exited", "exit_code": code, "signal": None, "error": str(exc)},
        )
        return code

    def forward(signum: int, _frame: object) -> None:
        # Ignore our own copy of the signal, then pass it to everyone in the group.
        signal.signal(signum, signal.SIG_IGN)
        with contextlib.suppress(OSError):
            os.killpg(os.getpgrp(), signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    write_status(status_path, {**wrapper, "cli_pid": child.pid, "state": "running"})
    returncode = child.wait()
    killed_by = -returncode if returncode < 0 else None
    exit_code = 128 + killed_by if killed_by is not None else returncode
    write_status(
        status_path,
        {
            **wrapper,
            "cli_pid": child.pid,
            "state": "exited",
            "exit_code": exit_code,
            "signal": killed_by,
        },
    )
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
