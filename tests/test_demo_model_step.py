"""The scripted model of ``discord-mcp demo model`` tells the truth about its write: a Codex
shell command that exited non-zero is reported as not written (Codex sends a failed command's
output as a plain result, ``Process exited with code 1``), not as done."""

from __future__ import annotations

from typing import Any

from discord_mcp.demo.model import ModelRequest, Text
from discord_mcp.demo.model_cli import DONE, delegation_step


def codex_request(output: str) -> ModelRequest:
    body: dict[str, Any] = {
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "t"}]},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": output},
        ]
    }
    return ModelRequest(
        seq=1, api="openai", method="POST", path="/v1/responses", query={}, headers={}, body=body
    )


def said(output: str) -> str:
    reply = delegation_step(codex_request(output))
    assert isinstance(reply, Text)
    return reply.text


def test_a_codex_command_that_failed_is_reported_as_not_written() -> None:
    failed = "Chunk ID: 1\nProcess exited with code 1\nOutput:\nbwrap: execvp failed\n"
    assert said(failed).startswith("I could not write DELEGATED.md")
    assert said("Chunk ID: 1\nProcess exited with code 0\nOutput:\n").startswith(DONE)
