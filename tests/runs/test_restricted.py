"""A stranger's turn reads nothing of the owner's (issue 32): what each CLI is given. The real
CLIs are in tests/e2e/test_chat_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path

from discord_mcp.runs.adapters.gemini import GeminiAdapter
from discord_mcp.runs.restricted import CODEX_FEATURES_OFF, codex_args
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
