"""Compressed files and archives are looked inside before they go: never a secret file packed
(a gzipped ``.env``), never the token inside, and refused when they cannot be checked
(issue 32: a gzipped ``.env`` was sent with the token inside)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
from pathlib import Path

import pytest

from discord_mcp.errors import FileRefused
from discord_mcp.outbound.files import FilePolicy, prepare

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.the-bots-own-token-for-these-tests"
DOTENV = f"DISCORD_BOT_TOKEN={TOKEN}\nDEBUG=1\n".encode()
NOTES = b"nothing to hide here\n" * 20


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def policy(project: Path, tmp_path: Path) -> FilePolicy:
    return FilePolicy(project_dir=project, state_dir=tmp_path / "home")


def gz(data: bytes, name: str = "") -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=out, mtime=0) as packed:
        packed.write(data)
    return out.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def tarred(members: dict[str, bytes], mode: str = "w:gz") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as archive:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def refusal(project: Path, policy: FilePolicy, name: str, data: bytes) -> str:
    (project / name).write_bytes(data)
    with pytest.raises(FileRefused) as caught:
        prepare([name], policy, [TOKEN])
    message = str(caught.value)
    assert TOKEN not in message
    return message


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("backup.gz", gz(DOTENV)),  # the token inside, whatever the name
        ("settings.bz2", bz2.compress(DOTENV)),
        ("settings.xz", lzma.compress(DOTENV)),
        ("bundle.zip", zipped({"app/settings.txt": DOTENV})),
        ("bundle.tar.gz", tarred({"settings.txt": DOTENV})),
        ("bundle.tar", tarred({"settings.txt": DOTENV}, mode="w")),
        ("bundle.tar.xz", tarred({"settings.txt": DOTENV}, mode="w:xz")),
        ("twice.gz", gz(gz(DOTENV))),
        ("inner.zip", zipped({"logs.tar.gz": tarred({"a.txt": DOTENV})})),
        ("renamed.png", gz(DOTENV)),  # read by its bytes, not its name
    ],
)
def test_the_token_inside_a_compressed_file_or_archive_is_refused(
    project: Path, policy: FilePolicy, name: str, data: bytes
) -> None:
    message = refusal(project, policy, name, data)
    assert "bot token" in message
    assert "never sent" in message


@pytest.mark.parametrize(
    ("name", "data", "secret"),
    [
        ("config.gz", gz(b"DEBUG=1\n", name=".env"), ".env"),  # gzip keeps the original name
        ("credentials.json.gz", gz(b"{}"), "credentials.json"),
        ("server.pem.bz2", bz2.compress(b"x"), "server.pem"),
        ("keys.zip", zipped({"deploy/id_ed25519": b"x", "README": b"x"}), "id_ed25519"),
        ("home.tar.gz", tarred({"me/.ssh/config": b"Host x\n"}), ".ssh"),
        ("project.tar.gz", tarred({"app/.env": b"DEBUG=1\n"}), ".env"),
    ],
)
def test_a_secret_file_packed_in_an_archive_is_refused_by_its_name(
    project: Path, policy: FilePolicy, name: str, data: bytes, secret: str
) -> None:
    message = refusal(project, policy, name, data)
    assert secret in message


def test_an_archive_that_cannot_be_checked_is_refused(project: Path, policy: FilePolicy) -> None:
    bomb = gz(b"\0" * (80 * 1024 * 1024))
    assert "too large" in refusal(project, policy, "bomb.gz", bomb)
    assert "cannot be read" in refusal(project, policy, "broken.gz", gz(NOTES)[:40])
    zstd = b"\x28\xb5\x2f\xfd" + bytes(64)
    assert "cannot be checked" in refusal(project, policy, "logs.zst", zstd)
    locked = zipped({"a.txt": NOTES})
    header = bytearray(locked)
    header[6] |= 1  # the local header says: encrypted
    central = locked.rfind(b"PK\x01\x02")
    header[central + 8] |= 1  # and so does the central directory
    assert "encrypted" in refusal(project, policy, "locked.zip", bytes(header))
    deep = NOTES
    for _ in range(6):
        deep = gz(deep)
    assert "nested" in refusal(project, policy, "deep.gz", deep)


def test_a_clean_archive_goes_out_byte_for_byte(project: Path, policy: FilePolicy) -> None:
    data = tarred({"logs/build.log": NOTES, "logs/test.log": NOTES})
    (project / "logs.tar.gz").write_bytes(data)
    prepared = prepare(["logs.tar.gz"], policy, [TOKEN])
    [upload] = prepared.uploads
    assert upload.data == data
    assert prepared.redacted == ()


def test_the_token_in_a_plain_binary_file_is_refused_too(project: Path, policy: FilePolicy) -> None:
    data = b"\x89PNG\r\n\x1a\n" + bytes(100) + TOKEN.encode() + bytes(100)
    assert "bot token" in refusal(project, policy, "shot.png", data)
