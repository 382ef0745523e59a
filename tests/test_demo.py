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

    def card(self, number: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """The ``number``-th question thread (1-based) and its card, once posted."""

        def look() -> tuple[dict[str, Any], dict[str, Any]] | None:
            threads = [c for c in self.control.get("/state").json()["channels"] if c["type"] == 11]
            if len(threads) < number:
                return None
            thread = threads[number - 1]
            messages = self.control.get(f"/channels/{thread['id']}/messages").json()
            return (thread, messages[0]) if messages and messages[0]["components"] else None

        return wait_for(look, timeout=60, what=f"question {number}")

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


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISCORD_")}
    with (tmp_path / "demo.stderr").open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [*DEMO, "--rounds", "1", "--pause", "0"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=env | {"PYTHONWARNINGS": "error"},
        )
    running = Demo(process)
    yield running
    running.close()
    errors = (tmp_path / "demo.stderr").read_text(encoding="utf-8")
    assert "Traceback" not in errors, errors


def test_the_demo_prints_the_page_first_and_plays_a_round_answered_by_the_owner(
    demo: Demo,
) -> None:
    assert demo.lines[0].startswith(f"Open {demo.base_url}/ ")
    page = httpx.get(demo.base_url + "/", timeout=10)
    assert page.status_code == 200
    assert "owner" in page.text

    _, card = demo.card(1)
    assert "Delete the 14 merged branches?" in card["content"]
    report = demo.click(card, "Delete them")
    assert report["acknowledged"]
    assert report["response_type"] == 7
    wait_for(lambda: demo.said("answer: 'Delete them'"), what="the agent to get the answer")

    _, card = demo.card(2)
    demo.click(card, "1.3.1")
    wait_for(lambda: demo.said("done: tagging 1.3.1"), what="the agent to act on it")

    third, card = demo.card(3)
    owner = demo.control.get("/state").json()["owner_user_id"]
    demo.control.post(
        f"/channels/{third['id']}/messages",
        json={"author_id": owner, "content": "Thank the two new contributors"},
    ).raise_for_status()

    assert demo.process.wait(timeout=60) == 0
    assert demo.said("round 1 done")
    assert demo.said("answer: 'Thank the two new contributors' from Owner via text")
    assert any(line.startswith("discord-watch: running") for line in demo.lines)


def test_a_stopped_demo_exits_0_and_removes_its_state_and_logs(demo: Demo) -> None:
    demo.card(1)
    [folder] = re.findall(r"state and logs in (\S+), removed", " ".join(demo.lines))
    assert os.path.isdir(folder)

    demo.process.send_signal(signal.SIGTERM)

    assert demo.process.wait(timeout=30) == 0
    assert not os.path.exists(folder)
    assert demo.said("demo: stopping")
