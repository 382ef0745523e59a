"""Message bodies (create and edit): content, embeds, mentions, replies, nonces, and the
``attachments`` list that describes a request's files (``attachments.py``).

Limits come from Discord's documentation, not the OpenAPI spec, where they differ: content is
2000 characters for bots (the spec says 4000).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from discord_mcp.emulator.attachments import AttachmentRequest, parse_requests
from discord_mcp.emulator.components import parse_components
from discord_mcp.emulator.errors import FormErrors
from discord_mcp.emulator.models import FLAG_IS_COMPONENTS_V2
from discord_mcp.emulator.validation import (
    Path,
    array,
    body_object,
    boolean,
    integer,
    json_object,
    required_error,
    snowflake_field,
    string,
    too_long_error,
)

CONTENT_MAX = 2000
EMBEDS_MAX = 10
EMBED_TOTAL_MAX = 6000
NONCE_MAX = 25


FORWARD = 1
"""``message_reference.type`` of a forwarded message."""


@dataclass
class MessageFields:
    """A validated message body. ``given`` names the keys the request carried."""

    given: set[str] = field(default_factory=set)
    content: str = ""
    embeds: list[dict[str, Any]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    flags: int = 0
    tts: bool = False
    nonce: int | str | None = None
    enforce_nonce: bool = False
    allowed_mentions: dict[str, Any] | None = None
    reference_message_id: str | None = None
    reference_type: int = 0
    """0 a reply, 1 a forward (the referenced message travels in ``message_snapshots``)."""
    fail_if_not_exists: bool = True
    has_other_content: bool = False
    # The body's ``attachments`` entries; None when the body has none (not even ``[]``).
    attachments: list[AttachmentRequest] | None = None

    def is_empty(self) -> bool:
        """Nothing Discord would display: 50006 on create."""
        return (
            self.reference_type != FORWARD
            and not self.content.strip()
            and not self.embeds
            and not self.components
            and not self.has_other_content
        )


def parse_message(body: Any, *, create: bool) -> MessageFields:
    """Validate a create (``create=True``) or edit body; raises 50035 with every problem."""
    data = body_object(body)
    errors = FormErrors()
    fields = MessageFields(given={key for key, value in data.items() if value is not None})
    # Explicit nulls in an edit clear the field (content "", no embeds, no components).
    fields.given |= {key for key, value in data.items() if value is None and not create}

    if data.get("content") is not None:
        fields.content = string(errors, ("content",), data["content"], max_length=CONTENT_MAX) or ""
    if data.get("flags") is not None:
        fields.flags = integer(errors, ("flags",), data["flags"], low=0) or 0
    v2 = bool(fields.flags & FLAG_IS_COMPONENTS_V2)
    if data.get("embeds") is not None:
        fields.embeds = _embeds(errors, data["embeds"])
    if data.get("components") is not None:
        fields.components = parse_components(errors, data["components"], v2=v2)
    if v2 and (fields.content or fields.embeds):
        errors.add(
            ("content",),
            "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
            "The 'content' and 'embeds' fields cannot be used when using "
            "MessageFlags.IS_COMPONENTS_V2",
        )
    if data.get("allowed_mentions") is not None:
        fields.allowed_mentions = _allowed_mentions(errors, data["allowed_mentions"])
    if "attachments" in data:
        fields.attachments = parse_requests(errors, data["attachments"] or [])
    if create:
        _create_only_fields(errors, data, fields)
    errors.raise_if_any()
    return fields


def _create_only_fields(errors: FormErrors, data: dict[str, Any], fields: MessageFields) -> None:
    if data.get("tts") is not None:
        fields.tts = bool(boolean(errors, ("tts",), data["tts"]))
    if data.get("enforce_nonce") is not None:
        fields.enforce_nonce = bool(boolean(errors, ("enforce_nonce",), data["enforce_nonce"]))
    nonce = data.get("nonce")
    if isinstance(nonce, str):
        fields.nonce = string(errors, ("nonce",), nonce, max_length=NONCE_MAX)
    elif isinstance(nonce, int) and not isinstance(nonce, bool):
        fields.nonce = integer(errors, ("nonce",), nonce, low=-(1 << 63), high=(1 << 63) - 1)
    elif nonce is not None:
        errors.add(("nonce",), "BASE_TYPE_STRING", f'Could not interpret "{nonce}" as string.')
    reference = data.get("message_reference")
    if reference is not None and (ref := json_object(errors, ("message_reference",), reference)):
        if "message_id" not in ref:
            required_error(errors, ("message_reference", "message_id"))
        else:
            fields.reference_message_id = snowflake_field(
                errors, ("message_reference", "message_id"), ref["message_id"]
            )
        kind = ref.get("type")
        if kind is not None:
            if kind not in (0, FORWARD) or isinstance(kind, bool):
                errors.add(
                    ("message_reference", "type"),
                    "BASE_TYPE_CHOICES",
                    f"Value must be one of {{0, {FORWARD}}}.",
                )
            else:
                fields.reference_type = int(kind)
        if ref.get("fail_if_not_exists") is not None:
            flag = boolean(
                errors, ("message_reference", "fail_if_not_exists"), ref["fail_if_not_exists"]
            )
            fields.fail_if_not_exists = flag is not False
    fields.has_other_content = bool(data.get("sticker_ids") or data.get("poll"))


def _allowed_mentions(errors: FormErrors, value: Any) -> dict[str, Any] | None:
    path: Path = ("allowed_mentions",)
    data = json_object(errors, path, value)
    if data is None:
        return None
    parse = data.get("parse") or []
    if array(errors, (*path, "parse"), parse) is not None:
        for index, kind in enumerate(parse):
            if kind not in ("users", "roles", "everyone"):
                errors.add(
                    (*path, "parse", index),
                    "BASE_TYPE_CHOICES",
                    "Value must be one of ('everyone', 'roles', 'users').",
                )
    for key in ("users", "roles"):
        ids = data.get(key)
        if ids is None or array(errors, (*path, key), ids) is None:
            continue
        if len(ids) > 100:
            too_long_error(errors, (*path, key), 100)
        for index, item in enumerate(ids):
            snowflake_field(errors, (*path, key, index), item)
        if ids and isinstance(parse, list) and key in parse:
            errors.add(
                path,
                "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                f'parse:["{key}"] and {key}: [ids...] are mutually exclusive.',
            )
    if data.get("replied_user") is not None:
        boolean(errors, (*path, "replied_user"), data["replied_user"])
    return data


def _embeds(errors: FormErrors, value: Any) -> list[dict[str, Any]]:
    items = array(errors, ("embeds",), value)
    if items is None:
        return []
    if len(items) > EMBEDS_MAX:
        too_long_error(errors, ("embeds",), EMBEDS_MAX)
        return []
    result: list[dict[str, Any]] = []
    total = 0
    for index, item in enumerate(items):
        embed = json_object(errors, ("embeds", index), item)
        if embed is not None:
            normalised, size = _embed(errors, ("embeds", index), embed)
            result.append(normalised)
            total += size
    if total > EMBED_TOTAL_MAX:
        errors.add(
            ("embeds",),
            "MAX_EMBED_SIZE_EXCEEDED",
            f"Embed size exceeds maximum size of {EMBED_TOTAL_MAX}",
        )
    return result


def _embed(errors: FormErrors, path: Path, embed: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The embed as Discord returns it, and its character count toward the 6000 total."""
    out: dict[str, Any] = {"type": embed.get("type") or "rich"}
    size = 0
    for key, limit in (("title", 256), ("description", 4096), ("url", 2048)):
        if embed.get(key) is not None:
            text = string(errors, (*path, key), embed[key], max_length=limit)
            if text is not None:
                out[key] = text
                size += len(text) if key != "url" else 0
    if embed.get("color") is not None:
        color = integer(errors, (*path, "color"), embed["color"], low=0, high=0xFFFFFF)
        if color is not None:
            out["color"] = color
    if embed.get("timestamp") is not None:
        stamp = embed["timestamp"]
        try:
            out["timestamp"] = datetime.fromisoformat(str(stamp)).isoformat()
        except ValueError:
            errors.add(
                (*path, "timestamp"),
                "DATE_TIME_TYPE_PARSE",
                f"Could not parse {stamp}. Should be ISO8601.",
            )
    fields = embed.get("fields")
    if fields is not None and (items := array(errors, (*path, "fields"), fields)) is not None:
        if len(items) > 25:
            too_long_error(errors, (*path, "fields"), 25)
        out["fields"] = []
        for index, item in enumerate(items[:25]):
            entry = json_object(errors, (*path, "fields", index), item)
            if entry is None:
                continue
            normalised: dict[str, Any] = {"inline": bool(entry.get("inline", False))}
            for key, limit in (("name", 256), ("value", 1024)):
                if entry.get(key) is None:
                    required_error(errors, (*path, "fields", index, key))
                    continue
                text = string(errors, (*path, "fields", index, key), entry[key], max_length=limit)
                normalised[key] = text or ""
                size += len(text or "")
            out["fields"].append(normalised)
    for key, text_key, limit in (("footer", "text", 2048), ("author", "name", 256)):
        part = embed.get(key)
        if part is None or (obj := json_object(errors, (*path, key), part)) is None:
            continue
        if obj.get(text_key) is None:
            required_error(errors, (*path, key, text_key))
            continue
        text = string(errors, (*path, key, text_key), obj[text_key], max_length=limit)
        if text is not None:
            out[key] = {text_key: text} | {
                k: v for k, v in obj.items() if k in ("url", "icon_url") and isinstance(v, str)
            }
            size += len(text)
    for key in ("image", "thumbnail"):
        part = embed.get(key)
        if isinstance(part, dict) and isinstance(part.get("url"), str):
            out[key] = {"url": part["url"]}
    return out, size
