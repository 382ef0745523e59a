"""Counts the files a benchmarked process opens under its state directory (bench/reads.py).

Loaded only by benchmarks, through ``PYTHONPATH``, and only when ``BENCH_READS_OUT`` is set:
every file the process (and any Python child it starts) opens under ``DISCORD_MCP_HOME`` is
appended to that file as a line, flushed at once, so a process that is killed has still told.
Self-contained on purpose: it runs before anything else is importable.
"""

import os
import sys


def _install() -> None:
    out = os.environ.get("BENCH_READS_OUT")
    home = os.environ.get("DISCORD_MCP_HOME")
    if not out or not home:
        return
    roots = tuple({os.path.abspath(home) + os.sep, os.path.realpath(home) + os.sep})
    sink = open(out, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (lives with the process)

    def hook(event: str, args: tuple) -> None:
        if event != "open" or not args or isinstance(args[0], int) or args[0] is None:
            return
        path = os.fsdecode(args[0])
        if not os.path.isabs(path):
            path = os.path.join(os.getcwd(), path)
        if path.startswith(roots):
            sink.write(f"{os.getpid()} {path}\n")

    sys.addaudithook(hook)


_install()
