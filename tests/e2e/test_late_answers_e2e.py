"""Late answers reach the run that asked, with the real Claude Code against the scripted model.

A run's agent asks a question, stops waiting (its bound is seconds here) and its job ends; the
owner answers later, and ``discord-watch`` resumes the same session in the same thread with a
prompt that gives the answer, once (the claim on the decision file, which a restarted daemon
reads too, is tested in ``tests/watch/test_late_answers.py``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.state.files import off_loop
from tests.e2e.test_approvals_watch_e2e import (
    REPLY_HINT,
    project_in,
    start_run,
    texts,
)
from tests.support.agent_clis import ClaudeCli
from tests.support.model_server import ModelServer, Text, ToolCall, quote_tool_result
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until
from tests.support.watch_world import watching

pytestmark = pytest.mark.e2e


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


@pytest.fixture
def model_server() -> AsyncIterator[ModelServer]:
    with ModelServer() as server:
        yield server  # type: ignore[misc]
        assert not server.outbound_attempts, server.outbound_attempts


QUESTION = {"question": "Squash the commits before merging?", "options": ["Squash", "Keep"]}


@pytest.mark.timeout(360)  # waits up to 150 s for the resumed job, after a first job
async def test_an_answer_after_the_run_stopped_waiting_resumes_the_session_once(
    discord: RunningEmulator, people: People, model_server: ModelServer, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="0.2")
    claude = ClaudeCli(
        root=tmp_path / "clis", model_url=model_server.base_url, proxy_url=model_server.proxy_url
    )
    await project_in(settings, tmp_path, "claude")
    model_server.script(
        ToolCall("discord", "ask_decision", QUESTION),
        quote_tool_result("Still waiting: {result}"),
        Text("Squashing now, as the owner chose."),
    )
    environ = {**os.environ, "DISCORD_WATCH_ROOTS": str(tmp_path)}
    # The run's discord-mcp gives up waiting after 2 s (it inherits Claude Code's environment).
    tool_env = {"claude": {**claude.env(), "DISCORD_MCP_MAX_BLOCK_SECONDS": "2"}}
    async with watching(settings, environ, tool_env):
        thread_id = await start_run(people, discord)
        people.say(thread_id, "merge the branch")
        told = await until(
            lambda: [t for t in texts(people, thread_id) if "Still waiting:" in t],
            what="the pending result",
        )
        assert '"status": "pending"' in told[0] or '"status":"pending"' in told[0]
        await until(
            lambda: sum(REPLY_HINT in t for t in texts(people, thread_id)) >= 1,
            what="the first job's end",
        )
        store = DecisionStore(settings.home)
        (decision,) = await off_loop(store.open_decisions)  # pending: still open
        assert decision.from_run
        assert decision.status == "pending"
        people.say(thread_id, "B")  # the owner answers after the agent stopped listening
        await until(
            lambda: any("Squashing now" in t for t in texts(people, thread_id)),
            seconds=150,  # the daemon's next look (every 5 s), then a whole Claude Code job
            what="the resumed job's answer",
        )
    prompts = [t for r in model_server.turn_requests() for t in r.user_texts()]
    resumed = [p for p in prompts if "owner's answer to the question you asked earlier" in p]
    assert len(resumed) == 1
    assert "Squash the commits before merging?" in resumed[0]
    assert "B) Keep" in resumed[0]
    # The same session: the resumed request carries the first job's conversation.
    last = model_server.turn_requests()[-1]
    assert last.contains("Still waiting:")
    stored = await off_loop(store.load, decision.id)
    assert stored.delivered
    assert stored.resumed_at is not None
    starts = [t for t in texts(people, thread_id) if "resuming the session with the answer" in t]
    assert len(starts) == 1
