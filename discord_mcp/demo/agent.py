"""The demo's scripted agent: no model, only the tool calls a well-behaved agent would make.

It starts a real ``discord-mcp`` server process and speaks MCP to it over stdio
(newline-delimited JSON-RPC, as Claude Code, Codex or Gemini CLI would), then, round after
round: reports progress, asks a decision with options, waits (calling ``wait_decision`` while
the answer is ``pending``, never guessing), says what it will do with the answer, and moves on
to the next question. Everything it does is narrated through ``say``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

PROTOCOL_VERSION = "2025-06-18"
CALL_TIMEOUT_S = 600.0
"""A bound on one tool call; blocking tools return ``pending`` long before it."""
_LINE_LIMIT = 4 * 1024 * 1024


class AgentError(Exception):
    """The server failed, or answered a tool call with an error."""


class McpStdioClient:
    """A minimal MCP client for one server process (``start`` it, then ``call`` tools)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path, log: IO[bytes]):
        self._argv = list(argv)
        self._env = dict(env)
        self._cwd = cwd
        self._log = log
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self.tools: list[str] = []

    async def start(self) -> None:
        """Start the server and do the MCP handshake; lists its tools."""
        self._process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._log,
            env=self._env,
            cwd=self._cwd,
            limit=_LINE_LIMIT,
        )
        self._reader = asyncio.create_task(self._read(), name="demo-agent-reader")
        await self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "demo-agent", "version": "1"},
            },
        )
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = await self._request("tools/list", {})
        self.tools = [str(tool["name"]) for tool in listed.get("tools", [])]

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; returns its structured result, or raises :class:`AgentError`."""
        result = await self._request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
            raise AgentError(f"{name} failed: {' '.join(texts).strip()}")
        structured = result.get("structuredContent")
        if isinstance(structured, dict):
            return dict(structured)
        # A plain-text tool (the permission prompt): its one text block is JSON.
        texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
        try:
            parsed = json.loads("".join(texts))
        except ValueError:
            return {}
        return dict(parsed) if isinstance(parsed, dict) else {}

    async def close(self) -> None:
        """Close stdin (the server's signal to stop) and wait for it, bounded."""
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            async with asyncio.timeout(10):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._process is not None
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message).encode() + b"\n")
        await self._process.stdin.drain()

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[wanted] = future
        await self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        try:
            async with asyncio.timeout(CALL_TIMEOUT_S):
                answer = await future
        finally:
            self._pending.pop(wanted, None)
        if "error" in answer:
            raise AgentError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return dict(answer.get("result") or {})

    async def _read(self) -> None:
        assert self._process is not None
        assert self._process.stdout is not None
        stdout = self._process.stdout
        while line := await stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "method" in message and "id" in message:
                # A request from the server (none is expected): decline it politely.
                await self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not supported by this client"},
                    }
                )
                continue
            future = self._pending.get(message.get("id"))
            if future is not None and not future.done():
                future.set_result(message)
        failure = AgentError("the discord-mcp server stopped (its log is in the demo directory)")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(failure)


@dataclass(frozen=True)
class Step:
    """One question of the demo: the task it belongs to, and what each answer leads to."""

    task: str
    progress: str
    question: str
    context: str
    options: tuple[str, ...] = ()
    plans: tuple[str, ...] = field(default=())
    """What the agent does for each option (same order); free-text answers get ``free_plan``."""
    free_plan: str = "doing it your way"
    command: str | None = None
    """A shell command the agent runs for the first option, after asking the owner's approval
    (the card a CLI's permission prompt makes)."""
    every_answer: str | None = None
    """A shell command the agent runs whatever the answer (``{answer}``: the answer, quoted),
    after asking the owner's approval: every round of the demo shows an approval card, whichever
    options the owner picks."""


SCRIPT: tuple[Step, ...] = (
    Step(
        task="Tidy the repository",
        progress="Found 14 merged branches and 3 stale ones.",
        question="Delete the 14 merged branches?",
        context="All of them are merged into main; the 3 stale ones stay. Nothing is pushed yet.",
        options=("Delete them", "Keep them"),
        plans=("deleting the 14 merged branches", "keeping every branch and moving on"),
        free_plan="following your note about the branches",
        command="git branch --merged main | grep -v main | xargs git branch -d",
    ),
    Step(
        task="Release",
        progress="Changelog drafted, tests green on all three platforms.",
        question="Which version number for this release?",
        context="One new option and two fixes since 1.3.0; nothing breaks.",
        options=("1.4.0", "1.3.1", "2.0.0"),
        plans=("tagging 1.4.0", "tagging 1.3.1", "tagging 2.0.0 and writing upgrade notes"),
        free_plan="using the version you wrote",
        every_answer="git tag -a v{answer} -m Release",
    ),
    Step(
        task="Release notes",
        progress="Release notes drafted from the merged pull requests.",
        question="Anything the release notes must say?",
        context="Reply in this thread, or click Answer… and type it.",
        free_plan="adding that to the release notes",
    ),
)


async def approval(
    agent: McpStdioClient, step: Step, result: Mapping[str, Any], say: Callable[[str], None]
) -> bool:
    """Before running the first option's command, ask the owner as a CLI's permission prompt
    does (the ``approve`` tool: an approval card); True when it may run."""
    if step.every_answer is not None:
        picked = str(result.get("selected_option") or result.get("answer") or "")
        command = step.every_answer.format(answer=shlex.quote(picked))
    elif step.command is not None and result.get("selected_index") == 0:
        command = step.command
    else:
        return True
    say(f"asking approval to run: {command}")
    answer = await agent.call("approve", {"tool_name": "Bash", "input": {"command": command}})
    allowed = answer.get("behavior") == "allow"
    say("approved: running it" if allowed else f"not approved: {answer.get('message', '')}")
    return allowed


def _thread_id(result: Mapping[str, Any]) -> str | None:
    url = str(result.get("thread_url") or "")
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return tail if tail.isdigit() else None


def _plan(step: Step, result: Mapping[str, Any]) -> str:
    index = result.get("selected_index")
    if isinstance(index, int) and 0 <= index < len(step.plans):
        return step.plans[index]
    return step.free_plan


async def ask(agent: McpStdioClient, step: Step, say: Callable[[str], None]) -> dict[str, Any]:
    """Ask ``step``'s question and wait for the answer, however long it takes."""
    arguments: dict[str, Any] = {"question": step.question, "context": step.context}
    if step.options:
        arguments["options"] = list(step.options)
    say(f"asking the owner: {step.question!r} (waiting for the answer, never guessing)")
    result = await agent.call("ask_decision", arguments)
    while result.get("status") == "pending":
        # What a good agent does with "pending": keep waiting, never guess.
        result = await agent.call("wait_decision", {"decision_id": result["decision_id"]})
    return result


async def play_step(agent: McpStdioClient, step: Step, say: Callable[[str], None]) -> None:
    await agent.call(
        "report_progress", {"title": step.task, "summary": step.progress, "status": "running"}
    )
    say(f"progress: {step.task}: {step.progress}")
    result = await ask(agent, step, say)
    if result.get("status") != "answered":
        say(f"the question ended without an answer ({result.get('status')}); skipping it")
        return
    answer = result.get("selected_option") or result.get("answer") or ""
    who = result.get("answered_by") or "the owner"
    say(f"answer: {answer!r} from {who} via {result.get('via')}")
    plan = _plan(step, result)
    if not await approval(agent, step, result, say):
        plan = "leaving it alone, since the command was not approved"
    arguments = {"message": f"Got it: {answer}. Now {plan}.", "level": "success"}
    thread_id = _thread_id(result)
    if thread_id is not None:
        arguments["thread_id"] = thread_id
    await agent.call("notify", arguments)
    await agent.call(
        "report_progress",
        {"title": step.task, "summary": f"Done: {plan}.", "status": "done"},
    )
    say(f"done: {plan}")


async def run_agent(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    log: IO[bytes],
    say: Callable[[str], None],
    *,
    rounds: int = 0,
    pause: float = 1.5,
    again: Callable[[], Awaitable[bool]] | None = None,
    after_round: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Play the script against a fresh server: ``rounds`` times when given; else once, then
    again each time ``again`` says so (None: again and again, until cancelled).
    ``after_round`` runs at the end of each round (the demo's run thread)."""
    agent = McpStdioClient(argv, env, cwd, log)
    try:
        await agent.start()
        say(f"connected to discord-mcp ({len(agent.tools)} tools)")
        played = 0
        while True:
            played += 1
            for step in SCRIPT:
                await play_step(agent, step, say)
                await asyncio.sleep(pause)  # time to read the page before the next question
            if after_round is not None:
                await after_round()
            if rounds and played >= rounds:
                say(f"round {played} done")
                return
            say(f"round {played} done: every card was answered")
            if again is not None and not await again():
                return
            say("again from the top")
    finally:
        await agent.close()


def server_argv() -> list[str]:
    """How the demo starts ``discord-mcp``: this interpreter, so the same install is used."""
    return [sys.executable, "-m", "discord_mcp"]
