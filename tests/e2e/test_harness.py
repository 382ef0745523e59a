"""The end-to-end harness itself, proven with each real CLI and the test-only echo MCP server.

For Claude Code, Codex and Gemini CLI: the scripted model calls an MCP tool, the test answers
as the human while the CLI is blocked in that call, the CLI's next model request carries the
answer, and the CLI ends with a text quoting it. A resumed second turn carries the first
turn's history. The MCP ``clientInfo`` each CLI reports is pinned here, since per-client
behaviour in the product keys on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agent_clis import CLI_NAMES, AgentCliFactory, CliName, GeminiCli, McpServer
from tests.support.echo_mcp_server import EchoServer
from tests.support.model_server import (
    ModelServer,
    Text,
    ToolCall,
    quote_tool_result,
    tool_round_trip,
    wait_until,
)

pytestmark = pytest.mark.e2e

# What each CLI sends as MCP clientInfo.name (at initialize, or per request on 2026-07-28).
CLIENT_NAMES: dict[CliName, str] = {
    "claude": "claude-code",
    "codex": "codex-mcp-client",
    "gemini": "gemini-cli-mcp-client",
}

QUESTION = {"question": "Ship the release on Friday?", "options": ["yes", "no"]}
# How long the CLI may take to start, connect its MCP server and make the call (observed: <4s).
CALL_TIMEOUT = 30.0


def echo_spec(echo: EchoServer) -> McpServer:
    return McpServer("echo", echo.argv, echo.env(token="tok-e2e-passed"))


@pytest.mark.parametrize("cli_name", CLI_NAMES)
def test_tool_call_answered_while_blocked_reaches_the_model(
    cli_name: CliName,
    model_server: ModelServer,
    echo_server: EchoServer,
    agent_cli: AgentCliFactory,
) -> None:
    model_server.script(
        ToolCall("echo", "ask_decision", QUESTION),
        quote_tool_result("The human decided: {result}"),
    )
    cli = agent_cli(cli_name, [echo_spec(echo_server)])

    running = cli.start("Ask the human whether to ship on Friday.")
    [call] = running.wait_for(echo_server.calls, timeout=CALL_TIMEOUT, what="the tool call")
    assert call["arguments"] == QUESTION
    # The CLI is blocked in the tool call: it is still running, and no result reached the model.
    assert running.running(), running.wait().describe()
    assert model_server.tool_results() == []

    answer = f"no, wait for Monday ({cli_name})"
    echo_server.answer(answer)
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    assert model_server.errors == []
    # The request after the tool call carries the human's answer as the tool result.
    last = model_server.turn_requests()[-1]
    fresh = last.latest_tool_results()
    assert len(fresh) == 1, model_server.describe()
    assert json.loads(fresh[0].text) == {"answer": answer}
    assert [r.text for r in model_server.tool_results()] == [fresh[0].text]
    # The CLI's own report: one call of our tool, and a final text quoting the answer.
    [reported] = result.tool_calls()
    assert (reported.server, reported.tool, reported.ok) == ("echo", "ask_decision", True)
    assert reported.arguments == QUESTION
    assert answer in (reported.output or "")
    assert result.final_text() == f"The human decided: {fresh[0].text}"
    assert result.session_id()

    # The MCP server saw this CLI's client name, and the explicit env reached it intact.
    assert [info["name"] for info in echo_server.client_infos()] == [CLIENT_NAMES[cli_name]]
    assert all(info["version"] for info in echo_server.client_infos())
    assert [e["token"] for e in echo_server.events("start")] == ["tok-e2e-passed"]


@pytest.mark.parametrize("cli_name", CLI_NAMES)
def test_resumed_turn_carries_the_first_turns_history(
    cli_name: CliName,
    model_server: ModelServer,
    echo_server: EchoServer,
    agent_cli: AgentCliFactory,
) -> None:
    model_server.script(
        tool_round_trip("echo", "ask_decision", QUESTION, "First turn: {result}"), repeat=True
    )
    cli = agent_cli(cli_name, [echo_spec(echo_server)])
    running = cli.start("Ask the human whether to ship on Friday.")
    running.wait_for(echo_server.calls, timeout=CALL_TIMEOUT, what="the tool call")
    echo_server.answer("ship-it-7")
    first = running.wait()
    assert first.succeeded, first.describe() + "\n" + model_server.describe()
    session = first.session_id()
    assert session
    first_text = first.final_text()
    assert first_text is not None
    assert "ship-it-7" in first_text

    model_server.script(Text("Second turn, same session."))
    second = cli.run("What did the human say?", resume=session)

    assert second.succeeded, second.describe() + "\n" + model_server.describe()
    assert second.session_id() == session
    assert second.final_text() == "Second turn, same session."
    assert model_server.errors == []
    request = model_server.turn_requests()[-1]
    # One new user turn on top of the whole first turn: prompt, tool result, answer text.
    prompts = ["Ask the human whether to ship on Friday.", "What did the human say?"]
    assert [t for t in request.user_texts() if t in prompts] == prompts
    # Gemini CLI 0.61 repeats a resumed session's functionResponse part (same id): count ids.
    results = request.tool_results()
    assert len({r.call_id for r in results}) == 1, results
    assert all(json.loads(r.text) == {"answer": "ship-it-7"} for r in results), results
    assert request.contains(first_text)
    assert request.latest_tool_results() == []
    assert len(echo_server.calls()) == 1


def test_timeout_kills_the_cli_and_its_mcp_servers(
    echo_server: EchoServer, agent_cli: AgentCliFactory
) -> None:
    # Codex retries forever when its model server is unreachable; only our timeout ends it.
    with ModelServer() as gone:
        unreachable = gone.base_url
    cli = agent_cli("codex", [echo_spec(echo_server)], model_url=unreachable)

    running = cli.start("hello", timeout=CALL_TIMEOUT + 30)
    # Its MCP server is up (so there is something to kill besides the CLI) ...
    started = wait_until(
        lambda: echo_server.events("start"), timeout=CALL_TIMEOUT, what="the echo server"
    )
    # ... and the wall-clock limit runs out while Codex is still retrying.
    result = running.wait(timeout=1)

    assert result.timed_out, result.describe()
    assert result.rc is not None
    assert result.rc < 0  # killed by a signal
    pids = [event["pid"] for event in started]
    wait_until(lambda: not any(map(_alive, pids)), timeout=5, what=f"MCP servers {pids} to die")


def test_the_refusing_proxy_catches_a_cli_reaching_for_the_internet(tmp_path: Path) -> None:
    # The no-internet check in the model_server fixture is only worth something if the CLIs
    # really send their outside traffic through the proxy: switch one known call back on.
    class ChattyGemini(GeminiCli):
        def _write_config(self) -> None:
            super()._write_config()
            path = self.home / ".gemini" / "settings.json"
            settings = json.loads(path.read_text(encoding="utf-8"))
            settings["privacy"]["usageStatisticsEnabled"] = True
            path.write_text(json.dumps(settings), encoding="utf-8")

    # Gemini sends its session's start once its GPU probe and experiments are in, and its end
    # without waiting: a run on a loaded machine can be over before either leaves. So up to
    # three runs, each given a few seconds for the attempt to reach the proxy; a proxy that
    # lets the call through (or never sees it) fails all three.
    with ModelServer(Text("hello")) as server:
        for attempt in range(3):
            cli = ChattyGemini(
                root=tmp_path / f"run{attempt}",
                model_url=server.base_url,
                proxy_url=server.proxy_url,
            )
            result = cli.run("say hello")
            cli.close()
            assert result.succeeded, result.describe()
            try:
                wait_until(
                    lambda: "play.googleapis.com:443" in server.outbound_attempts,
                    timeout=5,
                    what="Gemini's telemetry at the proxy",
                )
                break
            except TimeoutError:
                continue
        else:
            pytest.fail(f"no telemetry reached the proxy in 3 runs: {server.outbound_attempts}")


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")
