"""Test doubles for the run engine: a spawner that runs the scripted fake CLI, and a notifier
that records what it is told.

    spawner = FakeSpawner(tmp_path)
    spawner.script("fix the tests", Scenario(sample="claude-fail-401-noretry.jsonl"))
    engine = RunEngine(..., spawner=spawner, notifier=RecordingNotifier())

The fake spawner keeps everything real except the CLI: the adapter's argv is passed to
tests/support/fake_cli.py (which records it and replays a recorded sample), and the process is
started by the real :class:`~discord_mcp.runs.processes.spawner.ProcessSpawner`, wrapper and all.
Scenarios are chosen by the job's prompt, so the order jobs start in does not matter.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from discord_mcp.runs import Activity, JobView, ProcessSpawner, SessionView, SpawnSpec
from discord_mcp.runs.journal.model import ProcessInfo
from discord_mcp.runs.journal.views import Tool
from discord_mcp.runs.offline import Jail
from discord_mcp.runs.processes.wrap import FIRST_INPUT

T = TypeVar("T")
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "agent-cli-samples"
FAKE_CLI = Path(__file__).resolve().parent / "fake_cli.py"


def sample_rc(name: str) -> int:
    """The exit code recorded next to a sample (``rc=N`` in ``<name>.rc``), 0 if none."""
    path = SAMPLES / (name.rsplit(".", 1)[0] + ".rc")
    try:
        return int(path.read_text(encoding="utf-8").strip().removeprefix("rc="))
    except (OSError, ValueError):
        return 0


@dataclass(frozen=True)
class Scenario:
    """What the fake CLI does for one job (see tests/support/fake_cli.py)."""

    sample: str | None = None  # default: <tool>-new.jsonl
    rc: int | None = None  # default: the sample's recorded exit code
    gate: Path | None = None
    hang: bool = False
    die_by: int | None = None  # a signal the fake CLI sends itself before its final line
    drop_final: bool = False
    child: bool = False
    ignore_term: bool = False
    noise: tuple[str, ...] = ()
    stderr: str = ""
    session: bool = True
    max_wait: float = 60.0
    env_names: tuple[str, ...] = ("DISCORD_THREAD_ID",)
    secret: str | None = None  # record which variables' values contain it ("secret_in")
    writes: tuple[tuple[str, str], ...] = ()  # files written in the project (path, text)

    def document(self, tool: Tool, record: Path) -> dict[str, Any]:
        sample = self.sample or f"{tool}-new.jsonl"
        return {
            "tool": tool,
            "sample": str(SAMPLES / sample),
            "rc": self.rc if self.rc is not None else sample_rc(sample),
            "gate": str(self.gate) if self.gate else None,
            "hang": self.hang,
            "die_by": self.die_by,
            "drop_final": self.drop_final,
            "child": self.child,
            "ignore_term": self.ignore_term,
            "noise": list(self.noise),
            "stderr": self.stderr,
            "session": self.session,
            "max_wait": self.max_wait,
            "record": str(record),
            "env_names": list(self.env_names),
            "secret": self.secret,
            "writes": [list(w) for w in self.writes],
        }


def prompt_of(spec: SpawnSpec) -> str:
    """The prompt in an adapter's argv (after ``--``, or Gemini's ``--prompt=``), or on stdin
    (a CLI started to take messages mid-turn: its first input line, while it exists; Claude
    Code's stream-json message, or the Codex app-server bridge's ``{"type": "user", "text"}``)."""
    first = spec.input_dir / FIRST_INPUT if spec.input_dir is not None else None
    if first is not None and first.is_file():
        line = json.loads(first.read_text(encoding="utf-8"))
        if "message" not in line:
            return str(line["text"])
        return "".join(part.get("text", "") for part in line["message"]["content"])
    for part in spec.argv:
        if part.startswith("--prompt="):
            return part[len("--prompt=") :]
    return spec.argv[-1]


class FakeSpawner:
    """Runs tests/support/fake_cli.py instead of the real CLI, through the real spawner."""

    def __init__(self, directory: Path, *, fast: bool = True) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.record = directory / "fake-cli-runs.jsonl"
        self.scenarios: dict[str, Scenario] = {}
        self.default = Scenario()
        self.specs: list[SpawnSpec] = []
        self.prompts: dict[str, str] = {}  # job id -> the prompt its CLI was given
        self.real = ProcessSpawner()
        # -I -S: the fake starts as fast as the wrapper does (nothing from site-packages).
        self.python_flags = ("-I", "-S") if fast else ()

    def script(self, prompt: str, scenario: Scenario) -> None:
        self.scenarios[prompt] = scenario

    def spawn(self, spec: SpawnSpec) -> ProcessInfo:
        self.prompts[spec.job_id] = prompt_of(spec)  # its stdin file goes with the job
        scenario = self.scenarios.get(prompt_of(spec), self.default)
        document = json.dumps(scenario.document(spec.tool, self.record))
        argv = (sys.executable, *self.python_flags, str(FAKE_CLI), document, "--", *spec.argv)
        self.specs.append(spec)
        return self.real.spawn(replace(spec, argv=argv))

    def network_jail(self) -> Jail:
        return self.real.network_jail()

    def runs(self) -> list[dict[str, Any]]:
        """What each fake CLI run recorded (pid, pgid, argv, cwd, env, prompt, ...)."""
        try:
            text = self.record.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        complete = text[: text.rfind("\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line.strip()]


@dataclass
class Call:
    method: str
    job: JobView
    session: SessionView | None = None
    position: int | None = None
    activity: Activity | None = None
    text: str | None = None


@dataclass
class RecordingNotifier:
    """A RunNotifier that records every call; tests await what they expect, with a bound."""

    calls: list[Call] = field(default_factory=list)
    fail: bool = False  # raise from every call (the engine must not care)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def _add(self, call: Call) -> None:
        self.calls.append(call)
        self._changed.set()
        if self.fail:
            raise RuntimeError(f"notifier broken on purpose ({call.method})")

    async def job_queued(self, job: JobView, position: int) -> None:
        self._add(Call("job_queued", job, position=position))

    async def job_started(self, job: JobView, session: SessionView) -> None:
        self._add(Call("job_started", job, session=session))

    async def job_activity(self, job: JobView, activity: Activity) -> None:
        self._add(Call("job_activity", job, activity=activity))

    async def job_text(self, job: JobView, text: str) -> None:
        self._add(Call("job_text", job, text=text))

    async def job_finished(self, job: JobView, session: SessionView) -> None:
        self._add(Call("job_finished", job, session=session))

    def of(self, method: str, job_id: str | None = None) -> list[Call]:
        return [
            c
            for c in self.calls
            if c.method == method and (job_id is None or c.job.job_id == job_id)
        ]

    def finished(self, job_id: str) -> JobView | None:
        calls = self.of("job_finished", job_id)
        return calls[-1].job if calls else None

    async def wait_for(self, condition: Callable[[], T | None], timeout: float = 20.0) -> T:
        """Wait (bounded) until ``condition()`` is truthy; return it."""
        async with asyncio.timeout(timeout):
            while True:
                value = condition()
                if value:
                    return value
                self._changed.clear()
                await self._changed.wait()

    async def wait_finished(self, job_id: str, timeout: float = 20.0) -> JobView:
        return await self.wait_for(lambda: self.finished(job_id), timeout)
