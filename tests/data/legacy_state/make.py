"""Writes ``home/``: a state directory in the formats of discord-mcp before issue 38, made by
that code's own store, inbox and run engine (not by hand). ``tests/state/test_legacy_state.py``
upgrades a copy and checks that every answer, run and inbox mark survives.

It was run once on main at 08ee701 (before issue 38 changed the layout):

    .venv/bin/python -m tests.data.legacy_state.make

Run again, it would write the newer layout: the committed ``home/`` is the fixture, this
script the record of how it was made. ``expected.json`` lists what the test checks.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.inbox import Inbox, InboxItem
from discord_mcp.runs import TOOLS, ProjectRegistry, RunEngine, RunLimits
from discord_mcp.runs.folders.folders import new_run_id
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario

HERE = Path(__file__).resolve().parent
CHANNEL = "1400000000000000001"


def _decision(number: int, **fields: Any) -> Decision:
    thread = str(1400000000000001000 + number)
    values: dict[str, Any] = {
        "id": f"202601{1 + number % 28:02d}-1200{number % 60:02d}-{number:06x}",
        "project": "app",
        "project_key": "/work/app",
        "session": f"s{number % 3}",
        "question": f"Question {number}?",
        "context": None,
        "options": ("Yes", "No"),
        "channel_id": CHANNEL,
        "thread_id": thread,
        "card_message_id": str(1400000000000002000 + number),
        "thread_url": f"https://discord.com/channels/1/{thread}",
        "asked_at": f"2026-01-{1 + number % 28:02d}T12:00:{number % 60:02d}.000+00:00",
        "own_thread": True,
        "card_buttons": True,
    }
    values.update(fields)
    return Decision(**values)


ANSWER = {
    "status": "answered",
    "answer": "Yes",
    "selected_option": "Yes",
    "selected_index": 0,
    "answered_by": "1400000000000000009",
    "answered_by_name": "owner",
    "via": "button",
    "answered_at": "2026-01-02T12:00:00.000+00:00",
}


def decisions(home: Path) -> list[dict[str, Any]]:
    """Every kind of decision the old store holds, each through the store's own writes."""
    store = DecisionStore(home)
    made: list[tuple[Decision, dict[str, Any]]] = [
        (_decision(1), {}),  # pending
        (_decision(2), {**ANSWER, "delivered": True, "final_shown": True}),  # done
        (_decision(3), {**ANSWER, "final_shown": True}),  # answered while away
        (_decision(4), {"status": "cancelled", "final_shown": True}),
        (_decision(5), {"status": "expired", "final_shown": True}),
        (_decision(6), {**ANSWER, "delivered": True}),  # outcome not shown on its card
        (_decision(7, from_run=True), {**ANSWER, "final_shown": True}),  # a run's late answer
        (
            _decision(8, project="other", project_key="/work/other"),
            {**ANSWER, "delivered": True, "final_shown": True},
        ),
        (
            _decision(
                9,
                kind="approval",
                options=("Allow", "Deny"),
                approval={"client": "claude", "session_id": "cc-1", "subject": "Bash ls"},
            ),
            {
                "status": "answered",
                "answer": "allow",
                "scope": "session",
                "delivered": True,
                "final_shown": True,
            },
        ),
        (_decision(10, thread_id=str(1400000000000001002)), {}),  # pending, in 2's thread
    ]
    for number in range(11, 41):  # a history: answered and delivered long ago
        made.append((_decision(number), {**ANSWER, "delivered": True, "final_shown": True}))
    expected = []
    for draft, outcome in made:
        store.create(draft)
        if outcome:
            final = {k: v for k, v in outcome.items() if k in ("status",) or k in ANSWER}
            store.finish(draft.id, **final)
            rest = {k: v for k, v in outcome.items() if k not in final}
            if rest:
                store.update(draft.id, lambda current, rest=rest: current.replace(**rest))
        stored = store.load(draft.id)
        expected.append(stored.to_json())
    return expected


def inbox(home: Path) -> dict[str, Any]:
    """Notes read and cleared by projects named ``app`` and ``other``, as the old inbox keeps
    them (by project name)."""
    box = Inbox(home)

    def item(number: int, project: str | None) -> InboxItem:
        return InboxItem(
            message_id=str(1400000000000003000 + number),
            channel_id=CHANNEL,
            thread_id=None if project is None else str(1400000000000001000 + number),
            author_id="1400000000000000009",
            author="owner",
            content=f"note {number}",
            timestamp="2026-01-03T12:00:00.000+00:00",
            project=project,
        )

    box.add([item(1, None), item(2, None), item(3, "app"), item(4, None), item(5, "other")])
    box.read(project="app", limit=2, mark_read=True)  # app read its newest two
    box.read(project="other", mark_read=True)
    box.clear(project="other")  # other cleared what it read
    document = json.loads(box.path.read_text(encoding="utf-8"))
    return {
        item["message_id"]: {"read_by": item["read_by"], "cleared_by": item["cleared_by"]}
        for item in document["items"]
    }


async def runs(home: Path, scratch: Path) -> list[dict[str, Any]]:
    """Two runs of the real engine with the scripted fake CLI, one of them resumed."""
    project = scratch / "app"
    project.mkdir()
    registry = ProjectRegistry(home, allowed_roots=[scratch])
    await asyncio.to_thread(registry.add, "app", project, TOOLS, "claude")
    spawner = FakeSpawner(scratch / "fake")
    spawner.script("hello", Scenario(sample="claude-mcp.jsonl"))
    notifier = RecordingNotifier()
    limits = RunLimits(poll_interval=0.01, status_interval=0.05, job_timeout=60.0)
    made = []
    engine = RunEngine(
        state_dir=home,
        projects=registry,
        notifier=notifier,
        spawner=spawner,
        limits=limits,
        env={"PATH": "/usr/bin:/bin"},
    )
    async with engine:
        for number, thread in enumerate(("1400000000000004001", "1400000000000004002")):
            run_id = new_run_id(1_767_000_000 + number)
            await engine.start_session(thread, "app", "claude", run_id=run_id)
            for turn in range(number + 1):
                job = await engine.submit(thread, f"m{number}{turn}", "hello", "owner")
                await notifier.wait_finished(job.job_id)
            made.append({"run_id": run_id, "thread_id": thread, "turns": number + 1})
    return made


def main() -> int:
    target = HERE / "home"
    if target.exists():
        print(f"{target} exists: remove it first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        home = scratch / "home"
        expected = {
            "decisions": decisions(home),
            "inbox": inbox(home),
            "runs": asyncio.run(runs(home, scratch)),
        }
        shutil.copytree(home, target, ignore=shutil.ignore_patterns("*.lock", "*.wait", "*.post"))
    (HERE / "expected.json").write_text(
        json.dumps(expected, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
