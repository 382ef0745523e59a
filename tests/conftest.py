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
PARALLEL_LANES = 2
"""How many real-CLI test files run at once: each starts CLIs, servers and a daemon, and more
than two at a time starve a two-core machine into timeouts."""

BENCHMARK_LANES = 2
"""How many benchmarks run at once: their quick runs take about four minutes one after another
on an idle two-core machine (twice that while the suite runs), longer than the rest."""


LANE_SECONDS = {
    "test_approvals_watch_e2e.py": 360,
    "test_plugin_e2e.py": 235,
    "test_delegate_e2e.py": 170,
    "test_acp_e2e.py": 155,
    "test_real_clis.py": 140,
    "test_chat_e2e.py": 105,
    "test_worktrees_e2e.py": 85,
    "test_watch_files_e2e.py": 80,
    "test_demo.py": 75,
    "test_steer_e2e.py": 40,
    "[history]": 305,
    "[answer_latency]": 160,
    "[chaos]": 90,
    "[runs]": 80,
    "[scale]": 65,
    "[coldstart]": 65,
    "[discord_budgets]": 55,
    "[memory]": 50,
    "[team]": 45,
    "[approvals]": 35,
}
"""Seconds a lane's longest members took in the suite (``--durations`` on this two-core machine,
the rest of the suite around them): an e2e test file by its name, a benchmark's quick run by
its parameter. Anything not listed counts :data:`OTHER_SECONDS` (an e2e file) or
:data:`SMALL_SECONDS` (a benchmark test). Only the balance of the lanes depends on them: a
lane is as long as what it runs one after another, and the longest lane is the suite's floor."""
OTHER_SECONDS = 30
SMALL_SECONDS = 10


def balanced(weights: dict[str, float], lanes: int) -> dict[str, int]:
    """Each key's lane: the heaviest first, each into the lane with the least so far."""
    load = [0.0] * lanes
    lane: dict[str, int] = {}
    for key in sorted(weights, key=lambda k: (-weights[k], k)):
        n = min(range(lanes), key=lambda i: (load[i], i))
        lane[key] = n
        load[n] += weights[key]
    return lane


def _seconds(key: str, default: float) -> float:
    return next((s for name, s in LANE_SECONDS.items() if key.endswith(name)), default)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With workers (``-n``, ``--dist loadgroup``): the real agent CLIs' tests (marked
    ``e2e``) run in :data:`PARALLEL_LANES` lanes, one file after another in each, the
    browser's other tests in one lane (one Chromium), and the benchmarks' quick runs in
    :data:`BENCHMARK_LANES` lanes (one after another in each: a benchmark measures, and times
    what it measures, beside the rest of the suite), the mutation check in a lane of its own
    (one mutation at a time, a few minutes); everything else is spread over every worker.
    Files and benchmarks go into lanes by :func:`balanced` on :data:`LANE_SECONDS`, so that
    no lane runs much longer than the others (xdist starts the lanes first: it hands out the
    groups with the most tests before single tests)."""
    files = {str(item.path) for item in items if item.get_closest_marker("e2e")}
    lane = balanced({path: _seconds(path, OTHER_SECONDS) for path in files}, PARALLEL_LANES)
    benchmark_ids = {
        item.nodeid: _seconds(item.nodeid, SMALL_SECONDS)
        for item in items
        if str(item.path).endswith("/tests/test_benchmarks.py")
    }
    bench_lane = balanced(benchmark_ids, BENCHMARK_LANES)
    for item in items:
        if item.get_closest_marker("e2e") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_S))
        path = str(item.path)
        if path in lane:
            item.add_marker(pytest.mark.xdist_group(f"agent-clis-{lane[path]}"))
        elif "/page/" in path:
            item.add_marker(pytest.mark.xdist_group("browser"))
        elif path.endswith("/tests/test_mutations.py"):
            item.add_marker(pytest.mark.xdist_group("mutations"))
        elif item.nodeid in bench_lane:
            item.add_marker(pytest.mark.xdist_group(f"benchmarks-{bench_lane[item.nodeid]}"))
    if config.getoption("numprocesses", None):
        items[:] = sorted(items, key=lambda item: _start_rank(item, benchmark_ids))


def _start_rank(item: pytest.Item, benchmark_ids: dict[str, float]) -> tuple[int, float]:
    """With workers, the benchmarks' quick runs start first, longest first, then the mutation
    check, then everything else in its order (a stable sort). xdist hands tests out in this
    order, one at a time to whichever worker has run out: the benchmarks mostly wait (rate-limit
    windows, latency samples, idle windows) and the mutation check runs one process at a time,
    so started last (as ``tests/test_*.py`` came after most folders) they were the suite's last
    minutes with a core idle; started first, the rest of the suite fills their waits."""
    if item.nodeid in benchmark_ids:
        return (0, -benchmark_ids[item.nodeid])
    if str(item.path).endswith("/tests/test_mutations.py"):
        return (1, 0.0)
    return (2, 0.0)


# Measured (issue 36): xdist 3.8 names a grouped test ``nodeid@group`` by setting
# ``item._nodeid``, which pytest 9.2 no longer reads (its ``nodeid`` is ``item._id``), so
# ``--dist loadgroup`` sees no group and the markers above do not pin anything: every test,
# the real CLIs' included, goes to whichever worker is free. That is how the suite has passed
# (about 20 minutes). Making the lanes real (the workers writing each test's lane to a file the
# controller's scheduler reads, through ``pytest_xdist_make_scheduler``) pinned all four workers
# to lanes: 63 tests ran in the first six minutes while the other 3,900 waited behind them.
# The lanes pay only with more workers than lanes, or once the lanes are a small part of the
# suite's CPU.
