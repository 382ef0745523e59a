"""The session rule "Allow for this session" records for a shell command, and what it covers.

Theory. The owner allows one command they can read; the rule must not cover a command that
does more than that one in a way the card did not say. :class:`CommandRule` is the single
source of both the matcher (:meth:`CommandRule.covers`) and the sentence on the card
(:meth:`CommandRule.describe`), so the two cannot drift. A rule covers a later command only
when that command

- is one plain command (:func:`~discord_mcp.approvals.shell.words.split`): no environment
  assignment (``GIT_SSH_COMMAND=…``, ``LD_PRELOAD=…``), chaining, redirection, substitution
  or look-alike character; and nothing :func:`~discord_mcp.approvals.risk.command_risks`
  flags;
- runs the same program, written the same way (``git`` is not ``/usr/bin/git``: we do not
  know the agent's ``PATH``; ``env git`` and ``sudo git`` are other programs), with the same
  leading subcommand words (``git commit``, ``npm run build``) and no option before them
  (``git -C dir``, ``git -c key=value``);
- for ``git push``: pushes to the same remote (or, like the allowed one, names none), with
  only the options of a plain push (:data:`~discord_mcp.approvals.shell.git.PUSH`) and
  refspecs that neither force, delete, rename nor match many;
- for any other program: uses no option word the owner did not see on the allowed command
  (its arguments may differ).

Commands whose arguments are themselves programs (interpreters, shells, ``npx``, ``xargs``,
``sudo``, ``find``, ...), a command with an assignment, and a push beyond a plain one get no
rule: "Allow for this session" then covers that exact request again, and the card says so.
What a build or test tool runs (``make``, ``npm test``, ``pytest``) is the project's own code,
which the owner trusts by allowing the tool; the card names the tool and its options.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from discord_mcp import i18n
from discord_mcp.approvals.risk import command_risks
from discord_mcp.approvals.shell import git
from discord_mcp.approvals.shell.words import split

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
        "stdbuf", "ionice", "flock", "awk", "gawk", "mawk", "find", "dd",
    }
)  # fmt: skip
"""Programs whose arguments name what runs (a script, code, another program; ``find -exec``)
or, for ``dd``, what it does (``of=...`` is an operand): a rule for them would cover whatever
those arguments say, so they get none, not even as a subcommand word (``uv run python x.py``,
``poetry run bash``)."""
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")
_MAX_FIXED = 3
_SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "npm", "yarn", "pnpm", "cargo", "go", "docker", "podman", "kubectl", "helm", "gh",
     "pip", "pip3", "uv", "poetry", "dotnet", "mvn", "gradle", "terraform", "brew", "apt",
     "apt-get", "systemctl", "rustup", "bundle", "gem", "composer", "swift", "flutter"}
)  # fmt: skip
"""Programs whose first word is a subcommand: their rules always fix one."""


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class CommandRule:
    """A session rule for shell commands (see the module doc).

    Attributes:
        kind: ``push`` (``git push`` to one remote) or ``command`` (any other program).
        program: the first word, exactly as the owner saw it.
        fixed: the subcommand words that follow it (``("push",)``, ``("run", "build")``).
        options: for ``command``: the option words the owner saw.
        remote: for ``push``: the remote, or "" when the allowed push named none.
    """

    kind: Literal["push", "command"]
    program: str
    fixed: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    remote: str = ""

    def to_rule(self) -> str:
        document = {
            "kind": self.kind,
            "program": self.program,
            "fixed": list(self.fixed),
            "options": list(self.options),
            "remote": self.remote,
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
        return all(not w.startswith("-") or w in seen for w in words[1 + count :])

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
        core = i18n.text(lang, "approval.rule_command", command=f"`{command}`", options=options)
        return f"{core} ({never})"


def rule_for(command: str) -> CommandRule | None:
    """The rule "Allow for this session" records for ``command``; None when it would cover
    more than the owner can see (the rule then covers this exact request only)."""
    if len(command) > MAX_LENGTH:
        return None
    words = split(command)
    if words is None or command_risks(command):
        return None
    program = words[0]
    if _basename(program) in RUNNERS or "`" in program:
        return None
    if _basename(program) == "git" and words[1:2] == ["push"]:
        push = git.plain_push(words[2:])
        if push is None:
            return None
        return CommandRule("push", program, ("push",), remote=push[0] or "")
    fixed: list[str] = []
    for word in words[1 : 1 + _MAX_FIXED]:
        if not _SUBCOMMAND.match(word):
            break
        fixed.append(word)
    if _basename(program) in _SUBCOMMAND_PROGRAMS and not fixed:
        return None  # an option before the subcommand (git -C dir ..., git -c key=value ...)
    if any(word in RUNNERS for word in fixed):
        return None
    rest = words[1 + len(fixed) :]
    options = tuple(sorted({w for w in rest if w.startswith("-")}))
    return CommandRule("command", program, tuple(fixed), options)


def covers(rule: str, command: str) -> bool:
    """Whether the stored ``rule`` covers ``command`` (False for any rule not of this kind)."""
    found = CommandRule.from_rule(rule)
    return found is not None and found.covers(command)


def describe(rule: str, lang: str = "en") -> str:
    """The card's words for the stored ``rule`` ("" when it is no command rule)."""
    found = CommandRule.from_rule(rule)
    return found.describe(lang) if found is not None else ""
