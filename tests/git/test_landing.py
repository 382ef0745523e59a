"""Merge, Open PR and Discard of a run's worktree (issue 35), with the real git: a merge
never loses work, a PR goes to a real (local) remote or through ``gh``, each action is
recorded."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.runs.folders.results import not_started
from discord_mcp.runs.git import landing, worktrees
from discord_mcp.runs.git.remotes import link_in, safe_url
from discord_mcp.state.leases import try_exclusive
from tests.support.repos import bare_remote, commit, git, head, make_repo

RUN = "run_20260301_120000_abc123"
NOW = "2026-03-01T12:00:00.000Z"
BRANCH = f"discord-mcp/{RUN}"


async def run_with_changes(
    tmp_path: Path, files: dict[str, str] | None = None, *, base: dict[str, str] | None = None
) -> tuple[Path, Path, dict[str, Any]]:
    """A project, and a run whose worktree changed ``files`` (settled, as at a turn's end)."""
    project = make_repo(tmp_path / "app", base or {"a.txt": "one\n", "b.txt": "bee\n"})
    home = tmp_path / "home"
    record = await worktrees.create(home, RUN, project="app", project_path=project, now=NOW)
    for name, text in (files if files is not None else {"a.txt": "one\nmore\n"}).items():
        (Path(record["path"]) / name).write_text(text, encoding="utf-8")
    await worktrees.settle(home, RUN, subject="the agent's work")
    return project, home, record


async def land(home: Path, action: str, **options: Any) -> landing.Landed:
    return await landing.land(home, RUN, action, by="owner", via="test", now=NOW, **options)


def recorded(home: Path) -> dict[str, Any]:
    return worktrees.load(home, RUN) or {}


async def test_merge_fast_forwards_the_branch_the_run_started_from(tmp_path: Path) -> None:
    project, home, record = await run_with_changes(tmp_path)
    run_head = recorded(home)["head_commit"]

    done = await land(home, "merge")

    assert head(project) == run_head
    assert (project / "a.txt").read_text(encoding="utf-8") == "one\nmore\n"
    assert git(project, "status", "--porcelain") == ""
    assert done.landed is not None
    assert done.landed["action"] == "merged"
    assert done.landed["fast_forward"] is True
    assert done.landed["into"] == "main"
    assert "Merged run" in done.message
    assert not Path(record["path"]).exists()
    assert git(project, "branch", "--list", BRANCH) == ""
    after = recorded(home)
    assert after["landed"]["action"] == "merged"
    assert after["removed_at"] == NOW
    assert [(a["action"], a["ok"], a["by"]) for a in after["actions"]] == [("merge", True, "owner")]


async def test_merge_makes_a_merge_commit_when_the_base_branch_moved_on(tmp_path: Path) -> None:
    project, home, _ = await run_with_changes(tmp_path)
    moved = commit(project, {"b.txt": "bee\nsting\n"}, "meanwhile")

    done = await land(home, "merge")

    assert done.landed is not None
    assert done.landed["fast_forward"] is False
    parents = git(project, "log", "-1", "--format=%P").split()
    assert parents[0] == moved
    assert (project / "a.txt").read_text(encoding="utf-8") == "one\nmore\n"
    assert (project / "b.txt").read_text(encoding="utf-8") == "bee\nsting\n"


async def test_merge_squash_lands_one_commit_with_one_parent(tmp_path: Path) -> None:
    project, home, record = await run_with_changes(tmp_path)
    start = record["base_commit"]

    done = await land(home, "merge", squash=True)

    assert done.landed is not None
    assert done.landed["squash"] is True
    assert git(project, "log", "-1", "--format=%P") == start
    assert (project / "a.txt").read_text(encoding="utf-8") == "one\nmore\n"


async def test_a_conflict_is_refused_and_loses_nothing(tmp_path: Path) -> None:
    project, home, record = await run_with_changes(tmp_path, {"a.txt": "theirs\n"})
    mine = commit(project, {"a.txt": "mine\n"}, "the owner's own change")
    run_head = recorded(home)["head_commit"]

    with pytest.raises(RunError) as refused:
        await land(home, "merge")

    assert refused.value.code == "E_MERGE_CONFLICT"
    assert "conflicts in a.txt" in refused.value.message
    assert "nothing is lost" in refused.value.message
    assert head(project) == mine
    assert (project / "a.txt").read_text(encoding="utf-8") == "mine\n"
    assert git(project, "status", "--porcelain") == ""
    assert head(project, BRANCH) == run_head
    assert (Path(record["path"]) / "a.txt").read_text(encoding="utf-8") == "theirs\n"
    after = recorded(home)
    assert after["landed"] is None
    assert [(a["action"], a["ok"]) for a in after["actions"]] == [("merge", False)]


async def test_uncommitted_changes_in_the_checkout_are_never_overwritten(tmp_path: Path) -> None:
    project, home, _ = await run_with_changes(tmp_path)
    (project / "a.txt").write_text("my unsaved work\n", encoding="utf-8")
    before = head(project)

    with pytest.raises(RunError) as refused:
        await land(home, "merge")

    assert refused.value.code == "E_CHECKOUT_CONFLICT"
    assert "a.txt" in refused.value.message
    assert (project / "a.txt").read_text(encoding="utf-8") == "my unsaved work\n"
    assert head(project) == before
    assert git(project, "branch", "--list", BRANCH) != ""


async def test_uncommitted_changes_elsewhere_stay_as_they_were_after_a_merge(
    tmp_path: Path,
) -> None:
    project, home, _ = await run_with_changes(tmp_path)
    (project / "b.txt").write_text("bee, edited by hand\n", encoding="utf-8")

    await land(home, "merge")

    assert (project / "a.txt").read_text(encoding="utf-8") == "one\nmore\n"
    assert (project / "b.txt").read_text(encoding="utf-8") == "bee, edited by hand\n"


async def test_merge_moves_the_branch_when_the_checkout_is_on_another(tmp_path: Path) -> None:
    project, home, _ = await run_with_changes(tmp_path)
    git(project, "switch", "-q", "-c", "elsewhere")
    run_head = recorded(home)["head_commit"]

    await land(home, "merge")

    assert head(project, "refs/heads/main") == run_head
    assert git(project, "branch", "--show-current") == "elsewhere"
    assert (project / "a.txt").read_text(encoding="utf-8") == "one\n"


async def test_a_run_that_changed_nothing_is_not_merged(tmp_path: Path) -> None:
    _, home, _ = await run_with_changes(tmp_path, {})

    with pytest.raises(RunError) as refused:
        await land(home, "merge")

    assert refused.value.code == "E_NOTHING_TO_MERGE"
    assert "Discard" in refused.value.message


async def test_a_detached_head_leaves_no_branch_to_merge_into(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    git(project, "switch", "-q", "--detach")
    home = tmp_path / "home"
    record = await worktrees.create(home, RUN, project="app", project_path=project, now=NOW)
    (Path(record["path"]) / "x.txt").write_text("x\n", encoding="utf-8")
    await worktrees.settle(home, RUN, subject="x")

    with pytest.raises(RunError) as refused:
        await land(home, "merge")

    assert refused.value.code == "E_NO_BASE_BRANCH"


async def test_a_merged_run_cannot_be_merged_or_discarded_again(tmp_path: Path) -> None:
    _, home, _ = await run_with_changes(tmp_path)
    await land(home, "merge")

    for action in ("merge", "discard", "pr"):
        with pytest.raises(RunError) as refused:
            await land(home, action)
        assert refused.value.code == "E_ALREADY_LANDED"


async def test_discard_removes_the_worktree_and_the_branch(tmp_path: Path) -> None:
    project, home, record = await run_with_changes(tmp_path, {"junk.txt": "junk\n"})
    (Path(record["path"]) / "unsaved.txt").write_text("not even committed\n", encoding="utf-8")
    before = head(project)

    done = await land(home, "discard")

    assert done.landed is not None
    assert done.landed["action"] == "discarded"
    assert not Path(record["path"]).exists()
    assert git(project, "branch", "--list", BRANCH) == ""
    assert head(project) == before
    assert not (project / "junk.txt").exists()


async def test_a_second_action_while_one_is_under_way_is_refused(tmp_path: Path) -> None:
    _, home, _ = await run_with_changes(tmp_path)
    hold = try_exclusive(RunFolder.of(home, RUN).root / "landing.lock")
    assert hold is not None
    try:
        with pytest.raises(RunError) as refused:
            await land(home, "merge")
    finally:
        hold.release()

    assert refused.value.code == "E_LANDING_BUSY"


async def test_a_run_without_a_worktree_has_nothing_to_land(tmp_path: Path) -> None:
    RunFolder.of(tmp_path / "home", RUN).make()

    with pytest.raises(RunError) as refused:
        await land(tmp_path / "home", "merge")

    assert refused.value.code == "E_NO_WORKTREE"


async def test_landing_writes_its_outcome_into_result_json(tmp_path: Path) -> None:
    _, home, _ = await run_with_changes(tmp_path)
    folder = RunFolder.of(home, RUN)
    folder.write(folder.result, not_started(RUN, {"project": "app", "engine": "codex"}, 0.0))

    await land(home, "merge")

    result = json.loads(folder.result.read_text(encoding="utf-8"))
    assert result["landed"]["action"] == "merged"
    assert result["branch"] == BRANCH
    assert result["changes"] == {"files": 1, "insertions": 1, "deletions": 0}


# -- Open PR


async def test_open_pr_without_a_remote_says_so(tmp_path: Path) -> None:
    _, home, record = await run_with_changes(tmp_path)

    with pytest.raises(RunError) as refused:
        await land(home, "pr")

    assert refused.value.code == "E_NO_REMOTE"
    assert "git remote add" in refused.value.message
    assert Path(record["path"]).exists()


async def test_open_pr_pushes_the_branch_to_a_local_bare_remote_and_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", without_gh())
    project, home, record = await run_with_changes(tmp_path)
    remote = bare_remote(tmp_path / "remote.git", project)

    done = await land(home, "pr")

    assert head(remote, f"refs/heads/{BRANCH}") == recorded(home)["head_commit"]
    assert done.landed is not None
    assert done.landed["action"] == "pr"
    assert done.landed["url"] is None
    assert done.landed["remote"] == "origin"
    assert str(remote) in done.message
    assert "printed no link" in done.message
    assert Path(record["path"]).exists()  # the run goes on; Merge and Discard still work
    await land(home, "discard")


async def test_open_pr_answers_with_the_link_the_remote_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", without_gh())
    project, home, _ = await run_with_changes(tmp_path)
    remote = bare_remote(tmp_path / "remote.git", project)
    hook = remote / "hooks" / "post-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "echo\n"
        "echo \"Create a pull request for '$(cut -d' ' -f3 | sed s,refs/heads/,,)' by visiting:\"\n"
        "echo '     https://git.example.test/app/pull/new/the-branch'\n",
        encoding="utf-8",
    )
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)

    done = await land(home, "pr")

    assert done.landed is not None
    assert done.landed["url"] == "https://git.example.test/app/pull/new/the-branch"
    assert "https://git.example.test/app/pull/new/the-branch" in done.message


async def test_open_pr_uses_gh_when_it_is_installed_and_logged_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home, _ = await run_with_changes(tmp_path)
    bare_remote(tmp_path / "remote.git", project)
    calls = tmp_path / "gh-calls.jsonl"
    stub_gh(tmp_path / "bin", calls, url="https://github.com/me/app/pull/7")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")

    done = await land(home, "pr")

    assert done.landed is not None
    assert done.landed["url"] == "https://github.com/me/app/pull/7"
    assert done.landed["by_gh"] is True
    argvs = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    assert argvs[0] == ["auth", "status"]
    create = argvs[1]
    assert create[:2] == ["pr", "create"]
    assert create[create.index("--head") + 1] == BRANCH
    assert create[create.index("--base") + 1] == "main"


async def test_gh_that_is_not_logged_in_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home, _ = await run_with_changes(tmp_path)
    bare_remote(tmp_path / "remote.git", project)
    calls = tmp_path / "gh-calls.jsonl"
    stub_gh(tmp_path / "bin", calls, url="https://github.com/me/app/pull/7", logged_in=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")

    done = await land(home, "pr")

    assert done.landed is not None
    assert done.landed["by_gh"] is False
    assert [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()] == [
        ["auth", "status"]
    ]


def test_a_remotes_credentials_are_never_shown() -> None:
    assert safe_url("https://me:s3cret@github.com/me/app.git") == "https://github.com/me/app.git"
    assert safe_url("git@github.com:me/app.git") == "git@github.com:me/app.git"


def test_the_link_is_read_from_the_remotes_own_lines_only() -> None:
    said = "To github.com:me/app.git\nremote:   https://github.com/me/app/pull/new/x  \n"
    assert link_in(said) == "https://github.com/me/app/pull/new/x"
    assert link_in("see https://example.test/not-a-remote-line\n") is None


async def test_two_landings_at_once_do_one_and_refuse_the_other(tmp_path: Path) -> None:
    _, home, _ = await run_with_changes(tmp_path)

    outcomes = await asyncio.gather(
        land(home, "merge"), land(home, "discard"), return_exceptions=True
    )

    done = [o for o in outcomes if isinstance(o, landing.Landed)]
    refused = [o for o in outcomes if isinstance(o, RunError)]
    assert len(done) == 1
    assert len(refused) == 1
    assert refused[0].code in ("E_LANDING_BUSY", "E_ALREADY_LANDED")


def without_gh() -> str:
    """PATH without any ``gh`` (so these tests do not depend on the machine)."""
    keep = [p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "gh").exists()]
    return os.pathsep.join(keep)


def stub_gh(bin_dir: Path, calls: Path, *, url: str, logged_in: bool = True) -> None:
    """A ``gh`` that records its argv and answers as the real one does."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "gh"
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "if sys.argv[1:3] == ['auth', 'status']:\n"
        f"    sys.exit({0 if logged_in else 1})\n"
        "if sys.argv[1:3] == ['pr', 'create']:\n"
        f"    print({url!r})\n"
        "    sys.exit(0)\n"
        "sys.exit(2)\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
