"""Tool approvals in ``discord-watch`` runs, with the real CLIs against the scripted model.

A run's agent wants to run a shell command: the approval card appears in the run's thread (runs
ask by default), a stranger's click is refused, the owner's Allow runs the command, a Deny
stops the next one and the thread says so, and a late Allow resumes the session to retry.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import ProjectRegistry, Tool
from discord_mcp.state.files import off_loop
from tests.support.agent_clis import CLAUDE_MODEL, CLI_CLASSES, GEMINI_MODEL, ClaudeCli
from tests.support.model_server import ModelServer, ShellCall, quote_tool_result
from tests.support.people import People
from tests.support.waiting import until
from tests.support.watch_world import WatchWorld

pytestmark = pytest.mark.e2e


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


def messages(people: People, channel_id: str) -> list[dict[str, Any]]:
    try:
        return people.messages(channel_id)
    except httpx.HTTPStatusError:
        return []


def texts(people: People, channel_id: str) -> list[str]:
    return [m["content"] for m in messages(people, channel_id)]


def card_in(people: People, thread_id: str) -> Callable[[], dict[str, Any] | None]:
    """A condition: an approval card with buttons (still to be answered) is in the thread."""

    def check() -> dict[str, Any] | None:
        cards = [
            m
            for m in messages(people, thread_id)
            if "**Approval needed**" in m["content"] and m.get("components")
        ]
        return cards[-1] if cards else None

    return check


def button(card: dict[str, Any], label: str) -> str:
    for row in card["components"]:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return str(component["custom_id"])
    raise AssertionError(f"no button {label!r}")


async def click(
    people: People, card: dict[str, Any], label: str, *, user: str | None = None
) -> dict[str, Any]:
    """Click a card's button; in a thread, since the daemon answers on this test's event loop."""
    return await asyncio.to_thread(people.click, card["id"], button(card, label), user=user)


REPLY_HINT = "Reply in this thread to continue"
"""The end of a job's final message (the status message shows the agent's words too)."""
PROJECT_ARGS: dict[str, list[str]] = {
    "claude": ["--model", CLAUDE_MODEL],
    "codex": [],
    "gemini": ["-m", GEMINI_MODEL],
}
RUN_CLIS: tuple[Tool, ...] = ("claude", "codex", "gemini")


async def project(
    world: WatchWorld, tool: Tool, busy: str = "queue", allow_network: bool = True
) -> Path:
    await world.add_project(
        [tool], tool, {tool: PROJECT_ARGS[tool]}, busy=busy, allow_network=allow_network
    )
    return world.workdir


async def project_in(settings: Settings, tmp_path: Path, tool: Tool) -> Path:
    """The project ``app`` for the e2e files that build their own daemon (not on watch_world)."""
    workdir = tmp_path / "app"
    workdir.mkdir()
    registry = ProjectRegistry(settings.home, allowed_roots=[tmp_path])
    await off_loop(registry.add, "app", workdir, [tool], tool, {tool: PROJECT_ARGS[tool]})
    return workdir


async def start_run(people: People, discord: RunningEmulator) -> str:
    await until(
        lambda: people.state()["stats"]["gateway_connections_open"] == 1,
        what="gateway",
        seconds=60.0,
    )
    thread_id = str(people.say(discord.channel_id, "!start app")["id"])
    await until(
        lambda: any("Session started" in t for t in texts(people, thread_id)),
        what="the session",
        seconds=60.0,
    )
    return thread_id


@pytest.mark.parametrize(
    ("tool", "busy"),
    # A steering Claude Code job reads its prompt from stdin, a steering Codex job runs through
    # `codex app-server` (the bridge): their approvals work the same.
    [*((t, "queue") for t in RUN_CLIS), ("claude", "steer"), ("codex", "steer")],
)
async def test_a_runs_tool_call_waits_for_the_owner_who_allows_one_and_denies_the_next(
    tool: Tool,
    busy: str,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    world = watch_world()
    cli = world.cli(CLI_CLASSES[tool])
    workdir = await project(world, tool, busy)
    stranger = people.new_user("stranger")
    model_server.script(
        ShellCall("echo approved > made.txt"),
        quote_tool_result("First: {result}"),
        ShellCall("rm -rf build; echo nope > denied.txt"),
        quote_tool_result("Second: {result}"),
    )
    async with world.watching({tool: cli.env()}):
        thread_id = await start_run(people, discord)
        people.say(thread_id, "make the file")
        card = await until(
            card_in(people, thread_id), what="the approval card in the thread", seconds=60.0
        )
        assert "echo approved > made.txt" in card["content"]
        assert len(people.threads()) == 1  # asked in the run's thread
        refused = await click(people, card, "Allow once", user=stranger)
        assert "only" in str(refused).lower()
        assert not (workdir / "made.txt").exists()
        await click(people, card, "Allow once")
        await until(
            lambda: any("First:" in t and REPLY_HINT in t for t in texts(people, thread_id)),
            what="the final message",
            seconds=60.0,
        )
        assert (workdir / "made.txt").read_text(encoding="utf-8") == "approved\n"

        people.say(thread_id, "and now the cleanup")
        second = await until(card_in(people, thread_id), what="the second card", seconds=60.0)
        assert "recursive delete" in second["content"]
        await click(people, second, "Deny")
        final = await until(
            lambda: [t for t in texts(people, thread_id) if "Second:" in t and REPLY_HINT in t],
            what="the final message",
            seconds=60.0,
        )
    assert not (workdir / "denied.txt").exists()
    assert "not run" in final[-1]
    assert "denied by" in final[-1]
    statuses = [t for t in texts(people, thread_id) if "· job `" in t]
    assert any("**Done**" in s for s in statuses)  # the first job ran what it asked
    assert any("Finished, but 1 tool call was not run" in s for s in statuses)
    assert sum("**Done**" in s for s in statuses) == 1  # never plain "Done" with a denial


async def test_a_late_allow_resumes_the_run_which_retries_without_asking(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    world = watch_world(DISCORD_MCP_APPROVAL_WAIT_SECONDS="2")
    claude = world.cli(ClaudeCli)
    workdir = await project(world, "claude")
    model_server.script(
        ShellCall("echo late > late.txt"),
        quote_tool_result("Not yet: {result}"),
        ShellCall("echo late > late.txt"),
        quote_tool_result("Retried: {result}"),
    )
    async with world.watching({"claude": claude.env()}):
        thread_id = await start_run(people, discord)
        people.say(thread_id, "make the late file")
        card = await until(card_in(people, thread_id), what="the approval card", seconds=60.0)
        told = await until(
            lambda: [t for t in texts(people, thread_id) if "Not yet:" in t and REPLY_HINT in t],
            what="the answer",
            seconds=60.0,
        )
        assert "No one answered" in told[0]
        assert "not run" in told[0]
        assert not (workdir / "late.txt").exists()
        await click(people, card, "Allow once")
        await until(
            lambda: any("Retried:" in t for t in texts(people, thread_id)),
            what="the resumed run's answer",
            seconds=60.0,
        )
    assert (workdir / "late.txt").read_text(encoding="utf-8") == "late\n"
    prompts = [t for r in model_server.turn_requests() for t in r.user_texts()]
    assert any("has now approved" in p for p in prompts)
    cards = [t for t in texts(people, thread_id) if "**Approval needed**" in t]
    assert len(cards) == 1  # the retry was not asked again


@pytest.mark.parametrize("busy", ["queue", "steer"])  # steer: through codex app-server
async def test_codex_asking_twice_for_a_call_that_leaves_its_sandbox_takes_one_click(
    busy: str,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    """Codex runs its PreToolUse hook, then its PermissionRequest hook for the same call: the
    owner's one "Allow once" answers both, and the command runs once."""
    world = watch_world()
    cli = world.cli(CLI_CLASSES["codex"])
    workdir = await project(world, "codex", busy)
    escalate = {"sandbox_permissions": "require_escalated", "justification": "write outside"}
    model_server.script(
        ShellCall("echo once >> once.txt", codex_arguments=escalate),
        quote_tool_result("Ran: {result}"),
    )
    async with world.watching({"codex": cli.env()}):
        thread_id = await start_run(people, discord)
        people.say(thread_id, "append to the file outside the sandbox")
        card = await until(card_in(people, thread_id), what="the approval card", seconds=60.0)
        await click(people, card, "Allow once")
        await until(
            lambda: any("Ran:" in t and REPLY_HINT in t for t in texts(people, thread_id)),
            what="the final message",
            seconds=60.0,
        )
    assert (workdir / "once.txt").read_text(encoding="utf-8") == "once\n"
    cards = [t for t in texts(people, thread_id) if "**Approval needed**" in t]
    assert len(cards) == 1  # the second ask for the same call was answered by the same click
    [approval] = [d for d in DecisionStore(world.home).open_decisions() if d.kind == "approval"]
    assert (approval.approval or {}).get("second_ask_used")  # Codex did ask twice


@pytest.mark.parametrize("tool", ["claude", "gemini"])
async def test_a_run_without_network_still_asks_its_owner_and_runs_the_allowed_command_offline(
    tool: Tool,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    """Our MCP server (Claude Code's approve tool) and our approval hook (Gemini CLI's) reach
    Discord from outside the run's network namespace; the command the owner allows runs inside,
    and cannot connect to a listener on the host."""
    world = watch_world()
    cli = world.cli(CLI_CLASSES[tool])
    await project(world, tool, allow_network=False)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0)
        port = listener.getsockname()[1]
        connect = f"__import__('soc'+'ket').create_connection(('127.0.0.1', {port}))"
        model_server.script(
            ShellCall(f'python3 -c "{connect}"; echo exit:$?'),
            quote_tool_result("Tried: {result}"),
        )
        async with world.watching({tool: cli.env()}):
            thread_id = await start_run(people, discord)
            people.say(thread_id, "connect to the listener")
            card = await until(card_in(people, thread_id), what="the approval card", seconds=60.0)
            await click(people, card, "Allow once")
            final = await until(
                lambda: [t for t in texts(people, thread_id) if "Tried:" in t and REPLY_HINT in t],
                what="the final message",
                seconds=60.0,
            )
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            reached = False
        else:
            connection.close()
            reached = True
    assert not reached  # no connection reached the listener
    assert "exit:1" in final[-1]  # the command ran, and could not connect


async def test_a_sed_script_that_executes_is_never_read_only_in_a_codex_run(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    """The review's command: GNU sed reads ``/`` inside ``[[:alpha:]/]`` as part of the bracket,
    so the ``e`` flag executes the pattern space. A judge that ends the bracket early called it
    a read, and Codex ran it with no card; it asks now, and the owner's Deny keeps it from
    running. A plain read in the same run still runs without a card."""
    world = watch_world()
    cli = world.cli(CLI_CLASSES["codex"])
    workdir = await project(world, "codex")
    (workdir / "README").write_text("hello\n", encoding="utf-8")
    model_server.script(
        ShellCall("sed -n 1p README"),
        quote_tool_result("Read: {result}"),
        ShellCall("sed 's/.*[[:alpha:]/]/ a;touch made.txt;id/e' README"),
        quote_tool_result("Sed: {result}"),
    )
    async with world.watching({"codex": cli.env()}):
        thread_id = await start_run(people, discord)
        people.say(thread_id, "print the readme")
        await until(
            lambda: any("Read:" in t and REPLY_HINT in t for t in texts(people, thread_id)),
            what="the read's answer",
            seconds=60.0,
        )
        assert not [t for t in texts(people, thread_id) if "**Approval needed**" in t]
        people.say(thread_id, "now the sed script")
        card = await until(card_in(people, thread_id), what="the approval card", seconds=60.0)
        assert "[[:alpha:]/]" in card["content"]
        assert not (workdir / "made.txt").exists()
        await click(people, card, "Deny")
        await until(
            lambda: any("Sed:" in t and REPLY_HINT in t for t in texts(people, thread_id)),
            what="the final message",
            seconds=60.0,
        )
    assert not (workdir / "made.txt").exists()
