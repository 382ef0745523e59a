"""``DISCORD_WATCH_ACP_IDLE_MINUTES`` (issue 34, seed 003's watchdog): 30 minutes unless set,
fractions allowed (tests and impatient owners), anything else stops the daemon at start."""

from __future__ import annotations

import pytest

from discord_mcp.errors import ConfigError
from discord_mcp.watch.options import watch_options


def test_the_watchdog_waits_thirty_minutes_unless_told() -> None:
    assert watch_options({}).acp_idle == 1800.0
    assert watch_options({"DISCORD_WATCH_ACP_IDLE_MINUTES": " 5 "}).acp_idle == 300.0
    assert watch_options({"DISCORD_WATCH_ACP_IDLE_MINUTES": "0.05"}).acp_idle == pytest.approx(3)


@pytest.mark.parametrize("raw", ["0", "-1", "soon", "nan", "inf", "100000"])
def test_a_watchdog_time_that_is_not_minutes_above_zero_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError):
        watch_options({"DISCORD_WATCH_ACP_IDLE_MINUTES": raw})
