"""A guild's cap on active threads: 1000 by default, settable through the control API; past it
Discord answers 160006, and archived threads do not count."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.conftest import bot_client, control_client, until_not_429

MAX_ACTIVE_THREADS = 160006


@pytest.fixture
def emulator(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.001)


@pytest.fixture
def api(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with bot_client(emulator) as client:
        yield client


@pytest.fixture
def control(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with control_client(emulator) as client:
        yield client


def _thread(api: httpx.Client, channel_id: str, name: str = "t") -> httpx.Response:
    return until_not_429(
        lambda: api.post(f"/channels/{channel_id}/threads", json={"name": name, "type": 11})
    )


def _from_message(api: httpx.Client, channel_id: str) -> httpx.Response:
    message = until_not_429(
        lambda: api.post(f"/channels/{channel_id}/messages", json={"content": "starter"})
    ).json()
    return until_not_429(
        lambda: api.post(
            f"/channels/{channel_id}/messages/{message['id']}/threads", json={"name": "s"}
        )
    )


def _limit(control: httpx.Client, limit: object) -> httpx.Response:
    return control.post("/faults", json={"active_thread_limit": limit})


def test_the_limit_is_discords_thousand_unless_set(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    assert control.get("/faults").json()["active_thread_limit"] == 1000
    assert _limit(control, 3).json()["active_thread_limit"] == 3
    for wrong in (0, -1, True, "3", 1.5):
        assert _limit(control, wrong).status_code == 400, wrong
    assert control.get("/faults").json()["active_thread_limit"] == 3


def test_past_the_limit_a_new_thread_is_160006_either_way(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    _limit(control, 2)
    assert _thread(api, emulator.channel_id).status_code == 201
    assert _from_message(api, emulator.channel_id).status_code == 201

    for refused in (_thread(api, emulator.channel_id), _from_message(api, emulator.channel_id)):
        assert refused.status_code == 400
        assert refused.json() == {
            "message": "Maximum number of active threads reached",
            "code": MAX_ACTIVE_THREADS,
        }
    threads = [c for c in control.get("/state").json()["channels"] if c["type"] in (11, 12)]
    assert len(threads) == 2


def test_archived_threads_do_not_count_and_reopening_one_past_the_limit_is_160006(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    _limit(control, 1)
    first = _thread(api, emulator.channel_id).json()
    archived = until_not_429(lambda: api.patch(f"/channels/{first['id']}", json={"archived": True}))
    assert archived.status_code == 200

    second = _thread(api, emulator.channel_id)
    assert second.status_code == 201

    reopened = until_not_429(
        lambda: api.patch(f"/channels/{first['id']}", json={"archived": False})
    )
    assert reopened.status_code == 400
    assert reopened.json()["code"] == MAX_ACTIVE_THREADS
