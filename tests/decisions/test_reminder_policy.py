"""When reminders are due: delays, quiet hours (with an injected clock), urgent questions."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest

from discord_mcp.config import Settings
from discord_mcp.config.reminders import (
    DEFAULT_DELAYS,
    QuietHours,
    ReminderSettings,
    parse_delays,
    parse_quiet_hours,
)
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.reminder_policy import ReminderPolicy
from discord_mcp.errors import ConfigError

ASKED = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def decision(**changes: object) -> Decision:
    base = Decision(
        id="20260302-120000-abcdef",
        project="proj",
        session="s",
        question="Deploy?",
        context=None,
        options=("Yes", "No"),
        channel_id="1",
        thread_id="2",
        card_message_id="3",
        thread_url="https://discord.com/channels/9/2",
        asked_at=ASKED.isoformat(),
    )
    return base.replace(**changes)


def test_delays_read_seconds_minutes_and_hours_and_off_turns_them_off() -> None:
    assert parse_delays("15m,1h,4h") == (900.0, 3600.0, 14400.0)
    assert parse_delays(" 30s , 1.5m, 5m ") == (30.0, 90.0, 300.0)
    assert parse_delays("") == DEFAULT_DELAYS
    assert parse_delays("off") == ()


@pytest.mark.parametrize("raw", ["15", "15 minutes", "0s", "8d", "1h,,2h", "-5m", "10days"])
def test_a_delay_without_a_known_unit_or_out_of_range_is_refused_by_its_position(raw: str) -> None:
    with pytest.raises(ValueError, match="part "):
        parse_delays(raw)


@pytest.mark.parametrize("raw", ["1s", "30s", "4m", "1h,1s", "15m,2m"])
def test_a_repeating_delay_shorter_than_five_minutes_is_refused(raw: str) -> None:
    """The last delay repeats until an answer comes: ``1s`` would ring every second."""
    with pytest.raises(ValueError, match="the last delay repeats") as caught:
        parse_delays(raw)
    assert "at least 5 minutes" in str(caught.value)
    assert parse_delays("1s,5m") == (1.0, 300.0)  # a quick first reminder is fine


def test_quiet_hours_read_a_window_and_an_optional_zone() -> None:
    assert parse_quiet_hours("22:00-08:00") == QuietHours(time(22), time(8), "UTC")
    assert parse_quiet_hours(" 23:30 - 6:15 Asia/Seoul ") == QuietHours(
        time(23, 30), time(6, 15), "Asia/Seoul"
    )
    assert parse_quiet_hours("") is None
    for bad in ("22-08", "25:00-08:00", "22:00-08:00 Nowhere/Special", "22:00-08:00 a b"):
        with pytest.raises(ValueError, match=r"form|hour|time zone"):
            parse_quiet_hours(bad)


def test_the_first_reminder_comes_after_the_first_delay_and_later_ones_after_the_last() -> None:
    policy = ReminderPolicy(delays=(900.0, 3600.0, 14400.0))
    fresh = decision()
    assert policy.next_due(fresh) == ASKED + timedelta(minutes=15)
    assert not policy.due(fresh, ASKED + timedelta(minutes=14))
    assert policy.due(fresh, ASKED + timedelta(minutes=15))

    once = fresh.replace(reminders=1, reminded_at=(ASKED + timedelta(minutes=20)).isoformat())
    assert policy.next_due(once) == ASKED + timedelta(minutes=80)
    thrice = fresh.replace(reminders=3, reminded_at=(ASKED + timedelta(hours=9)).isoformat())
    assert policy.next_due(thrice) == ASKED + timedelta(hours=13)
    seventh = fresh.replace(reminders=7, reminded_at=(ASKED + timedelta(hours=30)).isoformat())
    assert policy.next_due(seventh) == ASKED + timedelta(hours=34)


def test_a_sender_back_after_a_long_outage_is_not_due_again_right_after_one_reminder() -> None:
    policy = ReminderPolicy(delays=(900.0, 3600.0))
    now = ASKED + timedelta(days=2)
    old = decision()
    assert policy.due(old, now)
    reminded = old.replace(reminders=1, reminded_at=now.isoformat())
    assert not policy.due(reminded, now + timedelta(minutes=59))


def test_answered_cardless_and_switched_off_decisions_are_never_due() -> None:
    later = ASKED + timedelta(days=1)
    assert not ReminderPolicy().due(decision(status="answered"), later)
    assert not ReminderPolicy().due(decision(card_message_id=""), later)
    assert not ReminderPolicy(delays=()).due(decision(), later)


def test_quiet_hours_across_midnight_hold_a_reminder_until_they_end() -> None:
    quiet = QuietHours(time(22), time(8))
    late = datetime(2026, 3, 2, 23, 30, tzinfo=UTC)
    early = datetime(2026, 3, 3, 7, 59, tzinfo=UTC)
    day = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    assert quiet.holds(late) == datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    assert quiet.holds(early) == datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    assert quiet.holds(day) is None

    policy = ReminderPolicy(delays=(60.0,), quiet=quiet)
    asked = decision(asked_at=datetime(2026, 3, 2, 21, 30, tzinfo=UTC).isoformat())
    assert not policy.due(asked, late)
    assert policy.due(asked, day)


def test_an_urgent_decision_ignores_quiet_hours() -> None:
    policy = ReminderPolicy(delays=(60.0,), quiet=QuietHours(time(22), time(8)))
    asked = datetime(2026, 3, 2, 23, 0, tzinfo=UTC)
    urgent = decision(asked_at=asked.isoformat(), urgent=True)
    assert policy.due(urgent, asked + timedelta(minutes=2))
    assert not policy.due(urgent.replace(urgent=False), asked + timedelta(minutes=2))


def test_quiet_hours_are_read_in_their_own_time_zone() -> None:
    seoul = QuietHours(time(22), time(8), "Asia/Seoul")  # UTC+9, no daylight saving
    assert seoul.holds(datetime(2026, 3, 2, 14, 0, tzinfo=UTC)) is not None  # 23:00 in Seoul
    assert seoul.holds(datetime(2026, 3, 2, 0, 0, tzinfo=UTC)) is None  # 09:00 in Seoul
    assert seoul.holds(datetime(2026, 3, 2, 14, 0, tzinfo=UTC)) == datetime(
        2026, 3, 2, 23, 0, tzinfo=UTC
    )


def test_a_window_within_one_day_and_an_empty_window() -> None:
    nap = QuietHours(time(13), time(14))
    assert nap.holds(datetime(2026, 3, 2, 13, 30, tzinfo=UTC)) is not None
    assert nap.holds(datetime(2026, 3, 2, 14, 0, tzinfo=UTC)) is None
    assert QuietHours(time(9), time(9)).holds(datetime(2026, 3, 2, 9, 0, tzinfo=UTC)) is None


def test_settings_carry_the_policy_and_refuse_bad_values_without_echoing_them(
    tmp_path: Path,
) -> None:
    base = {
        "DISCORD_BOT_TOKEN": "x.y.z",
        "DISCORD_CHANNEL_ID": "111111111111111111",
        "DISCORD_OWNER_IDS": "222222222222222222",
        "DISCORD_MCP_HOME": str(tmp_path),
    }
    settings = Settings.from_env(
        {
            **base,
            "DISCORD_MCP_REMINDERS": "10s,5m",
            "DISCORD_MCP_QUIET_HOURS": "22:00-07:00 Europe/Berlin",
            "DISCORD_MCP_ESCALATE_DM": "1",
            "DISCORD_MCP_TMUX_NUDGE": "yes",
        },
        read_dotenv=False,
    )
    assert settings.reminders == ReminderSettings(
        delays=(10.0, 300.0), quiet=QuietHours(time(22), time(7), "Europe/Berlin"), escalate_dm=True
    )
    assert settings.tmux_nudge
    plain = Settings.from_env(base, read_dotenv=False)
    assert plain.reminders == ReminderSettings()
    assert not plain.tmux_nudge

    with pytest.raises(ConfigError) as caught:
        Settings.from_env({**base, "DISCORD_MCP_REMINDERS": "15m,secret7"}, read_dotenv=False)
    assert "part 2" in str(caught.value)
    assert "secret7" not in str(caught.value)
