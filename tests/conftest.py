"""Shared fixtures. Every test runs with a clean Discord environment and its own state dir."""

from __future__ import annotations

from pathlib import Path

import pytest

_OUR_VARIABLES = (
    "DISCORD_BOT_TOKEN",
    "DISCORD_CHANNEL_ID",
    "DISCORD_OWNER_IDS",
    "PROJECT_NAME",
    "DISCORD_MCP_HOME",
    "POLL_INTERVAL_SECONDS",
    "DISCORD_API_BASE",
    "DISCORD_GATEWAY_URL",
    "DISCORD_MCP_MAX_BLOCK_SECONDS",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's real token or state directory."""
    for name in _OUR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISCORD_MCP_HOME", str(tmp_path / "home"))
