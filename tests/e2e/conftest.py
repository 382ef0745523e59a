"""Fixtures for end-to-end tests that run the real agent CLIs against the scripted model server.

- ``model_server``: a running :class:`ModelServer`. At teardown it fails the test if any CLI
  tried to reach the internet (every CLI made by ``agent_cli`` uses it as a refusing proxy).
- ``agent_cli``: a factory ``agent_cli(name, mcp_servers, **options) -> AgentCli`` with state
  under the test's tmp_path; kills whatever is still running at teardown.
- ``echo_server``: the test side of ``tests/support/echo_mcp_server.py``.
- ``watch_world``: a factory ``watch_world(**settings) -> WatchWorld``: discord-watch's settings
  on the test's ``discord``, a project folder and the daemon's environment
  (``tests/support/watch_world.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import CLI_CLASSES, AgentCli, AgentCliFactory, CliName, McpServer
from tests.support.echo_mcp_server import EchoServer
from tests.support.model_server import ModelServer
from tests.support.watch_world import WatchWorld


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
        assert not server.outbound_attempts, (
            f"a CLI tried to reach the internet: {server.outbound_attempts}"
        )


@pytest.fixture
def echo_server(tmp_path: Path) -> EchoServer:
    return EchoServer(tmp_path / "echo")


@pytest.fixture
def agent_cli(tmp_path: Path, model_server: ModelServer) -> Iterator[AgentCliFactory]:
    made: list[AgentCli] = []

    def make(name: CliName, mcp_servers: Sequence[McpServer] = (), **options: Any) -> AgentCli:
        options.setdefault("model_url", model_server.base_url)
        options.setdefault("proxy_url", model_server.proxy_url)
        cli = CLI_CLASSES[name](
            root=tmp_path / f"{name}-{len(made) + 1}", mcp_servers=mcp_servers, **options
        )
        made.append(cli)
        return cli

    yield make
    for cli in made:
        cli.close()


@pytest.fixture
def watch_world(
    discord: RunningEmulator, model_server: ModelServer, tmp_path: Path
) -> Callable[..., WatchWorld]:
    def make(**settings: str) -> WatchWorld:
        return WatchWorld.make(discord, model_server, tmp_path, **settings)

    return make
