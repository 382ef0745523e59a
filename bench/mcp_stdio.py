"""What the benchmarks share: a stdio MCP server under measurement, its RSS, and failing loudly.

A benchmark that times or weighs a broken server would print a flattering figure: a server
that exits at once is the fastest and smallest of all. So :class:`StdioServer` checks what it
measures (the ``initialize`` and ``tools/list`` replies arrived, and list the tools asked for)
and raises :class:`BenchFailure` with what went wrong; :func:`run_main` turns that into a
message on stderr and exit status 2 (over budget is 1).

The server command is injectable (``--server-command``, split like a shell would but never run
by one), so a test can point a benchmark at a deliberately broken server and see it fail.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
OURS = [sys.executable, "-m", "discord_mcp"]
MINIMAL = [sys.executable, str(ROOT / "bench" / "minimal_server.py")]
MINIMAL_TOOLS = frozenset({"ping"})
REPLY_TIMEOUT = 30.0

OVER_BUDGET = 1
BROKEN = 2


class BenchFailure(Exception):
    """What is measured does not work; the figures would mean nothing."""


def our_tools() -> frozenset[str]:
    """The tools discord-mcp must list by default (the pinned contract,
    tests/data/contract/tools.json, less those served only with a setting: ``served_with``)."""
    contract = ROOT / "tests" / "data" / "contract" / "tools.json"
    pinned = json.loads(contract.read_text(encoding="utf-8"))
    return frozenset(tool["name"] for tool in pinned if "served_with" not in tool)


def add_server_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server-command",
        metavar="COMMAND",
        help="the discord-mcp server to measure (default: %(default)s)",
        default=shlex.join(OURS),
    )


def parse_arguments(
    parser: argparse.ArgumentParser, quick: Sequence[str], argv: Sequence[str] | None = None
) -> argparse.Namespace:
    """Parse a benchmark's command line, with ``--quick``: the same checks on fewer rounds,
    in under a minute (the suite runs every benchmark so, tests/test_benchmarks.py). It puts
    ``quick``'s arguments first, so any given after them still win."""
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"the same checks on fewer rounds, in under a minute: {shlex.join(quick)}",
    )
    given = list(sys.argv[1:] if argv is None else argv)
    return parser.parse_args([*quick, *given] if "--quick" in given else given)


def server_argv(command: str) -> list[str]:
    argv = shlex.split(command)
    if not argv:
        raise BenchFailure("--server-command is empty")
    return argv


def run_main(main: Callable[[], int]) -> None:
    """Run a benchmark's ``main`` and exit with its status; a :class:`BenchFailure` exits 2."""
    try:
        status = main()
    except BenchFailure as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        status = BROKEN
    raise SystemExit(status)


def rss_kib(pid: int) -> int:
    """The resident set size of process ``pid`` in KiB (``VmRSS`` in /proc/<pid>/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise BenchFailure(f"process {pid} is gone: cannot read its memory") from exc
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise BenchFailure(f"process {pid} has no VmRSS (a zombie?)")


def watches(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has an inotify watch on ``path`` (``/proc/<pid>/fdinfo``, Linux):
    a server's link that follows the gateway watches the holder's presence file."""
    try:
        inode = f"ino:{os.stat(path).st_ino:x} "
        infos = list(Path(f"/proc/{pid}/fdinfo").iterdir())
    except OSError:
        return False
    for info in infos:
        try:
            text = info.read_text(encoding="utf-8")
        except OSError:
            continue
        if any(line.startswith("inotify") and inode in line for line in text.splitlines()):
            return True
    return False


HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


class StdioServer:
    """One MCP server process on pipes; :meth:`list_tools` does the handshake and checks it.

    stderr goes to a temporary file, so nothing blocks on it and a failure can quote its tail.
    Use as a context manager: leaving closes stdin and reaps the process (killing it if need be).
    """

    def __init__(self, argv: list[str], env: dict[str, str], name: str = "server") -> None:
        self.name = name
        self.argv = argv
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                cwd=ROOT,
            )
        except OSError as exc:
            self._stderr.close()
            raise BenchFailure(f"{name}: cannot start {shlex.join(argv)}: {exc}") from exc
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.process.pid

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def send(self, messages: Iterable[dict[str, Any]]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            self.process.stdin.flush()
        except BrokenPipeError as exc:
            raise self.failure("exited before reading its input") from exc

    def reply(self, request_id: int, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """The JSON-RPC response to ``request_id``; fails if the server exits or stays silent."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError as exc:
                    raise self.failure(f"wrote a non-JSON line to stdout: {line[:200]!r}") from exc
                if isinstance(message, dict) and message.get("id") == request_id:
                    if "error" in message:
                        raise self.failure(f"answered request {request_id} with {message}")
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.failure(f"sent no reply to request {request_id} within {timeout:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.process.wait(timeout=5)
                    raise self.failure(f"exited before answering request {request_id}")
                self._buffer += chunk

    def list_tools(self, expected: frozenset[str]) -> list[str]:
        """Handshake, then ``tools/list``: the tool names, which must include ``expected``."""
        self.send(HANDSHAKE)
        self.reply(1)
        reply = self.reply(2)
        names = [tool.get("name") for tool in reply.get("result", {}).get("tools", [])]
        absent = expected - set(names)
        if absent:
            raise self.failure(f"tools/list lacks {sorted(absent)} (it lists {sorted(names)})")
        return [str(name) for name in names]

    def failure(self, what: str) -> BenchFailure:
        rc = self.process.poll()
        self._stderr.seek(0)
        tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()[-5:]
        lines = [f"{self.name} ({shlex.join(self.argv)}) {what}"]
        if rc is not None:
            lines.append(f"  exit status {rc}")
        lines += [f"  stderr: {line}" for line in tail]
        return BenchFailure("\n".join(lines))

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()
