"""Client hooks: ``discord-mcp hook <event>``, run by an agent CLI with one JSON object on stdin.

One module per client event, each turning the CLI's payload into a
:class:`~discord_mcp.approvals.request.ToolRequest` and the decision into the JSON that CLI
expects on stdout:

===========================  ==========================================  ==================
module                       event                                       clients
===========================  ==========================================  ==================
``permission_request``       ``PermissionRequest``                       Claude Code, Codex
``before_tool``              ``BeforeTool``                              Gemini CLI
``pre_tool_use``             ``PreToolUse`` (``ask-all``: always ask)     Claude Code
===========================  ==========================================  ==================

:mod:`~discord_mcp.hooks.runner` is what they share: settings from the environment (or
``--env-file``), a follower of the machine's gateway (a hook never holds it), the decision, and
the rule that a hook prints one JSON object on stdout, or nothing, and never a traceback.
"""
