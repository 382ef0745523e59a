"""The wire: what the MCP transport writes reaches the pipe, and a response's callback runs only
once that response was written, never for an error or another request."""

from __future__ import annotations

import contextlib
import json
import os

import pytest

from discord_mcp.server.wire import Wire


async def test_a_callback_runs_once_its_result_was_written_and_never_for_an_error() -> None:
    read_end, write_end = os.pipe()
    wire = Wire()
    ran: list[str] = []
    wire.after_response("7", lambda: ran.append("seven"))
    wire.after_response("8", lambda: ran.append("eight"))
    try:
        with wire.claimed(fd=write_end):
            await wire.write(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}) + "\n")
            assert ran == []  # written into the buffer, not yet into the pipe
            await wire.flush()
            assert ran == ["seven"]
            error = {"jsonrpc": "2.0", "id": 8, "error": {"code": -1, "message": "no"}}
            await wire.write(json.dumps(error) + "\n")
            await wire.write(json.dumps({"jsonrpc": "2.0", "method": "notify"}) + "\n")
            await wire.flush()
            os.write(write_end, b"stray\n")  # fd now points at stderr: not into the wire
        os.write(write_end, b"after\n")  # restored
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            lines = pipe.read().decode().splitlines()
    finally:
        with contextlib.suppress(OSError):  # closed above unless the test failed first
            os.close(write_end)
    assert ran == ["seven"]
    assert [json.loads(line).get("id") for line in lines[:3]] == [7, 8, None]
    assert lines[3:] == ["after"]


async def test_writing_outside_a_claim_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not claimed"):
        await Wire().write("{}\n")
