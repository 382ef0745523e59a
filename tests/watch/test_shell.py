"""``discord-watch submit|resume|stop|logs`` from a shell, against a running daemon (their
output and exit codes are a contract: see discord_mcp/watch/shell.py and the CHANGELOG)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.watch.conftest import live_daemon, until
from tests.watch.test_daemon import texts

CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"


async def watch(settings: Settings, *args: str) -> tuple[int, str, str]:
    """Run ``discord-watch ARGS`` as a separate process (the daemon keeps running here)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "HOME": str(settings.home.parent)}
        | {"DISCORD_MCP_HOME": str(settings.home)},
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def as_json(settings: Settings, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = await watch(settings, *args, "--json")
    assert out.count("\n") == 1, (out, err)
    return code, json.loads(out)


async def test_submit_opens_a_thread_and_wait_returns_the_answer(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    async with live_daemon(live_settings, fake_spawner, discord):
        code, queued = await as_json(live_settings, "submit", "app", "fix the build")
        code_wait, done = await as_json(
            live_settings, "submit", "app", "and the docs", "--tool", "codex", "--wait"
        )
        text_code, text, _ = await watch(live_settings, "submit", "app", "say it", "--wait")
    assert code == 0
    assert queued["ok"] is True
    assert (queued["project"], queued["tool"]) == ("app", "claude")
    assert queued["state"] in ("queued", "running")
    assert queued["job_id"].startswith("job_")
    assert queued["thread_url"] == (
        f"{discord.base_url}/channels/{discord.guild_id}/{queued['thread_id']}"
    )  # the emulator's page, since the bot talks to the emulator
    assert code_wait == 0
    assert (done["state"], done["tool"]) == ("success", "codex")
    assert "pong" in done["final_text"]
    assert done["usage"]["input_tokens"] > 0
    assert text_code == 0
    assert "pong" in text
    thread = [t for t in people.threads() if t["id"] == queued["thread_id"]]
    assert thread
    assert "**From the shell**" in texts(people, queued["thread_id"])[0]


async def test_resume_continues_a_thread_and_a_failure_exits_1(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    fake_spawner.script("break", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with live_daemon(live_settings, fake_spawner, discord):
        _, first = await as_json(live_settings, "submit", "app", "one", "--wait")
        thread = first["thread_id"]
        code, second = await as_json(live_settings, "resume", thread, "two", "--wait")
        failed_code, failed = await as_json(live_settings, "resume", thread, "break", "--wait")
        missing_code, missing = await as_json(live_settings, "resume", "12345", "three")
    assert code == 0
    assert (second["thread_id"], second["state"]) == (thread, "success")
    runs = fake_spawner.runs()
    assert "--resume" in runs[1]["argv"]  # the same agent session, continued
    assert failed_code == 1
    assert (failed["state"], failed["error_code"]) == ("failed", "E_CLI_ERROR")
    assert missing_code == 2
    assert missing == {
        "ok": False,
        "code": "E_NOT_IN_MANAGED_THREAD",
        "message": missing["message"],
    }


async def test_stop_ends_a_running_job_and_logs_show_its_output(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    fake_spawner.script("long", Scenario(hang=True))
    async with live_daemon(live_settings, fake_spawner, discord):
        timeout_code, job = await as_json(
            live_settings, "submit", "app", "long", "--wait", "--timeout", "1"
        )
        await until(lambda: any("**Running**" in t for t in texts(people, job["thread_id"])))
        code, stopped = await as_json(live_settings, "stop", job["job_id"])
        again_code, again = await as_json(live_settings, "stop", job["thread_id"])
        await until(lambda: any("E_STOPPED" in t for t in texts(people, job["thread_id"])))
        log_code, logs = await as_json(live_settings, "logs", job["thread_id"])
    text_code, text, _ = await watch(live_settings, "logs", job["job_id"])  # no daemon needed
    assert timeout_code == 4
    assert job["state"] == "running"  # the time ran out; the job goes on
    assert code == 0
    assert stopped == {
        "ok": True,
        "thread_id": job["thread_id"],
        "stopped": job["job_id"],
        "was": "running",
    }
    assert again_code == 0
    assert again["stopped"] is None
    assert log_code == 0
    assert logs["job_id"] == job["job_id"]
    assert logs["stdout"]
    assert json.loads(logs["stdout"][0])["type"] == "system"
    assert text_code == 0
    assert text.startswith(f"# {job['job_id']} (failed) in thread {job['thread_id']}")
    assert '{"type"' not in text  # the CLI's events, read: not its raw JSON
    assert logs["text"]
    assert all(not line.startswith("{") for line in logs["text"])


async def test_submit_wait_says_on_stderr_when_its_timeout_ran_out(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    fake_spawner.script("long", Scenario(hang=True))
    async with live_daemon(live_settings, fake_spawner, discord):
        code, out, err = await watch(
            live_settings, "submit", "app", "long", "--wait", "--timeout", "1"
        )
        job_id = out.split()[0]
        await as_json(live_settings, "stop", job_id)
    assert code == 4
    assert "--timeout 1 s ran out before the job ended; it goes on" in err
    assert f"discord-watch logs {job_id}" in err


async def test_without_a_daemon_the_commands_say_so_and_exit_3(
    live_settings: Settings, tmp_path: Path
) -> None:
    code, result = await as_json(live_settings, "submit", "app", "hello")
    stop_code, _, err = await watch(live_settings, "stop", "job_x")
    logs_code, _, logs_err = await watch(live_settings, "logs", "job_x")
    assert code == 3
    assert result["code"] == "E_DAEMON_NOT_RUNNING"
    assert stop_code == 3
    assert "discord-watch is not running" in err
    assert logs_code == 2
    assert "E_JOB_NOT_FOUND" in logs_err
    assert not (live_settings.home / "watch" / "requests").exists() or not list(
        (live_settings.home / "watch" / "requests").iterdir()
    )
