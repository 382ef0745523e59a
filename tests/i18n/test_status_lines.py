"""Run status lines in a discord-watch thread, in DISCORD_MCP_LANGUAGE or the language of the
owner's prompt; what the agent wrote is shown as it wrote it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from discord_mcp import i18n
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.journal.views import JobView
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.notifier import DiscordNotifier, final_head, final_message, status_text
from tests.approvals.test_runs import job as english_job
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until as eventually


def job(prompt: str, **changes: Any) -> JobView:
    return dataclasses.replace(english_job(), prompt=prompt, **changes)


@pytest.mark.parametrize(
    ("configured", "prompt", "language"),
    [
        ("auto", "run the tests", "en"),
        ("auto", "테스트를 돌려줘", "ko"),
        ("auto", "テストを実行して", "ja"),
        ("auto", "运行测试", "zh"),
        ("ja", "run the tests", "ja"),
        ("en", "테스트를 돌려줘", "en"),
    ],
)
def test_a_jobs_status_lines_follow_the_setting_or_the_owners_prompt(
    configured: str, prompt: str, language: str
) -> None:
    notifier = DiscordNotifier(None, language=configured)  # type: ignore[arg-type]
    assert notifier.language(job(prompt)) == language


@pytest.mark.parametrize("language", ["ko", "ja", "zh"])
def test_each_state_has_its_line_in_each_language(language: str) -> None:
    done = final_head(job("x"), language=language)
    assert done == i18n.text(language, "run.done", elapsed="3s", tool="claude", cost="")
    assert done != final_head(job("x"))  # not the English line
    failed = job("x", state="failed", error_code="auth", error_message="401 from the API")
    assert final_head(failed, language=language) == i18n.text(language, "run.failed", code="auth")
    message = final_message(failed, [], language)
    assert "401 from the API" in message  # the CLI's own words
    assert "`!retry job-1`" in message
    running = status_text(job("x"), language=language)
    assert running.startswith(i18n.text(language, "run.running", tool="claude", how="")[:6])
    success = final_message(job("x"), [], language)
    assert success.startswith("All set.\n\n")  # the agent's answer, untranslated
    assert success.endswith(i18n.text(language, "run.continue"))


async def test_a_korean_prompts_run_thread_gets_korean_status_lines(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        thread = await rest.create_thread(settings.channel_id, "run", auto_archive_duration=60)
        notifier = DiscordNotifier(rest, language=settings.language)
        started = job("테스트를 돌려줘", thread_id=thread["id"], final_text="테스트 42개 통과")
        await notifier.job_queued(started, 2)
        await notifier.job_started(started, None)  # type: ignore[arg-type]
        status = await eventually(
            lambda: [m for m in people.messages(thread["id"]) if "job `job-1`" in m["content"]]
        )
        assert status[0]["content"].startswith("🔄 **실행 중** `claude` (새 세션)")
        finished = dataclasses.replace(started, finished_at=started.started_at)
        await notifier.job_finished(finished, None)  # type: ignore[arg-type]
        said = await eventually(
            lambda: [
                m["content"] for m in people.messages(thread["id"]) if "테스트 42개" in m["content"]
            ]
        )
        assert said[0].endswith(i18n.text("ko", "run.continue"))
        contents = [m["content"] for m in people.messages(thread["id"])]
        assert any(c.startswith("⏳ `job-1`(으)로 대기 중") for c in contents)
        assert any(c.startswith("✅ **완료** (3s)") for c in contents)  # the status, edited
        assert not any("Running" in c or "Done" in c or "Queued" in c for c in contents)
