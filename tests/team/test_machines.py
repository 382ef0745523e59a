"""Several machines, one bot: each interaction is answered by exactly one machine (no 40060 ever),
messages in a machine's threads are that machine's, and /status shows every machine."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

from discord_mcp.decisions.interactive import card_components
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.inbox import Inbox
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.team.conftest import Machine, every_turn_taken, machine, running


def stats(people: People) -> dict[str, int]:
    return dict(people.state()["stats"])


def custom_ids(card: dict[str, object]) -> list[str]:
    rows = card.get("components") or []
    return [c["custom_id"] for row in rows for c in row["components"]]  # type: ignore[index,union-attr]


@contextlib.asynccontextmanager
async def asking(who: Machine, question: Question) -> AsyncIterator[Decision]:
    """A question asked on ``who`` (as its agents would, by its discord-mcp: the gateway is
    live there, so the card has buttons), and its service while the test clicks."""
    async with (
        RestClient(who.settings.token, api_base=who.settings.api_base) as rest,
        Background() as background,
    ):
        service = DecisionService(
            settings=who.settings,
            rest=rest,
            store=DecisionStore(who.home),
            background=background,
            live=lambda: True,
        )
        decision, _ = await service.ask(question)
        yield decision


async def test_start_goes_to_the_machine_that_hosts_the_project_and_its_thread_stays_there(
    discord: RunningEmulator, people: People, roots: Path
) -> None:
    laptop = await machine(discord, roots, "laptop", "app")
    server = await machine(discord, roots, "server", "web")
    slash = Slash(discord)
    async with running(discord, people, laptop, server):
        before = stats(people)
        report = await slash.run("start", project="web", prompt="look around")
        assert report["delivered"] == 2  # Discord gives every session of the bot the command
        answer = await slash.answer(report)
        thread_id = answer.split("<#")[1].split(">")[0]
        await until(lambda: len(server.spawner.runs()) == 1)
        # A reply in server's run thread is server's next job, and nothing on laptop.
        people.say(thread_id, "and the docs too")
        await until(lambda: len(server.spawner.runs()) == 2)
        on_laptop = await slash.text("start", project="app", prompt="hello")
        await until(lambda: len(laptop.spawner.runs()) == 1)
        await every_turn_taken()  # the later machines' slots, before counting 40060s
        after = stats(people)
    assert "<#" in on_laptop
    assert [r["prompt"] for r in server.spawner.runs()] == ["look around", "and the docs too"]
    assert [r["prompt"] for r in laptop.spawner.runs()] == ["hello"]
    unread = await asyncio.to_thread(Inbox(laptop.home).unread_count)
    assert unread == 0  # not a note for laptop's agents
    assert after["interactions_acknowledged_twice"] == before["interactions_acknowledged_twice"]
    assert after["interactions_failed"] == before["interactions_failed"]


async def test_a_card_click_is_answered_by_its_machine_while_the_other_holds_its_own_gateway(
    discord: RunningEmulator, people: People, roots: Path
) -> None:
    laptop = await machine(discord, roots, "laptop", "app")
    server = await machine(discord, roots, "server", "web")
    async with running(discord, people, laptop, server):
        async with asking(server, Question("Ship it?", options=("Ship", "Hold"))) as decision:
            [card] = [m for m in people.messages(decision.thread_id) if m.get("components")]
            ids = custom_ids(card)
            assert all(i.endswith(":server") for i in ids)
            assert "on `server`" in card["content"]
            before = stats(people)
            report = await asyncio.to_thread(people.click, card["id"], ids[0])
            answered = await until(
                lambda: DecisionStore(server.home).load(decision.id).status == "answered"
            )
        await every_turn_taken()  # the later machines' slots, before counting 40060s
        after = stats(people)
    assert answered
    assert report["delivered"] == 2
    assert report["acknowledged"] is True
    assert report["response_type"] == 7  # the card, updated by server
    assert DecisionStore(server.home).load(decision.id).selected_option == "Ship"
    assert not DecisionStore(laptop.home).path(decision.id).exists()
    assert after["interactions_acknowledged_twice"] == before["interactions_acknowledged_twice"]


async def test_a_card_posted_before_machines_had_names_is_answered_where_its_decision_is(
    discord: RunningEmulator, people: People, roots: Path
) -> None:
    laptop = await machine(discord, roots, "laptop", "app")
    server = await machine(discord, roots, "server", "web")
    async with running(discord, people, laptop, server):
        async with asking(server, Question("Merge?", options=("Merge", "Wait"))) as decision:
            # As an earlier version posted it: no machine in the file nor in the custom_ids.
            await DecisionStore(server.home).aupdate(decision.id, lambda d: d.replace(machine=None))
            old = card_components(decision.id, decision.options)
            async with RestClient(server.settings.token, api_base=discord.api_base) as rest:
                await rest.edit_message(
                    decision.thread_id, decision.card_message_id, components=old
                )
            before = stats(people)
            report = await asyncio.to_thread(
                people.click, decision.card_message_id, f"dmcp:{decision.id}:1"
            )
            await until(lambda: DecisionStore(server.home).load(decision.id).status == "answered")
            # A card no machine has (its decision file is gone everywhere): one machine, at its
            # turn, says it does not know it.
            lost = card_components("20260101-000000-abcdef", ("Yes", "No"))
            async with RestClient(server.settings.token, api_base=discord.api_base) as rest:
                [posted] = await rest.send_text(discord.channel_id, "an old card", components=lost)
            unknown = await asyncio.to_thread(
                people.click, posted["id"], "dmcp:20260101-000000-abcdef:0"
            )
        await every_turn_taken()  # the later machines' slots, before counting 40060s
        after = stats(people)
    assert report["acknowledged"] is True
    assert report["response_type"] == 7  # server updated its card; laptop stayed silent
    assert DecisionStore(server.home).load(decision.id).selected_option == "Wait"
    assert unknown["acknowledged"] is True
    assert unknown["ephemeral"] is True
    assert after["interactions_acknowledged_twice"] == before["interactions_acknowledged_twice"]
    assert after["interactions_failed"] == before["interactions_failed"]


async def test_status_and_pending_list_every_machine_with_its_projects_jobs_and_questions(
    discord: RunningEmulator, people: People, roots: Path
) -> None:
    laptop = await machine(discord, roots, "laptop", "app")
    server = await machine(discord, roots, "server", "web", "docs")
    slash = Slash(discord)
    async with asking(server, Question("Which database?", options=("Postgres", "SQLite"))) as asked:
        pass  # asked on server before its discord-watch starts: its first record has it
    async with running(discord, people, laptop, server):
        before = stats(people)
        status = await slash.text("status")
        pending = await slash.text("pending")
        choices = await slash.choices("start", "project", prompt="x", project="")
        await every_turn_taken()  # the later machines' slots, before counting 40060s
        after = stats(people)
    assert "**discord-watch** on `laptop`" in status  # laptop answered: the first name
    assert "`laptop` (this one) · projects `app`" in status
    assert "`server` (seen" in status
    assert "projects `docs`, `web` · 0 running, 1 waiting" in status
    assert "**On `server`** (1)" in pending
    assert "**Which database?**" in pending
    assert f"/channels/{discord.guild_id}/{asked.thread_id}/{asked.card_message_id}" in pending
    offered = {c["value"]: c["name"] for c in choices}
    assert offered == {"app": "app", "docs": "docs · on server", "web": "web · on server"}
    assert after["interactions_acknowledged_twice"] == before["interactions_acknowledged_twice"]
    assert after["interactions_failed"] == before["interactions_failed"]


async def test_a_card_asked_on_this_machine_under_another_name_is_still_answered_here(
    discord: RunningEmulator, people: People, roots: Path
) -> None:
    """A process of the machine that read another DISCORD_MCP_MACHINE (set in one shell, not
    in the .env): its card names a machine nobody is; the machine whose state directory has
    the question answers it at its turn, when nobody did."""
    laptop = await machine(discord, roots, "laptop", "app")
    server = await machine(discord, roots, "server", "web")
    stray = dataclasses.replace(
        server, settings=dataclasses.replace(server.settings, machine="srv")
    )
    async with running(discord, people, laptop, server):
        async with asking(stray, Question("Tag it?", options=("Tag", "Skip"))) as decision:
            [card] = [m for m in people.messages(decision.thread_id) if m.get("components")]
            assert custom_ids(card)[0].endswith(":srv")
            before = stats(people)
            report = await asyncio.to_thread(people.click, card["id"], custom_ids(card)[1])
            await until(lambda: DecisionStore(server.home).load(decision.id).status == "answered")
        await every_turn_taken()  # the later machines' slots, before counting 40060s
        after = stats(people)
    assert report["acknowledged"] is True
    assert report["expired"] is False
    assert DecisionStore(server.home).load(decision.id).selected_option == "Skip"
    assert after["interactions_acknowledged_twice"] == before["interactions_acknowledged_twice"]
