"""Codex's ``apply_patch`` input as a unified diff the owner can read (issue 35).

Codex writes its edits in a patch language of its own::

    *** Begin Patch
    *** Add File: path          (then every line starts with "+")
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path       (optional, right after an Update)
    @@ optional context line    (then " " context, "-" removed, "+" added lines)
    *** End of File             (optional)
    *** End Patch

Each file is applied here to the file as it is on disk (relative paths against the agent's
working directory; at most :data:`~.changes.MAX_READ` bytes) and shown as a unified diff with
line numbers. A chunk whose lines are not in the file (it changed meanwhile, or the patch is
wrong) makes the whole patch shown as the agent wrote it, with a note: never a diff that
claims more than is known. Blocking (reads files): call it off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_ADD, _DELETE, _UPDATE, _MOVE = (
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
)
_EOF = "*** End of File"


@dataclass
class _File:
    kind: str  # add | delete | update
    path: str
    move_to: str | None = None
    lines: list[str] = field(default_factory=list)


class PatchUnreadable(ValueError):
    """The patch is not in Codex's language, or does not fit the files."""


def parse(patch: str) -> list[_File]:
    """The files of a Codex patch.

    Raises:
        PatchUnreadable: it is not one.
    """
    lines = patch.strip("\n").split("\n")
    if not lines or lines[0].strip() != _BEGIN:
        raise PatchUnreadable("it does not start with *** Begin Patch")
    files: list[_File] = []
    for line in lines[1:]:
        if line.strip() == _END:
            return files
        if line.startswith(_ADD):
            files.append(_File("add", line[len(_ADD) :].strip()))
        elif line.startswith(_DELETE):
            files.append(_File("delete", line[len(_DELETE) :].strip()))
        elif line.startswith(_UPDATE):
            files.append(_File("update", line[len(_UPDATE) :].strip()))
        elif line.startswith(_MOVE) and files and files[-1].kind == "update":
            files[-1].move_to = line[len(_MOVE) :].strip()
        elif files:
            files[-1].lines.append(line)
        elif line.strip():
            raise PatchUnreadable(f"a line outside any file: {line[:60]!r}")
    raise PatchUnreadable("it does not end with *** End Patch")


def paths(patch: str) -> list[str]:
    """The files a patch touches, in order (empty when it is not readable)."""
    try:
        return [f.path for f in parse(patch)]
    except PatchUnreadable:
        return []


def apply_update(before: str, body: list[str]) -> str:
    """The file ``before`` with an Update's chunks applied.

    Raises:
        PatchUnreadable: a chunk's lines are not in the file.
    """
    ends_with_newline = before.endswith("\n") or not before
    current = before.split("\n")
    if current and current[-1] == "" and before.endswith("\n"):
        current.pop()
    position = 0
    for header, chunk in _chunks(body):
        old = [line[1:] for line in chunk if line[:1] in (" ", "-")]
        new = [line[1:] for line in chunk if line[:1] in (" ", "+")]
        if header:
            found = _find(current, [header], position)
            if found is not None:
                position = found + 1
        at = _find(current, old, position) if old else len(current)
        if at is None:
            raise PatchUnreadable("a chunk's lines are not in the file as it is now")
        current[at : at + len(old)] = new
        position = at + len(new)
    text = "\n".join(current)
    return text + "\n" if ends_with_newline and current else text


def _chunks(body: list[str]) -> list[tuple[str, list[str]]]:
    chunks: list[tuple[str, list[str]]] = []
    for line in body:
        if line.startswith("@@"):
            chunks.append((line[2:].strip(), []))
        elif line.strip() == _EOF:
            continue
        elif line[:1] in (" ", "-", "+") or line == "":
            if not chunks:
                chunks.append(("", []))
            chunks[-1][1].append(line if line else " ")
        else:
            raise PatchUnreadable(f"a line that is no context, removal or addition: {line[:60]!r}")
    return [c for c in chunks if c[1]]


def _find(lines: list[str], wanted: list[str], start: int) -> int | None:
    """Where ``wanted`` is in ``lines`` at or after ``start`` (exactly, then ignoring trailing
    whitespace, as Codex does)."""
    for loose in (False, True):
        for at in range(start, len(lines) - len(wanted) + 1):
            if all(_same(lines[at + i], w, loose) for i, w in enumerate(wanted)):
                return at
    return None


def _same(line: str, wanted: str, loose: bool) -> bool:
    return line.rstrip() == wanted.rstrip() if loose else line == wanted
