"""A scripted ACP agent (no model): for the streaming bench and the engine's crash tests.

    python tests/support/fake_acp_agent.py

Each prompt is answered by what it says:

- ``die``: the process exits at once with code 3, after a line on stderr;
- ``flood``: ``FAKE_ACP_FLOOD_BYTES`` characters of text (default 8 MB) in chunks of
  ``FAKE_ACP_FLOOD_CHUNK`` (default 1000), each a numbered line (``00000042 xxx...``), as fast
  as the pipe takes them, then `` THE END`` ending the turn; ``flood forever`` never ends,
  ignores ``session/cancel`` and, with ``FAKE_ACP_IGNORE_TERM`` set, SIGTERM too;
- ``steady``: an answer of ``FAKE_ACP_STEADY_CHARS`` characters (default 20,000) written at
  an even pace over ``FAKE_ACP_STEADY_SECONDS`` (default 10), numbered lines (``L00042 ...``)
  twice a second, then `` THE END``: an agent writing steadily for as long as a long run
  takes (the budgets bench);
- anything else: a first chunk (``first words``), a pause of ``FAKE_ACP_PAUSE`` seconds
  (default 0.5; or until the file ``FAKE_ACP_RELEASE`` names exists), then ``and the
  rest.``, ending the turn; ``FAKE_ACP_MARKS`` names a file
  where the wall-clock time of each first chunk is appended (the bench compares it with the
  time Discord showed it).

``FAKE_ACP_STARTED`` names a file where the process appends its pid when ``initialize`` comes,
which it answers after ``FAKE_ACP_START_PAUSE`` seconds (default 0).

It reports ``loadSession``; with ``FAKE_ACP_SESSIONS`` naming a directory its sessions are files
there, so a new process can load them (without it, a load after a restart fails and the engine
starts a new session). ``FAKE_ACP_LOADS`` names a file where each loaded id is appended.

Its sessions offer two models, ``fast`` (current) and ``deep``, as a ``model`` config option;
``FAKE_ACP_SWITCHES`` names a file where each ``session/set_config_option`` is appended
(``<configId>=<value>``). ``FAKE_ACP_PROMPTS`` names a file where each prompt's text is
appended (one JSON string a line). A prompt with the word ``ask-permission`` first asks to run
``rm -rf build`` (options: allow once, reject once) and says what came back
(``allowed`` / ``rejected`` / ``cancelled``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from typing import Any

import acp
from acp import schema

from discord_mcp import heap


class FakeAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: set[str] = set()
        self.model = "fast"

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        started = os.environ.get("FAKE_ACP_STARTED")
        if started:  # say so, then take as long as FAKE_ACP_START_PAUSE says to answer
            with open(started, "a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
        await asyncio.sleep(float(os.environ.get("FAKE_ACP_START_PAUSE", "0")))
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(load_session=True),
            agent_info=schema.Implementation(name="fake-acp-agent", version="1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.sessions.add(session_id)
        kept = os.environ.get("FAKE_ACP_SESSIONS")
        if kept:
            with open(os.path.join(kept, session_id), "w", encoding="utf-8"):
                pass
        return schema.NewSessionResponse(session_id=session_id, config_options=[self._models()])

    def _models(self) -> Any:
        return schema.SessionConfigOptionSelect.model_validate(
            {
                "id": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": self.model,
                "options": [
                    {"value": "fast", "name": "Fast model"},
                    {"value": "deep", "name": "Deep model"},
                ],
            }
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        if config_id != "model" or value not in ("fast", "deep"):
            raise acp.RequestError.invalid_params({"value": "unknown"})
        self.model = str(value)
        _append("FAKE_ACP_SWITCHES", f"{config_id}={value}")
        return schema.SetSessionConfigOptionResponse(config_options=[self._models()])

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> None:
        kept = os.environ.get("FAKE_ACP_SESSIONS")
        known = session_id in self.sessions or bool(
            kept and session_id.isalnum() and os.path.exists(os.path.join(kept, session_id))
        )
        if not known:
            raise acp.RequestError.invalid_params({"sessionId": "unknown session"})
        self.sessions.add(session_id)
        loads = os.environ.get("FAKE_ACP_LOADS")
        if loads:
            with open(loads, "a", encoding="utf-8") as handle:
                handle.write(session_id + "\n")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        _append("FAKE_ACP_PROMPTS", json.dumps(text))
        if "ask-permission" in text.split():
            await self._say(session_id, f"asked: {await self._ask(session_id)}")
            return schema.PromptResponse(stop_reason="end_turn")
        if "die" in text.split():
            sys.stderr.write("fake agent: told to die\n")
            sys.stderr.flush()
            os._exit(3)
        if "flood" in text.split():
            await self._flood(session_id, forever="forever" in text.split())
            return schema.PromptResponse(stop_reason="end_turn")
        if "steady" in text.split():
            await self._steady(session_id)
            return schema.PromptResponse(stop_reason="end_turn")
        await self._say(session_id, "first words")
        marks = os.environ.get("FAKE_ACP_MARKS")
        if marks:
            with open(marks, "a", encoding="utf-8") as handle:
                handle.write(f"{time.time()}\n")
        release = os.environ.get("FAKE_ACP_RELEASE")
        if release:
            while not os.path.exists(release):
                await asyncio.sleep(0.05)
        else:
            await asyncio.sleep(float(os.environ.get("FAKE_ACP_PAUSE", "0.5")))
        await self._say(session_id, " and the rest.")
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def _flood(self, session_id: str, *, forever: bool) -> None:
        total = int(os.environ.get("FAKE_ACP_FLOOD_BYTES", str(8 * 1024 * 1024)))
        size = int(os.environ.get("FAKE_ACP_FLOOD_CHUNK", "1000"))
        if os.environ.get("FAKE_ACP_IGNORE_TERM"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        number = sent = 0
        while forever or sent < total:
            line = f"{number:08d} " + "x" * max(size - 10, 0) + "\n"
            await self._say(session_id, line)
            number += 1
            sent += len(line)
        await self._say(session_id, " THE END")

    async def _steady(self, session_id: str) -> None:
        total = int(os.environ.get("FAKE_ACP_STEADY_CHARS", "20000"))
        seconds = float(os.environ.get("FAKE_ACP_STEADY_SECONDS", "10"))
        beats = max(1, int(seconds * 2))
        size = max(12, total // beats)
        started = time.monotonic()
        for number in range(beats):
            line = f"L{number:05d} " + "w" * (size - 8) + "\n"
            await self._say(session_id, line)
            await asyncio.sleep(max(0.0, started + (number + 1) / 2 - time.monotonic()))
        await self._say(session_id, " THE END")

    async def _ask(self, session_id: str) -> str:
        options = [
            schema.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        call = schema.ToolCallUpdate(
            tool_call_id="call-1", title="rm -rf build", kind="execute",
            raw_input={"command": "rm -rf build"},
        )  # fmt: skip
        answer = await self.conn.request_permission(
            session_id=session_id, tool_call=call, options=options
        )
        outcome = answer.outcome
        if getattr(outcome, "option_id", None) == "yes":
            return "allowed"
        return "rejected" if getattr(outcome, "option_id", None) == "no" else "cancelled"

    async def _say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(text)
        )


def _append(variable: str, line: str) -> None:
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


if __name__ == "__main__":
    heap.starting()  # its exit without a walk of its heap, as our own processes'
    asyncio.run(acp.run_agent(FakeAgent()))
