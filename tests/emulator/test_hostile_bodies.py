"""Bodies built to break the emulator are 400 with a sentence, and it keeps working after."""

from __future__ import annotations

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator

DEEP = b"[" * 100_000 + b"]" * 100_000


def still_works(emulator: RunningEmulator) -> None:
    state = httpx.get(emulator.base_url + "/_emulator/state", timeout=10)
    assert state.status_code == 200
    said = httpx.post(
        f"{emulator.api_base}/channels/{emulator.channel_id}/messages",
        json={"content": "still here"},
        headers={"Authorization": f"Bot {emulator.token}"},
    )
    assert said.status_code == 200


def test_a_user_name_with_a_lone_surrogate_is_400(emulator: RunningEmulator) -> None:
    answer = httpx.post(
        emulator.base_url + "/_emulator/users",
        content=b'{"username": "bad\\ud800name"}',
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert "surrogate" in answer.json()["error"]
    still_works(emulator)


def test_a_bot_message_with_a_lone_surrogate_is_refused_like_broken_json(
    make_emulator: object,
) -> None:
    emulator = make_emulator(check_openapi=False)  # type: ignore[operator]
    answer = httpx.post(
        f"{emulator.api_base}/channels/{emulator.channel_id}/messages",
        content=b'{"content": "half \\udc00 a pair"}',
        headers={"Authorization": f"Bot {emulator.token}", "Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    still_works(emulator)


@pytest.mark.parametrize("scale", ["1e308", "Infinity", "NaN", "-1", "0"])
def test_an_absurd_rate_limit_scale_is_400(emulator: RunningEmulator, scale: str) -> None:
    answer = httpx.post(
        emulator.base_url + "/_emulator/faults",
        content=f'{{"rate_limit_scale": {scale}}}'.encode(),
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert "rate_limit_scale" in answer.json()["error"]
    still_works(emulator)


@pytest.mark.parametrize("retry_after", ["1e308", "Infinity"])
def test_an_absurd_retry_after_is_400(emulator: RunningEmulator, retry_after: str) -> None:
    answer = httpx.post(
        emulator.base_url + "/_emulator/faults",
        content=(
            f'{{"route": "POST /channels/{{channel_id}}/messages", "status": 429, '
            f'"retry_after": {retry_after}}}'
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    still_works(emulator)


@pytest.mark.parametrize(
    "path", ["/users", "/faults", "/interactions", "/reactions", "/channels/{channel}/messages"]
)
def test_a_control_body_nested_100k_deep_is_400(emulator: RunningEmulator, path: str) -> None:
    answer = httpx.post(
        emulator.base_url + "/_emulator" + path.format(channel=emulator.channel_id),
        content=DEEP,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert "deep" in answer.json()["error"]
    still_works(emulator)


def test_a_rest_body_nested_100k_deep_is_400(make_emulator: object) -> None:
    emulator = make_emulator(check_openapi=False)  # type: ignore[operator]
    url = f"{emulator.api_base}/channels/{emulator.channel_id}/messages"
    auth = {"Authorization": f"Bot {emulator.token}"}
    as_json = httpx.post(url, content=DEEP, headers=auth | {"Content-Type": "application/json"})
    assert as_json.status_code == 400
    as_form = httpx.post(url, files={"payload_json": (None, DEEP)}, headers=auth)
    assert as_form.status_code == 400
    nested = b'{"content": "x", "embeds": ' + b"[" * 200 + b"]" * 200 + b"}"
    shallow_enough = httpx.post(
        url, content=nested, headers=auth | {"Content-Type": "application/json"}
    )
    assert shallow_enough.status_code == 400
    still_works(emulator)


def test_a_gateway_frame_nested_100k_deep_closes_only_that_connection(
    emulator: RunningEmulator,
) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(emulator.gateway_url + "?v=10&encoding=json", open_timeout=5) as client:
        client.recv(timeout=5)  # HELLO
        client.send(DEEP.decode())

        def drain() -> None:
            while True:
                client.recv(timeout=5)

        with pytest.raises(ConnectionClosed) as closed:
            drain()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4002
    still_works(emulator)
