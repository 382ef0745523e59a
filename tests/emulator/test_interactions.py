"""Interactions: unknown ones over REST, and the desk's rules in-process with a fake clock.

The deadline, acknowledgement and followup rules are exercised on :class:`InteractionDesk`
directly, where time can be moved; live clicks through the control API and the gateway are in
``test_interactions_live.py``.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from discord_mcp.emulator import Event, RunningEmulator
from discord_mcp.emulator.errors import DiscordError
from discord_mcp.emulator.interactions import MESSAGE_COMPONENT, MODAL_SUBMIT, InteractionDesk
from discord_mcp.emulator.models import FLAG_EPHEMERAL, FLAG_LOADING
from discord_mcp.emulator.state import State


def test_a_callback_for_an_unknown_interaction_is_10062_and_counted(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    response = api.post("/interactions/123/some-token/callback", json={"type": 6})

    assert response.status_code == 404
    assert response.json() == {"message": "Unknown interaction", "code": 10062}
    assert control.get("/state").json()["stats"]["interactions_failed"] == 1


def test_a_callback_needs_no_bot_token(emulator: RunningEmulator) -> None:
    response = httpx.post(
        emulator.api_base + "/interactions/123/some-token/callback", json={"type": 6}
    )

    assert response.status_code == 404
    assert response.json()["code"] == 10062


def test_a_followup_with_an_unknown_token_is_10015(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    base = f"/webhooks/{emulator.application_id}/some-token"

    created = api.post(base, json={"content": "done"})
    edited = api.patch(base + "/messages/@original", json={"content": "done"})

    for response in (created, edited):
        assert response.status_code == 404
        assert response.json() == {"message": "Unknown Webhook", "code": 10015}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def state(clock: FakeClock) -> State:
    return State(clock=clock)


@pytest.fixture
def desk(state: State) -> InteractionDesk:
    return InteractionDesk(state, deadline=3.0)


def _card(state: State) -> str:
    """A bot message with a button, as a question card would be."""
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Yes", "custom_id": "yes"}]}
    message, _ = state.create_message(
        state.channel.id, state.bot.id, {"content": "Deploy?", "components": [row]}
    )
    return message.id


def _click(desk: InteractionDesk, state: State) -> Any:
    message_id = _card(state)
    return desk.create(
        type_=MESSAGE_COMPONENT,
        user_id=state.owner.id,
        channel_id=state.channel.id,
        data={"custom_id": "yes", "component_type": 2},
        message_id=message_id,
    )


def _code(call: Any) -> int:
    with pytest.raises(DiscordError) as caught:
        call()
    return caught.value.code


def test_a_click_can_be_answered_once(desk: InteractionDesk, state: State) -> None:
    click = _click(desk, state)

    first = desk.callback(click.id, click.token, {"type": 6}, with_response=False)
    second = _code(lambda: desk.callback(click.id, click.token, {"type": 6}, with_response=False))

    assert first is None
    assert second == 40060
    assert desk.failed == 1


def test_a_callback_after_three_seconds_is_10062(
    desk: InteractionDesk, state: State, clock: FakeClock
) -> None:
    click = _click(desk, state)
    clock.now += 3.01

    code = _code(lambda: desk.callback(click.id, click.token, {"type": 6}, with_response=False))

    assert code == 10062
    assert desk.failed == 1


def test_a_callback_with_the_wrong_token_is_10062(desk: InteractionDesk, state: State) -> None:
    click = _click(desk, state)

    assert _code(lambda: desk.callback(click.id, "forged", {"type": 6}, with_response=False)) == (
        10062
    )


def test_type_4_posts_a_message_and_with_response_returns_it(
    desk: InteractionDesk, state: State
) -> None:
    click = _click(desk, state)

    result = desk.callback(
        click.id, click.token, {"type": 4, "data": {"content": "Deploying"}}, with_response=True
    )

    assert result is not None
    message = result["resource"]["message"]
    assert result["resource"]["type"] == 4
    assert message["content"] == "Deploying"
    assert message["webhook_id"] == state.bot.id
    assert result["interaction"]["response_message_id"] == message["id"]
    assert [m.content for m in state.history(state.channel.id)][-1] == "Deploying"


def test_an_ephemeral_response_stays_out_of_the_channel_history(
    desk: InteractionDesk, state: State
) -> None:
    click = _click(desk, state)

    desk.callback(
        click.id,
        click.token,
        {"type": 4, "data": {"content": "Only you", "flags": FLAG_EPHEMERAL}},
        with_response=False,
    )

    assert "Only you" not in [m.content for m in state.history(state.channel.id)]


def test_type_5_shows_a_loading_message_that_the_original_edit_fills(
    desk: InteractionDesk, state: State
) -> None:
    click = _click(desk, state)

    result = desk.callback(click.id, click.token, {"type": 5}, with_response=True)
    edited = desk.edit_original(state.bot.id, click.token, {"content": "Done"})

    assert result is not None
    assert result["interaction"]["response_message_loading"] is True
    assert edited["content"] == "Done"
    assert not edited["flags"] & FLAG_LOADING


def test_type_7_updates_the_clicked_message(desk: InteractionDesk, state: State) -> None:
    click = _click(desk, state)

    result = desk.callback(
        click.id,
        click.token,
        {"type": 7, "data": {"content": "Deploy? (answered: yes)", "components": []}},
        with_response=True,
    )

    assert result is not None
    updated = state.messages[click.message_id]
    assert updated.content == "Deploy? (answered: yes)"
    assert updated.components == []
    assert result["resource"]["message"]["id"] == click.message_id


def test_type_9_opens_a_modal_but_not_in_answer_to_a_modal(
    desk: InteractionDesk, state: State
) -> None:
    click = _click(desk, state)
    modal = {
        "custom_id": "why",
        "title": "Why?",
        "components": [
            {"type": 18, "label": "Reason", "component": {"type": 4, "custom_id": "r", "style": 2}}
        ],
    }
    submit = desk.create(
        type_=MODAL_SUBMIT,
        user_id=state.owner.id,
        channel_id=state.channel.id,
        data={"custom_id": "why", "components": []},
    )

    assert (
        desk.callback(click.id, click.token, {"type": 9, "data": modal}, with_response=False)
        is None
    )
    assert (
        _code(
            lambda: desk.callback(
                submit.id, submit.token, {"type": 9, "data": modal}, with_response=False
            )
        )
        == 50035
    )


def test_a_modal_title_over_45_characters_is_50035(desk: InteractionDesk, state: State) -> None:
    click = _click(desk, state)
    modal = {"custom_id": "why", "title": "t" * 46, "components": [{"type": 18}]}

    code = _code(
        lambda: desk.callback(
            click.id, click.token, {"type": 9, "data": modal}, with_response=False
        )
    )

    assert code == 50035
    assert click.callback_type is None


def test_followups_work_after_the_acknowledgement_for_15_minutes(
    desk: InteractionDesk, state: State, clock: FakeClock
) -> None:
    click = _click(desk, state)
    before = _code(lambda: desk.followup(state.bot.id, click.token, {"content": "early"}))
    desk.callback(click.id, click.token, {"type": 6}, with_response=False)

    followup = desk.followup(state.bot.id, click.token, {"content": "Result"})
    clock.now += 15 * 60 + 1
    expired = _code(lambda: desk.followup(state.bot.id, click.token, {"content": "late"}))

    assert before == 10015
    assert followup["content"] == "Result"
    assert expired == 10015


def test_a_followup_for_another_application_is_10015(desk: InteractionDesk, state: State) -> None:
    click = _click(desk, state)
    desk.callback(click.id, click.token, {"type": 6}, with_response=False)

    assert _code(lambda: desk.followup("42", click.token, {"content": "x"})) == 10015


def test_update_types_need_a_message_to_update(desk: InteractionDesk, state: State) -> None:
    command = desk.create(type_=2, user_id=state.owner.id, channel_id=state.channel.id, data={})

    code = _code(lambda: desk.callback(command.id, command.token, {"type": 7}, with_response=False))

    assert code == 50035


def test_an_interaction_is_emitted_as_interaction_create(
    desk: InteractionDesk, state: State
) -> None:
    events: list[Event] = []
    state.subscribe(events.append)

    click = _click(desk, state)

    created = [e for e in events if e.type == "INTERACTION_CREATE"]
    assert len(created) == 1
    payload = created[0].data
    assert (payload["id"], payload["token"], payload["type"]) == (click.id, click.token, 3)
    assert payload["member"]["user"]["id"] == state.owner.id
    assert payload["message"]["id"] == click.message_id
    assert payload["application_id"] == state.bot.id
