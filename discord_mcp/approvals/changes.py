"""File changes an agent asks to make, as a unified diff the owner can read on the card.

Claude Code's ``Write``, ``Edit`` and ``MultiEdit``, Gemini CLI's ``write_file`` and
``replace``, Codex's ``apply_patch`` (its own patch language, applied to the files and shown as
a unified diff: :mod:`.codex_patch`), and an ACP agent's ``edit`` tool calls (the ``diff``
items it sends with the request, ``acp_diffs``; else its raw input read as one of the shapes
above, ``acp_edit``). The file as it is now is read from disk (relative paths against the
agent's working directory, at most :data:`MAX_READ` bytes) so the diff shows the change in
context; a file that cannot be read is treated as empty and said so. Reading is blocking: call
:func:`file_change` off the event loop.

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

from discord_mcp.approvals import codex_patch

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
        return _patch(arguments, cwd)
    shown = arguments.get("acp_diffs")
    if isinstance(shown, list) and shown:
        return _acp_diffs([d for d in shown if isinstance(d, Mapping)])
    if arguments.get("acp_edit") is True:
        return _acp_edit(arguments, cwd)
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


def _patch(arguments: Mapping[str, Any], cwd: str) -> FileChange | None:
    patch = _string(arguments, "command", "patch", "input")
    if patch is None:
        return None
    files = _PATCH_FILE.findall(patch)
    paths = ", ".join(dict.fromkeys(path.strip() for _, path in files)) or "(files in the patch)"
    risks = ("deletes a file",) if any(kind == "Delete" for kind, _ in files) else ()
    if len(patch) > MAX_DIFF:
        return FileChange("Apply a patch", paths, _start(paths, patch, what="patch"), risks)
    try:
        diff = _codex_diff(patch, cwd)
    except codex_patch.PatchUnreadable as exc:
        note = f"# the patch could not be read against the files ({exc}); as the agent wrote it:"
        return FileChange("Apply a patch", paths, f"{note}\n{patch.strip(chr(10))}", risks)
    return FileChange("Apply a patch", paths, diff, risks)


def _codex_diff(patch: str, cwd: str) -> str:
    """A Codex patch as a unified diff against the files on disk.

    Raises:
        codex_patch.PatchUnreadable: it cannot be read, or does not fit the files.
    """
    pieces = []
    for change in codex_patch.parse(patch):
        if change.kind == "add":
            added = [line[1:] for line in change.lines if line.startswith("+")]
            after = "\n".join(added) + "\n" if added else ""
            pieces.append(_diff(change.path, "", after, None))
            continue
        before, note = _read(change.path, cwd)
        if note is not None:
            raise codex_patch.PatchUnreadable(note)
        if change.kind == "delete":
            pieces.append(_diff(change.path, before, "", None, deleted=True))
            continue
        after = codex_patch.apply_update(before, change.lines)
        pieces.append(_diff(change.path, before, after, None, renamed=change.move_to))
    return "\n".join(pieces) or "# no change"


def _acp_diffs(diffs: list[Mapping[str, Any]]) -> FileChange:
    """The edits an ACP agent showed with its request (``{path, old_text, new_text}``)."""
    paths = ", ".join(dict.fromkeys(str(d.get("path") or "?") for d in diffs))
    size = sum(len(str(d.get("old_text") or "")) + len(str(d.get("new_text") or "")) for d in diffs)
    if size > MAX_DIFF:
        text = "\n".join(str(d.get("new_text") or "") for d in diffs[:20])
        return FileChange("Edit a file", paths, _start(paths, text, what="edits"))
    pieces = []
    created = True
    for entry in diffs:
        old = entry.get("old_text")
        created = created and old is None
        path = str(entry.get("path") or "?")
        pieces.append(_diff(path, str(old or ""), str(entry.get("new_text") or ""), None))
    title = "Create a file" if created else "Edit a file"
    return FileChange(title, paths, "\n".join(pieces))


def _acp_edit(arguments: Mapping[str, Any], cwd: str) -> FileChange | None:
    """An ACP ``edit`` request without diff items: its raw input read as a known shape."""
    plain = {k: v for k, v in arguments.items() if k != "acp_edit"}
    if isinstance(plain.get("edits"), list):
        return file_change("MultiEdit", plain, cwd)
    if _string(plain, "old_string", "new_string") is not None:
        return file_change("Edit", plain, cwd)
    if _string(plain, "content") is not None:
        return file_change("Write", plain, cwd)
    return _patch(plain, cwd) if _string(plain, "patch", "input") else None


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


def _diff(
    path: str,
    before: str,
    after: str,
    note: str | None,
    *,
    deleted: bool = False,
    renamed: str | None = None,
) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path.lstrip('/')}" if before else "/dev/null",
        tofile="/dev/null" if deleted else f"b/{(renamed or path).lstrip('/')}",
        n=2,
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")
    if note:
        text = f"# {note}\n{text}"
    return text or "# no change"
