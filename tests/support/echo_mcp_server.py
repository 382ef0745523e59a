"""A tiny stdio MCP server for proving the agent-CLI harness (test-only).

Run as a script (``python echo_mcp_server.py``); configured by environment:

- ``ECHO_MCP_LOG``: JSONL file; one line per event (``start``, ``initialize``, ``call``,
  ``answered``, ``gave_up``), each with the client's ``clientInfo`` when known.
- ``ECHO_MCP_ANSWER``: file the test writes to answer a blocked ``ask_decision`` call. The
  server takes the content and deletes the file, so each call waits for a fresh answer.
- ``ECHO_MCP_MAX_WAIT``: seconds a call waits for an answer before failing (default 60), so a
  broken test never leaves a server blocked forever.
- ``ECHO_MCP_TOKEN``: echoed into the ``start`` event; proves a ``*TOKEN*``-named variable set
  in the CLI's explicit server env reaches the server (Gemini CLI strips inherited ones).

Tests drive it through :class:`EchoServer`; to wait until a CLI is blocked in a call, use
``running_agent.wait_for(echo.calls, ...)``. stdout belongs to the MCP protocol: nothing here
prints.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext

from discord_mcp import heap

_ANSWER_POLL_SECONDS = 0.02


class EchoServer:
    """The test side of the echo server: its command and env, its log, and answering calls."""

    def __init__(self, directory: Path, *, max_wait: float = 60.0) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.log_path = directory / "echo-calls.jsonl"
        self.answer_path = directory / "echo-answer.txt"
        self.max_wait = max_wait

    @property
    def argv(self) -> list[str]:
        """The command that runs the server: this interpreter and this file."""
        return [sys.executable, str(Path(__file__).resolve())]

    def env(self, token: str = "echo-token-value") -> dict[str, str]:
        """The server's environment, to pass in the CLI's MCP server config."""
        return {
            "ECHO_MCP_LOG": str(self.log_path),
            "ECHO_MCP_ANSWER": str(self.answer_path),
            "ECHO_MCP_MAX_WAIT": str(self.max_wait),
            "ECHO_MCP_TOKEN": token,
        }

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Logged events (all servers started with this log), optionally of one kind."""
        try:
            text = self.log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        # A server may be mid-write: only complete lines count.
        lines = text[: text.rfind("\n") + 1].splitlines()
        events = [json.loads(line) for line in lines if line.strip()]
        return [e for e in events if kind is None or e.get("event") == kind]

    def calls(self) -> list[dict[str, Any]]:
        """The ``ask_decision`` calls received so far."""
        return self.events("call")

    def answer(self, text: str) -> None:
        """Answer the pending (or next) call with ``text``; written atomically."""
        partial = self.answer_path.with_suffix(".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(self.answer_path)

    def client_infos(self) -> list[dict[str, Any]]:
        """The distinct ``clientInfo`` values clients sent at initialize or with calls."""
        seen: list[dict[str, Any]] = []
        for event in self.events():
            info = event.get("client_info")
            if info and info not in seen:
                seen.append(info)
        return seen


# --------------------------------------------------------------------------------------------
# The server process


def _log(event: str, **fields: Any) -> None:
    path = os.environ.get("ECHO_MCP_LOG")
    if not path:
        return
    line = json.dumps({"event": event, "time": time.time(), "pid": os.getpid(), **fields})
    # One write of one line to an O_APPEND file: lines from concurrent servers never interleave.
    with open(path, "a", encoding="utf-8") as log:
        log.write(line + "\n")


def _client_info(params: Any) -> dict[str, Any] | None:
    info = getattr(params, "client_info", None)
    if info is None:
        return None
    return {"name": info.name, "version": info.version}


class _LogInitialize(Middleware):
    """Logs the handshake's clientInfo (handshake-era connections only: 2026-07-28 has none)."""

    async def on_initialize(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        params = getattr(context.message, "params", None)
        _log(
            "initialize",
            client_info=_client_info(params),
            protocol_version=getattr(params, "protocol_version", None),
        )
        return await call_next(context)


def _build_server() -> FastMCP:
    mcp = FastMCP("echo", middleware=[_LogInitialize()])

    @mcp.tool
    async def ask_decision(
        question: str, ctx: Context, options: list[str] | None = None
    ) -> dict[str, str]:
        """Ask the human a question and wait for the answer."""
        session = ctx.session
        _log(
            "call",
            tool="ask_decision",
            arguments={"question": question, "options": options},
            client_info=_client_info(session.client_params),
            protocol_version=session.protocol_version,
        )
        answer_path = Path(os.environ["ECHO_MCP_ANSWER"])
        max_wait = float(os.environ.get("ECHO_MCP_MAX_WAIT", "60"))
        with anyio.move_on_after(max_wait):
            while not answer_path.exists():
                await anyio.sleep(_ANSWER_POLL_SECONDS)
            answer = answer_path.read_text(encoding="utf-8")
            answer_path.unlink()
            _log("answered", answer=answer)
            return {"answer": answer}
        _log("gave_up", waited=max_wait)
        raise ToolError(f"no answer within {max_wait:g}s")

    return mcp


def main() -> None:
    _log("start", token=os.environ.get("ECHO_MCP_TOKEN"), cwd=os.getcwd())
    _build_server().run(show_banner=False)


if __name__ == "__main__":
    heap.starting()  # its exit without a walk of FastMCP's heap, as our own server's
    main()
