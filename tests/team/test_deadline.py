"""Discord's 3 seconds across machines (issue 33): turns run from the interaction's creation (its
snowflake), a command replayed too late is not run, a slot too late to ask Discord lets the
acknowledgement decide, a machine about to probe opens its connection first, and a command runs
only once its acknowledgement succeeded, so a probe that raced another machine's answer runs
nothing.

The slash commands run here against fakes: the team (whose turn it is), the REST calls (what
was sent, in order) and the dispatcher (whether the command ran)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from discord_mcp.errors import DiscordHTTPError
from discord_mcp.team import probe
from discord_mcp.team.desk import TeamDesk
from discord_mcp.team.routing import NOW, Turn
from discord_mcp.watch.control.base import Reply, Request
from discord_mcp.watch.control.slash import SlashCommands

DISCORD_EPOCH_MS = 1_420_070_400_000


def made_ago(seconds: float) -> str:
    """An interaction id Discord would have made ``seconds`` ago."""
    ms = int((time.time() - seconds) * 1000)
    return str((ms - DISCORD_EPOCH_MS) << 22)


def command(seconds_ago: float = 0.0) -> dict[str, Any]:
    return {
        "id": made_ago(seconds_ago),
        "token": "interaction-token",
        "application_id": "42",
        "type": 2,
        "channel_id": "100",
        "data": {"name": "stop", "options": []},
        "member": {"user": {"id": "7", "username": "owner"}},
    }


def refused(code: int) -> DiscordHTTPError:
    return DiscordHTTPError(
        400 if code == 40060 else 404,
        code,
        "Interaction has already been acknowledged." if code == 40060 else "Unknown interaction",
        method="POST",
        route="/interactions/{interaction_id}/{interaction_token}/callback",
    )


@dataclass
class FakeRest:
    """What was sent to Discord, in order; a defer may be refused."""

    sent: list[str] = field(default_factory=list)
    refuse_defer: int | None = None
    acknowledged_already: bool = False
    idle: float = 0.0

    async def defer_interaction(self, *_: Any, **__: Any) -> None:
        self.sent.append("defer")
        if self.refuse_defer is not None:
            raise refused(self.refuse_defer)

    async def reply_to_interaction(self, *_: Any, **__: Any) -> None:
        self.sent.append("reply")

    async def edit_interaction_reply(self, *_: Any, **__: Any) -> dict[str, Any]:
        self.sent.append("edit")
        return {}

    async def follow_up(self, *_: Any, **__: Any) -> dict[str, Any]:
        self.sent.append("follow_up")
        return {}

    async def get_original_response(self, *_: Any, **__: Any) -> dict[str, Any]:
        self.sent.append("probe")
        if self.acknowledged_already:
            return {"id": "1"}
        raise DiscordHTTPError(404, 10015, "Unknown Webhook", method="GET", route="/webhooks")

    def idle_for(self) -> float:
        return self.idle

    async def request(self, route: Any, **_: Any) -> Any:
        self.sent.append(f"{route.method} {route.template}")
        return {"id": "1"}


class FakeDispatcher:
    def __init__(self, rest: FakeRest) -> None:
        self.controls = SimpleNamespace(rest=rest, guild_id="1")
        self.ran: list[Request] = []

    def is_owner(self, _user_id: str) -> bool:
        return True

    async def dispatch(self, request: Request) -> Reply:
        self.ran.append(request)
        return Reply("stopped")


@dataclass
class FakeTeam:
    """Another machine is live; this one's turn is ``turn``; its slot says ``came``."""

    turn_is: Turn
    came: bool = True
    slots: list[float] = field(default_factory=list)
    me: str = "server"
    roster: Any = field(default_factory=lambda: SimpleNamespace(live_others=lambda: ["laptop"]))
    settled_is: bool = True

    def turn(self, *_: Any, **__: Any) -> Turn:
        return self.turn_is

    def settled(self) -> bool:
        return self.settled_is

    async def slot_came(self, _data: dict[str, Any], _turn: Turn, created: float) -> bool:
        self.slots.append(created)
        return self.came

    def defer_after(self, _received: float, usual: float) -> float:  # the older desk's
        return usual


async def serve(slash: SlashCommands, data: dict[str, Any]) -> None:
    await slash.on_interaction(data)
    await asyncio.gather(*list(slash._tasks))


async def test_a_command_replayed_after_its_deadline_is_not_run() -> None:
    rest = FakeRest()
    dispatcher = FakeDispatcher(rest)
    slash = SlashCommands(dispatcher)  # type: ignore[arg-type]
    await serve(slash, command(seconds_ago=3.2))  # replayed after a RESUME, say

    assert dispatcher.ran == []
    assert rest.sent == []  # nothing sent Discord would refuse


@pytest.mark.parametrize("code", [40060, 10062])
async def test_a_probe_that_raced_another_machines_answer_runs_nothing(code: int) -> None:
    rest = FakeRest(refuse_defer=code)
    dispatcher = FakeDispatcher(rest)
    team = FakeTeam(Turn("probe", 1))
    slash = SlashCommands(dispatcher, team=team)  # type: ignore[arg-type]
    await serve(slash, command())

    assert rest.sent == ["defer"]  # acknowledged first...
    assert dispatcher.ran == []  # ...and refused: the other machine runs it, this one not


async def test_with_other_machines_live_the_command_runs_after_its_acknowledgement() -> None:
    rest = FakeRest()
    dispatcher = FakeDispatcher(rest)
    slash = SlashCommands(dispatcher, team=FakeTeam(NOW))  # type: ignore[arg-type]
    await serve(slash, command())

    assert rest.sent == ["defer", "edit"]
    assert len(dispatcher.ran) == 1


async def test_a_machine_alone_before_its_second_presence_read_runs_a_command_after_its_ack() -> (
    None
):
    # Machines started at the same moment each see no other until their second presence read,
    # seconds later: meanwhile each acknowledges first, so only the one Discord took runs it.
    rest = FakeRest()
    dispatcher = FakeDispatcher(rest)
    alone = SimpleNamespace(live_others=lambda: [])
    team = FakeTeam(NOW, roster=alone, settled_is=False)
    slash = SlashCommands(dispatcher, team=team)  # type: ignore[arg-type]
    await serve(slash, command())

    assert rest.sent == ["defer", "edit"]
    assert len(dispatcher.ran) == 1


async def test_a_machine_alone_after_its_second_presence_read_answers_at_once() -> None:
    rest = FakeRest()
    dispatcher = FakeDispatcher(rest)
    alone = SimpleNamespace(live_others=lambda: [])
    slash = SlashCommands(dispatcher, team=FakeTeam(NOW, roster=alone))  # type: ignore[arg-type]
    await serve(slash, command())

    assert rest.sent == ["reply"]
    assert len(dispatcher.ran) == 1


async def test_turns_are_counted_from_the_interactions_creation_not_its_arrival() -> None:
    team = FakeTeam(Turn("probe", 1), came=False)
    slash = SlashCommands(FakeDispatcher(FakeRest()), team=team)  # type: ignore[arg-type]
    arrived = asyncio.get_running_loop().time()
    await serve(slash, command(seconds_ago=1.0))

    [created] = team.slots
    assert arrived - created == pytest.approx(1.0, abs=0.2)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)
        await asyncio.sleep(0)  # what else was started runs meanwhile


async def test_a_slot_too_late_to_ask_lets_the_acknowledgement_decide() -> None:
    clock = Clock()
    rest = FakeRest(acknowledged_already=True)
    late = await probe.my_turn_came(
        rest, command(), Turn("probe", 3), clock.now - 2.4, clock=clock, sleep=clock.sleep
    )
    assert late is True  # 0.1 s left: no time to ask, the acknowledgement decides
    assert "probe" not in rest.sent
    too_late = await probe.my_turn_came(
        rest, command(), Turn("probe", 3), clock.now - 2.6, clock=clock, sleep=clock.sleep
    )
    assert too_late is False
    assert "probe" not in rest.sent


async def test_a_slot_in_time_waits_from_the_creation_then_asks() -> None:
    clock = Clock()
    rest = FakeRest(acknowledged_already=True)
    start = clock.now
    answer = await probe.my_turn_came(
        rest, command(), Turn("probe", 1), start - 1.0, clock=clock, sleep=clock.sleep
    )
    assert answer is False  # another machine had answered
    assert rest.sent == ["probe"]
    assert clock.now == pytest.approx(start + 0.3)  # slot 1 is 1.3 s after creation


async def test_a_machine_about_to_probe_opens_its_connection_first() -> None:
    clock = Clock()
    rest = FakeRest(idle=30.0)  # the pool closed its idle connection long ago
    desk = TeamDesk(
        roster=SimpleNamespace(),  # type: ignore[arg-type]
        presence=SimpleNamespace(),  # type: ignore[arg-type]
        holdings=SimpleNamespace(),
        rest=rest,  # type: ignore[arg-type]
        main_channel="100",
        clock=clock,
        sleep=clock.sleep,
    )
    await desk.slot_came(command(), Turn("probe", 1), clock.now)
    await asyncio.sleep(0)

    assert rest.sent[0] == "GET /users/@me"  # at once, a slot before the probe
    assert rest.sent[-1] == "probe"
