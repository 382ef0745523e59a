"""Configuration: the variable names are a contract, and every error says what to fix."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from discord_mcp.config import Secret, Settings, parse_token
from discord_mcp.errors import ConfigError
from discord_mcp.log import RedactingFormatter

TOKEN = "MTA5OTk5OTk5OTk5OTk5OTk5OQ.GhIjKl.abcdefghijklmnopqrstuvwxyz012345"
GOOD = {
    "DISCORD_BOT_TOKEN": TOKEN,
    "DISCORD_CHANNEL_ID": "123456789012345678",
    "DISCORD_OWNER_IDS": "223456789012345678, 323456789012345678",
}


def settings(tmp_path: Path, **overrides: str) -> Settings:
    env = {**GOOD, **overrides}
    return Settings.from_env({k: v for k, v in env.items() if v is not None}, cwd=tmp_path)


def test_minimal_environment_gives_documented_defaults(tmp_path: Path) -> None:
    s = settings(tmp_path / "myproj")
    assert s.token.reveal() == TOKEN
    assert s.channel_id == "123456789012345678"
    assert s.owner_ids == {"223456789012345678", "323456789012345678"}
    assert s.project_name == "myproj"
    assert s.home == Path.home() / ".discord-mcp"
    assert s.poll_interval == 5.0
    assert s.api_base == "https://discord.com/api/v10"
    assert s.gateway_url is None
    assert s.max_block_seconds is None
    assert s.thread_id is None


def test_token_is_accepted_with_or_without_bot_prefix(tmp_path: Path) -> None:
    assert settings(tmp_path, DISCORD_BOT_TOKEN=f"Bot {TOKEN}").token.reveal() == TOKEN
    assert settings(tmp_path, DISCORD_BOT_TOKEN=f"  bot   {TOKEN} ").token.reveal() == TOKEN


def test_dotenv_file_is_read_and_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        f"DISCORD_BOT_TOKEN={TOKEN}\nDISCORD_CHANNEL_ID=111111111111111111\n"
        "DISCORD_OWNER_IDS=222222222222222222\nPROJECT_NAME=fromfile\n",
        encoding="utf-8",
    )
    s = Settings.from_env({"PROJECT_NAME": "fromenv"}, cwd=tmp_path)
    assert s.channel_id == "111111111111111111"
    assert s.project_name == "fromenv"


def test_overrides_point_everything_at_the_emulator(tmp_path: Path) -> None:
    s = settings(
        tmp_path,
        DISCORD_API_BASE="http://127.0.0.1:8800/api/v10/",
        DISCORD_GATEWAY_URL="ws://127.0.0.1:8800/gateway",
        POLL_INTERVAL_SECONDS="0.2",
        DISCORD_MCP_HOME=str(tmp_path / "state"),
        DISCORD_MCP_MAX_BLOCK_SECONDS="30",
        DISCORD_THREAD_ID="423456789012345678",
    )
    assert s.api_base == "http://127.0.0.1:8800/api/v10"
    assert s.gateway_url == "ws://127.0.0.1:8800/gateway"
    assert s.poll_interval == 0.2
    assert s.home == tmp_path / "state"
    assert s.max_block_seconds == 30
    assert s.thread_id == "423456789012345678"


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("DISCORD_BOT_TOKEN", "", "developer portal"),
        ("DISCORD_BOT_TOKEN", "Bot ", "developer portal"),
        ("DISCORD_BOT_TOKEN", "abc def", "one line"),
        ("DISCORD_CHANNEL_ID", "", "Copy ID"),
        ("DISCORD_CHANNEL_ID", "general", "17 to 20 digits"),
        ("DISCORD_OWNER_IDS", "", "your own Discord user id"),
        ("DISCORD_OWNER_IDS", "123456789012345678,me", "comma-separated"),
        ("POLL_INTERVAL_SECONDS", "soon", "seconds"),
        ("POLL_INTERVAL_SECONDS", "0", "between"),
        ("DISCORD_API_BASE", "discord.com/api", "http"),
        ("DISCORD_GATEWAY_URL", "http://x", "ws://"),
        ("DISCORD_MCP_MAX_BLOCK_SECONDS", "-1", "between"),
        ("PROJECT_NAME", "p" * 61, "at most 60"),
        ("DISCORD_THREAD_ID", "my-thread", "17 to 20 digits"),
    ],
)
def test_invalid_value_names_the_variable_and_the_fix(
    tmp_path: Path, variable: str, value: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, **{variable: value})
    assert caught.value.variable == variable
    assert str(caught.value).startswith(f"{variable}: ")
    assert says in str(caught.value)


def test_token_never_appears_in_repr_or_errors(tmp_path: Path) -> None:
    s = settings(tmp_path)
    assert TOKEN not in repr(s)
    assert TOKEN not in str(s.token)
    assert TOKEN not in f"{s.token}"
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, DISCORD_BOT_TOKEN=TOKEN + " trailing")
    assert TOKEN not in str(caught.value)


def test_secret_compares_by_value_without_revealing() -> None:
    assert parse_token("Bot abc123") == Secret("abc123")
    assert "abc123" not in repr(parse_token("abc123"))


def test_log_formatter_redacts_the_token_even_in_tracebacks() -> None:
    formatter = RedactingFormatter([TOKEN])
    try:
        raise RuntimeError(f"boom with {TOKEN}")
    except RuntimeError:
        record = logging.LogRecord(
            "discord_mcp", logging.ERROR, __file__, 1, "sent %s", (TOKEN,), exc_info=True
        )
        import sys

        record.exc_info = sys.exc_info()
    text = formatter.format(record)
    assert TOKEN not in text
    assert "[redacted]" in text


def test_an_explicit_env_file_is_read_between_dotenv_and_environment(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.env"
    secrets.write_text(
        f"DISCORD_BOT_TOKEN={TOKEN}\nDISCORD_CHANNEL_ID=111111111111111111\n"
        "DISCORD_OWNER_IDS=222222222222222222\n",
        encoding="utf-8",
    )
    (tmp_path / ".env").write_text("DISCORD_CHANNEL_ID=999999999999999999\n", encoding="utf-8")
    s = Settings.from_env({"DISCORD_MCP_ENV_FILE": str(secrets)}, cwd=tmp_path)
    assert s.token.reveal() == TOKEN
    assert s.channel_id == "111111111111111111"


def test_a_missing_env_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DISCORD_MCP_ENV_FILE"):
        Settings.from_env({"DISCORD_MCP_ENV_FILE": str(tmp_path / "nope.env")}, cwd=tmp_path)


@pytest.mark.parametrize(
    "variable",
    [
        "DISCORD_CHANNEL_ID",
        "DISCORD_OWNER_IDS",
        "DISCORD_THREAD_ID",
        "POLL_INTERVAL_SECONDS",
        "DISCORD_MCP_MAX_BLOCK_SECONDS",
        "DISCORD_API_BASE",
        "DISCORD_GATEWAY_URL",
        "DISCORD_MCP_GATEWAY",
        "DISCORD_MCP_ENV_FILE",
        "PROJECT_NAME",
    ],
)
def test_a_token_pasted_into_the_wrong_variable_is_described_never_echoed(
    tmp_path: Path, variable: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, **{variable: TOKEN})
    message = str(caught.value)
    assert caught.value.variable == variable
    for piece in TOKEN.split("."):
        assert piece[:8] not in message
    if variable != "PROJECT_NAME":
        assert f"has {len(TOKEN)} characters" in message


def test_a_token_in_the_watch_roots_is_described_never_echoed() -> None:
    from discord_mcp.config import watch_roots

    with pytest.raises(ConfigError) as caught:
        watch_roots({"DISCORD_WATCH_ROOTS": TOKEN})
    assert caught.value.variable == "DISCORD_WATCH_ROOTS"
    assert TOKEN[:8] not in str(caught.value)
    assert "letters, digits and punctuation" in str(caught.value)


def test_a_channel_id_with_letters_says_so() -> None:
    from discord_mcp.config import describe_value

    assert describe_value("general") == "the value given has 7 characters: letters"
    assert describe_value("12 ab") == (
        "the value given has 5 characters: letters, digits and spaces"
    )
