"""What a guard hook tells the agent when it blocks a call, and how long it may take."""

from __future__ import annotations

import re

import pytest

from discord_mcp.errors import (
    ConfigError,
    DiscordServerError,
    DiscordTransportError,
    Forbidden,
    RateLimited,
    StateCorrupt,
    StateFull,
    Unauthorized,
)
from discord_mcp.hooks.guard import (
    DEFAULT_TIMEOUT_S,
    OutOfTime,
    Unreadable,
    blocked,
    budget,
    reason_for,
    scrub,
)

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhOoKs.never-printed-anywhere-at-all-0123456"
ROUTE = {"method": "POST", "route": "/channels/{channel_id}/threads"}

CASES = [
    (DiscordTransportError("POST /x: could not reach Discord (ConnectError). Check the network"),
     "Discord is unreachable (POST /x: could not reach Discord (ConnectError))"),
    (Unauthorized(401, 0, "401: Unauthorized", **ROUTE), "Discord rejected the bot token"),
    (Forbidden(403, 50001, "Missing Access", **ROUTE), "HTTP 403"),
    (RateLimited(retry_after=3600, is_global=False, **ROUTE), "rate limit holds the bot"),
    (DiscordServerError(503, 0, "unavailable", **ROUTE), "Discord is failing (HTTP 503"),
    (StateFull("the state directory is full: cannot write x. Free some space"), "disk is full"),
    (StateCorrupt("/h/decisions/x.json", "not JSON", None), "state directory cannot be used"),
    (OSError(28, "No space left on device", "/h/leases"), "state directory cannot be used"),
    (ConfigError("DISCORD_OWNER_IDS", "is not set", "Set it"), "DISCORD_OWNER_IDS is not set"),
    (OutOfTime(45), "could not be asked in time"),
    (Unreadable("the event is not JSON"), "could not read it (the event is not JSON)"),
    (KeyError("surprise"), "unexpected KeyError"),
]  # fmt: skip


@pytest.mark.parametrize(("exc", "said"), CASES)
def test_the_reason_is_one_sentence_saying_what_happened(exc: BaseException, said: str) -> None:
    reason = scrub(reason_for(exc), [TOKEN])
    assert said in reason
    assert reason.endswith(".")
    assert "\n" not in reason
    assert not re.search(r"\.\s+[A-Z]", reason)  # one sentence: no advice tacked on


def test_the_token_never_appears_in_a_reason() -> None:
    for exc in (KeyError(TOKEN), DiscordTransportError(f"could not reach {TOKEN}")):
        assert TOKEN not in scrub(reason_for(exc), [TOKEN])
    # Not known as this bot's (say, another bot's): still never printed, by its shape.
    assert TOKEN not in scrub(reason_for(DiscordTransportError(f"at {TOKEN}")), [])


@pytest.mark.parametrize(
    ("event", "client", "stdout_key"),
    [("before-tool", "gemini", "decision"), ("pre-tool-use", "codex", "hookSpecificOutput"),
     ("pre-tool-use", "claude", "hookSpecificOutput"),
     ("permission-request", "codex", "hookSpecificOutput"),
     ("permission-request", "claude", "hookSpecificOutput")],
)  # fmt: skip
def test_a_block_is_exit_code_2_with_the_reason_on_stderr_and_the_clis_denial_on_stdout(
    event: str, client: str, stdout_key: str
) -> None:
    reply = blocked(event, client, "Why.", attended=False)
    assert reply.code == 2
    assert reply.stderr == "Why.\n"
    assert reply.stdout is not None
    assert stdout_key in reply.stdout
    assert "Why." in str(reply.stdout)


def test_an_attended_claude_permission_request_gives_no_decision() -> None:
    reply = blocked("permission-request", "claude", "Why.", attended=True)
    assert (reply.code, reply.stdout) == (0, None)


def test_a_hooks_deadline_comes_before_its_clis_timeout_with_room_to_spare() -> None:
    for client, default in DEFAULT_TIMEOUT_S.items():
        assert 0 < budget(None, client) <= default - 5
        assert budget(630, client) >= 600  # the installed wait fits whole
    assert budget(60, "gemini") == 54
    assert budget(30, "claude") == 25
    assert budget(4, "codex") == 0  # no time at all: block at once


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.0, "(less than a second)"), (0.4, "(less than a second)"), (1.2, "(1 second)"),
     (26.9249, "(27 seconds)"), (float("nan"), "(less than a second)")],
)  # fmt: skip
def test_a_hooks_time_is_said_in_whole_seconds_and_never_as_0(seconds: float, said: str) -> None:
    reason = reason_for(OutOfTime(seconds))
    assert said in reason
    assert " 0 s" not in reason
    assert not re.search(r"\d\.\d", reason)
