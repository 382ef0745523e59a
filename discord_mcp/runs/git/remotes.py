"""Open PR: push a run's branch, and open its pull request with ``gh`` where it can.

Theory. The remote is the one the run's base branch tracks, else ``origin``, else the only
remote there is; with none, Open PR says so. The branch is pushed under its own name. When the
GitHub CLI is installed and logged in (``gh auth status`` answers 0), ``gh pr create`` opens
the pull request and its URL is the answer (an existing one is found in what gh says). Without
``gh`` the answer is the link the remote printed while receiving the push (GitHub, GitLab,
Bitbucket and Gitea print one, as ``remote:`` lines), or, when it printed none (a remote on
this machine, say), where the branch was pushed. A remote's URL is shown without the user name
and password it may carry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.git import command
from discord_mcp.runs.git.command import REMOTE_TIMEOUT_S, GitFailed

_URL = re.compile(r"https?://[^\s'\"<>]+")
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", re.IGNORECASE)
GH_CHECK_S = 20.0


@dataclass(frozen=True)
class Proposed:
    """Where the branch went, and the pull request's link (None: nobody printed one)."""

    remote: str
    remote_url: str
    url: str | None
    by_gh: bool
    note: str | None = None


def safe_url(url: str) -> str:
    """A remote's URL without the credentials it may carry (``https://user:pw@host/...``)."""
    return _USERINFO.sub(r"\1", url.strip())


def link_in(text: str) -> str | None:
    """The first link a remote printed while receiving a push (its ``remote:`` lines)."""
    for line in text.splitlines():
        if line.startswith("remote:"):
            found = _URL.search(line)
            if found:
                return found.group(0).rstrip(".,;)")
    return None


async def choose_remote(repo: Path, base_branch: str | None) -> str | None:
    """The remote to push to (see the module doc); None when there is none."""
    if base_branch:
        tracked = await command.git(
            ["config", "--get", f"branch.{command.check_name(base_branch)}.remote"],
            repo,
            check=False,
        )
        name = tracked.line
        if tracked.code == 0 and name and name != ".":
            try:
                return command.check_name(name, "remote")
            except ValueError:
                pass
    listed = await command.git(["remote"], repo)
    names = [n.strip() for n in listed.text.splitlines() if n.strip()]
    if "origin" in names:
        return "origin"
    if len(names) == 1:
        try:
            return command.check_name(names[0], "remote")
        except ValueError:
            return None
    return None


async def gh_ready(cwd: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``gh`` is installed and logged in."""
    if not command.available_program("gh", env):
        return False
    try:
        status = await command.run(
            ["gh", "auth", "status"], cwd, env=env, within=GH_CHECK_S, check=False
        )
    except GitFailed:
        return False
    return status.code == 0


async def propose(document: Mapping[str, Any], *, title: str, body: str) -> Proposed:
    """Push the run's branch and open its pull request where possible.

    Raises:
        RunError: E_NO_REMOTE, E_PUSH_FAILED.
    """
    repo = Path(document["repo"])
    branch = command.check_name(str(document["branch"]))
    base_branch = document.get("base_branch")
    remote = await choose_remote(repo, base_branch)
    if remote is None:
        raise RunError(
            "E_NO_REMOTE",
            f"the project has no git remote to push {branch} to: add one (`git remote add "
            "origin URL`), or Merge the run here",
        )
    where = safe_url((await command.git(["remote", "get-url", remote], repo, check=False)).line)
    pushed = await command.git(
        ["push", remote, f"refs/heads/{branch}:refs/heads/{branch}"],
        repo,
        within=REMOTE_TIMEOUT_S,
        check=False,
    )
    if pushed.code != 0:
        last = " ".join(pushed.err.strip().splitlines()[-2:])[-300:]
        raise RunError(
            "E_PUSH_FAILED",
            f"pushing {branch} to {remote} ({where}) failed: {last or 'no message'}. Nothing "
            "changed here; try again, or push it yourself",
        )
    printed = link_in(pushed.err)
    if await gh_ready(repo):
        argv = ["gh", "pr", "create", "--head", branch, "--title", title, "--body", body]
        if base_branch:
            argv += ["--base", command.check_name(str(base_branch))]
        try:
            made = await command.run(argv, repo, within=REMOTE_TIMEOUT_S, check=False)
        except GitFailed as exc:
            return Proposed(remote, where, printed, False, f"gh failed: {exc.message}")
        said = made.text + "\n" + made.err
        url = _last_url(made.text) if made.code == 0 else None
        if url is None and "already exists" in said:
            url = _last_url(said)
        if url is not None:
            return Proposed(remote, where, url, True)
        last = " ".join(made.err.strip().splitlines()[-2:])[-200:]
        return Proposed(remote, where, printed, False, f"gh pr create failed: {last}")
    return Proposed(remote, where, printed, False)


def _last_url(text: str) -> str | None:
    found = _URL.findall(text)
    return found[-1].rstrip(".,;)") if found else None
