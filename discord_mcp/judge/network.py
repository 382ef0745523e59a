"""Whether a tool call of a run without network would use the network: the early, explained
refusal (:mod:`discord_mcp.hooks.network`).

Theory. The promise of no network is kept by the operating system (a network namespace for the
agent's commands: :mod:`discord_mcp.runs.offline`); this judge only tells the agent early, and
in a sentence, that a call it is about to make cannot reach the network (a web tool, another MCP
server, a shell command of a program whose job is the network). It reads commands as words
and can be fooled: that costs a clearer error, never the promise.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

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
