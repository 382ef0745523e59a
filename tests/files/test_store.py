"""The owner's files: downloaded once into the state directory, under safe names, private and
never executable, with their type recorded; too big or failing downloads say why."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import DownloadFailed
from discord_mcp.files.store import OwnerFiles, safe_name
from discord_mcp.transport.cdn import Downloaded, download
from tests.support.people import People

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16
OGG = b"OggS" + bytes(200)


class Counting:
    """The CDN download, counted."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, url: str, *, max_bytes: int) -> Downloaded:
        self.calls += 1
        return await download(url, max_bytes=max_bytes)


async def test_an_owners_file_is_kept_once_with_its_type_and_private_mode(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    message = people.send_files(discord.channel_id, [("screen shot.png", PNG, "image/png")])
    fetch = Counting()
    files = OwnerFiles(tmp_path / "home", fetch=fetch)

    [entry] = await files.keep(message)
    again = await files.keep(message)

    assert fetch.calls == 1
    assert again == [entry]
    path = Path(entry["path"])
    assert path.read_bytes() == PNG
    assert path.parent == tmp_path / "home" / "files" / message["id"]
    assert path.name == f"{entry['attachment_id']}-screen_shot.png"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert entry["content_type"] == "image/png"
    assert entry["filename"] == message["attachments"][0]["filename"]
    assert entry["size"] == len(PNG)
    assert entry["voice_message"] is False


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        (".bashrc", "bashrc"),
        ("run me.sh", "run_me.sh"),
        ("スクリーン.png", "file.png"),
        ("a" * 300 + ".txt", "a" * 80 + ".txt"),
        ("", "file"),
        ("noext", "noext"),
    ],
)
def test_file_names_are_made_safe(given: str, kept: str) -> None:
    assert safe_name(given) == kept


async def test_an_executable_script_is_not_kept_executable(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    message = people.send_files(
        discord.channel_id, [("fix.sh", b"#!/bin/sh\nrm -rf /\n", "text/x-sh")]
    )
    [entry] = await OwnerFiles(tmp_path / "home").keep(message)
    mode = Path(entry["path"]).stat().st_mode
    assert not mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


async def test_a_voice_message_is_kept_as_an_audio_file_and_marked(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    message = people.send_files(
        discord.channel_id, [("voice-message.ogg", OGG, "audio/ogg")], voice_message=True
    )
    [entry] = await OwnerFiles(tmp_path / "home").keep(message)
    assert entry["voice_message"] is True
    assert entry["content_type"] == "audio/ogg"
    assert entry["duration_secs"] == 2.5
    assert Path(entry["path"]).read_bytes() == OGG


async def test_a_file_over_the_cap_is_listed_without_a_path(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    message = people.send_files(discord.channel_id, [("big.bin", bytes(5000), "application/zip")])
    fetch = Counting()
    [entry] = await OwnerFiles(tmp_path / "home", max_bytes=4096, fetch=fetch).keep(message)
    assert entry["path"] is None
    assert "not downloaded" in entry["error"]
    assert fetch.calls == 0
    assert not (tmp_path / "home" / "files").exists()


async def test_a_failed_download_is_listed_with_the_reason(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    message = people.send_files(discord.channel_id, [("a.png", PNG, "image/png")])
    broken: dict[str, Any] = {
        **message,
        "attachments": [{**message["attachments"][0], "url": discord.base_url + "/nope"}],
    }
    [entry] = await OwnerFiles(tmp_path / "home").keep(broken)
    assert entry["path"] is None
    assert "HTTP 404" in entry["error"]


async def test_the_download_stops_at_the_size_cap_even_without_a_length_header() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(64):
            yield b"x" * 1024

    def endless(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=chunks())

    with pytest.raises(DownloadFailed, match="larger than"):
        await download("https://cdn.test/a", max_bytes=4096, transport=httpx.MockTransport(endless))


async def test_only_http_urls_are_downloaded() -> None:
    with pytest.raises(DownloadFailed, match="not a download URL"):
        await download("file:///etc/passwd", max_bytes=10)
