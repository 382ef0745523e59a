"""A run without network: its agent's commands in a network namespace (issue 32).

Theory. ``--no-network`` is a promise the operating system keeps: every command the agent of
a Claude Code or Gemini CLI run starts (its shell tool, in the foreground or the background,
the hooks and servers the CLI starts, but ours) runs in a network namespace with no interface
but its own loopback (:mod:`discord_mcp.runs.netns`, the launcher). The CLI itself stays
outside: it needs its model API, and our MCP server and approval hooks need Discord. Why not
the whole CLI in a namespace, with a relay for the model API? Whatever may pass the relay, the
agent's commands could pass too: the model APIs take uploads (an attacker's key and a file
upload are a way out), and so does Discord (a webhook needs no token). A boundary at the
commands has nothing open.

How each CLI hands us its commands:

- Claude Code 2.1.330 starts every Bash (and Monitor) shell, every hook and every stdio MCP
  server as ``CLAUDE_CODE_SHELL_PREFIX <code>``: the prefix is a script of ours in the job's
  folder that calls the launcher. It is set in the CLI's environment AND in the run's
  ``--settings`` file's ``env``, which outranks the user's, the project's and the local
  settings (a project file the agent wrote cannot unset it for the next turn).
  ``CLAUDE_CODE_SHELL`` is pinned to bash, the shell the launcher runs the code with. The
  tools that reach the network or run programs from the CLI's own process are removed:
  ``WebFetch``, ``WebSearch``, ``Monitor`` (it also opens WebSockets), ``EnterWorktree`` and
  ``ExitWorktree`` (the CLI's own git runs the repository's hooks), ``Workflow``.
- Gemini CLI 0.61 runs its shell tool and its hooks as ``bash -c <code>``, ``bash`` looked up
  on its PATH: a ``bash`` of ours, first on the run's PATH, calls the launcher (a project's
  ``.env`` cannot change PATH: Gemini never overrides a variable that is set).
  ``GEMINI_SANDBOX=false`` keeps a project's settings from restarting the CLI in a container of
  its own; ``--allowed-mcp-server-names`` keeps its MCP servers to ours; ``invoke_agent`` is
  excluded (remote agents are reached from the CLI's process).

Our own MCP server and approval hook are the only commands run outside (the launcher compares
them word by word): they need Discord, and they are not the agent's.

Before a run starts, the daemon probes (once, then remembered): a namespace is made with
``unshare(2)`` (a user and a network namespace), else with bubblewrap. Where neither works (no
user namespaces, bwrap missing), the run does not start: E_NETWORK_NOT_ENFORCEABLE, with the
reason.

What the namespace does not do: it does not hide the file system. A command can still write a
file that something outside runs later (a git hook, a shell's startup file, a CLI's project
settings), and still talk to local services through Unix sockets (a Docker daemon, the user's
systemd), as in Codex's sandbox.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from discord_mcp.errors import RunError
from discord_mcp.runs import netns

LAUNCHER = Path(netns.__file__).resolve()
PROBE_TIMEOUT_S = 10.0
CONFIG_FILE = "no-network.json"
PREFIX_FILE = "no-network-shell"
SHIM_DIR = "no-network-bin"
CLAUDE_DENIED_TOOLS = (
    "WebFetch",
    "WebSearch",
    "Monitor",
    "EnterWorktree",
    "ExitWorktree",
    "Workflow",
)
"""Tools of Claude Code that reach the network or run a program from the CLI's own process."""
GEMINI_EXCLUDED_TOOLS = ("google_web_search", "web_fetch", "invoke_agent")


@dataclass(frozen=True)
class Jail:
    """How this machine makes a network namespace for a command (from :func:`probe`)."""

    mechanism: str  # "unshare" | "bwrap"
    python: str
    outer_netns: int
    bwrap: str | None = None


@dataclass(frozen=True)
class Wiring:
    """What a CLI's invocation gets: variables, private files, private programs (0700)."""

    env: dict[str, str] = field(default_factory=dict)
    files: dict[Path, str] = field(default_factory=dict)
    programs: dict[Path, str] = field(default_factory=dict)


Runner = Callable[[list[str], float], tuple[int | None, str]]
"""Runs an argv to its end within a bound: (exit code or None, its stderr)."""


def probe(python: str, run: Runner, *, bwrap: str | None = None) -> Jail:
    """The first mechanism that gives a command no network here (``bwrap``: where bubblewrap
    is, default: on PATH; ``""``: not at all).

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE, saying why each failed.
    """
    outer = netns.netns_inode()
    bwrap = shutil.which("bwrap") if bwrap is None else (bwrap or None)
    reasons = []
    for mechanism in netns.MECHANISMS:
        if mechanism == "bwrap" and bwrap is None:
            reasons.append("bubblewrap (bwrap) is not installed")
            continue
        argv = [python, "-I", "-S", str(LAUNCHER), "--try", mechanism, "--outer", str(outer)]
        if bwrap is not None:
            argv += ["--bwrap", bwrap]
        code, err = run(argv, PROBE_TIMEOUT_S)
        if code == 0:
            return Jail(mechanism, python, outer, bwrap)
        reasons.append(f"{mechanism}: {_reason(err) or f'exit code {code}'}")
    raise RunError(
        "E_NETWORK_NOT_ENFORCEABLE",
        "the run asks for no network, and this machine cannot give its commands a network "
        f"namespace ({'; '.join(reasons)}): allow unprivileged user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1) or install bubblewrap, or run with network",
    )


def _reason(stderr: str) -> str:
    text = " ".join(stderr.split())
    start = text.find("(")
    end = text.rfind(")")
    return text[start + 1 : end] if 0 <= start < end else text[-200:]


class Probe:
    """:func:`probe`, remembered once it succeeded (a failure is probed again next time)."""

    def __init__(self, python: str, run: Runner, *, bwrap: str | None = None) -> None:
        self.python = python
        self.run = run
        self.bwrap = bwrap
        self._found: Jail | None = None

    def __call__(self) -> Jail:
        if self._found is None:
            self._found = probe(self.python, self.run, bwrap=self.bwrap)
        return self._found


# --------------------------------------------------------------------------------------------
# Wiring a CLI


def required(jail: Jail | None) -> Jail:
    """The jail a run without network needs.

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE when none was probed.
    """
    if jail is None:
        raise RunError(
            "E_NETWORK_NOT_ENFORCEABLE",
            "the run asks for no network, and no network namespace was prepared for its "
            "commands: run with network",
        )
    return jail


def config_text(
    jail: Jail,
    shell: str,
    allow: Sequence[Sequence[str]],
    strip: Path | None,
    allow_code: Sequence[str] = (),
) -> str:
    """The launcher's configuration for one job: ``allow``, our commands as words;
    ``allow_code``, our guard hooks' exact shell commands (both run outside)."""
    document = {
        "version": netns.CONFIG_VERSION,
        "mechanism": jail.mechanism,
        "bwrap": jail.bwrap,
        "outer_netns": jail.outer_netns,
        "shell": shell,
        "allow": [list(argv) for argv in allow],
        "allow_code": list(allow_code),
        "strip_path": str(strip) if strip is not None else None,
    }
    return json.dumps(document, indent=1)


def launcher_script(jail: Jail, config: Path, mode: str) -> str:
    """A ``/bin/sh`` program that hands its arguments to the launcher."""
    command = shlex.join([jail.python, "-I", "-S", str(LAUNCHER), "--config", str(config), mode])
    return (
        "#!/bin/sh\n"
        "# Written by discord-watch: this run has no network, so its commands run in a network\n"
        "# namespace of their own (discord_mcp/runs/netns.py).\n"
        f'exec {command} "$@"\n'
    )


def find_bash(env_path: str) -> str:
    """The real bash (never our shim).

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE when there is none.
    """
    found = shutil.which("bash", path=env_path) or shutil.which("bash", path=os.defpath)
    if found is None:
        raise RunError(
            "E_NETWORK_NOT_ENFORCEABLE",
            "the run asks for no network, and its commands would run with bash, which is not "
            "on PATH: install bash, or run with network",
        )
    return found


def claude(
    jail: Jail,
    job_dir: Path,
    env_path: str,
    allow: Sequence[Sequence[str]],
    allow_code: Sequence[str] = (),
) -> Wiring:
    """Claude Code's commands through our shell prefix (see the module doc)."""
    config = job_dir / CONFIG_FILE
    prefix = job_dir / PREFIX_FILE
    if " -" in str(prefix):  # Claude Code splits a prefix at its last " -"
        raise RunError(
            "E_NETWORK_NOT_ENFORCEABLE",
            f"the run asks for no network, and its shell prefix {prefix} holds ' -', which "
            "Claude Code reads as an option: move the state directory, or run with network",
        )
    bash = find_bash(env_path)
    return Wiring(
        env={"CLAUDE_CODE_SHELL_PREFIX": str(prefix), "CLAUDE_CODE_SHELL": bash},
        files={config: config_text(jail, bash, allow, None, allow_code)},
        programs={prefix: launcher_script(jail, config, "--prefix")},
    )


def gemini(
    jail: Jail,
    job_dir: Path,
    env_path: str,
    allow: Sequence[Sequence[str]],
    allow_code: Sequence[str] = (),
) -> Wiring:
    """Gemini CLI's commands through a ``bash`` of ours first on PATH (see the module doc)."""
    config = job_dir / CONFIG_FILE
    shim_dir = job_dir / SHIM_DIR
    bash = find_bash(env_path)
    return Wiring(
        env={"PATH": os.pathsep.join([str(shim_dir), env_path]), "GEMINI_SANDBOX": "false"},
        files={config: config_text(jail, bash, allow, shim_dir, allow_code)},
        programs={shim_dir / "bash": launcher_script(jail, config, "--shim")},
    )
