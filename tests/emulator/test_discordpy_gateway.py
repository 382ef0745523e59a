"""discord.py's gateway, a client we did not write, against the emulator's gateway.

discord.py connects to ``DiscordWebSocket.DEFAULT_GATEWAY`` (a non-sharded client never asks
``/gateway/bot``) with zlib-stream compression, heartbeats from a thread, resumes on its own
after a drop or op 7, and answers interactions over REST (``Route.BASE``). Where a step must
happen while discord.py is disconnected, the test calls the control API with a blocking
client: discord.py shares the test's event loop, so it cannot reconnect meanwhile.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import yarl

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import control

with warnings.catch_warnings():
    # discord.py imports the standard library's audioop (for voice, unused here), which warns
    # of its removal in Python 3.13. Only that warning, only during this import, is ignored.
    warnings.filterwarnings(
        "ignore", message="'audioop' is deprecated", category=DeprecationWarning
    )
    import discord
    import discord.gateway
    import discord.http

WAIT = 10.0
BUTTON_ROW = {
    "type": 1,
    "components": [{"type": 2, "style": 1, "label": "Approve", "custom_id": "approve"}],
}


class Bot:
    """A discord.py client running in the test's loop, its events in queues."""

    def __init__(self, intents: discord.Intents) -> None:
        # on_ready waits this long after the last GUILD_CREATE (2 s by default); the emulator
        # sends its one guild right after READY.
        self.client = discord.Client(intents=intents, guild_ready_timeout=0.05)
        self.ready = asyncio.Event()
        self.resumed = asyncio.Event()
        self.messages: asyncio.Queue[discord.Message] = asyncio.Queue()
        self.on_click: Callable[[discord.Interaction], Awaitable[None]] | None = None
        client = self.client

        @client.event
        async def on_ready() -> None:
            self.ready.set()

        @client.event
        async def on_resumed() -> None:
            self.resumed.set()

        @client.event
        async def on_message(message: discord.Message) -> None:
            await self.messages.put(message)

        @client.event
        async def on_interaction(interaction: discord.Interaction) -> None:
            if self.on_click is not None and interaction.type is discord.InteractionType.component:
                await self.on_click(interaction)

    async def message(self) -> discord.Message:
        async with asyncio.timeout(WAIT):
            return await self.messages.get()


@pytest.fixture
def running(
    make_emulator: Callable[..., RunningEmulator], monkeypatch: pytest.MonkeyPatch
) -> RunningEmulator:
    emulator = make_emulator(rate_limit_scale=0.001)
    _point_discordpy_at(emulator, monkeypatch)
    return emulator


def _point_discordpy_at(running: RunningEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discord.http.Route, "BASE", running.api_base)
    monkeypatch.setattr(
        discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(running.gateway_url)
    )


def _intents(*, message_content: bool = True) -> discord.Intents:
    intents = discord.Intents.default()
    intents.message_content = message_content
    return intents


@asynccontextmanager
async def connected(running: RunningEmulator, intents: discord.Intents) -> AsyncIterator[Bot]:
    bot = Bot(intents)
    task = asyncio.create_task(bot.client.start(running.token))
    try:
        async with asyncio.timeout(WAIT):
            ready = asyncio.create_task(bot.ready.wait())
            await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
        if task.done():
            task.result()  # start() ended early: raise its error
        yield bot
    finally:
        await bot.client.close()
        async with asyncio.timeout(WAIT):
            await asyncio.wait({task})


def _post_blocking(running: RunningEmulator, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{running.base_url}/_emulator{path}", json=body, timeout=WAIT)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _say(running: RunningEmulator, content: str) -> dict[str, Any]:
    """The owner posts in #agents (blocking: discord.py cannot run meanwhile)."""
    body = {"author_id": running.owner_user_id, "content": content}
    return _post_blocking(running, f"/channels/{running.channel_id}/messages", body)


def _stats(running: RunningEmulator) -> dict[str, Any]:
    return dict(httpx.get(running.base_url + "/_emulator/state", timeout=WAIT).json()["stats"])


def _card(running: RunningEmulator) -> dict[str, Any]:
    response = httpx.post(
        f"{running.api_base}/channels/{running.channel_id}/messages",
        headers={"Authorization": f"Bot {running.token}"},
        json={"content": "Deploy?", "components": [BUTTON_ROW]},
        timeout=WAIT,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def _click(running: RunningEmulator, message_id: str, user_id: str) -> dict[str, Any]:
    async with control(running) as client:
        response = await client.post(
            "/interactions",
            json={"user_id": user_id, "message_id": message_id, "custom_id": "approve"},
        )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_discordpy_connects_and_sees_the_guild(running: RunningEmulator) -> None:
    async with connected(running, _intents()) as bot:
        client = bot.client
        guild = client.get_guild(int(running.guild_id))
        channel = client.get_channel(int(running.channel_id))
        latency_known = client.latency < WAIT

    assert client.user is not None
    assert client.user.id == int(running.bot_user_id)
    assert guild is not None
    assert isinstance(channel, discord.TextChannel)
    assert channel.name == "agents"
    assert latency_known  # a heartbeat was sent and acknowledged
    counters = _stats(running)
    assert (counters["gateway_identifies"], counters["gateway_connections_total"]) == (1, 1)


async def test_discordpy_receives_a_users_message_with_its_content(
    running: RunningEmulator,
) -> None:
    async with connected(running, _intents()) as bot:
        posted = _say(running, "run the migration?")
        message = await bot.message()

    assert message.id == int(posted["id"])
    assert message.content == "run the migration?"
    assert message.author.id == int(running.owner_user_id)
    assert message.guild is not None
    assert isinstance(message.author, discord.Member)


async def test_without_the_intent_discordpy_receives_the_message_without_content(
    running: RunningEmulator,
) -> None:
    async with connected(running, _intents(message_content=False)) as bot:
        _say(running, "secret")
        message = await bot.message()

    assert message.content == ""


async def test_discordpy_refused_the_privileged_intent_raises_its_error(
    make_emulator: Callable[..., RunningEmulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    running = make_emulator(rate_limit_scale=0.001, message_content_intent_enabled=False)
    _point_discordpy_at(running, monkeypatch)

    with pytest.raises(discord.PrivilegedIntentsRequired):
        async with connected(running, _intents()):
            pass


@pytest.mark.parametrize("fault", [{"drop": True}, {"reconnect": True}, {"close": 4000}])
async def test_discordpy_resumes_and_gets_what_was_sent_while_it_was_away(
    running: RunningEmulator, fault: dict[str, Any]
) -> None:
    async with connected(running, _intents()) as bot:
        _say(running, "before")
        before = await bot.message()
        # Both calls block the loop: discord.py is away (its session detached) for the second.
        _post_blocking(running, "/faults", {"gateway": fault})
        posted = _say(running, "while away")
        away = await bot.message()
        async with asyncio.timeout(WAIT):
            await bot.resumed.wait()
        _say(running, "after")
        after = await bot.message()

    assert before.content == "before"
    assert (away.id, away.content) == (int(posted["id"]), "while away")
    assert after.content == "after"
    counters = _stats(running)
    assert (counters["gateway_identifies"], counters["gateway_resumes"]) == (1, 1)


async def test_discordpy_answers_a_click_with_an_ephemeral_refusal(
    running: RunningEmulator,
) -> None:
    card = _card(running)
    async with control(running) as ctl:
        stranger = (await ctl.post("/users", json={"username": "stranger"})).json()
    async with connected(running, _intents()) as bot:

        async def refuse(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("Only the owner may answer.", ephemeral=True)

        bot.on_click = refuse
        answer = await _click(running, card["id"], stranger["id"])

    assert answer["acknowledged"] is True
    assert answer["response_type"] == 4
    assert answer["ephemeral"] is True
    assert answer["message"]["content"] == "Only the owner may answer."
    assert answer["delivered"] == 1


async def test_discordpy_updates_the_clicked_card(running: RunningEmulator) -> None:
    card = _card(running)
    async with connected(running, _intents()) as bot:

        async def approve(interaction: discord.Interaction) -> None:
            await interaction.response.edit_message(content="Deploy? Approved.", view=None)

        bot.on_click = approve
        answer = await _click(running, card["id"], running.owner_user_id)

    assert answer["response_type"] == 7
    assert answer["message"]["id"] == card["id"]
    assert answer["message"]["content"] == "Deploy? Approved."
    assert answer["message"]["components"] == []


async def test_discordpy_opens_a_modal_and_receives_its_submit(running: RunningEmulator) -> None:
    card = _card(running)
    submitted: asyncio.Queue[str] = asyncio.Queue()

    class Why(discord.ui.Modal, title="Why?"):
        reason: discord.ui.TextInput[Why] = discord.ui.TextInput(label="Reason", custom_id="reason")

        async def on_submit(self, interaction: discord.Interaction) -> None:
            await submitted.put(self.reason.value)
            await interaction.response.send_message("Noted.", ephemeral=True)

    async with connected(running, _intents()) as bot:

        async def ask(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(Why(custom_id="why"))

        bot.on_click = ask
        opened = await _click(running, card["id"], running.owner_user_id)
        async with control(running) as ctl:
            response = await ctl.post(
                "/interactions",
                json={
                    "user_id": running.owner_user_id,
                    "message_id": card["id"],
                    "modal": {"custom_id": "why", "values": {"reason": "tests pass"}},
                },
            )
        async with asyncio.timeout(WAIT):
            reason = await submitted.get()

    assert opened["response_type"] == 9
    assert response.json()["response_type"] == 4
    assert reason == "tests pass"
