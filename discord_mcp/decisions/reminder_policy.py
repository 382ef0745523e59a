"""When an unanswered question is brought back to the owner: the configured delays, quiet hours
and escalation (:mod:`discord_mcp.config.reminders`, where ``DISCORD_MCP_REMINDERS``,
``DISCORD_MCP_QUIET_HOURS`` and ``DISCORD_MCP_ESCALATE_DM`` are read) applied to a decision.

The sending is :mod:`discord_mcp.decisions.reminders`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from discord_mcp.config.reminders import ReminderSettings
from discord_mcp.decisions.model import Decision


@dataclass(frozen=True, slots=True)
class ReminderPolicy(ReminderSettings):
    """The configured reminders (:class:`~discord_mcp.config.reminders.ReminderSettings`:
    ``delays``, ``quiet`` hours, DM escalation) applied to a decision."""

    @classmethod
    def of(cls, settings: ReminderSettings) -> ReminderPolicy:
        """The policy of these settings (itself when it already is one)."""
        if isinstance(settings, ReminderPolicy):
            return settings
        return cls(settings.delays, settings.quiet, settings.escalate_dm)

    @property
    def enabled(self) -> bool:
        return bool(self.delays)

    def next_due(self, decision: Decision) -> datetime | None:
        """When ``decision`` is next due a reminder, quiet hours aside; None: never.

        Counted from the last reminder, not from the question: a sender that was down for a
        day sends one reminder when it comes back, not every one it missed.
        """
        if not self.delays or decision.status != "pending" or not decision.card_message_id:
            return None
        sent = decision.reminders
        delay = self.delays[min(sent, len(self.delays) - 1)]
        since = decision.reminded_at if sent and decision.reminded_at else decision.asked_at
        try:
            return datetime.fromisoformat(since) + timedelta(seconds=delay)
        except ValueError:
            return None

    def held_until(self, decision: Decision, now: datetime) -> datetime | None:
        """When quiet hours end, if they hold this decision's reminder at ``now``."""
        if decision.urgent or self.quiet is None:
            return None
        return self.quiet.holds(now)

    def due(self, decision: Decision, now: datetime) -> bool:
        """Whether a reminder for ``decision`` goes out at ``now``."""
        at = self.next_due(decision)
        if at is None or now < at:
            return False
        return self.held_until(decision, now) is None

    def check_every(self, longest: float) -> float:
        """How often a sender looks for due reminders: often enough for the shortest delay
        (half of it), and at most every ``longest`` seconds."""
        if not self.delays:
            return longest
        return max(0.2, min(longest, min(self.delays) / 2))
