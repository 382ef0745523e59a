"""A full disk: every tool answers with a sentence, and nothing half-done is left in Discord.

The state directory's ``decisions/`` and ``progress/`` live on tiny filesystems that are full,
mounted in a private mount namespace of the server's own (``unshare``), so the real kernel says
"no space left on device" to the real server process.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import SERVER, StdioPeer


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--map-root-user", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


@pytest.fixture
def full_disk_command(tmp_path: Path) -> tuple[list[str], Path]:
    if not _namespaces_work():
        if os.environ.get("CI") or os.environ.get("DISCORD_MCP_REQUIRE_ALL"):
            pytest.fail("unshare with a user/mount namespace is needed for the full-disk test")
        pytest.skip("unshare with a user/mount namespace is not available here")
    home = tmp_path / "home"
    script = ["set -e"]
    for name in ("decisions", "progress"):
        directory = home / name
        directory.mkdir(parents=True)
        quoted = shlex.quote(str(directory))
        script += [
            f"mount -t tmpfs -o size=16k tmpfs {quoted}",
            f"dd if=/dev/zero of={quoted}/.fill bs=1k count=64 2>/dev/null || true",
        ]
    script.append('exec "$@"')
    command = ["unshare", "-m", "--map-root-user", "sh", "-c", "\n".join(script), "sh", *SERVER]
    return command, home


def test_a_full_disk_is_a_sentence_and_leaves_no_empty_thread_or_extra_card(
    discord: RunningEmulator,
    people: People,
    tmp_path: Path,
    full_disk_command: tuple[list[str], Path],
) -> None:
    command, home = full_disk_command
    env = env_for(discord, home, DISCORD_MCP_GATEWAY="off", DISCORD_MCP_MAX_BLOCK_SECONDS="1")
    peer = StdioPeer({**env, "PYTHONPATH": str(Path.cwd())}, tmp_path, command=command)
    try:
        peer.handshake()
        asked = peer.request(
            "tools/call",
            {"name": "ask_decision", "arguments": {"question": "Drop the cache?"}},
        )["result"]
        assert asked["isError"] is True
        assert "state directory is full" in asked["content"][0]["text"]
        for _ in range(3):
            reported = peer.request(
                "tools/call",
                {"name": "report_progress", "arguments": {"title": "Sync", "summary": "going"}},
            )["result"]
            assert reported["isError"] is True
            assert "state directory is full" in reported["content"][0]["text"]
        sent = peer.call_tool("notify", {"message": "notices need no disk"})
        assert sent["ok"] is True
    finally:
        peer.close()
    assert people.threads() == []  # no empty thread left behind
    texts = [m["content"] for m in people.messages(discord.channel_id)]
    assert len(texts) == 1  # no progress card
    assert texts[0].endswith("notices need no disk")
