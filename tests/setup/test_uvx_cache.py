"""What ``install`` writes for uvx starts from uv's cache once it can (issue 37): ``--offline``
when that form was seen to start, after one start online to fill the cache if needed, and
advice when it could not."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from discord_mcp.setup.clients import Location
from discord_mcp.setup.install import InstallResult
from discord_mcp.setup.uvx_cache import offline_advice, offline_ready, uvx_form

UVX, SOURCE = "/opt/uv/uvx", "discord-mcp==0.3.0"


class Tries:
    """A stand-in for starting a form: which forms start, and the order they were tried in."""

    def __init__(self, *, offline: list[bool], online: bool) -> None:
        self.offline, self.online = offline, online
        self.tried: list[str] = []

    def __call__(self, argv: Sequence[str]) -> bool:
        if "--offline" in argv:
            self.tried.append("offline")
            return self.offline.pop(0)
        self.tried.append("online")
        return self.online


def test_a_release_already_in_the_cache_is_started_offline_without_going_online() -> None:
    tries = Tries(offline=[True], online=True)
    assert offline_ready(UVX, SOURCE, tries)
    assert tries.tried == ["offline"]


def test_a_release_not_in_the_cache_is_started_online_once_then_offline() -> None:
    tries = Tries(offline=[False, True], online=True)
    assert offline_ready(UVX, SOURCE, tries)
    assert tries.tried == ["offline", "online", "offline"]


def test_when_it_cannot_start_online_the_form_without_offline_is_kept() -> None:
    tries = Tries(offline=[False], online=False)
    assert not offline_ready(UVX, SOURCE, tries)
    assert tries.tried == ["offline", "online"]


def test_the_uvx_forms() -> None:
    assert uvx_form(UVX, SOURCE, offline=True) == [
        UVX,
        "--offline",
        "--from",
        SOURCE,
        "discord-mcp",
    ]
    assert uvx_form(UVX, SOURCE, offline=False) == [UVX, "--from", SOURCE, "discord-mcp"]


def _result(argv: list[str]) -> InstallResult:
    location = Location("gemini", "user", Path("/h/.gemini/settings.json"))
    after = {"command": argv[0], "args": argv[1:], "env": {}}
    return InstallResult(location, True, None, None, after)


def test_install_says_what_to_do_when_the_entry_cannot_start_offline() -> None:
    said = _result(uvx_form(UVX, SOURCE, offline=False)).describe()
    assert f"uvx --from {SOURCE} discord-mcp --version" in said
    assert "install again" in said
    assert "note:" not in _result(uvx_form(UVX, SOURCE, offline=True)).describe()
    assert offline_advice(["/usr/bin/python3", "-m", "discord_mcp"]) is None
