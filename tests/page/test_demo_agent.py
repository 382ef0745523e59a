"""``discord-mcp demo --agent claude``: the real Claude Code, offline, asks on the owner's page.

The demo is the command a newcomer runs; the test is the newcomer: it opens the page the demo
prints, answers the question card with a click, and sees the approval card for the agent's
shell command, then allows it and sees the job end in the run thread.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By

from discord_mcp.demo.agents import QUESTION
from discord_mcp.team.presence import THREAD_NAME as PRESENCE_THREAD
from tests.support.agent_clis import require_cli
from tests.support.browser import Page, wait_for

pytestmark = pytest.mark.e2e

AGENT_TIMEOUT = 90.0


class RunningDemo:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        assert process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._reader.start()
        first = wait_for(lambda: self.lines, timeout=30, what="the demo's first line")[0]
        found = re.search(r"Open (http://127\.0\.0\.1:\d+)/ ", first)
        assert found, first
        self.base_url = found.group(1)

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def run_thread(self) -> str | None:
        state = httpx.get(self.base_url + "/_emulator/state", timeout=10).json()
        threads = [
            c["id"]
            for c in state["channels"]
            if c["type"] == 11 and c.get("name") != PRESENCE_THREAD  # not the machines' thread
        ]
        return threads[0] if threads else None

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[RunningDemo]:
    claude = require_cli("claude")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "CLAUDE_"))}
    env["PATH"] = os.pathsep.join([str(claude.parent), env.get("PATH", "")])
    env["HOME"] = str(tmp_path / "newcomer")  # nothing of the developer's own setup
    with (tmp_path / "demo.stderr").open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "discord_mcp", "demo", "--agent", "claude", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=env,
            cwd=tmp_path,
        )
    running = RunningDemo(process)
    try:
        yield running
    finally:
        assert running.stop() == 0
    errors = (tmp_path / "demo.stderr").read_text(encoding="utf-8")
    assert "Traceback" not in errors, errors


def test_the_demo_with_claude_shows_its_question_then_its_approval_card_on_the_page(
    demo: RunningDemo, chromium: Any, tmp_path: Path
) -> None:
    kept = os.environ.get("PAGE_SCREENSHOTS")  # scripts/screenshots makes docs' pictures here
    shots = Path(kept) / "demo" if kept else tmp_path / "shots"
    page = Page(chromium, demo.base_url, shots)
    thread = wait_for(demo.run_thread, timeout=AGENT_TIMEOUT, what="the run thread")
    page.open(thread)
    wait_for(
        lambda: any(QUESTION in m.text for m in page.find("#messages .msg")),
        timeout=AGENT_TIMEOUT,
        what="claude's question on the page",
    )
    page.shot("question")
    page.click("button.btn", "release/1.4", within=QUESTION)

    def approval_card() -> tuple[str, int] | None:
        """The card's text and its number of buttons, read in one go (the live page may
        redraw it between two reads)."""
        for message in page.find("#messages .msg"):
            if "Approval needed" in message.text:
                return message.text, len(message.find_elements(By.CSS_SELECTOR, "button.btn"))
        return None

    text, buttons = wait_for(
        approval_card, timeout=AGENT_TIMEOUT, what="the approval card on the page"
    )
    assert "echo deploying release/1.4 to staging > deploy.log" in text
    assert buttons
    page.shot("approval-card")
    page.click("button.btn", "Allow once", within="Approval needed")
    wait_for(lambda: demo.said("the job ended"), timeout=AGENT_TIMEOUT, what="the job to end")
    page.shot("done")
    assert demo.said("run thread:")
    assert demo.said("approval card: the agent asks to run a command")
    assert page.console_errors() == []
    chromium.get("about:blank")
