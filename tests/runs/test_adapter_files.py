"""The owner's files reach each CLI its own way: Claude Code gets paths and --add-dir, Codex
gets images with --image, Gemini gets @path references and --include-directories."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import AttachedFile, InvocationRequest, prompt_with_files
from discord_mcp.runs.engine.launch import attached_files
from tests.runs.conftest import EngineFactory
from tests.runs.test_adapters import request
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario

SHOT = AttachedFile(Path("/state/files/9/1-shot.png"), "image/png")
VOICE = AttachedFile(Path("/state/files/9/2-voice-message.ogg"), "audio/ogg", voice_message=True)
LOG = AttachedFile(Path("/state/files/8/3-build.log"), "text/plain")


def with_files(
    tmp_path: Path, *files: AttachedFile, resume: str | None = None
) -> InvocationRequest:
    return dataclasses.replace(
        request(tmp_path, prompt="what is wrong here?", resume=resume), attachments=files
    )


def test_the_prompt_lists_the_files_after_the_owners_words() -> None:
    prompt = prompt_with_files("what is wrong here?", [SHOT, VOICE])
    assert prompt.startswith("what is wrong here?\n\nThe owner attached these files")
    assert "- /state/files/9/1-shot.png (image/png)" in prompt
    assert "- /state/files/9/2-voice-message.ogg (a voice message, audio/ogg)" in prompt


def test_files_without_words_are_the_whole_prompt() -> None:
    assert prompt_with_files("  ", [SHOT]).startswith("The owner attached these files")
    assert prompt_with_files("just words", []) == "just words"


def test_claude_gets_the_paths_and_their_directories(tmp_path: Path) -> None:
    argv = adapter_for("claude").invocation(with_files(tmp_path, SHOT, LOG)).argv
    at = argv.index("--add-dir")
    assert argv[at + 1 : at + 3] == ("/state/files/9", "/state/files/8")
    assert argv.index("--") > at + 2  # the prompt is not read as a directory
    assert "/state/files/9/1-shot.png (image/png)" in argv[-1]


def test_codex_attaches_images_before_its_other_options_and_lists_every_file(
    tmp_path: Path,
) -> None:
    argv = adapter_for("codex").invocation(with_files(tmp_path, SHOT, LOG)).argv
    assert argv[1:4] == ("exec", "--image=/state/files/9/1-shot.png", "--json")
    assert not any(a.startswith("--image=/state/files/8") for a in argv)  # not an image
    assert "/state/files/8/3-build.log" in argv[-1]


def test_codex_attaches_images_to_a_resumed_turn_after_resume(tmp_path: Path) -> None:
    argv = adapter_for("codex").invocation(with_files(tmp_path, SHOT, resume="th-1")).argv
    at = argv.index("resume")
    assert argv[at : at + 3] == ("resume", "--image=/state/files/9/1-shot.png", "th-1")
    assert argv.count("--image=/state/files/9/1-shot.png") == 1


def test_gemini_reads_the_files_with_at_references(tmp_path: Path) -> None:
    spaced = AttachedFile(Path("/my state/files/9/1-shot.png"), "image/png")
    argv = adapter_for("gemini").invocation(with_files(tmp_path, spaced)).argv
    assert "--include-directories=/my state/files/9" in argv
    assert argv[-1].startswith("--prompt=what is wrong here?")
    assert "@/my\\ state/files/9/1-shot.png (image/png)" in argv[-1]


def test_only_files_still_on_disk_are_attached(tmp_path: Path) -> None:
    kept = tmp_path / "1-shot.png"
    kept.write_bytes(b"png")
    entries: list[dict[str, Any]] = [
        {"path": str(kept), "content_type": "image/png", "voice_message": False},
        {"path": str(tmp_path / "gone.png"), "content_type": "image/png"},
        {"path": None, "error": "too big"},
    ]
    assert attached_files(entries) == (AttachedFile(kept, "image/png"),)


async def test_a_jobs_files_reach_the_cli_survive_a_restart_and_go_with_a_retry(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    tmp_path: Path,
) -> None:
    shot = tmp_path / "files" / "1-shot.png"
    shot.parent.mkdir()
    shot.write_bytes(b"png")
    files = [{"path": str(shot), "content_type": "image/png", "voice_message": False}]
    spawner.script(
        prompt_with_files("look", [AttachedFile(shot, "image/png")]),
        Scenario(sample="claude-fail-401-noretry.jsonl"),
    )
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "look", "owner", files)
        await notifier.wait_finished(job.job_id)
    async with make_engine() as engine:  # the journal is replayed
        retry = await engine.retry("t1", job.job_id)
        await notifier.wait_finished(retry.job_id)
    first, again = spawner.runs()
    for run in (first, again):
        assert str(shot) in run["prompt"]
        assert "--add-dir" in run["argv"]
