"""Land a run's work or drop it: Merge, Open PR, Discard (issue 35).

Theory. Every action first commits what the worktree holds (:func:`~.worktrees.settle`), so the
run's branch is the whole of its work, and holds ``runs/<run_id>/landing.lock`` for its length
(a second action on the same run at once is refused, never queued). Each attempt, done or
refused, is appended to the record's ``actions``; ``landed`` and ``result.json`` say the
outcome.

**Merge** never loses work. The merge is computed first, touching nothing
(``git merge-tree --write-tree``, git 2.38 or newer): a conflict is refused with the files it
is in, and the branch, the worktree and the project stay as they were. Otherwise the result is
a fast-forward to the run's branch (``--squash``: one new commit on the base branch; a base
branch that moved on: a merge commit), and the base branch is moved to it: where the branch is
checked out (the project's checkout, usually) by ``git merge --ff-only`` there, which refuses
rather than overwrite uncommitted changes in the files the run changed; elsewhere by a
compare-and-swap ``git update-ref``. Only then are the worktree and the branch removed (the
work is in the base branch).

**Open PR** pushes the branch and opens its pull request (:mod:`.remotes`); the worktree stays,
so the run can be resumed and the PR updated by pressing it again. **Discard** removes the
worktree and the branch: the run's work is gone (the buttons ask first).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.folders.folders import RunFolder, read_document
from discord_mcp.runs.git import command, worktrees
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.runs.git.remotes import propose
from discord_mcp.state.files import off_loop
from discord_mcp.state.leases import try_exclusive

ACTIONS = ("merge", "pr", "discard")
KEEP_ACTIONS = 100


@dataclass(frozen=True)
class Landed:
    """What an action did: a sentence for the owner, the record's ``landed`` entry (None: the
    action changed nothing that stays, e.g. a refused merge is raised instead), the record."""

    action: str
    message: str
    landed: Mapping[str, Any] | None
    document: Mapping[str, Any]


async def land(
    home: Path,
    run_id: str,
    action: str,
    *,
    by: str,
    via: str,
    now: str,
    squash: bool = False,
) -> Landed:
    """Do ``action`` (``merge``, ``pr`` or ``discard``) for the run; the caller has checked
    that nothing of the run is running or waiting.

    Raises:
        RunError: a sentence saying why nothing was done (and that nothing was lost).
    """
    if action not in ACTIONS:
        raise RunError("E_BAD_ARGUMENTS", f"{action!r} is not merge, pr or discard")
    lock = RunFolder.of(home, run_id).root / "landing.lock"
    hold = await off_loop(try_exclusive, lock)
    if hold is None:
        raise RunError(
            "E_LANDING_BUSY",
            f"another Merge, Open PR or Discard of run {run_id} is under way: wait for it",
        )
    try:
        document = await off_loop(worktrees.load, home, run_id)
        if document is None:
            raise RunError(
                "E_NO_WORKTREE",
                f"run {run_id} has no worktree of its own (its project does not use worktrees): "
                "what it changed is in the project already (its changes.patch shows it)",
            )
        gone = _gone(document, run_id)
        if gone is not None:
            raise RunError("E_ALREADY_LANDED", gone)
        step: Callable[[Path, dict[str, Any]], Awaitable[tuple[str, dict[str, Any]]]]
        if action == "merge":

            async def step(h: Path, d: dict[str, Any]) -> tuple[str, dict[str, Any]]:
                return await _merge(h, d, squash=squash)

        else:
            step = _pr if action == "pr" else _discard
        try:
            if action != "discard":  # a discarded run's last changes are not kept
                await worktrees.settle(home, run_id, subject=f"the rest of run {run_id}")
                document = await off_loop(worktrees.load, home, run_id) or document
            message, landed = await step(home, document)
        except RunError as exc:
            await _note(home, document, action, by, via, now, ok=False, message=exc.message)
            raise
        except (GitFailed, ValueError) as exc:
            said = exc.message if isinstance(exc, GitFailed) else str(exc)
            message = (
                f"git failed: {said}. Nothing was lost: the branch {document['branch']} is kept"
            )
            await _note(home, document, action, by, via, now, ok=False, message=message)
            raise RunError("E_GIT_FAILED", message) from None
        landed = {**landed, "at": now, "by": by, "via": via}
        document["landed"] = landed
        if landed["action"] in worktrees.LANDED_GONE and not landed.get("kept"):
            document["removed_at"] = now
        await _note(home, document, action, by, via, now, ok=True, message=message)
        await off_loop(sync_result, home, document)
        return Landed(action, message, landed, document)
    finally:
        hold.release()


def _gone(document: Mapping[str, Any], run_id: str) -> str | None:
    landed = document.get("landed") or {}
    if landed.get("action") == "merged":
        return (
            f"run {run_id} was merged into {landed.get('into')} already "
            f"({landed.get('at')}, by {landed.get('by')})"
        )
    if landed.get("action") == "discarded":
        return f"run {run_id} was discarded already ({landed.get('at')}, by {landed.get('by')})"
    return None


def result_fields(document: Mapping[str, Any] | None) -> dict[str, Any]:
    """The git fields of a run's ``result.json`` from its worktree record (all null for a run
    without one)."""
    if document is None:
        return {
            "worktree": None,
            "branch": None,
            "base_commit": None,
            "head_commit": None,
            "landed": None,
        }
    return {
        "worktree": document.get("path"),
        "branch": document.get("branch"),
        "base_commit": document.get("base_commit"),
        "head_commit": document.get("head_commit"),
        "changes": document.get("changes"),
        "landed": document.get("landed"),
    }


def sync_result(home: Path, document: Mapping[str, Any]) -> None:
    """Write the record's outcome into ``result.json`` (when there is one). Blocking."""
    folder = RunFolder.of(home, str(document["run_id"]))
    result = read_document(folder.result)
    if result is None:
        return
    result.pop("version", None)
    result.update(result_fields(document))
    folder.write(folder.result, result)


async def _note(
    home: Path,
    document: dict[str, Any],
    action: str,
    by: str,
    via: str,
    now: str,
    *,
    ok: bool,
    message: str,
) -> None:
    actions = list(document.get("actions") or [])
    actions.append(
        {"action": action, "ok": ok, "at": now, "by": by, "via": via, "message": message}
    )
    document["actions"] = actions[-KEEP_ACTIONS:]
    with contextlib.suppress(OSError):
        await off_loop(worktrees.save, home, document)


# -- Merge


async def _merge(
    home: Path, document: dict[str, Any], *, squash: bool
) -> tuple[str, dict[str, Any]]:
    repo = Path(document["repo"])
    run_id = str(document["run_id"])
    branch = command.check_name(str(document["branch"]))
    into = document.get("base_branch")
    if not into:
        raise RunError(
            "E_NO_BASE_BRANCH",
            f"the project was not on a branch when run {run_id} started (a detached HEAD), so "
            f"there is no branch to merge it into: merge {branch} yourself, or Open PR",
        )
    into = command.check_name(str(into))
    head = await _tip(repo, branch)
    if head is None:
        raise RunError("E_NO_WORKTREE", f"the run's branch {branch} is gone: nothing to merge")
    if head == document["base_commit"]:
        raise RunError(
            "E_NOTHING_TO_MERGE",
            f"run {run_id} changed nothing (its branch is where it started): Discard it instead",
        )
    target = await _tip(repo, into)
    if target is None:
        raise RunError(
            "E_NO_BASE_BRANCH",
            f"the branch {into} the run started from no longer exists: merge {branch} yourself",
        )
    if await _is_ancestor(repo, head, target):
        note = await _cleanup(document)
        said = f"run {run_id} is in {into} already; its worktree and branch were removed"
        return _said(said, note), _merged(into, target, squash, fast_forward=True, kept=note)
    fast_forward = not squash and await _is_ancestor(repo, target, head)
    if fast_forward:
        new = head
    else:
        new = await _merge_commit(repo, document, target, head, into, squash)
    where = await _checked_out(repo, into)
    if where is not None:
        moved = await command.git(["merge", "--ff-only", "-q", new], where, check=False)
        if moved.code != 0:
            raise _refused(moved.err, into, where, branch)
    else:
        moved = await command.git(
            ["update-ref", "-m", f"discord-mcp: merge {run_id}", f"refs/heads/{into}", new, target],
            repo,
            check=False,
        )
        if moved.code != 0:
            raise RunError(
                "E_BASE_MOVED",
                f"{into} moved while the merge was made; nothing was changed: press Merge again",
            )
    note = await _cleanup(document)
    how = "fast-forward" if fast_forward else ("squashed" if squash else "merge commit")
    said = f"Merged run {run_id} into {into} ({how}, now at {new[:10]})"
    return _said(said, note), _merged(into, new, squash, fast_forward=fast_forward, kept=note)


def _merged(
    into: str, commit: str, squash: bool, *, fast_forward: bool, kept: str | None
) -> dict[str, Any]:
    landed: dict[str, Any] = {
        "action": "merged",
        "into": into,
        "commit": commit,
        "squash": squash,
        "fast_forward": fast_forward,
        "url": None,
    }
    if kept:
        landed["kept"] = kept
    return landed


def _said(message: str, note: str | None) -> str:
    return f"{message}; {note}" if note else message


async def _merge_commit(
    repo: Path,
    document: Mapping[str, Any],
    target: str,
    head: str,
    into: str,
    squash: bool,
) -> str:
    computed = await command.git(
        ["merge-tree", "--write-tree", "--name-only", "--no-messages", target, head],
        repo,
        check=False,
    )
    lines = [line for line in computed.text.splitlines() if line.strip()]
    if computed.code == 1:
        files = ", ".join(lines[1:11]) or "some files"
        more = f" and {len(lines) - 11} more" if len(lines) > 11 else ""
        raise RunError(
            "E_MERGE_CONFLICT",
            f"merging run {document['run_id']} into {into} conflicts in {files}{more}. Nothing "
            f"was changed and nothing is lost: the branch {document['branch']} and the "
            "worktree are kept. Resume the run to bring it up to date with "
            f"{into}, or merge it yourself",
        )
    if computed.code != 0 or not lines:
        raise GitFailed(
            f"git merge-tree failed ({computed.code}): {computed.err.strip()[-200:]} (Merge "
            "needs git 2.38 or newer)"
        )
    tree = lines[0].strip()
    run_id = str(document["run_id"])
    if squash:
        message = f"Run {run_id} (squashed from {document['branch']})"
        parents = ["-p", target]
    else:
        message = f"Merge run {run_id} ({document['branch']}) into {into}"
        parents = ["-p", target, "-p", head]
    env = await worktrees.identity_env(repo)
    made = await command.git(
        [*worktrees.NO_SIGNING, "commit-tree", tree, *parents, "-m", message], repo, env=env
    )
    return made.line


def _refused(err: str, into: str, where: Path, branch: str) -> RunError:
    if "would be overwritten" in err or "untracked working tree files" in err:
        files = [line.strip() for line in err.splitlines() if line.startswith(("\t", "    "))]
        named = ", ".join(files[:10]) or "some files"
        return RunError(
            "E_CHECKOUT_CONFLICT",
            f"{where} has uncommitted changes in files the run changed ({named}): nothing was "
            f"changed and nothing is lost (the branch {branch} is kept). Commit or stash them, "
            "then press Merge again",
        )
    if "fast-forward" in err.lower():
        return RunError(
            "E_BASE_MOVED",
            f"{into} moved while the merge was made; nothing was changed: press Merge again",
        )
    last = " ".join(err.strip().splitlines()[-2:])[-200:]
    return RunError(
        "E_GIT_FAILED",
        f"git refused to move {into} in {where} ({last}); nothing is lost: the branch "
        f"{branch} is kept",
    )


async def _tip(repo: Path, branch: str) -> str | None:
    found = await command.git(
        ["rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}"], repo, check=False
    )
    return found.line if found.code == 0 and found.line else None


async def _is_ancestor(repo: Path, older: str, newer: str) -> bool:
    found = await command.git(["merge-base", "--is-ancestor", older, newer], repo, check=False)
    return found.code == 0


async def _checked_out(repo: Path, branch: str) -> Path | None:
    """The work tree where ``branch`` is checked out, if one is."""
    listed = await command.git(["worktree", "list", "--porcelain"], repo)
    current: Path | None = None
    for line in listed.text.splitlines():
        if line.startswith("worktree "):
            current = Path(line[len("worktree ") :])
        elif line == f"branch refs/heads/{branch}" and current is not None:
            return current
    return None


async def _cleanup(document: Mapping[str, Any]) -> str | None:
    """Remove the worktree and branch of a merged run; what is left, in words."""
    path = Path(document["path"])
    if await worktrees.is_dir(path) and await worktrees.dirty(path):
        return f"its worktree {path} has new changes, so it was kept"
    return await worktrees.remove(document, delete_branch=True)


# -- Open PR


async def _pr(home: Path, document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    run_id = str(document["run_id"])
    if document.get("head_commit") == document["base_commit"]:
        raise RunError(
            "E_NOTHING_TO_MERGE",
            f"run {run_id} changed nothing (its branch is where it started): there is nothing "
            "to propose",
        )
    title = f"Run {run_id} (discord-mcp)"
    changes = document.get("changes") or {}
    body = (
        f"The work of run `{run_id}` (branch `{document['branch']}`, from "
        f"`{str(document['base_commit'])[:10]}`): {changes.get('files', 0)} files, "
        f"+{changes.get('insertions', 0)} −{changes.get('deletions', 0)}.\n\n"
        "Opened from Discord by discord-mcp."
    )
    proposed = await propose(document, title=title, body=body)
    landed = {
        "action": "pr",
        "url": proposed.url,
        "remote": proposed.remote,
        "remote_url": proposed.remote_url,
        "by_gh": proposed.by_gh,
    }
    branch = document["branch"]
    if proposed.url and proposed.by_gh:
        said = f"Opened a pull request for run {run_id}: {proposed.url}"
    elif proposed.url:
        said = f"Pushed {branch} to {proposed.remote}; open the pull request here: {proposed.url}"
    else:
        said = (
            f"Pushed {branch} to {proposed.remote} ({proposed.remote_url}); the remote printed "
            "no link for a pull request: open one from that branch"
        )
    if proposed.note:
        said += f" ({proposed.note})"
    return said, landed


# -- Discard


async def _discard(home: Path, document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    left = await worktrees.remove(document, delete_branch=True)
    said = (
        f"Discarded run {document['run_id']}: its worktree and branch {document['branch']} are gone"
    )
    landed: dict[str, Any] = {"action": "discarded", "url": None}
    if left:
        landed["kept"] = left
    return _said(said, left), landed
