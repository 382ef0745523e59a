"""discord-watch end to end: the daemon on the emulator, a project of the test's own, the real
CLIs against the scripted model server.

``tests/e2e/conftest.py`` makes one with the ``watch_world`` fixture: ``watch_world(**settings)``
builds settings for the test's ``discord`` (polling every 0.2 s, state under ``tmp_path/home``,
more variables as keywords), the project's folder ``tmp_path/app``, and the daemon's environment
(this process's, with ``DISCORD_WATCH_ROOTS`` set to ``tmp_path``). Then::

    world = watch_world()
    await world.add_project(["claude"], "claude", {"claude": ["--model", CLAUDE_MODEL]})
    async with world.watching({"claude": world.cli(ClaudeCli).env()}):
        await world.connected(people)
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import ProjectRegistry
from discord_mcp.state.files import off_loop
from discord_mcp.watch.app import run_daemon
from tests.support.agent_clis import AgentCli
from tests.support.model_server import ModelServer
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until

FAST_DISCORD: dict[str, Any] = {"rate_limit_scale": 0.05, "gateway_heartbeat_scale": 0.01}
"""The emulator these tests use: short rate-limit windows and heartbeats (``make_emulator``)."""

Cli = TypeVar("Cli", bound=AgentCli)


def texts(people: People, channel_id: str) -> list[str]:
    """What a channel or thread shows, oldest first ([] while it does not exist yet)."""
    try:
        return [m["content"] for m in people.messages(channel_id)]
    except httpx.HTTPStatusError:
        return []


@contextlib.asynccontextmanager
async def watching(
    settings: Settings,
    environ: Mapping[str, str],
    tool_env: Mapping[str, Mapping[str, str]],
    **options: Any,
) -> AsyncIterator[asyncio.Task[None]]:
    """discord-watch running in this event loop; stopped (cancelled, up to 30 s) at the end."""
    task = asyncio.create_task(
        run_daemon(settings, environ=dict(environ), tool_env=dict(tool_env), **options)
    )
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=30)


@dataclass
class WatchWorld:
    """One test's discord-watch: its settings, its project's folder and its environment."""

    discord: RunningEmulator
    model: ModelServer
    tmp_path: Path
    settings: Settings
    workdir: Path
    environ: dict[str, str]

    @classmethod
    def make(
        cls, discord: RunningEmulator, model: ModelServer, tmp_path: Path, **settings: str
    ) -> WatchWorld:
        workdir = tmp_path / "app"
        workdir.mkdir()
        settings.setdefault("POLL_INTERVAL_SECONDS", "0.2")
        return cls(
            discord=discord,
            model=model,
            tmp_path=tmp_path,
            settings=settings_for(discord, tmp_path / "home", **settings),
            workdir=workdir,
            environ={**os.environ, "DISCORD_WATCH_ROOTS": str(tmp_path)},
        )

    @property
    def home(self) -> Path:
        return self.settings.home

    async def add_project(
        self,
        tools: Sequence[str],
        default: str,
        args: Mapping[str, list[str]] | None = None,
        **options: Any,
    ) -> None:
        """Register the project ``app`` (``workdir``) with these tools, as ``!project add``."""
        registry = ProjectRegistry(self.home, allowed_roots=[self.tmp_path])
        await off_loop(registry.add, "app", self.workdir, list(tools), default, args, **options)

    def cli(self, cli_class: type[Cli]) -> Cli:
        """A CLI whose state lives under ``tmp_path/clis``, talking to the scripted model."""
        return cli_class(
            root=self.tmp_path / "clis",
            model_url=self.model.base_url,
            proxy_url=self.model.proxy_url,
        )

    def watching(
        self, tool_env: Mapping[str, Mapping[str, str]], **options: Any
    ) -> contextlib.AbstractAsyncContextManager[asyncio.Task[None]]:
        """The daemon on these settings and this environment (see :func:`watching`)."""
        return watching(self.settings, self.environ, tool_env, **options)

    async def connected(self, people: People, seconds: float = 60.0) -> None:
        """Wait until the daemon holds the gateway."""
        await until(
            lambda: people.state()["stats"]["gateway_connections_open"] == 1,
            what="the daemon's gateway",
            seconds=seconds,
        )
