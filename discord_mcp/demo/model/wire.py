"""Small pieces of the three APIs' wire formats: server-sent events, schema-shaped answers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def fill_schema(schema: Mapping[str, Any]) -> Any:
    """A minimal value matching a JSON schema (enums take their first value)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: fill_schema(sub) for name, sub in properties.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    return "scripted"


def event(name: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """An SSE event whose data repeats its name as ``type``, as both APIs do."""
    return name, {"type": name, **fields}


def sse(events: Sequence[tuple[str, Mapping[str, Any]]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
