"""An ACP run's transcript reads like a CLI's (issue 37): the lines below are what the real
``gemini --acp`` wrote in a run's turn log (a command it asked permission for is reported only
once done, as a ``tool_call_update``, never announced as a ``tool_call``)."""

from __future__ import annotations

import json

from discord_mcp.runs.adapters.acp import AcpDecoder
from discord_mcp.runs.folders.transcript import render_turn
from discord_mcp.watch.shell import readable

GEMINI_ACP = [
    {"type": "acp_session", "session_id": "162389ec", "agent": "gemini-cli"},
    {
        "type": "acp_update",
        "update": {
            "availableCommands": [{"name": "memory", "description": "Manage memory."}],
            "sessionUpdate": "available_commands_update",
        },
    },
    {
        "type": "acp_update",
        "update": {
            "toolCallId": "run_shell_command_1795870843693_0",
            "kind": "execute",
            "status": "completed",
            "title": "touch made.txt",
            "content": [],
            "locations": [],
            "sessionUpdate": "tool_call_update",
        },
    },
    {
        "type": "acp_update",
        "update": {
            "content": {"text": "The file is ", "type": "text"},
            "sessionUpdate": "agent_message_chunk",
        },
    },
    {
        "type": "acp_update",
        "update": {
            "content": {"text": "made.", "type": "text"},
            "sessionUpdate": "agent_message_chunk",
        },
    },
    {"type": "acp_result", "stop_reason": "end_turn", "usage": None},
]
LINES = [json.dumps(event) for event in GEMINI_ACP]


def test_the_transcript_of_an_acp_turn_shows_the_call_and_the_answer() -> None:
    text = render_turn("gemini-acp", 1, "make the file now", LINES, status="completed")
    assert "(no output)" not in text
    assert "touch made.txt" in text
    assert "The file is made." in text  # the pieces joined
    assert "_(turn completed)_" in text


def test_an_announced_call_shows_its_input_and_its_output_once() -> None:
    call = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Read README.md",
        "rawInput": {"command": "cat README.md"},
    }
    done = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "# Hello"}}],
    }
    lines = [json.dumps({"type": "acp_update", "update": u}) for u in (call, done)]
    text = render_turn("claude-acp", 2, "read it", lines)
    assert "cat README.md" in text
    assert "# Hello" in text


def test_a_failed_acp_turn_says_why() -> None:
    lines = [json.dumps({"type": "acp_error", "message": "the agent exited"})]
    assert "**Failed**: the agent exited" in render_turn("gemini-acp", 1, "hi", lines)


def test_a_call_reported_only_once_done_counts_as_a_tool_call() -> None:
    decoder = AcpDecoder()
    for line in LINES:
        decoder.feed(line)
    assert decoder.tool_call_count == 1
    assert decoder.tool_calls[0].name == "touch made.txt"
    assert decoder.final_text == "The file is made."


def test_the_job_log_of_an_acp_turn_reads_its_call_and_its_answer() -> None:
    shown = "\n".join(readable("gemini-acp", LINES))
    assert "touch made.txt" in shown
    assert "The file is made." in shown
