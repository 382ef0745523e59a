"""The answer as it is written: the shared text stream, and each CLI's partial output."""

from __future__ import annotations

import asyncio
import sys
import tracemalloc
from pathlib import Path

from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.acp import AcpDecoder, transcript_line
from discord_mcp.runs.engine.streaming import ANSWER_LIMIT, PREVIEW_LIMIT, TextStream, pieces
from tests.runs.conftest import EngineFactory
from tests.support.fake_agents import RecordingNotifier

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "agent-cli-samples"
FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"


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


def chunk_update(text: str) -> str:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return transcript_line("acp_update", update=update)


def test_a_stream_keeps_the_end_of_megabytes_and_costs_the_preview_only_when_read() -> None:
    stream = TextStream()
    chunks = [f"{n:07d} " + "x" * 92 + "\n" for n in range(100_000)]  # 10 MB
    reads = 0
    for number, chunk in enumerate(chunks):
        stream.add(chunk)
        if number % 1000 == 0:
            assert len(stream.text) <= PREVIEW_LIMIT
            reads += 1
    text = stream.text
    assert text.startswith("…\n")
    assert text.endswith(chunks[-1].rstrip("\n"))
    assert len(text) == PREVIEW_LIMIT
    assert stream.text is text  # read again without a change: nothing put together again
    assert stream.joined <= (reads + 1) * PREVIEW_LIMIT  # not one preview per chunk
    assert stream.version == len(chunks)


def test_a_preview_cut_inside_a_code_block_opens_it_again() -> None:
    stream = TextStream()
    stream.add("Here it is:\n```python\n")
    for number in range(2000):
        stream.add(f"print({number})\n")
    parts = pieces(stream.text)
    assert stream.text.startswith("…\n```\n")  # the block is still open: shown as code
    assert all(p.count("```") % 2 == 0 for p in parts[:-1])
    stream.add("```\nThat was all.")
    assert all(p.count("```") % 2 == 0 for p in pieces(stream.text))  # and closed again


def test_an_acp_decoder_fed_megabytes_keeps_bounded_text_and_the_answers_start() -> None:
    decoder = AcpDecoder()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number in range(8_000):  # 8 MB
            decoder.feed(chunk_update(f"{number:07d} " + "y" * 991 + "\n"))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    decoder.feed(transcript_line("acp_result", stop_reason="end_turn", usage=None))
    assert held < 2 * ANSWER_LIMIT + 4 * PREVIEW_LIMIT + 200_000  # not the 8 MB it was fed
    final = decoder.final_text or ""
    assert final.startswith("0000000 yyy")
    assert final.endswith("more characters: the whole answer is in the run's log)")
    assert len(final) < ANSWER_LIMIT + 200
    assert (decoder.last_text or "").startswith("0000000 yyy")
    assert len(decoder.stream.text) <= PREVIEW_LIMIT


async def test_an_acp_agents_text_reaches_the_notifier_while_it_writes(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    """The engine queues the text so far for the notifier before the turn ends (the daemon's
    live preview; tests/watch/test_acp_live_text.py follows it into Discord)."""
    await asyncio.to_thread(AgentRegistry(state_dir).add, "fake", [sys.executable, str(FAKE)])
    await asyncio.to_thread(registry.add, "acp", workdir, ["fake"], "fake")
    release = tmp_path / "release"
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_RELEASE": str(release)}
    async with make_engine(env=env) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "hello", "owner")
        shown = await notifier.wait_for(lambda: notifier.of("job_text", job.job_id))
        assert shown[0].text == "first words"
        assert notifier.finished(job.job_id) is None  # still writing
        release.touch()
        done = await notifier.wait_finished(job.job_id)
    assert done.final_text == "first words and the rest."
    assert notifier.of("job_text", job.job_id)[-1].text in ("first words", done.final_text)


def test_a_message_sent_whole_again_and_again_keeps_its_code_block_open_once() -> None:
    """Codex and Gemini re-send the message being written whole: what the last copy dropped
    counts, not what every copy dropped."""
    stream = TextStream()
    text = "```python\n"
    for number in range(3000):
        text += f"print({number})\n"
        if number % 500 == 0:
            stream.replace(text)
    stream.replace(text)
    assert stream.text.startswith("…\n```\n")
    stream.replace(text + "```\ndone")
    assert all(p.count("```") % 2 == 0 for p in pieces(stream.text))
