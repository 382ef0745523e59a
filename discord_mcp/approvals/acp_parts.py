"""The card side of an ACP permission request: which buttons an approval shows, and the
agent's option each stands for (see :mod:`discord_mcp.approvals.acp` for the mapping).

Kept apart from :mod:`.acp` so that the card kind and the click judging need nothing of the run
engine or the approval service."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from discord_mcp.decisions.model import Decision

STANDARD = {"allow": "allow_once", "session": "allow_always"}
REJECTS = ("reject_once", "reject_always")
OPTION_PART = re.compile(r"^o(\d{1,2})$")
MAX_EXTRA = 15  # buttons beyond the four (Discord: 5 per row, 5 rows)


def card_options(options: Sequence[Any]) -> list[dict[str, str]]:
    """The options as stored with the approval, each with the button ``part`` it gets."""
    rows: list[dict[str, str]] = []
    used: set[str] = set()
    reject = _reject(options)
    for index, option in enumerate(options):
        part = ""
        for button, kind in STANDARD.items():
            if option.kind == kind and button not in used:
                part = button
        if not part and reject is not None and option.option_id == reject.option_id:
            part = "deny"
        if part:
            used.add(part)
            if part == "deny":
                used.add("note")
        elif index < MAX_EXTRA:
            part = f"o{index}"
        else:
            continue
        rows.append(
            {"option_id": option.option_id, "name": option.name, "kind": option.kind, "part": part}
        )
    return rows


def _reject(options: Sequence[Any]) -> Any | None:
    for kind in REJECTS:
        found = next((o for o in options if o.kind == kind), None)
        if found is not None:
            return found
    return None


def stored_options(decision: Decision) -> list[dict[str, str]]:
    """The ACP options stored on an approval (empty for the hooks' approvals)."""
    stored = (decision.approval or {}).get("acp_options")
    if not isinstance(stored, list):
        return []
    return [o for o in stored if isinstance(o, dict) and isinstance(o.get("part"), str)]


def parts(decision: Decision) -> set[str]:
    """The buttons this approval shows (all four for the hooks' approvals)."""
    options = stored_options(decision)
    if not options and not (decision.approval or {}).get("acp"):
        return {"allow", "session", "deny", "note"}
    found = {o["part"] for o in options}
    if "deny" in found:
        found.add("note")
    return found


def option_for_part(decision: Decision, part: str) -> dict[str, str] | None:
    return next((o for o in stored_options(decision) if o["part"] == part), None)
