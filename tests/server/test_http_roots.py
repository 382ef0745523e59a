"""``serve --http`` labels a session's questions with the client's project, as its MCP roots
name it, not with the server's own folder (issue 37); a client without roots keeps the
server's project name."""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from pydantic import FileUrl

from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.app import http_app
from discord_mcp.server.roots import project_from_roots, short_client
from tests.server.test_http import serving
from tests.support.people import People
from tests.support.settings import settings_for

QUESTION = {"question": "Ship it?", "options": ["Yes", "No"], "mention": False}


def _cards(people: People, channel: str) -> list[str]:
    return [m["content"] for m in people.messages(channel) if "Decision needed" in m["content"]]


@contextlib.asynccontextmanager
async def handshake_client(url: str, roots: list[str] | None) -> AsyncIterator[ClientSession]:
    """A client that opens with ``initialize`` (the handshake versions today's CLIs speak, where
    the server may ask it for its roots), offering ``roots`` when given."""

    async def list_roots(context: object) -> types.ListRootsResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return types.ListRootsResult(
                roots=[types.Root(uri=FileUrl(uri)) for uri in roots or []]
            )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # roots are deprecated from 2026-07-28 on (SEP-2577)
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(
                read, write, list_roots_callback=list_roots if roots is not None else None
            ) as session,
        ):
            await session.initialize()
            yield session


async def _ask(session: ClientSession) -> dict[str, Any]:
    result = await session.call_tool("ask_decision", QUESTION)
    assert not result.is_error, result
    return dict(result.structured_content or json.loads(result.content[0].text))  # type: ignore[union-attr]


async def test_a_client_with_roots_sees_its_own_project_on_the_card(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(
        discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="0.5", PROJECT_NAME="server-dir"
    )
    client_project = tmp_path / "shop-frontend"
    client_project.mkdir()
    async with serving(lambda access: http_app(settings, access)) as url:
        async with handshake_client(url, [client_project.as_uri()]) as with_roots:
            first = await _ask(with_roots)
        async with handshake_client(url, None) as without_roots:
            second = await _ask(without_roots)
    assert first["status"] == second["status"] == "pending"
    assert _cards(people, _thread(first))
    assert _cards(people, _thread(second))
    assert all("`shop-frontend`" in c for c in _cards(people, _thread(first))), _cards(
        people, _thread(first)
    )
    assert all("`server-dir`" in c for c in _cards(people, _thread(second)))
    # The label is not who owns it: the decision stays the server's project's.
    decision = DecisionStore(settings.home).load(str(first["decision_id"]))
    assert decision.project == "shop-frontend"
    assert settings.owns(decision)


def _thread(result: dict[str, Any]) -> str:
    url = str(result.get("thread_url") or "")
    return url.rstrip("/").rsplit("/", 1)[-1]


def test_the_project_is_the_first_local_roots_folder_name_made_safe() -> None:
    assert project_from_roots(["https://example.org/x", "file:///home/me/code/shop"]) == "shop"
    assert project_from_roots(["file:///home/me/my%20app/"]) == "my app"
    assert project_from_roots(["file:///tmp/@everyone"]) == "everyone"
    assert project_from_roots(["file:///"]) is None
    assert project_from_roots([]) is None


def test_a_session_label_names_the_client_by_whole_words() -> None:
    assert short_client("codex-mcp-client") == "codex"
    assert short_client("gemini-cli-mcp-client") == "gemini"  # was "gemini-cli-mcp-clien"
    assert short_client("claude-code") == "claude-code"
    assert short_client("mcp") == "agent"
    assert short_client(None) == "agent"
    assert len(short_client("a-very-long-client-name-with-many-words")) <= 20
