"""An approval card for a file edit shows a unified diff, not the tool's raw input (issue 35):
Claude Code's Edit / Write / MultiEdit, Gemini CLI's replace / write_file, Codex's apply_patch
(its own patch language, applied to the file on disk) and an ACP agent's edit tool calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from discord_mcp.approvals.acp import tool_request
from discord_mcp.approvals.cards import render_card
from discord_mcp.approvals.request import ToolRequest, describe
from discord_mcp.runs.contract import FileDiff, PermissionAsk, PermissionOption
from tests.approvals.test_cards import approval

OPTIONS = (
    PermissionOption("allow", "Allow", "allow_once"),
    PermissionOption("no", "No", "reject_once"),
)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("def greet():\n    return 'hi'\n\n\nx = 1\n", encoding="utf-8")
    return tmp_path


def card_of(request: ToolRequest) -> str:
    """The approval card as the owner sees it for ``request``."""
    return render_card(approval(request), ["1"], buttons=True)


def assert_a_diff(card: str, *, removed: str | None, added: str) -> None:
    assert "```diff" in card
    assert "```json" not in card  # never the raw input
    if removed is not None:
        assert f"-{removed}" in card
    assert f"+{added}" in card


@pytest.mark.parametrize(
    ("client", "tool", "arguments"),
    [
        ("claude", "Edit", {"old_string": "'hi'", "new_string": "'hello'"}),
        ("gemini", "replace", {"old_string": "'hi'", "new_string": "'hello'"}),
        ("claude", "MultiEdit", {"edits": [{"old_string": "'hi'", "new_string": "'hello'"}]}),
    ],
)
def test_an_edit_shows_the_lines_it_changes(
    client: str, tool: str, arguments: dict[str, Any], app: Path
) -> None:
    request = ToolRequest(client, tool, {"file_path": "app.py", **arguments}, "s", cwd=str(app))

    card = card_of(request)

    assert_a_diff(card, removed="    return 'hi'", added="    return 'hello'")
    assert " def greet():" in card


@pytest.mark.parametrize(("client", "tool"), [("claude", "Write"), ("gemini", "write_file")])
def test_a_write_over_a_file_shows_what_it_replaces(client: str, tool: str, app: Path) -> None:
    content = "def greet():\n    return 'hey'\n"
    request = ToolRequest(client, tool, {"file_path": str(app / "app.py"), "content": content}, "s")

    assert_a_diff(card_of(request), removed="x = 1", added="    return 'hey'")


def test_a_codex_patch_is_applied_to_the_file_and_shown_with_line_numbers(app: Path) -> None:
    patch = (
        "*** Begin Patch\n"
        "*** Update File: app.py\n"
        "@@ def greet():\n"
        "-    return 'hi'\n"
        "+    return 'hello'\n"
        "*** End Patch\n"
    )
    request = ToolRequest("codex", "apply_patch", {"command": patch}, "s", cwd=str(app))

    action = describe(request)
    card = card_of(request)

    assert action.diff is not None
    assert "--- a/app.py" in action.diff
    assert "+++ b/app.py" in action.diff
    assert "@@ -1,4 +1,4 @@" in action.diff  # two lines of context, as every card
    assert "*** Begin Patch" not in action.diff
    assert_a_diff(card, removed="    return 'hi'", added="    return 'hello'")


def test_a_codex_patch_that_adds_deletes_and_moves_files(app: Path) -> None:
    (app / "old.txt").write_text("gone\n", encoding="utf-8")
    patch = (
        "*** Begin Patch\n"
        "*** Add File: new.txt\n"
        "+fresh\n"
        "*** Delete File: old.txt\n"
        "*** Update File: app.py\n"
        "*** Move to: lib/app.py\n"
        "@@\n"
        " x = 1\n"
        "+y = 2\n"
        "*** End Patch"
    )

    action = describe(ToolRequest("codex", "apply_patch", {"input": patch}, "s", cwd=str(app)))

    assert action.diff is not None
    assert "--- /dev/null\n+++ b/new.txt" in action.diff
    assert "+fresh" in action.diff
    assert "--- a/old.txt\n+++ /dev/null" in action.diff
    assert "-gone" in action.diff
    assert "+++ b/lib/app.py" in action.diff
    assert "+y = 2" in action.diff
    assert action.risks == ("deletes a file",)


def test_a_codex_patch_that_does_not_fit_the_file_is_shown_as_written_and_says_so(
    app: Path,
) -> None:
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-not in the file\n+new\n*** End Patch\n"

    action = describe(ToolRequest("codex", "apply_patch", {"command": patch}, "s", cwd=str(app)))

    assert action.diff is not None
    assert action.diff.startswith("# the patch could not be read against the files")
    assert "-not in the file" in action.diff


def ask(**fields: Any) -> PermissionAsk:
    base: dict[str, Any] = {
        "thread_id": "t",
        "job_id": "job_1",
        "project_name": "app",
        "agent": "claude-acp",
        "session_id": "s",
        "cwd": "",
        "title": "Edit app.py",
        "kind": "edit",
        "raw_input": {},
        "options": OPTIONS,
    }
    return PermissionAsk(**{**base, **fields})


def test_an_acp_edit_shows_the_diff_the_agent_sent_with_it(app: Path) -> None:
    request = tool_request(
        ask(
            cwd=str(app),
            raw_input={"file_path": str(app / "app.py")},
            diffs=(FileDiff(str(app / "app.py"), "    return 'hi'\n", "    return 'hello'\n"),),
        )
    )

    action = describe(request)

    assert action.title == "Edit a file"
    assert action.path == str(app / "app.py")
    assert_a_diff(card_of(request), removed="    return 'hi'", added="    return 'hello'")


def test_an_acp_edit_of_a_new_file_is_all_additions() -> None:
    request = tool_request(
        ask(title="Write notes.md", diffs=(FileDiff("notes.md", None, "# n\n"),))
    )

    action = describe(request)

    assert action.title == "Create a file"
    assert action.diff is not None
    assert "--- /dev/null" in action.diff
    assert "+# n" in action.diff


def test_an_acp_edit_without_diff_items_is_read_from_its_raw_input(app: Path) -> None:
    request = tool_request(
        ask(
            cwd=str(app),
            raw_input={"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2"},
        )
    )

    assert_a_diff(card_of(request), removed="x = 1", added="x = 2")


def test_an_acp_tool_call_that_is_no_edit_still_shows_its_input() -> None:
    request = tool_request(ask(kind="fetch", title="Fetch a page", raw_input={"url": "https://x"}))

    action = describe(request)

    assert action.diff is None
    assert action.detail is not None
    assert "https://x" in action.detail
