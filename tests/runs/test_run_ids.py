"""A run id names a folder under ``runs/`` and nothing else: a traversal that reaches a REAL
file outside ``runs/`` (a victim ``session.json`` next to it) is refused with E_RUN_NOT_FOUND
by every function that turns an id into a path, and the victim is neither read nor written.

The traversals start with a real run's folder, so the path really resolves (a missing folder
would raise anyway, and prove nothing): ``runs/<run>/../../victim`` is ``<home>/victim``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.folders.folders import (
    RunFolder,
    RunQueue,
    check_run_id,
    is_run_id,
    read_status,
)
from tests.runs.conftest import EngineFactory

REAL = "run_20260101_000000_abcdef"
"""A run whose folder exists."""
MARK = "VICTIM-SESSION-OUTSIDE-RUNS"
TRAVERSALS = (
    f"{REAL}/../../victim",
    f"{REAL}/../../victim/",
    f"{REAL}/../../victim/.",
    f"{REAL}/./../../victim",
)
LOOK_ALIKES = (
    f"{REAL}\n",  # ``$`` matches before a final newline
    "run_２０２６０１０１_000000_abcdef",  # fullwidth digits are digits to ``\d``
    f" {REAL}",
    f"{REAL} ",
    REAL.upper(),
    f"{REAL}0",
)


def make_victim(home: Path) -> Path:
    """``<home>/runs/REAL/`` (empty) and ``<home>/victim/`` holding a run's files."""
    (home / "runs" / REAL).mkdir(parents=True)
    victim = home / "victim"
    victim.mkdir()
    session = {"run_id": REAL, "state": "completed", "engine": MARK, "project": MARK}
    (victim / "session.json").write_text(json.dumps(session), encoding="utf-8")
    (victim / "request.json").write_text(json.dumps({"message": MARK}), encoding="utf-8")
    (victim / "events.md").write_text(f"# {MARK}\n", encoding="utf-8")
    for traversal in TRAVERSALS:  # the test reaches a real file, or it proves nothing
        assert MARK in (home / "runs" / traversal / "session.json").read_text(encoding="utf-8")
    return victim


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("bad", TRAVERSALS + LOOK_ALIKES)
def test_check_run_id_refuses_traversals_and_look_alikes_with_its_code(bad: str) -> None:
    assert not is_run_id(bad)
    with pytest.raises(RunError) as refused:
        check_run_id(bad)
    assert refused.value.code == "E_RUN_NOT_FOUND"
    assert check_run_id(REAL) == REAL


@pytest.mark.parametrize("bad", TRAVERSALS)
def test_no_run_folder_or_status_is_made_of_a_traversal_to_a_real_session(
    bad: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    make_victim(home)
    with pytest.raises(RunError) as folder:
        RunFolder.of(home, bad)
    assert folder.value.code == "E_RUN_NOT_FOUND"
    with pytest.raises(RunError) as status:
        read_status(home, bad)
    assert status.value.code == "E_RUN_NOT_FOUND"
    assert MARK not in str(status.value)


@pytest.mark.parametrize("bad", TRAVERSALS[:1] + LOOK_ALIKES[:2])
def test_no_request_is_queued_under_a_traversal(bad: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    victim = make_victim(home)
    before = snapshot(victim)
    with pytest.raises(RunError) as refused:
        RunQueue(home).put({"run_id": bad, "reply_id": "1", "mode": "resume", "message": "x"})
    assert refused.value.code == "E_RUN_NOT_FOUND"
    assert snapshot(victim) == before
    assert list((home / "runs" / "queue").glob("*")) == []


def test_a_queued_request_naming_a_traversal_is_dropped_unread(tmp_path: Path) -> None:
    """A request file someone put in ``runs/queue/`` by hand is dropped, the victim left."""
    home = tmp_path / "home"
    victim = make_victim(home)
    before = snapshot(victim)
    queue = home / "runs" / "queue"
    queue.mkdir()
    dropped = queue / f"{REAL}.1.json"
    document = {"version": 1, "run_id": TRAVERSALS[0], "mode": "resume", "reply_id": "1"}
    dropped.write_text(json.dumps(document), encoding="utf-8")
    assert RunQueue(home).claim(dropped) is None
    assert not dropped.exists()
    assert snapshot(victim) == before


async def test_the_engine_opens_no_run_under_a_traversal_and_writes_nothing_outside_runs(
    make_engine: EngineFactory, state_dir: Path, registry: ProjectRegistry
) -> None:
    victim = await asyncio.to_thread(make_victim, state_dir)
    before = await asyncio.to_thread(snapshot, victim)
    async with make_engine() as engine:
        for bad in TRAVERSALS:
            with pytest.raises(RunError) as refused:
                await engine.start_session(f"t-{len(bad)}", "app", "claude", run_id=bad)
            assert refused.value.code == "E_RUN_NOT_FOUND"
        assert engine.sessions() == []
    assert await asyncio.to_thread(snapshot, victim) == before
