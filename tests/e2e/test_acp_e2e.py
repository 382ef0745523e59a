"""discord-watch with real ACP agents: Gemini CLI (``gemini --acp``), Claude's ACP agent
(``claude-agent-acp``) and Codex's (``codex-acp``), each against the scripted model server.

For each agent, in one thread: ``!start``, an answer that streams into the thread (a preview
message shown while it is written, then replaced by the final answer), a follow-up in the same
session (the model sees the first exchange), a permission request answered from the approval
card ("Allow once" runs the command), and ``!stop`` in the middle of a turn (``session/cancel``;
the job ends as stopped and the agent stays usable).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.state.files import off_loop
from tests.support.agent_clis import (
    GEMINI_MODEL,
    AgentCli,
    ClaudeCli,
    CodexCli,
    GeminiCli,
    bin_dir,
)
from tests.support.feed import FeedRecorder
from tests.support.model_server import ModelRequest, ModelServer, Reply, ShellCall, Text
from tests.support.people import People
from tests.support.requirements import missing
from tests.support.waiting import until
from tests.support.watch_world import FAST_DISCORD, WatchWorld, texts, watching

pytestmark = pytest.mark.e2e

STREAMED = "Hello from the agent: this answer arrives in several pieces."
FOLLOW_UP = "Second answer, same session."
MADE = "The file is made."
ESCALATE = {"sandbox_permissions": "require_escalated", "justification": "make the file"}


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(**FAST_DISCORD)


class Brain:
    """The scripted model, by what the owner asked (the agents make side calls of their own,
    such as a session title, which a fixed list of steps could not foresee)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.held = threading.Event()
        self.streaming = threading.Event()  # set: the streamed answer may finish

    def __call__(self, request: ModelRequest) -> Reply:
        if request.latest_tool_results():
            return Text(MADE)
        said = request.user_texts()
        last = said[-1] if said else ""
        if "Write the title" in last:  # Claude's agent names its session on the side
            return Text("A short title")
        if "wait for it" in last:
            self.held.set()
            self.release.wait(60)  # the turn hangs here until the test lets go
            return Text("too late")
        if "make the file" in last:
            # Codex's model asks to leave its sandbox (codex-acp's modes approve "on request");
            # the other agents ignore the argument.
            return ShellCall("touch made.txt", codex_arguments=ESCALATE)
        if "once more" in last:
            return Text(FOLLOW_UP)
        if "hello" in last:
            return Text(STREAMED, pieces=4, hold=self.streaming)
        return Text("A short title")


AGENTS: dict[str, tuple[type[AgentCli], Callable[[Path], list[str]], str | None]] = {
    "gemini": (GeminiCli, lambda b: [str(b / "gemini"), "--acp", "-m", GEMINI_MODEL], None),
    "claude": (ClaudeCli, lambda b: [str(b / "claude-agent-acp")], "default"),
    "codex": (CodexCli, lambda b: [str(b / "codex-acp")], "read-only"),
}
EXECUTABLES = {"gemini": "gemini", "claude": "claude-agent-acp", "codex": "codex-acp"}


async def _stop_mid_turn(people: People, thread: str, brain: Brain) -> None:
    """``!stop`` while the model is still thinking: the job ends as stopped, nothing late."""
    people.say(thread, "wait for it")
    await until(brain.held.is_set, what="the held model request", seconds=90.0)
    people.say(thread, "!stop")
    await until(
        # A stop the owner asked for is no failure (issue 23): said as stopped, no error code.
        lambda: [t for t in texts(people, thread) if "was stopped on request" in t],
        what="the stopped job",
        seconds=90.0,
    )
    brain.release.set()
    assert "too late" not in " ".join(texts(people, thread))


def button(card: dict[str, Any], label: str) -> str:
    for row in card.get("components") or []:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return str(component["custom_id"])
    raise AssertionError(f"no button {label!r} on the card: {card.get('components')}")


@pytest.mark.parametrize("which", ["gemini", "claude", "codex"])
async def test_an_acp_agent_streams_continues_asks_and_stops_from_discord(
    which: str,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    binaries = bin_dir()
    if not (binaries / EXECUTABLES[which]).exists():
        missing(f"{EXECUTABLES[which]} is not installed; run scripts/install-agent-clis")
    cli_class, command, mode = AGENTS[which]
    world = watch_world(APPROVAL_WAIT_SECONDS="120")
    settings = world.settings
    cli = world.cli(cli_class)
    agent = f"{which}-acp"
    await off_loop(AgentRegistry(settings.home).add, agent, command(binaries), mode)
    await world.add_project([agent], agent)
    brain = Brain()
    model_server.script(brain, repeat=True)
    # IS_SANDBOX (set on some CI machines) makes Claude's agent pick its permission-skipping
    # mode, which it refuses to run as root; the agents get a plain environment here.
    environ = world.environ
    environ.pop("IS_SANDBOX", None)
    thread = ""

    def context() -> str:
        logs = sorted((settings.home / "logs").rglob("*"))
        tails = [
            f"--- {p.name}\n{p.read_text(errors='replace', encoding='utf-8')[-3000:]}"
            for p in logs
            if p.is_file() and (p.suffix in (".stderr", ".stdout") or "agents" in str(p))
        ]
        shown = texts(people, thread) if thread else []
        return "\n".join(
            ["thread:", *shown, "model:", model_server.describe(), *model_server.errors, *tails]
        )

    try:
        with FeedRecorder(discord) as feed:
            async with watching(settings, environ, {agent: cli.env()}):
                await world.connected(people, seconds=90.0)
                thread = people.say(discord.channel_id, "!start app")["id"]
                await until(
                    lambda: any("Session started" in t for t in texts(people, thread)), seconds=90.0
                )

                # 1. A streamed answer: shown while written, then the final answer.
                people.say(thread, "hello agent")
                first = STREAMED[: -(-len(STREAMED) // 4)]
                preview = await until(
                    lambda: feed.messages_with(thread, first),
                    what="the streamed preview",
                    seconds=90.0,
                )
                assert STREAMED not in preview[0]["content"]  # half written, shown already
                brain.streaming.set()
                final = await until(
                    lambda: [t for t in texts(people, thread) if STREAMED in t and "\n\n" in t],
                    what="the final answer",
                    seconds=90.0,
                )
                previews = [
                    v
                    for v in feed.versions
                    if v["channel_id"] == thread
                    and v.get("content")
                    and STREAMED.startswith(v["content"])
                ]
                assert previews, "no streamed preview was shown"
                # The preview gives way once the answer is posted (a delete after the post, so
                # the thread never shows neither): wait for it, as for the answer.
                await until(
                    lambda: all(feed.was_deleted(str(v["id"])) for v in previews),
                    what="the preview deleted after the answer",
                    seconds=30.0,
                )
                assert "Reply in this thread" in final[0] or "!" in final[0]

                # 2. A follow-up in the same session: the model sees the first exchange.
                people.say(thread, "once more please")
                await until(
                    lambda: any(FOLLOW_UP in t for t in texts(people, thread)), seconds=90.0
                )
                asked = [
                    r
                    for r in model_server.turn_requests()
                    if isinstance(r.reply, Text) and r.reply.text == FOLLOW_UP
                ]
                assert asked
                assert all(any("hello agent" in t for t in r.user_texts()) for r in asked)

                # /usage shows the context window where the agent reports it (usage_update).
                if which in ("claude", "codex"):
                    people.say(thread, "!usage")
                    await until(
                        lambda: any("context window" in t for t in texts(people, thread)),
                        what="the context window in /usage",
                        seconds=90.0,
                    )

                # 3. A permission request, answered from the approval card (codex-acp asks when
                # its model asks to leave the sandbox: see the README's ACP agents).
                people.say(thread, "make the file now")
                card = await until(
                    lambda: [
                        m
                        for m in people.messages(thread)
                        if "approval · decision" in m["content"] and m.get("components")
                    ],
                    what="the approval card",
                    seconds=90.0,
                )
                assert "touch made.txt" in card[0]["content"]
                # Off the loop: the daemon runs on this loop and answers the click within
                # Discord's 3 s while the emulator waits for that answer.
                await off_loop(people.click, card[0]["id"], button(card[0], "Allow once"))
                await until(lambda: any(MADE in t for t in texts(people, thread)), seconds=90.0)
                assert (world.workdir / "made.txt").exists()

                # 4. !stop in the middle of a turn.
                await _stop_mid_turn(people, thread, brain)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{context()}") from None
    finally:
        brain.release.set()
        brain.streaming.set()


async def test_codex_acp_with_the_untrusted_policy_asks_before_any_write(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    """Registered as ``codex-acp -c approval_policy="untrusted"`` (and no ``--mode``, which
    would set its own policy), codex-acp asks before every command Codex does not know to only
    read, whatever its model asks for; a Deny from the card keeps the command from running."""
    binaries = bin_dir()
    if not (binaries / "codex-acp").exists():
        missing("codex-acp is not installed; run scripts/install-agent-clis")
    world = watch_world(APPROVAL_WAIT_SECONDS="120")
    settings = world.settings
    cli = world.cli(CodexCli)
    command = [str(binaries / "codex-acp"), "-c", 'approval_policy="untrusted"']
    await off_loop(AgentRegistry(settings.home).add, "codex-acp", command, None)
    await world.add_project(["codex-acp"], "codex-acp")

    def brain(request: ModelRequest) -> Reply:
        results = request.latest_tool_results()
        if results:
            return Text(f"Told: {results[-1].text[:200]}")
        said = request.user_texts()
        if said and "make the file" in said[-1]:
            return ShellCall("touch made.txt")  # no request to leave the sandbox
        return Text("A short title")

    model_server.script(brain, repeat=True)
    environ = world.environ
    async with watching(settings, environ, {"codex-acp": cli.env()}):
        await world.connected(people, seconds=90.0)
        thread = people.say(discord.channel_id, "!start app")["id"]
        await until(
            lambda: any("Session started" in t for t in texts(people, thread)), seconds=90.0
        )
        people.say(thread, "make the file now")
        card = await until(
            lambda: [
                m
                for m in people.messages(thread)
                if "approval · decision" in m["content"] and m.get("components")
            ],
            what="the approval card",
            seconds=90.0,
        )
        assert "touch made.txt" in card[0]["content"]
        await off_loop(people.click, card[0]["id"], button(card[0], "Deny"))  # see above
        await until(
            lambda: any("**Denied**" in t for t in texts(people, thread)),
            what="the denial",
            seconds=90.0,
        )
        await until(
            lambda: [j for j in _journal(settings.home) if j["type"] in _ENDED],
            what="the job's end",
            seconds=90.0,
        )
    assert not (world.workdir / "made.txt").exists()


_ENDED = ("JobCompleted", "JobFailed")


def _journal(home: Path) -> list[dict[str, Any]]:
    path = home / "runs" / "events.ndjson"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


async def test_a_message_steers_the_running_turn_of_an_agent_that_takes_it(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    """``busy: steer`` with Claude's agent (it says ``steering.supported``): the second message
    joins the running job, and the model sees it before the job ends."""
    binaries = bin_dir()
    if not (binaries / "claude-agent-acp").exists():
        missing("claude-agent-acp is not installed; run scripts/install-agent-clis")
    world = watch_world()
    settings = world.settings
    cli = world.cli(ClaudeCli)
    await off_loop(
        AgentRegistry(settings.home).add,
        "claude-acp",
        [str(binaries / "claude-agent-acp")],
        "default",
    )
    await world.add_project(["claude-acp"], "claude-acp", busy="steer")
    release = threading.Event()
    asked = threading.Event()

    def brain(request: ModelRequest) -> Reply:
        said = request.user_texts()
        last = said[-1] if said else ""
        if "Write the title" in last:
            return Text("A short title")
        if "first task" in last:
            asked.set()
            release.wait(60)
            return Text("Working on the first task.")
        return Text("Steered: " + " | ".join(t for t in said if "thought" in t or "task" in t))

    model_server.script(brain, repeat=True)
    environ = world.environ
    environ.pop("IS_SANDBOX", None)
    try:
        async with watching(settings, environ, {"claude-acp": cli.env()}):
            await world.connected(people, seconds=90.0)
            thread = people.say(discord.channel_id, "!start app")["id"]
            await until(
                lambda: any("Session started" in t for t in texts(people, thread)), seconds=90.0
            )
            people.say(thread, "first task please")
            await until(asked.is_set, what="the first model request", seconds=90.0)
            people.say(thread, "a second thought")
            jobs = await until(
                lambda: _job_of_message(settings.home, "a second thought"),
                what="the steer",
                seconds=90.0,
            )
            release.set()
            final = await until(
                lambda: [t for t in texts(people, thread) if "Steered:" in t and "\n\n" in t],
                what="the answer that saw the second message",
                seconds=90.0,
            )
    finally:
        release.set()
    assert "a second thought" in final[0]
    assert jobs == 1  # one job took both messages
    assert not any("waiting" in t.lower() for t in texts(people, thread))


def _job_of_message(home: Path, text: str) -> int | None:
    """How many jobs the journal holds once ``text`` was steered into one (None before)."""
    events = [
        json.loads(line)
        for line in (home / "runs" / "events.ndjson").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if not any(e.get("type") == "JobSteered" and text in json.dumps(e) for e in events):
        return None
    return sum(1 for e in events if e.get("type") == "JobEnqueued")
