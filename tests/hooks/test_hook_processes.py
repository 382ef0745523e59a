"""A hook process leaves nothing of its own behind, and never hangs on a file it reads.

Hooks are short-lived processes started by the hundred: every one that left a file would fill
the state directory, and one that hangs holds the agent until the CLI kills it (which, for a
guard, lets the call run). So: no lease file outlives its hook, whichever way it ended (the
answer printed and the process ended at once, a failure, the deadline); and a transcript path
that names a FIFO or a device is never opened as if it were a file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.hooks.test_fail_closed import closed_port_api, hanging_discord, settings
from tests.support.hook_runs import HOOK, cli_reading, run_hook
from tests.support.model_server import wait_until
from tests.support.people import People
from tests.support.settings import env_for

SESSION = "5b0c7c1e-aaaa-4bbb-8ccc-000000000042"


def payload(tmp_path: Path, transcript: str, **changes: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": transcript,
        "cwd": str(tmp_path),
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "touch x", "description": "touch"},
        "stop_hook_active": False,
        **changes,
    }


def leases(home: Path) -> list[str]:
    directory = home / "leases"
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def per_process_files(home: Path) -> set[str]:
    """Everything in the state directory but decisions and logs (which are meant to stay)."""
    return {
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and p.relative_to(home).parts[0] not in ("decisions", "logs")
    }


def answered_by_the_owner(
    discord: RunningEmulator, people: People, home: Path, tmp_path: Path, command: str
) -> None:
    """One ``before-tool`` hook process, its card allowed by the owner."""
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "session_id": SESSION,
                "cwd": str(tmp_path),
                "tool_name": "run_shell_command",
                "tool_input": {"command": command},
            }
        ),
        encoding="utf-8",
    )
    with event.open("rb") as stdin:
        process = subprocess.Popen(
            [*HOOK, "before-tool", "--client", "gemini"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": os.environ["PATH"], **env_for(discord, home)},
        )
    try:

        def card() -> dict[str, Any] | None:
            for thread in people.threads():
                for message in people.messages(thread["id"]):
                    if (
                        command in message["content"]
                        and "**Approval needed**" in message["content"]
                        and message.get("reactions")
                    ):
                        return message
            return None

        found = wait_until(card, timeout=40, what="the card")
        people.react(found["channel_id"], found["id"], "✅")
        out, err = process.communicate(timeout=40)
    finally:
        process.kill()
        process.wait()
    assert json.loads(out) == {"decision": "allow"}, err


def test_a_hook_that_answered_leaves_no_lease_behind(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    answered_by_the_owner(discord, people, home, tmp_path, "touch one.txt")
    assert leases(home) == []


def test_hooks_leave_no_file_per_process(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    answered_by_the_owner(discord, people, home, tmp_path, "touch one.txt")
    after_one = per_process_files(home)
    answered_by_the_owner(discord, people, home, tmp_path, "touch two.txt")
    answered_by_the_owner(discord, people, home, tmp_path, "touch three.txt")
    assert per_process_files(home) == after_one


def test_a_hook_that_ran_out_of_time_leaves_no_lease_behind(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with hanging_discord() as api_base:
        run = run_hook(
            ["pre-tool-use", "--client", "codex", "--timeout", "10"],
            payload(tmp_path, ""),
            settings(home, api_base),
            within=10,
        )
    assert cli_reading("codex", "pre-tool-use", run).verdict == "block", run.describe()
    assert leases(home) == []


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    """A transcript path that is a FIFO nobody writes to (opening it for reading blocks)."""
    path = tmp_path / "transcript.jsonl"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("event", ["stop", "session-start"])
def test_the_session_hooks_do_not_hang_on_a_fifo_transcript(
    event: str, fifo: Path, tmp_path: Path
) -> None:
    env = settings(tmp_path / "home", closed_port_api())
    run = run_hook([event, "--client", "claude"], payload(tmp_path, str(fifo)), env, within=20)
    assert run.code == 0, run.describe()
    assert run.stdout == ""


@pytest.mark.parametrize("transcript", ["fifo", "/dev/zero"])
def test_the_permission_request_hook_does_not_hang_on_a_transcript_that_is_no_file(
    transcript: str, fifo: Path, tmp_path: Path
) -> None:
    path = str(fifo) if transcript == "fifo" else transcript
    env = settings(tmp_path / "home", closed_port_api(), CLAUDE_CODE_SESSION_ATTENDED="0")
    run = run_hook(
        ["permission-request", "--client", "claude"], payload(tmp_path, path), env, within=30
    )
    assert cli_reading("claude", "permission-request", run).verdict == "block", run.describe()


def test_the_stop_hook_reads_only_the_end_of_a_long_transcript(tmp_path: Path) -> None:
    from discord_mcp.hooks.sessions import TRANSCRIPT_TAIL, transcript_ids

    transcript = tmp_path / "long.jsonl"
    early, late = "20261123-120000-aaaaaa", "20261123-120001-bbbbbb"
    with transcript.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"result": f"decision {early}"}) + "\n")
        handle.write("x" * TRANSCRIPT_TAIL + "\n")
        handle.write(json.dumps({"result": f"decision {late}"}) + "\n")
    assert transcript_ids(str(transcript)) == {late}
