"""Client hooks: ``discord-mcp hook <event>``, run by an agent CLI with one JSON object on stdin.

One module per client event. The approval hooks turn the CLI's payload into a
:class:`~discord_mcp.approvals.request.ToolRequest` and the decision into the JSON that CLI
expects on stdout; ``stop`` and ``session_start`` read the session's questions
(:mod:`~discord_mcp.hooks.sessions`) and are quiet: any failure means no output and exit 0.

===========================  ==========================================  ==================
module                       event                                       clients
===========================  ==========================================  ==================
``permission_request``       ``PermissionRequest``                       Claude Code, Codex
``before_tool``              ``BeforeTool``                              Gemini CLI
``pre_tool_use``             ``PreToolUse`` (runs: reads of secrets;      Claude Code, Codex
                             ``ask-all``: always ask; Codex: every call
                             that writes or executes)
``stop``                     ``Stop`` / ``AfterAgent``: no turn ends      Claude Code, Codex,
                             while this session's question is open        Gemini CLI
``session_start``            ``SessionStart``: answers that came while    Claude Code, Codex,
                             no session listened                          Gemini CLI
===========================  ==========================================  ==================

:mod:`~discord_mcp.hooks.runner` is what they share: settings from the environment (or
``--env-file``), a follower of the machine's gateway (a hook never holds it), the decision, and
the rule that a hook prints one JSON object on stdout, or nothing, and never a traceback;
:mod:`~discord_mcp.hooks.options` its command line, and :mod:`~discord_mcp.hooks.reads` which
reads and fetches run without a card. A hook imports only its own event's module
(:mod:`~discord_mcp.hooks.cli`), so one that answers at once loads little.
:mod:`~discord_mcp.hooks.guard` is the rule of the three guard hooks (``permission-request``,
``before-tool``, ``pre-tool-use``): they fail closed, with an explicit block in the form their CLI
honours, on any failure and before their CLI's hook timeout.
"""
