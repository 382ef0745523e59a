"""Which calls of a CLI's own read and web tools may run without a card in ``ask`` mode.

A read is harmless unless it reads a secret, and a fetch unless it carries data out; both are
decided here from the call alone, at once, without Discord (the hook answers before loading it).

Reads (Gemini CLI's ``read_file``, ``read_many_files``, ``list_directory``, ``glob``,
``grep_search`` and ``search_file_content``; Claude Code's ``Read``, ``Grep``, ``Glob``,
``LS``, ``NotebookRead``): every path the call names (the file, the directory, the glob and
include patterns) is checked with the shell judge's own test,
:func:`discord_mcp.judge.secrets.looks_secret`, as written, once made absolute
against the agent's directory (``~`` expanded, ``..`` and repeated ``/`` folded), and once with
its links followed; any of them looking secret asks. A value that is not text asks.
``read_many_files`` reads whole directories and globs, so it runs unasked only for a list of
plain paths of existing files with Gemini's default excludes on; a search that reads ignored
files (``no_ignore``) asks. What this does not see, like the shell judge: a directory searched
recursively (``grep_search`` in ``.``) is not looked into; Gemini CLI's searches skip the files
``.gitignore`` names.

Fetches: ``google_web_search`` always asks (its query is text the model chose, sent out), and
``web_fetch`` runs unasked only when its whole prompt is one bare ``https://host/`` (lower-case
DNS name with a dot, no port, no user, no path, query or fragment, no words around it): anything
else may carry data in its path, query, fragment, user or instructions, and asks. The host name
itself is sent (a DNS name can carry a few bytes in its labels): that is what "bare" leaves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

GEMINI_READS = frozenset(
    {
        "read_file",
        "read_many_files",
        "list_directory",
        "glob",
        "grep_search",
        "search_file_content",
    }
)
GEMINI_WEB = frozenset({"web_fetch", "google_web_search"})
CLAUDE_READS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead"})
PATH_KEYS = (
    "file_path",
    "dir_path",
    "path",
    "notebook_path",
    "pattern",
    "include",
    "include_pattern",
    "glob",
)
"""Arguments that name what a read tool reads (a grep's ``pattern`` is text: not one of them)."""
_SEARCHES = frozenset({"grep_search", "search_file_content", "Grep"})
_GLOB = re.compile(r"[*?\[\]{}]")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
BARE_HTTPS = re.compile(rf"https://(?:{_LABEL}\.)+[a-z](?:[a-z0-9-]{{0,61}}[a-z0-9])?/?")
"""The one form of ``web_fetch`` prompt that skips the card."""


def gemini_asks(tool: str, arguments: Mapping[str, Any], cwd: str) -> bool:
    """Whether Gemini CLI's read or web ``tool`` call asks the owner in ``ask`` mode."""
    if tool == "google_web_search":
        return True
    if tool == "web_fetch":
        prompt = arguments.get("prompt")
        return not (isinstance(prompt, str) and BARE_HTTPS.fullmatch(prompt.strip()))
    if tool == "read_many_files":
        return _many_files_ask(arguments, cwd)
    return reads_secret(tool, arguments, cwd)


def reads_secret(tool: str, arguments: Mapping[str, Any], cwd: str) -> bool:
    """Whether a read ``tool`` call names a secret (or something not a path: in doubt)."""
    if tool in _SEARCHES and arguments.get("no_ignore"):
        return True
    for key in PATH_KEYS:
        if key == "pattern" and tool in _SEARCHES:
            continue  # what is searched for, not where
        if key not in arguments:
            continue
        value = arguments[key]
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) for v in values):
            return True
        if any(_secret_path(v, cwd) for v in values):
            return True
    return False


def _many_files_ask(arguments: Mapping[str, Any], cwd: str) -> bool:
    include = arguments.get("include")
    if arguments.get("useDefaultExcludes") is False or not isinstance(include, list) or not include:
        return True
    for entry in include:
        if not isinstance(entry, str) or not entry or _GLOB.search(entry):
            return True
        if _secret_path(entry, cwd) or not os.path.isfile(_absolute(entry, cwd)):
            return True  # a directory is read whole; a missing file is in doubt
    return False


def _absolute(word: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd or os.sep, os.path.expanduser(word)))


def _secret_path(word: str, cwd: str) -> bool:
    looks_secret = _looks_secret()
    if "\x00" in word:
        return True
    absolute = _absolute(word, cwd)
    if looks_secret(word) or looks_secret(absolute):
        return True
    try:
        real = os.path.realpath(absolute)
    except (OSError, ValueError):
        return True
    return looks_secret(real)


def _looks_secret() -> Callable[[str], bool]:
    """The judge's ``looks_secret`` (:mod:`discord_mcp.judge` is light to import)."""
    from discord_mcp.judge.secrets import looks_secret

    return looks_secret
