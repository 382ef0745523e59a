"""`discord-mcp doctor` against the emulator: each check passes, and each failure says the fix."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.doctor import Check, run_doctor
from discord_mcp.setup.install import install
from discord_mcp.setup.wizard import write_env_file
from discord_mcp.transport.ban import BanState
from discord_mcp.transport.ledger import LedgerState
from discord_mcp.transport.shared_ledger import FileLedger
from tests.support.people import People
from tests.support.settings import env_for


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


def env(discord: RunningEmulator, tmp_path: Path, **extra: str) -> dict[str, str]:
    return env_for(discord, tmp_path / "state", **extra)


async def doctor(
    discord: RunningEmulator, tmp_path: Path, home: Path, **extra: str
) -> dict[str, Check]:
    checks = await run_doctor(env(discord, tmp_path, **extra), cwd=tmp_path, home=home)
    return {check.name.split(" (")[0]: check for check in checks}


async def test_a_healthy_setup_passes_every_check(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    env_file = tmp_path / "discord.env"
    write_env_file(env_file, {"DISCORD_BOT_TOKEN": discord.token})
    for client in ("claude", "codex", "gemini"):
        install(client, "user", env_file=env_file, home=home, cwd=tmp_path, environ={})  # type: ignore[arg-type]
    checks = await doctor(discord, tmp_path, home)
    assert {name: c.verdict for name, c in checks.items()} == {
        "configuration": "OK",
        "invalid requests": "OK",
        "token": "OK",
        "machine": "OK",
        "gateway sessions": "OK",
        "message content intent": "OK",
        "interactions endpoint": "OK",
        "channel": "OK",
        "owners": "OK",
        "emulator": "OK",
        "state directory": "OK",
        "claude": "OK",
        "codex": "OK",
        "gemini": "OK",
        # Installed without --approvals: said so, not a problem.
        "claude approvals": "OK",
        "codex approvals": "OK",
        "gemini approvals": "OK",
        # Installed without --hooks: said so, not a problem.
        "claude hooks": "OK",
        "codex hooks": "OK",
        "gemini hooks": "OK",
        # Each registered server was started and listed its tools (issue 37).
        "claude server": "OK",
        "codex server": "OK",
        "gemini server": "OK",
    }, [c.render() for c in checks.values()]
    assert "all 9 permissions" in checks["channel"].detail
    assert people.state()["stats"]["gateway_identifies"] == 1  # the intent was really tried


async def test_a_broken_configuration_is_named_and_discord_is_not_asked(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    checks = await doctor(discord, tmp_path, home, DISCORD_OWNER_IDS="")
    assert checks["configuration"].verdict == "FAIL"
    assert checks["configuration"].fix.startswith("DISCORD_OWNER_IDS:")
    assert "token" not in checks
    assert people.state()["stats"]["rest_requests"] == 0


async def test_a_wrong_token_fails_with_how_to_get_a_new_one(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    checks = await doctor(discord, tmp_path, home, DISCORD_BOT_TOKEN="wrong.token.value")
    assert checks["token"].verdict == "FAIL"
    assert "Reset Token" in checks["token"].fix
    assert "wrong.token.value" not in checks["token"].render()


async def test_the_message_content_intent_off_is_caught_with_the_portal_steps(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    people.fault(message_content_intent_enabled=False)
    checks = await doctor(discord, tmp_path, home)
    assert checks["message content intent"].verdict == "FAIL"
    assert "Privileged Gateway Intents" in checks["message content intent"].fix


async def test_an_interactions_endpoint_url_is_warned_about_with_where_to_clear_it(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    # Issue 33: with a URL set, Discord sends no interaction over the gateway.
    people.fault(interactions_endpoint_url="https://example.invalid/interactions")
    checks = await doctor(discord, tmp_path, home)
    check = checks["interactions endpoint"]
    assert check.verdict == "WARN"
    assert "https://example.invalid/interactions" in check.detail
    assert "Interactions Endpoint URL: clear it" in check.fix


async def test_a_message_content_intent_refused_says_what_still_works(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    people.fault(message_content_intent_enabled=False)
    check = (await doctor(discord, tmp_path, home))["message content intent"]
    assert "slash commands work" in check.detail
    assert "Privileged Gateway Intents > Message Content Intent" in check.fix


async def test_a_gateway_refusal_alone_is_caught_too(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    async def refused(_settings: object, _url: str) -> str:
        return "gateway close 4014: Message Content Intent"

    settings_env = env(discord, tmp_path)
    checks = {
        c.name: c for c in await run_doctor(settings_env, cwd=tmp_path, home=home, probe=refused)
    }
    assert checks["message content intent"].verdict == "FAIL"


async def test_missing_permissions_are_named(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    response = people._http.post(
        f"/roles/{discord.bot_role_id}", json={"deny": ["ADD_REACTIONS", "MANAGE_THREADS"]}
    )
    response.raise_for_status()
    checks = await doctor(discord, tmp_path, home)
    channel = checks["channel"]
    assert channel.verdict == "FAIL"
    assert "Add Reactions" in channel.detail
    assert "Manage Threads" in channel.detail
    assert "Send Messages" not in channel.detail


async def test_an_unreachable_channel_and_unknown_owner_fail(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    checks = await doctor(
        discord,
        tmp_path,
        home,
        DISCORD_CHANNEL_ID="123456789012345678",
        DISCORD_OWNER_IDS="223456789012345678",
    )
    assert checks["channel"].verdict == "FAIL"
    assert "Copy ID" in checks["channel"].fix
    assert checks["owners"].verdict == "FAIL"
    assert "223456789012345678" in checks["owners"].detail


async def test_a_state_directory_others_can_read_fails(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, 0o755)
    checks = await doctor(discord, tmp_path, home)
    assert checks["state directory"].verdict == "FAIL"
    assert checks["state directory"].fix == f"chmod 700 {state}"


async def test_client_settings_that_would_kill_or_block_a_wait_are_flagged(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        '[mcp_servers.discord]\ncommand = "python3"\nargs = ["-m", "discord_mcp"]\n'
        "tool_timeout_sec = 120\n",
        encoding="utf-8",
    )
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"mcpServers": {"discord": {"command": "discord-mcp", "timeout": 60000}}}),
        encoding="utf-8",
    )
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"discord": {"command": "discord-mcp", "timeout": 30000}}}),
        encoding="utf-8",
    )
    checks = await doctor(discord, tmp_path, home)
    codex, gemini, claude = checks["codex"], checks["gemini"], checks["claude"]
    assert codex.verdict == "FAIL"
    assert 'default_tools_approval_mode = "approve"' in codex.fix
    assert "tool_timeout_sec = 120" in codex.detail
    assert gemini.verdict == "FAIL"
    assert "trust" in gemini.detail
    assert "*TOKEN*" in gemini.detail
    assert "540" in gemini.detail
    assert claude.verdict == "FAIL"
    assert "30000" in claude.detail


async def test_a_registered_server_that_does_not_start_fails_with_what_it_said(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    """The file is right, the server is not: a Python that lost the package (as a uvx that
    cannot reach the index, the client shows it disconnected). doctor starts it and says so."""
    env_file = tmp_path / "discord.env"
    write_env_file(env_file, {"DISCORD_BOT_TOKEN": discord.token})
    install("gemini", "user", env_file=env_file, home=home, cwd=tmp_path, environ={})
    path = home / ".gemini" / "settings.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["mcpServers"]["discord"]["args"] = ["-m", "discord_mcp_gone"]  # no such module
    path.write_text(json.dumps(document), encoding="utf-8")
    checks = await doctor(discord, tmp_path, home)
    assert checks["gemini"].verdict == "OK"  # on paper, all is well
    server = checks["gemini server"]
    assert server.verdict == "FAIL", server.render()
    assert "did not answer tools/list" in server.detail
    assert "discord_mcp_gone" in server.detail  # what Python said on stderr
    assert "--version" in server.fix


async def test_no_client_configured_is_a_warning_with_the_install_command(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    checks = await doctor(discord, tmp_path, home)
    assert checks["agent clients"].verdict == "WARN"
    assert "discord-mcp install" in checks["agent clients"].fix


def test_the_command_exits_non_zero_when_something_fails(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "discord_mcp", "doctor"],
        env={
            **os.environ,
            **env(discord, tmp_path, DISCORD_OWNER_IDS="223456789012345678"),
            "HOME": str(home),
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert run.returncode == 1
    assert "FAIL owners" in run.stdout
    assert "problem(s) to fix" in run.stdout
    assert discord.token not in run.stdout + run.stderr


async def test_a_missing_variable_is_named_on_the_fail_line(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    checks = await doctor(discord, tmp_path, home, DISCORD_CHANNEL_ID="")
    line = checks["configuration"].render().splitlines()[0]
    assert line.startswith("FAIL configuration: DISCORD_CHANNEL_ID is not set")


async def test_a_projects_cli_missing_from_path_fails(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    from discord_mcp.runs import ProjectRegistry

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\n", encoding="utf-8")
    (bin_dir / "claude").chmod(0o755)
    project = tmp_path / "app"
    project.mkdir()
    registry = ProjectRegistry(tmp_path / "state", allowed_roots=[tmp_path])
    await asyncio.to_thread(registry.add, "app", project, ["claude", "codex"], "claude")
    checks = await doctor(discord, tmp_path, home, PATH=str(bin_dir))
    app = checks["project app"]
    assert app.verdict == "FAIL"
    assert app.detail.startswith("codex not on PATH")
    assert "claude" not in app.detail.split("(")[0]
    assert "PATH" in app.fix


async def test_a_projects_acp_agent_is_judged_by_its_registered_command(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    from discord_mcp.runs import ProjectRegistry
    from discord_mcp.runs.acp.agents import AgentRegistry

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\n", encoding="utf-8")
    (bin_dir / "claude").chmod(0o755)
    agent = tmp_path / "agents" / "fake-acp"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\n", encoding="utf-8")
    agent.chmod(0o755)
    state = tmp_path / "state"
    agents = AgentRegistry(state)
    await asyncio.to_thread(agents.add, "fake", [str(agent), "--acp"])
    await asyncio.to_thread(agents.add, "gone", [str(tmp_path / "nowhere" / "agent")])
    await asyncio.to_thread(agents.add, "bare", ["fake-acp-on-path"])
    registry = ProjectRegistry(state, allowed_roots=[tmp_path])
    for name, tools in (("app", ["claude", "fake"]), ("old", ["gone"]), ("path", ["bare"])):
        (tmp_path / name).mkdir()
        await asyncio.to_thread(registry.add, name, tmp_path / name, tools, tools[0])
    await asyncio.to_thread(agents.remove, "bare")  # the project still lists it

    checks = await doctor(discord, tmp_path, home, PATH=str(bin_dir))
    app = checks["project app"]
    assert app.verdict == "OK", app.detail
    assert "not on PATH" not in app.detail
    assert f"fake ({agent})" in app.detail
    old = checks["project old"]
    assert old.verdict == "FAIL"
    assert "ACP agent gone" in old.detail
    assert "not an executable file" in old.detail
    assert "discord-watch agent" in old.fix
    path = checks["project path"]
    assert path.verdict == "FAIL"
    assert "no ACP agent called bare" in path.detail


async def test_every_quarantined_state_file_is_a_line_with_what_to_do(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    from discord_mcp.state.quarantine import quarantine

    state = tmp_path / "state"
    for name in ("inbox/items.json", "watch/cursors.json", "runs/config.json"):
        path = state / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text("{ torn", encoding="utf-8")
        quarantine(path, "not JSON")
    state.chmod(0o700)
    checks = await run_doctor(env(discord, tmp_path), cwd=tmp_path, home=home)
    lines = [c for c in checks if c.name == "state file"]
    assert len(lines) == 3
    by_file = {c.detail.split(" (")[0]: c for c in lines}
    inbox = by_file[str(state / "inbox" / "items.json")]
    assert inbox.verdict == "WARN"
    assert ".corrupt-" in inbox.detail
    config = by_file[str(state / "runs" / "config.json")]
    assert config.verdict == "FAIL"  # no run can start until the project list is back
    assert "move it back" in config.fix
    projects = next(c for c in checks if c.name == "projects")
    assert projects.verdict == "FAIL"
    assert "E_CONFIG_CORRUPT" in projects.detail


async def _set_edge(discord: RunningEmulator, tmp_path: Path, ban: BanState) -> None:
    ledger = FileLedger.for_token(tmp_path / "state", Secret(discord.token))

    def change(state: LedgerState, now: float) -> None:
        state.ban = BanState(
            invalid_since=now if ban.invalid_count else 0.0,
            invalid_count=ban.invalid_count,
            banned_until=now + ban.banned_until if ban.banned_until else 0.0,
        )

    await ledger.apply(change)


async def test_invalid_requests_are_shown_and_warned_about_from_a_quarter_of_the_limit(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    checks = await doctor(discord, tmp_path, home)
    assert checks["invalid requests"].verdict == "OK"
    assert checks["invalid requests"].detail.startswith("0 of the 10,000")

    await _set_edge(discord, tmp_path, BanState(invalid_count=2600))
    checks = await doctor(discord, tmp_path, home)
    assert checks["invalid requests"].verdict == "WARN"
    assert checks["invalid requests"].detail.startswith("2600 of the 10,000")
    assert "bans this IP for an hour" in checks["invalid requests"].fix


async def test_a_cloudflare_ban_fails_and_doctor_sends_nothing_during_it(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    await _set_edge(discord, tmp_path, BanState(banned_until=1800.0))
    checks = await doctor(discord, tmp_path, home)
    assert checks["invalid requests"].verdict == "FAIL"
    assert "about 30 minutes to go" in checks["invalid requests"].detail
    assert "token" not in checks
    assert people.state()["stats"]["rest_requests"] == 0


async def test_a_forum_channel_is_refused_with_what_to_use_and_an_announcement_channel_passes(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    forum = people.new_channel(15, "questions")
    news = people.new_channel(5, "news")
    refused = await doctor(discord, tmp_path, home, DISCORD_CHANNEL_ID=forum)
    accepted = await doctor(discord, tmp_path, home, DISCORD_CHANNEL_ID=news)
    assert refused["channel"].verdict == "FAIL"
    assert "is a forum channel" in refused["channel"].detail
    assert "Use a text channel" in refused["channel"].fix
    assert accepted["channel"].verdict == "OK"
    assert "(announcement)" in accepted["channel"].detail


async def test_doctor_run_where_no_settings_are_says_where_it_looked_and_how_to_point_it(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "some-project"
    elsewhere.mkdir()
    environ = {"HOME": str(tmp_path / "user")}
    checks = await run_doctor(environ, cwd=elsewhere, home=tmp_path / "user")
    [configuration] = [c for c in checks if c.name == "configuration"]
    assert configuration.verdict == "FAIL"
    assert str(elsewhere / ".env") in configuration.fix
    assert str(tmp_path / "user" / ".config" / "discord-mcp" / ".env") in configuration.fix
    assert "--env-file" in configuration.fix
    assert "DISCORD_MCP_ENV_FILE" in configuration.fix


async def test_doctor_with_a_missing_env_file_reports_it_instead_of_crashing(
    tmp_path: Path,
) -> None:
    environ = {"DISCORD_MCP_ENV_FILE": str(tmp_path / "gone.env")}
    checks = await run_doctor(environ, cwd=tmp_path, home=tmp_path)
    [configuration] = [c for c in checks if c.name == "configuration"]
    assert configuration.verdict == "FAIL"
    assert "DISCORD_MCP_ENV_FILE" in configuration.detail


async def test_doctor_run_in_the_home_directory_reports_each_finding_once(
    discord: RunningEmulator, tmp_path: Path, home: Path
) -> None:
    # In ~, Gemini's user and project settings are one file: its problem is one line.
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    entry = {"command": sys.executable, "args": ["-m", "discord_mcp"], "trust": False}
    settings.write_text(json.dumps({"mcpServers": {"discord": entry}}), encoding="utf-8")
    checks = await run_doctor(env(discord, tmp_path), cwd=home, home=home)
    lines = [check.render() for check in checks]
    assert len(lines) == len(set(lines))
    assert sum(c.name.startswith("gemini (") and c.verdict == "FAIL" for c in checks) == 1


async def test_doctor_names_this_machine_the_others_sharing_the_bot_and_the_logins_left(
    discord: RunningEmulator, tmp_path: Path, home: Path, people: People
) -> None:
    """Issue 27: read from Discord alone (the presence records), changing nothing there."""
    from discord_mcp.state.files import write_json
    from discord_mcp.team.presence import Presence
    from discord_mcp.team.records import MachineRecord
    from discord_mcp.team.roster import Roster
    from discord_mcp.team.signing import RecordKey
    from discord_mcp.transport.rest import RestClient

    async def nothing() -> MachineRecord:
        return MachineRecord(name="", instance="", up_since=0, projects=("api",))

    alone = await doctor(discord, tmp_path, home, DISCORD_MCP_MACHINE="laptop")
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        await Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=Roster("server"),
            key=RecordKey(Secret(discord.token)),
            describe=nothing,
        ).tick()
    [thread] = [c for c in people.state()["channels"] if c.get("name") == "discord-mcp machines"]
    records_before = people.messages(str(thread["id"]))
    shared = await doctor(discord, tmp_path, home, DISCORD_MCP_MACHINE="laptop")
    clash = await doctor(discord, tmp_path, home, DISCORD_MCP_MACHINE="server")
    assert alone["machine"].verdict == "OK"
    assert alone["machine"].detail == "`laptop`; no other machine shares this bot"
    assert shared["machine"].detail == "`laptop`; 1 other machines share this bot: server (live)"
    assert clash["machine"].verdict == "WARN"
    assert "already uses that name" in clash["machine"].detail
    sessions = shared["gateway sessions"]
    assert sessions.verdict == "OK"
    assert "of 1000 gateway logins left for this bot token today" in sessions.detail
    assert people.messages(str(thread["id"])) == records_before  # doctor wrote nothing
    write_json(
        tmp_path / "state" / "team" / "machines.json",
        {"version": 1, "machine": "build", "instance": "x", "machines": []},
    )
    renamed = await doctor(discord, tmp_path, home, DISCORD_MCP_MACHINE="laptop")
    assert renamed["machine"].verdict == "WARN"
    assert "discord-watch last ran as `build`" in renamed["machine"].detail
    threads = [c for c in people.state()["channels"] if c.get("name") == "discord-mcp machines"]
    assert threads == [thread]
