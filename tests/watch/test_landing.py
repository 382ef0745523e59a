"""Reviewing and landing a run from Discord (issue 35): the changes card after a worktree run,
its Show diff / Merge / Open PR / Discard buttons pressed in the emulator, the shell's
``merge|discard|diff`` through the running daemon, and ``/diff``.

The agent CLIs are the scripted fake (tests/support/fake_cli.py, which writes the files a
scenario names); git, the emulator, its gateway and interactions, and the daemon are real.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.cli import main as watch_main
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.support.repos import commit, git, head, make_repo
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import live_daemon, watch_settings

RUN_IN_CARD = re.compile(r"run `(run_\d{8}_\d{6}_[0-9a-f]{6})`")


def worktree_settings(discord: RunningEmulator, root: Path) -> Settings:
    """The daemon's settings, with the project ``repo``: a git repository whose runs each get
    a worktree of their own."""
    settings = watch_settings(discord, root)
    make_repo(root / "repo", {"README.md": "# repo\n", "notes.txt": "one\n"})
    ProjectRegistry(settings.home, allowed_roots=[root]).add(
        "repo", root / "repo", ["claude", "codex"], "claude", worktrees=True
    )
    return settings


def messages(people: People, thread_id: str) -> list[dict[str, Any]]:
    try:
        return people.messages(thread_id)
    except Exception:  # the thread does not exist yet
        return []


def card_of(people: People, thread_id: str) -> dict[str, Any] | None:
    """The run's changes card in its thread, once posted."""
    for message in messages(people, thread_id):
        if str(message.get("content", "")).startswith(("**Changes**", "**No changes**")):
            return message
    return None


def buttons(message: dict[str, Any]) -> dict[str, str]:
    """label -> custom_id of a message's buttons."""
    return {
        b["label"]: b["custom_id"]
        for row in message.get("components") or []
        for b in row.get("components") or []
    }


async def started_run(slash: Slash, people: People, prompt: str, **options: Any) -> tuple[str, str]:
    """``/start`` in project ``repo``; (its thread, its run id) once its card is there."""
    started = await slash.text("start", project="repo", prompt=prompt, **options)
    thread_id = started.split("<#")[1].split(">")[0]
    card = await until(lambda: card_of(people, thread_id), timeout=30)
    found = RUN_IN_CARD.search(card["content"])
    assert found is not None, card["content"]
    return thread_id, found.group(1)


async def click(people: People, thread_id: str, label: str, user: str | None = None) -> Any:
    card = card_of(people, thread_id)
    assert card is not None
    return await asyncio.to_thread(people.click, card["id"], buttons(card)[label], user=user)


async def test_a_finished_run_shows_its_changes_and_merge_lands_them(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    repo = watch_env / "repo"
    fake_spawner.script(
        "add a greeting",
        Scenario(writes=(("hello.txt", "hello\n"), ("notes.txt", "one\ntwo\n"))),
    )
    before = head(repo)
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "add a greeting")
        card = card_of(people, thread_id)
        assert card is not None
        untouched = (repo / "hello.txt").exists(), head(repo)
        shown = await click(people, thread_id, "Show diff")
        diff = await until(
            lambda: next(
                (
                    m["content"]
                    for m in messages(people, thread_id)
                    if "**Diff of run" in m["content"]
                ),
                None,
            )
        )
        merged = await click(people, thread_id, "Merge into main")
        await until(lambda: "Merged" in (card_of(people, thread_id) or {}).get("content", ""))
        said = await until(
            lambda: next(
                (
                    m["content"]
                    for m in messages(people, thread_id)
                    if m["content"].startswith("Merged run")
                ),
                None,
            )
        )
        after = card_of(people, thread_id)
    assert "2 files · +2 −0" in card["content"]
    assert f"`discord-mcp/{run_id}` from `main`" in card["content"]
    assert list(buttons(card)) == ["Show diff", "Merge into main", "Open PR", "Discard"]
    assert all(cid.endswith(f":{settings.machine}") for cid in buttons(card).values())
    assert untouched == (False, before)
    assert shown["acknowledged"]
    assert not shown["expired"]
    assert "```diff" in diff
    assert "+hello" in diff
    assert merged["acknowledged"]
    assert not merged["expired"]
    assert (repo / "hello.txt").read_text(encoding="utf-8") == "hello\n"
    assert (repo / "notes.txt").read_text(encoding="utf-8") == "one\ntwo\n"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "branch", "--list", f"discord-mcp/{run_id}") == ""
    assert after is not None
    assert "✅ **Merged** into `main`" in after["content"]
    assert list(buttons(after)) == ["Show diff"]
    assert f"<@{discord.owner_user_id}>" in said
    result = json.loads(RunFolder.of(settings.home, run_id).result.read_text(encoding="utf-8"))
    assert result["landed"]["action"] == "merged"
    assert result["landed"]["by"] == discord.owner_user_id
    assert result["landed"]["via"] == "button"


async def test_discard_asks_first_and_only_the_owner_may_press_it(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    repo = watch_env / "repo"
    stranger = people.new_user("mallory")
    fake_spawner.script("try something", Scenario(writes=(("junk.txt", "junk\n"),)))
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "try something")
        worktree = settings.home / "worktrees" / run_id
        refused = await click(people, thread_id, "Discard", user=stranger)
        asked = await click(people, thread_id, "Discard")
        asking = card_of(people, thread_id)
        kept = await click(people, thread_id, "Keep it")
        back = card_of(people, thread_id)
        await click(people, thread_id, "Discard")
        await click(people, thread_id, "Discard it")
        await until(lambda: "Discarded" in (card_of(people, thread_id) or {}).get("content", ""))
        people.say(thread_id, "one more thing")
        refusal = await until(
            lambda: next(
                (
                    m["content"]
                    for m in messages(people, thread_id)
                    if "E_RUN_LANDED" in m["content"]
                ),
                None,
            )
        )
    assert refused["ephemeral"]
    assert "E_OWNER_ONLY" in refused["message"]["content"]
    assert asked["acknowledged"]
    assert asking is not None
    assert "**Discard run" in asking["content"]
    assert list(buttons(asking)) == ["Discard it", "Keep it"]
    assert kept["acknowledged"]
    assert back is not None
    assert list(buttons(back)) == ["Show diff", "Merge into main", "Open PR", "Discard"]
    assert not worktree.exists()
    assert git(repo, "branch", "--list", f"discord-mcp/{run_id}") == ""
    assert not (repo / "junk.txt").exists()
    assert "merged or discarded" in refusal or "was discarded" in refusal
    assert len(fake_spawner.runs()) == 1


async def test_a_merge_that_conflicts_is_refused_in_the_thread_and_loses_nothing(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    repo = watch_env / "repo"
    fake_spawner.script("rewrite the notes", Scenario(writes=(("notes.txt", "theirs\n"),)))
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "rewrite the notes")
        mine = await asyncio.to_thread(commit, repo, {"notes.txt": "mine\n"}, "meanwhile")
        await click(people, thread_id, "Merge into main")
        said = await until(
            lambda: next(
                (
                    m["content"]
                    for m in messages(people, thread_id)
                    if "E_MERGE_CONFLICT" in m["content"]
                ),
                None,
            )
        )
        after = card_of(people, thread_id)
    assert "conflicts in notes.txt" in said
    assert head(repo) == mine
    assert (repo / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    worktree = settings.home / "worktrees" / run_id
    assert (worktree / "notes.txt").read_text(encoding="utf-8") == "theirs\n"
    assert head(repo, f"refs/heads/discord-mcp/{run_id}") == head(worktree)
    assert after is not None
    assert "Merge into main" in buttons(after)


def watch(home: Path, *args: str) -> tuple[int, str, str]:
    """``discord-watch <args>`` in this process, as a shell would run it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = watch_main(list(args))
    return code, out.getvalue(), err.getvalue()


async def test_the_shell_merges_through_the_daemon_and_the_card_says_so(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
    monkeypatch: Any,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    monkeypatch.setenv("DISCORD_MCP_HOME", str(settings.home))
    repo = watch_env / "repo"
    fake_spawner.script("write docs", Scenario(writes=(("docs.md", "# docs\n"),)))
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "write docs")
        diffed = await asyncio.to_thread(watch, settings.home, "diff", run_id, "--json")
        stat = await asyncio.to_thread(watch, settings.home, "diff", run_id, "--stat")
        merged = await asyncio.to_thread(watch, settings.home, "merge", run_id, "--json")
        again = await asyncio.to_thread(watch, settings.home, "discard", run_id, "--yes", "--json")
        await until(lambda: "Merged" in (card_of(people, thread_id) or {}).get("content", ""))
    code, out, _ = diffed
    document = json.loads(out)
    assert code == 0
    assert document["changes"] == {"files": 1, "insertions": 1, "deletions": 0}
    assert "+# docs" in document["patch"]
    assert document["branch"] == f"discord-mcp/{run_id}"
    assert stat[0] == 0
    assert "docs.md +1 -0" in stat[1]
    code, out, _ = merged
    assert code == 0
    assert json.loads(out)["landed"]["action"] == "merged"
    assert json.loads(out)["landed"]["via"] == "shell"
    assert (repo / "docs.md").read_text(encoding="utf-8") == "# docs\n"
    code, out, _ = again
    assert code == 2
    assert json.loads(out)["code"] == "E_ALREADY_LANDED"


async def test_discard_from_a_script_needs_yes(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
    monkeypatch: Any,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    monkeypatch.setenv("DISCORD_MCP_HOME", str(settings.home))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    fake_spawner.script("scratch", Scenario(writes=(("scratch.txt", "x\n"),)))
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "scratch")
        unconfirmed = await asyncio.to_thread(watch, settings.home, "discard", run_id, "--json")
        confirmed = await asyncio.to_thread(watch, settings.home, "discard", run_id, "--yes")
        await until(lambda: "Discarded" in (card_of(people, thread_id) or {}).get("content", ""))
    assert unconfirmed[0] == 2
    assert json.loads(unconfirmed[1])["code"] == "E_CONFIRM"
    assert confirmed[0] == 0
    assert confirmed[1].startswith(f"Discarded run {run_id}")
    assert not (settings.home / "worktrees" / run_id).exists()


async def test_diff_in_a_run_thread_posts_the_patch_there(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    fake_spawner.script("a long change", Scenario(writes=(("big.txt", "line\n" * 3000),)))
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "a long change")
        answer = await slash.text("diff", channel=thread_id)
        posted = await until(
            lambda: next(
                (m for m in messages(people, thread_id) if "**Diff of run" in m["content"]), None
            )
        )
    assert answer == f"The diff of run `{run_id}` is posted here."
    assert "The patch is attached." in posted["content"]
    [attachment] = posted["attachments"]
    assert attachment["filename"] == f"{run_id}.patch"


async def test_a_run_without_a_worktree_gets_show_diff_only(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    settings = await asyncio.to_thread(worktree_settings, discord, watch_env)
    fake_spawner.script("in place", Scenario(writes=(("inplace.txt", "here\n"),)))
    async with live_daemon(settings, fake_spawner, discord):
        thread_id, run_id = await started_run(slash, people, "in place", worktree="no")
        card = card_of(people, thread_id)
    assert card is not None
    assert "made in the project's folder" in card["content"]
    assert list(buttons(card)) == ["Show diff"]
    assert (watch_env / "repo" / "inplace.txt").read_text(encoding="utf-8") == "here\n"
    assert not (settings.home / "worktrees" / run_id).exists()
