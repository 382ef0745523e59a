"""Runs commands one after another for :mod:`tests.support.syscall_trace`, under ``strace``.

Usage: ``python trace_driver.py JOB.json RESULTS.json``. The job holds ``commands`` (argv
lists, each argv[0] an absolute path), ``cwd``, ``env``, ``timeout`` (seconds per command) and
``markers`` (strings to look for in each command's output). Each command is started with
``posix_spawn`` (one ``vfork``/``clone`` per command, in order: that is how the trace is
mapped back to commands), stdin from /dev/null, stdout and stderr into one pipe. The results
hold, per command: its pid, its wait status, whether it was killed at the timeout, and which
markers its output held. Only the standard library, and no threads: the driver's own clones
must be exactly one per command.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time


def _run(argv: list[str], devnull: int, env: dict[str, str], timeout: float, markers: list[bytes]):
    read_end, write_end = os.pipe()
    pid = os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 0),
            (os.POSIX_SPAWN_DUP2, write_end, 1),
            (os.POSIX_SPAWN_DUP2, write_end, 2),
            (os.POSIX_SPAWN_CLOSE, read_end),
        ],
    )
    os.close(write_end)
    found: set[int] = set()
    keep = max((len(m) for m in markers), default=1)
    tail = b""
    deadline = time.monotonic() + timeout
    timed_out = False
    poller = select.poll()
    poller.register(read_end, select.POLLIN | select.POLLHUP)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        if not poller.poll(left * 1000):
            continue
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        window = tail + chunk
        for index, marker in enumerate(markers):
            if marker in window:
                found.add(index)
        tail = window[-keep:]
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    return {"pid": pid, "status": status, "timed_out": timed_out, "markers": sorted(found)}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        job = json.load(file)
    markers = [m.encode() for m in job["markers"]]
    os.chdir(job["cwd"])
    devnull = os.open("/dev/null", os.O_RDONLY)
    results = [
        _run(argv, devnull, job["env"], float(job["timeout"]), markers) for argv in job["commands"]
    ]
    with open(sys.argv[2], "w", encoding="utf-8") as file:
        json.dump(results, file)


if __name__ == "__main__":
    main()
