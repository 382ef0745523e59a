"""A run's patch as messages: ``diff`` code blocks when short, else attached ``.patch`` files.

Theory (Discord's limits: 2000 characters a message, 10 files a message, 10 MiB a file for a
bot without boosts). A text patch of at most :data:`BLOCK_MESSAGES` messages of code blocks
is posted as such, cut at line ends (a line longer than a message is cut itself), each block
fenced so the patch's own backticks cannot close it. Anything longer, or binary, is attached:
one ``<run_id>.patch``, or parts of at most :data:`PART_BYTES` cut at line ends, ten to a
message; a patch beyond :data:`MAX_ATTACHED` is not posted (the message says where it is).
The patch is the agent's work: it is scanned for secrets before it is sent (the bot's token
and whatever looks like a credential are redacted), in the blocks and in the files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from discord_mcp.approvals.cards import fence
from discord_mcp.outbound.redaction import redact
from discord_mcp.transport.rest import Upload

MESSAGE_LIMIT = 2000
BLOCK_MESSAGES = 3
"""At most this many messages of code blocks; a longer patch is attached."""
PART_BYTES = 8 * 1024 * 1024
FILES_PER_MESSAGE = 10
MAX_ATTACHED = 5 * FILES_PER_MESSAGE * PART_BYTES
_ROOM = MESSAGE_LIMIT - len("```diff\n\n```") - 40


@dataclass(frozen=True)
class Post:
    """One message to post: its text and the files it carries."""

    content: str
    files: tuple[Upload, ...] = ()


def patch_posts(
    run_id: str, patch: bytes, *, head: str, known_secrets: Iterable[str] = ()
) -> list[Post]:
    """The messages that show ``patch`` (see the module doc); ``head`` opens the first."""
    if not patch.strip():
        return [Post(f"{head}\nThe run changed nothing.")]
    text = patch.decode("utf-8", errors="replace")
    clean = redact(text, tuple(known_secrets))
    text = clean.text
    note = " (secrets in it were redacted)" if clean.changed else ""
    binary = "GIT binary patch" in text or "\0" in text
    fenced = [] if binary else [fence(b, "diff") for b in _blocks(text)]
    if fenced and len(fenced) <= BLOCK_MESSAGES and max(map(len, fenced)) <= MESSAGE_LIMIT:
        first = f"{head}{note}\n{fenced[0]}"
        if len(first) <= MESSAGE_LIMIT:
            return [Post(first), *(Post(b) for b in fenced[1:])]
        if len(fenced) < BLOCK_MESSAGES:
            return [Post(head + note), *(Post(b) for b in fenced)]
    data = text.encode("utf-8")
    if len(data) > MAX_ATTACHED:
        size = f"{len(data) / 1_048_576:.0f} MiB"
        return [
            Post(
                f"{head}{note}\nThe patch is {size}, too large to post: it is in the run's folder "
                f"(`runs/{run_id}/artifacts/changes.patch`)."
            )
        ]
    parts = _parts(data)
    names = (
        [f"{run_id}.patch"]
        if len(parts) == 1
        else [f"{run_id}.part{n + 1}of{len(parts)}.patch" for n in range(len(parts))]
    )
    uploads = [Upload(name, part, "text/x-diff") for name, part in zip(names, parts, strict=True)]
    posts = []
    for start in range(0, len(uploads), FILES_PER_MESSAGE):
        batch = tuple(uploads[start : start + FILES_PER_MESSAGE])
        content = f"{head}{note}\nThe patch is attached." if start == 0 else ""
        posts.append(Post(content, batch))
    return posts


def _blocks(text: str) -> list[str]:
    """``text`` cut at line ends into pieces that fit a code block in one message."""
    blocks: list[str] = []
    current: list[str] = []
    used = 0
    for line in text.rstrip("\n").split("\n"):
        while len(line) > _ROOM:  # a line longer than a message: cut it itself
            if current:
                blocks.append("\n".join(current))
                current, used = [], 0
            blocks.append(line[:_ROOM])
            line = line[_ROOM:]
        if used + len(line) + 1 > _ROOM and current:
            blocks.append("\n".join(current))
            current, used = [], 0
        current.append(line)
        used += len(line) + 1
        if len(blocks) > BLOCK_MESSAGES:
            return blocks  # too long for blocks anyway: stop counting
    if current:
        blocks.append("\n".join(current))
    return blocks


def _parts(data: bytes) -> list[bytes]:
    """``data`` in pieces of at most :data:`PART_BYTES`, cut after a newline where one is."""
    parts = []
    while len(data) > PART_BYTES:
        cut = data.rfind(b"\n", 0, PART_BYTES)
        cut = cut + 1 if cut > 0 else PART_BYTES
        parts.append(data[:cut])
        data = data[cut:]
    parts.append(data)
    return parts
