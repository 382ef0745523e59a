"""Fixtures for the owner's page in a real browser.

- ``chromium``: one headless Chromium for the module (a fresh profile). Missing Chromium or
  chromedriver is a failure in CI (``CI=true``: ``scripts/test`` installs them) and a skip
  elsewhere.
- ``page``: the page of this test's ``discord`` emulator, with screenshots of each step kept
  under the session's pytest temporary directory (``page-screenshots/<test>/``), or under
  ``$PAGE_SCREENSHOTS/<test>/`` when that is set (pytest keeps only its last few temporary
  directories).
- ``agent``: a real ``discord-mcp`` server process on that emulator, holding the gateway so its
  cards carry buttons, driven as an MCP client would.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.holder import read_status
from tests.support.browser import Page, browser_missing, start_chromium, wait_for
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = browser_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests need Chromium in CI: {missing}")
        pytest.skip(missing)
    driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


@pytest.fixture
def page(
    chromium: Any,
    discord: RunningEmulator,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Page]:
    root = os.environ.get("PAGE_SCREENSHOTS")
    base = Path(root) if root else tmp_path_factory.getbasetemp() / "page-screenshots"
    shots = base / request.node.name
    chromium.set_window_size(1280, 860)
    shown = Page(chromium, discord.base_url, shots)
    yield shown
    errors = shown.console_errors()
    # Leave the page before the emulator stops, so its feed connection closes first.
    chromium.get("about:blank")
    assert errors == [], f"the page logged errors: {errors}"


class Agent:
    """A discord-mcp server process and the tool calls an agent makes (blocking ones run in a
    worker thread, so the test can act as the owner meanwhile)."""

    def __init__(self, peer: StdioPeer, home: Path) -> None:
        self.peer = peer
        self.home = home
        self._pool = ThreadPoolExecutor(max_workers=1)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.peer.call_tool(name, arguments)

    def start_call(self, name: str, arguments: dict[str, Any]) -> Future[dict[str, Any]]:
        return self._pool.submit(self.peer.call_tool, name, arguments)

    def close(self) -> None:
        self.peer.close()
        self._pool.shutdown(wait=True)


@pytest.fixture
def agent(discord: RunningEmulator, tmp_path: Path) -> Iterator[Agent]:
    home = tmp_path / "home"
    peer = StdioPeer(env_for(discord, home, PROJECT_NAME="page"), tmp_path)
    acting = Agent(peer, home)
    try:
        peer.handshake()

        def holding() -> bool:
            status = read_status(home / "gateway" / "status.json")
            return status is not None and status.connected(time.time())

        wait_for(holding, timeout=20, what="the server to hold the gateway")
        yield acting
    finally:
        acting.close()
