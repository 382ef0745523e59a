"""`discord-mcp doctor` warns when the emulator it is pointed at listens beyond this machine."""

from __future__ import annotations

from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.doctor import Check, run_doctor
from tests.support.settings import env_for


async def emulator_check(discord: RunningEmulator, tmp_path: Path, **extra: str) -> Check | None:
    home = tmp_path / "user"
    home.mkdir(exist_ok=True)
    env = env_for(discord, tmp_path / "state", **extra)
    checks = await run_doctor(env, cwd=tmp_path, home=home)
    return next((c for c in checks if c.name == "emulator"), None)


async def test_an_emulator_on_loopback_is_ok(emulator: RunningEmulator, tmp_path: Path) -> None:
    check = await emulator_check(emulator, tmp_path)
    assert check is not None
    assert check.verdict == "OK"
    assert "127.0.0.1" in check.detail


async def test_an_emulator_bound_to_every_address_is_a_warning(tmp_path: Path) -> None:
    from discord_mcp.emulator import start_in_thread

    with start_in_thread(
        "0.0.0.0", 0, control_token="doctor-test-token", token="doctor-own-bot-token"
    ) as discord:
        # The client reaches it on loopback; the emulator itself says where it listens.
        local = f"http://127.0.0.1:{discord.port}"
        check = await emulator_check(
            discord,
            tmp_path,
            DISCORD_API_BASE=local + "/api/v10",
            DISCORD_GATEWAY_URL=local.replace("http", "ws") + "/gateway",
        )
    assert check is not None
    assert check.verdict == "WARN"
    assert "0.0.0.0" in check.detail
    assert "control token" in check.detail
    assert "127.0.0.1" in check.fix


async def test_an_api_base_on_another_machine_is_a_warning() -> None:
    from discord_mcp.setup.doctor import emulator_exposure

    # TEST-NET-1 (RFC 5737): nothing answers, and the address alone says it is elsewhere.
    check = await emulator_exposure("http://192.0.2.10:8800/api/v10", deadline=0.5)
    assert check is not None
    assert check.verdict == "WARN"
    assert "192.0.2.10" in check.detail


async def test_discord_itself_gets_no_emulator_line() -> None:
    from discord_mcp.setup.doctor import emulator_exposure

    assert await emulator_exposure("https://discord.com/api/v10") is None
