"""Which failures are retried on their own: judged from what the real CLIs printed
(tests/data/agent-cli-samples) and from hand-written usage-limit samples (``synthetic/``)."""

from __future__ import annotations

import datetime as dt

import pytest

from discord_mcp.runs.engine.failures import Failure, classify, reset_time
from discord_mcp.runs.journal.views import Tool
from tests.runs.test_decoders import judge

NOW = 1_800_000_000.0  # 2027-01-15 08:00 UTC


@pytest.mark.parametrize(
    ("tool", "sample"),
    [
        ("claude", "claude-fail-500-noretry.jsonl"),
        ("claude", "claude-fail-529-noretry.jsonl"),
        ("claude", "claude-fail-noserver-noretry.jsonl"),
        ("codex", "codex-fail-500.jsonl"),
        ("codex", "codex-fail-529.jsonl"),
        ("codex", "codex-fail-midstream.jsonl"),
        ("gemini", "gemini-fail-500-maxattempts1-pinned.jsonl"),
        ("gemini", "gemini-fail-529-maxattempts1.jsonl"),
        ("gemini", "gemini-fail-noserver-maxattempts1.jsonl"),
        ("gemini", "gemini-fail-midstream-maxattempts1.jsonl"),
    ],
)
def test_server_errors_and_lost_connections_are_temporary(tool: Tool, sample: str) -> None:
    outcome = judge(tool, sample)
    assert not outcome.ok
    assert classify(outcome, NOW) == Failure("temporary")


@pytest.mark.parametrize(
    ("tool", "sample"),
    [
        ("claude", "claude-fail-401-noretry.jsonl"),
        ("codex", "codex-fail-401.jsonl"),
        ("gemini", "gemini-fail-401.jsonl"),
        ("claude", "claude-resume-badid.jsonl"),
    ],
)
def test_authentication_and_resume_failures_are_the_jobs_own(tool: Tool, sample: str) -> None:
    outcome = judge(tool, sample, resumed="resume" in sample)
    assert not outcome.ok
    assert classify(outcome, NOW) is None


def test_a_success_is_never_retried() -> None:
    assert classify(judge("claude", "claude-new.jsonl"), NOW) is None


@pytest.mark.parametrize(
    ("tool", "sample", "resets"),
    [
        ("claude", "synthetic/claude-usage-limit.jsonl", 1_900_000_000.0),
        ("codex", "synthetic/codex-usage-limit.jsonl", NOW + 2 * 3600 + 5 * 60),
        ("gemini", "synthetic/gemini-usage-limit.jsonl", NOW + 42.5),
    ],
)
def test_a_usage_limit_is_held_until_the_reset_each_cli_states(
    tool: Tool, sample: str, resets: float
) -> None:
    outcome = judge(tool, sample)
    assert not outcome.ok
    assert classify(outcome, NOW) == Failure("usage_limit", resets)


def test_reset_times_in_the_words_the_clis_use() -> None:
    utc = dt.UTC
    assert reset_time("Claude AI usage limit reached|1900000000", NOW) == 1_900_000_000.0
    assert reset_time("try again in 1 day 2 hours", NOW) == NOW + 26 * 3600
    assert reset_time("Please retry in 1h2m3s.", NOW) == NOW + 3723
    # 08:00 UTC now: 3:15 PM is later today, 7am is tomorrow.
    later = reset_time("try again at 3:15 PM", NOW, tz=utc)
    assert later == dt.datetime(2027, 1, 15, 15, 15, tzinfo=utc).timestamp()
    tomorrow = reset_time("You've hit your limit · resets 7am (UTC)", NOW, tz=utc)
    assert tomorrow == dt.datetime(2027, 1, 16, 7, 0, tzinfo=utc).timestamp()
    paris = reset_time("resets 3pm (Europe/Paris)", NOW, tz=utc)
    assert paris == dt.datetime(2027, 1, 15, 14, 0, tzinfo=utc).timestamp()
    assert reset_time("usage limit reached", NOW) is None


def test_a_limit_without_a_reset_time_is_an_ordinary_failure() -> None:
    from dataclasses import replace

    outcome = replace(judge("codex", "codex-fail-529.jsonl"), error_message="usage limit reached")
    assert classify(outcome, NOW) is None
