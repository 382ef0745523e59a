"""Narrow scripted sequences the emulator does not produce, through an injected transport.

respx scripts the responses; the REST client gets it as its transport (nothing is patched).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import httpx
import pytest
import respx

from discord_mcp.config import Secret
from discord_mcp.errors import (
    CloudflareBanned,
    DiscordError,
    DiscordTransportError,
    RateLimited,
    UnexpectedAnswer,
)
from discord_mcp.hooks.guard import reason_for
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.responses import DEFAULT_RETRY_AFTER_S
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.routes import Route
from tests.support.clock import FakeClock

API = "https://discord.test/api/v10"


async def no_sleep(_seconds: float) -> None:
    await asyncio.sleep(0)


def client(router: respx.Router) -> RestClient:
    return RestClient(
        Secret("scripted.token"),
        api_base=API,
        transport=httpx.MockTransport(router.async_handler),
        sleep=no_sleep,
    )


DISCORD_PROXY = {"via": "1.1 google"}
"""What marks an answer that came through Discord's proxy, not Cloudflare's edge alone."""


async def test_a_json_429_through_discord_without_retry_after_is_a_short_limit() -> None:
    # Issue 33: such a 429 once held every process of the machine for an hour as a "ban".
    clock = FakeClock()
    router = respx.Router(assert_all_called=True)
    route = router.get(f"{API}/channels/1").mock(
        side_effect=[
            httpx.Response(
                429, json={"message": "You are being rate limited."}, headers=DISCORD_PROXY
            ),
            httpx.Response(200, json={"id": "1", "type": 0}),
        ]
    )
    async with RestClient(
        Secret("scripted.token"),
        api_base=API,
        transport=httpx.MockTransport(router.async_handler),
        limiter=RateLimiter(clock=clock, sleep=clock.sleep),
        sleep=clock.sleep,
    ) as rest:
        assert (await rest.get_channel("1"))["id"] == "1"
    assert route.call_count == 2
    assert 0 < sum(clock.slept) <= DEFAULT_RETRY_AFTER_S


async def test_a_json_429_without_retry_after_waits_what_its_retry_after_header_says() -> None:
    router = respx.Router(assert_all_called=True)
    router.get(f"{API}/channels/1").mock(
        return_value=httpx.Response(
            429, json={"message": "slow down"}, headers={**DISCORD_PROXY, "retry-after": "40"}
        )
    )
    async with client(router) as rest:
        with pytest.raises(RateLimited) as limited:
            await rest.request(
                Route.of("GET", "/channels/{channel_id}", channel_id="1"), max_wait=5
            )
    assert limited.value.retry_after == 40


@pytest.mark.parametrize(
    "response",
    [
        # Cloudflare's error page: HTML, not through Discord's proxy.
        httpx.Response(
            429, text="<html>error code: 1015</html>", headers={"content-type": "text/html"}
        ),
        # JSON that did not come through Discord's proxy (no Via), as discord.py tells a ban.
        httpx.Response(429, json={"message": "error code: 1015"}),
        httpx.Response(429, json={"retry_after": 1.0, "global": False}),
    ],
    ids=["html", "json-without-via", "retry-after-without-via"],
)
async def test_a_429_with_cloudflares_signs_is_a_ban_sent_once(response: httpx.Response) -> None:
    router = respx.Router(assert_all_called=True)
    router.get(f"{API}/channels/1").mock(return_value=response)
    async with client(router) as rest:
        with pytest.raises(CloudflareBanned):
            await rest.get_channel("1")
    assert router.calls.call_count == 1


async def test_a_message_create_lost_in_flight_is_retried_with_the_same_nonce() -> None:
    router = respx.Router(assert_all_called=True)
    message = {
        "id": "10",
        "channel_id": "1",
        "content": "once",
        "timestamp": "2026-11-22T00:00:00+00:00",
        "author": {"id": "2", "username": "bot"},
    }
    route = router.post(f"{API}/channels/1/messages").mock(
        side_effect=[httpx.ReadTimeout("lost"), httpx.Response(200, json=message)]
    )
    async with client(router) as rest:
        sent = await rest.create_message("1", "once")
    assert sent["id"] == "10"
    nonces = [json.loads(call.request.content)["nonce"] for call in route.calls]
    assert len(nonces) == 2
    assert nonces[0] == nonces[1]
    assert all(json.loads(c.request.content)["enforce_nonce"] is True for c in route.calls)


async def test_a_thread_create_lost_in_flight_is_not_sent_twice() -> None:
    router = respx.Router(assert_all_called=True)
    route = router.post(f"{API}/channels/1/threads").mock(side_effect=httpx.ReadTimeout("lost"))
    async with client(router) as rest:
        with pytest.raises(DiscordTransportError, match="could not reach Discord"):
            await rest.create_thread("1", "maybe created")
    assert route.call_count == 1


async def test_a_thread_create_that_never_got_a_connection_is_sent_when_one_frees_up() -> None:
    router = respx.Router(assert_all_called=True)
    thread = {"id": "5", "type": 11, "name": "waited for a connection", "parent_id": "1"}
    route = router.post(f"{API}/channels/1/threads").mock(
        side_effect=[httpx.PoolTimeout("no free connection"), httpx.Response(201, json=thread)]
    )
    async with client(router) as rest:
        created = await rest.create_thread("1", "waited for a connection")
    assert created["id"] == "5"
    assert route.call_count == 2


HTML = b"<!DOCTYPE html><html><body>502 Bad Gateway, from a proxy</body></html>"


@pytest.mark.parametrize(
    ("answer", "what"),
    [
        (httpx.Response(200, content=HTML, headers={"content-type": "text/html"}), "HTML page"),
        (httpx.Response(200, content=b"<html>", headers={"content-type": "text/plain"}), "HTML"),
        (httpx.Response(200, content=b"OK, sent"), "not JSON"),
        (httpx.Response(200, json=["not", "a", "channel"]), "a list where an object"),
        (httpx.Response(200, json={"name": "no id"}), "an object without them"),
        (httpx.Response(200, json="a string"), "a str"),
        (httpx.Response(204), "nothing where an object"),
    ],
)
async def test_an_answer_that_is_not_discords_is_a_sentence_not_a_decoding_error(
    answer: httpx.Response, what: str
) -> None:
    router = respx.Router()
    router.get(f"{API}/channels/1").mock(return_value=answer)
    async with client(router) as rest:
        with pytest.raises(UnexpectedAnswer) as caught:
            await rest.get_channel("1")
    sentence = str(caught.value)
    assert what in sentence
    assert sentence.startswith("GET /channels/{channel_id}: Discord answered HTTP")
    assert "DISCORD_API_BASE" in sentence
    assert isinstance(caught.value, DiscordError)
    reason = reason_for(caught.value)  # what a hook tells its agent
    assert "unexpected" not in reason
    assert "Discord failed (GET /channels/{channel_id}: Discord answered HTTP" in reason


async def test_a_list_where_messages_belong_must_hold_messages() -> None:
    router = respx.Router()
    router.get(f"{API}/channels/1/messages").mock(
        side_effect=[
            httpx.Response(200, json={"id": "1"}),
            httpx.Response(200, json=[{"id": "1"}, "two"]),
            httpx.Response(200, json=[]),
        ]
    )
    async with client(router) as rest:
        with pytest.raises(UnexpectedAnswer, match="an object where a list of objects with 'id'"):
            await rest.list_messages("1")
        with pytest.raises(
            UnexpectedAnswer, match="a list of other things where a list of objects with 'id'"
        ):
            await rest.list_messages("1")
        assert await rest.list_messages("1") == []  # no messages is a fine answer


def archived_listing(stamps: list[tuple[str, str]]) -> respx.Router:
    """Discord's archived-threads listing over ``stamps`` ((id, archive_timestamp)): newest
    first, strictly before ``before``, ``limit`` a page, ``has_more`` when more are left."""
    router = respx.Router()

    def answer(request: httpx.Request) -> httpx.Response:
        before = request.url.params.get("before")
        limit = int(request.url.params["limit"])
        rows = sorted(stamps, key=lambda row: (row[1], row[0]), reverse=True)
        if before is not None:
            cutoff = datetime.fromisoformat(before)
            rows = [row for row in rows if datetime.fromisoformat(row[1]) < cutoff]
        page = [
            {"id": thread, "type": 11, "thread_metadata": {"archive_timestamp": stamp}}
            for thread, stamp in rows[:limit]
        ]
        return httpx.Response(200, json={"threads": page, "has_more": len(rows) > limit})

    router.get(f"{API}/channels/9/threads/archived/public").mock(side_effect=answer)
    return router


def stamp(second: int) -> str:
    return datetime.fromtimestamp(1_790_000_000 + second, UTC).isoformat(timespec="microseconds")


async def test_threads_archived_at_the_same_instant_across_a_page_boundary_are_all_listed() -> None:
    # 150 threads, two of them archived at the instant where the first page (100) ends: a
    # listing that asks for the next page "before" that instant would skip the second one.
    stamps = [(str(1000 + n), stamp(10_000 - n)) for n in range(150)]
    stamps[100] = (stamps[100][0], stamps[99][1])
    async with client(archived_listing(stamps)) as rest:
        found = await rest.public_threads_archived_since("9", 1_790_000_000 + 10_000 - 120)

    assert sorted(str(t["id"]) for t in found) == sorted(thread for thread, _ in stamps[:121])


async def test_a_listing_of_archived_threads_that_does_not_move_on_is_an_error() -> None:
    # 101 threads archived at one instant: no page can get past it, so what was archived
    # since cannot be said (discord-watch then reads every resting thread).
    stamps = [(str(1000 + n), stamp(0)) for n in range(101)]
    async with client(archived_listing(stamps)) as rest:
        with pytest.raises(DiscordError, match="do not move on"):
            await rest.public_threads_archived_since("9", 1_790_000_000 - 60)
