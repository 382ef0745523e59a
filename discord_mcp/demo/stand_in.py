"""The plain demo's agent CLI in a run thread: a stand-in for ``claude -p --output-format
stream-json`` that needs no model.

``discord-mcp demo`` (without ``--agent``) puts this program first on ``discord-watch``'s
``PATH`` under the name ``claude``, so the daemon runs it in a run thread exactly as it runs
Claude Code: with the ``--mcp-config`` naming the run's ``discord-mcp`` server (whose default
thread is the run thread), ``--resume`` for later jobs, and the prompt after ``--``. Each job it
asks the owner a question there (``ask_decision``, waiting while ``pending``), asks the
owner's approval for a command (``approve``, the permission prompt Claude Code would call), and
ends with a result line, printing the stream-json events the daemon's Claude decoder reads. It
runs nothing: it says what it would do.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp.demo.agent import AgentError, McpStdioClient

SERVER = "discord"
QUESTION = "Run the full test suite before tagging the release?"
OPTIONS = ("Run it", "Skip it")
COMMAND = "scripts/test"


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _assistant(session: str, *blocks: dict[str, Any]) -> None:
    message = {"role": "assistant", "content": list(blocks)}
    _emit({"type": "assistant", "message": message, "session_id": session})


def _options(argv: Sequence[str]) -> tuple[Path | None, str | None]:
    config = resume = None
    for flag, value in itertools.pairwise(argv):
        if flag == "--mcp-config":
            config = Path(value)
        elif flag == "--resume":
            resume = value
    return config, resume


async def _job(server: dict[str, Any], session: str) -> str:
    argv = [str(server["command"]), *map(str, server.get("args") or [])]
    env = {**os.environ, **{k: str(v) for k, v in (server.get("env") or {}).items()}}
    agent = McpStdioClient(argv, env, Path.cwd(), sys.stderr.buffer)
    await agent.start()
    try:
        question = {"question": QUESTION, "options": list(OPTIONS)}
        question["context"] = "The release branch is ready; the suite takes about ten minutes."
        _assistant(session, {"type": "tool_use", "name": "ask_decision", "input": question})
        result = await agent.call("ask_decision", question)
        while result.get("status") == "pending":
            decision = {"decision_id": result["decision_id"]}
            result = await agent.call("wait_decision", decision)
        if result.get("selected_index") != 0:
            return f"Skipping the suite, as you said ({result.get('answer')}). Tagging now."
        _assistant(session, {"type": "text", "text": "Asking to run the test suite."})
        approval = await agent.call("approve", {"tool_name": "Bash", "input": {"command": COMMAND}})
        if approval.get("behavior") != "allow":
            return f"I did not run `{COMMAND}`: {approval.get('message') or 'not approved'}."
        return f"You allowed `{COMMAND}`: (demo) it would run now, then I would tag the release."
    finally:
        await agent.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Play one job; the exit code and the final result line say how it went."""
    args = list(sys.argv[1:] if argv is None else argv)
    config, resume = _options(args)
    session = resume or str(uuid.uuid4())
    servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"] if config else {}
    connected = SERVER in servers
    status = [{"name": SERVER, "status": "connected" if connected else "failed"}]
    _emit({"type": "system", "subtype": "init", "session_id": session, "mcp_servers": status})
    try:
        if not connected:
            raise AgentError("no discord server in --mcp-config")
        text = asyncio.run(_job(servers[SERVER], session))
        failed = False
    except (AgentError, OSError, ValueError, TimeoutError) as exc:
        text, failed = f"The demo agent failed: {exc}", True
    _assistant(session, {"type": "text", "text": text})
    _emit(
        {
            "type": "result",
            "subtype": "error_during_execution" if failed else "success",
            "is_error": failed,
            "result": text,
            "session_id": session,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0},
            "total_cost_usd": 0,
        }
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
