"""discord-watch with an ACP agent (the scripted one, tests/support/fake_acp_agent.py; no real
CLI): its text streams into the thread as a preview before the answer, and an agent that floods
the pipe with megabytes and ignores every request to stop leaves the daemon answering its
commands and stopping when told (SIGTERM cancels :func:`run_daemon`'s task)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Collection
from pathlib import Path

import httpx
import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.contract import RunLimits
from discord_mcp.runs.engine.streaming import PREVIEW_LIMIT
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.app import run_daemon
from discord_mcp.watch.shell import _job_logs
from tests.runs.conftest import alive
from tests.support.feed import FeedRecorder
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import COMMAND_COUNT

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"
FLOODED = 1024 * 1024
QUICK_TO_END = RunLimits(agent_cancel_grace=1.0, kill_grace=1.0)
"""The flooding agent ignores the cancel and SIGTERM: it is ended after these graces (the same
path as the defaults' 10 s and 5 s, which kept it flooding the daemon, and the test's CPU,
for 15 s after each stop)."""
STOPPED_WITHIN_S = 30.0
"""A bound on the daemon's shutdown, far above what it takes (an agent's grace to end, then
SIGKILL): a daemon held by its agent never meets it."""


@pytest.fixture
def acp_settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    (tmp_path / "app").mkdir()
    settings = settings_for(discord, tmp_path / "home")
    AgentRegistry(settings.home).add("fake", [sys.executable, str(FAKE)])
    ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add(
        "app", tmp_path / "app", ["fake"], "fake"
    )
    return settings


@contextlib.asynccontextmanager
async def daemon(
    settings: Settings,
    discord: RunningEmulator,
    root: Path,
    limits: RunLimits | None = None,
    **agent_env: str,
) -> AsyncIterator[asyncio.Task[None]]:
    environ = {
        **os.environ,
        "DISCORD_WATCH_ROOTS": str(root),
        "DISCORD_WATCH_DEBOUNCE_SECONDS": "0",
        **agent_env,
    }
    task = asyncio.create_task(run_daemon(settings, environ=environ, limits=limits))
    try:
        ready = asyncio.create_task(Slash(discord).ready(COMMAND_COUNT))
        await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            ready.cancel()
            task.result()
        ready.result()
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(STOPPED_WITHIN_S):
                await task


def texts(people: People, channel_id: str) -> list[str]:
    try:
        return [m["content"] for m in people.messages(channel_id)]
    except httpx.HTTPStatusError:
        return []


async def start_thread(people: People, discord: RunningEmulator) -> str:
    thread = str(people.say(discord.channel_id, "!start app")["id"])
    await until(lambda: any("Session started" in t for t in texts(people, thread)), seconds=60)
    return thread


def job_logs(settings: Settings) -> dict[str, int]:
    """Each job's log file, by name, and its size so far."""
    logs = settings.home / "logs" / "jobs"
    return {p.name: p.stat().st_size for p in logs.glob("*.stdout")}


def flooded(settings: Settings, but: Collection[str] = ()) -> bool:
    """Whether a job's log (not one of ``but``) holds :data:`FLOODED` bytes."""
    return any(size >= FLOODED for name, size in job_logs(settings).items() if name not in but)


async def test_an_acp_agents_text_streams_into_the_thread_then_gives_way_to_its_answer(
    acp_settings: Settings, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    with FeedRecorder(discord) as feed:
        async with daemon(acp_settings, discord, tmp_path, FAKE_ACP_RELEASE=str(release)):
            thread = await start_thread(people, discord)
            people.say(thread, "hello agent")
            preview = await until(
                lambda: feed.messages_with(thread, "first words"),
                what="the streamed preview, while the agent is still writing",
                seconds=60,
            )
            assert "and the rest" not in preview[0]["content"]
            release.touch()
            final = await until(
                lambda: [t for t in texts(people, thread) if "first words and the rest." in t],
                what="the final answer",
                seconds=60,
            )
    assert "Reply in this thread" in final[0]
    assert feed.was_deleted(str(preview[0]["id"]))  # the preview gave way to the answer
    # `discord-watch logs` reads the job's transcript as a person reads it
    logs = _job_logs(acp_settings.home, thread, 200)
    assert any("first words and the rest." in line for line in logs["text"]), logs


async def test_a_flooding_agent_leaves_the_daemon_answering_and_it_stops_when_told(
    acp_settings: Settings,
    discord: RunningEmulator,
    people: People,
    tmp_path: Path,
) -> None:
    slash = Slash(discord)
    with FeedRecorder(discord) as feed:
        shutdown = daemon(
            acp_settings, discord, tmp_path, limits=QUICK_TO_END, FAKE_ACP_IGNORE_TERM="1"
        )
        await shutdown.__aenter__()
        try:
            thread = await start_thread(people, discord)
            people.say(thread, "flood forever")
            await until(lambda: flooded(acp_settings), seconds=120)
            status = await slash.text("status", channel=thread)  # within Discord's 3 s
            assert "running" in status
            stopped = await slash.text("stop", channel=thread)
            assert "stop" in stopped.lower()
            await until(
                lambda: [t for t in texts(people, thread) if "was stopped on request" in t],
                what="the stopped job",
                seconds=60,
            )

            first = set(job_logs(acp_settings))
            people.say(thread, "flood forever")
            await until(lambda: flooded(acp_settings, but=first), seconds=120)
            pids = agent_pids(tmp_path / "app")
            assert pids
        finally:
            await shutdown.__aexit__(None, None, None)  # bounded: STOPPED_WITHIN_S
        flood = feed.messages_with(thread, "xxxxxxxxxx")
    assert flood, "the flood was streamed into the thread"
    assert any(v["content"].startswith("…") for v in flood)  # its end, not its start
    # A bounded preview: a few messages edited in place, not one per 2000 characters streamed.
    assert len({v["id"] for v in flood}) <= 2 * (PREVIEW_LIMIT // 2000 + 1)
    assert not any(alive(pid) for pid in pids)


def agent_pids(workdir: Path) -> list[int]:
    """The fake agents running in ``workdir`` (the project: each test has its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if str(FAKE).encode() in argv and (entry / "cwd").resolve() == workdir.resolve():
                found.append(int(entry.name))
    return [pid for pid in found if alive(pid)]


async def test_discord_watch_stop_on_an_agent_that_ignores_the_cancel_says_it_was_ended(
    acp_settings: Settings, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """The agent takes its cancel grace (10 s) and then is ended: longer than a plain request
    may take, so ``stop`` waits for it and says how the job ended, instead of E_NO_ANSWER."""
    async with daemon(acp_settings, discord, tmp_path, FAKE_ACP_PAUSE="600"):
        thread = await start_thread(people, discord)
        people.say(thread, "take your time")
        await until(lambda: agent_pids(tmp_path / "app"), seconds=60)
        await until(lambda: job_logs(acp_settings), seconds=60)
        code, out, err = await shell(acp_settings, "stop", thread)
        pids = agent_pids(tmp_path / "app")
    assert (code, err) == (0, ""), (out, err)
    assert out.startswith("stopped job_")
    assert "was stopped on request; the agent did not stop when asked and was ended" in out
    assert pids == []  # ended, not only said to be


async def shell(settings: Settings, *args: str) -> tuple[int, str, str]:
    """``discord-watch ARGS`` as its own process, next to the daemon running here."""
    cli = "from discord_mcp.watch.cli import main; raise SystemExit(main())"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        cli,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(settings.home.parent),
            "DISCORD_MCP_HOME": str(settings.home),
        },
    )
    async with asyncio.timeout(120):
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
