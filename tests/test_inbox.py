"""The inbox: written by the daemon and the server at once, nothing lost, nothing twice."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from discord_mcp.inbox import MAX_ITEMS, Inbox, InboxItem, Reader
from discord_mcp.state.quarantine import find_quarantined, take_reports

API = Reader("/work/api", "api")
WEB = Reader("/work/web", "web")


def item(n: int, *, read: bool = False, project: str | None = None) -> InboxItem:
    return InboxItem(
        message_id=str(800000000000000000 + n),
        channel_id="1",
        thread_id=None,
        author_id="2",
        author="owner",
        content=f"m{n}",
        timestamp="2026-11-22T00:00:00+00:00",
        project=project,
        read=read,
    )


def contents(items: list[InboxItem]) -> list[str]:
    return [i.content for i in items]


def _daemon(home: str) -> None:
    inbox = Inbox(Path(home))
    for n in range(60):
        inbox.add([item(n)])


def _server(home: str) -> None:
    inbox = Inbox(Path(home))
    for _ in range(60):
        inbox.read(project=None, mark_read=True)


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_daemon, args=(str(tmp_path),)),
        context.Process(target=_server, args=(str(tmp_path),)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    everything = Inbox(tmp_path).read(project=None, unread_only=False)
    assert [i.content for i in everything] == [f"m{n}" for n in range(60)]


def test_the_same_message_is_stored_once(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    assert inbox.add([item(1), item(2)]) == 2
    assert inbox.add([item(2), item(3)]) == 1
    assert [i.content for i in inbox.read(project=None)] == ["m1", "m2", "m3"]


def test_overflow_drops_the_oldest_read_items_first(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.add([item(n, read=n < 10) for n in range(MAX_ITEMS + 5)])
    kept = inbox.read(project=None, unread_only=False)
    assert len(kept) == MAX_ITEMS
    assert sum(1 for i in kept if i.read) == 5
    assert kept[-1].content == f"m{MAX_ITEMS + 4}"


def test_a_note_for_every_agent_survives_one_project_reading_and_clearing_it(
    tmp_path: Path,
) -> None:
    inbox = Inbox(tmp_path)
    inbox.add([item(1), item(2, project="api")])
    assert contents(inbox.read(project=API, mark_read=True)) == ["m1", "m2"]
    assert inbox.clear(project=API) == 2
    assert inbox.read(project=API, unread_only=False) == []
    # The shared note is still there, unread, for the other project; api's own note is gone.
    [note] = inbox.read(project=WEB)
    assert (note.content, note.read) == ("m1", False)
    assert contents(inbox.read(project=None, unread_only=False)) == ["m1"]


def test_read_marks_are_per_project(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.add([item(1)])
    inbox.read(project=API, mark_read=True)
    assert inbox.read(project=API) == []
    assert contents(inbox.read(project=WEB)) == ["m1"]
    assert inbox.read(project=API, unread_only=False)[0].read is True
    assert inbox.read(project=WEB, unread_only=False)[0].read is False


def test_a_cleared_message_never_comes_back_when_it_is_seen_again(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.add([item(1, project="api")])
    inbox.clear(project=API, read_only=False)
    assert inbox.add([item(1, project="api")]) == 0  # catch-up or a recovery re-read
    assert inbox.read(project=API) == []


def test_a_version_1_inbox_is_migrated_losing_nothing(tmp_path: Path) -> None:
    path = tmp_path / "inbox" / "items.json"
    path.parent.mkdir()
    old = [
        _v1(1, read=True),
        _v1(2, read=False, project="api"),
        _v1(3, read=True, project="api"),
    ]
    path.write_text(json.dumps({"version": 1, "items": old}), encoding="utf-8")
    inbox = Inbox(tmp_path)
    everything = inbox.read(project=None, unread_only=False)
    assert [(i.content, i.read) for i in everything] == [("m1", True), ("m2", False), ("m3", True)]
    # A version-1 read mark counted for everyone, and still does.
    assert contents(inbox.read(project=API)) == ["m2"]
    assert contents(inbox.read(project=WEB)) == []
    inbox.add([item(4)])  # the next write is version 3, with everything kept
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["version"] == 3
    assert [i["content"] for i in document["items"]] == ["m1", "m2", "m3", "m4"]


def _v1(n: int, *, read: bool, project: str | None = None) -> dict[str, object]:
    return {
        "message_id": str(800000000000000000 + n),
        "channel_id": "1",
        "thread_id": None,
        "author_id": "2",
        "author": "owner",
        "content": f"m{n}",
        "timestamp": "2026-11-22T00:00:00+00:00",
        "project": project,
        "read": read,
    }


def test_a_corrupt_inbox_is_set_aside_and_told_to_every_project_once(tmp_path: Path) -> None:
    path = tmp_path / "inbox" / "items.json"
    path.parent.mkdir()
    path.write_text('{"version": 2, "items": [', encoding="utf-8")
    take_reports()
    inbox = Inbox(tmp_path)
    assert inbox.add([item(1)]) == 1  # the daemon found it: it carries on with a new inbox
    [moved] = find_quarantined(tmp_path)
    take_reports()  # (the daemon's own report; it has no tool results)
    assert inbox.needs_rebuild() == [str(moved)]
    for project in (API, WEB):
        assert contents(inbox.read(project=project)) == ["m1"]
        [report] = take_reports()
        assert report.moved_to == str(moved)
        assert "messages may be missing" in report.sentence()
        inbox.read(project=project)
        assert take_reports() == []  # told once
    inbox.rebuilt([str(moved)])
    assert inbox.needs_rebuild() == []
