"""Who may call the HTTP transport: a request whose ``Host`` is not this server (DNS rebinding),
or whose ``Origin`` is a web page elsewhere, is refused with 403 and a sentence before it
reaches MCP; the bearer token is matched as HTTP says (the scheme in any case)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from discord_mcp.cli import main
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import ConfigError
from discord_mcp.server.app import http_app
from discord_mcp.server.http_guard import HttpAccess, HttpGuard, access_from
from tests.server.test_http import serving
from tests.server.test_serve_http import INITIALIZE, MCP_HEADERS
from tests.support.settings import settings_for

PORT = 8765


def refusal(access: HttpAccess, **headers: str) -> tuple[int, str] | None:
    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("never called")

    raw = [(k.replace("_", "-").lower().encode(), v.encode("latin-1")) for k, v in headers.items()]
    return HttpGuard(app, access).refusal(raw)


LOCAL = HttpAccess(host="127.0.0.1", port=PORT)


@pytest.mark.parametrize(
    "host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}", f"LocalHost:{PORT}"]
)
def test_loopback_names_with_the_servers_port_are_answered(host: str) -> None:
    assert refusal(LOCAL, host=host) is None


@pytest.mark.parametrize(
    "host",
    [
        f"evil.example:{PORT}",  # a rebound DNS name
        "evil.example",
        f"localhost:{PORT + 1}",  # another port is another server
        "localhost",  # no port: port 80
        f"127.0.0.1.evil.example:{PORT}",
        f"localhost.:{PORT}",
        f"[::1]x:{PORT}",
        f"localhost:{PORT}:{PORT}",
        f"localhost:0{PORT}0",
        f"user@localhost:{PORT}",
        "",
    ],
)
def test_a_host_that_is_not_this_server_is_refused_with_a_sentence(host: str) -> None:
    refused = refusal(LOCAL, host=host)
    assert refused is not None
    status, sentence = refused
    assert status == 403
    assert "Host header" in sentence
    assert f"localhost:{PORT}" in sentence
    assert "--allowed-host" in sentence


def test_a_request_without_a_host_or_with_two_is_refused() -> None:
    missing = refusal(LOCAL)
    assert missing is not None
    assert missing[0] == 403

    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("never called")

    two = [(b"host", f"localhost:{PORT}".encode()), (b"host", b"evil.example")]
    assert HttpGuard(app, LOCAL).refusal(two) is not None


def test_the_bound_address_and_the_names_the_user_allowed_are_answered() -> None:
    access = HttpAccess(
        host="192.168.1.4", port=PORT, allowed_hosts=("mcp.example", "tunnel.example:443")
    )
    assert refusal(access, host=f"192.168.1.4:{PORT}") is None
    assert refusal(access, host=f"localhost:{PORT}") is None
    assert refusal(access, host="mcp.example") is None
    assert refusal(access, host="MCP.example:9999") is None  # a name alone: any port
    assert refusal(access, host="tunnel.example:443") is None
    assert refusal(access, host="tunnel.example:444") is not None
    assert refusal(access, host=f"192.168.1.5:{PORT}") is not None
    everywhere = HttpAccess(host="0.0.0.0", port=PORT, token="t0ken-t0ken")
    unspecified = refusal(everywhere, host=f"0.0.0.0:{PORT}", authorization="Bearer t0ken-t0ken")
    assert unspecified is not None  # 0.0.0.0 is no address a client connects to
    assert refusal(everywhere, host=f"[::1]:{PORT}", authorization="Bearer t0ken-t0ken") is None


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        f"http://evil.example:{PORT}",  # the rebound page itself
        f"http://localhost:{PORT + 1}",  # another server on this machine
        f"https://localhost:{PORT}",
        "null",  # a sandboxed frame, a file: page
        f"http://localhost:{PORT}/path",
        f"http://user@localhost:{PORT}",
        "",
    ],
)
def test_a_web_page_of_another_origin_is_refused_with_a_sentence(origin: str) -> None:
    refused = refusal(LOCAL, host=f"localhost:{PORT}", origin=origin)
    assert refused is not None
    status, sentence = refused
    assert status == 403
    assert "another origin" in sentence
    assert "--allowed-origin" in sentence


def test_no_origin_and_this_servers_own_origin_are_answered() -> None:
    assert refusal(LOCAL, host=f"localhost:{PORT}") is None
    for origin in (f"http://localhost:{PORT}", f"http://127.0.0.1:{PORT}", f"HTTP://[::1]:{PORT}"):
        assert refusal(LOCAL, host=f"localhost:{PORT}", origin=origin) is None, origin


def test_origins_the_user_allowed_are_answered() -> None:
    access = HttpAccess(
        host="127.0.0.1", port=PORT, allowed_origins=("https://tools.example", "http://a.b:81/")
    )
    assert refusal(access, host=f"localhost:{PORT}", origin="https://tools.example") is None
    assert refusal(access, host=f"localhost:{PORT}", origin="https://tools.example:443") is None
    assert refusal(access, host=f"localhost:{PORT}", origin="http://a.b:81") is None
    assert refusal(access, host=f"localhost:{PORT}", origin="http://tools.example") is not None


TOKEN = "s3cret-t0ken"
GUARDED = HttpAccess(host="127.0.0.1", port=PORT, token=TOKEN)


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER {TOKEN}", f"  beaRer   {TOKEN}  "],
)
def test_the_bearer_scheme_is_matched_in_any_case(authorization: str) -> None:
    assert refusal(GUARDED, host=f"localhost:{PORT}", authorization=authorization) is None


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", TOKEN],
)
def test_without_the_token_a_request_is_refused_with_401(authorization: str | None) -> None:
    headers = {"host": f"localhost:{PORT}"}
    if authorization is not None:
        headers["authorization"] = authorization
    refused = refusal(GUARDED, **headers)
    assert refused is not None
    assert refused[0] == 401
    assert "Authorization: Bearer" in refused[1]


def test_the_host_and_origin_are_checked_before_the_token() -> None:
    refused = refusal(GUARDED, host="evil.example", authorization=f"Bearer {TOKEN}")
    assert refused is not None
    assert refused[0] == 403


@pytest.mark.parametrize(
    ("hosts", "origins"),
    [(("*",), ()), (("http://mcp.example",), ()), (("a/b",), ()), (("::1",), ())]
    + [((), (o,)) for o in ("*", "mcp.example", "https://x.example/path", "null", "ftp://x")],
)
def test_an_allowed_name_or_origin_that_is_not_one_is_a_configuration_error(
    hosts: tuple[str, ...], origins: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError):
        HttpAccess(host="127.0.0.1", port=PORT, allowed_hosts=hosts, allowed_origins=origins)


def test_the_environment_adds_names_and_origins_to_the_flags() -> None:
    access = access_from(
        {
            "DISCORD_MCP_HTTP_ALLOWED_HOSTS": " one.example , two.example:8 ,",
            "DISCORD_MCP_HTTP_ALLOWED_ORIGINS": "https://three.example",
        },
        host="127.0.0.1",
        port=PORT,
        token=None,
        allowed_hosts=["flag.example"],
    )
    assert access.allowed_hosts == ("flag.example", "one.example", "two.example:8")
    assert access.allowed_origins == ("https://three.example",)


def test_serve_http_refuses_to_start_with_a_bad_allowed_origin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISCORD_MCP_HTTP_ALLOWED_ORIGINS", "*")
    assert main(["serve", "--http", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "'*' is not an origin" in err
    assert "Traceback" not in err


async def test_the_served_app_refuses_a_rebound_name_and_a_foreign_page(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with serving(lambda access: http_app(settings, access)) as url:
        port = httpx.URL(url).port
        async with httpx.AsyncClient(headers=MCP_HEADERS) as client:
            rebound = await client.post(
                url, json=INITIALIZE, headers={"Host": f"evil.example:{port}"}
            )
            assert rebound.status_code == 403
            assert "Host header" in rebound.json()["error"]
            foreign = await client.post(
                url, json=INITIALIZE, headers={"Origin": "http://evil.example"}
            )
            assert foreign.status_code == 403
            assert "another origin" in foreign.json()["error"]
            own = await client.post(
                url, json=INITIALIZE, headers={"Origin": f"http://localhost:{port}"}
            )
            assert own.status_code == 200
            assert own.headers["mcp-session-id"]
