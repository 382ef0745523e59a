"""How ``discord-watch stop`` (and the ``job`` request) reach the running daemon, and where it
answers every shell request (``submit`` and ``resume`` are queued in ``runs/queue/`` instead:
:class:`~discord_mcp.runs.folders.folders.RunQueue`): request files.

Theory. The daemon owns the run engine (its lock), so a shell command asks it instead of
touching the journal: it writes ``<state>/watch/requests/<id>.json`` (atomically: a temporary
file renamed into place, mode 0600 in the private state directory, so only the same user can
ask), and the daemon, which looks into that folder every :data:`POLL_S` seconds, claims the
request by renaming it to ``<id>.taken``, does it, and answers in
``<state>/watch/replies/<id>.json``; the command reads and deletes the reply. A request
carries its deadline: one found after it (the daemon was down, the command gave up) is
dropped unanswered, so a stale ``submit`` never starts a job nobody waits for. Files rather
than a Unix socket: no path-length limit (108 bytes) on deep state directories, nothing to
clean up after a crash, and the same atomic-rename discipline as every other state file.

A request (version 1): ``{"version": 1, "id", "command": "stop" | "job",
"args": {...}, "expires_at": <epoch seconds>}``. A reply: ``{"version": 1, "id", "ok": true,
"result": {...}}`` or ``{"version": 1, "id", "ok": false, "code": "E_...", "message"}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.state.files import ensure_dir, read_json, write_json

VERSION = 1
POLL_S = 0.2
ANSWER_WITHIN_S = 10.0
"""How long a command waits for the daemon to answer one request."""
KEEP_REPLIES_S = 3600.0


@dataclass(frozen=True)
class Request:
    id: str
    command: str
    args: dict[str, Any]
    expires_at: float


class RequestBox:
    """The request and reply folders of one state directory."""

    def __init__(self, home: Path) -> None:
        self.requests = home / "watch" / "requests"
        self.replies = home / "watch" / "replies"

    # -- the command's side

    def send(self, command: str, args: dict[str, Any], *, within: float = ANSWER_WITHIN_S) -> str:
        request_id = f"{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        ensure_dir(self.requests)
        write_json(
            self.requests / f"{request_id}.json",
            {
                "version": VERSION,
                "id": request_id,
                "command": command,
                "args": args,
                "expires_at": time.time() + within,
            },
        )
        return request_id

    def reply(self, request_id: str) -> dict[str, Any] | None:
        """The daemon's answer, once there (then deleted), else None."""
        path = self.replies / f"{request_id}.json"
        document = read_json(path, max_version=VERSION)
        if document is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        return document

    def withdraw(self, request_id: str) -> bool:
        """Take back a request the daemon has not claimed; False if it was claimed already."""
        try:
            (self.requests / f"{request_id}.json").unlink()
        except FileNotFoundError:
            return False
        return True

    # -- the daemon's side

    def take(self, now: float) -> list[Request]:
        """Claim every waiting request (oldest first); expired ones are dropped."""
        try:
            names = sorted(p.name for p in self.requests.iterdir() if p.suffix == ".json")
        except FileNotFoundError:
            return []
        taken = []
        for name in names:
            path = self.requests / name
            claimed = path.with_suffix(".taken")
            try:
                os.replace(path, claimed)
                document = json.loads(claimed.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            finally:
                with contextlib.suppress(OSError):
                    claimed.unlink()
            if not isinstance(document, dict) or document.get("version") != VERSION:
                continue
            if float(document.get("expires_at") or 0) < now:
                continue
            args = document.get("args")
            taken.append(
                Request(
                    id=str(document.get("id") or path.stem),
                    command=str(document.get("command") or ""),
                    args=args if isinstance(args, dict) else {},
                    expires_at=float(document["expires_at"]),
                )
            )
        return taken

    def answer(self, request_id: str, body: dict[str, Any]) -> None:
        ensure_dir(self.replies)
        write_json(
            self.replies / f"{request_id}.json", {"version": VERSION, "id": request_id, **body}
        )

    def sweep(self, now: float) -> None:
        """Forget replies nobody came back for."""
        try:
            entries = list(self.replies.iterdir())
        except FileNotFoundError:
            return
        for entry in entries:
            with contextlib.suppress(OSError):
                if now - entry.stat().st_mtime > KEEP_REPLIES_S:
                    entry.unlink()
