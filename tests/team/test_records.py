"""A presence record: written for people and machines in one message, read back strictly."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from discord_mcp.team.records import CONTENT_LIMIT, Job, MachineRecord, Waiting, parse, render

BOT = {"id": "900000000000000001", "username": "bot", "bot": True}


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
    content = render(written, now=1_764_064_900)
    assert content.startswith("**Machine `laptop`**")
    assert "<t:1764064900:R>" in content  # shown in each reader's own time
    read = parse(message(content), bot_id=BOT["id"])
    assert read is not None
    assert (read.name, read.instance, read.projects) == ("laptop", "a1b2c3", ("app", "api"))
    assert read.jobs == written.jobs
    assert read.waiting[0].question == "Run `rm -rf build`?"
    assert (read.jobs_total, read.waiting_total, read.gateway) == (1, 1, True)
    assert read.knows == ("server/0a0b",)
    assert read.message_id == "900000000000000010"
    # Last seen: the edit, by Discord's clock.
    assert read.seen_at == datetime(2026, 11, 25, 10, 2, tzinfo=UTC).timestamp()


def test_a_record_fits_one_message_however_much_the_machine_has() -> None:
    many = record(
        projects=tuple(f"project-{i:02d}-with-a-long-name" for i in range(40)),
        jobs=tuple(Job("app", f"9000000000000001{i:02d}", "claude", f"job_{i}") for i in range(40)),
        waiting=tuple(
            Waiting("app", "question", "why " * 100, f"9000000000000002{i:02d}", "", "")
            for i in range(40)
        ),
    )
    content = render(many, now=0)
    assert len(content) <= CONTENT_LIMIT
    read = parse(message(content))
    assert read is not None
    assert (read.projects_total, read.jobs_total, read.waiting_total) == (40, 40, 40)
    assert read.projects  # lists shortened, never emptied first
    assert all(len(w.question) <= 80 for w in read.waiting)


def test_only_the_bots_own_well_formed_records_are_read() -> None:
    content = render(record(), now=0)
    person = {"id": "900000000000000002", "username": "owner"}
    assert parse(message(content, author=person)) is None
    other_bot = {"id": "900000000000000003", "username": "other", "bot": True}
    assert parse(message(content, author=other_bot), bot_id=BOT["id"]) is None
    assert parse(message("just words")) is None
    assert parse(message("```json\n{not json}\n```")) is None
    assert parse(message('```json\n{"name": "laptop"}\n```')) is None  # no marker
    bad_name = content.replace('"name":"laptop"', '"name":"Lap Top"')
    assert parse(message(bad_name)) is None


def test_fields_from_elsewhere_are_checked_one_by_one() -> None:
    body = {
        "discord_mcp_machine": 2,  # a newer format: what is known is still read
        "name": "server",
        "projects": ["ok", "no spaces allowed", 3, "x" * 200],
        "jobs": [{"project": "ok", "thread": "not-a-snowflake"}, "junk"],
        "waiting": [{"thread": "900000000000000050", "question": 7}],
        "jobs_total": -4,
        "knows": ["laptop/abc", "Bad/zz", 5],
        "future": {"anything": True},
    }
    read = parse(message(f"```json\n{json.dumps(body)}\n```"))
    assert read is not None
    assert read.name == "server"
    assert read.projects == ("ok",)
    assert read.jobs == ()
    assert read.waiting[0].question == ""
    assert read.jobs_total == 0
    assert read.knows == ("laptop/abc",)
