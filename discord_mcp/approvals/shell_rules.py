"""The session rule "Allow for this session" records for a shell command, and what it covers.

Theory. The owner allows one command they can read; the rule must not cover a command that
does more than that one in a way the card did not say. :class:`CommandRule` is the single
source of both the matcher (:meth:`CommandRule.covers`) and the sentence on the card
(:meth:`CommandRule.describe`), so the two cannot drift. A rule covers a later command only
when that command

- is one plain command (:func:`~discord_mcp.judge.words.split`): no environment
  assignment (``GIT_SSH_COMMAND=…``, ``LD_PRELOAD=…``), chaining, redirection, substitution
  or look-alike character; and nothing :func:`~discord_mcp.approvals.risk.command_risks`
  flags;
- runs the same program, written the same way (``git`` is not ``/usr/bin/git``: we do not
  know the agent's ``PATH``; ``env git`` and ``sudo git`` are other programs), with the same
  leading subcommand words (``git commit``, ``npm run build``) and no option before them
  (``git -C dir``, ``git -c key=value``);
- for ``git push``: pushes to the same remote (or, like the allowed one, names none), with
  only the options of a plain push (:data:`~discord_mcp.judge.git.PUSH`) and
  refspecs that neither force, delete, rename nor match many;
- for any other program: uses no option word the owner did not see on the allowed command,
  and only arguments of the kinds the owner saw (:func:`kinds`): its plain words and relative
  paths may differ, but an absolute path, a path under ``~`` or with ``..``, a ``+``/``@``
  argument or an address with another scheme (``file:`` where ``https:`` was allowed) is
  covered only when the allowed command had one of that kind.

Commands whose arguments are themselves programs (interpreters, shells, ``npx``, ``xargs``,
``sudo``, ``find``, ...), code or configuration (sed and jq scripts, editors and pagers, whose
``+`` arguments are commands, ``git config``/``npm config`` keys, ``exec``, ``foreach``,
``docker run``, ``git bisect run``, ``--exec``), a command with an assignment (an environment
prefix, or ``NAME=value`` among its arguments: ``make SHELL=...``), and a push beyond a plain
one get no rule: "Allow for this session" then covers that exact request again, and the card
says so. What a build or test tool runs (``make``, ``npm test``, ``pytest``) is the project's
own code, which the owner trusts by allowing the tool; the card names the tool, its options
and the kinds of its arguments.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from discord_mcp import i18n
from discord_mcp.approvals.risk import command_risks
from discord_mcp.judge import git
from discord_mcp.judge.words import split

PREFIX = "shell:"
"""How a command rule is stored (``shell:{...}``). Rules stored by earlier versions
(``cmd:<prefix>``) covered more than they said and are no longer honoured."""
MAX_LENGTH = 10_000
"""A longer command is never covered by a rule (nor offered one)."""
RUNNERS = frozenset(
    {
        "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
        "ruby", "perl", "php", "lua", "tclsh", "Rscript", "java", "osascript", "sh", "bash",
        "zsh", "dash", "ksh", "fish", "csh", "tcsh", "pwsh", "npx", "pnpx", "bunx", "uvx",
        "pipx", "env", "xargs", "sudo", "doas", "su", "nice", "nohup", "timeout", "time",
        "watch", "exec", "eval", "command", "builtin", "source", ".", "ssh", "script",
        "parallel", "strace", "ltrace", "gdb", "chroot", "unshare", "nsenter", "setsid",
        "stdbuf", "ionice", "flock", "awk", "gawk", "mawk", "nawk", "find", "dd",
        # code or configuration as arguments: scripts, editors' and pagers' + commands
        "sed", "gsed", "jq", "yq", "vi", "vim", "nvim", "view", "vimdiff", "gvim", "ex", "emacs",
        "emacsclient", "nano", "pico", "micro", "hx", "helix", "kak", "joe", "ed", "less",
        "more", "most",
    }
)  # fmt: skip
"""Programs whose arguments name what runs (a script, code, another program; ``find -exec``)
or, for ``dd``, what it does (``of=...`` is an operand): a rule for them would cover whatever
those arguments say, so they get none, not even as a subcommand word (``uv run python x.py``,
``poetry run bash``)."""
_CODE_WORDS = frozenset({"config", "exec", "foreach"})
"""Subcommand words whose arguments are configuration or a command (``git config``, ``npm
config set``, ``kubectl exec``, ``git submodule foreach``)."""
_CODE_SUBCOMMANDS = frozenset({("docker", "run"), ("podman", "run"), ("git", "bisect")})
_CODE_OPTION = "--exec"
"""An option whose value is a command (``git rebase --exec``, ``-x`` there): no rule."""
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*=")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(?=\S)")
PLAIN = "plain"
"""The kind of an argument that is a word or a relative path without ``..``."""
_MAX_FIXED = 3
_SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "npm", "yarn", "pnpm", "cargo", "go", "docker", "podman", "kubectl", "helm", "gh",
     "pip", "pip3", "uv", "poetry", "dotnet", "mvn", "gradle", "terraform", "brew", "apt",
     "apt-get", "systemctl", "rustup", "bundle", "gem", "composer", "swift", "flutter"}
)  # fmt: skip
"""Programs whose first word is a subcommand: their rules always fix one."""


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def kinds(word: str) -> frozenset[str]:
    """The kinds of an argument a rule tells apart (none: a plain word or relative path).

    ``assignment`` (``NAME=value``), ``scheme:<name>`` (``https://x``, ``file:/etc``),
    ``absolute`` (``/etc``), ``home`` (``~/x``), ``parent`` (a ``..`` part), ``plus``
    (``+cmd``: an editor's command) and ``at`` (``@file``: curl sends the file).
    """
    found: set[str] = set()
    if _ASSIGNMENT.match(word):
        found.add("assignment")
    scheme = _SCHEME.match(word)
    if scheme is not None:
        found.add("scheme:" + scheme.group(1).lower())
    if word.startswith("/"):
        found.add("absolute")
    if word.startswith("~"):
        found.add("home")
    if ".." in word.split("/"):
        found.add("parent")
    if word.startswith("+"):
        found.add("plus")
    if word.startswith("@"):
        found.add("at")
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class CommandRule:
    """A session rule for shell commands (see the module doc).

    Attributes:
        kind: ``push`` (``git push`` to one remote) or ``command`` (any other program).
        program: the first word, exactly as the owner saw it.
        fixed: the subcommand words that follow it (``("push",)``, ``("run", "build")``).
        options: for ``command``: the option words the owner saw.
        remote: for ``push``: the remote, or "" when the allowed push named none.
        arguments: for ``command``: the kinds of argument the owner saw (:func:`kinds`);
            plain words and relative paths are always covered.
    """

    kind: Literal["push", "command"]
    program: str
    fixed: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    remote: str = ""
    arguments: tuple[str, ...] = ()

    def to_rule(self) -> str:
        document = {
            "kind": self.kind,
            "program": self.program,
            "fixed": list(self.fixed),
            "options": list(self.options),
            "remote": self.remote,
            "arguments": list(self.arguments),
        }
        return PREFIX + json.dumps(document, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_rule(cls, rule: str) -> CommandRule | None:
        """The rule stored as ``rule``; None for anything else (a tool rule, an old rule)."""
        if not rule.startswith(PREFIX):
            return None
        try:
            document = json.loads(rule[len(PREFIX) :])
            kind = document["kind"]
            if kind not in ("push", "command"):
                return None
            return cls(
                kind=kind,
                program=str(document["program"]),
                fixed=tuple(str(w) for w in document["fixed"]),
                options=tuple(str(w) for w in document["options"]),
                remote=str(document.get("remote") or ""),
                arguments=tuple(str(w) for w in document["arguments"]),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def covers(self, command: str) -> bool:
        """Whether this rule answers ``command`` without asking (see the module doc)."""
        if len(command) > MAX_LENGTH:
            return False
        words = split(command)
        if words is None or command_risks(command) or words[0] != self.program:
            return False
        if self.kind == "push":
            if words[1:2] != ["push"]:
                return False
            push = git.plain_push(words[2:])
            return push is not None and (push[0] or "") == self.remote
        count = len(self.fixed)
        if tuple(words[1 : 1 + count]) != self.fixed:
            return False
        seen = set(self.options)
        allowed = set(self.arguments)
        return all(
            w in seen if w.startswith("-") else kinds(w) <= allowed for w in words[1 + count :]
        )

    def describe(self, lang: str = "en") -> str:
        """What the rule covers, for the card (in ``lang``)."""
        never = i18n.text(lang, "approval.rule_never")
        if self.kind == "push":
            remote = (
                f"`{self.remote}`"
                if self.remote
                else i18n.text(lang, "approval.rule_push_default_remote")
            )
            options = ", ".join(f"`{o}`" for o in sorted(git.PUSH.plain))
            core = i18n.text(
                lang,
                "approval.rule_push",
                program=f"`{self.program} push`",
                remote=remote,
                options=options,
                excluded=git.PUSH_NEVER,
            )
            return f"{core} ({never})"
        command = " ".join([self.program, *self.fixed])
        if self.options:
            listed = ", ".join(f"`{o}`" for o in self.options)
            options = i18n.text(lang, "approval.rule_only_options", options=listed)
        else:
            options = i18n.text(lang, "approval.rule_no_options")
        arguments = ", ".join(_kind_words(kind, lang) for kind in (PLAIN, *self.arguments))
        core = i18n.text(
            lang,
            "approval.rule_command",
            command=f"`{command}`",
            arguments=arguments,
            options=options,
        )
        return f"{core} ({never})"


def _kind_words(kind: str, lang: str) -> str:
    if kind.startswith("scheme:"):
        return i18n.text(lang, "approval.rule_kind_scheme", scheme=f"`{kind[7:]}:`")
    return i18n.text(lang, f"approval.rule_kind_{kind}")


def rule_for(command: str) -> CommandRule | None:
    """The rule "Allow for this session" records for ``command``; None when it would cover
    more than the owner can see (the rule then covers this exact request only)."""
    if len(command) > MAX_LENGTH:
        return None
    words = split(command)
    if words is None or command_risks(command):
        return None
    program = words[0]
    name = _basename(program)
    if name in RUNNERS or "`" in program:
        return None
    if name == "git" and words[1:2] == ["push"]:
        push = git.plain_push(words[2:])
        if push is None:
            return None
        return CommandRule("push", program, ("push",), remote=push[0] or "")
    fixed: list[str] = []
    for word in words[1 : 1 + _MAX_FIXED]:
        if not _SUBCOMMAND.match(word):
            break
        fixed.append(word)
    if name in _SUBCOMMAND_PROGRAMS and not fixed:
        return None  # an option before the subcommand (git -C dir ..., git -c key=value ...)
    if any(word in RUNNERS or word in _CODE_WORDS for word in fixed):
        return None
    if fixed and (name, fixed[0]) in _CODE_SUBCOMMANDS:
        return None
    rest = words[1 + len(fixed) :]
    options = tuple(sorted({w for w in rest if w.startswith("-")}))
    if any(o.split("=", 1)[0] == _CODE_OPTION for o in options) or (
        name == "git" and fixed[0] == "rebase" and any(_short_x(o) for o in options)
    ):
        return None
    seen: set[str] = set()
    for word in rest:
        if not word.startswith("-"):
            seen |= kinds(word)
    if "assignment" in seen:
        return None  # configuration: make SHELL=..., a program's NAME=value settings
    return CommandRule("command", program, tuple(fixed), options, arguments=tuple(sorted(seen)))


def _short_x(option: str) -> bool:
    return not option.startswith("--") and "x" in option


def covers(rule: str, command: str) -> bool:
    """Whether the stored ``rule`` covers ``command`` (False for any rule not of this kind)."""
    found = CommandRule.from_rule(rule)
    return found is not None and found.covers(command)


def describe(rule: str, lang: str = "en") -> str:
    """The card's words for the stored ``rule`` ("" when it is no command rule)."""
    found = CommandRule.from_rule(rule)
    return found.describe(lang) if found is not None else ""
