"""Rate limits as Discord applies them: buckets per major parameter, global, invalid requests."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import quote

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.emulator.ratelimit import RateLimiter
from discord_mcp.emulator.rest import major_parameter
from tests.emulator.conftest import bot_client, control_client, until_not_429

RATE_LIMIT_HEADERS = (
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "X-RateLimit-Reset-After",
    "X-RateLimit-Bucket",
)


def _send(api: httpx.Client, channel_id: str) -> httpx.Response:
    return api.post(f"/channels/{channel_id}/messages", json={"content": "tick"})


def _exhaust(api: httpx.Client, channel_id: str) -> list[httpx.Response]:
    """Six messages in one 5-second window: five go through, the sixth is refused."""
    return [_send(api, channel_id) for _ in range(6)]


def _thread(api: httpx.Client, running: RunningEmulator) -> str:
    response = api.post(f"/channels/{running.channel_id}/threads", json={"name": "other"})
    return str(response.json()["id"])


def test_a_limited_response_carries_the_five_rate_limit_headers(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    before = time.time()
    response = _send(api, emulator.channel_id)

    for header in RATE_LIMIT_HEADERS:
        assert header in response.headers, header
    assert response.headers["X-RateLimit-Limit"] == "5"
    assert response.headers["X-RateLimit-Remaining"] == "4"
    reset_after = float(response.headers["X-RateLimit-Reset-After"])
    assert 0 < reset_after <= 5
    assert float(response.headers["X-RateLimit-Reset"]) > before
    assert emulator.channel_id not in response.headers["X-RateLimit-Bucket"]


def test_remaining_counts_down_within_a_window(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    responses = _exhaust(api, emulator.channel_id)

    remaining = [r.headers["X-RateLimit-Remaining"] for r in responses]
    assert remaining == ["4", "3", "2", "1", "0", "0"]


def test_the_sixth_message_in_a_window_is_429_with_discords_body_and_headers(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    refused = _exhaust(api, emulator.channel_id)[-1]

    assert refused.status_code == 429
    body = refused.json()
    assert body["message"] == "You are being rate limited."
    assert body["global"] is False
    assert body["code"] == 0
    assert 0 < body["retry_after"] <= 5
    assert refused.headers["Retry-After"] == str(max(1, int(-(-body["retry_after"] // 1))))
    assert refused.headers["X-RateLimit-Scope"] == "user"
    assert refused.headers["Via"] == "1.1 google"
    assert "X-RateLimit-Global" not in refused.headers
    for header in RATE_LIMIT_HEADERS:
        assert header in refused.headers, header


def test_a_refused_request_has_no_effect(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    _exhaust(api, emulator.channel_id)

    history = control.get(f"/channels/{emulator.channel_id}/messages").json()

    assert len(history) == 5


def test_each_channel_is_limited_on_its_own_under_the_same_bucket(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    other = _thread(api, emulator)
    first_channel = _exhaust(api, emulator.channel_id)

    other_channel = _send(api, other)

    assert first_channel[-1].status_code == 429
    assert other_channel.status_code == 200
    assert other_channel.headers["X-RateLimit-Remaining"] == "4"
    assert (
        other_channel.headers["X-RateLimit-Bucket"]
        == first_channel[0].headers["X-RateLimit-Bucket"]
    )


def test_different_routes_have_different_buckets(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    post = _send(api, emulator.channel_id)
    listing = api.get(f"/channels/{emulator.channel_id}/messages")

    assert post.headers["X-RateLimit-Bucket"] != listing.headers["X-RateLimit-Bucket"]


def test_the_window_reopens_once_it_has_passed(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    assert _exhaust(api, emulator.channel_id)[-1].status_code == 429

    # Shrinking the scale shortens the open window too: 5 s becomes 0.5 ms.
    control.post("/faults", json={"rate_limit_scale": 0.0001})
    response = until_not_429(lambda: _send(api, emulator.channel_id))

    assert response.status_code == 200


def test_windows_are_multiplied_by_the_rate_limit_scale(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(rate_limit_scale=0.5)
    with bot_client(running) as api:
        responses = _exhaust(api, running.channel_id)

    assert float(responses[0].headers["X-RateLimit-Reset-After"]) <= 2.5
    assert responses[-1].status_code == 429
    assert responses[-1].json()["retry_after"] <= 2.5


def test_own_reactions_allow_one_request_per_quarter_second_in_one_bucket(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    # Scaled up to 2 s so the second request surely lands in the first one's window.
    running = make_emulator(rate_limit_scale=8.0)
    with bot_client(running) as api:
        message = _send(api, running.channel_id).json()
        base = f"/channels/{running.channel_id}/messages/{message['id']}/reactions"

        added = api.put(f"{base}/{quote('👍')}/@me")
        removed = api.delete(f"{base}/{quote('👍')}/@me")

    assert added.status_code == 204
    assert added.headers["X-RateLimit-Limit"] == "1"
    assert removed.status_code == 429
    assert removed.headers["X-RateLimit-Bucket"] == added.headers["X-RateLimit-Bucket"]
    assert float(removed.json()["retry_after"]) <= 0.25 * 8


def test_the_global_limit_answers_429_with_global_true(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    # A 5-second global window (scale 5), so the four requests surely share it.
    running = make_emulator(global_limit=3, rate_limit_scale=5.0)
    with bot_client(running) as api:
        allowed = [api.get("/users/@me"), api.get("/gateway/bot"), api.get("/users/@me")]
        refused = api.get(f"/channels/{running.channel_id}")

    assert [r.status_code for r in allowed] == [200, 200, 200]
    assert refused.status_code == 429
    assert refused.json()["global"] is True
    assert refused.headers["X-RateLimit-Global"] == "true"
    assert refused.headers["X-RateLimit-Scope"] == "global"
    assert refused.headers["Via"] == "1.1 google"
    assert "X-RateLimit-Bucket" not in refused.headers


def test_interaction_callbacks_and_followups_are_outside_the_global_limit(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(global_limit=1, rate_limit_scale=5.0)
    with bot_client(running) as api:
        api.get("/users/@me")
        assert api.get("/users/@me").status_code == 429

        callback = api.post("/interactions/123/token/callback", json={"type": 6})
        followup = api.post(f"/webhooks/{running.application_id}/token", json={"content": "x"})

    assert callback.status_code == 404
    assert callback.json()["code"] == 10062
    assert followup.status_code == 404
    assert followup.json()["code"] == 10015


def test_429s_are_counted_in_the_stats(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    _exhaust(api, emulator.channel_id)

    stats = control.get("/state").json()["stats"]

    assert stats["rest_429"] == 1
    assert stats["rest_requests"] == 6


def test_too_many_invalid_requests_get_the_cloudflare_ban(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(invalid_request_limit=3)
    for _ in range(3):
        assert httpx.get(running.api_base + "/users/@me").status_code == 401

    with bot_client(running) as api:
        banned = api.get("/users/@me")
    with control_client(running) as control:
        stats = control.get("/state").json()["stats"]

    assert banned.status_code == 429
    assert banned.headers["Content-Type"].startswith("text/html")
    assert "Via" not in banned.headers
    assert not [h for h in banned.headers if h.lower().startswith("x-ratelimit")]
    with pytest.raises(ValueError, match="Expecting value"):
        banned.json()
    assert stats["cloudflare_banned"] is True


def test_429s_count_toward_the_ban_too(make_emulator: Callable[..., RunningEmulator]) -> None:
    running = make_emulator(invalid_request_limit=2)
    with bot_client(running) as api:
        responses = [_send(api, running.channel_id) for _ in range(7)]
        after = api.get("/users/@me")

    assert [r.status_code for r in responses] == [200] * 5 + [429, 429]
    assert after.status_code == 429
    assert after.headers["Content-Type"].startswith("text/html")


def test_shared_scope_429s_do_not_count_toward_the_ban(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(invalid_request_limit=2)
    with control_client(running) as control:
        control.post(
            "/faults",
            json={"route": "GET /users/@me", "status": 429, "count": 3, "scope": "shared"},
        )
    with bot_client(running) as api:
        shared = [api.get("/users/@me") for _ in range(3)]
        after = api.get("/users/@me")

    assert [r.headers["X-RateLimit-Scope"] for r in shared] == ["shared"] * 3
    assert after.status_code == 200


def test_the_ban_lifts_an_hour_after_the_last_request_sent_during_it(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(invalid_request_limit=1)
    httpx.get(running.api_base + "/users/@me")
    with bot_client(running) as api, control_client(running) as control:
        assert api.get("/users/@me").status_code == 429

        # An hour x 0.00001 is 36 ms; the control API's reads are not requests to Discord.
        control.post("/faults", json={"rate_limit_scale": 0.00001})
        deadline = time.monotonic() + 5
        while control.get("/state").json()["stats"]["cloudflare_banned"]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        response = api.get("/users/@me")

    assert response.status_code == 200


def test_each_request_during_the_ban_starts_its_hour_again() -> None:
    now = [1000.0]
    limiter = RateLimiter(invalid_limit=2, clock=lambda: now[0])
    limiter.record_invalid()
    limiter.record_invalid()
    assert limiter.banned()
    assert limiter.ban_remaining() == 3600.0

    now[0] += 3000.0
    assert limiter.refuse_banned()  # a request 50 minutes in
    now[0] += 3000.0
    assert limiter.banned()  # so 100 minutes in, still banned
    assert limiter.ban_remaining() == 600.0
    now[0] += 600.0
    assert not limiter.banned()
    assert not limiter.refuse_banned()


def test_the_control_api_starts_and_lifts_a_ban(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator()
    with bot_client(running) as api, control_client(running) as control:
        started = control.post("/faults", json={"cloudflare_ban": True})
        banned = api.get("/users/@me")
        during = control.get("/state").json()["stats"]
        control.post("/faults", json={"cloudflare_ban": False})
        after = api.get("/users/@me")
        refused = control.post("/faults", json={"cloudflare_ban": "yes"})

    assert started.status_code == 200
    assert banned.status_code == 429
    assert banned.headers["Content-Type"].startswith("text/html")
    assert during["cloudflare_banned"] is True
    assert during["cloudflare_ban_remaining"] > 3500
    assert after.status_code == 200
    assert refused.status_code == 400


def test_the_major_parameter_is_the_channel_guild_or_webhook_and_token() -> None:
    assert major_parameter({"channel_id": "1", "message_id": "2"}) == "1"
    assert major_parameter({"guild_id": "3"}) == "3"
    assert major_parameter({"webhook_id": "4", "webhook_token": "t"}) == "4:t"
    assert major_parameter({"user_id": "5"}) == ""
