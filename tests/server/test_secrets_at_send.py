"""The bot token leaves through no string the bot sends: file names, embeds, thread names,
progress cards, components. Every request passes one choke point (``RestClient`` with the
outbound layer's redaction), and the tool result says what was redacted, and where."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from discord_mcp.config import Secret, Settings
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.server.app import build_server
from discord_mcp.transport.rest import RestClient, Upload
from tests.server.test_tools import call
from tests.support.people import People
from tests.support.settings import settings_for

TOKEN = "MTA5" + "OTk5OTk5OTk5OTk5OTk5OQ.Gh1jKl.abcdefghijklmnopqrstuvwxyz012345"


class Wire:
    """Every request body the emulator received, as bytes."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def __call__(self, exchange: Exchange) -> None:
        self.bodies.append(exchange.request_body)

    def carries(self, secret: str) -> bool:
        forms = [
            secret.encode(),
            base64.b64encode(secret.encode())[:40],
            secret.encode().hex().encode(),
        ]
        return any(form in body for body in self.bodies for form in forms)


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator], wire: Wire) -> RunningEmulator:
    return make_emulator(token=TOKEN, rate_limit_scale=0.05, exchange_hook=wire)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "out").mkdir(parents=True)
    (root / "out" / f"{TOKEN}.txt").write_text("the build log\n", encoding="utf-8")
    return root


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path, project: Path) -> Settings:
    base = settings_for(discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="20")
    return dataclasses.replace(base, project_dir=project)


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client[Any]]:
    async with Client(build_server(settings, environ={})) as connected:
        yield connected


async def test_the_token_in_a_file_name_never_reaches_discord(
    client: Client[Any], people: People, discord: RunningEmulator, wire: Wire
) -> None:
    result = await call(client, "send_message", content="the log", files=[f"out/{TOKEN}.txt"])
    assert "bot token in file name (files[0])" in result["redacted"]
    assert TOKEN not in result["files"][0]["filename"]
    [message] = people.messages(discord.channel_id)
    assert TOKEN not in message["attachments"][0]["filename"]
    assert not wire.carries(TOKEN)


@pytest.mark.parametrize(
    "hidden",
    [
        TOKEN[:20] + "\n" + TOKEN[20:],
        "\u200b".join(TOKEN),
        base64.b64encode(b"xy" + TOKEN.encode()).decode(),
        base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("="),
        TOKEN.encode().hex(),
    ],
    ids=["two lines", "zero-width", "base64 at offset 2", "urlsafe unpadded", "hex"],
)
async def test_the_tokens_hidden_forms_are_redacted_in_notify(
    client: Client[Any], wire: Wire, hidden: str
) -> None:
    result = await call(client, "notify", message=f"debug: {hidden}")
    assert any(entry.startswith("bot token") for entry in result["redacted"])
    assert not wire.carries(TOKEN)
    assert hidden not in b"".join(wire.bodies).decode("utf-8", "replace")


async def test_every_string_the_rest_client_sends_passes_the_redaction(
    discord: RunningEmulator, wire: Wire
) -> None:
    from discord_mcp.outbound.sending import SendRedaction

    found: list[str] = []
    redaction = SendRedaction([TOKEN], report=found.extend)
    async with RestClient(Secret(TOKEN), api_base=discord.api_base, outbound=redaction) as rest:
        card = await rest.create_message(
            discord.channel_id,
            content="card",
            embeds=[
                {
                    "title": f"title {TOKEN}",
                    "fields": [{"name": "where", "value": "\u200d".join(TOKEN)}],
                    "footer": {"text": TOKEN[:30] + "\n" + TOKEN[30:]},
                }
            ],
            components=[
                {
                    "type": 1,
                    "components": [
                        {"type": 2, "style": 1, "label": f"ok {TOKEN}", "custom_id": "x:1"}
                    ],
                }
            ],
            files=[Upload(f"{TOKEN}.log", b"bytes", "text/plain")],
        )
        await rest.create_thread_from_message(discord.channel_id, card["id"], name=f"t {TOKEN}")
    assert not wire.carries(TOKEN)
    assert "bot token in embeds[0].title" in found
    assert "bot token in embeds[0].fields[0].value" in found
    assert "bot token in components[0].components[0].label" in found
    assert "bot token in files[0].filename" in found
    assert "bot token in name" in found


async def test_without_a_redaction_the_client_still_never_sends_its_own_token(
    discord: RunningEmulator, wire: Wire
) -> None:
    async with RestClient(Secret(TOKEN), api_base=discord.api_base) as rest:
        await rest.create_message(
            discord.channel_id, content=f"oops {TOKEN}", files=[Upload(f"{TOKEN}.txt", b"x")]
        )
    assert not wire.carries(TOKEN)
