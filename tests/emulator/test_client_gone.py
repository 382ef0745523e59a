"""A client that disappears in the middle of sending a request is simply gone, as on Discord."""

from __future__ import annotations

import logging
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator


def test_a_request_cut_off_mid_body_is_dropped_quietly(
    emulator: RunningEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    url = urlsplit(emulator.api_base)
    head = (
        f"POST {url.path}/channels/{emulator.channel_id}/messages HTTP/1.1\r\n"
        f"Host: {url.netloc}\r\nAuthorization: Bot {emulator.token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n"
    )
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head.encode() + b'{"content": "half a messa')
    # The next request is served as usual: the emulator did not trip over the lost one.
    response = httpx.get(
        f"{emulator.api_base}/channels/{emulator.channel_id}/messages",
        headers={"Authorization": f"Bot {emulator.token}"},
        timeout=10,
    )
    assert response.status_code == 200
    assert response.json() == []
    assert not [r for r in caplog.records if "Exception in ASGI application" in r.getMessage()]
