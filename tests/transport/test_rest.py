"""The REST client against the emulator: typed calls, rate limits, retries and errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import (
    BadRequest,
    CloudflareBanned,
    DiscordHTTPError,
    DiscordServerError,
    DiscordTransportError,
    NotFound,
    RateLimited,
    Unauthorized,
)
from discord_mcp.transport.rest import RestClient, Upload
from discord_mcp.transport.routes import Route
from tests.support.people import People


async def no_sleep(_seconds: float) -> None:
    await asyncio.sleep(0)


@pytest.fixture
async def rest(discord: RunningEmulator) -> AsyncIterator[RestClient]:
    client = RestClient(Secret(discord.token), api_base=discord.api_base, sleep=no_sleep)
    yield client
    await client.aclose()


async def test_current_user_is_the_bot(rest: RestClient, discord: RunningEmulator) -> None:
    me = await rest.get_current_user()
    assert me["id"] == discord.bot_user_id
    assert me.get("bot") is True


async def test_messages_round_trip_and_list_newest_first(
    rest: RestClient, discord: RunningEmulator
) -> None:
    sent = [await rest.create_message(discord.channel_id, f"m{i}") for i in range(3)]
    listed = await rest.list_messages(discord.channel_id, limit=2)
    assert [m["id"] for m in listed] == [sent[2]["id"], sent[1]["id"]]
    after = await rest.list_messages(discord.channel_id, after=sent[0]["id"])
    assert sorted(m["id"] for m in after) == sorted([sent[1]["id"], sent[2]["id"]])
    edited = await rest.edit_message(discord.channel_id, sent[0]["id"], content="changed")
    assert edited["content"] == "changed"
    assert (await rest.get_message(discord.channel_id, sent[0]["id"]))["content"] == "changed"
    await rest.delete_message(discord.channel_id, sent[0]["id"])
    with pytest.raises(NotFound):
        await rest.get_message(discord.channel_id, sent[0]["id"])


async def test_default_allowed_mentions_never_ping_everyone(
    discord: RunningEmulator,
) -> None:
    seen: list[Any] = []

    def transport_spy(request: httpx.Request) -> None:
        seen.append(request)

    async with RestClient(Secret(discord.token), api_base=discord.api_base) as client:
        client._http.event_hooks["request"] = [_async(transport_spy)]
        await client.create_message(discord.channel_id, "@everyone hello")
    body = seen[0].read()
    assert b'"allowed_mentions":{"parse":["users"]}' in body.replace(b" ", b"")


def _async(fn: Callable[[httpx.Request], None]) -> Callable[[httpx.Request], Any]:
    async def hook(request: httpx.Request) -> None:
        fn(request)

    return hook


async def test_threads_public_without_message_and_from_a_message(
    rest: RestClient, discord: RunningEmulator
) -> None:
    thread = await rest.create_thread(discord.channel_id, "a " * 80)
    assert thread["type"] == 11
    assert len(thread.get("name") or "") <= 100
    starter = await rest.create_message(discord.channel_id, "start here")
    from_message = await rest.create_thread_from_message(
        discord.channel_id, starter["id"], "from message"
    )
    assert from_message["id"] == starter["id"]
    await rest.create_message(thread["id"], "inside")
    archived = await rest.archive_thread(thread["id"])
    assert archived.get("thread_metadata", {}).get("archived") is True
    reopened = await rest.unarchive_thread(thread["id"])
    assert reopened.get("thread_metadata", {}).get("archived") is False


async def test_reactions_are_added_and_listed(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    message = await rest.create_message(discord.channel_id, "react here")
    await rest.add_reaction(discord.channel_id, message["id"], "✅")
    people.react(discord.channel_id, message["id"], "✅")
    users = await rest.list_reaction_users(discord.channel_id, message["id"], "✅")
    assert {u["id"] for u in users} == {discord.bot_user_id, discord.owner_user_id}
    fetched = await rest.get_message(discord.channel_id, message["id"])
    assert fetched.get("reactions", [])[0]["count"] == 2


async def test_the_typing_indicator_reaches_the_channel_as_the_bot(
    rest: RestClient, discord: RunningEmulator
) -> None:
    from tests.emulator.gateway_client import identified

    typing_intents = (1 << 0) | (1 << 11)  # GUILDS, GUILD_MESSAGE_TYPING
    async with identified(discord, intents=typing_intents) as listener:
        await rest.trigger_typing(discord.channel_id)
        event = (await listener.dispatch("TYPING_START"))["d"]
    assert (event["channel_id"], event["user_id"]) == (discord.channel_id, discord.bot_user_id)


async def test_long_text_is_split_and_sent_in_order(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    text = "\n".join(f"line {i}: " + "word " * 20 for i in range(60))
    sent = await rest.send_text(discord.channel_id, text)
    assert len(sent) > 1
    stored = [m["content"] for m in people.messages(discord.channel_id)]
    assert all(len(c) <= 2000 for c in stored)
    assert "".join("".join(stored).split()) == "".join(text.split())


async def test_create_message_refuses_content_over_the_limit(
    rest: RestClient, discord: RunningEmulator
) -> None:
    with pytest.raises(ValueError, match="split"):
        await rest.create_message(discord.channel_id, "x" * 2001)


async def test_sending_to_a_strictly_archived_thread_reopens_it_and_sends(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    thread = await rest.create_thread(discord.channel_id, "to archive")
    await rest.archive_thread(thread["id"])
    people.fault(strict_archived_threads=True)
    sent = await rest.create_message(thread["id"], "still works")
    assert sent["channel_id"] == thread["id"]
    assert (await rest.get_channel(thread["id"])).get("thread_metadata", {}).get(
        "archived"
    ) is False


async def test_a_burst_on_one_channel_respects_the_bucket_without_a_429(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    await asyncio.gather(*(rest.create_message(discord.channel_id, f"b{i}") for i in range(23)))
    assert len(people.messages(discord.channel_id)) == 23
    assert people.state()["stats"]["rest_429"] == 0


async def test_a_429_is_waited_out_and_retried(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(
        route="POST /channels/{channel_id}/messages", status=429, count=2, retry_after=0.01
    )
    sent = await rest.create_message(discord.channel_id, "after two 429s")
    assert sent["content"] == "after two 429s"


async def test_a_global_429_is_waited_out(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(
        route="GET /channels/{channel_id}",
        status=429,
        count=1,
        retry_after=0.01,
        **{"global": True},
    )
    assert (await rest.get_channel(discord.channel_id))["id"] == discord.channel_id


async def test_a_429_longer_than_the_bound_raises_rate_limited(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="GET /channels/{channel_id}", status=429, count=1, retry_after=120)
    with pytest.raises(RateLimited) as caught:
        await rest.get_channel(discord.channel_id)
    assert caught.value.retry_after == pytest.approx(120)


async def test_a_cloudflare_429_fails_fast_without_retrying(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="GET /channels/{channel_id}", status=429, count=2, cloudflare=True)
    with pytest.raises(CloudflareBanned, match="Cloudflare"):
        await rest.get_channel(discord.channel_id)
    before = people.state()["stats"]["rest_requests"]
    with pytest.raises(CloudflareBanned, match="not sent"):
        await rest.get_channel(discord.channel_id)
    # Nor is the next one sent: the ban is known, and a request during it would prolong it.
    assert people.state()["stats"]["rest_requests"] == before


async def test_server_errors_are_retried_for_safe_requests(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="GET /channels/{channel_id}", status=502, count=2)
    assert (await rest.get_channel(discord.channel_id))["id"] == discord.channel_id


async def test_server_errors_that_persist_raise_after_bounded_retries(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="GET /channels/{channel_id}", status=500, count=10)
    with pytest.raises(DiscordServerError):
        await rest.get_channel(discord.channel_id)


async def test_message_creates_are_retried_safely_thanks_to_the_nonce(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="POST /channels/{channel_id}/messages", status=503, count=1)
    await rest.create_message(discord.channel_id, "exactly once")
    assert [m["content"] for m in people.messages(discord.channel_id)] == ["exactly once"]


async def test_files_are_sent_as_multipart_and_arrive_byte_for_byte(
    rest: RestClient, discord: RunningEmulator
) -> None:
    blob = bytes(range(256)) * 64 + b"\r\n--boundary-like\r\n"
    sent = await rest.create_message(
        discord.channel_id,
        "two files",
        files=[Upload("blob.bin", blob), Upload("notes.txt", b"hello\n", "text/plain")],
    )
    assert sent["content"] == "two files"
    names = [a["filename"] for a in sent.get("attachments", [])]
    assert names == ["blob.bin", "notes.txt"]
    first = sent.get("attachments", [])[0]
    async with httpx.AsyncClient() as cdn:
        assert (await cdn.get(first["url"])).content == blob


async def test_long_text_with_files_puts_the_files_on_the_last_part(
    rest: RestClient, discord: RunningEmulator
) -> None:
    parts = await rest.send_text(discord.channel_id, "x" * 2500, files=[Upload("a.txt", b"a")])
    assert [len(p.get("attachments") or []) for p in parts] == [0, 1]


async def test_a_message_with_files_is_retried_safely_thanks_to_the_nonce(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="POST /channels/{channel_id}/messages", status=503, count=1)
    await rest.create_message(discord.channel_id, "once", files=[Upload("a.txt", b"a")])
    sent = people.messages(discord.channel_id)
    assert [m["content"] for m in sent] == ["once"]
    assert [a["filename"] for a in sent[0]["attachments"]] == ["a.txt"]


async def test_a_file_over_discords_size_limit_is_a_413_with_code_40005(
    rest: RestClient, discord: RunningEmulator
) -> None:
    with pytest.raises(DiscordHTTPError) as caught:
        await rest.create_message(
            discord.channel_id, files=[Upload("big.bin", b"\0" * (10 * 1024 * 1024 + 1))]
        )
    assert (caught.value.status, caught.value.code) == (413, 40005)


async def test_a_post_without_nonce_is_not_repeated_after_a_server_error(
    rest: RestClient, discord: RunningEmulator, people: People
) -> None:
    people.fault(route="POST /channels/{channel_id}/threads", status=500, count=1)
    with pytest.raises(DiscordServerError):
        await rest.create_thread(discord.channel_id, "maybe created")


async def test_bad_request_carries_discords_code_and_field_errors(
    rest: RestClient, discord: RunningEmulator
) -> None:
    route = Route.of("POST", "/channels/{channel_id}/messages", channel_id=discord.channel_id)
    with pytest.raises(BadRequest) as caught:
        await rest.request(route, json={"content": "y" * 2001})
    assert caught.value.code == 50035
    assert "content" in caught.value.errors
    assert "2000" in str(caught.value)


async def test_unknown_channel_is_not_found_with_code_10003(rest: RestClient) -> None:
    with pytest.raises(NotFound) as caught:
        await rest.get_channel("123456789012345678")
    assert caught.value.code == 10003


async def test_a_wrong_token_stops_every_later_request(
    discord: RunningEmulator, people: People
) -> None:
    token = "wrong-token-value-1234567890"
    async with RestClient(Secret(token), api_base=discord.api_base) as client:
        with pytest.raises(Unauthorized) as caught:
            await client.get_current_user()
        assert token not in str(caught.value)
        assert "DISCORD_BOT_TOKEN" in str(caught.value)
        before = people.state()["stats"]["rest_requests"]
        with pytest.raises(Unauthorized):
            await client.get_channel(discord.channel_id)
        assert people.state()["stats"]["rest_requests"] == before


async def test_an_unreachable_discord_is_a_transport_error_after_retries() -> None:
    async with RestClient(
        Secret("token-abcdef"), api_base="http://127.0.0.1:9/api/v10", sleep=no_sleep
    ) as client:
        with pytest.raises(DiscordTransportError, match="DISCORD_API_BASE") as caught:
            await client.get_current_user()
        assert "token-abcdef" not in str(caught.value)
        assert isinstance(caught.value.__cause__, httpx.ConnectError)
