"""A holder killed mid-write leaves a torn line; the event after it still arrives."""

from __future__ import annotations

import json
from pathlib import Path

from discord_mcp.relay.spool import SpoolReader, SpoolWriter


def test_the_next_holder_starts_on_a_new_line_after_a_torn_one(tmp_path: Path) -> None:
    path = tmp_path / "spool.ndjson"
    with SpoolWriter(path) as writer:
        writer.append("MESSAGE_CREATE", {"n": 1}, 1)
    reader = SpoolReader(path)
    with path.open("ab") as handle:  # the holder died in the middle of this line
        handle.write(b'{"v":1,"t":"MESSAGE_CREATE","s":2,"d":{"n":')
    with SpoolWriter(path) as writer:
        writer.append("MESSAGE_CREATE", {"n": 3}, 3)  # the next holder
    assert [e["d"]["n"] for e in reader.poll()] == [3]
    reader.close()


def test_a_reader_finds_an_event_glued_to_a_torn_line(tmp_path: Path) -> None:
    """Even if a writer appended right after a torn line, the glued event is not lost."""
    path = tmp_path / "spool.ndjson"
    reader = SpoolReader(path)
    glued = json.dumps({"v": 1, "t": "MESSAGE_CREATE", "s": 5, "at": 0, "d": {"n": 5}})
    path.write_bytes(b'{"v":1,"t":"MESSAGE_CREA' + glued.encode() + b"\n")
    assert [e["d"]["n"] for e in reader.poll()] == [5]
    reader.close()
