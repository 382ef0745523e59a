"""File change notifications: a sleeper is woken by the change it waits for, and only by it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.relay.fswatch import CLOSED, MODIFIED, FileChanges
from discord_mcp.state.files import write_json
from tests.support.waiting import until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

APPEND = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.write(fd, b"line\\n")
os.close(fd)
"""
HOLD_OPEN = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
print("open", flush=True)
time.sleep(600)
"""


async def test_a_write_by_another_process_wakes_the_subscriber_of_that_name(
    tmp_path: Path,
) -> None:
    changes = FileChanges()
    try:
        spool = changes.subscribe(tmp_path, {"spool.ndjson"})
        other = changes.subscribe(tmp_path, {"status.json"})
        assert spool.notified
        assert other.notified
        append = [sys.executable, "-c", APPEND, str(tmp_path / "spool.ndjson")]
        await asyncio.to_thread(subprocess.run, append, check=True)
        assert await spool.wait(30)
        assert spool.take() == {"spool.ndjson"}
        assert not spool.event.is_set()
        assert not other.event.is_set()
        assert other.take() == set()
    finally:
        changes.close()


async def test_a_file_renamed_into_place_wakes_its_subscriber(tmp_path: Path) -> None:
    changes = FileChanges()
    try:
        decision = changes.subscribe(tmp_path, {"d1.json"})
        await asyncio.to_thread(write_json, tmp_path / "d1.json", {"version": 1})
        assert await decision.wait(30)
        assert decision.take() == {"d1.json"}
    finally:
        changes.close()


async def test_a_killed_process_that_had_the_file_open_for_writing_wakes_the_subscriber(
    tmp_path: Path,
) -> None:
    path = tmp_path / "holder.lock"
    path.touch()
    changes = FileChanges()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_OPEN, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert holder.stdout is not None
        assert await asyncio.to_thread(holder.stdout.readline) == "open\n"
        gone = changes.subscribe(tmp_path, {"holder.lock"})
        # Opening and closing it read-only (as a lock attempt does) is not a change.
        os.close(os.open(path, os.O_RDONLY))
        os.kill(holder.pid, signal.SIGKILL)
        assert await gone.wait(30)
        assert gone.take() == {"holder.lock"}
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
        changes.close()


async def test_a_read_only_open_and_close_wakes_nobody(tmp_path: Path) -> None:
    path = tmp_path / "holder.lock"
    path.touch()
    changes = FileChanges()
    try:
        gone = changes.subscribe(tmp_path, {"holder.lock"})
        marker = changes.subscribe(tmp_path, {"marker"})
        os.close(os.open(path, os.O_RDONLY))
        # A later change to another name is reported: the read-only one before it was not.
        (tmp_path / "marker").write_text("x", encoding="utf-8")
        assert await marker.wait(30)
        assert not gone.event.is_set()
    finally:
        changes.close()


async def test_without_notifications_a_subscription_says_so_and_times_out(tmp_path: Path) -> None:
    changes = FileChanges(enabled=False)
    subscription = changes.subscribe(tmp_path, {"spool.ndjson"})
    assert not subscription.notified
    assert await subscription.wait(0) is False


async def test_closing_wakes_every_subscriber_and_leaves_them_polling(tmp_path: Path) -> None:
    changes = FileChanges()
    subscription = changes.subscribe(tmp_path, {"spool.ndjson"})
    assert subscription.notified
    changes.close()
    assert subscription.event.is_set()
    assert not subscription.notified


async def test_a_subscriber_to_replaced_files_sleeps_through_other_writes_in_the_directory(
    tmp_path: Path,
) -> None:
    """Decision files are only renamed into place: another session's writes next to them (its
    own decision, lock files, temporary files) must not wake a process waiting on one."""
    write_json(tmp_path / "d1.json", {"version": 1})
    changes = FileChanges()
    try:
        mine = changes.subscribe(tmp_path, {"d1.json"}, replaced=True)
        write_json(tmp_path / "probe.json", {"version": 0})
        probe = changes.subscribe(tmp_path, {"probe.json"}, replaced=True)
        await asyncio.to_thread(write_json, tmp_path / "probe.json", {"version": 1})
        assert await probe.wait(30)
        probe.take()
        per_probe = changes.events  # what one replacement of the probe reports
        assert mine.notified
        # What another session's write of d2.json does: its lock file opened for writing and
        # closed, a temporary file created, written, closed, then renamed over d2.json.
        await asyncio.to_thread(write_json, tmp_path / "d2.json", {"version": 1})
        os.close(os.open(tmp_path / "d2.json.lock", os.O_RDWR | os.O_CREAT, 0o600))
        (tmp_path / "d1.json.wait").write_text("", encoding="utf-8")
        # A write that is reported, after all of that: once it is heard, anything the writes
        # above caused has been read too (one notification queue, in order).
        await asyncio.to_thread(write_json, tmp_path / "probe.json", {"version": 2})
        assert await probe.wait(30)
        assert changes.events == 2 * per_probe  # the probe's, and nothing of the writes above
        assert not mine.event.is_set()
        for version in (2, 3, 4):  # every replacement is reported: the watch moves along
            await asyncio.to_thread(write_json, tmp_path / "d1.json", {"version": version})
            assert await mine.wait(30)
            assert mine.take() == {"d1.json"}
        (tmp_path / "d1.json").unlink()
        assert await mine.wait(30)
        assert mine.take() == {"d1.json"}
        # Gone, it is watched through its directory: its return by a rename is reported too.
        await asyncio.to_thread(write_json, tmp_path / "d1.json", {"version": 5})
        assert await mine.wait(30)
        assert mine.take() == {"d1.json"}
    finally:
        changes.close()


async def test_a_replaced_file_that_does_not_exist_yet_is_watched_through_its_directory(
    tmp_path: Path,
) -> None:
    changes = FileChanges()
    try:
        mine = changes.subscribe(tmp_path, {"d1.json"}, replaced=True)
        assert mine.notified
        await asyncio.to_thread(write_json, tmp_path / "d1.json", {"version": 1})
        assert await mine.wait(30)
        assert mine.take() == {"d1.json"}
    finally:
        changes.close()


def _kernel_watches() -> int:
    """The inotify watches this process holds, as the kernel lists them."""
    count = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        with contextlib.suppress(OSError):
            info = Path(f"/proc/self/fdinfo/{fd}").read_text(encoding="utf-8")
            count += info.count("inotify wd:")
    return count


async def test_a_closed_subscription_leaves_no_watch_on_its_file(tmp_path: Path) -> None:
    """A long-lived server waits on thousands of decisions: each wait's watch must go with it
    (the kernel limits watches per user)."""
    changes = FileChanges()
    try:
        changes.subscribe(tmp_path, {"anchor"})  # the instance itself, with one watch
        before = _kernel_watches()
        readers = []
        for n in range(20):
            write_json(tmp_path / f"d{n}.json", {"version": 1})
            subscription = changes.subscribe(tmp_path, {f"d{n}.json"}, replaced=True)
            # Someone reading the file as it is replaced keeps the old one alive (and a watch
            # on it, unless it is removed).
            readers.append(os.open(tmp_path / f"d{n}.json", os.O_RDONLY))
            await asyncio.to_thread(write_json, tmp_path / f"d{n}.json", {"version": 2})
            assert await subscription.wait(30)
            subscription.close()
        # The watches go as the notifier thread handles the closes: wait for that, bounded.
        await until(lambda: _kernel_watches() == before, seconds=10)
        for reader in readers:
            os.close(reader)
    finally:
        changes.close()


async def test_a_wider_subscription_widens_the_directory_watch(tmp_path: Path) -> None:
    """One watch per directory: a subscriber to appended files there still hears the appends
    after a subscriber to replaced files came first."""
    changes = FileChanges()
    try:
        changes.subscribe(tmp_path, {"d1.json"}, replaced=True)
        spool = changes.subscribe(tmp_path, {"spool.ndjson"})
        append = [sys.executable, "-c", APPEND, str(tmp_path / "spool.ndjson")]
        await asyncio.to_thread(subprocess.run, append, check=True)
        assert await spool.wait(30)
        assert spool.take() == {"spool.ndjson"}
    finally:
        changes.close()


async def test_a_subscriber_to_an_appended_file_is_woken_by_its_appends_only(
    tmp_path: Path,
) -> None:
    """A follower's mailbox, appended to by the holder: the spool and other mailboxes beside it,
    and a reader's opening, wake nobody; an empty file renamed over it (a fresh mailbox) is
    reported, and so are the appends to that one."""
    mailbox = tmp_path / "me.ndjson"
    mailbox.touch()
    changes = FileChanges()
    try:
        mine = changes.subscribe(tmp_path, {mailbox.name}, writes=MODIFIED)
        assert mine.notified
        for other in ("spool.ndjson", "someone.ndjson", "someone.ndjson"):
            append = [sys.executable, "-c", APPEND, str(tmp_path / other)]
            await asyncio.to_thread(subprocess.run, append, check=True)
        os.close(os.open(mailbox, os.O_RDONLY))
        append = [sys.executable, "-c", APPEND, str(mailbox)]
        await asyncio.to_thread(subprocess.run, append, check=True)
        assert await mine.wait(30)
        assert mine.take() == {mailbox.name}
        # Reported in order: had anything before the append been reported, it would be here.
        assert changes.events == 1
        fresh = tmp_path / ".me.ndjson.tmp"
        fresh.touch()
        os.replace(fresh, mailbox)
        assert await mine.wait(30)
        assert mine.take() == {mailbox.name}
        await asyncio.to_thread(subprocess.run, append, check=True)
        assert await mine.wait(30)
        assert mine.take() == {mailbox.name}
    finally:
        changes.close()


async def test_a_file_held_open_for_writing_is_reported_when_its_writer_dies(
    tmp_path: Path,
) -> None:
    """The holder's presence file, watched by itself: a reader's opening and the writes beside
    it are no news; the holder's death is."""
    path = tmp_path / "holder.alive"
    changes = FileChanges()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_OPEN, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert holder.stdout is not None
        assert await asyncio.to_thread(holder.stdout.readline) == "open\n"
        gone = changes.subscribe(tmp_path, {path.name}, writes=CLOSED)
        assert gone.notified
        os.close(os.open(path, os.O_RDONLY))
        await asyncio.to_thread(write_json, tmp_path / "status.json", {"version": 1})
        append = [sys.executable, "-c", APPEND, str(tmp_path / "spool.ndjson")]
        await asyncio.to_thread(subprocess.run, append, check=True)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        assert await gone.wait(30)
        assert gone.take() == {path.name}
        assert changes.events == 1
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
        changes.close()
