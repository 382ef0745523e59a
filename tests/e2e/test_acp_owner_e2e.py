"""What seed 003's users relied on, with the real ACP agents against the scripted model server
(issue 34): ``/model`` offers the models the agent's session advertises and switches the next
job to one through the protocol (Gemini CLI 0.61's ``session/set_model``; Claude's agent's
``model`` config option), and "Deny with a note…" sends the note to the agent as its next
prompt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.state.files import off_loop
from tests.e2e.test_acp_e2e import button, watching
from tests.support.agent_clis import GEMINI_MODEL, AgentCli, ClaudeCli, GeminiCli, bin_dir
from tests.support.model_server import ModelRequest, ModelServer, Reply, ShellCall, Text
from tests.support.people import People
from tests.support.requirements import missing
from tests.support.settings import settings_for
from tests.support.slash import Slash
from tests.support.waiting import until

pytestmark = pytest.mark.e2e

NOTE = "use the Makefile target instead"
HEARD = "Understood: the Makefile target it is."


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
        assert not server.outbound_attempts, server.outbound_attempts


def texts(people: People, channel_id: str) -> list[str]:
    try:
        return [m["content"] for m in people.messages(channel_id)]
    except httpx.HTTPStatusError:
        return []


def brain(request: ModelRequest) -> Reply:
    said = request.user_texts()
    last = said[-1] if said else ""
    if NOTE in last:
        return Text(HEARD)
    if request.latest_tool_results():
        return Text("The command came back.")
    if "make the file" in last:
        return ShellCall("touch made.txt")
    if "once more" in last:
        return Text("Second answer.")
    if "hello" in last:
        return Text("First answer.")
    return Text("A short title")


# which: (CLI class for the model endpoint, argv, session mode, a model it offers besides its
# first, and how that model shows in the model API's request)
AGENTS: dict[str, tuple[type[AgentCli], Callable[[Path], list[str]], str | None, str]] = {
    "gemini": (
        GeminiCli,
        lambda b: [str(b / "gemini"), "--acp", "-m", GEMINI_MODEL],
        None,
        "gemini-2.5-pro",
    ),
    "claude": (ClaudeCli, lambda b: [str(b / "claude-agent-acp")], "default", "haiku"),
}
EXECUTABLES = {"gemini": "gemini", "claude": "claude-agent-acp"}


def model_of(request: ModelRequest) -> str:
    """The model a request asked for (Gemini: in its path; Anthropic: in its body)."""
    if request.api == "gemini":
        return request.path
    return str((request.body or {}).get("model") or "") if isinstance(request.body, dict) else ""


async def _setup(
    which: str, discord: RunningEmulator, model_server: ModelServer, tmp_path: Path
) -> tuple[Any, dict[str, str], dict[str, dict[str, str]], Path]:
    binaries = bin_dir()
    if not (binaries / EXECUTABLES[which]).exists():
        missing(f"{EXECUTABLES[which]} is not installed; run scripts/install-agent-clis")
    cli_class, command, mode, _ = AGENTS[which]
    workdir = tmp_path / "app"
    workdir.mkdir()
    settings = settings_for(
        discord, tmp_path / "home", POLL_INTERVAL_SECONDS="0.2", APPROVAL_WAIT_SECONDS="120"
    )
    cli = cli_class(
        root=tmp_path / "clis", model_url=model_server.base_url, proxy_url=model_server.proxy_url
    )
    agent = f"{which}-acp"
    await off_loop(AgentRegistry(settings.home).add, agent, command(binaries), mode)
    await off_loop(
        ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add,
        "app",
        workdir,
        [agent],
        agent,
    )
    environ = {k: v for k, v in os.environ.items() if k != "IS_SANDBOX"}
    environ["DISCORD_WATCH_ROOTS"] = str(tmp_path)
    return settings, environ, {agent: cli.env()}, workdir


@pytest.mark.parametrize("which", ["gemini", "claude"])
async def test_model_offers_the_agents_models_and_switches_the_next_job(
    which: str,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    tmp_path: Path,
) -> None:
    settings, environ, tool_env, _ = await _setup(which, discord, model_server, tmp_path)
    other = AGENTS[which][3]
    model_server.script(brain, repeat=True)
    slash = Slash(discord)
    async with watching(settings, environ, tool_env):
        await until(lambda: people.state()["stats"]["gateway_connections_open"] == 1, 90.0)
        thread = people.say(discord.channel_id, "!start app")["id"]
        await until(lambda: any("Session started" in t for t in texts(people, thread)), 90.0)
        people.say(thread, "hello agent")
        await until(lambda: any("First answer." in t for t in texts(people, thread)), 90.0)
        first = [r for r in model_server.turn_requests() if r.contains("hello agent")]
        assert first
        assert not any(other in model_of(r) for r in first)

        choices = await slash.choices("model", "model", channel=thread, model="")
        offered = {c["value"] for c in choices}
        assert other in offered, choices  # what the agent's session advertised
        assert "default" in offered
        answer = await slash.text("model", channel=thread, model=other)
        assert other in answer
        refused = await slash.text("model", channel=thread, model="no-such-model-9")
        assert "E_INVALID_MODEL" in refused

        people.say(thread, "once more please")
        await until(lambda: any("Second answer." in t for t in texts(people, thread)), 90.0)
    second = [r for r in model_server.turn_requests() if r.contains("once more please")]
    assert second
    assert all(other in model_of(r) for r in second), [model_of(r) for r in second]


async def test_a_denials_note_is_geminis_next_prompt(
    discord: RunningEmulator, people: People, model_server: ModelServer, tmp_path: Path
) -> None:
    settings, environ, tool_env, workdir = await _setup("gemini", discord, model_server, tmp_path)
    model_server.script(brain, repeat=True)
    async with watching(settings, environ, tool_env):
        await until(lambda: people.state()["stats"]["gateway_connections_open"] == 1, 90.0)
        thread = people.say(discord.channel_id, "!start app")["id"]
        await until(lambda: any("Session started" in t for t in texts(people, thread)), 90.0)
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
        opened = await off_loop(people.click, card[0]["id"], button(card[0], "Deny with a note"))
        assert opened["modal"], opened
        await off_loop(
            people.submit_modal, card[0]["id"], opened["modal"]["custom_id"], {"note": NOTE}
        )
        await until(
            lambda: any(HEARD in t for t in texts(people, thread)),
            what="the agent's answer to the note",
            seconds=90.0,
        )
    assert not (workdir / "made.txt").exists()
    told = [r for r in model_server.turn_requests() if any(NOTE in t for t in r.user_texts())]
    assert told, "the note never reached the model"
