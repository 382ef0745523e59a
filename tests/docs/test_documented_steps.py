"""What the pages tell a user to type works as they say (the steps a new user tripped over)."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

import httpx

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.folders.patches import snapshot, write_patch
from tests.support.repos import make_repo

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_a_second_emulator_channel_is_made_as_the_emulator_page_shows(
    emulator: RunningEmulator,
) -> None:
    page = (DOCS / "emulator.md").read_text(encoding="utf-8")
    assert re.search(r"-X POST localhost:8800/_emulator/channels\s", page)  # not .../messages
    base = emulator.base_url

    made = httpx.post(f"{base}/_emulator/channels", json={"name": "lounge"}, timeout=10)
    state = httpx.get(f"{base}/_emulator/state", timeout=10).json()

    assert made.status_code == 201
    assert (made.json()["name"], made.json()["type"]) == ("lounge", 0)
    assert made.json()["id"] in {channel["id"] for channel in state["channels"]}


def test_discords_link_form_opens_the_owners_page_at_the_address_the_page_documents(
    emulator: RunningEmulator,
) -> None:
    page = (DOCS / "emulator.md").read_text(encoding="utf-8")
    assert "#<channel or thread id>/<message id>" in page
    base = emulator.base_url

    jumped = httpx.get(f"{base}/channels/1/222/333", timeout=10, follow_redirects=False)

    assert jumped.status_code == 302
    assert jumped.headers["location"].endswith("/#222/333")


def test_a_runs_patch_checks_in_reverse_as_the_delegation_page_shows(tmp_path: Path) -> None:
    """changes.patch is a record: the tree already holds it, so only ``apply -R`` fits."""
    page = (DOCS / "delegation.md").read_text(encoding="utf-8")
    assert "apply -R --check" in page
    project = make_repo(tmp_path / "app", {"app.py": "print('old')\n"})
    scratch, patch = tmp_path / "scratch", tmp_path / "changes.patch"
    base = asyncio.run(snapshot(project, scratch))
    assert base is not None
    (project / "app.py").write_text("print('new')\n", encoding="utf-8")  # the run's agent
    (project / "new.txt").write_text("made by the run\n", encoding="utf-8")
    assert asyncio.run(write_patch(project, base, patch, scratch))

    forward = subprocess.run(
        ["git", "-C", str(project), "apply", "--check", str(patch)],
        capture_output=True,
        timeout=30,
    )
    reverse = subprocess.run(
        ["git", "-C", str(project), "apply", "-R", "--check", str(patch)],
        capture_output=True,
        timeout=30,
    )

    assert forward.returncode != 0
    assert reverse.returncode == 0
