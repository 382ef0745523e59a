"""``discord-mcp hook ...``: the hooks the CLIs run to ask for a tool call, end to end.

Claude Code runs its ``PermissionRequest`` hook in headless mode too (when no permission-prompt
tool is given), so the real ``claude -p`` drives the hook here; the interactive-only behaviour
(the terminal answering first) is driven the way Claude Code drives it: the payload on stdin,
the session's transcript growing meanwhile.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.hooks import before_tool
from discord_mcp.setup.approvals import install_hook
from discord_mcp.setup.clients import Client
from tests.support.agent_clis import AgentCliFactory
from tests.support.model_server import ModelServer, ShellCall, quote_tool_result, wait_until
from tests.support.people import People
from tests.support.settings import env_for

pytestmark = pytest.mark.e2e

CARD_TIMEOUT = 40.0
HOOK = [sys.executable, "-m", "discord_mcp", "hook"]


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


def env_file(discord: RunningEmulator, home: Path, **extra: str) -> Path:
    """The private .env that ``setup`` would write, pointing at the emulator."""
    path = home.parent / "discord.env"
    home.mkdir(parents=True, exist_ok=True)
    lines = [f"{k}={v}" for k, v in env_for(discord, home, **extra).items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


def cards(people: People) -> list[dict[str, Any]]:
    return [
        message
        for thread in people.threads()
        for message in people.messages(thread["id"])
        if "**Approval needed**" in message["content"]
    ]


def claude_with_hook(
    agent_cli: AgentCliFactory, settings_file: Path, event: str, command: list[str]
) -> Any:
    settings = {
        "hooks": {
            event: [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": shlex.join(command), "timeout": 60}],
                }
            ]
        }
    }
    settings_file.write_text(json.dumps(settings), encoding="utf-8")
    return agent_cli("claude", [], extra_args=["--settings", str(settings_file)])


def test_claudes_permission_request_hook_asks_the_owner_and_runs_the_allowed_command(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    dotenv = env_file(discord, tmp_path / "home")
    command = [*HOOK, "permission-request", "--client", "claude", "--env-file", str(dotenv)]
    cli = claude_with_hook(agent_cli, tmp_path / "settings.json", "PermissionRequest", command)
    model_server.script(ShellCall("echo hooked > hooked.txt"), quote_tool_result())
    running = cli.start("Make the file.", timeout=90)

    [card] = running.wait_for(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
    assert "echo hooked > hooked.txt" in card["content"]
    assert "claude session" in card["content"]
    people.react(card["channel_id"], card["id"], "✅")
    result = running.wait()

    assert result.succeeded, result.describe()
    assert (cli.workdir / "hooked.txt").read_text(encoding="utf-8") == "hooked\n"


def test_a_denial_through_the_hook_reaches_the_model_as_the_reason(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    dotenv = env_file(discord, tmp_path / "home")
    command = [*HOOK, "permission-request", "--client", "claude", "--env-file", str(dotenv)]
    cli = claude_with_hook(agent_cli, tmp_path / "settings.json", "PermissionRequest", command)
    model_server.script(ShellCall("echo no > no.txt"), quote_tool_result())
    running = cli.start("Make the file.", timeout=90)

    [card] = running.wait_for(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
    people.say(card["channel_id"], "no, not in this directory")
    result = running.wait()

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "no.txt").exists()
    [told] = model_server.turn_requests()[-1].latest_tool_results()
    assert "not in this directory" in told.text


def run_hook(payload: dict[str, Any], *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """Start the hook as a CLI does: the event's JSON on stdin, stdout and stderr read after."""
    event = Path(env["DISCORD_MCP_ENV_FILE"] if "DISCORD_MCP_ENV_FILE" in env else env["HOME_DIR"])
    event = event.with_name("event.json")
    event.write_text(json.dumps(payload), encoding="utf-8")
    with event.open(encoding="utf-8") as stdin:
        return subprocess.Popen(
            [*HOOK, *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
        )


def payload(tmp_path: Path, transcript: Path, command: str) -> dict[str, Any]:
    return {
        "session_id": "5b0c7c1e-aaaa-4bbb-8ccc-000000000042",
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "build"},
    }


def hook_env(dotenv: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "DISCORD_MCP_ENV_FILE": str(dotenv), **extra}


def test_when_the_terminal_answers_first_the_card_says_so_and_the_hook_steps_aside(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    dotenv = env_file(discord, tmp_path / "home")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"type":"mode","mode":"normal"}\n', encoding="utf-8")
    process = run_hook(
        payload(tmp_path, transcript, "make build"),
        "permission-request",
        env=hook_env(dotenv, CLAUDE_CODE_SESSION_ATTENDED="1"),
    )
    try:
        [card] = wait_until(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
        # Claude Code records the call and, once the person answered at the terminal, its result.
        call = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "Bash",
            "input": {"command": "make build", "description": "build"},
        }
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
        with transcript.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"type": "assistant", "message": {"content": [call]}}) + "\n")
            handle.write(json.dumps({"type": "user", "message": {"content": [result]}}) + "\n")
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert out == ""  # no decision: the terminal's answer stands
    wait_until(
        lambda: (
            "Answered at the terminal (allowed)"
            in people.messages(card["channel_id"])[0]["content"]
        ),
        timeout=10,
        what="the card to say the terminal answered",
    )


@pytest.mark.parametrize(("attended", "decides"), [("0", True), ("1", False)])
def test_no_answer_in_time_tells_a_headless_session_and_leaves_a_terminal_to_ask(
    attended: str, decides: bool, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    dotenv = env_file(discord, tmp_path / "home")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("", encoding="utf-8")
    process = run_hook(
        payload(tmp_path, transcript, "make slow"),
        "permission-request",
        "--wait",
        "2",
        env=hook_env(dotenv, CLAUDE_CODE_SESSION_ATTENDED=attended),
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    if decides:
        decision = json.loads(out)["hookSpecificOutput"]["decision"]
        assert decision["behavior"] == "deny"
        assert "No one answered" in decision["message"]
        assert "not a refusal" in decision["message"]
    else:
        assert out == ""
    [card] = cards(people)
    assert "No one answered" in card["content"]


def test_a_hook_without_settings_blocks_the_call_and_says_what_is_missing(tmp_path: Path) -> None:
    process = run_hook(
        payload(tmp_path, tmp_path / "none.jsonl", "ls"),
        "permission-request",
        env={
            "PATH": "/usr/bin:/bin",
            "DISCORD_MCP_HOME": str(tmp_path / "h"),
            "HOME_DIR": str(tmp_path / "h"),
        },
    )
    out, err = process.communicate(timeout=30)
    assert process.returncode == 2  # headless: Claude Code denies the call
    denial = json.loads(out)["hookSpecificOutput"]["decision"]
    assert denial["behavior"] == "deny"
    assert "DISCORD_BOT_TOKEN is not set" in denial["message"]
    assert "DISCORD_BOT_TOKEN is not set" in err
    assert "Traceback" not in err


def gemini_with_hook(
    agent_cli: AgentCliFactory, dotenv: Path, *extra: str, wait: float = 600
) -> Any:
    """Gemini CLI with the BeforeTool hook, headless in yolo mode (which offers its shell)."""
    cli = agent_cli("gemini", [], extra_args=["--approval-mode", "yolo"])
    settings_path = cli.home / ".gemini" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    command = [*HOOK, "before-tool", "--env-file", str(dotenv), "--wait", f"{wait:g}", *extra]
    settings["hooks"] = {
        "BeforeTool": [
            {
                "matcher": before_tool.matcher(ask_all=False),
                "hooks": [
                    {
                        "type": "command",
                        "command": shlex.join(command),
                        "timeout": int((wait + 30) * 1000),
                    }
                ],
            }
        ]
    }
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    return cli


def test_geminis_before_tool_hook_asks_the_owner_who_allows_the_command(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    stranger = people.new_user("stranger")
    cli = gemini_with_hook(agent_cli, env_file(discord, tmp_path / "home"))
    model_server.script(ShellCall("echo gemini > gemini.txt"), quote_tool_result())
    running = cli.start("Make the file.", timeout=90)

    [card] = running.wait_for(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
    assert "echo gemini > gemini.txt" in card["content"]
    assert "gemini session" in card["content"]
    people.react(card["channel_id"], card["id"], "✅", user=stranger)
    wait_until(
        lambda: any("only" in m["content"] for m in people.messages(card["channel_id"])),
        timeout=20,
        what="the stranger's refusal",
    )
    assert running.running()
    people.react(card["channel_id"], card["id"], "✅")
    result = running.wait()

    assert result.succeeded, result.describe()
    assert (cli.workdir / "gemini.txt").read_text(encoding="utf-8") == "gemini\n"


def test_geminis_denied_or_unanswered_call_does_not_run_and_says_why(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    cli = gemini_with_hook(agent_cli, env_file(discord, tmp_path / "home"), wait=3)
    model_server.script(ShellCall("echo no > no.txt"), quote_tool_result())
    result = cli.run("Make the file.", timeout=90)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "no.txt").exists()
    [told] = model_server.turn_requests()[-1].latest_tool_results()
    assert "No one answered" in told.text
    assert "not a refusal" in told.text


def test_codexs_permission_request_hook_lets_the_owner_allow_leaving_the_sandbox(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    dotenv = env_file(discord, tmp_path / "home")
    command = shlex.join(
        [*HOOK, "permission-request", "--client", "codex", "--env-file", str(dotenv)]
    )
    handler = f'{{type="command", command={json.dumps(command)}, timeout=90}}'
    hooks = f"hooks.PermissionRequest=[{{hooks=[{handler}]}}]"
    cli = agent_cli(
        "codex",
        [],
        extra_args=["--approve-for-me", "--dangerously-bypass-hook-trust", "-c", hooks],
    )
    escalate = {"sandbox_permissions": "require_escalated", "justification": "write outside"}
    model_server.script(
        ShellCall("echo codex > codex.txt", codex_arguments=escalate), quote_tool_result()
    )
    running = cli.start("Make the file.", timeout=90)

    [card] = running.wait_for(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
    assert "echo codex > codex.txt" in card["content"]
    assert "write outside" in card["content"]  # the agent's reason, shown as its own words
    people.react(card["channel_id"], card["id"], "✅")
    result = running.wait()

    assert result.succeeded, result.describe()
    assert (cli.workdir / "codex.txt").read_text(encoding="utf-8") == "codex\n"


INSTALLED_ARGS: dict[str, list[str]] = {
    "claude": [],  # headless without a permission-prompt tool: the hook decides
    "codex": ["--approve-for-me", "--dangerously-bypass-hook-trust"],  # trusted in its TUI
    "gemini": ["--approval-mode", "yolo"],  # headless Gemini offers its shell only then
}


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_the_hook_that_install_approvals_writes_is_what_the_real_cli_runs(
    client: Client,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    dotenv = env_file(discord, tmp_path / "home")
    cli = agent_cli(client, [], extra_args=INSTALLED_ARGS[client])
    result = install_hook(
        client, "user", env_file=dotenv, home=cli.home, cwd=cli.workdir, environ=cli.env()
    )
    assert result.changed
    escalate = {"sandbox_permissions": "require_escalated", "justification": "installed"}
    model_server.script(
        ShellCall("echo installed > installed.txt", codex_arguments=escalate),
        quote_tool_result(),
    )
    running = cli.start("Make the file.", timeout=90)

    [card] = running.wait_for(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
    people.react(card["channel_id"], card["id"], "✅")
    outcome = running.wait()

    assert outcome.succeeded, outcome.describe()
    assert (cli.workdir / "installed.txt").read_text(encoding="utf-8") == "installed\n"
