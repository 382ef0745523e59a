"""The inbox: written by the daemon and the server at once, nothing lost, nothing twice."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from discord_mcp.inbox import MAX_ITEMS, Inbox, InboxItem


def item(n: int, *, read: bool = False) -> InboxItem:
    return InboxItem(
        message_id=str(800000000000000000 + n),
        channel_id="1",
        thread_id=None,
        author_id="2",
        author="owner",
        content=f"m{n}",
        timestamp="2026-11-22T00:00:00+00:00",
        read=read,
    )


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
