"""The wire: what the MCP transport writes reaches the pipe, and a response's callback runs only
once that response was written, never for an error or another request."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import Callable

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


def _fill(fd: int) -> None:
    """Fill the pipe whose write end is ``fd`` (as a client that stopped reading leaves it)."""
    os.set_blocking(fd, False)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(fd, True)


def _drain_until(fd: int, end: bytes) -> bytes:
    """Read the pipe until what was read ends with ``end``."""
    data = b""
    while not data.endswith(end):
        chunk = os.read(fd, 65536)
        assert chunk, "the pipe closed before the message arrived"
        data += chunk
    return data


def _socket_pair() -> tuple[int, int]:
    """What a Node.js client (Claude Code, Gemini CLI) gives its server as stdio."""
    left, right = socket.socketpair()
    return left.detach(), right.detach()


@pytest.mark.parametrize("channel", [os.pipe, _socket_pair], ids=["pipe", "socket pair"])
async def test_a_full_pipe_never_stops_the_loop_and_loses_nothing(
    channel: Callable[[], tuple[int, int]],
) -> None:
    """A client that stops reading must not freeze the server: each message (small or large)
    waits in a worker thread while the loop goes on, and arrives whole once the client reads."""
    read_end, write_end = channel()
    filler = os.dup(write_end)  # the same pipe, still usable once the wire has claimed fd
    wire = Wire()
    ran: list[str] = []
    wire.after_response("3", lambda: ran.append("three"))
    small = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"ok": True}}) + "\n"
    large = json.dumps({"jsonrpc": "2.0", "method": "note", "params": {"x": "y" * 9000}}) + "\n"
    try:
        with wire.claimed(fd=write_end):
            for text in (small, large):
                _fill(filler)
                await wire.write(text)
                flushing = asyncio.create_task(wire.flush())
                for _ in range(20):  # the loop keeps running while the pipe is full
                    await asyncio.sleep(0.01)
                assert not flushing.done()
                assert ran == ([] if text is small else ["three"])  # not yet written
                drained = await asyncio.to_thread(_drain_until, read_end, text.encode())
                await asyncio.wait_for(flushing, 30)
                assert drained.strip(b"x") == text.encode()
        assert ran == ["three"]
    finally:
        for fd in (read_end, write_end, filler):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.mark.parametrize("channel", [os.pipe, _socket_pair], ids=["pipe", "socket pair"])
async def test_a_small_message_with_room_is_written_without_leaving_the_loop(
    channel: Callable[[], tuple[int, int]],
) -> None:
    """Under load every hop to a worker thread waits to be scheduled (bench/scale.py): a small
    response into a pipe or socket with room goes straight in."""
    read_end, write_end = channel()
    wire = Wire()
    small = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}) + "\n"
    large = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"x": "y" * 9000}}) + "\n"
    try:
        with wire.claimed(fd=write_end):
            await wire.write(small)
            flushing = wire.flush()
            with pytest.raises(StopIteration):  # it finished without suspending once
                flushing.send(None)
            assert os.read(read_end, 65536) == small.encode()
            await wire.write(large)  # more than PIPE_BUF: by a thread, and whole
            await wire.flush()
            assert await asyncio.to_thread(_drain_until, read_end, large.encode()) == (
                large.encode()
            )
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)
