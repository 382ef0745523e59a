"""Projects are validated with errors that say how to fix them, and stored in the seed's
config.json format (atomically, keeping keys they do not own)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "code" / "app").mkdir(parents=True)
    return tmp_path / "code"


@pytest.fixture
def registry(tmp_path: Path, root: Path) -> ProjectRegistry:
    return ProjectRegistry(tmp_path / "state", allowed_roots=[root])


def test_a_project_is_stored_in_the_seed_format(registry: ProjectRegistry, root: Path) -> None:
    project = registry.add(
        "my-app", root / "app", ["gemini", "claude"], "gemini", {"gemini": ["--model", "x"]}
    )
    document = json.loads(registry.path.read_text(encoding="utf-8"))
    assert document["version"] == 1
    entry = document["projects"]["my-app"]
    assert entry == {
        "name": "my-app",
        "path": str((root / "app").resolve()),
        "enabled_tools": ["gemini", "claude"],
        "default_tool": "gemini",
        "default_args": {"claude": [], "codex": [], "gemini": ["--model", "x"]},
        "created_at": entry["created_at"],
        "updated_at": entry["created_at"],
    }
    assert entry["created_at"].endswith("Z")
    assert registry.path.stat().st_mode & 0o777 == 0o600
    assert registry.get("my-app") == project
    assert registry.list() == [project]


def test_other_top_level_keys_are_kept(registry: ProjectRegistry, root: Path) -> None:
    registry.path.parent.mkdir(parents=True)
    registry.path.write_text(
        json.dumps({"version": 1, "owner_id": "123", "projects": {}}), encoding="utf-8"
    )
    registry.add("app", root / "app", ["codex"])
    document = json.loads(registry.path.read_text(encoding="utf-8"))
    assert document["owner_id"] == "123"
    assert registry.get("app").default_tool == "codex"  # the first tool by default


@pytest.mark.parametrize("name", ["", "UPPER", "has space", "a" * 41, "dot.ted", "ünï"])
def test_bad_names_are_refused(registry: ProjectRegistry, root: Path, name: str) -> None:
    with pytest.raises(RunError) as caught:
        registry.add(name, root / "app", ["claude"])
    assert caught.value.code == "E_INVALID_PROJECT_NAME"
    assert "a-z" in caught.value.message


def test_a_second_project_with_the_same_name_is_refused(
    registry: ProjectRegistry, root: Path
) -> None:
    registry.add("app", root / "app", ["claude"])
    with pytest.raises(RunError) as caught:
        registry.add("app", root / "app", ["codex"])
    assert caught.value.code == "E_PROJECT_EXISTS"


def test_paths_must_be_absolute_existing_directories_inside_the_roots(
    registry: ProjectRegistry, root: Path, tmp_path: Path
) -> None:
    (root / "file.txt").write_text("x", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "sneaky").symlink_to(outside)
    cases = {
        "relative/path": "not an absolute path",
        str(root / "missing"): "does not exist",
        str(root / "file.txt"): "not a directory",
        str(outside): "outside the allowed roots",
        str(root / "sneaky"): "outside the allowed roots",  # symlinks are resolved first
        str(root / "app" / ".." / ".." / "outside"): "outside the allowed roots",
    }
    for path, words in cases.items():
        with pytest.raises(RunError) as caught:
            registry.add("app", path, ["claude"])
        assert caught.value.code == "E_INVALID_PATH"
        assert words in caught.value.message, path


def test_the_default_allowed_root_is_the_home_directory(tmp_path: Path) -> None:
    assert ProjectRegistry(tmp_path).allowed_roots == (Path.home().resolve(),)


@pytest.mark.parametrize(
    ("tools", "default"),
    [([], None), (["claude", "vim"], None), (["claude"], "codex"), ("bash", None)],
)
def test_bad_toolsets_are_refused(
    registry: ProjectRegistry, root: Path, tools: list[str], default: str | None
) -> None:
    with pytest.raises(RunError) as caught:
        registry.add("app", root / "app", tools, default)
    assert caught.value.code == "E_INVALID_TOOLSET"


def test_tools_may_be_given_as_csv(registry: ProjectRegistry, root: Path) -> None:
    project = registry.add("app", root / "app", "codex, gemini", "gemini")
    assert project.tools == ("codex", "gemini")


@pytest.mark.parametrize(
    "args",
    [{"claude": "--model x"}, {"claude": ["--model", 3]}, {"vim": []}, {"codex": ["a\0b"]}],
)
def test_args_must_be_lists_of_strings_per_tool(
    registry: ProjectRegistry, root: Path, args: dict[str, object]
) -> None:
    with pytest.raises(RunError) as caught:
        registry.add("app", root / "app", ["claude", "codex"], args=args)  # type: ignore[arg-type]
    assert caught.value.code == "E_INVALID_ARGS"


def test_removing_and_missing_projects(registry: ProjectRegistry, root: Path) -> None:
    registry.add("app", root / "app", ["claude"])
    assert registry.remove("app").name == "app"
    assert registry.list() == []
    for action in (registry.get, registry.remove):
        with pytest.raises(RunError) as caught:
            action("app")
        assert caught.value.code == "E_PROJECT_NOT_FOUND"
        assert "create the project first" in caught.value.message


def test_a_change_made_by_another_process_is_seen_at_once(
    registry: ProjectRegistry, root: Path, tmp_path: Path
) -> None:
    other = ProjectRegistry(tmp_path / "state", allowed_roots=[root])
    other.add("app", root / "app", ["claude"])
    assert [p.name for p in registry.list()] == ["app"]


def test_a_corrupt_project_list_is_never_read_as_no_projects(
    registry: ProjectRegistry, root: Path
) -> None:
    registry.add("app", root / "app", ["claude"])
    registry.path.write_text("{ torn", encoding="utf-8")
    for attempt in ("found corrupt now", "set aside before"):
        for operation in (
            registry.list,
            lambda: registry.get("app"),
            lambda: registry.add("other", root / "app", ["claude"]),
            lambda: registry.remove("app"),
        ):
            with pytest.raises(RunError) as caught:
                operation()
            assert caught.value.code == "E_CONFIG_CORRUPT", attempt
            [moved] = registry.quarantined()
            assert str(moved) in caught.value.message
            assert f"move it back to {registry.path}" in caught.value.message
    assert not registry.path.exists()  # nothing pretends to be the project list meanwhile


def test_a_restored_project_list_works_again(registry: ProjectRegistry, root: Path) -> None:
    registry.add("app", root / "app", ["claude"])
    good = registry.path.read_text(encoding="utf-8")
    registry.path.write_text("{ torn", encoding="utf-8")
    with pytest.raises(RunError):
        registry.list()
    [moved] = registry.quarantined()
    registry.path.write_text(good, encoding="utf-8")  # repaired, put back
    moved.unlink()
    assert [p.name for p in registry.list()] == ["app"]


def test_a_job_timeout_is_kept_and_checked(registry: ProjectRegistry, root: Path) -> None:
    registry.add("app", root / "app", ["claude"], job_timeout=1800)
    assert registry.get("app").job_timeout == 1800
    assert (
        json.loads(registry.path.read_text(encoding="utf-8"))["projects"]["app"][
            "job_timeout_seconds"
        ]
        == 1800
    )
    registry.add("plain", root / "app", ["claude"])
    assert registry.get("plain").job_timeout is None
    assert (
        "job_timeout_seconds"
        not in json.loads(registry.path.read_text(encoding="utf-8"))["projects"]["plain"]
    )
    with pytest.raises(RunError) as caught:
        registry.add("rushed", root / "app", ["claude"], job_timeout=0.1)
    assert caught.value.code == "E_INVALID_TIMEOUT"
