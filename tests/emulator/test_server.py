"""Starting and stopping emulators: in a thread, in a loop, and from the command line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading

import httpx
import pytest

from discord_mcp.emulator import EmulatorConfig, serve, start_in_thread
from discord_mcp.emulator.cli import main


def test_a_thread_emulator_serves_until_stopped_and_stop_is_idempotent() -> None:
    running = start_in_thread()
    url = running.base_url + "/_emulator/state"
    assert httpx.get(url).status_code == 200

    running.stop()
    running.stop()

    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_leaving_the_with_block_stops_the_emulator() -> None:
    with start_in_thread() as running:
        url = running.base_url + "/_emulator/state"
        assert httpx.get(url).status_code == 200

    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_the_urls_name_the_chosen_port() -> None:
    with start_in_thread() as running:
        assert running.port > 0
        assert running.base_url == f"http://127.0.0.1:{running.port}"
        assert running.api_base == running.base_url + "/api/v10"


def test_a_taken_port_is_an_oserror() -> None:
    with start_in_thread() as running, pytest.raises(OSError, match="in use"):
        start_in_thread(port=running.port)


def test_a_config_and_keyword_settings_combine() -> None:
    config = EmulatorConfig(token="from-config", rate_limit_scale=0.5)

    with start_in_thread(config=config, rate_limit_scale=0.25) as running:
        faults = httpx.get(running.base_url + "/_emulator/faults").json()
        assert running.token == "from-config"
        assert faults["rate_limit_scale"] == 0.25


@pytest.mark.parametrize(
    "settings",
    [{"rate_limit_scale": 0}, {"token": ""}, {"token": "has space"}, {"global_limit": 0}],
)
def test_an_impossible_setting_is_refused(settings: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must"):
        EmulatorConfig(**settings)  # type: ignore[arg-type]


def test_stopping_leaves_no_emulator_thread_behind() -> None:
    with start_in_thread() as running:
        name = f"discord-mcp-emulator-{running.port}"
        assert name in {t.name for t in threading.enumerate()}

    assert name not in {t.name for t in threading.enumerate()}


async def test_an_emulator_serves_inside_the_running_loop() -> None:
    async with serve() as running:
        async with httpx.AsyncClient() as client:
            response = await client.get(running.api_base + "/users/@me")
        assert response.status_code == 401

    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as client:
            await client.get(running.api_base + "/users/@me")


def test_the_command_line_prints_how_to_use_it_and_exits_0_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "discord_mcp", "emulator", "--port", "0", "--token", "cli-token"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=os.environ | {"PYTHONWARNINGS": "error"},
    )
    try:
        assert process.stderr is not None
        banner = []
        for line in process.stderr:  # bounded by the test timeout; ends at "Press Ctrl-C"
            banner.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        text = "".join(banner)
        api_base = next(
            line.split("=", 1)[1].strip() for line in banner if "DISCORD_API_BASE=" in line
        )
        me = httpx.get(api_base + "/users/@me", headers={"Authorization": "Bot cli-token"})
        process.send_signal(signal.SIGTERM)
        stdout, _ = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    assert me.status_code == 200
    for variable in ("DISCORD_BOT_TOKEN=cli-token", "DISCORD_CHANNEL_ID=", "DISCORD_OWNER_IDS="):
        assert variable in text
    assert process.returncode == 0
    assert stdout == ""


def test_the_command_line_exits_0_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "discord_mcp", "emulator", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("Press Ctrl-C"):
                break
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    assert process.returncode == 0


def test_the_command_line_reports_a_taken_port_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code = main(["--port", str(taken.getsockname()[1])])

    assert code == 1
    assert "cannot start" in capsys.readouterr().err


def test_the_command_line_rejects_a_bad_scale_with_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--rate-limit-scale", "0"]) == 2
    assert "must be greater than 0" in capsys.readouterr().err
    assert main(["--rate-limit-scale", "1e308"]) == 2
    assert "at most 1000" in capsys.readouterr().err


def test_the_command_line_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--rate-limit-scale" in capsys.readouterr().out
