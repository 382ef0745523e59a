"""A machine's name: DISCORD_MCP_MACHINE, or one made from the host name; always short and safe."""

from __future__ import annotations

import pytest

from discord_mcp.config import Settings
from discord_mcp.config.machine import FALLBACK, machine_from_host, parse_machine
from discord_mcp.errors import ConfigError

BASE = {
    "DISCORD_BOT_TOKEN": "MTA" + "x" * 56,
    "DISCORD_CHANNEL_ID": "123456789012345678",
    "DISCORD_OWNER_IDS": "223456789012345678",
}


def test_the_default_name_is_the_host_names_first_label_made_safe() -> None:
    assert machine_from_host("Johns-MacBook-Pro.local") == "johns-macbook-pro"
    assert machine_from_host("build_01.example.com") == "build_01"
    assert machine_from_host("weird name!!") == "weird-name"
    assert machine_from_host("x" * 80) == "x" * 32
    assert machine_from_host("..") == FALLBACK
    assert machine_from_host("ünïcode") == "n-code"


def test_a_configured_name_is_lower_cased_and_checked() -> None:
    assert parse_machine(" Laptop ") == "laptop"
    assert parse_machine("build-server_2") == "build-server_2"
    for bad in ("-laptop", "laptop-", "lap top", "lap:top", "a" * 33, "", "läptop"):
        with pytest.raises(ValueError, match=r"characters|letters"):
            parse_machine(bad)


def test_settings_carry_the_machine_and_refuse_a_bad_one_without_repeating_it() -> None:
    settings = Settings.from_env({**BASE, "DISCORD_MCP_MACHINE": "Cloud-Box"}, read_dotenv=False)
    assert settings.machine == "cloud-box"
    assert Settings.from_env(BASE, read_dotenv=False).machine == machine_from_host()
    secret = "MTA" + "y" * 56  # a token pasted into the wrong variable
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({**BASE, "DISCORD_MCP_MACHINE": secret}, read_dotenv=False)
    assert refused.value.variable == "DISCORD_MCP_MACHINE"
    assert secret not in str(refused.value)
    assert "32" in str(refused.value)
