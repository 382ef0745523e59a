"""Each language's cards through the emulator: decision and approval cards, their buttons, the
clarifying question, the refusal, and the final edit, in the language chosen when asked."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp import i18n
from discord_mcp.approvals.cards import LABELS, YES
from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import ApprovalService
from discord_mcp.config import Settings
from discord_mcp.decisions.live import answer_click
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until as eventually

QUESTIONS = {
    "en": "Deploy to production now?",
    "ko": "지금 production에 배포할까요?",
    "ja": "今すぐ本番にデプロイしますか？",
    "zh": "现在部署到生产环境吗？",
}
OPTIONS = ("Now", "Later", "Never")


@contextlib.asynccontextmanager
async def services(settings: Settings) -> AsyncIterator[tuple[DecisionService, ApprovalService]]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        decisions = DecisionService(
            settings=settings, rest=rest, store=DecisionStore(settings.home), background=background
        )
        yield decisions, ApprovalService(settings=settings, decisions=decisions, rest=rest)


def card_of(people: People, decision: Decision) -> dict[str, Any]:
    return next(
        m for m in people.messages(decision.thread_id) if m["id"] == decision.card_message_id
    )


def replies(people: People, decision: Decision) -> list[str]:
    """What the bot said in the thread besides the card, oldest first."""
    return [
        m["content"]
        for m in people.messages(decision.thread_id)
        if m["author"].get("bot") and m["id"] != decision.card_message_id
    ]


@pytest.mark.parametrize("language", ["en", "ko", "ja", "zh"])
async def test_a_question_gets_its_card_and_buttons_in_its_own_language(
    language: str, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with services(settings) as (decisions, _):
        decision, _ = await decisions.ask(Question(QUESTIONS[language], options=OPTIONS))
        assert decision.language == language
        assert decisions.store.load(decision.id).language == language  # recorded on the file
        await decisions.poster.upgrade(decision)  # the card as a live gateway shows it
        card = card_of(people, decision)
        content = card["content"]
        for key in ("card.options", "card.how_buttons"):
            fixed = i18n.text(language, key, how="").rstrip(", ")
            assert fixed in content, (key, fixed)
        assert i18n.text(language, "card.meanwhile_waiting") in content
        assert QUESTIONS[language] in content  # the agent's words, as written
        assert f"decision `{decision.id}`" in content  # the marker lost cards are found by
        labels = [c["label"] for row in card["components"] for c in row["components"]]
        assert labels == ["A. Now", "B. Later", "C. Never", i18n.text(language, "buttons.other")]

        people.react(decision.thread_id, decision.card_message_id, "3\ufe0f\u20e3")
        result = await decisions.wait(decision.id, max_wait=10)
        assert result.selected_option == "Never"
        answered = i18n.text(language, "card.answered", chosen="", who="", when="", via="")
        head = answered.split("{")[0][:4]
        await eventually(lambda: head in card_of(people, decision)["content"])
        final = card_of(people, decision)["content"]
        assert i18n.text(language, "via.reaction") in final


@pytest.mark.parametrize("language", ["en", "ko", "ja", "zh"])
async def test_an_approval_card_and_its_buttons_in_each_language_keep_the_english_labels(
    language: str, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home", DISCORD_MCP_LANGUAGE=language)
    request = ToolRequest("claude", "Bash", {"command": "make deploy"}, "sess-1", cwd="/w")
    async with services(settings) as (decisions, approvals):
        task = asyncio.create_task(approvals.decide(request, max_wait=20, label="sess-1"))
        [decision] = await eventually(
            lambda: [d for d in decisions.store.open_decisions() if d.card_message_id]
        )
        assert decision.language == language
        await decisions.poster.upgrade(decision)
        card = card_of(people, decision)
        content = card["content"]
        assert (
            i18n.text(language, "approval.header", project="proj", client="claude", session="")[:6]
            in content
        )
        assert "```sh\nmake deploy\n```" in content  # the agent's command, untranslated
        assert f"decision `{decision.id}`" in content
        labels = [c["label"] for row in card["components"] for c in row["components"]]
        for label, english in zip(labels, LABELS, strict=True):
            assert label.startswith(english)  # the contract's words come first
            assert len(label) <= 80
            assert i18n.text(language, f"approval.button_{_key(english)}") in label
        for english in LABELS:
            assert english in content  # the card names the buttons as they are labelled

        people.react(decision.thread_id, decision.card_message_id, YES)
        outcome = await asyncio.wait_for(task, 20)
        assert outcome.behavior == "allow"
        allowed = i18n.text(language, "approval.allowed_once", yes=YES, who="", when="", no="")
        await eventually(lambda: allowed[:8] in card_of(people, decision)["content"])


def _key(english: str) -> str:
    return dict(zip(LABELS, ("allow_once", "allow_session", "deny", "deny_note"), strict=True))[
        english
    ]


async def test_a_korean_question_gets_a_korean_clarification_and_a_korean_refusal(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with services(settings) as (decisions, _):
        decision, _ = await decisions.ask(
            Question("어느 데이터베이스를 쓸까요?", options=("Postgres", "SQLite", "Both"))
        )
        stranger = people.new_user("mallory")
        people.say(decision.thread_id, "1", author=stranger)
        people.say(decision.thread_id, "음… 잘 모르겠어요, 어떻게 생각해요?")
        await decisions.wait(decision.id, max_wait=0.5)
        said = await eventually(
            lambda: len(replies(people, decision)) == 2 and replies(people, decision)
        )
        refusal = next(t for t in said if f"<@{stranger}>" in t)
        assert "이 질문에는" in refusal
        assert "답할 수 있습니다" in refusal
        assert i18n.text("ko", "refusal.reply") in refusal
        clarification = next(t for t in said if t is not refusal)
        # A long reply picking no option is asked about once (issue 34): "1 of 1".
        assert i18n.text("ko", "clarify.progress", attempt=1, max=1) in clarification
        assert i18n.text("ko", "clarify.ask_letter_or_number") in clarification
        assert "A (1) Postgres" in clarification
        assert "attempt" not in clarification
        assert "only" not in refusal

        people.say(decision.thread_id, "B로 해줘")
        result = await decisions.wait(decision.id, max_wait=10)
        assert result.selected_option == "SQLite"


async def test_a_strangers_click_on_a_korean_card_is_refused_in_korean(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with services(settings) as (decisions, _):
        decision, _ = await decisions.ask(Question("배포할까요?", options=("네", "아니요")))
        stranger = people.new_user("eve")
        body = await answer_click(
            decisions,
            {
                "id": "1",
                "token": "t",
                "type": 3,
                "data": {"custom_id": f"dmcp:{decision.id}:0", "component_type": 2},
                "member": {"user": {"id": stranger, "username": "eve"}},
            },
        )
        assert body is not None
        owners = f"<@{discord.owner_user_id}>"
        assert body["data"]["content"] == i18n.text("ko", "live.refused", owners=owners)
        assert decisions.store.load(decision.id).status == "pending"


async def test_discord_mcp_language_ja_makes_an_english_question_japanese(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home", DISCORD_MCP_LANGUAGE="ja")
    async with services(settings) as (decisions, _):
        decision, _ = await decisions.ask(Question("Deploy now?", options=("Now", "Later")))
        assert decision.language == "ja"
        content = card_of(people, decision)["content"]
        assert "**判断が必要です**" in content
        assert "Decision needed" not in content
        assert "Deploy now?" in content  # the agent's question is not translated

        people.say(decision.thread_id, "hmm, what do you think?")
        await decisions.wait(decision.id, max_wait=0.5)
        clarification = await eventually(lambda: replies(people, decision))
        assert i18n.text("ja", "clarify.why_question") in clarification[0]

        decisions_withdrawn = await decisions.cancel(decision.id, reason="not needed")
        assert decisions_withdrawn.status == "cancelled"
        await eventually(lambda: "取り下げ" in card_of(people, decision)["content"])


async def test_a_click_on_a_card_unknown_here_is_answered_in_the_clickers_app_language(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with services(settings) as (decisions, _):
        for locale, language in (("ko", "ko"), ("zh-CN", "zh"), ("fr", "en"), (None, "en")):
            body = await answer_click(
                decisions,
                {
                    "id": "1",
                    "token": "t",
                    "type": 3,
                    "locale": locale,
                    "data": {"custom_id": "dmcp:20260101-000000-abcdef:0", "component_type": 2},
                    "member": {"user": {"id": discord.owner_user_id, "username": "me"}},
                },
            )
            assert body is not None
            assert body["data"]["content"] == i18n.text(language, "live.unknown")
