"""``discord-mcp setup``: what it says, where it writes, and "Next:" lines that run as printed."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
from pathlib import Path

from discord_mcp.config import Secret, default_env_file
from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.wizard import run_setup, write_env_file

OWNER = "100000000000000002"
CHANNEL = "100000000000000001"


async def accepted(token: Secret, api_base: str) -> str:
    return "100000000000000009"


async def setup_output(api_base: str, env_file: Path, default: Path | None) -> str:
    answers = iter([CHANNEL, OWNER])
    out = io.StringIO()
    await run_setup(
        ask=lambda _prompt: next(answers),
        ask_secret=lambda _prompt: "a.token.value",
        out=out,
        env_file=env_file,
        api_base=api_base,
        check=accepted,
        program="/opt/dm/bin/discord-mcp",
        default_env=default,
    )
    return out.getvalue()


async def test_against_the_emulator_setup_skips_the_developer_portal_and_the_invite(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / ".config" / "discord-mcp" / ".env"
    text = await setup_output("http://127.0.0.1:8800/api/v10", env_file, env_file)
    assert "Reset Token" not in text  # none of the portal's steps
    assert "Message Content Intent" not in text
    assert "discord.com/developers" not in text
    assert "permissions=" not in text  # no invite URL for a local Discord
    assert "emulator" in text
    assert "DISCORD_API_BASE=http://127.0.0.1:8800/api/v10" in env_file.read_text(encoding="utf-8")
    assert os.stat(env_file.parent).st_mode & 0o777 == 0o700


async def test_against_discord_setup_walks_through_the_portal_and_prints_the_invite(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / "discord.env"
    write_env_file(env_file, {"DISCORD_API_BASE": "http://127.0.0.1:8800/api/v10", "KEEP": "1"})
    text = await setup_output("https://discord.com/api/v10", env_file, None)
    assert "discord.com/developers/applications" in text
    assert "permissions=" in text
    written = env_file.read_text(encoding="utf-8")
    assert "DISCORD_API_BASE" not in written  # back to Discord: the emulator's address is gone
    assert "KEEP=1" in written


async def test_the_next_lines_name_the_env_file_only_when_it_is_not_the_default(
    tmp_path: Path,
) -> None:
    default = tmp_path / ".config" / "discord-mcp" / ".env"
    text = await setup_output("http://127.0.0.1:1/api/v10", default, default)
    assert "  /opt/dm/bin/discord-mcp install claude   (or codex, gemini)" in text
    assert "  /opt/dm/bin/discord-mcp doctor\n" in text
    other = tmp_path / "elsewhere.env"
    text = await setup_output("http://127.0.0.1:1/api/v10", other, default)
    assert f"/opt/dm/bin/discord-mcp install claude --env-file {other}" in text
    assert f"/opt/dm/bin/discord-mcp doctor --env-file {other}" in text


def test_setups_next_lines_run_as_printed_from_a_shell_without_the_venv_on_path(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    home = tmp_path / "newcomer"
    home.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "DISCORD_API_BASE": discord.api_base,
    }
    script = str(Path(sys.executable).with_name("discord-mcp"))
    answers = f"{discord.token}\n{discord.channel_id}\n{discord.owner_user_id}\n"
    done = subprocess.run(
        [script, "setup"],
        input=answers,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        encoding="utf-8",
        text=True,
        timeout=60,
        start_new_session=True,  # no terminal: getpass reads the token from stdin
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert discord.token not in done.stdout
    written = default_env_file(env)
    assert written is not None
    assert written.is_file()
    nexts = done.stdout.split("Next:\n", 1)[1].splitlines()
    install_line = nexts[0].split("   (or")[0].strip()
    assert install_line == f"{script} install claude"
    installed = subprocess.run(
        shlex.split(install_line),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        encoding="utf-8",
        text=True,
        timeout=60,
    )
    assert installed.returncode == 0, installed.stderr
    assert (home / ".claude.json").is_file()
    doctor = subprocess.run(
        shlex.split(nexts[1].strip()),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        encoding="utf-8",
        text=True,
    )
    assert "OK   configuration" in doctor.stdout, doctor.stdout
