"""Every yes-or-no setting takes 1/0, true/false, yes/no, on/off in any case, and refuses
anything else by name (a typo never silently turns a feature off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.chat.push import channel_wanted
from discord_mcp.config import Settings
from discord_mcp.errors import ConfigError
from tests.test_config import GOOD

FLAGS = ["DISCORD_MCP_TMUX_NUDGE", "DISCORD_MCP_ESCALATE_DM", "DISCORD_MCP_RUN"]
TRUE = ["1", "true", "TRUE", "Yes", "on", "ON"]
FALSE = ["0", "false", "False", "no", "NO", "off", "Off"]


def from_env(tmp_path: Path, **extra: str) -> Settings:
    return Settings.from_env({**GOOD, **extra}, cwd=tmp_path, read_dotenv=False)


@pytest.mark.parametrize("name", FLAGS)
def test_every_flag_accepts_the_usual_words(tmp_path: Path, name: str) -> None:
    attribute = {
        "DISCORD_MCP_TMUX_NUDGE": lambda s: s.tmux_nudge,
        "DISCORD_MCP_ESCALATE_DM": lambda s: s.reminders.escalate_dm,
        "DISCORD_MCP_RUN": lambda s: s.in_run,
    }[name]
    for word in TRUE:
        assert attribute(from_env(tmp_path, **{name: word})) is True, word
    for word in FALSE:
        assert attribute(from_env(tmp_path, **{name: word})) is False, word


@pytest.mark.parametrize("name", [*FLAGS, "DISCORD_MCP_CHANNEL"])
def test_anything_else_is_refused_by_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_env(tmp_path, **{name: "maybe"})
    assert caught.value.variable == name
    assert str(caught.value).startswith(name + ": is not")


def test_the_channel_setting_takes_the_usual_words_and_auto() -> None:
    for word in TRUE:
        assert channel_wanted({"DISCORD_MCP_CHANNEL": word}, []) is True
    for word in FALSE:
        assert channel_wanted({"DISCORD_MCP_CHANNEL": word}, []) is False
    assert channel_wanted({"DISCORD_MCP_CHANNEL": "auto"}, []) is False
    assert channel_wanted({}, ["claude", "--channels", "server:discord"]) is channel_wanted(
        {"DISCORD_MCP_CHANNEL": "AUTO"}, ["claude", "--channels", "server:discord"]
    )
    with pytest.raises(ConfigError, match="DISCORD_MCP_CHANNEL"):
        channel_wanted({"DISCORD_MCP_CHANNEL": "maybe"}, [])
