"""Clients for the emulator under test: ``api`` speaks as the bot, ``control`` as Discord."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.people import control_headers


def bot_client(running: RunningEmulator) -> httpx.Client:
    """An httpx client for ``/api/v10`` authenticated as the emulator's bot."""
    return httpx.Client(
        base_url=running.api_base,
        headers={"Authorization": f"Bot {running.token}"},
        timeout=10.0,
    )


def control_client(running: RunningEmulator) -> httpx.Client:
    """An httpx client for the control API (``/_emulator``)."""
    return httpx.Client(
        base_url=running.base_url + "/_emulator", timeout=10.0, headers=control_headers(running)
    )


@pytest.fixture
def api(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with bot_client(emulator) as client:
        yield client


@pytest.fixture
def control(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with control_client(emulator) as client:
        yield client


def until_not_429(send: Callable[[], httpx.Response], *, timeout: float = 5.0) -> httpx.Response:
    """Repeat ``send`` until it is not rate limited, for at most ``timeout`` seconds.

    For emulators with a tiny ``rate_limit_scale``, where windows last microseconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        response = send()
        if response.status_code != 429:
            return response
        if time.monotonic() > deadline:
            raise AssertionError(f"still rate limited after {timeout} s: {response.text[:200]}")
