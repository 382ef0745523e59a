"""Every guard hook blocks on any failure, in the form its CLI honours, before the CLI's timeout.

The guard hooks stand between an agent and a tool call: ``before-tool`` (Gemini CLI),
``pre-tool-use`` and ``permission-request`` (Codex), ``permission-request`` (Claude Code) and
Claude's ``pre-tool-use`` (``ask-all``). Each case runs the real hook process and reads its
answer as the CLI does (tests/support/hook_runs.py): Discord unreachable, refusing the token,
forbidding the channel, rate limiting past the wait or hanging; a state directory that cannot be
written; settings missing or invalid; an event that cannot be read; an exception nobody
expected. The call never runs, and the agent is told why in a sentence that carries no token
and no traceback. The one exception is Claude Code's ``permission-request`` in an attended
session: it gives no decision, so the terminal's own dialog (already on screen) asks.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.watch.run_desk import calls_not_run
from tests.support.hook_runs import HookRun, Reading, cli_reading, run_hook
from tests.support.people import People
from tests.support.settings import env_for

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhOoKs.never-printed-anywhere-at-all-0123456"

GUARDS = [
    pytest.param("before-tool", "gemini", id="gemini-before-tool"),
    pytest.param("pre-tool-use", "codex", id="codex-pre-tool-use"),
    pytest.param("permission-request", "codex", id="codex-permission-request"),
    pytest.param("permission-request", "claude", id="claude-permission-request-headless"),
]
ALL_GUARDS = [*GUARDS, pytest.param("pre-tool-use", "claude", id="claude-pre-tool-use-ask-all")]
TOOLS = {"gemini": "run_shell_command", "codex": "Bash", "claude": "Bash"}


def event(client: str, tmp_path: Path, **changes: Any) -> dict[str, Any]:
    payload = {
        "session_id": "5b0c7c1e-aaaa-4bbb-8ccc-000000000042",
        "cwd": str(tmp_path),
        "hook_event_name": "BeforeTool",
        "tool_name": TOOLS[client],
        "tool_input": {"command": "touch would-run.txt"},
    }
    return {**payload, **changes}


def args(hook: str, client: str, *extra: str) -> list[str]:
    return [hook, "--client", client, *extra]


def settings(home: Path, api_base: str, **extra: str) -> dict[str, str]:
    return {
        "DISCORD_BOT_TOKEN": TOKEN,
        "DISCORD_CHANNEL_ID": "100000000000000001",
        "DISCORD_OWNER_IDS": "100000000000000009",
        "DISCORD_API_BASE": api_base,
        "DISCORD_MCP_HOME": str(home),
        "POLL_INTERVAL_SECONDS": "0.1",
        "PROJECT_NAME": "proj",
        **extra,
    }


def closed_port_api() -> str:
    """The address of a Discord that is not there (a port nobody listens on)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/v10"


@contextlib.contextmanager
def hanging_discord() -> Iterator[str]:
    """A Discord that accepts connections and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)  # connections complete in the kernel's backlog; nobody reads them
        yield f"http://127.0.0.1:{server.getsockname()[1]}/api/v10"


def blocked(hook: str, client: str, run: HookRun) -> Reading:
    """The CLI's reading of ``run``, asserted to be a block with a plain sentence."""
    reading = cli_reading(client, hook, run)
    assert reading.verdict == "block", run.describe()
    assert reading.reason.strip(), run.describe()
    clean(run)
    return reading


def clean(run: HookRun) -> None:
    """Nothing the hook printed carries the token or a traceback."""
    printed = run.stdout + run.stderr
    assert TOKEN not in printed, run.describe()
    assert "Traceback" not in printed, run.describe()


# ---- Discord cannot be asked ---------------------------------------------------------------


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_with_discord_unreachable_the_call_is_blocked_and_the_agent_told_why(
    hook: str, client: str, tmp_path: Path
) -> None:
    run = run_hook(
        args(hook, client, "--timeout", "60"),
        event(client, tmp_path),
        settings(tmp_path / "home", closed_port_api()),
        within=60,
    )
    reason = blocked(hook, client, run).reason
    assert "owner could not be asked" in reason
    assert "Discord is unreachable" in reason


def test_an_attended_claude_session_keeps_its_terminal_dialog_when_discord_is_unreachable(
    tmp_path: Path,
) -> None:
    run = run_hook(
        args("permission-request", "claude"),
        event("claude", tmp_path),
        settings(tmp_path / "home", closed_port_api(), CLAUDE_CODE_SESSION_ATTENDED="1"),
        within=60,
    )
    assert run.code == 0, run.describe()
    assert cli_reading("claude", "permission-request", run).verdict == "none"
    clean(run)


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_refused_token_blocks_the_call(
    hook: str, client: str, discord: RunningEmulator, tmp_path: Path
) -> None:
    run = run_hook(
        args(hook, client),
        event(client, tmp_path),
        settings(tmp_path / "home", discord.api_base),  # not the emulator's token
        within=60,
    )
    assert "rejected the bot token" in blocked(hook, client, run).reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_forbidden_channel_blocks_the_call(
    hook: str, client: str, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    people.fault(route="POST /channels/{channel_id}/threads", status=403, count=10)
    run = run_hook(
        args(hook, client),
        event(client, tmp_path),
        env_for(discord, tmp_path / "home", DISCORD_BOT_TOKEN=discord.token),
        within=60,
    )
    reading = cli_reading(client, hook, run)
    assert reading.verdict == "block", run.describe()
    assert "HTTP 403" in reading.reason
    assert discord.token not in run.stdout + run.stderr


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_rate_limit_longer_than_the_wait_blocks_the_call(
    hook: str, client: str, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    people.fault(
        route="POST /channels/{channel_id}/threads", status=429, retry_after=3600, count=10
    )
    run = run_hook(
        args(hook, client),
        event(client, tmp_path),
        env_for(discord, tmp_path / "home"),
        within=60,
    )
    reading = cli_reading(client, hook, run)
    assert reading.verdict == "block", run.describe()
    assert "rate limit" in reading.reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_rate_limited_thread_still_gets_an_answer_before_the_clis_timeout(
    hook: str, client: str, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    # Within the REST client's own wait (30 s), but past what this hook's timeout allows.
    people.fault(route="POST /channels/{channel_id}/threads", status=429, retry_after=25, count=1)
    run = run_hook(
        args(hook, client, "--timeout", "12"),
        event(client, tmp_path),
        env_for(discord, tmp_path / "home"),
        within=12,
    )
    reading = cli_reading(client, hook, run)
    assert reading.verdict == "block", run.describe()
    assert "in time" in reading.reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_discord_that_hangs_still_gets_an_answer_before_the_clis_timeout(
    hook: str, client: str, tmp_path: Path
) -> None:
    with hanging_discord() as api_base:
        run = run_hook(
            args(hook, client, "--timeout", "12"),
            event(client, tmp_path),
            settings(tmp_path / "home", api_base),
            within=12,
        )
    assert "in time" in blocked(hook, client, run).reason


def test_without_a_timeout_option_gemini_gets_its_answer_within_its_default_of_60s(
    tmp_path: Path,
) -> None:
    with hanging_discord() as api_base:
        run = run_hook(
            args("before-tool", "gemini", "--wait", "600"),
            event("gemini", tmp_path),
            settings(tmp_path / "home", api_base),
            within=60,
        )
    blocked("before-tool", "gemini", run)


# ---- the state directory ---------------------------------------------------------------------


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_state_directory_that_cannot_be_created_blocks_the_call(
    hook: str, client: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the state directory should be", encoding="utf-8")
    run = run_hook(
        args(hook, client), event(client, tmp_path), settings(home, closed_port_api()), within=60
    )
    assert "state directory" in blocked(hook, client, run).reason


def _no_file_may_grow() -> None:
    """As on a full disk: every write that adds a byte to a file fails (EFBIG, not a signal)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_state_directory_that_refuses_writes_blocks_the_call(
    hook: str, client: str, discord: RunningEmulator, tmp_path: Path
) -> None:
    run = run_hook(
        args(hook, client),
        event(client, tmp_path),
        env_for(discord, tmp_path / "home"),
        within=60,
        preexec=_no_file_may_grow,
    )
    reading = cli_reading(client, hook, run)
    assert reading.verdict == "block", run.describe()
    assert "state directory" in reading.reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_corrupt_state_directory_blocks_the_call(hook: str, client: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "decisions").write_text("not a directory", encoding="utf-8")
    (home / "leases").write_bytes(b"\x00garbage")
    run = run_hook(
        args(hook, client), event(client, tmp_path), settings(home, closed_port_api()), within=60
    )
    assert "state directory" in blocked(hook, client, run).reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_a_corrupt_decision_file_never_reads_as_an_allow(
    hook: str, client: str, tmp_path: Path
) -> None:
    decisions = tmp_path / "home" / "decisions"
    decisions.mkdir(parents=True)
    (decisions / "20261123-120000-abcdef.json").write_text(
        '{"version": 1, "status": "answ', encoding="utf-8"
    )
    run = run_hook(
        args(hook, client),
        event(client, tmp_path),
        settings(tmp_path / "home", closed_port_api()),
        within=60,
    )
    blocked(hook, client, run)


# ---- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_missing_settings_block_the_call_and_name_what_is_missing(
    hook: str, client: str, tmp_path: Path
) -> None:
    run = run_hook(
        args(hook, client),
        event(client, tmp_path),
        {"DISCORD_MCP_HOME": str(tmp_path / "home")},
        within=60,
    )
    assert "DISCORD_BOT_TOKEN is not set" in blocked(hook, client, run).reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_invalid_settings_block_the_call(hook: str, client: str, tmp_path: Path) -> None:
    env = settings(tmp_path / "home", closed_port_api(), DISCORD_CHANNEL_ID="general")
    run = run_hook(args(hook, client), event(client, tmp_path), env, within=60)
    assert "DISCORD_CHANNEL_ID" in blocked(hook, client, run).reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_an_env_file_that_is_missing_blocks_the_call(
    hook: str, client: str, tmp_path: Path
) -> None:
    missing = tmp_path / "gone.env"
    run = run_hook(
        args(hook, client, "--env-file", str(missing)),
        event(client, tmp_path),
        {"DISCORD_MCP_HOME": str(tmp_path / "home")},
        within=60,
    )
    assert "--env-file" in blocked(hook, client, run).reason


@pytest.mark.parametrize(("hook", "client"), GUARDS)
def test_an_unexpected_exception_blocks_the_call_without_a_traceback(
    hook: str, client: str, tmp_path: Path
) -> None:
    env_file = tmp_path / "broken.env"
    env_file.write_bytes(f"DISCORD_BOT_TOKEN={TOKEN}\nPROJECT_NAME=\xff\xfe\n".encode("latin-1"))
    run = run_hook(
        args(hook, client, "--env-file", str(env_file)),
        event(client, tmp_path),
        {"DISCORD_MCP_HOME": str(tmp_path / "home")},
        within=60,
    )
    assert "unexpected" in blocked(hook, client, run).reason


# ---- the event ----------------------------------------------------------------------------


MALFORMED = [
    pytest.param(b"this is not JSON", "not JSON", id="not-json"),
    pytest.param(b"", "not JSON", id="empty"),
    pytest.param(b'["Bash", {"command": "ls"}]', "not a JSON object", id="not-an-object"),
    pytest.param(b'{"tool_input": {"command": "ls"}}', "tool_name", id="no-tool-name"),
    pytest.param(b'{"tool_name": 7, "tool_input": {}}', "tool_name", id="tool-name-not-text"),
    pytest.param(b'{"tool_name": "Bash", "tool_input": "ls"}', "tool_input", id="input-not-object"),
]


@pytest.mark.parametrize(("hook", "client"), ALL_GUARDS)
@pytest.mark.parametrize(("stdin", "named"), MALFORMED)
def test_an_event_that_cannot_be_read_blocks_the_call(
    hook: str, client: str, stdin: bytes, named: str, tmp_path: Path
) -> None:
    env = settings(tmp_path / "home", closed_port_api())
    run = run_hook(args(hook, client), stdin, env, within=60)
    reason = blocked(hook, client, run).reason
    assert named in reason
    assert "could not read" in reason


def test_claudes_ask_all_hook_still_asks_for_a_well_formed_call(tmp_path: Path) -> None:
    claude_args = args("pre-tool-use", "claude", "--ask-all")
    run = run_hook(claude_args, event("claude", tmp_path), {}, within=60)
    assert cli_reading("claude", "pre-tool-use", run).verdict == "ask", run.describe()


def test_an_invalid_command_line_blocks_the_call(tmp_path: Path) -> None:
    env = settings(tmp_path / "home", closed_port_api())
    run = run_hook(
        ["before-tool", "--client", "gemini", "--wait", "soon"], event("gemini", tmp_path), env,
        within=60,
    )  # fmt: skip
    assert "--wait" in blocked("before-tool", "gemini", run).reason


def test_the_reason_is_one_line_an_agent_can_read(tmp_path: Path) -> None:
    run = run_hook(
        args("pre-tool-use", "codex"),
        event("codex", tmp_path),
        settings(tmp_path / "home", closed_port_api()),
        within=60,
    )
    reason = blocked("pre-tool-use", "codex", run).reason
    assert "\n" not in reason
    assert reason.endswith(".")
    assert json.dumps(reason)  # printable as it is


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_any_yes_spelling_of_discord_mcp_run_means_no_one_is_at_a_terminal(value: str) -> None:
    from discord_mcp.hooks.permission_request import attended

    assert not attended("codex", {"DISCORD_MCP_RUN": value})
    assert attended("codex", {})


def test_a_bad_discord_mcp_run_is_an_error_not_an_attended_session() -> None:
    from discord_mcp.errors import ConfigError
    from discord_mcp.hooks.permission_request import attended

    with pytest.raises(ConfigError, match="DISCORD_MCP_RUN"):
        attended("codex", {"DISCORD_MCP_RUN": "maybe"})


def test_a_bad_discord_mcp_run_blocks_the_call_through_the_command_line(tmp_path: Path) -> None:
    payload = {
        "session_id": "s",
        "cwd": str(tmp_path),
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "touch x"},
    }
    done = subprocess.run(
        [sys.executable, "-m", "discord_mcp", "hook", "permission-request", "--client", "codex"],
        input=json.dumps(payload),
        capture_output=True,
        encoding="utf-8",
        text=True,
        env={**os.environ, "DISCORD_MCP_RUN": "maybe", "DISCORD_BOT_TOKEN": "x"},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["decision"]["behavior"] == "deny"


@pytest.mark.parametrize(("hook", "client"), GUARDS[:2])
def test_a_call_blocked_because_discord_is_down_is_listed_among_the_runs_calls_not_run(
    hook: str, client: str, tmp_path: Path
) -> None:
    """A run's result lists it (``calls_not_run``), though no card and no decision exist."""
    home = tmp_path / "home"
    thread = "100000000000000077"
    started = dt.datetime.now(dt.UTC)
    run = run_hook(
        args(hook, client, "--timeout", "60"),
        event(client, tmp_path),
        settings(home, closed_port_api(), DISCORD_THREAD_ID=thread),
        within=60,
    )
    blocked(hook, client, run)
    ended = dt.datetime.now(dt.UTC)
    store = DecisionStore(home)
    assert store.open_decisions() == []  # the owner was never asked: no decision holds it
    listed = calls_not_run(store)(thread, started, ended)
    assert listed == [
        {
            "tool": TOOLS[client],
            "detail": "touch would-run.txt",
            "why": "the owner could not be asked: Discord was unreachable",
        }
    ]
    assert calls_not_run(store)("100000000000000078", started, ended) == []  # another thread
    later = ended + dt.timedelta(minutes=1)
    assert calls_not_run(store)(thread, later, None) == []  # a later turn
