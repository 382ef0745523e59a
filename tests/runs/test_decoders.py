"""The decoders read what the real CLIs printed (tests/data/agent-cli-samples) and judge it
the way each CLI reports success."""

from __future__ import annotations

import pytest

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import Decoder, Outcome
from discord_mcp.runs.journal.views import Tool
from tests.support.fake_agents import SAMPLES, sample_rc


def decode(tool: Tool, sample: str, *, lines: list[str] | None = None) -> Decoder:
    decoder = adapter_for(tool).decoder()
    text = (SAMPLES / sample).read_text(encoding="utf-8")
    for line in lines if lines is not None else text.splitlines():
        decoder.feed(line)
    return decoder


def judge(
    tool: Tool, sample: str, *, resumed: bool = False, stderr: str = "", rc: int | None = None
) -> Outcome:
    decoder = decode(tool, sample)
    stderr_path = SAMPLES / (sample.rsplit(".", 1)[0] + ".stderr")
    if not stderr and stderr_path.exists():
        stderr = stderr_path.read_text(encoding="utf-8")
    code = rc if rc is not None else sample_rc(sample)
    return decoder.outcome(code, resumed=resumed, stderr_tail=stderr)


@pytest.mark.parametrize(
    ("tool", "sample", "text"),
    [
        ("claude", "claude-new.jsonl", "pong (user turns seen: 1)"),
        ("codex", "codex-new.jsonl", "pong (user turns seen: 1)"),
        ("gemini", "gemini-new.jsonl", "pong (user turns seen: 1)"),
    ],
)
def test_a_new_session_succeeds_with_its_key_final_text_and_usage(
    tool: Tool, sample: str, text: str
) -> None:
    outcome = judge(tool, sample)
    assert outcome.ok, outcome
    assert outcome.error_code is None
    assert outcome.final_text == text
    assert outcome.session_key
    assert outcome.usage is not None
    assert outcome.usage.input_tokens
    assert outcome.usage.output_tokens


def test_each_cli_reports_its_own_session_key() -> None:
    assert judge("claude", "claude-new.jsonl").session_key == "ad5fc956-4e55-4c0c-8c40-09b428548046"
    assert judge("codex", "codex-new.jsonl").session_key == "01a20320-4e22-7e61-acc9-9f5423780ab7"
    assert judge("gemini", "gemini-new.jsonl").session_key == "3c5370bd-112f-486e-8b93-4390ccc6e8bb"


@pytest.mark.parametrize(
    ("tool", "new", "resume"),
    [
        ("claude", "claude-new.jsonl", "claude-resume.jsonl"),
        ("codex", "codex-new.jsonl", "codex-resume.jsonl"),
        ("gemini", "gemini-new.jsonl", "gemini-resume.jsonl"),
    ],
)
def test_a_resumed_session_keeps_its_key(tool: Tool, new: str, resume: str) -> None:
    first = judge(tool, new)
    second = judge(tool, resume, resumed=True)
    assert second.ok, second
    assert second.session_key == first.session_key
    assert second.final_text == "pong (user turns seen: 2)"


def test_claude_cost_is_kept() -> None:
    outcome = judge("claude", "claude-new.jsonl")
    assert outcome.cost_usd == pytest.approx(0.000148)


def test_a_steered_claude_job_that_ran_two_turns_answers_with_both() -> None:
    """A message steered in after the model's last step runs as a second turn of the same
    process (recorded from the real CLI): the job's answer, usage and cost cover both."""
    outcome = judge("claude", "claude-steered.jsonl")
    assert outcome.ok, outcome
    assert outcome.final_text == (
        "Working on the first task.\n\nAnswer sees: first task please | a second thought"
    )
    assert outcome.usage is not None
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (20, 10)
    assert outcome.cost_usd == pytest.approx(0.00028)  # the CLI's total counts both turns


def test_a_failed_turn_fails_a_steered_job_even_when_a_later_turn_succeeded() -> None:
    failed = (SAMPLES / "claude-fail-500-noretry.jsonl").read_text(encoding="utf-8")
    steered = (SAMPLES / "claude-steered.jsonl").read_text(encoding="utf-8")
    lines = [line for line in failed.splitlines() if '"result"' in line]
    decoder = decode("claude", "claude-steered.jsonl", lines=lines + steered.splitlines())
    outcome = decoder.outcome(0, resumed=False)
    assert not outcome.ok
    assert outcome.error_code == "E_CLI_ERROR"
    assert "API Error: 500" in (outcome.error_message or "")


@pytest.mark.parametrize(
    ("sample", "words"),
    [
        ("claude-fail-401-noretry.jsonl", "Invalid API key"),
        ("claude-fail-500-noretry.jsonl", "API Error: 500"),
        ("claude-fail-529-noretry.jsonl", "529 Overloaded"),
        ("claude-fail-noserver-noretry.jsonl", "Connection refused"),
        ("claude-fail-500.jsonl", "HTTP 500"),
    ],
)
def test_claude_failures_are_read_from_is_error_not_subtype(sample: str, words: str) -> None:
    decoder = decode("claude", sample)
    outcome = decoder.outcome(sample_rc(sample), resumed=False)
    assert not outcome.ok
    assert outcome.error_code == "E_CLI_ERROR"
    assert words in (outcome.error_message or "")
    assert decoder.final_seen  # the result event's subtype said "success"


def test_claude_api_retries_show_up_as_a_note() -> None:
    decoder = decode("claude", "claude-fail-529.jsonl")
    assert decoder.note is not None
    assert decoder.note.startswith("API retry 10/10")


def test_claude_resume_of_an_unknown_session_is_a_resume_failure() -> None:
    outcome = judge("claude", "claude-resume-badid.jsonl", resumed=True, rc=1)
    assert outcome.error_code == "E_RESUME_FAILED"
    assert outcome.resume_failed


@pytest.mark.parametrize(
    ("sample", "words"),
    [
        ("codex-fail-401.jsonl", "401 Unauthorized"),
        ("codex-fail-500.jsonl", "high demand"),
        ("codex-fail-529.jsonl", "529"),
        ("codex-fail-midstream.jsonl", "stream disconnected"),
    ],
)
def test_codex_failures_come_from_turn_failed(sample: str, words: str) -> None:
    outcome = judge("codex", sample)
    assert outcome.error_code == "E_CLI_ERROR"
    assert words in (outcome.error_message or "")


def test_codex_that_never_ends_its_turn_is_missing_its_result() -> None:
    # "Reconnecting..." errors forever; our timeout killed it (rc 124 in the recording).
    decoder = decode("codex", "codex-fail-noserver.jsonl")
    assert not decoder.final_seen
    assert decoder.note is not None
    assert "Reconnecting" in decoder.note
    outcome = decoder.outcome(None, resumed=False)
    assert outcome.error_code == "E_ADAPTER_MISSING_RESULT"


def test_codex_resume_with_no_rollout_is_a_resume_failure() -> None:
    # rc 1 (research/real-clis.md; this recording kept no .rc file)
    outcome = judge("codex", "codex-resume-badid.jsonl", resumed=True, rc=1)
    assert outcome.error_code == "E_RESUME_FAILED"
    assert "no rollout found" in (outcome.error_message or "")
    assert "<unknown>" not in (outcome.error_message or "")  # the stack-trace noise is cut


@pytest.mark.parametrize(
    ("sample", "rc", "words"),
    [
        ("gemini-fail-401.jsonl", 145, "401"),
        ("gemini-fail-500-maxattempts1-pinned.jsonl", 244, "500"),
        ("gemini-fail-529-maxattempts1.jsonl", 17, "529"),
        ("gemini-fail-midstream-maxattempts1.jsonl", 1, "Incomplete JSON segment"),
        ("gemini-fail-noserver-maxattempts1.jsonl", 1, "fetch failed"),
    ],
)
def test_gemini_failures_come_from_result_status(sample: str, rc: int, words: str) -> None:
    assert sample_rc(sample) == rc
    outcome = judge("gemini", sample)
    assert outcome.error_code == "E_CLI_ERROR"
    assert words in (outcome.error_message or "")


def test_gemini_exit_codes_are_explained_as_http_statuses() -> None:
    decoder = adapter_for("gemini").decoder()
    outcome = decoder.outcome(145, resumed=False)
    assert outcome.error_code == "E_CLI_EXIT_NONZERO"
    assert "HTTP 401" in (outcome.error_message or "")
    assert "HTTP 529" in decoder.explain_exit(17)


def test_gemini_killed_mid_retry_has_no_result() -> None:
    decoder = decode("gemini", "gemini-fail-500.jsonl")
    assert decoder.session_key
    assert decoder.outcome(None, resumed=False).error_code == "E_ADAPTER_MISSING_RESULT"


def test_gemini_resume_from_another_directory_is_a_resume_failure() -> None:
    outcome = judge(
        "gemini",
        "gemini-resume-othercwd.jsonl",
        resumed=True,
        stderr="Error resuming session: No previous sessions found for this project.\n",
    )
    assert outcome.error_code != "E_RESUME_FAILED"  # rc unknown for this recording
    decoder = decode("gemini", "gemini-resume-othercwd.jsonl")
    stderr = (SAMPLES / "gemini-resume-othercwd.stderr").read_text(encoding="utf-8")
    assert decoder.outcome(42, resumed=True, stderr_tail=stderr).error_code == "E_RESUME_FAILED"


@pytest.mark.parametrize(
    ("tool", "sample", "name", "summary", "answer"),
    [
        (
            "claude",
            "claude-mcp.jsonl",
            "mcp__discord__ask_decision",
            "Which option should we take?",
            "tool said: A (is_error=False)",
        ),
        (
            "codex",
            "codex-mcp.jsonl",
            "mcp__discord__ask_decision",
            "Which option should we take?",
            None,
        ),
        (
            "gemini",
            "gemini-mcp.jsonl",
            "mcp_discord_ask_decision",
            "Which option should we take?",
            None,
        ),
    ],
)
def test_mcp_tool_calls_are_seen_with_a_short_summary(
    tool: Tool, sample: str, name: str, summary: str, answer: str | None
) -> None:
    decoder = decode(tool, sample)
    assert [(c.name, c.summary) for c in decoder.tool_calls] == [(name, summary)]
    assert decoder.tool_call_count == 1
    outcome = decoder.outcome(0, resumed=False)
    assert outcome.ok
    if answer is not None:
        assert outcome.final_text == answer
    assert decoder.last_text


def test_codex_shell_commands_count_as_tool_calls() -> None:
    decoder = decode("codex", "codex-bash.jsonl")
    assert [(c.name, c.summary) for c in decoder.tool_calls] == [
        ("shell", "/bin/bash -lc 'echo stub-bash > stub-bash.txt'")
    ]


def test_gemini_final_text_is_what_follows_the_last_tool_call() -> None:
    decoder = decode("gemini", "gemini-bash-yolo.jsonl")
    assert decoder.final_text is not None
    assert decoder.final_text.startswith("tool said:")
    assert [c.name for c in decoder.tool_calls] == ["run_shell_command"]


def test_claude_permission_denials_show_up_as_a_note() -> None:
    decoder = decode("claude", "claude-bash-noprompttool.jsonl")
    assert decoder.note == "permission denied for Bash"


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
def test_non_json_lines_and_unknown_events_never_fail_a_job(tool: Tool) -> None:
    sample = f"{tool}-new.jsonl"
    real = (SAMPLES / sample).read_text(encoding="utf-8").splitlines()
    noise = [
        "Loaded cached credentials.",
        "",
        "   ",
        "{not json at all",
        "[1, 2, 3]",
        '"a string"',
        '{"type": "brand_new_event", "data": {"x": 1}}',
        '{"no_type": true}',
        '{"type": "assistant", "message": "not an object"}',
        '{"type": "item.completed", "item": null}',
        '{"type": "message", "role": "assistant", "content": 42}',
        "\x00\x01 binary-ish",
    ]
    lines = [real[0], *noise, *real[1:]]
    decoder = decode(tool, sample, lines=lines)
    outcome = decoder.outcome(0, resumed=False)
    assert outcome.ok, outcome
    assert outcome.final_text == "pong (user turns seen: 1)"
    assert decoder.non_json_lines >= 4
    assert decoder.unknown_events + decoder.bad_events >= 2


def test_output_that_stops_without_a_final_event_is_missing_its_result() -> None:
    lines = (SAMPLES / "claude-new.jsonl").read_text(encoding="utf-8").splitlines()[:-1]
    decoder = decode("claude", "claude-new.jsonl", lines=lines)
    assert decoder.outcome(0, resumed=False).error_code == "E_ADAPTER_MISSING_RESULT"
    nonzero = decoder.outcome(3, resumed=False, stderr_tail="boom\n")
    assert nonzero.error_code == "E_CLI_EXIT_NONZERO"
    assert "boom" in (nonzero.error_message or "")


def test_output_in_another_format_is_a_parse_failure_not_a_missing_result() -> None:
    """Seed 000's E_ADAPTER_PARSE (issue 34): Claude Code's plain text output (the wrong
    --output-format), or lines that are no event we know, with a clean exit."""
    assert judge("claude", "claude-new-text.txt", rc=0).error_code == "E_ADAPTER_PARSE"
    unknown = adapter_for("codex").decoder()
    unknown.feed('{"type": "something.new", "payload": 1}')
    assert unknown.outcome(0, resumed=False).error_code == "E_ADAPTER_PARSE"
    # An exit code of its own says more than the unreadable output.
    assert judge("claude", "claude-new-text.txt", rc=2).error_code == "E_CLI_EXIT_NONZERO"
    silent = adapter_for("claude").decoder()
    assert silent.outcome(0, resumed=False).error_code == "E_ADAPTER_MISSING_RESULT"


def test_a_new_session_without_a_key_fails_as_key_missing() -> None:
    lines = [
        line
        for line in (SAMPLES / "gemini-new.jsonl").read_text(encoding="utf-8").splitlines()
        if '"type":"init"' not in line
    ]
    decoder = decode("gemini", "gemini-new.jsonl", lines=lines)
    assert decoder.outcome(0, resumed=False).error_code == "E_ADAPTER_SESSION_KEY_MISSING"
    assert decoder.outcome(0, resumed=True).ok  # a resumed session keeps the key it had


def test_success_with_a_nonzero_exit_code_is_still_a_failure() -> None:
    decoder = decode("codex", "codex-new.jsonl")
    outcome = decoder.outcome(2, resumed=False)
    assert outcome.error_code == "E_CLI_EXIT_NONZERO"
