from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def hook_env(tmp_path: Path) -> dict[str, str]:
    """What an installed hook's environment and env file give it (no Discord is needed)."""
    return {
        "DISCORD_BOT_TOKEN": "MTIz.hook-test.token-never-printed",
        "DISCORD_CHANNEL_ID": "100000000000000001",
        "DISCORD_OWNER_IDS": "100000000000000009",
        "DISCORD_MCP_HOME": str(tmp_path / "home"),
        "PROJECT_NAME": "proj",
    }
