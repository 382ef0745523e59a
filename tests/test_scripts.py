"""The scripts a user runs: syntax, the systemd unit they render, the tmux launcher for real."""

from __future__ import annotations

import configparser
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.wizard import write_env_file
from tests.conftest import Packages
from tests.support.browser import wait_for
from tests.support.packages import copy_repository, uv_env
from tests.support.people import People
from tests.support.requirements import require_program

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
SHELL_SCRIPTS = [
    "bootstrap",
    "test",
    "run",
    "install-agent-clis",
    "install-browser",
    "install-systemd-unit",
    "start-discord-watch.sh",
    "screenshots",
]


@pytest.mark.parametrize("name", SHELL_SCRIPTS)
def test_every_script_is_valid_bash_and_executable(name: str) -> None:
    path = SCRIPTS / name
    assert os.access(path, os.X_OK)
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=30)
    assert path.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash\n")


def test_the_ci_entry_point_runs_exactly_the_test_script() -> None:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "exec scripts/test" in text


def test_the_systemd_unit_renders_with_real_paths_and_verifies(tmp_path: Path) -> None:
    env_file = tmp_path / "discord.env"
    env_file.write_text("DISCORD_BOT_TOKEN=x\n", encoding="utf-8")
    unit = tmp_path / "discord-watch.service"
    subprocess.run(
        [str(SCRIPTS / "install-systemd-unit"), str(unit), str(env_file)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read(unit, encoding="utf-8")
    exec_start = parser["Service"]["ExecStart"].split()
    assert exec_start[1:] == ["run"]
    assert os.access(exec_start[0], os.X_OK)
    assert parser["Service"]["Environment"] == f"DISCORD_MCP_ENV_FILE={env_file}"
    assert Path(parser["Service"]["WorkingDirectory"]) == ROOT
    [path_line] = [
        line for line in unit.read_text(encoding="utf-8").splitlines() if "PATH=" in line
    ]
    assert path_line.startswith("Environment=PATH=")
    assert {"/usr/local/bin", "/usr/bin", "/bin"} <= set(path_line.split("=")[-1].split(":"))
    assert "@" not in unit.read_text(encoding="utf-8").replace("network-online", "")


def test_the_rendered_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = require_program("systemd-analyze", "it checks the rendered unit")
    env_file = tmp_path / "discord.env"
    env_file.write_text("DISCORD_BOT_TOKEN=x\n", encoding="utf-8")
    unit = tmp_path / "discord-watch.service"
    subprocess.run(
        [str(SCRIPTS / "install-systemd-unit"), str(unit), str(env_file)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    verified = subprocess.run(
        [analyze, "verify", str(unit)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert verified.returncode == 0, verified.stderr


def test_the_unit_script_refuses_a_missing_env_file(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(SCRIPTS / "install-systemd-unit"), str(tmp_path / "u.service"), str(tmp_path / "no")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
    )
    assert done.returncode == 1
    assert "discord-mcp setup" in done.stderr
    assert not (tmp_path / "u.service").exists()


def test_the_tmux_launcher_starts_the_daemon_in_a_session(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    require_program("tmux", "the launcher script starts the daemon in a tmux session")
    discord = make_emulator(rate_limit_scale=0.05)
    env_file = tmp_path / "discord.env"
    write_env_file(
        env_file,
        {
            "DISCORD_BOT_TOKEN": discord.token,
            "DISCORD_CHANNEL_ID": discord.channel_id,
            "DISCORD_OWNER_IDS": discord.owner_user_id,
            "DISCORD_API_BASE": discord.api_base,
            "DISCORD_MCP_HOME": str(tmp_path / "state"),
        },
    )
    env = {
        **os.environ,
        "TMUX_TMPDIR": str(tmp_path),  # a private tmux server, not the user's
        "DISCORD_WATCH_TMUX_SESSION": "dw-test",
    }
    env.pop("TMUX", None)
    people = People(discord)
    try:
        started = subprocess.run(
            [str(SCRIPTS / "start-discord-watch.sh"), str(env_file)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=30,
        )
        assert started.returncode == 0, started.stderr
        assert "tmux attach -t dw-test" in started.stdout
        deadline = time.monotonic() + 30
        while people.state()["stats"]["gateway_connections_open"] != 1:
            assert time.monotonic() < deadline, "the daemon never connected"
            time.sleep(0.1)
        again = subprocess.run(
            [str(SCRIPTS / "start-discord-watch.sh"), str(env_file)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=30,
        )
        assert "already running" in again.stdout
    finally:
        subprocess.run(["tmux", "kill-server"], env=env, capture_output=True, timeout=30)
        people.close()


@pytest.mark.parametrize(("ci", "code"), [("true", 1), ("", 0)])
def test_the_browser_installer_fails_in_ci_and_only_warns_elsewhere_when_it_cannot_install(
    ci: str, code: int
) -> None:
    # No PATH at all: neither chromium nor apt-get can be found.
    done = subprocess.run(
        ["/bin/bash", str(SCRIPTS / "install-browser")],
        env={"PATH": "/nonexistent", "CI": ci},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
    )

    assert done.returncode == code
    assert "no apt-get to install chromium and chromium-driver" in done.stderr


def test_run_starts_the_demo_by_default_and_the_bare_emulator_on_request() -> None:
    text = (SCRIPTS / "run").read_text(encoding="utf-8")

    assert text.rstrip().endswith('exec .venv/bin/discord-mcp demo "$@"')
    assert 'exec .venv/bin/discord-mcp emulator "$@"' in text


def test_a_first_scripts_run_says_it_is_installing_before_anything_else(
    packages: Packages, tmp_path: Path
) -> None:
    clone = copy_repository(tmp_path / "clone")
    env = uv_env(packages.uv_cache)  # uv on PATH: bootstrap syncs from uv.lock
    process = subprocess.Popen(
        [str(clone / "scripts" / "run"), "emulator", "--port", "0"],
        cwd=clone,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        text=True,
    )
    lines: list[str] = []
    try:
        assert process.stderr is not None
        stderr = process.stderr
        wait_for(
            lambda: lines.append(stderr.readline()) or "Press Ctrl-C" in lines[-1],
            timeout=240,
            what="the emulator's banner after the install",
        )
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert lines[0].startswith("scripts/run: first run: installing discord-mcp")
    assert "(about a minute)" in lines[0]
    assert any(line.startswith("Open http://127.0.0.1:") for line in lines)
    assert (clone / ".venv" / "bin" / "discord-mcp").is_file()


def test_the_systemd_unit_carries_the_path_the_agent_clis_were_found_on(tmp_path: Path) -> None:
    bin_dir = tmp_path / "npm-global" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("claude", "gemini"):
        (bin_dir / name).write_text("#!/bin/sh\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    env_file = tmp_path / "discord.env"
    env_file.write_text("DISCORD_BOT_TOKEN=x\n", encoding="utf-8")
    unit = tmp_path / "discord-watch.service"
    subprocess.run(
        [str(SCRIPTS / "install-systemd-unit"), str(unit), str(env_file)],
        check=True,
        capture_output=True,
        timeout=30,
        env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"},
    )
    [path_line] = [
        line for line in unit.read_text(encoding="utf-8").splitlines() if "PATH=" in line
    ]
    directories = path_line.removeprefix("Environment=PATH=").split(":")
    assert directories[0] == str(bin_dir)
    assert directories.count(str(bin_dir)) == 1
