"""A worktree per run (issue 35), with the real Codex CLI on the scripted model server and a
local ``discord-watch``: two runs of one project at once each write the same file in a
worktree of their own, the project's checkout is untouched until Merge, the second merge
conflicts and loses nothing, Open PR pushes to a local bare remote, Discard removes it all.
Everything is done as a script would do it, with ``discord-watch`` commands.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import ProjectRegistry
from discord_mcp.state.files import off_loop
from discord_mcp.watch.app import run_daemon
from tests.e2e.test_approvals_watch_e2e import discord as discord  # the emulator fixture
from tests.e2e.test_approvals_watch_e2e import messages
from tests.e2e.test_delegate_e2e import PROJECT_ARGS, Script, git, project
from tests.e2e.test_delegate_e2e import script as script  # the fixture: a shell of its own
from tests.support.agent_clis import CLAUDE_MODEL, ClaudeCli
from tests.support.model_server import (
    BuiltinCall,
    ModelRequest,
    ModelServer,
    Reply,
    ScriptError,
    ShellCall,
    Text,
)
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until

pytestmark = pytest.mark.e2e


class TwoRuns:
    """The model of both runs: each writes ``same.txt`` with its own words, once both CLIs have
    asked (so they are running at the same time), then says it is done."""

    def __init__(self) -> None:
        self.asked: set[str] = set()
        self.both = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest) -> Reply:
        said = " ".join(request.user_texts())
        which = "A" if "from run A" in said else "B" if "from run B" in said else None
        if which is None:
            return Text("A short title")
        if request.latest_tool_results():
            return Text(f"Wrote same.txt for run {which}.")
        with self._lock:
            self.asked.add(which)
            if len(self.asked) == 2:
                self.both.set()
        self.both.wait(90)
        return ShellCall(f"printf '%s\\n' 'from run {which}' > same.txt")


def test_two_runs_at_once_work_apart_and_land_only_when_merged(
    script: Script, model_server: ModelServer, tmp_path: Path
) -> None:
    workdir = project(tmp_path, "app")
    start = git(workdir, "rev-parse", "HEAD").strip()
    brain = TwoRuns()
    model_server.script(brain, repeat=True)
    script.start_daemon()
    added = script.run(
        "project", "add", "app", str(workdir), "--tools", "codex", "--worktrees",
        "--args", f"codex={json.dumps(PROJECT_ARGS['codex'])}",
    )  # fmt: skip
    with ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(
                script.json, "submit", "app", f"Write same.txt saying from run {w}", "--wait"
            )
            for w in ("A", "B")
        ]
        (code_a, a), (code_b, b) = (r.result(timeout=400) for r in runs)
    written = [
        (Path(r["worktree"]) / "same.txt").read_text(encoding="utf-8")
        for r in (a, b)
        if r.get("worktree")
    ]
    untouched = (
        (workdir / "same.txt").exists(),
        git(workdir, "rev-parse", "HEAD").strip(),
        git(workdir, "status", "--porcelain"),
    )
    diff_code, diff = script.json("diff", a["run_id"])
    merged_code, merged = script.json("merge", a["run_id"])
    conflict_code, conflict = script.json("merge", b["run_id"])
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    git(workdir, "remote", "add", "origin", str(tmp_path / "remote.git"))
    pr_code, pr = script.json("pr", b["run_id"])
    pushed = git(tmp_path / "remote.git", "branch", "--list")
    discard_code, discarded = script.json("discard", b["run_id"], "--yes")
    err = script.stop_daemon()

    assert added.returncode == 0, added.stderr
    assert brain.both.is_set(), "the two runs did not run at the same time"
    assert (code_a, code_b) == (0, 0), (a, b, err)
    for result in (a, b):
        assert result["status"] == "completed", result
        assert result["branch"] == f"discord-mcp/{result['run_id']}"
        assert result["base_commit"] == start
        assert result["head_commit"] != start
        assert result["changes"] == {"files": 1, "insertions": 1, "deletions": 0}
        assert result["landed"] is None
        assert Path(result["worktree"]).parent == script.home / "worktrees"
    assert written == ["from run A\n", "from run B\n"]
    assert untouched == (False, start, "")
    assert diff_code == 0
    assert "+from run A" in diff["patch"]
    assert merged_code == 0, merged
    assert merged["landed"]["action"] == "merged"
    assert (workdir / "same.txt").read_text(encoding="utf-8") == "from run A\n"
    assert not Path(a["worktree"]).exists()
    assert conflict_code == 2, conflict
    assert conflict["code"] == "E_MERGE_CONFLICT"
    assert "same.txt" in conflict["message"]
    assert (workdir / "same.txt").read_text(encoding="utf-8") == "from run A\n"  # nothing was lost
    assert pr_code == 0, pr
    assert pr["landed"]["action"] == "pr"
    assert str(tmp_path / "remote.git") in pr["message"]
    assert f"discord-mcp/{b['run_id']}" in pushed
    assert discard_code == 0, discarded
    assert not Path(b["worktree"]).exists()
    assert git(workdir, "branch", "--list", "discord-mcp/*") == ""
    folder = script.home / "runs" / b["run_id"]
    record = json.loads((folder / "worktree.json").read_text(encoding="utf-8"))
    assert [(x["action"], x["ok"]) for x in record["actions"]] == [
        ("merge", False),
        ("pr", True),
        ("discard", True),
    ]
    result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    assert result["landed"]["action"] == "discarded"


# -- in Discord, with the buttons


WORKING_DIRECTORY = re.compile(r"(/[^\s\"\\]*?/worktrees/run_\d{8}_\d{6}_[0-9a-f]{6})")
"""The run's worktree, as Claude Code tells its model where it works."""


class Writer:
    """The model of a Claude Code run: write ``name`` in its working directory with Write (an
    absolute path, as Claude Code wants), then say so."""

    def __call__(self, request: ModelRequest) -> Reply:
        named = re.findall(r"write (\w+\.txt)", " ".join(request.user_texts()))
        if not named:
            return Text("A short title")
        name = named[-1]  # this turn's prompt
        if request.latest_tool_results():
            return Text(f"Wrote {name}.")
        cwd = WORKING_DIRECTORY.search(request.dump())
        if cwd is None:
            raise ScriptError("Claude Code did not say its working directory")
        return BuiltinCall(
            "Write", {"file_path": f"{cwd.group(1)}/{name}", "content": f"{name} says hi\n"}
        )


def card(people: People, thread_id: str, starts: str) -> dict[str, Any] | None:
    found = [m for m in messages(people, thread_id) if m["content"].startswith(starts)]
    return found[-1] if found else None


def labelled(message: dict[str, Any], label: str) -> str:
    for row in message.get("components") or []:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return str(component["custom_id"])
    raise AssertionError(f"no button {label!r} in {message['content'][:80]!r}")


def shown(message: dict[str, Any] | None) -> str:
    return str((message or {}).get("content") or "")


def asked(message: dict[str, Any] | None) -> dict[str, Any] | None:
    """The card once it asks whether to discard (its buttons are Discard it / Keep it)."""
    return message if message and "Discard it" in str(message.get("components")) else None


async def press(people: People, message: dict[str, Any], label: str) -> dict[str, Any]:
    return await asyncio.to_thread(people.click, message["id"], labelled(message, label))


async def a_run(people: People, discord: RunningEmulator, prompt: str) -> str:
    thread_id = str(people.say(discord.channel_id, f"!start app {prompt}")["id"])
    approval = await until(
        lambda: card(people, thread_id, "**Approval needed**"), what="the approval", seconds=90
    )
    assert "```diff" in approval["content"], approval["content"]
    assert "says hi" in approval["content"]
    assert '"content"' not in approval["content"]  # the diff, not the raw tool input
    await press(people, approval, "Allow once")
    return thread_id


async def test_claudes_write_asks_with_a_diff_and_the_buttons_merge_and_discard(
    discord: RunningEmulator, people: People, model_server: ModelServer, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="0.2")
    cli = ClaudeCli(
        root=tmp_path / "clis", model_url=model_server.base_url, proxy_url=model_server.proxy_url
    )
    workdir = project(tmp_path, "app")
    await off_loop(
        functools.partial(
            ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add, worktrees=True
        ),
        "app",
        workdir,
        ["claude"],
        "claude",
        {"claude": ["--model", CLAUDE_MODEL]},
    )
    model_server.script(Writer(), repeat=True)
    environ = {**os.environ, "DISCORD_WATCH_ROOTS": str(tmp_path)}
    task = asyncio.create_task(
        run_daemon(settings, environ=environ, tool_env={"claude": cli.env()})
    )
    try:
        await until(lambda: people.state()["stats"]["gateway_connections_open"] == 1, seconds=60)
        kept = await a_run(people, discord, "write kept.txt")
        changes = await until(lambda: card(people, kept, "**Changes**"), seconds=90)
        untouched = (workdir / "kept.txt").exists()
        await press(people, changes, "Show diff")
        await until(lambda: card(people, kept, "**Diff of run"), seconds=30)
        await press(people, changes, "Merge")
        await until(lambda: "Merged" in shown(card(people, kept, "**Changes**")))

        dropped = await a_run(people, discord, "write dropped.txt")
        second = await until(lambda: card(people, dropped, "**Changes**"), seconds=90)
        await press(people, second, "Discard")
        asking = await until(lambda: asked(card(people, dropped, "**Changes**")), seconds=10)
        await press(people, asking, "Discard it")
        await until(lambda: "Discarded" in shown(card(people, dropped, "**Changes**")))
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=30)
    assert untouched is False
    assert (workdir / "kept.txt").read_text(encoding="utf-8") == "kept.txt says hi\n"
    assert not (workdir / "dropped.txt").exists()
    assert git(workdir, "status", "--porcelain") == ""
    assert git(workdir, "branch", "--list", "discord-mcp/*") == ""
    assert not any((settings.home / "worktrees").iterdir())
