"""Message components: what Discord accepts, how it echoes them, and the 50035s it sends."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator


def _button(name: str, **extra: Any) -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": name, "custom_id": name} | extra


def _row(*components: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(components)}


def _select(custom_id: str, options: int) -> dict[str, Any]:
    return {
        "type": 3,
        "custom_id": custom_id,
        "options": [{"label": f"Option {n}", "value": str(n)} for n in range(options)],
    }


def _post(
    running: RunningEmulator, api: httpx.Client, components: list[dict[str, Any]]
) -> httpx.Response:
    return api.post(
        f"/channels/{running.channel_id}/messages",
        json={"content": "Choose", "components": components},
    )


def _error_codes(tree: Any) -> set[str]:
    """Every field error code anywhere in a 50035 error tree."""
    if not isinstance(tree, dict):
        return set()
    codes = {e["code"] for e in tree.get("_errors", [])}
    for key, value in tree.items():
        if key != "_errors":
            codes |= _error_codes(value)
    return codes


def test_buttons_and_a_select_are_echoed_with_ids_and_defaults(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    rows = [
        _row(_button("yes", style=3), _button("no", style=4)),
        _row(_select("pick", 3)),
        _row({"type": 2, "style": 5, "label": "Docs", "url": "https://example.com/docs"}),
    ]

    response = _post(emulator, api, rows)

    assert response.status_code == 200
    components = response.json()["components"]
    assert [row["type"] for row in components] == [1, 1, 1]
    yes, no = components[0]["components"]
    assert (yes["custom_id"], yes["style"], no["style"]) == ("yes", 3, 4)
    select = components[1]["components"][0]
    assert (select["min_values"], select["max_values"]) == (1, 1)
    assert [o["value"] for o in select["options"]] == ["0", "1", "2"]
    link = components[2]["components"][0]
    assert link["url"] == "https://example.com/docs"
    assert "custom_id" not in link
    ids = [row["id"] for row in components] + [
        c["id"] for row in components for c in row["components"]
    ]
    assert len(set(ids)) == len(ids)


def test_the_components_come_back_when_the_message_is_read(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    created = _post(emulator, api, [_row(_button("ok"))]).json()

    fetched = api.get(f"/channels/{emulator.channel_id}/messages/{created['id']}").json()

    assert fetched["components"] == created["components"]


def test_more_than_5_action_rows_are_rejected(emulator: RunningEmulator, api: httpx.Client) -> None:
    rows = [_row(_button(f"b{n}")) for n in range(6)]

    response = _post(emulator, api, rows)

    assert response.status_code == 400
    assert response.json()["errors"]["components"]["_errors"][0] == {
        "code": "BASE_TYPE_MAX_LENGTH",
        "message": "Must be 5 or fewer in length.",
    }


def test_more_than_5_buttons_in_a_row_are_rejected(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = _post(emulator, api, [_row(*(_button(f"b{n}") for n in range(6)))])

    assert response.status_code == 400
    errors = response.json()["errors"]["components"]["0"]["components"]["_errors"]
    assert errors[0]["code"] == "BASE_TYPE_BAD_LENGTH"


def test_a_select_with_more_than_25_options_is_rejected(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = _post(emulator, api, [_row(_select("pick", 26))])

    assert response.status_code == 400
    select_errors = response.json()["errors"]["components"]["0"]["components"]["0"]
    assert select_errors["options"]["_errors"][0]["code"] == "BASE_TYPE_BAD_LENGTH"


def test_a_select_shares_its_row_with_nothing(emulator: RunningEmulator, api: httpx.Client) -> None:
    response = _post(emulator, api, [_row(_select("pick", 2), _button("ok"))])

    assert response.status_code == 400
    assert "COMPONENT_LAYOUT_WIDTH_EXCEEDED" in _error_codes(response.json()["errors"])


@pytest.mark.parametrize("custom_id", ["", "c" * 101])
def test_a_custom_id_must_be_1_to_100_characters(
    emulator: RunningEmulator, api: httpx.Client, custom_id: str
) -> None:
    response = _post(emulator, api, [_row(_button("x", custom_id=custom_id))])

    assert response.status_code == 400
    button_errors = response.json()["errors"]["components"]["0"]["components"]["0"]
    assert button_errors["custom_id"]["_errors"][0]["code"] == "BASE_TYPE_BAD_LENGTH"


def test_a_custom_id_of_100_characters_is_accepted(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = _post(emulator, api, [_row(_button("x", custom_id="c" * 100))])

    assert response.status_code == 200


def test_duplicate_custom_ids_in_one_message_are_rejected(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = _post(emulator, api, [_row(_button("same")), _row(_button("same"))])

    assert response.status_code == 400
    assert "COMPONENT_CUSTOM_ID_DUPLICATED" in _error_codes(response.json()["errors"])


@pytest.mark.parametrize("style", [1, 2, 3, 4])
def test_a_non_link_button_without_a_custom_id_is_rejected(
    emulator: RunningEmulator, api: httpx.Client, style: int
) -> None:
    button = {"type": 2, "style": style, "label": "Go"}

    response = _post(emulator, api, [_row(button)])

    assert response.status_code == 400
    assert "COMPONENT_CUSTOM_ID_REQUIRED" in _error_codes(response.json()["errors"])


def test_a_link_button_needs_a_url(emulator: RunningEmulator, api: httpx.Client) -> None:
    response = _post(emulator, api, [_row({"type": 2, "style": 5, "label": "Docs"})])

    assert response.status_code == 400
    assert "BUTTON_COMPONENT_URL_REQUIRED" in _error_codes(response.json()["errors"])


def test_a_button_label_over_80_characters_is_rejected(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = _post(emulator, api, [_row(_button("b", label="l" * 81))])

    assert response.status_code == 400
    button_errors = response.json()["errors"]["components"]["0"]["components"]["0"]
    assert button_errors["label"]["_errors"][0] == {
        "code": "BASE_TYPE_MAX_LENGTH",
        "message": "Must be 80 or fewer in length.",
    }


def test_a_button_needs_a_label_or_an_emoji(emulator: RunningEmulator, api: httpx.Client) -> None:
    bare = {"type": 2, "style": 1, "custom_id": "bare"}
    with_emoji = {"type": 2, "style": 1, "custom_id": "emoji", "emoji": {"name": "✅"}}

    assert _post(emulator, api, [_row(bare)]).status_code == 400
    assert _post(emulator, api, [_row(with_emoji)]).status_code == 200


def test_a_top_level_component_that_is_not_an_action_row_is_rejected(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = _post(emulator, api, [_button("loose")])

    assert response.status_code == 400
    assert "UNION_TYPE_CHOICES" in _error_codes(response.json()["errors"])


def test_every_problem_is_reported_at_once(emulator: RunningEmulator, api: httpx.Client) -> None:
    rows = [_row(_button("b", label="l" * 81)), _row(_select("s", 26))]

    response = _post(emulator, api, rows)

    components = response.json()["errors"]["components"]
    assert set(components) == {"0", "1"}
