"""Whether a Codex turn can run through ``codex app-server`` (issue 34), and its argv then.

A steering turn (chat, a project with ``busy: steer``) runs Codex through
:mod:`discord_mcp.runs.adapters.codex_bridge` when every option ``codex exec`` would get has an
app-server equivalent:

- ``-c``/``--config``, ``--enable``, ``--disable``: the same (``app-server`` takes them);
- ``-s``/``--sandbox MODE``: the thread's ``sandbox``; ``-m``/``--model``: ``-c model=...``;
- ``--approve-for-me`` and ``--dangerously-bypass-hook-trust`` (the approval hooks' flags):
  dropped; instead the thread's ``approvalPolicy`` is ``untrusted``, so Codex asks before every
  command it does not know to be safe, and the bridge declines every such request (fail closed:
  app-server's approvals do not reach the owner's card yet).

Any other option (or images, which ``app-server`` takes otherwise) keeps ``codex exec``: it
never runs with less of a guard than exec's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from discord_mcp.runs.adapters.base import InvocationRequest

_PASSED = ("-c", "--config", "--enable", "--disable")
_APPROVAL_FLAGS = ("--approve-for-me", "--dangerously-bypass-hook-trust")


def steer_message(text: str) -> str:
    """One line of the bridge's stdin: a message for the turn."""
    return json.dumps({"type": "user", "text": text}) + "\n"


def app_server_argv(
    request: InvocationRequest, options: Sequence[str], *, guarded: bool
) -> tuple[str, ...] | None:
    """The bridge's argv for ``options`` (``codex exec``'s, after ``exec --json
    --skip-git-repo-check``); None when one of them has no app-server equivalent."""
    server = [request.executable, "app-server"]
    sandbox: str | None = None
    approval = "untrusted" if guarded else None
    index = 0
    while index < len(options):
        arg = options[index]
        following = options[index + 1] if index + 1 < len(options) else None
        if arg in _PASSED and following is not None:
            server += [arg, following]
            index += 2
            continue
        if (
            arg.startswith("--config=")
            or arg.startswith("--enable=")
            or arg.startswith("--disable=")
        ):
            server.append(arg)
        elif arg in ("-s", "--sandbox") and following is not None:
            sandbox = following
            index += 1
        elif arg.startswith("--sandbox="):
            sandbox = arg.split("=", 1)[1]
        elif arg in ("-m", "--model") and following is not None:
            server += ["-c", f"model={json.dumps(following)}"]
            index += 1
        elif arg in _APPROVAL_FLAGS:
            approval = "untrusted"
        else:
            return None
        index += 1
    bridge = [sys.executable, "-m", "discord_mcp.runs.adapters.codex_bridge"]
    if request.resume_key:
        bridge += ["--resume", request.resume_key]
    if sandbox:
        bridge += ["--sandbox", sandbox]
    if approval:
        bridge += ["--approval", approval]
    return (*bridge, "--", *server)
