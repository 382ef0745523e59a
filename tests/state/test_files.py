"""State files are written atomically, versioned, and never read as empty when corrupt."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.errors import StateCorrupt, StateError
from discord_mcp.state.files import (
    append_line,
    locked,
    read_json,
    write_bytes,
    write_json,
)


def test_write_then_read_round_trips_with_private_permissions(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "doc.json"
    write_json(path, {"version": 1, "name": "héllo"})
    assert read_json(path, max_version=1) == {"version": 1, "name": "héllo"}
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["doc.json"]  # no temp file left


def test_every_directory_created_for_state_is_private(tmp_path: Path) -> None:
    write_json(tmp_path / "home" / "gateway" / "x.json", {"version": 1})
    assert (tmp_path / "home").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "home" / "gateway").stat().st_mode & 0o777 == 0o700


def test_a_missing_file_reads_as_none(tmp_path: Path) -> None:
    assert read_json(tmp_path / "absent.json", max_version=1) is None


def test_documents_must_carry_a_version(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="version"):
        write_json(tmp_path / "x.json", {"name": "no version"})


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"no": "version"}', b""])
def test_a_corrupt_file_is_moved_aside_and_reported(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(content)
    with pytest.raises(StateCorrupt) as caught:
        read_json(path, max_version=1)
    assert not path.exists()
    assert caught.value.moved_to is not None
    assert Path(caught.value.moved_to).read_bytes() == content
    assert "moved to" in str(caught.value)


def test_a_file_from_a_newer_version_is_refused_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"version": 7}), encoding="utf-8")
    with pytest.raises(StateError, match="upgrade"):
        read_json(path, max_version=1)
    assert path.exists()


def _increment(path_str: str, times: int) -> None:
    path = Path(path_str)
    for _ in range(times):
        with locked(path):
            document = read_json(path, max_version=1) or {"version": 1, "count": 0}
            document["count"] += 1
            write_json(path, document)


def test_locked_read_modify_write_loses_no_update_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "counter.json"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_increment, args=(str(path), 40)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert read_json(path, max_version=1) == {"version": 1, "count": 160}


def test_append_line_writes_whole_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    append_line(path, {"a": 1})
    append_line(path, {"b": "二"})
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == [
        {"a": 1},
        {"b": "二"},
    ]
    assert os.stat(path).st_mode & 0o777 == 0o600


_CUT_SHORT = """
import sys, threading, time
from pathlib import Path
from discord_mcp.errors import StateError
from discord_mcp.state.files import remove_unfinished_writes, write_bytes

target = Path(sys.argv[1])
failures = []

def write():
    try:
        write_bytes(target, b"x" * 200_000_000)
    except BaseException as exc:
        failures.append(exc)

writer = threading.Thread(target=write)
writer.start()
deadline = time.monotonic() + 30
while not any(p.name.endswith(".tmp") for p in target.parent.iterdir()):
    if not writer.is_alive():
        print("missed")
        sys.exit(0)
    if time.monotonic() > deadline:
        print("never seen")
        sys.exit(1)
    time.sleep(0.001)
remove_unfinished_writes()
writer.join(60)
try:
    write_bytes(target, b"new")
    print("a write started after the end")
except StateError:
    print("cut" if failures else "the write under way succeeded")
"""


def test_a_write_cut_short_by_the_process_ending_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    """A hook ends with ``os._exit`` while a state write may be under way in another thread:
    ``remove_unfinished_writes`` removes its temporary file, the file keeps its old text, and
    no write starts after it (run in a child process, which it ends the writing of)."""
    target = tmp_path / "ledger.json"
    for _attempt in range(5):
        write_bytes(target, b"old")
        done = subprocess.run(
            [sys.executable, "-c", _CUT_SHORT, str(target)],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        said = done.stdout.strip()
        if said == "missed":  # the write ended before it was seen under way: again
            continue
        assert said == "cut", (said, done.stderr)
        assert [p.name for p in tmp_path.iterdir()] == ["ledger.json"]
        assert target.read_bytes() == b"old"
        return
    raise AssertionError("the write was never seen under way in five attempts")
