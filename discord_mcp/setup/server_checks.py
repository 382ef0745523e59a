"""``doctor``: start each registered ``discord`` server as its client would, and ask it for its
tools.

A registration can be right on paper and still never start: a ``uvx`` that cannot reach the
package index, a Python that lost its package, a ``.env`` that moved. The client then shows the
server disconnected, while the file checks say all is well. So doctor starts each stdio entry
of ours (its ``command``, ``args`` and ``env`` over this shell's environment), speaks MCP to it
on its stdin and stdout (``initialize``, then ``tools/list``), and fails the entry when no list
with ``ask_decision`` comes back within :data:`ANSWER_WITHIN_S`, with the last lines the server
wrote on stderr. Entries with the same command line are started once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import SpawnError
from discord_mcp.runs.processes.spawner import PipedSpec, spawn_piped
from discord_mcp.setup.checks import Check

ANSWER_WITHIN_S = 60.0
"""A first start through uvx may resolve and install: a minute at most."""
NEEDED_TOOL = "ask_decision"
_LIMIT = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Registered:
    """A stdio entry of ours, where it was found."""

    label: str  # e.g. "gemini (user, ~/.gemini/settings.json)"
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]


ServerProbe = Callable[[Registered, Mapping[str, str], Path], Awaitable[str | None]]
"""Starts a registered server; None when it listed its tools, else what went wrong."""


def ours_registered(*, home: Path, cwd: Path, environ: Mapping[str, str]) -> list[Registered]:
    """Every stdio entry of ours in the clients' configuration files (the plugin's and the
    extension's are started by their client from their own folder, and are not among them)."""
    from discord_mcp.setup.clients import (
        CLIENTS,
        config_location,
        entries,
        is_ours,
        read_document,
    )

    found: list[Registered] = []
    seen: set[Path] = set()
    for client in CLIENTS:
        for scope in ("user", "project"):
            location = config_location(client, scope, home=home, cwd=cwd, environ=dict(environ))
            if not location.path.exists() or location.path.resolve() in seen:
                continue
            seen.add(location.path.resolve())
            try:
                document = read_document(location)
            except ValueError:
                continue  # said by the client checks
            for entry in entries(location, document).values():
                made = registered(f"{client} ({scope}, {location.path})", entry)
                if made is not None and is_ours(entry):
                    found.append(made)
    return found


def registered(label: str, entry: Mapping[str, Any]) -> Registered | None:
    """The entry as something to start, or None when it is not a stdio command (a URL)."""
    command = entry.get("command")
    if not isinstance(command, str) or not command or entry.get("type") in ("http", "sse"):
        return None
    args = entry.get("args") or []
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    return Registered(
        label,
        (command, *(str(a) for a in args)),
        tuple(sorted((str(k), str(v)) for k, v in (env or {}).items())),
    )


async def server_checks(
    entries: Sequence[Registered],
    environ: Mapping[str, str],
    cwd: Path,
    probe: ServerProbe | None = None,
) -> list[Check]:
    """A line per registered server: started and listed its tools, or why not."""
    probe = probe or start_and_list
    distinct = list(dict.fromkeys((e.argv, e.env) for e in entries))
    answers = await asyncio.gather(
        *(probe(Registered("", argv, env), environ, cwd) for argv, env in distinct)
    )
    by_command = dict(zip(distinct, answers, strict=True))
    checks: list[Check] = []
    for entry in entries:
        problem = by_command[(entry.argv, entry.env)]
        name = f"{entry.label.split(' (')[0]} server"
        if problem is None:
            checks.append(Check("OK", name, f"starts and lists its tools ({entry.label})"))
            continue
        line = " ".join(entry.argv)
        checks.append(
            Check(
                "FAIL",
                name,
                f"the registered server ({entry.label}) did not answer tools/list: {problem}",
                f"run `{line} --version` in a terminal to see why; the client shows it "
                "disconnected until it starts (see Troubleshooting)",
            )
        )
    return checks


async def start_and_list(entry: Registered, environ: Mapping[str, str], cwd: Path) -> str | None:
    """Start the server, ``initialize``, ``tools/list``; None when the tools came back."""
    env = {**environ, **dict(entry.env)}
    with tempfile.TemporaryDirectory(prefix="discord-mcp-doctor-") as folder:
        stderr = Path(folder) / "stderr"
        try:
            process = await spawn_piped(
                PipedSpec("discord", entry.argv, cwd, env, stderr), limit=_LIMIT
            )
        except SpawnError as exc:
            return exc.message
        try:
            async with asyncio.timeout(ANSWER_WITHIN_S):
                problem = await _converse(process)
        except TimeoutError:
            problem = f"no answer within {ANSWER_WITHIN_S:.0f} s"
        finally:
            await _end(process)
        if problem is None:
            return None
        tail = _tail(stderr)
        if tail:
            from discord_mcp.outbound.redaction import redact

            tail = redact(tail, [environ.get("DISCORD_BOT_TOKEN", "")]).text
        return f"{problem}" + (f"; it said: {tail}" if tail else "")


async def _converse(process: asyncio.subprocess.Process) -> str | None:
    assert process.stdout is not None
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "discord-mcp-doctor", "version": "1"},
    }
    _send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
    if await _answer(process, 1) is None:
        return "it ended before answering initialize"
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    answer = await _answer(process, 2)
    if answer is None:
        return "it ended before answering tools/list"
    tools = (answer.get("result") or {}).get("tools") or []
    names = {t.get("name") for t in tools if isinstance(t, dict)}
    if NEEDED_TOOL not in names:
        return f"its tools do not include {NEEDED_TOOL} ({len(names)} tools)"
    return None


def _send(process: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError, RuntimeError):
        process.stdin.write((json.dumps(message) + "\n").encode())


async def _answer(process: asyncio.subprocess.Process, wanted: int) -> dict[str, Any] | None:
    assert process.stdout is not None
    while True:
        line = await process.stdout.readline()
        if not line:
            return None
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == wanted:
                return message


async def _end(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            process.stdin.close()
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


def _tail(path: Path, limit: int = 300) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if line.strip()][-3:]
    said = " | ".join(lines)
    return said[-limit:]
