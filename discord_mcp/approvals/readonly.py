"""Which shell commands only read, for a project whose approvals are ``ask``.

Claude Code and Gemini CLI decide for themselves which calls need a person (reads do not);
Codex runs every command in its sandbox and asks about none of them, so for Codex runs we tell
reads from the rest ourselves. Conservative on purpose: a command reads only when it is one
plain program from :data:`READERS` (for ``git``, one of :data:`GIT_READERS`), with no chaining,
redirection or substitution, and none of the options that make a reader write or execute
(``find -delete``, ``sed -i``, ...). Anything else asks.
"""

from __future__ import annotations

import shlex

from discord_mcp.approvals.request import has_chaining

READERS = frozenset(
    {
        "ls", "cat", "head", "tail", "less", "more", "wc", "grep", "egrep", "fgrep", "rg", "ag",
        "find", "fd", "tree", "pwd", "echo", "printf", "stat", "file", "du", "df", "which",
        "whereis", "type", "id", "whoami", "uname", "date", "env", "printenv", "diff", "cmp",
        "sort", "uniq", "cut", "tr", "nl", "sed", "awk", "jq", "realpath", "dirname", "basename",
        "readlink", "md5sum", "sha1sum", "sha256sum", "true", "hostname", "ps", "test",
    }
)  # fmt: skip
GIT_READERS = frozenset(
    {"status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "blame", "describe",
     "remote", "tag", "shortlog", "grep", "config"}
)  # fmt: skip
_WRITING_OPTIONS = {
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"),
    "sed": ("-i", "--in-place"),
    "awk": ("-i",),
    "sort": ("-o", "--output"),
    "git": ("--output", "-o"),
    "env": (),
}


def is_read_only(command: str) -> bool:
    """Whether ``command`` only reads (see the module doc)."""
    if has_chaining(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if program not in READERS and program != "git":
        return False
    if program == "env" and len(words) > 1:
        return False  # env runs its argument
    if program == "awk" and any("system" in w or "print >" in w for w in words[1:]):
        return False
    for option in _WRITING_OPTIONS.get(program, ()):
        if any(w == option or w.startswith(option) for w in words[1:]):
            return False
    if program == "git":
        rest = [w for w in words[1:] if not w.startswith("-")]
        if not rest or rest[0] not in GIT_READERS:
            return False
        if rest[0] in ("branch", "tag", "remote", "config") and len(rest) > 1:
            return False  # naming a branch, tag or remote creates or changes it
    return True
