"""The owner's slash commands against the emulator: registered once, answered privately within
Discord's 3 seconds, owner-only by user id (whatever the member's permissions), the same code
as the ``!`` commands.

The agent CLIs are the scripted fake (tests/support/fake_cli.py); everything Discord-side is
real: the emulator, its gateway and interactions, our REST client and the daemon.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.runs.engine.schedules import ScheduleStore
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.control.spec import SPECS
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import COMMAND_COUNT, live_daemon, watch_settings
from tests.watch.test_daemon import texts

CONTRACT = {
    "project": ["add", "new", "list", "status", "remove"],
    "start": [],
    "session": ["list", "open", "close", "reopen", "rename"],
    "status": [],
    "tool": [],
    "model": [],
    "retry": [],
    "stop": [],
    "cancel": [],
    "logs": [],
    "diff": [],
    "usage": [],
    "pending": [],
    "schedule": ["add", "list", "remove"],
    "help": [],
    "chat": ["add", "list", "remove"],
}


def minimal_options(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Options that make each command valid as Discord's client sees it."""
    return {
        "project add": {"name": "web", "path": str(tmp_path / "web")},
        "project new": {"name": "fresh"},
        "project list": {},
        "project status": {"project": "app"},
        "project remove": {"project": "web"},
        "start": {"project": "app", "prompt": "say hello"},
        "session list": {},
        "session close": {},
        "session open": {"session": "1"},
        "session reopen": {"session": "1"},
        "session rename": {"name": "renamed"},
        "status": {},
        "tool": {"tool": "codex"},
        "model": {"model": "sonnet"},
        "retry": {},
        "stop": {},
        "cancel": {},
        "logs": {},
        "diff": {},
        "usage": {},
        "pending": {},
        "schedule add": {"when": "every 30m", "prompt": "check the CI", "project": "app"},
        "schedule list": {},
        "schedule remove": {"schedule": "sch_1"},
        "help": {},
        "chat add": {"tool": "claude"},
        "chat list": {},
        "chat remove": {},
    }


async def test_the_command_names_are_the_contract_and_registered_only_when_changed(
    make_emulator: Any, watch_env: Path, fake_spawner: FakeSpawner
) -> None:
    puts: list[Exchange] = []

    def hook(exchange: Exchange) -> None:
        if exchange.method == "PUT" and exchange.path.endswith("/commands"):
            puts.append(exchange)

    discord: RunningEmulator = make_emulator(rate_limit_scale=0.01, exchange_hook=hook)
    settings = await asyncio.to_thread(watch_settings, discord, watch_env)
    async with live_daemon(settings, fake_spawner, discord):
        first = await Slash(discord).commands()
    async with live_daemon(settings, fake_spawner, discord):
        second = await Slash(discord).commands()

    names = {
        c["name"]: sorted(o["name"] for o in c.get("options") or [] if o["type"] == 1)
        for c in first
    }
    assert names == {name: sorted(subs) for name, subs in CONTRACT.items()}
    assert len(first) == COMMAND_COUNT
    assert all(c["guild_id"] == discord.guild_id for c in first)
    assert all(c["default_member_permissions"] == "0" for c in first)
    assert len(puts) == 1  # the second start found the same set and sent nothing
    assert [(c["id"], c["version"]) for c in second] == [(c["id"], c["version"]) for c in first]


async def test_a_member_without_permission_is_not_even_offered_the_commands(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    stranger = people.new_user("mallory")
    async with live_daemon(live_settings, fake_spawner, discord):
        response = await slash.post(slash.body("status", user=stranger))
    assert response.status_code == 400  # Discord's client hides them (default_member_permissions)


async def test_commands_can_be_shown_to_every_member_and_still_answer_only_owners(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A second owner who is no administrator of the server: hidden commands would not show.
    teammate = people.new_user("teammate")
    stranger = people.new_user("mallory")
    owners = f"{discord.owner_user_id},{teammate}"
    settings = await asyncio.to_thread(watch_settings, discord, watch_env, DISCORD_OWNER_IDS=owners)
    async with live_daemon(settings, fake_spawner, discord):
        hidden = await slash.post(slash.body("status", user=teammate))
    monkeypatch.setenv("DISCORD_WATCH_COMMANDS_FOR", "everyone")
    async with live_daemon(settings, fake_spawner, discord):
        # Registered again, now for everyone (the first start's set was already there).
        async with asyncio.timeout(15):
            while any(c["default_member_permissions"] for c in await slash.commands()):
                await asyncio.sleep(0.05)
        commands = await slash.commands()
        answered = await slash.text("status", user=teammate)
        refused = await slash.text("status", user=stranger)
    assert hidden.status_code == 400  # by default only administrators see them
    assert all(c["default_member_permissions"] is None for c in commands)
    assert not answered.startswith("**E_OWNER_ONLY**")
    assert refused.startswith("**E_OWNER_ONLY**")


async def test_in_an_announcement_channel_start_opens_an_announcement_thread(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    news = people.new_channel(5, "news")
    settings = await asyncio.to_thread(watch_settings, discord, watch_env, DISCORD_CHANNEL_ID=news)
    async with live_daemon(settings, fake_spawner, discord):
        started = await slash.text("start", channel=news, project="app", prompt="look around")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: len(fake_spawner.runs()) == 1)
    [thread] = [t for t in people.state()["channels"] if t["id"] == thread_id]
    assert thread["type"] == 10
    assert thread["parent_id"] == news
    assert fake_spawner.runs()[0]["prompt"] == "look around"


async def test_every_command_refuses_a_stranger_even_an_administrator(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
    watch_env: Path,
) -> None:
    (watch_env / "web").mkdir()
    stranger = people.new_user("mallory")
    await slash.make_admin_everyone()  # so Discord's client lets them try
    answers = {}
    async with live_daemon(live_settings, fake_spawner, discord):
        for path, options in minimal_options(watch_env).items():
            report = await slash.run(path, user=stranger, **options)
            assert report["ephemeral"], path
            answers[path] = await slash.answer(report)
        choices = await slash.choices("start", "project", user=stranger, project="a", prompt="x")
    assert set(answers) == {spec.path for spec in SPECS}
    refused = {path for path, text in answers.items() if text.startswith("**E_OWNER_ONLY**")}
    assert refused == set(answers)
    assert choices == []
    assert [p.name for p in ProjectRegistry(live_settings.home).list()] == ["app"]
    assert people.threads() == []
    assert ScheduleStore(live_settings.home).list() == []
    assert fake_spawner.runs() == []


async def test_every_command_answers_the_owner_privately_in_time(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    watch_env: Path,
) -> None:
    (watch_env / "web").mkdir()
    answers = {}
    async with live_daemon(live_settings, fake_spawner, discord):
        for path, options in minimal_options(watch_env).items():
            report = await slash.run(path, **options)
            assert report["ephemeral"], path
            assert not report["expired"], path
            answers[path] = await slash.answer(report)
    assert not any("E_OWNER_ONLY" in text for text in answers.values())
    assert answers["project add"].startswith("Added project **web**")
    assert answers["start"].startswith("Started <#")
    assert answers["schedule add"].startswith("Scheduled `sch_1` (every 30m)")
    assert answers["schedule remove"].startswith("Removed `sch_1`")
    assert answers["help"].startswith("**discord-watch commands**")
    assert answers["tool"].startswith("**E_NOT_IN_MANAGED_THREAD**")  # typed in the channel


async def test_start_opens_a_thread_that_runs_the_prompt_and_thread_commands_steer_it(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    async with live_daemon(live_settings, fake_spawner, discord):
        started = await slash.text("start", project="app", prompt="fix the tests", tool="codex")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        status = await slash.text("status", channel=thread_id)
        model = await slash.text("model", channel=thread_id, model="gpt-5-codex")
        tool = await slash.text("tool", channel=thread_id, tool="claude")
        people.say(thread_id, "and the docs")
        await until(lambda: len(fake_spawner.runs()) == 2)
        await until(lambda: sum("Reply in this thread" in t for t in texts(people, thread_id)) == 2)
        stop = await slash.text("stop", channel=thread_id)
        cancel = await slash.text("cancel", channel=thread_id)
        retry = await slash.text("retry", channel=thread_id)
    first, second = fake_spawner.runs()
    assert (first["tool"], first["prompt"]) == ("codex", "fix the tests")
    assert (second["tool"], second["prompt"]) == ("claude", "and the docs")
    assert second["argv"][second["argv"].index("--model") + 1] == "gpt-5-codex"
    assert "project: app" in status
    assert "tool: codex" in status
    assert model == "From the next job on, this thread asks for model `gpt-5-codex`."
    assert tool == "From the next job on, this thread uses `claude`."
    assert stop == "No job is running here."
    assert cancel == "No job is waiting here."
    assert retry.startswith("**E_JOB_NOT_RETRYABLE**")
    [thread] = people.threads()
    assert thread["id"] == thread_id
    assert thread["parent_id"] == discord.channel_id
    opening = texts(people, thread_id)[0]
    assert "Session started for **app** with `codex`" in opening
    assert "fix the tests" in opening


async def test_start_without_a_prompt_opens_the_thread_and_waits_for_the_owner(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    """``/start <project>`` alone, as seed 000 has it (issue 34): a thread, no job yet."""
    async with live_daemon(live_settings, fake_spawner, discord):
        started = await slash.text("start", project="app")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: any("Session started" in t for t in texts(people, thread_id)))
        assert fake_spawner.runs() == []
        people.say(thread_id, "now fix the tests")
        await until(lambda: len(fake_spawner.runs()) == 1)
    assert started == f"Started <#{thread_id}> for **app** with `claude`."
    assert [r["prompt"] for r in fake_spawner.runs()] == ["now fix the tests"]


async def test_a_step_discord_holds_back_too_long_is_answered_as_its_rate_limit(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    """Seed 000's E_DISCORD_RATE_LIMIT (issue 34): a 429 longer than the command may wait."""
    async with live_daemon(live_settings, fake_spawner, discord):
        people.fault(
            route="POST /channels/{channel_id}/threads", status=429, count=1, retry_after=600
        )
        held = await slash.text("start", project="app", prompt="go")
    assert held.startswith("**E_DISCORD_RATE_LIMIT**"), held
    assert people.threads() == []
    assert fake_spawner.runs() == []


async def test_session_open_unarchives_the_sessions_thread_to_go_on_there(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    """``/session open`` and ``!session open`` (seed 000 §11.6, issue 34): the same thread,
    unarchived; a thread that cannot be opened is E_THREAD_ACCESS_FAILED."""
    async with live_daemon(live_settings, fake_spawner, discord):
        started = await slash.text("start", project="app", prompt="first")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        await slash.text("session close", session=thread_id)
        await until(lambda: people.threads()[0]["thread_metadata"]["archived"])
        opened = await slash.text("session open", session=thread_id)
        archived = people.threads()[0]["thread_metadata"]["archived"]
        people.say(thread_id, "second")
        await until(lambda: len(fake_spawner.runs()) == 2)
        unknown = await slash.text("session open", session="123456789012345678")
        people.fault(route="PATCH /channels/{channel_id}", status=403, count=1, code=50001)
        refused = await slash.text("session open", session=thread_id)
        people.say(discord.channel_id, f"!session open {thread_id}")
        await until(
            lambda: sum("Session opened" in t for t in texts(people, thread_id)) == 2,
            what="the text command to open it too",
        )
    assert (
        opened
        == f"Opened <#{thread_id}>: {discord.base_url}/channels/{discord.guild_id}/{thread_id}"
    )
    assert archived is False
    assert [r["prompt"] for r in fake_spawner.runs()] == ["first", "second"]
    assert unknown.startswith("**E_SESSION_NOT_FOUND**")
    assert refused.startswith("**E_THREAD_ACCESS_FAILED**")
    assert len(people.threads()) == 1  # nothing moved to another thread


async def test_project_add_takes_only_folders_inside_the_roots(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    watch_env: Path,
    tmp_path_factory: Any,
) -> None:
    (watch_env / "api").mkdir()
    outside = tmp_path_factory.mktemp("elsewhere")
    async with live_daemon(live_settings, fake_spawner, discord):
        home = await slash.text("project add", name="home", path=str(Path.home()))
        root = await slash.text("project add", name="root", path="/")
        away = await slash.text("project add", name="away", path=str(outside))
        added = await slash.text("project add", name="api", path=str(watch_env / "api"))
        listed = await slash.text("project list")
        status = await slash.text("project status", project="api")
        removed = await slash.text("project remove", project="api")
        missing = await slash.text("project status", project="api")
    assert home.startswith("**E_INVALID_PATH**")
    assert "home directory" in home
    assert root.startswith("**E_INVALID_PATH**")
    assert away.startswith("**E_INVALID_PATH**")
    assert "outside the allowed roots" in away
    assert added.startswith("Added project **api**")
    assert "**api**" in listed
    assert "**app**" in listed
    assert "session_total: 0" in status
    assert removed.startswith("Removed project **api**")
    assert missing.startswith("**E_PROJECT_NOT_FOUND**")
    assert [p.name for p in ProjectRegistry(live_settings.home).list()] == ["app"]


async def test_project_add_sets_how_tool_calls_are_approved(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    watch_env: Path,
    people: People,
) -> None:
    (watch_env / "api").mkdir()
    (watch_env / "docs").mkdir()
    async with live_daemon(live_settings, fake_spawner, discord):
        strict = await slash.text(
            "project add", name="api", path=str(watch_env / "api"), approvals="ask-all"
        )
        # Discord only lets the slash command send a listed choice; the text command can err.
        people.say(discord.channel_id, f"!project add docs {watch_env / 'docs'} --approvals maybe")
        await until(
            lambda: any("E_INVALID_APPROVALS" in t for t in texts(people, discord.channel_id))
        )
        plain = await slash.text("project add", name="docs", path=str(watch_env / "docs"))
        listed = await slash.text("project list")
    assert "approvals `ask-all`" in strict
    assert "approvals `ask`" in plain
    assert "**api**" in listed
    assert "approvals `ask-all`" in listed
    registered = {p.name: p.approvals for p in ProjectRegistry(live_settings.home).list()}
    assert registered == {"api": "ask-all", "app": "ask", "docs": "ask"}


async def test_project_add_takes_args_json_checked_as_the_command_line_checks_it(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    watch_env: Path,
) -> None:
    """Seed 000's ``/project create ... [args_json]`` (issue 34): the project file's
    ``default_args``, each a JSON list of strings, for a tool the project can run."""
    for name in ("api", "bad1", "bad2", "bad3", "bad4"):
        (watch_env / name).mkdir()
    wrong = {
        "bad1": '{"codex": "--model o3"}',  # one shell string
        "bad2": '["--model", "o3"]',  # not per tool
        "bad3": '{"bash": ["-c", "x"]}',  # not a tool
        "bad4": "{codex: [--model]}",  # not JSON
    }
    async with live_daemon(live_settings, fake_spawner, discord):
        added = await slash.text(
            "project add",
            name="api",
            path=str(watch_env / "api"),
            args_json='{"codex": ["--model", "o3"], "claude": []}',
        )
        refused = {
            name: await slash.text(
                "project add", name=name, path=str(watch_env / name), args_json=text
            )
            for name, text in wrong.items()
        }
    assert added.startswith("Added project **api**"), added
    assert "`codex` args `--model o3`" in added
    found = ProjectRegistry(live_settings.home).get("api")
    assert found.args["codex"] == ("--model", "o3")
    assert found.args["claude"] == ()
    for name, reply in refused.items():
        assert reply.startswith("**E_INVALID_ARGS**"), (name, reply)
    assert [p.name for p in ProjectRegistry(live_settings.home).list()] == ["api", "app"]


async def test_sessions_are_listed_closed_reopened_and_renamed(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    async with live_daemon(live_settings, fake_spawner, discord):
        started = await slash.text("start", project="app", prompt="first")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        listed = await slash.text("session list", project="app")
        renamed = await slash.text("session rename", channel=thread_id, name="release checks")
        closed = await slash.text("session close", session=thread_id)
        people.say(thread_id, "one more thing")
        await until(lambda: any("E_SESSION_CLOSED" in t for t in texts(people, thread_id)))
        reopened = await slash.text("session reopen", session=thread_id)
        people.say(thread_id, "one more thing, now")
        await until(lambda: len(fake_spawner.runs()) == 2)
    assert f"<#{thread_id}> **app** `claude`" in listed
    assert renamed == f"Renamed <#{thread_id}> to **release checks**."
    assert closed == f"Closed <#{thread_id}>."
    # The bot talks to the emulator: links open the emulator's page, not discord.com.
    assert reopened.startswith(f"Reopened <#{thread_id}>: {discord.base_url}/channels/")
    [thread] = people.threads()
    assert thread["name"] == "release checks"
    assert [r["prompt"] for r in fake_spawner.runs()] == ["first", "one more thing, now"]


async def test_autocomplete_offers_projects_sessions_tools_and_models(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    async with live_daemon(live_settings, fake_spawner, discord):
        started = await slash.text("start", project="app", prompt="look around", tool="gemini")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        projects = await slash.choices("start", "project", project="a", prompt="x")
        none = await slash.choices("start", "project", project="zzz", prompt="x")
        sessions = await slash.choices("status", "session", session="")
        tools = await slash.choices("tool", "tool", channel=thread_id, tool="")
        models = await slash.choices("model", "model", channel=thread_id, model="gemini-2.5")
    assert projects == [{"name": "app", "value": "app"}]
    assert none == []
    assert [c["value"] for c in sessions] == [thread_id]
    assert "app · look around" in sessions[0]["name"]
    assert [c["value"] for c in tools] == ["claude", "codex", "gemini"]
    assert models
    assert all(c["value"].startswith("gemini-2.5") for c in models)


async def test_autocomplete_never_offers_a_clipped_value(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    # A project whose gemini arguments name a model longer than a choice's value may be (100).
    long_model = "gemini-2.5-" + "x" * 120
    (watch_env / "big").mkdir()
    settings = await asyncio.to_thread(watch_settings, discord, watch_env)
    await asyncio.to_thread(
        ProjectRegistry(settings.home, allowed_roots=[watch_env]).add,
        "big",
        watch_env / "big",
        ["gemini"],
        "gemini",
        args={"gemini": ["--model", long_model]},
    )
    async with live_daemon(settings, fake_spawner, discord):
        started = await slash.text("start", project="big", prompt="look around")
        thread_id = started.split("<#")[1].split(">")[0]
        models = await slash.choices("model", "model", channel=thread_id, model="gemini-2.5")
    assert models
    # A clipped value would set another model than the one shown: it is left out instead.
    assert all(len(c["value"]) <= 100 and not c["value"].endswith("…") for c in models)
    assert {c["value"] for c in models} == {
        "gemini-2.5-pro",
        "gemini-2.5-flash",
        "gemini-2.5-flash-lite",
    }


async def test_a_command_that_takes_longer_is_deferred_then_answered(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    async with live_daemon(live_settings, fake_spawner, discord):
        # Discord makes the thread creation wait 2 s: longer than we let a command run.
        people.fault(
            route="POST /channels/{channel_id}/threads", status=429, retry_after=2.0, count=1
        )
        report = await slash.run("start", project="app", prompt="slowly")
        answer = await slash.answer(report)
    assert report["response_type"] == 5
    assert report["ephemeral"]
    assert answer.startswith("Started <#")


async def test_usage_logs_and_pending_report_what_happened(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    from discord_mcp.decisions.questions import Question
    from tests.decisions.test_service import running_service

    async with running_service(live_settings) as service:
        decision, _ = await service.ask(Question("Ship it?", options=("Yes", "No")))
    async with live_daemon(live_settings, fake_spawner, discord):
        started = await slash.text("start", project="app", prompt="count tokens")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        usage = await slash.text("usage")
        usage_app = await slash.text("usage", project="app", period="today")
        logs = await slash.text("logs", channel=thread_id)
        no_logs = await slash.text("logs")
        pending = await slash.text("pending")
    assert "total: 1 jobs" in usage
    assert "**by project**" in usage
    assert "app: 1 jobs" in usage
    assert f"<#{thread_id}>: 1 jobs" in usage
    assert "in /" in usage
    assert "out tokens" in usage
    assert "**by project**" not in usage_app
    assert logs.startswith("**Log of `job_")
    assert "result" in logs
    assert no_logs.startswith("**E_JOB_NOT_FOUND**")
    assert "**Ship it?**" in pending
    link = f"{discord.base_url}/channels/{discord.guild_id}/{decision.thread_id}/"
    assert f"({link}{decision.card_message_id})" in pending


async def test_a_schedule_runs_its_prompt_in_its_own_thread_when_due(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    from tests.watch.test_sessions import MovableClock

    clock = MovableClock()
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock, schedule_tick=0.05):
        added = await slash.text("schedule add", when="every 10m", prompt="check CI", project="app")
        wrong = await slash.text("schedule add", when="sometimes", prompt="x", project="app")
        nowhere = await slash.text("schedule add", when="every 10m", prompt="x")
        listed = await slash.text("schedule list")
        clock.jump(601)
        await until(lambda: len(fake_spawner.runs()) == 1)
        [thread] = people.threads()
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread["id"])))
        clock.jump(601)
        await until(lambda: len(fake_spawner.runs()) == 2)
        again = await slash.text("schedule list")
        removed = await slash.text("schedule remove", schedule="sch_1")
        gone = await slash.text("schedule list")
    assert added.startswith("Scheduled `sch_1` (every 10m) in a new thread of **app**")
    assert wrong.startswith("**E_INVALID_SCHEDULE**")
    assert nowhere.startswith("**E_BAD_ARGUMENTS**")
    assert "`sch_1` every 10m" in listed
    assert "ran 0×" in listed
    assert len(people.threads()) == 1  # the second run used the same thread
    assert thread["name"].startswith("\u23f0 app · check CI")
    assert [r["prompt"] for r in fake_spawner.runs()] == ["check CI", "check CI"]
    assert f"in <#{thread['id']}>" in again
    assert "ran 2×" in again
    assert removed.startswith("Removed `sch_1`")
    assert gone.startswith("No scheduled prompts")


async def test_project_new_creates_a_folder_under_the_roots_and_registers_it(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    watch_env: Path,
) -> None:
    (watch_env / "taken").mkdir()
    async with live_daemon(live_settings, fake_spawner, discord):
        made = await slash.text("project new", name="fresh", tools="claude", git="yes")
        plain = await slash.text("project new", name="plain")
        taken = await slash.text("project new", name="taken")
        bad = await slash.text("project new", name="../up")
    assert made.startswith("Created `")
    assert "Ran `git init`" in made
    assert (watch_env / "fresh" / ".git").is_dir()
    assert not (watch_env / "plain" / ".git").exists()
    assert plain.startswith("Created `")
    assert taken.startswith("**E_INVALID_PATH**")
    assert bad.startswith("**E_INVALID_PROJECT_NAME**")
    assert not (watch_env.parent / "up").exists()
    projects = {p.name: p for p in ProjectRegistry(live_settings.home).list()}
    assert projects["fresh"].path == (watch_env / "fresh").resolve()
    assert projects["fresh"].tools == ("claude",)
    assert "taken" not in projects
