"""A running job in Discord within the real service's budgets (issue 33): its streamed text and
its status share the thread's edit budget and leave room in every window for the writers that
cannot wait; a status message too old to edit is posted anew; the end of a job (the answer,
however long) is durable work that no time bound cuts, finished by the next daemon when this
one stopped, and the run's result says where it was posted."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Secret, Settings
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.runs.engine.notices import Notices
from discord_mcp.runs.journal.views import Activity, JobView
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.notifier import DiscordNotifier
from discord_mcp.watch.outbox import Delivery, Outbox, answer_steps, new_nonce_prefix
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.test_daemon import daemon, first_look, texts


def job_view(thread_id: str, *, state: str = "running", final_text: str | None = None) -> JobView:
    now = dt.datetime.now(dt.UTC)
    return JobView(
        job_id="job_20260101_0001", thread_id=thread_id, message_id="7", author="Owner",
        prompt="write a long answer", state=state, attempt=1, retry_of=None, retried_by=None,  # type: ignore[arg-type]
        tool="claude", project_name="app", error_code=None, error_message=None, enqueued_at=now,
        started_at=now, finished_at=now if state != "running" else None, duration=1.0,
        session_key="s", resumed=False, result_excerpt=None, usage=None, cost_usd=None,
        exit_code=0, pid=1, reattached=False, final_text=final_text,
    )  # fmt: skip


def activity(number: int) -> Activity:
    return Activity(
        job_id="job_20260101_0001",
        elapsed=float(number),
        tool_calls=(),
        tool_call_count=0,
        last_text=f"working on step {number}",
        note=None,
        session_key="s",
        events_seen=number,
    )


class Edits:
    """Every PATCH of a message in one thread, with where its edit window stood."""

    def __init__(self) -> None:
        self.thread = ""
        self.seen: list[tuple[int, int | None]] = []

    def __call__(self, exchange: Exchange) -> None:
        if exchange.method == "PATCH" and exchange.path.startswith(
            f"/channels/{self.thread}/messages/"
        ):
            left = exchange.response_headers.get("X-RateLimit-Remaining")
            self.seen.append((exchange.status, int(left) if left is not None else None))


@pytest.fixture
def edits() -> Edits:
    return Edits()


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator], edits: Edits) -> RunningEmulator:
    # Discord's real speed: 5 edits per 5 s in a channel.
    return make_emulator(rate_limit_scale=1.0, exchange_hook=edits)


async def new_thread(rest: RestClient, discord: RunningEmulator) -> str:
    return str((await rest.create_thread(discord.channel_id, "run"))["id"])


async def test_streamed_text_and_status_leave_room_in_every_edit_window(
    discord: RunningEmulator, edits: Edits
) -> None:
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        edits.thread = thread = await new_thread(rest, discord)
        notifier = DiscordNotifier(rest)
        job = job_view(thread)
        await notifier.job_started(job, None)  # type: ignore[arg-type]
        text = ""
        started = time.monotonic()
        number = 0
        while time.monotonic() - started < 9.0:  # an agent writing steadily
            number += 1
            text += f"line {number} of the answer\n"
            await notifier.job_text(job, text)
            await notifier.job_activity(job, activity(number))
            await asyncio.sleep(0.1)
        await notifier.aclose()
    assert len(edits.seen) >= 5  # both kept going, a window's worth at least
    assert all(status == 200 for status, _ in edits.seen)  # no 429
    # Each of them left an edit of its window to the writers that cannot wait.
    assert all(left is not None and left >= 1 for _, left in edits.seen), edits.seen


async def test_a_status_message_older_than_fifty_minutes_is_posted_anew_not_edited(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    discord = make_emulator(rate_limit_scale=0.01)
    people = People(discord)
    try:
        async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
            thread = await new_thread(rest, discord)
            notifier = DiscordNotifier(rest)
            job = job_view(thread)
            await notifier.job_started(job, None)  # type: ignore[arg-type]
            [first] = [m for m in people.messages(thread) if "job_" in m["content"]]
            people.advance(55 * 60)  # a long run: its status message is 55 minutes old
            await rest.get_channel(thread)  # any answer tells Discord's time
            await notifier.job_activity(job, activity(1))
            await until(
                lambda: len([m for m in people.messages(thread) if "step 1" in m["content"]]) == 1
            )
            await until(lambda: first["id"] not in [m["id"] for m in people.messages(thread)])
            await notifier.aclose()
        stats = people.state()["stats"]
    finally:
        people.close()
    assert stats["rest_429"] == 0


LONG = "\n".join(f"{n:05d} " + "word " * 30 for n in range(130))  # about 20,000 characters


async def test_a_long_answer_is_posted_whole_however_long_discord_makes_it_wait(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    # 5 messages per window: eleven pieces take three windows, far past the notifier's bound.
    discord = make_emulator(rate_limit_scale=0.3)
    people = People(discord)
    try:
        async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
            thread = await new_thread(rest, discord)
            notifier = DiscordNotifier(rest)
            job = job_view(thread, state="success", final_text=LONG)
            notices = Notices(notifier, timeout=0.5, running_view=lambda _: None)
            running = asyncio.create_task(notices.run())
            notices.post("job_finished", job, None)
            notices.close()
            await running

            def shown() -> str:
                return "\n".join(m["content"] for m in people.messages(thread))

            await until(lambda: "00129" in shown() and "Reply in this thread" in shown(), 30)
            await notifier.aclose()
        messages = [m["content"] for m in people.messages(thread)]
    finally:
        people.close()
    assert len(messages) >= 10
    joined = "\n".join(messages)
    for number in range(130):
        assert joined.count(f"{number:05d} ") == 1  # every line once, none cut, none twice


async def test_an_answer_half_sent_when_the_daemon_stopped_is_finished_by_the_next_one(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    discord = make_emulator(rate_limit_scale=0.01)
    people = People(discord)
    home = tmp_path / "home"
    try:
        async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
            thread = await new_thread(rest, discord)
            first = Outbox(rest, home)
            steps = answer_steps(LONG, {"parse": []}, nonce_prefix=new_nonce_prefix())
            await first.add(Delivery("job_1", thread, steps, queued_at=time.time(), job_id="job_1"))
            await until(lambda: len(people.messages(thread)) >= 3)
            people.fault(route="POST /channels/{channel_id}/messages", status=503, count=1000)
            await until(lambda: first.pending(thread) and first.pending(thread)[0].attempts > 0)
            await first.aclose()  # the daemon stops (or dies) here
            people.fault(clear=True)
            kept = json.loads((home / "outbox" / "job_1.json").read_text(encoding="utf-8"))
            assert 3 <= sum(s["done"] for s in kept["steps"]) < len(steps)
            done: list[Delivery] = []

            async def told(delivery: Delivery) -> None:
                done.append(delivery)

            second = Outbox(rest, home, on_done=told)
            second.start()
            # Told first, the file removed after (a stop in between tells it again): wait for both.
            await until(lambda: done and not (home / "outbox" / "job_1.json").exists(), 30)
            await second.aclose()
        messages = people.messages(thread)
    finally:
        people.close()
    assert [m["content"] for m in messages] == [s.content for s in steps]  # once each, in order
    assert done[0].posted == [m["id"] for m in messages]
    assert not (home / "outbox" / "job_1.json").exists()


async def test_the_runs_result_says_where_its_answer_was_posted(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    async with daemon(settings, spawner):
        await first_look(settings)
        thread_id = people.say(discord.channel_id, "!start app fix the failing tests")["id"]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))

        def answered() -> dict[str, Any] | None:
            for path in (settings.home / "runs").glob("run_*/result.json"):
                result = json.loads(path.read_text(encoding="utf-8"))
                if result.get("answer"):
                    return dict(result)
            return None

        result = await until(answered, 30)
    answer = result["answer"]
    [posted] = [m for m in people.messages(thread_id) if "Reply in this thread" in m["content"]]
    assert answer["state"] == "posted"
    assert answer["channel_id"] == thread_id
    assert answer["message_ids"] == [posted["id"]]
    assert result["turns"][-1]["answer"] == answer
