"""send_message, read_history and add_reaction, and files and secrets on every posting tool,
through FastMCP's in-memory client against the emulator."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.app import build_server
from tests.server.test_tools import CONTRACT, call, new_thread
from tests.support.people import People
from tests.support.settings import settings_for

GITHUB_TOKEN = "ghp_" + "Zx9" * 12
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
PINNED = {t["name"]: t for t in json.loads(CONTRACT.read_text(encoding="utf-8"))}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "shot.png").write_bytes(PNG)
    (root / "build.log").write_text("step 1 ok\nstep 2 ok\n", encoding="utf-8")
    return root


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path, project: Path) -> Settings:
    base = settings_for(discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="20")
    return dataclasses.replace(base, project_dir=project)


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client[Any]]:
    async with Client(build_server(settings, environ={})) as connected:
        yield connected


def download(attachment: dict[str, Any]) -> bytes:
    return httpx.get(attachment["url"]).content


def fields(result: dict[str, Any], tool: str, key: str = "result_fields") -> None:
    """Every field of ``result`` is one the contract pins."""
    assert set(result) <= set(PINNED[tool][key]), set(result) - set(PINNED[tool][key])


async def test_a_file_sent_by_an_agent_arrives_byte_for_byte(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    result = await call(client, "send_message", content="the screenshot", files=["shot.png"])
    fields(result, "send_message")
    assert result["ok"] is True
    assert result["files"][0]["filename"] == "shot.png"
    assert result["files"][0]["size"] == len(PNG)
    [message] = people.messages(discord.channel_id)
    assert message["content"] == "the screenshot"
    assert download(message["attachments"][0]) == PNG


async def test_a_path_outside_the_project_is_refused_and_nothing_is_posted(
    client: Client[Any], people: People, discord: RunningEmulator, tmp_path: Path
) -> None:
    outside = tmp_path / "secret-notes.txt"
    outside.write_text("x", encoding="utf-8")
    with pytest.raises(ToolError) as caught:
        await call(client, "send_message", content="here", files=[str(outside)])
    assert "outside the project directory" in str(caught.value)
    state_file = tmp_path / "home" / "inbox" / "items.json"
    state_file.parent.mkdir(parents=True)
    state_file.write_text("{}", encoding="utf-8")
    with pytest.raises(ToolError, match="never sent"):
        await call(client, "notify", message="the config", files=["../home/inbox/items.json"])
    assert people.messages(discord.channel_id) == []


async def test_a_secret_in_an_outgoing_message_is_redacted_with_a_note(
    client: Client[Any], people: People, discord: RunningEmulator, settings: Settings
) -> None:
    token = settings.token.reveal()
    result = await call(client, "send_message", content=f"pushed with {GITHUB_TOKEN}; bot {token}")
    fields(result, "send_message")
    assert result["redacted"] == ["bot token in content", "GitHub token in content"]
    assert "redacted" in result["note"]
    [message] = people.messages(discord.channel_id)
    assert GITHUB_TOKEN not in message["content"]
    assert token not in message["content"]
    assert "[redacted: GitHub token]" in message["content"]


async def test_secrets_in_text_files_are_redacted_and_binary_files_are_not_touched(
    client: Client[Any], people: People, discord: RunningEmulator, project: Path
) -> None:
    (project / "deploy.log").write_text(f"token={GITHUB_TOKEN}\n", encoding="utf-8")
    result = await call(
        client, "notify", message="logs", files=["deploy.log", "shot.png"], level="warning"
    )
    fields(result, "notify")
    assert result["redacted"] == ["GitHub token in file deploy.log"]
    [message] = people.messages(discord.channel_id)
    log, shot = message["attachments"]
    assert download(log) == b"token=[redacted: GitHub token]\n"
    assert download(shot) == PNG


async def test_no_message_without_content_or_files(client: Client[Any]) -> None:
    with pytest.raises(ToolError, match="content is empty"):
        await call(client, "send_message", content="  ")


async def test_files_alone_make_a_message(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    await call(client, "send_message", content="", files=["build.log"])
    [message] = people.messages(discord.channel_id)
    assert message["content"] == ""
    assert download(message["attachments"][0]) == b"step 1 ok\nstep 2 ok\n"


async def test_read_history_returns_recent_messages_oldest_first_and_untrusted(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    stranger = people.new_user("stranger")
    first = people.say(discord.channel_id, "first, from the owner")
    people.say(discord.channel_id, "second, from someone else", author=stranger)
    await call(client, "send_message", content="third, from the bot", reply_to=first["id"])

    result = await call(client, "read_history", limit=10)
    fields(result, "read_history")
    messages = result["messages"]
    assert [m["content"] for m in messages] == [
        "first, from the owner",
        "second, from someone else",
        "third, from the bot",
    ]
    for message in messages:
        fields(message, "read_history", "message_fields")
        assert message["untrusted"] is True
    assert [m["from_owner"] for m in messages] == [True, False, False]
    assert messages[2]["bot"] is True
    assert messages[2]["reply_to"] == first["id"]
    assert result["next_before"] is None


async def test_read_history_pages_back_with_before(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    for n in range(5):
        people.say(discord.channel_id, f"m{n}")
    newest = await call(client, "read_history", limit=2)
    assert [m["content"] for m in newest["messages"]] == ["m3", "m4"]
    older = await call(client, "read_history", limit=2, before=newest["next_before"])
    assert [m["content"] for m in older["messages"]] == ["m1", "m2"]


async def test_read_history_shows_attachments_with_their_metadata(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    await call(client, "send_message", content="a file", files=["build.log"])
    [message] = (await call(client, "read_history"))["messages"]
    [attachment] = message["attachments"]
    fields(attachment, "read_history", "attachment_fields")
    assert attachment["filename"] == "build.log"
    assert attachment["size"] == len(b"step 1 ok\nstep 2 ok\n")
    assert attachment["voice_message"] is False


async def test_add_reaction_reacts_as_the_bot(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    said = people.say(discord.channel_id, "please look at the logs")
    result = await call(client, "add_reaction", message_id=said["id"], emoji="👀")
    fields(result, "add_reaction")
    assert result == {
        "ok": True,
        "channel_id": discord.channel_id,
        "message_id": said["id"],
        "emoji": "👀",
    }
    [message] = people.messages(discord.channel_id)
    assert [(r["emoji"]["name"], r["me"]) for r in message["reactions"]] == [("👀", True)]


async def test_add_reaction_to_a_missing_message_says_where_to_find_ids(
    client: Client[Any],
) -> None:
    with pytest.raises(ToolError, match="read_history"):
        await call(client, "add_reaction", message_id="123456789012345678", emoji="👍")


async def test_ask_decision_posts_its_files_in_the_question_thread_and_redacts_the_question(
    client: Client[Any], people: People
) -> None:
    asking = asyncio.create_task(
        call(
            client,
            "ask_decision",
            question="Ship this build?",
            context=f"CI used {GITHUB_TOKEN}",
            options=["Ship", "Hold"],
            files=["shot.png"],
        )
    )
    thread = await new_thread(people)
    async with asyncio.timeout(10):
        while len(people.messages(thread["id"])) < 2:
            await asyncio.sleep(0.02)
    card, files = people.messages(thread["id"])[:2]
    assert GITHUB_TOKEN not in json.dumps(card)
    assert download(files["attachments"][0]) == PNG
    people.say(thread["id"], "ship")
    result = await asyncio.wait_for(asking, 15)
    assert result["selected_option"] == "Ship"
    assert result["files"][0]["filename"] == "shot.png"
    assert result["redacted"] == ["GitHub token in context"]


async def test_a_refused_file_stops_the_question_before_it_is_asked(
    client: Client[Any], people: People, project: Path
) -> None:
    (project / ".env").write_text("DISCORD_BOT_TOKEN=x\n", encoding="utf-8")
    with pytest.raises(ToolError, match="never sent"):
        await call(client, "ask_decision", question="Deploy?", files=[".env"])
    assert people.threads() == []


async def test_report_progress_and_cancel_decision_redact_what_they_post(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    result = await call(client, "report_progress", title="Deploy", summary=f"using {GITHUB_TOKEN}")
    assert result["redacted"] == ["GitHub token in summary"]
    assert GITHUB_TOKEN not in json.dumps(people.messages(discord.channel_id))


async def test_an_attachment_only_answer_resolves_the_decision_with_the_file(
    client: Client[Any], people: People
) -> None:
    asking = asyncio.create_task(
        call(client, "ask_decision", question="Which layout looks right?", options=["A", "B"])
    )
    thread = await new_thread(people)
    people.send_files(thread["id"], [("phone.png", PNG, "image/png")])
    result = await asyncio.wait_for(asking, 15)
    assert result["status"] == "answered"
    assert result["answer"] == "[file: phone.png]"
    assert result["selected_option"] is None
    assert "attachments" in result["instruction"]
    [kept] = result["attachments"]
    fields(kept, "read_history", "attachment_fields")
    assert kept["content_type"] == "image/png"
    assert Path(kept["path"]).read_bytes() == PNG


async def test_read_history_keeps_the_owners_files_but_not_strangers(
    client: Client[Any], people: People, discord: RunningEmulator, tmp_path: Path
) -> None:
    stranger = people.new_user("stranger")
    people.send_files(discord.channel_id, [("mine.png", PNG, "image/png")], content="look")
    people.send_files(discord.channel_id, [("theirs.png", PNG, "image/png")], author=stranger)
    owners, strangers = (await call(client, "read_history"))["messages"]
    [kept] = owners["attachments"]
    assert Path(kept["path"]).read_bytes() == PNG
    assert Path(kept["path"]).is_relative_to(tmp_path / "home" / "files")
    assert strangers["attachments"][0]["path"] is None
    assert not list((tmp_path / "home" / "files").glob(f"{strangers['message_id']}*"))


async def test_read_inbox_carries_the_owners_files(client: Client[Any], settings: Settings) -> None:
    from discord_mcp.inbox import Inbox, InboxItem
    from discord_mcp.state.files import off_loop

    kept = {"attachment_id": "7", "filename": "a.png", "path": "/x/a.png", "voice_message": False}
    item = InboxItem("1", "2", None, "3", "owner", "", "2026-11-22T00:00:00+00:00", None)
    await off_loop(Inbox(settings.home).add, [dataclasses.replace(item, attachments=(kept,))])
    [message] = (await call(client, "read_inbox"))["messages"]
    assert message["attachments"] == [kept]
