"""``discord-watch`` resumes a run once per late answer, across restarts: the claim is on the
decision file, so a second daemon (or a second look) finds nothing left to resume."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.resumes import LateAnswers
from tests.decisions.test_store import make_decision
from tests.support.people import People
from tests.support.settings import settings_for


@dataclass
class FakeEngine:
    """Every thread is a run thread; submitted jobs are recorded."""

    submitted: list[tuple[str, str]] = field(default_factory=list)

    async def submit(self, thread_id: str, message_id: str, prompt: str, author: str) -> Any:
        self.submitted.append((thread_id, prompt))
        return SimpleNamespace(job_id=f"job-{len(self.submitted)}")

    def session(self, thread_id: str) -> Any:
        return SimpleNamespace(thread_id=thread_id)


async def test_a_late_answer_resumes_its_run_once_even_after_a_restart(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    thread_id = discord.channel_id  # the fake engine takes any channel for a run thread
    store = DecisionStore(settings.home)
    decision = make_decision(
        thread_id=thread_id,
        from_run=True,
        status="answered",
        answer="A",
        selected_option="Yes",
        selected_index=0,
    )
    await off_loop(store.create, decision)
    in_time = make_decision(
        thread_id=thread_id, from_run=True, status="answered", answer="B", delivered=True
    )
    await off_loop(store.create, in_time)
    engine = FakeEngine()
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        first = LateAnswers(store=store, engine=engine, rest=rest)  # type: ignore[arg-type]
        assert await first.check() == ["job-1"]
        assert await first.check() == []
        restarted = LateAnswers(store=DecisionStore(settings.home), engine=engine, rest=rest)  # type: ignore[arg-type]
        assert await restarted.check() == []
    assert len(engine.submitted) == 1
    assert engine.submitted[0][0] == thread_id
    assert "Answer from the owner: A) Yes" in engine.submitted[0][1]
    started = [
        m["content"]
        for m in people.messages(thread_id)
        if "resuming the session with the answer" in m["content"]
    ]
    assert len(started) == 1
