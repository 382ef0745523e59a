"""Buttons, selects and the modal: layout, and how a click is answered (within 3 s, by anyone)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.interactive import (
    card_components,
    modal_text,
    parse_custom_id,
)
from discord_mcp.decisions.live import answer_click
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.decisions.test_store import make_decision

OWNER = "111111111111111111"
STRANGER = "222222222222222222"


def test_two_options_are_a_green_and_red_pair_plus_other() -> None:
    [row] = card_components("20261122-000000-abcdef", ("Reject", "Approve"))
    styles = [(c["label"], c["style"], c["custom_id"]) for c in row["components"]]
    assert styles == [
        ("A. Reject", 4, "dmcp:20261122-000000-abcdef:0"),
        ("B. Approve", 3, "dmcp:20261122-000000-abcdef:1"),
        ("Other…", 2, "dmcp:20261122-000000-abcdef:other"),
    ]


@pytest.mark.parametrize("count", [3, 4, 9, 24])
def test_up_to_24_options_are_buttons_five_per_row(count: int) -> None:
    rows = card_components("d", tuple(f"option {i}" for i in range(count)))
    assert len(rows) <= 5
    assert all(len(r["components"]) <= 5 for r in rows)
    buttons = [c for r in rows for c in r["components"]]
    assert [c["type"] for c in buttons] == [2] * (count + 1)
    assert len({c["custom_id"] for c in buttons}) == count + 1


def test_twenty_five_options_become_a_select_menu() -> None:
    rows = card_components("d", tuple(f"option {i}" for i in range(25)))
    select = rows[0]["components"][0]
    assert select["type"] == 3
    assert [o["value"] for o in select["options"]] == [str(i) for i in range(25)]
    assert rows[1]["components"][0]["custom_id"] == "dmcp:d:other"


def test_a_free_text_question_gets_an_answer_button() -> None:
    [row] = card_components("d", ())
    assert [(c["label"], c["custom_id"]) for c in row["components"]] == [
        ("Answer…", "dmcp:d:other")
    ]


def test_long_labels_are_cut_to_discords_limit() -> None:
    [row] = card_components("d", ("x" * 100, "y"))
    assert all(len(c["label"]) <= 80 for c in row["components"])


def test_custom_ids_parse_only_when_ours() -> None:
    click = parse_custom_id("dmcp:20261122-000000-abcdef:3")
    assert click is not None
    assert click.index == 3
    assert parse_custom_id("dmcp:20261122-000000-abcdef:select") is not None
    assert parse_custom_id("other-bot:1:2") is None
    assert parse_custom_id("dmcp::1") is None


@pytest.mark.parametrize(
    "components",
    [
        [{"type": 18, "component": {"type": 4, "custom_id": "answer", "value": "typed"}}],
        [{"type": 1, "components": [{"type": 4, "custom_id": "answer", "value": "typed"}]}],
    ],
)
def test_modal_text_reads_label_and_legacy_shapes(components: list[dict[str, Any]]) -> None:
    assert modal_text({"custom_id": "dmcp:d:modal", "components": components}) == "typed"


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[DecisionService]:
    settings = Settings.from_env(
        {
            "DISCORD_BOT_TOKEN": "t.o.k",
            "DISCORD_CHANNEL_ID": "100000000000000001",
            "DISCORD_OWNER_IDS": "999999999999999999",  # the reader's owners differ on purpose
            "DISCORD_MCP_HOME": str(tmp_path),
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",
        },
        read_dotenv=False,
    )
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        yield DecisionService(
            settings=settings, rest=rest, store=DecisionStore(tmp_path), background=background
        )


def click(decision_id: str, part: str, user: str, **data: Any) -> dict[str, Any]:
    return {
        "id": "1",
        "token": "tok",
        "type": 3,
        "member": {"user": {"id": user, "username": "u"}},
        "data": {"custom_id": f"dmcp:{decision_id}:{part}", **data},
    }


async def test_the_askers_owners_decide_who_may_click(service: DecisionService) -> None:
    decision = make_decision(owner_ids=(OWNER,))
    await service.store.acreate(decision)
    refused = await answer_click(service, click(decision.id, "0", STRANGER))
    assert refused is not None
    assert refused["type"] == 4
    assert refused["data"]["flags"] == 64
    assert service.store.load(decision.id).refused[0].user_id == STRANGER
    answered = await answer_click(service, click(decision.id, "1", OWNER))
    assert answered is not None
    assert answered["type"] == 7
    assert answered["data"]["components"] == []
    stored = service.store.load(decision.id)
    assert (stored.status, stored.selected_option, stored.via) == ("answered", "No", "button")


async def test_a_click_on_an_answered_decision_is_told_so(service: DecisionService) -> None:
    decision = make_decision(owner_ids=(OWNER,))
    await service.store.acreate(decision)
    await answer_click(service, click(decision.id, "0", OWNER))
    again = await answer_click(service, click(decision.id, "1", OWNER))
    assert again is not None
    assert again["type"] == 4
    assert "already answered" in again["data"]["content"]
    assert service.store.load(decision.id).selected_option == "Yes"


async def test_select_and_modal_answers(service: DecisionService) -> None:
    picked = make_decision(owner_ids=(OWNER,), options=tuple(f"o{i}" for i in range(25)))
    await service.store.acreate(picked)
    await answer_click(service, click(picked.id, "select", OWNER, values=["17"]))
    assert service.store.load(picked.id).selected_option == "o17"

    typed = make_decision(owner_ids=(OWNER,), id="20261122-000001-abcdef")
    await service.store.acreate(typed)
    modal = await answer_click(service, click(typed.id, "other", OWNER))
    assert modal is not None
    assert modal["type"] == 9
    submit = click(typed.id, "modal", OWNER, components=modal["data"]["components"])
    submit["type"] = 5
    submit["data"]["components"][0]["component"]["value"] = "Only on Fridays"
    answered = await answer_click(service, submit)
    assert answered is not None
    assert answered["type"] == 7
    stored = service.store.load(typed.id)
    assert (stored.answer, stored.selected_option, stored.via) == ("Only on Fridays", None, "modal")


async def test_foreign_components_are_not_ours_to_answer(service: DecisionService) -> None:
    data = click("x", "0", OWNER)
    data["data"]["custom_id"] = "someone-else:thing"
    assert await answer_click(service, data) is None


def test_a_cards_custom_ids_name_its_machine_and_a_card_from_before_still_parses() -> None:
    """Issue 27: of several machines on one bot, only the one named answers a click."""
    rows = card_components("20261122-000000-abcdef", ("Yes", "No"), machine="laptop")
    ids = [c["custom_id"] for row in rows for c in row["components"]]
    assert ids == [
        "dmcp:20261122-000000-abcdef:0:laptop",
        "dmcp:20261122-000000-abcdef:1:laptop",
        "dmcp:20261122-000000-abcdef:other:laptop",
    ]
    click = parse_custom_id(ids[1])
    assert click is not None
    assert (click.decision_id, click.index, click.machine) == (
        "20261122-000000-abcdef",
        1,
        "laptop",
    )
    old = parse_custom_id("dmcp:20261122-000000-abcdef:1")
    assert old is not None
    assert (old.index, old.machine) == (1, None)
    assert parse_custom_id("dmcp:20261122-000000-abcdef:1:") is None
    assert parse_custom_id("dmcp:x:1:laptop:extra") is None
