"""A client of ``codex app-server`` (JSON-RPC over stdio), the Codex that takes a message
mid-turn (issue 34).

Theory. ``codex exec`` reads its prompt once; ``codex app-server`` (experimental in the pinned
0.169) keeps a thread open and takes, per the protocol its ``generate-json-schema`` prints:
``initialize`` (then the ``initialized`` notification), ``thread/start`` (``cwd``,
``developerInstructions``, ``sandbox``, ``approvalPolicy``), ``turn/start`` (``threadId``,
``input``: ``[{"type": "text", "text": ...}]``), ``turn/steer`` (``threadId``,
``expectedTurnId``, ``input``: added to the running turn) and ``turn/interrupt`` (``threadId``,
``turnId``). The turn ends with the ``turn/completed`` notification (``turn.status``:
``completed``, ``interrupted`` or ``failed``); the agent's words come as ``item/completed``
notifications of ``agentMessage`` items. Messages are JSON lines without the ``jsonrpc`` field,
as Codex writes them.

The server may ask the client things (approvals, user input): this client answers every such
request with an error, so nothing is approved by it (fail closed).

Approval hooks. ``codex app-server`` runs the ``PreToolUse`` and ``PermissionRequest`` hooks a
run adds with ``-c hooks.<event>=...`` only when their trust is bypassed, and it ignores
``-c bypass_hook_trust=true`` ("session-flags: `bypass_hook_trust` is ignored"): the setting is
taken from the thread's ``config`` (``thread/start`` / ``thread/resume``), as exec's
``--dangerously-bypass-hook-trust`` sets it. With it Codex says so in a ``warning``
notification (:data:`HOOK_TRUST_WARNING`); without that warning the hooks would not run and a
command would run with no card, so a thread that asks for trusted hooks and is not told within
:data:`HOOK_CHECK_S` fails (fail closed).

The run machinery drives it through :mod:`discord_mcp.runs.adapters.codex_bridge`, a process
started as the job's CLI that turns its stdin lines into ``turn/start`` / ``turn/steer`` and the
server's notifications into ``codex exec``'s JSON events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError

log = logging.getLogger(__name__)
LINE_LIMIT = 64 * 1024 * 1024
HOOK_TRUST_WARNING = "--dangerously-bypass-hook-trust` is enabled"
"""What Codex says (an exec ``error`` item, an app-server ``warning``) once this run's hooks run."""
HOOK_CHECK_S = 20.0
"""How long a thread that asked for trusted hooks waits for Codex to say they run."""


@dataclass
class TurnEnd:
    """How a turn ended: its status, and the agent's messages in it, in order."""

    status: str
    messages: list[str] = field(default_factory=list)
    error: str | None = None


class CodexAppServer:
    """One ``codex app-server`` process and its thread (use ``async with``)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        hook_check_s: float = HOOK_CHECK_S,
    ) -> None:
        self.argv = list(argv)
        self.hook_check_s = hook_check_s
        self.env = dict(env)
        self.cwd = cwd
        self.thread_id: str | None = None
        self.turn_id: str | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._turn_done: asyncio.Future[TurnEnd] | None = None
        self._messages: list[str] = []
        self._hooks_trusted = asyncio.Event()
        self.on_notification: Callable[[str, dict[str, Any]], None] | None = None
        """Called with every notification's method and params (the bridge's events)."""

    async def __aenter__(self) -> CodexAppServer:
        self._proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            cwd=self.cwd,
            limit=LINE_LIMIT,
        )
        self._reader = asyncio.create_task(self._read(), name="codex-app-server-reader")
        await self.request(
            "initialize",
            {"clientInfo": {"name": "discord-mcp", "title": "discord-mcp", "version": "0"}},
        )
        await self._send({"method": "initialized"})
        return self

    async def __aexit__(self, *_: object) -> None:
        proc = self._proc
        if proc is not None and proc.returncode is None:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                async with asyncio.timeout(5):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    # ---- the protocol --------------------------------------------------------------------

    async def start_thread(
        self,
        *,
        instructions: str | None = None,
        sandbox: str | None = None,
        approval_policy: str | None = None,
        trust_hooks: bool = False,
    ) -> str:
        """Open a new thread (``trust_hooks``: run this run's ``-c hooks...``, checked).

        Raises:
            RunError: E_CLI_ERROR, the server refused, or did not confirm the hooks run.
        """
        settings = _settings(instructions, sandbox, approval_policy, trust_hooks)
        return await self._open_thread("thread/start", settings, trust_hooks)

    async def resume_thread(
        self,
        thread_id: str,
        *,
        instructions: str | None = None,
        sandbox: str | None = None,
        approval_policy: str | None = None,
        trust_hooks: bool = False,
    ) -> str:
        """Take up the thread ``thread_id`` (a session of ``codex exec`` or of this server).

        Raises:
            RunError: E_CLI_ERROR, the server has no such thread, or did not confirm the hooks.
        """
        settings = _settings(instructions, sandbox, approval_policy, trust_hooks)
        return await self._open_thread(
            "thread/resume", {"threadId": thread_id, **settings}, trust_hooks
        )

    async def _open_thread(self, method: str, params: dict[str, Any], trust_hooks: bool) -> str:
        """``thread/start`` or ``thread/resume`` in this folder; with ``trust_hooks``, only once
        Codex said the hooks run."""
        result = await self.request(method, {**params, "cwd": str(self.cwd)})
        self.thread_id = str(result["thread"]["id"])
        if trust_hooks:
            try:
                async with asyncio.timeout(self.hook_check_s):
                    await self._hooks_trusted.wait()
            except TimeoutError:
                raise RunError(
                    "E_CLI_ERROR",
                    "codex app-server did not confirm that it runs this run's approval hooks, "
                    "so no call could reach the owner's card: the turn was not started",
                ) from None
        return self.thread_id

    async def start_turn(self, text: str) -> str:
        """Start a turn with ``text`` (the end: :meth:`turn_end`)."""
        self._messages = []
        self._turn_done = asyncio.get_running_loop().create_future()
        result = await self.request(
            "turn/start", {"threadId": self._thread(), "input": [_text(text)]}
        )
        self.turn_id = str(result["turn"]["id"])
        return self.turn_id

    async def steer(self, text: str) -> None:
        """Add ``text`` to the running turn.

        Raises:
            RunError: E_NOT_STARTED, no turn runs; or the server's refusal (E_CLI_ERROR).
        """
        if self.turn_id is None or self._turn_done is None or self._turn_done.done():
            raise RunError("E_NOT_STARTED", "no Codex turn is running to take the message")
        await self.request(
            "turn/steer",
            {"threadId": self._thread(), "expectedTurnId": self.turn_id, "input": [_text(text)]},
        )

    async def interrupt(self) -> None:
        if self.turn_id is None:
            return
        await self.request("turn/interrupt", {"threadId": self._thread(), "turnId": self.turn_id})

    async def turn_end(self) -> TurnEnd:
        if self._turn_done is None:
            raise RunError("E_NOT_STARTED", "no Codex turn was started")
        return await self._turn_done

    def _thread(self) -> str:
        if self.thread_id is None:
            raise RunError("E_NOT_STARTED", "no Codex thread was started")
        return self.thread_id

    # ---- JSON-RPC ------------------------------------------------------------------------

    async def request(self, method: str, params: Mapping[str, Any]) -> Any:
        """Send a request and wait for its result.

        Raises:
            RunError: E_CLI_ERROR, the server answered with an error or ended.
        """
        self._next += 1
        ident = self._next
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = waiter
        await self._send({"id": ident, "method": method, "params": dict(params)})
        return await waiter

    async def _send(self, message: Mapping[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise RunError("E_CLI_ERROR", "codex app-server is not running")
        proc.stdin.write((json.dumps(message) + "\n").encode())
        await proc.stdin.drain()

    async def _read(self) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stdout is not None
        try:
            while line := await proc.stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    log.info("codex app-server wrote a line that is not JSON: %.200r", line)
                    continue
                if isinstance(message, dict):
                    await self._dispatch(message)
        finally:
            ended = RunError("E_CLI_ERROR", "codex app-server ended")
            for waiter in self._pending.values():
                if not waiter.done():
                    waiter.set_exception(ended)
            if self._turn_done is not None and not self._turn_done.done():
                self._turn_done.set_result(TurnEnd("failed", self._messages, "the server ended"))

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if "id" in message and method is None:  # a response
            waiter = self._pending.pop(int(message["id"]), None)
            if waiter is None or waiter.done():
                return
            if "error" in message:
                error = message["error"] or {}
                waiter.set_exception(RunError("E_CLI_ERROR", str(error.get("message") or error)))
            else:
                waiter.set_result(message.get("result"))
            return
        if "id" in message:  # the server asks: never approved from here
            await self._send(refusal(message))
            return
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return
        if method == "warning" and HOOK_TRUST_WARNING in str(params.get("message")):
            self._hooks_trusted.set()
        if self.on_notification is not None:
            self.on_notification(str(method), params)
        if method == "item/completed":
            item = params.get("item") or {}
            if item.get("type") == "agentMessage" and item.get("text"):
                self._messages.append(str(item["text"]))
        elif method == "turn/completed":
            turn = params.get("turn") or {}
            done = self._turn_done
            if done is not None and not done.done() and turn.get("id") in (None, self.turn_id):
                error = turn.get("error")
                done.set_result(
                    TurnEnd(
                        str(turn.get("status") or "completed"),
                        list(self._messages),
                        str(error.get("message")) if isinstance(error, dict) else None,
                    )
                )


DECLINED = {
    "item/commandExecution/requestApproval": {"decision": "decline"},
    "item/fileChange/requestApproval": {"decision": "decline"},
    "execCommandApproval": {"decision": "abort"},
    "applyPatchApproval": {"decision": "abort"},
}
"""The answers that decline an approval the server asks for; any other request gets an error."""


def refusal(message: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to a request of the server's: a decline (approvals) or an error, never an
    acceptance (fail closed)."""
    declined = DECLINED.get(str(message.get("method")))
    if declined is not None:
        log.info("codex app-server asked %s: declined", message.get("method"))
        return {"id": message["id"], "result": declined}
    return {"id": message["id"], "error": {"code": -32601, "message": "not supported"}}


def _settings(
    instructions: str | None, sandbox: str | None, approval_policy: str | None, trust_hooks: bool
) -> dict[str, Any]:
    """A thread's optional settings, as ``thread/start`` and ``thread/resume`` take them."""
    settings: dict[str, Any] = {
        "developerInstructions": instructions,
        "sandbox": sandbox,
        "approvalPolicy": approval_policy,
    }
    if trust_hooks:
        settings["config"] = {"bypass_hook_trust": True}
    return {key: value for key, value in settings.items() if value}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "text_elements": []}
