"""The OpenAPI checker judges exchanges by Discord's spec, with only its listed allowances."""

from __future__ import annotations

import json
from typing import Any

import pytest

from discord_mcp.emulator import Exchange
from tests.support.discord_bodies import CHANNEL
from tests.support.discord_bodies import message as _message
from tests.support.discord_bodies import user as _user
from tests.support.openapi_check import OpenAPIChecker

JSON_HEADERS = {"Content-Type": "application/json"}


def _exchange(
    method: str = "POST",
    path: str = f"/channels/{CHANNEL}/messages",
    *,
    status: int = 200,
    request: Any = None,
    response: Any = None,
    query: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> Exchange:
    return Exchange(
        method=method,
        path=path,
        query=query or {},
        request_json=request,
        status=status,
        response_json=response,
        response_headers=JSON_HEADERS if headers is None else headers,
    )


def _problems(exchange: Exchange, **options: Any) -> list[str]:
    return [str(v) for v in OpenAPIChecker(**options).check(exchange)]


def test_a_well_formed_message_exchange_passes() -> None:
    exchange = _exchange(request={"content": "hi"}, response=_message())

    assert _problems(exchange) == []


def test_a_message_without_an_author_is_caught() -> None:
    exchange = _exchange(request={"content": "hi"}, response=_message(author=...))

    problems = _problems(exchange)

    assert len(problems) == 1
    assert "'author' is a required property" in problems[0]


def test_a_user_without_primary_guild_is_caught() -> None:
    exchange = _exchange(
        "GET", "/users/1191168914227200002", response=_user(primary_guild=...), headers=JSON_HEADERS
    )

    assert any("primary_guild" in p for p in _problems(exchange))


def test_users_me_is_judged_as_the_current_user_not_users_by_id() -> None:
    # UserPIIResponse requires mfa_enabled and locale; UserResponse does not.
    exchange = _exchange("GET", "/users/@me", response=_user())

    problems = _problems(exchange)

    assert any("mfa_enabled" in p for p in problems)


def test_a_request_the_spec_rejects_is_fine_when_the_emulator_rejected_it_too() -> None:
    too_long = {"content": "x" * 4001}
    error = {"message": "Invalid Form Body", "code": 50035}

    rejected = _exchange(request=too_long, status=400, response=error)
    accepted = _exchange(request=too_long, response=_message())

    assert _problems(rejected) == []
    assert any("request body" in p for p in _problems(accepted))
    assert any("request body" in p for p in _problems(rejected, strict_requests=True))


def test_an_undeclared_query_parameter_is_caught() -> None:
    exchange = _exchange(
        "GET", f"/channels/{CHANNEL}/messages", query={"page": "2"}, response=[_message()]
    )

    assert any("'page' is not in the spec" in p for p in _problems(exchange))


def test_a_query_parameter_out_of_range_is_caught_when_accepted() -> None:
    exchange = _exchange(
        "GET", f"/channels/{CHANNEL}/messages", query={"limit": "101"}, response=[]
    )

    assert any("query parameter limit" in p for p in _problems(exchange))


def test_a_path_that_discord_does_not_have_is_caught_when_answered_with_success() -> None:
    exchange = _exchange("GET", "/no/such/route", response={})

    assert any("no path matching" in p for p in _problems(exchange))


def test_an_error_body_on_an_unknown_path_must_still_be_discords() -> None:
    good = _exchange("GET", "/nope", status=404, response={"message": "404: Not Found", "code": 0})
    bad = _exchange("GET", "/nope", status=404, response={"error": "not found"})

    assert _problems(good) == []
    assert _problems(bad) != []


def test_a_status_the_operation_does_not_list_is_caught() -> None:
    exchange = _exchange(request={"content": "hi"}, status=201, response=_message())

    assert any("no 201 response" in p for p in _problems(exchange))


def test_a_429_body_without_code_is_caught() -> None:
    body = {"message": "You are being rate limited.", "retry_after": 1.0, "global": False}

    assert any("'code'" in p for p in _problems(_exchange(status=429, response=body)))


def test_the_cloudflare_html_ban_and_server_errors_are_allowed() -> None:
    ban = _exchange(status=429, headers={"Content-Type": "text/html; charset=UTF-8"})
    server_error = _exchange(status=502, response={"message": "502: Bad Gateway", "code": 0})

    assert _problems(ban) == []
    assert _problems(server_error) == []


def test_a_rate_limit_header_of_the_wrong_type_is_caught() -> None:
    headers = JSON_HEADERS | {"X-RateLimit-Limit": "five", "X-RateLimit-Reset-After": "1.5"}

    problems = _problems(_exchange(request={"content": "hi"}, response=_message(), headers=headers))

    assert len(problems) == 1
    assert "X-RateLimit-Limit" in problems[0]


def test_a_body_on_a_204_is_caught() -> None:
    exchange = _exchange(
        "PUT",
        f"/channels/{CHANNEL}/messages/1/reactions/%E2%9C%85/@me",
        status=204,
        response={"ok": True},
    )

    assert any("there is none" in p for p in _problems(exchange))


@pytest.mark.parametrize(("code", "allowed"), [("BASE_TYPE_MAX_LENGTH", True), ("oops", False)])
def test_field_error_codes_may_be_the_docs_strings(code: str, allowed: bool) -> None:
    body = {
        "message": "Invalid Form Body",
        "code": 50035,
        "errors": {"content": {"_errors": [{"code": code, "message": "Must be 2000 or fewer."}]}},
    }

    problems = _problems(_exchange(request={"content": "x"}, status=400, response=body))

    assert (problems == []) is allowed


def test_a_checker_used_as_a_hook_collects_a_readable_report() -> None:
    checker = OpenAPIChecker()

    checker(_exchange(request={"content": "hi"}, response=_message()))
    checker(_exchange(request={"content": "hi"}, response=_message(author=...)))

    assert checker.exchanges == 2
    report = checker.report()
    assert report.startswith("1 problem(s) against Discord's OpenAPI spec:")
    assert f"POST /channels/{CHANNEL}/messages -> 200" in report


def _multipart(payload: str, *, file_name: str = "files[0]") -> tuple[str, bytes]:
    """A multipart body as a client sends it: payload_json and one file."""
    body = (
        b"--b0undary\r\n"
        b'Content-Disposition: form-data; name="payload_json"\r\n'
        b"Content-Type: application/json\r\n\r\n" + payload.encode() + b"\r\n"
        b"--b0undary\r\n"
        b'Content-Disposition: form-data; name="' + file_name.encode() + b'"; filename="a.txt"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
        b"hello\r\n"
        b"--b0undary--\r\n"
    )
    return "multipart/form-data; boundary=b0undary", body


def _multipart_exchange(payload: str) -> Exchange:
    content_type, body = _multipart(payload)
    return Exchange(
        method="POST",
        path=f"/channels/{CHANNEL}/messages",
        query={},
        request_json=None,
        status=200,
        response_json=_message(),
        response_headers=JSON_HEADERS,
        request_content_type=content_type,
        request_body=body,
    )


def test_a_multipart_message_is_judged_by_its_payload_json() -> None:
    good = json.dumps({"content": "hi", "attachments": [{"id": 0, "filename": "a.txt"}]})
    bad = json.dumps({"content": "hi", "tts": "loudly"})

    assert _problems(_multipart_exchange(good)) == []
    assert any("tts" in problem for problem in _problems(_multipart_exchange(bad)))


def test_a_multipart_payload_json_that_is_not_json_is_caught() -> None:
    problems = _problems(_multipart_exchange("{nope"))

    assert any("payload_json is not JSON" in problem for problem in problems)


def test_a_command_with_string_permissions_is_judged_as_the_docs_write_it() -> None:
    command = {"name": "status", "description": "s"}
    path = "/applications/1191168914227200001/commands"

    as_docs = _exchange("POST", path, request=command | {"default_member_permissions": "8"})
    wrong = _exchange("POST", path, request=command | {"default_member_permissions": "eight"})

    assert not any("request body" in p for p in _problems(as_docs))
    assert any("default_member_permissions" in p for p in _problems(wrong))


def test_a_dm_recipient_may_be_a_number_but_never_a_word() -> None:
    dm = {
        "id": "1191168914227200009",
        "type": 1,
        "flags": 0,
        "last_message_id": None,
        "recipients": [_user(id="1191168914227200002")],
    }
    number = _exchange(
        "POST", "/users/@me/channels", request={"recipient_id": 1191168914227200002}, response=dm
    )
    word = _exchange("POST", "/users/@me/channels", request={"recipient_id": "me"}, response=dm)
    no_recipients = _exchange(
        "POST",
        "/users/@me/channels",
        request={"recipient_id": "1191168914227200002"},
        response={k: v for k, v in dm.items() if k != "recipients"},
    )

    assert _problems(number) == []
    assert any("recipient_id" in p for p in _problems(word))
    assert any("response body" in p for p in _problems(no_recipients))
