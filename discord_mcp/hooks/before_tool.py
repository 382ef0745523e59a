"""``discord-mcp hook before-tool``: Gemini CLI's ``BeforeTool``, for headless and interactive use.

Gemini CLI runs the hook before every tool call its matcher selects, with ``{"session_id",
"transcript_path", "cwd", "hook_event_name": "BeforeTool", "timestamp", "tool_name",
"tool_input", "mcp_context"}`` on stdin, and reads ``{"decision": "allow"}``, ``{"decision":
"deny", "reason": "..."}`` (the reason goes to the model as the tool's error; the turn goes on)
or ``{}`` (no decision). What it does with the answer (0.61.0, read in its bundle):

- The hook runs first, then Gemini's own policy. A deny stops the call. An allow does not skip
  the policy: in the default approval mode the terminal still asks, so interactive users who
  want Discord to be the only gate run with ``--approval-mode=yolo`` (``auto_edit`` lets edits
  through); ``discord-watch`` runs do.
- Headless Gemini offers write and shell tools only with ``--approval-mode=yolo``.
- A hook that fails or times out (``timeout`` in the hook's settings, 60 s by default) counts
  as no decision, and the call goes on; a failed hook's plain-text stderr with exit code 1 even
  counts as an allow. So this hook always decides before its own timeout (``--timeout`` tells
  it the configured one): when no one answered in time, the call is denied with a reason saying
  so (never that the owner refused), and any failure denies it too
  (:mod:`~discord_mcp.hooks.guard`).

Which calls ask: with ``--ask-all`` (or ``DISCORD_MCP_APPROVALS=ask-all``, set per
``discord-watch`` run) every tool but this server's own; with ``DISCORD_MCP_APPROVALS=off``
none; otherwise (``ask``) everything but the tools in :data:`HARMLESS` (plans, todos, topics,
Gemini's own docs, questions to the user), and but the reads in
:data:`~discord_mcp.hooks.reads.GEMINI_READS` and fetches in
:data:`~discord_mcp.hooks.reads.GEMINI_WEB` that :mod:`~discord_mcp.hooks.reads` finds harmless
(no secret read, no data carried out). The installed matcher skips :data:`HARMLESS` alone, so
reads and fetches reach the hook, which answers a harmless one at once from the event: it loads
none of the Discord machinery for it (the cold start of a read's hook is Python's and this
package's few modules).
Gemini strips inherited variables named like ``*TOKEN*`` from a hook's environment, so the
settings come from ``--env-file`` (``install``) or the hook's ``env`` (``discord-watch`` runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from discord_mcp.hooks.reads import GEMINI_READS, GEMINI_WEB, gemini_asks

if TYPE_CHECKING:  # the run adapter imports this module for the matcher alone: keep it light
    from discord_mcp.approvals.service import Outcome
    from discord_mcp.hooks.options import HookOptions

OWN_TOOLS = "mcp_discord_"
HARMLESS = frozenset(
    {
        "update_topic",
        "enter_plan_mode",
        "exit_plan_mode",
        "write_todos",
        "get_internal_docs",
        "ask_user",
    }
)
"""Gemini CLI's tools (0.61.0) that only plan or talk to the user: never asked in ``ask`` mode
(the installed matcher does not even run the hook for them)."""
READ_ONLY = HARMLESS | GEMINI_READS | GEMINI_WEB
"""Every tool that neither writes nor executes; the reads and fetches among them still ask when
they read a secret or carry data out (:mod:`~discord_mcp.hooks.reads`)."""


def matcher(*, ask_all: bool) -> str:
    """The hook's ``matcher`` (a regular expression over tool names) for the settings file."""
    if ask_all:
        return f"^(?!{OWN_TOOLS}).*"
    skipped = "|".join(sorted(HARMLESS))
    return f"^(?!(?:{skipped})$)(?!{OWN_TOOLS}).*"


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    tool = str(payload.get("tool_name") or "")
    mode = environ.get("DISCORD_MCP_APPROVALS", "").strip()
    ask_all = options.ask_all or mode == "ask-all"
    arguments = payload.get("tool_input") or {}
    if mode == "off" or tool.startswith(OWN_TOOLS):
        return {}
    if not ask_all and (
        tool in HARMLESS
        or (tool in READ_ONLY and not gemini_asks(tool, arguments, str(payload.get("cwd") or "")))
    ):
        return {}
    return _ask(payload, tool, options, environ)


def _ask(
    payload: Mapping[str, Any], tool: str, options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any]:
    import asyncio

    from discord_mcp.approvals.request import ToolRequest
    from discord_mcp.hooks.runner import configure_logging, decide, hook_settings, remember_session
    from discord_mcp.hooks.runner import session_label as label_of

    request = ToolRequest(
        client="gemini",
        tool_name=tool,
        tool_input=dict(payload.get("tool_input") or {}),
        session_id=str(payload.get("session_id") or ""),
        cwd=str(payload.get("cwd") or ""),
        route="hook",
        event="BeforeTool",
    )
    settings = hook_settings(environ, options.env_file, request.cwd)
    configure_logging(settings)
    remember_session(settings, payload)
    wait = options.wait if options.wait is not None else settings.approval_wait_seconds
    outcome = asyncio.run(
        decide(
            settings,
            request,
            wait=wait,
            label=label_of(request.session_id),
            process=options.process,
            reply=answer,
        )
    )
    return answer(outcome)


def answer(outcome: Outcome) -> dict[str, Any]:
    if outcome.behavior == "allow":
        return {"decision": "allow"}
    return {"decision": "deny", "reason": outcome.message}
