"""An emulator that other machines reach takes only a bot token its user gave: the built-in one
is public (it is in this project's documentation), so with it anyone on the network would read
every message. Served there, it says what its tokens protect and what they do not."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator, start_in_thread
from discord_mcp.emulator.config import DEFAULT_TOKEN
from tests.emulator.gateway_client import GUILDS, gateway, properties
from tests.support.waiting import until_sync

OWN_TOKEN = "my-own-bot-token.beyond-loopback"
CONTROL = "control-token-beyond"


def emulator_cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "discord_mcp", "emulator", "--port", "0", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def test_beyond_loopback_the_built_in_bot_token_stops_the_start() -> None:
    with pytest.raises(ValueError, match="built-in bot token is public") as refused:
        start_in_thread("0.0.0.0", 0, control_token=CONTROL)
    assert "--token" in str(refused.value)
    assert "control API" not in str(refused.value)  # the control token was given


def test_the_cli_refuses_beyond_loopback_without_a_bot_token_of_its_users() -> None:
    process = emulator_cli("--host", "0.0.0.0", "--control-token", CONTROL)
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:  # it started: the bug
            process.kill()
            process.communicate()
    assert process.returncode == 2
    assert "built-in bot token is public" in stderr
    assert "--token" in stderr
    assert "Traceback" not in stderr


def test_without_either_token_both_are_asked_for_at_once() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "discord_mcp", "emulator", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--control-token" in done.stderr
    assert "--token" in done.stderr


@pytest.fixture
def exposed() -> Iterator[RunningEmulator]:
    with start_in_thread("0.0.0.0", 0, control_token=CONTROL, token=OWN_TOKEN) as running:
        yield running


def test_rest_accepts_only_the_users_bot_token_there(exposed: RunningEmulator) -> None:
    channel = f"http://127.0.0.1:{exposed.port}/api/v10/channels/{exposed.channel_id}"
    built_in = httpx.get(channel, headers={"Authorization": f"Bot {DEFAULT_TOKEN}"})
    assert built_in.status_code == 401
    own = httpx.get(channel, headers={"Authorization": f"Bot {OWN_TOKEN}"})
    assert own.status_code == 200


async def test_the_gateway_closes_an_identify_with_the_built_in_token_there(
    exposed: RunningEmulator,
) -> None:
    url = f"ws://127.0.0.1:{exposed.port}/gateway"
    async with gateway(exposed, url=url) as client:
        await client.hello()
        await client.send(
            2, {"token": DEFAULT_TOKEN, "intents": GUILDS, "properties": properties()}
        )
        closed = await client.closed()
    assert closed.code == 4004
    async with gateway(exposed, url=url) as client:
        await client.hello()
        ready = await client.identify(GUILDS, token=OWN_TOKEN)
    assert ready["user"]["id"] == exposed.bot_user_id


def test_served_beyond_loopback_it_says_what_is_protected_and_what_is_not() -> None:
    process = emulator_cli("--host", "0.0.0.0", "--control-token", CONTROL, "--token", OWN_TOKEN)
    assert process.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        until_sync(
            lambda: process.poll() is not None or "Press Ctrl-C to stop.\n" in lines,
            seconds=60,
            what="the emulator's banner",
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        reader.join(timeout=30)
        process.stderr.close()
    said = "".join(lines)
    assert process.returncode == 0, said
    assert "no authentication" not in said  # it has two
    assert "Protected: the control API and the owner's page need the control token" in said
    assert "Not protected: everything travels as plain HTTP" in said
    assert OWN_TOKEN not in said  # the banner points at the token, never prints it
