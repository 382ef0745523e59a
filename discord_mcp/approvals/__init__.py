"""Tool approvals: an agent CLI asks to run a tool, and the owner answers from Discord.

Theory. Each of the three CLIs asks in its own way (Claude Code's permission-prompt MCP tool
``approve`` and its ``PermissionRequest`` hook, Codex's ``PermissionRequest`` hook, Gemini CLI's
``BeforeTool`` hook; see :mod:`discord_mcp.hooks`), and every way becomes one
:class:`~discord_mcp.approvals.request.ToolRequest`. A request that a session rule or an
unused late Allow already answers is answered at once (:mod:`~discord_mcp.approvals.rules`);
otherwise it becomes an approval: a decision of kind ``approval`` in the decision store, with
the same durability, owner-only judging, recovery and audit as a question, shown as a card in
the asking session's thread (:mod:`~discord_mcp.approvals.cards`).

The answer is ``allow`` (once, or for this session: a rule for later identical requests of that
session only) or ``deny`` (with the owner's note as the reason). Waiting is bounded below what
the asking CLI tolerates; when the bound runs out the agent is told that no one answered and
the tool was not run, never that the owner refused, and the approval stays open: a late Allow
is recorded and, for a ``discord-watch`` run, resumes the session with the news.
"""

from discord_mcp.approvals.kind import APPROVAL
from discord_mcp.decisions import kinds as _kinds

_kinds.register(APPROVAL)
