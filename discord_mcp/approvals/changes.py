"""File changes an agent asks to make, as a unified diff the owner can read on the card.

Claude Code's ``Write``, ``Edit`` and ``MultiEdit``, Gemini CLI's ``write_file`` and
``replace``, and Codex's ``apply_patch`` (whose input already is a patch). The file as it is
now is read from disk (relative paths against the agent's working directory, at most
:data:`MAX_READ` bytes) so the diff shows the change in context; a file that cannot be read is
treated as empty and said so. Reading is blocking: call :func:`file_change` off the event loop.

Diffs are computed only for inputs up to :data:`MAX_DIFF` characters (a diff of a 35 MB write
would cost seconds and hundreds of megabytes); a larger change shows the start of what it
writes, and says so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_READ = 1_000_000
MAX_DIFF = 1_000_000
"""Larger new content (or edits) is shown in part instead of as a diff."""
_SHOWN_LINES = 80
_SHOWN_CHARS = 8000
WRITE_TOOLS = frozenset({"Write", "write_file"})
EDIT_TOOLS = frozenset({"Edit", "replace"})
MULTI_EDIT_TOOLS = frozenset({"MultiEdit"})
PATCH_TOOLS = frozenset({"apply_patch"})
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class FileChange:
    title: str
    path: str
    diff: str
    risks: tuple[str, ...] = ()


def file_change(tool: str, arguments: Mapping[str, Any], cwd: str) -> FileChange | None:
    """The change ``tool`` would make with ``arguments``, or None if it is no file change."""
    if tool in PATCH_TOOLS:
        return _patch(arguments)
    path = _string(arguments, "file_path", "path", "absolute_path")
    if path is None:
        return None
    if tool in WRITE_TOOLS:
        content = _string(arguments, "content") or ""
        if len(content) > MAX_DIFF:
            return FileChange("Write a file", path, _start(path, content))
        before, note = _read(path, cwd)
        title = "Write a file" if before or note else "Create a file"
        return FileChange(title, path, _diff(path, before, content, note))
    if tool in EDIT_TOOLS:
        edits = [arguments]
    elif tool in MULTI_EDIT_TOOLS and isinstance(arguments.get("edits"), list):
        edits = [e for e in arguments["edits"] if isinstance(e, Mapping)]
    else:
        return None
    size = sum(
        len(_string(e, "old_string") or "") + len(_string(e, "new_string") or "") for e in edits
    )
    if size > MAX_DIFF or len(edits) > 1000:
        text = "\n".join(_string(e, "new_string") or "" for e in edits[:20])
        return FileChange("Edit a file", path, _start(path, text, what="edits"))
    before, note = _read(path, cwd)
    after = before
    missing = 0
    for edit in edits:
        old = _string(edit, "old_string") or ""
        new = _string(edit, "new_string") or ""
        if old and old in after:
            count = -1 if edit.get("replace_all") or edit.get("allow_multiple") else 1
            after = after.replace(old, new, count)
        else:
            missing += 1
    if missing:
        # The text to replace is not in the file as it is now: show the edit itself.
        pieces = [
            _diff(path, _string(e, "old_string") or "", _string(e, "new_string") or "", None)
            for e in edits
        ]
        note = "the text to replace was not found in the file as it is now; the edit alone:"
        return FileChange("Edit a file", path, f"# {note}\n" + "\n".join(pieces))
    return FileChange("Edit a file", path, _diff(path, before, after, note))


def _patch(arguments: Mapping[str, Any]) -> FileChange | None:
    patch = _string(arguments, "command", "patch", "input")
    if patch is None:
        return None
    files = _PATCH_FILE.findall(patch)
    paths = ", ".join(dict.fromkeys(path.strip() for _, path in files)) or "(files in the patch)"
    risks = ("deletes a file",) if any(kind == "Delete" for kind, _ in files) else ()
    shown = patch if len(patch) <= MAX_DIFF else patch[:MAX_DIFF]
    return FileChange("Apply a patch", paths, shown.strip("\n"), risks)


def _string(arguments: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str):
            return value
    return None


def _read(path: str, cwd: str) -> tuple[str, str | None]:
    """The file's text now, and a note when it could not be read ("" and None when absent)."""
    target = Path(path)
    if not target.is_absolute() and cwd:
        target = Path(cwd) / target
    try:
        with target.open("rb") as handle:
            raw = handle.read(MAX_READ + 1)
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        return "", f"the file could not be read ({exc.strerror or exc})"
    if len(raw) > MAX_READ:
        return "", "the file is too large to show; the diff treats it as empty"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return "", "the file is binary; the diff treats it as empty"


def _start(path: str, text: str, *, what: str = "new content") -> str:
    """The first lines of a change too large to diff, as additions, with a note."""
    head = text[:_SHOWN_CHARS].splitlines()[:_SHOWN_LINES]
    note = (
        f"# the {what} is {len(text):,} characters, too large to compare with the file; "
        f"its first {len(head)} lines:"
    )
    return "\n".join([note, f"+++ b/{path.lstrip('/')}", *(f"+{line}" for line in head)])


def _diff(path: str, before: str, after: str, note: str | None) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path.lstrip('/')}" if before else "/dev/null",
        tofile=f"b/{path.lstrip('/')}",
        n=2,
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")
    if note:
        text = f"# {note}\n{text}"
    return text or "# no change"
