"""The Codex that takes a message mid-turn: ``codex app-server`` run as one job's CLI (issue 34).

    python -m discord_mcp.runs.adapters.codex_bridge [--resume THREAD] [--sandbox MODE]
        [--approval POLICY] [--trust-hooks] -- <codex> app-server <-c overrides...>

The job machinery starts this module as it starts ``codex exec`` (through the spawner, the job
wrapper feeding its stdin, :mod:`discord_mcp.runs.processes.wrap`), and reads its stdout as it
reads ``codex exec --json``'s: the same events (``thread.started``, ``item.completed``,
``turn.completed`` with usage, ``turn.failed``), so the Codex adapter's decoder, resume (the
thread id is the session), usage and transcripts work unchanged.

Its stdin is JSON lines ``{"type": "user", "text": ...}``: the first is the prompt
(``thread/start`` or ``thread/resume``, then ``turn/start``), every later one while the turn
runs is handed to it (``turn/steer``). SIGTERM or SIGINT (the owner's /stop) interrupt the turn
(``turn/interrupt``) before the bridge ends. When the turn ends the bridge ends.

Approvals: ``--trust-hooks`` runs the run's approval hooks (``-c hooks.<event>=...`` on the
server's argv) as ``codex exec --dangerously-bypass-hook-trust`` does, so every write or command
reaches the owner's card; the thread does not start unless Codex confirms it
(:class:`~discord_mcp.runs.adapters.codex_app.CodexAppServer`). A request of the server's that
still reaches the bridge (a command or a patch that asks to leave the sandbox, no hook having
decided) is declined (:func:`~discord_mcp.runs.adapters.codex_app.refusal`), never accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.codex_app import CodexAppServer, TurnEnd

log = logging.getLogger("discord_mcp.codex_bridge")
_ITEM_TYPES = {
    "agentMessage": "agent_message",
    "commandExecution": "command_execution",
    "fileChange": "file_change",
    "mcpToolCall": "mcp_tool_call",
    "webSearch": "web_search",
}


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def exec_item(item: dict[str, Any]) -> dict[str, Any] | None:
    """An app-server item as ``codex exec --json`` writes it; None: not one the decoder reads."""
    kind = _ITEM_TYPES.get(str(item.get("type")))
    if kind is None:
        return None
    out: dict[str, Any] = {"id": item.get("id"), "type": kind}
    if kind == "agent_message":
        out["text"] = item.get("text")
    elif kind == "command_execution":
        out["command"] = item.get("command")
    elif kind == "file_change":
        out["changes"] = item.get("changes") or []
    elif kind == "mcp_tool_call":
        out.update(
            server=item.get("server"),
            tool=item.get("tool"),
            arguments=item.get("arguments"),
            status=item.get("status"),
            error=item.get("error"),
        )
    elif kind == "web_search":
        out["query"] = item.get("query")
    return out


class Bridge:
    def __init__(self, codex: CodexAppServer) -> None:
        self.codex = codex
        self.usage: dict[str, Any] | None = None
        codex.on_notification = self._notified

    def _notified(self, method: str, params: dict[str, Any]) -> None:
        if method in ("item/started", "item/completed"):
            item = exec_item(params.get("item") or {})
            if item is not None:
                kind = "item.completed" if method == "item/completed" else "item.started"
                _emit({"type": kind, "item": item})
        elif method == "thread/tokenUsage/updated":
            last = (params.get("tokenUsage") or {}).get("last") or {}
            self.usage = {
                "input_tokens": last.get("inputTokens"),
                "cached_input_tokens": last.get("cachedInputTokens"),
                "output_tokens": last.get("outputTokens"),
            }
        elif method == "error":
            error = params.get("error") or {}
            _emit({"type": "error", "message": str(error.get("message") or error)})


async def _lines(queue: asyncio.Queue[str | None]) -> None:
    """Stdin's lines, read off the event loop (a pipe the job wrapper feeds)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        await queue.put(line.decode("utf-8", "replace"))
    await queue.put(None)


def _text(line: str) -> str | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and isinstance(message.get("text"), str):
        return str(message["text"])
    return None


async def run(args: argparse.Namespace) -> int:
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    reading = asyncio.create_task(_lines(queue))
    prompt = None
    while prompt is None:
        line = await queue.get()
        if line is None:
            _emit({"type": "turn.failed", "error": {"message": "no prompt on stdin"}})
            return 1
        prompt = _text(line)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, stopping.set)
    codex = CodexAppServer(args.argv, env=dict(os.environ), cwd=Path.cwd())
    bridge = Bridge(codex)
    end = TurnEnd("failed")
    try:
        async with codex:
            options = {
                "sandbox": args.sandbox,
                "approval_policy": args.approval,
                "trust_hooks": args.trust_hooks,
            }
            if args.resume:
                thread = await codex.resume_thread(args.resume, **options)
            else:
                thread = await codex.start_thread(**options)
            _emit({"type": "thread.started", "thread_id": thread})
            while prompt is not None:
                end = await _turn(codex, prompt, queue, stopping)
                if end.status != "completed":
                    break
                _emit({"type": "turn.completed", "usage": bridge.usage or {}})
                # A line that came as the turn ended (before the input closed) is answered in
                # one more turn, as Claude Code answers what it read: never lost.
                prompt = await _late(queue)
    except RunError as exc:
        end = TurnEnd("failed", error=exc.message)
    reading.cancel()
    if end.status == "completed":
        return 0
    if stopping.is_set():
        # Stopped (the owner's /stop, a newer message, a timeout): no verdict of the CLI's, as
        # codex exec gives none when it is signalled; the engine says why it ended.
        log.info("stopped: the turn ended %s", end.status)
        return 1
    _emit({"type": "turn.failed", "error": {"message": end.error or f"turn {end.status}"}})
    return 1


async def _late(queue: asyncio.Queue[str | None]) -> str | None:
    """The lines left until the input ends (the daemon ends it once it saw the turn end)."""
    texts: list[str] = []
    while (line := await queue.get()) is not None:
        if (text := _text(line)) is not None:
            texts.append(text)
    return "\n\n".join(texts) if texts else None


async def _turn(
    codex: CodexAppServer,
    prompt: str,
    queue: asyncio.Queue[str | None],
    stopping: asyncio.Event,
) -> TurnEnd:
    """One turn: lines read while it runs are steered into it; a stop signal interrupts it."""
    await codex.start_turn(prompt)
    _emit({"type": "turn.started"})
    ended = asyncio.ensure_future(codex.turn_end())
    stop = asyncio.ensure_future(stopping.wait())
    eof = False
    while not ended.done():
        got = asyncio.ensure_future(queue.get() if not eof else stopping.wait())
        await asyncio.wait({ended, stop, got}, return_when=asyncio.FIRST_COMPLETED)
        if stop.done() and not ended.done():
            with contextlib.suppress(RunError):
                await codex.interrupt()
            got.cancel()
            break
        if not got.done():
            got.cancel()
            continue
        line = got.result()
        if eof or not isinstance(line, str):  # the input ended: nothing more can come
            if not eof:
                eof = True
                await queue.put(None)  # for the turns after this one
            continue
        if (text := _text(line)) is not None:
            try:
                await codex.steer(text)
                log.info("a message was handed to the running turn")
            except RunError as exc:  # the turn ended meanwhile: the next turn answers it
                log.info("a message came as the turn ended (%s)", exc.message)
                await queue.put(line)
    stop.cancel()
    return await ended


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="codex_bridge")
    parser.add_argument("--resume")
    parser.add_argument("--sandbox")
    parser.add_argument("--approval")
    parser.add_argument("--trust-hooks", action="store_true")
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="codex_bridge: %(message)s")
    if args.argv[:1] == ["--"]:
        args.argv = args.argv[1:]
    try:
        return asyncio.run(run(args))
    except RunError as exc:
        _emit({"type": "turn.failed", "error": {"message": exc.message}})
        return 1


if __name__ == "__main__":
    sys.exit(main())
