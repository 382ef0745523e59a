"""A blocking call returns before the client would kill or background it."""

from __future__ import annotations

import pytest

from discord_mcp.server.limits import (
    CLAUDE_CODE_NO_BACKGROUND_S,
    CLAUDE_CODE_S,
    CODEX_S,
    GEMINI_S,
    UNKNOWN_S,
    max_block_seconds,
)


@pytest.mark.parametrize(
    ("client", "bound"),
    [
        ("claude-code", CLAUDE_CODE_S),
        ("codex-mcp-client", CODEX_S),
        ("gemini-cli-mcp-client", GEMINI_S),
        ("some-other-client", UNKNOWN_S),
        (None, UNKNOWN_S),
    ],
)
def test_each_client_gets_a_bound_below_its_own_limit(client: str | None, bound: float) -> None:
    assert max_block_seconds(client, {}, None) == bound


def test_bounds_stay_below_the_documented_client_limits() -> None:
    assert CLAUDE_CODE_S < 120
    assert CODEX_S < 300
    assert GEMINI_S < 600
    assert CLAUDE_CODE_NO_BACKGROUND_S < 1800


def test_override_wins_for_every_client() -> None:
    assert max_block_seconds("claude-code", {}, 12.5) == 12.5
    assert max_block_seconds("codex-mcp-client", {}, 3.0) == 3.0


def test_claude_code_with_a_custom_auto_background_threshold() -> None:
    env = {"CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS": "300000"}
    assert max_block_seconds("claude-code", env, None) == 285.0


def test_claude_code_with_auto_background_disabled_waits_longer_within_its_timeouts() -> None:
    off = {"CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS": "0"}
    assert max_block_seconds("claude-code", off, None) == CLAUDE_CODE_NO_BACKGROUND_S
    capped = {**off, "MCP_TOOL_TIMEOUT": "600000"}
    assert max_block_seconds("claude-code", capped, None) == 585.0
    idle_off = {**off, "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT": "0"}
    assert max_block_seconds("claude-code", idle_off, None) == CLAUDE_CODE_NO_BACKGROUND_S


def test_garbage_environment_values_fall_back_to_the_safe_default() -> None:
    assert max_block_seconds("claude-code", {"CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS": "x"}, None) == (
        CLAUDE_CODE_S
    )
