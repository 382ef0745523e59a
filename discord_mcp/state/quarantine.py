"""Corrupt state files: moved aside under a unique name, and reported, never read as empty.

A state file that cannot be parsed (a torn disk, a hand edit, a bug) is renamed to
``<name>.corrupt-<UTC time>-<random>`` beside where it was, so two quarantines in the same
second never overwrite each other and nothing is deleted. Each quarantine is reported three ways:

- a log line (ERROR) in the process that found it;
- the next tool result of that process, as a ``warnings`` entry (:func:`take_reports`), so the
  agent can tell its owner;
- ``discord-mcp doctor``, which lists every quarantined file under the state directory
  (:func:`find_quarantined`) until the owner deals with it.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MARKER = ".corrupt-"
"""What a quarantined file's name contains."""
_SKIP_DIRS = frozenset({"jobs", "spool-archive"})
"""Directories with many files and no state documents (per-job logs)."""


@dataclass(frozen=True, slots=True)
class QuarantineReport:
    """One corrupt file that was moved aside."""

    original: str
    moved_to: str
    reason: str

    def sentence(self) -> str:
        """The report as an agent or a person reads it."""
        return (
            f"state file {self.original} was corrupt ({self.reason}) and was moved to "
            f"{self.moved_to}; what it held is not used. Tell the owner: `discord-mcp doctor` "
            "lists quarantined files"
        )


_lock = threading.Lock()
_unreported: list[QuarantineReport] = []


def quarantine(path: Path, reason: str) -> Path | None:
    """Move ``path`` aside under a unique name and report it; None if it was already gone."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}{MARKER}{stamp}-{secrets.token_hex(3)}")
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    report = QuarantineReport(str(path), str(target), reason)
    log.error("%s", report.sentence())
    with _lock:
        _unreported.append(report)
    return target


def remind(report: QuarantineReport) -> None:
    """Report in this process's next tool result a quarantine that another process made (it
    logged it there; a state file records who has been told, e.g. the inbox)."""
    with _lock:
        _unreported.append(report)


def take_reports() -> list[QuarantineReport]:
    """Quarantines made by this process since the last call (each is handed out once)."""
    with _lock:
        taken = list(_unreported)
        _unreported.clear()
    return taken


def find_quarantined(home: Path) -> list[Path]:
    """Every quarantined file under the state directory ``home``, oldest name first."""
    found: list[Path] = []
    for directory, subdirs, names in os.walk(home):
        subdirs[:] = [d for d in subdirs if d not in _SKIP_DIRS]
        found.extend(Path(directory) / name for name in names if MARKER in name)
    return sorted(found)
