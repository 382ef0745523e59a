"""The scripted model server on its own (no CLIs): scripting rules, wire shapes, extraction.

Request bodies are trimmed copies of what the real CLIs send (see tests/data/agent-cli-samples
and the e2e tests, which exercise the same paths with the real CLIs).
"""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any

import httpx
import pytest

from tests.support.model_server import (
    ModelRequest,
    ModelServer,
    Text,
    ToolCall,
    quote_tool_result,
    tool_round_trip,
)

ASK = ToolCall("echo", "ask_decision", {"question": "A or B?"})


def post(server: ModelServer, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(server.base_url + path, json=body, timeout=5)


def sse_data(response: httpx.Response) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]


def anthropic_body(*messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "stream": stream,
        "tools": [{"name": "Bash"}, {"name": "mcp__echo__ask_decision"}],
        "messages": list(messages),
    }


def test_steps_are_used_in_order_and_running_out_is_a_recorded_500() -> None:
    with ModelServer(ASK, quote_tool_result("got {result}")) as server:
        first = post(server, "/v1/messages", anthropic_body({"role": "user", "content": "hi"}))
        tool_use = next(
            e["content_block"] for e in sse_data(first) if e["type"] == "content_block_start"
        )
        assert tool_use["name"] == "mcp__echo__ask_decision"
        assert json.loads(
            next(e["delta"]["partial_json"] for e in sse_data(first) if "delta" in e)
        ) == {"question": "A or B?"}

        result = {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "B"}
        body = anthropic_body(
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{**tool_use, "input": {}}]},
            {"role": "user", "content": [result]},
            stream=False,
        )
        second = post(server, "/v1/messages", body)
        assert second.json()["content"] == [{"type": "text", "text": "got B"}]

        third = post(server, "/v1/messages", body)
        assert third.status_code == 500
        assert len(server.errors) == 1
        assert "exhausted" in server.errors[0]
        assert server.tool_results()[0].text == "B"
        assert server.tool_results()[0].name == "mcp__echo__ask_decision"


def test_a_tool_that_is_not_offered_fails_the_request_loudly() -> None:
    with ModelServer(ToolCall("other", "ask_decision")) as server:
        response = post(server, "/v1/messages", anthropic_body({"role": "user", "content": "x"}))
    assert response.status_code == 500
    assert "mcp__other__ask_decision is not offered" in server.errors[0]


def test_repeat_keeps_a_deciding_step_in_force() -> None:
    step = tool_round_trip("echo", "ask_decision", {}, "said {result}")
    with ModelServer(step, repeat=True) as server:
        for _ in range(3):
            response = post(
                server, "/v1/messages", anthropic_body({"role": "user", "content": "x"})
            )
            assert response.status_code == 200
    assert [type(r.reply) for r in server.requests] == [ToolCall] * 3
    assert server.errors == []


def test_codex_tool_search_round_trip_is_one_step() -> None:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    tools = [{"type": "function", "name": "exec_command"}, {"type": "tool_search"}]
    with ModelServer(ASK, Text("done")) as server:
        search = sse_data(post(server, "/v1/responses", {"input": [user], "tools": tools}))
        assert search[-1]["type"] == "response.completed"
        assert "usage" in search[-1]["response"]
        [search_call] = search[-1]["response"]["output"]
        assert search_call["type"] == "tool_search_call"

        found = {
            "type": "tool_search_output",
            "call_id": search_call["call_id"],
            "tools": [
                {"type": "namespace", "name": "mcp__echo", "tools": [{"name": "ask_decision"}]}
            ],
        }
        history = [user, search_call, found]
        call = sse_data(post(server, "/v1/responses", {"input": history, "tools": tools}))
        [function_call] = call[-1]["response"]["output"]
        assert function_call["namespace"] == "mcp__echo"
        assert function_call["name"] == "ask_decision"
        assert json.loads(function_call["arguments"]) == {"question": "A or B?"}
        assert server.steps_used == 1

        output = {
            "type": "function_call_output",
            "call_id": function_call["call_id"],
            "output": 'Wall time: 0.01 seconds\nOutput:\n{"answer":"B"}',
        }
        history += [function_call, output]
        final = sse_data(post(server, "/v1/responses", {"input": history, "tools": tools}))
        assert final[-1]["response"]["output"][0]["content"][0]["text"] == "done"
        [result] = server.tool_results()
        assert (result.name, result.text) == ("mcp__echo__ask_decision", '{"answer":"B"}')
        assert [r.kind for r in server.requests] == ["turn", "continuation", "turn"]


def test_gemini_side_calls_get_schema_shaped_json_and_use_no_step() -> None:
    router = {
        "contents": [{"role": "user", "parts": [{"text": "classify"}]}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "object",
                "properties": {
                    "complexity_reasoning": {"type": "string"},
                    "complexity_score": {"type": "integer", "minimum": 1},
                    "next_speaker": {"type": "string", "enum": ["user", "model"]},
                },
            },
        },
    }
    turn = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": "mcp_echo_ask_decision"}]}],
    }
    with ModelServer(ASK) as server:
        side = post(server, "/v1beta/models/gemini-2.5-flash-lite:generateContent", router)
        answer = json.loads(side.json()["candidates"][0]["content"]["parts"][0]["text"])
        assert answer == {
            "complexity_reasoning": "scripted",
            "complexity_score": 1,
            "next_speaker": "user",
        }
        main = post(server, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", turn)
        [chunk] = sse_data(main)
        call = chunk["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert call == {"name": "mcp_echo_ask_decision", "args": {"question": "A or B?"}}
        assert [r.kind for r in server.requests] == ["side", "turn"]
        assert server.errors == []


def test_latest_tool_results_are_only_those_after_the_last_user_message() -> None:
    response = {
        "functionResponse": {
            "id": "c1",
            "name": "mcp_echo_ask_decision",
            "response": {"output": '<untrusted_context>\n{"answer":"B"}\n</untrusted_context>'},
        }
    }
    contents: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"text": "first"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "mcp_echo_ask_decision"}}]},
        {"role": "user", "parts": [response]},
    ]
    request = ModelRequest(1, "gemini", "POST", "/", {}, {}, {"contents": contents})
    assert [r.text for r in request.latest_tool_results()] == ['{"answer":"B"}']

    contents += [
        {"role": "model", "parts": [{"text": "ok"}]},
        {"role": "user", "parts": [{"text": "second"}]},
    ]
    assert request.latest_tool_results() == []
    assert [r.call_id for r in request.tool_results()] == ["c1"]
    assert request.user_texts() == ["first", "second"]
    assert request.contains('{"answer":"B"}')


def test_proxy_requests_for_the_internet_are_refused_and_recorded() -> None:
    with ModelServer() as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("CONNECT", "api.example.com:443")
        assert connection.getresponse().status == 403
        connection.close()
        plain = httpx.get("http://example.com/telemetry", proxy=server.proxy_url, timeout=5)
        assert plain.status_code == 403
        assert server.outbound_attempts == [
            "api.example.com:443",
            "http://example.com/telemetry",
        ]


@pytest.mark.parametrize("path", ["/v1/models", "/v1/unknown"])
def test_unknown_paths_are_errors(path: str) -> None:
    with ModelServer(Text("x")) as server:
        assert httpx.get(server.base_url + path, timeout=5).status_code == 500
        assert server.errors
        assert server.steps_used == 0


STREAMED = "Hello from the agent: this answer arrives in several pieces."


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]},
        ),
        ("/v1/messages", anthropic_body({"role": "user", "content": "hello"})),
    ],
    ids=["gemini", "anthropic"],
)
def test_a_held_answer_sends_its_first_piece_and_the_rest_only_once_let_go(
    path: str, body: dict[str, Any]
) -> None:
    """The e2e tests see a streamed answer half written by holding the rest back; Gemini's
    frames end in CRLF CRLF, and a hold that looked for LF LF sent everything at once."""
    hold = threading.Event()
    pieces = Text(STREAMED, pieces=4).split()
    server = ModelServer(Text(STREAMED, pieces=4, hold=hold))
    with server, httpx.stream("POST", server.base_url + path, json=body, timeout=30) as response:
        got = b""
        chunks = response.iter_raw()
        while pieces[0].encode() not in got:
            got += next(chunks)
        before = got.decode()
        hold.set()
        got += b"".join(chunks)
    assert pieces[-1] not in before  # held back
    assert pieces[-1] in got.decode()
