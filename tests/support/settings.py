"""Settings and environments pointing discord-mcp at an emulator (for tests and benchmarks)."""

from __future__ import annotations

from pathlib import Path

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator


def env_for(emulator: RunningEmulator, home: Path, **overrides: str) -> dict[str, str]:
    """The environment variables a discord-mcp process needs to use ``emulator``."""
    env = {
        "DISCORD_BOT_TOKEN": emulator.token,
        "DISCORD_CHANNEL_ID": emulator.channel_id,
        "DISCORD_OWNER_IDS": emulator.owner_user_id,
        "DISCORD_API_BASE": emulator.api_base,
        "DISCORD_MCP_HOME": str(home),
        "POLL_INTERVAL_SECONDS": "0.1",
        "PROJECT_NAME": "proj",
    }
    env.update(overrides)
    return env


def settings_for(emulator: RunningEmulator, home: Path, **overrides: str) -> Settings:
    """Validated settings for ``emulator`` (no .env file is read)."""
    return Settings.from_env(env_for(emulator, home, **overrides), read_dotenv=False)
