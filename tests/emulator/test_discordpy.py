"""discord.py, a mature client we did not write, works against the emulator over REST.

Only discord.py's REST layer is used: ``Client.login`` (``GET /users/@me`` and
``GET /oauth2/applications/@me``), then channel, message, thread and reaction calls. Its
gateway is never started. ``Route.BASE`` points it at the emulator.
"""

from __future__ import annotations

import asyncio
import base64
import io
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator

with warnings.catch_warnings():
    # discord.py imports the standard library's audioop (for voice, unused here), which warns
    # of its removal in Python 3.13. Only that warning, only during this import, is ignored.
    warnings.filterwarnings(
        "ignore", message="'audioop' is deprecated", category=DeprecationWarning
    )
    import discord
    import discord.http


@asynccontextmanager
async def logged_in(running: RunningEmulator) -> AsyncIterator[discord.Client]:
    client = discord.Client(intents=discord.Intents.default())
    await client.login(running.token)
    try:
        yield client
    finally:
        await client.close()


async def _text_channel(client: discord.Client, running: RunningEmulator) -> discord.TextChannel:
    channel = await client.fetch_channel(int(running.channel_id))
    assert isinstance(channel, discord.TextChannel)
    return channel


def _control_history(running: RunningEmulator, channel_id: int | str) -> list[dict[str, object]]:
    response = httpx.get(f"{running.base_url}/_emulator/channels/{channel_id}/messages")
    return list(response.json())


def _stats(running: RunningEmulator) -> dict[str, int]:
    return dict(httpx.get(running.base_url + "/_emulator/state").json()["stats"])


def _for_discordpy(
    make_emulator: Callable[..., RunningEmulator],
    monkeypatch: pytest.MonkeyPatch,
    rate_limit_scale: float,
) -> RunningEmulator:
    running = make_emulator(rate_limit_scale=rate_limit_scale)
    monkeypatch.setattr(discord.http.Route, "BASE", running.api_base)
    return running


@pytest.fixture
def emulator_for_discordpy(
    make_emulator: Callable[..., RunningEmulator], monkeypatch: pytest.MonkeyPatch
) -> RunningEmulator:
    """An emulator with 0.5 s message windows, and discord.py's REST base pointed at it."""
    return _for_discordpy(make_emulator, monkeypatch, 0.1)


async def test_discordpy_logs_in_as_the_emulators_bot(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        assert client.user is not None
        assert client.user.id == int(running.bot_user_id)
        assert client.user.bot is True
        assert client.application_id == int(running.application_id)


async def test_discordpy_sends_edits_and_lists_messages(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        first = await channel.send("hello")
        second = await channel.send("world")
        edited = await first.edit(content="hello, edited")
        history = [m async for m in channel.history(limit=10)]
        fetched = await channel.fetch_message(first.id)

    assert channel.name == "agents"
    assert edited.content == "hello, edited"
    assert edited.edited_at is not None
    assert [m.id for m in history] == [second.id, first.id]
    assert fetched.content == "hello, edited"
    assert fetched.author.id == int(running.bot_user_id)


async def test_discordpy_creates_a_thread_and_posts_in_it(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        starter = await channel.send("Deploy?")
        thread = await starter.create_thread(name="Deploy?", auto_archive_duration=60)
        reply = await thread.send("Working on it")
        await thread.edit(archived=True)
        await thread.send("Done")  # sending unarchives, as on Discord
        refreshed = await client.fetch_channel(thread.id)

    assert thread.id == starter.id
    assert thread.parent_id == int(running.channel_id)
    assert reply.channel.id == thread.id
    assert isinstance(refreshed, discord.Thread)
    assert refreshed.archived is False
    assert [m["content"] for m in _control_history(running, thread.id)] == [
        "Working on it",
        "Done",
    ]


async def test_discordpy_adds_a_reaction_and_sees_who_reacted(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        message = await channel.send("React to approve")
        await message.add_reaction("✅")
        fetched = await channel.fetch_message(message.id)
        reactors = [user async for user in fetched.reactions[0].users()]

    assert str(fetched.reactions[0].emoji) == "✅"
    assert fetched.reactions[0].me is True
    assert [u.id for u in reactors] == [int(running.bot_user_id)]


async def test_discordpy_waits_out_a_burst_without_errors(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        sent = await asyncio.gather(*(channel.send(f"burst {n}") for n in range(12)))

    assert len({m.id for m in sent}) == 12
    assert len(_control_history(running, running.channel_id)) == 12


async def test_two_discordpy_clients_on_one_token_hit_the_limit_and_retry(
    make_emulator: Callable[..., RunningEmulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two processes sharing a token each believe they own the bucket, so real 429s happen;
    # discord.py must take them as rate limits (JSON body and Via header), not a ban.
    # 1.5 s windows leave both clients' first bursts surely inside one window.
    running = _for_discordpy(make_emulator, monkeypatch, 0.3)

    async with logged_in(running) as first, logged_in(running) as second:
        channels = [await _text_channel(c, running) for c in (first, second)]
        sent = await asyncio.gather(*(channels[n % 2].send(f"shared {n}") for n in range(12)))

    assert len({m.id for m in sent}) == 12
    assert len(_control_history(running, running.channel_id)) == 12
    assert _stats(running)["rest_429"] >= 1


async def test_discordpy_retries_after_a_scripted_429(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy
    httpx.post(
        running.base_url + "/_emulator/faults",
        json={
            "route": "POST /channels/{channel_id}/messages",
            "status": 429,
            "retry_after": 0.05,
            "count": 2,
        },
    )

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        message = await channel.send("after the limit")

    assert message.content == "after the limit"
    assert _stats(running)["rest_429"] == 2


async def test_discordpy_sees_the_cloudflare_ban_as_an_error_not_a_rate_limit(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy
    httpx.post(
        running.base_url + "/_emulator/faults",
        json={"route": "POST /channels/{channel_id}/messages", "status": 429, "cloudflare": True},
    )

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        with pytest.raises(discord.HTTPException) as caught:
            await channel.send("banned")

    assert caught.value.status == 429
    assert _control_history(running, running.channel_id) == []


async def test_discordpy_surfaces_discords_validation_error(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        with pytest.raises(discord.HTTPException) as caught:
            await channel.send("x" * 2001)

    assert caught.value.code == 50035
    assert "2000 or fewer" in caught.value.text


async def test_discordpy_sends_a_file_that_the_emulator_serves_back(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy
    log = b"step 1 ok\nstep 2 failed\n"

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        sent = await channel.send(
            "The build log",
            file=discord.File(io.BytesIO(log), filename="build.log", description="CI output"),
        )
        attachment = sent.attachments[0]
        read = await attachment.read()

    assert (attachment.filename, attachment.size, attachment.description) == (
        "build.log",
        len(log),
        "CI output",
    )
    assert attachment.content_type == "text/plain; charset=utf-8"
    assert read == log
    assert _control_history(running, running.channel_id)[0]["attachments"][0]["id"] == str(
        attachment.id
    )


async def test_discordpy_reads_a_screenshot_a_person_posted(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    posted = httpx.post(
        f"{running.base_url}/_emulator/channels/{running.channel_id}/messages",
        json={
            "author_id": running.owner_user_id,
            "content": "this error",
            "attachments": [
                {"filename": "screen.png", "data_base64": base64.b64encode(png).decode()}
            ],
        },
    ).json()

    async with logged_in(running) as client:
        channel = await _text_channel(client, running)
        message = await channel.fetch_message(int(posted["id"]))
        [attachment] = message.attachments
        data = await attachment.read()

    assert attachment.content_type == "image/png"
    assert attachment.filename == "screen.png"
    assert data == png


async def test_discordpy_sends_a_direct_message_and_sees_a_refusal_as_forbidden(
    emulator_for_discordpy: RunningEmulator,
) -> None:
    running = emulator_for_discordpy

    async with logged_in(running) as client:
        owner = await client.fetch_user(int(running.owner_user_id))
        dm = await owner.create_dm()
        sent = await dm.send("A question is waiting")
        httpx.post(
            f"{running.base_url}/_emulator/users/{running.owner_user_id}",
            json={"accepts_dms": False},
        ).raise_for_status()
        with pytest.raises(discord.Forbidden) as refused:
            await dm.send("again")

    assert isinstance(dm, discord.DMChannel)
    assert dm.recipient is not None
    assert str(dm.recipient.id) == running.owner_user_id
    assert [m["content"] for m in _control_history(running, dm.id)] == [sent.content]
    assert refused.value.code == 50007
