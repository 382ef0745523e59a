"""A job with input (``busy: steer``): the wrapper feeds the CLI's stdin from the job's input
directory, takes messages offered while the turn runs, and closes stdin at the turn's
``result`` (or when anyone ends the input), so the CLI ends as it does with its prompt in argv.
A message offered after that is refused, never silently dropped."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.journal.model import ProcessInfo
from discord_mcp.runs.processes import wrap
from discord_mcp.runs.processes.runner import JobPaths, JobRun
from discord_mcp.runs.processes.spawner import ProcessSpawner, SpawnSpec, reap
from tests.support.model_server import wait_until

# A stand-in CLI: echoes each stdin line's "text" as an event; "finish" ends its turn with a
# result; it prints "eof" when stdin ends, then exits.
ECHO_CLI = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    text = message.get("text") or message["message"]["content"][0]["text"]
    print(json.dumps({"type": "echo", "text": text}), flush=True)
    if text == "finish":
        print(json.dumps({"type": "result", "result": "done"}), flush=True)
print(json.dumps({"type": "eof"}), flush=True)
"""


def start(tmp_path: Path, *first: str) -> tuple[SpawnSpec, ProcessInfo]:
    job_dir = JobPaths.for_job(tmp_path, "job_x").job_dir
    inbox = job_dir / "input"
    inbox.mkdir(parents=True)
    JobPaths.for_job(tmp_path, "job_x").stdout.parent.mkdir(parents=True)
    lines = "".join(json.dumps({"text": t}) + "\n" for t in first)
    (inbox / wrap.FIRST_INPUT).write_text(lines, encoding="utf-8")
    spec = SpawnSpec(
        job_id="job_x",
        tool="claude",
        argv=(sys.executable, "-c", ECHO_CLI),
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        stdout_path=JobPaths.for_job(tmp_path, "job_x").stdout,
        stderr_path=JobPaths.for_job(tmp_path, "job_x").stderr,
        status_path=job_dir / "status.json",
        input_dir=inbox,
    )
    return spec, ProcessSpawner().spawn(spec)


def events(spec: SpawnSpec) -> list[dict[str, str]]:
    if not spec.stdout_path.exists():
        return []
    text = spec.stdout_path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def echoed(spec: SpawnSpec) -> list[str]:
    return [e.get("text") or e["type"] for e in events(spec) if e["type"] != "result"]


def offer(spec: SpawnSpec, text: str) -> bool:
    assert spec.input_dir is not None
    return wrap.offer(str(spec.input_dir), (json.dumps({"text": text}) + "\n").encode())


def ended(spec: SpawnSpec, process: ProcessInfo) -> int:
    """The CLI's exit code once the wrapper has exited (and been reaped)."""
    code = wait_until(
        lambda: (done := reap(process.pid)) is not None and [done],
        timeout=20,
        what="the wrapper to exit",
    )
    return int(code[0])


def test_messages_offered_during_the_turn_reach_the_cli_in_order_and_stdin_closes_at_its_result(
    tmp_path: Path,
) -> None:
    spec, process = start(tmp_path, "the prompt")
    wait_until(lambda: echoed(spec) == ["the prompt"], timeout=20, what="the prompt")
    assert offer(spec, "one more thing")
    assert offer(spec, "and another")
    wait_until(lambda: len(echoed(spec)) == 3, timeout=20, what="the offered messages")
    assert offer(spec, "finish")
    assert ended(spec, process) == 0
    assert echoed(spec) == ["the prompt", "one more thing", "and another", "finish", "eof"]
    assert not offer(spec, "too late")  # the input has ended: the daemon queues it instead
    assert spec.input_dir is not None
    assert not spec.input_dir.exists()
    assert list(spec.input_dir.with_name("input.closed").iterdir()) == []


def test_a_message_that_lands_as_the_input_ends_is_still_given_to_the_cli_once(
    tmp_path: Path,
) -> None:
    spec, process = start(tmp_path, "the prompt")
    wait_until(lambda: echoed(spec) == ["the prompt"], timeout=20, what="the prompt")
    assert spec.input_dir is not None
    assert offer(spec, "just in time")
    wrap.end_input(str(spec.input_dir))  # the daemon saw the turn end first
    assert not offer(spec, "too late")
    assert ended(spec, process) == 0
    assert echoed(spec) == ["the prompt", "just in time", "eof"]


def test_the_input_ends_at_the_result_even_with_nobody_watching(tmp_path: Path) -> None:
    """The daemon may be down: the wrapper itself sees the result and lets the CLI end."""
    spec, process = start(tmp_path, "the prompt", "finish")
    assert ended(spec, process) == 0
    assert echoed(spec) == ["the prompt", "finish", "eof"]


def test_a_job_without_input_refuses_every_offer(tmp_path: Path) -> None:
    (tmp_path / "job").mkdir()
    assert not wrap.offer(str(tmp_path / "job" / "input"), b"{}\n")
    assert not wrap.offer(str(tmp_path / "gone" / "input"), b"{}\n")
    assert list((tmp_path / "job").iterdir()) == []


def test_a_running_claude_job_takes_a_message_until_its_turn_ends_or_it_is_stopped(
    tmp_path: Path,
) -> None:
    """:meth:`JobRun.steer`, the daemon's side: it offers while the turn runs, and refuses once
    the job is being stopped or its turn's result is out (the message then queues)."""
    spec, process = start(tmp_path, "the prompt")
    run = JobRun(
        job_id="job_x",
        thread_id="t1",
        tool="claude",
        process=process,
        paths=JobPaths.for_job(tmp_path, "job_x"),
        decoder=adapter_for("claude").decoder(),
        resumed=False,
        started=0.0,
        deadline=60.0,
        monotonic=lambda: 0.0,
    )
    try:
        wait_until(lambda: echoed(spec) == ["the prompt"], timeout=20, what="the prompt")
        assert run.steer("one more thing")
        run.stop_reason = "E_STOPPED"
        assert not run.steer("while stopping")
        run.stop_reason = None
        assert run.steer("finish")  # the stand-in CLI prints its result for this one
        assert ended(spec, process) == 0
        run.read_new(final=True)
        assert run.decoder.final_seen
        assert not run.steer("after the turn")
    finally:
        run.close()
    assert echoed(spec) == ["the prompt", "one more thing", "finish", "eof"]
