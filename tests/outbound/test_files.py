"""Which files an agent may send: from its project (or the owner's extra roots), never from
the state directory or a place secrets live, symlinks resolved first, within Discord's limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.errors import FileRefused
from discord_mcp.outbound.files import FilePolicy, check_path, prepare


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "build.log").write_text("ok\n", encoding="utf-8")
    return root


@pytest.fixture
def policy(project: Path, tmp_path: Path) -> FilePolicy:
    return FilePolicy(project_dir=project, state_dir=tmp_path / "home")


def refused(raw: str | Path, policy: FilePolicy) -> str:
    with pytest.raises(FileRefused) as caught:
        check_path(str(raw), policy)
    return str(caught.value)


def test_a_file_in_the_project_is_accepted_by_relative_or_absolute_path(
    project: Path, policy: FilePolicy
) -> None:
    assert check_path("logs/build.log", policy) == project / "logs" / "build.log"
    assert check_path(str(project / "logs" / "build.log"), policy) == project / "logs/build.log"


def test_a_file_outside_the_project_is_refused_with_a_sentence(
    tmp_path: Path, policy: FilePolicy
) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x", encoding="utf-8")
    message = refused(outside, policy)
    assert "outside the project directory" in message
    assert "DISCORD_MCP_FILE_ROOTS" in message


def test_a_directory_the_owner_allowed_is_a_source_too(tmp_path: Path, project: Path) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "a.png").write_bytes(b"png")
    policy = FilePolicy(project_dir=project, state_dir=tmp_path / "home", roots=(shots,))
    assert check_path(str(shots / "a.png"), policy) == shots / "a.png"


def test_a_symlink_in_the_project_pointing_outside_is_refused(
    tmp_path: Path, project: Path, policy: FilePolicy
) -> None:
    secret = tmp_path / "outside" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text("x", encoding="utf-8")
    (project / "innocent.txt").symlink_to(secret)
    assert "outside the project" in refused("innocent.txt", policy)


def test_a_symlink_with_an_innocent_name_to_a_dotenv_is_refused(
    project: Path, policy: FilePolicy
) -> None:
    (project / ".env").write_text("DISCORD_BOT_TOKEN=x\n", encoding="utf-8")
    (project / "readme.txt").symlink_to(project / ".env")
    assert "never sent" in refused("readme.txt", policy)


def test_the_state_directory_is_never_a_source_even_inside_the_project(
    project: Path, tmp_path: Path
) -> None:
    home = project / ".state"
    home.mkdir()
    (home / "decision.json").write_text("{}", encoding="utf-8")
    policy = FilePolicy(project_dir=project, state_dir=home)
    assert "state directory" in refused(home / "decision.json", policy)


def test_a_run_in_its_own_worktree_sends_files_from_it_and_nothing_else_of_the_state(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    worktree = home / "worktrees" / "run_20260301_120000_abc123"
    other = home / "worktrees" / "run_20260301_120001_def456"
    for tree in (worktree, other):
        tree.mkdir(parents=True)
        (tree / "report.md").write_text("# report\n", encoding="utf-8")
    (home / "runs").mkdir()
    (home / "runs" / "snapshot.json").write_text("{}", encoding="utf-8")
    policy = FilePolicy(project_dir=worktree, state_dir=home)

    assert check_path("report.md", policy) == worktree / "report.md"
    assert "state directory" in refused(other / "report.md", policy)
    assert "state directory" in refused(home / "runs" / "snapshot.json", policy)


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.local",
        "prod.env",
        ".netrc",
        "id_ed25519",
        "server.pem",
        "tls.key",
        "credentials.json",
        ".git-credentials",
        ".npmrc",
        "terraform.tfstate",
    ],
)
def test_files_that_usually_hold_secrets_are_refused(
    name: str, project: Path, policy: FilePolicy
) -> None:
    (project / name).write_text("x", encoding="utf-8")
    assert "never sent" in refused(name, policy)


@pytest.mark.parametrize("directory", [".ssh", ".aws", ".config/gcloud", ".git", ".gnupg"])
def test_files_in_credential_directories_are_refused_even_in_the_project(
    directory: str, project: Path, policy: FilePolicy
) -> None:
    (project / directory).mkdir(parents=True)
    (project / directory / "config").write_text("x", encoding="utf-8")
    assert "never sent" in refused(f"{directory}/config", policy)


def test_a_template_of_a_dotenv_may_be_sent(project: Path, policy: FilePolicy) -> None:
    (project / ".env.example").write_text("DISCORD_BOT_TOKEN=\n", encoding="utf-8")
    assert check_path(".env.example", policy).name == ".env.example"


def test_a_missing_file_or_a_directory_is_refused(project: Path, policy: FilePolicy) -> None:
    assert "no such file" in refused("nope.txt", policy)
    assert "not a regular file" in refused("logs", policy)


def test_more_than_ten_files_are_refused_with_discords_limits(
    project: Path, policy: FilePolicy
) -> None:
    with pytest.raises(FileRefused) as caught:
        prepare(["logs/build.log"] * 11, policy, ())
    assert "at most 10 files per message, each at most 10 MiB and 25 MiB in all" in str(
        caught.value
    )


def test_a_file_over_ten_mib_is_refused_with_its_size(project: Path, policy: FilePolicy) -> None:
    with open(project / "big.bin", "wb") as handle:
        handle.truncate(10 * 1024 * 1024 + 1)
    with pytest.raises(FileRefused) as caught:
        prepare(["big.bin"], policy, ())
    assert "big.bin is 10.0 MiB" in str(caught.value)
    assert "each at most 10 MiB" in str(caught.value)


def test_files_over_25_mib_together_are_refused(project: Path, policy: FilePolicy) -> None:
    for n in range(3):
        with open(project / f"part{n}.bin", "wb") as handle:
            handle.truncate(9 * 1024 * 1024)
    with pytest.raises(FileRefused) as caught:
        prepare([f"part{n}.bin" for n in range(3)], policy, ())
    assert "25 MiB" in str(caught.value)


def test_binary_files_go_byte_for_byte_and_text_files_are_redacted(
    project: Path, policy: FilePolicy
) -> None:
    binary = bytes(range(256)) * 10
    (project / "shot.png").write_bytes(binary)
    token = "ghp_" + "Ab1" * 12
    (project / "run.log").write_text(f"pushed with {token}\n", encoding="utf-8")
    prepared = prepare(["shot.png", "run.log"], policy, ())
    shot, log = prepared.uploads
    assert (shot.filename, shot.data, shot.content_type) == ("shot.png", binary, "image/png")
    assert log.data == b"pushed with [redacted: GitHub token]\n"
    assert prepared.redacted == ("GitHub token in file run.log",)
