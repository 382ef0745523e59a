"""A client that goes away without a goodbye ends the server quietly: one log line, exit 0."""

from __future__ import annotations

import fcntl
import json
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from tests.support.settings import env_for

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "gone", "version": "1"},
    },
}


def _unread(fd: int) -> int:
    """Bytes still waiting in a pipe (FIONREAD works on either end on Linux)."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


def _vanishing_client(env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """A client whose end of our stdout is gone before we answer; returns (exit code, stderr)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "discord_mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdout.close()  # the client's end of our stdout is gone before we say anything
    server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    server.stdin.flush()
    deadline = time.monotonic() + 30
    while _unread(server.stdin.fileno()) and server.poll() is None:  # until it read the request
        assert time.monotonic() < deadline, "the server never read the request"
        time.sleep(0.01)
    _, stderr = server.communicate(timeout=30)  # and then the client's process ends
    return server.returncode, stderr.decode()


def test_a_client_that_vanishes_leaves_one_log_line_not_a_traceback(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    env = env_for(discord, tmp_path / "home", DISCORD_MCP_GATEWAY="off")
    exercised = False
    for _ in range(3):  # the answer's write usually, not always, comes before stdin's end
        code, stderr = _vanishing_client(env, tmp_path)
        assert code == 0, stderr[-2000:]
        assert "Traceback" not in stderr
        assert "BrokenPipe" not in stderr
        lines = stderr.count("the client closed the connection")
        assert lines <= 1
        if lines == 1:
            exercised = True
            break
    assert exercised, "the broken pipe was never reached"
