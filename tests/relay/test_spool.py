"""The spool carries every event to followers, in order, across rotation and partial writes."""

from __future__ import annotations

import os
from pathlib import Path

from discord_mcp.relay.spool import SpoolReader, SpoolWriter


def names(events: list[dict[str, object]]) -> list[object]:
    return [e["d"]["n"] for e in events]  # type: ignore[index]


def test_a_follower_sees_events_appended_after_it_started(tmp_path: Path) -> None:
    path = tmp_path / "spool.ndjson"
    writer = SpoolWriter(path)
    writer.append("MESSAGE_CREATE", {"n": 0}, 1)
    reader = SpoolReader(path)
    assert reader.poll() == []
    writer.append("MESSAGE_CREATE", {"n": 1}, 2)
    writer.append("MESSAGE_REACTION_ADD", {"n": 2}, 3)
    events = reader.poll()
    assert names(events) == [1, 2]
    assert [e["t"] for e in events] == ["MESSAGE_CREATE", "MESSAGE_REACTION_ADD"]
    assert [e["s"] for e in events] == [2, 3]
    reader.close()
    writer.close()


def test_a_follower_started_before_the_spool_existed_reads_it_from_the_top(tmp_path: Path) -> None:
    path = tmp_path / "spool.ndjson"
    reader = SpoolReader(path)
    with SpoolWriter(path) as writer:
        writer.append("THREAD_CREATE", {"n": 7}, None)
    assert names(reader.poll()) == [7]
    reader.close()


def test_rotation_loses_nothing(tmp_path: Path) -> None:
    """Unread lines of the rotated file are still delivered, then the new file's."""
    path = tmp_path / "spool.ndjson"
    writer = SpoolWriter(path, rotate_bytes=250)  # rotates every third line
    reader = SpoolReader(path)
    seen: list[object] = []
    try:
        for n in range(40):
            writer.append("MESSAGE_CREATE", {"n": n, "pad": "x" * 40}, n)
            if n % 2 == 1:  # a follower polls far more often than the spool rotates
                seen.extend(names(reader.poll()))
        seen.extend(names(reader.poll()))
    finally:
        reader.close()
        writer.close()
    assert seen == list(range(40))
    assert (tmp_path / "spool.1.ndjson").exists()


def test_a_half_written_line_waits_for_its_end(tmp_path: Path) -> None:
    path = tmp_path / "spool.ndjson"
    with SpoolWriter(path) as writer:
        writer.append("MESSAGE_CREATE", {"n": 0}, 1)
    reader = SpoolReader(path)
    line = b'{"v":1,"t":"MESSAGE_CREATE","s":2,"at":0,"d":{"n":1}}\n'
    with open(path, "ab") as handle:
        handle.write(line[:20])
    assert reader.poll() == []
    with open(path, "ab") as handle:
        handle.write(line[20:])
    assert names(reader.poll()) == [1]
    reader.close()


def test_garbage_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "spool.ndjson"
    writer = SpoolWriter(path)
    writer.append("MESSAGE_CREATE", {"n": 4}, 8)
    reader = SpoolReader(path)
    with open(path, "ab") as handle:
        handle.write(b"not json\n" + b'{"v":99,"t":"X","d":{}}\n')
    writer.append("MESSAGE_CREATE", {"n": 5}, 9)
    assert names(reader.poll()) == [5]
    assert os.stat(path).st_mode & 0o777 == 0o600
    reader.close()
    writer.close()
