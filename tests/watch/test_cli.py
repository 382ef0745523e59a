"""The ``discord-watch`` command line: projects, status, and its errors (a public contract)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.decisions.model import Decision, new_decision_id
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from tests.support.settings import env_for
from tests.support.waiting import until_sync

WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


def watch(
    *args: str, home: Path, roots: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WATCH, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "DISCORD_MCP_HOME": str(home / "state"),
            "DISCORD_WATCH_ROOTS": str(roots),
            **(env or {}),
        },
        cwd=home,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "code" / "app").mkdir(parents=True)
    return tmp_path


def test_projects_are_added_listed_and_removed(home: Path) -> None:
    app = home / "code" / "app"
    added = watch(
        "project",
        "add",
        "app",
        str(app),
        "--tools",
        "claude,codex",
        "--default",
        "codex",
        "--args",
        'claude=["--model", "opus"]',
        home=home,
        roots=home,
    )
    assert added.returncode == 0, added.stderr
    assert "added project app" in added.stdout
    listed = watch("project", "list", home=home, roots=home)
    name, path, tools, default, timeout, args = listed.stdout.strip().split("\t")
    assert (name, path, tools, default) == ("app", str(app), "tools=claude,codex", "default=codex")
    assert timeout == "timeout=15m"  # the engine's default
    assert json.loads(args.removeprefix("args=")) == {"claude": ["--model", "opus"]}
    config = json.loads((home / "state" / "runs" / "config.json").read_text(encoding="utf-8"))
    assert config["version"] == 1
    assert config["projects"]["app"]["default_args"]["claude"] == ["--model", "opus"]
    removed = watch("project", "remove", "app", home=home, roots=home)
    assert removed.returncode == 0
    assert "no projects yet" in watch("project", "list", home=home, roots=home).stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["BAD NAME", "{app}", "--tools", "claude"], "E_INVALID_PROJECT_NAME"),
        (["app", "relative/path", "--tools", "claude"], "E_INVALID_PATH"),
        (["app", "{missing}", "--tools", "claude"], "E_INVALID_PATH"),
        (["app", "/usr", "--tools", "claude"], "E_INVALID_PATH"),
        (["app", "{app}", "--tools", "vim"], "E_INVALID_TOOLSET"),
        (["app", "{app}", "--tools", "claude", "--default", "gemini"], "E_INVALID_TOOLSET"),
        (["app", "{app}", "--tools", "claude", "--args", "claude=--model opus"], "E_INVALID_ARGS"),
        (["app", "{app}", "--tools", "claude", "--timeout", "soon"], "E_INVALID_TIMEOUT"),
        (["app", "{app}", "--tools", "claude", "--timeout", "48h"], "E_INVALID_TIMEOUT"),
    ],
)
def test_invalid_projects_are_refused_with_a_code_and_a_fix(
    home: Path, args: list[str], code: str
) -> None:
    filled = [a.format(app=home / "code" / "app", missing=home / "code" / "nope") for a in args]
    result = watch("project", "add", *filled, home=home, roots=home)
    assert result.returncode == 2
    assert result.stderr.startswith(f"discord-watch: {code}: ")
    assert not (home / "state" / "runs" / "config.json").exists()


def test_a_second_project_with_the_same_name_is_refused(home: Path) -> None:
    app = str(home / "code" / "app")
    assert (
        watch("project", "add", "app", app, "--tools", "claude", home=home, roots=home).returncode
        == 0
    )
    again = watch("project", "add", "app", app, "--tools", "gemini", home=home, roots=home)
    assert "E_PROJECT_EXISTS" in again.stderr


def test_a_project_keeps_its_own_job_timeout(home: Path) -> None:
    app = str(home / "code" / "app")
    added = watch(
        "project",
        "add",
        "app",
        app,
        "--tools",
        "claude",
        "--timeout",
        "1h30m",
        home=home,
        roots=home,
    )
    assert added.returncode == 0, added.stderr
    assert "job timeout 1h30m" in added.stdout
    listed = watch("project", "list", home=home, roots=home).stdout
    assert "\ttimeout=1h30m" in listed
    config = json.loads((home / "state" / "runs" / "config.json").read_text(encoding="utf-8"))
    assert config["projects"]["app"]["job_timeout_seconds"] == 5400


def test_the_timeout_option_is_documented(home: Path) -> None:
    helped = watch("project", "add", "--help", home=home, roots=home)
    assert "--timeout DURATION" in helped.stdout
    assert "waits for your answer" in helped.stdout


def test_a_corrupt_project_list_is_reported_never_read_as_no_projects(home: Path) -> None:
    app = str(home / "code" / "app")
    watch("project", "add", "app", app, "--tools", "claude", home=home, roots=home)
    config = home / "state" / "runs" / "config.json"
    config.write_text('{"version": 1, "projects": {"app": ', encoding="utf-8")
    for attempt in ("first", "again"):  # the first read sets it aside; later ones still say so
        listed = watch("project", "list", home=home, roots=home)
        assert listed.returncode == 2, attempt
        last = listed.stderr.strip().splitlines()[-1]
        assert last.startswith("discord-watch: E_CONFIG_CORRUPT: "), attempt
        assert "no projects yet" not in listed.stdout
        [moved] = list(config.parent.glob("config.json.corrupt-*"))
        assert str(moved) in last
        assert f"move it back to {config}" in last
    refused = watch("project", "add", "other", app, "--tools", "claude", home=home, roots=home)
    assert "E_CONFIG_CORRUPT" in refused.stderr
    moved.rename(config.with_name("broken-backup.json"))  # the owner deals with it
    assert "no projects yet" in watch("project", "list", home=home, roots=home).stdout


def test_status_shows_open_decisions_runs_and_the_gateway(home: Path) -> None:
    state = home / "state"
    DecisionStore(state).create(
        Decision(
            id=new_decision_id(),
            project="app",
            session="s1",
            question="Rotate the keys tonight?",
            context=None,
            options=("Tonight", "Tomorrow"),
            channel_id="1" * 18,
            thread_id="2" * 18,
            card_message_id="3" * 18,
            thread_url="https://discord.com/channels/1/2",
            asked_at="2026-11-22T16:00:00+00:00",
        )
    )
    result = watch("status", home=home, roots=home)
    assert result.returncode == 0, result.stderr
    assert "open decisions: 1" in result.stdout
    assert "Rotate the keys tonight?" in result.stdout
    assert "runs: 0 sessions" in result.stdout
    assert "gateway: nobody has held it yet" in result.stdout
    assert "inbox: 0 unread" in result.stdout


def test_run_with_a_token_but_no_channel_names_the_missing_variable(home: Path) -> None:
    # (Without a token at all it runs local-only: tests/watch/test_local.py.)
    token = "x" * 24 + "." + "y" * 6 + "." + "z" * 27
    result = watch("run", home=home, roots=home, env={"DISCORD_BOT_TOKEN": token})
    assert result.returncode == 2
    assert "DISCORD_CHANNEL_ID" in result.stderr
    assert result.stdout == ""
    assert token not in result.stderr


def test_acp_agents_are_added_listed_used_as_tools_and_removed(home: Path) -> None:
    (home / "app").mkdir()
    added = watch("agent", "add", "gem", "--", "gemini", "--acp", home=home, roots=home)
    assert added.returncode == 0, added.stderr
    assert "added ACP agent gem: gemini --acp" in added.stdout
    listed = watch("agent", "list", home=home, roots=home)
    assert listed.stdout.splitlines() == ["gem\tgemini --acp"]
    project = watch(
        "project", "add", "app", str(home / "app"), "--tools", "claude,gem", "--busy",
        "interrupt", home=home, roots=home,
    )  # fmt: skip
    assert project.returncode == 0, project.stderr
    changed = watch("project", "set", "app", "--stream", "off", home=home, roots=home)
    assert "stream off, busy interrupt" in changed.stdout
    for bad in (["claude", "--", "x"], ["Bad Name", "--", "x"], ["empty"]):
        refused = watch("agent", "add", *bad, home=home, roots=home)
        assert refused.returncode == 2
        assert "E_INVALID_AGENT" in refused.stderr
    unknown = watch(
        "project", "add", "other", str(home / "app"), "--tools", "nope", home=home, roots=home
    )
    assert "E_INVALID_TOOLSET" in unknown.stderr
    removed = watch("agent", "remove", "gem", home=home, roots=home)
    assert removed.returncode == 0
    assert watch("agent", "list", home=home, roots=home).stdout.startswith("no ACP agents")


def test_chat_channels_are_added_listed_and_removed_from_the_shell(home: Path) -> None:
    roots = home / "code"
    watch("project", "add", "app", str(roots / "app"), "--tools", "claude,codex",
          home=home, roots=roots)  # fmt: skip
    channel = "135912345678901234"
    added = watch("chat", "add", channel, "--tool", "claude", "--history", "5",
                  home=home, roots=roots)  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert (home / "state" / "chat" / channel).is_dir()  # the persona folder, made
    open_ = watch("chat", "add", "135912345678901235", "--tool", "codex", "--project", "app",
                  "--who", "everyone", "--keep-session", home=home, roots=roots)  # fmt: skip
    assert open_.returncode == 0, open_.stderr
    listed = watch("chat", "list", home=home, roots=roots).stdout
    assert f"{channel}\ttool=claude\tproject=(its own folder)\twho=owners\thistory=5" in listed
    assert "who=everyone" in listed
    assert "keep-session" in listed
    main = watch("chat", "add", "135912345678901236", "--tool", "claude", home=home,
                 roots=roots, env={"DISCORD_CHANNEL_ID": "135912345678901236"})  # fmt: skip
    assert main.returncode == 2
    assert "bot's own channel" in main.stderr
    wrong = watch("chat", "add", channel, "--tool", "gemini", "--project", "app",
                  home=home, roots=roots)  # fmt: skip
    assert wrong.returncode == 2
    assert "E_TOOL_NOT_ENABLED" in wrong.stderr
    removed = watch("chat", "remove", channel, home=home, roots=roots)
    assert removed.returncode == 0
    assert channel + "\t" not in watch("chat", "list", home=home, roots=roots).stdout
    gone = watch("chat", "remove", channel, home=home, roots=roots)
    assert gone.returncode == 2
    assert "E_CHAT_NOT_FOUND" in gone.stderr


def test_schedules_take_cron_in_a_time_zone_from_the_shell(home: Path) -> None:
    roots = home / "code"
    channel = "135912345678901234"
    watch("chat", "add", channel, "--tool", "claude", home=home, roots=roots)
    added = watch("schedule", "add", 'cron:"0,30 * * * *" tz:Asia/Tokyo', "--chat", channel,
                  home=home, roots=roots, env={"TZ": "Europe/Berlin"})  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert 'added schedule sch_1 (cron "0,30 * * * *" tz:Asia/Tokyo)' in added.stdout
    assert "CET" in added.stdout or "CEST" in added.stdout  # shown in this machine's zone
    listed = watch("schedule", "list", home=home, roots=roots).stdout
    assert f'sch_1\tcron "0,30 * * * *" tz:Asia/Tokyo\tchat={channel}' in listed
    bad = watch("schedule", "add", 'cron:"0 25 * * *"', "--chat", channel, home=home,
                roots=roots)  # fmt: skip
    assert bad.returncode == 2
    assert "E_INVALID_SCHEDULE" in bad.stderr
    nowhere = watch("schedule", "add", "every 10m", "--chat", "1", home=home, roots=roots)
    assert nowhere.returncode == 2
    assert "E_CHAT_NOT_FOUND" in nowhere.stderr
    assert watch("schedule", "remove", "sch_1", home=home, roots=roots).returncode == 0


def test_the_daemon_reads_history_at_the_interval_given_on_its_command_line(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    """``discord-watch --interval 10``, as the Decision MCP seed starts it (issue 34): the
    option wins over POLL_INTERVAL_SECONDS, and a bad value is refused before anything runs."""
    env = {**os.environ, **env_for(discord, tmp_path / "state", DISCORD_WATCH_ROOTS=str(tmp_path))}
    log = tmp_path / "watch.log"
    with log.open("wb") as out:
        daemon = subprocess.Popen(
            [*WATCH, "--interval", "7.5"], env=env, cwd=tmp_path, stdout=out, stderr=out
        )
    try:
        said = until_sync(
            lambda: "history read every 7.5s" in log.read_text(encoding="utf-8", errors="replace"),
            seconds=60,
            what="the daemon's first line",
        )
        assert said
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    for bad in ("0", "-3", "soon", "inf"):
        refused = subprocess.run(
            [*WATCH, "--interval", bad],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        assert refused.returncode == 2, bad
        assert "is not a number of seconds" in refused.stderr, refused.stderr
