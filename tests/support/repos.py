"""Git repositories for tests: made with the real git, with an author of their own."""

from __future__ import annotations

import subprocess
from pathlib import Path

AUTHOR = {"user.name": "Test Person", "user.email": "person@example.test"}


def git(workdir: Path, *args: str, check: bool = True) -> str:
    """``git <args>`` in ``workdir``; its stdout (stripped of the last newline)."""
    done = subprocess.run(
        ["git", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
        timeout=60,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.rstrip("\n")


def make_repo(path: Path, files: dict[str, str] | None = None, *, branch: str = "main") -> Path:
    """A repository at ``path`` with one commit of ``files`` (default: a README) on ``branch``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    for key, value in AUTHOR.items():
        git(path, "config", key, value)
    commit(path, files or {"README.md": "# app\n"}, "start")
    return path


def commit(path: Path, files: dict[str, str], message: str) -> str:
    """Write ``files`` and commit them; the new commit's id."""
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return head(path)


def head(path: Path, ref: str = "HEAD") -> str:
    return git(path, "rev-parse", ref)


def bare_remote(path: Path, repo: Path, name: str = "origin") -> Path:
    """A bare repository at ``path``, added to ``repo`` as remote ``name``."""
    git(path.parent, "init", "-q", "--bare", str(path))
    git(repo, "remote", "add", name, str(path))
    return path
