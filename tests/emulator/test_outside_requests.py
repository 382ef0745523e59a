"""Nobody outside drives the emulator: a web page on another origin cannot act as the owner
or read the state, a rebound DNS name cannot reach it, and files people and agents post cannot
run script on its origin. Requests are sent as a browser sends them (``Origin`` and
``Sec-Fetch-*`` headers)."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Callable

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator, start_in_thread

EVIL = "http://evil.example"


def cross_site(origin: str = EVIL, *, site: str = "cross-site", mode: str = "no-cors") -> dict:
    return {"Origin": origin, "Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": ""}


def owner_messages(emulator: RunningEmulator) -> list[str]:
    url = f"{emulator.base_url}/_emulator/channels/{emulator.channel_id}/messages"
    return [m["content"] for m in httpx.get(url).json()]


def test_a_cross_site_text_plain_post_cannot_speak_as_the_owner(emulator: RunningEmulator) -> None:
    url = f"{emulator.base_url}/_emulator/channels/{emulator.channel_id}/messages"
    body = f'{{"author_id": "{emulator.owner_user_id}", "content": "!start demo rm -rf"}}'
    answer = httpx.post(url, content=body, headers={"Content-Type": "text/plain"} | cross_site())
    assert answer.status_code == 403
    assert "another site" in answer.json()["error"]
    assert "access-control-allow-origin" not in answer.headers
    assert "!start demo rm -rf" not in owner_messages(emulator)


def test_another_port_on_the_same_host_is_another_origin(emulator: RunningEmulator) -> None:
    # Same-site for a browser (ports do not make sites), but another origin.
    other = f"http://127.0.0.1:{emulator.port + 1}"
    answer = httpx.post(
        f"{emulator.base_url}/_emulator/users",
        json={"username": "mallory"},
        headers=cross_site(other, site="same-site", mode="cors"),
    )
    assert answer.status_code == 403
    assert "mallory" not in [
        u["username"] for u in httpx.get(emulator.base_url + "/_emulator/state").json()["users"]
    ]


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""],
)
def test_a_control_request_that_is_not_json_is_refused_with_a_sentence(
    emulator: RunningEmulator, content_type: str
) -> None:
    body = f'{{"user_id": "{emulator.owner_user_id}", "message_id": "1", "custom_id": "a"}}'
    headers = {"Content-Type": content_type} if content_type else {}
    answer = httpx.post(
        emulator.base_url + "/_emulator/interactions", content=body, headers=headers
    )
    assert answer.status_code == 415
    assert "application/json" in answer.json()["error"]


def test_the_page_itself_is_same_origin_and_may_act(emulator: RunningEmulator) -> None:
    answer = httpx.post(
        f"{emulator.base_url}/_emulator/channels/{emulator.channel_id}/messages",
        json={"author_id": emulator.owner_user_id, "content": "hello from the page"},
        headers={
            "Origin": emulator.base_url,
            "Sec-Fetch-Site": "same-origin",
            "Sec-Fetch-Mode": "cors",
        },
    )
    assert answer.status_code == 200, answer.text
    assert "hello from the page" in owner_messages(emulator)


@pytest.mark.parametrize("path", ["/state", "/feed", "/faults", "/commands"])
def test_another_origin_cannot_read_the_state_or_the_feed(
    emulator: RunningEmulator, path: str
) -> None:
    with httpx.stream(
        "GET", emulator.base_url + "/_emulator" + path, headers=cross_site(mode="cors")
    ) as answer:
        assert answer.status_code == 403
        assert "access-control-allow-origin" not in answer.headers


def test_nothing_answers_with_cors_headers(emulator: RunningEmulator) -> None:
    headers = {"Origin": EVIL, "Access-Control-Request-Method": "POST"}
    for method in ("GET", "OPTIONS"):
        answer = httpx.request(method, emulator.base_url + "/_emulator/state", headers=headers)
        assert not any(h.startswith("access-control-") for h in answer.headers)


def test_a_rebound_dns_name_is_refused(emulator: RunningEmulator) -> None:
    # DNS rebinding: evil.example now resolves to 127.0.0.1, so the browser thinks the page and
    # the emulator share an origin; only the Host header tells.
    rebound = {"Host": f"evil.example:{emulator.port}"}
    for path in ("/_emulator/state", "/", f"/api/v10/channels/{emulator.channel_id}"):
        answer = httpx.get(
            emulator.base_url + path,
            headers=rebound | {"Authorization": f"Bot {emulator.token}"},
        )
        assert answer.status_code == 403, path
        assert "Host" in answer.text
    for host in (f"localhost:{emulator.port}", f"127.0.0.1:{emulator.port}"):
        assert httpx.get(emulator.base_url + "/_emulator/state", headers={"Host": host}).is_success


def test_discords_rest_routes_still_answer_a_bot_from_anywhere(emulator: RunningEmulator) -> None:
    answer = httpx.post(
        f"{emulator.api_base}/channels/{emulator.channel_id}/messages",
        json={"content": "from a bot"},
        headers={"Authorization": f"Bot {emulator.token}", "Origin": EVIL},
    )
    assert answer.status_code == 200
    refused = httpx.get(f"{emulator.api_base}/channels/{emulator.channel_id}", headers=cross_site())
    assert refused.status_code == 401  # no token: Discord's own answer


def test_a_foreign_page_cannot_open_the_gateway(emulator: RunningEmulator) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with pytest.raises(InvalidStatus) as refused:
        connect(emulator.gateway_url + "?v=10&encoding=json", origin=EVIL, open_timeout=5)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    with connect(emulator.gateway_url + "?v=10&encoding=json", open_timeout=5) as bot:
        assert '"op":10' in str(bot.recv(timeout=5)).replace(" ", "")


# -- a control token, required beyond loopback ------------------------------------------------


def test_binding_beyond_loopback_requires_a_control_token() -> None:
    with pytest.raises(ValueError, match="control token"):
        start_in_thread("0.0.0.0", 0)


def test_the_cli_warns_and_refuses_a_public_address_without_a_token() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "discord_mcp", "emulator", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        encoding="utf-8",
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no authentication" in done.stderr
    assert "--control-token" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_a_control_token_every_control_request_needs_it(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    discord = make_emulator(control_token="open-sesame-1234")
    state = discord.base_url + "/_emulator/state"
    assert httpx.get(state).status_code == 401
    assert "control token" in httpx.get(state).json()["error"]
    assert httpx.get(state, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(state, headers={"Authorization": "Bearer open-sesame-1234"}).is_success
    assert httpx.get(discord.base_url + "/").status_code == 401
    page = httpx.get(discord.base_url + "/?token=open-sesame-1234")
    assert page.is_success
    assert 'name="emulator-control-token" content="open-sesame-1234"' in page.text
    # Discord's own routes keep the bot token.
    api = httpx.get(
        f"{discord.api_base}/channels/{discord.channel_id}",
        headers={"Authorization": f"Bot {discord.token}"},
    )
    assert api.is_success


# -- what people and agents post is never run on the page's origin ----------------------------


def _posted(emulator: RunningEmulator, filename: str, data: bytes, content_type: str) -> dict:
    answer = httpx.post(
        f"{emulator.base_url}/_emulator/channels/{emulator.channel_id}/messages",
        json={
            "author_id": emulator.owner_user_id,
            "attachments": [
                {
                    "filename": filename,
                    "data_base64": base64.b64encode(data).decode(),
                    "content_type": content_type,
                }
            ],
        },
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["attachments"][0])


def test_an_html_attachment_downloads_sandboxed_and_unsniffed(emulator: RunningEmulator) -> None:
    html = b"<script>fetch('/_emulator/users',{method:'POST'})</script>"
    attachment = _posted(emulator, "report.html", html, "text/html")
    for url in (attachment["url"], attachment["proxy_url"]):
        answer = httpx.get(url)
        assert answer.status_code == 200
        assert answer.content == html
        assert answer.headers["content-disposition"].startswith("attachment")
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "sandbox" in answer.headers["content-security-policy"]


def test_an_image_stays_inline_and_plain_text_is_sandboxed(emulator: RunningEmulator) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    )
    image = httpx.get(_posted(emulator, "shot.png", png, "image/png")["url"])
    assert image.headers["x-content-type-options"] == "nosniff"
    assert "attachment" not in image.headers.get("content-disposition", "")
    text = httpx.get(_posted(emulator, "log.txt", b"ok\n", "text/plain")["url"])
    assert text.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in text.headers["content-security-policy"]
    assert "attachment" not in text.headers.get("content-disposition", "")
    svg = httpx.get(_posted(emulator, "x.svg", b"<svg onload='alert(1)'/>", "image/svg+xml")["url"])
    assert svg.headers["content-disposition"].startswith("attachment")
    assert "sandbox" in svg.headers["content-security-policy"]


def test_the_page_forbids_inline_script(emulator: RunningEmulator) -> None:
    page = httpx.get(emulator.base_url + "/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "<script>" not in page.text
    assert " on" + "click=" not in page.text


def test_the_tests_own_clients_carry_the_control_token(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    from tests.support.people import People

    discord = make_emulator(control_token="support-token-99")
    people = People(discord)
    try:
        people.say(discord.channel_id, "with the token")
        assert [m["content"] for m in people.messages(discord.channel_id)] == ["with the token"]
    finally:
        people.close()
