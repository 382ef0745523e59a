"""How old an interaction is: Discord's 3 seconds run from when it made the interaction, not from
when a machine received it.

Theory. An interaction's id is a snowflake: its top bits are the milliseconds since Discord's
epoch at which Discord created it. Every machine receives the same interaction at a different
moment (its own gateway, its own network), and an interaction replayed after a RESUME arrives
seconds late, yet Discord fails it 3 seconds after *creation* whoever answers. So turns are
measured from the creation time (:func:`created_on`), read on the machine's wall clock (kept
within milliseconds of Discord's by NTP; an age below zero, a clock behind, counts as zero),
and nothing is started that cannot be acknowledged by :data:`DEADLINE_S` after it: the half
second left is the acknowledgement's way to Discord.
"""

from __future__ import annotations

from discord_mcp.transport.snowflakes import made_at

DEADLINE_S = 2.5
"""An acknowledgement is sent no later than this after the interaction was created (Discord's
limit is 3 s; the rest is the request's way there)."""
PROBE_S = 0.2
"""What asking Discord whether another machine answered takes: a slot later than
``DEADLINE_S - PROBE_S`` does not ask, its acknowledgement decides (a refused one, 40060 or
10062, means another machine answered)."""


def age(interaction_id: object, wall_now: float) -> float:
    """Seconds since Discord created the interaction (0 for an id that is not a snowflake, or
    a clock behind Discord's)."""
    created = made_at(interaction_id)
    return 0.0 if created is None else max(0.0, wall_now - created)


def created_on(interaction: dict[str, object], *, now: float, wall_now: float) -> float:
    """When the interaction was created, on the clock that says ``now`` (the event loop's)."""
    return now - age(interaction.get("id"), wall_now)
