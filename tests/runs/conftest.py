"""Fixtures for the run engine tests: a project, the fake spawner, a recording notifier, and
an engine factory with short poll intervals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.runs import TOOLS, ProjectRegistry, RunEngine, RunLimits
from tests.support.fake_agents import FakeSpawner, RecordingNotifier

FAST = RunLimits(
    poll_interval=0.01,
    status_interval=0.05,
    kill_grace=2.0,
    job_timeout=60.0,
    notify_timeout=5.0,
    shutdown_timeout=2.0,
)

EngineFactory = Callable[..., RunEngine]


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def registry(tmp_path: Path, state_dir: Path, workdir: Path) -> ProjectRegistry:
    registry = ProjectRegistry(state_dir, allowed_roots=[tmp_path])
    registry.add("app", workdir, TOOLS, "claude")
    return registry


@pytest.fixture
def spawner(tmp_path: Path) -> FakeSpawner:
    return FakeSpawner(tmp_path / "fake")


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def make_engine(
    state_dir: Path,
    registry: ProjectRegistry,
    spawner: FakeSpawner,
    notifier: RecordingNotifier,
) -> EngineFactory:
    def make(**options: Any) -> RunEngine:
        limits = options.pop("limits", FAST)
        options.setdefault("notifier", notifier)
        options.setdefault("spawner", spawner)
        options.setdefault("env", {"PATH": "/usr/bin:/bin"})
        return RunEngine(state_dir=state_dir, projects=registry, limits=limits, **options)

    return make


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies count as dead)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
