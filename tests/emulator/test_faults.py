"""Scripted failures through ``POST /_emulator/faults``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator

CREATE = "POST /channels/{channel_id}/messages"


def _send(api: httpx.Client, running: RunningEmulator) -> httpx.Response:
    return api.post(f"/channels/{running.channel_id}/messages", json={"content": "hi"})


def test_a_fault_answers_the_next_n_requests_of_its_route_then_stops(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 500, "count": 2})

    statuses = [_send(api, emulator).status_code for _ in range(3)]

    assert statuses == [500, 500, 200]


def test_a_fault_leaves_other_routes_alone(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 502})

    assert api.get(f"/channels/{emulator.channel_id}/messages").status_code == 200
    assert _send(api, emulator).status_code == 502


def test_a_server_error_fault_has_a_discord_like_body(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 500})

    response = _send(api, emulator)

    assert response.json() == {"message": "500: Internal Server Error", "code": 0}


def test_a_fault_can_carry_its_own_code_and_message(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post(
        "/faults",
        json={"route": CREATE, "status": 403, "code": 50001, "message": "Missing Access"},
    )

    response = _send(api, emulator)

    assert response.status_code == 403
    assert response.json() == {"message": "Missing Access", "code": 50001}


def test_a_429_fault_looks_like_discords_with_its_retry_after(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 429, "retry_after": 2.5})

    response = _send(api, emulator)

    assert response.status_code == 429
    assert response.json() == {
        "message": "You are being rate limited.",
        "retry_after": 2.5,
        "global": False,
        "code": 0,
    }
    assert response.headers["Retry-After"] == "3"
    assert response.headers["X-RateLimit-Scope"] == "user"
    assert response.headers["Via"] == "1.1 google"
    # The bucket has room: a 429 with Remaining above 0 is what Discord calls a sub-limit.
    assert response.headers["X-RateLimit-Remaining"] == "5"


def test_a_global_429_fault_says_so(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 429, "global": True})

    response = _send(api, emulator)

    assert response.json()["global"] is True
    assert response.headers["X-RateLimit-Global"] == "true"
    assert response.headers["X-RateLimit-Scope"] == "global"


def test_a_cloudflare_fault_is_the_html_ban_page(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 429, "cloudflare": True})

    response = _send(api, emulator)

    assert response.status_code == 429
    assert response.headers["Content-Type"].startswith("text/html")
    assert "Via" not in response.headers
    assert "Retry-After" not in response.headers
    assert "1015" in response.text


def test_faults_queue_in_the_order_they_were_added(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 500})
    control.post("/faults", json={"route": CREATE, "status": 503})

    statuses = [_send(api, emulator).status_code for _ in range(3)]

    assert statuses == [500, 503, 200]


def test_the_fault_state_shows_what_is_pending(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    answer = control.post("/faults", json={"route": CREATE, "status": 500, "count": 2}).json()
    _send(api, emulator)
    later = control.get("/faults").json()

    assert answer["route_faults"] == [{"route": CREATE, "status": 500, "count": 2}]
    assert later["route_faults"] == [{"route": CREATE, "status": 500, "count": 1}]
    assert later["rate_limit_scale"] == 1.0
    assert later["strict_archived_threads"] is False


def test_several_settings_combine_in_one_request(control: httpx.Client) -> None:
    state = control.post(
        "/faults",
        json={
            "route": CREATE,
            "status": 500,
            "rate_limit_scale": 0.01,
            "strict_archived_threads": True,
        },
    ).json()

    assert state["rate_limit_scale"] == 0.01
    assert state["strict_archived_threads"] is True
    assert len(state["route_faults"]) == 1


def test_clear_drops_pending_faults(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"route": CREATE, "status": 500, "count": 5})

    state = control.post("/faults", json={"clear": True}).json()

    assert state["route_faults"] == []
    assert _send(api, emulator).status_code == 200


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        ({"route": "POST /nowhere", "status": 500}, "unknown route"),
        ({"route": CREATE}, "'status'"),
        ({"route": CREATE, "status": 200}, "'status'"),
        ({"route": CREATE, "status": 500, "count": 0}, "'count'"),
        ({"route": CREATE, "status": 500, "retry_after": 1}, "need status 429"),
        ({"status": 500}, "need a 'route'"),
        ({"rate_limit_scale": 0}, "'rate_limit_scale'"),
        ({"strict_archived_threads": "yes"}, "'strict_archived_threads'"),
        ({"surprise": True}, "unknown field"),
        ({}, "at least one"),
    ],
)
def test_a_bad_fault_request_is_400_with_a_clear_message_and_changes_nothing(
    control: httpx.Client, body: dict[str, Any], complaint: str
) -> None:
    # The valid scale rides along to show that a bad body applies none of its parts.
    response = control.post("/faults", json={"rate_limit_scale": 0.5, **body} if body else body)

    assert response.status_code == 400
    assert complaint in response.json()["error"]
    assert control.get("/faults").json()["rate_limit_scale"] == 1.0
