"""ACP agents (issue 24): ``agents`` the registry, ``acp_runs`` a running agent and its turns,
``acp_jobs`` the scheduler's ACP side. The wire side is
:mod:`discord_mcp.runs.adapters.acp_wire` (the SDK, imported only when an agent starts), the
transcript :mod:`discord_mcp.runs.adapters.acp`."""
