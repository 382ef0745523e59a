"""Answers an approval request may already have (discord_mcp/approvals/rules.py): each is used
by one call only, however many find it at once."""

from __future__ import annotations

from pathlib import Path

from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.rules import precedent, use
from discord_mcp.decisions.store import DecisionStore
from tests.decisions.test_store import make_decision


def bash(command: str, call: str | None = None) -> ToolRequest:
    return ToolRequest("claude", "Bash", {"command": command}, "sess-1", cwd="/w", tool_use_id=call)


def test_a_late_allow_runs_one_of_two_identical_calls_that_find_it_at_once(
    tmp_path: Path,
) -> None:
    """An Allow given after its agent stopped waiting lets the next identical request run
    once: of two retries that both find it before either has used it, one runs, the other
    asks."""
    store = DecisionStore(tmp_path)
    request = bash("make release")
    store.create(
        make_decision(
            kind="approval",
            approval=request.to_json(),
            status="answered",
            answer="allow",
            gave_up_at="2026-11-22T16:05:00.000+00:00",
        )
    )
    one, other = bash("make release", "call-1"), bash("make release", "call-2")
    first, second = precedent(store, one), precedent(store, other)
    assert first is not None
    assert second is not None
    assert (first.how, second.how) == ("late", "late")
    assert use(store, first, one) is True
    assert use(store, second, other) is False
    assert precedent(store, bash("make release", "call-3")) is None  # used up: the next asks
