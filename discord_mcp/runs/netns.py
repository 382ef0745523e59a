"""The no-network launcher: runs one of an agent's commands in a network namespace of its own.

    python -I -S netns.py --config <job>/no-network.json --prefix <shell code>
    python -I -S netns.py --config <job>/no-network.json --shim <bash arguments...>
    python -I -S netns.py --try unshare|bwrap --outer <inode> [--bwrap <path>]

Why it exists: a run without network (``discord-watch submit --no-network``) must not reach
the network, whatever its agent's commands are; a judge reading the commands cannot promise
that (``$'\\x63url'``, ``node -e "require('net')..."``, a program the agent writes and runs).
The operating system can: a process in a new network namespace has no interface but its own
loopback, so nothing it starts can connect anywhere. The CLI itself stays outside (it needs its
model API), and so do our MCP server and approval hooks (they need Discord); every command of
the agent goes in. How each CLI hands its commands to us (:mod:`discord_mcp.runs.offline`):

- Claude Code runs every shell of its Bash tool (foreground and background), of its Monitor
  tool, of every hook and every stdio MCP server as ``CLAUDE_CODE_SHELL_PREFIX <code>``, the
  code as one argument: ``--prefix``.
- Gemini CLI runs its shell tool (foreground and background) and every hook as ``bash -c
  <code>``, ``bash`` found on its PATH: a ``bash`` of ours first on the run's PATH calls
  ``--shim`` with bash's arguments.

A command that is exactly one of ours runs as it is, outside: our MCP server (the
configuration's ``allow``, compared word by word after shell splitting, then run without a
shell) and our guard hooks (``allow_code``: their shell command, wrapped to fail closed when
killed (:func:`discord_mcp.hooks.guard.command`), compared character for character, then run
with ``<shell> -c``). Everything
else runs ``<shell> -c <code>`` (or the real bash with its arguments) inside a namespace made
here, with the configured mechanism:

- ``unshare``: a new user and network namespace (``unshare(2)``; as root too, so that the
  command holds no capability over the host's namespaces and cannot join them again), our
  uid and gid mapped to themselves, the namespace's loopback brought up, then ``execv``.
- ``bwrap``: bubblewrap ``--unshare-user --unshare-net`` over the same file system (where
  unprivileged user namespaces are allowed only to programs with an AppArmor profile, such as
  Ubuntu's bwrap), running this launcher again inside, which checks before it runs anything.

Before running a command it checks the namespace it is in: another one than the CLI's
(``--outer``, the inode of the CLI's network namespace) with no interface but ``lo``. A command
already in such a namespace (a ``bash`` the agent starts from one) runs as it is. Anything
else (no namespace can be made, a configuration that cannot be read, an unexpected form) is
refused: a sentence on stderr and exit code 126, the command never run. ``--try`` is the
probe the daemon runs before a run starts (:func:`discord_mcp.runs.offline.probe`).

Only the standard library is imported, and nothing is printed to stdout (it is the command's).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shlex
import socket
import struct
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

CONFIG_VERSION = 1
REFUSED = 126
"""The exit code of a command that was not run (as a shell says of a command it cannot run)."""
MECHANISMS = ("unshare", "bwrap")
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = "16sh22x"  # struct ifreq: the name, then the flags (a short) in its union
_NO_NETWORK = "this run has no network"


class Refused(Exception):
    """The command cannot be run without network (the message says why)."""


def netns_inode() -> int:
    """The inode of this process's network namespace (two processes share one iff equal)."""
    return os.stat("/proc/self/ns/net").st_ino


def isolated(outer: int) -> bool:
    """Whether this process is in a network namespace other than ``outer`` with no interface
    but its own loopback."""
    try:
        names = {name for _, name in socket.if_nameindex()}
        return netns_inode() != outer and names <= {"lo"}
    except OSError:
        return False


def enter_namespace() -> None:
    """Move this process into a new user and network namespace, loopback up.

    Raises:
        Refused: the kernel does not allow it here.
    """
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(ctypes.c_int(_CLONE_NEWUSER | _CLONE_NEWNET)) != 0:
        error = ctypes.get_errno()
        raise Refused(f"unshare(CLONE_NEWUSER | CLONE_NEWNET) failed: {os.strerror(error)}")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        raise Refused(f"the new user namespace cannot map uid {uid}: {exc.strerror}") from None
    with contextlib.suppress(OSError):  # a loopback left down only takes away more
        loopback_up()


def loopback_up() -> None:
    """Bring ``lo`` up in this network namespace (programs may talk to themselves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack(_IFREQ, b"lo", 0)
        flags = struct.unpack(_IFREQ, fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


# --------------------------------------------------------------------------------------------
# Running a command


def read_config(path: str) -> dict[str, Any]:
    """The job's configuration (see :mod:`discord_mcp.runs.offline`).

    Raises:
        Refused: it cannot be read, or it is not one this launcher knows.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as exc:
        raise Refused(f"its configuration {path} cannot be read ({exc})") from None
    if (
        not isinstance(config, dict)
        or config.get("version") != CONFIG_VERSION
        or config.get("mechanism") not in MECHANISMS
        or not isinstance(config.get("outer_netns"), int)
        or not isinstance(config.get("shell"), str)
        or not isinstance(config.get("allow"), list)
    ):
        raise Refused(f"its configuration {path} is not one this launcher knows")
    return config


def command_for(config: dict[str, Any], mode: str, args: Sequence[str]) -> tuple[list[str], bool]:
    """(the argv to run, whether it runs outside the namespace: one of ours).

    Raises:
        Refused: an unexpected form.
    """
    allowed = [list(item) for item in config["allow"] if isinstance(item, list)]
    allowed_code = [item for item in config.get("allow_code") or [] if isinstance(item, str)]
    code: str | None
    if mode == "--prefix":
        if len(args) != 1:
            raise Refused(f"the shell prefix was given {len(args)} arguments, not one")
        code = args[0]
        inside = [config["shell"], "-c", code]
    else:
        code = args[1] if len(args) == 2 and args[0] == "-c" else None
        inside = [config["shell"], *args]
    if code is not None and code in allowed_code:
        return [config["shell"], "-c", code], True
    if code is not None:
        try:
            words = shlex.split(code)
        except ValueError:
            words = []
        if words and words in allowed:
            return words, True
    return inside, False


def run(config_path: str, mode: str, args: Sequence[str], *, inside: bool = False) -> NoReturn:
    """Run the command without network, or refuse it (see the module doc). Never returns."""
    config = read_config(config_path)
    argv, ours = command_for(config, mode, args)
    if ours:
        _exec(argv)
    outer = int(config["outer_netns"])
    if not isolated(outer):
        if inside:
            raise Refused("bubblewrap did not give it a network namespace of its own")
        if config["mechanism"] == "bwrap":
            _exec_bwrap(config, config_path, mode, args)
        enter_namespace()
        if not isolated(outer):
            raise Refused("the new namespace still has a network interface")
    strip = config.get("strip_path")
    if isinstance(strip, str):  # our bash shim: once inside, the real bash is enough
        path = os.environ.get("PATH", "").split(os.pathsep)
        os.environ["PATH"] = os.pathsep.join(p for p in path if p != strip)
    _exec(argv)


def _exec(argv: list[str]) -> NoReturn:
    try:
        os.execvp(argv[0], argv)  # noqa: S606 (an argv: the shell is the command's own)
    except OSError as exc:
        raise Refused(f"{argv[0]} cannot be started: {exc.strerror}") from None


def _exec_bwrap(
    config: dict[str, Any], config_path: str, mode: str, args: Sequence[str]
) -> NoReturn:
    bwrap = config.get("bwrap")
    if not isinstance(bwrap, str):
        raise Refused("its configuration names no bubblewrap")
    again = [sys.executable, "-I", "-S", os.path.abspath(__file__), "--inside"]
    argv = [bwrap, *bwrap_options(), *again, "--config", config_path, mode, *args]
    try:
        os.execv(bwrap, argv)  # noqa: S606 (an argv list)
    except OSError as exc:
        raise Refused(f"bubblewrap ({bwrap}) cannot be started: {exc.strerror}") from None


def bwrap_options() -> list[str]:
    """bubblewrap's options: the same file system, devices and working directory, a user and
    network namespace of its own (bubblewrap brings its loopback up; as root it drops every
    capability)."""
    return ["--dev-bind", "/", "/", "--unshare-user", "--unshare-net", "--"]


# --------------------------------------------------------------------------------------------
# The probe


def probe(mechanism: str, outer: int, bwrap: str | None) -> None:
    """Check that ``mechanism`` gives a command no network here (in this throwaway process).

    Raises:
        Refused: it does not.
    """
    if mechanism not in MECHANISMS:
        raise Refused(f"no mechanism named {mechanism!r}")
    if mechanism == "unshare":
        enter_namespace()
        if not isolated(outer):
            raise Refused("the new namespace still has a network interface")
        return
    if bwrap is None:
        raise Refused("bubblewrap (bwrap) is not installed")
    again = [sys.executable, "-I", "-S", os.path.abspath(__file__), "--check", str(outer)]
    try:
        pid = os.posix_spawn(bwrap, [bwrap, *bwrap_options(), *again], dict(os.environ))
        _, status = os.waitpid(pid, 0)
    except OSError as exc:
        raise Refused(f"bubblewrap ({bwrap}) cannot be started: {exc.strerror}") from None
    if os.waitstatus_to_exitcode(status) != 0:
        raise Refused("bubblewrap could not make a network namespace")


def _refuse(reason: str) -> int:
    sys.stderr.write(
        f"discord-mcp: {_NO_NETWORK}, and its commands run in a network namespace of their own, "
        f"which could not be made ({reason}): the command was not run\n"
    )
    sys.stderr.flush()
    return REFUSED


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ["--try"] and len(args) >= 4 and args[2] == "--outer":
            bwrap = args[5] if args[4:5] == ["--bwrap"] and len(args) > 5 else None
            probe(args[1], int(args[3]), bwrap)
            return 0
        if args[:1] == ["--check"] and len(args) == 2:
            return 0 if isolated(int(args[1])) else 1
        inside = args[:1] == ["--inside"]
        if inside:
            args = args[1:]
        if len(args) >= 3 and args[0] == "--config" and args[2] in ("--prefix", "--shim"):
            run(args[1], args[2], args[3:], inside=inside)
        return _refuse(f"unexpected arguments {args[:3]!r}")
    except Refused as exc:
        return _refuse(str(exc))
    except Exception as exc:  # fail closed: nothing runs on an error of ours
        return _refuse(repr(exc))


if __name__ == "__main__":
    raise SystemExit(main())
