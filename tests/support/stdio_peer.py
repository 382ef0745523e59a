"""A minimal MCP client for a real server process over stdio (newline-delimited JSON-RPC)."""

from __future__ import annotations

import array
import fcntl
import json
import os
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import IO, Any

SERVER = [sys.executable, "-m", "discord_mcp"]
F_SETPIPE_SZ = 1031  # Linux


class StdioPeer:
    """A minimal MCP client speaking newline-delimited JSON-RPC to a server process."""

    def __init__(self, env: dict[str, str], cwd: Path, command: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            command or SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
            cwd=cwd,
        )
        self.stdout_lines: list[bytes] = []
        self.stderr = bytearray()
        self._next_id = 0
        self._cond = threading.Condition()
        self._reading = threading.Event()
        self._reading.set()
        self._readers = [
            threading.Thread(target=self._pump, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _pump(self, stream: IO[bytes]) -> None:
        self._reading.wait()
        for line in stream:
            with self._cond:
                self.stdout_lines.append(line)
                self._cond.notify_all()
            self._reading.wait()

    def stop_reading(self, pipe_size: int = 4096) -> None:
        """Stop reading the server's stdout after the next line (as a stuck client would), with
        its pipe shrunk to ``pipe_size`` bytes so that a few responses fill it."""
        assert self.process.stdout is not None
        fcntl.fcntl(self.process.stdout.fileno(), F_SETPIPE_SZ, pipe_size)
        self._reading.clear()

    def unread(self) -> int:
        """Bytes the server wrote that this peer has not read from the pipe."""
        assert self.process.stdout is not None
        buffer = array.array("i", [0])
        fcntl.ioctl(self.process.stdout.fileno(), termios.FIONREAD, buffer)
        return buffer[0]

    def _drain(self, stream: IO[bytes]) -> None:
        for chunk in stream:
            self.stderr.extend(chunk)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params or {}})
        deadline = time.monotonic() + 30
        with self._cond:
            while True:
                for line in self.stdout_lines:
                    message = json.loads(line)
                    if message.get("id") == wanted:
                        return dict(message)
                left = deadline - time.monotonic()
                assert left > 0, f"no answer to {method}"
                self._cond.wait(left)

    def handshake(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "stdio-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def close(self) -> int:
        self._reading.set()
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            return self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=5)
            for reader in self._readers:
                reader.join(timeout=5)
            for stream in (self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; returns its structured result (asserting it is not an error)."""
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        result = answer["result"]
        assert result.get("isError") is False, result
        return dict(result["structuredContent"])
