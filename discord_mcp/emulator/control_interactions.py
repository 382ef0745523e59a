"""The control API's interactions: a user clicks, selects or submits a modal, and sees the answer.

``POST /_emulator/interactions`` (200, or 400 ``{"error"}`` as elsewhere in the control API)
with a ``"command"`` runs an application command (or asks for autocomplete), described in
``control_commands.py``; otherwise it is one of:

- a button click: ``{"user_id", "message_id", "custom_id"}``;
- a string select: ``{"user_id", "message_id", "custom_id", "values": ["a", ...]}``;
- a modal submit: ``{"user_id", "message_id", "modal": {"custom_id", "values":
  {"<text input custom_id>": "text", "<select custom_id>": ["a"]}}, "custom_id"?}``. Allowed
  only after the bot answered an interaction of this user on this message with a type 9
  MODAL callback whose ``custom_id`` matches (and ``custom_id``, when given, names the
  component that opened it); each modal can be submitted once. Values are checked as
  Discord's client would (known inputs, ``required``, ``min_length``/``max_length``, options).

The component must exist on the message, be enabled, and not be a link or premium button; a
select needs ``values`` within its ``min_values``/``max_values`` and options. An ephemeral
message can be clicked only by the user it was shown to. The INTERACTION_CREATE (type 3
MESSAGE_COMPONENT or 5 MODAL_SUBMIT) goes to every connected gateway session; the request then
waits until the bot's first callback is accepted or the ``interaction_deadline`` passes (a
miss counts in ``interactions_failed`` and later callbacks get 10062), and answers the report:

``{"interaction_id", "type", "user_id", "channel_id", "message_id", "data", "delivered"
(connected sessions it was dispatched to), "acknowledged", "response_type" (int or null),
"response" (the callback body as the bot sent it, or null), "ephemeral" (a type 4/5 response
only its user sees), "expired", "message" (the response message for types 4/5, the clicked
message for 6/7, ephemeral ones included; else null), "followups" (messages), "modal" (the
modal a type 9 opened, else null), "choices" (the choices of a type 8 autocomplete answer,
else null)}``. ``message_id`` is null for a command.

``GET /_emulator/interactions/{interaction_id}`` answers the same report as it stands now
(followups and edits made later included; ``delivered`` is omitted).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator import errors
from discord_mcp.emulator.control_base import (
    ControlError,
    ControlledEmulator,
    discord_refusal,
    fail,
    read_object,
    text_field,
)
from discord_mcp.emulator.control_commands import COMMAND_FIELDS, issue_command
from discord_mcp.emulator.interactions import (
    MESSAGE_COMPONENT,
    MODAL_SUBMIT,
    Interaction,
    InteractionDesk,
)
from discord_mcp.emulator.models import FLAG_EPHEMERAL, Message

_BUTTON, _STRING_SELECT, _TEXT_INPUT, _ACTION_ROW, _LABEL = 2, 3, 4, 1, 18
_FIELDS = {"user_id", "message_id", "custom_id", "values", "modal"}


def interaction_routes(emulator: ControlledEmulator) -> list[Route]:
    """``/interactions`` routes bound to one emulator."""
    desk = emulator.desk

    async def post(request: Request) -> Response:
        try:
            data = await read_object(request, _FIELDS | COMMAND_FIELDS, {"user_id"})
            if "command" in data:
                data = await read_object(request, COMMAND_FIELDS, {"user_id", "channel_id"})
                interaction = issue_command(emulator.state, desk, data)
            else:
                data = await read_object(request, _FIELDS, {"user_id", "message_id"})
                interaction = _issue(emulator, data)
        except ControlError as exc:
            return fail(exc)
        # Nothing ran since the dispatch: the connected sessions are the ones that got it.
        delivered = len(emulator.sessions.connected())
        await _answered(desk, interaction)
        return JSONResponse(report(desk, interaction) | {"delivered": delivered})

    async def get(request: Request) -> Response:
        interaction = desk.get(request.path_params["interaction_id"])
        if interaction is None:
            return fail(ControlError("no interaction with this id"))
        return JSONResponse(report(desk, interaction))

    return [
        Route("/interactions", post, methods=["POST"]),
        Route("/interactions/{interaction_id}", get, methods=["GET"]),
    ]


def _issue(emulator: ControlledEmulator, data: dict[str, Any]) -> Interaction:
    state, desk = emulator.state, emulator.desk
    user_id, message_id = text_field(data, "user_id"), text_field(data, "message_id")
    if user_id not in state.users:
        raise ControlError(f"no user with id {user_id!r}; create one with /users")
    message = state.messages.get(message_id)
    if message is None:
        raise ControlError(f"no message with id {message_id!r}")
    owner = _ephemeral_owner(desk, message)
    if owner is not None and owner != user_id:
        raise ControlError("this ephemeral message is shown only to its own user")
    if "modal" in data:
        if "values" in data:
            raise ControlError("a modal submit takes its values inside 'modal'")
        kind, payload = MODAL_SUBMIT, _modal_submit(desk, data, user_id, message_id)
    else:
        kind, payload = MESSAGE_COMPONENT, _component_data(message, data)
    try:
        return desk.create(
            type_=kind,
            user_id=user_id,
            channel_id=message.channel_id,
            data=payload,
            message_id=message.id,
        )
    except errors.DiscordError as exc:
        raise discord_refusal(exc, "create this interaction") from None


async def _answered(desk: InteractionDesk, interaction: Interaction) -> None:
    """Wait for the first accepted callback, at most until the deadline.

    No callback can have come yet: the event loop ran nothing else since the dispatch.
    """
    answered = asyncio.Event()
    interaction.on_answer = answered.set
    remaining = desk.deadline - (desk.state.clock() - interaction.created_at)
    try:
        if interaction.callback_type is None and remaining > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await answered.wait()
    finally:
        interaction.on_answer = None
    desk.expire(interaction)


def report(desk: InteractionDesk, interaction: Interaction) -> dict[str, Any]:
    """What the control API shows of an interaction and the bot's answers."""
    state = desk.state
    original_id = interaction.original_message_id
    original = None if original_id is None else state.messages.get(original_id)
    ephemeral = (
        interaction.callback_type in (4, 5)
        and original is not None
        and bool(original.flags & FLAG_EPHEMERAL)
    )
    followups = [state.messages[i] for i in interaction.followup_ids if i in state.messages]
    return {
        "interaction_id": interaction.id,
        "type": interaction.type,
        "user_id": interaction.user_id,
        "channel_id": interaction.channel_id,
        "message_id": interaction.message_id,
        "data": interaction.data,
        "acknowledged": interaction.callback_type is not None,
        "response_type": interaction.callback_type,
        "response": interaction.response,
        "ephemeral": ephemeral,
        "expired": interaction.expired,
        "message": None if original is None else state.message_json(original),
        "followups": [state.message_json(m) for m in followups],
        "modal": interaction.modal if interaction.callback_type == 9 else None,
        "choices": interaction.choices if interaction.callback_type == 8 else None,
    }


def _ephemeral_owner(desk: InteractionDesk, message: Message) -> str | None:
    if not message.flags & FLAG_EPHEMERAL:
        return None
    return message.visible_to


# -- component clicks -----------------------------------------------------------------------


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every component in a message's (or modal's) tree, depth first."""
    if isinstance(node, list):
        for item in node:
            yield from _walk(item)
    elif isinstance(node, dict):
        yield node
        for key in ("components", "component", "accessory"):
            yield from _walk(node.get(key))


def _component_data(message: Message, data: dict[str, Any]) -> dict[str, Any]:
    custom_id = text_field(data, "custom_id") if "custom_id" in data else None
    if custom_id is None:
        raise ControlError("missing field(s) ['custom_id']")
    component = next(
        (c for c in _walk(message.components) if c.get("custom_id") == custom_id), None
    )
    if component is None:
        raise ControlError(f"the message has no component with custom_id {custom_id!r}")
    if component.get("disabled"):
        raise ControlError("this component is disabled; Discord's client cannot use it")
    kind = component.get("type")
    result: dict[str, Any] = {"custom_id": custom_id, "component_type": kind}
    if isinstance(component.get("id"), int):
        result["id"] = component["id"]
    values = data.get("values")
    if kind == _BUTTON:
        if values is not None:
            raise ControlError("a button takes no 'values'")
        if component.get("style") in (5, 6):
            raise ControlError("link and premium buttons send no interaction")
        return result
    if kind != _STRING_SELECT:
        raise ControlError(f"the emulator cannot use components of type {kind} yet")
    result["values"] = _select_values(component, values, "values")
    return result


def _select_values(select: dict[str, Any], values: Any, name: str) -> list[str]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ControlError(f"{name!r} must be a list of option values for a select")
    low, high = select.get("min_values", 1), select.get("max_values", 1)
    if not low <= len(values) <= high or len(set(values)) != len(values):
        raise ControlError(f"{name!r} must hold {low} to {high} different values")
    options = {o.get("value") for o in select.get("options") or []}
    unknown = [v for v in values if v not in options]
    if unknown:
        raise ControlError(f"not options of this select: {unknown}")
    return list(values)


# -- modal submits --------------------------------------------------------------------------


def _modal_submit(
    desk: InteractionDesk, data: dict[str, Any], user_id: str, message_id: str
) -> dict[str, Any]:
    modal = data["modal"]
    if not isinstance(modal, dict) or set(modal) - {"custom_id", "values"}:
        raise ControlError('\'modal\' must be {"custom_id": str, "values": {...}}')
    modal_id = text_field(modal, "custom_id") if "custom_id" in modal else None
    values = modal.get("values", {})
    if modal_id is None or not isinstance(values, dict):
        raise ControlError("'modal' needs a 'custom_id' and a 'values' object")
    opener_id = data.get("custom_id")
    opener = next(
        (
            i
            for i in reversed(desk.interactions())
            if i.message_id == message_id
            and i.user_id == user_id
            and i.callback_type == 9
            and not i.modal_submitted
            and (i.modal or {}).get("custom_id") == modal_id
            and (opener_id is None or i.data.get("custom_id") == opener_id)
        ),
        None,
    )
    if opener is None or opener.modal is None:
        raise ControlError(
            f"no open modal {modal_id!r} for this user on this message: the bot must answer "
            "an interaction there with a type 9 MODAL callback first"
        )
    components = _submitted(opener.modal.get("components") or [], values)
    opener.modal_submitted = True
    return {"custom_id": modal_id, "components": components}


def _submitted(layout: list[Any], values: dict[str, Any]) -> list[dict[str, Any]]:
    """The modal's components as MODAL_SUBMIT carries them, filled with ``values``."""
    ids = iter(range(1, 10_000))
    inputs = [c for c in _walk(layout) if c.get("type") in (_TEXT_INPUT, _STRING_SELECT)]
    known = {str(c.get("custom_id")) for c in inputs}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ControlError(f"the modal has no input(s) {unknown}; it has {sorted(known)}")

    def answer(component: dict[str, Any]) -> dict[str, Any]:
        custom_id = str(component.get("custom_id"))
        result = {"type": component.get("type"), "id": component.get("id") or next(ids)}
        result["custom_id"] = custom_id
        value = values.get(custom_id)
        if component.get("type") == _STRING_SELECT:
            if value is None and component.get("required", True):
                raise ControlError(f"the select {custom_id!r} is required")
            chosen = [] if value is None else _select_values(component, value, custom_id)
            result["values"] = chosen
            return result
        # Discord's client submits a pre-filled value the user left alone.
        result["value"] = _text_value(component, value or component.get("value"))
        return result

    submitted: list[dict[str, Any]] = []
    for top in layout:
        kind = top.get("type") if isinstance(top, dict) else None
        top_id = top.get("id") if isinstance(top, dict) else None
        if kind == _LABEL and isinstance(top.get("component"), dict):
            entry = {"type": _LABEL, "id": top_id or next(ids)}
            entry["component"] = answer(top["component"])
            submitted.append(entry)
        elif kind == _ACTION_ROW:
            row: dict[str, Any] = {"type": _ACTION_ROW, "id": top_id or next(ids)}
            row["components"] = [
                answer(c) for c in top.get("components") or [] if c.get("type") == _TEXT_INPUT
            ]
            submitted.append(row)
        elif isinstance(kind, int):
            submitted.append({"type": kind, "id": top_id or next(ids)})
    return submitted


def _text_value(component: dict[str, Any], value: Any) -> str:
    custom_id = component.get("custom_id")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ControlError(f"the value of {custom_id!r} must be a string")
    if not value and component.get("required", True):
        raise ControlError(f"the text input {custom_id!r} is required")
    low, high = component.get("min_length", 0), component.get("max_length", 4000)
    if value and not low <= len(value) <= high:
        raise ControlError(f"the text input {custom_id!r} takes {low} to {high} characters")
    return value
