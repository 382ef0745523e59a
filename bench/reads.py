"""Which files under the state directory a hot path opens: a figure the machine's noise cannot
move (bench/history.py judges it beside the timings).

A timing of a few milliseconds, or of a process start, varies by tens of percent on a loaded
machine; the number of distinct files a path opens does not. A hot path that reads what is open
opens as many files after a year as on its first day; one that reads history opens more.

Distinct files, not opens: a running daemon opens its rate-limit buckets and its status files
again with each Discord call and tick, and how many calls it made by the moment it is counted
follows the machine's load (CI saw 190 to 213 opens for the same start). A file read again is
not history read; a file never opened before is. The temporary file of an atomic write counts
as the file it replaces (:func:`distinct`).

Processes are counted through ``bench/reads_site/sitecustomize.py`` (put first on the child's
``PYTHONPATH`` by :func:`counted_env`); this process through :class:`Opens`, an audit hook.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.mcp_stdio import BenchFailure

SITE = Path(__file__).resolve().parent / "reads_site"


def counted_env(env: Mapping[str, str], out: Path) -> dict[str, str]:
    """``env`` for a child whose opens under its ``DISCORD_MCP_HOME`` are listed in ``out``."""
    paths = [str(SITE), *filter(None, [env.get("PYTHONPATH")])]
    return {**env, "PYTHONPATH": os.pathsep.join(paths), "BENCH_READS_OUT": str(out)}


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) a live process has used so far, with its reaped children.

    Raises:
        BenchFailure: it is gone.
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError as exc:
        raise BenchFailure(f"process {pid} is gone: {exc}") from exc
    ticks = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


_TEMPORARY = (
    re.compile(r"\.(?P<name>[^/]+)\.w\d+-\d+\.[^/]+\.tmp$"),  # store/atomic writes
    re.compile(r"\.(?P<name>[^/]+)\.\d+\.tmp$"),  # a writer that names its file by its pid
)


def distinct(paths: Iterable[str]) -> set[str]:
    """The files among ``paths``, each once, a write's temporary file counted as its target."""
    files = set()
    for path in paths:
        folder, name = os.path.split(path)
        for pattern in _TEMPORARY:
            if found := pattern.fullmatch(name):
                name = found["name"]
                break
        files.add(os.path.join(folder, name))
    return files


def opened(out: Path) -> list[str]:
    """The files listed in ``out`` so far (one line each, ``pid path``)."""
    try:
        lines = out.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [line.split(" ", 1)[1] for line in lines if " " in line]


class Opens:
    """Files this process opens under ``home`` while :meth:`counting` (one audit hook for the
    process's life, as audit hooks cannot be removed; it does nothing outside ``counting``)."""

    _installed: Opens | None = None

    def __init__(self) -> None:
        self._roots: tuple[str, ...] | None = None
        self.paths: list[str] = []

    @classmethod
    def instance(cls) -> Opens:
        if cls._installed is None:
            cls._installed = cls()
            sys.addaudithook(cls._installed._hook)
        return cls._installed

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        roots = self._roots
        if roots is None or event != "open" or not args or isinstance(args[0], int):
            return
        if args[0] is None:
            return
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(roots):
            self.paths.append(path)

    @contextmanager
    def counting(self, home: Path) -> Iterator[list[str]]:
        """The files opened under ``home`` inside the block (the list fills as they open)."""
        self.paths = []
        self._roots = (str(home.absolute()) + os.sep, str(home.resolve()) + os.sep)
        try:
            yield self.paths
        finally:
            self._roots = None
