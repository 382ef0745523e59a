"""Jobs a test left running end with it.

A job's CLI outlives the daemon by design (the next start reattaches it), so a test that stops
its daemon while a turn still works leaves that CLI behind: a Codex app-server turn whose model
server is gone then waits for the network for ever. After each test, every job under its
``tmp_path`` whose ``status.json`` says it runs has its process group killed, once that group's
leader is checked to be the job's own wrapper (a pid the system gave to another program since is
left alone).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

_DEPTHS = ("*/runs/jobs/*/status.json", "*/*/runs/jobs/*/status.json")


def end_left_jobs(tmp_path: Path) -> list[int]:
    """Kill the process group of every job under ``tmp_path`` still running; the groups."""
    ended: list[int] = []
    for pattern in _DEPTHS:
        for status in tmp_path.glob(pattern):
            try:
                record = json.loads(status.read_text(encoding="utf-8"))
                pgid = int(record["pgid"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if record.get("state") != "running" or not _is_wrapper_of(pgid, status):
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
                ended.append(pgid)
    return ended


def _is_wrapper_of(pid: int, status: Path) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(arg.endswith(b"wrap.py") for arg in argv) and os.fsencode(status) in argv
