"""A run's own git worktree: made when the run starts, committed at each turn's end.

Theory. A project added with worktrees (``project add --worktrees``, ``/project add
worktrees:true``; or one run with ``submit --worktree``, ``/start worktree:yes``) runs each run
in ``<state>/worktrees/<run_id>/``: ``git worktree add -b discord-mcp/<run_id>`` from the
project's HEAD at that moment (``base_commit``, on ``base_branch``). Two runs of one project
at once never touch each other's files, nor the project's own checkout; resuming a run works
in the same worktree. What the project has uncommitted is not in the worktree (it starts from
HEAD): the run says how many files it left out (``kept_out``).

At the end of each turn everything the agent left in the worktree is committed on the run's
branch (``git add -A``; ``--no-verify``, no signing: it is a record of the agent's work, made
as ``discord-mcp`` when the repository names no author), so the branch holds the whole run and
``changes`` (files, insertions, deletions from ``base_commit`` to ``head_commit``) is what
Merge would land. Nothing here touches the project's checkout, index or branches but the new
branch.

The record is ``runs/<run_id>/worktree.json`` (version 1)::

    {"version": 1, "run_id", "project", "repo", "path", "workdir", "branch", "base_commit",
     "base_branch", "kept_out", "created_at", "head_commit", "changes": {files, insertions,
     deletions}, "files": [{path, insertions, deletions}], "landed": null | {...},
     "removed_at": null, "actions": [{action, ok, at, by, via, message, ...}]}

``repo`` is the project's work tree (its top), ``path`` the worktree, ``workdir`` where the
run works (the project's folder inside the worktree: the same place relative to the top).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.folders.folders import RunFolder, check_run_id, read_document
from discord_mcp.runs.git import command
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.state.files import ensure_dir, off_loop, write_json

VERSION = 1
WORKTREES = "worktrees"
BRANCH_PREFIX = "discord-mcp/"
ADD_TIMEOUT_S = 300.0
"""Checking out a large project takes a while."""
MAX_FILES_LISTED = 50
IDENTITY = {
    "GIT_AUTHOR_NAME": "discord-mcp",
    "GIT_AUTHOR_EMAIL": "discord-mcp@localhost",
    "GIT_COMMITTER_NAME": "discord-mcp",
    "GIT_COMMITTER_EMAIL": "discord-mcp@localhost",
}
"""Who commits when the repository's configuration names nobody."""
NO_SIGNING = ("-c", "commit.gpgsign=false")
LANDED_GONE = ("merged", "discarded")
"""Landings after which the worktree is gone."""


def worktree_dir(home: Path, run_id: str) -> Path:
    return home / WORKTREES / check_run_id(run_id)


def branch_of(run_id: str) -> str:
    return BRANCH_PREFIX + check_run_id(run_id)


def record_path(home: Path, run_id: str) -> Path:
    return RunFolder.of(home, run_id).root / "worktree.json"


def load(home: Path, run_id: str) -> dict[str, Any] | None:
    """The run's worktree record (None: the run has no worktree). Blocking."""
    document = read_document(record_path(home, run_id))
    if document is None or not isinstance(document.get("path"), str):
        return None
    return document


def save(home: Path, document: Mapping[str, Any]) -> None:
    """Write the record (atomically). Blocking."""
    body = {k: v for k, v in document.items() if k != "version"}
    write_json(record_path(home, str(document["run_id"])), {"version": VERSION, **body})


# -- making one


async def create(
    home: Path, run_id: str, *, project: str, project_path: Path, now: str
) -> dict[str, Any]:
    """Make the run's worktree from the project's HEAD and write its record.

    Raises:
        RunError: E_NOT_A_GIT_REPO, E_NO_COMMITS or E_WORKTREE_FAILED, each with a sentence.
    """
    if not command.available():
        raise RunError(
            "E_NOT_A_GIT_REPO",
            "git is not installed, so the run cannot have a worktree of its own: install git, "
            "or start the run without a worktree",
        )
    try:
        top = Path((await command.git(["rev-parse", "--show-toplevel"], project_path)).line)
    except GitFailed:
        raise RunError(
            "E_NOT_A_GIT_REPO",
            f"{project_path} is not in a git repository, so the run cannot have a worktree of "
            "its own: run `git init` there and commit, or start the run without a worktree "
            "(worktree:no, --no-worktree)",
        ) from None
    try:
        base = (await command.git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], top)).line
    except GitFailed:
        raise RunError(
            "E_NO_COMMITS",
            f"the repository {top} has no commit yet: a worktree starts from one, so commit "
            "first (or start the run without a worktree)",
        ) from None
    branch_name = await _current_branch(top)
    kept_out = await _uncommitted(top)
    path = worktree_dir(home, run_id)
    branch = branch_of(run_id)
    taken = await command.git(
        ["rev-parse", "--verify", "-q", f"refs/heads/{branch}"], top, check=False
    )
    if taken.code == 0 or await off_loop(os.path.lexists, path):
        raise RunError(
            "E_WORKTREE_FAILED",
            f"the branch {branch} or the folder {path} exists already (left from an earlier "
            "attempt): nothing was touched; start a new run",
        )
    await off_loop(ensure_dir, path.parent)
    try:
        await command.git(
            ["worktree", "add", "--quiet", "-b", branch, str(path), base], top, within=ADD_TIMEOUT_S
        )
    except GitFailed as exc:
        await _forget(top, path, branch)
        raise RunError(
            "E_WORKTREE_FAILED", f"git could not make the run's worktree: {exc.message}"
        ) from None
    inside = await off_loop(_inside, project_path, top)
    document: dict[str, Any] = {
        "run_id": run_id,
        "project": project,
        "repo": str(top),
        "path": str(path),
        "workdir": str(path / inside),
        "branch": branch,
        "base_commit": base,
        "base_branch": branch_name,
        "kept_out": kept_out,
        "created_at": now,
        "head_commit": base,
        "changes": {"files": 0, "insertions": 0, "deletions": 0},
        "files": [],
        "landed": None,
        "removed_at": None,
        "actions": [],
    }
    try:
        await off_loop(ensure_dir, Path(document["workdir"]))
        await off_loop(save, home, document)
    except BaseException:
        await _forget(top, path, branch)
        raise
    return document


def _inside(project_path: Path, top: Path) -> Path:
    """Where the project's folder is inside its work tree (both resolved)."""
    try:
        return project_path.resolve().relative_to(top.resolve())
    except ValueError:
        return Path()


async def is_dir(path: Path) -> bool:
    return await off_loop(os.path.isdir, path)


async def _current_branch(top: Path) -> str | None:
    found = await command.git(["symbolic-ref", "-q", "--short", "HEAD"], top, check=False)
    name = found.line if found.code == 0 else ""
    try:
        return command.check_name(name) if name else None
    except ValueError:
        return None  # a name we would not act on: Merge says so


async def _uncommitted(top: Path) -> int:
    """How many paths ``git status`` lists as changed or new (what the worktree leaves out)."""
    found = await command.git(["status", "--porcelain", "-z"], top, check=False)
    if found.code != 0:
        return 0
    entries = found.out.split(b"\0")
    count, skip = 0, False
    for entry in entries:
        if skip:
            skip = False
            continue
        if len(entry) < 3:
            continue
        count += 1
        skip = entry[:1] in (b"R", b"C")  # a rename's old path follows
    return count


async def _forget(top: Path, path: Path, branch: str) -> None:
    """Undo a worktree that was half made."""
    with contextlib.suppress(GitFailed):
        await command.git(["worktree", "remove", "--force", str(path)], top, check=False)
    with contextlib.suppress(GitFailed):
        await command.git(["branch", "-D", branch], top, check=False)
    await off_loop(shutil.rmtree, path, ignore_errors=True)


# -- at each turn's end


async def settle(home: Path, run_id: str, *, subject: str) -> dict[str, Any] | None:
    """Commit what the agent left in the worktree (if anything), and record ``head_commit``
    and ``changes``. None: the run has no worktree. A worktree that is gone (landed, removed)
    is left as it is recorded.

    Raises:
        GitFailed: git failed (the record is unchanged).
    """
    document = await off_loop(load, home, run_id)
    if document is None:
        return None
    path = Path(document["path"])
    if document.get("removed_at") or not await is_dir(path):
        return document
    await commit_all(path, subject, run_id)
    head = (await command.git(["rev-parse", "HEAD"], path)).line
    counted = await changes(path, str(document["base_commit"]), head)
    document.update(
        head_commit=head,
        changes=counted["changes"],
        files=counted["files"][:MAX_FILES_LISTED],
    )
    await off_loop(save, home, document)
    return document


async def commit_all(path: Path, subject: str, run_id: str) -> bool:
    """Commit everything in the worktree at ``path``; False when there was nothing."""
    if not await dirty(path):
        return False
    await command.git(["add", "-A", "--", "."], path)
    staged = await command.git(["diff", "--cached", "--quiet"], path, check=False)
    if staged.code == 0:
        return False  # only what git ignores changed
    env = {} if await _has_identity(path) else IDENTITY
    title = " ".join(subject.replace("\0", "").split())[:72] or "the agent's work"
    message = f"{title}\n\nCommitted by discord-mcp at the end of a turn of run {run_id}."
    await command.git([*NO_SIGNING, "commit", "--no-verify", "-q", "-m", message], path, env=env)
    return True


async def _has_identity(path: Path) -> bool:
    found = await command.git(["config", "user.email"], path, check=False)
    named = await command.git(["config", "user.name"], path, check=False)
    return found.code == 0 and named.code == 0 and bool(found.line and named.line)


async def identity_env(path: Path) -> dict[str, str]:
    """The author and committer to give git there: none when its configuration has one."""
    return {} if await _has_identity(path) else dict(IDENTITY)


async def dirty(path: Path) -> bool:
    """Whether the work tree at ``path`` has anything uncommitted (new files included)."""
    found = await command.git(["status", "--porcelain", "-z"], path)
    return bool(found.out.strip(b"\0"))


async def changes(cwd: Path, base: str, head: str) -> dict[str, Any]:
    """``{"changes": {files, insertions, deletions}, "files": [{path, insertions,
    deletions}]}`` from ``base`` to ``head`` (a binary file counts as a file, no lines)."""
    found = await command.git(["diff", "--numstat", "-z", "--no-renames", base, head], cwd)
    files: list[dict[str, Any]] = []
    for entry in found.out.split(b"\0"):
        parts = entry.decode("utf-8", errors="replace").split("\t", 2)
        if len(parts) != 3:
            continue
        added, removed, name = parts
        files.append(
            {
                "path": name,
                "insertions": int(added) if added.isdigit() else 0,
                "deletions": int(removed) if removed.isdigit() else 0,
            }
        )
    total = {
        "files": len(files),
        "insertions": sum(f["insertions"] for f in files),
        "deletions": sum(f["deletions"] for f in files),
    }
    return {"changes": total, "files": files}


async def patch(document: Mapping[str, Any]) -> bytes:
    """The run's change as a git patch (binary files included), ``base_commit`` to
    ``head_commit``.

    Raises:
        GitFailed: git failed (the commits are gone, say).
    """
    cwd = Path(document["path"])
    if not await is_dir(cwd):
        cwd = Path(document["repo"])
    done = await command.git(
        ["diff", "--binary", str(document["base_commit"]), str(document["head_commit"])], cwd
    )
    return done.out


# -- going away


async def remove(document: Mapping[str, Any], *, delete_branch: bool) -> str | None:
    """Remove the worktree (and its branch when asked); None when done, else what is left,
    in a sentence. Never raises for git's sake."""
    repo, path = Path(document["repo"]), Path(document["path"])
    problems = []
    if await off_loop(os.path.lexists, path):
        try:
            await command.git(["worktree", "remove", "--force", str(path)], repo)
        except GitFailed as exc:
            problems.append(f"the worktree {path} could not be removed ({exc.message})")
    if not await off_loop(os.path.lexists, path):
        with contextlib.suppress(GitFailed):
            await command.git(["worktree", "prune"], repo, check=False)
    if delete_branch:
        try:
            await command.git(["branch", "-D", command.check_name(str(document["branch"]))], repo)
        except (GitFailed, ValueError) as exc:
            problems.append(f"the branch {document['branch']} could not be deleted ({exc})")
    return "; ".join(problems) or None


async def forget(home: Path, document: Mapping[str, Any]) -> None:
    """Undo a worktree no session came to hold (the run could not be started)."""
    await remove(document, delete_branch=True)
    with contextlib.suppress(OSError):
        await off_loop(record_path(home, str(document["run_id"])).unlink)


async def in_work_tree(path: Path) -> bool:
    """Whether ``path`` is inside a git work tree with at least one commit."""
    if not command.available():
        return False
    try:
        found = await command.git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], path)
    except GitFailed:
        return False
    return bool(found.line)


async def unmerged(document: Mapping[str, Any]) -> int:
    """How many of the run's commits are in neither its base branch nor ``base_commit``.

    Raises:
        GitFailed: git failed.
    """
    repo = Path(document["repo"])
    head = str(document.get("head_commit") or document["base_commit"])
    branch = document.get("branch")
    if branch:
        found = await command.git(
            ["rev-parse", "-q", "--verify", f"refs/heads/{command.check_name(str(branch))}"],
            repo,
            check=False,
        )
        if found.code == 0 and found.line:
            head = found.line
    bases = [str(document["base_commit"])]
    base_branch = document.get("base_branch")
    if base_branch:
        found = await command.git(
            ["rev-parse", "-q", "--verify", f"refs/heads/{command.check_name(str(base_branch))}"],
            repo,
            check=False,
        )
        if found.code == 0 and found.line:
            bases.append(found.line)
    counted = await command.git(
        ["rev-list", "--count", head, *(f"^{b}" for b in bases), "--"], repo
    )
    return int(counted.line or 0)


# -- the run folder's retention (discord_mcp.runs.folders.retention)


def keeps_run_folder(home: Path, folder: RunFolder) -> str | None:
    """Why a run folder must stay for its worktree's sake (None: it may go): its
    ``worktree.json`` is the record of a worktree that is still there, or of a removal that
    left something behind (a branch with the run's commits). ``discord-watch gc`` removes
    abandoned worktrees first (keeping any with unmerged commits unless forced); their run
    folders may go after that. Blocking."""
    document = read_document(folder.root / "worktree.json")
    if document is None or not isinstance(document.get("path"), str):
        return None
    landed = document.get("landed") if isinstance(document.get("landed"), dict) else {}
    if landed and landed.get("kept"):
        return f"removing its worktree left something behind: {landed['kept']}"
    if os.path.lexists(document["path"]):
        return "its worktree is still there (discord-watch gc removes it once abandoned)"
    if document.get("removed_at") or (landed and landed.get("action") in LANDED_GONE):
        return None
    return "its worktree record says it was never removed"
