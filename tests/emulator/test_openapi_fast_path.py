"""The checker's compiled fast path (``jsonschema_rs``) is never laxer than ``OAS31Validator``:
whatever the OAS validator finds wrong, the fast path fails too (and so hands it over). Checked
on the emulator's real responses and requests, each mutated field by field into the kinds of
mistakes an emulator makes (a field gone, null, the wrong type, an int32 overflow, a bad
``date-time``, a value outside an enum)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

import httpx

from discord_mcp.emulator import Exchange, RunningEmulator
from tests.support import discord_bodies
from tests.support.openapi_check import load_spec

Pointer = tuple[str, ...]

MISTAKES: list[Any] = [
    None,
    "x",
    2**31,
    -(2**31) - 1,
    2**63,
    1.5,
    True,
    [],
    {},
    "2026-13-45T25:00:00",
]
"""What a field becomes in a mutation (besides being dropped)."""


def _schemas(exchange: Exchange) -> Iterator[tuple[Pointer, Any]]:
    """(schema pointer, instance) for the exchange's JSON request and response bodies."""
    spec = load_spec()
    segments = [unquote(s) for s in exchange.path.strip("/").split("/")]
    operation = spec.operation(exchange.method, segments)
    assert not isinstance(operation, str), (exchange.method, exchange.path, operation)
    body = operation.spec.get("requestBody")
    if body is not None and isinstance(exchange.request_json, dict):
        body, pointer = spec.resolve(body, (*operation.pointer, "requestBody"))
        yield (*pointer, "content", "application/json", "schema"), exchange.request_json
    responses = operation.spec.get("responses", {})
    key = str(exchange.status) if str(exchange.status) in responses else "4XX"
    response, pointer = spec.resolve(responses[key], (*operation.pointer, "responses", key))
    if "application/json" in response.get("content", {}) and exchange.response_json is not None:
        yield (*pointer, "content", "application/json", "schema"), exchange.response_json


def _mutations(instance: Any) -> Iterator[Any]:
    """``instance`` with one field (at any depth) dropped or replaced by one of MISTAKES."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                paths.append((*path, key))
                walk(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node[:2]):
                paths.append((*path, index))
                walk(value, (*path, index))

    walk(instance, ())
    for path in paths:
        for mistake in [..., *MISTAKES]:
            changed = copy.deepcopy(instance)
            parent = changed
            for part in path[:-1]:
                parent = parent[part]
            if mistake is ...:
                if isinstance(parent, dict):
                    del parent[path[-1]]
                    yield changed
                continue
            parent[path[-1]] = mistake
            yield changed


def _traffic(discord: RunningEmulator) -> None:
    """A card, a page of messages, an edit, a thread, a channel and a refused request."""
    with httpx.Client(
        base_url=discord.api_base, headers={"Authorization": f"Bot {discord.token}"}
    ) as client:
        channel = discord.channel_id
        row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Go", "custom_id": "go"}]}
        card = client.post(
            f"/channels/{channel}/messages",
            json={
                "content": "Pick one",
                "components": [row],
                "embeds": [{"title": "t", "description": "d", "color": 5, "fields": []}],
            },
        ).json()
        client.get(f"/channels/{channel}/messages", params={"limit": 5})
        client.patch(f"/channels/{channel}/messages/{card['id']}", json={"content": "Picked"})
        client.post(f"/channels/{channel}/threads", json={"name": "work", "type": 11})
        client.get(f"/channels/{channel}")
        client.post(f"/channels/{channel}/messages", json={"content": "x" * 2001})


def test_what_oas31_finds_wrong_the_fast_path_never_passes(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    recorded: list[Exchange] = []
    discord = make_emulator(rate_limit_scale=0.01, exchange_hook=recorded.append)
    _traffic(discord)
    spec = load_spec()
    judged = wrong = 0
    laxer: list[str] = []
    for exchange in recorded:
        for pointer, instance in _schemas(exchange):
            for changed in [instance, *_mutations(instance)]:
                judged += 1
                found = spec.oas31_errors(pointer, changed)
                if not found:
                    continue
                wrong += 1
                if spec.passes_at(pointer, changed):
                    laxer.append(f"{exchange.method} {exchange.path}: {found[0][:160]}")
    assert laxer == [], "\n".join(laxer[:20])
    # Not vacuous: real traffic of several operations, thousands of cases, most of them wrong.
    assert {e.method for e in recorded} >= {"GET", "POST", "PATCH"}
    assert judged > 2000, judged
    assert wrong > judged // 3, (judged, wrong)


def test_an_int32_overflow_and_a_bad_date_time_are_failed_by_both() -> None:
    spec = load_spec()
    schema = ("components", "schemas", "MessageResponse")
    message = discord_bodies.message()
    assert spec.passes_at(schema, message)
    assert spec.oas31_errors(schema, message) == []
    for field, value in (("flags", 2**31), ("timestamp", "2026-11-22 noon")):
        wrong = {**message, field: value}
        assert spec.oas31_errors(schema, wrong), field
        assert not spec.passes_at(schema, wrong), field
