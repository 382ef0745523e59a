"""A run's own worktree (issue 35): made from the project's HEAD, committed at each turn's end,
and never touching the project's checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs.git import command, worktrees
from tests.support.repos import commit, git, head, make_repo

RUN = "run_20260301_120000_abc123"
OTHER = "run_20260301_120001_def456"
NOW = "2026-03-01T12:00:00.000Z"


async def make(home: Path, project: Path, run_id: str = RUN) -> dict[str, object]:
    return await worktrees.create(home, run_id, project="app", project_path=project, now=NOW)


async def test_a_worktree_starts_from_the_projects_head_on_a_branch_of_its_own(
    tmp_path: Path,
) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"

    record = await make(home, project)

    path = Path(str(record["path"]))
    assert path == home / "worktrees" / RUN
    assert (path / "README.md").read_text(encoding="utf-8") == "# app\n"
    assert git(path, "branch", "--show-current") == f"discord-mcp/{RUN}"
    assert record["base_commit"] == head(project)
    assert record["base_branch"] == "main"
    assert record["workdir"] == str(path)
    assert worktrees.load(home, RUN) == {"version": 1, **record}
    assert git(project, "branch", "--show-current") == "main"


async def test_a_project_in_a_subfolder_works_in_the_same_subfolder_of_the_worktree(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "mono", {"web/app.js": "x\n", "api/main.py": "y\n"})

    record = await make(tmp_path / "home", repo / "web")

    assert record["repo"] == str(repo)
    assert record["workdir"] == str(Path(str(record["path"])) / "web")
    assert (Path(str(record["workdir"])) / "app.js").exists()


async def test_uncommitted_changes_of_the_project_are_left_out_and_counted(
    tmp_path: Path,
) -> None:
    project = make_repo(tmp_path / "app")
    (project / "README.md").write_text("# changed, not committed\n", encoding="utf-8")
    (project / "new.txt").write_text("new\n", encoding="utf-8")

    record = await make(tmp_path / "home", project)

    assert record["kept_out"] == 2
    assert (Path(str(record["path"])) / "README.md").read_text(encoding="utf-8") == "# app\n"
    assert not (Path(str(record["path"])) / "new.txt").exists()
    assert (project / "README.md").read_text(encoding="utf-8") == "# changed, not committed\n"


async def test_a_folder_outside_git_is_refused_with_a_sentence(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()

    with pytest.raises(RunError) as refused:
        await make(tmp_path / "home", plain)

    assert refused.value.code == "E_NOT_A_GIT_REPO"
    assert "git init" in refused.value.message
    assert not (tmp_path / "home" / "worktrees" / RUN).exists()


async def test_a_repository_without_a_commit_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")

    with pytest.raises(RunError) as refused:
        await make(tmp_path / "home", empty)

    assert refused.value.code == "E_NO_COMMITS"


async def test_two_runs_of_one_project_have_two_worktrees(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    one, two = await make(home, project, RUN), await make(home, project, OTHER)

    (Path(str(one["path"])) / "same.txt").write_text("from one\n", encoding="utf-8")
    (Path(str(two["path"])) / "same.txt").write_text("from two\n", encoding="utf-8")

    assert (Path(str(one["path"])) / "same.txt").read_text(encoding="utf-8") == "from one\n"
    assert (Path(str(two["path"])) / "same.txt").read_text(encoding="utf-8") == "from two\n"
    assert not (project / "same.txt").exists()


async def test_settling_commits_what_the_agent_left_and_counts_the_changes(
    tmp_path: Path,
) -> None:
    project = make_repo(tmp_path / "app", {"a.txt": "one\ntwo\n"})
    home = tmp_path / "home"
    record = await make(home, project)
    path = Path(str(record["path"]))
    (path / "a.txt").write_text("one\nTWO\nthree\n", encoding="utf-8")
    (path / "b.txt").write_text("new\n", encoding="utf-8")

    settled = await worktrees.settle(home, RUN, subject="Fix the thing\nplease")

    assert settled is not None
    assert settled["head_commit"] == head(path)
    assert settled["head_commit"] != settled["base_commit"]
    assert settled["changes"] == {"files": 2, "insertions": 3, "deletions": 1}
    assert {f["path"] for f in settled["files"]} == {"a.txt", "b.txt"}
    assert git(path, "status", "--porcelain") == ""
    assert git(path, "log", "-1", "--format=%s") == "Fix the thing please"
    assert head(project) == settled["base_commit"]
    assert git(project, "status", "--porcelain") == ""


async def test_settling_without_changes_makes_no_commit(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    record = await make(home, project)

    settled = await worktrees.settle(home, RUN, subject="nothing")

    assert settled is not None
    assert settled["head_commit"] == record["base_commit"]
    assert settled["changes"] == {"files": 0, "insertions": 0, "deletions": 0}


async def test_a_repository_that_names_no_author_gets_discord_mcp_as_its_author(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-config"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    project = make_repo(tmp_path / "app")
    git(project, "config", "--unset", "user.name")
    git(project, "config", "--unset", "user.email")
    home = tmp_path / "home"
    record = await make(home, project)
    (Path(str(record["path"])) / "c.txt").write_text("c\n", encoding="utf-8")

    await worktrees.settle(home, RUN, subject="add c")

    assert git(Path(str(record["path"])), "log", "-1", "--format=%an <%ae>") == (
        "discord-mcp <discord-mcp@localhost>"
    )


async def test_removing_a_worktree_takes_its_branch_when_asked(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    record = await make(tmp_path / "home", project)

    left = await worktrees.remove(record, delete_branch=True)

    assert left is None
    assert not Path(str(record["path"])).exists()
    assert git(project, "branch", "--list", f"discord-mcp/{RUN}") == ""
    assert str(record["path"]) not in git(project, "worktree", "list")


async def test_unmerged_counts_the_runs_commits_not_in_its_base(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    await make(home, project)
    assert await worktrees.unmerged(worktrees.load(home, RUN) or {}) == 0
    commit(Path(str((worktrees.load(home, RUN) or {})["path"])), {"x.txt": "x\n"}, "x")

    assert await worktrees.unmerged(worktrees.load(home, RUN) or {}) == 1


async def test_a_git_command_that_hangs_is_stopped_within_its_bound(tmp_path: Path) -> None:
    with pytest.raises(command.GitFailed) as failed:
        await command.run(["sleep", "30"], tmp_path, within=0.2)

    assert "took longer than 0.2 s" in failed.value.message


def test_names_that_could_read_as_options_or_revisions_are_refused() -> None:
    assert command.check_name("main") == "main"
    assert command.check_name("feature/x-1.2") == "feature/x-1.2"
    for bad in ("-delete", "a..b", "x@{1}", "a b", "", "ref.lock", "a//b", "a/.b"):
        with pytest.raises(ValueError, match="is not one discord-watch acts on"):
            command.check_name(bad)


def test_git_gets_no_prompt_no_pager_and_none_of_the_callers_git_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i key")

    env = command.environment()

    assert "GIT_DIR" not in env
    assert env["GIT_SSH_COMMAND"] == "ssh -i key"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_PAGER"] == "cat"


@pytest.mark.parametrize(
    "module",
    ["command", "worktrees", "landing", "remotes", "sweep"],
)
def test_each_module_of_the_git_room_imports_first_without_a_cycle(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import discord_mcp.runs.git.{module}"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


async def test_a_branch_left_by_an_earlier_attempt_is_never_taken_over_or_deleted(
    tmp_path: Path,
) -> None:
    project = make_repo(tmp_path / "app")
    git(project, "branch", f"discord-mcp/{RUN}")
    git(project, "switch", "-q", f"discord-mcp/{RUN}")
    left = commit(project, {"left.txt": "work from before\n"}, "work from before")
    git(project, "switch", "-q", "main")

    with pytest.raises(RunError) as refused:
        await make(tmp_path / "home", project)

    assert refused.value.code == "E_WORKTREE_FAILED"
    assert "nothing was touched" in refused.value.message
    assert head(project, f"refs/heads/discord-mcp/{RUN}") == left
