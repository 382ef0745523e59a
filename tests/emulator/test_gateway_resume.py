"""RESUME: replay in order without loss or duplicates, and when a session can no longer resume."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import (
    GUILDS,
    Closed,
    GatewayClient,
    control,
    faults,
    gateway,
    identified,
    post_as,
    stats,
)

MakeEmulator = Callable[..., RunningEmulator]


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def _resumed(client: GatewayClient, session_id: str, seq: int | None) -> list[Any]:
    """RESUME on ``client``; the dispatches up to and including RESUMED."""
    await client.hello()
    await client.resume(session_id, seq)
    replayed = []
    while not replayed or replayed[-1]["t"] != "RESUMED":
        replayed.append(await client.dispatch())
    return replayed


async def _posts(running: RunningEmulator, *contents: str) -> list[str]:
    return [(await post_as(running, running.owner_user_id, c))["id"] for c in contents]


async def test_a_resume_replays_what_was_missed_then_resumed(running: RunningEmulator) -> None:
    async with identified(running) as first:
        session_id = first.session_id
        assert session_id is not None
        await _posts(running, "seen")
        await first.dispatch("MESSAGE_CREATE")
        await faults(running, {"gateway": {"drop": True}})
        dropped = await first.closed()
    missed = await _posts(running, "away 1", "away 2")

    async with gateway(running) as second:
        replayed = await _resumed(second, session_id, first.seq)
        after = await _posts(running, "back")
        live = await second.dispatch("MESSAGE_CREATE")

    assert dropped.code is None  # no close frame: the TCP connection just ended
    assert [d["t"] for d in replayed] == ["MESSAGE_CREATE", "MESSAGE_CREATE", "RESUMED"]
    assert [d["d"]["id"] for d in replayed[:2]] == missed
    assert live["d"]["id"] == after[0]
    sequence = [d["s"] for d in first.received + second.received]
    assert sequence == list(range(1, len(sequence) + 1))
    counters = await stats(running)
    assert (counters["gateway_identifies"], counters["gateway_resumes"]) == (1, 1)


async def test_after_the_client_closes_with_1000_the_session_cannot_resume(
    running: RunningEmulator,
) -> None:
    # Leaving ``identified`` closes the websocket with 1000, which ends the session.
    async with identified(running) as first:
        session_id = first.session_id
        assert session_id is not None
    async with gateway(running) as second:
        await second.hello()
        await second.resume(session_id, first.seq)
        refused = await second.next_op(9)

    assert refused["d"] is False


async def test_after_a_non_1000_close_the_session_resumes(running: RunningEmulator) -> None:
    async with identified(running) as first:
        session_id = first.session_id
        assert session_id is not None
        ids = await _posts(running, "a", "b", "c")
        for _ in ids:
            await first.dispatch("MESSAGE_CREATE")
        await first.ws.close(4000)

    async with gateway(running) as second:
        replayed = await _resumed(second, session_id, 3)

    assert [d["d"].get("id") for d in replayed] == [*ids[1:], None]
    assert [d["s"] for d in replayed] == [4, 5, 6]


async def test_resuming_an_unknown_session_gets_op_9_and_identify_still_works(
    running: RunningEmulator,
) -> None:
    async with gateway(running) as client:
        await client.hello()
        await client.resume("0" * 32, 1)
        refused = await client.next_op(9)
        ready = await client.identify(GUILDS)

    assert refused["d"] is False
    assert ready["session_id"] != "0" * 32


async def test_a_seq_that_was_never_sent_is_4007_and_ends_the_session(
    running: RunningEmulator,
) -> None:
    async with identified(running) as first:
        session_id = first.session_id
        assert session_id is not None
        await first.ws.close(4000)
    async with gateway(running) as second:
        await second.hello()
        await second.resume(session_id, 50)
        closed = await second.closed()
    async with gateway(running) as third:
        await third.hello()
        await third.resume(session_id, 2)
        refused = await third.next_op(9)

    assert closed.code == 4007
    assert refused["d"] is False


async def test_a_resume_with_the_wrong_token_is_4004(running: RunningEmulator) -> None:
    async with identified(running) as first:
        session_id = first.session_id
        await first.ws.close(4000)
    async with gateway(running) as second:
        await second.hello()
        await second.send(6, {"token": "wrong", "session_id": session_id, "seq": 2})
        closed = await second.closed()

    assert closed.code == 4004


async def test_a_resume_takes_over_a_session_still_attached_elsewhere(
    running: RunningEmulator,
) -> None:
    async with identified(running) as zombie:
        session_id = zombie.session_id
        assert session_id is not None
        async with gateway(running) as fresh:
            replayed = await _resumed(fresh, session_id, zombie.seq)
            closed = await zombie.closed()
            await _posts(running, "after")
            live = await fresh.dispatch("MESSAGE_CREATE")

    assert [d["t"] for d in replayed] == ["RESUMED"]
    assert closed.code == 4000
    assert live["s"] == 4


async def test_a_session_expires_after_the_resume_timeout(make_emulator: MakeEmulator) -> None:
    running = make_emulator(rate_limit_scale=0.0001, gateway_resume_timeout=0.05)
    async with identified(running) as first:
        session_id = first.session_id
        await first.ws.close(4000)
    async with control(running) as ctl:
        for _ in range(1000):  # bounded: the session is dropped 50 ms after the close
            sessions = (await ctl.get("/state")).json()["gateway_sessions"]
            if not sessions:
                break
        else:
            raise AssertionError(f"the session never expired: {sessions}")

    async with gateway(running) as second:
        await second.hello()
        await second.resume(str(session_id), 2)
        refused = await second.next_op(9)

    assert refused["d"] is False


async def test_the_state_lists_sessions_and_whether_they_are_connected(
    running: RunningEmulator,
) -> None:
    async with identified(running, GUILDS) as client, control(running) as ctl:
        connected = (await ctl.get("/state")).json()["gateway_sessions"]
        await client.ws.close(4000)
        with pytest.raises(Closed):
            await client.receive()
        for _ in range(1000):
            later = (await ctl.get("/state")).json()["gateway_sessions"]
            if not later[0]["connected"]:
                break

    assert connected == [
        {
            "session_id": client.session_id,
            "intents": GUILDS,
            "seq": 2,
            "connected": True,
            "shard": None,
        }
    ]
    assert later[0]["connected"] is False
