"""How long a blocking tool call may wait before it returns ``pending``.

Every MCP client gives up on a long call in its own way (see the README's troubleshooting):

* Claude Code moves a call to the background after ``CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS``
  (default 2 minutes) and the agent carries on *without* the answer, so we return first. With
  auto-background disabled (``0``), only its idle timeout (30 minutes for stdio, reset by our
  progress notifications) and ``MCP_TOOL_TIMEOUT`` remain.
* Codex stops a call after ``tool_timeout_sec`` (300 s by default) and ignores progress.
* Gemini CLI stops a call after its ``timeout`` (600 s by default) and ignores progress.
* Anything else: an unknown client may use the MCP SDKs' 60-120 s defaults.

``DISCORD_MCP_MAX_BLOCK_SECONDS`` overrides the choice (for a client configured with a longer
timeout, or for tests).
"""

from __future__ import annotations

from collections.abc import Mapping

CLAUDE_CODE_S = 105.0
"""Below Claude Code's 120 s auto-background threshold, with room for the final round trip."""
CLAUDE_CODE_NO_BACKGROUND_S = 1500.0
"""Auto-background off: below the 30-minute stdio idle timeout; progress keeps it alive."""
CODEX_S = 270.0
"""Below Codex's 300 s default tool timeout."""
GEMINI_S = 540.0
"""Below Gemini CLI's 600 s default timeout."""
UNKNOWN_S = 100.0
MARGIN_S = 15.0


def max_block_seconds(
    client_name: str | None, environ: Mapping[str, str], override: float | None
) -> float:
    """Seconds a call may block for a client named ``client_name`` (from its initialize)."""
    if override is not None:
        return override
    name = (client_name or "").lower()
    if "claude" in name:
        background = _milliseconds(environ.get("CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS"))
        if background is None:
            return CLAUDE_CODE_S
        if background > 0:
            return max(background / 1000 - MARGIN_S, 5.0)
        limit = CLAUDE_CODE_NO_BACKGROUND_S
        for variable in ("MCP_TOOL_TIMEOUT", "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT"):
            value = _milliseconds(environ.get(variable))
            if value:  # 0 disables the idle timeout
                limit = min(limit, max(value / 1000 - MARGIN_S, 5.0))
        return limit
    if "codex" in name:
        return CODEX_S
    if "gemini" in name:
        return GEMINI_S
    return UNKNOWN_S


def _milliseconds(raw: str | None) -> float | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= 0 else None
