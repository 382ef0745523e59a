"""Whether a Codex turn can run through ``codex app-server`` (issue 34), and its argv then.

A steering turn (chat, a project with ``busy: steer``) runs Codex through
:mod:`discord_mcp.runs.adapters.codex_bridge` when every option ``codex exec`` would get has an
app-server equivalent:

- ``-c``/``--config``, ``--enable``, ``--disable``: the same (``app-server`` takes them);
- ``-s``/``--sandbox MODE``: the thread's ``sandbox``; ``-m``/``--model``: ``-c model=...``;
- ``--dangerously-bypass-hook-trust`` (exec's flag for the approval hooks this run adds with
  ``-c hooks.<event>=...``): the bridge's ``--trust-hooks`` (the same setting in the thread's
  config; app-server ignores it as a ``-c``), so app-server runs the same ``PreToolUse`` and
  ``PermissionRequest`` hooks and every write or command reaches the owner's card as in exec;
- ``--approve-for-me`` (the ``workspace-write`` sandbox, and a command that must leave it goes to
  the ``PermissionRequest`` hook): the thread's ``sandbox`` is ``workspace-write`` and its
  ``approvalPolicy`` ``on-request``, where Codex runs that hook before it would ask its client;
  without it the policy is ``never`` (exec's: such a command is refused).
  A request that still reaches the client is declined by the bridge (fail closed).

Any other option (or images, which ``app-server`` takes otherwise) keeps ``codex exec``: it
never runs with less of a guard than exec's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from discord_mcp.runs.adapters.base import InvocationRequest

_PASSED = ("-c", "--config", "--enable", "--disable")


def steer_message(text: str) -> str:
    """One line of the bridge's stdin: a message for the turn."""
    return json.dumps({"type": "user", "text": text}) + "\n"


def app_server_argv(request: InvocationRequest, options: Sequence[str]) -> tuple[str, ...] | None:
    """The bridge's argv for ``options`` (``codex exec``'s, after ``exec --json
    --skip-git-repo-check``); None when one of them has no app-server equivalent."""
    server = [request.executable, "app-server"]
    sandbox: str | None = None
    approval = "never"  # exec's: nothing asks the client
    trust_hooks = False
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
        elif arg == "--dangerously-bypass-hook-trust":
            trust_hooks = True
        elif arg == "--approve-for-me":
            approval = "on-request"
            sandbox = sandbox or "workspace-write"
        else:
            return None
        index += 1
    bridge = [sys.executable, "-m", "discord_mcp.runs.adapters.codex_bridge"]
    if request.resume_key:
        bridge += ["--resume", request.resume_key]
    if sandbox:
        bridge += ["--sandbox", sandbox]
    bridge += ["--approval", approval]
    if trust_hooks:
        bridge.append("--trust-hooks")
    return (*bridge, "--", *server)
