"""``discord-mcp demo``: the real command, answered as a person would through the emulator."""

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

from tests.support.agent_clis import require_cli
from tests.support.browser import wait_for

DEMO = [sys.executable, "-m", "discord_mcp", "demo", "--port", "0"]


class Demo:
    """A running demo: its output so far, and the control API of its emulator."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        assert process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._reader.start()
        first = wait_for(lambda: self.lines, timeout=30, what="the demo's first line")[0]
        found = re.search(r"(http://127\.0\.0\.1:\d+)/ ", first)
        assert found, first
        self.base_url = found.group(1)
        self.control = httpx.Client(base_url=self.base_url + "/_emulator", timeout=10)

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def card(self, contains: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The channel or thread and the card (a message with buttons) that says ``contains``,
        once posted and still to be answered."""

        def look() -> tuple[dict[str, Any], dict[str, Any]] | None:
            for channel in self.control.get("/state").json()["channels"]:
                if channel["type"] not in (0, 11):
                    continue
                for message in self.control.get(f"/channels/{channel['id']}/messages").json():
                    buttons = [c for row in message["components"] for c in row["components"]]
                    live = any(not c.get("disabled") for c in buttons)
                    if contains in message["content"] and live:
                        return channel, message
            return None

        return wait_for(look, timeout=60, what=f"the card with {contains!r}")

    def click(self, card: dict[str, Any], label: str) -> dict[str, Any]:
        [custom_id] = [
            c["custom_id"]
            for row in card["components"]
            for c in row["components"]
            if c.get("label", "").endswith(label)
        ]
        owner = self.control.get("/state").json()["owner_user_id"]
        answer = self.control.post(
            "/interactions",
            json={"user_id": owner, "message_id": card["id"], "custom_id": custom_id},
        )
        answer.raise_for_status()
        return dict(answer.json())

    def close(self) -> None:
        self.control.close()
        if self.process.stdin is not None:
            self.process.stdin.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_demo(tmp_path: Path, *args: str) -> Demo:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISCORD_")}
    with (tmp_path / "demo.stderr").open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [*DEMO, "--pause", "0", *args],
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env | {"PYTHONWARNINGS": "error"},
        )
    return Demo(process)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    running = start_demo(tmp_path, "--rounds", "1")
    yield running
    running.close()
    errors = (tmp_path / "demo.stderr").read_text(encoding="utf-8")
    assert "Traceback" not in errors, errors


def answer_the_round(demo: Demo) -> None:
    """Answer every card of one round as the owner: the question, the approval, the rest."""
    _, card = demo.card("Delete the 14 merged branches?")
    report = demo.click(card, "Delete them")
    assert report["acknowledged"]
    assert report["response_type"] == 7
    wait_for(lambda: demo.said("answer: 'Delete them'"), what="the agent to get the answer")

    _, approval = demo.card("Approval needed")
    assert "git branch --merged main | grep -v main | xargs git branch -d" in approval["content"]
    demo.click(approval, "Allow once")
    wait_for(lambda: demo.said("approved: running it"), what="the agent to be allowed")

    _, card = demo.card("Which version number for this release?")
    demo.click(card, "1.3.1")
    _, approval = demo.card("git tag -a v1.3.1")
    demo.click(approval, "Allow once")
    wait_for(lambda: demo.said("done: tagging 1.3.1"), what="the agent to act on it")

    third, card = demo.card("Anything the release notes must say?")
    owner = demo.control.get("/state").json()["owner_user_id"]
    demo.control.post(
        f"/channels/{third['id']}/messages",
        json={"author_id": owner, "content": "Thank the two new contributors"},
    ).raise_for_status()

    # Then a run thread: discord-watch runs the demo's agent CLI, which asks there too.
    run, card = demo.card("Run the full test suite before tagging the release?")
    assert run["type"] == 11
    assert "Get the release ready" in run["name"]
    demo.click(card, "Run it")
    where, approval = demo.card("Approval needed")
    assert where["id"] == run["id"]  # in the run thread
    assert "scripts/test" in approval["content"]
    demo.click(approval, "Allow once")
    wait_for(lambda: demo.said("run thread: the job ended"), timeout=60, what="the run's end")


def test_the_demo_prints_the_page_first_and_plays_a_round_answered_by_the_owner(
    demo: Demo,
) -> None:
    assert demo.lines[0].startswith(f"Open {demo.base_url}/ ")
    page = httpx.get(demo.base_url + "/", timeout=10)
    assert page.status_code == 200
    assert "owner" in page.text

    answer_the_round(demo)

    assert demo.process.wait(timeout=60) == 0
    assert demo.said("round 1 done")
    assert demo.said("answer: 'Thank the two new contributors' from Owner via text")
    assert any(line.startswith("discord-watch: running") for line in demo.lines)


def test_a_round_answered_with_the_safe_options_still_shows_an_approval_card(demo: Demo) -> None:
    """README and the banner promise an approval card in every round, whatever is picked."""
    _, card = demo.card("Delete the 14 merged branches?")
    demo.click(card, "Keep them")
    _, card = demo.card("Which version number for this release?")
    demo.click(card, "1.3.1")
    _, approval = demo.card("Approval needed")
    assert "git tag -a v1.3.1 -m Release" in approval["content"]
    demo.click(approval, "Deny")
    wait_for(lambda: demo.said("not approved"), what="the agent to hear the refusal")


def test_once_every_card_is_answered_the_demo_waits_for_enter_before_playing_again(
    tmp_path: Path,
) -> None:
    demo = start_demo(tmp_path)
    try:
        answer_the_round(demo)
        wait_for(lambda: demo.said("every card was answered"), what="the end of the round")
        wait_for(lambda: demo.said("Press Enter to play again"), what="the prompt")
        assert not demo.said("again from the top")
        asked = {
            decision
            for c in demo.control.get("/state").json()["channels"]
            for m in demo.control.get(f"/channels/{c['id']}/messages").json()
            if "Delete the 14 merged branches?" in m["content"]
            for decision in re.findall(r"decision `([^`]+)`", m["content"])
        }
        assert len(asked) == 1  # nothing new is asked until Enter
        assert demo.process.stdin is not None
        demo.process.stdin.write("\n")
        demo.process.stdin.flush()
        wait_for(lambda: demo.said("again from the top"), what="the second round")
    finally:
        demo.close()


def test_a_stopped_demo_exits_0_and_removes_its_state_and_logs(demo: Demo) -> None:
    demo.card("Delete the 14 merged branches?")
    [folder] = re.findall(r"state and logs in (\S+), removed", " ".join(demo.lines))
    assert os.path.isdir(folder)

    demo.process.send_signal(signal.SIGTERM)

    assert demo.process.wait(timeout=30) == 0
    assert not os.path.exists(folder)
    assert demo.said("demo: stopping")


@pytest.mark.e2e
def test_a_demo_stopped_while_its_real_agent_waits_leaves_nothing_behind(tmp_path: Path) -> None:
    """The run outlives discord-watch on purpose (the next start adopts it); the demo stops it
    before removing its folder, or Gemini CLI writes its chat there as it exits."""
    require_cli("gemini")
    demo = start_demo(tmp_path, "--agent", "gemini")
    try:
        wait_for(lambda: demo.said("question card"), timeout=120, what="gemini's question")
        [folder] = re.findall(r"state and logs in (\S+), removed", " ".join(demo.lines))
        demo.process.send_signal(signal.SIGTERM)
        assert demo.process.wait(timeout=60) == 0
    finally:
        demo.close()
    assert demo.said("demo: stopping")
    assert not os.path.exists(folder)
    assert not demo.said("run thread: discord-mcp machines")  # presence records, no run
    errors = (tmp_path / "demo.stderr").read_text(encoding="utf-8")
    assert "Traceback" not in errors, errors
