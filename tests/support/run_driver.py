"""A daemon stand-in for crash tests: runs a RunEngine with the fake spawner until killed.

    python -m tests.support.run_driver <config.json>

The config names the state directory, the allowed root and project directory, the fake
spawner's directory, the scenarios by prompt, and the thread and prompts to submit. Every
notification is appended as a JSON line to ``<notices>``, so a test can wait for
``job_started`` before it kills this process with SIGKILL. It exits by itself after
``max_seconds`` so a broken test never leaves it behind.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from discord_mcp.runs import (
    Activity,
    JobView,
    ProjectRegistry,
    RunEngine,
    RunLimits,
    SessionView,
)
from tests.support.fake_agents import FakeSpawner, Scenario


class FileNotifier:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _write(self, method: str, job: JobView, **extra: Any) -> None:
        line = {"method": method, "job_id": job.job_id, "state": job.state, **extra}
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    async def job_queued(self, job: JobView, position: int) -> None:
        self._write("job_queued", job, position=position)

    async def job_started(self, job: JobView, session: SessionView) -> None:
        self._write("job_started", job, pid=job.pid)

    async def job_activity(self, job: JobView, activity: Activity) -> None:
        self._write("job_activity", job)

    async def job_finished(self, job: JobView, session: SessionView) -> None:
        self._write("job_finished", job, error_code=job.error_code)


async def main(config: dict[str, Any]) -> None:
    registry = ProjectRegistry(Path(config["state_dir"]), allowed_roots=[Path(config["root"])])
    spawner = FakeSpawner(Path(config["fake_dir"]))
    for prompt, options in config["scenarios"].items():
        if options.get("gate"):
            options["gate"] = Path(options["gate"])
        spawner.script(prompt, Scenario(**options))
    engine = RunEngine(
        state_dir=Path(config["state_dir"]),
        projects=registry,
        notifier=FileNotifier(Path(config["notices"])),
        spawner=spawner,
        limits=RunLimits(poll_interval=0.01, job_timeout=60),
        env={"PATH": "/usr/bin:/bin"},
    )
    async with engine:
        if engine.session(config["thread"]) is None:
            await engine.start_session(config["thread"], config["project"])
        for number, prompt in enumerate(config["prompts"]):
            await engine.submit(config["thread"], f"m{number}", prompt, "owner")
        await asyncio.sleep(float(config.get("max_seconds", 60)))


if __name__ == "__main__":
    asyncio.run(main(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))))
