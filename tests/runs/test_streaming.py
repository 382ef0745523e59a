"""The answer as it is written: the shared text stream, and each CLI's partial output."""

from __future__ import annotations

from pathlib import Path

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.acp import AcpDecoder, transcript_line
from discord_mcp.runs.streaming import TextStream, pieces

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "agent-cli-samples"


def feed(tool: str, sample: str) -> str:
    decoder = adapter_for(tool).decoder()
    for line in (SAMPLES / sample).read_text(encoding="utf-8").splitlines():
        decoder.feed(line)
    return decoder.stream.text


def test_claude_code_partial_messages_stream_its_text_deltas() -> None:
    assert feed("claude", "claude-new-partial.jsonl") == "pong (user turns seen: 1)"


def test_claude_code_without_partial_messages_streams_nothing() -> None:
    assert feed("claude", "claude-new.jsonl") == ""


def test_gemini_and_codex_stream_what_their_events_carry() -> None:
    assert feed("gemini", "gemini-new.jsonl") == "pong (user turns seen: 1)"
    assert feed("codex", "codex-new.jsonl") == "pong (user turns seen: 1)"


def test_an_acp_transcript_streams_chunks_and_keeps_messages_apart() -> None:
    decoder = AcpDecoder()
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}
    for text in ("Looking", " at it."):
        decoder.feed(
            transcript_line(
                "acp_update", update={**chunk, "content": {"type": "text", "text": text}}
            )
        )
    decoder.feed(
        transcript_line(
            "acp_update",
            update={
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "ls",
                "kind": "execute",
            },
        )
    )
    decoder.feed(
        transcript_line(
            "acp_update", update={**chunk, "content": {"type": "text", "text": "Done."}}
        )
    )
    decoder.feed(transcript_line("acp_result", stop_reason="end_turn", usage=None))
    assert decoder.stream.text == "Looking at it.\n\nDone."
    assert decoder.final_text == "Done."
    assert decoder.verdict() is not None
    assert decoder.verdict().ok
    assert [c.name for c in decoder.tool_calls] == ["ls"]


def test_a_cancelled_acp_turn_is_not_a_success() -> None:
    decoder = AcpDecoder()
    decoder.feed(transcript_line("acp_result", stop_reason="cancelled", usage=None))
    assert decoder.verdict() is not None
    assert not decoder.verdict().ok


def test_streamed_text_splits_at_2000_without_breaking_a_code_fence() -> None:
    text = "intro\n```python\n" + "x = 1\n" * 600 + "```\nafter"
    parts = pieces(text)
    assert len(parts) > 1
    assert all(len(p) <= 2000 for p in parts)
    assert all(p.count("```") % 2 == 0 for p in parts)


def test_a_text_stream_counts_changes_and_ignores_empty_ones() -> None:
    stream = TextStream()
    stream.add("")
    assert stream.version == 0
    stream.add("a")
    stream.replace("a")
    assert stream.version == 1
