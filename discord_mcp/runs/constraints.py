"""What a run may do: its network, its time (issue 23).

Theory. A run's constraints are fixed when the run starts (``discord-watch submit --no-network
--timeout S``, or the project's own settings) and hold for every turn of it, resumes included:
a CLI's session lives in one configuration (Gemini's in one home), so it is never switched
half-way. ``allow_network`` is false when the request OR the project says so; ``timeout_s``
overrides the project's job timeout.

How each CLI is kept off the network (fail closed: a CLI whose project arguments would undo it,
or a machine where no network namespace can be made, is not started, E_NETWORK_NOT_ENFORCEABLE;
a run says in its result how it was enforced):

===========  =============  ==================================================================
CLI          enforcement    how
===========  =============  ==================================================================
codex        ``sandbox``    its own sandbox, network off (``sandbox_workspace_write.
                            network_access=false``; read-only has none), web search disabled,
                            the MCP servers of its config files turned off (they run outside
                            the sandbox), no way out of the sandbox (no ``--approve-for-me``);
                            arguments that turn the sandbox off or the network on are refused
claude       ``namespace``  every command its agent starts runs in a network namespace with no
                            interface but its own loopback (:mod:`discord_mcp.runs.offline`);
                            the tools that reach the network from the CLI's own process are
                            removed, and only our MCP server runs (``--strict-mcp-config``)
gemini       ``namespace``  the same, through a ``bash`` of ours first on its PATH; web tools
                            and ``invoke_agent`` excluded, only our MCP server
ACP agents   refused        an agent's own tools reach the network from its own process
===========  =============  ==================================================================

For Claude Code and Gemini CLI a hook (:func:`network_use`) still refuses, at once and with a
reason the agent can act on, the shell commands it can tell use the network: an early,
explained refusal, not the boundary (the namespace is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from discord_mcp.errors import RunError

TIMEOUT_RANGE_S = (1.0, 86_400.0)
"""The shortest and longest a run's turn may be limited to (as a project's job timeout)."""
NETWORK_ENFORCEMENT: Mapping[str, str] = {
    "codex": "sandbox",
    "claude": "namespace",
    "gemini": "namespace",
}
NETWORK_NOTES: Mapping[str, str] = {
    "sandbox": "the CLI's own sandbox has no network",
    "namespace": (
        "every command the agent started ran in a network namespace with no interface but its "
        "own loopback; web tools and other MCP servers were removed"
    ),
}


@dataclass(frozen=True)
class Constraints:
    """A run's constraints (see the module doc)."""

    allow_network: bool = True
    timeout_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"allow_network": self.allow_network, "timeout_s": self.timeout_s}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Constraints:
        """Read constraints; a doubtful ``allow_network`` (anything but ``true``, when given)
        means no network."""
        data = data or {}
        timeout = data.get("timeout_s")
        return cls(
            allow_network=data.get("allow_network", True) is True,
            timeout_s=float(timeout) if isinstance(timeout, int | float) else None,
        )

    def checked(self) -> Constraints:
        """These constraints, if they are acceptable.

        Raises:
            RunError: E_INVALID_TIMEOUT.
        """
        low, high = TIMEOUT_RANGE_S
        if self.timeout_s is not None and not low <= self.timeout_s <= high:
            raise RunError(
                "E_INVALID_TIMEOUT",
                f"a timeout of {self.timeout_s:g} s is not allowed: use {low:g} s to "
                f"{high / 3600:g} h",
            )
        return self


def enforcement(tool: str, constraints: Constraints) -> dict[str, Any]:
    """How the constraints are held for ``tool``, as a run's result reports it."""
    if constraints.allow_network:
        return {"network_enforcement": None}
    how = NETWORK_ENFORCEMENT.get(tool, "none")
    return {"network_enforcement": how, "network_note": NETWORK_NOTES.get(how, "")}


# --------------------------------------------------------------------------------------------
# Codex: its arguments


_OPENING_FLAGS = frozenset(
    {"--dangerously-bypass-approvals-and-sandbox", "--yolo", "--approve-for-me"}
)
_SANDBOX_FLAGS = frozenset({"-s", "--sandbox"})


def codex_network_args(default_args: Sequence[str]) -> list[str]:
    """The overrides that keep a Codex run off the network.

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE when the project's arguments open the sandbox, turn
            its network on, or configure what we must override.
    """
    args = list(default_args)
    for index, arg in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        value = arg.split("=", 1)[1] if arg.startswith("--sandbox=") else None
        if arg in _SANDBOX_FLAGS:
            value = following
        refused = arg in _OPENING_FLAGS or (value is not None and "danger" in value)
        if arg in ("-c", "--config") or arg.startswith("--config="):
            override = arg.split("=", 1)[1] if arg.startswith("--config=") else following
            key = override.split("=", 1)[0].strip()
            refused = refused or any(
                word in key for word in ("network", "sandbox_mode", "web_search", "mcp_servers")
            )
        if refused:
            raise RunError(
                "E_NETWORK_NOT_ENFORCEABLE",
                f"the run asks for no network, but the project's codex arguments ({arg} "
                f"{following}".rstrip()
                + ") would open its sandbox or configure its network: remove them from the "
                "project, or run with network",
            )
    return [
        "-c",
        "sandbox_workspace_write.network_access=false",
        "-c",
        'web_search="disabled"',
    ]


def claude_network_check(default_args: Sequence[str]) -> None:
    """Refuse project arguments that would undo what keeps a Claude Code run off the network:
    their own ``--settings`` (it could replace the file holding our hook) or ``--mcp-config``
    (other servers).

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE.
    """
    for arg in default_args:
        if arg.split("=", 1)[0] in ("--settings", "--mcp-config"):
            raise RunError(
                "E_NETWORK_NOT_ENFORCEABLE",
                f"the run asks for no network, but the project's claude arguments carry {arg}, "
                "which could bring tools that reach it: remove it from the project, or run "
                "with network",
            )
