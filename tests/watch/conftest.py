"""The daemon's tests: settings for the emulator (polling, no gateway) with a project "app",
and the scripted fake CLIs."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.projects import ProjectRegistry
from tests.support.fake_agents import FakeSpawner
from tests.support.settings import settings_for


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("DISCORD_WATCH_ROOTS", str(tmp_path))
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
