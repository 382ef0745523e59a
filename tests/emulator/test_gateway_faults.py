"""Gateway faults through ``POST /_emulator/faults`` and the heartbeat watchdog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import (
    GUILDS,
    faults,
    gateway,
    identified,
    post_as,
)

MakeEmulator = Callable[..., RunningEmulator]


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


@pytest.fixture
def fast(make_emulator: MakeEmulator) -> RunningEmulator:
    """Heartbeats every 412 ms: the watchdog (619 ms) and op 7's grace (one interval) act
    within a test, with room for a slow machine to identify first."""
    return make_emulator(rate_limit_scale=0.0001, gateway_heartbeat_scale=0.01)


async def _resume(running: RunningEmulator, session_id: str, seq: int | None) -> list[Any]:
    async with gateway(running) as client:
        await client.hello()
        await client.resume(session_id, seq)
        replayed = []
        while not replayed or replayed[-1]["t"] != "RESUMED":
            replayed.append(await client.dispatch())
    return replayed


async def test_a_client_that_stops_heartbeating_is_closed_4000_and_can_resume(
    fast: RunningEmulator,
) -> None:
    async with identified(fast, GUILDS) as client:
        # Beats are not sent: the watchdog closes after 1.5 intervals without one.
        closed = await client.closed()
    replayed = await _resume(fast, str(client.session_id), client.seq)

    assert (closed.code, closed.reason) == (4000, "Heartbeat timed out.")
    assert [d["t"] for d in replayed] == ["RESUMED"]


async def test_stop_acks_makes_a_zombie_until_a_new_connection(running: RunningEmulator) -> None:
    async with identified(running, GUILDS) as zombie:
        answer = await faults(running, {"gateway": {"stop_acks": True}})
        await zombie.send(1, zombie.seq)
        await post_as(running, running.owner_user_id, "barrier")  # no GUILD_MESSAGES: nothing
        async with identified(running, GUILDS) as fresh:
            await fresh.send(1, fresh.seq)
            ack = await fresh.receive()
        await zombie.send(1, zombie.seq)
        await faults(running, {"gateway": {"heartbeat_request": True}})
        after_beats = await zombie.receive()

    assert answer.json()["gateway_connections"] == [
        {"session_id": zombie.session_id, "acks_stopped": True}
    ]
    assert ack["op"] == 11
    # Two beats went unanswered: the next frame is the server's own heartbeat request.
    assert after_beats == {"op": 1, "d": None, "s": None, "t": None}


async def test_a_scripted_close_uses_the_given_code_and_keeps_the_session(
    running: RunningEmulator,
) -> None:
    async with identified(running, GUILDS) as client:
        await faults(running, {"gateway": {"close": 4000}})
        closed = await client.closed()
    replayed = await _resume(running, str(client.session_id), client.seq)

    assert closed.code == 4000
    assert [d["t"] for d in replayed] == ["RESUMED"]


async def test_a_scripted_4009_close_ends_the_session(running: RunningEmulator) -> None:
    async with identified(running, GUILDS) as client:
        await faults(running, {"gateway": {"close": 4009}})
        closed = await client.closed()
    async with gateway(running) as second:
        await second.hello()
        await second.resume(str(client.session_id), client.seq)
        refused = await second.next_op(9)

    assert closed.code == 4009
    assert refused["d"] is False


async def test_reconnect_sends_op_7_keeps_events_for_the_resume_and_closes_later(
    fast: RunningEmulator,
) -> None:
    async with identified(fast) as client:
        # A beat now puts the watchdog (1.5 intervals) after op 7's grace (1 interval).
        await client.send(1, client.seq)
        await client.next_op(11)
        await faults(fast, {"gateway": {"reconnect": True}})
        op7 = await client.next_op(7)
        # And a beat once op 7 is in: the watchdog then runs out at least half an interval
        # after op 7's grace, however slowly a loaded machine brought the fault and op 7.
        await client.send(1, client.seq)
        posted = await post_as(fast, fast.owner_user_id, "while reconnecting")
        closed = await client.closed()
    replayed = await _resume(fast, str(client.session_id), client.seq)

    assert op7 == {"op": 7, "d": None, "s": None, "t": None}
    assert (closed.code, closed.reason) == (4000, "Reconnect requested.")
    assert [d["t"] for d in replayed] == ["MESSAGE_CREATE", "RESUMED"]
    assert replayed[0]["d"]["id"] == posted["id"]
    assert replayed[0]["s"] == client.seq + 1  # type: ignore[operator]


@pytest.mark.parametrize("resumable", [True, False])
async def test_invalid_session_says_whether_the_session_may_resume(
    running: RunningEmulator, resumable: bool
) -> None:
    async with identified(running, GUILDS) as client:
        await faults(running, {"gateway": {"invalid_session": resumable}})
        op9 = await client.next_op(9)
    async with gateway(running) as second:
        await second.hello()
        await second.resume(str(client.session_id), client.seq)
        first = await second.receive()

    assert op9["d"] is resumable
    if resumable:
        assert first["t"] == "RESUMED"
    else:
        assert first == {"op": 9, "d": False, "s": None, "t": None}


async def test_a_fault_for_one_session_leaves_the_others_alone(running: RunningEmulator) -> None:
    async with identified(running, GUILDS) as target, identified(running, GUILDS) as other:
        await faults(running, {"gateway": {"session_id": target.session_id, "close": 4000}})
        closed = await target.closed()
        await other.send(1, other.seq)
        ack = await other.receive()

    assert closed.code == 4000
    assert ack["op"] == 11


async def test_one_request_combines_gateway_and_portal_faults(running: RunningEmulator) -> None:
    async with identified(running, GUILDS) as client:
        answer = await faults(
            running,
            {"message_content_intent_enabled": False, "gateway": {"drop": True}},
        )
        closed = await client.closed()

    assert answer.status_code == 200
    assert answer.json()["message_content_intent_enabled"] is False
    assert closed.code is None


@pytest.mark.parametrize(
    ("gateway_fault", "complaint"),
    [
        ({"close": 1006}, "'close'"),
        ({"close": "4000"}, "'close'"),
        ({"close": 4000, "drop": True}, "not both"),
        ({"drop": False}, "'drop'"),
        ({"stop_acks": "yes"}, "'stop_acks'"),
        ({"session_id": "nope", "close": 4000}, "no open gateway connection for session"),
        ({"session_id": "x"}, "at least one"),
        ({"explode": True}, "unknown gateway field"),
        ("close", "JSON object"),
    ],
)
async def test_a_bad_gateway_fault_is_400_and_changes_nothing(
    running: RunningEmulator, gateway_fault: Any, complaint: str
) -> None:
    async with identified(running, GUILDS) as client:
        response = await faults(
            running, {"message_content_intent_enabled": False, "gateway": gateway_fault}
        )
        await client.send(1, client.seq)
        ack = await client.receive()
        state = (await faults(running, {"rate_limit_scale": 0.0001})).json()

    assert response.status_code == 400
    assert complaint in response.json()["error"]
    assert ack["op"] == 11
    assert state["message_content_intent_enabled"] is True


async def test_a_gateway_fault_without_connections_is_refused(running: RunningEmulator) -> None:
    response = await faults(running, {"gateway": {"reconnect": True}})

    assert response.status_code == 400
    assert response.json()["error"] == "no open gateway connection"


@pytest.mark.parametrize(
    "body",
    [{"identify_limit": -1}, {"identify_limit": True}, {"token_reset": "yes"}],
)
async def test_bad_identify_settings_are_400(running: RunningEmulator, body: Any) -> None:
    assert (await faults(running, body)).status_code == 400
