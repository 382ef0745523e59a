"""A presence record: written for people and machines in one message, read back strictly."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from discord_mcp.config import Secret
from discord_mcp.team.records import (
    CONTENT_LIMIT,
    Job,
    MachineRecord,
    Rejected,
    Waiting,
    parse,
    read,
    render,
)
from discord_mcp.team.signing import SIGNED_SKEW_S, RecordKey

BOT = {"id": "900000000000000001", "username": "bot", "bot": True}
KEY = RecordKey(Secret("MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.the-bots-own-token-for-these-tests"))
WRITTEN_AT = datetime(2026, 11, 25, 10, 2, tzinfo=UTC).timestamp()
"""When the test messages were last edited, by Discord's clock."""


def message(content: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": "900000000000000010",
        "channel_id": "900000000000000020",
        "author": BOT,
        "content": content,
        "timestamp": "2026-11-25T10:00:00+00:00",
        "edited_timestamp": "2026-11-25T10:02:00+00:00",
        **fields,
    }


def record(**fields: Any) -> MachineRecord:
    base: dict[str, Any] = {
        "name": "laptop",
        "instance": "a1b2c3",
        "up_since": 1_764_064_800.0,
        "projects": ("app", "api"),
        "jobs": (Job("app", "900000000000000030", "claude", "job_1"),),
        "waiting": (
            Waiting("api", "approval", "Run `rm -rf build`?", "900000000000000040", "", "x"),
        ),
        "gateway": True,
        "knows": ("server/0a0b",),
    }
    base.update(fields)
    return MachineRecord(**base)


def test_a_record_reads_back_as_written_with_discords_time_as_last_seen() -> None:
    written = record()
    content = render(written, now=WRITTEN_AT - 1, key=KEY)
    assert content.startswith("**Machine `laptop`**")
    assert f"<t:{int(WRITTEN_AT) - 1}:R>" in content  # shown in each reader's own time
    read = parse(message(content), key=KEY, bot_id=BOT["id"])
    assert read is not None
    assert (read.name, read.instance, read.projects) == ("laptop", "a1b2c3", ("app", "api"))
    assert read.jobs == written.jobs
    assert read.waiting[0].question == "Run `rm -rf build`?"
    assert (read.jobs_total, read.waiting_total, read.gateway) == (1, 1, True)
    assert read.knows == ("server/0a0b",)
    assert read.message_id == "900000000000000010"
    # Last seen: the edit, by Discord's clock.
    assert read.seen_at == WRITTEN_AT


def test_a_record_fits_one_message_however_much_the_machine_has() -> None:
    many = record(
        projects=tuple(f"project-{i:02d}-with-a-long-name" for i in range(40)),
        jobs=tuple(Job("app", f"9000000000000001{i:02d}", "claude", f"job_{i}") for i in range(40)),
        waiting=tuple(
            Waiting("app", "question", "why " * 100, f"9000000000000002{i:02d}", "", "")
            for i in range(40)
        ),
    )
    content = render(many, now=WRITTEN_AT, key=KEY)
    assert len(content) <= CONTENT_LIMIT
    read = parse(message(content), key=KEY)
    assert read is not None
    assert (read.projects_total, read.jobs_total, read.waiting_total) == (40, 40, 40)
    assert read.projects  # lists shortened, never emptied first
    assert all(len(w.question) <= 80 for w in read.waiting)


def test_only_the_bots_own_well_formed_records_are_read() -> None:
    content = render(record(), now=WRITTEN_AT, key=KEY)
    assert parse(message(content), key=KEY) is not None
    person = {"id": "900000000000000002", "username": "owner"}
    assert parse(message(content, author=person), key=KEY) is None
    other_bot = {"id": "900000000000000003", "username": "other", "bot": True}
    assert parse(message(content, author=other_bot), key=KEY, bot_id=BOT["id"]) is None
    assert parse(message("just words"), key=KEY) is None
    assert parse(message("```json\n{not json}\n```"), key=KEY) is None
    assert parse(message('```json\n{"name": "laptop"}\n```'), key=KEY) is None  # no marker
    bad_name = content.replace('"name":"laptop"', '"name":"Lap Top"')
    assert parse(message(bad_name), key=KEY) is None


def test_fields_from_elsewhere_are_checked_one_by_one() -> None:
    body: dict[str, Any] = {
        "discord_mcp_machine": 2,  # a newer format: what is known is still read
        "name": "server",
        "projects": ["ok", "no spaces allowed", 3, "x" * 200],
        "jobs": [{"project": "ok", "thread": "not-a-snowflake"}, "junk"],
        "waiting": [{"thread": "900000000000000050", "question": 7}],
        "jobs_total": -4,
        "knows": ["laptop/abc", "Bad/zz", 5],
        "future": {"anything": True},
    }
    signed = KEY.sign(body, now=WRITTEN_AT)
    read = parse(message(f"```json\n{json.dumps(signed)}\n```"), key=KEY)
    assert read is not None
    assert read.name == "server"
    assert read.projects == ("ok",)
    assert read.jobs == ()
    assert read.waiting[0].question == ""
    assert read.jobs_total == 0
    assert read.knows == ("laptop/abc",)


def test_a_record_is_read_only_when_signed_with_the_key_of_the_bots_token() -> None:
    content = render(record(), now=WRITTEN_AT, key=KEY)
    assert parse(message(content), key=KEY) is not None
    another_bot = RecordKey(Secret("MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.some-other-bots-token-xyz"))
    assert parse(message(content), key=another_bot) is None
    tampered = content.replace('"projects":["app","api"]', '"projects":["app","api","db"]')
    assert tampered != content
    assert parse(message(tampered), key=KEY) is None
    body = json.loads(content.split("```json\n")[1].split("\n```")[0])
    unsigned = {k: v for k, v in body.items() if k not in ("sig", "signed_at")}
    unsigned["discord_mcp_machine"] = 1  # as a version older than signing wrote it
    assert read(message(f"```json\n{json.dumps(unsigned)}\n```"), key=KEY) == Rejected(
        "laptop", "unsigned", 1, "900000000000000010"
    )
    lying = {**body, "sig": 12}
    assert parse(message(f"```json\n{json.dumps(lying)}\n```"), key=KEY) is None


def test_a_signed_record_posted_again_long_after_it_was_signed_speaks_for_nobody() -> None:
    content = render(record(), now=WRITTEN_AT - SIGNED_SKEW_S - 60, key=KEY)
    found = read(message(content), key=KEY)
    assert isinstance(found, Rejected)
    assert found.verdict == "stale"
    late_but_close = render(record(), now=WRITTEN_AT - 30, key=KEY)  # clocks a little apart
    assert parse(message(late_but_close), key=KEY) is not None


def test_a_record_signed_for_a_time_long_after_discord_stored_it_speaks_for_nobody() -> None:
    """Either way: a record signed with a clock far ahead (made now to be posted later, or
    by a machine whose clock is wrong) is refused like a copied one."""
    content = render(record(), now=WRITTEN_AT + SIGNED_SKEW_S + 60, key=KEY)
    found = read(message(content), key=KEY)
    assert isinstance(found, Rejected)
    assert found.verdict == "stale"
    early_but_close = render(record(), now=WRITTEN_AT + 30, key=KEY)  # clocks a little apart
    assert parse(message(early_but_close), key=KEY) is not None


def test_neither_the_key_nor_a_signature_shows_the_token() -> None:
    token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.the-bots-own-token-for-these-tests"
    key = RecordKey(Secret(token))
    content = render(record(), now=WRITTEN_AT, key=key)
    assert token not in content
    assert token not in repr(key)
    assert "GaBcDe" not in repr(key)
    assert not any(part in content for part in token.split("."))
