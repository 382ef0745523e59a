"""Gemini CLI's ``--output-format json`` mode (seed 000, issue 34): where stream-json is not
available, the run asks for json and reads its single object (the answer, the session id, the
usage), on output captured from the real Gemini CLI 0.61 (tests/data/agent-cli-samples)."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters import InvocationRequest, adapter_for
from discord_mcp.runs.adapters.base import Decoder, Outcome
from discord_mcp.runs.adapters.gemini_json import OUTPUT_VARIABLE, output_format
from discord_mcp.runs.journal.views import Usage
from tests.support.fake_agents import SAMPLES, sample_rc


def decode(lines: list[str]) -> Decoder:
    decoder = adapter_for("gemini").decoder()
    for line in lines:
        decoder.feed(line)
    return decoder


def judge(sample: str, *, extra: list[str] | None = None) -> Outcome:
    lines = (SAMPLES / sample).read_text(encoding="utf-8").splitlines()
    decoder = decode([*(extra or []), *lines])
    stderr = (SAMPLES / (sample.rsplit(".", 1)[0] + ".stderr")).read_text(encoding="utf-8")
    return decoder.outcome(sample_rc(sample), resumed=False, stderr_tail=stderr)


def test_the_json_result_gives_the_answer_the_session_and_the_usage_of_every_model() -> None:
    outcome = judge("gemini-new-json.json")
    assert outcome.ok, outcome
    assert outcome.final_text == "pong (user turns seen: 1)"
    assert outcome.session_key == "52e2b4d6-34ac-451a-b616-d111387af14e"
    # the router's model and the main one: 12 + 12 in, 5 + 5 out
    assert outcome.usage == Usage(
        input_tokens=24, output_tokens=10, cached_input_tokens=0, total_tokens=34
    )


def test_the_pinned_clis_json_result_is_read() -> None:
    outcome = judge("gemini-json-pinned.json")
    assert outcome.ok, outcome
    assert outcome.final_text == "Hello from json."
    assert outcome.session_key == "0cba0537-2666-47ee-ab17-24b974fb49aa"
    assert outcome.usage is not None
    assert outcome.usage.output_tokens == 5


def test_lines_that_are_not_json_around_the_result_are_diagnostics_not_failures() -> None:
    outcome = judge(
        "gemini-json-pinned.json",
        extra=["Loaded cached credentials.", "Attempt 1 failed. Retrying with backoff..."],
    )
    assert outcome.ok, outcome
    assert outcome.final_text == "Hello from json."


def test_the_json_modes_error_object_on_stderr_is_the_failure_it_names() -> None:
    assert sample_rc("gemini-json-pinned-fail-500.json") == 244
    outcome = judge("gemini-json-pinned-fail-500.json")
    assert outcome.error_code == "E_CLI_ERROR"
    assert "the model script is exhausted" in (outcome.error_message or "")


def test_a_json_result_on_one_line_is_read_too() -> None:
    decoder = decode(['{"session_id": "s-1", "response": "one line", "stats": {}}'])
    outcome = decoder.outcome(0, resumed=False)
    assert outcome.ok
    assert outcome.final_text == "one line"
    assert outcome.session_key == "s-1"


def test_a_result_cut_off_before_its_end_is_missing_not_guessed() -> None:
    lines = (SAMPLES / "gemini-json-pinned.json").read_text(encoding="utf-8").splitlines()
    decoder = decode(lines[:-3])
    outcome = decoder.outcome(None, resumed=False)
    assert not outcome.ok
    assert outcome.final_text is None


def test_the_output_format_is_stream_json_unless_a_setting_says_json() -> None:
    assert output_format((), {}) == ("stream-json", False)
    assert output_format((), {OUTPUT_VARIABLE: "json"}) == ("json", False)
    assert output_format(("-m", "x", "--output-format", "json"), {}) == ("json", True)
    assert output_format(("--output-format=json",), {OUTPUT_VARIABLE: "stream-json"}) == (
        "json",
        True,
    )
    assert output_format(("-o", "stream-json"), {OUTPUT_VARIABLE: "json"}) == (
        "stream-json",
        True,
    )


@pytest.mark.parametrize(
    ("args", "env", "code"),
    [
        (("--output-format", "text"), {}, "E_INVALID_ARGS"),
        (("-o",), {}, "E_INVALID_ARGS"),
        ((), {OUTPUT_VARIABLE: "text"}, "E_BAD_ARGUMENTS"),
    ],
)
def test_an_output_format_we_cannot_read_is_refused(
    args: tuple[str, ...], env: dict[str, str], code: str
) -> None:
    with pytest.raises(RunError) as caught:
        output_format(args, env)
    assert caught.value.code == code


def request(tmp_path: Path, args: tuple[str, ...], env: dict[str, str]) -> InvocationRequest:
    return InvocationRequest(
        executable="gemini",
        prompt="hello",
        resume_key=None,
        default_args=args,
        job_dir=tmp_path,
        shared_dir=tmp_path / "shared",
        thread_id="1359000000000000000",
        env=env,
        mcp=None,
    )


def test_the_run_asks_gemini_for_json_when_the_setting_says_so(tmp_path: Path) -> None:
    argv = adapter_for("gemini").invocation(request(tmp_path, (), {OUTPUT_VARIABLE: "json"})).argv
    assert argv[1:3] == ("--output-format", "json")
    assert "stream-json" not in argv
    plain = adapter_for("gemini").invocation(request(tmp_path, (), {})).argv
    assert plain[1:3] == ("--output-format", "stream-json")


def test_the_projects_own_output_format_is_not_given_twice(tmp_path: Path) -> None:
    args = ("--output-format", "json")
    argv = adapter_for("gemini").invocation(request(tmp_path, args, {})).argv
    assert argv.count("--output-format") == 1
    assert argv[-3:-1] == args
