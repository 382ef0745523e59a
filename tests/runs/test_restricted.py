"""A stranger's turn reads nothing of the owner's (issue 32): what each CLI is given. The real
CLIs are in tests/e2e/test_chat_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.claude import ClaudeAdapter
from discord_mcp.runs.adapters.gemini import GeminiAdapter
from discord_mcp.runs.restricted import CODEX_FEATURES_OFF, check_gemini_policies, codex_args
from tests.runs.test_offline import request


def test_a_strangers_codex_turn_has_no_image_viewer() -> None:
    """Codex's own process runs view_image, outside its sandbox: it read any path."""
    args = codex_args()
    assert "view_image" in CODEX_FEATURES_OFF
    assert args[args.index("view_image") - 1] == "--disable"


def test_a_strangers_gemini_turn_reads_no_memory_file_of_the_owners(tmp_path: Path) -> None:
    """Not the owner's ~/.gemini/GEMINI.md (linked or not), nor such files in the folders above:
    the turn's memory file name is one no one wrote."""
    real = tmp_path / "home" / ".gemini"
    real.mkdir(parents=True)
    (real / "GEMINI.md").write_text("the owner's notes", encoding="utf-8")
    (real / "settings.json").write_text(
        json.dumps(
            {"context": {"fileName": ["GEMINI.md", "AGENTS.md"], "includeDirectories": ["/x"]}}
        ),
        encoding="utf-8",
    )
    invocation = GeminiAdapter().invocation(
        request(tmp_path, "gemini", restricted=True, allow_network=True, jail=None)
    )
    home = tmp_path / "shared" / "gemini-restricted" / ".gemini"
    settings = json.loads(invocation.files[home / "settings.json"])
    assert settings["context"]["fileName"] == "DISCORD-MCP-NO-MEMORY.md"
    assert "includeDirectories" not in settings["context"]
    assert home / "GEMINI.md" not in invocation.links


def test_a_strangers_claude_turn_has_only_our_chat_tools_and_asks_nothing(
    tmp_path: Path,
) -> None:
    """No MCP server but ours (``--strict-mcp-config``: the user's and the project's servers
    are not loaded), no built-in tool, only the three chat tools allowed, and every other tool
    denied without asking (``--permission-mode dontAsk``, no permission prompt tool); the
    project's own arguments cannot undo it."""
    invocation = ClaudeAdapter().invocation(
        request(
            tmp_path,
            "claude",
            restricted=True,
            allow_network=True,
            jail=None,
            default_args=("--permission-mode", "bypassPermissions", "--mcp-config", "/x.json"),
        )
    )
    argv = list(invocation.argv)
    assert "--strict-mcp-config" in argv
    assert argv.count("--mcp-config") == 1
    assert argv[argv.index("--tools") + 1] == ""
    assert argv.count("--permission-mode") == 1
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert "--permission-prompt-tool" not in argv
    allowed = argv[argv.index("--allowedTools") + 1 :][:3]
    assert allowed == [
        f"mcp__discord__{name}" for name in ("send_message", "add_reaction", "read_history")
    ]


def test_a_strangers_gemini_turn_is_refused_when_system_policies_would_replace_ours(
    tmp_path: Path,
) -> None:
    """Gemini CLI ignores ``--admin-policy`` when its system policy directory holds policy
    files: the turn is refused rather than run open."""
    policies = tmp_path / "policies"
    policies.mkdir()
    check_gemini_policies(policies)  # an empty directory changes nothing
    (policies / "README.md").write_text("not a policy", encoding="utf-8")
    check_gemini_policies(policies)
    (policies / "site.toml").write_text('[[rule]]\ntoolName = "*"\n', encoding="utf-8")
    with pytest.raises(RunError) as refused:
        check_gemini_policies(policies)
    assert refused.value.code == "E_RESTRICTED_NOT_ENFORCEABLE"
    assert "site.toml" in str(refused.value)


def test_a_strangers_gemini_turn_runs_none_of_the_users_hooks_or_mcp_servers(
    tmp_path: Path,
) -> None:
    real = tmp_path / "home" / ".gemini"
    real.mkdir(parents=True)
    (real / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "evil"}]}]},
                "mcpServers": {"github": {"command": "gh-mcp"}},
                "mcp": {"allowed": ["github"]},
                "ui": {"theme": "dark"},
            }
        ),
        encoding="utf-8",
    )
    invocation = GeminiAdapter().invocation(
        request(tmp_path, "gemini", restricted=True, allow_network=True, jail=None)
    )
    home = tmp_path / "shared" / "gemini-restricted" / ".gemini"
    settings = json.loads(invocation.files[home / "settings.json"])
    assert "hooks" not in settings
    assert "mcp" not in settings
    assert list(settings["mcpServers"]) == ["discord"]
    assert settings["ui"] == {"theme": "dark"}  # the rest of the user's settings are kept
