"""The gateway handshake: HELLO, heartbeats, IDENTIFY, READY, close codes, identify limits."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import (
    GUILD_MESSAGES,
    GUILDS,
    MESSAGE_CONTENT,
    bot_api,
    faults,
    gateway,
    identified,
    post_as,
    properties,
    stats,
)

MakeEmulator = Callable[..., RunningEmulator]


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    # Identify windows of 0.5 ms: tests that identify several times never meet max_concurrency.
    return make_emulator(rate_limit_scale=0.0001)


async def test_hello_gives_discords_heartbeat_interval(emulator: RunningEmulator) -> None:
    async with gateway(emulator) as client:
        hello = await client.receive()

    assert hello == {"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None}


async def test_the_heartbeat_scale_shortens_the_interval(make_emulator: MakeEmulator) -> None:
    running = make_emulator(gateway_heartbeat_scale=0.004)

    async with gateway(running) as client:
        assert await client.hello() == 165


async def test_a_heartbeat_is_acknowledged_even_before_identify(
    emulator: RunningEmulator,
) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.send(1, None)
        ack = await client.receive()
        await client.send(1, 7)
        second = await client.receive()

    assert ack == {"op": 11, "d": None, "s": None, "t": None}
    assert second["op"] == 11
    assert (await stats(emulator))["gateway_heartbeats"] == 2


async def test_identify_gets_ready_then_the_guild(emulator: RunningEmulator) -> None:
    async with bot_api(emulator) as api:
        starter = (
            await api.post(f"/channels/{emulator.channel_id}/messages", json={"content": "q"})
        ).json()
        url = f"/channels/{emulator.channel_id}/messages/{starter['id']}/threads"
        await api.post(url, json={"name": "open"})
        closed = (
            await api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "shut"})
        ).json()
        await api.patch(f"/channels/{closed['id']}", json={"archived": True})

    async with gateway(emulator) as client:
        await client.hello()
        ready = await client.identify()
        guild = await client.dispatch("GUILD_CREATE")

    assert client.received[0]["s"] == 1
    assert ready["v"] == 10
    assert ready["user"]["id"] == emulator.bot_user_id
    assert ready["user"]["bot"] is True
    assert ready["guilds"] == [{"id": emulator.guild_id, "unavailable": True}]
    assert len(ready["session_id"]) == 32
    assert ready["resume_gateway_url"] == emulator.gateway_url
    assert ready["application"]["id"] == emulator.application_id
    assert ready["application"]["flags"] & (1 << 19)  # MESSAGE_CONTENT enabled (limited)
    assert guild["s"] == 2
    assert guild["d"]["id"] == emulator.guild_id
    assert guild["d"]["unavailable"] is False
    assert [c["id"] for c in guild["d"]["channels"]] == [emulator.channel_id]
    assert [t["id"] for t in guild["d"]["threads"]] == [starter["id"]]
    assert guild["d"]["members"][0]["user"]["id"] == emulator.bot_user_id
    assert (await stats(emulator))["gateway_identifies"] == 1


async def test_without_the_guilds_intent_no_guild_create_follows(
    emulator: RunningEmulator,
) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.identify(GUILD_MESSAGES)
        await post_as(emulator, emulator.owner_user_id, "first")
        created = await client.dispatch()

    assert created["t"] == "MESSAGE_CREATE"
    assert created["s"] == 2


async def test_sequence_numbers_grow_by_one_per_dispatch(running: RunningEmulator) -> None:
    async with identified(running) as client:
        for n in range(5):
            await post_as(running, running.owner_user_id, f"m{n}")
            await client.dispatch("MESSAGE_CREATE")

    assert [d["s"] for d in client.received] == list(range(1, 8))


async def test_zlib_stream_sends_one_compressed_stream(emulator: RunningEmulator) -> None:
    async with gateway(emulator, "?v=10&encoding=json&compress=zlib-stream") as client:
        frame = await client.ws.recv()
        assert isinstance(frame, bytes)
        assert frame.endswith(b"\x00\x00\xff\xff")
        hello = json.loads(client.inflate(frame))
        await client.identify()
        guild = await client.dispatch("GUILD_CREATE")

    assert hello["op"] == 10
    assert guild["d"]["id"] == emulator.guild_id


async def test_payload_compression_compresses_each_payload(emulator: RunningEmulator) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.send(
            2,
            {
                "token": emulator.token,
                "intents": GUILDS,
                "properties": properties(),
                "compress": True,
            },
        )
        frame = await client.ws.recv()

    assert isinstance(frame, bytes)
    assert json.loads(zlib.decompress(frame))["t"] == "READY"


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        pytest.param({"op": 3, "d": {}}, 4003, id="presence-before-identify"),
        pytest.param({"op": 99, "d": None}, 4001, id="unknown-opcode"),
        pytest.param({"op": 11, "d": None}, 4001, id="a-receive-only-opcode"),
        pytest.param({"d": 1}, 4002, id="no-opcode"),
        pytest.param([1, 2], 4002, id="not-an-object"),
        pytest.param({"op": 2, "d": "token"}, 4002, id="identify-not-an-object"),
        pytest.param({"op": 1, "d": "x"}, 4002, id="heartbeat-with-a-string"),
    ],
)
async def test_a_bad_payload_is_closed_with_discords_code(
    emulator: RunningEmulator, payload: object, code: int
) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.send_raw(json.dumps(payload))
        closed = await client.closed()

    assert closed.code == code


async def test_undecodable_and_oversized_payloads_are_4002(emulator: RunningEmulator) -> None:
    for raw in ("{not json", json.dumps({"op": 1, "d": None, "pad": "x" * 4100})):
        async with gateway(emulator) as client:
            await client.hello()
            await client.send_raw(raw)
            assert (await client.closed()).code == 4002


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("?v=9&encoding=json", 4012),
        ("?v=10&encoding=etf", 1003),
        ("?v=10&compress=zstd-stream", 1003),
    ],
)
async def test_an_unsupported_version_or_encoding_is_refused(
    emulator: RunningEmulator, query: str, code: int
) -> None:
    async with gateway(emulator, query) as client:
        closed = await client.closed()

    assert closed.code == code


@pytest.mark.parametrize("token", ["wrong-token", "Bot {token}"], ids=["wrong", "with-bot-prefix"])
async def test_a_wrong_token_is_4004(emulator: RunningEmulator, token: str) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.send(
            2,
            {
                "token": token.format(token=emulator.token),
                "intents": GUILDS,
                "properties": properties(),
            },
        )
        closed = await client.closed()

    assert closed.code == 4004


@pytest.mark.parametrize("intents", [1 << 30, 1 << 18, -1])
async def test_unknown_intent_bits_are_4013(emulator: RunningEmulator, intents: int) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.send(
            2, {"token": emulator.token, "intents": intents, "properties": properties()}
        )
        closed = await client.closed()

    assert closed.code == 4013


async def test_message_content_not_enabled_in_the_portal_is_4014(
    make_emulator: MakeEmulator,
) -> None:
    running = make_emulator(message_content_intent_enabled=False, rate_limit_scale=0.0001)

    async with gateway(running) as client:
        await client.hello()
        await client.send(
            2,
            {"token": running.token, "intents": MESSAGE_CONTENT | GUILDS, "properties": {}},
        )
        refused = await client.closed()
    async with gateway(running) as client:
        await client.hello()
        ready = await client.identify(GUILDS | GUILD_MESSAGES)

    assert refused.code == 4014
    assert not ready["application"]["flags"] & (1 << 19)


async def test_the_portal_toggle_can_be_turned_off_at_run_time(running: RunningEmulator) -> None:
    answer = await faults(running, {"message_content_intent_enabled": False})

    async with gateway(running) as client:
        await client.hello()
        await client.send(2, {"token": running.token, "intents": MESSAGE_CONTENT, "properties": {}})
        closed = await client.closed()

    assert answer.json()["message_content_intent_enabled"] is False
    assert closed.code == 4014


async def test_a_second_identify_is_4005(running: RunningEmulator) -> None:
    async with identified(running) as client:
        await client.send(
            2, {"token": running.token, "intents": GUILDS, "properties": properties()}
        )
        closed = await client.closed()

    assert closed.code == 4005


async def test_an_invalid_shard_is_4010(emulator: RunningEmulator) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        await client.send(
            2,
            {"token": emulator.token, "intents": GUILDS, "properties": {}, "shard": [1, 1]},
        )
        closed = await client.closed()

    assert closed.code == 4010


async def test_more_than_120_payloads_a_minute_is_4008(emulator: RunningEmulator) -> None:
    async with gateway(emulator) as client:
        await client.hello()
        for _ in range(121):
            await client.send(1, None)
        closed = await client.closed()

    assert closed.code == 4008
    assert (await stats(emulator))["gateway_heartbeats"] == 120


async def test_identifies_are_counted_against_the_session_start_limit(
    running: RunningEmulator,
) -> None:
    for _ in range(3):
        async with identified(running, GUILDS):
            pass

    async with bot_api(running) as api:
        limit = (await api.get("/gateway/bot")).json()["session_start_limit"]
    counters = await stats(running)

    assert limit["total"] == 1000
    assert limit["remaining"] == 997
    assert 0 < limit["reset_after"] <= 86_400_000
    assert limit["max_concurrency"] == 1
    assert counters["gateway_identifies"] == 3
    assert counters["gateway_connections_total"] == 3


async def test_identifying_faster_than_max_concurrency_gets_op_9(
    emulator: RunningEmulator,
) -> None:
    # At Discord's speed, a second identify within 5 s is refused without using the budget.
    async with identified(emulator, GUILDS), gateway(emulator) as second:
        await second.hello()
        await second.send(2, {"token": emulator.token, "intents": GUILDS, "properties": {}})
        refused = await second.next_op(9)

    async with bot_api(emulator) as api:
        limit = (await api.get("/gateway/bot")).json()["session_start_limit"]
    assert refused["d"] is False
    assert limit["remaining"] == 999
    assert (await stats(emulator))["gateway_identifies"] == 2


async def test_past_the_identify_limit_every_session_ends_and_the_token_is_reset(
    make_emulator: MakeEmulator,
) -> None:
    running = make_emulator(rate_limit_scale=0.0001, identify_limit=2)

    async with identified(running, GUILDS) as first, identified(running, GUILDS) as second:
        async with gateway(running) as third:
            await third.hello()
            await third.send(2, {"token": running.token, "intents": GUILDS, "properties": {}})
            codes = [(await c.closed()).code for c in (third, first, second)]
        async with bot_api(running) as api:
            refused = await api.get("/users/@me")
            await faults(running, {"identify_limit": 5})
            restored = await api.get("/gateway/bot")

    assert codes == [4004, 4004, 4004]
    assert refused.status_code == 401
    assert restored.status_code == 200
    assert restored.json()["session_start_limit"]["remaining"] == 5


async def test_a_scripted_token_reset_closes_sessions_and_refuses_rest(
    running: RunningEmulator,
) -> None:
    async with identified(running, GUILDS) as client:
        answer = await faults(running, {"token_reset": True})
        closed = await client.closed()
    async with bot_api(running) as api:
        refused = await api.get("/users/@me")

    assert answer.json()["token_reset"] is True
    assert closed.code == 4004
    assert refused.status_code == 401


async def test_stopping_the_emulator_closes_its_gateway_connections(
    make_emulator: MakeEmulator,
) -> None:
    running = make_emulator()

    async with gateway(running) as client:
        await client.hello()
        running.stop()
        closed = await client.closed()

    assert closed.code == 1012  # "service restart": a client reconnects and resumes
