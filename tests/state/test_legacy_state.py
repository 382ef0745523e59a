"""A state directory written by discord-mcp before issue 38 (tests/data/legacy_state, made by
that version's own store, inbox and run engine) upgrades on discord-watch's first start: done
decisions move to their archive, and every answer, run and inbox mark is still there."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions import archive
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.hooks import session_start
from discord_mcp.inbox import Inbox, Reader
from discord_mcp.runs.folders.folders import read_status
from discord_mcp.runs.journal import journal
from discord_mcp.watch.app import run_daemon
from tests.support.settings import settings_for
from tests.support.waiting import until

LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_state"
EXPECTED: dict[str, Any] = json.loads((LEGACY / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(LEGACY / "home", home)
    return home


@contextlib.asynccontextmanager
async def watching(settings: Settings) -> AsyncIterator[None]:
    task = asyncio.create_task(run_daemon(settings, environ={}))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(15):
                await task


def open_files(home: Path) -> set[str]:
    return {p.name[:-5] for p in (home / "decisions").glob("*.json")}


async def test_discord_watchs_first_start_migrates_and_every_answer_run_and_mark_survives(
    discord: RunningEmulator, home: Path
) -> None:
    decisions = {d["id"]: Decision.from_json(d) for d in EXPECTED["decisions"]}
    assert open_files(home) == set(decisions)  # the old layout: everything in decisions/
    now = datetime.now(UTC)
    still_open = {i for i, d in decisions.items() if not archive.retirable(d, now)}
    assert 0 < len(still_open) < len(decisions)

    async with watching(settings_for(discord, home)):
        await until(lambda: open_files(home) == still_open, timeout=60)
    await asyncio.to_thread(everything_survived, home, decisions, still_open)


def everything_survived(home: Path, decisions: dict[str, Decision], still_open: set[str]) -> None:
    store = DecisionStore(home)
    # Every answer, as it was written, found by id, by thread and in the history.
    for decision_id, decision in decisions.items():
        assert store.load(decision_id) == decision
        assert decision_id in {d.id for d in store.in_thread(decision.thread_id)}
    assert {d.id for d in store.history()} == set(decisions) - still_open
    # The answer that came while no session listened is still handed to the next session.
    answer = session_start.decide(
        store, {"session_id": "new", "cwd": "/work/app"}, lambda d: d.project == "app"
    )
    assert answer is not None
    away = [d for d in decisions.values() if d.question == "Question 3?"]
    assert away[0].id in answer["hookSpecificOutput"]["additionalContext"]

    # Every run: its session in the journal, its folder with each turn's result.
    sessions = journal.load(home / "runs").state.sessions
    for run in EXPECTED["runs"]:
        assert sessions[run["thread_id"]].run_id == run["run_id"]
        status = read_status(home, run["run_id"])
        assert status["status"] == "completed"
        assert len(status["result"]["turns"]) == run["turns"]

    # Every inbox mark: version 2 marked by project name, and still means that project.
    inbox = Inbox(home)
    app, other = Reader("/work/app", "app"), Reader("/elsewhere/other", "other")
    stranger = Reader("/work/third", "third")
    marks = EXPECTED["inbox"]
    seen_by_app = {i.message_id: i.read for i in inbox.read(project=app, unread_only=False)}
    assert seen_by_app == {m: "app" in v["read_by"] for m, v in marks.items()}
    assert inbox.read(project=other, unread_only=False) == []  # it cleared everything it read
    shared = [m for m in marks if m != "1400000000000003003"]  # 3 is from app's thread
    assert [i.message_id for i in inbox.read(project=stranger)] == shared  # none read by it
    document = json.loads((home / "inbox" / "items.json").read_text(encoding="utf-8"))
    assert document["version"] == 2  # reading changed nothing; the next write makes it 3
