"""Files an agent sends are opened inside the checked root, never through a symlink swapped
in after the check; odd paths and roots are refused with one sentence."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from discord_mcp.errors import FileRefused
from discord_mcp.outbound.files import FilePolicy, check_path, prepare

ATTEMPTS = 3000


def test_a_directory_swapped_for_a_symlink_while_sending_never_sends_a_file_outside(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "notes.txt").write_text("inside\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("OUTSIDE SECRET\n", encoding="utf-8")
    policy = FilePolicy(project_dir=project, state_dir=tmp_path / "home")
    sub, held = project / "sub", project / "held"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(sub, held)
            os.symlink(outside, sub)
            os.unlink(sub)
            os.rename(held, sub)
            os.sched_yield()  # the directory is in place: let the sender run too

    swapper = threading.Thread(target=swap)
    swapper.start()
    sent: list[bytes] = []
    refusals = 0
    attempts = 0
    try:
        # At least ATTEMPTS tries, and on until one landed while the directory was in place
        # (the swapper can win every race for a while on a busy machine), within a bound.
        while attempts < ATTEMPTS or (not sent and attempts < 20 * ATTEMPTS):
            attempts += 1
            try:
                prepared = prepare(["sub/notes.txt"], policy, ())
            except FileRefused:
                refusals += 1
                continue
            sent.append(prepared.uploads[0].data)
    finally:
        stop.set()
        swapper.join(10)
    assert b"OUTSIDE SECRET\n" not in sent
    assert sent, "the file was never sent: the loop proved nothing"
    assert set(sent) == {b"inside\n"}


@pytest.mark.parametrize("name", [".kube", ".docker", ".ssh"])
def test_a_root_that_is_itself_a_credentials_directory_sends_nothing(
    tmp_path: Path, name: str
) -> None:
    secrets = tmp_path / name
    secrets.mkdir()
    (secrets / "config").write_text("token: x\n", encoding="utf-8")
    as_project = FilePolicy(project_dir=secrets, state_dir=tmp_path / "home")
    with pytest.raises(FileRefused, match=name):
        check_path("config", as_project)
    as_root = FilePolicy(project_dir=tmp_path / "p", state_dir=tmp_path / "home", roots=(secrets,))
    with pytest.raises(FileRefused, match=name):
        check_path(str(secrets / "config"), as_root)
    nested = tmp_path / "home2" / name / "more"
    nested.mkdir(parents=True)
    (nested / "f.txt").write_text("x", encoding="utf-8")
    below = FilePolicy(project_dir=nested, state_dir=tmp_path / "home")
    with pytest.raises(FileRefused, match=name):
        check_path("f.txt", below)


def test_a_nul_byte_in_a_path_is_one_sentence(tmp_path: Path) -> None:
    policy = FilePolicy(project_dir=tmp_path, state_dir=tmp_path / "home")
    with pytest.raises(FileRefused, match="NUL") as caught:
        prepare(["logs/a\0b.txt"], policy, ())
    assert "\n" not in str(caught.value)
