"""Which files an agent may send to Discord, read and checked before anything is posted.

A file goes out only if, with every symlink resolved, it is a regular file inside the
session's project directory (the server's working directory) or inside a directory the owner
listed in ``DISCORD_MCP_FILE_ROOTS``; and never if it is inside the state directory (but for a
run's own worktree there, when that is its project directory) or looks like a place secrets
live (:data:`DENIED_NAMES`, :data:`DENIED_DIRS`), wherever it is: every directory from the root
(its own name included) down to the file is checked, and the directories above a root against
:data:`CREDENTIAL_DIRS`; a name is judged with its compression suffixes too
(``credentials.json.gz``). Text files are scanned like messages
(:mod:`discord_mcp.outbound.redaction`) and sent redacted; compressed files and archives are
looked inside, and other binary files searched for the token (:mod:`.archives`).

The check and the read cannot be split by a swap: the file is opened from the checked root one
directory at a time, never following a symlink (``openat`` with ``O_NOFOLLOW|O_DIRECTORY``, and
``O_NOFOLLOW`` on the file), and the opened file must be the one checked (same device and
inode), so a directory replaced by a symlink in between sends nothing.

Discord's limits for a bot's message (reference: "Uploading Files" and "Create Message"): at
most :data:`MAX_FILES` files, each at most :data:`MAX_FILE_BYTES` (the default upload limit; a
boosted server allows more, but a bot cannot count on it), and at most
:data:`MAX_REQUEST_BYTES` for the whole request. Larger requests fail with HTTP 413 (40005),
so they are refused here with the limits in the sentence.
"""

from __future__ import annotations

import errno
import fnmatch
import mimetypes
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discord_mcp.errors import FileRefused
from discord_mcp.outbound.archives import check_packed, member_parts
from discord_mcp.outbound.redaction import redact
from discord_mcp.transport.rest import Upload

MAX_FILES = 10
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_REQUEST_BYTES = 25 * 1024 * 1024
LIMITS = "Discord allows a bot at most 10 files per message, each at most 10 MiB and 25 MiB in all"

DENIED_DIRS = frozenset(
    {".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".git", ".claude", ".codex"}
    | {".gemini", ".password-store", ".terraform.d", "gcloud", "keyrings"}
)
"""Directory names whose contents are never sent, wherever they are."""
CREDENTIAL_DIRS = DENIED_DIRS - {".git", ".claude", ".codex", ".gemini"}
"""The ones a root may not even be under (agents keep worktrees under the others)."""
DENIED_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".claude.json",
    "credentials",
    "credentials.json",
    "*credentials*.json",
    "service-account*.json",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "secrets.*",
    "*.tfstate",
)
"""File names (shell patterns, case-insensitive) that usually hold secrets."""
ALLOWED_NAMES = (".env.example", ".env.sample", ".env.template", ".env.dist")
"""Exceptions to :data:`DENIED_NAMES`: templates without values."""
PACKED_SUFFIXES = {
    ".gz": "",
    ".gzip": "",
    ".bz2": "",
    ".xz": "",
    ".lzma": "",
    ".zst": "",
    ".zip": "",
    ".7z": "",
    ".rar": "",
    ".tar": "",
    ".tgz": ".tar",
    ".tbz2": ".tar",
    ".txz": ".tar",
}
"""Suffixes of compressed files and archives, and what they stand for once removed."""


@dataclass(frozen=True, slots=True)
class FilePolicy:
    """Where files may come from.

    Attributes:
        project_dir: the session's project directory (the server's working directory).
        roots: more directories the owner allowed (``DISCORD_MCP_FILE_ROOTS``).
        state_dir: the state directory, never a source.
    """

    project_dir: Path
    state_dir: Path
    roots: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class Prepared:
    """Files ready to upload, how to describe them, and what was redacted in them."""

    uploads: tuple[Upload, ...] = ()
    described: tuple[dict[str, Any], ...] = ()
    redacted: tuple[str, ...] = field(default=())


def prepare(paths: Sequence[str], policy: FilePolicy, known_secrets: Iterable[str]) -> Prepared:
    """Check and read ``paths`` (blocking: run it in a thread).

    Raises:
        FileRefused: a path is outside the allowed directories, is not a file, looks like a
            secret, or the files break Discord's count or size limits.
    """
    if not paths:
        return Prepared()
    if len(paths) > MAX_FILES:
        raise FileRefused(f"{len(paths)} files given. {LIMITS}: send fewer, or zip them")
    secrets = tuple(known_secrets)
    uploads: list[Upload] = []
    described: list[dict[str, Any]] = []
    redacted: list[str] = []
    total = 0
    for index, raw in enumerate(paths):
        path, root = _checked(raw, policy)
        data = _read(path, root, raw)
        name = redact(path.name, secrets)
        redacted.extend(
            f"{kind} in file name (files[{index}])" for kind in dict.fromkeys(name.kinds)
        )
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        text = _as_text(data)
        if text is None:
            check_packed(data, raw, secrets, secret_place)
        else:
            clean = redact(text, secrets)
            if clean.changed:
                data = clean.text.encode("utf-8")
                redacted.extend(
                    f"{kind} in file {name.text}" for kind in dict.fromkeys(clean.kinds)
                )
            if content_type == "application/octet-stream":
                content_type = "text/plain"
        total += len(data)
        if total > MAX_REQUEST_BYTES:
            raise FileRefused(
                f"the files add up to more than 25 MiB. {LIMITS}: send them in several "
                "messages, or compress them"
            )
        uploads.append(Upload(name.text, data, content_type))
        described.append(
            {
                "path": str(path),
                "filename": name.text,
                "size": len(data),
                "content_type": content_type,
            }
        )
    return Prepared(tuple(uploads), tuple(described), tuple(redacted))


def check_path(raw: str, policy: FilePolicy) -> Path:
    """The resolved path of ``raw`` (relative paths are the project's), if it may be sent.

    Raises:
        FileRefused: with the reason.
    """
    return _checked(raw, policy)[0]


def _checked(raw: str, policy: FilePolicy) -> tuple[Path, Path]:
    """The resolved path and the root it is inside."""
    if "\0" in raw:
        raise FileRefused(f"{raw!r}: a path cannot contain a NUL byte")
    given = Path(raw).expanduser()
    if not given.is_absolute():
        given = policy.project_dir / given
    try:
        path = given.resolve(strict=True)
    except (OSError, RuntimeError):
        raise FileRefused(f"{raw}: no such file (relative paths are the project's)") from None
    for name in (given.name, path.name):
        if _denied_name(name):
            raise FileRefused(
                f"{raw}: {name} usually holds secrets, so it is never sent to Discord. Copy "
                "what the owner needs into a new file without credentials, and send that"
            )
    roots = [_resolved(policy.project_dir), *(_resolved(r) for r in policy.roots)]
    state = _resolved(policy.state_dir)
    # A run in a worktree of its own (issue 35) works under <state>/worktrees/<run_id>: its
    # own worktree is its project; the rest of the state directory never is.
    own_worktree = _inside(roots[0], state / "worktrees") and _inside(path, roots[0])
    if _inside(path, state) and not own_worktree:
        raise FileRefused(f"{raw}: files in the discord-mcp state directory are never sent")
    root = next((r for r in roots if _inside(path, r)), None)
    if root is None:
        raise FileRefused(
            f"{raw} is outside the project directory {roots[0]}: files are sent only from the "
            "project (or from directories the owner lists in DISCORD_MCP_FILE_ROOTS). Copy it "
            "into the project first if the owner should see it"
        )
    # The directories from the root (its own name included) to the file, as resolved and as the
    # agent named them (a link named innocently may live in a denied directory, or point into
    # one), and the root's parents (a project inside ~/.ssh).
    between = [
        root.name,
        *path.relative_to(root).parts[:-1],
        *_parts_below(given, policy.project_dir),
    ]
    denied = next((p for p in between if p.lower() in DENIED_DIRS), None)
    if denied is None:
        denied = next((p for p in root.parent.parts if p.lower() in CREDENTIAL_DIRS), None)
    if denied is not None:
        raise FileRefused(
            f"{raw}: files under {denied}/ hold keys or credentials and are never sent to Discord"
        )
    if not path.is_file():
        raise FileRefused(f"{raw} is not a regular file")
    return path, root


def _parts_below(given: Path, project_dir: Path) -> tuple[str, ...]:
    try:
        return given.relative_to(project_dir).parts[:-1]
    except ValueError:
        return ()


def _denied_name(name: str) -> bool:
    """Whether ``name`` usually holds secrets, as it is or without its compression suffixes
    (``.env.gz``, ``credentials.json.gz``, ``keys.tgz`` -> ``keys.tar`` -> ``keys``)."""
    lowered = name.lower()
    while True:
        if lowered not in ALLOWED_NAMES and any(
            fnmatch.fnmatchcase(lowered, pattern) for pattern in DENIED_NAMES
        ):
            return True
        stem, dot, suffix = lowered.rpartition(".")
        if not dot or not stem or f".{suffix}" not in PACKED_SUFFIXES:
            return False
        lowered = stem + PACKED_SUFFIXES[f".{suffix}"]


def secret_place(path: str) -> str | None:
    """The part of a path inside an archive that usually holds secrets (a directory as
    ``name/``, or the file's name), or None."""
    parts = member_parts(path)
    for part in parts[:-1]:
        if part.lower() in DENIED_DIRS:
            return f"{part}/"
    if parts and (parts[-1].lower() in DENIED_DIRS or _denied_name(parts[-1])):
        return parts[-1]
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):
        return path


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _read(path: Path, root: Path, raw: str) -> bytes:
    try:
        checked = path.stat()
        if checked.st_size > MAX_FILE_BYTES:
            raise FileRefused(
                f"{raw} is {checked.st_size / 1024 / 1024:.1f} MiB. {LIMITS}: compress it, or "
                "send the part that matters"
            )
        fd = _open_inside(root, path.relative_to(root).parts)
        with os.fdopen(fd, "rb") as handle:
            opened = os.fstat(handle.fileno())
            if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino) or (
                not stat.S_ISREG(opened.st_mode)
            ):
                raise FileRefused(f"{raw} changed while it was being sent; nothing was sent")
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileRefused(
                f"{raw} changed while it was being sent (a symlink appeared); nothing was sent"
            ) from None
        raise FileRefused(f"{raw} cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileRefused(f"{raw} is larger than 10 MiB. {LIMITS}")
    return data


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_inside(root: Path, parts: Sequence[str]) -> int:
    """The file at ``root/parts...``, opened one component at a time from ``root`` without
    following any symlink (``O_NONBLOCK``: a FIFO swapped in does not hang the open)."""
    fd = os.open(root, _DIRECTORY)
    try:
        for part in parts[:-1]:
            below = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _as_text(data: bytes) -> str | None:
    """The file as text if it is UTF-8 without NUL bytes (then it is scanned for secrets)."""
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
