"""Interactions: the 3-second first response, one acknowledgement, then followups by token.

Discord's rules, as the desk enforces them:

- The first callback (``POST /interactions/{id}/{token}/callback``) must arrive within the
  deadline (3 s); later, or for an id/token Discord never issued, it is 10062 "Unknown
  interaction". A second callback is 40060 "Interaction has already been acknowledged" within
  the deadline, and 10062 after it.
- With an Interactions Endpoint URL set (the control API's ``interactions_endpoint_url``),
  interactions are not dispatched over the gateway at all.
- Callback types: 1 PONG (only for PING), 4 message, 5 deferred message (a "thinking"
  placeholder), 6 deferred update and 7 update (only for component or modal interactions on a
  message), 8 autocomplete result (only, and always, for AUTOCOMPLETE: ``data.choices``, at most
  25, typed like the focused option), 9 modal (not in answer to a modal submit or an
  autocomplete). Message responses, followups and edits take files like any message.
- The response to an application command (type 4, or the type 5 placeholder) is a message of
  type 20 CHAT_INPUT_COMMAND with ``interaction_metadata``; an ephemeral response or followup
  is visible to the interaction's user only (``Message.visible_to``), never in the channel.
- After the acknowledgement the token acts as a webhook for 15 minutes:
  ``POST /webhooks/{application_id}/{token}`` adds a followup;
  ``GET|PATCH|DELETE /webhooks/{application_id}/{token}/messages/@original`` reads, edits or
  deletes the original response (for types 6 and 7, the message the component is on), and
  ``.../messages/{message_id}`` does the same for a followup. Unknown or expired tokens are
  10015 "Unknown Webhook".

``failed`` (the ``interactions_failed`` stat) counts interactions whose deadline passed
unanswered (once each) and callbacks refused with 10062 or 40060 for other reasons;
``acknowledged_twice`` (``interactions_acknowledged_twice``) counts every second
acknowledgement, whether refused with 40060 or (past the deadline) 10062.
Interactions are created by the control API (``control_interactions.py``) and dispatched over
the gateway; :meth:`InteractionDesk.create` is the one place that does it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.command_schema import STRING, parse_choices
from discord_mcp.emulator.errors import FormErrors
from discord_mcp.emulator.message_body import parse_message
from discord_mcp.emulator.models import FLAG_EPHEMERAL, FLAG_LOADING, Message, Origin
from discord_mcp.emulator.state import State
from discord_mcp.emulator.uploads import FILE_SIZE_MAX, Upload
from discord_mcp.emulator.validation import body_object

PING = 1
APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
AUTOCOMPLETE = 4
MODAL_SUBMIT = 5

TOKEN_LIFETIME_SECONDS = 15 * 60
# Flags an interaction response may carry: SUPPRESS_EMBEDS, EPHEMERAL, SUPPRESS_NOTIFICATIONS,
# IS_VOICE_MESSAGE, IS_COMPONENTS_V2.
_CALLBACK_FLAGS = (1 << 2) | (1 << 6) | (1 << 12) | (1 << 13) | (1 << 15)


@dataclass
class Interaction:
    id: str
    token: str
    type: int
    channel_id: str
    user_id: str
    data: dict[str, Any]
    created_at: float
    message_id: str | None = None
    callback_type: int | None = None
    # The callback body the bot sent, as it sent it.
    response: dict[str, Any] | None = None
    original_message_id: str | None = None
    followup_ids: list[str] = field(default_factory=list)
    modal: dict[str, Any] | None = None
    modal_submitted: bool = False
    # AUTOCOMPLETE: the focused option's type, and the choices the bot answered with.
    focused_type: int = STRING
    choices: list[dict[str, Any]] | None = None
    # The deadline passed unanswered (counted once in ``failed``); later callbacks are 10062.
    expired: bool = False
    # Called once the first callback has been accepted (the control API waits on it).
    on_answer: Callable[[], None] | None = None


class InteractionDesk:
    """Issues interactions and answers their callbacks and followups against a :class:`State`."""

    def __init__(self, state: State, *, deadline: float = 3.0) -> None:
        self.state = state
        self.deadline = deadline
        self.failed = 0
        self.acknowledged_twice = 0
        """Second callbacks (refused with 40060, or 10062 past the deadline): a bot (or two
        machines of one) answered twice."""
        self._by_id: dict[str, Interaction] = {}

    @property
    def application_id(self) -> str:
        # A bot's application id is its user id.
        return self.state.bot.id

    def create(
        self,
        *,
        type_: int,
        user_id: str,
        channel_id: str,
        data: dict[str, Any],
        message_id: str | None = None,
        focused_type: int = STRING,
    ) -> Interaction:
        """Issue an interaction (a click, a select, a modal submit, a command...) and emit it.

        ``message_id`` may name an ephemeral message: its user can click its components.
        ``focused_type`` is the type of an AUTOCOMPLETE's focused option.
        """
        self.state.get_user(user_id)
        self.state.get_channel(channel_id)
        if message_id is not None:
            message = self.state.messages.get(message_id)
            if message is None or message.channel_id != channel_id:
                raise errors.unknown_message()
        interaction = Interaction(
            id=self.state.new_id(),
            token=f"emulator-interaction.{secrets.token_urlsafe(24)}",
            type=type_,
            channel_id=channel_id,
            user_id=user_id,
            data=data,
            created_at=self.state.clock(),
            message_id=message_id,
            focused_type=focused_type,
        )
        self._by_id[interaction.id] = interaction
        if self.state.interactions_endpoint_url is None:
            # With an Interactions Endpoint URL set in the portal, Discord POSTs interactions
            # there and sends none over the gateway: a gateway bot never sees the click.
            self.state.emit("INTERACTION_CREATE", self.to_json(interaction))
        return interaction

    def get(self, interaction_id: str) -> Interaction | None:
        return self._by_id.get(interaction_id)

    def interactions(self) -> list[Interaction]:
        """Every interaction issued, oldest first."""
        return list(self._by_id.values())

    def expire(self, interaction: Interaction) -> None:
        """The deadline passed: an unanswered interaction fails (counted once)."""
        if interaction.callback_type is None and not interaction.expired:
            interaction.expired = True
            self.failed += 1

    def to_json(self, interaction: Interaction) -> dict[str, Any]:
        """Discord's interaction object, as ``INTERACTION_CREATE`` carries it."""
        state = self.state
        channel = state.get_channel(interaction.channel_id)
        user = state.get_user(interaction.user_id)
        data: dict[str, Any] = {
            "id": interaction.id,
            "application_id": self.application_id,
            "type": interaction.type,
            "data": interaction.data,
            "guild_id": state.guild.id,
            "channel_id": channel.id,
            "channel": channel.to_json(),
            "member": state.member_json(user.id)
            | {"permissions": str(state.permissions_for(user.id, channel))},
            "token": interaction.token,
            "version": 1,
            "app_permissions": str(state.permissions_for(state.bot.id, channel)),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": state.guild.id},
            "context": 0,
            "attachment_size_limit": FILE_SIZE_MAX,
        }
        if interaction.message_id is not None:
            message = state.messages[interaction.message_id]
            data["message"] = state.message_json(message)
        return data

    # -- the first response -------------------------------------------------------------------

    def callback(
        self,
        interaction_id: str,
        token: str,
        body: Any,
        *,
        with_response: bool,
        uploads: list[Upload] | None = None,
    ) -> dict[str, Any] | None:
        """Answer an interaction; returns the ``with_response`` body, else None (204)."""
        interaction = self._by_id.get(interaction_id)
        if interaction is None or not secrets.compare_digest(interaction.token, token):
            self.failed += 1
            raise errors.unknown_interaction()
        if interaction.callback_type is not None:
            self.failed += 1
            self.acknowledged_twice += 1
            if self.state.clock() - interaction.created_at > self.deadline:
                # Past the deadline Discord no longer knows the interaction's callback: a
                # second acknowledgement then comes back as 10062, not 40060.
                raise errors.unknown_interaction()
            raise errors.already_acknowledged()
        if interaction.expired or self.state.clock() - interaction.created_at > self.deadline:
            self.expire(interaction)
            raise errors.unknown_interaction()
        request = body_object(body)
        kind = request.get("type")
        payload = request.get("data")
        if payload is not None and not isinstance(payload, dict):
            raise errors.invalid_form(
                ("data",), "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"
            )
        message_json = self._respond(interaction, kind, payload or {}, uploads or [])
        # _respond accepted it, so kind is one of the callback type integers.
        interaction.callback_type = kind
        interaction.response = request
        if interaction.on_answer is not None:
            interaction.on_answer()
        if not with_response:
            return None
        summary: dict[str, Any] = {"id": interaction.id, "type": interaction.type}
        if interaction.original_message_id is not None:
            original = self.state.messages[interaction.original_message_id]
            summary["response_message_id"] = original.id
            summary["response_message_loading"] = bool(original.flags & FLAG_LOADING)
            summary["response_message_ephemeral"] = bool(original.flags & FLAG_EPHEMERAL)
        result: dict[str, Any] = {"interaction": summary}
        if kind in (4, 7) and message_json is not None:
            result["resource"] = {"type": kind, "message": message_json}
        return result

    def _respond(
        self, interaction: Interaction, kind: Any, payload: dict[str, Any], uploads: list[Upload]
    ) -> dict[str, Any] | None:
        state = self.state
        on_message = interaction.message_id is not None and interaction.type in (
            MESSAGE_COMPONENT,
            MODAL_SUBMIT,
        )
        allowed = {
            1: interaction.type == PING,
            4: interaction.type not in (PING, AUTOCOMPLETE),
            5: interaction.type not in (PING, AUTOCOMPLETE),
            6: on_message,
            7: on_message,
            8: interaction.type == AUTOCOMPLETE,
            9: interaction.type not in (PING, AUTOCOMPLETE, MODAL_SUBMIT),
        }
        if isinstance(kind, bool) or not allowed.get(kind, False):
            raise errors.invalid_form(
                ("type",),
                "INTERACTION_RESPONSE_TYPE_INVALID",
                f"Interaction response type {kind!r} is not valid for interaction type "
                f"{interaction.type}.",
            )
        flags = payload.get("flags") or 0
        if kind in (4, 5) and (not isinstance(flags, int) or flags & ~_CALLBACK_FLAGS):
            raise errors.invalid_form(
                ("data", "flags"), "MESSAGE_FLAGS_INVALID", "Invalid flags for this response."
            )
        if kind == 4:
            message, _ = state.create_message(
                interaction.channel_id,
                state.bot.id,
                payload,
                webhook_id=self.application_id,
                uploads=uploads,
                origin=self._origin(interaction),
            )
            interaction.original_message_id = message.id
            return state.message_json(message)
        if kind == 5:
            message = state.create_loading_message(
                interaction.channel_id,
                state.bot.id,
                flags=flags & FLAG_EPHEMERAL,
                application_id=self.application_id,
                origin=self._origin(interaction),
            )
            interaction.original_message_id = message.id
            return None
        if kind in (6, 7):
            assert interaction.message_id is not None
            source = state.messages[interaction.message_id]
            interaction.original_message_id = source.id
            if kind == 7:
                state.apply_edit(source, parse_message(payload, create=False), uploads)
                return state.message_json(source)
            return None
        if kind == 8:
            problems = FormErrors()
            interaction.choices = parse_choices(
                problems,
                ("data", "choices"),
                payload.get("choices") or [],
                interaction.focused_type,
            )
            problems.raise_if_any()
            return None
        if kind == 9:
            interaction.modal = _modal(payload)
        return None

    def _origin(self, interaction: Interaction, *, original: bool = True) -> Origin:
        """What marks a response message: its user, and a command's interaction_metadata."""
        if interaction.type != APPLICATION_COMMAND:
            return Origin(interaction.user_id)
        metadata: dict[str, Any] = {
            "id": interaction.id,
            "type": interaction.type,
            "user": self.state.get_user(interaction.user_id).to_json(),
            "authorizing_integration_owners": {"0": self.state.guild.id},
        }
        if not original and interaction.original_message_id is not None:
            metadata["original_response_message_id"] = interaction.original_message_id
        return Origin(interaction.user_id, metadata, original=original)

    # -- followups ----------------------------------------------------------------------------

    def _by_webhook(self, application_id: str, token: str) -> Interaction:
        for interaction in self._by_id.values():
            if secrets.compare_digest(interaction.token, token):
                break
        else:
            raise errors.unknown_webhook()
        expired = self.state.clock() - interaction.created_at > TOKEN_LIFETIME_SECONDS
        if application_id != self.application_id or expired or interaction.callback_type is None:
            raise errors.unknown_webhook()
        return interaction

    def followup(
        self, application_id: str, token: str, body: Any, uploads: list[Upload] | None = None
    ) -> dict[str, Any]:
        """Post a followup message; returns the message JSON."""
        interaction = self._by_webhook(application_id, token)
        message, _ = self.state.create_message(
            interaction.channel_id,
            self.state.bot.id,
            body,
            webhook_id=self.application_id,
            uploads=uploads,
            origin=self._origin(interaction, original=False),
        )
        interaction.followup_ids.append(message.id)
        return self.state.message_json(message)

    def _response_message(self, application_id: str, token: str, message_id: str) -> Message:
        """``@original`` or one of the followups of the interaction with this token."""
        interaction = self._by_webhook(application_id, token)
        if message_id == "@original":
            wanted = interaction.original_message_id
        else:
            wanted = message_id if message_id in interaction.followup_ids else None
        message = None if wanted is None else self.state.messages.get(wanted)
        if message is None:
            raise errors.unknown_message()
        return message

    def get_message(self, application_id: str, token: str, message_id: str) -> dict[str, Any]:
        """Read the original response or a followup."""
        return self.state.message_json(self._response_message(application_id, token, message_id))

    def delete_message(self, application_id: str, token: str, message_id: str) -> None:
        """Delete the original response or a followup."""
        message = self._response_message(application_id, token, message_id)
        if message.flags & FLAG_EPHEMERAL:
            # Only its user ever saw it: it goes without a trace in any channel.
            del self.state.messages[message.id]
            return
        self.state.delete_message(message.channel_id, message.id)

    def edit_original(
        self,
        application_id: str,
        token: str,
        body: Any,
        message_id: str = "@original",
        uploads: list[Upload] | None = None,
    ) -> dict[str, Any]:
        """Edit the original response (for types 6/7, the message the component is on) or a
        followup."""
        message = self._response_message(application_id, token, message_id)
        fields = parse_message(body, create=False)
        if message.flags & FLAG_LOADING:
            # Filling in a deferred response replaces the "thinking" state.
            fields.given.add("flags")
            fields.flags = (message.flags & ~FLAG_LOADING) | fields.flags
        self.state.apply_edit(message, fields, uploads)
        return self.state.message_json(message)


def _modal(payload: dict[str, Any]) -> dict[str, Any]:
    problems = FormErrors()
    custom_id = payload.get("custom_id")
    if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
        problems.add(
            ("data", "custom_id"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
        )
    title = payload.get("title")
    if not isinstance(title, str) or not 1 <= len(title) <= 45:
        problems.add(
            ("data", "title"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length."
        )
    components = payload.get("components")
    if not isinstance(components, list) or not 1 <= len(components) <= 5:
        problems.add(
            ("data", "components"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length."
        )
    problems.raise_if_any()
    return payload
