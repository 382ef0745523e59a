"""The job wrapper: runs one agent CLI as its child and records how it ended.

    python -I -S wrap.py --status <status.json> --cwd <dir> [--input <dir> --until-result <log>]
                         -- <argv...>

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

Input (``--input``, a Claude Code job whose project steers, issue 24). The CLI's stdin is then
a pipe whose write end the wrapper holds, fed with the files in the input directory in name
order (the first, the prompt, is there before the wrapper starts; :func:`offer` adds more while
the CLI runs), each deleted once written. The input ends when the CLI prints a JSON line whose
``type`` is ``result`` on its stdout (``--until-result``, the job's stdout log: its turn is
over), when the directory disappears (whoever renames it, the daemon included), or when the CLI
ends: the directory is renamed to ``<dir>.closed``, what it still holds is written, and the pipe
is closed. The CLI then reads what it was given and ends as it does with its prompt in argv.
That rename is the one commit point: :func:`offer` moves a message into the directory with one
rename, so a message lands either before the close (and the CLI gets it) or after (the rename
fails: the daemon queues it as a job of its own). Because the wrapper holds the pipe, the input
outlives the daemon: a restarted daemon offers to the same directory.

No shell is involved, and only the standard library is imported: the daemon starts this file
with ``-I -S`` (no site-packages, no PYTHON* variables from the CLI's environment), which keeps
the start fast and independent of the user's environment. Nothing is printed to stdout: that
is the CLI's event stream.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any, BinaryIO

STATUS_VERSION = 1
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
FIRST_INPUT = f"{0:020d}.jsonl"
"""The name of the job's first input file (its prompt): before every name :func:`offer` picks."""
CLOSED_SUFFIX = ".closed"
INPUT_POLL_S = 0.2
"""How often the wrapper of a job with input looks for new input and for the turn's end."""
_LINE_LIMIT = 64 << 20  # a stdout line longer than this is not read as the turn's result
_offers = itertools.count()
_last_offer = 0


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


def offer(directory: str, data: bytes) -> bool:
    """Add ``data`` (complete JSON lines) to a running job's input (the daemon's side); False
    when the job has no input, or its input has ended: then the CLI never sees it."""
    global _last_offer
    if not os.path.isdir(directory):
        return False  # the usual refusal, without a file written
    _last_offer = max(time.time_ns(), _last_offer + 1)  # names sort in the order offered
    name = f"{_last_offer:020d}-{next(_offers):06d}.jsonl"
    tmp = os.path.join(os.path.dirname(directory), f".offer-{name}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return False
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)
    try:
        os.rename(tmp, os.path.join(directory, name))  # the commit (see the module doc)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def end_input(directory: str) -> None:
    """End a job's input (the wrapper writes what it holds, then closes the CLI's stdin)."""
    with contextlib.suppress(OSError):
        os.rename(directory, directory + CLOSED_SUFFIX)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Input:
    """The CLI's stdin: a pipe fed from the input directory until the turn's result."""

    def __init__(self, directory: str, log: str) -> None:
        self.directory = directory
        self.log = log
        self.read_fd, self.write_fd = os.pipe()  # neither is inherited by the CLI but as stdin
        self.open = True
        self._written: set[str] = set()
        self._handle: BinaryIO | None = None
        self._partial = b""
        self._skipping = False  # inside a line too long to be read

    def step(self) -> None:
        """Write new input; end it once the turn's result is out or the directory is gone."""
        if not self.open:
            return
        if not os.path.isdir(self.directory):
            self.end()
            return
        self._feed(self.directory)
        if self._result_seen():
            self.end()

    def end(self, *, deliver: bool = True) -> None:
        """Rename the directory (late offers fail from now on), write what it held, close."""
        if not self.open:
            return
        self.open = False
        end_input(self.directory)
        if deliver:
            self._feed(self.directory + CLOSED_SUFFIX)
        with contextlib.suppress(OSError):
            os.close(self.write_fd)
        if self._handle is not None:
            self._handle.close()

    def _feed(self, directory: str) -> None:
        try:
            names = sorted(n for n in os.listdir(directory) if not n.startswith("."))
        except OSError:
            return
        for name in names:
            if name in self._written:
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue  # moved by a rename just now: read again from the closed directory
            try:
                _write_all(self.write_fd, data)
            except OSError:  # the CLI closed its stdin or ended: nothing more to give it
                return
            self._written.add(name)
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _result_seen(self) -> bool:
        if self._handle is None:
            try:
                self._handle = open(self.log, "rb")  # noqa: SIM115 (kept open)
            except OSError:
                return False
        seen = False
        while data := self._handle.read(1 << 20):
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                if not self._skipping:
                    seen = seen or _is_result(line)
                self._skipping = False
            if len(self._partial) > _LINE_LIMIT:
                self._partial, self._skipping = b"", True
        return seen


def _is_result(line: bytes) -> bool:
    if b'"result"' not in line:
        return False
    try:
        event = json.loads(line)
    except ValueError:
        return False
    return isinstance(event, dict) and event.get("type") == "result"


def _parse(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    args = list(argv)
    if "--" not in args:
        raise ValueError("missing '--' before the command")
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    values: dict[str, str] = {}
    while options:
        name = options.pop(0)
        if name not in ("--status", "--cwd", "--input", "--until-result") or not options:
            raise ValueError(f"unexpected argument {name!r}")
        values[name] = options.pop(0)
    if "--status" not in values or "--cwd" not in values or not command:
        raise ValueError("need --status <file> --cwd <dir> -- <command...>")
    if ("--input" in values) != ("--until-result" in values):
        raise ValueError("--input and --until-result go together")
    return values, command


def _complain(message: str) -> None:
    # stderr is the job's .stderr log: say what happened where the owner will look.
    sys.stderr.write(f"discord-mcp job wrapper: {message}\n")
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        values, command = _parse(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        _complain(str(exc))
        return 2
    status_path = values["--status"]
    if os.getpgrp() != os.getpid():
        os.setsid()  # be the group leader, so one killpg reaches the CLI and its servers
    wrapper = {"wrapper_pid": os.getpid(), "pgid": os.getpgrp()}
    feed = _Input(values["--input"], values["--until-result"]) if "--input" in values else None
    try:
        os.chdir(values["--cwd"])
        # Inherits stdout, stderr and env as given; stdin too (/dev/null) unless it has input.
        child = subprocess.Popen(command, stdin=feed.read_fd if feed else None)
    except OSError as exc:
        if feed is not None:
            feed.end(deliver=False)
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        _complain(f"cannot start {command[0]!r} in {values['--cwd']}: {exc}")
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
    returncode = child.wait() if feed is None else _wait_feeding(child, feed)
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


def _wait_feeding(child: subprocess.Popen[bytes], feed: _Input) -> int:
    """Wait for the CLI while feeding its input (see the module doc)."""
    os.close(feed.read_fd)
    while (code := child.poll()) is None:
        feed.step()
        time.sleep(INPUT_POLL_S)
    feed.end(deliver=False)  # an offer from now on fails: nobody would read it
    return code


if __name__ == "__main__":
    raise SystemExit(main())
