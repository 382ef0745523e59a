"""Each adapter builds an argv list the real CLI accepts: session flags, the project's args, the
prompt passed safely, the discord MCP server registered, and no secret on the command line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import (
    InvocationRequest,
    McpRegistration,
    check_no_secrets_in_argv,
    summarize,
)
from discord_mcp.runs.adapters.codex_app import refusal
from discord_mcp.runs.adapters.gemini import HOME_VARIABLE as GEMINI_HOME
from discord_mcp.runs.adapters.gemini import real_gemini_dir
from discord_mcp.runs.journal.views import Tool

TOKEN = "bot-token-value-123456"
MCP = McpRegistration(
    argv=["/venv/bin/python", "-m", "discord_mcp"],
    env={"SERVICE_TOKEN": TOKEN, "DISCORD_CHANNEL_ID": "42"},
)
TRICKY_PROMPT = "--help; rm -rf / && echo $HOME 'quoted' \"double\"\nsecond line"


def request(
    tmp_path: Path,
    *,
    resume: str | None = None,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    prompt: str = TRICKY_PROMPT,
    mcp: McpRegistration | None = MCP,
) -> InvocationRequest:
    return InvocationRequest(
        executable="cli",
        prompt=prompt,
        resume_key=resume,
        default_args=args,
        job_dir=tmp_path,
        shared_dir=tmp_path / "shared",
        thread_id="1359000000000000000",
        env=env or {},
        mcp=mcp,
    )


def test_claude_new_session_argv(tmp_path: Path) -> None:
    invocation = adapter_for("claude").invocation(request(tmp_path, args=("--model", "opus")))
    config = tmp_path / "claude-mcp.json"
    assert invocation.argv == (
        "cli",
        "-p",
        "--verbose",
        "--output-format",
        "stream-json",
        "--mcp-config",
        str(config),
        "--allowedTools",
        "mcp__discord",
        "--model",
        "opus",
        "--",
        TRICKY_PROMPT,
    )
    assert "--strict-mcp-config" not in invocation.argv  # the user's own servers still load
    server = json.loads(invocation.files[config])["mcpServers"]["discord"]
    assert server == {
        "type": "stdio",
        "command": "/venv/bin/python",
        "args": ["-m", "discord_mcp"],
        "env": {
            "SERVICE_TOKEN": TOKEN,
            "DISCORD_CHANNEL_ID": "42",
            "DISCORD_THREAD_ID": "1359000000000000000",
        },
    }


def test_claude_resume_argv(tmp_path: Path) -> None:
    argv = adapter_for("claude").invocation(request(tmp_path, resume="sess-1", mcp=None)).argv
    assert argv == (
        "cli",
        "-p",
        "--verbose",
        "--output-format",
        "stream-json",
        "--resume",
        "sess-1",
        "--",
        TRICKY_PROMPT,
    )


def test_a_claude_job_that_may_be_steered_reads_its_prompt_from_stdin(tmp_path: Path) -> None:
    base = request(tmp_path, resume="sess-1", mcp=None, args=("--model", "opus"))
    invocation = adapter_for("claude").invocation(replace(base, steer=True))
    assert invocation.argv == (
        "cli",
        "-p",
        "--verbose",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--resume",
        "sess-1",
        "--model",
        "opus",
    )
    assert TRICKY_PROMPT not in " ".join(invocation.argv)
    assert invocation.input is not None
    assert invocation.input.endswith("\n")
    assert invocation.input.count("\n") == 1  # one line, whatever the prompt holds
    assert json.loads(invocation.input) == {
        "type": "user",
        "session_id": "",
        "message": {"role": "user", "content": [{"type": "text", "text": TRICKY_PROMPT}]},
        "parent_tool_use_id": None,
    }
    assert adapter_for("claude").steer_line("and also") == invocation.input.replace(
        json.dumps(TRICKY_PROMPT)[1:-1], "and also"
    )


def test_gemini_takes_no_message_mid_turn_headless(tmp_path: Path) -> None:
    invocation = adapter_for("gemini").invocation(replace(request(tmp_path), steer=True))
    assert invocation.input is None
    assert adapter_for("gemini").steer_line("and also") is None


def test_a_steering_codex_turn_runs_through_the_app_server_bridge(tmp_path: Path) -> None:
    """Issue 34: the prompt and later messages on the bridge's stdin, the sandbox kept (a turn
    whose calls need no owner's card: approvals off)."""
    asked = request(tmp_path, resume="thr-1", args=("-s", "workspace-write"))
    steering = replace(asked, steer=True, approvals="off")
    invocation = adapter_for("codex").invocation(steering)
    argv = list(invocation.argv)
    assert argv[1:3] == ["-m", "discord_mcp.runs.adapters.codex_bridge"]
    bridge = argv[: argv.index("--")]
    assert bridge[3:] == [
        "--resume",
        "thr-1",
        "--sandbox",
        "workspace-write",
        "--approval",
        "never",
    ]
    server = argv[argv.index("--") + 1 :]
    assert server[:2] == ["cli", "app-server"]
    assert "--approve-for-me" not in server
    assert "--dangerously-bypass-hook-trust" not in server
    assert TRICKY_PROMPT not in argv  # on stdin, not in argv
    assert json.loads(invocation.input or "")["text"] == TRICKY_PROMPT
    assert json.loads(adapter_for("codex").steer_line("and also") or "")["text"] == "and also"


@pytest.mark.parametrize("approvals", ["ask", "ask-all"])
def test_a_steering_codex_turn_whose_calls_go_to_the_owner_runs_its_hooks_in_app_server(
    tmp_path: Path, approvals: str
) -> None:
    """The same PreToolUse and PermissionRequest hooks as exec, on the server's argv; exec's
    --dangerously-bypass-hook-trust becomes the bridge's --trust-hooks (app-server ignores the
    setting as a -c), --approve-for-me its workspace-write sandbox and on-request policy."""
    steering = replace(request(tmp_path, resume="thr-1"), steer=True, approvals=approvals)
    invocation = adapter_for("codex").invocation(steering)
    argv = list(invocation.argv)
    bridge, server = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    assert bridge[1:3] == ["-m", "discord_mcp.runs.adapters.codex_bridge"]
    assert bridge[3:] == [
        "--resume", "thr-1", "--sandbox", "workspace-write", "--approval", "on-request",
        "--trust-hooks",
    ]  # fmt: skip
    assert server[:2] == ["cli", "app-server"]
    assert any(arg.startswith("hooks.PreToolUse=") for arg in server)
    assert any(arg.startswith("hooks.PermissionRequest=") for arg in server)
    assert not [arg for arg in server if arg.startswith("--")]  # exec's flags all translated
    assert json.loads(invocation.input or "")["text"] == TRICKY_PROMPT


def test_a_steering_codex_turn_in_its_own_sandbox_never_asks_the_client(tmp_path: Path) -> None:
    """A project that chose its sandbox gets no --approve-for-me from exec (nothing leaves the
    sandbox): through app-server its policy is never, and its hooks still run."""
    asked = request(tmp_path, args=("-s", "read-only"))
    invocation = adapter_for("codex").invocation(replace(asked, steer=True, approvals="ask"))
    argv = list(invocation.argv)
    bridge = argv[: argv.index("--")]
    assert bridge[3:] == ["--sandbox", "read-only", "--approval", "never", "--trust-hooks"]


def test_a_codex_option_app_server_lacks_keeps_codex_exec(tmp_path: Path) -> None:
    steering = replace(request(tmp_path, args=("--full-auto",)), steer=True)
    invocation = adapter_for("codex").invocation(steering)
    assert invocation.argv[1] == "exec"
    assert invocation.input is None


@pytest.mark.parametrize(
    "method",
    ["item/commandExecution/requestApproval", "item/fileChange/requestApproval",
     "execCommandApproval", "applyPatchApproval", "item/permissions/requestApproval",
     "item/tool/requestUserInput"],
)  # fmt: skip
def test_the_app_server_client_never_approves_what_codex_asks(method: str) -> None:
    answer = refusal({"id": 7, "method": method, "params": {}})
    assert answer["id"] == 7
    decision = json.dumps(answer.get("result"))
    assert "error" in answer or '"decline"' in decision or '"abort"' in decision
    assert "accept" not in decision
    assert "approved" not in decision


def test_codex_new_and_resume_argv_put_options_before_resume(tmp_path: Path) -> None:
    adapter = adapter_for("codex")
    new = adapter.invocation(request(tmp_path, args=("-s", "workspace-write")))
    resumed = adapter.invocation(request(tmp_path, resume="thr-1", args=("-s", "workspace-write")))
    overrides = [
        "-c",
        'mcp_servers.discord.command="/venv/bin/python"',
        "-c",
        'mcp_servers.discord.args=["-m", "discord_mcp"]',
        "-c",
        'mcp_servers.discord.default_tools_approval_mode="approve"',
        "-c",
        "mcp_servers.discord.required=true",
        "-c",
        'mcp_servers.discord.env_vars=["DISCORD_CHANNEL_ID", "DISCORD_THREAD_ID", "SERVICE_TOKEN"]',
    ]
    head = ["cli", "exec", "--json", "--skip-git-repo-check", *overrides, "-s", "workspace-write"]
    assert list(new.argv) == [*head, "--", TRICKY_PROMPT]
    assert list(resumed.argv) == [*head, "resume", "thr-1", "--", TRICKY_PROMPT]
    # The values travel in Codex's environment, which it passes on to the server by name.
    assert new.env == {
        "SERVICE_TOKEN": TOKEN,
        "DISCORD_CHANNEL_ID": "42",
        "DISCORD_THREAD_ID": "1359000000000000000",
    }
    assert not new.files


def test_gemini_argv_and_its_overlay_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    real = home / ".gemini"
    (real / "tmp").mkdir(parents=True)
    (real / "commands").mkdir()
    for name in ("oauth_creds.json", "projects.json", "projects.json.1234.tmp"):
        (real / name).write_text("{}", encoding="utf-8")
    (real / "settings.json").write_text(
        """{
  // the user's own settings, with comments
  "security": {"auth": {"selectedType": "oauth-personal"}},
  "mcpServers": {"other": {"command": "x", "url": "http://a/*not-a-comment*/"},},
}""",
        encoding="utf-8",
    )
    invocation = adapter_for("gemini").invocation(
        request(
            tmp_path,
            resume="g-1",
            args=("-m", "gemini-2.5-flash"),
            env={"HOME": str(home)},
        )
    )
    assert invocation.argv == (
        "cli",
        "--output-format",
        "stream-json",
        "--resume",
        "g-1",
        "-m",
        "gemini-2.5-flash",
        f"--prompt={TRICKY_PROMPT}",
    )
    overlay = tmp_path / "shared" / "gemini"
    # The overlay's settings are shared by every project: each run says how it approves.
    assert invocation.env == {
        GEMINI_HOME: str(overlay),
        "DISCORD_MCP_APPROVALS": "off",
        "DISCORD_MCP_CHAT_MARK": "",  # the shared settings name it as ${...}: a chat turn's own
    }
    # Shared with the user's own Gemini, except its project registry and sessions.
    assert invocation.links == {
        overlay / ".gemini" / "oauth_creds.json": real / "oauth_creds.json",
        overlay / ".gemini" / "commands": real / "commands",
    }
    settings = json.loads(invocation.files[overlay / ".gemini" / "settings.json"])
    assert settings["security"] == {"auth": {"selectedType": "oauth-personal"}}
    assert settings["mcpServers"]["other"] == {"command": "x", "url": "http://a/*not-a-comment*/"}
    discord = settings["mcpServers"]["discord"]
    assert discord["trust"] is True
    assert discord["command"] == "/venv/bin/python"
    # One file serves concurrent runs: Gemini expands the thread id from each run's env.
    assert discord["env"]["DISCORD_THREAD_ID"] == "${DISCORD_THREAD_ID}"
    assert discord["env"]["SERVICE_TOKEN"] == TOKEN


def test_gemini_with_unreadable_settings_keeps_them_and_goes_without_the_server(
    tmp_path: Path,
) -> None:
    real = tmp_path / "home" / ".gemini"
    real.mkdir(parents=True)
    (real / "settings.json").write_text("{ this is not json", encoding="utf-8")
    invocation = adapter_for("gemini").invocation(
        request(tmp_path, env={"HOME": str(tmp_path / "home")})
    )
    overlay = tmp_path / "shared" / "gemini" / ".gemini"
    assert invocation.links == {overlay / "settings.json": real / "settings.json"}
    assert not invocation.files


def test_gemini_honours_a_relocated_home(tmp_path: Path) -> None:
    assert real_gemini_dir({GEMINI_HOME: "/x", "HOME": "/y"}) == Path("/x/.gemini")
    assert real_gemini_dir({"HOME": "/y"}) == Path("/y/.gemini")


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
def test_no_secret_ever_reaches_the_command_line(tmp_path: Path, tool: Tool) -> None:
    invocation = adapter_for(tool).invocation(request(tmp_path))
    assert not any(TOKEN in part for part in invocation.argv)
    check_no_secrets_in_argv(invocation.argv, {**MCP.env, **invocation.env})


def test_the_bot_token_is_never_registered_for_a_runs_server() -> None:
    with pytest.raises(ValueError, match="DISCORD_MCP_ENV_FILE"):
        McpRegistration(argv=["python"], env={"DISCORD_BOT_TOKEN": TOKEN})


def test_a_secret_in_the_argv_is_refused() -> None:
    with pytest.raises(RunError) as caught:
        check_no_secrets_in_argv(["cli", f"--token={TOKEN}"], {"DISCORD_BOT_TOKEN": TOKEN})
    assert caught.value.code == "E_SECRET_IN_ARGV"
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
def test_without_a_registration_no_server_is_added(tmp_path: Path, tool: Tool) -> None:
    invocation = adapter_for(tool).invocation(request(tmp_path, mcp=None))
    assert not invocation.files
    assert not invocation.links
    assert not invocation.env
    assert not any("discord" in part for part in invocation.argv)


def test_tool_arguments_are_summarised_briefly() -> None:
    assert summarize({"command": "ls   -la\n/tmp"}) == "ls -la /tmp"
    assert summarize('{"file_path": "/a/b.py", "content": "x"}') == "/a/b.py"
    assert summarize({"zzz": 1}) == '{"zzz":1}'
    assert summarize(None) == ""
    assert len(summarize({"question": "x" * 500})) == 80
