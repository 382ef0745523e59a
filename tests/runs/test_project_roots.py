"""A project is a folder of its own: never an allowed root itself, the home directory, the
state directory or a place credentials live (``/project add`` and ``discord-watch project
add`` both go through the registry's check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    me = tmp_path / "me"
    for sub in ("code/app", ".ssh", ".aws/more", ".config/gcloud", ".kube"):
        (me / sub).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(me))
    return me


def refused(registry: ProjectRegistry, path: Path | str) -> str:
    with pytest.raises(RunError) as caught:
        registry.add("app", str(path), ["claude"])
    assert caught.value.code == "E_INVALID_PATH"
    assert "\n" not in caught.value.message
    return caught.value.message


def test_the_home_directory_and_credential_folders_are_never_projects(home: Path) -> None:
    registry = ProjectRegistry(home / ".discord-mcp")  # default root: the home directory
    assert "home directory" in refused(registry, home)
    for secret in (".ssh", ".aws/more", ".config/gcloud", ".kube"):
        message = refused(registry, home / secret)
        assert "credentials" in message, secret
    assert registry.add("app", str(home / "code" / "app"), ["claude"]).path == (
        (home / "code" / "app").resolve()
    )


def test_an_allowed_root_itself_is_not_a_project(home: Path) -> None:
    registry = ProjectRegistry(home / ".discord-mcp", allowed_roots=[home / "code"])
    assert "allowed root" in refused(registry, home / "code")


def test_the_state_directory_is_not_a_project(home: Path) -> None:
    state = home / "code" / "state"
    state.mkdir()
    registry = ProjectRegistry(state, allowed_roots=[home / "code"])
    assert "state directory" in refused(registry, state)


def test_a_nul_byte_in_a_project_path_is_one_sentence(home: Path) -> None:
    registry = ProjectRegistry(home / ".discord-mcp")
    assert "NUL" in refused(registry, str(home / "code") + "\0x")
