"""A discord-watch with the gateway, for the slash command tests: the emulator, a project, the
fake agent CLIs, and a running daemon whose commands are registered."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.app import run_daemon
from tests.support.fake_agents import FakeSpawner
from tests.support.settings import settings_for
from tests.support.slash import Slash

COMMAND_COUNT = 16


class WallClock:
    """A wall clock the test moves (schedules, usage days, downtime)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def watch_settings(emulator: RunningEmulator, root: Path, **overrides: str) -> Settings:
    """Settings for ``emulator`` with the project ``app`` (claude, codex, gemini) under root."""
    (root / "app").mkdir(exist_ok=True)
    settings = settings_for(emulator, root / "home", **overrides)
    ProjectRegistry(settings.home, allowed_roots=[root]).add(
        "app", root / "app", ["claude", "codex", "gemini"], "claude"
    )
    return settings


@pytest.fixture
def watch_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Projects may live under tmp_path; messages are jobs at once (no debounce)."""
    monkeypatch.setenv("DISCORD_WATCH_ROOTS", str(tmp_path))
    monkeypatch.setenv("DISCORD_WATCH_DEBOUNCE_SECONDS", "0")
    return tmp_path


@pytest.fixture
def live_settings(discord: RunningEmulator, watch_env: Path) -> Settings:
    return watch_settings(discord, watch_env)


@pytest.fixture
def fake_spawner(tmp_path: Path) -> FakeSpawner:
    return FakeSpawner(tmp_path / "fake")


@pytest.fixture
def slash(discord: RunningEmulator) -> Slash:
    return Slash(discord)


@contextlib.asynccontextmanager
async def live_daemon(
    settings: Settings, spawner: FakeSpawner, discord: RunningEmulator, **options: Any
) -> AsyncIterator[asyncio.Task[None]]:
    """The daemon, once it holds the gateway and its commands are registered."""
    task = asyncio.create_task(run_daemon(settings, spawner=spawner, **options))
    try:
        ready = asyncio.create_task(Slash(discord).ready(COMMAND_COUNT))
        await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
        else:
            ready.result()
        if task.done():
            task.result()
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(15):
                await task


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Polling only (no gateway), the project "app", messages are jobs at once."""
    monkeypatch.setenv("DISCORD_WATCH_ROOTS", str(tmp_path))
    monkeypatch.setenv("DISCORD_WATCH_DEBOUNCE_SECONDS", "0")
    project = tmp_path / "app"
    project.mkdir()
    settings = settings_for(discord, tmp_path / "home", DISCORD_MCP_GATEWAY="off")
    ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add(
        "app", project, ["claude", "codex", "gemini"], "claude"
    )
    return settings


@pytest.fixture
def spawner(tmp_path: Path) -> FakeSpawner:
    return FakeSpawner(tmp_path / "fake")
