"""The Claude Code plugin and the Gemini CLI extension at the repository's root are what
``install`` writes, started with ``uvx`` from the add-on's own copy, and hold no secret."""

from __future__ import annotations

import json

from discord_mcp.hooks.guard import FAIL_CLOSED
from discord_mcp.setup import approvals, bundles, session_hooks
from tests.support.packages import REPO_ROOT


def test_the_committed_plugin_and_extension_files_are_what_the_generator_makes() -> None:
    assert bundles.stale(REPO_ROOT) == [], (
        "run `.venv/bin/python -m discord_mcp.setup.bundles` and commit the files it rewrites"
    )


def test_the_plugins_hooks_are_installs_hooks_started_from_the_plugin() -> None:
    plugin = bundles.claude_plugin()
    prefix = ["uvx", "--from", "${CLAUDE_PLUGIN_ROOT}", "discord-mcp"]
    expected = approvals.desired_group("claude", None, prefix)
    [group] = plugin["hooks"]["PermissionRequest"]
    assert group["matcher"] == expected["matcher"]
    assert group["hooks"][0]["timeout"] == expected["hooks"][0]["timeout"] == approvals.TIMEOUT_S
    assert group["hooks"][0]["command"] == (
        'uvx --from "${CLAUDE_PLUGIN_ROOT}" discord-mcp hook permission-request --client claude '
        f"--wait {approvals.WAIT_S:g} --timeout {approvals.TIMEOUT_S:g}" + FAIL_CLOSED
    )
    [stop] = plugin["hooks"]["Stop"]
    assert stop["hooks"][0]["timeout"] == session_hooks.TIMEOUT_S
    assert stop["hooks"][0]["command"].endswith(
        f"discord-mcp hook stop --client claude --timeout {session_hooks.TIMEOUT_S}"
    )
    server = plugin["mcpServers"]["discord"]
    assert [server["command"], *server["args"]] == prefix


def test_the_extensions_hooks_are_installs_hooks_and_session_start_serves_both_clients() -> None:
    hooks = bundles.gemini_hooks()["hooks"]
    [before] = hooks["BeforeTool"]
    expected = approvals.desired_group("gemini", None, ["x"])
    assert before["matcher"] == expected["matcher"]
    assert before["hooks"][0]["timeout"] == expected["hooks"][0]["timeout"]
    assert before["hooks"][0]["name"] == approvals.HOOK_NAME
    [after] = hooks["AfterAgent"]
    assert after["hooks"][0]["command"].endswith(
        f"discord-mcp hook stop --client gemini --timeout {session_hooks.TIMEOUT_S}"
    )
    [start] = hooks["SessionStart"]
    command = start["hooks"][0]["command"]
    assert '"${CLAUDE_PLUGIN_ROOT}"' in command
    assert '"${extensionPath}"' in command
    tail = f"discord-mcp hook session-start --timeout {session_hooks.TIMEOUT_S}"
    assert command.endswith(f'uvx --from "${{c:-$g}}" {tail}')
    assert "SessionStart" not in bundles.claude_plugin()["hooks"]  # Claude Code reads this one
    extension = bundles.gemini_extension()
    server = extension["mcpServers"]["discord"]
    assert [server["command"], *server["args"]] == [
        "uvx",
        "--from",
        "${extensionPath}",
        "discord-mcp",
    ]
    assert server["trust"] is True
    assert (REPO_ROOT / extension["contextFileName"]).is_file()


def test_no_add_on_file_names_a_token_or_an_env_file() -> None:
    for name in bundles.FILES:
        text = (REPO_ROOT / name).read_text(encoding="utf-8")
        assert "DISCORD_BOT_TOKEN" not in text
        assert "--env-file" not in text
        assert "DISCORD_MCP_ENV_FILE" not in text


def test_every_skill_folder_is_in_the_plugin() -> None:
    plugin = json.loads((REPO_ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    skills = REPO_ROOT / plugin["skills"]
    found = sorted(p.parent.name for p in skills.glob("*/SKILL.md"))
    assert "discord-decisions" in found  # a new skill is one more folder here, nothing else
