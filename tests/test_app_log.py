"""The structured log (issue 34): one JSON object per line in ``logs/app.ndjson``, set up by
the one place every program sets its logging up (``discord_mcp.log.configure``)."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.app_log import NAME, DailyFile, JsonFormatter
from discord_mcp.errors import RunError
from discord_mcp.log import configure

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
DAY = 86_400.0
NOON = 1_795_867_200.0  # 2026-11-28T12:00:00Z


@pytest.fixture
def package_log() -> Iterator[logging.Logger]:
    """The package's logger, put back as it was after the test."""
    root = logging.getLogger("discord_mcp")
    handlers, level, propagate = list(root.handlers), root.level, root.propagate
    yield root
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    root.propagate = propagate


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_line_has_every_field_with_the_ids_given_or_found(
    tmp_path: Path, package_log: logging.Logger, capfd: pytest.CaptureFixture[str]
) -> None:
    configure(program="discord-watch", home=tmp_path, environ={}, stderr=False)
    log = logging.getLogger("discord_mcp.runs.engine")
    log.warning("run stopped", extra={"run_id": "run_20261128_120000_abcdef", "job_id": "j-1"})
    log.info("decision 20261128-120000-9f3a1c answered")
    try:
        raise RunError("E_CLI_TIMEOUT", "the CLI ran out of time")
    except RunError:
        log.exception("the job failed")
    first, second, third = lines(tmp_path / "logs" / NAME)
    keys = {"time", "level", "logger", "event", "error_code", "run_id", "decision_id", "job_id",
            "thread_id", "program", "pid"}  # fmt: skip
    assert all(keys <= line.keys() for line in (first, second, third))
    assert first["level"] == "WARNING"
    assert first["logger"] == "discord_mcp.runs.engine"
    assert first["event"] == "run stopped"
    assert first["run_id"] == "run_20261128_120000_abcdef"
    assert first["job_id"] == "j-1"
    assert first["decision_id"] is None
    assert first["program"] == "discord-watch"
    assert first["time"].endswith("Z")
    assert second["decision_id"] == "20261128-120000-9f3a1c"
    assert third["error_code"] == "E_CLI_TIMEOUT"
    assert "Traceback" in third["exception"]
    assert capfd.readouterr().out == ""  # nothing on stdout: it is the MCP protocol


def test_the_token_never_reaches_the_structured_log(
    tmp_path: Path, package_log: logging.Logger, capfd: pytest.CaptureFixture[str]
) -> None:
    configure(program="discord-mcp", home=tmp_path, secrets=[TOKEN], environ={})
    log = logging.getLogger("discord_mcp.transport.rest")
    encoded = base64.b64encode(TOKEN.encode()).decode()
    log.warning("Authorization: Bot %s", TOKEN)
    log.error("in base64 %s", encoded, extra={"thread_id": TOKEN})
    try:
        raise RuntimeError(f"refused {TOKEN}")
    except RuntimeError:
        log.exception("request failed")
    other = "OTk5OTk5OTk5OTk5OTk5OTk5.Gzzzzz.zyxwvutsrqponmlkjihgfedcba9876543210"
    log.warning("another bot's token %s", other)  # the shape of a token, not ours
    written = (tmp_path / "logs" / NAME).read_text(encoding="utf-8")
    assert len(written.splitlines()) == 4
    for secret in (TOKEN, encoded, other, TOKEN.split(".")[-1]):
        assert secret not in written
    assert "[redacted" in written
    assert TOKEN not in capfd.readouterr().err


def test_a_day_is_a_file_and_only_the_kept_days_stay(tmp_path: Path) -> None:
    now = [NOON]
    handler = DailyFile(tmp_path, keep=2, clock=lambda: now[0])
    handler.setFormatter(JsonFormatter(program="discord-watch"))
    log = logging.Logger("discord_mcp.test")
    log.addHandler(handler)
    for day in range(4):  # 2026-11-28 .. 2026-12-01
        now[0] = NOON + day * DAY
        log.info("day %d", day)
    handler.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [NAME, f"{NAME}.2026-11-29", f"{NAME}.2026-11-30"]
    assert [e["event"] for e in lines(tmp_path / NAME)] == ["day 3"]
    assert [e["event"] for e in lines(tmp_path / f"{NAME}.2026-11-30")] == ["day 2"]


def test_a_second_process_rolling_the_same_day_keeps_the_first_ones_lines(
    tmp_path: Path,
) -> None:
    now = [NOON]
    first, second = (DailyFile(tmp_path, clock=lambda: now[0]) for _ in range(2))
    for handler in (first, second):
        handler.setFormatter(JsonFormatter(program="p"))
    one, two = logging.Logger("one"), logging.Logger("two")
    one.addHandler(first)
    two.addHandler(second)
    one.info("yesterday, one")
    two.info("yesterday, two")
    now[0] += DAY
    one.info("today, one")  # rolls yesterday's file away
    two.info("today, two")  # sees today's file: does not roll it over yesterday's
    for handler in (first, second):
        handler.close()
    yesterday = [e["event"] for e in lines(tmp_path / f"{NAME}.2026-11-28")]
    assert yesterday == ["yesterday, one", "yesterday, two"]
    assert [e["event"] for e in lines(tmp_path / NAME)] == ["today, one", "today, two"]


def test_the_level_the_folder_and_the_kept_days_come_from_the_environment(
    tmp_path: Path, package_log: logging.Logger
) -> None:
    elsewhere = tmp_path / "elsewhere"
    now = [NOON]
    environ = {
        "DISCORD_MCP_LOG_LEVEL": "warning",
        "DISCORD_MCP_LOG_DIR": str(elsewhere),
        "DISCORD_MCP_LOG_KEEP": "1",
    }
    configure(
        program="discord-watch",
        home=tmp_path / "home",
        environ=environ,
        stderr=False,
        clock=lambda: now[0],
    )
    log = logging.getLogger("discord_mcp.watch")
    for day in range(3):
        now[0] = NOON + day * DAY
        log.info("not kept: below the level")
        log.warning("day %d", day)
    assert not (tmp_path / "home" / "logs" / NAME).exists()
    assert sorted(p.name for p in elsewhere.iterdir()) == [NAME, f"{NAME}.2026-11-29"]
    assert [e["event"] for e in lines(elsewhere / NAME)] == ["day 2"]
    text_log = (tmp_path / "home" / "logs" / "discord-watch.log").read_text(encoding="utf-8")
    assert "below the level" not in text_log  # the level holds for the readable log too


def test_a_wrong_value_is_said_and_its_default_used(
    tmp_path: Path, package_log: logging.Logger
) -> None:
    environ = {"DISCORD_MCP_LOG_LEVEL": "LOUD", "DISCORD_MCP_LOG_KEEP": "-3"}
    configure(program="discord-watch", home=tmp_path, environ=environ, stderr=False)
    logging.getLogger("discord_mcp.x").info("info is kept at the default level")
    events = [e["event"] for e in lines(tmp_path / "logs" / NAME)]
    assert any("DISCORD_MCP_LOG_LEVEL='LOUD'" in e for e in events)
    assert any("DISCORD_MCP_LOG_KEEP='-3'" in e for e in events)
    assert "info is kept at the default level" in events
