"""Message components (legacy action rows, and the V2 total): Discord's layout rules.

Legacy messages hold up to 5 action rows; a row holds up to 5 buttons or exactly one select.
Buttons of styles 1-4 need a ``custom_id`` (1-100 characters, unique in the message), link
buttons a ``url``; labels are at most 80 characters; selects take 1-25 options. The echoed
components get the ``id`` Discord assigns. Field error codes for these layout rules are the
closest codes Discord is known to send; their messages are written to be read by a person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from discord_mcp.emulator.errors import FormErrors
from discord_mcp.emulator.validation import (
    Path,
    array,
    bad_length_error,
    boolean,
    integer,
    json_object,
    required_error,
    string,
    too_long_error,
)

ROWS_MAX = 5
ROW_WIDTH_MAX = 5
V2_COMPONENTS_MAX = 40
OPTIONS_MAX = 25
BUTTON_TYPE = 2
SELECT_TYPES = frozenset({3, 5, 6, 7, 8})
STRING_SELECT = 3
LINK_STYLE = 5
PREMIUM_STYLE = 6


@dataclass
class _ComponentCheck:
    errors: FormErrors
    custom_ids: set[str] = field(default_factory=set)
    next_id: int = 1

    def assign_id(self, component: dict[str, Any]) -> int:
        given = component.get("id")
        if isinstance(given, int) and not isinstance(given, bool) and given > 0:
            return given
        value = self.next_id
        self.next_id += 1
        return value

    def custom_id(self, path: Path, value: Any, *, required: bool) -> str | None:
        if value is None:
            if required:
                self.errors.add(
                    (*path, "custom_id"),
                    "COMPONENT_CUSTOM_ID_REQUIRED",
                    "A custom id is required for this component.",
                )
            return None
        text = string(self.errors, (*path, "custom_id"), value, min_length=1, max_length=100)
        if text is None:
            return None
        if text in self.custom_ids:
            self.errors.add(
                (*path, "custom_id"),
                "COMPONENT_CUSTOM_ID_DUPLICATED",
                "Component custom id cannot be duplicated",
            )
        self.custom_ids.add(text)
        return text


def parse_components(errors: FormErrors, value: Any, *, v2: bool) -> list[dict[str, Any]]:
    rows = array(errors, ("components",), value)
    if rows is None:
        return []
    check = _ComponentCheck(errors)
    if v2:
        return _v2_components(check, rows)
    if len(rows) > ROWS_MAX:
        too_long_error(errors, ("components",), ROWS_MAX)
        return []
    result: list[dict[str, Any]] = []
    for index, item in enumerate(rows):
        path: Path = ("components", index)
        row = json_object(errors, path, item)
        if row is None:
            continue
        if row.get("type") != 1:
            errors.add(
                (*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).'
            )
            continue
        row_id = check.assign_id(row)
        children = array(errors, (*path, "components"), row.get("components"))
        if children is None:
            continue
        if not 1 <= len(children) <= ROW_WIDTH_MAX:
            bad_length_error(errors, (*path, "components"), 1, ROW_WIDTH_MAX)
            continue
        selects = [c for c in children if isinstance(c, dict) and c.get("type") in SELECT_TYPES]
        if selects and len(children) > 1:
            errors.add(
                (*path, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
            continue
        out_children = [
            _child(check, (*path, "components", position), child)
            for position, child in enumerate(children)
        ]
        result.append({"type": 1, "id": row_id, "components": out_children})
    return result


def _child(check: _ComponentCheck, path: Path, item: Any) -> dict[str, Any]:
    errors = check.errors
    component = json_object(errors, path, item)
    if component is None:
        return {}
    kind = component.get("type")
    if kind == BUTTON_TYPE:
        return _button(check, path, component)
    if kind in SELECT_TYPES:
        return _select(check, path, component)
    errors.add(
        (*path, "type"),
        "UNION_TYPE_CHOICES",
        'Value of field "type" must be one of (2, 3, 5, 6, 7, 8).',
    )
    return {}


def _button(check: _ComponentCheck, path: Path, button: dict[str, Any]) -> dict[str, Any]:
    errors = check.errors
    style = button.get("style")
    if isinstance(style, bool) or style not in (1, 2, 3, 4, 5, 6):
        errors.add(
            (*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5, 6)."
        )
        return {}
    out: dict[str, Any] = {"type": BUTTON_TYPE, "id": check.assign_id(button), "style": style}
    if button.get("label") is not None:
        label = string(errors, (*path, "label"), button["label"], max_length=80)
        if label is not None:
            out["label"] = label
    if isinstance(button.get("emoji"), dict):
        out["emoji"] = button["emoji"]
    if style == LINK_STYLE:
        if button.get("custom_id") is not None:
            errors.add(
                (*path, "custom_id"),
                "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                "A link button cannot have a custom id.",
            )
        url = button.get("url")
        if url is None:
            errors.add((*path, "url"), "BUTTON_COMPONENT_URL_REQUIRED", "A url is required")
        elif (text := string(errors, (*path, "url"), url, max_length=512)) is not None:
            out["url"] = text
    elif style != PREMIUM_STYLE:
        custom_id = check.custom_id(path, button.get("custom_id"), required=True)
        if custom_id is not None:
            out["custom_id"] = custom_id
    else:
        out["sku_id"] = str(button.get("sku_id", ""))
    if style != PREMIUM_STYLE and "label" not in out and "emoji" not in out:
        errors.add(
            (*path, "label"),
            "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED",
            "A label or an emoji is required.",
        )
    if button.get("disabled") is not None:
        out["disabled"] = bool(boolean(errors, (*path, "disabled"), button["disabled"]))
    return out


def _select(check: _ComponentCheck, path: Path, select: dict[str, Any]) -> dict[str, Any]:
    errors = check.errors
    kind = select["type"]
    out: dict[str, Any] = {"type": kind, "id": check.assign_id(select)}
    custom_id = check.custom_id(path, select.get("custom_id"), required=True)
    out["custom_id"] = custom_id or ""
    if select.get("placeholder") is not None:
        placeholder = string(errors, (*path, "placeholder"), select["placeholder"], max_length=150)
        if placeholder is not None:
            out["placeholder"] = placeholder
    low = select.get("min_values", 1)
    high = select.get("max_values", 1)
    out["min_values"] = integer(errors, (*path, "min_values"), low, low=0, high=OPTIONS_MAX) or 0
    out["max_values"] = integer(errors, (*path, "max_values"), high, low=1, high=OPTIONS_MAX) or 1
    if select.get("disabled") is not None:
        out["disabled"] = bool(boolean(errors, (*path, "disabled"), select["disabled"]))
    if kind != STRING_SELECT:
        return out
    options = array(errors, (*path, "options"), select.get("options"))
    if options is None:
        return out
    if not 1 <= len(options) <= OPTIONS_MAX:
        bad_length_error(errors, (*path, "options"), 1, OPTIONS_MAX)
        return out
    out["options"] = []
    for index, item in enumerate(options):
        option_path = (*path, "options", index)
        option = json_object(errors, option_path, item)
        if option is None:
            continue
        normalised: dict[str, Any] = {}
        for key in ("label", "value"):
            if option.get(key) is None:
                required_error(errors, (*option_path, key))
                continue
            text = string(errors, (*option_path, key), option[key], min_length=1, max_length=100)
            normalised[key] = text or ""
        if option.get("description") is not None:
            description = string(
                errors, (*option_path, "description"), option["description"], max_length=100
            )
            if description is not None:
                normalised["description"] = description
        if isinstance(option.get("emoji"), dict):
            normalised["emoji"] = option["emoji"]
        if option.get("default") is not None:
            normalised["default"] = bool(option["default"])
        out["options"].append(normalised)
    if out["max_values"] > len(options):
        errors.add(
            (*path, "max_values"),
            "NUMBER_TYPE_MAX",
            f"int value should be less than or equal to {len(options)}.",
        )
    return out


def _v2_components(check: _ComponentCheck, items: list[Any]) -> list[dict[str, Any]]:
    """Components V2 are stored as sent, with ids; only the 40-component total is checked."""

    def walk(node: Any) -> int:
        if isinstance(node, dict):
            if "type" in node:
                node["id"] = check.assign_id(node)
            return int("type" in node) + sum(walk(v) for v in node.values())
        if isinstance(node, list):
            return sum(walk(v) for v in node)
        return 0

    if walk(items) > V2_COMPONENTS_MAX:
        too_long_error(check.errors, ("components",), V2_COMPONENTS_MAX)
    return [item for item in items if isinstance(item, dict)]
