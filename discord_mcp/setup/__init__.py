"""Getting a new user running: ``setup`` (the Discord side and ``.env``), ``install`` (register
the server with Claude Code, Codex or Gemini CLI), ``doctor`` (check everything, say how to fix).
``clients`` knows where each agent client keeps its configuration."""
