"""Configuration: the variable names are a contract, and every error says what to fix."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.config import Secret, Settings, parse_token, state_home
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
    assert s.project_dir == tmp_path / "myproj"
    assert s.file_roots == ()


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
        DISCORD_MCP_FILE_ROOTS=f"{tmp_path}/shots:/var/log/app",
    )
    assert s.api_base == "http://127.0.0.1:8800/api/v10"
    assert s.gateway_url == "ws://127.0.0.1:8800/gateway"
    assert s.poll_interval == 0.2
    assert s.home == tmp_path / "state"
    assert s.max_block_seconds == 30
    assert s.thread_id == "423456789012345678"
    assert s.file_roots == (tmp_path / "shots", Path("/var/log/app"))


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
        ("DISCORD_MCP_FILE_ROOTS", "/abs:relative/dir", "absolute directories"),
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


@pytest.mark.parametrize(
    ("home", "says"),
    [
        ("/proc", "is under /proc, a kernel file system"),
        ("/proc/self/cwd/state", "is under /proc"),
        ("/sys/kernel/state", "is under /sys"),
        ("/dev/shm/discord-mcp", "is under /dev"),
        ("/", "is the root directory /"),
        ("/tmp/../", "is the root directory /"),
        ("state", "is a relative path"),
        ("./state", "is a relative path"),
        ("../state", "is a relative path"),
    ],
)
def test_a_state_directory_that_cannot_hold_state_is_refused_with_a_sentence(
    tmp_path: Path, home: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, DISCORD_MCP_HOME=home)
    assert caught.value.variable == "DISCORD_MCP_HOME"
    assert says in str(caught.value)
    assert "~/.discord-mcp" in str(caught.value)
    with pytest.raises(ConfigError):
        state_home({"DISCORD_MCP_HOME": home}, cwd=tmp_path)


def test_a_state_directory_under_a_file_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, DISCORD_MCP_HOME=str(tmp_path / "a-file" / "state"))
    said = str(caught.value)
    assert f"cannot be the state directory: {tmp_path / 'a-file'} is a file" in said


def test_a_state_directory_that_can_be_created_is_taken_as_given(tmp_path: Path) -> None:
    deep = tmp_path / "not" / "there" / "yet"
    assert settings(tmp_path, DISCORD_MCP_HOME=str(deep)).home == deep
    assert not deep.exists()  # reading the settings makes nothing
    assert settings(tmp_path, DISCORD_MCP_HOME="~/state").home == Path.home() / "state"


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("DISCORD_OWNER_IDS", "12345", "entry 1 is 5 digits: too short for a Discord id"),
        (
            "DISCORD_OWNER_IDS",
            "223456789012345678,2234567890123456",
            "entry 2 is 16 digits: too short",
        ),
        ("DISCORD_OWNER_IDS", "1" * 21, "entry 1 is 21 digits: too long"),
        ("DISCORD_CHANNEL_ID", "1234567890", "is 10 digits: too short for a Discord id"),
        ("DISCORD_THREAD_ID", "123456789012345", "is 15 digits: too short"),
    ],
)
def test_an_id_of_digits_with_the_wrong_length_is_said_to_be_too_short_or_long(
    tmp_path: Path, variable: str, value: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, **{variable: value})
    assert says in str(caught.value)
    assert "17 to 20 digits" in str(caught.value)
    assert "must be" not in str(caught.value)  # it is digits: no word about what it is made of


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
        "DISCORD_MCP_REMINDERS",
        "DISCORD_MCP_QUIET_HOURS",
        "DISCORD_MCP_ESCALATE_DM",
        "DISCORD_MCP_TMUX_NUDGE",
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


@pytest.mark.parametrize("where", ["/proc", "a-file"])
def test_the_server_says_what_is_wrong_with_its_state_directory_without_a_traceback(
    tmp_path: Path, where: str
) -> None:
    home = Path(where)
    if not home.is_absolute():  # a file where the directory belongs
        home = tmp_path / where
        home.write_text("not a directory", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "discord_mcp", "serve"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **GOOD, "DISCORD_MCP_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # stdout is the MCP protocol
    said = done.stderr.strip()
    assert said.startswith("discord-mcp: configuration error: DISCORD_MCP_HOME: "), said
    assert ("is under /proc" if where == "/proc" else f"{home} is a file") in said
    assert TOKEN not in said
