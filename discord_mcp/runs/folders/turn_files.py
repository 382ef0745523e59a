"""What a turn leaves in its run folder (:mod:`discord_mcp.runs.folders.folders`), written by
:class:`~discord_mcp.runs.folders.recorder.RunRecorder`: the turn's logs (links to the job's own),
the request of a run started from Discord, the transcript ``events.md``, the names of the artifacts,
and the agent's final text; and the run's context files as a prompt's attachments. Each is blocking
file work (the recorder calls them off the loop).
"""

from __future__ import annotations

import contextlib
import mimetypes
import os
import shutil
from pathlib import Path
from typing import Any

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.runs.folders.transcript import render_turn
from discord_mcp.runs.journal.model import is_tool, utc_iso
from discord_mcp.runs.journal.views import JobView, SessionView
from discord_mcp.runs.processes.runner import JobPaths


def context_files(folder: RunFolder) -> list[dict[str, Any]]:
    """The run's context files as attachments (how the owner's files reach a CLI's prompt)."""
    files = []
    with contextlib.suppress(OSError):
        for entry in sorted(folder.context.iterdir()):
            if entry.is_file():
                kind = mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
                files.append({"path": str(entry), "content_type": kind, "filename": entry.name})
    return files


def write_request(folder: RunFolder, job: JobView, session: SessionView, turn: int) -> None:
    """The request of a run that did not come as one (a ``/start`` in Discord)."""
    folder.write(
        folder.request,
        {
            "run_id": folder.run_id,
            "project": session.project_name,
            "engine": job.tool or session.tool,
            "mode": "new" if turn == 1 else "resume",
            "session_id": session.session_key if turn > 1 else None,
            "message": job.prompt,
            "created_at": utc_iso(job.enqueued_at.timestamp()),
            "constraints": Constraints.from_dict(session.constraints).to_dict(),
            "via": "discord",
        },
    )


def link_logs(home: Path, folder: RunFolder, job_id: str, turn: int) -> None:
    """The turn's logs are the job's own (hard links: the same file, growing as the CLI
    writes); a copy where a link cannot be made."""
    paths = JobPaths.for_job(home, job_id)
    folder.make()
    for source, target in (
        (paths.stdout, folder.stdout(turn)),
        (paths.stderr, folder.stderr(turn)),
    ):
        if target.exists() or not source.exists():
            continue
        try:
            os.link(source, target)
        except OSError:
            with contextlib.suppress(OSError):
                shutil.copyfile(source, target)


def write_events(folder: RunFolder, turns: list[dict[str, Any]]) -> None:
    parts = [f"# Run {folder.run_id}\n"]
    for entry in turns:
        number = entry.get("turn")
        if number is None:
            continue
        lines: list[str] = []
        with contextlib.suppress(OSError):
            lines = folder.stdout(number).read_text(encoding="utf-8", errors="replace").splitlines()
        parts.append(
            render_turn(
                str(entry.get("engine") or "claude"),
                number,
                str(entry.get("message") or ""),
                lines,
                status=str(entry.get("status")),
            )
        )
    folder.make()
    temporary = folder.events.with_name(".events.md.tmp")
    temporary.write_text("\n".join(parts), encoding="utf-8")
    os.replace(temporary, folder.events)


def artifacts(folder: RunFolder) -> list[str]:
    with contextlib.suppress(OSError):
        return [
            e.name for e in folder.artifacts.iterdir() if e.is_file() and not e.name.startswith(".")
        ]
    return []


def final_text(tool: str, stdout: Path) -> str | None:
    if not is_tool(tool):
        return None
    decoder = adapter_for(tool).decoder()
    try:
        with open(stdout, "rb") as handle:
            for raw in handle:
                decoder.feed(raw.decode("utf-8", errors="replace"))
    except OSError:
        return None
    return decoder.final_text
