"""What a run changed in its project's git work tree: ``artifacts/changes.patch``.

Theory. When a run starts, the work tree as it is (tracked files with their changes, and new
files that are not ignored) is written as a git tree object through a temporary index (a copy
of the real one, so unchanged files are not hashed again): ``GIT_INDEX_FILE=<tmp> git add -A;
git write-tree``. After each turn the same is done again, and ``git diff --binary <base>
<now> -- <project>`` is the patch: everything the run changed, new files included, whatever was
already uncommitted before it started left out. The user's index, HEAD, branches and stash
are never touched; the only trace is loose objects in the repository, which ``git gc``
removes. A project that is not in a git work tree gets no patch.

Every git command goes through :mod:`discord_mcp.runs.git.command` (an argv list, a bounded wait:
:data:`GIT_TIMEOUT_S`); a git that fails or hangs costs the run its patch, never its result.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from discord_mcp.runs.git import command
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.state.files import ensure_dir, off_loop, write_bytes

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 120.0
_LOCKS = {"GIT_OPTIONAL_LOCKS": "0"}  # a snapshot never takes the repository's index lock


async def _git(
    args: list[str], cwd: Path, *, env: Mapping[str, str] | None = None, within: float
) -> bytes:
    """Run ``git <args>`` in ``cwd`` (through :mod:`discord_mcp.runs.git.command`); its stdout.

    Raises:
        GitFailed: git is missing, failed, or took longer than ``within`` seconds.
    """
    done = await command.git(args, cwd, env={**_LOCKS, **(env or {})}, within=within)
    return done.out


async def work_tree(project: Path, *, within: float = GIT_TIMEOUT_S) -> tuple[Path, Path] | None:
    """(the top of the work tree, its index file) when ``project`` is in one, else None."""
    if not command.available():
        return None
    try:
        out = await _git(
            ["rev-parse", "--show-toplevel", "--git-path", "index"], project, within=within
        )
    except GitFailed:
        return None
    lines = out.decode("utf-8", errors="replace").splitlines()
    if len(lines) < 2:
        return None
    top = Path(lines[0])
    index = Path(lines[1]) if Path(lines[1]).is_absolute() else project / lines[1]
    return top, index


async def snapshot(project: Path, scratch: Path, *, within: float = GIT_TIMEOUT_S) -> str | None:
    """The work tree as a tree object id (see the module doc); None when ``project`` is not in
    a git work tree or git failed (logged). ``scratch``: a private directory for the
    temporary index."""
    found = await work_tree(project, within=within)
    if found is None:
        return None
    top, index = found
    temporary = await off_loop(_index_copy, index, scratch)
    try:
        env = {"GIT_INDEX_FILE": temporary}
        await _git(["add", "-A", "--", "."], top, env=env, within=within)
        tree = await _git(["write-tree"], top, env=env, within=within)
    except GitFailed as exc:
        log.warning("no snapshot of %s's work tree: %s", project, exc)
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return tree.decode("ascii", errors="replace").strip() or None


def _index_copy(index: Path, scratch: Path) -> str:
    """A private copy of the work tree's index (a path git creates when there is none yet)."""
    ensure_dir(scratch)
    fd, temporary = tempfile.mkstemp(prefix=".index-", dir=scratch)
    os.close(fd)
    try:
        shutil.copyfile(index, temporary)
    except OSError:
        os.unlink(temporary)  # no index yet (a fresh repository): git makes one
    return temporary


async def write_patch(
    project: Path, base: str, target: Path, scratch: Path, *, within: float = GIT_TIMEOUT_S
) -> bool:
    """Write what changed in ``project`` since the tree ``base`` to ``target`` (a git patch,
    binary files included); False (logged) when it could not be made."""
    now = await snapshot(project, scratch, within=within)
    if now is None:
        return False
    try:
        patch = await _git(["diff", "--binary", base, now, "--", "."], project, within=within)
    except GitFailed as exc:
        log.warning("no patch of %s: %s", project, exc)
        return False
    await off_loop(write_bytes, target, patch)
    return True


def count_changes(path: Path) -> dict[str, int] | None:
    """``{files, insertions, deletions}`` of the git patch at ``path`` (None: no patch; a
    binary file counts as a file without lines). Blocking."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    files = insertions = deletions = 0
    in_hunk = False
    for line in data.splitlines():
        if line.startswith(b"diff --git "):
            files += 1
            in_hunk = False
        elif line.startswith(b"@@ "):
            in_hunk = True
        elif in_hunk and line.startswith(b"+"):
            insertions += 1
        elif in_hunk and line.startswith(b"-"):
            deletions += 1
        elif in_hunk and not line.startswith((b" ", b"\\")) and line:
            in_hunk = False  # a binary patch, or the next file's header
    return {"files": files, "insertions": insertions, "deletions": deletions}
