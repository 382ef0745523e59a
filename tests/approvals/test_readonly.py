"""Which commands only read (Codex runs with approvals ``ask`` let those through unasked)."""

from __future__ import annotations

import pytest

from discord_mcp.approvals.readonly import is_read_only
from discord_mcp.hooks.pre_tool_use import handle
from discord_mcp.hooks.runner import HookOptions


@pytest.mark.parametrize(
    "command",
    ["ls -la", "cat README.md", "git status", "git log --oneline -5", "grep -rn TODO src",
     "find . -name '*.py'", "rg foo", "git diff HEAD~1", "/bin/ls"],
)  # fmt: skip
def test_plain_reads_run_without_asking(command: str) -> None:
    assert is_read_only(command)


@pytest.mark.parametrize(
    "command",
    ["echo hi > x.txt", "cat a | sh", "ls; rm -rf /", "find . -delete", "sed -i s/a/b/ f",
     "git push", "git branch new-feature", "git commit -m x", "rm x", "make", "python x.py",
     "env rm x", "ls $(rm x)", "touch x", "sort -o out in", "'unterminated"],
)  # fmt: skip
def test_anything_that_may_write_or_execute_asks(command: str) -> None:
    assert not is_read_only(command)


def options(ask_all: bool = False) -> HookOptions:
    return HookOptions("pre-tool-use", "codex", None, None, ask_all)


def test_codexs_pre_tool_use_hook_lets_reads_and_its_own_tools_through_at_once() -> None:
    read = {"tool_name": "Bash", "tool_input": {"command": "git status"}}
    assert handle(read, options(), {}) is None
    own = {"tool_name": "mcp__discord__ask_decision", "tool_input": {}}
    assert handle(own, options(ask_all=True), {}) is None
    write = {"tool_name": "Bash", "tool_input": {"command": "touch x"}}
    assert handle(write, options(), {"DISCORD_MCP_APPROVALS": "off"}) is None


def test_claudes_pre_tool_use_hook_turns_every_call_into_a_question() -> None:
    claude = HookOptions("pre-tool-use", "claude", None, None, True)
    answer = handle({"tool_name": "Read", "tool_input": {}}, claude, {})
    assert answer is not None
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"
