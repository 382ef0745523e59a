"""Buttons, select menus and the free-text modal of a decision card (when a gateway is live).

Every ``custom_id`` carries the decision id, so whichever process holds the machine's gateway
can answer a click for a decision asked by any other process of the machine, and the machine's
name, so that of several machines sharing the bot only that one answers it
(:mod:`discord_mcp.team`): ``dmcp:<decision id>:<option index>:<machine>``,
``dmcp:<id>:select:<machine>`` (values are option indexes), ``dmcp:<id>:other:<machine>``
(opens the modal) and ``dmcp:<id>:modal:<machine>`` (the modal's submit). A card posted before
machines had names has no ``:<machine>`` part; it is answered where its decision file is.
Layout: two options become a yes/no pair of buttons, up to 24 options become buttons (5 per
row) plus "Other…", 25 become a select menu.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from discord_mcp.decisions.cards import LETTERS, option_label
from discord_mcp.decisions.parser import yes_no_targets
from discord_mcp.i18n import text

PREFIX = "dmcp"
ROW_WIDTH = 5
MAX_ROWS = 5
MODAL_INPUT_ID = "answer"
EPHEMERAL = 64
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4


@dataclass(frozen=True, slots=True)
class Click:
    """A parsed ``custom_id``: which decision, which part of its card, and whose card."""

    decision_id: str
    part: str
    """An option index as text, ``select``, ``other`` or ``modal``."""
    machine: str | None = None
    """The machine that asked (None: a card from before machines had names)."""

    @property
    def index(self) -> int | None:
        return int(self.part) if self.part.isdigit() else None


def custom_id(decision_id: str, part: str, machine: str | None = None) -> str:
    """The ``custom_id`` of one part of a decision's card (see the module's docstring)."""
    base = f"{PREFIX}:{decision_id}:{part}"
    return f"{base}:{machine}" if machine else base


def parse_custom_id(custom_id: str) -> Click | None:
    """Our click, or None for a custom_id that is not ours."""
    parts = custom_id.split(":")
    if len(parts) not in (3, 4) or parts[0] != PREFIX or not all(parts[1:]):
        return None
    return Click(parts[1], parts[2], parts[3] if len(parts) == 4 else None)


def _button(label: str, custom_id: str, style: int) -> dict[str, Any]:
    return {"type": 2, "style": style, "label": label[:80], "custom_id": custom_id}


def _rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"type": 1, "components": items[i : i + ROW_WIDTH]} for i in range(0, len(items), ROW_WIDTH)
    ]


def card_components(
    decision_id: str, options: tuple[str, ...], language: str = "en", machine: str | None = None
) -> list[dict[str, Any]]:
    """The action rows for a card (its own words in ``language``; option texts as given);
    ``machine``: the asking machine, named in every ``custom_id``."""
    other = _button(
        text(language, "buttons.other" if options else "buttons.answer"),
        custom_id(decision_id, "other", machine),
        SECONDARY if options else PRIMARY,
    )
    if not options:
        return _rows([other])
    if len(options) + 1 <= ROW_WIDTH * MAX_ROWS:
        styles = [PRIMARY] * len(options)
        if len(options) == 2:
            yes_index, no_index = yes_no_targets(options)
            if yes_index is not None and no_index is not None:
                styles[yes_index], styles[no_index] = SUCCESS, DANGER
        buttons = [
            _button(
                f"{option_label(i)}. {text}", custom_id(decision_id, str(i), machine), styles[i]
            )
            for i, text in enumerate(options)
        ]
        return _rows([*buttons, other])
    select = {
        "type": 3,
        "custom_id": custom_id(decision_id, "select", machine),
        "placeholder": text(language, "buttons.choose")[:150],
        "min_values": 1,
        "max_values": 1,
        "options": [
            {"label": f"{LETTERS[i]}. {text}"[:100], "value": str(i)}
            for i, text in enumerate(options)
        ],
    }
    return [{"type": 1, "components": [select]}, *_rows([other])]


def modal_response(
    decision_id: str, question: str, language: str = "en", machine: str | None = None
) -> dict[str, Any]:
    """The callback (type 9) that opens a free-text answer box."""
    return {
        "type": 9,
        "data": {
            "custom_id": custom_id(decision_id, "modal", machine),
            "title": text(language, "buttons.modal_title")[:45],
            "components": [
                {
                    "type": 18,
                    "label": text(language, "buttons.modal_label")[:45],
                    "description": question[:100],
                    "component": {
                        "type": 4,
                        "custom_id": MODAL_INPUT_ID,
                        "style": 2,
                        "required": True,
                        "max_length": 1500,
                    },
                }
            ],
        },
    }


def modal_text(data: dict[str, Any]) -> str | None:
    """The text typed in our modal, from a MODAL_SUBMIT's ``data`` (label or legacy rows)."""
    for outer in data.get("components") or []:
        if not isinstance(outer, dict):
            continue
        inner = [outer.get("component")] if outer.get("component") else outer.get("components")
        for component in inner or []:
            if isinstance(component, dict) and component.get("custom_id") == MODAL_INPUT_ID:
                value = component.get("value")
                return str(value) if value is not None else None
    return None


def ephemeral(text: str) -> dict[str, Any]:
    """A reply only the clicking user sees (type 4, EPHEMERAL)."""
    return {
        "type": 4,
        "data": {"content": text[:2000], "flags": EPHEMERAL, "allowed_mentions": {"parse": []}},
    }


UPDATE_MESSAGE = 7
"""The interaction callback type that edits the clicked message."""


def update_card(content: str) -> dict[str, Any]:
    """Edit the clicked card in place and remove its components (type 7)."""
    return {
        "type": UPDATE_MESSAGE,
        "data": {"content": content, "components": [], "allowed_mentions": {"parse": []}},
    }
