"""A run's changes card on the owner's page (issue 35), in headless Chromium at a phone's width
(390 px): the card fits, its diff is shown coloured, and the owner merges with a click.

A real ``discord-watch`` (in a thread of this test) runs the scripted fake CLI in a worktree of
a git project; the owner starts the run with ``!start``, reads the card, presses Show diff,
then Merge. The screenshots of each step are kept (``PAGE_SCREENSHOTS``); the README's is
made from this test by ``scripts/screenshots``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.app import run_daemon
from tests.support.browser import PHONE, Page, wait_for
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.support.repos import git, make_repo
from tests.support.settings import settings_for

CHANGE = (
    "def greet(name):\n"
    '    """Say hello to someone."""\n'
    '    return f"Hello, {name}!"\n'
    "\n"
    "\n"
    "def shout(name):\n"
    "    return greet(name).upper()\n"
)


class DaemonThread:
    """``discord-watch`` on its own event loop in a thread (the browser test is synchronous)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._task = self._loop.create_task(run_daemon(**self._options))
        try:
            self._loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self._loop.close()

    def __enter__(self) -> DaemonThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        task = self._task
        if task is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(task.cancel)
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), "discord-watch did not stop"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "greeter", {"greeter.py": "def greet(name):\n    return name\n"})


@pytest.fixture
def daemon(
    discord: RunningEmulator, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DaemonThread]:
    monkeypatch.setenv("DISCORD_WATCH_ROOTS", str(tmp_path))
    monkeypatch.setenv("DISCORD_WATCH_DEBOUNCE_SECONDS", "0")
    settings = settings_for(discord, tmp_path / "home")
    ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add(
        "greeter", project, ["claude"], "claude", worktrees=True
    )
    spawner = FakeSpawner(tmp_path / "fake")
    spawner.script("greet people by name", Scenario(writes=(("greeter.py", CHANGE),)))
    with DaemonThread(settings=settings, spawner=spawner) as running:
        people = People(discord)
        try:
            wait_for(
                lambda: people.state()["stats"]["gateway_connections_open"] >= 1,
                timeout=30,
                what="discord-watch to hold the gateway",
            )
        finally:
            people.close()
        yield running
    assert running.error is None, running.error


def open_run(page: Page, people: People, discord: RunningEmulator) -> None:
    """``!start`` a run from the channel and open its thread on the page."""
    people.say(discord.channel_id, "!start greeter greet people by name")
    page.click("#messages .thread-link", "greeter")
    wait_for(lambda: page.message("Changes ·") and True, timeout=40, what="the changes card")


def show(page: Page, contains: str) -> None:
    """Scroll the message containing ``contains`` to the top of the screen."""
    page.driver.execute_script(
        "arguments[0].scrollIntoView({block: 'start'})", page.message(contains)
    )


def test_the_changes_card_fits_a_phone_and_merges_with_a_click(
    page: Page,
    chromium: Any,
    discord: RunningEmulator,
    daemon: DaemonThread,
    project: Path,
) -> None:
    people = People(discord)
    chromium.set_window_size(*PHONE)
    page.open()
    try:
        open_run(page, people, discord)
    finally:
        people.close()
    card = page.read("Changes", lambda m: m.text)
    width = page.driver.execute_script("return document.documentElement.clientWidth")
    labels = page.read(
        "Changes", lambda m: [b.text for b in m.find_elements(By.CSS_SELECTOR, "button.btn")]
    )

    def buttons_in_view() -> bool:
        card = page.message("Changes")
        shown = [b for b in card.find_elements(By.CSS_SELECTOR, "button.btn") if b.is_displayed()]
        return len(shown) == 4 and all(b.rect["x"] + b.rect["width"] <= width for b in shown)

    assert wait_for(buttons_in_view, what="the four buttons inside the screen")
    show(page, "Changes ·")
    page.shot("phone-card")

    page.click("button.btn", "Show diff", within="Changes")
    diff = wait_for(lambda: page.message("Diff of run"), what="the diff")
    added = diff.find_elements(By.CSS_SELECTOR, "code[data-lang='diff'] .md-diff-add")
    removed = diff.find_elements(By.CSS_SELECTOR, "code[data-lang='diff'] .md-diff-del")
    overflow = page.driver.execute_script("return document.documentElement.scrollWidth")
    show(page, "Changes ·")
    page.shot("phone-review")  # the card and its diff: the README's picture

    page.click("button.btn", "Merge into main", within="Changes")
    merged = wait_for(lambda: page.message("Merged into"), timeout=30, what="the merged card")
    page.shot("phone-merged")

    assert "1 file · +6 −1" in card
    assert "discord-mcp/run_" in card
    assert labels == ["Show diff", "Merge into main", "Open PR", "Discard"]
    assert width <= PHONE[0]
    assert overflow <= width
    assert any('return f"Hello, {name}!"' in a.text for a in added)
    assert any("return name" in r.text for r in removed)
    assert "Merged into main" in merged.text
    assert (project / "greeter.py").read_text(encoding="utf-8") == CHANGE
    assert git(project, "status", "--porcelain") == ""
