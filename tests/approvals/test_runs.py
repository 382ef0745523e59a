"""Approvals in discord-watch runs: the final message's list of calls not run, late Allows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from discord_mcp.approvals import report, resume
from discord_mcp.approvals.request import ToolRequest
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.runs.journal.views import JobView
from discord_mcp.watch.notifier import final_message
from tests.approvals.test_cards import approval

START = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def stored(store: DecisionStore, number: int, minute: int, **changes: object) -> Decision:
    request = ToolRequest("claude", "Bash", {"command": f"make step{number}"}, "s")
    decision = approval(request, **changes).replace(
        id=f"20261123-1200{number:02d}-abcdef",
        asked_at=(START + dt.timedelta(minutes=minute)).isoformat(),
    )
    store.create(decision)
    return decision


def test_a_jobs_calls_not_run_are_its_denials_and_unanswered_approvals(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    stored(store, 1, 1, status="answered", answer="allow")
    stored(
        store,
        2,
        2,
        status="answered",
        answer="deny",
        note="not on a Friday",
        answered_by_name="Ann",
    )
    stored(store, 3, 3, gave_up_at="2026-11-23T12:13:00+00:00")
    stored(store, 4, 30, status="answered", answer="deny")  # another job, later
    stored(store, 5, 2, status="answered", answer="deny", thread_id="other")
    found = report.not_run_during(store, "2", START, START + dt.timedelta(minutes=20))
    assert [d.id[-13:-7] for d in found] == ["120002", "120003"]
    lines = report.not_run_lines(found)
    assert lines[0] == "• `Bash` `make step2`: denied by Ann: “not on a Friday”"
    assert "no one answered within 10 minutes (still open on its card)" in lines[1]


def job(state: str = "success") -> JobView:
    return JobView(
        job_id="job-1",
        thread_id="2",
        message_id="9",
        author="ann",
        prompt="go",
        state=state,  # type: ignore[arg-type]
        attempt=1,
        retry_of=None,
        retried_by=None,
        tool="claude",
        project_name="app",
        error_code=None,
        error_message=None,
        enqueued_at=START,
        started_at=START,
        finished_at=START,
        duration=3.0,
        session_key="s",
        resumed=False,
        result_excerpt="All set.",
        usage=None,
        cost_usd=None,
        exit_code=0,
        pid=None,
        reattached=False,
        final_text="All set.",
    )


def test_the_final_message_lists_the_calls_that_did_not_run(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    denied = stored(store, 2, 1, status="answered", answer="deny")
    text = final_message(job(), [denied])
    assert text.startswith("All set.")
    assert "1 tool call not run" in text
    assert "make step2" in text
    assert final_message(job(), []).startswith("All set.\n\n-# Reply")


def test_a_late_allow_of_a_run_is_resumed_once(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    late = stored(
        store,
        1,
        1,
        status="answered",
        answer="allow",
        gave_up_at="2026-11-23T12:11:00+00:00",
        answered_by_name="Ann",
    )
    store.update(late.id, lambda d: d.replace(approval={**(d.approval or {}), "resume": True}))
    stored(store, 2, 1, status="answered", answer="allow")  # in time: nothing to resume
    not_a_run = stored(
        store, 3, 1, status="answered", answer="allow", gave_up_at="2026-11-23T12:11:00+00:00"
    )
    assert [d.id for d in resume.due(store)] == [late.id]
    assert not_a_run.id not in [d.id for d in resume.due(store)]
    claimed = resume.claim(store, late.id)
    assert claimed is not None
    assert resume.claim(store, late.id) is None
    assert resume.due(store) == []
    prompt = resume.resume_prompt(claimed)
    assert "Ann has now approved" in prompt
    assert "make step1" in prompt
    assert "retry" in prompt


def test_the_job_clock_stops_while_an_approval_waits_and_runs_once_the_agent_gave_up(
    tmp_path: Path,
) -> None:
    from discord_mcp.watch.waiting import waited_seconds

    store = DecisionStore(tmp_path)
    since = START.timestamp()
    # Asked at +1 min; the agent was told no one answered at +11 min; allowed late at +30 min.
    gave_up = stored(store, 1, 1, gave_up_at=(START + dt.timedelta(minutes=11)).isoformat())
    late = gave_up.replace(
        status="answered", answer="allow",
        answered_at=(START + dt.timedelta(minutes=30)).isoformat(),
    )  # fmt: skip
    now = since + 40 * 60
    assert waited_seconds([gave_up], "2", since, now) == 600
    assert waited_seconds([late], "2", since, now) == 600
    pending = gave_up.replace(gave_up_at=None)
    assert waited_seconds([pending], "2", since, now) == 39 * 60  # still waiting: all of it
