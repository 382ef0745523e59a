"""Shared fixtures. Every test runs with a clean Discord environment and its own state dir."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from discord_mcp.emulator import RunningEmulator
    from tests.support.people import People

_OUR_VARIABLES = (
    "DISCORD_BOT_TOKEN",
    "DISCORD_CHANNEL_ID",
    "DISCORD_OWNER_IDS",
    "PROJECT_NAME",
    "DISCORD_MCP_HOME",
    "POLL_INTERVAL_SECONDS",
    "DISCORD_API_BASE",
    "DISCORD_GATEWAY_URL",
    "DISCORD_MCP_MAX_BLOCK_SECONDS",
    "DISCORD_THREAD_ID",
    "CLAUDE_CODE_SESSION_ID",
    "DISCORD_MCP_ENV_FILE",
    "DISCORD_MCP_GATEWAY",
    "DISCORD_WATCH_ROOTS",
    "DISCORD_WATCH_DEBOUNCE_SECONDS",
    "DISCORD_WATCH_MENTION",
    "DISCORD_MCP_FILE_ROOTS",
    "DISCORD_MCP_CHANNEL",
    "DISCORD_MCP_REMINDERS",
    "DISCORD_MCP_QUIET_HOURS",
    "DISCORD_MCP_ESCALATE_DM",
    "DISCORD_MCP_TMUX_NUDGE",
    "DISCORD_MCP_LANGUAGE",
    "DISCORD_MCP_MACHINE",
    "DISCORD_MCP_HTTP_TOKEN",
    "DISCORD_MCP_HTTP_ALLOWED_HOSTS",
    "DISCORD_MCP_HTTP_ALLOWED_ORIGINS",
    "DISCORD_MCP_HTTP_MAX_SESSIONS",
    "DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS",
    "TMUX",
    "TMUX_PANE",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's real token or state directory, nor their tmux (a server
    started by a test would retitle the developer's pane)."""
    for name in _OUR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISCORD_MCP_HOME", str(tmp_path / "home"))
    # Where `setup` writes and every program reads by default: never the developer's own.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))


@pytest.fixture(autouse=True)
def _no_reports_from_other_tests() -> Iterator[None]:
    """A quarantine one test made is never reported in another test's tool result."""
    from discord_mcp.state.quarantine import take_reports

    take_reports()
    yield
    take_reports()


@pytest.fixture(autouse=True)
def _no_job_outlives_its_test(tmp_path: Path) -> Iterator[None]:
    """A job's CLI a test left running (its daemon stopped mid-turn) ends with the test."""
    yield
    from tests.support.left_jobs import end_left_jobs

    end_left_jobs(tmp_path)


@pytest.fixture(autouse=True)
def _run_folders_follow_their_schemas(tmp_path: Path) -> Iterator[None]:
    """Every request.json, session.json and result.json a test leaves under its tmp_path
    validates against the schemas the package ships (issue 23)."""
    yield
    from tests.support.run_schemas import problems

    found = problems(tmp_path)
    if found:
        pytest.fail("run folder files break their schema:\n" + "\n".join(found[:20]))


@pytest.fixture
def make_emulator() -> Iterator[Callable[..., RunningEmulator]]:
    """Start local Discords for this test: ``discord = make_emulator(rate_limit_scale=0.01)``.

    Keyword arguments are ``discord_mcp.emulator.EmulatorConfig`` fields (``token``,
    ``rate_limit_scale``, ``global_limit``, ``invalid_request_limit``,
    ``strict_archived_threads``, ``exchange_hook``...). Each emulator runs in its own thread on
    a free port and stops at teardown. Every ``/api/v10`` exchange is checked against Discord's
    OpenAPI spec (tests/support/openapi_check.py); if any broke it, the test fails at teardown
    with a report. Pass ``check_openapi=False`` only to call routes Discord does not have.
    """
    from discord_mcp.emulator import Exchange, start_in_thread
    from tests.support.openapi_check import OpenAPIChecker

    checker = OpenAPIChecker()
    started: list[RunningEmulator] = []

    def make(*, check_openapi: bool = True, **config: Any) -> RunningEmulator:
        own_hook = config.pop("exchange_hook", None)

        def hook(exchange: Exchange) -> None:
            if check_openapi:
                checker(exchange)
            if own_hook is not None:
                own_hook(exchange)

        running = start_in_thread(exchange_hook=hook, **config)
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()
    report = checker.report()
    if report:
        pytest.fail(report, pytrace=False)


@pytest.fixture
def emulator(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    """A running local Discord with default settings, checked against Discord's OpenAPI spec.

    Use ``emulator.api_base``, ``.token``, ``.channel_id``, ``.owner_user_id``,
    ``.base_url + "/_emulator/..."``. Rate limits run at Discord's real speed; for tiny windows
    use ``make_emulator(rate_limit_scale=0.01)`` instead.
    """
    return make_emulator()


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    """The emulator most tests use: rate-limit windows 100 times shorter than Discord's.

    A module that needs other settings defines its own ``discord`` fixture.
    """
    return make_emulator(rate_limit_scale=0.01)


@pytest.fixture
def people(discord: RunningEmulator) -> Iterator[People]:
    """Acting as Discord's people (the owner by default) in this test's ``discord``."""
    from tests.support.people import People

    acting = People(discord)
    yield acting
    acting.close()


@dataclass(frozen=True)
class Packages:
    """What the session built once: a fresh copy of the repository, its wheel and sdist, and a
    uv cache that already holds discord-mcp's dependencies (``uvx`` then works offline)."""

    repository: Path
    wheel: Path
    sdist: Path
    uv_cache: Path


@pytest.fixture(scope="session")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Packages:
    """Build the wheel and the sdist from a fresh copy of the repository (``python -m build``,
    as a release would), and warm a uv cache with ``uvx --from`` the wheel and the copy. Once
    per session: the tests that install discord-mcp as people do share it."""
    import subprocess
    import sys

    from tests.support.packages import copy_repository, uv_binary, uv_env

    root = tmp_path_factory.mktemp("packages")
    repository = copy_repository(root / "discord-mcp")
    dist = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(repository)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = dist.glob("*.whl")
    [sdist] = dist.glob("*.tar.gz")
    cache = root / "uv-cache"
    uvx = str(uv_binary().with_name("uvx"))
    for source in (wheel, repository):
        subprocess.run(
            [uvx, "--from", str(source), "discord-mcp", "--version"],
            env=uv_env(cache),
            cwd=root,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return Packages(repository, wheel, sdist, cache)


# ---- running in parallel (pytest-xdist, scripts/test) -------------------------------------

E2E_TIMEOUT_S = 300
"""A real CLI's whole job on a loaded machine (several model turns, its own start-up, the
daemon's looks) can outlast the suite's default 120 s; an end-to-end test that waits longer
still carries its own ``@pytest.mark.timeout``."""
LONG_SPAN = 0.5
"""The share of the run over which the benchmarks' quick runs and the mutation check (the
longest single tests, up to a minute each) are spread: done by half-way, never the last
minute on one worker while the others have run out."""
E2E_SPAN = 0.85
"""The same for the real CLIs' tests (up to half a minute each)."""
_LONG_FILES = ("/tests/test_benchmarks.py", "/tests/test_mutations.py")
_MODULE_SCOPES = frozenset({"module", "class", "package"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The real agent CLIs' tests (marked ``e2e``) get :data:`E2E_TIMEOUT_S`; and in a worker
    (``-n``, ``--dist loadgroup``: every test its own unit, handed out in this order) the tests
    are paced (:mod:`tests.support.pacing`): each file's spread over the run, so that the tests
    running at once come from many files and one file's waits (a hanging Discord, a rate-limit
    window, a real CLI's start) fill with other files' work. The workers order alike (the same
    collection, a pure function), as xdist requires."""
    for item in items:
        if item.get_closest_marker("e2e") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_S))
    if not hasattr(config, "workerinput"):
        return
    from tests.support.pacing import paced

    files = [str(item.path) for item in items]
    spans: dict[str, float] = {}
    together: set[str] = set()
    for item, path in zip(items, files, strict=True):
        if path.endswith(_LONG_FILES):
            spans[path] = LONG_SPAN
        elif item.get_closest_marker("e2e"):
            spans[path] = E2E_SPAN
        if _module_scoped(item):
            together.add(path)
    order = paced(files, together=together, spans=spans)
    items[:] = [items[index] for index in order]


def _module_scoped(item: pytest.Item) -> bool:
    """Whether ``item`` uses a fixture set up once per module or class (a browser, a built
    environment): its file's tests then stay together, or each would set it up anew."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in _MODULE_SCOPES for defs in info.name2fixturedefs.values() for d in defs)
