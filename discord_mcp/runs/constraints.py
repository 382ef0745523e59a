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

import re
import shlex
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


# --------------------------------------------------------------------------------------------
# Claude Code and Gemini CLI: the hook's judgement


WEB_TOOLS = frozenset({"WebFetch", "WebSearch", "google_web_search", "web_fetch"})
SHELL_TOOLS = frozenset({"Bash", "run_shell_command", "shell", "exec_command"})
OWN_MCP_PREFIXES = ("mcp__discord__", "mcp_discord_")
NETWORK_PROGRAMS = frozenset(
    {
        "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat",
        "telnet", "ftp", "tftp", "ping", "ping6", "traceroute", "dig", "nslookup", "host",
        "whois", "http", "https", "xh", "aria2c", "lynx", "links", "w3m", "gh", "hub", "glab",
        "aws", "gcloud", "gsutil", "az", "kubectl", "helm", "docker", "podman", "npx", "pnpx",
        "bunx", "uvx", "pipx", "mosh", "openssl", "ncftp", "svn", "hg", "ollama",
    }
)  # fmt: skip
"""Programs whose job is the network: denied whatever their arguments."""
FETCHING_SUBCOMMANDS: Mapping[str, frozenset[str]] = {
    "git": frozenset({"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote"}),
    "pip": frozenset({"install", "download", "wheel", "search", "index"}),
    "pip3": frozenset({"install", "download", "wheel", "search", "index"}),
    "uv": frozenset({"add", "sync", "lock", "pip", "run", "tool", "python", "venv", "init"}),
    "poetry": frozenset({"install", "add", "update", "lock", "publish", "self"}),
    "npm": frozenset({"install", "i", "ci", "add", "update", "upgrade", "publish", "exec", "x",
                      "init", "create", "audit", "outdated", "view", "info", "dlx", "pack"}),
    "pnpm": frozenset({"install", "i", "add", "update", "up", "publish", "dlx", "exec", "create"}),
    "yarn": frozenset({"install", "add", "upgrade", "up", "publish", "dlx", "create", "npm"}),
    "bun": frozenset({"install", "i", "add", "update", "publish", "x", "create"}),
    "cargo": frozenset({"install", "fetch", "update", "publish", "add", "search", "login"}),
    "go": frozenset({"get", "install", "mod"}),
    "gem": frozenset({"install", "update", "fetch", "push", "search"}),
    "bundle": frozenset({"install", "update", "add"}),
    "composer": frozenset({"install", "require", "update", "create-project"}),
    "conda": frozenset({"install", "create", "update", "search"}),
    "mamba": frozenset({"install", "create", "update", "search"}),
    "apt": frozenset({"install", "update", "upgrade", "download", "source"}),
    "apt-get": frozenset({"install", "update", "upgrade", "download", "source"}),
    "yum": frozenset({"install", "update", "upgrade", "download"}),
    "dnf": frozenset({"install", "update", "upgrade", "download"}),
    "brew": frozenset({"install", "update", "upgrade", "fetch", "tap"}),
    "deno": frozenset({"install", "run", "cache", "add", "upgrade"}),
}  # fmt: skip
"""Programs that use the network for some of their subcommands."""
WRAPPERS = frozenset(
    {"sudo", "env", "nohup", "time", "nice", "ionice", "command", "builtin", "exec", "xargs",
     "stdbuf", "setsid", "doas", "chroot", "unbuffer", "timeout", "watch", "strace", "ltrace"}
)  # fmt: skip
"""Programs that run the next word as a program (their own options are skipped)."""
INTERPRETERS = frozenset(
    {"python", "python3", "node", "deno", "bun", "ruby", "perl", "php", "sh", "bash", "zsh",
     "dash", "ksh", "fish", "pwsh", "lua", "Rscript", "julia", "tclsh", "osascript"}
)  # fmt: skip
_ADDRESSES = re.compile(
    r"\b(?!file://)[a-z][a-z0-9+.-]*://|/dev/(?:tcp|udp)/|\bgit@[\w.-]+:", re.IGNORECASE
)
"""A URL (not ``file://``), bash's network files, or an ssh remote, anywhere in a command."""
_NETWORK_CODE = re.compile(
    r"\bsocket\b|\burllib\b|\brequests\b|\bhttpx\b|\baiohttp\b|\bhttp\.client\b|"
    r"\bfetch\s*\(|\bXMLHttpRequest\b|\bnet\.(?:connect|Socket|createConnection)\b|"
    r"\bhttps?\.(?:get|request)\b|\bWebSocket\b|\bsmtplib\b|\bftplib\b|\bparamiko\b|"
    r"\bNet::HTTP\b|\bopen-uri\b|\bLWP\b|\bIO::Socket\b|\bfsockopen\b|\bdgram\b",
    re.IGNORECASE,
)
"""Network libraries named in code an interpreter is given inline (``python -c``, a heredoc)."""
_VALUE_OPTIONS = frozenset(
    {"-u", "-g", "-U", "-C", "-p", "-r", "-t", "-n", "-s", "-k", "-D", "-I", "-P", "-L", "-d",
     "-a", "-E", "-S", "-o", "-e"}
)  # fmt: skip
"""Wrapper options that take a value (``sudo -u bob``, ``xargs -I {}``, ``timeout -s KILL``)."""
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", "\n", ";;", "!", "{", "}"})


def network_use(tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
    """Why a tool call would use the network (a sentence for the agent), or None when it does
    not seem to. Doubt counts as use: a command that cannot be read is denied."""
    if tool_name in WEB_TOOLS:
        return f"{tool_name} reaches the web, and this run has no network"
    if tool_name.startswith(("mcp__", "mcp_")) and not tool_name.startswith(OWN_MCP_PREFIXES):
        return f"{tool_name} belongs to an MCP server that may use the network"
    if tool_name not in SHELL_TOOLS:
        return None
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):
        command = shlex.join(str(part) for part in command)
    if not isinstance(command, str):
        return f"{tool_name} without a readable command; this run has no network"
    return command_network_use(command)


def command_network_use(command: str) -> str | None:
    """Why a shell command would use the network, or None (see :func:`network_use`)."""
    found = _ADDRESSES.search(command)
    if found:
        return f"the command names {found.group(0)!r}, and this run has no network"
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()!{}")
        lexer.whitespace_split = True
        lexer.commenters = ""
        words = list(lexer)
    except ValueError:
        return "the command cannot be read (unbalanced quotes); this run has no network"
    for simple in _simple_commands(words):
        reason = _program_network_use(simple)
        if reason is not None:
            return reason
    interpreted = any(_program(simple) in INTERPRETERS for simple in _simple_commands(words))
    code = _NETWORK_CODE.search(command) if interpreted else None
    if code:
        return f"the code given to an interpreter uses {code.group(0)!r}; this run has no network"
    if "$(" in command or "`" in command or "<(" in command:
        inner = re.findall(r"\$\(([^()]*)\)|`([^`]*)`|<\(([^()]*)\)", command)
        for groups in inner:
            for part in groups:
                if part and (reason := command_network_use(part)) is not None:
                    return reason
    return None


def _simple_commands(words: Sequence[str]) -> list[list[str]]:
    commands: list[list[str]] = [[]]
    for word in words:
        if word in _OPERATORS or set(word) <= set(";&|()!{}"):
            commands.append([])
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


def _program(words: list[str]) -> str:
    """The program a simple command runs, past variable assignments and wrappers."""
    index = _program_index(words)
    if index >= len(words):
        return ""
    name = words[index].rsplit("/", 1)[-1]
    return re.sub(r"[0-9.]+$", "", name) or name  # python3.11 -> python


def _program_index(words: list[str]) -> int:
    index = 0
    while index < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[index]):
        index += 1  # VAR=value before the program
    while index < len(words) and words[index].rsplit("/", 1)[-1] in WRAPPERS:
        index += 1
        while index < len(words) and (
            words[index].startswith("-") or re.match(r"^[\w.]+=|^\d+[smhd]?$", words[index])
        ):
            # the wrapper's own options (sudo -u bob, xargs -I {}), VAR=x, timeout's 10s
            index += 2 if words[index] in _VALUE_OPTIONS else 1
    return index


def _program_network_use(words: list[str]) -> str | None:
    index = _program_index(words)
    if index >= len(words):
        return None
    program = words[index].rsplit("/", 1)[-1]
    base = _program(words)
    rest = [w for w in words[index + 1 :] if not w.startswith("-")]
    if program in NETWORK_PROGRAMS or base in NETWORK_PROGRAMS:
        return f"{program} uses the network, and this run has no network"
    fetching = FETCHING_SUBCOMMANDS.get(program) or FETCHING_SUBCOMMANDS.get(base)
    if fetching is not None and rest and rest[0] in fetching:
        return f"{program} {rest[0]} uses the network, and this run has no network"
    if base == "python" and "-m" in words[index:] and _module_fetches(words[index:]):
        return f"{program} -m {words[words.index('-m') + 1]} uses the network"
    return None


def _module_fetches(words: list[str]) -> bool:
    position = words.index("-m")
    module = words[position + 1] if position + 1 < len(words) else ""
    rest = [w for w in words[position + 2 :] if not w.startswith("-")]
    if module in ("pip", "pip3"):
        return bool(rest) and rest[0] in FETCHING_SUBCOMMANDS["pip"]
    return module in ("ensurepip", "http.server", "smtpd", "webbrowser", "urllib.request")
